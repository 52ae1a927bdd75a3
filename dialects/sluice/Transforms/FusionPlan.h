//===- FusionPlan.h - the fusion planner and kernel outlining ---*- C++ -*-===//
//
// --sluice-fuse in two steps: the planner (FusionPlanner.cpp) chooses the
// kernels of one graph -- the byte accounting of a candidate kernel,
// legality, the greedy merge search, single-op moves and the placement of
// random masks -- and returns them as a FusionPlan; the outlining rewrite
// (KernelOutlining.cpp) replaces each planned group by one sluice.kernel.
// Internal to dialects/sluice/Transforms.
//
//===----------------------------------------------------------------------===//

#ifndef SLUICE_DIALECT_TRANSFORMS_FUSIONPLAN_H
#define SLUICE_DIALECT_TRANSFORMS_FUSIONPLAN_H

#include "StreamingChain.h"

#include "dialects/sluice/SluiceOps.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallVector.h"

#include <map>
#include <optional>
#include <string>

namespace mlir::sluice::fusion {

/// The pass options, as the planner reads them.
struct FuseOptions {
  bool enable = true;
  bool foldEpilogues = true;
  unsigned maxOps = 0;
  int64_t maxResident = 8192;
  MaskPolicy maskPolicy = MaskPolicy::Auto;
  /// Fuse contraction-softmax-contraction chains into streaming kernels
  /// (StreamingChain.h).
  bool streaming = false;
  /// Fold sum kernels into the GEMMs producing their terms (beta = 1,
  /// GemmAccumulation.cpp).
  bool accumulateGemms = false;
};

/// A set of dimension names with their sizes.
using DimSet = std::map<std::string, int64_t>;

/// One candidate kernel: a set of ops of the graph body.
struct Group {
  /// Member op indices, ascending (program order).
  SmallVector<unsigned> members;
  bool alive = true;
  /// Holds a contraction: runs as a library call.
  bool library = false;
  /// A streaming kernel (StreamingChain.h): never merged with another.
  bool streaming = false;
  /// The contraction's epilogue so far (library groups).
  std::optional<Epilogue> epilogue;
  /// The value the next epilogue stage applies to (library groups).
  Value tail;
  /// The iteration space (fused groups): D and the reduced dims R.
  DimSet dims, reduced;
};

/// What the planner did: its work counters (FusionPlannerWorkTest checks
/// that they grow with the ops, not faster).
struct PlannerWork {
  /// Candidate merges whose saving was computed.
  uint64_t candidatesPriced = 0;
  /// Groups visited by the cycle checks of merges and moves.
  uint64_t groupsVisited = 0;
};

/// The kernels of one graph, as the planner chose them.
struct FusionPlan {
  /// The computing ops of the body (no renames, no terminator), in order;
  /// groups name their members by index into it.
  SmallVector<Operation *> ops;
  /// The candidate groups; only live, non-empty ones become kernels.
  SmallVector<Group> groups;
  /// The live groups in the order their kernels are emitted (a topological
  /// order of their dataflow; ties by first member).
  SmallVector<unsigned> order;
  /// The random masks (op indices) each group regenerates in place.
  DenseMap<unsigned, SmallVector<unsigned>> regenerated;
  /// The streaming kernels, by group: their fixed operand and result order
  /// and attribute.
  DenseMap<unsigned, streaming::StreamingGroup> streaming;
  /// Groups whose random-mask outputs are stored bit-packed.
  SmallVector<int64_t> packedGroups;
  PlannerWork work;
};

/// Maps broadcast their inputs by name, so a map reading a pure broadcast
/// can read the broadcast's input instead (the same values): the broadcast
/// then never has to be materialized between kernels. Autodiff makes such
/// broadcasts for the gradients of sums. Idempotent; the planner runs it
/// first, fused or not, so both programs (and their baselines) agree.
void forwardBroadcasts(Block &body);

/// The name of `op` in a kernel's `members` list: its `sluice.name`, else
/// `<origin>.<mnemonic>`, else the mnemonic.
std::string reportName(Operation *op);

/// Plans the kernels of `graph` (decomposed, without kernels). Fails with an
/// error at the graph only on an internal inconsistency.
FailureOr<FusionPlan> planFusion(GraphOp graph, const FuseOptions &options);

/// Folds each planned kernel that only sums terms, all but the first of
/// them GEMM products, into those GEMMs when that moves fewer bytes: each
/// GEMM adds its product to the running sum in place (epilogue
/// `accumulate`, beta = 1). Rewrites the sum's maps so that each reads its
/// GEMM's product directly (renames move to the accumulator) and updates
/// `plan`; call between planFusion and outlineKernels.
void accumulateIntoGemms(FusionPlan &plan);

/// After outlining: a backward streaming kernel whose dQ, dK and dV (each
/// through at most one rename) only feed one stack along a dim of size 3
/// in one fused kernel (stacked projections' gradient) yields that stack
/// instead, so that it writes the three through the stack's strides; the
/// fused kernel keeps its other members, reading the stack, or goes.
/// With `foldEpilogues`, a sum of the stack over the dims a GEMM kernel
/// contracts it over (the stacked bias gradient) becomes that GEMM's
/// bgrada / bgradb epilogue. Kernels are numbered k0, k1, ... again where
/// one went.
void absorbGradientStacks(GraphOp graph, bool foldEpilogues);

/// Replaces every planned group of `graph` by one sluice.kernel named
/// k0, k1, ... in `plan.order`; renames move along to stay after their
/// sources, and the original ops are erased.
LogicalResult outlineKernels(GraphOp graph, const FusionPlan &plan);

} // namespace mlir::sluice::fusion

#endif // SLUICE_DIALECT_TRANSFORMS_FUSIONPLAN_H
