//===- GroupOrder.cpp - a topological order kept valid under merges -------===//

#include "GroupOrder.h"

#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/STLExtras.h"

#include <limits>

using namespace mlir;
using namespace mlir::sluice::fusion;

GroupOrder::GroupOrder(unsigned numGroups, ArrayRef<unsigned> order)
    : position(numGroups, -1) {
  for (auto [index, group] : llvm::enumerate(order))
    position[group] = index;
}

bool GroupOrder::forwardWindow(unsigned from, unsigned to,
                               Neighbours successors,
                               SmallVectorImpl<unsigned> &reached) {
  // A successor of `from` sits after it; one after `to` cannot reach `to`.
  SmallVector<unsigned> stack = {from};
  llvm::DenseSet<unsigned> seen = {from};
  while (!stack.empty()) {
    unsigned current = stack.pop_back_val();
    ++visitCount;
    for (unsigned next : successors(current)) {
      if (next == to) {
        if (current != from)
          return true;
        continue;
      }
      if (position[next] > position[to] || !seen.insert(next).second)
        continue;
      reached.push_back(next);
      stack.push_back(next);
    }
  }
  return false;
}

void GroupOrder::backwardWindow(unsigned from, unsigned to,
                                Neighbours predecessors,
                                SmallVectorImpl<unsigned> &reaching) {
  SmallVector<unsigned> stack = {to};
  llvm::DenseSet<unsigned> seen = {to};
  while (!stack.empty()) {
    unsigned current = stack.pop_back_val();
    ++visitCount;
    for (unsigned previous : predecessors(current)) {
      if (previous == from || position[previous] < position[from] ||
          !seen.insert(previous).second)
        continue;
      reaching.push_back(previous);
      stack.push_back(previous);
    }
  }
}

bool GroupOrder::reachesThroughOther(unsigned a, unsigned b,
                                     Neighbours successors) {
  // In a topological order only the earlier one can reach the later one.
  if (position[a] > position[b])
    std::swap(a, b);
  SmallVector<unsigned> reached;
  return forwardWindow(a, b, successors, reached);
}

void GroupOrder::merge(unsigned kept, unsigned removed, Neighbours successors,
                       Neighbours predecessors) {
  unsigned first = kept, last = removed;
  if (position[first] > position[last])
    std::swap(first, last);
  // Between the two, the groups `first` reaches must follow the merged
  // group and the groups reaching `last` precede it; no group is both (that
  // would be a path through a third group). Both sets move within the
  // positions they and the pair hold, in their own order: the reached ones
  // only later, the reaching ones only earlier, so every other edge keeps
  // its direction (Pearce and Kelly's argument).
  SmallVector<unsigned> after, before;
  forwardWindow(first, last, successors, after);
  backwardWindow(first, last, predecessors, before);
  auto byPosition = [&](unsigned x, unsigned y) {
    return position[x] < position[y];
  };
  llvm::sort(after, byPosition);
  llvm::sort(before, byPosition);
  SmallVector<double> pool = {position[first], position[last]};
  for (unsigned group : after)
    pool.push_back(position[group]);
  for (unsigned group : before)
    pool.push_back(position[group]);
  llvm::sort(pool);
  unsigned next = 0;
  for (unsigned group : before)
    position[group] = pool[next++];
  position[kept] = pool[next++];
  ++next; // The removed group's place stays empty.
  for (unsigned group : after)
    position[group] = pool[next++];
  position[removed] = -1;
}

bool GroupOrder::onCycle(unsigned group, Neighbours successors,
                         Neighbours predecessors) {
  // Every edge but those of `group` runs forward, so a path back to `group`
  // ends at one of its predecessors: nothing placed after the last of them
  // can start one.
  double last = -std::numeric_limits<double>::infinity();
  for (unsigned previous : predecessors(group))
    last = std::max(last, position[previous]);
  SmallVector<unsigned> stack = {group};
  llvm::DenseSet<unsigned> seen = {group};
  while (!stack.empty()) {
    unsigned current = stack.pop_back_val();
    ++visitCount;
    for (unsigned next : successors(current)) {
      if (next == group)
        return true;
      if (position[next] > last || !seen.insert(next).second)
        continue;
      stack.push_back(next);
    }
  }
  return false;
}

void GroupOrder::place(unsigned group, Neighbours successors,
                       Neighbours predecessors,
                       llvm::function_ref<SmallVector<unsigned>()> fullOrder) {
  constexpr double kNone = std::numeric_limits<double>::infinity();
  double after = -kNone, before = kNone;
  for (unsigned previous : predecessors(group))
    after = std::max(after, position[previous]);
  for (unsigned next : successors(group))
    before = std::min(before, position[next]);
  double &place = position[group];
  if (after < place && place < before)
    return;
  double middle = after == -kNone   ? before - 1
                  : before == kNone ? after + 1
                                    : after + (before - after) / 2;
  if (after < middle && middle < before) {
    place = middle;
    return;
  }
  for (auto [index, live] : llvm::enumerate(fullOrder()))
    position[live] = index;
}
