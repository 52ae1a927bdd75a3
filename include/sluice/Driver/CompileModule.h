//===- CompileModule.h - emit and compile a layer's modules -----*- C++ -*-===//
//
// `sluicec --compile`: emits the CUDA and the portable C++ module of a
// compiled layer and builds each into a shared library (nvcc and the host
// compiler, sluice/Codegen/Toolchain.h), in a private temporary directory.
// Nothing is written to the output directory here: the caller gets every
// file (sources, headers, runtime headers, libraries) and writes them all or
// nothing with writeOutputFiles. docs/Compile.md describes the result.
//
//===----------------------------------------------------------------------===//

#ifndef SLUICE_DRIVER_COMPILEMODULE_H
#define SLUICE_DRIVER_COMPILEMODULE_H

#include "sluice/Driver/OutputFiles.h"

#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/Error.h"

#include <string>
#include <vector>

namespace mlir::sluice {

struct MemoryPlan;

struct CompileOptions {
  /// Emit <name>.cu and build lib<name>.so with nvcc.
  bool cuda = true;
  /// Emit <name>_cpu.cpp and build lib<name>_cpu.so with the host compiler.
  bool cpu = true;
  /// The CUDA architecture ("sm_80", "sm_90"): nvcc -arch.
  std::string arch = "sm_80";
  /// What the CPU module is compiled for (kCpuArchNative, kCpuArchPortable
  /// or a -march value): artifacts default to portable.
  std::string cpuArch = "portable";
};

/// The file name of the CUDA library of module `name`: lib<N>.so, where <N>
/// is `name` as the emitter spells its files (every character outside
/// [A-Za-z0-9_] replaced by '_': bert-large -> libbert_large.so).
std::string getCudaLibraryName(llvm::StringRef name);
/// The file name of the CPU library of module `name` (lib<N>_cpu.so).
std::string getCpuLibraryName(llvm::StringRef name);

/// Emits and compiles `module` (the pipeline's output) as `name`, with its
/// tensors where `plan` (the pipeline's memory plan of `module`, the one the
/// report shows) puts them; null plans it again. Emitter
/// errors are reported as diagnostics on the module and turn into an error
/// that says which target failed; tool errors quote the compiler's output.
llvm::Expected<std::vector<OutputFile>>
compileModule(mlir::ModuleOp module, llvm::StringRef name,
              const CompileOptions &options, const MemoryPlan *plan = nullptr);

/// Emits and compiles only the CPU module of `module` into `directory` (an
/// existing directory) and returns the library's path: what
/// `sluicec run --backend cpu` loads when no --module is given. The module
/// runs where it is built, so it defaults to -march=native. `plan` as for
/// compileModule.
llvm::Expected<std::string> buildCpuLibrary(mlir::ModuleOp module,
                                            llvm::StringRef name,
                                            llvm::StringRef directory,
                                            llvm::StringRef cpuArch = "native",
                                            const MemoryPlan *plan = nullptr);

} // namespace mlir::sluice

#endif // SLUICE_DRIVER_COMPILEMODULE_H
