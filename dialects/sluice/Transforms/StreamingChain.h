//===- StreamingChain.h - contraction-softmax-contraction chains -*- C++ -*-===//
//
// The structures the streaming (online-softmax) rule works on, found by the
// algebra of their ops and not by names: a contraction whose scores feed a
// row max, exp(s - max), a row sum and a division, whose result (optionally
// scaled by a dropout mask) feeds a second contraction over the reduced
// dimension; and, in a backward graph, the recomputation of those
// probabilities from a saved row statistic together with every contraction
// that consumes them. Shared by the recomputation rewrite
// (RecomputeRowStatistics.cpp) and the fusion planner (FusionPlanner.cpp).
// Internal to dialects/sluice/Transforms; docs/Fusion.md gives the rules.
//
//===----------------------------------------------------------------------===//

#ifndef SLUICE_DIALECT_TRANSFORMS_STREAMINGCHAIN_H
#define SLUICE_DIALECT_TRANSFORMS_STREAMINGCHAIN_H

#include "dialects/sluice/Analysis/StreamedContractions.h"
#include "dialects/sluice/SluiceOps.h"

#include "llvm/ADT/SmallVector.h"

#include <string>

namespace mlir::sluice::streaming {

// kMaxBatchDims and kMaxHeadDim, the runtime kernels' limits, are in
// dialects/sluice/Analysis/StreamedContractions.h.

/// A softmax between two contractions, as --sluice-decompose spells it:
///
///   s  = contract(q, k) {scale}        rows come from q, cols from k
///   t  = map(s) ...                    element-wise score maps (one tensor
///                                      input each), e.g. a causal mask
///   m  = reduce max t over [cols]
///   e  = map(t, m)  exp(a - b)
///   l  = reduce sum e over [cols]
///   p  = map(e, l)  a / b
///   pd = map(p, mask)  a * b [/ c]     optional dropout (a random mask)
///   o  = contract(pd, v)               contracts cols, keeps rows
///   lse = map(m, l)  a + log(b)        the row statistic (training only;
///                                      added by the recomputation rewrite)
struct SoftmaxChain {
  ContractOp scores;
  SmallVector<MapOp> scoreMaps;
  ReduceOp max;
  MapOp exp;
  ReduceOp sum;
  MapOp normalize;
  RandomMaskOp mask;
  MapOp dropout;
  ContractOp output;
  MapOp logSumExp;
  std::string rows, cols;
  Value q, k, v;

  /// The probabilities the second contraction reads (pd, or p).
  Value probabilities() {
    return dropout ? dropout.getResult() : normalize.getResult();
  }
  /// The value the max and exp read (the last score map's result, or s).
  Value maskedScores() {
    return scoreMaps.empty() ? scores.getResult()
                             : scoreMaps.back().getResult();
  }
  /// The chain's ops in program order, without the random mask.
  SmallVector<Operation *> members();
};

/// Matches the chain that starts at `scores`. Every intermediate may be used
/// only by the next op of the chain, except where `allowedUse` accepts a
/// use (the recomputation rewrite allows the forward's saved results).
/// Returns failure when `scores` does not start such a chain.
FailureOr<SoftmaxChain>
matchSoftmaxChain(ContractOp scores,
                  function_ref<bool(OpOperand &)> allowedUse = nullptr);

/// One planned streaming kernel: its members (no random masks; the planner
/// regenerates those inside), its inputs and results in the fixed order of
/// docs/Fusion.md, and the attribute that summarizes it.
struct StreamingGroup {
  SmallVector<Operation *> members;
  SmallVector<Value> inputs, outputs;
  StreamingAttr attr;
};

/// The streaming kernel of a forward chain: inputs (q, k, v), results (o)
/// or (o, lse).
FailureOr<StreamingGroup> forwardGroup(SoftmaxChain &chain);

/// The streaming kernel of a backward graph that starts at the
/// recomputation contraction `scores`: every op producing a tensor with the
/// scores' dimensions connected to it, plus the contractions that consume
/// those tensors. Inputs (q, k, v, do, lse, d), results (dq, dk, dv); when
/// the row term is d = rowsum(do * o) read by nothing else, its two ops are
/// members too and the inputs are (q, k, v, do, lse, o) (docs/Fusion.md).
FailureOr<StreamingGroup> backwardGroup(ContractOp scores);

/// Every streaming kernel of `body`, in program order (no op in two).
SmallVector<StreamingGroup> findStreamingGroups(Block &body);

/// True if `map` is the causal mask's decomposition over `rows` and `cols`:
/// select(index(cols) > index(rows), -inf, x).
bool isCausalMask(MapOp map, StringRef rows, StringRef cols);

/// True if `map`'s body is exactly `exp(arg0 - arg1)`.
bool isExpOfDifference(MapOp map);

/// True if `map` has two inputs and its body is exactly `arg0 * arg1`.
bool isProductOfInputs(MapOp map);

/// The attribute of a streaming kernel: the dropout probability (0 without
/// `mask`) and stream come from `mask`, the scale from `scores`.
StreamingAttr buildStreamingAttr(Phase direction, StringRef rows,
                                 StringRef cols, ContractOp scores,
                                 bool causal, RandomMaskOp mask);

/// The dimension names of `value`'s tensor type, as a sorted list.
SmallVector<std::string> dimNames(Value value);

/// The query rows among `candidates`, the dims of the scores that only the
/// query operand brings (one, or more with grouped- or multi-query
/// attention: the query heads sharing one key/value head are a dim that
/// K and V lack). The others are query-only batch dims (docs/Fusion.md):
/// the row of a causal mask among `maps` (over `cols`) if there is one,
/// else the longest, ties to the later one in the scores' layout.
std::string pickRows(ArrayRef<std::string> candidates, Value scores,
                     ArrayRef<MapOp> maps, StringRef cols);

} // namespace mlir::sluice::streaming

#endif // SLUICE_DIALECT_TRANSFORMS_STREAMINGCHAIN_H
