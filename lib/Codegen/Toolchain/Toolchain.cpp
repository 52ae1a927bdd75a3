//===- Toolchain.cpp - finding and running the compilers ------------------===//

#include "sluice/Codegen/Toolchain.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdlib>
#include <optional>

using namespace llvm;

static Error makeError(const Twine &message) {
  return createStringError(inconvertibleErrorCode(), message);
}

static bool isExecutableFile(StringRef path) {
  return sys::fs::exists(path) && !sys::fs::is_directory(path) &&
         sys::fs::can_execute(path);
}

static std::optional<std::string> getEnv(const char *name) {
  const char *value = std::getenv(name);
  if (!value || !*value)
    return std::nullopt;
  return std::string(value);
}

/// `program` as given when it is a path, else looked up on PATH.
static std::optional<std::string> resolve(StringRef program) {
  if (program.contains('/'))
    return isExecutableFile(program) ? std::optional<std::string>(program.str())
                                     : std::nullopt;
  ErrorOr<std::string> found = sys::findProgramByName(program);
  if (!found)
    return std::nullopt;
  return *found;
}

namespace mlir::sluice {

Expected<std::string> findNvcc() {
  if (std::optional<std::string> fromEnv = getEnv("SLUICE_NVCC")) {
    if (std::optional<std::string> path = resolve(*fromEnv))
      return *path;
    return makeError("SLUICE_NVCC is '" + *fromEnv +
                     "', which is not an executable file");
  }
  if (std::optional<std::string> path = resolve("nvcc"))
    return *path;
  if (isExecutableFile("/usr/local/cuda/bin/nvcc"))
    return std::string("/usr/local/cuda/bin/nvcc");
  return makeError("cannot find nvcc (looked at $SLUICE_NVCC, PATH and "
                   "/usr/local/cuda/bin/nvcc); install the CUDA toolkit, set "
                   "SLUICE_NVCC, or pass --no-cuda");
}

Expected<std::string> findHostCompiler() {
  for (const char *variable : {"SLUICE_CXX", "CXX"}) {
    if (std::optional<std::string> fromEnv = getEnv(variable)) {
      if (std::optional<std::string> path = resolve(*fromEnv))
        return *path;
      return makeError(Twine(variable) + " is '" + *fromEnv +
                       "', which is not an executable file");
    }
  }
  for (StringRef name : {"c++", "g++", "clang++"})
    if (std::optional<std::string> path = resolve(name))
      return *path;
  return makeError("cannot find a host C++ compiler (looked at $SLUICE_CXX, "
                   "$CXX and c++, g++, clang++ on PATH); install one, set "
                   "SLUICE_CXX, or pass --no-cpu");
}

/// True if `compiler` builds `program` into a shared library with `flags`.
static bool probe(StringRef compiler, StringRef scratchDir, StringRef name,
                  StringRef program, ArrayRef<std::string> flags) {
  SmallString<256> source(scratchDir), output(scratchDir);
  sys::path::append(source, "probe-" + name + ".cpp");
  sys::path::append(output, "probe-" + name + ".so");
  {
    std::error_code code;
    raw_fd_ostream os(source, code);
    if (code)
      return false;
    os << program;
  }
  std::vector<std::string> command = {compiler.str(), "-shared",
                                      "-fPIC",        std::string(source),
                                      "-o",           std::string(output)};
  command.insert(command.end(), flags.begin(), flags.end());
  Error error = runTool(command, "probe");
  bool ok = !error;
  consumeError(std::move(error));
  sys::fs::remove(source);
  sys::fs::remove(output);
  return ok;
}

HostFeatures probeHostFeatures(StringRef compiler, StringRef scratchDir) {
  HostFeatures features;
  features.openmp =
      probe(compiler, scratchDir, "openmp",
            "#include <omp.h>\nextern \"C\" int f() { int n = 0;\n"
            "#pragma omp parallel for reduction(+ : n)\n"
            "for (int i = 0; i < 4; ++i) n += omp_get_num_threads();\n"
            "return n; }\n",
            {"-fopenmp"});
  std::string gemm = getEnv("SLUICE_CPU_GEMM").value_or("");
  features.dnnl =
      (gemm.empty() || gemm == "dnnl") &&
      probe(compiler, scratchDir, "dnnl",
            "#include <oneapi/dnnl/dnnl.h>\nextern \"C\" void f(float *c) {\n"
            "dnnl_sgemm('N', 'N', 1, 1, 1, 1.0f, c, 1, c, 1, 0.0f, c, 1); }\n",
            {"-ldnnl", "-Wl,--no-undefined"});
  features.openblas =
      (gemm.empty() || gemm == "openblas") &&
      probe(compiler, scratchDir, "openblas",
            "#include <cblas.h>\nextern \"C\" void f(float *c) {\n"
            "cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, 1, 1, 1,"
            " 1.0f, c, 1, c, 1, 0.0f, c, 1); }\n",
            {"-lopenblas", "-Wl,--no-undefined"});
  features.sleef =
      probe(compiler, scratchDir, "sleef",
            "extern \"C\" float _ZGVbN4v_expf(float);\n"
            "extern \"C\" void *f() { return (void *)&_ZGVbN4v_expf; }\n",
            {"-lsleefgnuabi", "-Wl,--no-undefined"});
  return features;
}

bool isCpuArch(StringRef arch) {
  return !arch.empty() && llvm::isAlnum(arch.front()) &&
         llvm::all_of(arch, [](char c) {
    return llvm::isAlnum(c) || c == '-' || c == '_' || c == '.';
  });
}

std::vector<std::string> nvccCommand(StringRef nvcc, StringRef source,
                                     StringRef output, StringRef arch) {
  // -cudart shared: the CUDA runtime is the toolkit's libcudart.so, which
  // every machine that runs the module has beside libcublas, rather than a
  // static copy (~1 MB) in every module (the GPU kit's size, docs/GPU.md);
  // and one runtime per process, shared with a caller that uses its own.
  return {nvcc.str(),   "-O3",        "-std=c++17", ("-arch=" + arch).str(),
          "-shared",    "-Xcompiler", "-fPIC",      "-cudart",
          "shared",     source.str(), "-o",         output.str(),
          "-lcublasLt", "-lcublas"};
}

std::vector<std::string> hostCommand(StringRef compiler, StringRef source,
                                     StringRef output,
                                     const HostFeatures &features,
                                     StringRef cpuArch) {
  // -fno-math-errno: nothing reads errno, and without it expf/logf are not
  // pure functions, so a loop calling them does not vectorize.
  // -fno-trapping-math: nothing reads the floating-point exception flags;
  // without it GCC may not compute both sides of a select unconditionally
  // (an operation "could trap"), so on targets without masked vector
  // instructions (AVX2, SSE) the SIMD loops calling sluice_expf/erff/tanhf
  // stay scalar with branches. Values are unchanged (no reassociation, NaN
  // and signed zeros honoured). docs/Codegen.md, "CPU backend".
  std::vector<std::string> command = {
      compiler.str(),      "-O3",   "-std=c++17",
      "-shared",           "-fPIC", "-fno-math-errno",
      "-fno-trapping-math"};
  if (cpuArch != kCpuArchPortable) {
    command.push_back(("-march=" + cpuArch).str());
#if defined(__x86_64__)
    // Where -march has AVX-512, GCC still vectorizes with 256-bit registers
    // unless told otherwise, while Philox.h's draws and the streaming
    // kernels' register blocks are written for 512 (docs/Codegen.md, "CPU
    // backend": 5% off BERT-base's step, the memory-bound kernels 10%, on a
    // Xeon). No effect without AVX-512; SLUICE_CXXFLAGS (after this) can
    // say 256.
    command.push_back("-mprefer-vector-width=512");
#endif
  }
  if (features.openmp)
    command.push_back("-fopenmp");
  if (features.sleef)
    command.push_back("-DSLUICE_HAVE_SLEEF");
  if (features.dnnl)
    command.push_back("-DSLUICE_HAVE_DNNL");
  if (features.openblas)
    command.push_back("-DSLUICE_HAVE_CBLAS");
  if (std::optional<std::string> extra = getEnv("SLUICE_CXXFLAGS")) {
    SmallVector<StringRef> words;
    StringRef(*extra).split(words, ' ', -1, /*KeepEmpty=*/false);
    for (StringRef word : words)
      command.push_back(word.str());
  }
  command.insert(command.end(), {source.str(), "-o", output.str()});
  if (features.sleef)
    command.push_back("-lsleefgnuabi");
  if (features.dnnl)
    command.push_back("-ldnnl");
  if (features.openblas)
    command.push_back("-lopenblas");
  return command;
}

/// The last `limit` characters of `text`, marked as cut when they are not
/// all of it.
static std::string tail(StringRef text, size_t limit) {
  text = text.rtrim();
  if (text.size() <= limit)
    return text.str();
  return "[... " + std::to_string(text.size() - limit) + " characters cut]\n" +
         text.take_back(limit).str();
}

Error runTool(ArrayRef<std::string> command, StringRef what) {
  assert(!command.empty() && "no program");
  SmallString<256> log;
  if (std::error_code code =
          sys::fs::createTemporaryFile("sluice-tool", "log", log))
    return makeError("cannot " + what +
                     ": cannot create a log file: " + code.message());
  std::string commandLine = llvm::join(command, " ");
  SmallVector<StringRef> args(command.begin(), command.end());
  std::optional<StringRef> redirects[] = {StringRef(""), StringRef(log),
                                          StringRef(log)};
  std::string message;
  bool executionFailed = false;
  int status = sys::ExecuteAndWait(
      command.front(), args, std::nullopt, redirects, /*SecondsToWait=*/0,
      /*MemoryLimit=*/0, &message, &executionFailed);
  std::string output;
  if (ErrorOr<std::unique_ptr<MemoryBuffer>> buffer =
          MemoryBuffer::getFile(log))
    output = (*buffer)->getBuffer().str();
  sys::fs::remove(log);
  if (executionFailed)
    return makeError("cannot " + what + ": cannot run '" + command.front() +
                     "': " + message);
  if (status != 0) {
    std::string reason = status < 0
                             ? "crashed (" + message + ")"
                             : "exited with status " + std::to_string(status);
    return makeError("cannot " + what + ": '" + command.front() + "' " +
                     reason + "\ncommand: " + commandLine + "\n" +
                     tail(output, 8000));
  }
  return Error::success();
}

bool isCudaArch(StringRef arch) {
  StringRef digits = arch;
  // sm_90a, sm_100f: nvcc's architecture- and family-specific feature sets
  // (the spec accepts sm_90a).
  if (digits.ends_with("a") || digits.ends_with("f"))
    digits = digits.drop_back();
  return digits.consume_front("sm_") && !digits.empty() &&
         llvm::all_of(digits, llvm::isDigit);
}

} // namespace mlir::sluice
