//===- Baseline.cpp - what a framework moves, and what must move ----------===//
//
// The baseline runs a graph the way a framework does: one kernel per
// composite op (per `sluice.origin`), each contraction on its own, every
// kernel reading its inputs and writing its outputs once, dropout storing an
// element-sized mask that its backward reads, layernorm writing its mean and
// rstd. It looks through sluice.kernel ops, so fused and unfused modules of
// the same layer have the same baseline. docs/Accounting.md gives the rules.
//
//===----------------------------------------------------------------------===//

#include "dialects/sluice/Analysis/DataMovement.h"

#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/SetVector.h"

#include <map>
#include <tuple>

using namespace mlir;
using namespace mlir::sluice;

namespace {

uint64_t bytesOf(Value value) {
  auto type = llvm::cast<NamedTensorType>(value.getType());
  return *type.getNumElements() *
         (type.getElementType().getIntOrFloatBitWidth() / 8);
}

StringRef stringAttr(Operation *op, StringRef name) {
  if (auto attr = op->getAttrOfType<StringAttr>(name))
    return attr.getValue();
  return {};
}

bool isLayoutRelayout(Operation *op) {
  return llvm::isa<RelayoutOp>(op) && hasOriginKind(op, OriginKind::layout);
}

/// One graph's primitives with kernels, views and code-generation relayouts
/// looked through, and masks drawn twice (regenerated) counted once.
class FlatGraph {
public:
  explicit FlatGraph(GraphOp graph) {
    for (Operation &op : graph.getBody().front().without_terminator()) {
      if (auto kernel = llvm::dyn_cast<KernelOp>(op)) {
        for (Operation &member : kernel.getBlock().without_terminator())
          add(&member);
        continue;
      }
      add(&op);
    }
  }

  /// The primitive value `value` stands for.
  Value resolve(Value value) const {
    while (true) {
      if (auto arg = llvm::dyn_cast<BlockArgument>(value)) {
        auto kernel = llvm::dyn_cast<KernelOp>(arg.getOwner()->getParentOp());
        if (!kernel)
          return value;
        value = kernel.getInputs()[arg.getArgNumber()];
        continue;
      }
      Operation *op = value.getDefiningOp();
      if (auto kernel = llvm::dyn_cast<KernelOp>(op)) {
        value = kernel.getYield().getOperand(
            llvm::cast<OpResult>(value).getResultNumber());
        continue;
      }
      if (auto rename = llvm::dyn_cast<RenameOp>(op)) {
        value = rename.getInput();
        continue;
      }
      if (isLayoutRelayout(op)) {
        value = op->getOperand(0);
        continue;
      }
      if (auto mask = llvm::dyn_cast<RandomMaskOp>(op))
        return canonicalMasks.at(maskKey(mask));
      return value;
    }
  }

  SmallVector<Operation *> primitives;

private:
  using MaskKey = std::tuple<int64_t, double, const void *>;
  static MaskKey maskKey(RandomMaskOp mask) {
    return {mask.getStream(), mask.getProbability().convertToDouble(),
            mask.getResult().getType().getAsOpaquePointer()};
  }

  void add(Operation *op) {
    if (llvm::isa<RenameOp>(op) || isLayoutRelayout(op))
      return;
    if (auto mask = llvm::dyn_cast<RandomMaskOp>(op)) {
      auto [it, inserted] =
          canonicalMasks.try_emplace(maskKey(mask), mask.getResult());
      if (!inserted)
        return;
    }
    primitives.push_back(op);
  }

  std::map<MaskKey, Value> canonicalMasks;
};

/// Adds with overflow detection.
bool addTo(uint64_t &sum, uint64_t value) {
  return !__builtin_add_overflow(sum, value, &sum);
}

/// The baseline bytes of one graph.
FailureOr<uint64_t> baselineBytes(GraphOp graph) {
  FlatGraph flat(graph);
  bool backward = graph.getPhase() == Phase::backward;

  // Group by origin; every contraction alone.
  std::map<std::string, unsigned> groupIndex;
  SmallVector<std::pair<std::string, SmallVector<Operation *>>> groups;
  DenseMap<Operation *, unsigned> groupOf;
  unsigned unnamed = 0;
  for (Operation *op : flat.primitives) {
    std::string key;
    StringRef origin = stringAttr(op, SluiceDialect::getOriginAttrName());
    if (llvm::isa<ContractOp>(op) || origin.empty())
      key = "#" + std::to_string(unnamed++);
    else
      key = origin.str();
    auto [it, inserted] = groupIndex.try_emplace(key, groups.size());
    if (inserted)
      groups.push_back({key, {}});
    groupOf[op] = it->second;
    groups[it->second].second.push_back(op);
  }

  // Who reads each value, and what the graph returns.
  DenseMap<Value, llvm::SmallDenseSet<unsigned, 4>> readers;
  DenseMap<Value, SmallVector<Operation *>> userOps;
  for (Operation *op : flat.primitives)
    for (Value operand : op->getOperands()) {
      Value source = flat.resolve(operand);
      readers[source].insert(groupOf[op]);
      userOps[source].push_back(op);
    }
  llvm::DenseSet<Value> returned;
  for (Value value : graph.getReturnOp().getOperands())
    returned.insert(flat.resolve(value));

  uint64_t total = 0;
  for (auto [index, entry] : llvm::enumerate(groups)) {
    SmallVector<Operation *> &members = entry.second;
    std::optional<OriginKind> kind = getOriginKind(members.front());
    llvm::SmallDenseSet<Operation *, 8> inside(members.begin(), members.end());
    uint64_t bytes = 0;
    bool ok = true;
    llvm::SmallDenseSet<Value, 8> read;
    for (Operation *op : members)
      for (Value operand : op->getOperands()) {
        Value source = flat.resolve(operand);
        Operation *producer = source.getDefiningOp();
        if (producer && inside.contains(producer))
          continue;
        if (read.insert(source).second)
          ok &= addTo(bytes, bytesOf(source));
      }
    for (Operation *op : members)
      for (Value result : op->getResults()) {
        auto users = readers.lookup(result);
        bool escapes =
            returned.contains(result) ||
            llvm::any_of(users, [&](unsigned user) { return user != index; });
        // A composite op (an unfused inference graph) writes all results.
        if (escapes || llvm::isa<CompositeOpInterface>(op)) {
          ok &= addTo(bytes, bytesOf(result));
          continue;
        }
        // A framework's dropout stores an element-sized mask in the forward
        // and reads it in the backward.
        if (kind == OriginKind::dropout && llvm::isa<RandomMaskOp>(op))
          ok &= addTo(bytes, bytesOf(result));
        // Its layernorm (RMSNorm) writes the mean and rstd (the rstd): the
        // statistics that the full-size ops of the norm read back.
        if ((kind == OriginKind::layernorm || kind == OriginKind::rmsnorm) &&
            !backward && llvm::isa<MapOp>(op)) {
          auto type = llvm::cast<NamedTensorType>(result.getType());
          bool readByFullOp =
              llvm::any_of(userOps.lookup(result), [&](Operation *user) {
                return llvm::isa<MapOp>(user) && inside.contains(user) &&
                       llvm::cast<NamedTensorType>(user->getResult(0).getType())
                               .getRank() > type.getRank();
              });
          if (readByFullOp)
            ok &= addTo(bytes, bytesOf(result));
        }
      }
    if (!ok || !addTo(total, bytes))
      return graph.emitOpError() << "its baseline byte count overflows 64 bits";
  }
  return total;
}

/// Boundary arguments read (those used) plus results written (those that
/// are not arguments passed through).
FailureOr<uint64_t> lowerBoundBytes(GraphOp graph) {
  FlatGraph flat(graph);
  uint64_t total = 0;
  bool ok = true;
  for (BlockArgument arg : graph.getArguments())
    if (!arg.use_empty())
      ok &= addTo(total, bytesOf(arg));
  llvm::SmallDenseSet<Value, 8> written;
  for (Value value : graph.getReturnOp().getOperands()) {
    Value source = flat.resolve(value);
    if (llvm::isa<BlockArgument>(source) || !written.insert(source).second)
      continue;
    ok &= addTo(total, bytesOf(source));
  }
  if (!ok)
    return graph.emitOpError()
           << "its lower-bound byte count overflows 64 bits";
  return total;
}

} // namespace

FailureOr<uint64_t> mlir::sluice::graphBaselineBytes(GraphOp graph) {
  if (auto recorded = graph->getAttrOfType<IntegerAttr>(kBaselineBytesAttrName))
    return recorded.getValue().getZExtValue();
  return baselineBytes(graph);
}

LogicalResult mlir::sluice::countBaseline(ModuleOp module, PhaseBytes &baseline,
                                          PhaseBytes &lowerBound) {
  baseline = {};
  lowerBound = {};
  for (GraphOp graph : module.getOps<GraphOp>()) {
    FailureOr<uint64_t> base = graphBaselineBytes(graph);
    FailureOr<uint64_t> bound = lowerBoundBytes(graph);
    if (failed(base) || failed(bound))
      return failure();
    unsigned phase = static_cast<unsigned>(graph.getPhase());
    if (!addTo(baseline.byPhase[phase], *base) ||
        !addTo(baseline.total, *base) ||
        !addTo(lowerBound.byPhase[phase], *bound) ||
        !addTo(lowerBound.total, *bound))
      return module.emitError() << "the baseline byte count overflows 64 bits";
  }
  return success();
}
