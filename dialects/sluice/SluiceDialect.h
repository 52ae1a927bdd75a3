//===- SluiceDialect.h - the sluice dialect ---------------------*- C++ -*-===//

#ifndef SLUICE_DIALECT_SLUICEDIALECT_H
#define SLUICE_DIALECT_SLUICEDIALECT_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/Dialect.h"

#include "dialects/sluice/SluiceDialect.h.inc"

#endif // SLUICE_DIALECT_SLUICEDIALECT_H
