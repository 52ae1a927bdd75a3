//===- LoadedModule.h - a compiled module opened with dlopen ----*- C++ -*-===//
//
// A shared library emitted by sluicec (CUDA lib<name>.so or CPU
// lib<name>_cpu.so), used through the generic C entry points every emitted
// module exports (sluice_module_name, sluice_num_phases, sluice_tensor,
// sluice_create, sluice_run, ...; docs/Compile.md). The module's own
// description of its tensors is checked when it is loaded, so a caller never
// reads past what the module declares.
//
//===----------------------------------------------------------------------===//

#ifndef SLUICE_CODEGEN_LOADEDMODULE_H
#define SLUICE_CODEGEN_LOADEDMODULE_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace mlir::sluice {

/// Element types of boundary tensors, numbered as in sluice_runtime.h.
enum class ModuleDType { F32 = 0, F16 = 1, BF16 = 2 };

/// Bytes per element of `dtype`.
unsigned getByteWidth(ModuleDType dtype);
/// "f32", "f16" or "bf16".
llvm::StringRef stringifyModuleDType(ModuleDType dtype);

/// One boundary tensor of a phase, as the module declares it.
struct ModuleTensor {
  std::string name;
  ModuleDType dtype = ModuleDType::F32;
  /// Sizes in layout order (row-major).
  std::vector<int64_t> dims;
  /// True if the phase writes it, false if it reads it.
  bool isOutput = false;
  int64_t getNumElements() const;
};

/// Which kind of module a caller can run: a CUDA lib<name>.so (it links
/// cuBLAS), a CPU lib<name>_cpu.so, or either.
enum class ModuleKind { Any, Cpu, Cuda };

/// An opened module with one context (saved and scratch regions, library
/// handles) of its own, or one whose scratch region is shared
/// (useSharedScratch).
///
/// Threading: a context (one LoadedModule) runs one phase at a time; it must
/// not be used from two threads, or on two CUDA streams, at once (its
/// regions, the cuBLAS handles and the last-error text are the context's).
/// Distinct LoadedModules of the same library have distinct contexts and may
/// run concurrently from different threads (CPU) or on different streams
/// (CUDA), unless they share a scratch region: those must run one at a time.
/// The module has no other mutable state except the text of a failed
/// sluice_create.
class LoadedModule {
public:
  /// Opens `path`, resolves the generic entry points, reads every phase's
  /// tensor list and creates a context. Errors name the path and what was
  /// missing or malformed, or carry the module's sluice_last_error text.
  /// A module of the other kind than `expected` is refused before any of
  /// its code runs, with a message naming both kinds.
  static llvm::Expected<std::unique_ptr<LoadedModule>>
  load(llvm::StringRef path, ModuleKind expected = ModuleKind::Any);
  ~LoadedModule();
  LoadedModule(const LoadedModule &) = delete;
  LoadedModule &operator=(const LoadedModule &) = delete;

  llvm::StringRef getPath() const { return path; }
  /// sluice_module_name().
  llvm::StringRef getName() const { return name; }
  /// 1 (inference) or 2 (training: forward, then backward).
  unsigned getNumPhases() const { return phases.size(); }
  /// The tensors of `phase` in sluice_tensor order.
  llvm::ArrayRef<ModuleTensor> getTensors(unsigned phase) const {
    return phases[phase];
  }

  /// sluice_run(ctx, phase, tensors, seed, stream): `tensors` holds one
  /// pointer per getTensors(phase) entry. A non-zero status becomes an
  /// error with the status's name and the module's last-error text.
  llvm::Error run(unsigned phase, llvm::ArrayRef<void *> tensors, uint64_t seed,
                  void *stream = nullptr);

  /// sluice_abi_version(): 1 for a module from before it existed (one arena
  /// per context, no shared scratch).
  int getAbiVersion() const { return abiVersion; }
  /// sluice_saved_bytes() and sluice_scratch_bytes() (0 for ABI version 1).
  uint64_t getSavedBytes() const { return savedBytes; }
  uint64_t getScratchBytes() const { return scratchBytes; }

  /// Replaces the context by one whose scratch region is `scratch`
  /// (sluice_create_shared): `bytes` long, at least getScratchBytes(),
  /// 256-byte aligned, device memory for a CUDA module, alive as long as
  /// this module. LoadedModules sharing one scratch must never run at the
  /// same time. Errors carry the module's message (too small, misaligned)
  /// or say that an ABI version 1 module cannot share.
  llvm::Error useSharedScratch(void *scratch, uint64_t bytes);

  /// The address of the exported symbol `symbol`, or null.
  void *lookup(llvm::StringRef symbol) const;

private:
  LoadedModule() = default;
  struct EntryPoints;
  /// Resolves the entry points of ABI version 2 into `entry` when `module`
  /// exports sluice_abi_version; fails on another version or a missing one.
  static llvm::Error resolveVersion2(LoadedModule &module, EntryPoints &entry);

  std::string path;
  std::string name;
  std::vector<std::vector<ModuleTensor>> phases;
  void *handle = nullptr;
  void *context = nullptr;
  std::unique_ptr<EntryPoints> entry;
  int abiVersion = 1;
  uint64_t savedBytes = 0, scratchBytes = 0;
};

} // namespace mlir::sluice

#endif // SLUICE_CODEGEN_LOADEDMODULE_H
