//===- Run.h - execute a compiled layer on .npy tensors ---------*- C++ -*-===//
//
// The library behind `sluicec run`: feeds a module's forward graph (and, for
// training modules, its backward graph) with boundary tensors read from .npy
// files named by their canonical names, and returns the outputs by name.
//
//===----------------------------------------------------------------------===//

#ifndef SLUICE_DRIVER_RUN_H
#define SLUICE_DRIVER_RUN_H

#include "sluice/Interpreter/Interpreter.h"

#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/Error.h"

#include <string>
#include <vector>

namespace mlir::sluice {

/// A boundary tensor by canonical name, with its logical (PyTorch) shape.
struct NamedArray {
  std::string name;
  std::vector<int64_t> shape;
  std::vector<double> data;
};

/// The boundary tensors a run needs and produces.
struct RunSignature {
  /// The inputs (arguments of the forward graph, then the cotangents of the
  /// backward graph, e.g. `dy`).
  std::vector<NamedArray> inputs;
  /// The outputs (the forward results other than saved tensors, then the
  /// backward's gradients `d_<name>`); `data` is empty.
  std::vector<NamedArray> outputs;
};

/// What `module` takes and returns: a module with one forward graph
/// (inference), or a `<G>_forward` / `<G>_backward` pair (training).
llvm::Expected<RunSignature> getRunSignature(mlir::ModuleOp module);

/// Runs `module` on `inputs` (each named and shaped as getRunSignature says;
/// the order does not matter) with the reference interpreter, and returns
/// the outputs in signature order. Errors name the tensor at fault.
llvm::Expected<std::vector<NamedArray>>
runModule(mlir::ModuleOp module, llvm::ArrayRef<NamedArray> inputs,
          const InterpreterOptions &options);

} // namespace mlir::sluice

#endif // SLUICE_DRIVER_RUN_H
