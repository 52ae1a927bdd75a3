//===- KeptRelayouts.h - relayout kernels and why they stay -----*- C++ -*-===//
//
// Every kernel of a compiled module that holds a relayout, with the
// evidence that keeping it is the cost model's optimum: the layout
// selection records, for each GEMM its layouts leave without a mapping, its
// objective and that of the best selection avoiding the relayout
// (sluice/Layout/Passes.h, kKeptRelayoutsAttrName). report.json's
// "kept_relayouts" and report.md's "Kept relayouts" table show them
// (docs/Report.md, docs/Layout.md).
//
//===----------------------------------------------------------------------===//

#ifndef SLUICE_REPORT_KEPTRELAYOUTS_H
#define SLUICE_REPORT_KEPTRELAYOUTS_H

#include "dialects/sluice/Analysis/DataMovement.h"

#include "mlir/IR/BuiltinOps.h"

#include <optional>
#include <string>
#include <vector>

namespace mlir::sluice {

/// One relayout in a kernel of the compiled module.
struct KeptRelayoutEvidence {
  /// The kernel (or unfused op) and its phase.
  std::string kernel;
  Phase phase = Phase::forward;
  /// The relayout's name, `<contraction>[.grad_lhs|.grad_rhs].relayout_<role>`,
  /// and the contraction and GEMM ("forward", "grad_lhs", "grad_rhs") it
  /// serves.
  std::string relayout, contraction, gemm;
  /// True when the layout selection recorded this GEMM's relayout (the
  /// module's layouts were selected); then the selection's objective and
  /// that of the best selection without the relayout (none: no layouts
  /// avoid it), in seconds on the selection's target.
  bool recorded = false;
  double selectedSeconds = 0;
  std::optional<double> withoutSeconds;
};

/// The relayouts in the kernels of `counts`, with what `module`'s graphs
/// record about them.
std::vector<KeptRelayoutEvidence>
collectKeptRelayouts(ModuleOp module, const ModuleCounts &counts);

} // namespace mlir::sluice

#endif // SLUICE_REPORT_KEPTRELAYOUTS_H
