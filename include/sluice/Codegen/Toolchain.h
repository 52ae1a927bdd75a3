//===- Toolchain.h - compiling emitted modules into libraries ---*- C++ -*-===//
//
// Finds nvcc and the host C++ compiler, probes what the host compiler can do
// (OpenMP, OpenBLAS) and compiles one emitted source file into a shared
// library. Every failure is an llvm::Error naming the tool, the command line
// and, for a failed compile, the compiler's own output.
// docs/Compile.md describes the flags.
//
//===----------------------------------------------------------------------===//

#ifndef SLUICE_CODEGEN_TOOLCHAIN_H
#define SLUICE_CODEGEN_TOOLCHAIN_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <string>
#include <vector>

namespace mlir::sluice {

/// nvcc: $SLUICE_NVCC when set, else `nvcc` on PATH, else
/// /usr/local/cuda/bin/nvcc. Fails (naming every place looked at) when none
/// is an executable file.
llvm::Expected<std::string> findNvcc();

/// The host C++ compiler: $SLUICE_CXX, else $CXX, else `c++`, `g++` or
/// `clang++` on PATH.
llvm::Expected<std::string> findHostCompiler();

/// What the host compiler can use, found by compiling tiny programs.
struct HostFeatures {
  /// `-fopenmp` compiles and links.
  bool openmp = false;
  /// <cblas.h> compiles and `-lopenblas` links.
  bool openblas = false;
  /// <oneapi/dnnl/dnnl.h> compiles and `-ldnnl` links (libdnnl-dev): f32
  /// GEMMs then use oneDNN's dnnl_sgemm, preferred to OpenBLAS.
  bool dnnl = false;
  /// SLEEF's vector math in the GNU vector-function ABI
  /// (`-lsleefgnuabi`, Debian's libsleef-dev) links: map bodies then call
  /// its vector exp/erf/tanh/log (docs/Codegen.md, "CPU backend").
  bool sleef = false;
};

/// What the CPU module is compiled for: `native` (-march=native: modules
/// built and run on the same machine), `portable` (the compiler's default
/// x86-64 baseline: artifacts that travel), or any other -march value
/// (`x86-64-v3`, `skylake-avx512`).
inline constexpr llvm::StringLiteral kCpuArchNative = "native";
inline constexpr llvm::StringLiteral kCpuArchPortable = "portable";

/// True if `arch` is `native`, `portable` or a plausible -march value
/// (letters, digits, '-', '_', '.').
bool isCpuArch(llvm::StringRef arch);

/// Probes `compiler` in `scratchDir` (an existing, writable directory).
/// A probe that fails only turns its feature off. $SLUICE_CPU_GEMM picks
/// the GEMM library by hand: `dnnl`, `openblas` or `loops` (neither);
/// unset, both where present (oneDNN for f32, OpenBLAS for f16/bf16).
HostFeatures probeHostFeatures(llvm::StringRef compiler,
                               llvm::StringRef scratchDir);

/// The nvcc command line that compiles `source` into the shared library
/// `output` for `arch` (for example "sm_80"), linking cuBLAS and cuBLASLt.
std::vector<std::string> nvccCommand(llvm::StringRef nvcc,
                                     llvm::StringRef source,
                                     llvm::StringRef output,
                                     llvm::StringRef arch);

/// The host compiler command line that compiles `source` into the shared
/// library `output`: -O3 for `cpuArch` (see kCpuArchNative), plus -fopenmp,
/// -DSLUICE_HAVE_SLEEF -lsleefgnuabi, -DSLUICE_HAVE_DNNL -ldnnl and
/// -DSLUICE_HAVE_CBLAS -lopenblas when `features` has them, plus the words
/// of $SLUICE_CXXFLAGS (for example -DSLUICE_PROFILE) before the source.
std::vector<std::string>
hostCommand(llvm::StringRef compiler, llvm::StringRef source,
            llvm::StringRef output, const HostFeatures &features,
            llvm::StringRef cpuArch = kCpuArchPortable);

/// Runs `command` (the program first) and waits. Fails when it cannot start
/// or exits non-zero; the error says `what` was being done, quotes the
/// command line and the tail of its combined stdout and stderr.
llvm::Error runTool(llvm::ArrayRef<std::string> command, llvm::StringRef what);

/// True if `arch` is a CUDA target sluicec compiles for ("sm_<digits>",
/// optionally with nvcc's "a" or "f" feature suffix: sm_90a, sm_100f).
bool isCudaArch(llvm::StringRef arch);

} // namespace mlir::sluice

#endif // SLUICE_CODEGEN_TOOLCHAIN_H
