//===- MemoryPlanTest.cpp - the arena plan --------------------------------===//
//
// Hand-written graphs check each rule of docs/MemoryPlan.md (reuse, saved
// tensors across the forward/backward boundary, caller memory, renames,
// bit-packed results, alignment, overflow); the BERT-large training module
// checks the plan's invariants exhaustively: no two buffers that live at the
// same step share a byte, and every value is live wherever it is read.
//
//===----------------------------------------------------------------------===//

#include "sluice/Codegen/MemoryPlan.h"
#include "SluiceTestFixture.h"
#include "dialects/sluice_exec/ExecOps.h"
#include "sluice/Codegen/Emit.h"
#include "sluice/Pipeline/Pipeline.h"
#include "sluice/Spec/EncoderBuilder.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"

#include <gtest/gtest.h>
#include <optional>
#include <set>
#include <string>

using namespace mlir;
using namespace mlir::sluice;

namespace {

class MemoryPlanTest : public SluiceTest {
protected:

  /// The buffer named `name`, or null.
  static const ArenaBuffer *find(const MemoryPlan &plan, llvm::StringRef name) {
    for (const ArenaBuffer &buffer : plan.buffers)
      if (buffer.name == name)
        return &buffer;
    return nullptr;
  }

  /// The step of the top-level op named `name` in graph `graph`.
  static unsigned stepOf(const MemoryPlan &plan, llvm::StringRef graph,
                         llvm::StringRef name) {
    for (unsigned step = 0; step < plan.steps.size(); ++step) {
      Operation *op = plan.steps[step];
      auto opName =
          op->getAttrOfType<StringAttr>(SluiceDialect::getOpNameAttrName());
      if (opName && opName.getValue() == name &&
          op->getParentOfType<GraphOp>().getSymName() == graph)
        return step;
    }
    ADD_FAILURE() << "no step " << graph.str() << "/" << name.str();
    return 0;
  }

  /// The invariants every plan meets, checked pair by pair and use by use.
  static void expectValid(const MemoryPlan &plan) {
    uint64_t sum = 0, savedEnd = 0, scratchEnd = 0;
    for (const ArenaBuffer &buffer : plan.buffers) {
      EXPECT_EQ(buffer.offset % plan.alignment, 0u) << buffer.name;
      EXPECT_EQ(buffer.alignedBytes % plan.alignment, 0u) << buffer.name;
      EXPECT_GE(buffer.alignedBytes, buffer.bytes) << buffer.name;
      EXPECT_LT(buffer.alignedBytes - buffer.bytes, plan.alignment)
          << buffer.name;
      EXPECT_LE(buffer.firstStep, buffer.lastStep) << buffer.name;
      EXPECT_LT(buffer.lastStep, plan.steps.size()) << buffer.name;
      sum += buffer.alignedBytes;
      uint64_t &end = buffer.saved ? savedEnd : scratchEnd;
      end = std::max(end, buffer.offset + buffer.alignedBytes);
      for (Value value : buffer.values)
        EXPECT_EQ(plan.lookup(value), &buffer) << buffer.name;
    }
    EXPECT_EQ(plan.bytesWithoutReuse, sum);
    EXPECT_EQ(plan.savedBytes, savedEnd);
    EXPECT_EQ(plan.scratchBytes, scratchEnd);
    EXPECT_EQ(plan.peakBytes, savedEnd + scratchEnd);
    EXPECT_LE(plan.maxLiveBytes, plan.peakBytes);
    EXPECT_LE(plan.peakBytes, plan.bytesWithoutReuse);
    for (size_t i = 0; i < plan.buffers.size(); ++i)
      for (size_t j = i + 1; j < plan.buffers.size(); ++j) {
        const ArenaBuffer &a = plan.buffers[i], &b = plan.buffers[j];
        if (!a.livesWith(b) || a.saved != b.saved)
          continue;
        bool disjoint = a.offset + a.alignedBytes <= b.offset ||
                        b.offset + b.alignedBytes <= a.offset;
        EXPECT_TRUE(disjoint) << a.name << " and " << b.name << " overlap";
      }
    // Every arena operand of a step is live at that step, and every result is
    // live from the step that writes it.
    for (unsigned step = 0; step < plan.steps.size(); ++step) {
      Operation *op = plan.steps[step];
      for (Value operand : op->getOperands())
        if (const ArenaBuffer *buffer = plan.lookup(operand)) {
          EXPECT_LE(buffer->firstStep, step) << buffer->name;
          EXPECT_GE(buffer->lastStep, step) << buffer->name;
        }
      if (isa<RenameOp>(op))
        continue;
      for (Value result : op->getResults())
        if (const ArenaBuffer *buffer = plan.lookup(result))
          EXPECT_EQ(buffer->firstStep, step) << buffer->name;
    }
  }

  /// Plans BERT-large training (batch 8, seq 512, f16, dropout 0.1) built
  /// through the pipeline with `options`, and checks every invariant over
  /// every pair of buffers and every use.
  /// `expectPacked`: whether some kernel result must (or must not) be
  /// bit-packed; unset when the mask policy decides.
  void checkBertLargeTraining(PipelineOptions options,
                              std::optional<bool> expectPacked) {
    LayerSpec spec;
    spec.name = "bert-large";
    spec.training = true;
    spec.dims = {8, 512, 16, 64, 1024, 4096};
    spec.dtype = DType::F16;
    spec.dropout = {0.1, 0.1, 0.1};
    OwningOpRef<ModuleOp> module =
        buildEncoderGraph(context, spec, UnknownLoc::get(&context));
    ASSERT_TRUE(module);
    PassManager pm(&context);
    options.training = true;
    buildSluicePipeline(pm, options);
    ASSERT_TRUE(succeeded(pm.run(*module)));
    FailureOr<MemoryPlan> plan = planMemory(*module);
    ASSERT_TRUE(succeeded(plan));
    expectValid(*plan);
    EXPECT_LT(plan->peakBytes, plan->bytesWithoutReuse);
    // Every saved intermediate outlives the forward graph and reaches into the
    // backward one; every other buffer lives in one graph.
    unsigned backwardStart = plan->steps.size();
    for (unsigned step = 0; step < plan->steps.size(); ++step)
      if (plan->steps[step]->getParentOfType<GraphOp>().getPhase() ==
          Phase::backward) {
        backwardStart = step;
        break;
      }
    unsigned numSaved = 0;
    for (const ArenaBuffer &buffer : plan->buffers) {
      auto producer =
          buffer.values.front().getDefiningOp()->getParentOfType<GraphOp>();
      auto last = plan->steps[buffer.lastStep]->getParentOfType<GraphOp>();
      if (buffer.saved) {
        ++numSaved;
        EXPECT_LT(buffer.firstStep, backwardStart) << buffer.name;
        EXPECT_GE(buffer.lastStep, backwardStart) << buffer.name;
        EXPECT_GE(buffer.values.size(), 2u) << buffer.name;
      } else {
        EXPECT_EQ(producer, last) << buffer.name;
      }
    }
    EXPECT_GT(numSaved, 0u);
    // Sizes from the types: one bit per element for packed kernel results.
    unsigned numKernels = 0, numPacked = 0;
    for (Operation *step : plan->steps) {
      auto kernel = dyn_cast<KernelOp>(step);
      if (!kernel)
        continue;
      ++numKernels;
      for (OpResult result : kernel->getResults()) {
        const ArenaBuffer *buffer = plan->lookup(result);
        if (!buffer)
          continue;
        auto type = cast<NamedTensorType>(result.getType());
        uint64_t elements = *type.getNumElements();
        if (kernel.isPacked(result.getResultNumber())) {
          ++numPacked;
          EXPECT_EQ(buffer->bytes, (elements + 7) / 8) << buffer->name;
        } else {
          EXPECT_EQ(buffer->bytes, elements * type.getElementByteWidth())
              << buffer->name;
        }
      }
    }
    EXPECT_GT(numKernels, 0u);
    if (expectPacked)
      EXPECT_EQ(numPacked > 0, *expectPacked);
  }

};

// x -> a -> b -> c -> y, 1 KiB each: a and c never live together, so they
// share bytes; y is the caller's.
TEST_F(MemoryPlanTest, ChainReusesDeadBuffers) {
  OwningOpRef<ModuleOp> module = parse(R"mlir(
    sluice.graph @g(%x: !sluice.tensor<[j=4, i=64], f32> {sluice.name = "x"})
        -> (!sluice.tensor<[j=4, i=64], f32> {sluice.name = "y"}) {
      %a = sluice.relayout %x {sluice.name = "a"} : !sluice.tensor<[j=4, i=64], f32> -> !sluice.tensor<[i=64, j=4], f32>
      %b = sluice.relayout %a {sluice.name = "b"} : !sluice.tensor<[i=64, j=4], f32> -> !sluice.tensor<[j=4, i=64], f32>
      %c = sluice.relayout %b {sluice.name = "c"} : !sluice.tensor<[j=4, i=64], f32> -> !sluice.tensor<[i=64, j=4], f32>
      %y = sluice.relayout %c {sluice.name = "out"} : !sluice.tensor<[i=64, j=4], f32> -> !sluice.tensor<[j=4, i=64], f32>
      sluice.return %y : !sluice.tensor<[j=4, i=64], f32>
    })mlir");
  ASSERT_TRUE(module);
  FailureOr<MemoryPlan> plan = planMemory(*module);
  ASSERT_TRUE(succeeded(plan));
  expectValid(*plan);
  const uint64_t tensorBytes = 4 * 64 * sizeof(float);
  ASSERT_EQ(plan->buffers.size(), 3u);
  const ArenaBuffer *a = find(*plan, "a"), *b = find(*plan, "b"),
                    *c = find(*plan, "c");
  ASSERT_TRUE(a && b && c);
  EXPECT_EQ(a->bytes, tensorBytes);
  EXPECT_EQ(a->firstStep, 0u);
  EXPECT_EQ(a->lastStep, 1u);
  EXPECT_EQ(b->firstStep, 1u);
  EXPECT_EQ(b->lastStep, 2u);
  EXPECT_EQ(c->firstStep, 2u);
  EXPECT_EQ(c->lastStep, 3u);
  EXPECT_EQ(a->offset, c->offset);
  EXPECT_NE(a->offset, b->offset);
  EXPECT_EQ(plan->bytesWithoutReuse, 3 * tensorBytes);
  EXPECT_EQ(plan->peakBytes, 2 * tensorBytes);
  EXPECT_EQ(plan->maxLiveBytes, 2 * tensorBytes);
  EXPECT_EQ(find(*plan, "out"), nullptr);
}

// Boundary arguments, returned values and renames of either take no arena
// bytes; a rename of an intermediate is its source's buffer and keeps it alive.
TEST_F(MemoryPlanTest, BoundaryTensorsAndRenamesTakeNoArena) {
  OwningOpRef<ModuleOp> module = parse(R"mlir(
    sluice.graph @g(%x: !sluice.tensor<[j=4, i=64], f32> {sluice.name = "x"})
        -> (!sluice.tensor<[k=4, i=64], f32> {sluice.name = "y"},
            !sluice.tensor<[j=4, i=64], f32> {sluice.name = "z"}) {
      %xr = sluice.rename %x : !sluice.tensor<[j=4, i=64], f32> -> !sluice.tensor<[k=4, i=64], f32>
      %a = sluice.relayout %xr {sluice.name = "a"} : !sluice.tensor<[k=4, i=64], f32> -> !sluice.tensor<[k=4, i=64], f32>
      %ar = sluice.rename %a : !sluice.tensor<[k=4, i=64], f32> -> !sluice.tensor<[j=4, i=64], f32>
      %b = sluice.relayout %x {sluice.name = "b"} : !sluice.tensor<[j=4, i=64], f32> -> !sluice.tensor<[j=4, i=64], f32>
      %c = sluice.residual_add %ar, %b {sluice.name = "c"} : (!sluice.tensor<[j=4, i=64], f32>, !sluice.tensor<[j=4, i=64], f32>) -> !sluice.tensor<[j=4, i=64], f32>
      %y = sluice.relayout %xr {sluice.name = "y"} : !sluice.tensor<[k=4, i=64], f32> -> !sluice.tensor<[k=4, i=64], f32>
      %yr = sluice.rename %y : !sluice.tensor<[k=4, i=64], f32> -> !sluice.tensor<[j=4, i=64], f32>
      %z = sluice.residual_add %yr, %c {sluice.name = "z"} : (!sluice.tensor<[j=4, i=64], f32>, !sluice.tensor<[j=4, i=64], f32>) -> !sluice.tensor<[j=4, i=64], f32>
      sluice.return %y, %z : !sluice.tensor<[k=4, i=64], f32>, !sluice.tensor<[j=4, i=64], f32>
    })mlir");
  ASSERT_TRUE(module);
  FailureOr<MemoryPlan> plan = planMemory(*module);
  ASSERT_TRUE(succeeded(plan));
  expectValid(*plan);
  // a, b and c: the renames, x, y (returned) and z (returned) have none.
  ASSERT_EQ(plan->buffers.size(), 3u);
  auto graph = *module->getOps<GraphOp>().begin();
  EXPECT_EQ(plan->lookup(graph.getArgument(0)), nullptr);
  Operation *ret = graph.getReturnOp();
  EXPECT_EQ(plan->lookup(ret->getOperand(0)), nullptr);
  EXPECT_EQ(plan->lookup(ret->getOperand(1)), nullptr);
  const ArenaBuffer *a = find(*plan, "a");
  ASSERT_TRUE(a);
  // The view %ar resolves to a's buffer and keeps it alive until c reads it.
  Operation *c = plan->steps[stepOf(*plan, "g", "c")];
  EXPECT_EQ(plan->lookup(c->getOperand(0)), a);
  EXPECT_EQ(a->lastStep, stepOf(*plan, "g", "c"));
  // y's rename reads nothing from the arena: %yr is the caller's too.
  Operation *z = plan->steps[stepOf(*plan, "g", "z")];
  EXPECT_EQ(plan->lookup(z->getOperand(0)), nullptr);
}

// A saved intermediate lives from its producer in the forward graph to its
// last reader in the backward graph; saved boundary tensors are the caller's.
TEST_F(MemoryPlanTest, SavedTensorsLiveAcrossTheBoundary) {
  OwningOpRef<ModuleOp> module = parse(R"mlir(
    sluice.graph @g_forward(%x: !sluice.tensor<[j=4, i=64], f32> {sluice.name = "x"})
        -> (!sluice.tensor<[j=4, i=64], f32> {sluice.name = "y"},
            !sluice.tensor<[j=4, i=64], f32> {sluice.name = "saved.h", sluice.saved = "h"},
            !sluice.tensor<[j=4, i=64], f32> {sluice.name = "saved.x", sluice.saved = "x"},
            !sluice.tensor<[j=4, i=64], f32> {sluice.name = "saved.y", sluice.saved = "y"}) {
      %h = sluice.relayout %x {sluice.name = "h"} : !sluice.tensor<[j=4, i=64], f32> -> !sluice.tensor<[j=4, i=64], f32>
      %t = sluice.relayout %h {sluice.name = "t"} : !sluice.tensor<[j=4, i=64], f32> -> !sluice.tensor<[j=4, i=64], f32>
      %y = sluice.relayout %t {sluice.name = "out"} : !sluice.tensor<[j=4, i=64], f32> -> !sluice.tensor<[j=4, i=64], f32>
      sluice.return %y, %h, %x, %y : !sluice.tensor<[j=4, i=64], f32>, !sluice.tensor<[j=4, i=64], f32>, !sluice.tensor<[j=4, i=64], f32>, !sluice.tensor<[j=4, i=64], f32>
    }
    sluice.graph @g_backward(%sh: !sluice.tensor<[j=4, i=64], f32> {sluice.name = "saved.h", sluice.saved = "h"},
                             %sx: !sluice.tensor<[j=4, i=64], f32> {sluice.name = "saved.x", sluice.saved = "x"},
                             %sy: !sluice.tensor<[j=4, i=64], f32> {sluice.name = "saved.y", sluice.saved = "y"},
                             %dy: !sluice.tensor<[j=4, i=64], f32> {sluice.name = "dy"})
        -> (!sluice.tensor<[j=4, i=64], f32> {sluice.name = "d_x"})
        attributes {phase = #sluice<phase backward>} {
      %u = sluice.residual_add %dy, %sy {sluice.name = "u"} : (!sluice.tensor<[j=4, i=64], f32>, !sluice.tensor<[j=4, i=64], f32>) -> !sluice.tensor<[j=4, i=64], f32>
      %v = sluice.residual_add %u, %sx {sluice.name = "v"} : (!sluice.tensor<[j=4, i=64], f32>, !sluice.tensor<[j=4, i=64], f32>) -> !sluice.tensor<[j=4, i=64], f32>
      %w = sluice.residual_add %v, %sh {sluice.name = "w"} : (!sluice.tensor<[j=4, i=64], f32>, !sluice.tensor<[j=4, i=64], f32>) -> !sluice.tensor<[j=4, i=64], f32>
      sluice.return %w : !sluice.tensor<[j=4, i=64], f32>
    })mlir");
  ASSERT_TRUE(module);
  FailureOr<MemoryPlan> plan = planMemory(*module);
  ASSERT_TRUE(succeeded(plan));
  expectValid(*plan);
  // h (saved), t; u and v in the backward; y, w and the saved boundary
  // tensors x and y are the caller's.
  ASSERT_EQ(plan->buffers.size(), 4u);
  const ArenaBuffer *saved = find(*plan, "saved.h");
  ASSERT_TRUE(saved);
  EXPECT_TRUE(saved->saved);
  EXPECT_EQ(saved->graph, "g_forward");
  EXPECT_EQ(find(*plan, "h"), nullptr);
  EXPECT_EQ(saved->firstStep, stepOf(*plan, "g_forward", "h"));
  EXPECT_EQ(saved->lastStep, stepOf(*plan, "g_backward", "w"));
  GraphOp backward;
  for (GraphOp graph : module->getOps<GraphOp>())
    if (graph.getPhase() == Phase::backward)
      backward = graph;
  ASSERT_TRUE(backward);
  EXPECT_EQ(plan->lookup(backward.lookupArgument("saved.h")), saved);
  EXPECT_EQ(plan->lookup(backward.lookupArgument("saved.x")), nullptr);
  EXPECT_EQ(plan->lookup(backward.lookupArgument("saved.y")), nullptr);
  EXPECT_EQ(plan->lookup(backward.lookupArgument("dy")), nullptr);
  // The steps run the forward before the backward.
  EXPECT_LT(stepOf(*plan, "g_forward", "out"),
            stepOf(*plan, "g_backward", "u"));
  // t dies in the forward, so u or v may reuse its bytes in the scratch
  // region; saved.h has the saved region.
  const ArenaBuffer *t = find(*plan, "t"), *u = find(*plan, "u");
  ASSERT_TRUE(t && u);
  EXPECT_FALSE(t->saved);
  EXPECT_FALSE(u->saved);
  EXPECT_EQ(u->graph, "g_backward");
  EXPECT_EQ(u->offset, t->offset);
  EXPECT_EQ(saved->offset, 0u);
  EXPECT_EQ(plan->savedBytes, saved->alignedBytes);
  EXPECT_EQ(plan->scratchBytes, 2 * saved->alignedBytes);
  EXPECT_EQ(plan->peakBytes, 3 * saved->alignedBytes);
}

// A saved tensor no backward op reads still lives until its backward starts.
TEST_F(MemoryPlanTest, UnreadSavedTensorLivesUntilTheBackward) {
  OwningOpRef<ModuleOp> module = parse(R"mlir(
    sluice.graph @g_forward(%x: !sluice.tensor<[j=4], f32> {sluice.name = "x"})
        -> (!sluice.tensor<[j=4], f32> {sluice.name = "y"},
            !sluice.tensor<[j=4], f32> {sluice.name = "saved.h", sluice.saved = "h"}) {
      %h = sluice.relayout %x {sluice.name = "h"} : !sluice.tensor<[j=4], f32> -> !sluice.tensor<[j=4], f32>
      %t = sluice.relayout %x {sluice.name = "t"} : !sluice.tensor<[j=4], f32> -> !sluice.tensor<[j=4], f32>
      %y = sluice.relayout %t {sluice.name = "out"} : !sluice.tensor<[j=4], f32> -> !sluice.tensor<[j=4], f32>
      sluice.return %y, %h : !sluice.tensor<[j=4], f32>, !sluice.tensor<[j=4], f32>
    }
    sluice.graph @g_backward(%sh: !sluice.tensor<[j=4], f32> {sluice.name = "saved.h", sluice.saved = "h"},
                             %dy: !sluice.tensor<[j=4], f32> {sluice.name = "dy"})
        -> (!sluice.tensor<[j=4], f32> {sluice.name = "d_x"})
        attributes {phase = #sluice<phase backward>} {
      %d = sluice.relayout %dy {sluice.name = "d"} : !sluice.tensor<[j=4], f32> -> !sluice.tensor<[j=4], f32>
      sluice.return %d : !sluice.tensor<[j=4], f32>
    })mlir");
  ASSERT_TRUE(module);
  FailureOr<MemoryPlan> plan = planMemory(*module);
  ASSERT_TRUE(succeeded(plan));
  expectValid(*plan);
  const ArenaBuffer *saved = find(*plan, "saved.h"), *t = find(*plan, "t");
  ASSERT_TRUE(saved && t);
  EXPECT_EQ(saved->lastStep, stepOf(*plan, "g_forward", "out"));
  EXPECT_TRUE(saved->saved);
  EXPECT_FALSE(t->saved);
  EXPECT_EQ(plan->savedBytes, saved->alignedBytes);
}

// Two layers in one module: each backward reads the saved tensor of its own
// forward (paired by @<G>_forward / @<G>_backward), even under the same
// saved name, and all forward steps come before all backward steps.
TEST_F(MemoryPlanTest, BackwardGraphsPairWithTheirForwardByName) {
  std::string layer = R"mlir(
    sluice.graph @NAME_forward(%x: !sluice.tensor<[j=SIZE], f32> {sluice.name = "x"})
        -> (!sluice.tensor<[j=SIZE], f32> {sluice.name = "y"},
            !sluice.tensor<[j=SIZE], f32> {sluice.name = "saved.h", sluice.saved = "h"}) {
      %h = sluice.relayout %x {sluice.name = "h"} : !sluice.tensor<[j=SIZE], f32> -> !sluice.tensor<[j=SIZE], f32>
      %y = sluice.relayout %h {sluice.name = "out"} : !sluice.tensor<[j=SIZE], f32> -> !sluice.tensor<[j=SIZE], f32>
      sluice.return %y, %h : !sluice.tensor<[j=SIZE], f32>, !sluice.tensor<[j=SIZE], f32>
    }
  )mlir";
  std::string backward = R"mlir(
    sluice.graph @NAME_backward(%sh: !sluice.tensor<[j=SIZE], f32> {sluice.name = "saved.h", sluice.saved = "h"},
                                %dy: !sluice.tensor<[j=SIZE], f32> {sluice.name = "dy"})
        -> (!sluice.tensor<[j=SIZE], f32> {sluice.name = "d_x"})
        attributes {phase = #sluice<phase backward>} {
      %d = sluice.residual_add %dy, %sh {sluice.name = "d"} : (!sluice.tensor<[j=SIZE], f32>, !sluice.tensor<[j=SIZE], f32>) -> !sluice.tensor<[j=SIZE], f32>
      sluice.return %d : !sluice.tensor<[j=SIZE], f32>
    }
  )mlir";
  auto instantiate = [](std::string text, llvm::StringRef name,
                        llvm::StringRef size) {
    for (auto [from, to] :
         {std::pair<std::string, llvm::StringRef>("NAME", name),
          std::pair<std::string, llvm::StringRef>("SIZE", size)})
      for (size_t at = text.find(from); at != std::string::npos;
           at = text.find(from, at + to.size()))
        text.replace(at, from.size(), to.str());
    return text;
  };
  // The backward graphs come first in the module, in the other order.
  OwningOpRef<ModuleOp> module = parse(
      instantiate(backward, "b", "128") + instantiate(backward, "a", "64") +
      instantiate(layer, "a", "64") + instantiate(layer, "b", "128"));
  ASSERT_TRUE(module);
  FailureOr<MemoryPlan> plan = planMemory(*module);
  ASSERT_TRUE(succeeded(plan));
  expectValid(*plan);
  // Only the saved tensors: y and d_x are the caller's.
  ASSERT_EQ(plan->buffers.size(), 2u);
  for (llvm::StringRef name : {"a", "b"}) {
    std::string forwardName = (name + "_forward").str();
    std::string backwardName = (name + "_backward").str();
    auto forward = module->lookupSymbol<GraphOp>(forwardName);
    auto backwardGraph = module->lookupSymbol<GraphOp>(backwardName);
    ASSERT_TRUE(forward && backwardGraph);
    const ArenaBuffer *saved =
        plan->lookup(forward.getReturnOp()->getOperand(1));
    ASSERT_TRUE(saved) << name.str();
    EXPECT_TRUE(saved->saved);
    EXPECT_EQ(plan->lookup(backwardGraph.lookupArgument("saved.h")), saved);
    EXPECT_EQ(saved->firstStep, stepOf(*plan, forwardName, "h"));
    EXPECT_EQ(saved->lastStep, stepOf(*plan, backwardName, "d"));
    EXPECT_EQ(saved->bytes, (name == "a" ? 64u : 128u) * sizeof(float));
  }
  EXPECT_LT(stepOf(*plan, "b_forward", "out"),
            stepOf(*plan, "b_backward", "d"));
  EXPECT_LT(stepOf(*plan, "b_forward", "out"),
            stepOf(*plan, "a_backward", "d"));
}

// Bit-packed kernel results take one bit per element; every offset is a
// multiple of 256 even when sizes are not.
TEST_F(MemoryPlanTest, PackedResultsAndAlignment) {
  OwningOpRef<ModuleOp> module = parse(R"mlir(
    sluice.graph @g(%x: !sluice.tensor<[j=3, i=5], f16> {sluice.name = "x"})
        -> (!sluice.tensor<[j=3, i=5], f16> {sluice.name = "y"}) {
      %m, %c = sluice.kernel () {kind = #sluice<kernel_kind fused>, members = ["mask", "copy"], packed = array<i64: 0>, sluice.name = "k0"}
          : () -> (!sluice.tensor<[j=3, i=5], f16>, !sluice.tensor<[j=3, i=5], f32>) {
        %mm = sluice.random_mask {probability = 0.1 : f64, stream = 1 : i64} : !sluice.tensor<[j=3, i=5], f16>
        %cc = sluice.random_mask {probability = 0.1 : f64, stream = 2 : i64} : !sluice.tensor<[j=3, i=5], f32>
        sluice.kernel_yield %mm, %cc : !sluice.tensor<[j=3, i=5], f16>, !sluice.tensor<[j=3, i=5], f32>
      }
      %y = sluice.kernel (%x, %m, %c) {kind = #sluice<kernel_kind fused>, members = ["apply"], sluice.name = "k1"}
          : (!sluice.tensor<[j=3, i=5], f16>, !sluice.tensor<[j=3, i=5], f16>, !sluice.tensor<[j=3, i=5], f32>) -> !sluice.tensor<[j=3, i=5], f16> {
      ^bb0(%xa: !sluice.tensor<[j=3, i=5], f16>, %ma: !sluice.tensor<[j=3, i=5], f16>, %ca: !sluice.tensor<[j=3, i=5], f32>):
        %r = sluice.map (%xa, %ma, %ca) : (!sluice.tensor<[j=3, i=5], f16>, !sluice.tensor<[j=3, i=5], f16>, !sluice.tensor<[j=3, i=5], f32>) -> !sluice.tensor<[j=3, i=5], f16> {
        ^bb0(%u: f32, %v: f32, %w: f32):
          %p = arith.mulf %u, %v : f32
          %q = arith.mulf %p, %w : f32
          sluice.yield %q : f32
        }
        sluice.kernel_yield %r : !sluice.tensor<[j=3, i=5], f16>
      }
      sluice.return %y : !sluice.tensor<[j=3, i=5], f16>
    })mlir");
  ASSERT_TRUE(module);
  FailureOr<MemoryPlan> plan = planMemory(*module);
  ASSERT_TRUE(succeeded(plan));
  expectValid(*plan);
  const ArenaBuffer *mask = find(*plan, "k0#0"), *copy = find(*plan, "k0#1");
  ASSERT_TRUE(mask && copy);
  const uint64_t elements = 3 * 5;
  EXPECT_EQ(mask->bytes, (elements + 7) / 8);
  EXPECT_EQ(copy->bytes, elements * sizeof(float));
  EXPECT_EQ(mask->alignedBytes, plan->alignment);
  EXPECT_EQ(copy->alignedBytes, plan->alignment);
  EXPECT_EQ(plan->peakBytes, 2 * plan->alignment);
  EXPECT_NE(mask->offset, copy->offset);
}

// Sizes that overflow 64 bits are diagnosed at the op, never wrapped.
TEST_F(MemoryPlanTest, OverflowIsAnError) {
  OwningOpRef<ModuleOp> module = parse(R"mlir(
    sluice.graph @g(%x: !sluice.tensor<[a=1073741824, b=2147483648], f32> {sluice.name = "x"})
        -> (!sluice.tensor<[a=1073741824, b=2147483648], f32> {sluice.name = "y"}) {
      %p = sluice.relayout %x {sluice.name = "p"} : !sluice.tensor<[a=1073741824, b=2147483648], f32> -> !sluice.tensor<[a=1073741824, b=2147483648], f32>
      %q = sluice.relayout %x {sluice.name = "q"} : !sluice.tensor<[a=1073741824, b=2147483648], f32> -> !sluice.tensor<[a=1073741824, b=2147483648], f32>
      %y = sluice.residual_add %p, %q {sluice.name = "y"} : (!sluice.tensor<[a=1073741824, b=2147483648], f32>, !sluice.tensor<[a=1073741824, b=2147483648], f32>) -> !sluice.tensor<[a=1073741824, b=2147483648], f32>
      sluice.return %y : !sluice.tensor<[a=1073741824, b=2147483648], f32>
    }
    sluice.graph @h(%x: !sluice.tensor<[a=4294967296, b=4294967296], f32> {sluice.name = "x"})
        -> (!sluice.tensor<[a=4294967296, b=4294967296], f32> {sluice.name = "y"}) {
      %p = sluice.relayout %x {sluice.name = "p"} : !sluice.tensor<[a=4294967296, b=4294967296], f32> -> !sluice.tensor<[a=4294967296, b=4294967296], f32>
      %y = sluice.relayout %p {sluice.name = "y"} : !sluice.tensor<[a=4294967296, b=4294967296], f32> -> !sluice.tensor<[a=4294967296, b=4294967296], f32>
      sluice.return %y : !sluice.tensor<[a=4294967296, b=4294967296], f32>
    })mlir");
  ASSERT_TRUE(module);
  std::string messages;
  ScopedDiagnosticHandler handler(&context, [&](Diagnostic &diagnostic) {
    messages += diagnostic.str() + "\n";
    return success();
  });
  // @h's tensor alone needs 2^66 bytes: the op that makes it is named.
  EXPECT_TRUE(failed(planMemory(*module)));
  EXPECT_NE(messages.find("result #0"), std::string::npos) << messages;
  EXPECT_NE(messages.find("needs more than 2^64 bytes"), std::string::npos)
      << messages;
  // Without @h: p and q, 2^63 bytes each, are live together.
  (*std::next(module->getOps<GraphOp>().begin())).erase();
  messages.clear();
  EXPECT_TRUE(failed(planMemory(*module)));
  EXPECT_NE(messages.find("more than 2^64 bytes"), std::string::npos)
      << messages;
}

TEST_F(MemoryPlanTest, BertLargeTrainingFusedPlanIsValid) {
  checkBertLargeTraining(PipelineOptions(), /*expectPacked=*/std::nullopt);
}

TEST_F(MemoryPlanTest, BertLargeTrainingUnfusedPlanIsValid) {
  PipelineOptions options;
  options.fuse = false;
  checkBertLargeTraining(options, /*expectPacked=*/false);
}

TEST_F(MemoryPlanTest, BertLargeTrainingBitPackedMasksPlanIsValid) {
  PipelineOptions options;
  options.maskPolicy = MaskPolicy::Bitpack;
  checkBertLargeTraining(options, /*expectPacked=*/true);
}

/// The regions of `module` emitted for the CPU with `plan`: the bytes the
/// emitted create() allocates for each and the exec IR's view offsets (the
/// scratch region's sluice_exec.arena, the saved region's sluice_exec.saved).
struct EmittedArena {
  std::string source;
  std::set<uint64_t> scratchOffsets, savedOffsets;
  /// The size create() allocates for `field` (0 if it allocates none).
  uint64_t allocated(StringRef field) const {
    std::string prefix =
        "ctx->" + field.str() + " = (char *)aligned_alloc(256, ";
    size_t at = source.find(prefix);
    if (at == std::string::npos)
      return 0;
    return std::stoull(source.substr(at + prefix.size()));
  }
};
static std::optional<EmittedArena> emitArena(ModuleOp module,
                                             const MemoryPlan &plan) {
  FailureOr<EmittedModule> emitted =
      emitModule(module, EmitTarget::Cpu, "plan", &plan);
  FailureOr<OwningOpRef<ModuleOp>> exec =
      lowerToExec(module, EmitTarget::Cpu, "plan", &plan);
  if (failed(emitted) || failed(exec))
    return std::nullopt;
  EmittedArena arena;
  for (const EmittedFile &file : emitted->files)
    if (file.name == emitted->sourceFile)
      arena.source = file.contents;
  (*exec)->walk(
      [&](exec::ArenaOp op) { arena.scratchOffsets.insert(op.getOffset()); });
  (*exec)->walk(
      [&](exec::SavedOp op) { arena.savedOffsets.insert(op.getOffset()); });
  return arena;
}

/// The memory is planned once: the emitter reads the plan it is given (the
/// pipeline's, which the report shows) instead of planning again. With the
/// pipeline's plan, the emitted regions are the plan's; with every offset of
/// a copy moved by one alignment, the emitted views and sizes move with it,
/// which an emitter planning on its own would not do.
TEST_F(MemoryPlanTest, EmitterReadsThePipelinesPlan) {
  std::string spec = std::string(SLUICE_TEST_SOURCE_DIR) +
                     "/Driver/Inputs/memory-plan-training.json";
  FailureOr<Compilation> compilation =
      compile(context, spec, PipelineOptions());
  ASSERT_TRUE(succeeded(compilation));
  const MemoryPlan *plan = compilation->getMemoryPlan();
  ASSERT_TRUE(plan);
  ASSERT_GT(plan->savedBytes, 0u);
  ASSERT_GT(plan->scratchBytes, 0u);

  std::optional<EmittedArena> asPlanned =
      emitArena(*compilation->module, *plan);
  ASSERT_TRUE(asPlanned);
  std::set<uint64_t> planned[2];
  for (const ArenaBuffer &buffer : plan->buffers)
    planned[buffer.saved].insert(buffer.offset);
  EXPECT_EQ(asPlanned->allocated("saved"),
            llvm::alignTo(plan->savedBytes, 256));
  // The scratch region also holds the GEMM product nothing stores.
  uint64_t scratchRegion = asPlanned->allocated("arena");
  EXPECT_GE(scratchRegion, plan->scratchBytes);
  EXPECT_FALSE(asPlanned->scratchOffsets.empty());
  EXPECT_FALSE(asPlanned->savedOffsets.empty());
  for (uint64_t offset : asPlanned->scratchOffsets)
    EXPECT_TRUE(planned[0].count(offset)) << "scratch offset " << offset;
  for (uint64_t offset : asPlanned->savedOffsets)
    EXPECT_TRUE(planned[1].count(offset)) << "saved offset " << offset;

  MemoryPlan moved = *plan;
  for (ArenaBuffer &buffer : moved.buffers)
    buffer.offset += moved.alignment;
  moved.savedBytes += moved.alignment;
  moved.scratchBytes += moved.alignment;
  moved.peakBytes += 2 * moved.alignment;
  std::optional<EmittedArena> asMoved = emitArena(*compilation->module, moved);
  ASSERT_TRUE(asMoved);
  EXPECT_EQ(asMoved->allocated("saved"), llvm::alignTo(moved.savedBytes, 256));
  EXPECT_EQ(asMoved->allocated("arena"), scratchRegion + moved.alignment);
  std::set<uint64_t> shifted[2];
  for (uint64_t offset : asPlanned->scratchOffsets)
    shifted[0].insert(offset + moved.alignment);
  for (uint64_t offset : asPlanned->savedOffsets)
    shifted[1].insert(offset + moved.alignment);
  EXPECT_EQ(asMoved->scratchOffsets, shifted[0]);
  EXPECT_EQ(asMoved->savedOffsets, shifted[1]);
}

} // namespace
