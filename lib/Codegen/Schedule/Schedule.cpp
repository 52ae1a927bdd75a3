//===- Schedule.cpp - thread mappings for fused kernels -------------------===//
//
// The iteration space D of a fused kernel is the union of its ops' domains
// (a map's, mask's or relayout's result dims; a reduce's input dims). With
// reductions, R is their reduced dims and the outer dims are D \ R; without,
// the outer dims are the dims every op shares. Every op must cover D or
// exactly the outer dims, so one block per outer point can compute the whole
// kernel with values kept in per-thread arrays of static size.
//
//===----------------------------------------------------------------------===//

#include "sluice/Codegen/Schedule.h"

#include "dialects/sluice/Analysis/RowColumnReductions.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/STLExtras.h"

#include <algorithm>

using namespace mlir;
using namespace mlir::sluice;

namespace {
/// (name, size) pairs in some order.
using Dims = SmallVector<std::pair<std::string, int64_t>>;

Dims dimsOf(NamedTensorType type) {
  Dims dims;
  for (auto [name, size] : llvm::zip(type.getDimNames(), type.getSizes()))
    dims.emplace_back(name.getValue().str(), size);
  return dims;
}

bool contains(const Dims &dims, StringRef name) {
  return llvm::any_of(dims, [&](auto &dim) { return dim.first == name; });
}

/// True if both hold the same names (sizes are checked when D is built).
bool sameSet(const Dims &a, const Dims &b) {
  return a.size() == b.size() &&
         llvm::all_of(a, [&](auto &dim) { return contains(b, dim.first); });
}

std::string describe(const Dims &dims) {
  std::string text = "[";
  for (auto [index, dim] : llvm::enumerate(dims))
    text += (index ? ", " : "") + dim.first;
  return text + "]";
}

/// The type whose layout an op's domain is read in: the input of a reduce,
/// the result of everything else.
NamedTensorType domainType(Operation *op) {
  if (auto reduce = llvm::dyn_cast<ReduceOp>(op))
    return reduce.getInput().getType();
  return llvm::cast<NamedTensorType>(op->getResult(0).getType());
}

int64_t roundUp(int64_t value, int64_t multiple) {
  return (value + multiple - 1) / multiple * multiple;
}
int64_t ceilDiv(int64_t value, int64_t divisor) {
  return (value + divisor - 1) / divisor;
}

/// The CUDA grid-size cap; larger spaces are covered by grid-stride loops.
constexpr int64_t kMaxGrid = 65535;
/// Vector groups a thread aims to handle in a row block.
constexpr int64_t kGroupsPerThread = 4;
/// Inner points a thread handles at most in a row block (when the row is
/// long enough for more threads): values kept across stages live in
/// per-thread arrays of this size, and two or three of them must fit in
/// registers (the static checks allow 64 per thread).
constexpr int64_t kMaxElementsPerThread = 16;
} // namespace

/// Rows of a kernel with column reductions go to at most this many chunks
/// (blocks or tasks), each writing one partial per column (the CUDA
/// emitter sizes them to the device instead).
constexpr int64_t kRowChunks = 64;

FailureOr<KernelSchedule> mlir::sluice::scheduleOps(ArrayRef<Operation *> ops) {
  if (ops.empty())
    return failure();
  Dims space;
  SmallVector<std::pair<Dims, Operation *>, 2> sets;
  for (Operation *op : ops) {
    if (!llvm::isa<MapOp, ReduceOp, RandomMaskOp, RelayoutOp>(op))
      return op->emitOpError()
             << "cannot be part of a fused kernel (allowed: map, reduce, "
                "random_mask, relayout, and renames of the kernel's inputs)";
    for (auto &[name, size] : dimsOf(domainType(op))) {
      auto *it = llvm::find_if(space, [&](auto &d) { return d.first == name; });
      if (it == space.end())
        space.emplace_back(name, size);
      else if (it->second != size)
        return op->emitOpError()
               << "dimension '" << name << "' has size " << size << " here but "
               << it->second << " elsewhere in the kernel";
    }
    if (auto reduce = llvm::dyn_cast<ReduceOp>(op)) {
      Dims these;
      NamedTensorType input = reduce.getInput().getType();
      for (Attribute name : reduce.getDims()) {
        StringRef text = llvm::cast<StringAttr>(name).getValue();
        these.emplace_back(text.str(), input.getDimSize(text));
      }
      if (llvm::any_of(sets,
                       [&](auto &set) { return sameSet(set.first, these); }))
        continue;
      if (sets.size() == 2) {
        InFlightDiagnostic diag = op->emitOpError()
                                  << "reduces over " << describe(these)
                                  << " but the kernel's reductions are over "
                                  << describe(sets[0].first) << " and "
                                  << describe(sets[1].first);
        diag.attachNote(sets[0].second->getLoc()) << "first reduction here";
        return diag;
      }
      sets.emplace_back(these, op);
    }
  }
  Operation *main = nullptr;
  for (Operation *op : ops)
    if (!main && sameSet(dimsOf(domainType(op)), space))
      main = op;
  NamedTensorType mainType = domainType(main ? main : ops.front());

  // Two sets of reduced dims: row and column reductions in one kernel
  // (dialects/sluice/Analysis/RowColumnReductions.h).
  std::optional<Dims> reduced;
  bool columns = false;
  if (sets.size() == 1)
    reduced = sets[0].first;
  if (sets.size() == 2) {
    std::string why;
    Operation *where = sets[1].second;
    FailureOr<RowColumnSplit> split = splitRowColumnReductions(ops, why, where);
    if (failed(split)) {
      InFlightDiagnostic diag =
          where->emitOpError()
          << "cannot run in one kernel with reductions over "
          << describe(sets[0].first) << " and " << describe(sets[1].first)
          << ": " << why;
      diag.attachNote(sets[0].second->getLoc()) << "first reduction here";
      return diag;
    }
    const Dims &rows = split->rows.count(sets[0].first.front().first)
                           ? sets[0].first
                           : sets[1].first;
    reduced = rows;
    columns = true;
  }

  // Outer dims: D minus the reduced dims, or the dims every op shares.
  Dims outer;
  for (auto &dim : space) {
    bool isOuter = reduced ? !contains(*reduced, dim.first)
                           : llvm::all_of(ops, [&](Operation *op) {
                               return domainType(op).hasDim(dim.first);
                             });
    if (isOuter)
      outer.push_back(dim);
  }
  for (Operation *op : ops) {
    Dims domain = dimsOf(domainType(op));
    bool allowed = sameSet(domain, space) || sameSet(domain, outer) ||
                   (columns && sameSet(domain, *reduced));
    if (!allowed)
      return op->emitOpError()
             << "has domain " << describe(domain)
             << ", neither the kernel's iteration space " << describe(space)
             << " nor its outer dims " << describe(outer);
  }

  KernelSchedule schedule;
  for (auto &[name, size] : dimsOf(mainType)) {
    if (contains(outer, name) && outer.size() != space.size()) {
      schedule.outerDims.push_back(name);
      schedule.outerSizes.push_back(size);
    } else {
      schedule.innerDims.push_back(name);
      schedule.innerSizes.push_back(size);
    }
  }
  for (int64_t size : schedule.outerSizes)
    schedule.outerCount *= size;
  for (int64_t size : schedule.innerSizes)
    schedule.innerCount *= size;
  schedule.mode = schedule.outerDims.empty() && !reduced
                      ? ScheduleMode::Elementwise
                      : ScheduleMode::RowBlock;

  // Vector width: 16 bytes of the widest element type, when the innermost
  // dim divides by it and some tensor is contiguous along it.
  if (!schedule.innerDims.empty()) {
    StringRef innermost = schedule.innerDims.back();
    unsigned widest = 0;
    bool contiguous = false;
    auto consider = [&](Type type) {
      auto tensor = llvm::dyn_cast<NamedTensorType>(type);
      if (!tensor || !tensor.hasDim(innermost))
        return;
      widest = std::max(widest, tensor.getElementByteWidth());
      contiguous |= tensor.getDimNames().back().getValue() == innermost;
    };
    for (Operation *op : ops) {
      for (Value operand : op->getOperands())
        consider(operand.getType());
      for (Value result : op->getResults())
        consider(result.getType());
    }
    int64_t width = widest ? 16 / widest : 1;
    if (contiguous && schedule.innerSizes.back() % width == 0)
      schedule.vectorWidth = width;
  }

  int64_t groups = ceilDiv(schedule.innerCount, schedule.vectorWidth);
  if (schedule.mode == ScheduleMode::Elementwise) {
    schedule.threadsPerBlock = std::min<int64_t>(256, roundUp(groups, 32));
    schedule.gridSize =
        std::min(kMaxGrid, ceilDiv(groups, schedule.threadsPerBlock));
    schedule.elementsPerThread = schedule.vectorWidth;
  } else {
    // With column reductions a block covers its rows one after another and
    // every thread keeps a column sum per point it covers: one vector group
    // per thread, so the blocks are wide and the sums few.
    int64_t wanted =
        columns ? groups
                : std::max(ceilDiv(groups, kGroupsPerThread),
                           ceilDiv(schedule.innerCount, kMaxElementsPerThread));
    schedule.threadsPerBlock =
        std::clamp<int64_t>(roundUp(wanted, 32), 32, 1024);
    schedule.elementsPerThread =
        ceilDiv(groups, schedule.threadsPerBlock) * schedule.vectorWidth;
    schedule.gridSize = std::min(kMaxGrid, schedule.outerCount);
    if (columns) {
      schedule.rowChunks = std::min(kRowChunks, schedule.outerCount);
      schedule.gridSize = schedule.rowChunks;
    }
    if (reduced)
      schedule.reduction = schedule.threadsPerBlock == 32
                               ? ReductionStrategy::Warp
                               : ReductionStrategy::Block;
  }
  return schedule;
}

/// True if `type` is over exactly the schedule's inner dims (per column,
/// in a row block with column reductions).
static bool isOverInnerDims(NamedTensorType type,
                            const KernelSchedule &schedule) {
  return type.getRank() == static_cast<int64_t>(schedule.innerDims.size()) &&
         llvm::all_of(schedule.innerDims,
                      [&](const std::string &dim) { return type.hasDim(dim); });
}

OpDomain mlir::sluice::domainOf(Operation *op, const KernelSchedule &schedule) {
  if (schedule.mode == ScheduleMode::Elementwise)
    return OpDomain::Full;
  NamedTensorType type = domainType(op);
  if (type.getRank() == schedule.outerDims.size() + schedule.innerDims.size())
    return OpDomain::Full;
  return hasColumnReductions(schedule) && isOverInnerDims(type, schedule)
             ? OpDomain::Column
             : OpDomain::Outer;
}

bool mlir::sluice::hasColumnReductions(const KernelSchedule &schedule) {
  return schedule.mode == ScheduleMode::RowBlock && schedule.rowChunks > 0;
}

bool mlir::sluice::isColumnReduce(Operation *op,
                                  const KernelSchedule &schedule) {
  auto reduce = llvm::dyn_cast<ReduceOp>(op);
  return reduce && hasColumnReductions(schedule) &&
         isOverInnerDims(reduce.getResult().getType(), schedule);
}

SmallVector<Operation *> mlir::sluice::kernelMembers(KernelOp kernel) {
  SmallVector<Operation *> ops;
  for (Operation &op : kernel.getBlock().without_terminator()) {
    if (auto rename = llvm::dyn_cast<RenameOp>(op))
      if (llvm::isa<BlockArgument>(rename.getInput()))
        continue;
    ops.push_back(&op);
  }
  return ops;
}

FailureOr<KernelSchedule> mlir::sluice::scheduleKernel(KernelOp kernel) {
  if (kernel.getKind() != KernelKind::fused)
    return kernel.emitOpError()
           << "is a gemm kernel; only fused kernels have a thread schedule";
  SmallVector<Operation *> ops = kernelMembers(kernel);
  if (ops.empty())
    return kernel.emitOpError() << "is empty: nothing to schedule";
  return scheduleOps(ops);
}

exec::ScheduleAttr KernelSchedule::toAttr(MLIRContext *context) const {
  Builder builder(context);
  auto strings = [&](ArrayRef<std::string> names) {
    SmallVector<StringRef> refs(names.begin(), names.end());
    return builder.getStrArrayAttr(refs);
  };
  exec::ReductionStrategy strategy =
      reduction == ReductionStrategy::Warp    ? exec::ReductionStrategy::warp
      : reduction == ReductionStrategy::Block ? exec::ReductionStrategy::block
                                              : exec::ReductionStrategy::none;
  exec::ScheduleMode execMode =
      mode == ScheduleMode::Elementwise ? exec::ScheduleMode::elementwise
      : mode == ScheduleMode::RowBlock  ? exec::ScheduleMode::row_block
                                        : exec::ScheduleMode::column_block;
  return exec::ScheduleAttr::get(context, execMode, strategy, gridSize,
                                 threadsPerBlock, vectorWidth,
                                 elementsPerThread, strings(outerDims),
                                 strings(innerDims), rowChunks, rowsPerBlock);
}
