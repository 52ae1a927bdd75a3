//===- ExecDialect.h - the emission-level dialect ---------------*- C++ -*-===//

#ifndef SLUICE_EXEC_EXECDIALECT_H
#define SLUICE_EXEC_EXECDIALECT_H

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/DialectImplementation.h"

#include "dialects/sluice_exec/ExecDialect.h.inc"
#include "dialects/sluice_exec/ExecEnums.h.inc"

#define GET_TYPEDEF_CLASSES
#include "dialects/sluice_exec/ExecTypes.h.inc"

#define GET_ATTRDEF_CLASSES
#include "dialects/sluice_exec/ExecAttrs.h.inc"

#endif // SLUICE_EXEC_EXECDIALECT_H
