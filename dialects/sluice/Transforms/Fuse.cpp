//===- Fuse.cpp - group primitives into kernels that move fewer bytes -----===//
//
// --sluice-fuse on one graph: checks its input, asks the planner
// (FusionPlanner.cpp) for the kernels and outlines them
// (KernelOutlining.cpp). docs/Fusion.md explains the rules.
//
//===----------------------------------------------------------------------===//

#include "FusionPlan.h"

#include "dialects/sluice/SluicePasses.h"

namespace mlir::sluice {
#define GEN_PASS_DEF_SLUICEFUSE
#include "dialects/sluice/SluicePasses.h.inc"
} // namespace mlir::sluice

using namespace mlir;
using namespace mlir::sluice;
using namespace mlir::sluice::fusion;

//===----------------------------------------------------------------------===//
// The pass
//===----------------------------------------------------------------------===//

namespace {
struct FusePass : mlir::sluice::impl::SluiceFuseBase<FusePass> {
  using SluiceFuseBase::SluiceFuseBase;

  void runOnOperation() override {
    FuseOptions fuseOptions;
    fuseOptions.enable = enable;
    fuseOptions.foldEpilogues = foldEpilogues;
    fuseOptions.maxOps = maxOps;
    fuseOptions.maxResident = maxResident;
    fuseOptions.maskPolicy = maskPolicy;
    fuseOptions.streaming = streaming;
    fuseOptions.accumulateGemms = accumulateGemms;
    if (maxResident <= 0) {
      getOperation().emitError()
          << "--sluice-fuse: max-resident must be positive, got "
          << static_cast<int64_t>(maxResident);
      return signalPassFailure();
    }
    GraphOp graph = getOperation();
    bool composite = false;
    graph.walk([&](CompositeOpInterface op) {
      op.emitOpError() << "must be decomposed before --sluice-fuse (run "
                          "--sluice-decompose first)";
      composite = true;
    });
    if (composite)
      return signalPassFailure();
    // A graph of kernels (fused before, or written by hand) stays as it is;
    // one that mixes kernels and loose primitives is an error.
    Block &body = graph.getBody().front();
    if (!body.getOps<KernelOp>().empty()) {
      for (Operation &op : body.without_terminator())
        if (!llvm::isa<KernelOp, RenameOp>(op)) {
          op.emitOpError() << "is outside a kernel in a graph that already "
                              "has kernels; --sluice-fuse takes unfused "
                              "graphs";
          return signalPassFailure();
        }
      return;
    }
    FailureOr<FusionPlan> plan = planFusion(graph, fuseOptions);
    if (succeeded(plan) && enable && accumulateGemms)
      accumulateIntoGemms(*plan);
    if (failed(plan) || failed(outlineKernels(graph, *plan)))
      return signalPassFailure();
    if (enable && streaming)
      absorbGradientStacks(graph, foldEpilogues);
  }
};
} // namespace
