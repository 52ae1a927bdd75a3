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

#include "mlir/IR/BuiltinOps.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringMap.h"

#include <string>

namespace mlir::sluice {

/// The saved tensors between `forward` and `backward`.
class SavedTensors {
public:
  SavedTensors(GraphOp forward, GraphOp backward);

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
  /// Re-reads the source of `value` from the forward's return (after one of
  /// its results was removed).
  void indexResult(Value value);

  GraphOp forward, backward;
  /// The backward argument of each saved source (the first), and the
  /// source of each saved forward value (its first result): lookups without
  /// scanning the signatures, which grow with the layers.
  llvm::StringMap<BlockArgument> argumentOf;
  llvm::DenseMap<Value, std::string> sourceOf;
};

/// The module's forward and backward graph, if it is exactly one such pair
/// (what the rewrites between a forward and its backward work on).
std::optional<std::pair<GraphOp, GraphOp>> forwardBackwardPair(ModuleOp module);

/// Records every graph's framework baseline (`sluice.baseline_bytes`,
/// docs/Accounting.md) unless it has one, as --sluice-fuse will see the
/// graph (broadcasts forwarded): a rewrite that changes what the forward
/// saves runs it first, since a framework saves what the layer wrote.
LogicalResult recordBaselines(ModuleOp module);

} // namespace mlir::sluice

#endif // SLUICE_DIALECT_TRANSFORMS_SAVEDTENSORS_H
