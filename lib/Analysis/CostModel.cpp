//===- CostModel.cpp - predicted kernel times: the formulas ---------------===//
//
// Pure functions of plain structs; docs/Layout.md derives each factor.
//
//===----------------------------------------------------------------------===//

#include "sluice/Analysis/CostModel.h"
#include "sluice/Runtime/sluice_stream.h"

#include <algorithm>
#include <array>
#include <cmath>

using namespace mlir::sluice;
using C = CostModelConstants;

llvm::StringRef mlir::sluice::stringifyBound(Bound bound) {
  switch (bound) {
  case Bound::Memory:
    return "memory";
  case Bound::Compute:
    return "compute";
  case Bound::Launch:
    return "launch";
  }
  llvm_unreachable("unknown bound");
}

void mlir::sluice::setFractionOfPeak(KernelPrediction &prediction) {
  if (prediction.seconds <= 0)
    return;
  prediction.fractionOfPeak =
      prediction.bound == Bound::Compute
          ? prediction.flop / prediction.seconds / prediction.peakFlops
          : prediction.bytes / prediction.seconds /
                prediction.peakBytesPerSecond;
}

namespace {
int64_t ceilDiv(int64_t value, int64_t divisor) {
  return (value + divisor - 1) / divisor;
}

/// Fills the total, the bound and the fraction of peak from the parts.
void finish(KernelPrediction &prediction, double bytes, double flop,
            double peakBytesPerSecond, double peakFlops) {
  prediction.bytes = bytes;
  prediction.flop = flop;
  prediction.peakBytesPerSecond = peakBytesPerSecond;
  prediction.peakFlops = peakFlops;
  double work = std::max(prediction.memorySeconds, prediction.computeSeconds);
  prediction.seconds = prediction.launchSeconds + work;
  if (prediction.launchSeconds > work)
    prediction.bound = Bound::Launch;
  else if (prediction.computeSeconds > prediction.memorySeconds)
    prediction.bound = Bound::Compute;
  else
    prediction.bound = Bound::Memory;
  setFractionOfPeak(prediction);
}
} // namespace

/// DRAM bytes per charged byte for one tensor: 1 when each 32-byte sector
/// a warp touches is used whole; 32 / run when only `runBytes` of it are,
/// unless L2 keeps the sector until its other bytes are read, in which case
/// only the L2 transactions are wasted (divided by the L2/DRAM bandwidth
/// ratio).
static double sectorAmplification(const TensorAccess &tensor,
                                  const GpuTarget &target) {
  if (tensor.runBytes >= C::kSectorBytes)
    return 1.0;
  double raw = double(C::kSectorBytes) / double(std::max<int64_t>(
                                             1, tensor.runBytes));
  if (tensor.reuseWindowBytes <= target.l2Bytes / 2)
    return std::max(1.0, raw / C::kL2OverDramBandwidth);
  return raw;
}

KernelPrediction
mlir::sluice::predictMemoryKernel(const MemoryKernelShape &shape,
                                  const GpuTarget &target) {
  KernelPrediction prediction;
  prediction.launchSeconds = double(std::max<int64_t>(1, shape.launches)) *
                             target.launchOverheadSeconds;

  // Sectors: the DRAM bytes the accesses really cost.
  double bytes = 0, effectiveBytes = 0;
  for (const TensorAccess &tensor : shape.tensors) {
    bytes += double(tensor.bytes);
    effectiveBytes += double(tensor.bytes) * sectorAmplification(tensor, target);
  }
  double sectors = effectiveBytes > 0 ? bytes / effectiveBytes : 1.0;

  // Parallelism (Little's law): the bytes in flight per SM against what
  // covers the DRAM latency at full bandwidth, on the SMs that have work,
  // wave by wave: full waves of resident blocks, then the last partial one.
  int64_t threads = std::max<int64_t>(1, shape.threadsPerBlock);
  int64_t grid = std::max<int64_t>(1, shape.gridSize);
  int64_t blockCap = std::clamp<int64_t>(target.maxThreadsPerSm / threads, 1,
                                         C::kMaxBlocksPerSm);
  double lanes = std::min(1.0, double(shape.usefulLanes) /
                                   double(std::max<int64_t>(
                                       1, shape.launchedLanes)));
  double accessBytes = 0;
  for (const TensorAccess &tensor : shape.tensors)
    if (!tensor.written)
      accessBytes += double(tensor.accessBytes);
  if (accessBytes == 0) // A kernel that only writes: its stores in flight.
    for (const TensorAccess &tensor : shape.tensors)
      accessBytes += double(tensor.accessBytes);
  double needed = target.dramBytesPerSecond * C::kDramLatencySeconds /
                  double(target.smCount);
  // The fraction of the bandwidth `blocks` resident blocks can draw.
  auto drawn = [&](int64_t blocks) {
    int64_t activeSms = std::min(blocks, target.smCount);
    int64_t blocksPerSm = std::min(blockCap, ceilDiv(blocks, activeSms));
    double inFlight = double(blocksPerSm * threads) * lanes * accessBytes;
    return double(activeSms) / double(target.smCount) *
           std::min(1.0, inFlight / needed);
  };
  int64_t concurrent = target.smCount * blockCap;
  double parallelism;
  if (grid <= concurrent) {
    parallelism = drawn(grid);
  } else {
    int64_t fullWaves = grid / concurrent;
    int64_t rest = grid - fullWaves * concurrent;
    double inFull = double(fullWaves * concurrent) / double(grid);
    double relative = inFull / drawn(concurrent);
    if (rest > 0)
      relative += (1 - inFull) / drawn(rest);
    parallelism = 1 / relative;
  }

  double bandwidth = target.dramBytesPerSecond * target.streamEfficiency *
                     sectors * parallelism;
  prediction.memorySeconds =
      bandwidth > 0 ? (bytes + double(shape.scratchBytes)) / bandwidth : 0;
  double flops = *target.vectorFlops.f32;
  prediction.computeSeconds = double(shape.flop) / flops;
  prediction.factors = {{"stream", target.streamEfficiency},
                        {"sectors", sectors},
                        {"parallelism", parallelism}};
  finish(prediction, bytes, double(shape.flop), target.dramBytesPerSecond,
         flops);
  return prediction;
}

double mlir::sluice::gemmPeakFlops(llvm::StringRef elementType,
                                   const GpuTarget &target) {
  if (elementType == "f16" || elementType == "bf16")
    if (std::optional<double> tensor = target.tensorFlops.forType(elementType))
      return *tensor;
  return *target.vectorFlops.f32;
}

namespace {
/// Tile quantization, waves and tile size for the best of cuBLAS's usual
/// tiles (what its heuristics pick: the tile that keeps most SMs busy).
struct TileChoice {
  double quantization = 1, waves = 1, size = 1;
  double product() const { return quantization * waves * size; }
};

TileChoice chooseTile(const GemmShape &shape, const GpuTarget &target) {
  static constexpr std::array<std::pair<int64_t, int64_t>, 4> kTiles = {
      {{128, 128}, {128, 64}, {64, 128}, {64, 64}}};
  // Shared-memory reuse of a tm x tn tile: tm*tn / (tm+tn) flop per byte
  // loaded, relative to the full tile's.
  double fullReuse = double(C::kFullTile) / 2;
  TileChoice best;
  best.quantization = best.waves = best.size = 0;
  for (auto [tm, tn] : kTiles) {
    int64_t tilesM = ceilDiv(shape.m, tm), tilesN = ceilDiv(shape.n, tn);
    int64_t tiles = tilesM * tilesN * shape.batch;
    TileChoice choice;
    choice.quantization =
        double(shape.m) * double(shape.n) / double(tilesM * tm * tilesN * tn);
    int64_t waves = ceilDiv(tiles, target.smCount);
    choice.waves = double(tiles) / double(waves * target.smCount);
    choice.size = std::min(1.0, double(tm * tn) / double(tm + tn) / fullReuse);
    if (choice.product() > best.product())
      best = choice;
  }
  return best;
}
} // namespace

KernelPrediction mlir::sluice::predictGemm(const GemmShape &shape,
                                           const GpuTarget &target) {
  KernelPrediction prediction;
  prediction.launchSeconds = target.launchOverheadSeconds;
  double peak = gemmPeakFlops(shape.elementType, target);
  TileChoice tile = chooseTile(shape, target);
  double depth =
      double(shape.k) / double(shape.k + C::kPipelineFillK);
  auto aligned = [&](int64_t leading) {
    return (leading * shape.elementBytes) % 16 == 0;
  };
  double alignment = aligned(shape.lda) && aligned(shape.ldb) &&
                             aligned(shape.ldc)
                         ? 1.0
                         : C::kMisalignedGemm;
  double throughput = peak * target.gemmEfficiency * tile.product() * depth *
                      alignment;
  prediction.computeSeconds = double(shape.flop) / throughput;
  prediction.memorySeconds =
      double(shape.bytes) /
      (target.dramBytesPerSecond * target.streamEfficiency);
  prediction.factors = {{"gemm", target.gemmEfficiency},
                        {"tile_quantization", tile.quantization},
                        {"waves", tile.waves},
                        {"tile_size", tile.size},
                        {"k_depth", depth},
                        {"alignment", alignment}};
  finish(prediction, double(shape.bytes), double(shape.flop),
         target.dramBytesPerSecond, peak);
  return prediction;
}

StreamingWork mlir::sluice::streamingWork(const StreamingShape &shape) {
  StreamingWork work;
  if (!shape.causal) {
    work.pairs = double(shape.m) * double(shape.n);
  } else {
    for (int64_t row = 0; row < shape.m; row += C::kStreamRowTile) {
      int64_t end = std::min(shape.m, row + C::kStreamRowTile);
      work.pairs += double(end - row) * double(std::min(shape.n, end));
    }
  }
  double pairs = work.pairs * double(shape.slices);
  double d = double(shape.d), e = double(shape.e);
  work.tensorFlop = 2 * pairs * (shape.backward ? 4 * d + 3 * e : d + e);
  work.pointwiseFlop = pairs * (shape.backward ? C::kStreamBackwardPointwise
                                               : C::kStreamForwardPointwise);
  return work;
}

KernelPrediction mlir::sluice::predictStreaming(const StreamingShape &shape,
                                                const GpuTarget &target) {
  KernelPrediction prediction;
  // The backward is two launches (dQ, then dK and dV).
  prediction.launchSeconds =
      target.launchOverheadSeconds * (shape.backward ? 2 : 1);
  StreamingWork work = streamingWork(shape);
  double peak = gemmPeakFlops(shape.elementType, target);
  // The products run over head dims padded to the kernels' tile
  // (sluice_stream_cuda_tiles_for: 32, 64 or 128).
  int64_t head = std::max(shape.d, shape.e);
  int64_t padded = std::max<int64_t>(
      head, sluice_stream_cuda_tiles_for(80, 2, head).head_dim);
  double padding = double(shape.d + shape.e) / double(2 * padded);
  double vector = *target.vectorFlops.f32;
  prediction.computeSeconds =
      work.tensorFlop / (peak * target.gemmEfficiency * padding) +
      work.pointwiseFlop / vector;
  prediction.memorySeconds =
      double(shape.bytes) /
      (target.dramBytesPerSecond * target.streamEfficiency);
  double full = double(shape.m) * double(shape.n);
  prediction.factors = {{"gemm", target.gemmEfficiency},
                        {"head_padding", padding},
                        {"causal_pairs", full > 0 ? work.pairs / full : 1},
                        {"pointwise_share",
                         work.pointwiseFlop / vector /
                             prediction.computeSeconds}};
  finish(prediction, double(shape.bytes),
         work.tensorFlop + work.pointwiseFlop, target.dramBytesPerSecond,
         peak);
  return prediction;
}
