//===- LayoutPolicies.h - selected vs fixed layouts -------------*- C++ -*-===//
//
// What the same layer moves and takes under each layout policy: the layouts
// the selection chose (docs/Layout.md, "Global layout selection"), the
// builder's layouts (`--select-layouts=off`, the fixed policy before the
// selection) and all canonical row-major (`--select-layouts=canonical`:
// the builder's order for every tensor, the saved ones too, with relayouts
// only right before the GEMMs that need them). report.json's
// "layout_policies" and report.md's "Layout policies" table show them side
// by side.
//
//===----------------------------------------------------------------------===//

#ifndef SLUICE_REPORT_LAYOUTPOLICIES_H
#define SLUICE_REPORT_LAYOUTPOLICIES_H

#include "dialects/sluice/Analysis/DataMovement.h"
#include "sluice/Analysis/ModuleCost.h"

#include "llvm/ADT/StringRef.h"

#include <optional>
#include <string>

namespace mlir::sluice {

/// One layout policy's totals.
struct LayoutPolicySummary {
  /// "selected", "builder" or "canonical".
  std::string policy;
  /// What the policy is, for report.md.
  std::string description;
  /// True for the policy the written module (graph.mlir, the kernels) uses.
  bool compiled = false;
  /// Flop and bytes per phase and in total.
  std::array<Cost, kNumPhases> byPhase;
  Cost total;
  /// The framework baseline (the same for every policy).
  uint64_t baselineBytes = 0;
  /// Kernels holding a relayout.
  unsigned relayoutKernels = 0;
  /// The cost model's prediction (target name, seconds per phase and in
  /// total), when the report has a target.
  std::optional<std::string> targetName;
  std::array<double, kNumPhases> phaseSeconds{};
  double totalSeconds = 0;
};

/// The summary of a compiled module's `counts` (and its prediction, if any)
/// under `policy`.
LayoutPolicySummary summarizeLayoutPolicy(llvm::StringRef policy,
                                          llvm::StringRef description,
                                          bool compiled,
                                          const ModuleCounts &counts,
                                          const ModulePrediction *prediction);

/// Kernels (or unfused ops) of `counts` that hold a relayout.
unsigned countRelayoutKernels(const ModuleCounts &counts);

} // namespace mlir::sluice

#endif // SLUICE_REPORT_LAYOUTPOLICIES_H
