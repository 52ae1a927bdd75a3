//===- GraphFuser.h - the fusion planner of one graph -----------*- C++ -*-===//
//
// The planner behind planFusion (FusionPlan.h), split by concept:
// FusionPlanner.cpp sets it up, counts a candidate kernel's bytes, decides
// legality and places the random masks; GreedyMerge.cpp is the search (the
// greedy merges by bytes saved, then single-op moves, both keeping the
// kernels acyclic through GroupOrder). Internal to
// dialects/sluice/Transforms.
//
//===----------------------------------------------------------------------===//

#ifndef SLUICE_DIALECT_TRANSFORMS_GRAPHFUSER_H
#define SLUICE_DIALECT_TRANSFORMS_GRAPHFUSER_H

#include "FusionPlan.h"
#include "GroupOrder.h"

#include <optional>
#include <queue>

namespace mlir::sluice::fusion {

/// The fusion of one graph.
class GraphFuser {
public:
  GraphFuser(GraphOp graph, const FuseOptions &options)
      : graph(graph), options(options) {}

  /// Plans the kernels; the fuser is spent afterwards.
  FailureOr<FusionPlan> run();

private:
  // Setup.
  void collectOps();
  void formStreamingGroups(FusionPlan &plan);
  void releaseStreamingMasks(const Group &group);
  bool isMask(unsigned op) const { return llvm::isa<RandomMaskOp>(ops[op]); }

  // The accounting of a set of ops run as one kernel.
  uint64_t groupBytes(ArrayRef<unsigned> members) const;
  uint64_t inputBytes(Value value) const;

  // Legality.
  bool canMerge(const Group &a, const Group &b, Group &merged) const;
  bool canMergeFused(const Group &a, const Group &b, Group &merged) const;
  bool canFoldEpilogue(const Group &library, const Group &consumer,
                       Group &merged) const;
  bool readsThroughRename(const Group &reader, const Group &producer) const;
  bool fitsResident(const Group &group) const;

  // The greedy loop.
  /// A merge the greedy loop may take: the groups (`first` kept) and the
  /// bytes it saves, priced at the groups' versions.
  struct Candidate {
    int64_t saving;
    unsigned first, second;
    unsigned firstVersion, secondVersion;
    /// Queue order: the larger saving, then the smaller pair, comes first.
    bool operator<(const Candidate &other) const {
      if (saving != other.saving)
        return saving < other.saving;
      return std::make_pair(first, second) >
             std::make_pair(other.first, other.second);
    }
  };
  using MergeQueue = std::priority_queue<Candidate>;
  void pushCandidatesOf(unsigned g, MergeQueue &queue);
  void fuseGreedily();
  void refineByMoves();
  FailureOr<SmallVector<unsigned>> topologicalOrder() const;
  bool isAcyclic() const;
  bool staysAcyclicAfterMoveInto(unsigned to);
  bool describeFused(ArrayRef<unsigned> members, Group &group) const;
  SmallVector<unsigned> successorsOf(unsigned group) const;
  SmallVector<unsigned> predecessorsOf(unsigned group) const;

  // Mask placement and the kernel order.
  void placeMasks(FusionPlan &plan);
  LogicalResult orderGroups(FusionPlan &plan);

  GraphOp graph;
  FuseOptions options;
  /// The computing ops of the body (no renames, no terminator), in order.
  SmallVector<Operation *> ops;
  DenseMap<Operation *, unsigned> indexOf;
  SmallVector<Group> groups;
  /// Group of each op (masks: none until placed).
  SmallVector<int> groupOf;
  /// The greedy loop's state: each group's version (bumped when it
  /// changes), its bytes as a kernel, and the ops reading each tensor.
  SmallVector<unsigned> version;
  SmallVector<uint64_t> ownBytes;
  DenseMap<Value, SmallVector<unsigned>> readersOf;
  PlannerWork work;
  /// A topological order of the groups, kept by the greedy loop and the
  /// moves (none if the groups started cyclic).
  std::optional<GroupOrder> order;
};

} // namespace mlir::sluice::fusion

#endif // SLUICE_DIALECT_TRANSFORMS_GRAPHFUSER_H
