//===- Decompose.cpp - composites to primitives ---------------------------===//
//
// One rewrite pattern on CompositeOpInterface replaces every composite by its
// decomposition (SluiceDecompositions.cpp). The walk driver applies it once
// per op, in program order, without folding, so the primitives come out
// exactly as the decompositions build them.
//
//===----------------------------------------------------------------------===//

#include "dialects/sluice/SluiceDecompositions.h"
#include "dialects/sluice/SluicePasses.h"

#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/WalkPatternRewriteDriver.h"

namespace mlir::sluice {
#define GEN_PASS_DEF_SLUICEDECOMPOSE
#include "dialects/sluice/SluicePasses.h.inc"
} // namespace mlir::sluice

using namespace mlir;
using namespace mlir::sluice;

namespace {
/// Replaces a composite by the primitives it stands for. A composite that
/// cannot be decomposed is reported (and `failedOps` counts it).
struct DecomposeComposite
    : public OpInterfaceRewritePattern<CompositeOpInterface> {
  DecomposeComposite(MLIRContext *context, FloatType computeType,
                     unsigned &failedOps)
      : OpInterfaceRewritePattern(context), computeType(computeType),
        failedOps(failedOps) {}

  LogicalResult matchAndRewrite(CompositeOpInterface composite,
                                PatternRewriter &rewriter) const override {
    // Keep the composite's report name on the op that produces its first
    // result, so reports stay readable.
    Attribute name = composite->getAttr(SluiceDialect::getOpNameAttrName());
    FailureOr<DecomposedOp> decomposed =
        decomposeInPlace(rewriter, composite, computeType);
    if (failed(decomposed)) {
      composite->emitOpError() << "could not be decomposed";
      ++failedOps;
      return rewriter.notifyMatchFailure(composite, "no decomposition");
    }
    if (name)
      if (Operation *producer = decomposed->results[0].getDefiningOp())
        producer->setAttr(SluiceDialect::getOpNameAttrName(), name);
    return success();
  }

  FloatType computeType;
  unsigned &failedOps;
};

struct DecomposePass : mlir::sluice::impl::SluiceDecomposeBase<DecomposePass> {
  using SluiceDecomposeBase::SluiceDecomposeBase;

  void runOnOperation() override {
    unsigned failedOps = 0;
    RewritePatternSet patterns(&getContext());
    populateDecompositionPatterns(
        patterns, getComputeFloatType(&getContext(), computeType), failedOps);
    FrozenRewritePatternSet frozen(std::move(patterns));
    // A decomposition may build other composites: walk again until none is
    // left (the interpreter's decomposeAll allows the same 16 rounds).
    auto hasComposite = [&] {
      return getOperation()
          .walk([](CompositeOpInterface) { return WalkResult::interrupt(); })
          .wasInterrupted();
    };
    for (unsigned round = 0; round < 16 && !failedOps && hasComposite();
         ++round)
      walkAndApplyPatterns(getOperation(), frozen);
    if (failedOps)
      return signalPassFailure();
    getOperation().walk([&](CompositeOpInterface composite) {
      composite->emitOpError()
          << "is still a composite after 16 rounds of decomposition";
      ++failedOps;
    });
    if (failedOps)
      signalPassFailure();
  }
};
} // namespace

void mlir::sluice::populateDecompositionPatterns(RewritePatternSet &patterns,
                                                 FloatType computeType,
                                                 unsigned &failedOps) {
  patterns.add<DecomposeComposite>(patterns.getContext(), computeType,
                                   failedOps);
}
