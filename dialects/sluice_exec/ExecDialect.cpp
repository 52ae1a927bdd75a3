//===- ExecDialect.cpp - the emission-level dialect -----------------------===//

#include "dialects/sluice_exec/ExecDialect.h"
#include "dialects/sluice_exec/ExecOps.h"

#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::sluice::exec;

#include "dialects/sluice_exec/ExecDialect.cpp.inc"
#include "dialects/sluice_exec/ExecEnums.cpp.inc"

#define GET_TYPEDEF_CLASSES
#include "dialects/sluice_exec/ExecTypes.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "dialects/sluice_exec/ExecAttrs.cpp.inc"

void ExecDialect::initialize() {
  addTypes<
#define GET_TYPEDEF_LIST
#include "dialects/sluice_exec/ExecTypes.cpp.inc"
      >();
  addAttributes<
#define GET_ATTRDEF_LIST
#include "dialects/sluice_exec/ExecAttrs.cpp.inc"
      >();
  addOperations<
#define GET_OP_LIST
#include "dialects/sluice_exec/ExecOps.cpp.inc"
      >();
}
