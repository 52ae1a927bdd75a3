//===- RunCompiled.h - run a layer with a compiled module -------*- C++ -*-===//
//
// The compiled backends of `sluicec run` (--backend cpu): the same named
// .npy tensors as the reference backend (Run.h), fed to a module compiled by
// `sluicec --compile` through its generic C entry points. Inputs are rounded
// to the module's boundary dtype; outputs are widened back to double.
//
//===----------------------------------------------------------------------===//

#ifndef SLUICE_DRIVER_RUNCOMPILED_H
#define SLUICE_DRIVER_RUNCOMPILED_H

#include "sluice/Codegen/LoadedModule.h"
#include "sluice/Driver/Run.h"

namespace mlir::sluice {

/// Runs the layer of `module` (which gives the names and logical shapes,
/// getRunSignature) on `inputs` with `library`: phase 0 (forward), then
/// phase 1 (backward) for training modules, with one `seed` for both, and
/// returns the outputs in signature order. Errors name the tensor at fault
/// (missing, extra or misshaped inputs exactly as runModule words them) or
/// a disagreement between the library and the layer.
llvm::Expected<std::vector<NamedArray>>
runCompiledModule(mlir::ModuleOp module, LoadedModule &library,
                  llvm::ArrayRef<NamedArray> inputs, uint64_t seed);

/// `values` rounded to `dtype` (nearest, ties to even) as little-endian
/// bytes.
std::vector<uint8_t> encodeTensor(llvm::ArrayRef<double> values,
                                  ModuleDType dtype);
/// The values of `bytes` holding `dtype` elements.
std::vector<double> decodeTensor(llvm::ArrayRef<uint8_t> bytes,
                                 ModuleDType dtype);

} // namespace mlir::sluice

#endif // SLUICE_DRIVER_RUNCOMPILED_H
