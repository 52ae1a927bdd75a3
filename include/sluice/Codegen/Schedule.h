//===- Schedule.h - how a fused kernel maps onto threads ---------*- C++
//-*-===//
//
// A pure, deterministic decision per fused kernel: its iteration space
// (outer dims x reduced dims), which part goes to the grid, threads per
// block, elements per thread, the vector width along the innermost
// contiguous dim and how reductions combine across threads. The emitters
// (Emit.h) lower a kernel from its schedule; `--sluice-schedule` prints it.
// docs/Codegen.md ("Schedules") gives the rules.
//
//===----------------------------------------------------------------------===//

#ifndef SLUICE_CODEGEN_SCHEDULE_H
#define SLUICE_CODEGEN_SCHEDULE_H

#include "dialects/sluice/SluiceOps.h"
#include "dialects/sluice_exec/ExecDialect.h"

#include "mlir/Pass/Pass.h"

#include <cstdint>
#include <memory>
#include <string>

namespace mlir::sluice {

/// How the iteration space is spread over the grid.
enum class ScheduleMode {
  /// No reduction and one domain: a grid-stride loop over all points, each
  /// thread `vectorWidth` contiguous points per step.
  Elementwise,
  /// One block per outer point (grid-stride over outer points); the block's
  /// threads cover the inner extent, each `elementsPerThread` points. With
  /// column reductions (reductions over the outer dims, `rowChunks` > 0)
  /// each block takes a chunk of consecutive outer points instead, its
  /// threads accumulate their inner points' column sums over the chunk,
  /// and a second step sums the chunks' partials in chunk order.
  RowBlock,
  /// CUDA column reductions (never chosen by scheduleOps: the CUDA
  /// emitter's, sluice/Codegen/CudaSchedule.h, which the cost model prices):
  /// blocks of `columnTile` consecutive outer points (threadIdx.x) x
  /// `rowsPerBlock` inner points (threadIdx.y) over a grid of `gridSize`
  /// column tiles x `rowChunks` chunks of the inner points; a second
  /// kernel sums the chunks' partials (docs/Codegen.md).
  ColumnBlock,
};

/// How a reduction's per-thread partial results combine.
enum class ReductionStrategy { None, Warp, Block };

/// The domain class of one op inside a fused kernel: the whole iteration
/// space, the outer dims (per row), or the inner dims (per column: the
/// results of column reductions and what is computed from them).
enum class OpDomain { Full, Outer, Column };

struct KernelSchedule {
  ScheduleMode mode = ScheduleMode::Elementwise;
  /// Grid dims (RowBlock) in iteration order; empty for Elementwise.
  SmallVector<std::string> outerDims;
  SmallVector<int64_t> outerSizes;
  /// Dims each block (RowBlock) or the whole grid (Elementwise) covers, in
  /// iteration order: the last is the vector dim.
  SmallVector<std::string> innerDims;
  SmallVector<int64_t> innerSizes;
  int64_t outerCount = 1, innerCount = 1;
  int64_t threadsPerBlock = 1;
  int64_t gridSize = 1;
  /// Contiguous elements a thread handles together (one 16-byte access
  /// when the tensor is contiguous along the innermost dim).
  int64_t vectorWidth = 1;
  /// RowBlock: inner points per thread (a multiple of vectorWidth), the
  /// compile-time size of the per-thread arrays. Elementwise: vectorWidth.
  int64_t elementsPerThread = 1;
  ReductionStrategy reduction = ReductionStrategy::None;
  /// ColumnBlock: the grid's chunks of inner points and the threads over
  /// the inner points within a block (threadIdx.y); the column tile is
  /// threadsPerBlock / rowsPerBlock. RowBlock with column reductions: the
  /// chunks of outer points (rowsPerBlock 0). Both 0 otherwise.
  int64_t rowChunks = 0, rowsPerBlock = 0;

  /// The schedule as a typed attribute (what --sluice-schedule attaches
  /// and what a sluice_exec.launch carries).
  exec::ScheduleAttr toAttr(MLIRContext *context) const;
};

/// The schedule of the primitives `ops` (program order) run as one kernel.
/// Fails with a diagnostic at `loc`-bearing ops when they do not form one
/// iteration space (a contract, a rename, reductions over different dims,
/// an op whose domain is neither the whole space nor its outer dims).
FailureOr<KernelSchedule> scheduleOps(ArrayRef<Operation *> ops);

/// The domain class of `op` under `schedule`.
OpDomain domainOf(Operation *op, const KernelSchedule &schedule);

/// True for a row-block schedule that also has column reductions
/// (reductions over the outer dims, summed from per-chunk partials).
bool hasColumnReductions(const KernelSchedule &schedule);

/// True if `op` is one of those column reductions.
bool isColumnReduce(Operation *op, const KernelSchedule &schedule);

/// The ops a fused kernel runs: its body without the terminator and without
/// renames of its inputs (views: they read the input's memory).
SmallVector<Operation *> kernelMembers(KernelOp kernel);

/// The schedule of a `kind = fused` kernel (error for a gemm kernel).
FailureOr<KernelSchedule> scheduleKernel(KernelOp kernel);

/// `--sluice-schedule`: attaches `sluice.schedule` to every fused kernel.
std::unique_ptr<Pass> createSchedulePass();
void registerSchedulePass();

} // namespace mlir::sluice

#endif // SLUICE_CODEGEN_SCHEDULE_H
