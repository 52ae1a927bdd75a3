//===- ToolchainTest.cpp - compilers, dlopen and the generic module ABI ---===//
//
// Drives the toolchain and the loader with a hand-written module
// (test/Compile/Inputs/handwritten_cpu.cpp) that implements the generic C
// entry points, so they are tested independently of the emitter.
//
//===----------------------------------------------------------------------===//

#include "sluice/Codegen/Toolchain.h"
#include "sluice/Codegen/LoadedModule.h"
#include "sluice/Driver/CompileModule.h"
#include "sluice/Driver/RunCompiled.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>

using namespace mlir::sluice;

namespace {

template <typename T>
std::string errorOf(llvm::Expected<T> expected) {
  if (expected)
    return "<no error>";
  return llvm::toString(expected.takeError());
}
std::string errorOf(llvm::Error error) {
  return error ? llvm::toString(std::move(error)) : "<no error>";
}

/// Sets an environment variable for one scope, then restores it.
class ScopedEnv {
public:
  ScopedEnv(const char *name, const char *value) : name(name) {
    if (const char *old = std::getenv(name))
      previous = old;
    hadPrevious = std::getenv(name) != nullptr;
    setenv(name, value, 1);
  }
  ~ScopedEnv() {
    if (hadPrevious)
      setenv(name, previous.c_str(), 1);
    else
      unsetenv(name);
  }

private:
  const char *name;
  std::string previous;
  bool hadPrevious = false;
};

class Toolchain : public ::testing::Test {
protected:
  void SetUp() override {
    ASSERT_FALSE(
        llvm::sys::fs::createUniqueDirectory("sluice-toolchain-test", dir));
    llvm::Expected<std::string> found = findHostCompiler();
    ASSERT_TRUE(!!found) << errorOf(std::move(found));
    compiler = *found;
  }
  void TearDown() override { llvm::sys::fs::remove_directories(dir); }
  std::string path(llvm::StringRef name) {
    llvm::SmallString<256> p(dir);
    llvm::sys::path::append(p, name);
    return std::string(p);
  }
  void write(llvm::StringRef name, llvm::StringRef text) {
    std::error_code code;
    llvm::raw_fd_ostream os(path(name), code);
    ASSERT_FALSE(code);
    os << text;
  }
  /// Compiles the hand-written module into dir/libhandwritten_cpu.so.
  std::string buildHandwritten() {
    std::string library = path("libhandwritten_cpu.so");
    HostFeatures features = probeHostFeatures(compiler, dir);
    llvm::Error error =
        runTool(hostCommand(compiler,
                            SLUICE_TEST_SOURCE_DIR
                            "/Compile/Inputs/handwritten_cpu.cpp",
                            library, features),
                "compile the hand-written module");
    EXPECT_EQ(errorOf(std::move(error)), "<no error>");
    return library;
  }

  llvm::SmallString<128> dir;
  std::string compiler;
};

TEST(ToolchainCommands, NvccAndHostFlags) {
  std::vector<std::string> nvcc =
      nvccCommand("/cuda/nvcc", "m.cu", "libm.so", "sm_90");
  auto has = [](const std::vector<std::string> &command, llvm::StringRef arg) {
    return llvm::is_contained(command, arg);
  };
  EXPECT_EQ(nvcc.front(), "/cuda/nvcc");
  for (llvm::StringRef arg : {"-O3", "-arch=sm_90", "-shared", "-Xcompiler",
                              "-fPIC", "-lcublasLt", "-lcublas", "m.cu"})
    EXPECT_TRUE(has(nvcc, arg)) << arg.str();
  // The shared CUDA runtime, not a static copy in every module (the GPU
  // kit's size limit, docs/GPU.md).
  auto cudart = llvm::find(nvcc, "-cudart");
  ASSERT_NE(cudart, nvcc.end());
  ASSERT_NE(std::next(cudart), nvcc.end());
  EXPECT_EQ(*std::next(cudart), "shared");

  HostFeatures none;
  std::vector<std::string> plain = hostCommand("c++", "m.cpp", "libm.so", none);
  EXPECT_TRUE(has(plain, "-O3"));
  // SIMD loops calling sluice_expf stay vectorized on AVX2/SSE (the
  // streaming attention kernels' rows; Toolchain.cpp).
  EXPECT_TRUE(has(plain, "-fno-trapping-math"));
  EXPECT_FALSE(has(plain, "-fopenmp"));
  EXPECT_FALSE(has(plain, "-lopenblas"));
  EXPECT_FALSE(has(plain, "-march=native")); // portable libraries
  HostFeatures all;
  all.openmp = all.openblas = true;
  std::vector<std::string> full = hostCommand("c++", "m.cpp", "libm.so", all);
  EXPECT_TRUE(has(full, "-fopenmp"));
  EXPECT_TRUE(has(full, "-DSLUICE_HAVE_CBLAS"));
  EXPECT_EQ(full.back(), "-lopenblas"); // after the source, for the linker
  EXPECT_FALSE(has(full, "-lsleefgnuabi"));
  all.sleef = true;
  std::vector<std::string> native =
      hostCommand("c++", "m.cpp", "libm.so", all, kCpuArchNative);
  EXPECT_TRUE(has(native, "-march=native"));
#if defined(__x86_64__)
  // 512-bit vectors where -march has AVX-512 (GCC's default is 256).
  EXPECT_TRUE(has(native, "-mprefer-vector-width=512"));
  EXPECT_FALSE(has(plain, "-mprefer-vector-width=512"));
#endif
  EXPECT_TRUE(has(native, "-DSLUICE_HAVE_SLEEF"));
  EXPECT_TRUE(has(native, "-lsleefgnuabi"));
  EXPECT_TRUE(has(hostCommand("c++", "m.cpp", "libm.so", all, "x86-64-v3"),
                  "-march=x86-64-v3"));
  // oneDNN, when there, is linked beside OpenBLAS (f32 GEMMs use it).
  all.dnnl = true;
  std::vector<std::string> dnnl = hostCommand("c++", "m.cpp", "libm.so", all);
  EXPECT_TRUE(has(dnnl, "-DSLUICE_HAVE_DNNL"));
  EXPECT_TRUE(has(dnnl, "-DSLUICE_HAVE_CBLAS"));
  EXPECT_TRUE(has(dnnl, "-ldnnl"));
  EXPECT_EQ(dnnl.back(), "-lopenblas");
  all.openblas = false;
  std::vector<std::string> onlyDnnl =
      hostCommand("c++", "m.cpp", "libm.so", all);
  EXPECT_FALSE(has(onlyDnnl, "-DSLUICE_HAVE_CBLAS"));
  EXPECT_EQ(onlyDnnl.back(), "-ldnnl");
}

TEST(ToolchainCommands, CpuArch) {
  EXPECT_TRUE(isCpuArch("native"));
  EXPECT_TRUE(isCpuArch("portable"));
  EXPECT_TRUE(isCpuArch("x86-64-v3"));
  EXPECT_FALSE(isCpuArch(""));
  EXPECT_FALSE(isCpuArch("x86 64"));
  EXPECT_FALSE(isCpuArch("-O0"));
  EXPECT_FALSE(isCpuArch("native;rm"));
}

TEST(ToolchainCommands, CudaArch) {
  EXPECT_TRUE(isCudaArch("sm_80"));
  EXPECT_TRUE(isCudaArch("sm_90"));
  EXPECT_TRUE(isCudaArch("sm_90a"));
  EXPECT_TRUE(isCudaArch("sm_100f"));
  EXPECT_FALSE(isCudaArch("sm_"));
  EXPECT_FALSE(isCudaArch("sm_a"));
  EXPECT_FALSE(isCudaArch("sm_90b"));
  EXPECT_FALSE(isCudaArch("compute_80"));
  EXPECT_FALSE(isCudaArch("sm_8x"));
}

TEST(ToolchainCommands, LibraryNamesFollowTheEmittedFiles) {
  EXPECT_EQ(getCudaLibraryName("bert-large"), "libbert-large.so");
  EXPECT_EQ(getCpuLibraryName("bert-large"), "libbert-large_cpu.so");
  // Names that are not plain file names fall back to the C identifier.
  EXPECT_EQ(getCudaLibraryName("my layer/1"), "libmy_layer_1.so");
  EXPECT_EQ(getCpuLibraryName("tiny"), "libtiny_cpu.so");
}

TEST(ToolchainCommands, NvccFromEnvironment) {
  {
    ScopedEnv env("SLUICE_NVCC", "/nonexistent/nvcc");
    EXPECT_EQ(errorOf(findNvcc()), "SLUICE_NVCC is '/nonexistent/nvcc', "
                                   "which is not an executable file");
  }
  {
    ScopedEnv env("SLUICE_NVCC", "/bin/true");
    llvm::Expected<std::string> found = findNvcc();
    ASSERT_TRUE(!!found) << errorOf(std::move(found));
    EXPECT_EQ(*found, "/bin/true");
  }
  ScopedEnv env("SLUICE_CXX", "/nonexistent/c++");
  EXPECT_EQ(errorOf(findHostCompiler()),
            "SLUICE_CXX is '/nonexistent/c++', which is not an executable "
            "file");
}

TEST_F(Toolchain, CompileErrorQuotesTheCompiler) {
  write("broken.cpp", "int f() { return undeclared_name; }\n");
  llvm::Error error = runTool(hostCommand(compiler, path("broken.cpp"),
                                          path("libbroken.so"), HostFeatures()),
                              "compile broken.cpp");
  std::string message = errorOf(std::move(error));
  EXPECT_NE(message.find("cannot compile broken.cpp: '" + compiler +
                         "' exited with status 1"),
            std::string::npos)
      << message;
  EXPECT_NE(message.find("command: " + compiler + " -O3"), std::string::npos)
      << message;
  EXPECT_NE(message.find("undeclared_name"), std::string::npos) << message;
  EXPECT_FALSE(llvm::sys::fs::exists(path("libbroken.so")));
}

TEST_F(Toolchain, MissingProgram) {
  std::string message =
      errorOf(runTool({"/nonexistent/compiler", "x.cpp"}, "compile x.cpp"));
  EXPECT_NE(message.find("cannot compile x.cpp: cannot run "
                         "'/nonexistent/compiler'"),
            std::string::npos)
      << message;
}

TEST_F(Toolchain, LoadAndRunHandwrittenModule) {
  std::string library = buildHandwritten();
  llvm::Expected<std::unique_ptr<LoadedModule>> loaded =
      LoadedModule::load(library);
  ASSERT_TRUE(!!loaded) << errorOf(std::move(loaded));
  LoadedModule &module = **loaded;
  EXPECT_EQ(module.getName(), "handwritten");
  ASSERT_EQ(module.getNumPhases(), 2u);
  ASSERT_EQ(module.getTensors(0).size(), 3u);
  ASSERT_EQ(module.getTensors(1).size(), 6u);
  const ModuleTensor &w = module.getTensors(0)[1];
  EXPECT_EQ(w.name, "w");
  EXPECT_EQ(w.dtype, ModuleDType::F16);
  EXPECT_EQ(w.dims, std::vector<int64_t>({3}));
  EXPECT_FALSE(w.isOutput);
  EXPECT_TRUE(module.getTensors(0)[2].isOutput);
  EXPECT_EQ(module.getTensors(1)[5].name, "d_w");

  float x[6] = {1, 2, 3, 4, 5, 6}, y[6] = {};
  std::vector<uint8_t> wBytes = encodeTensor({0.5, -2, 0.25}, ModuleDType::F16);
  void *forward[] = {x, wBytes.data(), y};
  ASSERT_EQ(errorOf(module.run(0, forward, /*seed=*/9)), "<no error>");
  float expected[6] = {2.5f, -2, 2.75f, 4, -8, 3.5f}; // x * w + 9 % 7
  for (int i = 0; i < 6; ++i)
    EXPECT_EQ(y[i], expected[i]) << i;

  // The module's own status and message come back.
  std::string message = errorOf(module.run(0, forward, /*seed=*/999));
  EXPECT_EQ(message, "module 'handwritten' forward failed with "
                     "SLUICE_ERROR_ARGUMENT: sluice_run: seed 999 is refused "
                     "by the test module");
  void *tooFew[] = {x};
  EXPECT_EQ(errorOf(module.run(0, tooFew, 0)),
            "module 'handwritten' phase 0 takes 3 tensors, given 1");
  EXPECT_EQ(errorOf(module.run(2, forward, 0)),
            "module 'handwritten' has no phase 2");
}

/// C ABI versions at load: a module without sluice_abi_version is version
/// 1 (it runs, but its contexts cannot share a scratch region); another
/// version, or a version 2 without the region entry points, is refused.
TEST_F(Toolchain, AbiVersions) {
  std::string library = buildHandwritten();
  llvm::Expected<std::unique_ptr<LoadedModule>> loaded =
      LoadedModule::load(library);
  ASSERT_TRUE(!!loaded) << errorOf(std::move(loaded));
  EXPECT_EQ((*loaded)->getAbiVersion(), 1);
  EXPECT_EQ((*loaded)->getScratchBytes(), 0u);
  char scratch[256];
  EXPECT_EQ(errorOf((*loaded)->useSharedScratch(scratch, sizeof(scratch))),
            "module '" + library +
                "' has C ABI version 1: its contexts cannot share a scratch "
                "region (recompile it)");

  // The hand-written module with a version of its own.
  auto withVersion = [&](llvm::StringRef name, int version) {
    write(name.str() + ".cpp",
          "#include \"" SLUICE_TEST_SOURCE_DIR
          "/Compile/Inputs/handwritten_cpu.cpp\"\n"
          "extern \"C\" int sluice_abi_version(void) { return " +
              std::to_string(version) + "; }\n");
    std::string built = path("lib" + name.str() + "_cpu.so");
    EXPECT_EQ(errorOf(runTool(hostCommand(compiler, path(name.str() + ".cpp"),
                                          built, HostFeatures()),
                              "compile " + name.str())),
              "<no error>");
    return built;
  };
  std::string version3 = withVersion("version3", 3);
  EXPECT_EQ(errorOf(LoadedModule::load(version3)),
            "module '" + version3 +
                "' has C ABI version 3; this build reads version 2 "
                "(recompile the module)");
  std::string partial = withVersion("partial", 2);
  EXPECT_EQ(errorOf(LoadedModule::load(partial)),
            "module '" + partial +
                "' has C ABI version 2 but not all of its entry points "
                "(sluice_saved_bytes, sluice_scratch_bytes, "
                "sluice_create_shared)");
}

TEST_F(Toolchain, LoadErrors) {
  std::string missing = errorOf(LoadedModule::load(path("libnothing.so")));
  EXPECT_NE(
      missing.find("cannot load module '" + path("libnothing.so") + "': "),
      std::string::npos)
      << missing;

  // A shared library that is not a sluicec module.
  write("other.cpp", "extern \"C\" int other() { return 1; }\n");
  ASSERT_EQ(errorOf(runTool(hostCommand(compiler, path("other.cpp"),
                                        path("libother.so"), HostFeatures()),
                            "compile other.cpp")),
            "<no error>");
  EXPECT_EQ(errorOf(LoadedModule::load(path("libother.so"))),
            "module '" + path("libother.so") +
                "' does not export 'sluice_module_name': not a sluicec "
                "module");
}

TEST(TensorEncoding, RoundsToTheDType) {
  // 1 + 2^-11 is a tie between two halves: ties to even gives 1.
  std::vector<double> values = {1.0, 1.0 + 1.0 / 2048, -65504.0, 1e-8, 3.0};
  std::vector<uint8_t> half = encodeTensor(values, ModuleDType::F16);
  ASSERT_EQ(half.size(), 10u);
  EXPECT_EQ(half[0] | half[1] << 8, 0x3c00);
  EXPECT_EQ(half[2] | half[3] << 8, 0x3c00);
  EXPECT_EQ(half[4] | half[5] << 8, 0xfbff);
  std::vector<double> back = decodeTensor(half, ModuleDType::F16);
  EXPECT_EQ(back[0], 1.0);
  EXPECT_EQ(back[2], -65504.0);
  EXPECT_EQ(back[3], 0.0); // below half the smallest subnormal (2^-25)
  EXPECT_EQ(back[4], 3.0);

  std::vector<uint8_t> bf16 =
      encodeTensor({1.0 + 1.0 / 256, 3.0}, ModuleDType::BF16);
  EXPECT_EQ(decodeTensor(bf16, ModuleDType::BF16),
            std::vector<double>({1.0, 3.0}));
  std::vector<uint8_t> f32 = encodeTensor({0.1}, ModuleDType::F32);
  EXPECT_EQ(decodeTensor(f32, ModuleDType::F32)[0], static_cast<double>(0.1f));
}

} // namespace
