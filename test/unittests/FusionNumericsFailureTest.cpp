//===- FusionNumericsFailureTest.cpp - the fusion checks can fail ---------===//
//
// FusionNumericsFailureTest's CatchesSwappedKernelResults and
// CatchesChangedMapConstant break a fused module on purpose and expect the
// comparison of FusionNumerics.h to report the difference;
// StructuralChecksCanFail feeds the structural checks a graph with composites
// at the top level and a kernel reducing over two different dimension sets.
//
//===----------------------------------------------------------------------===//

#include "FusionNumerics.h"

#include <gtest/gtest-spi.h>

using namespace mlir;
using namespace mlir::sluice;
using namespace mlir::sluice::fusion_numerics;

namespace {

/// A post-LN training layer with dropout and distinct dims, built unfused
/// and fused, with the unfused module's outputs on random inputs: the module
/// the failure checks below break, and what it must no longer match.
class FusionNumericsFailureTest : public FusionNumericsTest {
protected:
  void SetUp() override {
    LayerSpec spec;
    spec.name = "broken";
    spec.training = true;
    spec.dropout = {0.25, 0.2, 0.3};
    spec.dims = distinctDims();
    unfused = buildModule(spec, Build::Unfused);
    fused = buildModule(spec, Build::Fused);
    ASSERT_TRUE(unfused && fused);
    llvm::Expected<RunSignature> signature = getRunSignature(*unfused);
    ASSERT_TRUE(bool(signature)) << llvm::toString(signature.takeError());
    inputs = randomInputs(*signature);
    expected = run(*unfused, inputs, "unfused");
  }

  /// The worst difference of the (broken) fused module from the unfused one.
  double worstDifference(llvm::StringRef label) {
    return compareOutputs(run(*fused, inputs, label), expected).worst;
  }

  OwningOpRef<ModuleOp> unfused, fused;
  std::vector<NamedArray> inputs, expected;
};

/// The comparison catches a fused module whose kernel yields two results the
/// wrong way round.
TEST_F(FusionNumericsFailureTest, CatchesSwappedKernelResults) {
  EXPECT_LE(worstDifference("fused"), kTolerance);

  // The first kernel yielding two different values of one type.
  bool swapped = false;
  fused->walk([&](KernelOp kernel) {
    if (swapped)
      return;
    KernelYieldOp yield = kernel.getYield();
    for (unsigned i = 0; i < yield.getNumOperands() && !swapped; ++i)
      for (unsigned j = i + 1; j < yield.getNumOperands() && !swapped; ++j) {
        Value a = yield.getOperand(i), b = yield.getOperand(j);
        if (a == b || a.getType() != b.getType())
          continue;
        yield->setOperand(i, b);
        yield->setOperand(j, a);
        swapped = true;
      }
  });
  ASSERT_TRUE(swapped) << "no kernel yields two values of one type";
  EXPECT_GT(worstDifference("swapped"), kTolerance)
      << "swapping two kernel results went unnoticed";
}

/// The comparison catches a one-in-a-million change of one constant in one
/// map body of a fused kernel.
TEST_F(FusionNumericsFailureTest, CatchesChangedMapConstant) {
  // The first nonzero float constant of a map body in a fused kernel of the
  // backward graph (so that a gradient, not only y, must notice).
  arith::ConstantOp changed;
  for (GraphOp graph : fused->getOps<GraphOp>()) {
    if (graph.getPhase() != Phase::backward)
      continue;
    graph.walk([&](arith::ConstantOp constant) {
      auto value = llvm::dyn_cast<FloatAttr>(constant.getValue());
      if (changed || !value || value.getValueAsDouble() == 0 ||
          !constant->getParentOfType<MapOp>() ||
          constant->getParentOfType<KernelOp>().getKind() != KernelKind::fused)
        return;
      constant.setValueAttr(FloatAttr::get(
          value.getType(), value.getValueAsDouble() * (1 + 1e-6)));
      changed = constant;
    });
  }
  ASSERT_TRUE(changed) << "no float constant in a backward map body";
  EXPECT_GT(worstDifference("changed constant"), kTolerance)
      << "changing a map constant by 1e-6 went unnoticed";
}

/// The failures `check` reports, intercepted (they do not fail this test).
template <typename Check>
std::vector<std::string> interceptFailures(Check check) {
  testing::TestPartResultArray results;
  {
    testing::ScopedFakeTestPartResultReporter reporter(
        testing::ScopedFakeTestPartResultReporter::
            INTERCEPT_ONLY_CURRENT_THREAD,
        &results);
    check();
  }
  std::vector<std::string> messages;
  for (int i = 0; i < results.size(); ++i)
    messages.push_back(results.GetTestPartResult(i).message());
  return messages;
}

bool anyContains(const std::vector<std::string> &messages,
                 llvm::StringRef text) {
  return llvm::any_of(messages, [&](const std::string &message) {
    return llvm::StringRef(message).contains(text);
  });
}

TEST_F(FusionNumericsTest, StructuralChecksCanFail) {
  // The spec's graph before any pass: composites at the top level.
  LayerSpec spec;
  spec.name = "unfused";
  spec.dims = smallDims();
  OwningOpRef<ModuleOp> composites = buildModule(spec, Build::Reference);
  ASSERT_TRUE(composites);
  std::vector<std::string> messages =
      interceptFailures([&] { expectOnlyKernels(*composites, "no pass"); });
  EXPECT_TRUE(anyContains(messages, "'sluice.layernorm' at the top level"))
      << messages.size() << " failures";

  // A kernel (valid to the verifier) summing rows and columns: two
  // reductions over different dims whose results nothing reads per point,
  // so they are no row-and-column kernel (RowColumnReductions.h).
  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(R"mlir(
sluice.graph @g(%x: !sluice.tensor<[j=4, i=8], f32> {sluice.name = "x"})
    -> (!sluice.tensor<[j=4], f32> {sluice.name = "r"},
        !sluice.tensor<[i=8], f32> {sluice.name = "c"}) {
  %r, %c = sluice.kernel (%x) {kind = #sluice<kernel_kind fused>,
                               members = ["rows", "cols"], sluice.name = "k0"}
      : (!sluice.tensor<[j=4, i=8], f32>)
      -> (!sluice.tensor<[j=4], f32>, !sluice.tensor<[i=8], f32>) {
  ^bb0(%xa: !sluice.tensor<[j=4, i=8], f32>):
    %s = sluice.reduce sum %xa over ["i"]
        : !sluice.tensor<[j=4, i=8], f32> -> !sluice.tensor<[j=4], f32>
    %t = sluice.reduce sum %xa over ["j"]
        : !sluice.tensor<[j=4, i=8], f32> -> !sluice.tensor<[i=8], f32>
    sluice.kernel_yield %s, %t
        : !sluice.tensor<[j=4], f32>, !sluice.tensor<[i=8], f32>
  }
  sluice.return %r, %c : !sluice.tensor<[j=4], f32>, !sluice.tensor<[i=8], f32>
}
)mlir",
                                                             &context);
  ASSERT_TRUE(module);
  messages = interceptFailures([&] {
    module->walk([](KernelOp kernel) { expectLegalKernel(kernel); });
  });
  EXPECT_TRUE(anyContains(messages, "@g/k0: reductions over [j=4] and [i=8]"))
      << (messages.empty() ? std::string("no failure") : messages.front());
}

} // namespace
