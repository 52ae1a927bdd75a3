//===- Autodiff.h - reverse-mode autodiff internals -------------*- C++ -*-===//
//
// Private to --sluice-autodiff: the state the per-primitive VJP rules
// (AutodiffRules.cpp) share with the graph construction (Autodiff.cpp), and
// the symbolic derivative of a map's scalar body (ScalarDerivative.cpp).
// See docs/Autodiff.md.
//
//===----------------------------------------------------------------------===//

#ifndef SLUICE_DIALECT_TRANSFORMS_AUTODIFF_H
#define SLUICE_DIALECT_TRANSFORMS_AUTODIFF_H

#include "dialects/sluice/SluiceOps.h"

#include "mlir/IR/Builders.h"

namespace mlir::sluice::autodiff {

/// What a VJP rule may ask of the backward graph under construction. The
/// builder inserts at the end of the backward graph's body.
class BackwardContext {
public:
  virtual ~BackwardContext() = default;

  /// The builder, positioned where the rule's ops go.
  virtual OpBuilder &getBuilder() = 0;
  /// The float type map bodies built by the rules compute in.
  virtual FloatType getComputeType() = 0;
  /// The forward value `forward` in the backward graph: a saved tensor (a new
  /// backward argument the first time) or a recomputation (random masks and
  /// other ops without operands).
  virtual Value getPrimal(Value forward) = 0;
  /// True if getPrimal(forward) would add no new saved tensor.
  virtual bool isPrimalAvailable(Value forward) = 0;
  /// True if `forward` depends on a graph argument, so it needs a gradient.
  virtual bool needsGradient(Value forward) = 0;
  /// Adds `contribution` (of exactly `forward`'s type) to the gradient of
  /// `forward`, summing contributions with `addf` maps.
  virtual void accumulate(Value forward, Value contribution) = 0;
};

/// Sets the report name (`sluice.name`) of the op defining `value`.
void setOpName(Value value, const Twine &name);

/// The report name of `op` (empty if it has none).
StringRef getOpName(Operation *op);

/// Builds the vector-Jacobian product of primitive `op` (map, reduce,
/// contract, random_mask, relayout, rename) for the cotangent `cotangent` of
/// its result, accumulating into the context the gradients of the operands
/// that need one. New ops are named after `op` ("<name>.grad_lhs", ...).
LogicalResult buildVjp(Operation *op, Value cotangent,
                       BackwardContext &context);

/// Builds at `builder`'s insertion point the partial derivative of the value
/// yielded by `forwardBody` (a map body) with respect to its float argument
/// `wrt`. `args` gives the new values standing for the body's arguments (one
/// per argument, floats then indices). If `output` is non-null it stands for
/// the yielded value wherever the derivative reads it (e.g. d exp(u) reads
/// exp(u)), instead of recomputing it. Returns a null value when the
/// derivative is identically zero, and fails (with a diagnostic at the
/// offending op) on an op it cannot differentiate.
FailureOr<Value> buildPartialDerivative(OpBuilder &builder, Location loc,
                                        Block &forwardBody, unsigned wrt,
                                        ValueRange args, Value output);

} // namespace mlir::sluice::autodiff

#endif // SLUICE_DIALECT_TRANSFORMS_AUTODIFF_H
