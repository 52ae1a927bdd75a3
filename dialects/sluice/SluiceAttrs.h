//===- SluiceAttrs.h - sluice attributes ------------------------*- C++ -*-===//

#ifndef SLUICE_DIALECT_SLUICEATTRS_H
#define SLUICE_DIALECT_SLUICEATTRS_H

#include "mlir/IR/Attributes.h"
#include "mlir/IR/BuiltinAttributes.h"

#include <optional>

#include "dialects/sluice/SluiceEnums.h.inc"

#define GET_ATTRDEF_CLASSES
#include "dialects/sluice/SluiceAttrs.h.inc"

namespace mlir {
class Operation;
} // namespace mlir

namespace mlir::sluice {
/// The origin kind recorded on `op` (`sluice.origin_kind`), if any.
std::optional<OriginKind> getOriginKind(Operation *op);

/// Whether `op` records origin kind `kind`.
inline bool hasOriginKind(Operation *op, OriginKind kind) {
  return getOriginKind(op) == kind;
}

/// Records `kind` as `op`'s origin kind.
void setOriginKind(Operation *op, OriginKind kind);

/// The origin kind that `op` itself stands for: its mnemonic (a composite's
/// or a primitive's). Fails for ops that have none (graph structure ops).
std::optional<OriginKind> getOriginKindOfOp(Operation *op);

/// Whether `epilogue` adds a bias vector (bias, bias_relu, bias_gelu,
/// bias_gelu_aux).
inline bool hasBias(Epilogue epilogue) {
  return epilogue == Epilogue::bias || epilogue == Epilogue::bias_relu ||
         epilogue == Epilogue::bias_gelu || epilogue == Epilogue::bias_gelu_aux;
}
} // namespace mlir::sluice

#endif // SLUICE_DIALECT_SLUICEATTRS_H
