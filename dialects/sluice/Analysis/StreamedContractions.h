//===- StreamedContractions.h - contractions the streaming rule takes -*- C++
//-*-===//
//
// The streaming (online-softmax) rule of --sluice-fuse=streaming=true fuses a
// contraction, the softmax of its scores and the contraction that reads the
// probabilities into one kernel that reads its operands through strides, in
// any layout. Those contractions never run as GEMMs, so they need no GEMM
// layout: --sluice-legalize-contractions leaves them alone and
// --sluice-select-layouts does not price them as GEMMs. Before
// --sluice-decompose (and before autodiff) the chain is still made of
// composites; this predicts it there. After the decomposition the fusion
// planner's own matcher (dialects/sluice/Transforms/StreamingChain.h) finds
// the chains exactly. docs/Fusion.md, "Streaming", has the rule.
//
//===----------------------------------------------------------------------===//

#ifndef SLUICE_DIALECT_ANALYSIS_STREAMEDCONTRACTIONS_H
#define SLUICE_DIALECT_ANALYSIS_STREAMEDCONTRACTIONS_H

#include "dialects/sluice/SluiceOps.h"

#include "llvm/ADT/SmallPtrSet.h"

namespace mlir::sluice {

namespace streaming {
/// What the runtime kernels take: at most this many batch dims and this
/// many elements of the contracted and the value dim. They are the runtime's
/// SLUICE_STREAM_MAX_BATCH / SLUICE_STREAM_MAX_HEAD_DIM
/// (include/sluice/Runtime/sluice_stream.h), which the dialect does not
/// include; lib/Codegen/Emit/StreamingKernel.cpp asserts that they agree.
constexpr int64_t kMaxBatchDims = 4;
constexpr int64_t kMaxHeadDim = 128;
} // namespace streaming

/// The contractions of `body` (its top level) in a composite attention chain
/// the streaming rule takes:
///
///   s = contract(q, k)          cols: the one free dim only k brings
///   t = causal_mask(s) ...      zero or more
///   p = softmax(t) over cols
///   p' = dropout(p)             optional
///   o = contract(p', v)         contracts cols
///
/// each intermediate used only by the next op, with the shapes the runtime
/// kernels take (kMaxBatchDims, kMaxHeadDim). Both s and o are returned.
llvm::SmallPtrSet<Operation *, 4> predictStreamedContractions(Block &body);

} // namespace mlir::sluice

#endif // SLUICE_DIALECT_ANALYSIS_STREAMEDCONTRACTIONS_H
