//===- GreedyMerge.cpp - the fusion planner's search ----------------------===//
//
// The search half of the planner (GraphFuser.h): every primitive starts as
// its own group; the pair of groups (a producer and its consumer, or two
// groups reading the same tensor) whose merge saves the most bytes merges,
// while the merged group is one legal kernel and the kernels stay acyclic,
// until no merge saves bytes; then single ops move between neighbouring
// kernels while that saves bytes. A queue of candidates by saving and a
// topological order kept under merges (GroupOrder) make each step cost
// what it touches, so planning grows with the ops (FusionPlannerWorkTest).
//
//===----------------------------------------------------------------------===//

#include "GraphFuser.h"

#include "dialects/sluice/SluiceBuilders.h"

#include "llvm/ADT/SetVector.h"

#include <functional>
#include <set>

using namespace mlir;
using namespace mlir::sluice;
using namespace mlir::sluice::fusion;

SmallVector<unsigned> GraphFuser::successorsOf(unsigned group) const {
  llvm::SetVector<unsigned> successors;
  std::function<void(Value)> visitUsers = [&](Value value) {
    for (Operation *user : value.getUsers()) {
      if (auto rename = llvm::dyn_cast<RenameOp>(user)) {
        visitUsers(rename.getResult());
        continue;
      }
      auto it = indexOf.find(user);
      if (it == indexOf.end() || groupOf[it->second] < 0)
        continue;
      unsigned target = groupOf[it->second];
      if (target != group)
        successors.insert(target);
    }
  };
  for (unsigned index : groups[group].members)
    for (Value result : ops[index]->getResults())
      visitUsers(result);
  return successors.takeVector();
}

/// The groups reading a result of `group` (the inverse of successorsOf).
SmallVector<unsigned> GraphFuser::predecessorsOf(unsigned group) const {
  llvm::SetVector<unsigned> predecessors;
  for (unsigned index : groups[group].members)
    for (Value operand : ops[index]->getOperands()) {
      auto it = indexOf.find(resolveView(operand).getDefiningOp());
      if (it == indexOf.end() || groupOf[it->second] < 0)
        continue;
      unsigned source = groupOf[it->second];
      if (source != group)
        predecessors.insert(source);
    }
  return predecessors.takeVector();
}

/// The candidate merges of group `g` with its neighbours: its successors
/// and predecessors, and the groups reading a tensor it reads; each with
/// the bytes it saves, if it saves any.
void GraphFuser::pushCandidatesOf(unsigned g, MergeQueue &queue) {
  auto push = [&](unsigned first, unsigned second) {
    SmallVector<unsigned> members(groups[first].members);
    members.append(groups[second].members.begin(),
                   groups[second].members.end());
    llvm::sort(members);
    ++work.candidatesPriced;
    int64_t saving = static_cast<int64_t>(ownBytes[first]) +
                     static_cast<int64_t>(ownBytes[second]) -
                     static_cast<int64_t>(groupBytes(members));
    if (saving > 0)
      queue.push({saving, first, second, version[first], version[second]});
  };
  for (unsigned next : successorsOf(g))
    push(g, next);
  for (unsigned previous : predecessorsOf(g))
    push(previous, g);
  llvm::SmallDenseSet<Value, 8> sources;
  llvm::SmallDenseSet<unsigned, 8> partners;
  for (unsigned index : groups[g].members)
    for (Value operand : ops[index]->getOperands()) {
      Value source = resolveView(operand);
      if (!sources.insert(source).second)
        continue;
      for (unsigned reader : readersOf.lookup(source)) {
        int other = groupOf[reader];
        if (other >= 0 && static_cast<unsigned>(other) != g &&
            partners.insert(other).second)
          push(std::min<unsigned>(g, other), std::max<unsigned>(g, other));
      }
    }
}

/// Merges the pair of groups that saves the most bytes (ties: the smallest
/// pair of group numbers), as long as the merged group is one legal kernel
/// and the kernels stay acyclic, until no merge saves bytes. A queue of the
/// candidates by saving: a merge changes the savings of the merged group's
/// pairs only, which it pushes again; a pair that is illegal or closes a
/// cycle stays so until one of its groups changes.
void GraphFuser::fuseGreedily() {
  if (!options.enable)
    return;
  FailureOr<SmallVector<unsigned>> initial = topologicalOrder();
  if (failed(initial))
    return; // orderGroups reports the cycle.
  order.emplace(groups.size(), *initial);
  version.assign(groups.size(), 0);
  ownBytes.clear();
  for (const Group &group : groups)
    ownBytes.push_back(groupBytes(group.members));
  for (auto [index, op] : llvm::enumerate(ops))
    for (Value operand : op->getOperands()) {
      SmallVector<unsigned> &readers = readersOf[resolveView(operand)];
      if (readers.empty() || readers.back() != index)
        readers.push_back(index);
    }
  MergeQueue queue;
  for (unsigned g = 0; g < groups.size(); ++g)
    if (groups[g].alive)
      pushCandidatesOf(g, queue);

  auto successors = [&](unsigned g) { return successorsOf(g); };
  auto predecessors = [&](unsigned g) { return predecessorsOf(g); };
  while (!queue.empty()) {
    Candidate best = queue.top();
    queue.pop();
    unsigned first = best.first, second = best.second;
    if (!groups[first].alive || !groups[second].alive ||
        version[first] != best.firstVersion ||
        version[second] != best.secondVersion)
      continue; // Priced before one of them changed.
    Group &a = groups[first], &b = groups[second];
    // A library group only absorbs its consumers.
    Group merged;
    bool legal = b.library ? canMerge(b, a, merged) : canMerge(a, b, merged);
    if (!legal || order->reachesThroughOther(first, second, successors))
      continue;
    order->merge(first, second, successors, predecessors);
    merged.members.assign(a.members.begin(), a.members.end());
    merged.members.append(b.members.begin(), b.members.end());
    llvm::sort(merged.members);
    a = std::move(merged);
    for (unsigned index : a.members)
      groupOf[index] = first;
    b.alive = false;
    b.members.clear();
    ++version[first];
    ownBytes[first] = groupBytes(a.members);
    pushCandidatesOf(first, queue);
  }
}

/// The live groups in dependence order, or failure if their dataflow has a
/// cycle. Kahn's algorithm; among the ready groups, the one whose first
/// member comes first in the graph, which fixes the kernel numbering (k0,
/// k1, ...) every report shows. The one sort of the planner: the moves
/// check acyclicity with it and the plan's kernel order is its result.
FailureOr<SmallVector<unsigned>> GraphFuser::topologicalOrder() const {
  SmallVector<unsigned> live;
  for (unsigned g = 0; g < groups.size(); ++g)
    if (groups[g].alive && !groups[g].members.empty())
      live.push_back(g);
  DenseMap<unsigned, unsigned> inDegree;
  DenseMap<unsigned, SmallVector<unsigned>> successors;
  for (unsigned g : live) {
    inDegree.try_emplace(g, 0);
    for (unsigned next : successorsOf(g)) {
      successors[g].push_back(next);
      ++inDegree[next];
    }
  }
  // Regenerated masks add no edges: they are recomputed in place.
  std::set<std::pair<unsigned, unsigned>> ready;
  for (unsigned g : live)
    if (inDegree[g] == 0)
      ready.insert({groups[g].members.front(), g});
  SmallVector<unsigned> order;
  while (!ready.empty()) {
    unsigned g = ready.begin()->second;
    ready.erase(ready.begin());
    order.push_back(g);
    for (unsigned next : successors[g])
      if (--inDegree[next] == 0)
        ready.insert({groups[next].members.front(), next});
  }
  if (order.size() != live.size())
    return failure();
  return order;
}

/// True if the groups' dataflow has no cycle.
bool GraphFuser::isAcyclic() const { return succeeded(topologicalOrder()); }

/// After an op moved into group `to`: true if the groups are still acyclic
/// (then `to` gets its place in the order). The groups were acyclic before,
/// so a cycle would pass through `to` (GroupOrder::onCycle).
bool GraphFuser::staysAcyclicAfterMoveInto(unsigned to) {
  if (!order)
    return isAcyclic();
  auto successors = [&](unsigned g) { return successorsOf(g); };
  auto predecessors = [&](unsigned g) { return predecessorsOf(g); };
  if (order->onCycle(to, successors, predecessors))
    return false;
  order->place(to, successors, predecessors,
               [&] { return *topologicalOrder(); });
  return true;
}

/// Greedy merging can leave an op in the wrong one of two neighbouring
/// kernels (e.g. a full-size op that only needs a row statistic sits in the
/// kernel computing the statistic, so a full tensor crosses to its
/// consumer). Move single ops between fused producer/consumer kernels while
/// a move saves bytes and both kernels stay legal and the graph acyclic.
void GraphFuser::refineByMoves() {
  if (!options.enable)
    return;
  for (unsigned sweep = 0; sweep < 8; ++sweep) {
    bool improved = false;
    for (unsigned index = 0; index < ops.size(); ++index) {
      int from = groupOf[index];
      if (from < 0 || groups[from].library || groups[from].streaming ||
          groups[from].members.size() < 2)
        continue;
      // Candidate destinations: the fused groups next to this op.
      llvm::SetVector<unsigned> targets;
      for (Value operand : ops[index]->getOperands())
        if (Operation *producer = resolveView(operand).getDefiningOp())
          if (auto it = indexOf.find(producer);
              it != indexOf.end() && groupOf[it->second] >= 0)
            targets.insert(groupOf[it->second]);
      for (Operation *user : ops[index]->getUsers())
        if (auto it = indexOf.find(user);
            it != indexOf.end() && groupOf[it->second] >= 0)
          targets.insert(groupOf[it->second]);
      for (unsigned to : targets) {
        if (static_cast<int>(to) == from || groups[to].library ||
            groups[to].streaming)
          continue;
        SmallVector<unsigned> rest, grown(groups[to].members);
        for (unsigned member : groups[from].members)
          if (member != index)
            rest.push_back(member);
        grown.push_back(index);
        llvm::sort(grown);
        if (options.maxOps && grown.size() > options.maxOps)
          continue;
        Group restGroup, grownGroup;
        if (!describeFused(rest, restGroup) ||
            !describeFused(grown, grownGroup))
          continue;
        int64_t before =
            static_cast<int64_t>(groupBytes(groups[from].members)) +
            static_cast<int64_t>(groupBytes(groups[to].members));
        int64_t after = static_cast<int64_t>(groupBytes(rest)) +
                        static_cast<int64_t>(groupBytes(grown));
        if (after >= before)
          continue;
        Group oldFrom = groups[from], oldTo = groups[to];
        groups[from] = std::move(restGroup);
        groups[to] = std::move(grownGroup);
        groupOf[index] = to;
        if (!staysAcyclicAfterMoveInto(to)) {
          groups[from] = std::move(oldFrom);
          groups[to] = std::move(oldTo);
          groupOf[index] = from;
          continue;
        }
        improved = true;
        break;
      }
    }
    if (!improved)
      return;
  }
}
