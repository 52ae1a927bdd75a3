//===- FloatRounding.cpp - rounding doubles to storage types --------------===//

#include "sluice/Interpreter/FloatRounding.h"

#include "mlir/IR/BuiltinTypes.h"

#include <cmath>

using namespace mlir::sluice;

/// Rounds `value` to a binary format with `precision` significant bits
/// (counting the implicit one), smallest normal exponent `minExponent` and
/// largest exponent `maxExponent`, ties to even. Scaling by powers of two is
/// exact in double for every format used here, and std::nearbyint rounds
/// ties to even in the default rounding mode.
static double roundToFormat(double value, int precision, int minExponent,
                            int maxExponent) {
  if (!std::isfinite(value) || value == 0)
    return value;
  int exponent = std::max(std::ilogb(value), minExponent);
  int quantum = exponent - (precision - 1);
  double rounded =
      std::ldexp(std::nearbyint(std::ldexp(value, -quantum)), quantum);
  double largest =
      std::ldexp(2.0 - std::ldexp(1.0, 1 - precision), maxExponent);
  if (std::fabs(rounded) > largest)
    return std::copysign(INFINITY, value);
  return rounded;
}

double mlir::sluice::roundToF32(double value) {
  return static_cast<double>(static_cast<float>(value));
}

double mlir::sluice::roundToF16(double value) {
  return roundToFormat(value, 11, -14, 15);
}

double mlir::sluice::roundToBF16(double value) {
  return roundToFormat(value, 8, -126, 127);
}

double mlir::sluice::roundToType(double value, mlir::Type type) {
  if (type.isF32())
    return roundToF32(value);
  if (type.isF16())
    return roundToF16(value);
  if (type.isBF16())
    return roundToBF16(value);
  return value;
}
