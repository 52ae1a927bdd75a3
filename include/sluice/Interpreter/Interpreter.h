//===- Interpreter.h - the reference interpreter ----------------*- C++ -*-===//
//
// Executes a verified sluice graph on the CPU, simply and obviously
// correctly: the numerical oracle for decomposition, autodiff, fusion and
// layout rewrites. Not a fast path.
//
//===----------------------------------------------------------------------===//

#ifndef SLUICE_INTERPRETER_INTERPRETER_H
#define SLUICE_INTERPRETER_INTERPRETER_H

#include "dialects/sluice/SluiceOps.h"

#include "llvm/Support/Error.h"

#include <cstdint>
#include <vector>

namespace mlir::sluice {

/// f64: every value computed and stored in double (the oracle for
/// derivative checks). f32: computed in float, and stored rounded to each
/// tensor's element type (f16/bf16 emulated by rounding).
enum class Precision { F64, F32 };

/// A tensor value: `data` holds the elements in row-major order of `type`'s
/// layout (the order its dimensions are written).
struct Buffer {
  mlir::sluice::NamedTensorType type;
  std::vector<double> data;
};

struct InterpreterOptions {
  Precision precision = Precision::F64;
  /// The dropout RNG seed (see Runtime/Philox.h).
  uint64_t seed = 0;
};

/// Runs `graph` on `inputs` (one per graph argument, in order, each of the
/// argument's exact type) and returns one buffer per graph result. Errors
/// name the argument or op at fault.
llvm::Expected<std::vector<Buffer>>
interpret(mlir::sluice::GraphOp graph, llvm::ArrayRef<Buffer> inputs,
          const InterpreterOptions &options);

} // namespace mlir::sluice

#endif // SLUICE_INTERPRETER_INTERPRETER_H
