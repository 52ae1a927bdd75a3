//===- ScalarBody.h - evaluating a sluice.map body --------------*- C++ -*-===//
//
// A map body compiled once into a flat list of scalar instructions, then
// evaluated per element. Internal to the interpreter.
//
//===----------------------------------------------------------------------===//

#ifndef SLUICE_LIB_INTERPRETER_SCALARBODY_H
#define SLUICE_LIB_INTERPRETER_SCALARBODY_H

#include "sluice/Interpreter/Interpreter.h"

#include "dialects/sluice/ScalarOps.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <vector>

namespace mlir::sluice {

/// One scalar: floats live in `f`, integers, indices and i1 in `i`.
struct Scalar {
  double f = 0;
  int64_t i = 0;
};

/// The body of a `sluice.map`, ready to evaluate.
class ScalarBody {
public:
  /// Compiles `map`'s body; fails naming the first op it cannot evaluate.
  /// In Precision::F32 every float result is rounded to its type; in
  /// Precision::F64 nothing is rounded.
  static llvm::Expected<ScalarBody> compile(mlir::sluice::MapOp map,
                                            Precision precision);

  /// Evaluates the body on one element: `floats` has one value per map
  /// input, `indices` one position per `index_dims` entry.
  double evaluate(llvm::ArrayRef<double> floats,
                  llvm::ArrayRef<int64_t> indices);

  /// One instruction; public only so the compiler in ScalarBody.cpp can
  /// build it.
  struct Instruction {
    mlir::sluice::ScalarOpcode opcode;
    unsigned result;
    unsigned operands[3];
    /// A constant, or a predicate number.
    Scalar immediate;
    /// The result's float type (rounding) or integer width.
    mlir::Type type;
  };

private:
  std::vector<Instruction> instructions;
  std::vector<Scalar> slots;
  /// The float block arguments' types (the body may take an input narrower
  /// than its tensor; f32 mode rounds to it).
  std::vector<mlir::Type> argTypes;
  unsigned numFloatArgs = 0, numIndexArgs = 0, yielded = 0;
  Precision precision = Precision::F64;
};

} // namespace mlir::sluice

#endif // SLUICE_LIB_INTERPRETER_SCALARBODY_H
