//===- SluicePasses.h - sluice passes ---------------------------*- C++ -*-===//

#ifndef SLUICE_DIALECT_SLUICEPASSES_H
#define SLUICE_DIALECT_SLUICEPASSES_H

#include "dialects/sluice/SluiceOps.h"
#include "mlir/Pass/Pass.h"

namespace mlir::sluice {
#define GEN_PASS_DECL
#include "dialects/sluice/SluicePasses.h.inc"

#define GEN_PASS_REGISTRATION
#include "dialects/sluice/SluicePasses.h.inc"
} // namespace mlir::sluice

#endif // SLUICE_DIALECT_SLUICEPASSES_H
