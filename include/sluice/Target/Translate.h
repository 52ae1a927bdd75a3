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

namespace mlir::sluice::target {

/// Prints one sluice_exec op for CUDA (cuBLAS, cuBLASLt) into `emitter`.
LogicalResult printCudaOperation(HostEmitter &emitter, Operation *op);

/// Prints one sluice_exec op for the portable C++ backend.
LogicalResult printCppOperation(HostEmitter &emitter, Operation *op);

/// Prints every `sluice_exec.entry` under `root` with `print`, each as its
/// own section after the module sections it needs (context fields, create,
/// destroy), as comment-headed blocks.
LogicalResult
translateEntries(Operation *root, raw_ostream &os,
                 function_ref<LogicalResult(HostEmitter &, Operation *)> print);

/// Registers `--sluice-to-cuda` and `--sluice-to-cpp`.
void registerToCudaTranslation();
void registerToCppTranslation();

} // namespace mlir::sluice::target

#endif // SLUICE_TARGET_TRANSLATE_H
