//===- EmitTest.cpp - emitted CPU modules against the interpreter ---------===//
//
// Emits the portable C++ module of a graph, compiles it with the host
// compiler (c++ -O2 -shared -fPIC, -fopenmp), loads it with dlopen, runs it
// through the generic C ABI on random inputs and compares every output with
// the reference interpreter (f32 mode): forward, then backward on the same
// context for training graphs. Graphs come from specs (each primitive in its
// own kernel, what `--sluice-fuse=enable=false` gives) and from hand-written
// kernel IR with real fusion (reductions, broadcasts, dropout).
//
//===----------------------------------------------------------------------===//

#include "SluiceTestFixture.h"
#include "sluice/Codegen/Emit.h"
#include "sluice/Codegen/Schedule.h"
#include "sluice/Interpreter/Interpreter.h"
#include "sluice/Pipeline/Pipeline.h"
#include "sluice/Runtime/sluice_kernels.h"
#include "sluice/Runtime/sluice_runtime.h"

#include "mlir/IR/Builders.h"
#include "mlir/Parser/Parser.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <dlfcn.h>
#include <fstream>
#include <map>
#include <random>
#include <string>

using namespace mlir;
using namespace mlir::sluice;

namespace {

/// test/ in the source tree (SLUICE_TEST_SOURCE_DIR, set by CMake).
std::string testSourceDir() { return SLUICE_TEST_SOURCE_DIR; }

/// A compiled, loaded module with its generic entry points.
struct LoadedModule {
  void *handle = nullptr;
  int (*numPhases)() = nullptr;
  int (*numTensors)(int) = nullptr;
  const sluice_tensor_info *(*tensor)(int, int) = nullptr;
  int (*create)(void **) = nullptr;
  void (*destroy)(void *) = nullptr;
  const char *(*lastError)(const void *) = nullptr;
  int (*run)(void *, int, void *const *, uint64_t, sluice_stream_t) = nullptr;
  int (*profile)(const void *, int, int, const char **, double *) = nullptr;
  ~LoadedModule() {
    if (handle)
      dlclose(handle);
  }
};

/// Emits `module` for the CPU into a fresh directory, compiles and loads it.
::testing::AssertionResult emitCompileLoad(ModuleOp module, StringRef name,
                                           LoadedModule &loaded,
                                           StringRef extraFlags = "") {
  FailureOr<EmittedModule> emitted = emitModule(module, EmitTarget::Cpu, name);
  if (failed(emitted))
    return ::testing::AssertionFailure() << "emitModule failed";
  SmallString<128> dir;
  if (llvm::sys::fs::createUniqueDirectory("sluice-emit-test", dir))
    return ::testing::AssertionFailure() << "no temporary directory";
  for (const EmittedFile &file : emitted->files) {
    std::ofstream out((dir + "/" + file.name).str());
    out << file.contents;
  }
  std::string library = (dir + "/lib" + emitted->moduleName + "_cpu.so").str();
  std::string command =
      "c++ -std=c++17 -O2 -shared -fPIC -fopenmp -Werror "
      "-Wall -Wno-unused-variable -Wno-unused-but-set-variable " +
      (dir + "/" + emitted->sourceFile).str() + " -o " + library + " " +
      extraFlags.str() + " " +
      // SLUICE_EMIT_CXXFLAGS: extra flags, e.g. -fsanitize=address (with
      // libasan preloaded into the test).
      (std::getenv("SLUICE_EMIT_CXXFLAGS") ? std::getenv("SLUICE_EMIT_CXXFLAGS")
                                           : "") +
      " 2>" + (dir + "/compile.log").str();
  if (std::system(command.c_str()) != 0) {
    std::ifstream log((dir + "/compile.log").str());
    std::string text((std::istreambuf_iterator<char>(log)),
                     std::istreambuf_iterator<char>());
    return ::testing::AssertionFailure()
           << "compiling " << dir.str().str() << " failed:\n"
           << text.substr(0, 4000);
  }
  // RTLD_NODELETE: unloading a module (and the OpenMP runtime it pulled in)
  // while the OpenMP worker threads idle crashes the process.
  loaded.handle =
      dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
  if (!loaded.handle)
    return ::testing::AssertionFailure() << "dlopen: " << dlerror();
  auto symbol = [&](auto &slot, const char *symbolName) {
    slot = reinterpret_cast<std::remove_reference_t<decltype(slot)>>(
        dlsym(loaded.handle, symbolName));
    return slot != nullptr;
  };
  if (!symbol(loaded.numPhases, "sluice_num_phases") ||
      !symbol(loaded.numTensors, "sluice_num_tensors") ||
      !symbol(loaded.tensor, "sluice_tensor") ||
      !symbol(loaded.create, "sluice_create") ||
      !symbol(loaded.destroy, "sluice_destroy") ||
      !symbol(loaded.lastError, "sluice_last_error") ||
      !symbol(loaded.run, "sluice_run"))
    return ::testing::AssertionFailure() << "a generic entry point is missing";
  // Optional: only with -DSLUICE_PROFILE.
  symbol(loaded.profile, "sluice_profile");
  // SLUICE_KEEP_EMITTED=1 keeps the directory for inspection.
  if (std::getenv("SLUICE_KEEP_EMITTED"))
    llvm::errs() << "emitted module kept in " << dir << "\n";
  else
    llvm::sys::fs::remove_directories(dir);
  return ::testing::AssertionSuccess();
}

/// A boundary tensor on the host: its values (exactly representable in its
/// element type) and the bytes the module reads or writes.
struct HostTensor {
  int dtype = SLUICE_DTYPE_F32;
  std::vector<float> values;
  std::vector<uint16_t> halfBits;

  void *data() {
    return dtype == SLUICE_DTYPE_F32 ? static_cast<void *>(values.data())
                                     : static_cast<void *>(halfBits.data());
  }
  /// Stores `input` rounded to the element type.
  void assign(std::vector<float> input) {
    values = std::move(input);
    if (dtype == SLUICE_DTYPE_F32)
      return;
    halfBits.resize(values.size());
    for (size_t i = 0; i < values.size(); ++i) {
      if (dtype == SLUICE_DTYPE_F16) {
        sluice_f16 h;
        sluice_store(&h, values[i]);
        halfBits[i] = h.bits;
        values[i] = sluice_to_f32(h);
      } else {
        sluice_bf16 h;
        sluice_store(&h, values[i]);
        halfBits[i] = h.bits;
        values[i] = sluice_to_f32(h);
      }
    }
  }
  /// Reads back what the module wrote.
  const std::vector<float> &read() {
    if (dtype == SLUICE_DTYPE_F16)
      for (size_t i = 0; i < values.size(); ++i)
        values[i] = sluice_to_f32(sluice_f16{halfBits[i]});
    else if (dtype == SLUICE_DTYPE_BF16)
      for (size_t i = 0; i < values.size(); ++i)
        values[i] = sluice_to_f32(sluice_bf16{halfBits[i]});
    return values;
  }
};
using Tensors = std::map<std::string, HostTensor>;

/// A tensor for `info`: random inputs in [-1, 1), NaN-filled outputs.
HostTensor makeTensor(const sluice_tensor_info *info, std::mt19937 &rng) {
  int64_t count = 1;
  for (int d = 0; d < info->rank; ++d)
    count *= info->dims[d];
  HostTensor tensor;
  tensor.dtype = info->dtype;
  if (info->is_output) {
    tensor.assign(std::vector<float>(count, NAN));
    return tensor;
  }
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> data(count);
  for (float &x : data)
    x = dist(rng);
  tensor.assign(std::move(data));
  return tensor;
}

GraphOp graphOf(ModuleOp module, Phase phase) {
  for (GraphOp graph : module.getOps<GraphOp>())
    if (graph.getPhase() == phase)
      return graph;
  return {};
}

/// Runs `graph` in the interpreter with arguments looked up by name.
std::map<std::string, std::vector<double>>
interpretByName(GraphOp graph, const std::map<std::string, Buffer> &byName,
                uint64_t seed) {
  std::vector<Buffer> inputs;
  for (unsigned i = 0; i < graph.getNumArguments(); ++i)
    inputs.push_back(byName.at(graph.getArgName(i).str()));
  InterpreterOptions options;
  options.precision = Precision::F32;
  options.seed = seed;
  auto results = interpret(graph, inputs, options);
  std::map<std::string, std::vector<double>> out;
  if (!results) {
    ADD_FAILURE() << llvm::toString(results.takeError());
    return out;
  }
  for (unsigned r = 0; r < graph.getNumResults(); ++r)
    out[graph.getResultName(r).str()] = (*results)[r].data;
  return out;
}

/// Max relative error |a - b| / max(|b|, 1) over the elements.
double maxError(const std::vector<float> &actual,
                const std::vector<double> &expected) {
  double worst = 0;
  if (actual.size() != expected.size())
    return INFINITY;
  for (size_t i = 0; i < expected.size(); ++i) {
    double diff = std::fabs(actual[i] - expected[i]) /
                  std::max(1.0, std::fabs(expected[i]));
    if (std::isnan(diff))
      return INFINITY;
    worst = std::max(worst, diff);
  }
  if (std::getenv("SLUICE_PRINT_ERRORS"))
    llvm::errs() << "max relative error " << worst << " over "
                 << expected.size() << " elements\n";
  return worst;
}

/// Emits, compiles and runs `module`, comparing each phase's outputs with
/// the interpreter (f32 mode) run on `reference` (the same graphs before any
/// kernel was formed).
void checkAgainstInterpreter(ModuleOp module, ModuleOp reference,
                             StringRef name, double tolerance,
                             StringRef extraFlags = "") {
  LoadedModule loaded;
  ASSERT_TRUE(emitCompileLoad(module, name, loaded, extraFlags));
  void *ctx = nullptr;
  ASSERT_EQ(loaded.create(&ctx), SLUICE_OK) << loaded.lastError(ctx);
  std::mt19937 rng(42);
  const uint64_t seed = 1234;
  auto bufferOf = [](Type type, const std::vector<float> &values) {
    Buffer buffer{llvm::cast<NamedTensorType>(type), {}};
    buffer.data.assign(values.begin(), values.end());
    return buffer;
  };

  // Forward: random inputs, NaN-filled outputs.
  GraphOp forward = graphOf(reference, Phase::forward);
  ASSERT_EQ(loaded.numTensors(0),
            static_cast<int>(forward.getNumArguments()) +
                llvm::count_if(
                    llvm::seq(0u, forward.getNumResults()), [&](unsigned r) {
                      return !forward.isSavedResult(r);
                    }));
  Tensors tensors;
  std::vector<void *> pointers;
  for (int i = 0; i < loaded.numTensors(0); ++i) {
    const sluice_tensor_info *info = loaded.tensor(0, i);
    tensors[info->name] = makeTensor(info, rng);
  }
  for (int i = 0; i < loaded.numTensors(0); ++i)
    pointers.push_back(tensors[loaded.tensor(0, i)->name].data());
  std::map<std::string, Buffer> byName;
  for (unsigned i = 0; i < forward.getNumArguments(); ++i) {
    std::string argName = forward.getArgName(i).str();
    byName[argName] =
        bufferOf(forward.getArgumentTypes()[i], tensors[argName].values);
  }
  ASSERT_EQ(loaded.run(ctx, 0, pointers.data(), seed, nullptr), SLUICE_OK)
      << loaded.lastError(ctx);
  auto expected = interpretByName(forward, byName, seed);
  // Per-kernel times of that run (-DSLUICE_PROFILE modules only): one row
  // per kernel, none negative.
  EXPECT_EQ(loaded.profile != nullptr, extraFlags.contains("-DSLUICE_PROFILE"));
  if (loaded.profile) {
    int count = loaded.profile(ctx, 0, 0, nullptr, nullptr);
    ASSERT_GT(count, 0);
    std::vector<const char *> names(count);
    std::vector<double> times(count, -1.0);
    EXPECT_EQ(loaded.profile(ctx, 0, count, names.data(), times.data()), count);
    for (int i = 0; i < count; ++i) {
      EXPECT_NE(std::string(names[i]).find("kernel"), std::string::npos);
      EXPECT_GE(times[i], 0.0) << names[i];
    }
    EXPECT_EQ(loaded.profile(ctx, 5, count, names.data(), times.data()), -1);
  }
  for (int i = 0; i < loaded.numTensors(0); ++i) {
    const sluice_tensor_info *info = loaded.tensor(0, i);
    if (info->is_output)
      EXPECT_LE(maxError(tensors[info->name].read(), expected[info->name]),
                tolerance)
          << "forward output " << info->name;
  }

  GraphOp backward = graphOf(reference, Phase::backward);
  if (backward) {
    ASSERT_EQ(loaded.numPhases(), 2);
    // The interpreter's backward reads the saved tensors the interpreter's
    // forward produced; the module reads its own from the arena.
    for (unsigned r = 0; r < forward.getNumResults(); ++r) {
      std::string resultName = forward.getResultName(r).str();
      if (forward.isSavedResult(r))
        byName[resultName] =
            Buffer{llvm::cast<NamedTensorType>(forward.getResultTypes()[r]),
                   expected[resultName]};
    }
    Tensors backwardTensors;
    std::vector<void *> backwardPointers;
    for (int i = 0; i < loaded.numTensors(1); ++i) {
      const sluice_tensor_info *info = loaded.tensor(1, i);
      if (!tensors.count(info->name) || info->is_output)
        backwardTensors[info->name] = makeTensor(info, rng);
    }
    for (int i = 0; i < loaded.numTensors(1); ++i) {
      const sluice_tensor_info *info = loaded.tensor(1, i);
      backwardPointers.push_back(backwardTensors.count(info->name)
                                     ? backwardTensors[info->name].data()
                                     : tensors[info->name].data());
    }
    for (unsigned i = 0; i < backward.getNumArguments(); ++i) {
      std::string argName = backward.getArgName(i).str();
      if (!backward.isSavedArg(i))
        byName[argName] = bufferOf(backward.getArgumentTypes()[i],
                                   backwardTensors[argName].values);
    }
    ASSERT_EQ(loaded.run(ctx, 1, backwardPointers.data(), seed, nullptr),
              SLUICE_OK)
        << loaded.lastError(ctx);
    auto gradients = interpretByName(backward, byName, seed);
    for (int i = 0; i < loaded.numTensors(1); ++i) {
      const sluice_tensor_info *info = loaded.tensor(1, i);
      if (info->is_output)
        EXPECT_LE(
            maxError(backwardTensors[info->name].read(), gradients[info->name]),
            tolerance)
            << "backward output " << info->name;
    }
  }
  // A bad phase is an argument error with a message, not a crash.
  EXPECT_EQ(loaded.run(ctx, 7, pointers.data(), seed, nullptr),
            SLUICE_ERROR_ARGUMENT);
  EXPECT_NE(std::string(loaded.lastError(ctx)).find("phase 7"),
            std::string::npos);
  // So is a missing tensor, named in the message.
  std::vector<void *> missing = pointers;
  missing[0] = nullptr;
  EXPECT_EQ(loaded.run(ctx, 0, missing.data(), seed, nullptr),
            SLUICE_ERROR_ARGUMENT);
  EXPECT_NE(std::string(loaded.lastError(ctx))
                .find(std::string("'") + loaded.tensor(0, 0)->name + "'"),
            std::string::npos)
      << loaded.lastError(ctx);
  loaded.destroy(ctx);
}

/// A spec (with "training" and dropout as given) compiled by the pipeline.
OwningOpRef<ModuleOp> compileSpec(MLIRContext &context, StringRef json,
                                  PipelineOptions options = {}) {
  SmallString<128> path;
  int fd;
  if (llvm::sys::fs::createTemporaryFile("sluice-emit", "json", fd, path))
    return nullptr;
  {
    llvm::raw_fd_ostream out(fd, /*shouldClose=*/true);
    out << json;
  }
  // The sluicec pipeline: autodiff for training, decompose, legalize
  // contractions, fuse (or one kernel per primitive).
  FailureOr<Compilation> compilation = compile(context, path, options);
  llvm::sys::fs::remove(path);
  if (failed(compilation))
    return nullptr;
  return std::move(compilation->module);
}

class EmitTest : public SluiceTest {};

const char *kTinySpec = R"({
  "name": "tiny-emit",
  "dims": {"batch": 2, "seq": 4, "heads": 2, "head_dim": 4, "embed": 8, "ffn": 16},
  "activation": "gelu",
  "dropout": {"attention": %P, "residual": %P, "activation": 0.0},
  "dtype": "%D",
  "training": %T
})";

std::string tinySpec(bool training, const char *dropout,
                     const char *dtype = "f32") {
  std::string text = kTinySpec;
  text.replace(text.find("%D"), 2, dtype);
  for (size_t at; (at = text.find("%P")) != std::string::npos;)
    text.replace(at, 2, dropout);
  text.replace(text.find("%T"), 2, training ? "true" : "false");
  return text;
}

/// The pipeline's options: fused (the default) or one kernel per primitive.
PipelineOptions withFusion(bool fuse, MaskPolicy maskPolicy = MaskPolicy::Auto) {
  PipelineOptions options;
  options.fuse = fuse;
  options.maskPolicy = maskPolicy;
  return options;
}

// The interpreter runs the same module (a kernel means its body), so any
// difference is the emitted code's.
TEST_F(EmitTest, TinyInferenceMatchesInterpreter) {
  for (bool fuse : {false, true}) {
    OwningOpRef<ModuleOp> module =
        compileSpec(context, tinySpec(false, "0.0"), withFusion(fuse));
    ASSERT_TRUE(module);
    checkAgainstInterpreter(*module, *module, "tiny-emit", 1e-4);
  }
}

TEST_F(EmitTest, TinyTrainingWithDropoutMatchesInterpreter) {
  for (bool fuse : {false, true}) {
    OwningOpRef<ModuleOp> module =
        compileSpec(context, tinySpec(true, "0.1"), withFusion(fuse));
    ASSERT_TRUE(module);
    checkAgainstInterpreter(*module, *module, "tiny-emit", 1e-4,
                            "-DSLUICE_PROFILE");
  }
}

// Bit-packed dropout masks: written bit by bit (atomically), read back in
// the backward.
TEST_F(EmitTest, TinyTrainingWithPackedMasksMatchesInterpreter) {
  OwningOpRef<ModuleOp> module =
      compileSpec(context, tinySpec(true, "0.1"), withFusion(true, MaskPolicy::Bitpack));
  ASSERT_TRUE(module);
  unsigned packed = 0;
  module->walk([&](KernelOp kernel) { packed += kernel.getPacked().size(); });
  EXPECT_GT(packed, 0u) << "the pipeline packed no mask";
  checkAgainstInterpreter(*module, *module, "tiny-packed", 1e-4);
}

// f16 and bf16 storage: the module rounds every stored tensor (and every
// intermediate of that type) as the interpreter does; what differs is the
// f32 summation order, magnified by one 16-bit rounding.
TEST_F(EmitTest, TinyF16TrainingMatchesInterpreter) {
  OwningOpRef<ModuleOp> module =
      compileSpec(context, tinySpec(true, "0.1", "f16"));
  ASSERT_TRUE(module);
  checkAgainstInterpreter(*module, *module, "tiny-f16", 2e-2);
}

TEST_F(EmitTest, TinyBf16InferenceMatchesInterpreter) {
  OwningOpRef<ModuleOp> module =
      compileSpec(context, tinySpec(false, "0.0", "bf16"));
  ASSERT_TRUE(module);
  checkAgainstInterpreter(*module, *module, "tiny-bf16", 5e-2);
}

// The GEMMs through a CBLAS (OpenBLAS), f32 directly and f16 through f32
// scratch, where the library is installed.
TEST_F(EmitTest, TinyTrainingWithCblasMatchesInterpreter) {
  if (!llvm::sys::fs::exists("/usr/include/x86_64-linux-gnu/cblas.h") &&
      !llvm::sys::fs::exists("/usr/include/cblas.h"))
    GTEST_SKIP() << "no cblas.h";
  for (const char *dtype : {"f32", "f16"}) {
    OwningOpRef<ModuleOp> module =
        compileSpec(context, tinySpec(true, "0.1", dtype));
    ASSERT_TRUE(module);
    checkAgainstInterpreter(*module, *module, "tiny-cblas",
                            StringRef(dtype) == "f32" ? 1e-4 : 2e-2,
                            "-DSLUICE_HAVE_CBLAS -lopenblas");
  }
}

// The GEMMs through oneDNN alone (dnnl_sgemm, the batches of the attention
// GEMMs in parallel), f32 directly and f16 through f32 scratch, where
// installed.
TEST_F(EmitTest, TinyTrainingWithDnnlMatchesInterpreter) {
  if (!llvm::sys::fs::exists("/usr/include/oneapi/dnnl/dnnl.h"))
    GTEST_SKIP() << "no oneapi/dnnl/dnnl.h (libdnnl-dev)";
  for (const char *dtype : {"f32", "f16"}) {
    OwningOpRef<ModuleOp> module =
        compileSpec(context, tinySpec(true, "0.1", dtype));
    ASSERT_TRUE(module);
    checkAgainstInterpreter(*module, *module, "tiny-dnnl",
                            StringRef(dtype) == "f32" ? 1e-4 : 2e-2,
                            "-DSLUICE_HAVE_DNNL -ldnnl");
  }
}

/// Hand-fused kernels (test/Codegen/emit-kernels.mlir, which also pins the
/// emitted text): a layernorm (two reductions, an outer-only map between
/// them, broadcast scale), a causal softmax with dropout (max and sum,
/// Philox), a transpose (relayout), a GEMM with a bias+gelu epilogue and a
/// GEMM with a bias-gradient result.
OwningOpRef<ModuleOp> parseHandFused(MLIRContext &context) {
  return parseSourceFile<ModuleOp>(
      testSourceDir() + "/Codegen/emit-kernels.mlir", &context);
}

TEST_F(EmitTest, HandFusedKernelsMatchInterpreter) {
  OwningOpRef<ModuleOp> module = parseHandFused(context);
  ASSERT_TRUE(module);
  checkAgainstInterpreter(*module, *module, "fused", 1e-5);
}

TEST_F(EmitTest, SchedulesOfHandFusedKernels) {
  OwningOpRef<ModuleOp> module = parseHandFused(context);
  ASSERT_TRUE(module);
  std::vector<KernelSchedule> schedules;
  module->walk([&](KernelOp kernel) {
    if (kernel.getKind() != KernelKind::fused)
      return;
    FailureOr<KernelSchedule> schedule = scheduleKernel(kernel);
    ASSERT_TRUE(succeeded(schedule));
    schedules.push_back(*schedule);
  });
  ASSERT_EQ(schedules.size(), 3u);
  // Layernorm: one block per (b, j), 40 = 10 groups of 4 -> one warp.
  EXPECT_EQ(schedules[0].mode, ScheduleMode::RowBlock);
  EXPECT_EQ(schedules[0].outerCount, 6);
  EXPECT_EQ(schedules[0].innerCount, 40);
  EXPECT_EQ(schedules[0].vectorWidth, 4);
  EXPECT_EQ(schedules[0].reduction, ReductionStrategy::Warp);
  // The transpose: element-wise; its innermost dim j (3) allows no vector.
  EXPECT_EQ(schedules[2].mode, ScheduleMode::Elementwise);
  EXPECT_EQ(schedules[2].vectorWidth, 1);
}

/// Writes the CUDA module of `module` and compiles it with nvcc for sm_90
/// into a shared library (skipped without /usr/local/cuda/bin/nvcc).
void checkNvccCompiles(ModuleOp module, StringRef name,
                       StringRef extraFlags = "") {
  const char *nvcc = "/usr/local/cuda/bin/nvcc";
  if (!llvm::sys::fs::can_execute(nvcc))
    GTEST_SKIP() << "no nvcc at " << nvcc;
  FailureOr<EmittedModule> emitted = emitModule(module, EmitTarget::Cuda, name);
  ASSERT_TRUE(succeeded(emitted));
  SmallString<128> dir;
  ASSERT_FALSE(llvm::sys::fs::createUniqueDirectory("sluice-emit-cuda", dir));
  for (const EmittedFile &file : emitted->files) {
    std::ofstream out((dir + "/" + file.name).str());
    out << file.contents;
  }
  std::string command =
      std::string(nvcc) + " -arch=sm_90 -shared -Xcompiler -fPIC " +
      extraFlags.str() + " " + (dir + "/" + emitted->sourceFile).str() +
      " -o " + (dir + "/lib" + emitted->moduleName + ".so").str() +
      " -lcublasLt -lcublas 2>" + (dir + "/nvcc.log").str();
  int status = std::system(command.c_str());
  std::ifstream log((dir + "/nvcc.log").str());
  std::string text((std::istreambuf_iterator<char>(log)),
                   std::istreambuf_iterator<char>());
  EXPECT_EQ(status, 0) << "nvcc failed in " << dir.str().str() << ":\n"
                       << text.substr(0, 6000);
  if (status == 0 && !std::getenv("SLUICE_KEEP_EMITTED"))
    llvm::sys::fs::remove_directories(dir);
}

TEST_F(EmitTest, CudaModulesCompileWithNvcc) {
  OwningOpRef<ModuleOp> training = compileSpec(context, tinySpec(true, "0.1"));
  ASSERT_TRUE(training);
  // With the per-kernel timing events and sluice_profile.
  checkNvccCompiles(*training, "tiny-emit", "-DSLUICE_PROFILE");
  OwningOpRef<ModuleOp> packed = compileSpec(
      context, tinySpec(true, "0.1", "f16"), withFusion(true, MaskPolicy::Bitpack));
  ASSERT_TRUE(packed);
  checkNvccCompiles(*packed, "tiny-packed");
  OwningOpRef<ModuleOp> fused = parseHandFused(context);
  ASSERT_TRUE(fused);
  checkNvccCompiles(*fused, "fused");
}

/// BERT-large training (f16, dropout): every kernel of both phases, with
/// block reductions over 1024 and warp reductions over 512, compiles with
/// nvcc; the CPU module compiles with the host compiler.
TEST_F(EmitTest, BertLargeModulesCompile) {
  std::ifstream spec(testSourceDir() + "/../examples/bert-large.json");
  std::string json((std::istreambuf_iterator<char>(spec)),
                   std::istreambuf_iterator<char>());
  ASSERT_FALSE(json.empty());
  OwningOpRef<ModuleOp> module = compileSpec(context, json);
  ASSERT_TRUE(module);
  checkNvccCompiles(*module, "bert-large");
  LoadedModule loaded;
  EXPECT_TRUE(emitCompileLoad(*module, "bert-large", loaded));
}

/// The first error `emitModule` reports for `ir` (empty if it succeeds).
std::string emitError(MLIRContext &context, StringRef ir) {
  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(ir, &context);
  if (!module)
    return "<parse error>";
  std::string message;
  ScopedDiagnosticHandler handler(&context, [&](Diagnostic &diagnostic) {
    if (message.empty())
      message = diagnostic.str();
    return success();
  });
  if (succeeded(emitModule(*module, EmitTarget::Cuda, "m")))
    return "";
  return message;
}

TEST_F(EmitTest, UnfusedOpIsAnErrorNamingIt) {
  std::string message = emitError(context, R"mlir(
    sluice.graph @g(%x: !sluice.tensor<[i=8], f32> {sluice.name = "x"})
        -> (!sluice.tensor<[i=8], f32> {sluice.name = "y"}) {
      %y = sluice.map (%x) {sluice.name = "neg"} : (!sluice.tensor<[i=8], f32>) -> !sluice.tensor<[i=8], f32> {
      ^bb0(%v: f32):
        %n = arith.negf %v : f32
        sluice.yield %n : f32
      }
      sluice.return %y : !sluice.tensor<[i=8], f32>
    })mlir");
  EXPECT_NE(message.find("'sluice.map' op is not inside a sluice.kernel; run "
                         "--sluice-fuse"),
            std::string::npos)
      << message;
}

TEST_F(EmitTest, PackedGemmResultIsAnErrorNamingTheKernel) {
  std::string message = emitError(context, R"mlir(
    sluice.graph @g(%a: !sluice.tensor<[m=4, k=8], f32> {sluice.name = "a"},
                    %b: !sluice.tensor<[n=4, k=8], f32> {sluice.name = "b"})
        -> (!sluice.tensor<[m=4, n=4], f32> {sluice.name = "c"}) {
      %c = sluice.kernel (%a, %b) {kind = #sluice<kernel_kind gemm>, members = ["mm"], packed = array<i64: 0>, sluice.name = "mm"}
          : (!sluice.tensor<[m=4, k=8], f32>, !sluice.tensor<[n=4, k=8], f32>) -> !sluice.tensor<[m=4, n=4], f32> {
      ^bb0(%aa: !sluice.tensor<[m=4, k=8], f32>, %ba: !sluice.tensor<[n=4, k=8], f32>):
        %r = sluice.contract %aa, %ba : (!sluice.tensor<[m=4, k=8], f32>, !sluice.tensor<[n=4, k=8], f32>) -> !sluice.tensor<[m=4, n=4], f32>
        sluice.kernel_yield %r : !sluice.tensor<[m=4, n=4], f32>
      }
      sluice.return %c : !sluice.tensor<[m=4, n=4], f32>
    })mlir");
  EXPECT_NE(message.find("kernel 'mm'"), std::string::npos) << message;
  EXPECT_NE(message.find("bit-packed"), std::string::npos) << message;
}

TEST_F(EmitTest, ContractionWithoutGemmMappingIsAnError) {
  std::string message = emitError(context, R"mlir(
    sluice.graph @g(%q: !sluice.tensor<[b=2, j=4, h=2, p=4], f32> {sluice.name = "q"},
                    %k: !sluice.tensor<[b=2, k=4, h=2, p=4], f32> {sluice.name = "k"})
        -> (!sluice.tensor<[b=2, h=2, j=4, k=4], f32> {sluice.name = "s"}) {
      %s = sluice.kernel (%q, %k) {kind = #sluice<kernel_kind gemm>, members = ["qk"], sluice.name = "qk"}
          : (!sluice.tensor<[b=2, j=4, h=2, p=4], f32>, !sluice.tensor<[b=2, k=4, h=2, p=4], f32>)
          -> !sluice.tensor<[b=2, h=2, j=4, k=4], f32> {
      ^bb0(%qa: !sluice.tensor<[b=2, j=4, h=2, p=4], f32>, %ka: !sluice.tensor<[b=2, k=4, h=2, p=4], f32>):
        %c = sluice.contract %qa, %ka : (!sluice.tensor<[b=2, j=4, h=2, p=4], f32>, !sluice.tensor<[b=2, k=4, h=2, p=4], f32>) -> !sluice.tensor<[b=2, h=2, j=4, k=4], f32>
        sluice.kernel_yield %c : !sluice.tensor<[b=2, h=2, j=4, k=4], f32>
      }
      sluice.return %s : !sluice.tensor<[b=2, h=2, j=4, k=4], f32>
    })mlir");
  EXPECT_NE(message.find("kernel 'qk'"), std::string::npos) << message;
  EXPECT_NE(message.find("no strided-batched GEMM mapping"), std::string::npos)
      << message;
}

/// The emitted text depends only on the IR: emitting clones of the
/// BERT-large training module (other addresses, so other hash orders) gives
/// the same text, and no pointer argument is empty.
TEST_F(EmitTest, EmissionIsDeterministic) {
  std::ifstream spec(testSourceDir() + "/../examples/bert-large.json");
  std::string json((std::istreambuf_iterator<char>(spec)),
                   std::istreambuf_iterator<char>());
  OwningOpRef<ModuleOp> module = compileSpec(context, json);
  ASSERT_TRUE(module);
  std::string first;
  for (int round = 0; round < 4; ++round) {
    OwningOpRef<ModuleOp> clone = module->clone();
    for (EmitTarget target : {EmitTarget::Cuda, EmitTarget::Cpu}) {
      FailureOr<EmittedModule> emitted =
          emitModule(*clone, target, "bert-large");
      ASSERT_TRUE(succeeded(emitted));
      const std::string &text = emitted->files.front().contents;
      EXPECT_EQ(text.find(" *)()"), std::string::npos);
      if (target == EmitTarget::Cuda) {
        if (round == 0)
          first = text;
        EXPECT_EQ(text, first) << "round " << round;
      }
    }
  }
}

TEST(EmitNames, ModuleNameIsSanitized) {
  EXPECT_EQ(sanitizeModuleName("bert-large"), "bert_large");
  EXPECT_EQ(sanitizeModuleName("a.b c_1"), "a_b_c_1");
}

} // namespace
