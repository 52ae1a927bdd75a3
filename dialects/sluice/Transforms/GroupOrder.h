//===- GroupOrder.h - a topological order kept valid under merges -*- C++
//-*-===//
//
// The fusion planner merges groups of ops only while their dataflow stays
// acyclic: merging a and b is legal unless one reaches the other through a
// third group. Searching the whole graph for that path at every merge makes
// planning quadratic in the ops. GroupOrder keeps a topological order of the
// groups (Pearce and Kelly's dynamic topological order, applied to merges),
// so a path from a to b can only run through groups placed between them:
// the search visits that window only, and the merge reorders only the groups
// in it that the merge constrains. A move of one op between two groups is
// checked the same way (a cycle must pass through the group that grew) and
// gives that group a place between its neighbours. Internal to
// dialects/sluice/Transforms.
//
//===----------------------------------------------------------------------===//

#ifndef SLUICE_DIALECT_TRANSFORMS_GROUPORDER_H
#define SLUICE_DIALECT_TRANSFORMS_GROUPORDER_H

#include "mlir/Support/LLVM.h"

#include "llvm/ADT/ArrayRef.h"

#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/SmallVector.h"

#include <cstdint>

namespace mlir::sluice::fusion {

class GroupOrder {
public:
  /// The groups adjacent to a group (its successors, or its predecessors).
  using Neighbours = llvm::function_ref<SmallVector<unsigned>(unsigned)>;

  /// Starts from `order`, a topological order of the live groups (indices
  /// below `numGroups`).
  GroupOrder(unsigned numGroups, ArrayRef<unsigned> order);

  /// True if `a` reaches `b`, or `b` reaches `a`, through a third group.
  bool reachesThroughOther(unsigned a, unsigned b, Neighbours successors);

  /// Places the merge of `kept` and `removed` (not reaching each other
  /// through a third group) at one position, before every group the merged
  /// group reaches and after every group reaching it. Call before the
  /// neighbours change, with the neighbours of the graph before the merge.
  void merge(unsigned kept, unsigned removed, Neighbours successors,
             Neighbours predecessors);

  /// True if `group`, which just gained an op that another group lost, now
  /// lies on a cycle. Every other group keeps its place: the one that lost
  /// the op only lost edges, or gained edges with `group`.
  bool onCycle(unsigned group, Neighbours successors, Neighbours predecessors);

  /// Gives `group` (after onCycle found none) a place after its
  /// predecessors and before its successors; where its neighbours leave no
  /// room between them, every group takes its index in `fullOrder()`, a
  /// topological order of the live groups.
  void place(unsigned group, Neighbours successors, Neighbours predecessors,
             llvm::function_ref<SmallVector<unsigned>()> fullOrder);

  /// Where `group` stands: a group reaching another stands before it.
  double placeOf(unsigned group) const { return position[group]; }

  /// Groups visited by the searches so far (the planner's work counter).
  uint64_t visited() const { return visitCount; }

private:
  /// The groups `from` reaches, not through `to`, placed between them
  /// (`from` before `to`). Stops early, returning true, if `to` is reached
  /// through one of them.
  bool forwardWindow(unsigned from, unsigned to, Neighbours successors,
                     SmallVectorImpl<unsigned> &reached);
  /// The groups reaching `to`, not through `from`, placed between them.
  void backwardWindow(unsigned from, unsigned to, Neighbours predecessors,
                      SmallVectorImpl<unsigned> &reaching);

  /// Each group's place: only their order matters; a moved group may sit
  /// between two others (so not integers).
  SmallVector<double> position;
  uint64_t visitCount = 0;
};

} // namespace mlir::sluice::fusion

#endif // SLUICE_DIALECT_TRANSFORMS_GROUPORDER_H
