//===- SluiceDecompositions.h - composites as primitives --------*- C++ -*-===//
//
// The one way every client (the decompose and autodiff passes, the reference
// interpreter) replaces a composite by its decomposition.
//
//===----------------------------------------------------------------------===//

#ifndef SLUICE_DIALECT_SLUICEDECOMPOSITIONS_H
#define SLUICE_DIALECT_SLUICEDECOMPOSITIONS_H

#include "dialects/sluice/SluiceOps.h"

#include "mlir/IR/PatternMatch.h"

namespace mlir::sluice {

/// What replaced a decomposed composite.
struct DecomposedOp {
  /// The values that replaced the composite's results, one per result.
  SmallVector<Value> results;
  /// The primitives the decomposition created, in program order.
  SmallVector<Operation *> ops;
};

/// Builds `composite`'s decomposition just before it (map bodies in
/// `computeType`), replaces its uses and erases it. Fails, leaving the op in
/// place and emitting nothing itself, if the op cannot be decomposed.
FailureOr<DecomposedOp> decomposeInPlace(CompositeOpInterface composite,
                                         FloatType computeType);

/// The same through `rewriter` (the decomposition is built at `composite`,
/// and the replacement and erasure go through the rewriter), for patterns.
FailureOr<DecomposedOp> decomposeInPlace(RewriterBase &rewriter,
                                         CompositeOpInterface composite,
                                         FloatType computeType);

/// The float type a `compute-type` pass option names.
FloatType getComputeFloatType(MLIRContext *context, ComputeType computeType);

/// Adds the pattern that replaces every composite by its decomposition (map
/// bodies in `computeType`); each composite it cannot decompose is reported
/// at the op and counted in `failedOps`.
void populateDecompositionPatterns(RewritePatternSet &patterns,
                                   FloatType computeType, unsigned &failedOps);

} // namespace mlir::sluice

#endif // SLUICE_DIALECT_SLUICEDECOMPOSITIONS_H
