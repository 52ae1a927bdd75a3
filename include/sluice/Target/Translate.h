//===- Translate.h - sluice_exec printed as CUDA or C++ ---------*- C++ -*-===//
//
// The two printers of the emission-level dialect (dialects/sluice_exec), one
// print function per op, and their registration as translations
// (`sluice-translate --sluice-to-cuda` / `--sluice-to-cpp`).
// docs/Codegen.md ("Emission IR") describes what each op prints.
//
//===----------------------------------------------------------------------===//

#ifndef SLUICE_TARGET_TRANSLATE_H
#define SLUICE_TARGET_TRANSLATE_H

#include "sluice/Target/HostEmitter.h"

#include "dialects/sluice_exec/ExecOps.h"

#include "mlir/IR/BuiltinOps.h"

namespace mlir::sluice::target {

/// Prints one sluice_exec op for CUDA (cuBLAS, cuBLASLt) into `emitter`.
LogicalResult printCudaOperation(HostEmitter &emitter, Operation *op);

/// Prints one sluice_exec op for the portable C++ backend.
LogicalResult printCppOperation(HostEmitter &emitter, Operation *op);

/// Prints an op both targets print alike: the pointer ops (nothing: they
/// are expressions, printed where used) and the timers. Fails with a
/// diagnostic naming `targetName` for any other op.
LogicalResult printSharedOperation(HostEmitter &emitter, Operation *op,
                                   StringRef targetName);

/// The first lines of a GEMM: its comment, `{` and alpha; leaves the body
/// one level further in (the caller closes it).
void printGemmHeading(raw_indented_ostream &os, exec::GemmOp op);

/// A launch's comment, then `printClear(pointer, bytes)` for every output
/// it clears first. Fails if a pointer cannot be printed.
LogicalResult
printLaunchHeading(raw_indented_ostream &os, exec::LaunchOp op,
                   function_ref<void(StringRef, int64_t)> printClear);

/// The arguments of a kernel call: `((const T *)(in), ..., (T *)(out), ...,
/// args->seed)`, then `extra` when not empty. Fails if a pointer cannot be
/// printed.
LogicalResult printLaunchArguments(raw_indented_ostream &os, exec::LaunchOp op,
                                   StringRef extra = {});

/// Prints a streaming attention: the args struct of sluice_stream.h filled
/// from the op, then the call of the runtime kernel of the target (`cuda`:
/// its launch, checked). Fails if the op's tiles are not the target's.
LogicalResult printAttention(HostEmitter &emitter, exec::AttentionOp op,
                             bool cuda);

/// Prints every `sluice_exec.entry` under `root` with `print`, each as its
/// own section after the module sections it needs (context fields, create,
/// destroy), as comment-headed blocks.
LogicalResult
translateEntries(Operation *root, raw_ostream &os,
                 function_ref<LogicalResult(HostEmitter &, Operation *)> print);

/// Makes the sluice_exec entries of `module` printable
/// (--sluice-legalize-for-emission): args fields as C identifiers,
/// cuBLASLt descriptor slots numbered in module order, arena offsets
/// checked for 16-byte alignment. Fails with a diagnostic at the op.
LogicalResult legalizeForEmission(ModuleOp module);

/// Registers `--sluice-legalize-for-emission`.
void registerTargetPasses();

/// Registers `--sluice-to-cuda` and `--sluice-to-cpp`.
void registerToCudaTranslation();
void registerToCppTranslation();

} // namespace mlir::sluice::target

#endif // SLUICE_TARGET_TRANSLATE_H
