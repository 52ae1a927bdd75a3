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
  auto compare = select.getCondition().getDefiningOp<arith::CmpIOp>();
  if (!compare || compare.getPredicate() != arith::CmpIPredicate::eq)
    return std::nullopt;
  Value other = compare.getLhs() == index   ? compare.getRhs()
                : compare.getRhs() == index ? compare.getLhs()
                                            : Value();
  IntegerAttr which;
  if (!other || !matchPattern(other, m_Constant(&which)))
    return std::nullopt;
  // Nothing else in the body: constants, the comparison, the select.
  for (Operation &op : body.without_terminator())
    if (&op != select && &op != compare && !llvm::isa<arith::ConstantOp>(op))
      return std::nullopt;
  return which.getInt();
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
