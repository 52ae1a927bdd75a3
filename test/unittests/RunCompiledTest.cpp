//===- RunCompiledTest.cpp - runCompiledModule on a hand-written module ---===//
//
// The cpu backend of `sluicec run` without the emitter: a hand-written
// module (test/Compile/Inputs/handwritten_cpu.cpp) stands for a compiled
// layer whose graphs give the names and shapes. Checks the dtype round
// trips, the forward output feeding the backward, the output order and the
// errors.
//
//===----------------------------------------------------------------------===//

#include "sluice/Driver/RunCompiled.h"
#include "sluice/Codegen/LoadedModule.h"
#include "sluice/Codegen/Toolchain.h"
#include "sluice/Pipeline/Pipeline.h"

#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

#include <gtest/gtest.h>

using namespace mlir;
using namespace mlir::sluice;

namespace {

/// The layer the hand-written module implements: y = x * w + seed % 7;
/// the backward returns its inputs as d_x and d_w, which is enough for the
/// signature (the bodies are never interpreted here).
const char *kTrainingGraphs = R"mlir(
sluice.graph @hw_forward(%x: !sluice.tensor<[r=2, c=3], f32> {sluice.name = "x"},
                         %w: !sluice.tensor<[c=3], f16> {sluice.name = "w"})
    -> (!sluice.tensor<[r=2, c=3], f32> {sluice.name = "y"},
        !sluice.tensor<[c=3], f16> {sluice.name = "saved.w", sluice.saved = "w"}) {
  sluice.return %x, %w : !sluice.tensor<[r=2, c=3], f32>, !sluice.tensor<[c=3], f16>
}
sluice.graph @hw_backward(%sw: !sluice.tensor<[c=3], f16> {sluice.name = "saved.w", sluice.saved = "w"},
                          %dy: !sluice.tensor<[r=2, c=3], f32> {sluice.name = "dy"})
    -> (!sluice.tensor<[r=2, c=3], f32> {sluice.name = "d_x"},
        !sluice.tensor<[c=3], f16> {sluice.name = "d_w"})
    attributes {phase = #sluice<phase backward>} {
  sluice.return %dy, %sw : !sluice.tensor<[r=2, c=3], f32>, !sluice.tensor<[c=3], f16>
}
)mlir";

const char *kInferenceGraph = R"mlir(
sluice.graph @hw(%x: !sluice.tensor<[r=2, c=3], f32> {sluice.name = "x"},
                 %w: !sluice.tensor<[c=3], f16> {sluice.name = "w"})
    -> (!sluice.tensor<[r=2, c=3], f32> {sluice.name = "y"}) {
  sluice.return %x : !sluice.tensor<[r=2, c=3], f32>
}
)mlir";

std::string errorOf(llvm::Expected<std::vector<NamedArray>> expected) {
  if (expected)
    return "<no error>";
  return llvm::toString(expected.takeError());
}

class RunCompiled : public ::testing::Test {
protected:
  void SetUp() override {
    DialectRegistry registry;
    registerSluiceDialects(registry);
    context.appendDialectRegistry(registry);
    context.loadAllAvailableDialects();
    ASSERT_FALSE(
        llvm::sys::fs::createUniqueDirectory("sluice-runcompiled-test", dir));
    llvm::Expected<std::string> compiler = findHostCompiler();
    ASSERT_TRUE(!!compiler) << llvm::toString(compiler.takeError());
    llvm::SmallString<256> library(dir);
    llvm::sys::path::append(library, "libhandwritten_cpu.so");
    llvm::Error error =
        runTool(hostCommand(*compiler,
                            SLUICE_TEST_SOURCE_DIR
                            "/Compile/Inputs/handwritten_cpu.cpp",
                            library, HostFeatures()),
                "compile the hand-written module");
    ASSERT_FALSE(error) << llvm::toString(std::move(error));
    llvm::Expected<std::unique_ptr<LoadedModule>> loaded =
        LoadedModule::load(library);
    ASSERT_TRUE(!!loaded) << llvm::toString(loaded.takeError());
    module = std::move(*loaded);
  }
  void TearDown() override { llvm::sys::fs::remove_directories(dir); }

  OwningOpRef<ModuleOp> parse(const char *text) {
    return parseSourceString<ModuleOp>(text, &context);
  }

  MLIRContext context;
  llvm::SmallString<128> dir;
  std::unique_ptr<LoadedModule> module;
};

std::vector<NamedArray> trainingInputs() {
  return {{"x", {2, 3}, {1, 2, 3, 4, 5, 6}},
          // 0.1 is not a half: the module sees it rounded.
          {"w", {3}, {0.5, -2, 0.1}},
          {"dy", {2, 3}, {1, 0, -1, 2, 1, 0.5}}};
}

TEST_F(RunCompiled, TrainingForwardThenBackward) {
  OwningOpRef<ModuleOp> graphs = parse(kTrainingGraphs);
  ASSERT_TRUE(graphs);
  llvm::Expected<std::vector<NamedArray>> outputs =
      runCompiledModule(*graphs, *module, trainingInputs(), /*seed=*/8);
  ASSERT_TRUE(!!outputs) << llvm::toString(outputs.takeError());
  ASSERT_EQ(outputs->size(), 3u);
  EXPECT_EQ((*outputs)[0].name, "y");
  EXPECT_EQ((*outputs)[1].name, "d_x");
  EXPECT_EQ((*outputs)[2].name, "d_w");
  EXPECT_EQ((*outputs)[2].shape, std::vector<int64_t>({3}));

  float w2 = static_cast<float>(0.0999755859375); // 0.1 as a half
  const std::vector<double> &y = (*outputs)[0].data;
  // y = x * w + 8 % 7, in float.
  EXPECT_EQ(y[0], 1.0f * 0.5f + 1);
  EXPECT_EQ(y[1], 2.0f * -2.0f + 1);
  EXPECT_EQ(y[2], 3.0f * w2 + 1);
  EXPECT_EQ(y[5], 6.0f * w2 + 1);
  // d_x = dy * w; d_w = sum over rows of dy * x, stored as halves.
  EXPECT_EQ((*outputs)[1].data[3], 2.0f * 0.5f);
  EXPECT_EQ((*outputs)[1].data[5], 0.5f * w2);
  EXPECT_EQ((*outputs)[2].data, std::vector<double>({1 + 8, 0 + 5, -3 + 3}));
}

TEST_F(RunCompiled, InputErrorsNameTheTensor) {
  OwningOpRef<ModuleOp> graphs = parse(kTrainingGraphs);
  ASSERT_TRUE(graphs);
  std::vector<NamedArray> inputs = trainingInputs();
  inputs.pop_back();
  EXPECT_EQ(errorOf(runCompiledModule(*graphs, *module, inputs, 0)),
            "missing input 'dy' (shape [2, 3])");
  inputs = trainingInputs();
  inputs[1].shape = {1, 3};
  EXPECT_EQ(errorOf(runCompiledModule(*graphs, *module, inputs, 0)),
            "input 'w' has shape [1, 3], expected [3]");
  inputs = trainingInputs();
  inputs.push_back({"z", {1}, {0}});
  EXPECT_EQ(errorOf(runCompiledModule(*graphs, *module, inputs, 0)),
            "unexpected input 'z'; this layer takes no tensor of that name");
  inputs = trainingInputs();
  inputs.push_back(inputs[0]);
  EXPECT_EQ(errorOf(runCompiledModule(*graphs, *module, inputs, 0)),
            "input 'x' is given twice");
}

TEST_F(RunCompiled, ModuleStatusAndMismatches) {
  OwningOpRef<ModuleOp> graphs = parse(kTrainingGraphs);
  ASSERT_TRUE(graphs);
  EXPECT_EQ(errorOf(runCompiledModule(*graphs, *module, trainingInputs(),
                                      /*seed=*/999)),
            "module 'handwritten' forward failed with SLUICE_ERROR_ARGUMENT: "
            "sluice_run: seed 999 is refused by the test module");

  // An inference layer needs one phase; the module has two.
  OwningOpRef<ModuleOp> inference = parse(kInferenceGraph);
  ASSERT_TRUE(inference);
  std::vector<NamedArray> inputs = trainingInputs();
  inputs.pop_back();
  EXPECT_EQ(errorOf(runCompiledModule(*inference, *module, inputs, 0)),
            "module '" + module->getPath().str() +
                "' has 2 phases, but the layer needs 1 (was it compiled "
                "from another spec?)");
}

} // namespace
