//===- CostModel.h - predicted kernel times on a GPU target ------*- C++
//-*-===//
//
// The GPU cost model: the predicted time of a kernel in a given layout and
// configuration on a GpuTarget (sluice/Analysis/Target.h). Memory-bound
// kernels are timed from the bytes the accounting charges
// (dialects/sluice/Analysis/DataMovement.h) at a bandwidth that depends on how
// each tensor is accessed; GEMMs by a roofline with a shape- and
// alignment-dependent efficiency; every kernel pays the launch overhead.
// The formulas are in docs/Layout.md; this header holds only plain structs
// and pure functions, so a layout search can ask "what if" without IR.
//
//===----------------------------------------------------------------------===//

#ifndef SLUICE_ANALYSIS_COSTMODEL_H
#define SLUICE_ANALYSIS_COSTMODEL_H

#include "sluice/Analysis/Target.h"

#include <cstdint>
#include <string>
#include <vector>

namespace mlir::sluice {

/// How a memory-bound kernel touches one tensor.
struct TensorAccess {
  /// Bytes the accounting charges for the tensor.
  uint64_t bytes = 0;
  /// True for a tensor the kernel writes.
  bool written = false;
  /// Bytes one thread moves per access: the vector width times the element
  /// size when the tensor is contiguous along the kernel's vector dimension,
  /// else one element.
  int64_t accessBytes = 1;
  /// Bytes contiguous in memory along the threads' fastest index: how much
  /// of each 32-byte sector a warp's access uses (>= 32: all of it).
  int64_t runBytes = 1;
  /// For a strided tensor (runBytes < 32): the bytes of sectors touched
  /// between two visits of one sector, which decide whether L2 keeps them.
  int64_t reuseWindowBytes = 0;
};

/// A memory-bound (fused) kernel in one layout and thread configuration.
struct MemoryKernelShape {
  std::vector<TensorAccess> tensors;
  /// Arithmetic, at the f32 vector rate (map bodies compute in f32).
  uint64_t flop = 0;
  int64_t threadsPerBlock = 1;
  int64_t gridSize = 1;
  /// Points of the iteration space that blocks cover in total (rows times
  /// row length), and the lanes launched for them (grid-stride iterations
  /// times threads times elements per thread): their ratio is the fraction
  /// of lanes doing useful work.
  int64_t usefulLanes = 1;
  int64_t launchedLanes = 1;
  /// Kernel launches (a column reduction's second kernel sums the first's
  /// partials).
  int64_t launches = 1;
  /// Bytes the kernel moves besides its tensors (a row-and-column kernel's
  /// f32 partials, written and read back): they take time, and are not the
  /// accounting's.
  uint64_t scratchBytes = 0;
};

/// One GEMM call (column-major, dialects/sluice/Analysis/GemmMapping.h's
/// convention).
struct GemmShape {
  int64_t m = 1, n = 1, k = 1, batch = 1;
  bool transA = false, transB = false;
  int64_t lda = 1, ldb = 1, ldc = 1;
  /// Element type of the operands: "f16", "bf16" or "f32".
  std::string elementType = "f16";
  int64_t elementBytes = 2;
  /// Bytes the accounting charges for the call (operands, result and any
  /// epilogue tensors).
  uint64_t bytes = 0;
  uint64_t flop = 0;
};

/// One streaming attention kernel (the fusion pass's streaming rule,
/// docs/Fusion.md; the runtime kernels of sluice_stream*.h): `slices`
/// independent problems of m query rows, n keys, contracted extent d and
/// value extent e.
struct StreamingShape {
  int64_t slices = 1, m = 1, n = 1, d = 1, e = 1;
  /// The backward (dQ, dK, dV; two kernels), else the forward.
  bool backward = false;
  /// Key tiles past a query tile's last row are skipped.
  bool causal = false;
  /// Element type of Q, K, V: "f16", "bf16" or "f32".
  std::string elementType = "f16";
  /// Bytes the accounting charges at the kernel's boundary.
  uint64_t bytes = 0;
};

/// The work a streaming kernel executes (docs/Layout.md, "Streaming
/// attention kernels").
struct StreamingWork {
  /// (query row, key) pairs visited per slice: m n, or with a causal mask
  /// those of the key tiles up to each query tile's last row.
  double pairs = 0;
  /// Matrix-product flop over all slices: 2 pairs (d + e) forward; the
  /// backward's two passes each recompute Q K^T and dO V^T, 2 pairs
  /// (4 d + 3 e).
  double tensorFlop = 0;
  /// Per-pair arithmetic outside the products (scale, mask, exp, running
  /// statistics, dropout, dS), on the f32 vector units.
  double pointwiseFlop = 0;
};

/// What limits a kernel's predicted time.
enum class Bound { Memory, Compute, Launch };

/// "memory", "compute" or "launch".
llvm::StringRef stringifyBound(Bound bound);

/// A named factor of a prediction (e.g. "sectors", 0.25), for reports.
struct Factor {
  std::string name;
  double value = 1;
};

/// The predicted time of one kernel.
struct KernelPrediction {
  double seconds = 0;
  double launchSeconds = 0;
  /// Time to move the kernel's bytes at its effective bandwidth.
  double memorySeconds = 0;
  /// Time for its flop at its effective throughput.
  double computeSeconds = 0;
  Bound bound = Bound::Memory;
  /// The achieved fraction of the bound resource's peak over the whole
  /// predicted time: bytes / seconds / DRAM bandwidth for memory- and
  /// launch-bound kernels, flop / seconds / peak flop/s for compute-bound.
  double fractionOfPeak = 0;
  /// What the kernel moves and computes, and the peaks its fraction is of.
  double bytes = 0, flop = 0;
  double peakBytesPerSecond = 0, peakFlops = 0;
  /// The efficiency factors that went into it.
  std::vector<Factor> factors;
  /// True when the time came from a measured profile, not the model.
  bool measured = false;
};

/// Constants of the model that are not properties of one GPU; each is
/// explained in docs/Layout.md. None is fitted to a layer's result.
struct CostModelConstants {
  /// DRAM sector size: the unit a strided access pays for.
  static constexpr int64_t kSectorBytes = 32;
  /// L2 read bandwidth over DRAM bandwidth (V100: 2048 B/clk at 1.53 GHz
  /// over 900 GB/s is 3.5; A100: 5120 B/clk at 1.41 GHz over 1555 GB/s is
  /// 4.6; the lower is used).
  static constexpr double kL2OverDramBandwidth = 3.5;
  /// DRAM latency the bytes in flight must cover (Little's law), seconds.
  static constexpr double kDramLatencySeconds = 500e-9;
  /// Resident blocks per SM at most (Volta to Hopper).
  static constexpr int64_t kMaxBlocksPerSm = 32;
  /// The GEMM tile whose shared-memory reuse reaches the tensor peak, and
  /// the pipeline fill in k (about two 32-deep k-steps per tile).
  static constexpr int64_t kFullTile = 128;
  static constexpr int64_t kPipelineFillK = 64;
  /// A GEMM whose operands are not 16-byte aligned loses vectorized loads
  /// and the fastest tensor-core kernels.
  static constexpr double kMisalignedGemm = 0.5;
  /// Query rows per tile of the streaming kernels (the C++ kernels' and
  /// sm_80's CUDA tiles): the granularity at which a causal mask skips
  /// key tiles.
  static constexpr int64_t kStreamRowTile = 64;
  /// Pointwise flop per visited pair: forward (scale and mask, the running
  /// max, exp, the running sum, dropout, P rounded for the product: 8);
  /// backward, per pass (exp(S - LSE), dropout, dS = P (dP - D), rounding:
  /// 8), two passes.
  static constexpr double kStreamForwardPointwise = 8;
  static constexpr double kStreamBackwardPointwise = 16;
};

/// Sets `fractionOfPeak` from `seconds`, `bound` and the peaks (after a
/// measured time replaced `seconds`).
void setFractionOfPeak(KernelPrediction &prediction);

/// The predicted time of a memory-bound kernel on `target`.
KernelPrediction predictMemoryKernel(const MemoryKernelShape &shape,
                                     const GpuTarget &target);

/// The predicted time of a GEMM on `target`.
KernelPrediction predictGemm(const GemmShape &shape, const GpuTarget &target);

/// The work of a streaming kernel.
StreamingWork streamingWork(const StreamingShape &shape);

/// The predicted time of a streaming attention kernel on `target`.
KernelPrediction predictStreaming(const StreamingShape &shape,
                                  const GpuTarget &target);

/// The peak flop/s a GEMM of `elementType` runs at on `target`: the tensor
/// peak for f16/bf16 where the GPU has one, else the f32 vector peak (the
/// emitted cuBLAS calls use CUBLAS_COMPUTE_32F, so f32 GEMMs do not use
/// TF32).
double gemmPeakFlops(llvm::StringRef elementType, const GpuTarget &target);

} // namespace mlir::sluice

#endif // SLUICE_ANALYSIS_COSTMODEL_H
