//===- AutodiffTest.cpp - finite-difference checks of --sluice-autodiff ---===//
//
// For a small graph @G: y = f(inputs), the scalar L = sum(y * r) for a fixed
// random r. --sluice-autodiff (compute-type f64) builds @G_forward and
// @G_backward; the reference interpreter (f64) runs them, and every gradient
// element is compared with a central difference of L.
//
//===----------------------------------------------------------------------===//

#include "sluice/Interpreter/Interpreter.h"

#include "dialects/sluice/SluiceDialect.h"
#include "dialects/sluice/SluicePasses.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>

using namespace mlir;
using namespace mlir::sluice;

namespace {

constexpr double kStep = 1e-6;
constexpr double kTolerance = 1e-6;

class AutodiffTest : public ::testing::Test {
protected:
  AutodiffTest() {
    context
        .loadDialect<SluiceDialect, arith::ArithDialect, math::MathDialect>();
    options.precision = Precision::F64;
    options.seed = 1234;
  }

  /// Runs `graph` and returns its results; fails the test on an error.
  std::vector<Buffer> run(GraphOp graph, ArrayRef<Buffer> inputs) {
    llvm::Expected<std::vector<Buffer>> results =
        ::mlir::sluice::interpret(graph, inputs, options);
    if (!results) {
      ADD_FAILURE() << "interpreting @" << graph.getSymName().str() << ": "
                    << llvm::toString(results.takeError());
      return {};
    }
    return std::move(*results);
  }

  /// L = sum over the first `count` results of y * r.
  static double objective(ArrayRef<Buffer> results,
                          ArrayRef<Buffer> cotangents) {
    double sum = 0;
    for (auto [y, r] : llvm::zip(results, cotangents))
      for (auto [yv, rv] : llvm::zip(y.data, r.data))
        if (rv != 0)
          sum += yv * rv;
    return sum;
  }

  /// The finite-difference check of the graph @G in `source`.
  void checkGradients(StringRef source) {
    OwningOpRef<ModuleOp> module =
        parseSourceString<ModuleOp>(source, &context);
    ASSERT_TRUE(module) << "cannot parse the test graph";
    auto original = module->lookupSymbol<GraphOp>("G");
    ASSERT_TRUE(original);

    std::mt19937_64 random(42);
    std::uniform_real_distribution<double> uniform(-1.0, 1.0);
    auto randomBuffer = [&](Type type) {
      Buffer buffer{llvm::cast<NamedTensorType>(type), {}};
      buffer.data.resize(*buffer.type.getNumElements());
      for (double &v : buffer.data)
        v = uniform(random);
      return buffer;
    };
    std::vector<Buffer> inputs;
    for (Type type : original.getArgumentTypes())
      inputs.push_back(randomBuffer(type));
    std::vector<Buffer> expected = run(original, inputs);
    ASSERT_EQ(expected.size(), original.getNumResults());
    unsigned numResults = original.getNumResults();

    PassManager pm(&context);
    pm.addPass(createSluiceAutodiff(SluiceAutodiffOptions{ComputeType::f64}));
    ASSERT_TRUE(succeeded(pm.run(*module))) << "--sluice-autodiff failed";
    auto forward = module->lookupSymbol<GraphOp>("G_forward");
    auto backward = module->lookupSymbol<GraphOp>("G_backward");
    ASSERT_TRUE(forward && backward);
    EXPECT_EQ(backward.getPhase(), Phase::backward);

    // The forward graph still computes the original results.
    std::vector<Buffer> forwardResults = run(forward, inputs);
    ASSERT_EQ(forwardResults.size(), forward.getNumResults());
    for (unsigned i = 0; i < numResults; ++i)
      for (auto [got, want] :
           llvm::zip(forwardResults[i].data, expected[i].data))
        if (std::isfinite(want))
          EXPECT_NEAR(got, want, 1e-12 * std::max(1.0, std::abs(want)));

    // Cotangents r, zero where y is not finite (causal -inf).
    std::vector<Buffer> cotangents;
    for (unsigned i = 0; i < numResults; ++i) {
      Buffer r = randomBuffer(forward.getResultTypes()[i]);
      for (auto [rv, yv] : llvm::zip(r.data, expected[i].data))
        if (!std::isfinite(yv))
          rv = 0;
      cotangents.push_back(std::move(r));
    }
    std::vector<Buffer> backwardInputs(forwardResults.begin() + numResults,
                                       forwardResults.end());
    backwardInputs.insert(backwardInputs.end(), cotangents.begin(),
                          cotangents.end());
    std::vector<Buffer> gradients = run(backward, backwardInputs);
    ASSERT_EQ(gradients.size(), inputs.size());

    for (unsigned a = 0; a < inputs.size(); ++a) {
      EXPECT_EQ(gradients[a].type, inputs[a].type);
      EXPECT_EQ(backward.getResultName(a),
                ("d_" + original.getArgName(a)).str());
      for (size_t e = 0; e < inputs[a].data.size(); ++e) {
        std::vector<Buffer> shifted = inputs;
        shifted[a].data[e] += kStep;
        double plus = objective(run(original, shifted), cotangents);
        shifted[a].data[e] -= 2 * kStep;
        double minus = objective(run(original, shifted), cotangents);
        double numeric = (plus - minus) / (2 * kStep);
        double analytic = gradients[a].data[e];
        EXPECT_NEAR(analytic, numeric,
                    kTolerance * std::max({1.0, std::abs(numeric)}))
            << "d_" << original.getArgName(a).str() << "[" << e << "]";
      }
    }
  }

  MLIRContext context;
  InterpreterOptions options;
};

//===----------------------------------------------------------------------===//
// Primitives
//===----------------------------------------------------------------------===//

TEST_F(AutodiffTest, Contract) {
  checkGradients(R"mlir(
sluice.graph @G(%x: !sluice.tensor<[b=2, j=3, i=4], f32> {sluice.name = "x"},
                %w: !sluice.tensor<[u=5, i=4], f32> {sluice.name = "w"})
    -> (!sluice.tensor<[b=2, j=3, u=5], f32> {sluice.name = "y"}) {
  %y = sluice.contract %x, %w {scale = 0.5 : f64}
      : (!sluice.tensor<[b=2, j=3, i=4], f32>, !sluice.tensor<[u=5, i=4], f32>)
      -> !sluice.tensor<[b=2, j=3, u=5], f32>
  sluice.return %y : !sluice.tensor<[b=2, j=3, u=5], f32>
}
)mlir");
}

TEST_F(AutodiffTest, BatchedContractAndReuse) {
  // q and k share batch dims b, h; x is used twice (as q and, renamed, k).
  checkGradients(R"mlir(
sluice.graph @G(%x: !sluice.tensor<[b=2, j=3, h=2, p=4], f32> {sluice.name = "x"})
    -> (!sluice.tensor<[b=2, h=2, j=3, k=3], f32> {sluice.name = "s"}) {
  %k = sluice.rename %x : !sluice.tensor<[b=2, j=3, h=2, p=4], f32>
      -> !sluice.tensor<[b=2, k=3, h=2, p=4], f32>
  %s = sluice.contract %x, %k {scale = 0.25 : f64}
      : (!sluice.tensor<[b=2, j=3, h=2, p=4], f32>, !sluice.tensor<[b=2, k=3, h=2, p=4], f32>)
      -> !sluice.tensor<[b=2, h=2, j=3, k=3], f32>
  sluice.return %s : !sluice.tensor<[b=2, h=2, j=3, k=3], f32>
}
)mlir");
}

TEST_F(AutodiffTest, MapWithBroadcastAndManyOps) {
  checkGradients(R"mlir(
sluice.graph @G(%x: !sluice.tensor<[j=3, i=4], f32> {sluice.name = "x"},
                %c: !sluice.tensor<[i=4], f32> {sluice.name = "c"})
    -> (!sluice.tensor<[i=4, j=3], f32> {sluice.name = "y"}) {
  %y = sluice.map (%x, %c) : (!sluice.tensor<[j=3, i=4], f32>, !sluice.tensor<[i=4], f32>)
      -> !sluice.tensor<[i=4, j=3], f32> {
  ^bb0(%a: f64, %b: f64):
    %one = arith.constant 1.0 : f64
    %half = arith.constant 0.5 : f64
    %three = arith.constant 3.0 : f64
    %ab = arith.mulf %a, %b : f64
    %aa = arith.mulf %a, %a : f64
    %pos = arith.addf %aa, %one : f64
    %q = arith.divf %ab, %pos : f64
    %n = arith.negf %q : f64
    %e = math.exp %n : f64
    %l = math.log %pos : f64
    %er = math.erf %b : f64
    %t = math.tanh %ab : f64
    %s = math.sqrt %pos : f64
    %r = math.rsqrt %pos : f64
    %p = math.powf %pos, %three : f64
    %mx = arith.maximumf %a, %b : f64
    %mn = arith.minimumf %a, %half : f64
    %gt = arith.cmpf ogt, %a, %b : f64
    %sel = arith.select %gt, %t, %er : f64
    %s1 = arith.addf %e, %l : f64
    %s2 = arith.subf %s1, %s : f64
    %s3 = arith.addf %s2, %r : f64
    %s4 = arith.addf %s3, %p : f64
    %s5 = arith.addf %s4, %mx : f64
    %s6 = arith.subf %s5, %mn : f64
    %s7 = arith.addf %s6, %sel : f64
    sluice.yield %s7 : f64
  }
  sluice.return %y : !sluice.tensor<[i=4, j=3], f32>
}
)mlir");
}

TEST_F(AutodiffTest, ReduceSumMaxRelayoutAndUnusedArgument) {
  checkGradients(R"mlir(
sluice.graph @G(%x: !sluice.tensor<[j=3, i=5], f32> {sluice.name = "x"},
                %unused: !sluice.tensor<[i=5], f32> {sluice.name = "unused"})
    -> (!sluice.tensor<[j=3], f32> {sluice.name = "s"},
        !sluice.tensor<[i=5], f32> {sluice.name = "m"}) {
  %t = sluice.relayout %x : !sluice.tensor<[j=3, i=5], f32> -> !sluice.tensor<[i=5, j=3], f32>
  %s = sluice.reduce sum %t over ["i"] : !sluice.tensor<[i=5, j=3], f32> -> !sluice.tensor<[j=3], f32>
  %m = sluice.reduce max %x over ["j"] : !sluice.tensor<[j=3, i=5], f32> -> !sluice.tensor<[i=5], f32>
  sluice.return %s, %m : !sluice.tensor<[j=3], f32>, !sluice.tensor<[i=5], f32>
}
)mlir");
}

//===----------------------------------------------------------------------===//
// Composites
//===----------------------------------------------------------------------===//

TEST_F(AutodiffTest, BiasAddResidualAddRelu) {
  checkGradients(R"mlir(
sluice.graph @G(%x: !sluice.tensor<[j=3, i=4], f32> {sluice.name = "x"},
                %b: !sluice.tensor<[i=4], f32> {sluice.name = "b"},
                %r: !sluice.tensor<[i=4, j=3], f32> {sluice.name = "r"})
    -> (!sluice.tensor<[j=3, i=4], f32> {sluice.name = "y"}) {
  %h = sluice.bias_add %x, %b : (!sluice.tensor<[j=3, i=4], f32>, !sluice.tensor<[i=4], f32>)
      -> !sluice.tensor<[j=3, i=4], f32>
  %a = sluice.relu %h : !sluice.tensor<[j=3, i=4], f32>
  %y = sluice.residual_add %a, %r : (!sluice.tensor<[j=3, i=4], f32>, !sluice.tensor<[i=4, j=3], f32>)
      -> !sluice.tensor<[j=3, i=4], f32>
  sluice.return %y : !sluice.tensor<[j=3, i=4], f32>
}
)mlir");
}

TEST_F(AutodiffTest, Softmax) {
  checkGradients(R"mlir(
sluice.graph @G(%x: !sluice.tensor<[j=3, k=5], f32> {sluice.name = "x"})
    -> (!sluice.tensor<[j=3, k=5], f32> {sluice.name = "y"}) {
  %y = sluice.softmax %x over "k" : !sluice.tensor<[j=3, k=5], f32>
  sluice.return %y : !sluice.tensor<[j=3, k=5], f32>
}
)mlir");
}

TEST_F(AutodiffTest, LayerNormWithStatistics) {
  checkGradients(R"mlir(
sluice.graph @G(%x: !sluice.tensor<[j=3, i=6], f32> {sluice.name = "x"},
                %g: !sluice.tensor<[i=6], f32> {sluice.name = "g"},
                %b: !sluice.tensor<[i=6], f32> {sluice.name = "b"})
    -> (!sluice.tensor<[j=3, i=6], f32> {sluice.name = "y"},
        !sluice.tensor<[j=3], f32> {sluice.name = "mean"},
        !sluice.tensor<[j=3], f32> {sluice.name = "rstd"}) {
  %y, %m, %r = sluice.layernorm %x, %g, %b over ["i"] {eps = 1.0e-3 : f64}
      : (!sluice.tensor<[j=3, i=6], f32>, !sluice.tensor<[i=6], f32>, !sluice.tensor<[i=6], f32>)
      -> (!sluice.tensor<[j=3, i=6], f32>, !sluice.tensor<[j=3], f32>, !sluice.tensor<[j=3], f32>)
  sluice.return %y, %m, %r : !sluice.tensor<[j=3, i=6], f32>, !sluice.tensor<[j=3], f32>, !sluice.tensor<[j=3], f32>
}
)mlir");
}

TEST_F(AutodiffTest, Gelu) {
  checkGradients(R"mlir(
sluice.graph @G(%x: !sluice.tensor<[j=3, i=4], f32> {sluice.name = "x"})
    -> (!sluice.tensor<[j=3, i=4], f32> {sluice.name = "y"}) {
  %y = sluice.gelu %x : !sluice.tensor<[j=3, i=4], f32>
  sluice.return %y : !sluice.tensor<[j=3, i=4], f32>
}
)mlir");
}

TEST_F(AutodiffTest, GeluTanh) {
  checkGradients(R"mlir(
sluice.graph @G(%x: !sluice.tensor<[j=3, i=4], f32> {sluice.name = "x"})
    -> (!sluice.tensor<[j=3, i=4], f32> {sluice.name = "y"}) {
  %y = sluice.gelu_tanh %x : !sluice.tensor<[j=3, i=4], f32>
  sluice.return %y : !sluice.tensor<[j=3, i=4], f32>
}
)mlir");
}

TEST_F(AutodiffTest, RMSNormWithStatistic) {
  checkGradients(R"mlir(
sluice.graph @G(%x: !sluice.tensor<[j=3, i=6], f32> {sluice.name = "x"},
                %g: !sluice.tensor<[i=6], f32> {sluice.name = "g"})
    -> (!sluice.tensor<[j=3, i=6], f32> {sluice.name = "y"},
        !sluice.tensor<[j=3], f32> {sluice.name = "rstd"}) {
  %y, %r = sluice.rmsnorm %x, %g over ["i"] {eps = 1.0e-3 : f64}
      : (!sluice.tensor<[j=3, i=6], f32>, !sluice.tensor<[i=6], f32>)
      -> (!sluice.tensor<[j=3, i=6], f32>, !sluice.tensor<[j=3], f32>)
  sluice.return %y, %r : !sluice.tensor<[j=3, i=6], f32>, !sluice.tensor<[j=3], f32>
}
)mlir");
}

TEST_F(AutodiffTest, SiluAndSwiGLU) {
  checkGradients(R"mlir(
sluice.graph @G(%a: !sluice.tensor<[j=3, u=4], f32> {sluice.name = "a"},
                %b: !sluice.tensor<[j=3, u=4], f32> {sluice.name = "b"})
    -> (!sluice.tensor<[j=3, u=4], f32> {sluice.name = "y"}) {
  %s = sluice.silu %a : !sluice.tensor<[j=3, u=4], f32>
  %y = sluice.swiglu %s, %b : !sluice.tensor<[j=3, u=4], f32>
  sluice.return %y : !sluice.tensor<[j=3, u=4], f32>
}
)mlir");
}

TEST_F(AutodiffTest, RopeIntoGroupedQueryScores) {
  // Two query heads (e) per key/value head (g): the keys are read by name
  // along g, never copied per query head.
  checkGradients(R"mlir(
sluice.graph @G(%q: !sluice.tensor<[j=3, g=2, e=2, r=2, f=2], f32> {sluice.name = "q"},
                %k: !sluice.tensor<[k=3, g=2, r=2, f=2], f32> {sluice.name = "k"})
    -> (!sluice.tensor<[g=2, e=2, j=3, k=3], f32> {sluice.name = "s"}) {
  %qr = sluice.rope %q pair "r" freq "f" position "j" {theta = 100.0 : f64}
      : !sluice.tensor<[j=3, g=2, e=2, r=2, f=2], f32>
  %kr = sluice.rope %k pair "r" freq "f" position "k" {theta = 100.0 : f64}
      : !sluice.tensor<[k=3, g=2, r=2, f=2], f32>
  %s = sluice.contract %qr, %kr {scale = 0.5 : f64}
      : (!sluice.tensor<[j=3, g=2, e=2, r=2, f=2], f32>, !sluice.tensor<[k=3, g=2, r=2, f=2], f32>)
      -> !sluice.tensor<[g=2, e=2, j=3, k=3], f32>
  sluice.return %s : !sluice.tensor<[g=2, e=2, j=3, k=3], f32>
}
)mlir");
}

TEST_F(AutodiffTest, DropoutRecomputesTheSameMask) {
  checkGradients(R"mlir(
sluice.graph @G(%x: !sluice.tensor<[j=4, i=8], f32> {sluice.name = "x"})
    -> (!sluice.tensor<[j=4, i=8], f32> {sluice.name = "y"}) {
  %y, %m = sluice.dropout %x {probability = 0.3 : f64, stream = 5 : i64}
      : !sluice.tensor<[j=4, i=8], f32> -> !sluice.tensor<[j=4, i=8], f32>, !sluice.tensor<[j=4, i=8], f32>
  sluice.return %y : !sluice.tensor<[j=4, i=8], f32>
}
)mlir");
}

TEST_F(AutodiffTest, CausalMask) {
  // The -inf entries get a zero cotangent; their gradient must be zero.
  checkGradients(R"mlir(
sluice.graph @G(%x: !sluice.tensor<[j=4, k=4], f32> {sluice.name = "x"})
    -> (!sluice.tensor<[j=4, k=4], f32> {sluice.name = "y"}) {
  %y = sluice.causal_mask %x query "j" key "k" : !sluice.tensor<[j=4, k=4], f32>
  sluice.return %y : !sluice.tensor<[j=4, k=4], f32>
}
)mlir");
}

TEST_F(AutodiffTest, CausalMaskThenSoftmax) {
  checkGradients(R"mlir(
sluice.graph @G(%x: !sluice.tensor<[j=4, k=4], f32> {sluice.name = "x"})
    -> (!sluice.tensor<[j=4, k=4], f32> {sluice.name = "y"}) {
  %m = sluice.causal_mask %x query "j" key "k" : !sluice.tensor<[j=4, k=4], f32>
  %y = sluice.softmax %m over "k" : !sluice.tensor<[j=4, k=4], f32>
  sluice.return %y : !sluice.tensor<[j=4, k=4], f32>
}
)mlir");
}

//===----------------------------------------------------------------------===//
// A whole layer
//===----------------------------------------------------------------------===//

TEST_F(AutodiffTest, PreNormCausalEncoderLayerWithDropout) {
  // `sluicec --emit=input-ir` of a tiny GPT-style spec (pre-LN, causal,
  // gelu_tanh, dropout 0.2 at every site, training), the graph renamed @G.
  checkGradients(R"mlir(
module attributes {sluice.dtype = "f32", sluice.spec = "gpt_tiny", sluice.target = "sm_80", sluice.training = true} {
  sluice.graph @G(%x: !sluice.tensor<[b=1, j=3, i=4], f32> {sluice.name = "x", sluice.shape = array<i64: 1, 3, 4>}, %wq: !sluice.tensor<[h=2, p=2, i=4], f32> {sluice.name = "wq", sluice.shape = array<i64: 4, 4>}, %bq: !sluice.tensor<[h=2, p=2], f32> {sluice.name = "bq", sluice.shape = array<i64: 4>}, %wk: !sluice.tensor<[h=2, p=2, i=4], f32> {sluice.name = "wk", sluice.shape = array<i64: 4, 4>}, %bk: !sluice.tensor<[h=2, p=2], f32> {sluice.name = "bk", sluice.shape = array<i64: 4>}, %wv: !sluice.tensor<[h=2, p=2, i=4], f32> {sluice.name = "wv", sluice.shape = array<i64: 4, 4>}, %bv: !sluice.tensor<[h=2, p=2], f32> {sluice.name = "bv", sluice.shape = array<i64: 4>}, %wo: !sluice.tensor<[i=4, h=2, p=2], f32> {sluice.name = "wo", sluice.shape = array<i64: 4, 4>}, %bo: !sluice.tensor<[i=4], f32> {sluice.name = "bo", sluice.shape = array<i64: 4>}, %ln1_scale: !sluice.tensor<[i=4], f32> {sluice.name = "ln1_scale", sluice.shape = array<i64: 4>}, %ln1_bias: !sluice.tensor<[i=4], f32> {sluice.name = "ln1_bias", sluice.shape = array<i64: 4>}, %w1: !sluice.tensor<[u=6, i=4], f32> {sluice.name = "w1", sluice.shape = array<i64: 6, 4>}, %b1: !sluice.tensor<[u=6], f32> {sluice.name = "b1", sluice.shape = array<i64: 6>}, %w2: !sluice.tensor<[i=4, u=6], f32> {sluice.name = "w2", sluice.shape = array<i64: 4, 6>}, %b2: !sluice.tensor<[i=4], f32> {sluice.name = "b2", sluice.shape = array<i64: 4>}, %ln2_scale: !sluice.tensor<[i=4], f32> {sluice.name = "ln2_scale", sluice.shape = array<i64: 4>}, %ln2_bias: !sluice.tensor<[i=4], f32> {sluice.name = "ln2_bias", sluice.shape = array<i64: 4>}) -> (!sluice.tensor<[b=1, j=3, i=4], f32> {sluice.name = "y", sluice.shape = array<i64: 1, 3, 4>}) {
    %result, %mean, %rstd = layernorm %x, %ln1_scale, %ln1_bias over ["i"] {sluice.name = "ln1"} : (!sluice.tensor<[b=1, j=3, i=4], f32>, !sluice.tensor<[i=4], f32>, !sluice.tensor<[i=4], f32>) -> (!sluice.tensor<[b=1, j=3, i=4], f32>, !sluice.tensor<[b=1, j=3], f32>, !sluice.tensor<[b=1, j=3], f32>)
    %0 = contract %result, %wq {sluice.name = "q_proj"} : (!sluice.tensor<[b=1, j=3, i=4], f32>, !sluice.tensor<[h=2, p=2, i=4], f32>) -> !sluice.tensor<[b=1, j=3, h=2, p=2], f32>
    %1 = bias_add %0, %bq {sluice.name = "q_bias"} : (!sluice.tensor<[b=1, j=3, h=2, p=2], f32>, !sluice.tensor<[h=2, p=2], f32>) -> !sluice.tensor<[b=1, j=3, h=2, p=2], f32>
    %2 = rename %result {sluice.name = "x_keys"} : !sluice.tensor<[b=1, j=3, i=4], f32> -> !sluice.tensor<[b=1, k=3, i=4], f32>
    %3 = contract %2, %wk {sluice.name = "k_proj"} : (!sluice.tensor<[b=1, k=3, i=4], f32>, !sluice.tensor<[h=2, p=2, i=4], f32>) -> !sluice.tensor<[b=1, k=3, h=2, p=2], f32>
    %4 = bias_add %3, %bk {sluice.name = "k_bias"} : (!sluice.tensor<[b=1, k=3, h=2, p=2], f32>, !sluice.tensor<[h=2, p=2], f32>) -> !sluice.tensor<[b=1, k=3, h=2, p=2], f32>
    %5 = contract %2, %wv {sluice.name = "v_proj"} : (!sluice.tensor<[b=1, k=3, i=4], f32>, !sluice.tensor<[h=2, p=2, i=4], f32>) -> !sluice.tensor<[b=1, k=3, h=2, p=2], f32>
    %6 = bias_add %5, %bv {sluice.name = "v_bias"} : (!sluice.tensor<[b=1, k=3, h=2, p=2], f32>, !sluice.tensor<[h=2, p=2], f32>) -> !sluice.tensor<[b=1, k=3, h=2, p=2], f32>
    %7 = contract %1, %4 {scale = 0.70710678118654746 : f64, sluice.name = "qk"} : (!sluice.tensor<[b=1, j=3, h=2, p=2], f32>, !sluice.tensor<[b=1, k=3, h=2, p=2], f32>) -> !sluice.tensor<[b=1, h=2, j=3, k=3], f32>
    %8 = causal_mask %7 query "j" key "k" {sluice.name = "causal_mask"} : !sluice.tensor<[b=1, h=2, j=3, k=3], f32>
    %9 = softmax %8 over "k" {sluice.name = "softmax"} : !sluice.tensor<[b=1, h=2, j=3, k=3], f32>
    %result_0, %mask = dropout %9 {probability = 2.000000e-01 : f64, sluice.name = "attn_dropout", stream = 0 : i64} : !sluice.tensor<[b=1, h=2, j=3, k=3], f32> -> !sluice.tensor<[b=1, h=2, j=3, k=3], f32>, !sluice.tensor<[b=1, h=2, j=3, k=3], f32>
    %10 = contract %result_0, %6 {sluice.name = "av"} : (!sluice.tensor<[b=1, h=2, j=3, k=3], f32>, !sluice.tensor<[b=1, k=3, h=2, p=2], f32>) -> !sluice.tensor<[b=1, j=3, h=2, p=2], f32>
    %11 = contract %10, %wo {sluice.name = "out_proj"} : (!sluice.tensor<[b=1, j=3, h=2, p=2], f32>, !sluice.tensor<[i=4, h=2, p=2], f32>) -> !sluice.tensor<[b=1, j=3, i=4], f32>
    %12 = bias_add %11, %bo {sluice.name = "out_bias"} : (!sluice.tensor<[b=1, j=3, i=4], f32>, !sluice.tensor<[i=4], f32>) -> !sluice.tensor<[b=1, j=3, i=4], f32>
    %result_1, %mask_2 = dropout %12 {probability = 2.000000e-01 : f64, sluice.name = "out_dropout", stream = 1 : i64} : !sluice.tensor<[b=1, j=3, i=4], f32> -> !sluice.tensor<[b=1, j=3, i=4], f32>, !sluice.tensor<[b=1, j=3, i=4], f32>
    %13 = residual_add %x, %result_1 {sluice.name = "residual1"} : (!sluice.tensor<[b=1, j=3, i=4], f32>, !sluice.tensor<[b=1, j=3, i=4], f32>) -> !sluice.tensor<[b=1, j=3, i=4], f32>
    %result_3, %mean_4, %rstd_5 = layernorm %13, %ln2_scale, %ln2_bias over ["i"] {sluice.name = "ln2"} : (!sluice.tensor<[b=1, j=3, i=4], f32>, !sluice.tensor<[i=4], f32>, !sluice.tensor<[i=4], f32>) -> (!sluice.tensor<[b=1, j=3, i=4], f32>, !sluice.tensor<[b=1, j=3], f32>, !sluice.tensor<[b=1, j=3], f32>)
    %14 = contract %result_3, %w1 {sluice.name = "ffn1"} : (!sluice.tensor<[b=1, j=3, i=4], f32>, !sluice.tensor<[u=6, i=4], f32>) -> !sluice.tensor<[b=1, j=3, u=6], f32>
    %15 = bias_add %14, %b1 {sluice.name = "ffn1_bias"} : (!sluice.tensor<[b=1, j=3, u=6], f32>, !sluice.tensor<[u=6], f32>) -> !sluice.tensor<[b=1, j=3, u=6], f32>
    %16 = gelu_tanh %15 {sluice.name = "activation"} : !sluice.tensor<[b=1, j=3, u=6], f32>
    %result_6, %mask_7 = dropout %16 {probability = 2.000000e-01 : f64, sluice.name = "act_dropout", stream = 2 : i64} : !sluice.tensor<[b=1, j=3, u=6], f32> -> !sluice.tensor<[b=1, j=3, u=6], f32>, !sluice.tensor<[b=1, j=3, u=6], f32>
    %17 = contract %result_6, %w2 {sluice.name = "ffn2"} : (!sluice.tensor<[b=1, j=3, u=6], f32>, !sluice.tensor<[i=4, u=6], f32>) -> !sluice.tensor<[b=1, j=3, i=4], f32>
    %18 = bias_add %17, %b2 {sluice.name = "ffn2_bias"} : (!sluice.tensor<[b=1, j=3, i=4], f32>, !sluice.tensor<[i=4], f32>) -> !sluice.tensor<[b=1, j=3, i=4], f32>
    %result_8, %mask_9 = dropout %18 {probability = 2.000000e-01 : f64, sluice.name = "ffn_dropout", stream = 3 : i64} : !sluice.tensor<[b=1, j=3, i=4], f32> -> !sluice.tensor<[b=1, j=3, i=4], f32>, !sluice.tensor<[b=1, j=3, i=4], f32>
    %19 = residual_add %13, %result_8 {sluice.name = "residual2"} : (!sluice.tensor<[b=1, j=3, i=4], f32>, !sluice.tensor<[b=1, j=3, i=4], f32>) -> !sluice.tensor<[b=1, j=3, i=4], f32>
    return %19 : !sluice.tensor<[b=1, j=3, i=4], f32>
  }
}
)mlir");
}

} // namespace
