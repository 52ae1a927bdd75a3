//===- ColumnReduction.cpp - column reductions that read rows contiguously ===//
//
// A reduction over dims that are not contiguous in memory (a bias gradient
// over (b, j) of [b, j, u]). Both targets take blocks of consecutive columns
// (outer points) and stream over the rows (inner points), so each row is
// read as one contiguous run (docs/Codegen.md, "Column reductions"); one
// column's totals are the same code for both.
//
// CPU: each task takes a block of columns, a SIMD loop over them
// accumulating one partial per column as it streams over all the rows.
//
// CUDA, two stages (as Apex's layer-norm gradients do): a block takes a tile
// of columns (threadIdx.x, each thread V consecutive columns read and
// written with one vector access per tensor and row, so a row's lanes read
// one contiguous run) and a chunk of the rows (blockIdx.y; threadIdx.y
// strides within it); a row's body is the element-wise and row kernels'
// group body, with the vector dim the columns (four-wide Philox draws
// included); the threads' f32 partials combine across threadIdx.y in
// shared memory into one partial per (chunk, column) in the workspace; a
// second kernel sums each column's partials in chunk order (deterministic)
// and computes what follows the totals. A second kernel rather than the
// last-arriving block (__threadfence and an atomic counter per tile): the
// counters would be state that must start at zero in a scratch region
// which create_shared lets several contexts share; the second launch costs
// a few microseconds and keeps both stages plain.
//
//===----------------------------------------------------------------------===//

#include "CoreEmitter.h"

#include "llvm/Support/MathExtras.h"

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
  if (!isRowBlock() || hasColumns() || !kept.empty() || s.outerDims.empty())
    return false;
  // CUDA's threadIdx.x runs over the columns: only coalesced when they are
  // contiguous in memory.
  if ((isCuda() || s.vectorWidth != 1) && !fullTensorsContiguousInOuter())
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

SmallVector<ReduceOp> CoreEmitter::reduceOps() const {
  SmallVector<ReduceOp> reduces;
  for (Operation *op : group.ops)
    if (auto reduce = llvm::dyn_cast<ReduceOp>(op))
      reduces.push_back(reduce);
  return reduces;
}

LogicalResult CoreEmitter::emitOuterOps(bool afterReduce, StringRef indent) {
  for (Operation *op : group.ops)
    if (!llvm::isa<ReduceOp>(op) && domainOf(op, s) == OpDomain::Outer &&
        (opStage.lookup(op) > 0) == afterReduce)
      if (failed(emitOp(op, false, indent)))
        return failure();
  return success();
}

LogicalResult CoreEmitter::emitColumnPoint(
    llvm::function_ref<std::string(ReduceOp)> accumulator, StringRef indent) {
  if (failed(emitOuterOps(false, indent)))
    return failure();
  for (Operation *op : group.ops) {
    if (domainOf(op, s) != OpDomain::Full)
      continue;
    if (auto reduce = llvm::dyn_cast<ReduceOp>(op)) {
      std::string acc = accumulator(reduce);
      os << indent << acc << " = " << combineOf(reduce) << acc << ", "
         << use(reduce.getInput(), false) << ");\n";
    } else if (failed(emitOp(op, false, indent))) {
      return failure();
    }
  }
  emitOutputStores(/*outer=*/false, indent);
  return success();
}

LogicalResult
CoreEmitter::emitColumnTotals(llvm::function_ref<std::string(ReduceOp)> total,
                              StringRef indent) {
  for (ReduceOp reduce : reduceOps())
    os << indent << "const float " << valueName(reduce.getResult()) << " = "
       << rounded(total(reduce), reduce.getResult().getType()) << ";\n";
  if (failed(emitOuterOps(false, indent)) || failed(emitOuterOps(true, indent)))
    return failure();
  emitOutputStores(/*outer=*/true, indent);
  return success();
}

LogicalResult CoreEmitter::emitColumnBlocks() {
  int64_t columns = splitsColumnsByThread()
                        ? std::min<int64_t>(s.outerCount, kMaxColumns)
                        : columnBlock();
  auto perColumn = [&](ReduceOp reduce) {
    return "acc_" + valueName(reduce.getResult()) + "[c]";
  };
  emitColumnLoopHead(columns);
  for (ReduceOp reduce : reduceOps())
    os << "    float acc_" << valueName(reduce.getResult()) << "[" << columns
       << "];\n"
       << "    for (int c = 0; c < width; ++c)\n"
       << "      acc_" << valueName(reduce.getResult())
       << "[c] = " << identityOf(reduce) << ";\n";
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
  if (failed(emitColumnPoint(perColumn, "        ")))
    return failure();
  os << "      }\n    }\n";
  // Per column: the totals, what depends on them, the outer outputs.
  os << "    for (int c = 0; c < width; ++c) {\n"
     << "      const int64_t o = c0 + c;\n";
  emitDecompose("o", s.outerDims, s.outerSizes, "      ");
  if (failed(emitColumnTotals(perColumn, "      ")))
    return failure();
  linearColumns = false;
  os << "    }\n  }\n" << (splitsColumnsByThread() ? "  }\n" : "") << "}\n\n";
  return success();
}

/// CUDA: threads per column block.
static constexpr int64_t kColumnThreads = 256;
/// CUDA: the contiguous bytes of a row a block's lanes read together at
/// least (one 128-byte line, whole 32-byte sectors), when a row of the
/// block's columns is that long.
static constexpr int64_t kRowRunBytes = 128;
/// CUDA: rows a thread covers at least, so that a column's partials stay
/// few where the columns alone fill the device.
static constexpr int64_t kMinRowsPerThread = 4;
/// CUDA: the static shared memory a block's partials may take.
static constexpr int64_t kMaxCombineBytes = 48 << 10;
/// CUDA: at most this many f32 values per thread a row's group body holds
/// per column (V x (reductions + tensors accessed along the columns)).
/// Measured with ptxas -v on the examples: BERT-large's layer-norm
/// backward + dgamma/dbeta (3 reductions, 5 f16 tensors) took 80 registers
/// and spilled at V = 8 (64), 51 at V = 4 (32); GPT-2-medium's (3
/// reductions, 7 tensors) 58 to 71 at V = 4 (40), 64 without spills under
/// the 64-register launch bound (kColumnMinBlocks).
static constexpr int64_t kMaxColumnValues = 40;
/// CUDA: row chunks per SM of a row block that also sums columns: each
/// chunk writes one f32 partial per column and reduction (BERT-large's
/// layer-norm backward: 2 x 108 chunks x 3 x 1024 x 4 B = 2.6 MB on an A100,
/// in L2), and its blocks are as wide as the row's vector groups.
static constexpr int64_t kRowChunksPerSm = 2;
/// CUDA: the blocks per SM a stage-1 column kernel's launch bound asks for:
/// 4 x 256 threads leave ptxas 64 registers per thread, the static checks'
/// limit (without it ptxas took up to 71 where the estimate allowed).
static constexpr int64_t kColumnMinBlocks = 4;

/// CUDA: what a column tile's first stage reads or writes along the
/// columns (inputs and full-domain outputs whose innermost dim is the last
/// outer dim, not bit-packed; the outer outputs are written by the totals
/// kernel).
struct ColumnTensors {
  /// The widest element, in bytes (0 if there is none).
  int64_t widest = 0;
  int64_t count = 0;
};

static ColumnTensors columnTensors(const FusedGroup &group) {
  StringRef column = group.schedule.outerDims.back();
  ColumnTensors tensors;
  auto consider = [&](Value value, bool packed) {
    auto type = llvm::cast<NamedTensorType>(value.getType());
    if (packed || type.getRank() == 0 ||
        type.getDimNames().back().getValue() != column)
      return;
    tensors.widest =
        std::max<int64_t>(tensors.widest, type.getElementByteWidth());
    ++tensors.count;
  };
  for (auto [value, packed] : llvm::zip_equal(group.inputs, group.inputPacked))
    consider(value, packed);
  int64_t fullRank = static_cast<int64_t>(group.schedule.outerDims.size() +
                                          group.schedule.innerDims.size());
  for (auto [value, packed] :
       llvm::zip_equal(group.outputs, group.outputPacked))
    if (llvm::cast<NamedTensorType>(value.getType()).getRank() == fullRank)
      consider(value, packed);
  return tensors;
}

void mlir::sluice::emit::scheduleColumnReduction(FusedGroup &group,
                                                 const ColumnDevice &device) {
  KernelSchedule &s = group.schedule;
  if (hasColumnReductions(s)) {
    // Row blocks that also sum columns: a chunk of rows per block,
    // kRowChunksPerSm blocks per SM, the partials fitting the workspace.
    int64_t columns = llvm::count_if(
        group.ops, [&](Operation *op) { return isColumnReduce(op, s); });
    int64_t fit = std::max<int64_t>(1, int64_t(kCudaWorkspaceBytes) /
                                           (4 * columns * s.innerCount));
    s.rowChunks =
        std::min({s.outerCount, device.smCount * kRowChunksPerSm, fit});
    s.gridSize = s.rowChunks;
    return;
  }
  CoreEmitter probe(group, EmitTarget::Cuda, llvm::nulls());
  probe.assignStages();
  if (!probe.isColumnReduction())
    return;
  int64_t reduces = llvm::count_if(
      group.ops, [](Operation *op) { return llvm::isa<ReduceOp>(op); });
  // Consecutive columns per thread: 16 bytes of the widest element read or
  // written along the columns (one 128-bit access per tensor and row), or
  // 8 or 4 bytes' worth when the column extent does not divide by that or
  // the values a thread holds per row would not fit in registers, and no
  // more than the block's partials fit in shared memory.
  ColumnTensors tensors = columnTensors(group);
  int64_t widest = tensors.widest;
  int64_t width = 1;
  for (int64_t candidate = widest ? 16 / widest : 1; candidate > 1;
       candidate /= 2)
    if (s.outerSizes.back() % candidate == 0 &&
        candidate * (reduces + tensors.count) <= kMaxColumnValues &&
        reduces * kColumnThreads * candidate * 4 <= kMaxCombineBytes) {
      width = candidate;
      break;
    }
  // Lanes along a row: enough for one 128-byte run of the widest tensor,
  // at most a warp; the block's other threads take other rows.
  int64_t lanes = std::min<int64_t>(
      32, kRowRunBytes / (width * std::max<int64_t>(widest, 1)));
  int64_t rows = kColumnThreads / lanes;
  int64_t tiles = llvm::divideCeilSigned(s.outerCount, lanes * width);
  // Enough blocks for every SM's threads at full occupancy, as many row
  // chunks as that needs (no more than the rows allow, nor than fit the
  // workspace), then as few as cover the rows with that many per chunk.
  int64_t wanted = device.smCount * (device.maxThreadsPerSm / kColumnThreads);
  int64_t chunks = std::max<int64_t>(1, llvm::divideCeilSigned(wanted, tiles));
  chunks = std::min(
      chunks, llvm::divideCeilSigned(s.innerCount, kMinRowsPerThread * rows));
  chunks = std::min<int64_t>(chunks, kCudaWorkspaceBytes /
                                         (4 * reduces * s.outerCount));
  chunks = std::min<int64_t>(chunks, 65535); // gridDim.y
  if (chunks < 1)
    return;
  int64_t chunkRows = llvm::divideCeilSigned(s.innerCount, chunks);
  s.mode = ScheduleMode::ColumnBlock;
  s.gridSize = tiles;
  s.rowChunks = llvm::divideCeilSigned(s.innerCount, chunkRows);
  s.rowsPerBlock = rows;
  s.threadsPerBlock = kColumnThreads;
  s.vectorWidth = width;
  s.elementsPerThread = width;
  s.reduction = ReductionStrategy::Block;
}

std::string CoreEmitter::columnPartial(size_t k, StringRef chunk,
                                       StringRef column) const {
  return "partials[((int64_t)" + std::to_string(k * s.rowChunks) + " + " +
         chunk.str() + ") * " + std::to_string(s.outerCount) + "LL + " +
         column.str() + "]";
}

LogicalResult CoreEmitter::emitColumnTiles() {
  int64_t lanes = s.threadsPerBlock / s.rowsPerBlock;
  int64_t columns = lanes * vectorWidth;
  int64_t chunkRows = llvm::divideCeilSigned(s.innerCount, s.rowChunks);
  std::string outer = std::to_string(s.outerCount) + "LL";
  SmallVector<ReduceOp> reduces = reduceOps();

  // Stage 1: rows [blockIdx.y * chunkRows, +chunkRows) of the tile's
  // columns; thread x takes `vectorWidth` consecutive columns, so a row's
  // lanes read consecutive addresses, one access per tensor and row.
  emitSignature("", s.threadsPerBlock, vectorWidth > 1, kColumnMinBlocks);
  os << "  const int64_t o = ((int64_t)blockIdx.x * " << lanes
     << " + threadIdx.x) * " << vectorWidth << "LL;\n";
  emitAccumulators(reduces, "  ");
  os << "  if (o < " << outer << ") {\n";
  emitDecompose("o", s.outerDims, s.outerSizes, "    ");
  os << "    const int64_t r_begin = (int64_t)blockIdx.y * " << chunkRows
     << "LL;\n"
     << "    const int64_t r_end = r_begin + " << chunkRows << "LL < "
     << s.innerCount << "LL ? r_begin + " << chunkRows
     << "LL : " << s.innerCount << "LL;\n"
     << "    for (int64_t r0 = r_begin + threadIdx.y; r0 < r_end; r0 += "
     << s.rowsPerBlock << ") {\n";
  emitDecompose("r0", s.innerDims, s.innerSizes, "      ");
  linearColumns = true;
  if (failed(emitGroupBody(0, "      ")))
    return failure();
  os << "    }\n  }\n";
  emitColumnTileCombine(columns);
  os << "}\n\n";

  // Stage 2: each column's partials in chunk order, then the column.
  emitSignature("_total", columns, /*alignedVariants=*/false);
  os << "  const int64_t o = (int64_t)blockIdx.x * " << columns
     << " + threadIdx.x;\n"
     << "  if (o >= " << outer << ")\n    return;\n";
  emitDecompose("o", s.outerDims, s.outerSizes, "  ");
  // (Unrolled 4 deep, not fully: a full unroll keeps every chunk's load
  // in flight, 64 registers for three reductions of 33 chunks.)
  auto total = [&](ReduceOp reduce) {
    return "acc_" + valueName(reduce.getResult());
  };
  for (auto [k, reduce] : llvm::enumerate(reduces))
    os << "  float " << total(reduce) << " = " << columnPartial(k, "0", "o")
       << ";\n"
       << "  #pragma unroll 4\n"
       << "  for (int c = 1; c < " << s.rowChunks << "; ++c)\n"
       << "    " << total(reduce) << " = " << combineOf(reduce) << total(reduce)
       << ", " << columnPartial(k, "c", "o") << ");\n";
  if (failed(emitColumnTotals(total, "  ")))
    return failure();
  linearColumns = false;
  os << "}\n\n";
  return success();
}

void CoreEmitter::emitColumnTileCombine(int64_t columns) {
  SmallVector<ReduceOp> reduces = reduceOps();
  int64_t lanes = s.threadsPerBlock / s.rowsPerBlock;
  os << "  __shared__ float sluice_column_scratch[" << reduces.size() << "]["
     << s.rowsPerBlock << "][" << columns << "];\n";
  for (auto [k, reduce] : llvm::enumerate(reduces))
    os << "  #pragma unroll\n"
       << "  for (int v = 0; v < " << vectorWidth << "; ++v)\n"
       << "    sluice_column_scratch[" << k << "][threadIdx.y][threadIdx.x * "
       << vectorWidth << " + v] = acc_" << valueName(reduce.getResult())
       << "[v];\n";
  // One thread per column sums its threadIdx.y partials in that order.
  os << "  __syncthreads();\n"
     << "  for (int c = threadIdx.y * " << lanes << " + threadIdx.x; c < "
     << columns << "; c += " << s.threadsPerBlock << ") {\n"
     << "    const int64_t oc = (int64_t)blockIdx.x * " << columns << " + c;\n"
     << "    if (oc >= " << s.outerCount << "LL)\n"
     << "      break;\n";
  for (auto [k, reduce] : llvm::enumerate(reduces))
    os << "    float total" << k << " = sluice_column_scratch[" << k
       << "][0][c];\n"
       << "    for (int y = 1; y < " << s.rowsPerBlock << "; ++y)\n"
       << "      total" << k << " = " << combineOf(reduce) << "total" << k
       << ", sluice_column_scratch[" << k << "][y][c]);\n"
       << "    " << columnPartial(k, "blockIdx.y", "oc") << " = total" << k
       << ";\n";
  os << "  }\n";
}
