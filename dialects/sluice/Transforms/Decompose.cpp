//===- Decompose.cpp - composites to primitives ---------------------------===//

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
    SmallVector<CompositeOpInterface> composites;
    getOperation().walk(
        [&](CompositeOpInterface op) { composites.push_back(op); });
    FloatType computeType;
    if (this->computeType == "f32") {
      computeType = Float32Type::get(&getContext());
    } else if (this->computeType == "f64") {
      computeType = Float64Type::get(&getContext());
    } else {
      getOperation().emitError()
          << "--sluice-decompose: compute-type must be 'f32' or 'f64', got '"
          << this->computeType << "'";
      return signalPassFailure();
    }
    for (CompositeOpInterface composite : composites) {
      OpBuilder builder(composite);
      FailureOr<SmallVector<Value>> replacements =
          composite.decompose(builder, computeType);
      if (failed(replacements)) {
        composite->emitOpError() << "could not be decomposed";
        return signalPassFailure();
      }
      // Keep the composite's report name on the op that produces its first
      // result, so reports stay readable.
      if (Attribute name =
              composite->getAttr(SluiceDialect::getOpNameAttrName()))
        if (Operation *producer = (*replacements)[0].getDefiningOp())
          producer->setAttr(SluiceDialect::getOpNameAttrName(), name);
      composite->replaceAllUsesWith(*replacements);
      composite->erase();
    }
  }
};
} // namespace
