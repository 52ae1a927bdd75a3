//===- OriginKindTest.cpp - every op that can be an origin has a kind
//------===//
//
// The origin kind (sluice.origin_kind) is a closed enum. Decomposition gives a
// composite's primitives the kind named by its mnemonic, and autodiff gives a
// primitive's gradient ops the primitive's: a composite or primitive added
// to the dialect without an OriginKind case fails here, not in a user's
// pipeline.
//
//===----------------------------------------------------------------------===//

#include "SluiceTestFixture.h"

#include "dialects/sluice/SluiceOps.h"
#include "dialects/sluice/SluicePasses.h"

#include "mlir/Pass/PassManager.h"

using namespace mlir;
using namespace mlir::sluice;

namespace {

using OriginKindTest = SluiceTest;

/// Whether ops named `name` stand for themselves in reports (composites and
/// the primitives a graph may hold directly).
bool standsForItself(RegisteredOperationName name) {
  if (name.hasInterface<CompositeOpInterface>())
    return true;
  return name.getIdentifier() == ContractOp::getOperationName() ||
         name.getIdentifier() == MapOp::getOperationName() ||
         name.getIdentifier() == ReduceOp::getOperationName() ||
         name.getIdentifier() == RandomMaskOp::getOperationName() ||
         name.getIdentifier() == RelayoutOp::getOperationName() ||
         name.getIdentifier() == RenameOp::getOperationName();
}

TEST_F(OriginKindTest, EveryCompositeAndPrimitiveHasAKind) {
  unsigned composites = 0;
  for (RegisteredOperationName name : context.getRegisteredOperations()) {
    if (!llvm::isa<SluiceDialect>(name.getDialect()) || !standsForItself(name))
      continue;
    composites += name.hasInterface<CompositeOpInterface>();
    EXPECT_TRUE(symbolizeOriginKind(name.stripDialect()).has_value())
        << name.getStringRef().str()
        << " has no OriginKind case (dialects/sluice/SluiceAttrs.td)";
  }
  // bias_add ... causal_mask: the test saw the composites.
  EXPECT_GE(composites, 13u);
}

TEST_F(OriginKindTest, DecompositionTagsPrimitivesWithTheCompositeKind) {
  OwningOpRef<ModuleOp> module = parse(R"mlir(
    sluice.graph @g(%x: !sluice.tensor<[j=4, k=8], f32> {sluice.name = "x"})
        -> (!sluice.tensor<[j=4, k=8], f32> {sluice.name = "y"}) {
      %y = sluice.softmax %x over "k" {sluice.name = "sm"} : !sluice.tensor<[j=4, k=8], f32>
      sluice.return %y : !sluice.tensor<[j=4, k=8], f32>
    }
  )mlir");
  ASSERT_TRUE(module);
  PassManager pm(&context);
  pm.nest<GraphOp>().addPass(createSluiceDecompose());
  ASSERT_TRUE(succeeded(pm.run(*module)));
  unsigned primitives = 0;
  module->walk([&](Operation *op) {
    if (llvm::isa<GraphOp, ReturnOp>(op) || op->getParentOfType<MapOp>() ||
        llvm::isa<ModuleOp>(op))
      return;
    ++primitives;
    EXPECT_EQ(getOriginKind(op), OriginKind::softmax)
        << op->getName().getStringRef().str();
  });
  EXPECT_GE(primitives, 4u);
}

} // namespace
