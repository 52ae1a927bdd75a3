//===- CoreEmitter.h - writes one fused kernel's source ---------*- C++ -*-===//
//
// The class behind emitFusedKernel (FusedKernel.cpp, the file comment there
// describes the stages and both targets' loops); the CPU's blocked column
// reductions are in ColumnReduction.cpp. Internal to lib/Codegen/Emit.
//
//===----------------------------------------------------------------------===//

#ifndef SLUICE_CODEGEN_EMIT_COREEMITTER_H
#define SLUICE_CODEGEN_EMIT_COREEMITTER_H

#include "EmitInternal.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/SetVector.h"

#include <set>
#include <string>

namespace mlir::sluice::emit {

/// Writes one group's kernel.
class CoreEmitter {
public:
  CoreEmitter(const FusedGroup &group, EmitTarget target, llvm::raw_ostream &os)
      : group(group), s(group.schedule), target(target), os(os),
        vectorWidth(target == EmitTarget::Cuda
                        ? group.schedule.vectorWidth
                        : cpuVectorWidth(group.schedule)) {}
  LogicalResult emit();
  /// A row-block schedule whose reductions run over dims that are not
  /// contiguous in memory (a bias gradient over (b, j) of [b, j, u]) and
  /// where every full-domain op runs in stage 0, with every tensor over the
  /// whole iteration space contiguous along the last outer dim (on the CPU
  /// that is only asked of vectorized schedules). Then columns are blocked
  /// instead of rows: emitColumnBlocks (CPU) or a ColumnBlock schedule
  /// (CUDA: scheduleColumnReduction, emitColumnTiles). Needs assignStages.
  bool isColumnReduction() const;
  /// The stage of every member op (after the reductions it needs), the
  /// stage each value is available in, and the values kept in per-thread
  /// arrays across stages.
  void assignStages();

private:
  bool isCuda() const { return target == EmitTarget::Cuda; }
  bool isRowBlock() const { return s.mode == ScheduleMode::RowBlock; }
  /// A row block that also sums columns (hasColumnReductions): chunks of
  /// rows, per-thread column accumulators, partials summed in chunk order.
  bool hasColumns() const { return hasColumnReductions(s); }
  /// The stage of what a row block with column reductions computes per
  /// column: after every row stage, in the totals step.
  static constexpr unsigned kColumnStage = UINT_MAX;
  /// The C literal a reduction's accumulator starts from.
  static const char *identityOf(ReduceOp reduce) {
    return reduce.getKind() == ReduceKind::max ? "-INFINITY" : "0.0f";
  }
  /// The combine call of `reduce` up to its first argument.
  static const char *combineOf(ReduceOp reduce) {
    return reduce.getKind() == ReduceKind::max ? "sluice_max_combine("
                                               : "sluice_sum_combine(";
  }
  /// A CUDA column tile (ColumnBlock schedule): its `v` loop runs over a
  /// thread's consecutive columns, not along a row.
  bool isColumnTile() const { return s.mode == ScheduleMode::ColumnBlock; }
  /// The dim a `v` loop advances along: the last outer dim (the columns)
  /// in a column tile, else the innermost inner dim.
  StringRef vectorDim() const {
    if (isColumnTile())
      return s.outerDims.back();
    return s.innerDims.empty() ? StringRef() : StringRef(s.innerDims.back());
  }
  /// The points one `v` loop covers: the schedule's (16 bytes) on CUDA;
  /// on the CPU 128 points when the schedule vectorizes and the innermost
  /// extent allows, else 32, 16 or 8: GCC fully unrolls constant loops of
  /// up to 16 iterations before its loop vectorizer runs (then only its
  /// block vectorizer sees them, which gives up on a Philox draw), so 128
  /// keeps both the `#pragma omp simd` loop over the points and the one
  /// over their 32 four-wide dropout draws loops.
  static int64_t cpuVectorWidth(const KernelSchedule &schedule) {
    if (schedule.vectorWidth <= 1 || schedule.innerSizes.empty())
      return schedule.vectorWidth;
    for (int64_t width : {128, 32, 16, 8})
      if (schedule.innerSizes.back() % width == 0)
        return width;
    return schedule.vectorWidth;
  }
  /// Per-lane partial results of the reductions on the CPU (the `v` loop
  /// is a SIMD loop, so each lane accumulates its own and the lanes
  /// combine after the row) and in a column tile (each of a thread's
  /// columns has its own sum).
  bool usesLaneAccumulators() const { return !isCuda() || isColumnTile(); }
  /// Threads of the inner extent on this target (the CPU runs one).
  int64_t threads() const { return isCuda() ? s.threadsPerBlock : 1; }
  /// Vector groups a thread covers.
  int64_t groupsPerThread() const {
    int64_t groups = (s.innerCount + vectorWidth - 1) / vectorWidth;
    return (groups + threads() - 1) / threads();
  }
  bool isOuterValue(Value value) const {
    Operation *op = value.getDefiningOp();
    if (!op || !memberIndex.count(op) || isColumnValue(value))
      return false;
    return llvm::isa<ReduceOp>(op) || domainOf(op, s) == OpDomain::Outer;
  }
  /// A column reduction's result or a value computed from them per column.
  bool isColumnValue(Value value) const {
    Operation *op = value.getDefiningOp();
    return op && memberIndex.count(op) &&
           (isColumnReduce(op, s) || domainOf(op, s) == OpDomain::Column);
  }
  /// The index variable of dim `name` (inside the vector loop, the
  /// vector dim advances with `v`).
  std::string indexOf(StringRef name, bool inVectorLoop) const {
    std::string var = "i_" + identifier(name);
    if (inVectorLoop && vectorWidth > 1 && !vectorDim().empty() &&
        vectorDim() == name)
      return "(" + var + " + v)";
    return var;
  }
  /// The element offset of the point in `type`'s layout.
  std::string offsetIn(NamedTensorType type, bool inVectorLoop) const;
  /// The dropout element index of the point in `type`
  /// (dialects/sluice/DropoutOrder.h).
  std::string canonicalIndex(NamedTensorType type, bool inVectorLoop) const;
  /// True if `mask` is drawn four elements per Philox call in a vector
  /// group: its innermost dim is the vector dim (vectorDim), and both the
  /// vector width and that dim's size divide by 4 (so a group starts a
  /// Philox block).
  bool drawsFourWide(RandomMaskOp mask) const;
  /// Before a vector group's loop: the keep bits of the stage's four-wide
  /// masks, one sluice_dropout_keep4 per four elements.
  void emitFourWideDraws(unsigned stage, StringRef indent);
  /// CPU: the Philox words of `points` (a C expression, a multiple of 4,
  /// at most `capacity`) consecutive mask elements, Philox blocks `first`
  /// (a C expression), first + 1, ..., into `words_<mask>[capacity]` by
  /// Philox.h's sluice_dropout_words (hand-vectorized: compilers turn the
  /// draw's 32x32->64 multiplies into shift-and-add chains); each element
  /// is kept when its word reaches the threshold, as sluice_dropout_keep4
  /// decides, so the main loop compares one contiguous word per lane
  /// instead of shifting a bit out of a packed nibble.
  void emitDrawWords(RandomMaskOp mask, int64_t capacity, StringRef points,
                     StringRef first, StringRef indent);
  /// The mask's integer keep threshold as a C literal (Philox.h).
  static std::string threshold(RandomMaskOp mask);
  /// The template arguments of sluice_load_vec / sluice_store_vec: the
  /// width, and on CUDA the kernel's Aligned variant parameter.
  std::string vectorArguments() const {
    return std::to_string(vectorWidth) + (isCuda() ? ", Aligned" : "");
  }
  /// CUDA: records `name` (in3, out0) as accessed 16 bytes at a time when
  /// the vector group of `value`'s element type is 16 bytes.
  void noteWideAccess(Value value, const std::string &name) {
    auto type = llvm::cast<NamedTensorType>(value.getType());
    if (isCuda() && s.vectorWidth * type.getElementByteWidth() == 16)
      wideAccesses.insert(name);
  }

public:
  /// The parameters accessed 16 bytes at a time (for the header comment
  /// the static checks read).
  llvm::SetVector<std::string, SmallVector<std::string>, std::set<std::string>>
      wideAccesses;

private:
  /// Statements computing `op` (not a reduce) into its value's variable.
  LogicalResult emitOp(Operation *op, bool inVectorLoop, StringRef indent);
  /// The f32 expression of `value` where it is used.
  std::string use(Value value, bool inVectorLoop) const;
  /// `value` seen through relayouts (which change bytes, not values).
  Value resolve(Value value) const {
    while (Operation *op = value.getDefiningOp()) {
      if (!memberIndex.count(op) || !llvm::isa<RelayoutOp>(op))
        break;
      value = op->getOperand(0);
    }
    return value;
  }
  /// f32 `expr` rounded to `type`'s element type (as the interpreter
  /// stores every tensor).
  static std::string rounded(const std::string &expr, Type type) {
    Type element = llvm::cast<NamedTensorType>(type).getElementType();
    if (element.isF16())
      return "sluice_round_f16(" + expr + ")";
    if (element.isBF16())
      return "sluice_round_bf16(" + expr + ")";
    return expr;
  }
  bool isMember(Operation *op) const { return op && memberIndex.count(op); }
  void emitDecompose(StringRef linear, ArrayRef<std::string> dims,
                     ArrayRef<int64_t> sizes, StringRef indent);
  /// The per-point body of stage `stage` for one vector group.
  LogicalResult emitGroupBody(unsigned stage, StringRef indent);
  /// True if `type`'s last dims are the (two or more) outer dims in order:
  /// in a column loop its offset then uses the column `o` directly.
  bool endsWithOuterDims(NamedTensorType type) const;
  /// True if every boundary tensor over the whole iteration space (at
  /// least one) has the last outer dim innermost in memory.
  bool fullTensorsContiguousInOuter() const;
  /// Columns per task of a column reduction: a divisor of the outer extent,
  /// the largest of 256..64 leaving at least 8 tasks (both cores busy and
  /// balanced), else the largest of 256..2 (partials stay in L1).
  int64_t columnBlock() const;
  /// True if a column reduction splits its columns between the OpenMP
  /// threads at run time (one outer dim, a multiple of 16 columns): each
  /// thread then streams its rows over one contiguous range (wider
  /// blocks read longer row segments; 3072 columns in one block instead of
  /// 12 of 256 took BERT-base's activation backward from 2.75 to 1.72 ms).
  /// Otherwise columnBlock() columns per task.
  bool splitsColumnsByThread() const;
  /// The loop over a column reduction's blocks: `c0` (first column) and
  /// `width` (columns) of each.
  void emitColumnLoopHead(int64_t columns);
  /// Before a column block's SIMD loop over `columns` columns: the Philox
  /// words of the masks whose innermost dim is the last outer dim, one
  /// Philox call per four columns (emitDrawWords; the masks are then in
  /// columnFourWide and read by emitOp with `c`).
  void emitColumnDraws(int64_t columns, StringRef indent);
  /// The group's reductions, in program order.
  SmallVector<ReduceOp> reduceOps() const;
  /// The outer-domain ops (not reductions) that run before the reductions
  /// finish (`afterReduce` false) or after them.
  LogicalResult emitOuterOps(bool afterReduce, StringRef indent);
  /// One point (a row and column `o`) of a column reduction: the outer ops
  /// needed before the totals, the full-domain ops, each reduction's input
  /// combined into `accumulator(reduce)`, the full-domain outputs stored.
  LogicalResult
  emitColumnPoint(llvm::function_ref<std::string(ReduceOp)> accumulator,
                  StringRef indent);
  /// One column `o` of a column reduction after its rows: each reduction's
  /// result, `total(reduce)` rounded once to its type, then the outer ops
  /// and the outer outputs.
  LogicalResult
  emitColumnTotals(llvm::function_ref<std::string(ReduceOp)> total,
                   StringRef indent);
  /// CUDA column reductions in two stages (a ColumnBlock schedule): the
  /// kernel accumulates each thread's rows of its `vector` consecutive
  /// columns (one group body per row: vector loads and stores, four-wide
  /// draws), combines the block's threadIdx.y partials in shared memory
  /// and writes one f32 partial per (row chunk, column) to `partials`;
  /// `<name>_total` sums each column's partials in chunk order and
  /// finishes the column.
  LogicalResult emitColumnTiles();
  /// The stage-1 half of emitColumnTiles after the rows: the block's
  /// threadIdx.y partials of each of its `columns` columns combined in
  /// threadIdx.y order into `partials`.
  void emitColumnTileCombine(int64_t columns);
  /// Reduction k's partial of column `column` from row chunk `chunk` (C
  /// expressions) in the workspace.
  std::string columnPartial(size_t k, StringRef chunk, StringRef column) const;
  /// CPU column reductions as blocked partial sums: each task takes a block
  /// of consecutive outer points (columns) and streams over the rows
  /// (inner points), a SIMD loop over the block's columns accumulating one
  /// partial per column, so rows are read contiguously.
  LogicalResult emitColumnBlocks();
  /// Stores of the outputs of the outer dims (`outer`) or of the whole
  /// domain, each at its offset (no vector loop).
  void emitOutputStores(bool outer, StringRef indent);
  /// The kernel's signature up to its opening brace: inputs, outputs, the
  /// dropout seed (CUDA: with `alignedVariants` a template over the
  /// Aligned variant, __restrict__, `threads` (and `minBlocks` per SM, if
  /// positive) as the launch bounds, and for a ColumnBlock schedule the
  /// `partials` workspace); the function's name is the group's with
  /// `suffix`.
  void emitSignature(StringRef suffix, int64_t threads, bool alignedVariants,
                     int64_t minBlocks = 0);
  /// Element-wise schedules: every thread takes `vectorWidth` contiguous
  /// points per step.
  LogicalResult emitElementwise();
  /// Row blocks: one outer point at a time, the inner extent over threads,
  /// stage after stage (with column reductions, a chunk of outer points per
  /// block or task and the column totals after it: emitColumnSums).
  LogicalResult emitRowBlocks();
  /// The column reductions of a row block, in program order.
  SmallVector<ReduceOp> columnReduces() const;
  /// The partials of a row block's column reductions: on CUDA each block
  /// writes its chunk's to `partials` and `<name>_total` (one thread per
  /// inner point) sums them in chunk order; on the CPU each task's are
  /// added to the kernel's totals in chunk order (`omp ordered`). Then the
  /// per-column ops and the column outputs.
  LogicalResult emitColumnSums();
  /// One inner point `r` of the column totals: the per-column ops and the
  /// column outputs, the reductions' totals already in `v<id>`.
  LogicalResult emitColumnPointTotals(StringRef indent);
  /// One stage of a row block: its outer-only values, then (if the stage
  /// has full-domain work) its loop over the thread's vector groups and the
  /// totals of the reductions it feeds.
  LogicalResult emitRowStage(unsigned stage);
  /// The accumulators of `reduces` (per lane on the CPU and in a column
  /// tile).
  void emitAccumulators(ArrayRef<ReduceOp> reduces, StringRef indent);
  /// The totals of `reduces`: on the CPU the lanes combined pairwise (a
  /// tree of SIMD steps; in lane order when the width is not a power of
  /// 2), on CUDA across the block's threads; rounded to the result's type.
  void emitTotals(ArrayRef<ReduceOp> reduces);
  std::string valueName(Value value) const {
    return "v" + std::to_string(valueIds.lookup(value));
  }
  std::string inputName(unsigned index) const {
    return "in" + std::to_string(index);
  }

  const FusedGroup &group;
  const KernelSchedule &s;
  EmitTarget target;
  llvm::raw_ostream &os;
  llvm::DenseMap<Operation *, unsigned> memberIndex;
  llvm::DenseMap<Value, unsigned> valueIds;
  llvm::DenseMap<Value, unsigned> inputIndex;
  /// The stage a value is available in / an op runs in.
  llvm::DenseMap<Value, unsigned> valueStage;
  llvm::DenseMap<Operation *, unsigned> opStage;
  /// Masks a column block draws four-wide (emitColumnDraws).
  llvm::DenseSet<Operation *> columnFourWide;
  /// Full-domain values a later stage reads.
  llvm::SetVector<Value> kept;
  /// Inputs loaded 16 bytes at a time in the current group body.
  llvm::DenseSet<Value> vectorLoaded;
  unsigned maxStage = 0;
  /// The stage whose group body is being written.
  unsigned currentStage = 0;
  /// Inside a column reduction's column loops (`o` is the column).
  bool linearColumns = false;
  /// Points per `v` loop (see cpuVectorWidth).
  int64_t vectorWidth;
};

} // namespace mlir::sluice::emit

#endif // SLUICE_CODEGEN_EMIT_COREEMITTER_H
