//===- AutodiffRules.cpp - vector-Jacobian products of the primitives -----===//
//
// One VJP rule per primitive: given the cotangent of the op's result, build
// the gradient contribution of every operand that needs one. Rules read the
// forward values they need through BackwardContext::getPrimal, which is what
// makes a tensor "saved"; each rule reads only what its formula uses.
//
//===----------------------------------------------------------------------===//

#include "dialects/sluice/SluiceBuilders.h"
#include "dialects/sluice/Transforms/Autodiff.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::sluice;
using namespace mlir::sluice::autodiff;

void mlir::sluice::autodiff::setOpName(Value value, const Twine &name) {
  Operation *op = value.getDefiningOp();
  op->setAttr(SluiceDialect::getOpNameAttrName(),
              StringAttr::get(op->getContext(), name));
}

StringRef mlir::sluice::autodiff::getOpName(Operation *op) {
  if (auto name =
          op->getAttrOfType<StringAttr>(SluiceDialect::getOpNameAttrName()))
    return name.getValue();
  return {};
}

/// `value` converted to exactly `type` (same dimensions): itself, a relayout
/// when only the layout differs, else an identity map (which also converts
/// the element type).
static Value convertTo(OpBuilder &builder, Location loc, Value value,
                       NamedTensorType type, FloatType computeType,
                       const Twine &name) {
  NamedTensorType from = getTensorType(value);
  if (from == type)
    return value;
  Value converted;
  if (from.getElementType() == type.getElementType())
    converted = RelayoutOp::create(builder, loc, type, value);
  else
    converted = buildMap(
        builder, loc, type, {value}, computeType,
        [](OpBuilder &, Location, ValueRange args) { return args[0]; });
  setOpName(converted, name);
  return converted;
}

//===----------------------------------------------------------------------===//
// contract
//===----------------------------------------------------------------------===//

/// out = s * sum lhs * rhs  =>  d_lhs = s * sum dout * rhs and
/// d_rhs = s * sum lhs * dout, each an einsum onto the operand's dimensions.
static LogicalResult contractVjp(ContractOp op, Value cotangent,
                                 BackwardContext &context) {
  OpBuilder &builder = context.getBuilder();
  StringRef name = getOpName(op);
  if (context.needsGradient(op.getLhs())) {
    Value grad = ContractOp::create(builder, op.getLoc(), op.getLhs().getType(),
                                    cotangent, context.getPrimal(op.getRhs()),
                                    op.getScaleAttr());
    setOpName(grad, name + ".grad_lhs");
    context.accumulate(op.getLhs(), grad);
  }
  if (context.needsGradient(op.getRhs())) {
    Value grad = ContractOp::create(builder, op.getLoc(), op.getRhs().getType(),
                                    context.getPrimal(op.getLhs()), cotangent,
                                    op.getScaleAttr());
    setOpName(grad, name + ".grad_rhs");
    context.accumulate(op.getRhs(), grad);
  }
  return success();
}

//===----------------------------------------------------------------------===//
// map
//===----------------------------------------------------------------------===//

namespace {
/// The body of d(map)/d(input k) * cotangent, built in a detached block whose
/// arguments are: the forward body's arguments, the cotangent, and (if
/// `useOutput`) the map's own result.
struct PartialBody {
  Block *block = nullptr;
  unsigned numForwardArgs = 0;
  bool useOutput = false;
  /// The derivative is identically zero.
  bool zero = false;

  PartialBody() = default;
  PartialBody(const PartialBody &) = delete;
  PartialBody(PartialBody &&other) { *this = std::move(other); }
  PartialBody &operator=(PartialBody &&other) {
    std::swap(block, other.block);
    numForwardArgs = other.numForwardArgs;
    useOutput = other.useOutput;
    zero = other.zero;
    return *this;
  }
  ~PartialBody() {
    if (!block)
      return;
    block->dropAllDefinedValueUses();
    delete block;
  }

  BlockArgument cotangentArg() { return block->getArgument(numForwardArgs); }
  BlockArgument outputArg() { return block->getArgument(numForwardArgs + 1); }
  Value yielded() {
    return llvm::cast<YieldOp>(block->getTerminator()).getValue();
  }
  /// The gradient is the cotangent itself (d/dk = 1, e.g. an addition).
  bool isCotangent() { return yielded() == cotangentArg(); }
};
} // namespace

/// derivative * cotangent, folding a zero or one derivative.
static Value scaleByCotangent(OpBuilder &builder, Location loc,
                              Value derivative, PartialBody &partial) {
  if (matchPattern(derivative, m_AnyZeroFloat()))
    return derivative;
  if (matchPattern(derivative, m_OneFloat()))
    return partial.cotangentArg();
  return arith::MulFOp::create(builder, loc, derivative,
                               partial.cotangentArg());
}

static FailureOr<PartialBody> buildPartialBody(MapOp map, unsigned wrt,
                                               bool useOutput) {
  Block &forwardBody = map.getBody().front();
  Location loc = map.getLoc();
  Type cotangentType = map.getYield().getValue().getType();
  PartialBody partial;
  partial.block = new Block();
  partial.numForwardArgs = forwardBody.getNumArguments();
  partial.useOutput = useOutput;
  for (BlockArgument arg : forwardBody.getArguments())
    partial.block->addArgument(arg.getType(), loc);
  partial.block->addArgument(cotangentType, loc);
  if (useOutput)
    partial.block->addArgument(cotangentType, loc);

  // A detached block has no context of its own to hand to the builder.
  OpBuilder builder(map.getContext());
  builder.setInsertionPointToEnd(partial.block);
  FailureOr<Value> derivative = buildPartialDerivative(
      builder, loc, forwardBody, wrt,
      partial.block->getArguments().take_front(partial.numForwardArgs),
      useOutput ? Value(partial.outputArg()) : Value());
  if (failed(derivative))
    return failure();
  Value grad;
  if (!*derivative || matchPattern(*derivative, m_AnyZeroFloat()))
    partial.zero = true;
  else if (matchPattern(*derivative, m_OneFloat()))
    grad = partial.cotangentArg();
  else if (auto select = derivative->getDefiningOp<arith::SelectOp>();
           select && (matchPattern(select.getTrueValue(), m_AnyZeroFloat()) ||
                      matchPattern(select.getFalseValue(), m_AnyZeroFloat())))
    // c ? 0 : d' (relu, causal mask): select the product, so that a
    // non-finite cotangent where the derivative is zero does not leak.
    grad = arith::SelectOp::create(
        builder, loc, select.getCondition(),
        scaleByCotangent(builder, loc, select.getTrueValue(), partial),
        scaleByCotangent(builder, loc, select.getFalseValue(), partial));
  else
    grad = arith::MulFOp::create(builder, loc, *derivative,
                                 partial.cotangentArg());
  if (partial.zero)
    grad = partial.cotangentArg();
  YieldOp::create(builder, loc, grad);
  // Drop the primal clones the derivative does not read.
  for (Operation &op : llvm::make_early_inc_range(
           llvm::reverse(partial.block->getOperations())))
    if (!llvm::isa<YieldOp>(op) && isOpTriviallyDead(&op))
      op.erase();
  return partial;
}

/// The forward tensors a partial body reads (distinct, in input order),
/// with the map's result last when the body reads its output.
static SmallVector<Value> readTensors(MapOp map, PartialBody &partial) {
  llvm::SetVector<Value> tensors;
  for (auto [index, input] : llvm::enumerate(map.getInputs()))
    if (!partial.block->getArgument(index).use_empty())
      tensors.insert(input);
  if (partial.useOutput && !partial.outputArg().use_empty())
    tensors.insert(map.getResult());
  return SmallVector<Value>(tensors.begin(), tensors.end());
}

/// How many new saved tensors a partial body costs.
static unsigned savedCost(MapOp map, PartialBody &partial,
                          BackwardContext &context) {
  return llvm::count_if(readTensors(map, partial), [&](Value tensor) {
    return !context.isPrimalAvailable(tensor);
  });
}

/// Turns a partial body into a `sluice.map` over the map's iteration space.
static Value emitPartialMap(MapOp map, PartialBody &partial, Value cotangent,
                            NamedTensorType resultType,
                            BackwardContext &context) {
  OpBuilder &builder = context.getBuilder();
  Location loc = map.getLoc();
  Block *block = partial.block;
  unsigned numInputs = map.getInputs().size();

  // Operands: the read inputs, the cotangent, the output; then index dims.
  SmallVector<Value> operands;
  SmallVector<BlockArgument> floatArgs;
  for (unsigned i = 0; i < numInputs; ++i) {
    if (block->getArgument(i).use_empty())
      continue;
    operands.push_back(context.getPrimal(map.getInputs()[i]));
    floatArgs.push_back(block->getArgument(i));
  }
  operands.push_back(cotangent);
  floatArgs.push_back(partial.cotangentArg());
  if (partial.useOutput && !partial.outputArg().use_empty()) {
    operands.push_back(context.getPrimal(map.getResult()));
    floatArgs.push_back(partial.outputArg());
  }
  SmallVector<StringRef> indexDims;
  SmallVector<BlockArgument> indexArgs;
  for (auto [index, dim] : llvm::enumerate(map.getIndexDims())) {
    BlockArgument arg = block->getArgument(numInputs + index);
    if (arg.use_empty())
      continue;
    indexDims.push_back(llvm::cast<StringAttr>(dim).getValue());
    indexArgs.push_back(arg);
  }

  auto grad = MapOp::create(builder, loc, resultType, operands,
                            builder.getStrArrayAttr(indexDims));
  Block *body = new Block();
  grad.getBody().push_back(body);
  for (BlockArgument arg : llvm::concat<BlockArgument>(floatArgs, indexArgs))
    arg.replaceAllUsesWith(body->addArgument(arg.getType(), loc));
  body->getOperations().splice(body->end(), block->getOperations());
  return grad.getResult();
}

/// For every float input k that needs a gradient:
/// d_k = reduce_sum over the dims k lacks of (d body / d k) * dout.
static LogicalResult mapVjp(MapOp map, Value cotangent,
                            BackwardContext &context) {
  OpBuilder &builder = context.getBuilder();
  Location loc = map.getLoc();
  StringRef name = getOpName(map);
  NamedTensorType resultType = map.getResult().getType();
  for (auto [index, input] : llvm::enumerate(map.getInputs())) {
    if (!context.needsGradient(input))
      continue;
    // Two candidate bodies: one recomputing the body's result from the
    // inputs, one reading the map's output; keep the one that saves fewer
    // new tensors (ties: recompute).
    FailureOr<PartialBody> recompute = buildPartialBody(map, index, false);
    if (failed(recompute))
      return failure();
    if (recompute->zero)
      continue;
    FailureOr<PartialBody> reuse = buildPartialBody(map, index, true);
    if (failed(reuse))
      return failure();
    PartialBody &chosen =
        savedCost(map, *reuse, context) < savedCost(map, *recompute, context)
            ? *reuse
            : *recompute;

    NamedTensorType inputType = getTensorType(input);
    SmallVector<StringRef> broadcastDims;
    for (StringAttr dim : resultType.getDimNames())
      if (!inputType.hasDim(dim.getValue()))
        broadcastDims.push_back(dim.getValue());
    std::string gradName = (name + ".grad" + Twine(index)).str();

    Value grad;
    if (chosen.isCotangent()) {
      grad = cotangent;
    } else {
      // Broadcast gradients are summed in f32 at least.
      Type elementType = broadcastDims.empty() ? inputType.getElementType()
                                               : builder.getF32Type();
      grad = emitPartialMap(map, chosen, cotangent,
                            resultType.withElementType(elementType), context);
      setOpName(grad, gradName);
    }
    if (!broadcastDims.empty()) {
      grad = buildReduce(builder, loc, ReduceKind::sum, grad, broadcastDims,
                         inputType.getElementType());
      setOpName(grad, gradName + ".sum");
    }
    grad = convertTo(builder, loc, grad, inputType, context.getComputeType(),
                     gradName + ".convert");
    context.accumulate(input, grad);
  }
  return success();
}

//===----------------------------------------------------------------------===//
// reduce, relayout, rename
//===----------------------------------------------------------------------===//

/// sum: d_in = broadcast(dout). max: d_in = (x == max) ? dout : 0, so every
/// position equal to the max receives the whole cotangent (ties included).
static LogicalResult reduceVjp(ReduceOp op, Value cotangent,
                               BackwardContext &context) {
  if (!context.needsGradient(op.getInput()))
    return success();
  OpBuilder &builder = context.getBuilder();
  Location loc = op.getLoc();
  NamedTensorType inputType = op.getInput().getType();
  FloatType computeType = context.getComputeType();
  Value grad;
  if (op.getKind() == ReduceKind::sum) {
    grad = buildMap(
        builder, loc, inputType, {cotangent}, computeType,
        [](OpBuilder &, Location, ValueRange args) { return args[0]; });
  } else {
    grad =
        buildMap(builder, loc, inputType,
                 {context.getPrimal(op.getInput()),
                  context.getPrimal(op.getResult()), cotangent},
                 computeType, [&](OpBuilder &b, Location loc, ValueRange args) {
                   Value isMax = arith::CmpFOp::create(
                       b, loc, arith::CmpFPredicate::OEQ, args[0], args[1]);
                   return arith::SelectOp::create(
                              b, loc, isMax, args[2],
                              buildConstant(b, loc, computeType, 0.0))
                       .getResult();
                 });
  }
  setOpName(grad, getOpName(op) + ".grad");
  context.accumulate(op.getInput(), grad);
  return success();
}

static LogicalResult relayoutVjp(RelayoutOp op, Value cotangent,
                                 BackwardContext &context) {
  if (!context.needsGradient(op.getInput()))
    return success();
  Value grad = convertTo(context.getBuilder(), op.getLoc(), cotangent,
                         op.getInput().getType(), context.getComputeType(),
                         getOpName(op) + ".grad");
  context.accumulate(op.getInput(), grad);
  return success();
}

static LogicalResult renameVjp(RenameOp op, Value cotangent,
                               BackwardContext &context) {
  if (!context.needsGradient(op.getInput()))
    return success();
  Value grad = RenameOp::create(context.getBuilder(), op.getLoc(),
                                op.getInput().getType(), cotangent);
  setOpName(grad, getOpName(op) + ".grad");
  context.accumulate(op.getInput(), grad);
  return success();
}

LogicalResult mlir::sluice::autodiff::buildVjp(Operation *op, Value cotangent,
                                               BackwardContext &context) {
  return llvm::TypeSwitch<Operation *, LogicalResult>(op)
      .Case([&](ContractOp contract) {
        return contractVjp(contract, cotangent, context);
      })
      .Case([&](MapOp map) { return mapVjp(map, cotangent, context); })
      .Case([&](ReduceOp reduce) {
        return reduceVjp(reduce, cotangent, context);
      })
      .Case([&](RelayoutOp relayout) {
        return relayoutVjp(relayout, cotangent, context);
      })
      .Case([&](RenameOp rename) {
        return renameVjp(rename, cotangent, context);
      })
      // A random mask has no operands: nothing flows back.
      .Case([&](RandomMaskOp) { return success(); })
      .Default([&](Operation *other) {
        return other->emitOpError()
               << "has no vector-Jacobian rule (decompose composites first)";
      });
}
