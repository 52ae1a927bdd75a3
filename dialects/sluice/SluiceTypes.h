//===- SluiceTypes.h - sluice types -----------------------------*- C++ -*-===//

#ifndef SLUICE_DIALECT_SLUICETYPES_H
#define SLUICE_DIALECT_SLUICETYPES_H

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Types.h"

#define GET_TYPEDEF_CLASSES
#include "dialects/sluice/SluiceTypes.h.inc"

namespace mlir::sluice {
/// True for the element types a sluice tensor may hold (f32, f16, bf16).
bool isSupportedElementType(Type type);
} // namespace mlir::sluice

#endif // SLUICE_DIALECT_SLUICETYPES_H
