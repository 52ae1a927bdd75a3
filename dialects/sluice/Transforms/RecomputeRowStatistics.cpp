//===- RecomputeRowStatistics.cpp - save the log-sum-exp, recompute p -----===//
//
// --sluice-recompute-row-statistics on a decomposed forward/backward pair.
// For each softmax chain of the forward (StreamingChain.h) whose
// probabilities the forward saves:
//
//   forward:  lse = map(max, sum) { a + log(b) }, saved instead of p (and
//             of its dropout pd);
//   backward: s' = contract(q, k) (the saved operands), the score maps
//             again, p' = map(s', lse) { exp(a - b) }, the dropout mask
//             redrawn from its stream, pd' = the dropout map again; p and
//             pd are replaced by p' and pd';
//             the softmax gradient's row term rowsum(p * dp) (dp =
//             dpd * mask / (1 - q), dpd = contract(do, v)) becomes
//             rowsum(do * o) over o's own columns: sum_k pd dpd =
//             sum_k pd sum_e do v = sum_e do o.
//
// After it, no tensor with the scores' dimensions crosses from the forward
// to the backward, and --sluice-fuse{streaming=true} groups each side into
// one streaming kernel. docs/Fusion.md, "Streaming kernels".
//
//===----------------------------------------------------------------------===//

#include "FusionPlan.h"
#include "SavedTensors.h"
#include "StreamingChain.h"

#include "dialects/sluice/Analysis/DataMovement.h"
#include "dialects/sluice/SluiceBuilders.h"
#include "dialects/sluice/SluicePasses.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/IRMapping.h"

namespace mlir::sluice {
#define GEN_PASS_DEF_SLUICERECOMPUTEROWSTATISTICS
#include "dialects/sluice/SluicePasses.h.inc"
} // namespace mlir::sluice

using namespace mlir;
using namespace mlir::sluice;
using namespace mlir::sluice::streaming;

namespace {

std::string opName(Operation *op) { return fusion::reportName(op); }

/// Gives `op` the report name `name` and `like`'s origin.
void nameLike(Operation *op, const Twine &name, Operation *like) {
  MLIRContext *context = op->getContext();
  op->setAttr(SluiceDialect::getOpNameAttrName(),
              StringAttr::get(context, name));
  for (StringRef attr : {SluiceDialect::getOriginAttrName(),
                         SluiceDialect::getOriginKindAttrName()})
    if (Attribute value = like->getAttr(attr))
      op->setAttr(attr, value);
}

/// Row statistics are kept in f32 (f64 in an f64 graph).
FloatType statisticType(Value like) {
  Type element = getTensorType(like).getElementType();
  MLIRContext *context = like.getContext();
  if (element.getIntOrFloatBitWidth() >= 64)
    return Float64Type::get(context);
  return Float32Type::get(context);
}

/// What the rewrite of one chain needs, all found before anything changes.
struct ChainRewrite {
  SoftmaxChain chain;
  BlockArgument p, pd;
  /// The backward's row term: rowsum(dot), dot = map(p, dp).
  ReduceOp rowSum;
  MapOp rowDot;
  Value dO;
  FloatType computeType;
};

/// The backward's row term of `chain`: reduce sum over cols of map(p, dp)
/// { a * b }, where dp is dpd (scaled by the chain's mask stream) and dpd =
/// contract(do, v) with v the saved second operand.
LogicalResult findRowTerm(ChainRewrite &rewrite, SavedTensors &saved,
                          GraphOp backward) {
  SoftmaxChain &chain = rewrite.chain;
  BlockArgument v = saved.lookup(chain.v);
  if (!v)
    return failure();
  for (ReduceOp reduce : backward.getBody().front().getOps<ReduceOp>()) {
    auto dot = reduce.getInput().getDefiningOp<MapOp>();
    if (reduce.getKind() != ReduceKind::sum || reduce.getDims().size() != 1 ||
        llvm::cast<StringAttr>(reduce.getDims()[0]).getValue() != chain.cols ||
        !dot || dot.getInputs().size() != 2 ||
        !llvm::is_contained(dot.getInputs(), rewrite.p))
      continue;
    Value dp = dot.getInputs()[0] == rewrite.p ? dot.getInputs()[1]
                                               : dot.getInputs()[0];
    Value dpd = dp;
    if (chain.dropout) {
      auto scale = dp.getDefiningOp<MapOp>();
      if (!scale || scale.getInputs().size() != 2)
        continue;
      for (Value input : scale.getInputs())
        if (auto mask = input.getDefiningOp<RandomMaskOp>();
            !mask || mask.getStream() != chain.mask.getStream())
          dpd = input;
    }
    auto contract = dpd.getDefiningOp<ContractOp>();
    if (!contract || (contract.getLhs() != v && contract.getRhs() != v))
      continue;
    rewrite.rowSum = reduce;
    rewrite.rowDot = dot;
    rewrite.dO = contract.getLhs() == v ? contract.getRhs() : contract.getLhs();
    return success();
  }
  return failure();
}

/// Checks that `chain` can be rewritten: its probabilities are saved, no
/// other scores-sized tensor of it is, and the backward's row term is found.
FailureOr<ChainRewrite> planChain(SoftmaxChain &chain,
                                  SavedTensors &saved, GraphOp backward) {
  ChainRewrite rewrite;
  rewrite.chain = chain;
  rewrite.p = saved.lookup(chain.normalize.getResult());
  if (chain.dropout)
    rewrite.pd = saved.lookup(chain.dropout.getResult());
  if (!rewrite.p)
    return failure();
  SmallVector<Value> internal = {chain.scores.getResult(),
                                 chain.exp.getResult(), chain.max.getResult(),
                                 chain.sum.getResult()};
  for (MapOp map : chain.scoreMaps)
    internal.push_back(map.getResult());
  if (llvm::any_of(internal, [&](Value value) { return saved.lookup(value); }))
    return failure();
  if (failed(findRowTerm(rewrite, saved, backward)))
    return failure();
  rewrite.computeType =
      llvm::cast<FloatType>(chain.exp.getBody().front().getArgument(0).getType());
  return rewrite;
}

/// Forward: lse = max + log(sum), saved. Returns its backward argument.
BlockArgument addLogSumExp(ChainRewrite &rewrite, SavedTensors &saved) {
  SoftmaxChain &chain = rewrite.chain;
  OpBuilder builder(chain.sum->getBlock(), ++Block::iterator(chain.sum));
  Value m = chain.max.getResult();
  auto type = getTensorType(m).withElementType(statisticType(m));
  Value lse = buildMap(
      builder, chain.sum.getLoc(), type, {m, chain.sum.getResult()},
      rewrite.computeType, [](OpBuilder &b, Location loc, ValueRange args) {
        Value log = math::LogOp::create(b, loc, args[1]);
        return arith::AddFOp::create(b, loc, args[0], log).getResult();
      });
  std::string name = opName(chain.normalize) + ".lse";
  nameLike(lse.getDefiningOp(), name, chain.max);
  chain.logSumExp = lse.getDefiningOp<MapOp>();
  return saved.save(lse, name);
}

/// Backward: p' (and pd') recomputed at the top of the body from the saved
/// operands and lse; returns {p', pd'}.
std::pair<Value, Value> recompute(ChainRewrite &rewrite, SavedTensors &saved,
                                  GraphOp backward, BlockArgument lse) {
  SoftmaxChain &chain = rewrite.chain;
  OpBuilder builder = OpBuilder::atBlockBegin(&backward.getBody().front());
  IRMapping mapping;
  mapping.map(chain.q, saved.save(chain.q, opName(chain.scores) + ".q"));
  mapping.map(chain.k, saved.save(chain.k, opName(chain.scores) + ".k"));
  Operation *last = builder.clone(*chain.scores, mapping);
  nameLike(last, opName(chain.scores) + ".recompute", chain.scores);
  for (MapOp map : chain.scoreMaps) {
    last = builder.clone(*map, mapping);
    nameLike(last, opName(map) + ".recompute", map);
  }
  Value p = buildMap(
      builder, chain.normalize.getLoc(), chain.normalize.getResult().getType(),
      {last->getResult(0), lse}, rewrite.computeType,
      [](OpBuilder &b, Location loc, ValueRange args) {
        Value difference = arith::SubFOp::create(b, loc, args[0], args[1]);
        return math::ExpOp::create(b, loc, difference).getResult();
      });
  nameLike(p.getDefiningOp(), opName(chain.normalize) + ".recompute",
           chain.normalize);
  if (!chain.dropout)
    return {p, nullptr};
  mapping.map(chain.normalize.getResult(), p);
  // The backward draws the same mask for the dropout's gradient already:
  // draw it once, here.
  RandomMaskOp mask;
  for (RandomMaskOp drawn :
       backward.getBody().front().getOps<RandomMaskOp>())
    if (drawn.getStream() == chain.mask.getStream() &&
        drawn.getProbability() == chain.mask.getProbability() &&
        drawn.getType() == chain.mask.getType())
      mask = drawn;
  if (mask) {
    mask->moveBefore(builder.getInsertionBlock(),
                     builder.getInsertionPoint());
    mapping.map(chain.mask.getResult(), mask.getResult());
  } else {
    mask = llvm::cast<RandomMaskOp>(builder.clone(*chain.mask, mapping));
    nameLike(mask, opName(chain.mask) + ".recompute", chain.mask);
  }
  Operation *pd = builder.clone(*chain.dropout, mapping);
  nameLike(pd, opName(chain.dropout) + ".recompute", chain.dropout);
  return {p, pd->getResult(0)};
}

/// Backward: rowsum(p * dp) becomes rowsum(do * o) over o's columns.
void replaceRowTerm(ChainRewrite &rewrite, SavedTensors &saved) {
  SoftmaxChain &chain = rewrite.chain;
  Value o = chain.output.getResult();
  BlockArgument savedO = saved.lookupView(o);
  if (!savedO)
    savedO = saved.save(o, opName(chain.output));
  ReduceOp rowSum = rewrite.rowSum;
  OpBuilder builder(rowSum);
  Value dO = rewrite.dO;
  auto productType = getTensorType(dO).withElementType(statisticType(dO));
  Value product = buildMap(
      builder, rowSum.getLoc(), productType, {dO, savedO}, rewrite.computeType,
      [](OpBuilder &b, Location loc, ValueRange args) {
        return arith::MulFOp::create(b, loc, args[0], args[1]).getResult();
      });
  nameLike(product.getDefiningOp(), opName(rewrite.rowDot) + ".output",
           rewrite.rowDot);
  SmallVector<StringRef> columns;
  NamedTensorType rowType = getTensorType(rowSum.getResult());
  for (StringAttr name : productType.getDimNames())
    if (!rowType.hasDim(name.getValue()))
      columns.push_back(name.getValue());
  Value sum = buildReduce(builder, rowSum.getLoc(), ReduceKind::sum, product,
                          columns);
  nameLike(sum.getDefiningOp(), opName(rowSum) + ".output", rowSum);
  rowSum.getResult().replaceAllUsesWith(sum);
  rowSum->erase();
  if (rewrite.rowDot->use_empty())
    rewrite.rowDot->erase();
}

/// Rewrites one planned chain.
LogicalResult rewriteChain(ChainRewrite &rewrite, SavedTensors &saved,
                           GraphOp backward) {
  BlockArgument lse = addLogSumExp(rewrite, saved);
  auto [p, pd] = recompute(rewrite, saved, backward, lse);
  replaceRowTerm(rewrite, saved);
  rewrite.p.replaceAllUsesWith(p);
  if (rewrite.pd)
    rewrite.pd.replaceAllUsesWith(pd);
  if (failed(saved.unsave(rewrite.chain.normalize.getResult())))
    return failure();
  if (rewrite.pd && failed(saved.unsave(rewrite.chain.dropout.getResult())))
    return failure();
  return success();
}

struct RecomputeRowStatisticsPass
    : mlir::sluice::impl::SluiceRecomputeRowStatisticsBase<
          RecomputeRowStatisticsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto pair = forwardBackwardPair(module);
    if (!pair)
      return; // Not one forward/backward pair: nothing to pair up.
    GraphOp forward = pair->first, backward = pair->second;
    SavedTensors saved(forward, backward);
    auto isSavedUse = [&](OpOperand &use) {
      return llvm::isa<ReturnOp>(use.getOwner()) &&
             forward.isSavedResult(use.getOperandNumber());
    };
    std::vector<ChainRewrite> rewrites;
    for (ContractOp scores : forward.getBody().front().getOps<ContractOp>())
      if (FailureOr<SoftmaxChain> chain = matchSoftmaxChain(scores, isSavedUse);
          succeeded(chain))
        if (FailureOr<ChainRewrite> rewrite =
                planChain(*chain, saved, backward);
            succeeded(rewrite))
          rewrites.push_back(std::move(*rewrite));
    if (rewrites.empty())
      return;
    if (failed(recordBaselines(module)))
      return signalPassFailure();
    for (ChainRewrite &rewrite : rewrites)
      if (failed(rewriteChain(rewrite, saved, backward))) {
        module.emitError() << "--sluice-recompute-row-statistics: a saved "
                              "probability is still read (a bug in the pass)";
        return signalPassFailure();
      }
  }
};

} // namespace
