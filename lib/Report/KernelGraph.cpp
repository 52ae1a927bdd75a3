//===- KernelGraph.cpp - the fused graph as plain data --------------------===//

#include "sluice/Report/KernelGraph.h"

#include "dialects/sluice/SluiceBuilders.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace mlir::sluice;

namespace {
/// The boundary name of `graph`'s argument `index` (empty if none).
StringRef argumentName(GraphOp graph, unsigned index) {
  if (auto name = graph.getArgAttrOfType<StringAttr>(
          index, SluiceDialect::getNameAttrName()))
    return name.getValue();
  return {};
}

/// The boundary name of `graph`'s result `index` (empty if none).
StringRef resultName(GraphOp graph, unsigned index) {
  if (auto name = graph.getResultAttrOfType<StringAttr>(
          index, SluiceDialect::getNameAttrName()))
    return name.getValue();
  return {};
}

/// The name of a top-level op's result: for a kernel, the report name of the
/// member that computes it; else the op's name, plus "#i" when it has
/// several results.
std::string valueName(OpResult result, StringRef opName) {
  Operation *op = result.getOwner();
  if (auto kernel = llvm::dyn_cast<KernelOp>(op)) {
    Value yielded =
        resolveView(kernel.getYield()->getOperand(result.getResultNumber()));
    if (Operation *member = yielded.getDefiningOp())
      if (auto name = member->getAttrOfType<StringAttr>(
              SluiceDialect::getOpNameAttrName()))
        return name.getValue().str();
  }
  if (op->getNumResults() == 1)
    return opName.str();
  return (opName + "#" + llvm::Twine(result.getResultNumber())).str();
}

uint64_t valueBytes(Value value) {
  return llvm::cast<NamedTensorType>(value.getType())
      .getNumBytes()
      .value_or(0);
}

std::string formatScaled(double value, llvm::StringRef unit) {
  static const char *prefixes[] = {"", "k", "M", "G", "T", "P", "E"};
  unsigned index = 0;
  while (value >= 1000.0 && index + 1 < std::size(prefixes)) {
    value /= 1000.0;
    ++index;
  }
  std::string text;
  llvm::raw_string_ostream os(text);
  os << llvm::format(index == 0 ? "%.0f" : "%.3g", value) << " "
     << prefixes[index] << unit;
  return text;
}
} // namespace

std::string mlir::sluice::formatBytes(uint64_t bytes) {
  return formatScaled(static_cast<double>(bytes), "B");
}

std::string mlir::sluice::formatFlop(uint64_t flop) {
  return formatScaled(static_cast<double>(flop), "FLOP");
}

std::string mlir::sluice::formatRate(double flopPerSecond) {
  return formatScaled(flopPerSecond, "FLOP/s");
}

KernelGraph mlir::sluice::collectKernelGraph(ModuleOp module,
                                             const ModuleCounts &counts) {
  KernelGraph result;
  llvm::DenseMap<Operation *, unsigned> nodeOf;
  auto addNodes = [&](Phase phase) {
    for (const OpCount &count : counts.ops) {
      if (count.phase != phase)
        continue;
      KernelNode node;
      node.name = count.name;
      auto graph = count.op->getParentOfType<GraphOp>();
      node.graph = graph ? graph.getSymName().str() : "";
      node.phase = count.phase;
      node.kind = count.kind;
      if (auto kernel = llvm::dyn_cast<KernelOp>(count.op))
        node.kind = stringifyKernelKind(kernel.getKind()).str();
      node.opClass = count.opClass;
      for (const MemberCount &member : count.members)
        node.members.push_back(member.name);
      node.epilogue = count.epilogue;
      node.cost = count.cost;
      nodeOf[count.op] = result.nodes.size();
      result.nodes.push_back(std::move(node));
    }
  };
  addNodes(Phase::forward);
  addNodes(Phase::backward);

  // Saved tensors: the forward node that writes each one, by boundary name.
  llvm::StringMap<std::pair<unsigned, uint64_t>> savedProducer;
  for (GraphOp graph : module.getOps<GraphOp>()) {
    Operation *terminator = graph.getBody().front().getTerminator();
    for (auto [index, operand] : llvm::enumerate(terminator->getOperands())) {
      StringRef name = resultName(graph, index);
      Operation *producer = resolveView(operand).getDefiningOp();
      auto it = producer ? nodeOf.find(producer) : nodeOf.end();
      if (it == nodeOf.end())
        continue;
      KernelNode &node = result.nodes[it->second];
      if (graph.isSavedResult(index)) {
        node.saves.push_back(graph.getSavedResultSource(index).str());
        savedProducer[name] = {it->second, valueBytes(operand)};
      } else {
        node.writes.push_back(name.str());
      }
    }
  }

  for (GraphOp graph : module.getOps<GraphOp>()) {
    for (Operation &op : graph.getBody().front()) {
      auto consumer = nodeOf.find(&op);
      if (consumer == nodeOf.end())
        continue;
      KernelNode &node = result.nodes[consumer->second];
      for (Value operand : op.getOperands()) {
        Value source = resolveView(operand);
        if (auto argument = llvm::dyn_cast<BlockArgument>(source)) {
          StringRef name = argumentName(graph, argument.getArgNumber());
          auto saved = savedProducer.find(name);
          if (saved != savedProducer.end()) {
            result.edges.push_back({saved->second.first, consumer->second,
                                    name.str(), saved->second.second, true});
          } else if (graph.isSavedArg(argument.getArgNumber())) {
            node.readsSaved.push_back(
                graph.getSavedArgSource(argument.getArgNumber()).str());
          } else {
            node.reads.push_back(name.str());
          }
          continue;
        }
        auto producer = nodeOf.find(source.getDefiningOp());
        if (producer == nodeOf.end())
          continue;
        result.edges.push_back(
            {producer->second, consumer->second,
             valueName(llvm::cast<OpResult>(source),
                       result.nodes[producer->second].name),
             valueBytes(source), false});
      }
    }
  }
  return result;
}
