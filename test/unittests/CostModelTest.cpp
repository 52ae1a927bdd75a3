//===- CostModelTest.cpp - the GPU cost model -----------------------------===//
//
// The formulas of docs/Layout.md on shapes built here (closed forms written
// from the document, not from the code), and the model applied to kernels in
// IR: layouts that read along or across the contiguous dimension, the bytes
// the accounting charges, and measured profiles.
//
//===----------------------------------------------------------------------===//

#include "sluice/Analysis/CostModel.h"
#include "SluiceTestFixture.h"
#include "dialects/sluice/Analysis/DataMovement.h"
#include "sluice/Analysis/ModuleCost.h"
#include "sluice/Analysis/ProfileDatabase.h"

#include "dialects/sluice/SluicePasses.h"
#include "mlir/Pass/PassManager.h"

#include <gtest/gtest.h>

using namespace mlir;
using namespace mlir::sluice;

namespace {

/// A made-up GPU with round numbers, so the closed forms are easy to read.
GpuTarget roundTarget() {
  GpuTarget target;
  target.name = "round";
  target.smCount = 100;
  target.maxThreadsPerSm = 2048;
  target.l2Bytes = 8 << 20;
  target.dramBytesPerSecond = 1e12;
  target.launchOverheadSeconds = 5e-6;
  target.streamEfficiency = 0.9;
  target.gemmEfficiency = 0.8;
  target.tensorFlops.f16 = 100e12;
  target.vectorFlops.f16 = 20e12;
  target.vectorFlops.f32 = 10e12;
  return target;
}

/// A streaming kernel over `bytes` read and `bytes` written, 16-byte
/// accesses, enough blocks to fill every SM.
MemoryKernelShape streamingCopy(uint64_t bytes) {
  MemoryKernelShape shape;
  shape.threadsPerBlock = 256;
  shape.gridSize = 800; // 100 SMs x 8 resident blocks: one full wave
  shape.usefulLanes = shape.launchedLanes = 1;
  TensorAccess read{bytes, false, 16, 1 << 20, 0};
  TensorAccess write{bytes, true, 16, 1 << 20, 0};
  shape.tensors = {read, write};
  return shape;
}

TEST(CostModelTest, StreamingKernelRunsAtStreamEfficiency) {
  GpuTarget target = roundTarget();
  KernelPrediction p = predictMemoryKernel(streamingCopy(64 << 20), target);
  double expected = 5e-6 + 2.0 * (64 << 20) / (1e12 * 0.9);
  EXPECT_NEAR(p.seconds, expected, 1e-12);
  EXPECT_EQ(p.bound, Bound::Memory);
  EXPECT_NEAR(p.bytes, 2.0 * (64 << 20), 0.5);
  // The fraction of peak counts the launch too.
  EXPECT_NEAR(p.fractionOfPeak, 2.0 * (64 << 20) / expected / 1e12, 1e-9);
}

TEST(CostModelTest, TinyKernelIsLaunchBound) {
  GpuTarget target = roundTarget();
  KernelPrediction p = predictMemoryKernel(streamingCopy(1024), target);
  EXPECT_EQ(p.bound, Bound::Launch);
  EXPECT_NEAR(p.seconds, 5e-6, 1e-8);
}

TEST(CostModelTest, StridedAccessPaysSectors) {
  GpuTarget target = roundTarget();
  uint64_t bytes = 64 << 20;
  MemoryKernelShape shape = streamingCopy(bytes);
  KernelPrediction contiguous = predictMemoryKernel(shape, target);
  // f16 elements 1 KiB apart, a reuse window larger than half of L2: each
  // 2-byte element costs a 32-byte sector from DRAM.
  shape.tensors[0].runBytes = 2;
  shape.tensors[0].accessBytes = 2;
  shape.tensors[0].reuseWindowBytes = 16 << 20;
  KernelPrediction uncached = predictMemoryKernel(shape, target);
  // Scalar reads also put fewer bytes in flight: 2048 threads x 2 B of the
  // 5000 B (1e12 B/s x 500 ns / 100 SMs) that cover the latency.
  double dram = 1e12 * 0.9 * (2048.0 * 2 / 5000);
  EXPECT_NEAR(uncached.memorySeconds, (16.0 * bytes + bytes) / dram, 1e-9);
  // A window L2 keeps: DRAM moves each byte once, the L2 transactions cost
  // 16 / kL2OverDramBandwidth.
  shape.tensors[0].reuseWindowBytes = 64 << 10;
  KernelPrediction cached = predictMemoryKernel(shape, target);
  double amplification = 16.0 / CostModelConstants::kL2OverDramBandwidth;
  EXPECT_NEAR(cached.memorySeconds, (amplification * bytes + bytes) / dram,
              1e-9);
  EXPECT_LT(contiguous.seconds, cached.seconds);
  EXPECT_LT(cached.seconds, uncached.seconds);
}

TEST(CostModelTest, FewRowsLeaveSmsIdle) {
  GpuTarget target = roundTarget();
  MemoryKernelShape shape = streamingCopy(64 << 20);
  KernelPrediction full = predictMemoryKernel(shape, target);
  // 25 blocks of 256 threads: 25 of the 100 SMs draw bandwidth, and 256
  // threads x 16 bytes = 4 KiB in flight each, below the 5 KB
  // (1e12 B/s x 500 ns / 100 SMs) that covers the latency.
  shape.gridSize = 25;
  KernelPrediction few = predictMemoryKernel(shape, target);
  double drawn = 0.25 * (256.0 * 16 / (1e12 * 500e-9 / 100));
  EXPECT_NEAR(few.memorySeconds, full.memorySeconds / drawn, 1e-9);
}

TEST(CostModelTest, ShortRowsWasteLanes) {
  GpuTarget target = roundTarget();
  MemoryKernelShape shape = streamingCopy(64 << 20);
  // Scalar 2-byte accesses: 8 blocks x 256 threads x 4 bytes (one read of
  // 2 B and ... ) per SM; then only a quarter of the lanes busy.
  shape.tensors[0].accessBytes = 2;
  shape.tensors[1].accessBytes = 2;
  KernelPrediction busy = predictMemoryKernel(shape, target);
  shape.usefulLanes = 64;
  shape.launchedLanes = 256;
  KernelPrediction idle = predictMemoryKernel(shape, target);
  // 2048 threads x 2 B = 4096 B in flight of the 5000 needed; a quarter of
  // the lanes: 1024 B.
  EXPECT_NEAR(busy.memorySeconds, 2.0 * (64 << 20) / (0.9e12 * 4096 / 5000),
              1e-9);
  EXPECT_NEAR(idle.memorySeconds, 2.0 * (64 << 20) / (0.9e12 * 1024 / 5000),
              1e-9);
}

TEST(CostModelTest, LastPartialWaveDrawsLess) {
  GpuTarget target = roundTarget();
  MemoryKernelShape shape = streamingCopy(64 << 20);
  // 810 blocks: one full wave of 800, then 10 blocks on 10 SMs with 4 KiB
  // in flight each.
  shape.gridSize = 810;
  KernelPrediction p = predictMemoryKernel(shape, target);
  double lastWave = 0.1 * (256.0 * 16 / 5000);
  double relative = 800.0 / 810 + (10.0 / 810) / lastWave;
  EXPECT_NEAR(p.memorySeconds, 2.0 * (64 << 20) / 0.9e12 * relative, 1e-9);
}

GemmShape squareGemm(int64_t size) {
  GemmShape shape;
  shape.m = shape.n = shape.k = size;
  shape.lda = shape.ldb = shape.ldc = size;
  shape.flop = 2ull * size * size * size;
  shape.bytes = 3ull * size * size * 2;
  return shape;
}

TEST(CostModelTest, LargeGemmIsComputeBoundAtItsEfficiency) {
  GpuTarget target = roundTarget();
  // 4096^2 in 128x128 tiles: 1024 tiles, 11 waves on 100 SMs (1024/1100).
  KernelPrediction p = predictGemm(squareGemm(4096), target);
  double efficiency = 0.8 * (1024.0 / 1100) * (4096.0 / (4096 + 64));
  EXPECT_EQ(p.bound, Bound::Compute);
  EXPECT_NEAR(p.computeSeconds, 2.0 * 4096 * 4096 * 4096 / (100e12 * efficiency),
              1e-12);
  EXPECT_NEAR(p.seconds, 5e-6 + p.computeSeconds, 1e-12);
}

TEST(CostModelTest, GemmShapeAndAlignment) {
  GpuTarget target = roundTarget();
  GemmShape aligned = squareGemm(4096);
  KernelPrediction base = predictGemm(aligned, target);
  // Transposes alone do not change the time.
  GemmShape transposed = aligned;
  transposed.transA = transposed.transB = true;
  EXPECT_DOUBLE_EQ(predictGemm(transposed, target).computeSeconds,
                   base.computeSeconds);
  // A leading dimension that is not 16-byte aligned halves the rate.
  GemmShape misaligned = aligned;
  misaligned.lda = 4097;
  EXPECT_NEAR(predictGemm(misaligned, target).computeSeconds,
              base.computeSeconds / CostModelConstants::kMisalignedGemm, 1e-12);
  // A shallow k pays the pipeline fill: k = 64 runs at half the depth
  // efficiency.
  GemmShape shallow = aligned;
  shallow.k = 64;
  shallow.flop = 2ull * 4096 * 4096 * 64;
  KernelPrediction shallowP = predictGemm(shallow, target);
  double shallowRate = double(shallow.flop) / shallowP.computeSeconds;
  double baseRate = double(aligned.flop) / base.computeSeconds;
  EXPECT_NEAR(shallowRate / baseRate, 0.5 / (4096.0 / 4160), 1e-9);
}

TEST(CostModelTest, GemmPeaksByElementType) {
  GpuTarget target = roundTarget();
  EXPECT_EQ(gemmPeakFlops("f16", target), 100e12);
  // No bf16 tensor cores on this GPU; f32 GEMMs use CUBLAS_COMPUTE_32F.
  EXPECT_EQ(gemmPeakFlops("bf16", target), 10e12);
  EXPECT_EQ(gemmPeakFlops("f32", target), 10e12);
}

/// The streaming kernels' work (docs/Layout.md, "Streaming attention
/// kernels"): pairs, the products with the backward's recomputation, the
/// pointwise arithmetic; a causal mask skips whole key tiles of 64.
TEST(CostModelTest, StreamingWorkCountsTheRecomputation) {
  StreamingShape shape;
  shape.slices = 10, shape.m = shape.n = 128, shape.d = 64, shape.e = 32;
  StreamingWork forward = streamingWork(shape);
  EXPECT_EQ(forward.pairs, 128.0 * 128);
  EXPECT_EQ(forward.tensorFlop, 2.0 * 10 * 128 * 128 * (64 + 32));
  EXPECT_EQ(forward.pointwiseFlop, 8.0 * 10 * 128 * 128);
  shape.backward = true;
  StreamingWork backward = streamingWork(shape);
  // Q K^T and dO V^T in both passes, dQ, dK, dV once: 4 d + 3 e.
  EXPECT_EQ(backward.tensorFlop, 2.0 * 10 * 128 * 128 * (4 * 64 + 3 * 32));
  EXPECT_EQ(backward.pointwiseFlop, 16.0 * 10 * 128 * 128);
  shape.causal = true;
  // Query tiles [0, 64) and [64, 128) see 64 and 128 keys.
  EXPECT_EQ(streamingWork(shape).pairs, 64.0 * 64 + 64.0 * 128);
  shape.m = shape.n = 130; // and [128, 130) all 130
  EXPECT_EQ(streamingWork(shape).pairs, 64.0 * 64 + 64.0 * 128 + 2.0 * 130);
}

TEST(CostModelTest, StreamingTimeIsProductsPlusPointwise) {
  GpuTarget target = roundTarget();
  StreamingShape shape;
  shape.slices = 64, shape.m = shape.n = 1024, shape.d = shape.e = 40;
  shape.bytes = 4 << 20;
  StreamingWork work = streamingWork(shape);
  KernelPrediction p = predictStreaming(shape, target);
  // Head 40 runs in tiles of 64: 80 of 128 multiply-adds are useful.
  double products = work.tensorFlop / (100e12 * 0.8 * (80.0 / 128));
  EXPECT_NEAR(p.computeSeconds, products + work.pointwiseFlop / 10e12, 1e-15);
  EXPECT_NEAR(p.memorySeconds, (4 << 20) / (1e12 * 0.9), 1e-15);
  EXPECT_EQ(p.bound, Bound::Compute);
  EXPECT_EQ(p.launchSeconds, 5e-6);
  EXPECT_EQ(p.flop, work.tensorFlop + work.pointwiseFlop);
  // The backward: two launches, more work; f32 runs on the vector units.
  shape.backward = true;
  EXPECT_EQ(predictStreaming(shape, target).launchSeconds, 10e-6);
  EXPECT_GT(predictStreaming(shape, target).computeSeconds,
            3 * p.computeSeconds);
  shape.backward = false;
  shape.elementType = "f32";
  EXPECT_EQ(predictStreaming(shape, target).peakFlops, 10e12);
}

/// A lone reduction over `i` of [i, j]: across the contiguous dim j.
constexpr const char *kReductionAcrossContiguousDim = R"mlir(
    sluice.graph @g(%x: !sluice.tensor<[i=1024, j=4096], f16> {sluice.name = "x"})
        -> (!sluice.tensor<[j=4096], f32> {sluice.name = "r"}) {
      %r = sluice.reduce sum %x over ["i"] {sluice.name = "r"} : !sluice.tensor<[i=1024, j=4096], f16> -> !sluice.tensor<[j=4096], f32>
      sluice.return %r : !sluice.tensor<[j=4096], f32>
    })mlir";

class ModuleCostTest : public SluiceTest {
protected:
  /// The value of factor `name` in `p`, -1 if it has none.
  static double factor(const KernelPrediction &p, llvm::StringRef name) {
    for (const Factor &f : p.factors)
      if (f.name == name)
        return f.value;
    return -1.0;
  }

  /// The prediction of the op named `name` in `module` on the V100.
  KernelPrediction predict(ModuleOp module, llvm::StringRef name) {
    FailureOr<ModuleCounts> counts = countModule(module);
    EXPECT_TRUE(succeeded(counts));
    llvm::Expected<GpuTarget> target = builtinTarget("v100");
    EXPECT_TRUE(bool(target));
    for (const OpCount &count : counts->ops)
      if (count.name == name) {
        FailureOr<KernelPrediction> p = predictOp(count, *target);
        EXPECT_TRUE(succeeded(p));
        // The bytes are the accounting's.
        EXPECT_EQ(p->bytes, double(*count.cost.bytesMoved()));
        return *p;
      }
    ADD_FAILURE() << "no op " << name.str();
    return {};
  }
};

TEST_F(ModuleCostTest, ReductionAcrossTheContiguousDimIsSlower) {
  OwningOpRef<ModuleOp> along = parse(R"mlir(
    sluice.graph @g(%x: !sluice.tensor<[j=4096, i=1024], f16> {sluice.name = "x"})
        -> (!sluice.tensor<[j=4096], f32> {sluice.name = "r"}) {
      %r = sluice.reduce sum %x over ["i"] {sluice.name = "r"} : !sluice.tensor<[j=4096, i=1024], f16> -> !sluice.tensor<[j=4096], f32>
      sluice.return %r : !sluice.tensor<[j=4096], f32>
    })mlir");
  OwningOpRef<ModuleOp> across = parse(kReductionAcrossContiguousDim);
  ASSERT_TRUE(along && across);
  KernelPrediction fast = predict(*along, "r");
  KernelPrediction slow = predict(*across, "r");
  EXPECT_EQ(fast.bytes, slow.bytes);
  EXPECT_DOUBLE_EQ(factor(fast, "sectors"), 1.0);
  EXPECT_LT(factor(slow, "sectors"), 0.5);
  EXPECT_GT(slow.seconds, 2 * fast.seconds);
}

/// The same reduction across the contiguous dim inside a fused kernel runs
/// as CUDA column blocks (the emitter's schedule, cudaKernelSchedule):
/// threads along the contiguous dim, whole sectors, and a second launch
/// that sums the row chunks' partials.
TEST_F(ModuleCostTest, FusedColumnReductionIsPricedAsColumnBlocks) {
  OwningOpRef<ModuleOp> module = parse(R"mlir(
    sluice.graph @g(%x: !sluice.tensor<[i=1024, j=4096], f16> {sluice.name = "x"})
        -> (!sluice.tensor<[j=4096], f32> {sluice.name = "r"}) {
      %r = sluice.kernel (%x) {kind = #sluice<kernel_kind fused>, members = ["r"], sluice.name = "k0"}
          : (!sluice.tensor<[i=1024, j=4096], f16>) -> !sluice.tensor<[j=4096], f32> {
      ^bb0(%xa: !sluice.tensor<[i=1024, j=4096], f16>):
        %s = sluice.reduce sum %xa over ["i"] {sluice.name = "r"} : !sluice.tensor<[i=1024, j=4096], f16> -> !sluice.tensor<[j=4096], f32>
        sluice.kernel_yield %s : !sluice.tensor<[j=4096], f32>
      }
      sluice.return %r : !sluice.tensor<[j=4096], f32>
    })mlir");
  OwningOpRef<ModuleOp> lone = parse(kReductionAcrossContiguousDim);
  ASSERT_TRUE(module && lone);
  KernelPrediction columns = predict(*module, "k0");
  KernelPrediction strided = predict(*lone, "r");
  EXPECT_EQ(columns.bytes, strided.bytes);
  EXPECT_DOUBLE_EQ(factor(columns, "sectors"), 1.0);
  llvm::Expected<GpuTarget> v100 = builtinTarget("v100");
  ASSERT_TRUE(bool(v100));
  EXPECT_DOUBLE_EQ(columns.launchSeconds, 2 * v100->launchOverheadSeconds);
  EXPECT_DOUBLE_EQ(strided.launchSeconds, v100->launchOverheadSeconds);
  EXPECT_LT(columns.seconds, strided.seconds);
}

/// Row and column reductions in one kernel (docs/Codegen.md, "Row and
/// column reductions"): row blocks over 2 x 80 chunks of rows on the V100,
/// whose f32 partials (one per chunk and column, written and read back)
/// and second launch (the totals) are priced besides the accounting's
/// bytes.
TEST_F(ModuleCostTest, RowAndColumnKernelPaysItsPartialsAndTotals) {
  OwningOpRef<ModuleOp> module = parse(R"mlir(
    sluice.graph @g(%x: !sluice.tensor<[j=512, i=1024], f16> {sluice.name = "x"})
        -> (!sluice.tensor<[j=512, i=1024], f16> {sluice.name = "n"}, !sluice.tensor<[i=1024], f32> {sluice.name = "c"}) {
      %n, %c = sluice.kernel (%x) {kind = #sluice<kernel_kind fused>, members = ["r", "n", "c"], sluice.name = "k0"}
          : (!sluice.tensor<[j=512, i=1024], f16>) -> (!sluice.tensor<[j=512, i=1024], f16>, !sluice.tensor<[i=1024], f32>) {
      ^bb0(%xa: !sluice.tensor<[j=512, i=1024], f16>):
        %r = sluice.reduce sum %xa over ["i"] {sluice.name = "r"} : !sluice.tensor<[j=512, i=1024], f16> -> !sluice.tensor<[j=512], f32>
        %m = sluice.map (%xa, %r) {sluice.name = "n"} : (!sluice.tensor<[j=512, i=1024], f16>, !sluice.tensor<[j=512], f32>) -> !sluice.tensor<[j=512, i=1024], f16> {
        ^bb0(%p: f32, %q: f32):
          %d = arith.subf %p, %q : f32
          sluice.yield %d : f32
        }
        %s = sluice.reduce sum %m over ["j"] {sluice.name = "c"} : !sluice.tensor<[j=512, i=1024], f16> -> !sluice.tensor<[i=1024], f32>
        sluice.kernel_yield %m, %s : !sluice.tensor<[j=512, i=1024], f16>, !sluice.tensor<[i=1024], f32>
      }
      sluice.return %n, %c : !sluice.tensor<[j=512, i=1024], f16>, !sluice.tensor<[i=1024], f32>
    })mlir");
  ASSERT_TRUE(module);
  KernelPrediction p = predict(*module, "k0");
  llvm::Expected<GpuTarget> v100 = builtinTarget("v100");
  ASSERT_TRUE(bool(v100));
  EXPECT_DOUBLE_EQ(p.launchSeconds, 2 * v100->launchOverheadSeconds);
  // 2 x 80 chunks x 1024 columns x 4 bytes, written and read back.
  double partials = 2.0 * 160 * 1024 * 4;
  double priced =
      p.memorySeconds * v100->dramBytesPerSecond * v100->streamEfficiency;
  EXPECT_GE(priced, (p.bytes + partials) * (1 - 1e-9));
  EXPECT_LT(priced, (p.bytes + partials) * 1.5);
}

TEST_F(ModuleCostTest, ContractionUsesItsGemmMapping) {
  OwningOpRef<ModuleOp> module = parse(R"mlir(
    sluice.graph @g(%a: !sluice.tensor<[j=4096, k=1024], f16> {sluice.name = "a"},
                    %b: !sluice.tensor<[i=1024, k=1024], f16> {sluice.name = "b"})
        -> (!sluice.tensor<[j=4096, i=1024], f16> {sluice.name = "c"}) {
      %c = sluice.contract %a, %b {sluice.name = "mm"} : (!sluice.tensor<[j=4096, k=1024], f16>, !sluice.tensor<[i=1024, k=1024], f16>) -> !sluice.tensor<[j=4096, i=1024], f16>
      sluice.return %c : !sluice.tensor<[j=4096, i=1024], f16>
    })mlir");
  ASSERT_TRUE(module);
  KernelPrediction p = predict(*module, "mm");
  EXPECT_EQ(p.bound, Bound::Compute);
  EXPECT_EQ(p.peakFlops, 125e12);
  EXPECT_DOUBLE_EQ(p.flop, 2.0 * 4096 * 1024 * 1024);
  // m = 1024 (i), n = 4096 (j): 8 x 32 tiles of 128 on 80 SMs, 4 waves.
  for (const Factor &f : p.factors) {
    if (f.name == "waves")
      EXPECT_DOUBLE_EQ(f.value, 256.0 / 320);
    if (f.name == "k_depth")
      EXPECT_DOUBLE_EQ(f.value, 1024.0 / 1088);
  }
}

/// A streaming kernel (the rule on a grouped-query chain, causal) is priced
/// by predictStreaming from its scores, Q and O: 2 x 2 x 3 slices (the
/// query-only dim e counts), m = n = 130, d = 40, v = 24.
TEST_F(ModuleCostTest, StreamingKernelIsPricedAsAttention) {
  OwningOpRef<ModuleOp> module = parse(R"mlir(
    sluice.graph @g(%a: !sluice.tensor<[n=2, g=2, e=3, r=130, d=40], f16> {sluice.name = "a"},
                    %m: !sluice.tensor<[n=2, g=2, s=130, d=40], f16> {sluice.name = "m"},
                    %w: !sluice.tensor<[n=2, g=2, s=130, v=24], f16> {sluice.name = "w"})
        -> (!sluice.tensor<[n=2, g=2, e=3, r=130, v=24], f16> {sluice.name = "out"}) {
      %sc = sluice.contract %a, %m {sluice.name = "score"} : (!sluice.tensor<[n=2, g=2, e=3, r=130, d=40], f16>, !sluice.tensor<[n=2, g=2, s=130, d=40], f16>) -> !sluice.tensor<[n=2, g=2, e=3, r=130, s=130], f16>
      %cm = sluice.causal_mask %sc query "r" key "s" {sluice.name = "causal"} : !sluice.tensor<[n=2, g=2, e=3, r=130, s=130], f16>
      %pr = sluice.softmax %cm over "s" {sluice.name = "weights"} : !sluice.tensor<[n=2, g=2, e=3, r=130, s=130], f16>
      %o = sluice.contract %pr, %w {sluice.name = "mix"} : (!sluice.tensor<[n=2, g=2, e=3, r=130, s=130], f16>, !sluice.tensor<[n=2, g=2, s=130, v=24], f16>) -> !sluice.tensor<[n=2, g=2, e=3, r=130, v=24], f16>
      sluice.return %o : !sluice.tensor<[n=2, g=2, e=3, r=130, v=24], f16>
    })mlir");
  ASSERT_TRUE(module);
  PassManager pm(&context);
  SluiceFuseOptions fuse;
  fuse.streaming = true;
  pm.addNestedPass<GraphOp>(createSluiceDecompose());
  pm.addNestedPass<GraphOp>(createSluiceFuse(fuse));
  ASSERT_TRUE(succeeded(pm.run(*module)));
  KernelPrediction p = predict(*module, "k0");
  StreamingShape shape;
  shape.slices = 12, shape.m = shape.n = 130, shape.d = 40, shape.e = 24;
  shape.causal = true;
  StreamingWork work = streamingWork(shape);
  EXPECT_EQ(p.flop, work.tensorFlop + work.pointwiseFlop);
  EXPECT_EQ(p.launchSeconds, 4e-6);
  EXPECT_EQ(p.peakFlops, 125e12);
}

TEST_F(ModuleCostTest, ProfileOverridesTheModel) {
  OwningOpRef<ModuleOp> module = parse(R"mlir(
    sluice.graph @g(%x: !sluice.tensor<[j=4096, i=1024], f16> {sluice.name = "x"})
        -> (!sluice.tensor<[i=1024, j=4096], f16> {sluice.name = "t"}) {
      %t = sluice.relayout %x {sluice.name = "t"} : !sluice.tensor<[j=4096, i=1024], f16> -> !sluice.tensor<[i=1024, j=4096], f16>
      sluice.return %t : !sluice.tensor<[i=1024, j=4096], f16>
    })mlir");
  ASSERT_TRUE(module);
  FailureOr<ModuleCounts> counts = countModule(*module);
  ASSERT_TRUE(succeeded(counts));
  llvm::Expected<GpuTarget> target = builtinTarget("v100");
  ASSERT_TRUE(bool(target));
  Operation *op = counts->ops.front().op;
  EXPECT_EQ(kernelSignature(op), "op:relayout");
  EXPECT_EQ(kernelLayout(op),
            "(!sluice.tensor<[j=4096, i=1024], f16>) -> "
            "(!sluice.tensor<[i=1024, j=4096], f16>)");
  std::string text = R"json({"target": "v100", "kernels": [
    {"signature": "op:relayout",
     "layout": "(!sluice.tensor<[j=4096, i=1024], f16>) -> (!sluice.tensor<[i=1024, j=4096], f16>)",
     "us": 40}]})json";
  llvm::Expected<ProfileDatabase> profile =
      parseProfileDatabase(text, "p.json");
  ASSERT_TRUE(bool(profile)) << llvm::toString(profile.takeError());
  FailureOr<ModulePrediction> modeled = predictModule(*counts, *target, nullptr);
  FailureOr<ModulePrediction> measured =
      predictModule(*counts, *target, &*profile);
  ASSERT_TRUE(succeeded(modeled) && succeeded(measured));
  EXPECT_FALSE(modeled->kernels[0].prediction.measured);
  EXPECT_NE(modeled->totalSeconds, 40e-6);
  EXPECT_TRUE(measured->kernels[0].prediction.measured);
  EXPECT_DOUBLE_EQ(measured->totalSeconds, 40e-6);
  EXPECT_EQ(measured->measuredKernels, 1u);
  // 2 x 8 MiB moved in 40 us of 900 GB/s.
  EXPECT_NEAR(measured->kernels[0].prediction.fractionOfPeak,
              2.0 * 8 * 1048576 / 40e-6 / 900e9, 1e-9);
}

TEST(ProfileDatabaseTest, MalformedFilesNameTheEntryAndField) {
  auto errorOf = [](llvm::StringRef text) {
    llvm::Expected<ProfileDatabase> db = parseProfileDatabase(text, "p.json");
    if (db) {
      ADD_FAILURE() << "expected an error for " << text.str();
      return std::string();
    }
    return llvm::toString(db.takeError());
  };
  EXPECT_EQ(errorOf(R"({"kernels": []})"),
            "p.json: field 'target': expected the name of the target the "
            "times were measured on");
  EXPECT_EQ(errorOf(R"({"target": "v100", "kernels": [{"signature": "s", "layout": "l", "us": -1}]})"),
            "p.json: kernels[0]: field 'us': expected a positive number of "
            "microseconds");
  EXPECT_EQ(errorOf(R"({"target": "v100", "kernels": [{"signature": "s", "layout": "l", "ms": 1}]})"),
            "p.json: kernels[0]: field 'ms': unknown field; allowed: layout, "
            "signature, us");
  EXPECT_EQ(errorOf(R"({"target": "v100", "kernels": [{"signature": "s", "layout": "l", "us": 1}, {"signature": "s", "layout": "l", "us": 2}]})"),
            "p.json: kernels[1]: a second entry for signature 's' and this "
            "layout");
  EXPECT_EQ(errorOf(R"({"target": "v100", "kernels": {}})"),
            "p.json: field 'kernels': expected an array");
}

} // namespace
