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

LogicalResult
SluiceDialect::verifyOperationAttribute(Operation *op,
                                        NamedAttribute attribute) {
  if (attribute.getName() == getOriginKindAttrName() &&
      !llvm::isa<OriginKindAttr>(attribute.getValue()))
    return op->emitOpError()
           << "expects '" << getOriginKindAttrName()
           << "' to be an origin kind (#sluice<origin_kind ...>), got "
           << attribute.getValue();
  return success();
}

std::optional<OriginKind> mlir::sluice::getOriginKind(Operation *op) {
  if (auto kind = op->getAttrOfType<OriginKindAttr>(
          SluiceDialect::getOriginKindAttrName()))
    return kind.getValue();
  return std::nullopt;
}

void mlir::sluice::setOriginKind(Operation *op, OriginKind kind) {
  op->setAttr(SluiceDialect::getOriginKindAttrName(),
              OriginKindAttr::get(op->getContext(), kind));
}

std::optional<OriginKind> mlir::sluice::getOriginKindOfOp(Operation *op) {
  if (!llvm::isa_and_present<SluiceDialect>(op->getDialect()))
    return std::nullopt;
  return symbolizeOriginKind(op->getName().stripDialect());
}
