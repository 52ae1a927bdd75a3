//===- SharedScratchTest.cpp - two contexts on one scratch region ---------===//
//
// The C ABI's shared scratch (docs/Codegen.md, "The C ABI"): a context made
// by sluice_create_shared keeps its saved region and uses the caller's
// scratch region. Two such contexts of an emitted CPU module, run in the
// order of a two-layer stack (forward A, forward B, backward B, backward A:
// B's calls overwrite everything A left in the scratch), give exactly the
// outputs of two independent contexts. The layer trains with dropout, so
// the saved region holds masks and activations across the other context's
// calls.
//
//===----------------------------------------------------------------------===//

#include "CompiledCpuLayer.h"

#include "llvm/ADT/StringMap.h"

#include <cstdlib>
#include <cstring>

using namespace mlir;
using namespace mlir::sluice;

namespace {

const char *kSpec = R"json({
  "name": "shared_scratch",
  "dims": {"batch": 2, "seq": 5, "heads": 2, "head_dim": 3, "embed": 6,
           "ffn": 12},
  "dtype": "f32",
  "dropout": {"attention": 0.2, "residual": 0.1, "activation": 0.3},
  "training": true
})json";

/// One layer's tensors, by name: a forward output (y) is the same buffer
/// when the backward reads it.
using Tensors = llvm::StringMap<std::vector<float>>;

/// A buffer per tensor of `phase` (inputs from a small LCG seeded by
/// `salt`, outputs zeroed) added to `tensors`, and their pointers in order.
std::vector<void *> bindTensors(const LoadedModule &module, unsigned phase,
                                Tensors &tensors, uint32_t salt) {
  std::vector<void *> pointers;
  uint32_t state = 977 + salt * 7919 + phase;
  for (const ModuleTensor &tensor : module.getTensors(phase)) {
    auto [it, inserted] = tensors.try_emplace(tensor.name);
    if (inserted) {
      it->second.resize(tensor.getNumElements());
      for (float &value : it->second) {
        state = state * 1664525u + 1013904223u;
        value =
            tensor.isOutput ? 0.0f : float(state >> 8) / float(1 << 24) - 0.5f;
      }
    }
    pointers.push_back(it->second.data());
  }
  return pointers;
}

class SharedScratch : public CompiledCpuLayer {
protected:
  void SetUp() override {
    ASSERT_NO_FATAL_FAILURE(compileSpec(kSpec, "shared_scratch"));
  }
  void TearDown() override {
    std::free(scratch);
    CompiledCpuLayer::TearDown();
  }

  /// Runs `phase` of `module` on `tensors` (seed 5 + salt).
  void run(LoadedModule &module, unsigned phase, Tensors &tensors,
           uint32_t salt) {
    std::vector<void *> pointers = bindTensors(module, phase, tensors, salt);
    llvm::Error error = module.run(phase, pointers, 5 + salt);
    ASSERT_FALSE(!!error) << llvm::toString(std::move(error));
  }

  void *scratch = nullptr;
};

TEST_F(SharedScratch, RegionsMatchTheMemoryPlan) {
  std::unique_ptr<LoadedModule> module = load();
  ASSERT_TRUE(module);
  EXPECT_EQ(module->getAbiVersion(), 2);
  ASSERT_TRUE(compilation.memoryPlan);
  EXPECT_EQ(module->getSavedBytes(), compilation.memoryPlan->savedBytes);
  // The plan's scratch buffers, then any GEMM product nothing stores.
  EXPECT_GE(module->getScratchBytes(), compilation.memoryPlan->scratchBytes);
  EXPECT_GT(module->getSavedBytes(), 0u);
  EXPECT_GT(module->getScratchBytes(), 0u);
}

TEST_F(SharedScratch, TwoContextsOnOneScratchMatchIndependentOnes) {
  std::unique_ptr<LoadedModule> own[2] = {load(), load()};
  std::unique_ptr<LoadedModule> shared[2] = {load(), load()};
  ASSERT_TRUE(own[0] && own[1] && shared[0] && shared[1]);
  uint64_t bytes = shared[0]->getScratchBytes();
  scratch = std::aligned_alloc(256, (bytes + 255) / 256 * 256);
  ASSERT_NE(scratch, nullptr);
  // Garbage in the scratch must not matter.
  std::memset(scratch, 0xA5, bytes);
  for (auto &module : shared) {
    llvm::Error error = module->useSharedScratch(scratch, bytes);
    ASSERT_FALSE(!!error) << llvm::toString(std::move(error));
  }

  // Independent contexts, one layer after the other.
  Tensors expected[2];
  for (uint32_t i = 0; i < 2; ++i) {
    run(*own[i], 0, expected[i], i);
    run(*own[i], 1, expected[i], i);
  }
  ASSERT_NE(expected[0]["y"], expected[1]["y"]);

  // Shared scratch, in a two-layer stack's order.
  Tensors actual[2];
  run(*shared[0], 0, actual[0], 0);
  run(*shared[1], 0, actual[1], 1);
  run(*shared[1], 1, actual[1], 1);
  run(*shared[0], 1, actual[0], 0);

  for (uint32_t i = 0; i < 2; ++i) {
    ASSERT_EQ(actual[i].size(), expected[i].size());
    for (const auto &entry : expected[i])
      EXPECT_EQ(actual[i][entry.first()], entry.second)
          << "layer " << i << " tensor " << entry.first().str();
  }
}

TEST_F(SharedScratch, BadScratchBuffersAreRefused) {
  std::unique_ptr<LoadedModule> module = load();
  ASSERT_TRUE(module);
  uint64_t bytes = module->getScratchBytes();
  scratch = std::aligned_alloc(256, (bytes + 511) / 256 * 256);
  ASSERT_NE(scratch, nullptr);
  auto message = [&](void *buffer, uint64_t size) {
    llvm::Error error = module->useSharedScratch(buffer, size);
    return error ? llvm::toString(std::move(error)) : std::string();
  };
  std::string prefix = "module '" + library +
                       "': sluice_create_shared failed with "
                       "SLUICE_ERROR_ARGUMENT: sluice_shared_scratch_"
                       "create_shared: ";
  EXPECT_EQ(message(nullptr, bytes),
            prefix + "scratch is NULL; this module needs " +
                std::to_string(bytes) + " bytes of scratch");
  EXPECT_EQ(message(scratch, bytes - 1),
            prefix + "the scratch buffer has " + std::to_string(bytes - 1) +
                " bytes; this module needs " + std::to_string(bytes) +
                " (sluice_scratch_bytes)");
  std::string misaligned = message(static_cast<char *>(scratch) + 16, bytes);
  EXPECT_EQ(misaligned.rfind(prefix + "the scratch buffer ", 0), 0u)
      << misaligned;
  EXPECT_NE(misaligned.find("is not 256-byte aligned"), std::string::npos)
      << misaligned;
  // A refused buffer leaves the module's own context in place.
  Tensors tensors;
  run(*module, 0, tensors, 0);
}

} // namespace
