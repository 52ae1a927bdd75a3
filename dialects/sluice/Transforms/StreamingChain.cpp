//===- StreamingChain.cpp - contraction-softmax-contraction chains --------===//
//
// Recognizes the chains the streaming rule fuses (StreamingChain.h) from the
// ops' algebra: which reduction, which scalar body, which dimension each
// contraction keeps or contracts. Names of ops and dimensions play no part.
//
//===----------------------------------------------------------------------===//

#include "StreamingChain.h"

#include "dialects/sluice/SluiceBuilders.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "llvm/ADT/SetVector.h"

#include <cmath>

using namespace mlir;
using namespace mlir::sluice;
using namespace mlir::sluice::streaming;

SmallVector<std::string> mlir::sluice::streaming::dimNames(Value value) {
  SmallVector<std::string> names;
  for (StringAttr name : getTensorType(value).getDimNames())
    names.push_back(name.getValue().str());
  llvm::sort(names);
  return names;
}

namespace {

bool hasDim(Value value, StringRef name) {
  return getTensorType(value).hasDim(name);
}

/// The dimensions of `result` that come from `operand` and not from `other`.
SmallVector<std::string> freeDims(Value result, Value operand, Value other) {
  SmallVector<std::string> free;
  for (const std::string &name : dimNames(result))
    if (hasDim(operand, name) && !hasDim(other, name))
      free.push_back(name);
  return free;
}

/// The body's operations without the terminator, and the yielded value.
SmallVector<Operation *> bodyOps(MapOp map) {
  SmallVector<Operation *> ops;
  for (Operation &op : map.getBody().front().without_terminator())
    ops.push_back(&op);
  return ops;
}

Value yielded(MapOp map) { return map.getYield().getValue(); }

Value bodyArg(MapOp map, unsigned index) {
  return map.getBody().front().getArgument(index);
}

/// `a / b`.
bool isQuotient(MapOp map) {
  auto div = yielded(map).getDefiningOp<arith::DivFOp>();
  return map.getInputs().size() == 2 && bodyOps(map).size() == 1 && div &&
         div.getLhs() == bodyArg(map, 0) && div.getRhs() == bodyArg(map, 1);
}

/// `a + log(b)`.
bool isLogSumExp(MapOp map) {
  auto add = yielded(map).getDefiningOp<arith::AddFOp>();
  if (map.getInputs().size() != 2 || bodyOps(map).size() != 2 || !add)
    return false;
  auto log = add.getRhs().getDefiningOp<math::LogOp>();
  return add.getLhs() == bodyArg(map, 0) && log &&
         log.getOperand() == bodyArg(map, 1);
}

/// `a * b / c` where a or b is the input `probabilities`, the other a
/// random mask, and c the constant 1 - p of that mask: dropout as the
/// runtime kernels apply it (keep / (1 - p)), linear in the probabilities
/// (so it commutes with the row normalization).
bool isDropout(MapOp map, Value probabilities) {
  if (map.getInputs().size() != 2 || !map.getIndexDims().empty())
    return false;
  Value other = map.getInputs()[0] == probabilities ? map.getInputs()[1]
                                                    : map.getInputs()[0];
  auto mask = other.getDefiningOp<RandomMaskOp>();
  if (!mask || !getTensorType(other).hasSameDims(getTensorType(probabilities)))
    return false;
  auto div = yielded(map).getDefiningOp<arith::DivFOp>();
  if (!div)
    return false;
  auto keep = div.getRhs().getDefiningOp<arith::ConstantOp>();
  FloatAttr keepValue;
  if (keep)
    keepValue = llvm::dyn_cast<FloatAttr>(keep.getValue());
  // 1 - p rounded to the compute type (f32 at worst: relative 2^-24).
  double expected = 1.0 - mask.getProbability().convertToDouble();
  if (!keepValue ||
      std::abs(keepValue.getValueAsDouble() - expected) > 1e-6 * expected)
    return false;
  auto mul = div.getLhs().getDefiningOp<arith::MulFOp>();
  if (!mul)
    return false;
  Value a = bodyArg(map, 0), b = bodyArg(map, 1);
  return (mul.getLhs() == a && mul.getRhs() == b) ||
         (mul.getLhs() == b && mul.getRhs() == a);
}

/// The users of `value` other than the uses `allowed` accepts.
SmallVector<Operation *> usersOf(Value value,
                                 function_ref<bool(OpOperand &)> allowed) {
  SmallVector<Operation *> users;
  for (OpOperand &use : value.getUses())
    if (!allowed || !allowed(use))
      if (!llvm::is_contained(users, use.getOwner()))
        users.push_back(use.getOwner());
  return users;
}

/// Finds among `users` an op of type OpTy satisfying `accept`.
template <typename OpTy>
OpTy findUser(ArrayRef<Operation *> users, function_ref<bool(OpTy)> accept) {
  for (Operation *user : users)
    if (auto op = llvm::dyn_cast<OpTy>(user); op && accept(op))
      return op;
  return nullptr;
}

/// Matches the chain's row statistics and normalization, from `t` (the
/// masked scores) on; fills max, exp, sum, normalize, logSumExp and cols.
LogicalResult matchSoftmax(SoftmaxChain &chain, Value t,
                           function_ref<bool(OpOperand &)> allowed) {
  SmallVector<Operation *> tUsers = usersOf(t, allowed);
  chain.max = findUser<ReduceOp>(tUsers, [&](ReduceOp reduce) {
    return reduce.getKind() == ReduceKind::max && reduce.getDims().size() == 1;
  });
  if (!chain.max || tUsers.size() != 2)
    return failure();
  chain.cols = llvm::cast<StringAttr>(chain.max.getDims()[0]).getValue().str();
  Value m = chain.max.getResult();
  chain.exp = findUser<MapOp>(tUsers, [&](MapOp map) {
    return map.getInputs().size() == 2 && map.getInputs()[0] == t &&
           map.getInputs()[1] == m && isExpOfDifference(map);
  });
  if (!chain.exp)
    return failure();
  Value e = chain.exp.getResult();
  SmallVector<Operation *> eUsers = usersOf(e, allowed);
  chain.sum = findUser<ReduceOp>(eUsers, [&](ReduceOp reduce) {
    return reduce.getKind() == ReduceKind::sum && reduce.getDims().size() == 1 &&
           reduce.getDims()[0] == chain.max.getDims()[0];
  });
  if (!chain.sum || eUsers.size() != 2)
    return failure();
  Value l = chain.sum.getResult();
  chain.normalize = findUser<MapOp>(eUsers, [&](MapOp map) {
    return map.getInputs()[0] == e && map.getInputs().size() == 2 &&
           map.getInputs()[1] == l && isQuotient(map);
  });
  if (!chain.normalize)
    return failure();
  // The row statistics feed only the chain and, once added, the
  // log-sum-exp.
  auto isLse = [&](MapOp map) {
    return map.getInputs().size() == 2 && map.getInputs()[0] == m &&
           map.getInputs()[1] == l && isLogSumExp(map);
  };
  SmallVector<Operation *> mUsers = usersOf(m, allowed);
  SmallVector<Operation *> lUsers = usersOf(l, allowed);
  chain.logSumExp = findUser<MapOp>(mUsers, isLse);
  unsigned lse = chain.logSumExp ? 1 : 0;
  if (mUsers.size() != 1 + lse || lUsers.size() != 1 + lse)
    return failure();
  return success();
}

/// Matches the optional dropout and the second contraction after p.
LogicalResult matchOutput(SoftmaxChain &chain,
                          function_ref<bool(OpOperand &)> allowed) {
  Value p = chain.normalize.getResult();
  SmallVector<Operation *> pUsers = usersOf(p, allowed);
  if (pUsers.size() != 1)
    return failure();
  if (auto map = llvm::dyn_cast<MapOp>(pUsers.front())) {
    if (!isDropout(map, p))
      return failure();
    chain.dropout = map;
    Value mask = map.getInputs()[0] == p ? map.getInputs()[1]
                                         : map.getInputs()[0];
    chain.mask = mask.getDefiningOp<RandomMaskOp>();
    pUsers = usersOf(map.getResult(), allowed);
    if (pUsers.size() != 1)
      return failure();
  }
  chain.output = llvm::dyn_cast<ContractOp>(pUsers.front());
  if (!chain.output)
    return failure();
  Value probabilities = chain.probabilities();
  Value lhs = chain.output.getLhs(), rhs = chain.output.getRhs();
  if (lhs == rhs)
    return failure();
  chain.v = lhs == probabilities ? rhs : lhs;
  Value o = chain.output.getResult();
  // The second contraction contracts cols and keeps rows; v brings cols.
  if (!hasDim(chain.v, chain.cols) || hasDim(chain.v, chain.rows) ||
      hasDim(o, chain.cols) || !hasDim(o, chain.rows))
    return failure();
  for (const std::string &name : dimNames(probabilities))
    if (name != chain.cols && !hasDim(o, name))
      return failure();
  // V shares K's dims of the scores: a query-only dim that K lacks (the
  // query heads of a group) V lacks too, so dK and dV both sum over it.
  Value s = chain.scores.getResult();
  for (const std::string &name : dimNames(s))
    if (hasDim(chain.k, name) != hasDim(chain.v, name))
      return failure();
  return success();
}

/// The dims of `value` that `scores` does not have.
SmallVector<std::string> dimsBesideScores(Value value, Value scores) {
  SmallVector<std::string> dims;
  for (const std::string &name : dimNames(value))
    if (!hasDim(scores, name))
      dims.push_back(name);
  return dims;
}

/// The number of elements `value` spans over `dims`.
int64_t extentOf(Value value, ArrayRef<std::string> dims) {
  int64_t extent = 1;
  for (const std::string &name : dims)
    extent *= getTensorType(value).getDimSize(name);
  return extent;
}

/// True if the runtime kernels (include/sluice/Runtime/sluice_stream.h) take
/// the chain's shapes: the dims q and k contract (c, e.g. a rotary split of
/// the head) and v's dims besides the scores' (e) each span at most
/// kMaxHeadDim elements, and the scores have at most kMaxBatchDims batch
/// dims (their dims besides rows and cols).
bool fitsRuntimeKernels(SoftmaxChain &chain) {
  Value s = chain.scores.getResult();
  SmallVector<std::string> c = dimsBesideScores(chain.q, s);
  SmallVector<std::string> e = dimsBesideScores(chain.v, s);
  return !c.empty() && !e.empty() && dimsBesideScores(chain.k, s) == c &&
         getTensorType(s).getRank() - 2 <= kMaxBatchDims &&
         extentOf(chain.q, c) <= kMaxHeadDim &&
         extentOf(chain.v, e) <= kMaxHeadDim;
}

} // namespace

bool mlir::sluice::streaming::isExpOfDifference(MapOp map) {
  auto exp = yielded(map).getDefiningOp<math::ExpOp>();
  if (map.getInputs().size() != 2 || bodyOps(map).size() != 2 || !exp)
    return false;
  auto sub = exp.getOperand().getDefiningOp<arith::SubFOp>();
  return sub && sub.getLhs() == bodyArg(map, 0) &&
         sub.getRhs() == bodyArg(map, 1);
}

bool mlir::sluice::streaming::isProductOfInputs(MapOp map) {
  auto mul = yielded(map).getDefiningOp<arith::MulFOp>();
  return map.getInputs().size() == 2 && bodyOps(map).size() == 1 && mul &&
         mul.getLhs() == bodyArg(map, 0) && mul.getRhs() == bodyArg(map, 1);
}

bool mlir::sluice::streaming::isCausalMask(MapOp map, StringRef rows,
                                           StringRef cols) {
  ArrayAttr indexDims = map.getIndexDims();
  if (map.getInputs().size() != 1 || indexDims.size() != 2 ||
      bodyOps(map).size() != 3)
    return false;
  auto select = yielded(map).getDefiningOp<arith::SelectOp>();
  if (!select || select.getFalseValue() != bodyArg(map, 0))
    return false;
  auto minusInf = select.getTrueValue().getDefiningOp<arith::ConstantOp>();
  auto cmp = select.getCondition().getDefiningOp<arith::CmpIOp>();
  if (!minusInf || !cmp || cmp.getPredicate() != arith::CmpIPredicate::ugt)
    return false;
  auto value = llvm::dyn_cast<FloatAttr>(minusInf.getValue());
  if (!value || !value.getValue().isInfinity() ||
      !value.getValue().isNegative())
    return false;
  auto indexOf = [&](Value arg) -> StringRef {
    for (unsigned i = 0; i < indexDims.size(); ++i)
      if (arg == bodyArg(map, 1 + i))
        return llvm::cast<StringAttr>(indexDims[i]).getValue();
    return {};
  };
  return indexOf(cmp.getLhs()) == cols && indexOf(cmp.getRhs()) == rows;
}

std::string mlir::sluice::streaming::pickRows(ArrayRef<std::string> candidates,
                                              Value scores,
                                              ArrayRef<MapOp> maps,
                                              StringRef cols) {
  for (const std::string &name : candidates)
    if (llvm::any_of(maps,
                     [&](MapOp map) { return isCausalMask(map, name, cols); }))
      return name;
  NamedTensorType type = getTensorType(scores);
  auto key = [&](const std::string &name) {
    return std::make_pair(type.getDimSize(name), *type.getDimPosition(name));
  };
  return *llvm::max_element(candidates, [&](const std::string &a,
                                            const std::string &b) {
    return key(a) < key(b);
  });
}

StreamingAttr mlir::sluice::streaming::buildStreamingAttr(
    Phase direction, StringRef rows, StringRef cols, ContractOp scores,
    bool causal, RandomMaskOp mask) {
  MLIRContext *context = scores.getContext();
  Builder builder(context);
  double probability =
      mask ? mask.getProbability().convertToDouble() : 0.0;
  return StreamingAttr::get(context, direction, rows, cols,
                            scores.getScaleAttr(), causal,
                            builder.getF64FloatAttr(probability),
                            mask ? mask.getStream() : 0);
}

SmallVector<Operation *> SoftmaxChain::members() {
  SmallVector<Operation *> ops = {scores};
  ops.append(scoreMaps.begin(), scoreMaps.end());
  ops.append({max, exp, sum, normalize});
  if (dropout)
    ops.push_back(dropout);
  ops.push_back(output);
  if (logSumExp)
    ops.push_back(logSumExp);
  llvm::sort(ops, [](Operation *a, Operation *b) {
    return a->isBeforeInBlock(b);
  });
  return ops;
}

FailureOr<SoftmaxChain> mlir::sluice::streaming::matchSoftmaxChain(
    ContractOp scores, function_ref<bool(OpOperand &)> allowed) {
  SoftmaxChain chain;
  chain.scores = scores;
  // Score maps: element-wise, one tensor input, the scores' dimensions.
  Value t = scores.getResult();
  auto scoreType = getTensorType(t);
  while (true) {
    SmallVector<Operation *> users = usersOf(t, allowed);
    auto map = users.size() == 1 ? llvm::dyn_cast<MapOp>(users.front())
                                 : MapOp();
    if (!map || map.getInputs().size() != 1 ||
        !map.getResult().getType().hasSameDims(scoreType))
      break;
    chain.scoreMaps.push_back(map);
    t = map.getResult();
  }
  if (failed(matchSoftmax(chain, t, allowed)))
    return failure();
  // cols comes from exactly one operand, which brings no other free
  // dimension; the other operand brings exactly one: rows.
  Value lhs = scores.getLhs(), rhs = scores.getRhs();
  SmallVector<std::string> lhsFree = freeDims(scores.getResult(), lhs, rhs);
  SmallVector<std::string> rhsFree = freeDims(scores.getResult(), rhs, lhs);
  bool colsFromRhs = rhsFree.size() == 1 && rhsFree[0] == chain.cols;
  bool colsFromLhs = lhsFree.size() == 1 && lhsFree[0] == chain.cols;
  if (colsFromRhs == colsFromLhs)
    return failure();
  chain.q = colsFromRhs ? lhs : rhs;
  chain.k = colsFromRhs ? rhs : lhs;
  SmallVector<std::string> rows = colsFromRhs ? lhsFree : rhsFree;
  if (rows.empty())
    return failure();
  chain.rows = pickRows(rows, scores.getResult(), chain.scoreMaps, chain.cols);
  // The only score map the runtime kernels apply is the causal mask.
  if (!llvm::all_of(chain.scoreMaps, [&](MapOp map) {
        return isCausalMask(map, chain.rows, chain.cols);
      }))
    return failure();
  if (failed(matchOutput(chain, allowed)) || !fitsRuntimeKernels(chain))
    return failure();
  return chain;
}

FailureOr<StreamingGroup>
mlir::sluice::streaming::forwardGroup(SoftmaxChain &chain) {
  StreamingGroup group;
  group.members = chain.members();
  group.inputs = {chain.q, chain.k, chain.v};
  group.outputs = {chain.output.getResult()};
  if (chain.logSumExp)
    group.outputs.push_back(chain.logSumExp.getResult());
  bool causal = llvm::any_of(chain.scoreMaps, [&](MapOp map) {
    return isCausalMask(map, chain.rows, chain.cols);
  });
  group.attr = buildStreamingAttr(Phase::forward, chain.rows, chain.cols,
                                  chain.scores, causal, chain.mask);
  return group;
}

/// Takes into `group` the slices of a stacked tensor that are its Q, K or
/// V and that nothing else reads (--sluice-stack-contractions' Q, K and V
/// cut from one projection): the kernel reads them straight from the
/// stacked tensor through strides (docs/Layout.md, "Stacked Q/K/V
/// contractions"). Each input stays a value of its own: K and V read
/// renames of their own, so the boundary keeps its fixed order.
static void absorbSlices(StreamingGroup &group) {
  llvm::SmallPtrSet<Operation *, 32> members(group.members.begin(),
                                             group.members.end());
  for (unsigned index = 0; index < 3; ++index) {
    std::optional<StackedSlice> slice = matchSlice(group.inputs[index]);
    if (!slice || llvm::is_contained(group.inputs, slice->stacked) ||
        !llvm::all_of(slice->sum.getResult().getUsers(),
                      [&](Operation *user) { return members.contains(user); }))
      continue;
    group.inputs[index] = slice->stacked;
    group.members.push_back(slice->mask);
    group.members.push_back(slice->sum);
  }
}

SmallVector<StreamingGroup>
mlir::sluice::streaming::findStreamingGroups(Block &body) {
  SmallVector<StreamingGroup> groups;
  llvm::DenseSet<Operation *> claimed;
  for (ContractOp scores : body.getOps<ContractOp>()) {
    if (claimed.contains(scores))
      continue;
    FailureOr<StreamingGroup> group = failure();
    if (FailureOr<SoftmaxChain> chain = matchSoftmaxChain(scores);
        succeeded(chain))
      group = forwardGroup(*chain);
    else
      group = backwardGroup(scores);
    if (failed(group) || llvm::any_of(group->members, [&](Operation *op) {
          return claimed.contains(op);
        }))
      continue;
    absorbSlices(*group);
    claimed.insert(group->members.begin(), group->members.end());
    groups.push_back(std::move(*group));
  }
  return groups;
}
