//===- ColumnReduction.cpp - CPU column reductions as blocked sums --------===//
//
// A reduction over dims that are not contiguous in memory (a bias gradient
// over (b, j) of [b, j, u]) on the CPU: each task takes a block of
// consecutive columns (outer points) and streams over the rows, a SIMD loop
// over the block's columns accumulating one partial per column, so rows are
// read contiguously (docs/Codegen.md).
//
//===----------------------------------------------------------------------===//

#include "CoreEmitter.h"

using namespace mlir;
using namespace mlir::sluice;
using namespace mlir::sluice::emit;

/// Columns per thread come in whole units of 16 (four Philox calls, one
/// 64-byte line of f32).
static constexpr int64_t kColumnUnit = 16;
/// At most this many columns per block (the partials stay in L1/L2).
static constexpr int64_t kMaxColumns = 4096;

bool CoreEmitter::fullTensorsContiguousInOuter() const {
  size_t rank = s.outerDims.size() + s.innerDims.size();
  bool any = false;
  for (Value value : llvm::concat<const Value>(group.inputs, group.outputs)) {
    auto type = llvm::cast<NamedTensorType>(value.getType());
    if (type.getRank() != static_cast<int64_t>(rank))
      continue;
    if (type.getDimNames().back().getValue() != s.outerDims.back())
      return false;
    any = true;
  }
  return any;
}

bool CoreEmitter::endsWithOuterDims(NamedTensorType type) const {
  size_t count = s.outerDims.size();
  if (count < 2 || type.getRank() < static_cast<int64_t>(count))
    return false;
  size_t first = type.getRank() - count;
  for (size_t k = 0; k < count; ++k)
    if (type.getDimNames()[first + k].getValue() != s.outerDims[k] ||
        type.getSizes()[first + k] != s.outerSizes[k])
      return false;
  return true;
}

bool CoreEmitter::isColumnReduction() const {
  if (isCuda() || !isRowBlock() || !kept.empty() || s.outerDims.empty())
    return false;
  if (s.vectorWidth != 1 && !fullTensorsContiguousInOuter())
    return false;
  bool anyReduce = false;
  for (Operation *op : group.ops) {
    anyReduce |= llvm::isa<ReduceOp>(op);
    if (domainOf(op, s) == OpDomain::Full && opStage.lookup(op) != 0)
      return false;
  }
  for (auto [index, output] : llvm::enumerate(group.outputs))
    if (!isOuterValue(output) && valueStage.lookup(output) != 0)
      return false;
  return anyReduce;
}

int64_t CoreEmitter::columnBlock() const {
  // At least 32 columns when it can be (GCC's loop vectorizer then sees a
  // loop, not 16 unrolled copies), at most 256 so the partials stay in L1.
  for (int64_t candidate : {256, 128, 64})
    if (s.outerCount % candidate == 0 && s.outerCount / candidate >= 8)
      return candidate;
  for (int64_t candidate : {256, 128, 64, 32, 16, 8, 4, 2})
    if (s.outerCount % candidate == 0)
      return candidate;
  return 1;
}

void CoreEmitter::emitColumnDraws(int64_t columns, StringRef indent) {
  // The block's columns must be consecutive elements of the mask's
  // innermost dim, starting a Philox block.
  // (Split by thread: every block starts and ends on a unit of 16.)
  if (!splitsColumnsByThread() &&
      (columns % 4 != 0 || s.outerSizes.back() % columns != 0))
    return;
  for (Operation *op : group.ops) {
    auto mask = llvm::dyn_cast<RandomMaskOp>(op);
    if (!mask || domainOf(op, s) != OpDomain::Full)
      continue;
    NamedTensorType type = mask.getResult().getType();
    if (type.getDimNames().back().getValue() != s.outerDims.back() ||
        type.getSizes().back() % 4 != 0)
      continue;
    columnFourWide.insert(op);
    // The block's first column: its dropout index, then the draws.
    std::string first = "first_" + valueName(mask.getResult());
    os << indent << "uint64_t " << first << ";\n"
       << indent << "{\n"
       << indent << "  const int64_t o = c0;\n";
    emitDecompose("o", s.outerDims, s.outerSizes, (indent + "  ").str());
    os << indent << "  " << first << " = " << canonicalIndex(type, false)
       << " >> 2;\n"
       << indent << "}\n";
    emitDrawWords(mask, columns, "width", first, indent);
  }
}

bool CoreEmitter::splitsColumnsByThread() const {
  return s.outerDims.size() == 1 && s.outerCount % kColumnUnit == 0;
}

void CoreEmitter::emitColumnLoopHead(int64_t columns) {
  if (!splitsColumnsByThread()) {
    os << "#ifdef _OPENMP\n#pragma omp parallel for\n#endif\n"
       << "  for (int64_t cb = 0; cb < " << s.outerCount / columns
       << "LL; ++cb) {\n"
       << "    const int64_t c0 = cb * " << columns << "LL, width = " << columns
       << "LL;\n";
    return;
  }
  // One contiguous range of whole units per thread, in blocks of at most
  // `columns` columns.
  int64_t units = s.outerCount / kColumnUnit;
  os << "#ifdef _OPENMP\n#pragma omp parallel\n#endif\n"
     << "  {\n"
     << "  int64_t part = 0, parts = 1;\n"
     << "#ifdef _OPENMP\n"
     << "  part = omp_get_thread_num();\n"
     << "  parts = omp_get_num_threads();\n"
     << "#endif\n"
     << "  const int64_t end = " << units << "LL * (part + 1) / parts * "
     << kColumnUnit << "LL;\n"
     << "  for (int64_t c0 = " << units << "LL * part / parts * " << kColumnUnit
     << "LL; c0 < end; c0 += " << columns << "LL) {\n"
     << "    const int64_t width = end - c0 < " << columns
     << "LL ? end - c0 : " << columns << "LL;\n";
}

LogicalResult CoreEmitter::emitColumnBlocks() {
  int64_t columns = splitsColumnsByThread()
                        ? std::min<int64_t>(s.outerCount, kMaxColumns)
                        : columnBlock();
  auto emitOuterOps = [&](bool afterReduce, StringRef indent) {
    for (Operation *op : group.ops)
      if (!llvm::isa<ReduceOp>(op) && domainOf(op, s) == OpDomain::Outer &&
          (opStage.lookup(op) > 0) == afterReduce)
        if (failed(emitOp(op, false, indent)))
          return failure();
    return success();
  };
  SmallVector<ReduceOp> reduces;
  for (Operation *op : group.ops)
    if (auto reduce = llvm::dyn_cast<ReduceOp>(op))
      reduces.push_back(reduce);
  emitColumnLoopHead(columns);
  for (ReduceOp reduce : reduces)
    os << "    float acc_" << valueName(reduce.getResult()) << "[" << columns
       << "];\n"
       << "    for (int c = 0; c < width; ++c)\n"
       << "      acc_" << valueName(reduce.getResult()) << "[c] = "
       << (reduce.getKind() == ReduceKind::max ? "-INFINITY" : "0.0f") << ";\n";
  os << "    for (int64_t r0 = 0; r0 < " << s.innerCount << "LL; ++r0) {\n";
  emitDecompose("r0", s.innerDims, s.innerSizes, "      ");
  emitColumnDraws(columns, "      ");
  // Inside the column loops a tensor that ends with the column dims is
  // addressed by the column `o` (offsetIn).
  linearColumns = true;
  os << "      #pragma omp simd\n"
     << "      for (int c = 0; c < width; ++c) {\n"
     << "        const int64_t o = c0 + c;\n";
  emitDecompose("o", s.outerDims, s.outerSizes, "        ");
  if (failed(emitOuterOps(false, "        ")))
    return failure();
  for (Operation *op : group.ops) {
    if (domainOf(op, s) != OpDomain::Full)
      continue;
    if (auto reduce = llvm::dyn_cast<ReduceOp>(op)) {
      std::string acc = "acc_" + valueName(reduce.getResult()) + "[c]";
      os << "        " << acc << " = "
         << (reduce.getKind() == ReduceKind::max ? "sluice_max_combine("
                                                 : "sluice_sum_combine(")
         << acc << ", " << use(reduce.getInput(), false) << ");\n";
    } else if (failed(emitOp(op, false, "        "))) {
      return failure();
    }
  }
  emitOutputStores(/*outer=*/false, "        ");
  os << "      }\n    }\n";
  // Per column: the totals, what depends on them, the outer outputs.
  os << "    for (int c = 0; c < width; ++c) {\n"
     << "      const int64_t o = c0 + c;\n";
  emitDecompose("o", s.outerDims, s.outerSizes, "      ");
  for (ReduceOp reduce : reduces)
    os << "      const float " << valueName(reduce.getResult()) << " = "
       << rounded("acc_" + valueName(reduce.getResult()) + "[c]",
                  reduce.getResult().getType())
       << ";\n";
  if (failed(emitOuterOps(false, "      ")) ||
      failed(emitOuterOps(true, "      ")))
    return failure();
  emitOutputStores(/*outer=*/true, "      ");
  linearColumns = false;
  os << "    }\n  }\n" << (splitsColumnsByThread() ? "  }\n" : "") << "}\n\n";
  return success();
}
