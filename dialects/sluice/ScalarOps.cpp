//===- ScalarOps.cpp - the scalar ops of a sluice.map body ----------------===//

#include "dialects/sluice/ScalarOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::sluice;

ScalarOpcode mlir::sluice::getScalarOpcode(Operation *op) {
  return llvm::TypeSwitch<Operation *, ScalarOpcode>(op)
#define SLUICE_SCALAR_OP(NAME, OP, PRINT, SPELLING)                            \
  .Case([](OP) { return ScalarOpcode::NAME; })
#include "dialects/sluice/ScalarOps.def"
      .Default([](Operation *) { return ScalarOpcode::Unsupported; });
}

ScalarPrint mlir::sluice::getScalarPrint(ScalarOpcode opcode) {
  switch (opcode) {
  case ScalarOpcode::Unsupported:
    return ScalarPrint::None;
#define SLUICE_SCALAR_OP(NAME, OP, PRINT, SPELLING)                            \
  case ScalarOpcode::NAME:                                                     \
    return ScalarPrint::PRINT;
#include "dialects/sluice/ScalarOps.def"
  }
  return ScalarPrint::None;
}

llvm::StringRef mlir::sluice::getScalarSpelling(ScalarOpcode opcode) {
  switch (opcode) {
  case ScalarOpcode::Unsupported:
    return "";
#define SLUICE_SCALAR_OP(NAME, OP, PRINT, SPELLING)                            \
  case ScalarOpcode::NAME:                                                     \
    return SPELLING;
#include "dialects/sluice/ScalarOps.def"
  }
  return "";
}
