//===- SluiceBuilders.cpp - helpers that build sluice IR ------------------===//

#include "dialects/sluice/SluiceBuilders.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/Matchers.h"

using namespace mlir;
using namespace mlir::sluice;

Value mlir::sluice::buildMap(OpBuilder &builder, Location loc,
                             NamedTensorType resultType, ValueRange inputs,
                             FloatType computeType, MapBodyBuilder body,
                             ArrayRef<StringRef> indexDims) {
  auto map = MapOp::create(builder, loc, resultType, inputs,
                           builder.getStrArrayAttr(indexDims));
  Block *block = new Block();
  map.getBody().push_back(block);
  for (size_t i = 0; i < inputs.size(); ++i)
    block->addArgument(computeType, loc);
  for (size_t i = 0; i < indexDims.size(); ++i)
    block->addArgument(builder.getIndexType(), loc);
  OpBuilder::InsertionGuard guard(builder);
  builder.setInsertionPointToStart(block);
  Value yielded = body(builder, loc, block->getArguments());
  YieldOp::create(builder, loc, yielded);
  return map.getResult();
}

Value mlir::sluice::buildReduce(OpBuilder &builder, Location loc,
                                ReduceKind kind, Value input,
                                ArrayRef<StringRef> dims, Type elementType) {
  NamedTensorType inputType = getTensorType(input);
  SmallVector<StringAttr> dimAttrs = llvm::map_to_vector(
      dims, [&](StringRef dim) { return builder.getStringAttr(dim); });
  NamedTensorType resultType = inputType.dropDims(dimAttrs);
  if (elementType)
    resultType = resultType.withElementType(elementType);
  return ReduceOp::create(builder, loc, resultType,
                          ReduceKindAttr::get(builder.getContext(), kind),
                          input, builder.getStrArrayAttr(dims))
      .getResult();
}

Value mlir::sluice::buildConstant(OpBuilder &builder, Location loc,
                                  FloatType type, double value) {
  return arith::ConstantOp::create(builder, loc, type,
                                   builder.getFloatAttr(type, value));
}

bool mlir::sluice::isSumOfInputs(MapOp map) {
  if (map.getInputs().size() != 2 || !map.getIndexDims().empty())
    return false;
  Block &body = map.getBody().front();
  if (body.getOperations().size() != 2)
    return false;
  auto add = llvm::dyn_cast<arith::AddFOp>(body.front());
  auto yield = llvm::dyn_cast<YieldOp>(body.getTerminator());
  if (!add || !yield || yield.getValue() != add.getResult())
    return false;
  Value lhs = add.getLhs(), rhs = add.getRhs();
  return (lhs == body.getArgument(0) && rhs == body.getArgument(1)) ||
         (lhs == body.getArgument(1) && rhs == body.getArgument(0));
}

/// The constant `c` of `index == c` (either operand order), if `condition`
/// is that comparison.
static std::optional<int64_t> comparedIndex(Value condition, Value index) {
  auto compare = condition.getDefiningOp<arith::CmpIOp>();
  if (!compare || compare.getPredicate() != arith::CmpIPredicate::eq)
    return std::nullopt;
  Value other = compare.getLhs() == index   ? compare.getRhs()
                : compare.getRhs() == index ? compare.getLhs()
                                            : Value();
  IntegerAttr which;
  if (!other || !matchPattern(other, m_Constant(&which)))
    return std::nullopt;
  return which.getInt();
}

std::optional<int64_t> mlir::sluice::maskedIndex(MapOp map) {
  if (map.getInputs().size() != 1 || map.getIndexDims().size() != 1)
    return std::nullopt;
  Block &body = map.getBody().front();
  Value element = body.getArgument(0), index = body.getArgument(1);
  auto select =
      body.getTerminator()->getOperand(0).getDefiningOp<arith::SelectOp>();
  if (!select || select.getTrueValue() != element)
    return std::nullopt;
  FloatAttr zero;
  if (!matchPattern(select.getFalseValue(), m_Constant(&zero)) ||
      !zero.getValue().isZero())
    return std::nullopt;
  std::optional<int64_t> which = comparedIndex(select.getCondition(), index);
  if (!which)
    return std::nullopt;
  // Nothing else in the body: constants, the comparison, the select.
  for (Operation &op : body.without_terminator())
    if (&op != select && &op != select.getCondition().getDefiningOp() &&
        !llvm::isa<arith::ConstantOp>(op))
      return std::nullopt;
  return which;
}

std::optional<SmallVector<int64_t>> mlir::sluice::stackIndices(MapOp map) {
  size_t count = map.getInputs().size();
  if (count == 0 || map.getIndexDims().size() != 1)
    return std::nullopt;
  Block &body = map.getBody().front();
  Value index = body.getArgument(count);
  int64_t size =
      getTensorType(map.getResult())
          .getDimSize(llvm::cast<StringAttr>(map.getIndexDims()[0]).getValue());
  SmallVector<int64_t> indices(count, -1);
  llvm::SmallDenseSet<int64_t> taken;
  auto take = [&](Value element, int64_t which) {
    auto argument = llvm::dyn_cast<BlockArgument>(element);
    if (!argument || argument.getOwner() != &body ||
        argument.getArgNumber() >= count ||
        indices[argument.getArgNumber()] != -1 || which < 0 || which >= size ||
        !taken.insert(which).second)
      return false;
    indices[argument.getArgNumber()] = which;
    return true;
  };
  Value rest = body.getTerminator()->getOperand(0);
  while (auto select = rest.getDefiningOp<arith::SelectOp>()) {
    std::optional<int64_t> which = comparedIndex(select.getCondition(), index);
    if (!which || !take(select.getTrueValue(), *which))
      return std::nullopt;
    rest = select.getFalseValue();
  }
  FloatAttr zero;
  if (matchPattern(rest, m_Constant(&zero))) {
    if (!zero.getValue().isZero())
      return std::nullopt;
  } else {
    // The last input at the one index no comparison took.
    int64_t left = -1;
    for (int64_t which = 0; which < size; ++which)
      if (!taken.contains(which))
        left = left == -1 ? which : -2;
    if (left < 0 || !take(rest, left))
      return std::nullopt;
  }
  if (llvm::is_contained(indices, -1))
    return std::nullopt;
  // Nothing else in the body: constants, the comparisons, the selects.
  for (Operation &op : body.without_terminator())
    if (!llvm::isa<arith::ConstantOp, arith::CmpIOp, arith::SelectOp>(op))
      return std::nullopt;
  return indices;
}

std::optional<StackedSlice> mlir::sluice::matchSlice(Value value) {
  auto sum = value.getDefiningOp<ReduceOp>();
  if (!sum || sum.getKind() != ReduceKind::sum || sum.getDims().size() != 1)
    return std::nullopt;
  auto mask = sum.getInput().getDefiningOp<MapOp>();
  std::optional<int64_t> index = mask ? maskedIndex(mask) : std::nullopt;
  if (!index || !mask.getResult().hasOneUse())
    return std::nullopt;
  StringRef dim = llvm::cast<StringAttr>(sum.getDims()[0]).getValue();
  Value stacked = mask.getInputs()[0];
  NamedTensorType type = getTensorType(stacked);
  if (llvm::cast<StringAttr>(mask.getIndexDims()[0]).getValue() != dim ||
      !type.hasDim(dim) || *index < 0 || *index >= type.getDimSize(dim) ||
      getTensorType(mask.getResult()).getRank() != type.getRank())
    return std::nullopt;
  return StackedSlice{stacked, dim, *index, mask, sum};
}

std::optional<StackedSlice> mlir::sluice::readOnlyAsSlice(Value value) {
  if (!value.hasOneUse())
    return std::nullopt;
  auto mask = llvm::dyn_cast<MapOp>(*value.getUsers().begin());
  if (!mask || !mask.getResult().hasOneUse())
    return std::nullopt;
  auto sum = llvm::dyn_cast<ReduceOp>(*mask.getResult().getUsers().begin());
  std::optional<StackedSlice> slice =
      sum ? matchSlice(sum.getResult()) : std::nullopt;
  if (!slice || slice->stacked != value)
    return std::nullopt;
  return slice;
}

Value mlir::sluice::resolveStorage(Value value) {
  while (true) {
    value = resolveView(value);
    auto kernel = value.getDefiningOp<KernelOp>();
    if (!kernel)
      return value;
    Value storage = kernel.getAccumulatedStorage();
    if (!storage)
      return value;
    value = storage;
  }
}
