//===- MemoryPlan.cpp - one arena with lifetime-based reuse ---------------===//
//
// Lifetimes are measured in steps (top-level ops: forward graphs, then
// backward graphs); saved tensors go to the saved region, the others to the
// scratch region; offsets in each come from a greedy-by-size placement:
// buffers in decreasing size, each at the lowest aligned offset that no
// buffer of its region live at the same time occupies. docs/MemoryPlan.md
// states the rules.
//
//===----------------------------------------------------------------------===//

#include "sluice/Codegen/MemoryPlan.h"

#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/CheckedArithmetic.h"
#include "llvm/Support/MathExtras.h"

#include <algorithm>
#include <numeric>

using namespace mlir;
using namespace mlir::sluice;

/// `sum = a + b`; true if that overflows 64 bits.
static bool addOverflows(uint64_t a, uint64_t b, uint64_t &sum) {
  std::optional<uint64_t> result = llvm::checkedAddUnsigned(a, b);
  if (!result)
    return true;
  sum = *result;
  return false;
}

const ArenaBuffer *MemoryPlan::lookup(Value value) const {
  auto it = bufferIndex.find(value);
  if (it == bufferIndex.end())
    return nullptr;
  return &buffers[it->second];
}

namespace {
/// Builds one MemoryPlan; every step of planMemory is a method.
class Planner {
public:
  explicit Planner(ModuleOp module) : module(module) {}

  FailureOr<MemoryPlan> run() {
    collectGraphs();
    collectSteps();
    findCallerMemory();
    if (failed(createBuffers()))
      return failure();
    computeLifetimes();
    if (failed(place()))
      return failure();
    return std::move(plan);
  }

private:
  /// Forward graphs in module order, then backward graphs; each backward
  /// paired with the forward whose saved tensors it reads.
  void collectGraphs() {
    for (GraphOp graph : module.getOps<GraphOp>())
      if (graph.getPhase() == Phase::forward)
        graphs.push_back(graph);
    unsigned numForward = graphs.size();
    for (GraphOp graph : module.getOps<GraphOp>())
      if (graph.getPhase() == Phase::backward)
        graphs.push_back(graph);
    // Autodiff names the pair @G_forward / @G_backward; a module holding a
    // single forward graph pairs it with every backward graph.
    for (GraphOp backward : llvm::drop_begin(graphs, numForward)) {
      StringRef name = backward.getSymName();
      GraphOp forward;
      if (name.consume_back("_backward"))
        for (GraphOp candidate : llvm::ArrayRef(graphs).take_front(numForward))
          if (candidate.getSymName() == (name + "_forward").str())
            forward = candidate;
      if (!forward && numForward == 1)
        forward = graphs.front();
      if (forward && !backwardOf.count(forward))
        backwardOf[forward] = backward;
    }
  }

  /// Numbers the top-level ops and resolves renames to the value they view.
  void collectSteps() {
    for (GraphOp graph : graphs) {
      firstStepOf[graph] = plan.steps.size();
      for (Operation &op : graph.getBody().front().without_terminator()) {
        stepOf[&op] = plan.steps.size();
        plan.steps.push_back(&op);
        if (auto rename = dyn_cast<RenameOp>(op))
          rootOf[rename.getResult()] = root(rename.getInput());
        // An accumulating GEMM writes its sum over its accumulator.
        if (auto kernel = dyn_cast<KernelOp>(op))
          if (Value storage = kernel.getAccumulatedStorage()) {
            rootOf[kernel.getResult(0)] = root(storage);
            accumulated.push_back(kernel.getResult(0));
          }
      }
      if (plan.steps.size() > firstStepOf[graph])
        lastStepOf[graph] = plan.steps.size() - 1;
    }
  }

  /// The value whose bytes `value` views (itself unless it is a rename).
  Value root(Value value) const {
    auto it = rootOf.find(value);
    return it == rootOf.end() ? value : it->second;
  }

  /// Boundary arguments and boundary results are the caller's; a forward
  /// result marked `sluice.saved` that its backward graph reads is not a
  /// boundary result but a saved tensor, unless its value is the caller's
  /// anyway.
  void findCallerMemory() {
    SmallVector<std::pair<Value, BlockArgument>> savedPairs;
    SmallVector<std::string> savedPairNames;
    for (GraphOp graph : graphs) {
      GraphOp backward = backwardOf.lookup(graph);
      llvm::StringMap<BlockArgument> savedArgs;
      if (backward)
        for (unsigned i = 0, e = backward.getNumArguments(); i < e; ++i)
          if (backward.isSavedArg(i))
            savedArgs[backward.getArgName(i)] = backward.getArgument(i);
      ReturnOp ret = graph.getReturnOp();
      for (unsigned i = 0, e = ret.getNumOperands(); i < e; ++i) {
        Value value = ret.getOperand(i);
        auto saved = savedArgs.find(graph.getResultName(i));
        if (graph.getPhase() == Phase::forward && saved != savedArgs.end()) {
          savedPairs.push_back({root(value), saved->second});
          savedPairNames.push_back(saved->first().str());
        } else {
          callerRoots.insert(root(value));
        }
      }
    }
    for (auto [pair, name] : llvm::zip(savedPairs, savedPairNames)) {
      auto [value, argument] = pair;
      // Saved boundary arguments and results: the backward argument is the
      // caller's buffer too.
      if (isa<BlockArgument>(value) || callerRoots.contains(value))
        continue;
      savedReaders[value].push_back(argument);
      savedNames.try_emplace(value, name);
    }
  }

  /// One buffer per result of a computing top-level op that is not the
  /// caller's, sized from its type (bit-packed results: one bit an element).
  LogicalResult createBuffers() {
    for (GraphOp graph : graphs) {
      llvm::StringMap<unsigned> numbering;
      for (Operation &op : graph.getBody().front().without_terminator()) {
        std::string kind = op.getName().stripDialect().str();
        std::string opName;
        if (auto name = op.getAttrOfType<StringAttr>(
                SluiceDialect::getOpNameAttrName()))
          opName = name.getValue().str();
        else
          opName = kind + "_" + std::to_string(numbering[kind]++);
        if (isa<RenameOp>(op))
          continue;
        for (OpResult result : op.getResults()) {
          if (callerRoots.contains(result) || rootOf.count(result))
            continue;
          unsigned index = result.getResultNumber();
          auto type = dyn_cast<NamedTensorType>(result.getType());
          if (!type)
            return op.emitOpError()
                   << "result #" << index << " has type " << result.getType()
                   << ", which the memory plan cannot size: only sluice "
                      "tensors live in the arena";
          auto kernel = dyn_cast<KernelOp>(op);
          std::optional<uint64_t> bytes =
              type.getStoredBytes(kernel && kernel.isPacked(index));
          if (!bytes || *bytes > UINT64_MAX - (plan.alignment - 1))
            return op.emitOpError() << "result #" << index << " (" << type
                                    << ") needs more than 2^64 bytes of arena";
          ArenaBuffer buffer;
          buffer.graph = graph.getSymName().str();
          buffer.values.push_back(result);
          buffer.bytes = *bytes;
          buffer.alignedBytes = llvm::alignTo(*bytes, plan.alignment);
          buffer.firstStep = buffer.lastStep = stepOf.lookup(&op);
          auto readers = savedReaders.find(result);
          if (readers != savedReaders.end()) {
            buffer.saved = true;
            buffer.name = savedNames.lookup(result);
            llvm::append_range(buffer.values, readers->second);
          } else {
            buffer.name = op.getNumResults() > 1
                              ? opName + "#" + std::to_string(index)
                              : opName;
          }
          for (Value value : buffer.values)
            plan.bufferIndex[value] = plan.buffers.size();
          plan.buffers.push_back(std::move(buffer));
        }
      }
    }
    // A rename shares its source's buffer.
    for (auto [view, source] : rootOf) {
      auto it = plan.bufferIndex.find(source);
      if (it != plan.bufferIndex.end())
        plan.bufferIndex[view] = it->second;
    }
    return success();
  }

  /// The last step at which `value` (or a rename of it) is read. A graph's
  /// return reads at the graph's last step.
  void extendToUses(Value value, unsigned &lastStep) {
    auto graph = value.getParentRegion()->getParentOfType<GraphOp>();
    Block &block = graph.getBody().front();
    for (Operation *user : value.getUsers()) {
      Operation *top = block.findAncestorOpInBlock(*user);
      if (!top)
        continue;
      if (auto rename = dyn_cast<RenameOp>(top)) {
        extendToUses(rename.getResult(), lastStep);
      } else if (isa<ReturnOp>(top)) {
        auto last = lastStepOf.find(graph);
        if (last != lastStepOf.end())
          lastStep = std::max(lastStep, last->second);
      } else {
        lastStep = std::max(lastStep, stepOf.lookup(top));
      }
    }
  }

  void computeLifetimes() {
    // An accumulated sum keeps its accumulator's buffer alive.
    for (Value sum : accumulated)
      if (auto it = plan.bufferIndex.find(sum); it != plan.bufferIndex.end())
        extendToUses(sum, plan.buffers[it->second].lastStep);
    for (ArenaBuffer &buffer : plan.buffers) {
      for (Value value : buffer.values)
        extendToUses(value, buffer.lastStep);

      if (!buffer.saved)
        continue;
      // A saved tensor lives across the boundary: at least until its backward
      // graph starts, even if that graph never reads it.
      for (Value reader : llvm::drop_begin(buffer.values)) {
        auto backward = reader.getParentRegion()->getParentOfType<GraphOp>();
        unsigned start = firstStepOf.lookup(backward);
        if (start > 0)
          buffer.lastStep = std::max(buffer.lastStep, start - 1);
      }
    }
  }

  /// The totals, then each region by placeRegion.
  LogicalResult place() {
    uint64_t total = 0;
    for (const ArenaBuffer &buffer : plan.buffers)
      if (addOverflows(total, buffer.alignedBytes, total))
        return module.emitError()
               << "the memory plan's buffers sum to more than 2^64 bytes";
    plan.bytesWithoutReuse = total;

    // Live bytes per step, by a sweep over lifetime starts and ends; no sum
    // exceeds `total`, so none overflows.
    std::vector<uint64_t> starting(plan.steps.size() + 1, 0),
        ending(plan.steps.size() + 1, 0);
    for (const ArenaBuffer &buffer : plan.buffers) {
      starting[buffer.firstStep] += buffer.alignedBytes;
      ending[buffer.lastStep + 1] += buffer.alignedBytes;
    }
    uint64_t live = 0;
    for (size_t step = 0; step < plan.steps.size(); ++step) {
      live = live + starting[step] - ending[step];
      plan.maxLiveBytes = std::max(plan.maxLiveBytes, live);
    }

    if (failed(placeRegion(/*saved=*/true, plan.savedBytes)) ||
        failed(placeRegion(/*saved=*/false, plan.scratchBytes)))
      return failure();
    if (addOverflows(plan.savedBytes, plan.scratchBytes, plan.peakBytes))
      return module.emitError()
             << "the memory plan's regions need more than 2^64 bytes";
    return success();
  }

  /// Greedy by size over the buffers of one region (`saved` or scratch):
  /// largest first (ties: earlier first), each at the lowest aligned offset
  /// free of every already placed buffer of the region it lives with.
  /// `size` becomes the region's end.
  LogicalResult placeRegion(bool saved, uint64_t &size) {
    std::vector<unsigned> order;
    for (unsigned index = 0; index < plan.buffers.size(); ++index)
      if (plan.buffers[index].saved == saved)
        order.push_back(index);
    std::stable_sort(order.begin(), order.end(), [&](unsigned a, unsigned b) {
      const ArenaBuffer &x = plan.buffers[a], &y = plan.buffers[b];
      if (x.alignedBytes != y.alignedBytes)
        return x.alignedBytes > y.alignedBytes;
      return x.firstStep < y.firstStep;
    });
    std::vector<unsigned> placed;
    for (unsigned index : order) {
      ArenaBuffer &buffer = plan.buffers[index];
      SmallVector<const ArenaBuffer *> neighbours;
      for (unsigned other : placed)
        if (buffer.livesWith(plan.buffers[other]))
          neighbours.push_back(&plan.buffers[other]);
      llvm::sort(neighbours, [](const ArenaBuffer *a, const ArenaBuffer *b) {
        return a->offset < b->offset;
      });
      // Offsets and sizes are aligned, so every candidate is too.
      uint64_t candidate = 0, end = 0;
      for (const ArenaBuffer *neighbour : neighbours) {
        if (!addOverflows(candidate, buffer.alignedBytes, end) &&
            end <= neighbour->offset)
          break;
        candidate =
            std::max(candidate, neighbour->offset + neighbour->alignedBytes);
      }
      if (addOverflows(candidate, buffer.alignedBytes, end))
        return buffer.values.front().getDefiningOp()->emitOpError()
               << "placing '" << buffer.name
               << "' in the arena overflows 64 bits (offset " << candidate
               << ", " << buffer.alignedBytes << " bytes)";
      buffer.offset = candidate;
      size = std::max(size, end);
      placed.push_back(index);
    }
    return success();
  }

  ModuleOp module;
  MemoryPlan plan;
  SmallVector<GraphOp> graphs;
  DenseMap<GraphOp, GraphOp> backwardOf;
  /// The step range of each graph (no last step for a graph without ops).
  DenseMap<GraphOp, unsigned> firstStepOf, lastStepOf;
  DenseMap<Operation *, unsigned> stepOf;
  DenseMap<Value, Value> rootOf;
  /// Results of accumulating GEMMs: they live in their accumulator's buffer.
  SmallVector<Value> accumulated;
  DenseSet<Value> callerRoots;
  /// Saved tensors: the backward arguments that read them, and their names.
  DenseMap<Value, SmallVector<BlockArgument>> savedReaders;
  DenseMap<Value, std::string> savedNames;
};
} // namespace

FailureOr<MemoryPlan> mlir::sluice::planMemory(ModuleOp module) {
  return Planner(module).run();
}
