//===- ConcurrentModuleTest.cpp - two contexts of one module, two threads -===//
//
// The threading contract of docs/Compile.md ("Threads and streams"): two
// LoadedModules of the same emitted CPU library have two contexts, and run
// concurrently from two threads with the results of sequential runs, bit
// for bit. The layer is a small training encoder with dropout, so the
// forward's saved tensors stay in each context's arena until its backward.
//
//===----------------------------------------------------------------------===//

#include "CompiledCpuLayer.h"

#include "sluice/Driver/Run.h"
#include "sluice/Driver/RunCompiled.h"

#include <thread>

using namespace mlir;
using namespace mlir::sluice;

namespace {

const char *kSpec = R"json({
  "name": "concurrent",
  "dims": {"batch": 2, "seq": 5, "heads": 2, "head_dim": 3, "embed": 6,
           "ffn": 12},
  "dropout": {"attention": 0.2, "residual": 0.1, "activation": 0.3},
  "training": true
})json";

/// Inputs named and shaped as `signature` says, from a small LCG (`salt`
/// makes the two threads' inputs differ).
std::vector<NamedArray> makeInputs(const RunSignature &signature,
                                   uint32_t salt) {
  std::vector<NamedArray> inputs = signature.inputs;
  uint32_t state = 12345 + salt;
  for (NamedArray &input : inputs) {
    int64_t count = 1;
    for (int64_t size : input.shape)
      count *= size;
    input.data.resize(count);
    for (double &value : input.data) {
      state = state * 1664525u + 1013904223u;
      value = double(state >> 8) / double(1 << 24) - 0.5;
    }
  }
  return inputs;
}

class ConcurrentModule : public CompiledCpuLayer {
protected:
  void SetUp() override {
    ASSERT_NO_FATAL_FAILURE(compileSpec(kSpec, "concurrent"));
  }
};

TEST_F(ConcurrentModule, TwoContextsOnTwoThreadsMatchSequentialRuns) {
  llvm::Expected<RunSignature> signature = getRunSignature(*compilation.module);
  ASSERT_TRUE(!!signature) << llvm::toString(signature.takeError());
  const std::vector<NamedArray> inputs[2] = {makeInputs(*signature, 0),
                                             makeInputs(*signature, 1)};
  const uint64_t seeds[2] = {7, 11};
  std::unique_ptr<LoadedModule> modules[2] = {load(), load()};
  ASSERT_TRUE(modules[0] && modules[1]);

  // Sequential: each context alone.
  std::vector<NamedArray> expected[2];
  for (int i = 0; i < 2; ++i) {
    llvm::Expected<std::vector<NamedArray>> outputs = runCompiledModule(
        *compilation.module, *modules[i], inputs[i], seeds[i]);
    ASSERT_TRUE(!!outputs) << llvm::toString(outputs.takeError());
    expected[i] = std::move(*outputs);
  }
  ASSERT_NE(expected[0][0].data, expected[1][0].data);

  // Concurrent: both contexts at once, many times over.
  constexpr int kRounds = 20;
  std::vector<NamedArray> results[2][kRounds];
  std::string errors[2];
  auto work = [&](int i) {
    for (int round = 0; round < kRounds; ++round) {
      llvm::Expected<std::vector<NamedArray>> outputs = runCompiledModule(
          *compilation.module, *modules[i], inputs[i], seeds[i]);
      if (!outputs) {
        errors[i] = llvm::toString(outputs.takeError());
        return;
      }
      results[i][round] = std::move(*outputs);
    }
  };
  std::thread first(work, 0), second(work, 1);
  first.join();
  second.join();
  for (int i = 0; i < 2; ++i) {
    ASSERT_EQ(errors[i], "") << "thread " << i;
    for (int round = 0; round < kRounds; ++round) {
      ASSERT_EQ(results[i][round].size(), expected[i].size());
      for (size_t t = 0; t < expected[i].size(); ++t)
        EXPECT_EQ(results[i][round][t].data, expected[i][t].data)
            << "thread " << i << " round " << round << " tensor "
            << expected[i][t].name;
    }
  }
}

} // namespace
