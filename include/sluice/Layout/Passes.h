//===- Passes.h - passes that price layouts on a target ---------*- C++ -*-===//
//
// `--sluice-select-layouts` (lib/Layout/LayoutPasses.td, docs/Layout.md):
// global layout selection from the cost model. It reads lib/Analysis (the
// cost model, the target descriptions), so it is not one of the dialect's
// passes (dialects/sluice/SluicePasses.td), which depend on nothing in lib/.
// The pipeline (sluice/Pipeline/Pipeline.h) adds it with its options.
//
//===----------------------------------------------------------------------===//

#ifndef SLUICE_LAYOUT_PASSES_H
#define SLUICE_LAYOUT_PASSES_H

namespace mlir::sluice {

/// The graph attribute in which `--sluice-select-layouts` records every
/// relayout its layouts keep, with the evidence that keeping it is the
/// model's optimum: an array of {contraction, gemm ("forward", "grad_lhs",
/// "grad_rhs"), selected_seconds, without_seconds (absent: no layouts avoid
/// it)}. The report shows it (docs/Report.md, "kept_relayouts").
inline constexpr const char kKeptRelayoutsAttrName[] = "sluice.kept_relayouts";

/// Registers `--sluice-select-layouts` (for sluice-opt and plugins).
void registerLayoutPasses();

} // namespace mlir::sluice

#endif // SLUICE_LAYOUT_PASSES_H
