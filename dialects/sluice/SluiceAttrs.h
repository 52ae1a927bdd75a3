//===- SluiceAttrs.h - sluice attributes ------------------------*- C++ -*-===//

#ifndef SLUICE_DIALECT_SLUICEATTRS_H
#define SLUICE_DIALECT_SLUICEATTRS_H

#include "mlir/IR/Attributes.h"
#include "mlir/IR/BuiltinAttributes.h"

#include "dialects/sluice/SluiceEnums.h.inc"

#define GET_ATTRDEF_CLASSES
#include "dialects/sluice/SluiceAttrs.h.inc"

#endif // SLUICE_DIALECT_SLUICEATTRS_H
