//===- Decompose.cpp - composites to primitives ---------------------------===//

#include "dialects/sluice/SluiceDecompositions.h"
#include "dialects/sluice/SluicePasses.h"

#include "mlir/IR/Builders.h"

namespace mlir::sluice {
#define GEN_PASS_DEF_SLUICEDECOMPOSE
#include "dialects/sluice/SluicePasses.h.inc"
} // namespace mlir::sluice

using namespace mlir;
using namespace mlir::sluice;

namespace {
struct DecomposePass : mlir::sluice::impl::SluiceDecomposeBase<DecomposePass> {
  using SluiceDecomposeBase::SluiceDecomposeBase;

  void runOnOperation() override {
    FailureOr<FloatType> type =
        parseComputeType(&getContext(), this->computeType);
    if (failed(type)) {
      getOperation().emitError()
          << "--sluice-decompose: compute-type must be 'f32' or 'f64', got '"
          << this->computeType << "'";
      return signalPassFailure();
    }
    SmallVector<CompositeOpInterface> composites;
    getOperation().walk(
        [&](CompositeOpInterface op) { composites.push_back(op); });
    for (CompositeOpInterface composite : composites) {
      // Keep the composite's report name on the op that produces its first
      // result, so reports stay readable.
      Attribute name = composite->getAttr(SluiceDialect::getOpNameAttrName());
      FailureOr<DecomposedOp> decomposed = decomposeInPlace(composite, *type);
      if (failed(decomposed)) {
        composite->emitOpError() << "could not be decomposed";
        return signalPassFailure();
      }
      if (name)
        if (Operation *producer = decomposed->results[0].getDefiningOp())
          producer->setAttr(SluiceDialect::getOpNameAttrName(), name);
    }
  }
};
} // namespace
