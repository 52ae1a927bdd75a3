//===- PhiloxWordsTest.cpp - the CPU kernels' vectorized Philox draw ------===//
//
// CPU kernels draw their dropout masks with Philox.h's sluice_dropout_words,
// hand-vectorized with AVX-512F, AVX2 or SSE2 intrinsics, where the interpreter
// and CUDA call sluice_dropout_block one block at a time. This compiles a probe
// the way the toolchain compiles a module, once for this machine
// (-march=native: the AVX-512 or AVX2 path where the CPU has it) and once
// portable (SSE2), and, on x86, once for x86-64-v3 (AVX2); it checks every word
// against sluice_dropout_block (compiled here, without vector code): seeds with
// both key halves set, streams, first blocks at the 32-bit carry, counts that
// leave a scalar tail.
//
//===----------------------------------------------------------------------===//

#include "HostProbe.h"
#include "sluice/Runtime/Philox.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"

#include <gtest/gtest.h>

#include <dlfcn.h>

#include <string>
#include <vector>

using namespace mlir::sluice;

namespace {

constexpr const char *kProbe = R"(
#include "sluice/Runtime/Philox.h"
extern "C" void probe_words(uint64_t seed, uint64_t stream, uint64_t first,
                            int64_t blocks, uint32_t *words) {
  sluice_dropout_words(seed, stream, first, blocks, words);
}
extern "C" int probe_lanes() {
#if defined(SLUICE_PHILOX_LANES)
  return SLUICE_PHILOX_LANES;
#else
  return 1;
#endif
}
)";

using Words = void (*)(uint64_t, uint64_t, uint64_t, int64_t, uint32_t *);

class PhiloxWords : public ::testing::TestWithParam<const char *> {
protected:
  void SetUp() override {
#if defined(__x86_64__)
    if (llvm::StringRef(GetParam()) == "x86-64-v3" &&
        !__builtin_cpu_supports("avx2"))
      GTEST_SKIP() << "this CPU cannot run an AVX2 build";
#endif
    ASSERT_FALSE(llvm::sys::fs::createUniqueDirectory("sluice-philox", dir));
    llvm::Expected<std::string> compiler = findHostCompiler();
    if (!compiler) {
      llvm::consumeError(compiler.takeError());
      GTEST_SKIP() << "no host C++ compiler";
    }
    HostFeatures features = probeHostFeatures(*compiler, dir);
    llvm::Expected<std::string> library =
        compileHostProbe(*compiler, dir, kProbe, features, GetParam());
    ASSERT_TRUE(!!library) << llvm::toString(library.takeError());
    handle = dlopen(library->c_str(), RTLD_NOW | RTLD_LOCAL);
    ASSERT_NE(handle, nullptr) << dlerror();
    words = reinterpret_cast<Words>(dlsym(handle, "probe_words"));
    lanes = reinterpret_cast<int (*)()>(dlsym(handle, "probe_lanes"));
    ASSERT_NE(words, nullptr);
    ASSERT_NE(lanes, nullptr);
  }
  void TearDown() override {
    if (handle)
      dlclose(handle);
    llvm::sys::fs::remove_directories(dir);
  }
  llvm::SmallString<128> dir;
  void *handle = nullptr;
  Words words = nullptr;
  int (*lanes)() = nullptr;
};

TEST_P(PhiloxWords, EqualToOneBlockAtATime) {
  // x86-64 always has SSE2, so the probe must take a vector path there.
#if defined(__x86_64__)
  EXPECT_GE(lanes(), 4) << "the probe fell back to the scalar loop";
  // Built for this machine, the probe takes its widest path, so the
  // AVX-512 and AVX2 paths are checked wherever the CPU has them.
  if (llvm::StringRef(GetParam()) == kCpuArchNative) {
    if (__builtin_cpu_supports("avx512f"))
      EXPECT_EQ(lanes(), 16);
    else if (__builtin_cpu_supports("avx2"))
      EXPECT_EQ(lanes(), 8);
  }
  if (llvm::StringRef(GetParam()) == "x86-64-v3")
    EXPECT_EQ(lanes(), 8);
#endif
  const uint64_t seeds[] = {0, 1, 0x0123456789abcdefULL, ~0ULL};
  const uint64_t streams[] = {0, 3, 0xffffffffULL};
  // Around the carry of block's low word into its high word, and far up.
  const uint64_t firsts[] = {
      0, 12345, 0xffffffe1ULL, 0xfffffff0ULL, 0x1fffffffaULL, ~0ULL - 40};
  // Counts leaving no, one and several single groups after the batched
  // steps (4 groups of 4, 8 or 16 lanes), and a scalar tail.
  const int64_t counts[] = {0, 1, 7, 15, 31, 32, 33, 47, 63, 83, 100, 768};
  for (uint64_t seed : seeds)
    for (uint64_t stream : streams)
      for (uint64_t first : firsts)
        for (int64_t count : counts) {
          std::vector<uint32_t> got(4 * count + 1, 0xcdcdcdcdu);
          words(seed, stream, first, count, got.data());
          for (int64_t w = 0; w < count; ++w) {
            sluice_philox4x32 want =
                sluice_dropout_block(seed, stream, first + uint64_t(w));
            for (int k = 0; k < 4; ++k)
              ASSERT_EQ(got[4 * w + k], want.v[k])
                  << "seed " << seed << " stream " << stream << " block "
                  << first + uint64_t(w) << " word " << k << " of " << count;
          }
          EXPECT_EQ(got[4 * count], 0xcdcdcdcdu) << "wrote past the end";
        }
}

INSTANTIATE_TEST_SUITE_P(CpuArch, PhiloxWords,
                         ::testing::Values(kCpuArchNative.data(),
                                           kCpuArchPortable.data()));
#if defined(__x86_64__)
// The AVX2 path on any x86 machine, AVX-512 ones included (their native
// build takes the 16-lane path).
INSTANTIATE_TEST_SUITE_P(Avx2, PhiloxWords, ::testing::Values("x86-64-v3"));
#endif

} // namespace
