//===- SluiceDialect.cpp - the sluice dialect -----------------------------===//

#include "dialects/sluice/SluiceDialect.h"
#include "dialects/sluice/SluiceOps.h"

#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::sluice;

#include "dialects/sluice/SluiceDialect.cpp.inc"
#include "dialects/sluice/SluiceEnums.cpp.inc"
#include "dialects/sluice/SluiceInterfaces.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "dialects/sluice/SluiceAttrs.cpp.inc"

void SluiceDialect::initialize() {
  registerTypes();
  addAttributes<
#define GET_ATTRDEF_LIST
#include "dialects/sluice/SluiceAttrs.cpp.inc"
      >();
  addOperations<
#define GET_OP_LIST
#include "dialects/sluice/SluiceOps.cpp.inc"
      >();
}
