//===- SluiceOps.h - sluice operations --------------------------*- C++ -*-===//

#ifndef SLUICE_DIALECT_SLUICEOPS_H
#define SLUICE_DIALECT_SLUICEOPS_H

#include "dialects/sluice/SluiceAttrs.h"
#include "dialects/sluice/SluiceDialect.h"
#include "dialects/sluice/SluiceTypes.h"

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/CallInterfaces.h"
#include "mlir/Interfaces/ControlFlowInterfaces.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "dialects/sluice/SluiceInterfaces.h.inc"

namespace mlir::sluice {
class GraphOp;
class MapOp;
class ReturnOp;
class YieldOp;
} // namespace mlir::sluice

#define GET_OP_CLASSES
#include "dialects/sluice/SluiceOps.h.inc"

#endif // SLUICE_DIALECT_SLUICEOPS_H
