//===- Interpreter.cpp - the reference interpreter ------------------------===//
//
// Clones the graph into a scratch module, decomposes every composite into
// primitives (the composites' definitions), verifies the result, and runs
// the primitives one by one. Every op is evaluated by dimension names, so a
// tensor's layout only decides where its elements sit in its buffer.
//
//===----------------------------------------------------------------------===//

#include "sluice/Interpreter/Interpreter.h"

#include "ScalarBody.h"
#include "dialects/sluice/DropoutOrder.h"
#include "dialects/sluice/SluiceDecompositions.h"
#include "sluice/Interpreter/FloatRounding.h"
#include "sluice/Runtime/Philox.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Verifier.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/STLExtras.h"

#include <algorithm>
#include <cmath>
#include <string>

using namespace mlir;
using namespace mlir::sluice;

namespace {

/// An iteration space: dimensions (name, size) in row-major order.
struct Space {
  SmallVector<StringRef> names;
  SmallVector<int64_t> sizes;

  void add(StringRef name, int64_t size) {
    names.push_back(name);
    sizes.push_back(size);
  }
  int64_t numPoints() const {
    int64_t count = 1;
    for (int64_t size : sizes)
      count *= size;
    return count;
  }
};

/// The space of `type`'s dimensions in layout order.
Space spaceOf(NamedTensorType type) {
  Space space;
  for (auto [name, size] : llvm::zip(type.getDimNames(), type.getSizes()))
    space.add(name.getValue(), size);
  return space;
}

/// For each dimension of `space`, how far `type`'s buffer advances when the
/// position along it grows by one (0 if `type` lacks the dimension: a
/// broadcast).
SmallVector<int64_t> stridesOver(NamedTensorType type, const Space &space) {
  SmallVector<int64_t> layoutStrides(type.getRank(), 1);
  for (int i = static_cast<int>(type.getRank()) - 2; i >= 0; --i)
    layoutStrides[i] = layoutStrides[i + 1] * type.getSizes()[i + 1];
  SmallVector<int64_t> strides;
  for (StringRef name : space.names) {
    std::optional<unsigned> position = type.getDimPosition(name);
    strides.push_back(position ? layoutStrides[*position] : 0);
  }
  return strides;
}

int64_t offsetOf(ArrayRef<int64_t> strides, ArrayRef<int64_t> point) {
  int64_t offset = 0;
  for (auto [stride, index] : llvm::zip(strides, point))
    offset += stride * index;
  return offset;
}

/// Calls `visit(point)` for every point of `space`, row-major.
void forEachPoint(const Space &space,
                  function_ref<void(ArrayRef<int64_t>)> visit) {
  SmallVector<int64_t> point(space.sizes.size(), 0);
  int64_t count = space.numPoints();
  for (int64_t n = 0; n < count; ++n) {
    visit(point);
    for (int d = static_cast<int>(point.size()) - 1; d >= 0; --d) {
      if (++point[d] < space.sizes[d])
        break;
      point[d] = 0;
    }
  }
}

/// `names`, sorted: the order that makes reductions independent of
/// layouts.
SmallVector<StringRef> sorted(SmallVector<StringRef> names) {
  llvm::sort(names);
  return names;
}

std::string toString(Type type) {
  std::string text;
  llvm::raw_string_ostream os(text);
  type.print(os);
  return text;
}

llvm::Error opError(Operation *op, const Twine &message) {
  return llvm::createStringError("'" + op->getName().getStringRef().str() +
                                 "': " + message.str());
}

/// Runs one graph body, op by op.
class Executor {
public:
  Executor(Precision precision, uint64_t seed)
      : precision(precision), seed(seed) {}

  llvm::Error run(Block &body);
  DenseMap<Value, Buffer> values;

private:
  /// Rounds a value to the compute type (float in f32 mode).
  double compute(double value) const {
    return precision == Precision::F32 ? roundToF32(value) : value;
  }
  /// Rounds every element of `buffer` to its element type (f32 mode only).
  void store(Value result, Buffer buffer) {
    if (precision == Precision::F32)
      for (double &element : buffer.data)
        element = roundToType(element, buffer.type.getElementType());
    values[result] = std::move(buffer);
  }
  static Buffer allocate(NamedTensorType type) {
    return Buffer{type, std::vector<double>(*type.getNumElements(), 0.0)};
  }

  llvm::Error execute(ContractOp op);
  llvm::Error execute(MapOp op);
  llvm::Error execute(ReduceOp op);
  void execute(RandomMaskOp op);
  void execute(RelayoutOp op);
  void execute(RenameOp op);
  llvm::Error execute(KernelOp op);

  Precision precision;
  uint64_t seed;
};

} // namespace

llvm::Error Executor::run(Block &body) {
  for (Operation &op : body.without_terminator()) {
    llvm::Error error = llvm::Error::success();
    if (auto contract = llvm::dyn_cast<ContractOp>(op))
      error = execute(contract);
    else if (auto map = llvm::dyn_cast<MapOp>(op))
      error = execute(map);
    else if (auto reduce = llvm::dyn_cast<ReduceOp>(op))
      error = execute(reduce);
    else if (auto mask = llvm::dyn_cast<RandomMaskOp>(op))
      execute(mask);
    else if (auto relayout = llvm::dyn_cast<RelayoutOp>(op))
      execute(relayout);
    else if (auto rename = llvm::dyn_cast<RenameOp>(op))
      execute(rename);
    else if (auto kernel = llvm::dyn_cast<KernelOp>(op))
      error = execute(kernel);
    else
      error = opError(&op, "the interpreter cannot execute this op");
    if (error)
      return error;
  }
  return llvm::Error::success();
}

/// result[o] = scale * sum_c lhs * rhs, the contracted dimensions summed in
/// row-major order of their names sorted.
llvm::Error Executor::execute(ContractOp op) {
  NamedTensorType lhsType = op.getLhs().getType(),
                  rhsType = op.getRhs().getType(),
                  resultType = op.getResult().getType();
  const Buffer &lhs = values.at(op.getLhs()), &rhs = values.at(op.getRhs());
  SmallVector<StringRef> contracted;
  for (StringAttr name : lhsType.getDimNames())
    if (!resultType.hasDim(name.getValue()))
      contracted.push_back(name.getValue());
  Space space = spaceOf(resultType);
  for (StringRef name : sorted(contracted))
    space.add(name, lhsType.getDimSize(name));
  SmallVector<int64_t> lhsStrides = stridesOver(lhsType, space),
                       rhsStrides = stridesOver(rhsType, space),
                       resultStrides = stridesOver(resultType, space);
  Buffer result = allocate(resultType);
  forEachPoint(space, [&](ArrayRef<int64_t> point) {
    double product = compute(lhs.data[offsetOf(lhsStrides, point)] *
                             rhs.data[offsetOf(rhsStrides, point)]);
    double &sum = result.data[offsetOf(resultStrides, point)];
    sum = compute(sum + product);
  });
  double scale = op.getScale().convertToDouble();
  if (scale != 1.0)
    for (double &element : result.data)
      element = compute(element * compute(scale));
  store(op.getResult(), std::move(result));
  return llvm::Error::success();
}

llvm::Error Executor::execute(MapOp op) {
  llvm::Expected<ScalarBody> body = ScalarBody::compile(op, precision);
  if (!body)
    return body.takeError();
  NamedTensorType resultType = op.getResult().getType();
  Space space = spaceOf(resultType);
  SmallVector<const Buffer *> inputs;
  SmallVector<SmallVector<int64_t>> inputStrides;
  for (Value input : op.getInputs()) {
    inputs.push_back(&values.at(input));
    inputStrides.push_back(
        stridesOver(llvm::cast<NamedTensorType>(input.getType()), space));
  }
  SmallVector<unsigned> indexPositions;
  for (Attribute name : op.getIndexDims())
    indexPositions.push_back(
        *resultType.getDimPosition(llvm::cast<StringAttr>(name).getValue()));

  Buffer result = allocate(resultType);
  SmallVector<double> floats(inputs.size());
  SmallVector<int64_t> indices(indexPositions.size());
  int64_t next = 0;
  forEachPoint(space, [&](ArrayRef<int64_t> point) {
    for (size_t i = 0; i < inputs.size(); ++i)
      floats[i] = inputs[i]->data[offsetOf(inputStrides[i], point)];
    for (size_t i = 0; i < indexPositions.size(); ++i)
      indices[i] = point[indexPositions[i]];
    // The result's own layout is the space, so its offset is the counter.
    result.data[next++] = body->evaluate(floats, indices);
  });
  store(op.getResult(), std::move(result));
  return llvm::Error::success();
}

/// Sums or maxes over `dims`, each result element combining its inputs in
/// row-major order of the reduced names sorted.
llvm::Error Executor::execute(ReduceOp op) {
  NamedTensorType inputType = op.getInput().getType(),
                  resultType = op.getResult().getType();
  const Buffer &input = values.at(op.getInput());
  SmallVector<StringRef> reduced =
      llvm::map_to_vector(op.getDims(), [](Attribute name) {
        return llvm::cast<StringAttr>(name).getValue();
      });
  Space space = spaceOf(resultType);
  for (StringRef name : sorted(reduced))
    space.add(name, inputType.getDimSize(name));
  SmallVector<int64_t> inputStrides = stridesOver(inputType, space),
                       resultStrides = stridesOver(resultType, space);
  bool isMax = op.getKind() == ReduceKind::max;
  Buffer result = allocate(resultType);
  if (isMax)
    std::fill(result.data.begin(), result.data.end(), -INFINITY);
  forEachPoint(space, [&](ArrayRef<int64_t> point) {
    double element = input.data[offsetOf(inputStrides, point)];
    double &acc = result.data[offsetOf(resultStrides, point)];
    if (!isMax)
      acc = compute(acc + element);
    else if (std::isnan(element) || element > acc)
      acc = element;
  });
  store(op.getResult(), std::move(result));
  return llvm::Error::success();
}

/// Element e (in the dropout element order of dialects/sluice/DropoutOrder.h)
/// is Philox-drawn with the op's stream: 1 if kept, 0 if dropped.
void Executor::execute(RandomMaskOp op) {
  NamedTensorType type = op.getResult().getType();
  Space canonical;
  for (StringRef name : dropoutElementOrder(type))
    canonical.add(name, type.getDimSize(name));
  SmallVector<int64_t> strides = stridesOver(type, canonical);
  uint32_t threshold =
      sluice_dropout_threshold(op.getProbability().convertToDouble());
  uint64_t stream = static_cast<uint64_t>(op.getStream());
  Buffer result = allocate(type);
  uint64_t element = 0;
  forEachPoint(canonical, [&](ArrayRef<int64_t> point) {
    result.data[offsetOf(strides, point)] =
        sluice_dropout_keep(seed, stream, element++, threshold) ? 1.0 : 0.0;
  });
  store(op.getResult(), std::move(result));
}

void Executor::execute(RelayoutOp op) {
  NamedTensorType resultType = op.getResult().getType();
  const Buffer &input = values.at(op.getInput());
  Space space = spaceOf(resultType);
  SmallVector<int64_t> strides = stridesOver(input.type, space);
  Buffer result = allocate(resultType);
  int64_t next = 0;
  forEachPoint(space, [&](ArrayRef<int64_t> point) {
    result.data[next++] = input.data[offsetOf(strides, point)];
  });
  store(op.getResult(), std::move(result));
}

void Executor::execute(RenameOp op) {
  Buffer result{op.getResult().getType(), values.at(op.getInput()).data};
  store(op.getResult(), std::move(result));
}

/// A kernel means its body: the inputs bound to the block arguments, the
/// yielded values as results. Fusion changes where values live, not what
/// they are.
llvm::Error Executor::execute(KernelOp op) {
  Block &body = op.getBlock();
  // Copy before inserting: an insertion may move the map's buffers.
  for (auto [argument, input] :
       llvm::zip(body.getArguments(), op.getInputs())) {
    Buffer copy = values.at(input);
    values[argument] = std::move(copy);
  }
  if (llvm::Error error = run(body))
    return error;
  for (auto [result, yielded] :
       llvm::zip(op.getResults(), op.getYield().getOperands())) {
    Buffer copy = values.at(yielded);
    values[result] = std::move(copy);
  }
  return llvm::Error::success();
}

/// Checks `inputs` against `graph`'s signature.
static llvm::Error checkInputs(GraphOp graph, ArrayRef<Buffer> inputs) {
  ArrayRef<Type> argTypes = graph.getArgumentTypes();
  if (inputs.size() != argTypes.size())
    return llvm::createStringError(
        "graph @" + graph.getSymName().str() + " takes " +
        std::to_string(argTypes.size()) + " arguments but " +
        std::to_string(inputs.size()) + " inputs were given");
  for (auto [index, input] : llvm::enumerate(inputs)) {
    std::string name = "input #" + std::to_string(index) + " ('" +
                       graph.getArgName(index).str() + "')";
    if (input.type != argTypes[index])
      return llvm::createStringError(
          name + " has type " +
          (input.type ? toString(input.type) : std::string("<null>")) +
          " but the argument has type " + toString(argTypes[index]));
    uint64_t expected = *input.type.getNumElements();
    if (input.data.size() != expected)
      return llvm::createStringError(
          name + " has " + std::to_string(input.data.size()) +
          " elements but its type " + toString(input.type) + " has " +
          std::to_string(expected));
  }
  return llvm::Error::success();
}

/// Replaces every composite in `graph` by its decomposition, until none is
/// left.
static llvm::Error decomposeAll(GraphOp graph, FloatType computeType) {
  for (unsigned round = 0;; ++round) {
    SmallVector<CompositeOpInterface> composites;
    graph.walk([&](CompositeOpInterface op) { composites.push_back(op); });
    if (composites.empty())
      return llvm::Error::success();
    if (round == 16)
      return opError(composites.front(),
                     "still a composite after 16 rounds of decomposition");
    for (CompositeOpInterface composite : composites)
      if (failed(decomposeInPlace(composite, computeType)))
        return opError(composite, "decomposition failed");
  }
}

namespace mlir::sluice {
llvm::Expected<std::vector<Buffer>>
interpret(GraphOp graph, llvm::ArrayRef<Buffer> inputs,
          const InterpreterOptions &options) {
  if (llvm::Error error = checkInputs(graph, inputs))
    return error;

  // Diagnostics from decomposition and verification become the error text.
  MLIRContext *context = graph.getContext();
  std::string diagnostics;
  ScopedDiagnosticHandler handler(context, [&](Diagnostic &diagnostic) {
    diagnostics += diagnostic.str() + "\n";
    return success();
  });

  OwningOpRef<ModuleOp> scratch = ModuleOp::create(graph.getLoc());
  auto clone = llvm::cast<GraphOp>(graph->clone());
  scratch->push_back(clone);
  FloatType computeType =
      options.precision == Precision::F64
          ? static_cast<FloatType>(Float64Type::get(context))
          : static_cast<FloatType>(Float32Type::get(context));
  if (llvm::Error error = decomposeAll(clone, computeType))
    return llvm::joinErrors(std::move(error),
                            llvm::createStringError(diagnostics));
  if (failed(verify(*scratch)))
    return llvm::createStringError(
        "graph @" + graph.getSymName().str() +
        " is invalid after decomposition: " + diagnostics);

  Executor executor(options.precision, options.seed);
  Block &body = clone.getBody().front();
  for (auto [argument, input] : llvm::zip(body.getArguments(), inputs)) {
    Buffer copy = input;
    if (options.precision == Precision::F32)
      for (double &element : copy.data)
        element = roundToType(element, copy.type.getElementType());
    executor.values[argument] = std::move(copy);
  }
  if (llvm::Error error = executor.run(body))
    return error;

  std::vector<Buffer> results;
  for (Value returned : clone.getReturnOp().getOperands())
    results.push_back(executor.values.at(returned));
  return results;
}
} // namespace mlir::sluice
