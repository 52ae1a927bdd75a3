//===- Run.cpp - execute a compiled layer on named tensors ----------------===//

#include "sluice/Driver/Run.h"

#include "llvm/ADT/StringMap.h"

using namespace mlir;
using namespace mlir::sluice;

namespace {
/// The graphs of a module in execution order.
struct Entry {
  GraphOp forward;
  GraphOp backward; // null for inference
};
} // namespace

static llvm::Error makeError(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

static llvm::Expected<Entry> findEntry(ModuleOp module) {
  Entry entry;
  unsigned numForward = 0, numBackward = 0;
  for (GraphOp graph : module.getOps<GraphOp>()) {
    if (graph.getPhase() == Phase::forward) {
      entry.forward = graph;
      ++numForward;
    } else {
      entry.backward = graph;
      ++numBackward;
    }
  }
  if (numForward != 1 || numBackward > 1)
    return makeError("expected one forward graph and at most one backward "
                     "graph, found " +
                     llvm::Twine(numForward) + " forward and " +
                     llvm::Twine(numBackward) + " backward graphs");
  return entry;
}

/// The logical shape of a boundary tensor: its `sluice.shape`, or the sizes
/// of its named dimensions.
static std::vector<int64_t> logicalShape(DictionaryAttr attrs, Type type) {
  if (attrs)
    if (auto shape =
            attrs.getAs<DenseI64ArrayAttr>(SluiceDialect::getShapeAttrName()))
      return std::vector<int64_t>(shape.asArrayRef().begin(),
                                  shape.asArrayRef().end());
  ArrayRef<int64_t> sizes = llvm::cast<NamedTensorType>(type).getSizes();
  return std::vector<int64_t>(sizes.begin(), sizes.end());
}

static NamedArray describe(StringRef name, DictionaryAttr attrs, Type type) {
  return NamedArray{name.str(), logicalShape(attrs, type), {}};
}

namespace mlir::sluice {
llvm::Expected<RunSignature> getRunSignature(ModuleOp module) {
  llvm::Expected<Entry> entry = findEntry(module);
  if (!entry)
    return entry.takeError();
  RunSignature signature;
  GraphOp forward = entry->forward;
  for (unsigned i = 0; i < forward.getNumArguments(); ++i)
    signature.inputs.push_back(describe(forward.getArgName(i),
                                        forward.getArgAttrDict(i),
                                        forward.getArgumentTypes()[i]));
  for (unsigned i = 0; i < forward.getNumResults(); ++i)
    if (!forward.isSavedResult(i))
      signature.outputs.push_back(describe(forward.getResultName(i),
                                           forward.getResultAttrDict(i),
                                           forward.getResultTypes()[i]));
  if (GraphOp backward = entry->backward) {
    for (unsigned i = 0; i < backward.getNumArguments(); ++i)
      if (!backward.isSavedArg(i))
        signature.inputs.push_back(describe(backward.getArgName(i),
                                            backward.getArgAttrDict(i),
                                            backward.getArgumentTypes()[i]));
    for (unsigned i = 0; i < backward.getNumResults(); ++i)
      signature.outputs.push_back(describe(backward.getResultName(i),
                                           backward.getResultAttrDict(i),
                                           backward.getResultTypes()[i]));
  }
  return signature;
}
} // namespace mlir::sluice

static std::string formatShape(ArrayRef<int64_t> shape) {
  std::string text = "[";
  for (auto [index, size] : llvm::enumerate(shape))
    text += (index ? ", " : "") + std::to_string(size);
  return text + "]";
}

/// Gathers the arguments of `graph` by name from `available`.
static llvm::Expected<std::vector<Buffer>>
gatherArguments(GraphOp graph, const llvm::StringMap<Buffer> &available) {
  std::vector<Buffer> arguments;
  for (unsigned i = 0; i < graph.getNumArguments(); ++i) {
    StringRef name = graph.getArgName(i);
    auto it = available.find(name);
    if (it == available.end())
      return makeError("graph '" + graph.getSymName() + "' needs '" + name +
                       "', which nothing provides");
    arguments.push_back(it->second);
  }
  return arguments;
}

namespace mlir::sluice {
llvm::Expected<std::vector<NamedArray>>
runModule(ModuleOp module, llvm::ArrayRef<NamedArray> inputs,
          const InterpreterOptions &options) {
  llvm::Expected<RunSignature> signature = getRunSignature(module);
  if (!signature)
    return signature.takeError();
  llvm::Expected<Entry> entry = findEntry(module);
  if (!entry)
    return entry.takeError();

  // Every expected input exactly once, with its logical shape.
  llvm::StringMap<const NamedArray *> given;
  for (const NamedArray &input : inputs)
    if (!given.insert({input.name, &input}).second)
      return makeError("input '" + input.name + "' is given twice");
  llvm::StringMap<Type> types;
  for (GraphOp graph : {entry->forward, entry->backward})
    if (graph)
      for (unsigned i = 0; i < graph.getNumArguments(); ++i)
        types[graph.getArgName(i)] = graph.getArgumentTypes()[i];
  llvm::StringMap<Buffer> values;
  for (const NamedArray &expected : signature->inputs) {
    auto it = given.find(expected.name);
    if (it == given.end())
      return makeError("missing input '" + expected.name + "' (shape " +
                       formatShape(expected.shape) + ")");
    const NamedArray &input = *it->second;
    if (input.shape != expected.shape)
      return makeError("input '" + expected.name + "' has shape " +
                       formatShape(input.shape) + ", expected " +
                       formatShape(expected.shape));
    values[expected.name] =
        Buffer{llvm::cast<NamedTensorType>(types[expected.name]), input.data};
    given.erase(it);
  }
  if (!given.empty())
    return makeError("unexpected input '" + given.begin()->getKey() +
                     "'; this layer takes no tensor of that name");

  // Forward, then backward on the saved tensors and the cotangents.
  llvm::StringMap<Buffer> outputs;
  for (GraphOp graph : {entry->forward, entry->backward}) {
    if (!graph)
      continue;
    llvm::Expected<std::vector<Buffer>> arguments =
        gatherArguments(graph, values);
    if (!arguments)
      return arguments.takeError();
    llvm::Expected<std::vector<Buffer>> results =
        interpret(graph, *arguments, options);
    if (!results)
      return results.takeError();
    for (unsigned i = 0; i < graph.getNumResults(); ++i) {
      values[graph.getResultName(i)] = (*results)[i];
      outputs[graph.getResultName(i)] = std::move((*results)[i]);
    }
  }
  std::vector<NamedArray> result;
  for (const NamedArray &expected : signature->outputs) {
    NamedArray output = expected;
    output.data = std::move(outputs[expected.name].data);
    result.push_back(std::move(output));
  }
  return result;
}
} // namespace mlir::sluice
