//===- Report.h - report.json, report.md and the summary table -*- C++ -*-===//
//
// Serialization only: the numbers come from the data-movement analysis
// (dialects/sluice/Analysis/DataMovement.h). The report.json schema is
// documented in docs/Report.md.
//
//===----------------------------------------------------------------------===//

#ifndef SLUICE_REPORT_REPORT_H
#define SLUICE_REPORT_REPORT_H

#include "dialects/sluice/Analysis/DataMovement.h"
#include "sluice/Analysis/ModuleCost.h"
#include "sluice/Analysis/Target.h"
#include "sluice/Codegen/MemoryPlan.h"
#include "sluice/Report/KeptRelayouts.h"
#include "sluice/Report/LayoutPolicies.h"
#include "sluice/Spec/LayerSpec.h"

#include <optional>
#include <string>
#include <vector>

namespace mlir::sluice {

/// What a report describes besides the counts.
struct ReportContext {
  /// The layer's name (the spec's name, or the first graph's symbol).
  std::string name;
  /// The input file as given on the command line.
  std::string inputPath;
  /// The checked spec, when the input was a spec.
  std::optional<LayerSpec> spec;
  /// The arena plan, when one was made (docs/MemoryPlan.md).
  const MemoryPlan *memoryPlan = nullptr;
  /// The GPU the cost model predicts for (docs/Targets.md), when one was
  /// selected.
  const GpuTarget *target = nullptr;
  /// True when graph.svg and roofline.svg are written beside the report
  /// (`sluicec --graph`): report.md links and embeds them.
  bool pictures = false;
  /// The cost model's predicted kernel times on `target`, when made.
  const ModulePrediction *prediction = nullptr;
  /// The layer under each layout policy (LayoutPolicies.h), when compared.
  std::vector<LayoutPolicySummary> layoutPolicies;
  /// The layer with its projections separate and stacked
  /// (--stack-contractions; policy "separate" / "stacked"), when the
  /// stacking changes anything.
  std::vector<LayoutPolicySummary> stackedProjections;
  /// The relayouts in the module's kernels and why they stay
  /// (KeptRelayouts.h).
  std::vector<KeptRelayoutEvidence> keptRelayouts;
};

/// report.json: {name, input, spec?, ops: [...], totals: {...}}.
std::string renderJsonReport(const mlir::sluice::ModuleCounts &counts,
                             const ReportContext &context);

/// report.md: the same numbers as Markdown tables.
std::string renderMarkdownReport(const mlir::sluice::ModuleCounts &counts,
                                 const ReportContext &context);

/// The compact table sluicec prints.
std::string renderSummaryTable(const mlir::sluice::ModuleCounts &counts,
                               const ReportContext &context);

/// How much less than `baseline` the counted bytes move, in percent (0 when
/// the baseline is 0).
double reductionPercent(const Cost &cost, uint64_t baseline);

/// "forward: N bytes moved, baseline B (P% less), lower bound L", then the
/// same for the backward and the total when there is a backward.
std::vector<std::string> describeDataMovement(const ModuleCounts &counts);

/// "1,234,567".
std::string formatWithSeparators(uint64_t value);

/// One line describing the arena: peak bytes, bytes without reuse, buffers.
std::string describeMemoryPlan(const MemoryPlan &plan);

/// One line describing a target ("v100: Tesla V100-SXM2 …, sm_70, 80 SMs,
/// 900 GB/s, …").
std::string describeTarget(const GpuTarget &target);

/// "predicted on v100: forward 1.234 ms, backward 2.345 ms, total 3.579 ms
/// (43 kernels)".
std::string describePrediction(const ModulePrediction &prediction);

/// One line describing a spec ("encoder, post-LN, b=8 s=512 …").
std::string describeSpec(const LayerSpec &spec);

} // namespace mlir::sluice

#endif // SLUICE_REPORT_REPORT_H
