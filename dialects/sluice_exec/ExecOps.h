//===- ExecOps.h - sluice_exec operations -----------------------*- C++ -*-===//

#ifndef SLUICE_EXEC_EXECOPS_H
#define SLUICE_EXEC_EXECOPS_H

#include "dialects/sluice_exec/ExecDialect.h"

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#define GET_OP_CLASSES
#include "dialects/sluice_exec/ExecOps.h.inc"

namespace mlir::sluice::exec {
/// Fails at `op` unless `label` can go into a C string literal and a printf
/// format.
LogicalResult verifyLabel(Operation *op, StringRef label);
} // namespace mlir::sluice::exec

#endif // SLUICE_EXEC_EXECOPS_H
