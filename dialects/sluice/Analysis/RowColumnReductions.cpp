//===- RowColumnReductions.cpp - row and column sums in one kernel --------===//
//
// The rule of RowColumnReductions.h.
//
//===----------------------------------------------------------------------===//

#include "dialects/sluice/Analysis/RowColumnReductions.h"

#include "dialects/sluice/SluiceOps.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"

using namespace mlir;
using namespace mlir::sluice;

namespace {
using Names = std::set<std::string>;

Names namesOf(NamedTensorType type) {
  Names names;
  for (StringAttr name : type.getDimNames())
    names.insert(name.getValue().str());
  return names;
}

/// The dims an op loops over: a reduction's input's, else its result's.
Names domainOf(Operation *op) {
  if (auto reduce = llvm::dyn_cast<ReduceOp>(op))
    return namesOf(reduce.getInput().getType());
  return namesOf(llvm::cast<NamedTensorType>(op->getResult(0).getType()));
}

Names reducedOf(ReduceOp reduce) {
  Names names;
  for (Attribute name : reduce.getDims())
    names.insert(llvm::cast<StringAttr>(name).getValue().str());
  return names;
}
} // namespace

FailureOr<RowColumnSplit>
mlir::sluice::splitRowColumnReductions(ArrayRef<Operation *> ops,
                                       std::string &why, Operation *&where) {
  Names space;
  SmallVector<Names, 2> sets;
  for (Operation *op : ops) {
    Names domain = domainOf(op);
    space.insert(domain.begin(), domain.end());
    if (auto reduce = llvm::dyn_cast<ReduceOp>(op)) {
      Names these = reducedOf(reduce);
      if (llvm::is_contained(sets, these))
        continue;
      where = op;
      if (sets.size() == 2) {
        why = "a kernel's reductions run over at most two sets of dims";
        return failure();
      }
      sets.push_back(std::move(these));
    }
  }
  if (sets.size() != 2) {
    why = "the kernel has no row and column reductions";
    return failure();
  }
  Names both = sets[0];
  both.insert(sets[1].begin(), sets[1].end());
  if (both != space || both.size() != sets[0].size() + sets[1].size()) {
    why = "row and column reductions must split the kernel's dims between "
          "them";
    return failure();
  }

  // Whose results are read per point (by an op over the whole space, a
  // reduction included): only the rows' can be, as a column sum is known
  // only after every row. Bit k of a value: it depends on set k's results.
  llvm::DenseMap<Value, unsigned> dependsOn;
  unsigned readPerPoint = 0;
  for (Operation *op : ops) {
    unsigned bits = 0;
    for (Value operand : op->getOperands())
      bits |= dependsOn.lookup(operand);
    if (domainOf(op) == space)
      readPerPoint |= bits;
    if (auto reduce = llvm::dyn_cast<ReduceOp>(op))
      bits |= reducedOf(reduce) == sets[0] ? 1u : 2u;
    dependsOn[op->getResult(0)] = bits;
  }
  if (readPerPoint == 0 || readPerPoint == 3) {
    why = readPerPoint ? "both sets' results are read per point"
                       : "no reduction's result is read per point";
    return failure();
  }
  bool secondReadsFirst = readPerPoint == 1;
  RowColumnSplit split;
  split.rows = secondReadsFirst ? sets[0] : sets[1];
  split.columns = secondReadsFirst ? sets[1] : sets[0];

  // Per-column values (column sums and what is computed from them) are read
  // only per column.
  llvm::DenseSet<Value> perColumn;
  for (Operation *op : ops) {
    Names domain = domainOf(op);
    bool columnOp = domain == split.rows;
    if (domain != space && !columnOp && domain != split.columns) {
      where = op;
      why = "an op's domain must be the kernel's iteration space, its rows' "
            "or its columns' dims";
      return failure();
    }
    bool readsColumns = false, readsOthers = false;
    for (Value operand : op->getOperands()) {
      Operation *producer = operand.getDefiningOp();
      if (perColumn.contains(operand))
        readsColumns = true;
      else if (producer && llvm::is_contained(ops, producer))
        readsOthers = true;
    }
    if ((readsColumns && !columnOp) || (columnOp && readsOthers)) {
      where = op;
      why = readsColumns && !columnOp
                ? "reads a column sum but does not run per column"
                : "runs per column but reads per-row or per-point values";
      return failure();
    }
    auto reduce = llvm::dyn_cast<ReduceOp>(op);
    if (columnOp || (reduce && reducedOf(reduce) == split.columns))
      perColumn.insert(op->getResult(0));
  }
  return split;
}
