//===- StreamingBackward.cpp - the backward's streaming kernel ------------===//
//
// In a backward graph where the probabilities are recomputed from the saved
// row statistic (RecomputeRowStatistics.cpp), the ops whose results have the
// scores' dimensions (the L x L tensors: the recomputed scores and
// probabilities, their dropout, the probabilities' gradient and the scores'
// gradient) form one connected set fed by contractions of L-sized tensors
// and consumed only by contractions back to L-sized tensors (dq, dk, dv).
// That set plus its consumers is one streaming kernel: no L x L tensor
// crosses its boundary. The softmax gradient's row term d = rowsum(do * o)
// joins it when nothing else reads d, so the kernel reads o instead of d
// and no row-term tensor is written (absorbRowDot).
//
//===----------------------------------------------------------------------===//

#include "StreamingChain.h"

#include "dialects/sluice/SluiceBuilders.h"

#include "llvm/ADT/SetVector.h"

using namespace mlir;
using namespace mlir::sluice;
using namespace mlir::sluice::streaming;

namespace {

/// The connected ops around the recomputation contraction.
struct Closure {
  llvm::SetVector<Operation *> members;
  /// Contractions producing scores-shaped tensors other than the scores.
  SmallVector<ContractOp> producers;
  /// Contractions consuming scores-shaped tensors into smaller ones.
  SmallVector<ContractOp> consumers;
  SmallVector<RandomMaskOp> masks;
};

/// Collects the closure; fails if a scores-shaped tensor is read from or
/// used outside of it (a saved L x L tensor, a reduction, a result).
LogicalResult collectClosure(ContractOp scores, Closure &closure) {
  NamedTensorType shape = scores.getResult().getType();
  auto isFull = [&](Value value) {
    return getTensorType(value).hasSameDims(shape);
  };
  SmallVector<Operation *> worklist = {scores};
  closure.members.insert(scores);
  auto add = [&](Operation *op) {
    if (closure.members.insert(op))
      worklist.push_back(op);
  };
  while (!worklist.empty()) {
    Operation *op = worklist.pop_back_val();
    for (Value operand : op->getOperands()) {
      if (!isFull(operand))
        continue;
      Operation *producer = operand.getDefiningOp();
      if (auto mask = llvm::dyn_cast_or_null<RandomMaskOp>(producer)) {
        if (!llvm::is_contained(closure.masks, mask))
          closure.masks.push_back(mask);
        continue;
      }
      if (!llvm::isa_and_nonnull<MapOp, ContractOp>(producer))
        return failure();
      add(producer);
    }
    for (Value result : op->getResults()) {
      if (!isFull(result))
        continue;
      for (Operation *user : result.getUsers()) {
        if (!llvm::isa<MapOp, ContractOp>(user))
          return failure();
        add(user);
      }
    }
  }
  for (Operation *op : closure.members) {
    auto contract = llvm::dyn_cast<ContractOp>(op);
    if (!contract || contract == scores)
      continue;
    if (isFull(contract.getResult()))
      closure.producers.push_back(contract);
    else if (isFull(contract.getLhs()) != isFull(contract.getRhs()))
      closure.consumers.push_back(contract);
    else
      return failure();
  }
  return success();
}

/// The other operand of `contract`.
Value otherOperand(ContractOp contract, Value operand) {
  return contract.getLhs() == operand ? contract.getRhs() : contract.getLhs();
}

/// The roles of a backward streaming kernel.
struct Roles {
  MapOp exp;
  std::string rows, cols;
  Value q, k, v, dO, lse, d, dq, dk, dv;
};

/// Finds the recomputation exp(t - lse) that reads the scores through
/// single-input maps; sets exp, lse and cols.
LogicalResult findRecomputation(ContractOp scores, const Closure &closure,
                                Roles &roles) {
  for (Operation *op : closure.members) {
    auto map = llvm::dyn_cast<MapOp>(op);
    if (!map || !isExpOfDifference(map))
      continue;
    Value t = map.getInputs()[0];
    while (auto scoreMap = t.getDefiningOp<MapOp>()) {
      if (scoreMap.getInputs().size() != 1)
        break;
      t = scoreMap.getInputs()[0];
    }
    if (t != scores.getResult() || roles.exp)
      continue;
    roles.exp = map;
  }
  if (!roles.exp)
    return failure();
  roles.lse = roles.exp.getInputs()[1];
  SmallVector<std::string> full = dimNames(scores.getResult());
  SmallVector<std::string> rowDims = dimNames(roles.lse);
  SmallVector<std::string> missing;
  for (const std::string &name : full)
    if (!llvm::is_contained(rowDims, name))
      missing.push_back(name);
  if (missing.size() != 1 || rowDims.size() + 1 != full.size())
    return failure();
  roles.cols = missing[0];
  return success();
}

/// Assigns q, k, v, dO, d and the three gradients.
LogicalResult assignRoles(ContractOp scores, const Closure &closure,
                          Roles &roles) {
  Value lhs = scores.getLhs(), rhs = scores.getRhs();
  NamedTensorType lhsType = getTensorType(lhs), rhsType = getTensorType(rhs);
  if (lhsType.hasDim(roles.cols) == rhsType.hasDim(roles.cols))
    return failure();
  roles.k = lhsType.hasDim(roles.cols) ? lhs : rhs;
  roles.q = roles.k == lhs ? rhs : lhs;
  SmallVector<std::string> rows;
  for (const std::string &name : dimNames(scores.getResult()))
    if (getTensorType(roles.q).hasDim(name) &&
        !getTensorType(roles.k).hasDim(name))
      rows.push_back(name);
  if (rows.empty() || closure.producers.size() != 1 ||
      closure.consumers.size() != 3)
    return failure();
  SmallVector<MapOp> maps;
  for (Operation *op : closure.members)
    if (auto map = llvm::dyn_cast<MapOp>(op))
      maps.push_back(map);
  roles.rows = pickRows(rows, scores.getResult(), maps, roles.cols);
  ContractOp producer = closure.producers.front();
  bool lhsHasRows = getTensorType(producer.getLhs()).hasDim(roles.rows);
  roles.dO = lhsHasRows ? producer.getLhs() : producer.getRhs();
  roles.v = otherOperand(producer, roles.dO);
  // As in the forward (StreamingChain.cpp): V lacks the query-only dims K
  // lacks, so the kernel sums dK and dV over the same group.
  for (const std::string &name : dimNames(scores.getResult()))
    if (getTensorType(roles.k).hasDim(name) !=
        getTensorType(roles.v).hasDim(name))
      return failure();
  for (ContractOp consumer : closure.consumers) {
    Value result = consumer.getResult();
    if (getTensorType(result).hasDim(roles.rows))
      roles.dq = result;
    else if (consumer.getLhs() == roles.q || consumer.getRhs() == roles.q)
      roles.dk = result;
    else if (consumer.getLhs() == roles.dO || consumer.getRhs() == roles.dO)
      roles.dv = result;
  }
  if (!roles.dq || !roles.dk || !roles.dv)
    return failure();
  // The row term: the one other row-shaped input of the closure's maps.
  for (Operation *op : closure.members) {
    auto map = llvm::dyn_cast<MapOp>(op);
    if (!map)
      continue;
    for (Value input : map.getInputs()) {
      if (getTensorType(input).hasSameDims(scores.getResult().getType()) ||
          input == roles.lse)
        continue;
      if (roles.d && roles.d != input)
        return failure();
      roles.d = input;
    }
  }
  return success(roles.d != nullptr);
}

/// Fails unless the members read exactly the six role inputs.
LogicalResult checkInputs(const Closure &closure, const Roles &roles) {
  llvm::SetVector<Value> external;
  for (Operation *op : closure.members)
    for (Value operand : op->getOperands()) {
      Operation *producer = operand.getDefiningOp();
      if ((producer && closure.members.contains(producer)) ||
          llvm::isa_and_nonnull<RandomMaskOp>(producer))
        continue;
      external.insert(operand);
    }
  SmallVector<Value> roleInputs = {roles.q,  roles.k,   roles.v,
                                   roles.dO, roles.lse, roles.d};
  llvm::SetVector<Value> expected(roleInputs.begin(), roleInputs.end());
  return success(expected.size() == 6 && external.size() == 6 &&
                 llvm::all_of(external, [&](Value value) {
                   return expected.contains(value);
                 }));
}

/// The row term's two ops when the kernel can compute it from the dO rows it
/// loads: d = reduce sum p over the dims d lacks, p = map(dO, o) {a * b}
/// (either order), as the recomputation rewrite builds it.
struct RowDot {
  MapOp product;
  ReduceOp sum;
  Value o;
};

/// True if the dims of `of` that `rows` lacks (the value dims) lie one
/// after the other in `type`, in `of`'s order: O then reads like dO.
bool valueDimsLikeIn(NamedTensorType type, NamedTensorType of,
                     NamedTensorType rows) {
  std::optional<unsigned> last;
  for (StringAttr dim : of.getDimNames()) {
    if (rows.hasDim(dim.getValue()))
      continue;
    std::optional<unsigned> position = type.getDimPosition(dim.getValue());
    if (!position || (last && *position != *last + 1))
      return false;
    last = position;
  }
  return true;
}

/// Matches the row term's producer (RowDot). Legal to absorb when: d has
/// lse's dims and element type (the kernels accumulate in it) and the
/// product has that element type too; o has dO's dims and element type,
/// its value dims laid out like dO's (the runtime kernels read O through
/// dO's strides roles), and is none of the other inputs; the product feeds
/// only the sum, and d only members. Otherwise d stays an input.
FailureOr<RowDot> matchRowDot(const Closure &closure, const Roles &roles) {
  auto sum = roles.d.getDefiningOp<ReduceOp>();
  if (!sum || sum.getKind() != ReduceKind::sum)
    return failure();
  auto product = sum.getInput().getDefiningOp<MapOp>();
  if (!product || !isProductOfInputs(product) ||
      !llvm::is_contained(product.getInputs(), roles.dO))
    return failure();
  Value o = product.getInputs()[0] == roles.dO ? product.getInputs()[1]
                                               : product.getInputs()[0];
  NamedTensorType dO = getTensorType(roles.dO), oType = getTensorType(o);
  NamedTensorType d = getTensorType(roles.d), lse = getTensorType(roles.lse);
  NamedTensorType dot = getTensorType(product.getResult());
  Type statistic = lse.getElementType();
  if (!d.hasSameDims(lse) || d.getElementType() != statistic ||
      !dot.hasSameDims(dO) || dot.getElementType() != statistic ||
      !oType.hasSameDims(dO) || oType.getElementType() != dO.getElementType() ||
      !valueDimsLikeIn(oType, dO, d))
    return failure();
  if (llvm::is_contained({roles.q, roles.k, roles.v, roles.dO, roles.lse}, o))
    return failure();
  if (!product.getResult().hasOneUse() ||
      !llvm::all_of(roles.d.getUsers(), [&](Operation *user) {
        return closure.members.contains(user);
      }))
    return failure();
  return RowDot{product, sum, o};
}

} // namespace

FailureOr<StreamingGroup>
mlir::sluice::streaming::backwardGroup(ContractOp scores) {
  Closure closure;
  Roles roles;
  if (failed(collectClosure(scores, closure)) ||
      failed(findRecomputation(scores, closure, roles)) ||
      failed(assignRoles(scores, closure, roles)) ||
      failed(checkInputs(closure, roles)))
    return failure();
  // One dropout stream at most.
  for (RandomMaskOp mask : closure.masks)
    if (mask.getStream() != closure.masks.front().getStream() ||
        mask.getProbability() != closure.masks.front().getProbability())
      return failure();
  Value rowTerm = roles.d;
  if (FailureOr<RowDot> rowDot = matchRowDot(closure, roles);
      succeeded(rowDot)) {
    closure.members.insert(rowDot->product);
    closure.members.insert(rowDot->sum);
    rowTerm = rowDot->o;
  }
  StreamingGroup group;
  group.members.assign(closure.members.begin(), closure.members.end());
  llvm::sort(group.members, [](Operation *a, Operation *b) {
    return a->isBeforeInBlock(b);
  });
  group.inputs = {roles.q, roles.k, roles.v, roles.dO, roles.lse, rowTerm};
  group.outputs = {roles.dq, roles.dk, roles.dv};
  bool causal = llvm::any_of(closure.members, [&](Operation *op) {
    auto map = llvm::dyn_cast<MapOp>(op);
    return map && isCausalMask(map, roles.rows, roles.cols);
  });
  RandomMaskOp mask = closure.masks.empty() ? RandomMaskOp()
                                            : closure.masks.front();
  group.attr = buildStreamingAttr(Phase::backward, roles.rows, roles.cols,
                                  scores, causal, mask);
  return group;
}
