//===- Emit.h - CUDA and portable C++ modules from fused IR ------*- C++
//-*-===//
//
// Lowers a module after --sluice-fuse (every computing op at a graph's top
// level is a sluice.kernel; renames are views) to a self-contained source
// directory: the kernels (one shared emitter core for both targets; only
// the parallel mapping differs), the host entry points of the C ABI, the
// header, and the runtime headers they include. docs/Codegen.md ("Emitted
// code") gives the ABI.
//
//===----------------------------------------------------------------------===//

#ifndef SLUICE_CODEGEN_EMIT_H
#define SLUICE_CODEGEN_EMIT_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "mlir/Support/LLVM.h"

#include <string>
#include <vector>

namespace mlir::sluice {

struct MemoryPlan;

enum class EmitTarget { Cuda, Cpu };

struct EmittedFile {
  std::string name;
  std::string contents;
};

struct EmittedModule {
  /// `name` with every character outside [A-Za-z0-9_] replaced by '_'.
  std::string moduleName;
  /// Everything the directory needs to compile on its own: the source
  /// (<name>.cu or <name>_cpu.cpp), its header (<name>.h or <name>_cpu.h)
  /// and the runtime headers.
  std::vector<EmittedFile> files;
  /// The names (within `files`) of the source and the header.
  std::string sourceFile, headerFile;
};

/// Emits `module` for `target` as module `name` (the spec's name). Tensors
/// live where `plan` says: the memory plan of this very module, made once by
/// the pipeline (Compilation::memoryPlan) and shared with the report; without
/// one the emitter plans the module itself (sluice-opt, tests). The module is
/// only read. Fails with a diagnostic naming the op (e.g. an unfused op, a
/// bit-packed result, a contraction with no GEMM mapping). `cudaArch` is the
/// architecture the CUDA module will be compiled for ("sm_90"; it picks the
/// streaming kernels' tiles); empty: the module's `sluice.target`.
FailureOr<EmittedModule> emitModule(ModuleOp module, EmitTarget target,
                                    StringRef name,
                                    const MemoryPlan *plan = nullptr,
                                    StringRef cudaArch = {});

/// The emission-level IR of `module` for `target`: one sluice_exec.entry
/// per phase (what emitModule prints), verified. The generated kernels the
/// launches name are not part of it. `plan` as for emitModule. Fails like
/// emitModule.
FailureOr<OwningOpRef<ModuleOp>> lowerToExec(ModuleOp module, EmitTarget target,
                                             StringRef name,
                                             const MemoryPlan *plan = nullptr);

/// Registers the passes of code generation: `--sluice-lower-to-exec`
/// (lowerToExec as a pass).
void registerEmitPasses();

/// `name` with every character outside [A-Za-z0-9_] replaced by '_'.
std::string sanitizeModuleName(StringRef name);

/// The stem of the emitted files (`<stem>.cu`, `lib<stem>.so`): the layer's
/// name as given when it is a plain file name ([A-Za-z0-9._-], not starting
/// with '.' or '-'), so bert-large gives bert-large.cu; else the C name.
std::string moduleFileStem(StringRef name);

/// The name of a module that did not come from a spec: its `sluice.spec`
/// attribute, else its forward graph's name without a `_forward` suffix.
StringRef defaultModuleName(ModuleOp module);

} // namespace mlir::sluice

#endif // SLUICE_CODEGEN_EMIT_H
