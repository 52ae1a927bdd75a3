//===- SluiceAttrs.h - sluice attributes ------------------------*- C++ -*-===//

#ifndef SLUICE_DIALECT_SLUICEATTRS_H
#define SLUICE_DIALECT_SLUICEATTRS_H

#include "mlir/IR/Attributes.h"
#include "mlir/IR/BuiltinAttributes.h"

#include "dialects/sluice/SluiceEnums.h.inc"

#define GET_ATTRDEF_CLASSES
#include "dialects/sluice/SluiceAttrs.h.inc"

namespace mlir::sluice {
/// Whether `epilogue` adds a bias vector (bias, bias_relu, bias_gelu).
inline bool hasBias(Epilogue epilogue) {
  return epilogue == Epilogue::bias || epilogue == Epilogue::bias_relu ||
         epilogue == Epilogue::bias_gelu;
}
} // namespace mlir::sluice

#endif // SLUICE_DIALECT_SLUICEATTRS_H
