//===- FloatRounding.h - rounding doubles to storage types ------*- C++ -*-===//
//
// How the interpreter's f32 mode emulates narrow storage: a double is rounded
// to the nearest value of the target format, ties to even, with subnormals,
// overflow to infinity and NaN kept. Rounding is done once, from double, so
// there is no double-rounding error.
//
//===----------------------------------------------------------------------===//

#ifndef SLUICE_INTERPRETER_FLOATROUNDING_H
#define SLUICE_INTERPRETER_FLOATROUNDING_H

#include "mlir/IR/Types.h"

namespace mlir::sluice {

/// `value` rounded to IEEE binary32 (float).
double roundToF32(double value);

/// `value` rounded to IEEE binary16 (half): 11 significant bits, exponents
/// -14..15, largest finite 65504.
double roundToF16(double value);

/// `value` rounded to bfloat16: 8 significant bits, binary32's exponent
/// range. For a value that is a float, this is round-to-nearest-even of the
/// float's top 16 bits.
double roundToBF16(double value);

/// `value` rounded to the float type `type` (f16, bf16, f32; f64 and any
/// other type leave it unchanged).
double roundToType(double value, mlir::Type type);

} // namespace mlir::sluice

#endif // SLUICE_INTERPRETER_FLOATROUNDING_H
