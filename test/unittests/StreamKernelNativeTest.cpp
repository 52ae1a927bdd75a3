//===- StreamKernelNativeTest.cpp - streaming kernels as modules build them
//===//
//
// The unit tests are built for the compiler's baseline and without OpenMP,
// so StreamKernelTest.cpp runs neither sluice_stream_cpu.h's AVX2 paths (the
// eight-lane Philox, 8-wide register blocks) nor its parallel tasks (query
// blocks cut in ranges, the two-pass backward's key ranges). This compiles
// the header the way the toolchain compiles a CPU module (hostCommand,
// -march=native, -fopenmp where available), loads it and runs the same
// checks against StreamKernelCheck.h's reference through its entry points.
//
//===----------------------------------------------------------------------===//

#include "StreamKernelCheck.h"

#include "sluice/Codegen/Toolchain.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <dlfcn.h>

using namespace mlir::sluice;
using namespace sluice_stream_check;

namespace {

/// One exported forward and backward per element type and tile choice; the
/// backward also forced to two passes.
constexpr const char *kProbe = R"(
#include "sluice/Runtime/sluice_stream_cpu.h"
#define SLUICE_PROBE(name, T, BM, BN)                                        \
  extern "C" void fwd_##name(const sluice_stream_fwd_args &a) {              \
    sluice_stream_attention_fwd_cpu<T, BM, BN>(a);                           \
  }                                                                          \
  extern "C" void bwd_##name(const sluice_stream_bwd_args &a) {              \
    sluice_stream_attention_bwd_cpu<T, BM, BN>(a);                           \
  }                                                                          \
  extern "C" void bwd2_##name(const sluice_stream_bwd_args &a) {             \
    sluice_stream_detail::backward<T, BM, BN>(a, false);                     \
  }
SLUICE_PROBE(f32, float, 64, 64)
SLUICE_PROBE(f32_small, float, 16, 8)
SLUICE_PROBE(f64, double, 16, 16)
SLUICE_PROBE(f16, sluice_f16, 64, 64)
SLUICE_PROBE(bf16, sluice_bf16, 64, 64)
)";

/// Compiles and loads the probe once for all the tests (~15 s at -O3).
class StreamKernelNative : public ::testing::Test {
protected:
  static void SetUpTestSuite() {
    if (llvm::sys::fs::createUniqueDirectory("sluice-stream", dir)) {
      problem = "cannot create a scratch directory";
      return;
    }
    llvm::Expected<std::string> compiler = findHostCompiler();
    if (!compiler) {
      llvm::consumeError(compiler.takeError());
      skip = "no host C++ compiler";
      return;
    }
    HostFeatures features = probeHostFeatures(*compiler, dir);
    std::string source = path("probe.cpp"), library = path("libprobe.so");
    {
      std::error_code code;
      llvm::raw_fd_ostream os(source, code);
      if (code) {
        problem = "cannot write " + source;
        return;
      }
      os << kProbe;
    }
    std::vector<std::string> command =
        hostCommand(*compiler, source, library, features, kCpuArchNative);
    command.insert(command.begin() + 1,
                   "-I" SLUICE_TEST_SOURCE_DIR "/../include");
    if (llvm::Error error =
            runTool(command, "compile the streaming kernel probe")) {
      problem = llvm::toString(std::move(error));
      return;
    }
    // Never unloaded: the probe brings libgomp, whose idle worker threads
    // outlive the parallel regions and would run unmapped code.
    handle = dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
    if (!handle)
      problem = dlerror();
  }
  static void TearDownTestSuite() { llvm::sys::fs::remove_directories(dir); }
  void SetUp() override {
    if (!skip.empty())
      GTEST_SKIP() << skip;
    ASSERT_TRUE(problem.empty()) << problem;
  }
  static std::string path(llvm::StringRef name) {
    llvm::SmallString<256> p(dir);
    llvm::sys::path::append(p, name);
    return std::string(p);
  }
  void *symbol(const std::string &name) {
    void *address = dlsym(handle, name.c_str());
    EXPECT_NE(address, nullptr) << name;
    return address;
  }
  /// The probe's kernels `name`; with `twoPasses` the forced two-pass
  /// backward.
  template <typename T>
  Kernels<T> kernels(const std::string &name, bool twoPasses = false) {
    Kernels<T> k;
    k.forward = reinterpret_cast<decltype(k.forward)>(symbol("fwd_" + name));
    k.backward = reinterpret_cast<decltype(k.backward)>(
        symbol((twoPasses ? "bwd2_" : "bwd_") + name));
    k.name = "native " + name + (twoPasses ? " two passes" : "");
    return k;
  }

  static llvm::SmallString<128> dir;
  static void *handle;
  static std::string skip, problem;
};
llvm::SmallString<128> StreamKernelNative::dir;
void *StreamKernelNative::handle = nullptr;
std::string StreamKernelNative::skip, StreamKernelNative::problem;

/// Everything in one test: ctest runs each test in a process of its own,
/// and each process would compile the probe again.
TEST_F(StreamKernelNative, MatchesTheReference) {
  checkAll(kernels<float>("f32"), 2e-5);
  checkAll(kernels<float>("f32", true), 2e-5);
  checkAll(kernels<double>("f64"), 1e-12);
  checkAll(kernels<double>("f64", true), 1e-12);

  // Tiles narrower than a register block (BN 8 < 16 f32 lanes with AVX2)
  // and odd head dims.
  Shape odd;
  odd.b = 1, odd.h = 3, odd.m = 33, odd.n = 45, odd.d = 5, odd.e = 3;
  odd.scale = 1 / std::sqrt(5.0);
  for (bool causal : {false, true})
    for (double dropout : {0.0, 0.3}) {
      odd.causal = causal, odd.dropout = dropout;
      check(kernels<float>("f32_small"), odd, 2e-5);
      check(kernels<float>("f32_small", true), odd, 2e-5);

      Shape half;
      half.m = 77, half.n = 130, half.causal = causal, half.dropout = dropout;
      check(kernels<sluice_f16>("f16"), half, 4e-3);
      check(kernels<sluice_bf16>("bf16"), half, 2e-2);
      check(kernels<sluice_bf16>("bf16", true), half, 2e-2);

      Shape grouped;
      grouped.m = grouped.n = 77, grouped.causal = causal;
      grouped.dropout = dropout;
      checkGrouped(kernels<double>("f64"), grouped, 1e-12);
      checkGrouped(kernels<double>("f64", true), grouped, 1e-12);
      checkGrouped(kernels<float>("f32", true), grouped, 2e-5);
    }
}

} // namespace
