//===- SluiceOps.cpp - sluice operations ----------------------------------===//
//
// Verifiers and the graph op's custom assembly. Every diagnostic names the
// offending dimension, operand or attribute.
//
//===----------------------------------------------------------------------===//

#include "dialects/sluice/SluiceOps.h"
#include "dialects/sluice/SluiceBuilders.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/FunctionImplementation.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallSet.h"
#include "llvm/ADT/StringSet.h"

#include <cmath>

using namespace mlir;
using namespace mlir::sluice;

//===----------------------------------------------------------------------===//
// Shared checks
//===----------------------------------------------------------------------===//

static NamedTensorType tensorType(Value value) {
  return llvm::cast<NamedTensorType>(value.getType());
}

/// Every dimension of `sub` exists in `super` with the same size. Used for
/// broadcasting by name: `sub` is broadcast along the dimensions it lacks.
static LogicalResult verifyDimsSubset(Operation *op, NamedTensorType sub,
                                      StringRef subWhat, NamedTensorType super,
                                      StringRef superWhat) {
  for (auto [name, size] : llvm::zip(sub.getDimNames(), sub.getSizes())) {
    std::optional<unsigned> position = super.getDimPosition(name.getValue());
    if (!position)
      return op->emitOpError()
             << subWhat << " has dimension '" << name.getValue()
             << "' that the " << superWhat << " lacks";
    if (super.getSizes()[*position] != size)
      return op->emitOpError()
             << "dimension '" << name.getValue() << "' has size " << size
             << " in the " << subWhat << " but "
             << super.getSizes()[*position] << " in the " << superWhat;
  }
  return success();
}

/// Both tensors hold exactly the same (name, size) dimensions.
static LogicalResult verifySameDims(Operation *op, NamedTensorType lhs,
                                    StringRef lhsWhat, NamedTensorType rhs,
                                    StringRef rhsWhat) {
  if (failed(verifyDimsSubset(op, lhs, lhsWhat, rhs, rhsWhat)) ||
      failed(verifyDimsSubset(op, rhs, rhsWhat, lhs, lhsWhat)))
    return failure();
  return success();
}

static LogicalResult verifySameElementType(Operation *op, NamedTensorType lhs,
                                           StringRef lhsWhat, NamedTensorType rhs,
                                           StringRef rhsWhat) {
  if (lhs.getElementType() != rhs.getElementType())
    return op->emitOpError()
           << lhsWhat << " has element type " << lhs.getElementType()
           << " but " << rhsWhat << " has " << rhs.getElementType();
  return success();
}

/// `names` is a non-empty list of distinct dimensions of `type`.
static LogicalResult verifyDimList(Operation *op, ArrayAttr names,
                                   StringRef attrName, NamedTensorType type,
                                   StringRef typeWhat) {
  if (names.empty())
    return op->emitOpError() << "'" << attrName
                             << "' must name at least one dimension";
  llvm::StringSet<> seen;
  for (Attribute attr : names) {
    StringRef name = llvm::cast<StringAttr>(attr).getValue();
    if (!seen.insert(name).second)
      return op->emitOpError()
             << "'" << attrName << "' names dimension '" << name << "' twice";
    if (!type.hasDim(name))
      return op->emitOpError() << "'" << attrName << "' names dimension '"
                               << name << "' that the " << typeWhat
                               << " lacks";
  }
  return success();
}

static SmallVector<StringAttr> toStringAttrs(ArrayAttr names) {
  return llvm::map_to_vector(
      names, [](Attribute attr) { return llvm::cast<StringAttr>(attr); });
}

/// The result of removing `dims` from `input` must have exactly the remaining
/// dimensions (in any layout).
static LogicalResult verifyReducedType(Operation *op, NamedTensorType input,
                                       ArrayAttr dims, NamedTensorType reduced,
                                       StringRef reducedWhat) {
  NamedTensorType expected = input.dropDims(toStringAttrs(dims));
  return verifySameDims(op, reduced, reducedWhat, expected,
                        "input without the reduced dimensions");
}

static LogicalResult verifyProbability(Operation *op, double probability) {
  if (!(probability >= 0.0 && probability < 1.0))
    return op->emitOpError() << "probability must be in [0, 1), got "
                             << probability;
  return success();
}

//===----------------------------------------------------------------------===//
// GraphOp
//===----------------------------------------------------------------------===//

void GraphOp::build(OpBuilder &builder, OperationState &state, StringRef name,
                    ArrayRef<StringRef> argNames, TypeRange argTypes,
                    ArrayRef<StringRef> resultNames, TypeRange resultTypes,
                    Phase phase) {
  state.addAttribute(SymbolTable::getSymbolAttrName(),
                     builder.getStringAttr(name));
  state.addAttribute(getFunctionTypeAttrName(state.name),
                     TypeAttr::get(builder.getFunctionType(argTypes,
                                                           resultTypes)));
  state.addAttribute(getPhaseAttrName(state.name),
                     PhaseAttr::get(builder.getContext(), phase));
  auto nameDicts = [&](ArrayRef<StringRef> names) {
    return llvm::map_to_vector(names, [&](StringRef boundaryName) {
      return builder.getDictionaryAttr(builder.getNamedAttr(
          SluiceDialect::getNameAttrName(),
          builder.getStringAttr(boundaryName)));
    });
  };
  SmallVector<DictionaryAttr> argDicts = nameDicts(argNames);
  SmallVector<DictionaryAttr> resultDicts = nameDicts(resultNames);
  call_interface_impl::addArgAndResultAttrs(
      builder, state, argDicts, resultDicts, getArgAttrsAttrName(state.name),
      getResAttrsAttrName(state.name));
  Region *body = state.addRegion();
  Block *block = new Block();
  body->push_back(block);
  for (Type type : argTypes)
    block->addArgument(type, state.location);
}

ParseResult GraphOp::parse(OpAsmParser &parser, OperationState &result) {
  auto buildFuncType =
      [](Builder &builder, ArrayRef<Type> argTypes, ArrayRef<Type> results,
         function_interface_impl::VariadicFlag,
         std::string &) { return builder.getFunctionType(argTypes, results); };
  SMLoc loc = parser.getCurrentLocation();
  if (function_interface_impl::parseFunctionOp(
          parser, result, /*allowVariadic=*/false,
          getFunctionTypeAttrName(result.name), buildFuncType,
          getArgAttrsAttrName(result.name), getResAttrsAttrName(result.name)))
    return failure();
  // A `phase` of another kind would be silently dropped when the op is
  // created (leaving a null phase behind), so reject it here.
  Attribute phase = result.attributes.get(getPhaseAttrName(result.name));
  if (phase && !llvm::isa<PhaseAttr>(phase))
    return parser.emitError(loc)
           << "'phase' must be #sluice<phase forward> or "
              "#sluice<phase backward>, got "
           << phase;
  return success();
}

// As function_interface_impl::printFunctionOp, but the default phase
// (forward) is elided: only `attributes {phase = #sluice<phase backward>}`
// is printed.
void GraphOp::print(OpAsmPrinter &printer) {
  printer << ' ';
  StringRef visibilityAttrName = SymbolTable::getVisibilityAttrName();
  if (auto visibility = (*this)->getAttrOfType<StringAttr>(visibilityAttrName))
    printer << visibility.getValue() << ' ';
  printer.printSymbolName(getSymName());
  function_interface_impl::printFunctionSignature(
      printer, *this, getArgumentTypes(), /*isVariadic=*/false,
      getResultTypes());
  SmallVector<StringRef, 5> elided = {
      visibilityAttrName, getFunctionTypeAttrName().getValue(),
      getArgAttrsAttrName().getValue(), getResAttrsAttrName().getValue()};
  if (getPhase() == Phase::forward)
    elided.push_back(getPhaseAttrName().getValue());
  function_interface_impl::printFunctionAttributes(printer, *this, elided);
  Region &body = getBody();
  if (!body.empty()) {
    printer << ' ';
    printer.printRegion(body, /*printEntryBlockArgs=*/false,
                        /*printBlockTerminators=*/true);
  }
}

StringRef GraphOp::getArgName(unsigned index) {
  if (auto name = getArgAttrOfType<StringAttr>(
          index, SluiceDialect::getNameAttrName()))
    return name.getValue();
  return {};
}

StringRef GraphOp::getResultName(unsigned index) {
  if (auto name = getResultAttrOfType<StringAttr>(
          index, SluiceDialect::getNameAttrName()))
    return name.getValue();
  return {};
}

StringRef GraphOp::getSavedArgSource(unsigned index) {
  if (auto saved = getArgAttrOfType<StringAttr>(
          index, SluiceDialect::getSavedAttrName()))
    return saved.getValue();
  return {};
}

StringRef GraphOp::getSavedResultSource(unsigned index) {
  if (auto saved = getResultAttrOfType<StringAttr>(
          index, SluiceDialect::getSavedAttrName()))
    return saved.getValue();
  return {};
}

bool GraphOp::isSavedArg(unsigned index) {
  return static_cast<bool>(getArgAttr(index, SluiceDialect::getSavedAttrName()));
}

bool GraphOp::isSavedResult(unsigned index) {
  return static_cast<bool>(
      getResultAttr(index, SluiceDialect::getSavedAttrName()));
}

BlockArgument GraphOp::lookupArgument(StringRef name) {
  for (unsigned i = 0, e = getNumArguments(); i < e; ++i)
    if (getArgName(i) == name)
      return getArgument(i);
  return {};
}

ReturnOp GraphOp::getReturnOp() {
  return llvm::cast<ReturnOp>(getBody().front().getTerminator());
}

void GraphOp::getAsmBlockArgumentNames(Region &region,
                                       OpAsmSetValueNameFn setNameFn) {
  if (&region != &getBody())
    return;
  for (auto [index, arg] : llvm::enumerate(region.getArguments())) {
    StringRef name = getArgName(index);
    // SSA names must be identifiers; other names keep the default numbering.
    if (!name.empty() && llvm::all_of(name, [](char c) {
          return llvm::isAlnum(c) || c == '_';
        }))
      setNameFn(arg, name);
  }
}

LogicalResult GraphOp::verify() {
  llvm::StringSet<> seen;
  auto checkNames = [&](unsigned count, StringRef what,
                        function_ref<StringRef(unsigned)> nameOf,
                        function_ref<Type(unsigned)> typeOf) -> LogicalResult {
    for (unsigned i = 0; i < count; ++i) {
      StringRef name = nameOf(i);
      if (name.empty())
        return emitOpError() << what << " #" << i << " has no '"
                             << SluiceDialect::getNameAttrName()
                             << "' string attribute";
      if (!seen.insert(name).second)
        return emitOpError() << "boundary name '" << name
                             << "' is used more than once";
      if (!llvm::isa<NamedTensorType>(typeOf(i)))
        return emitOpError() << what << " '" << name
                             << "' must be a !sluice.tensor, got "
                             << typeOf(i);
    }
    return success();
  };
  if (failed(checkNames(
          getNumArguments(), "argument",
          [&](unsigned i) { return getArgName(i); },
          [&](unsigned i) { return getArgumentTypes()[i]; })) ||
      failed(checkNames(
          getNumResults(), "result",
          [&](unsigned i) { return getResultName(i); },
          [&](unsigned i) { return getResultTypes()[i]; })))
    return failure();
  Block &block = getBody().front();
  if (block.getNumArguments() != getNumArguments())
    return emitOpError() << "body has " << block.getNumArguments()
                         << " arguments but the signature has "
                         << getNumArguments();
  for (auto [index, arg] : llvm::enumerate(block.getArguments()))
    if (arg.getType() != getArgumentTypes()[index])
      return emitOpError() << "body argument #" << index << " has type "
                           << arg.getType() << " but the signature says "
                           << getArgumentTypes()[index];
  if (block.empty() || !llvm::isa<ReturnOp>(block.back()))
    return emitOpError() << "body must end in 'sluice.return'";
  return success();
}

LogicalResult ReturnOp::verify() {
  auto graph = llvm::cast<GraphOp>((*this)->getParentOp());
  ArrayRef<Type> expected = graph.getResultTypes();
  if (getNumOperands() != expected.size())
    return emitOpError() << "returns " << getNumOperands()
                         << " values but the graph has " << expected.size()
                         << " results";
  for (auto [index, value] : llvm::enumerate(getOperands()))
    if (value.getType() != expected[index])
      return emitOpError() << "operand #" << index << " has type "
                           << value.getType() << " but graph result '"
                           << graph.getResultName(index) << "' has type "
                           << expected[index];
  return success();
}

//===----------------------------------------------------------------------===//
// Primitives
//===----------------------------------------------------------------------===//

// `max`, not `#sluice<reduce_kind max>`: the attribute's own printer would
// add a second space after the mnemonic.
static ParseResult parseReduceKind(OpAsmParser &parser, ReduceKindAttr &kind) {
  SMLoc loc = parser.getCurrentLocation();
  StringRef keyword;
  if (parser.parseKeyword(&keyword))
    return failure();
  std::optional<ReduceKind> value = symbolizeReduceKind(keyword);
  if (!value)
    return parser.emitError(loc) << "expected reduce kind 'sum' or 'max', got '"
                                 << keyword << "'";
  kind = ReduceKindAttr::get(parser.getContext(), *value);
  return success();
}

static void printReduceKind(OpAsmPrinter &printer, ReduceOp,
                            ReduceKindAttr kind) {
  printer << stringifyReduceKind(kind.getValue());
}

LogicalResult ContractOp::verify() {
  NamedTensorType lhs = tensorType(getLhs()), rhs = tensorType(getRhs()),
             result = tensorType(getResult());
  if (failed(verifySameElementType(*this, lhs, "lhs", rhs, "rhs")) ||
      failed(verifySameElementType(*this, lhs, "lhs", result, "result")))
    return failure();
  // Shared dimensions agree in size.
  for (auto [name, size] : llvm::zip(lhs.getDimNames(), lhs.getSizes())) {
    std::optional<unsigned> position = rhs.getDimPosition(name.getValue());
    if (position && rhs.getSizes()[*position] != size)
      return emitOpError() << "dimension '" << name.getValue()
                           << "' has size " << size << " in the lhs but "
                           << rhs.getSizes()[*position] << " in the rhs";
  }
  // Every result dimension comes from an operand, with the same size.
  for (auto [name, size] : llvm::zip(result.getDimNames(), result.getSizes())) {
    NamedTensorType source = lhs.hasDim(name.getValue()) ? lhs : rhs;
    if (!source.hasDim(name.getValue()))
      return emitOpError() << "result dimension '" << name.getValue()
                           << "' appears in no operand";
    if (source.getDimSize(name.getValue()) != size)
      return emitOpError() << "dimension '" << name.getValue()
                           << "' has size " << size << " in the result but "
                           << source.getDimSize(name.getValue())
                           << " in the operands";
  }
  // Every operand dimension is batch, contracted or free: none is summed
  // within one operand alone.
  auto checkOperand = [&](NamedTensorType self, NamedTensorType other,
                          StringRef what) -> LogicalResult {
    for (StringAttr name : self.getDimNames())
      if (!other.hasDim(name.getValue()) && !result.hasDim(name.getValue()))
        return emitOpError() << what << " dimension '" << name.getValue()
                             << "' appears in neither the other operand nor "
                                "the result";
    return success();
  };
  return failure(failed(checkOperand(lhs, rhs, "lhs")) ||
                 failed(checkOperand(rhs, lhs, "rhs")));
}

YieldOp MapOp::getYield() {
  return llvm::cast<YieldOp>(getBody().front().getTerminator());
}

LogicalResult MapOp::verify() {
  NamedTensorType result = tensorType(getResult());
  for (auto [index, input] : llvm::enumerate(getInputs()))
    if (failed(verifyDimsSubset(*this, tensorType(input),
                                "input #" + std::to_string(index), result,
                                "result")))
      return failure();
  llvm::StringSet<> seenIndexDims;
  for (Attribute attr : getIndexDims()) {
    StringRef name = llvm::cast<StringAttr>(attr).getValue();
    if (!result.hasDim(name))
      return emitOpError() << "'index_dims' names dimension '" << name
                           << "' that the result lacks";
    if (!seenIndexDims.insert(name).second)
      return emitOpError() << "'index_dims' names dimension '" << name
                           << "' twice";
  }
  Block &body = getBody().front();
  unsigned numInputs = getInputs().size();
  unsigned expectedArgs = numInputs + getIndexDims().size();
  if (body.getNumArguments() != expectedArgs)
    return emitOpError() << "body must take " << numInputs
                         << " float arguments and " << getIndexDims().size()
                         << " index arguments, got "
                         << body.getNumArguments() << " arguments";
  for (auto [index, arg] : llvm::enumerate(body.getArguments())) {
    bool wantIndex = index >= numInputs;
    if (wantIndex ? !arg.getType().isIndex()
                  : !llvm::isa<FloatType>(arg.getType()))
      return emitOpError() << "body argument #" << index << " must be "
                           << (wantIndex ? "index" : "a float") << ", got "
                           << arg.getType();
  }
  if (body.empty() || !llvm::isa<YieldOp>(body.back()))
    return emitOpError() << "body must end in 'sluice.yield'";
  for (Operation &op : body.without_terminator()) {
    StringRef dialect = op.getDialect() ? op.getDialect()->getNamespace() : "";
    if (dialect != "arith" && dialect != "math")
      return op.emitOpError()
             << "is not allowed in a sluice.map body; only arith and math "
                "ops are";
  }
  return success();
}

LogicalResult ReduceOp::verify() {
  NamedTensorType input = tensorType(getInput()), result = tensorType(getResult());
  if (failed(verifyDimList(*this, getDims(), "dims", input, "input")))
    return failure();
  return verifyReducedType(*this, input, getDims(), result, "result");
}

LogicalResult RandomMaskOp::verify() {
  return verifyProbability(*this, getProbability().convertToDouble());
}

LogicalResult RelayoutOp::verify() {
  NamedTensorType input = tensorType(getInput()), result = tensorType(getResult());
  if (failed(verifySameElementType(*this, input, "input", result, "result")))
    return failure();
  return verifySameDims(*this, result, "result", input, "input");
}

LogicalResult RenameOp::verify() {
  NamedTensorType input = tensorType(getInput()), result = tensorType(getResult());
  if (failed(verifySameElementType(*this, input, "input", result, "result")))
    return failure();
  if (input.getRank() != result.getRank())
    return emitOpError() << "result has rank " << result.getRank()
                         << " but the input has rank " << input.getRank();
  for (unsigned i = 0; i < input.getRank(); ++i)
    if (input.getSizes()[i] != result.getSizes()[i])
      return emitOpError() << "result dimension '"
                           << result.getDimNames()[i].getValue() << "' (#"
                           << i << ") has size " << result.getSizes()[i]
                           << " but input dimension '"
                           << input.getDimNames()[i].getValue()
                           << "' has size " << input.getSizes()[i];
  return success();
}

//===----------------------------------------------------------------------===//
// Composites
//===----------------------------------------------------------------------===//

LogicalResult BiasAddOp::verify() {
  NamedTensorType input = tensorType(getInput()), result = tensorType(getResult());
  if (failed(verifyDimsSubset(*this, tensorType(getBias()), "bias", input,
                              "input")) ||
      failed(verifySameElementType(*this, tensorType(getBias()), "bias",
                                   input, "input")) ||
      failed(verifySameElementType(*this, input, "input", result, "result")))
    return failure();
  return verifySameDims(*this, result, "result", input, "input");
}

LogicalResult ResidualAddOp::verify() {
  NamedTensorType lhs = tensorType(getLhs()), rhs = tensorType(getRhs()),
             result = tensorType(getResult());
  if (failed(verifySameDims(*this, rhs, "rhs", lhs, "lhs")) ||
      failed(verifySameElementType(*this, rhs, "rhs", lhs, "lhs")) ||
      failed(verifySameElementType(*this, lhs, "lhs", result, "result")))
    return failure();
  return verifySameDims(*this, result, "result", lhs, "lhs");
}

LogicalResult SoftmaxOp::verify() {
  if (!tensorType(getInput()).hasDim(getDim()))
    return emitOpError() << "softmax dimension '" << getDim()
                         << "' is not a dimension of the input";
  return success();
}

/// The checks layernorm and RMSNorm share: `dims` names input dimensions,
/// each of `params` (scale, bias) holds exactly them, the result has the
/// input's dimensions, each of `stats` the others, and eps is positive.
static LogicalResult
verifyNormalization(Operation *op, Value input, ArrayAttr dims,
                    ArrayRef<std::pair<Value, StringRef>> params, Value result,
                    ArrayRef<std::pair<Value, StringRef>> stats, double eps) {
  NamedTensorType inputType = tensorType(input);
  if (failed(verifyDimList(op, dims, "dims", inputType, "input")))
    return failure();
  NamedTensorType normalized = inputType.withLayout(toStringAttrs(dims));
  for (auto [param, name] : params)
    if (failed(verifySameDims(op, tensorType(param), name, normalized,
                              "normalized dimensions")))
      return failure();
  if (failed(verifySameDims(op, tensorType(result), "result", inputType,
                            "input")))
    return failure();
  for (auto [stat, name] : stats)
    if (failed(verifyReducedType(op, inputType, dims, tensorType(stat), name)))
      return failure();
  if (!(eps > 0.0))
    return op->emitOpError() << "eps must be positive, got " << eps;
  return success();
}

LogicalResult LayerNormOp::verify() {
  return verifyNormalization(
      *this, getInput(), getDims(), {{getScale(), "scale"}, {getBias(), "bias"}},
      getResult(), {{getMean(), "mean"}, {getRstd(), "rstd"}},
      getEps().convertToDouble());
}

LogicalResult RMSNormOp::verify() {
  return verifyNormalization(*this, getInput(), getDims(),
                             {{getScale(), "scale"}}, getResult(),
                             {{getRstd(), "rstd"}}, getEps().convertToDouble());
}

LogicalResult RopeOp::verify() {
  NamedTensorType input = tensorType(getInput());
  StringRef dims[] = {getPair(), getFreq(), getPosition()};
  for (StringRef dim : dims)
    if (!input.hasDim(dim))
      return emitOpError() << "dimension '" << dim
                           << "' is not a dimension of the input";
  if (getPair() == getFreq() || getPair() == getPosition() ||
      getFreq() == getPosition())
    return emitOpError() << "pair, freq and position must be three different "
                            "dimensions";
  if (input.getDimSize(getPair()) != 2)
    return emitOpError() << "pair dimension '" << getPair()
                         << "' must have size 2, got "
                         << input.getDimSize(getPair());
  double theta = getTheta().convertToDouble();
  if (!(theta > 0.0) || !std::isfinite(theta))
    return emitOpError() << "theta must be positive and finite, got " << theta;
  return success();
}

LogicalResult DropoutOp::verify() {
  NamedTensorType input = tensorType(getInput());
  if (tensorType(getResult()) != input)
    return emitOpError() << "result type " << getResult().getType()
                         << " must equal the input type " << input;
  if (failed(verifySameDims(*this, tensorType(getMask()), "mask", input,
                            "input")) ||
      failed(verifySameElementType(*this, tensorType(getMask()), "mask", input,
                                   "input")))
    return failure();
  return verifyProbability(*this, getProbability().convertToDouble());
}

LogicalResult CausalMaskOp::verify() {
  NamedTensorType input = tensorType(getInput());
  for (StringRef dim : {getQuery(), getKey()})
    if (!input.hasDim(dim))
      return emitOpError() << "dimension '" << dim
                           << "' is not a dimension of the input";
  if (getQuery() == getKey())
    return emitOpError() << "query and key must be different dimensions";
  return success();
}

//===----------------------------------------------------------------------===//
// Kernels
//===----------------------------------------------------------------------===//

KernelYieldOp KernelOp::getYield() {
  return llvm::cast<KernelYieldOp>(getBlock().getTerminator());
}

ContractOp KernelOp::getContraction() {
  if (getKind() != KernelKind::gemm)
    return nullptr;
  for (Operation &op : getBlock())
    if (auto contract = llvm::dyn_cast<ContractOp>(op))
      return contract;
  return nullptr;
}

BlockArgument KernelOp::getAccumulator() {
  ContractOp contract = getContraction();
  if (!contract || getEpilogue() != Epilogue::accumulate)
    return nullptr;
  for (Operation *user : contract.getResult().getUsers())
    if (auto map = llvm::dyn_cast<MapOp>(user))
      for (Value input : map.getInputs())
        if (auto arg = llvm::dyn_cast<BlockArgument>(input))
          return arg;
  return nullptr;
}

/// True if a top-level op after `kernel` reads `value` (or a rename of it).
static bool readAfter(Value value, KernelOp kernel) {
  for (Operation *user : value.getUsers()) {
    if (auto rename = llvm::dyn_cast<RenameOp>(user)) {
      if (readAfter(rename.getResult(), kernel))
        return true;
      continue;
    }
    if (user != kernel.getOperation() &&
        (user->getBlock() != kernel->getBlock() ||
         kernel->isBeforeInBlock(user)))
      return true;
  }
  return false;
}

Value KernelOp::getAccumulatedStorage() {
  BlockArgument accumulator = getAccumulator();
  if (!accumulator)
    return nullptr;
  Value input = getInputs()[accumulator.getArgNumber()];
  Value source = resolveView(input);
  if (!llvm::isa<OpResult>(source) || readAfter(source, *this))
    return nullptr;
  return input;
}

/// The shape of an `accumulate` kernel: one result, the sum of the product
/// and an input of the product's type.
static LogicalResult verifyAccumulate(KernelOp kernel) {
  ContractOp contract = kernel.getContraction();
  BlockArgument accumulator = kernel.getAccumulator();
  auto sum = accumulator && contract.getResult().hasOneUse()
                 ? llvm::dyn_cast<MapOp>(*contract.getResult().user_begin())
                 : MapOp();
  if (!sum || !isSumOfInputs(sum) ||
      accumulator.getType() != contract.getResult().getType() ||
      sum.getResult().getType() != contract.getResult().getType())
    return kernel.emitOpError()
           << "with epilogue 'accumulate' must add its product to an input "
              "of the product's type with one 'sluice.map' (a + b)";
  if (kernel.getNumResults() != 1 ||
      kernel.getYield().getOperand(0) != sum.getResult())
    return kernel.emitOpError() << "with epilogue 'accumulate' must yield "
                                   "the sum and nothing else";
  return success();
}

LogicalResult KernelOp::verify() {
  Block &body = getBlock();
  if (body.getArgumentTypes() != getInputs().getTypes())
    return emitOpError() << "body arguments must have the input types";
  if (body.empty() || !llvm::isa<KernelYieldOp>(body.back()))
    return emitOpError() << "body must end in 'sluice.kernel_yield'";
  if (getYield().getOperandTypes() != getResultTypes())
    return emitOpError() << "yielded types must be the result types";
  unsigned numContractions = 0;
  for (Operation &op : body.without_terminator()) {
    if (llvm::isa<ContractOp>(op)) {
      ++numContractions;
      continue;
    }
    if (!llvm::isa<MapOp, ReduceOp, RandomMaskOp, RelayoutOp, RenameOp>(op))
      return op.emitOpError()
             << "is not allowed in a sluice.kernel; only map, reduce, "
                "random_mask, relayout, rename and (in a gemm kernel) one "
                "contract are";
  }
  if (getKind() == KernelKind::fused && numContractions != 0)
    return emitOpError() << "of kind 'fused' must not hold a contraction";
  if (getKind() == KernelKind::gemm && numContractions != 1)
    return emitOpError() << "of kind 'gemm' must hold exactly one "
                            "contraction, got "
                         << numContractions;
  if (getEpilogue() == Epilogue::accumulate &&
      (getKind() != KernelKind::gemm || failed(verifyAccumulate(*this))))
    return getKind() == KernelKind::gemm
               ? failure()
               : emitOpError() << "with epilogue 'accumulate' must be of "
                                  "kind 'gemm'";
  if ((getKind() == KernelKind::streaming) != getStreaming().has_value())
    return emitOpError() << "must carry a 'streaming' attribute exactly when "
                            "its kind is 'streaming'";
  if (getKind() == KernelKind::streaming && numContractions < 2)
    return emitOpError() << "of kind 'streaming' must hold at least two "
                            "contractions, got "
                         << numContractions;
  for (int64_t index : getPacked())
    if (index < 0 || index >= static_cast<int64_t>(getNumResults()))
      return emitOpError() << "'packed' names result #" << index
                           << " but the kernel has " << getNumResults()
                           << " results";
  return success();
}

#define GET_OP_CLASSES
#include "dialects/sluice/SluiceOps.cpp.inc"
