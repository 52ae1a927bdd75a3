//===- DisjointPointersTest.cpp - which kernel pointers may overlap -------===//
//
// setDisjointPointers decides whether a CUDA kernel's pointers are
// __restrict__. Views of the scratch region (sluice_exec.arena) and of the
// saved region (sluice_exec.saved) are separate buffers: two views overlap
// only when they are in one region and their byte ranges meet.
//
//===----------------------------------------------------------------------===//

#include "SluiceTestFixture.h"

#include "../../lib/Codegen/Emit/EmitInternal.h"

#include "mlir/IR/Builders.h"

#include <gtest/gtest.h>

using namespace mlir;
using namespace mlir::sluice;

namespace {

class DisjointPointersTest : public SluiceTest {
protected:
  void SetUp() override {
    context.getOrLoadDialect<exec::ExecDialect>();
    // Two 256-byte tensors (64 x f32): the kernel's input and output.
    module = parse(R"mlir(
      sluice.graph @g(%a: !sluice.tensor<[i=64], f32> {sluice.name = "a"},
                      %b: !sluice.tensor<[i=64], f32> {sluice.name = "b"})
          -> (!sluice.tensor<[i=64], f32> {sluice.name = "c"}) {
        sluice.return %a : !sluice.tensor<[i=64], f32>
      })mlir");
    ASSERT_TRUE(module);
    Block &body = module->getBody()->front().getRegion(0).front();
    group.inputs = {body.getArgument(0)};
    group.outputs = {body.getArgument(1)};
    group.inputPacked = {false};
    group.outputPacked = {false};
    builder.setInsertionPointToEnd(module->getBody());
  }

  Value arena(int64_t offset) {
    return exec::ArenaOp::create(builder, builder.getUnknownLoc(), ptrType(),
                                 offset);
  }
  Value saved(int64_t offset) {
    return exec::SavedOp::create(builder, builder.getUnknownLoc(), ptrType(),
                                 offset);
  }
  Value scratch() {
    return exec::ScratchOp::create(builder, builder.getUnknownLoc(), ptrType());
  }
  Type ptrType() { return exec::PtrType::get(&context); }

  /// Whether the kernel reading `in` and writing `out` gets __restrict__.
  bool disjoint(Value in, Value out) {
    emit::setDisjointPointers(group, {in}, {out});
    return group.disjointPointers;
  }

  OwningOpRef<ModuleOp> module;
  OpBuilder builder{&context};
  emit::FusedGroup group;
};

TEST_F(DisjointPointersTest, ViewsOfOneRegionOverlapWhenTheirBytesDo) {
  EXPECT_FALSE(disjoint(arena(0), arena(128)));
  EXPECT_TRUE(disjoint(arena(0), arena(256)));
  EXPECT_FALSE(disjoint(saved(128), saved(0)));
  EXPECT_TRUE(disjoint(saved(512), saved(256)));
}

TEST_F(DisjointPointersTest, RegionsAreSeparateBuffers) {
  // Same offsets, different regions.
  EXPECT_TRUE(disjoint(arena(0), saved(0)));
  EXPECT_TRUE(disjoint(saved(128), arena(0)));
  // The GEMM product lies past every arena view; it overlaps itself.
  EXPECT_TRUE(disjoint(arena(0), scratch()));
  EXPECT_FALSE(disjoint(scratch(), scratch()));
}

} // namespace
