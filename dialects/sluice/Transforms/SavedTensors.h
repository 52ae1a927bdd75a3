//===- SavedTensors.h - the tensors a forward saves for its backward -*- C++ -*-===//
//
// A forward graph returns, after its own results, the tensors its backward
// graph reads (`sluice.saved = "<forward value>"` on the forward result and
// the backward argument alike). SavedTensors looks them up, adds and removes
// them, keeping both graphs' signatures and the forward's return in step.
// Internal to dialects/sluice/Transforms.
//
//===----------------------------------------------------------------------===//

#ifndef SLUICE_DIALECT_TRANSFORMS_SAVEDTENSORS_H
#define SLUICE_DIALECT_TRANSFORMS_SAVEDTENSORS_H

#include "dialects/sluice/SluiceOps.h"

namespace mlir::sluice {

/// The saved tensors between `forward` and `backward`.
class SavedTensors {
public:
  SavedTensors(GraphOp forward, GraphOp backward)
      : forward(forward), backward(backward) {}

  /// The backward argument holding the forward value `value`, or null if
  /// the forward does not save it.
  BlockArgument lookup(Value value);
  /// The backward argument holding `value` or a relayout or rename of it
  /// (the same elements in another layout or under other names: a map
  /// reads either by name), or null.
  BlockArgument lookupView(Value value);
  /// Saves `value` under `name` (made unique) unless it is saved already;
  /// returns its backward argument.
  BlockArgument save(Value value, StringRef name);
  /// Stops saving `value`; its backward argument must be unused.
  LogicalResult unsave(Value value);

private:
  /// The forward result index saving `value`, if any.
  std::optional<unsigned> resultIndex(Value value);
  /// The backward argument whose `sluice.saved` is `source`, if any.
  std::optional<unsigned> argumentIndex(StringRef source);

  GraphOp forward, backward;
};

} // namespace mlir::sluice

#endif // SLUICE_DIALECT_TRANSFORMS_SAVEDTENSORS_H
