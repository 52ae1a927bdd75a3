//===- SelectLayouts.cpp - global layout selection from the cost model ----===//
//
// Builds the graph's selection problem (LayoutSelection.h), solves it
// exactly with LayoutSolver and rewrites the chosen layouts into the types.
//
//===----------------------------------------------------------------------===//

#include "LayoutSelection.h"

#include "sluice/Layout/Passes.h"

#include "mlir/Pass/Pass.h"

#include "llvm/Support/Error.h"
#include "llvm/Support/FormatVariadic.h"

#include <cmath>

namespace mlir::sluice {
#define GEN_PASS_DECL_SLUICESELECTLAYOUTS
#define GEN_PASS_DEF_SLUICESELECTLAYOUTS
#define GEN_PASS_REGISTRATION
#include "lib/Layout/LayoutPasses.h.inc"
} // namespace mlir::sluice

using namespace mlir;
using namespace mlir::sluice;

namespace {

/// The target option, else the default of the module's architecture, else
/// h100.
llvm::Expected<GpuTarget> targetFor(GraphOp graph, StringRef option) {
  if (!option.empty())
    return resolveTarget(option);
  std::string name = "h100";
  if (auto module = graph->getParentOfType<ModuleOp>())
    if (auto arch = module->getAttrOfType<StringAttr>("sluice.target"))
      if (std::optional<std::string> byArch =
              defaultTargetForArch(arch.getValue()))
        name = *byArch;
  return builtinTarget(name);
}

/// Sets `graph`'s kKeptRelayoutsAttrName to `kept` (removes it when empty).
void recordKeptRelayouts(GraphOp graph, ArrayRef<KeptRelayout> kept) {
  Builder builder(graph.getContext());
  SmallVector<Attribute> entries;
  for (const KeptRelayout &relayout : kept) {
    SmallVector<NamedAttribute> fields = {
        builder.getNamedAttr("contraction",
                             builder.getStringAttr(relayout.contraction)),
        builder.getNamedAttr(
            "gemm", builder.getStringAttr(stringifyTermGemm(relayout.gemm))),
        builder.getNamedAttr(
            "selected_seconds",
            builder.getF64FloatAttr(relayout.selectedSeconds))};
    if (relayout.withoutSeconds)
      fields.push_back(builder.getNamedAttr(
          "without_seconds",
          builder.getF64FloatAttr(*relayout.withoutSeconds)));
    entries.push_back(builder.getDictionaryAttr(fields));
  }
  if (entries.empty())
    graph->removeAttr(kKeptRelayoutsAttrName);
  else
    graph->setAttr(kKeptRelayoutsAttrName, builder.getArrayAttr(entries));
}

struct SelectLayoutsPass
    : mlir::sluice::impl::SluiceSelectLayoutsBase<SelectLayoutsPass> {
  using SluiceSelectLayoutsBase::SluiceSelectLayoutsBase;

  void runOnOperation() override {
    GraphOp graph = getOperation();
    llvm::Expected<GpuTarget> gpu = targetFor(graph, target);
    if (!gpu) {
      graph.emitError() << llvm::toString(gpu.takeError());
      return signalPassFailure();
    }
    LayoutSelectionOptions options;
    options.backward = backward;
    options.maxCandidates = maxCandidates;
    options.streaming = streaming;
    LayoutSelection selection = buildLayoutSelection(graph, *gpu, options);
    std::optional<LayoutSolution> solution = solveExact(selection.problem);
    if (!solution) {
      graph.emitError() << "layout selection: the frontier of "
                        << selection.classes.size()
                        << " layout classes is too wide for the exact solver";
      return signalPassFailure();
    }
    if (checkExhaustive && failed(checkAgainstExhaustive(selection, *solution)))
      return signalPassFailure();
    recordKeptRelayouts(graph, explainKeptRelayouts(selection, *solution));
    unsigned changed = applyLayoutSelection(selection, solution->choice);
    if (remark)
      graph.emitRemark() << "layout selection on " << gpu->name << ": "
                         << selection.classes.size() << " classes, "
                         << selection.problem.terms.size() << " terms, "
                         << changed << " tensors changed, " << solution->states
                         << " solver states, predicted "
                         << llvm::formatv("{0:F3}", solution->cost * 1e3).str()
                         << " ms";
  }

  LogicalResult checkAgainstExhaustive(const LayoutSelection &selection,
                                       const LayoutSolution &solution) {
    LayoutSolution oracle = solveExhaustive(selection.problem);
    if (std::abs(oracle.cost - solution.cost) <= 1e-12 * oracle.cost)
      return success();
    return getOperation().emitError()
           << "layout selection: the solver's cost " << solution.cost
           << " s differs from the exhaustive minimum " << oracle.cost << " s";
  }
};

} // namespace

void mlir::sluice::registerLayoutPasses() { registerSluiceLayoutPasses(); }
