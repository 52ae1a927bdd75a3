//===- DataMovementTest.cpp - the flop/byte accounting --------------------===//
//
// Checks the counting rules of docs/Accounting.md on graphs built here, and
// the whole-layer contraction flops on dimensions that are not in the
// repository, against closed-form formulas written independently of the
// analysis.
//
//===----------------------------------------------------------------------===//

#include "dialects/sluice/Analysis/DataMovement.h"
#include "SluiceTestFixture.h"
#include "sluice/Pipeline/Pipeline.h"
#include "sluice/Spec/EncoderBuilder.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"

#include <gtest/gtest.h>
#include <random>

using namespace mlir;
using namespace mlir::sluice;

namespace {

class DataMovementTest : public SluiceTest {
protected:

  /// The counts of the op named `name` in `counts`.
  static const OpCount *find(const ModuleCounts &counts, llvm::StringRef name) {
    for (const OpCount &count : counts.ops)
      if (count.name == name)
        return &count;
    return nullptr;
  }

  /// Builds `spec`'s layer, runs the training pipeline (autodiff) and counts
  /// both phases.
  FailureOr<ModuleCounts> countTrainingLayer(const LayerSpec &spec,
                                             bool streaming = true) {
    OwningOpRef<ModuleOp> module =
        buildEncoderGraph(context, spec, UnknownLoc::get(&context));
    if (!module)
      return failure();
    PassManager pm(&context);
    PipelineOptions options;
    options.training = true;
    options.streaming = streaming;
    buildSluicePipeline(pm, options);
    if (failed(pm.run(*module)))
      return failure();
    return countModule(*module);
  }
};

TEST_F(DataMovementTest, ContractionFlopIsTwiceTheProductOfDistinctDims) {
  OwningOpRef<ModuleOp> module = parse(R"mlir(
    sluice.graph @g(%q: !sluice.tensor<[b=3, j=5, h=2, p=7], f16> {sluice.name = "q"},
                    %k: !sluice.tensor<[b=3, k=11, h=2, p=7], f16> {sluice.name = "k"})
        -> (!sluice.tensor<[b=3, h=2, j=5, k=11], f16> {sluice.name = "s"}) {
      %s = sluice.contract %q, %k {scale = 0.5 : f64, sluice.name = "qk"}
          : (!sluice.tensor<[b=3, j=5, h=2, p=7], f16>, !sluice.tensor<[b=3, k=11, h=2, p=7], f16>)
          -> !sluice.tensor<[b=3, h=2, j=5, k=11], f16>
      sluice.return %s : !sluice.tensor<[b=3, h=2, j=5, k=11], f16>
    })mlir");
  ASSERT_TRUE(module);
  FailureOr<ModuleCounts> counts = countModule(*module);
  ASSERT_TRUE(succeeded(counts));
  const OpCount *qk = find(*counts, "qk");
  ASSERT_NE(qk, nullptr);
  EXPECT_EQ(qk->opClass, OpClass::Contraction);
  EXPECT_EQ(qk->cost.flop, 2u * 3 * 5 * 2 * 7 * 11);
  EXPECT_EQ(qk->cost.bytesRead, 2u * (3 * 5 * 2 * 7 + 3 * 11 * 2 * 7));
  EXPECT_EQ(qk->cost.bytesWritten, 2u * 3 * 2 * 5 * 11);
}

TEST_F(DataMovementTest, OperandUsedTwiceAndViewsAreReadOnce) {
  OwningOpRef<ModuleOp> module = parse(R"mlir(
    sluice.graph @g(%x: !sluice.tensor<[j=4, i=8], f32> {sluice.name = "x"})
        -> (!sluice.tensor<[j=4, i=8], f32> {sluice.name = "y"}) {
      %v = sluice.rename %x : !sluice.tensor<[j=4, i=8], f32> -> !sluice.tensor<[j=4, i=8], f32>
      %y = sluice.residual_add %x, %v {sluice.name = "add"}
          : (!sluice.tensor<[j=4, i=8], f32>, !sluice.tensor<[j=4, i=8], f32>) -> !sluice.tensor<[j=4, i=8], f32>
      sluice.return %y : !sluice.tensor<[j=4, i=8], f32>
    })mlir");
  ASSERT_TRUE(module);
  FailureOr<ModuleCounts> counts = countModule(*module);
  ASSERT_TRUE(succeeded(counts));
  ASSERT_EQ(counts->ops.size(), 1u) << "rename is a view, not counted";
  EXPECT_EQ(counts->ops[0].cost.bytesRead, 4u * 32);
  EXPECT_EQ(counts->ops[0].cost.bytesWritten, 4u * 32);
  EXPECT_EQ(counts->ops[0].cost.flop, 32u);
}

TEST_F(DataMovementTest, CompositeFlopFollowsTheDocumentedFormulas) {
  // N = 6*10 elements, R = 6 rows of 10.
  OwningOpRef<ModuleOp> module = parse(R"mlir(
    sluice.graph @g(%x: !sluice.tensor<[j=6, i=10], f32> {sluice.name = "x"},
                    %g: !sluice.tensor<[i=10], f32> {sluice.name = "g"},
                    %b: !sluice.tensor<[i=10], f32> {sluice.name = "b"})
        -> (!sluice.tensor<[j=6, i=10], f32> {sluice.name = "y"}) {
      %s = sluice.softmax %x over "i" {sluice.name = "softmax"} : !sluice.tensor<[j=6, i=10], f32>
      %l, %m, %r = sluice.layernorm %s, %g, %b over ["i"] {sluice.name = "ln"}
          : (!sluice.tensor<[j=6, i=10], f32>, !sluice.tensor<[i=10], f32>, !sluice.tensor<[i=10], f32>)
          -> (!sluice.tensor<[j=6, i=10], f32>, !sluice.tensor<[j=6], f32>, !sluice.tensor<[j=6], f32>)
      %a = sluice.gelu %l {sluice.name = "gelu"} : !sluice.tensor<[j=6, i=10], f32>
      %t = sluice.gelu_tanh %a {sluice.name = "gelu_tanh"} : !sluice.tensor<[j=6, i=10], f32>
      %d, %mask = sluice.dropout %t {probability = 0.25 : f64, stream = 0 : i64, sluice.name = "dropout"}
          : !sluice.tensor<[j=6, i=10], f32> -> !sluice.tensor<[j=6, i=10], f32>, !sluice.tensor<[j=6, i=10], f32>
      sluice.return %d : !sluice.tensor<[j=6, i=10], f32>
    })mlir");
  ASSERT_TRUE(module);
  FailureOr<ModuleCounts> counts = countModule(*module);
  ASSERT_TRUE(succeeded(counts));
  const uint64_t n = 60, r = 6;
  EXPECT_EQ(find(*counts, "softmax")->cost.flop, 5 * n - 2 * r);
  EXPECT_EQ(find(*counts, "softmax")->opClass, OpClass::Normalization);
  EXPECT_EQ(find(*counts, "ln")->cost.flop, 8 * n + 2 * r);
  // Reads x, scale, bias; writes y (f32) and mean, rstd (f32).
  EXPECT_EQ(find(*counts, "ln")->cost.bytesRead, 4 * (n + 10 + 10));
  EXPECT_EQ(find(*counts, "ln")->cost.bytesWritten, 4 * (n + r + r));
  EXPECT_EQ(find(*counts, "gelu")->cost.flop, 5 * n);
  EXPECT_EQ(find(*counts, "gelu_tanh")->cost.flop, 9 * n);
  EXPECT_EQ(find(*counts, "dropout")->cost.flop, 2 * n);
  EXPECT_EQ(find(*counts, "dropout")->cost.bytesWritten, 2 * 4 * n);
  EXPECT_EQ(find(*counts, "dropout")->opClass, OpClass::ElementWise);
}

TEST_F(DataMovementTest, OverflowIsAnErrorNotAWrap) {
  // 2 * (2^31)^2 overflows 64 bits; each tensor alone fits.
  OwningOpRef<ModuleOp> module = parse(R"mlir(
    sluice.graph @g(%a: !sluice.tensor<[m=2147483648, k=2], f16> {sluice.name = "a"},
                    %b: !sluice.tensor<[k=2, n=2147483648], f16> {sluice.name = "b"})
        -> (!sluice.tensor<[m=2147483648, n=2147483648], f16> {sluice.name = "c"}) {
      %c = sluice.contract %a, %b : (!sluice.tensor<[m=2147483648, k=2], f16>, !sluice.tensor<[k=2, n=2147483648], f16>)
          -> !sluice.tensor<[m=2147483648, n=2147483648], f16>
      sluice.return %c : !sluice.tensor<[m=2147483648, n=2147483648], f16>
    })mlir");
  ASSERT_TRUE(module);
  std::string message;
  ScopedDiagnosticHandler handler(&context, [&](Diagnostic &diag) {
    message = diag.str();
    return success();
  });
  EXPECT_TRUE(failed(countModule(*module)));
  EXPECT_NE(message.find("overflows 64 bits"), std::string::npos) << message;
}

/// Closed form of an encoder layer's forward contraction flops: the four
/// projections (2·b·s·e·e each), QKᵀ and attention×V (2·b·h·s·s·p each, with
/// h·p = e), and the two FFN contractions (2·b·s·e·f each).
static uint64_t encoderContractionFlop(const ::mlir::sluice::LayerDims &d) {
  uint64_t b = d.batch, s = d.seq, e = d.embed, f = d.ffn;
  return 4 * (2 * b * s * e * e) + 2 * (2 * b * s * s * e) +
         2 * (2 * b * s * e * f);
}

/// The flop of the contractions (of a kernel's contraction members, where
/// an epilogue shares the kernel).
static uint64_t contractionFlop(const ModuleCounts &counts, Phase phase) {
  uint64_t sum = 0;
  for (const OpCount &count : counts.ops) {
    if (count.phase != phase)
      continue;
    if (count.members.empty()) {
      if (count.opClass == OpClass::Contraction)
        sum += count.cost.flop;
      continue;
    }
    for (const MemberCount &member : count.members)
      if (member.opClass == OpClass::Contraction)
        sum += member.flop;
  }
  return sum;
}

static uint64_t forwardContractionFlop(const ModuleCounts &counts) {
  return contractionFlop(counts, Phase::forward);
}

TEST_F(DataMovementTest, BertLargeForwardContractionFlop) {
  ::mlir::sluice::LayerSpec spec;
  spec.name = "bert-large";
  spec.dims = {8, 512, 16, 64, 1024, 4096};
  spec.dtype = ::mlir::sluice::DType::F16;
  OwningOpRef<ModuleOp> module = ::mlir::sluice::buildEncoderGraph(
      context, spec, UnknownLoc::get(&context));
  ASSERT_TRUE(module);
  FailureOr<ModuleCounts> counts = countModule(*module);
  ASSERT_TRUE(succeeded(counts));
  EXPECT_EQ(forwardContractionFlop(*counts), 111669149696ull);
}

TEST_F(DataMovementTest, EncoderContractionFlopOnRandomDims) {
  std::mt19937 rng(20261130);
  std::uniform_int_distribution<int> small(1, 9);
  for (int trial = 0; trial < 20; ++trial) {
    ::mlir::sluice::LayerSpec spec;
    spec.name = "random";
    spec.dims.batch = small(rng);
    spec.dims.seq = small(rng) * 3;
    spec.dims.heads = small(rng);
    spec.dims.headDim = small(rng) * 2;
    spec.dims.embed = spec.dims.heads * spec.dims.headDim;
    spec.dims.ffn = small(rng) * 5;
    spec.norm = trial % 2 ? ::mlir::sluice::NormPlacement::Pre
                          : ::mlir::sluice::NormPlacement::Post;
    spec.causal = trial % 3 == 0;
    spec.training = trial % 4 == 0;
    OwningOpRef<ModuleOp> module = ::mlir::sluice::buildEncoderGraph(
        context, spec, UnknownLoc::get(&context));
    ASSERT_TRUE(module);
    FailureOr<ModuleCounts> counts = countModule(*module);
    ASSERT_TRUE(succeeded(counts));
    EXPECT_EQ(forwardContractionFlop(*counts),
              encoderContractionFlop(spec.dims))
        << "trial " << trial;
    unsigned contractions = 0;
    for (const OpCount &count : counts->ops)
      contractions += count.opClass == OpClass::Contraction &&
                      count.phase == Phase::forward;
    EXPECT_EQ(contractions, 8u);
  }
}

/// The flop of the scores contraction q.k (2 b h s s d = 2 b s s e), which
/// the streaming rule's backward recomputes.
static uint64_t scoresFlop(const ::mlir::sluice::LayerDims &d) {
  return 2 * uint64_t(d.batch) * d.seq * d.seq * d.embed;
}

/// Training graphs: reverse-mode autodiff gives every contraction two
/// backward contractions of the same size, so the backward contraction flop
/// is exactly twice the forward's, for any dims and variant; the streaming
/// rule (default) adds the recomputed scores.
TEST_F(DataMovementTest, TrainingBackwardContractionFlopIsTwiceForward) {
  std::mt19937 rng(7);
  std::uniform_int_distribution<int> small(1, 7);
  for (int trial = 0; trial < 6; ++trial) {
    ::mlir::sluice::LayerSpec spec;
    spec.name = "train";
    spec.training = true;
    spec.dims.batch = small(rng);
    spec.dims.seq = small(rng) + 1;
    spec.dims.heads = small(rng);
    spec.dims.headDim = small(rng);
    spec.dims.embed = spec.dims.heads * spec.dims.headDim;
    spec.dims.ffn = small(rng) * 3;
    spec.norm = trial % 2 ? ::mlir::sluice::NormPlacement::Pre
                          : ::mlir::sluice::NormPlacement::Post;
    spec.causal = trial % 3 == 1;
    spec.activation = static_cast<::mlir::sluice::Activation>(trial % 3);
    FailureOr<ModuleCounts> counts = countTrainingLayer(spec, false);
    ASSERT_TRUE(succeeded(counts)) << "trial " << trial;
    uint64_t forward = contractionFlop(*counts, Phase::forward);
    EXPECT_EQ(forward, encoderContractionFlop(spec.dims)) << "trial " << trial;
    EXPECT_EQ(contractionFlop(*counts, Phase::backward), 2 * forward)
        << "trial " << trial;
    FailureOr<ModuleCounts> streamed = countTrainingLayer(spec);
    ASSERT_TRUE(succeeded(streamed)) << "trial " << trial;
    EXPECT_EQ(contractionFlop(*streamed, Phase::forward), forward)
        << "trial " << trial;
    EXPECT_EQ(contractionFlop(*streamed, Phase::backward),
              2 * forward + scoresFlop(spec.dims))
        << "trial " << trial;
    // The contraction class also holds the epilogues folded into GEMMs.
    EXPECT_GE(
        counts->phaseClassTotal(Phase::backward, OpClass::Contraction).flop,
        2 * forward);
  }
}

TEST_F(DataMovementTest, BertLargeTrainingContractionFlop) {
  ::mlir::sluice::LayerSpec spec;
  spec.name = "bert-large";
  spec.training = true;
  spec.dims = {8, 512, 16, 64, 1024, 4096};
  spec.dtype = ::mlir::sluice::DType::F16;
  FailureOr<ModuleCounts> counts = countTrainingLayer(spec, false);
  ASSERT_TRUE(succeeded(counts));
  EXPECT_EQ(contractionFlop(*counts, Phase::forward), 111669149696ull);
  EXPECT_EQ(contractionFlop(*counts, Phase::backward), 223338299392ull);
  // With the streaming rule the backward recomputes q.k: 2 x 8 x 512 x 512
  // x 1024 more.
  FailureOr<ModuleCounts> streamed = countTrainingLayer(spec);
  ASSERT_TRUE(succeeded(streamed));
  EXPECT_EQ(contractionFlop(*streamed, Phase::forward), 111669149696ull);
  EXPECT_EQ(contractionFlop(*streamed, Phase::backward),
            223338299392ull + 2ull * 8 * 512 * 512 * 1024);
}

} // namespace
