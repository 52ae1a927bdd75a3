//===- ScalarOps.h - the scalar ops of a sluice.map body --------*- C++ -*-===//
//
// The typed view of dialects/sluice/ScalarOps.def: which arith/math op an
// operation is, and how the C printers spell it. The interpreter, the
// emitters and the derivative rules all classify body ops through
// getScalarOpcode, so an op is supported everywhere or nowhere by name.
//
//===----------------------------------------------------------------------===//

#ifndef SLUICE_DIALECT_SCALAROPS_H
#define SLUICE_DIALECT_SCALAROPS_H

#include "mlir/IR/Operation.h"
#include "llvm/ADT/StringRef.h"

namespace mlir::sluice {

/// One scalar op of a map body (ScalarOps.def's NAME column).
enum class ScalarOpcode : unsigned {
  Unsupported,
#define SLUICE_SCALAR_OP(NAME, OP, PRINT, SPELLING) NAME,
#include "dialects/sluice/ScalarOps.def"
};

/// How the C printers spell an op (ScalarOps.def's PRINT column).
enum class ScalarPrint { Infix, Prefix, Math, Helper, Cast, UCast, Custom, None };

/// The opcode of `op`, or Unsupported when the table does not list it.
ScalarOpcode getScalarOpcode(Operation *op);

/// The PRINT column of `opcode` (None for Unsupported).
ScalarPrint getScalarPrint(ScalarOpcode opcode);

/// The SPELLING column of `opcode` ("" where the printers spell it by hand).
llvm::StringRef getScalarSpelling(ScalarOpcode opcode);

} // namespace mlir::sluice

#endif // SLUICE_DIALECT_SCALAROPS_H
