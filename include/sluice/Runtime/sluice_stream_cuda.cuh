//===- sluice_stream_cuda.cuh - streaming attention, CUDA ----------*- CUDA
//-*-===//
//
// The CUDA kernels of a streaming attention (the problem of sluice_stream.h),
// the algorithm of sluice_stream_cpu.h on tensor cores:
//
// * every product is a warp-level tile product `warpMma`: a warp owns 16
//   rows, its accumulator is an array of 16x8 tiles in the register layout
//   of `mma.sync.m16n8k16` (thread `lane` holds rows g = lane / 4 and g + 8,
//   columns 2 t and 2 t + 1 with t = lane % 4, of every tile). f16/bf16
//   operands go through `mma.sync` with f32 accumulation; f32 operands take
//   a SIMT loop that fills the very same layout (no TF32), so the rest of
//   each kernel is written once.
// * both operands of every product are in shared memory: the loaded Q, K,
//   V, dO tiles and the per-warp P / dS tiles, written from the
//   accumulators (rounded to the element type, as tensor cores read them).
//   Tiles are zero-filled past the sequence ends and past d / e, so any m,
//   n, d, e <= head_dim work; scores past n are masked.
// * row statistics (max, sum) of a row live in the 4 threads sharing g and
//   are combined with two xor-shuffles.
// * forward: one block per (slice, 16 * warps query rows), streaming over
//   key tiles with online rescaling; writes O and LSE (f32).
// * backward, two kernels (no atomics, no scratch, deterministic): dQ per
//   (slice, query rows) streaming over key tiles; dK and dV per (key/value
//   slice, 16 * warps keys) streaming over the query tiles of every query
//   slice of its group (grouped-query attention sums there). Both recompute
//   P = exp(S - LSE) and the dropout draw. D = rowsum(dO * O) is computed
//   where a query tile's dO rows are loaded (loadGradRows: a warp per row,
//   O read alongside dO, one f32 product per element) into a shared array
//   the lanes read, or is an input.
//
// The host functions launch on a stream and return the launch's error;
// the tile sizes are template arguments, picked per target by
// sluice_stream_cuda_tiles_for (sluice_stream.h) and recorded by the
// emitter in the kernel's schedule.
//
//===----------------------------------------------------------------------===//

#ifndef SLUICE_STREAM_CUDA_CUH
#define SLUICE_STREAM_CUDA_CUH

#include "sluice_kernels.h"
#include "sluice_stream.h"

#include <cuda_runtime.h>
#include <limits.h>

namespace sluice_stream_cuda {

//===----------------------------------------------------------------------===//
// Warp tile products
//===----------------------------------------------------------------------===//

static __device__ __forceinline__ uint32_t pack2(sluice_f16 lo, sluice_f16 hi) {
  return (uint32_t)__half_as_ushort(lo) |
         ((uint32_t)__half_as_ushort(hi) << 16);
}
static __device__ __forceinline__ uint32_t pack2(sluice_bf16 lo,
                                                 sluice_bf16 hi) {
  return (uint32_t)__bfloat16_as_ushort(lo) |
         ((uint32_t)__bfloat16_as_ushort(hi) << 16);
}

/// c += a * b for one m16n8k16 tile (A row-major, B column-major, f32
/// accumulators), f16 or bf16 operands.
static __device__ __forceinline__ void mma16816(float (&c)[4],
                                                const uint32_t (&a)[4],
                                                const uint32_t (&b)[2],
                                                const sluice_f16 *) {
  asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 "
               "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
               "{%0, %1, %2, %3};\n"
               : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]),
                 "r"(b[1]));
}
static __device__ __forceinline__ void mma16816(float (&c)[4],
                                                const uint32_t (&a)[4],
                                                const uint32_t (&b)[2],
                                                const sluice_bf16 *) {
  asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 "
               "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
               "{%0, %1, %2, %3};\n"
               : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]),
                 "r"(b[1]));
}

/// acc += A * B for the calling warp: A is 16 x K at a[r * lda + k], B is
/// K x (8 * NT) at b[n * bn + k * bk] (so B^T and B are both one call),
/// acc[nt][x] the element (g + 8 * (x / 2), 8 * nt + 2 * t + x % 2). f16 and
/// bf16: K / 16 steps of NT mma.sync. K is a multiple of 16.
template <int NT, int K, typename T>
static __device__ __forceinline__ void
warpMma(float (&acc)[NT][4], const T *a, int lda, const T *b, int bn, int bk) {
  const int lane = threadIdx.x & 31, g = lane >> 2, t = lane & 3;
#pragma unroll 2
  for (int k0 = 0; k0 < K; k0 += 16) {
    const T *a0 = a + g * lda + k0 + 2 * t, *a8 = a0 + 8 * lda;
    uint32_t af[4] = {pack2(a0[0], a0[1]), pack2(a8[0], a8[1]),
                      pack2(a0[8], a0[9]), pack2(a8[8], a8[9])};
#pragma unroll
    for (int nt = 0; nt < NT; ++nt) {
      const T *col = b + (nt * 8 + g) * bn + (k0 + 2 * t) * bk;
      uint32_t bf[2] = {pack2(col[0], col[bk]),
                        pack2(col[8 * bk], col[9 * bk])};
      mma16816(acc[nt], af, bf, a);
    }
  }
}

/// The f32 product: SIMT fused multiply-adds into the same layout.
template <int NT, int K>
static __device__ __forceinline__ void warpMma(float (&acc)[NT][4],
                                               const float *a, int lda,
                                               const float *b, int bn, int bk) {
  const int lane = threadIdx.x & 31, g = lane >> 2, t = lane & 3;
#pragma unroll 2
  for (int k = 0; k < K; ++k) {
    const float a0 = a[g * lda + k], a8 = a[(g + 8) * lda + k];
#pragma unroll
    for (int nt = 0; nt < NT; ++nt) {
      const float *col = b + (nt * 8 + 2 * t) * bn + k * bk;
      const float b0 = col[0], b1 = col[bn];
      acc[nt][0] = fmaf(a0, b0, acc[nt][0]);
      acc[nt][1] = fmaf(a0, b1, acc[nt][1]);
      acc[nt][2] = fmaf(a8, b0, acc[nt][2]);
      acc[nt][3] = fmaf(a8, b1, acc[nt][3]);
    }
  }
}

/// Sets every accumulator to 0.
template <int NT>
static __device__ __forceinline__ void clear(float (&acc)[NT][4]) {
#pragma unroll
  for (int nt = 0; nt < NT; ++nt)
#pragma unroll
    for (int x = 0; x < 4; ++x)
      acc[nt][x] = 0.0f;
}

/// The backward's two products of a step, both with row stride `ld`:
/// s = A B^T (the scores) and dp = C D^T (the probabilities' gradient).
template <int HD, int NT, typename T>
static __device__ __forceinline__ void
scoresAndGradients(float (&s)[NT][4], float (&dp)[NT][4], const T *a,
                   const T *b, const T *c, const T *d, int ld) {
  clear(s);
  clear(dp);
  warpMma<NT, HD>(s, a, ld, b, ld, 1);
  warpMma<NT, HD>(dp, c, ld, d, ld, 1);
}

/// Stores two adjacent elements rounded to T (as sluice_store rounds each)
/// in one shared-memory store: `dst` is 4-byte aligned (8 for f32).
static __device__ __forceinline__ void storePair(sluice_f16 *dst, float lo,
                                                 float hi) {
  *reinterpret_cast<__half2 *>(dst) = __floats2half2_rn(lo, hi);
}
static __device__ __forceinline__ void storePair(sluice_bf16 *dst, float lo,
                                                 float hi) {
  *reinterpret_cast<__nv_bfloat162 *>(dst) = __floats2bfloat162_rn(lo, hi);
}
static __device__ __forceinline__ void storePair(float *dst, float lo,
                                                 float hi) {
  *reinterpret_cast<float2 *>(dst) = make_float2(lo, hi);
}

/// Writes the calling warp's 16x8 tile `nt` of `v` (the mma layout) into
/// its row-major tile `dst` (row stride `ld`, even): each thread's two
/// adjacent columns of a row in one store (no bank conflicts: the rows'
/// padding puts the 8 rows of a store on distinct banks).
template <typename T>
static __device__ __forceinline__ void storeTile(T *dst, int ld, int nt,
                                                 const float (&v)[4]) {
  const int lane = threadIdx.x & 31, g = lane >> 2, t = lane & 3;
  T *at = dst + g * ld + nt * 8 + 2 * t;
  storePair(at, v[0], v[1]);
  storePair(at + 8 * ld, v[2], v[3]);
}

/// Combines a row statistic over the 4 threads holding the row.
static __device__ __forceinline__ float quadMax(float v) {
  v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, 1));
  return fmaxf(v, __shfl_xor_sync(0xffffffffu, v, 2));
}
static __device__ __forceinline__ float quadSum(float v) {
  v += __shfl_xor_sync(0xffffffffu, v, 1);
  return v + __shfl_xor_sync(0xffffffffu, v, 2);
}

//===----------------------------------------------------------------------===//
// Global <-> shared memory
//===----------------------------------------------------------------------===//

template <typename T>
static __device__ __forceinline__ T zeroOf() {
  T z;
  sluice_store(&z, 0.0f);
  return z;
}

/// The first element of operand `x` in `slice`, row `row0`.
template <typename T>
static __device__ __forceinline__ T *base(const sluice_stream_problem &p,
                                          const sluice_stream_operand &x,
                                          int64_t slice, int64_t row0) {
  return static_cast<T *>(x.data) + sluice_stream_slice_offset(p, x, slice) +
         row0 * x.row_stride;
}

/// The block copies ROWS x COLS elements of `src` (strides of `x`) into
/// `dst` (row stride `ld`), zero past `rows` and `cols`.
template <int ROWS, int COLS, int THREADS, typename T>
static __device__ __forceinline__ void loadTile(T *dst, int ld, const T *src,
                                                const sluice_stream_operand &x,
                                                int64_t rows, int64_t cols) {
  const T zero = zeroOf<T>();
  for (int idx = threadIdx.x; idx < ROWS * COLS; idx += THREADS) {
    const int r = idx / COLS, c = idx % COLS;
    dst[r * ld + c] = (r < rows && c < cols)
                          ? src[r * x.row_stride + c * x.col_stride]
                          : zero;
  }
}

/// Stores the warp's accumulators times `factor[x / 2]` into rows
/// `row0 + g (+ 8)` of `dst` (strides of `x`), inside `rows` x `cols`.
template <int NT, typename T>
static __device__ __forceinline__ void
storeAcc(T *dst, const sluice_stream_operand &x, const float (&acc)[NT][4],
         const float (&factor)[2], int64_t rows, int64_t cols) {
  const int lane = threadIdx.x & 31, g = lane >> 2, t = lane & 3;
#pragma unroll
  for (int nt = 0; nt < NT; ++nt)
#pragma unroll
    for (int x4 = 0; x4 < 4; ++x4) {
      const int r = g + 8 * (x4 >> 1), c = nt * 8 + 2 * t + (x4 & 1);
      if (r < rows && c < cols)
        sluice_store(&dst[r * x.row_stride + c * x.col_stride],
                     acc[nt][x4] * factor[x4 >> 1]);
    }
}

/// Where the calling thread works: its block's slice and the block's rows
/// [first, first + count) of an extent cut into blocks of 16 * WARPS rows,
/// its warp, and the two rows (g and g + 8 of the warp's 16) whose
/// accumulators it holds; `counter` is the slice's dropout counter offset.
struct Place {
  int64_t slice, first, count, row[2], counter;
  int warp, g, t;
};

template <int WARPS>
static __device__ __forceinline__ Place place(const sluice_stream_problem &p,
                                              int64_t extent) {
  constexpr int ROWS = 16 * WARPS;
  const int64_t tiles = (extent + ROWS - 1) / ROWS;
  const int lane = threadIdx.x & 31;
  Place at;
  at.slice = blockIdx.x / tiles;
  at.first = (blockIdx.x % tiles) * ROWS;
  at.count = extent - at.first < ROWS ? extent - at.first : ROWS;
  at.warp = threadIdx.x >> 5;
  at.g = lane >> 2;
  at.t = lane & 3;
  at.row[0] = at.first + at.warp * 16 + at.g;
  at.row[1] = at.row[0] + 8;
  at.counter = sluice_stream_counter_offset(p, at.slice);
  return at;
}

/// The block loads keys [j0, j0 + ROWS) of K and V into sK and sV.
template <int ROWS, int HD, int THREADS, typename T>
static __device__ __forceinline__ void
loadKeys(T *sK, T *sV, const sluice_stream_problem &p,
         const sluice_stream_operand &k, const sluice_stream_operand &v,
         int64_t slice, int64_t j0) {
  loadTile<ROWS, HD, THREADS>(sK, HD + 8, base<const T>(p, k, slice, j0), k,
                              p.n - j0, p.d);
  loadTile<ROWS, HD, THREADS>(sV, HD + 8, base<const T>(p, v, slice, j0), v,
                              p.n - j0, p.e);
}

/// In the device compilation of each kernel: its dynamic shared memory
/// fits one block of the architecture compiled for
/// (sluice_cuda_block_smem_limit; sluice_stream_cuda_tiles_for picks such
/// tiles), so tiles that would fail to launch fail to compile instead.
#ifdef __CUDA_ARCH__
#define SLUICE_STREAM_FITS_BLOCK(bytes)                                        \
  static_assert((bytes) <= sluice_cuda_block_smem_limit(__CUDA_ARCH__ / 10),   \
                "the kernel's tiles exceed the shared memory of a block of "   \
                "the architecture compiled for")
#else
#define SLUICE_STREAM_FITS_BLOCK(bytes)
#endif

/// Rounds the shared-memory byte count up to 16.
static __host__ __device__ constexpr int align16(int bytes) {
  return sluice_stream_cuda_align16(bytes);
}

//===----------------------------------------------------------------------===//
// Forward
//===----------------------------------------------------------------------===//

/// Shared memory of the forward (sluice_stream_cuda_forward_smem; the
/// kernel's layout below).
template <typename T, int WARPS, int BN, int HD>
static __host__ __device__ constexpr int forwardSmem() {
  return sluice_stream_cuda_forward_smem((int)sizeof(T), WARPS, BN, HD);
}

template <typename T, int WARPS, int BN, int HD>
__global__ void __launch_bounds__(32 * WARPS)
    forwardKernel(const sluice_stream_fwd_args a) {
  constexpr int BM = 16 * WARPS, THREADS = 32 * WARPS, LD = HD + 8,
                LDP = BN + 8;
  extern __shared__ __align__(16) unsigned char smem[];
  SLUICE_STREAM_FITS_BLOCK((forwardSmem<T, WARPS, BN, HD>()));
  T *sQ = reinterpret_cast<T *>(smem), *sK = sQ + BM * LD, *sV = sK + BN * LD;
  T *sP = reinterpret_cast<T *>(smem + align16((BM + 2 * BN) * LD * sizeof(T)));
  const sluice_stream_problem &p = a.p;
  const Place at = place<WARPS>(p, p.m);
  const int64_t slice = at.slice, i0 = at.first, rows = at.count;
  const int warp = at.warp, t = at.t;
  const float scale = p.scale, keepScale = p.keep_scale;
  T *warpP = sP + warp * 16 * LDP;

  loadTile<BM, HD, THREADS>(sQ, LD, base<const T>(p, a.q, slice, i0), a.q, rows,
                            p.d);
  float rowMax[2] = {-INFINITY, -INFINITY}, rowSum[2] = {0.0f, 0.0f};
  float acc[HD / 8][4];
  clear(acc);
  // Causal: keys past the block's last row are masked for all its rows.
  const int64_t end = p.causal && i0 + rows < p.n ? i0 + rows : p.n;
  for (int64_t j0 = 0; j0 < end; j0 += BN) {
    // The previous step's readers of sK / sV (and of the warp's P / dS
    // tile, which this step overwrites) are done.
    __syncthreads();
    loadKeys<BN, HD, THREADS>(sK, sV, p, a.k, a.v, slice, j0);
    __syncthreads();
    float s[BN / 8][4];
    clear(s);
    warpMma<BN / 8, HD>(s, sQ + warp * 16 * LD, LD, sK, LD, 1); // Q K^T
    float tileMax[2] = {-INFINITY, -INFINITY};
#pragma unroll
    for (int nt = 0; nt < BN / 8; ++nt)
#pragma unroll
      for (int x = 0; x < 4; ++x) {
        const int64_t j = j0 + nt * 8 + 2 * t + (x & 1);
        const bool masked = j >= p.n || (p.causal && j > at.row[x >> 1]);
        s[nt][x] = masked ? -INFINITY : s[nt][x] * scale;
        tileMax[x >> 1] = fmaxf(tileMax[x >> 1], s[nt][x]);
      }
    float ref[2], rescale[2];
#pragma unroll
    for (int r = 0; r < 2; ++r) {
      const float newMax = fmaxf(rowMax[r], quadMax(tileMax[r]));
      // All masked so far: exp(-inf - 0) = 0 keeps the sums at 0.
      ref[r] = newMax == -INFINITY ? 0.0f : newMax;
      rescale[r] = expf(rowMax[r] - ref[r]);
      rowMax[r] = newMax;
      rowSum[r] *= rescale[r];
    }
#pragma unroll
    for (int nt = 0; nt < BN / 8; ++nt) {
#pragma unroll
      for (int x = 0; x < 4; ++x) {
        const int r = x >> 1, c = nt * 8 + 2 * t + (x & 1);
        float prob = expf(s[nt][x] - ref[r]);
        rowSum[r] += prob;
        if (p.has_dropout)
          prob = sluice_stream_keep(p, at.counter, at.row[r], j0 + c)
                     ? prob * keepScale
                     : 0.0f;
        s[nt][x] = prob; // the score is used
      }
      storeTile(warpP, LDP, nt, s[nt]);
    }
#pragma unroll
    for (int nt = 0; nt < HD / 8; ++nt)
#pragma unroll
      for (int x = 0; x < 4; ++x)
        acc[nt][x] *= rescale[x >> 1];
    __syncwarp();
    warpMma<HD / 8, BN>(acc, warpP, LDP, sV, 1, LD); // P V
  }
  float inverse[2];
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    rowSum[r] = quadSum(rowSum[r]);
    inverse[r] = rowSum[r] > 0.0f ? 1.0f / rowSum[r] : 0.0f;
  }
  const int64_t warpRows = rows - warp * 16;
  storeAcc(base<T>(p, a.o, slice, i0 + warp * 16), a.o, acc, inverse, warpRows,
           p.e);
  if (t == 0 && a.lse.data) { // no LSE in inference
    float *lse = base<float>(p, a.lse, slice, 0);
#pragma unroll
    for (int r = 0; r < 2; ++r)
      if (at.row[r] < p.m)
        lse[at.row[r] * a.lse.row_stride] =
            rowSum[r] > 0.0f ? rowMax[r] + logf(rowSum[r]) : INFINITY;
  }
}

//===----------------------------------------------------------------------===//
// Backward: dQ
//===----------------------------------------------------------------------===//

/// Sums a value over the 32 lanes of the warp (every lane gets the sum).
static __device__ __forceinline__ float warpSum(float v) {
#pragma unroll
  for (int lanes = 16; lanes > 0; lanes >>= 1)
    v += __shfl_xor_sync(0xffffffffu, v, lanes);
  return v;
}

/// Row 0 of a query slice's operands as the backward reads them: Q, dO,
/// LSE, and O (to compute D) or the given D, whichever is there (the other
/// null: no offsets on a null pointer). Made once per slice, so that a tile
/// only adds its rows to these.
template <typename T>
struct QuerySlice {
  const T *q, *dO, *o;
  const float *lse, *d;
};

template <typename T>
static __device__ __forceinline__ QuerySlice<T>
querySlice(const sluice_stream_bwd_args &a, int64_t slice) {
  const bool fromO = a.o.data != nullptr;
  return {base<const T>(a.p, a.q, slice, 0),
          base<const T>(a.p, a.d_o, slice, 0),
          fromO ? base<const T>(a.p, a.o, slice, 0) : nullptr,
          base<const float>(a.p, a.lse, slice, 0),
          fromO ? nullptr : base<const float>(a.p, a.d, slice, 0)};
}

/// Loads the dO rows of a query tile and their row term D: query rows
/// [i0, i0 + ROWS) of `qs` (`rows` of them inside m) into sdO (row stride
/// `ld`, zero past `rows` and e) and D into sD (0 past `rows`). Warp w
/// takes rows [w * PER, (w + 1) * PER), its lanes along a row (one
/// coalesced read of dO, and of O where D comes from O): D[i] = sum_x
/// dO[i, x] O[i, x] in f32, each product once, over the very dO values the
/// tile holds (sluice_stream.h), or the given D's element. The caller
/// synchronizes before reading sdO or sD (a warp reading only its own rows:
/// __syncwarp).
template <int ROWS, int HD, int WARPS, typename T>
static __device__ __forceinline__ void
loadGradRows(T *sdO, int ld, float *sD, const sluice_stream_bwd_args &a,
             const QuerySlice<T> &qs, int64_t i0, int64_t rows) {
  constexpr int PER = (ROWS + WARPS - 1) / WARPS;
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const T zero = zeroOf<T>();
#pragma unroll 4
  for (int k = 0; k < PER; ++k) {
    const int r = warp * PER + k;
    if (r >= ROWS)
      break; // warp-uniform: the shuffles below see the whole warp
    const int64_t i = i0 + r;
    float sum = 0.0f;
#pragma unroll
    for (int c0 = 0; c0 < HD; c0 += 32) {
      const int c = c0 + lane;
      if (HD % 32 != 0 && c >= HD)
        break;
      const bool inside = r < rows && c < a.p.e;
      const T x =
          inside ? qs.dO[i * a.d_o.row_stride + c * a.d_o.col_stride] : zero;
      sdO[r * ld + c] = x;
      if (inside && qs.o)
        sum += sluice_to_f32(x) *
               sluice_to_f32(qs.o[i * a.o.row_stride + c * a.o.col_stride]);
    }
    sum = warpSum(sum);
    if (lane == 0)
      sD[r] = r >= rows ? 0.0f : qs.o ? sum : qs.d[i * a.d.row_stride];
  }
}

/// Shared memory of the dQ kernel (sluice_stream_cuda_grad_query_smem).
template <typename T, int WARPS, int BN, int HD>
static __host__ __device__ constexpr int gradQuerySmem() {
  return sluice_stream_cuda_grad_query_smem((int)sizeof(T), WARPS, BN, HD);
}

template <typename T, int WARPS, int BN, int HD>
__global__ void __launch_bounds__(32 * WARPS)
    gradQueryKernel(const sluice_stream_bwd_args a) {
  constexpr int BM = 16 * WARPS, THREADS = 32 * WARPS, LD = HD + 8,
                LDP = BN + 8;
  extern __shared__ __align__(16) unsigned char smem[];
  SLUICE_STREAM_FITS_BLOCK((gradQuerySmem<T, WARPS, BN, HD>()));
  T *sQ = reinterpret_cast<T *>(smem), *sdO = sQ + BM * LD, *sK = sdO + BM * LD,
    *sV = sK + BN * LD;
  unsigned char *rest = smem + align16((2 * BM + 2 * BN) * LD * sizeof(T));
  T *sdS = reinterpret_cast<T *>(rest);
  float *sD = reinterpret_cast<float *>(rest + align16(BM * LDP * sizeof(T)));
  const sluice_stream_problem &p = a.p;
  const Place at = place<WARPS>(p, p.m);
  const int64_t slice = at.slice, i0 = at.first, rows = at.count;
  const int warp = at.warp, g = at.g, t = at.t;
  const float scale = p.scale, keepScale = p.keep_scale;
  T *warpdS = sdS + warp * 16 * LDP;

  const QuerySlice<T> qs = querySlice<T>(a, slice);
  loadTile<BM, HD, THREADS>(sQ, LD, qs.q + i0 * a.q.row_stride, a.q, rows, p.d);
  // Each warp loads its own 16 dO rows and their D: BM = 16 * WARPS.
  loadGradRows<BM, HD, WARPS>(sdO, LD, sD, a, qs, i0, rows);
  __syncwarp();
  float lse[2], rowDots[2];
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    const bool inside = at.row[r] < p.m;
    lse[r] = inside ? qs.lse[at.row[r] * a.lse.row_stride] : INFINITY;
    rowDots[r] = sD[warp * 16 + g + 8 * r];
  }
  float dq[HD / 8][4];
  clear(dq);
  const int64_t end = p.causal && i0 + rows < p.n ? i0 + rows : p.n;
  for (int64_t j0 = 0; j0 < end; j0 += BN) {
    // The previous step's readers of sK / sV (and of the warp's P / dS
    // tile, which this step overwrites) are done.
    __syncthreads();
    loadKeys<BN, HD, THREADS>(sK, sV, p, a.k, a.v, slice, j0);
    __syncthreads();
    float s[BN / 8][4], dp[BN / 8][4];
    // Q K^T and dO V^T.
    scoresAndGradients<HD>(s, dp, sQ + warp * 16 * LD, sK, sdO + warp * 16 * LD,
                           sV, LD);
#pragma unroll
    for (int nt = 0; nt < BN / 8; ++nt) {
#pragma unroll
      for (int x = 0; x < 4; ++x) {
        const int r = x >> 1, c = nt * 8 + 2 * t + (x & 1);
        const int64_t j = j0 + c;
        float ds = 0.0f;
        if (j < p.n && !(p.causal && j > at.row[r]) && lse[r] != INFINITY) {
          const float prob = expf(s[nt][x] * scale - lse[r]);
          float drop = 1.0f;
          if (p.has_dropout)
            drop = sluice_stream_keep(p, at.counter, at.row[r], j) ? keepScale
                                                                   : 0.0f;
          ds = prob * (dp[nt][x] * drop - rowDots[r]);
        }
        s[nt][x] = ds; // the score is used
      }
      storeTile(warpdS, LDP, nt, s[nt]);
    }
    __syncwarp();
    warpMma<HD / 8, BN>(dq, warpdS, LDP, sK, 1, LD); // dS K
  }
  const float factor[2] = {scale, scale};
  storeAcc(base<T>(p, a.dq, slice, i0 + warp * 16), a.dq, dq, factor,
           rows - warp * 16, p.d);
}

//===----------------------------------------------------------------------===//
// Backward: dK and dV
//===----------------------------------------------------------------------===//

/// Shared memory of the dK/dV kernel (sluice_stream_cuda_grad_key_smem).
template <typename T, int WARPS, int BMQ, int HD>
static __host__ __device__ constexpr int gradKeySmem() {
  return sluice_stream_cuda_grad_key_smem((int)sizeof(T), WARPS, BMQ, HD);
}

template <typename T, int WARPS, int BMQ, int HD>
__global__ void __launch_bounds__(32 * WARPS)
    gradKeyKernel(const sluice_stream_bwd_args a) {
  constexpr int BN = 16 * WARPS, THREADS = 32 * WARPS, LD = HD + 8,
                LDQ = BMQ + 8;
  extern __shared__ __align__(16) unsigned char smem[];
  SLUICE_STREAM_FITS_BLOCK((gradKeySmem<T, WARPS, BMQ, HD>()));
  T *sK = reinterpret_cast<T *>(smem), *sV = sK + BN * LD, *sQ = sV + BN * LD,
    *sdO = sQ + BMQ * LD;
  unsigned char *rest = smem + align16((2 * BN + 2 * BMQ) * LD * sizeof(T));
  T *sP = reinterpret_cast<T *>(rest), *sdS = sP + BN * LDQ;
  float *sLse =
            reinterpret_cast<float *>(rest + align16(2 * BN * LDQ * sizeof(T))),
        *sD = sLse + BMQ;
  const sluice_stream_problem &p = a.p;
  const Place at = place<WARPS>(p, p.n);
  // at.slice is the key/value slice; its group's query slices follow.
  const int64_t group = sluice_stream_group_size(p), first = at.slice * group;
  const int64_t j0 = at.first, keys = at.count;
  const int warp = at.warp, t = at.t;
  const float scale = p.scale, keepScale = p.keep_scale;
  T *warpP = sP + warp * 16 * LDQ, *warpdS = sdS + warp * 16 * LDQ;

  loadKeys<BN, HD, THREADS>(sK, sV, p, a.k, a.v, first, j0);
  float dk[HD / 8][4], dv[HD / 8][4];
  clear(dk);
  clear(dv);
  for (int64_t slice = first; slice < first + group; ++slice) {
    const int64_t counter = sluice_stream_counter_offset(p, slice);
    const QuerySlice<T> qs = querySlice<T>(a, slice);
    // Causal: query rows before j0 see none of these keys.
    for (int64_t i0 = p.causal ? j0 : 0; i0 < p.m; i0 += BMQ) {
      const int64_t rows = p.m - i0 < BMQ ? p.m - i0 : BMQ;
      __syncthreads(); // the previous step's readers are done
      loadTile<BMQ, HD, THREADS>(sQ, LD, qs.q + i0 * a.q.row_stride, a.q, rows,
                                 p.d);
      loadGradRows<BMQ, HD, WARPS>(sdO, LD, sD, a, qs, i0, rows);
      for (int r = threadIdx.x; r < BMQ; r += THREADS)
        sLse[r] = r < rows ? qs.lse[(i0 + r) * a.lse.row_stride] : INFINITY;
      __syncthreads();
      float s[BMQ / 8][4], dp[BMQ / 8][4];
      // K Q^T and V dO^T.
      scoresAndGradients<HD>(s, dp, sK + warp * 16 * LD, sQ,
                             sV + warp * 16 * LD, sdO, LD);
#pragma unroll
      for (int nt = 0; nt < BMQ / 8; ++nt) {
#pragma unroll
        for (int x = 0; x < 4; ++x) {
          const int r = x >> 1, c = nt * 8 + 2 * t + (x & 1);
          const int64_t i = i0 + c, j = at.row[r];
          float pd = 0.0f, ds = 0.0f;
          if (j < p.n && c < rows && !(p.causal && j > i) &&
              sLse[c] != INFINITY) {
            const float prob = expf(s[nt][x] * scale - sLse[c]);
            float drop = 1.0f;
            if (p.has_dropout)
              drop = sluice_stream_keep(p, counter, i, j) ? keepScale : 0.0f;
            pd = prob * drop;
            ds = prob * (dp[nt][x] * drop - sD[c]);
          }
          s[nt][x] = pd; // the score and dP are used
          dp[nt][x] = ds;
        }
        storeTile(warpP, LDQ, nt, s[nt]);
        storeTile(warpdS, LDQ, nt, dp[nt]);
      }
      __syncwarp();
      warpMma<HD / 8, BMQ>(dv, warpP, LDQ, sdO, 1, LD); // P^T dO
      warpMma<HD / 8, BMQ>(dk, warpdS, LDQ, sQ, 1, LD); // dS^T Q
    }
  }
  const float kFactor[2] = {scale, scale}, vFactor[2] = {1.0f, 1.0f};
  storeAcc(base<T>(p, a.dk, first, j0 + warp * 16), a.dk, dk, kFactor,
           keys - warp * 16, p.d);
  storeAcc(base<T>(p, a.dv, first, j0 + warp * 16), a.dv, dv, vFactor,
           keys - warp * 16, p.e);
}

//===----------------------------------------------------------------------===//
// Launches
//===----------------------------------------------------------------------===//

/// Launches `kernel` on `blocks` x (rows of `tile`) blocks with `bytes` of
/// dynamic shared memory: above the default 48 KB the kernel opts in to
/// exactly `bytes` (cudaFuncAttributeMaxDynamicSharedMemorySize), which its
/// tiles keep within the block limit of the architecture it was compiled
/// for (SLUICE_STREAM_FITS_BLOCK).
template <typename Args>
static cudaError_t launch(void (*kernel)(Args), int64_t blocks, int threads,
                          int bytes, Args args, cudaStream_t stream) {
  args.p.has_dropout = args.p.dropout_p > 0.0;
  args.p.dropout_threshold = sluice_dropout_threshold(args.p.dropout_p);
  args.p.keep_scale = (float)(1.0 / (1.0 - args.p.dropout_p));
  if (blocks == 0)
    return cudaSuccess;
  if (blocks > INT_MAX)
    return cudaErrorInvalidConfiguration;
  if (bytes > 48 * 1024) {
    cudaError_t status = cudaFuncSetAttribute(
        kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes);
    if (status != cudaSuccess)
      return status;
  }
  kernel<<<(unsigned)blocks, threads, bytes, stream>>>(args);
  return cudaGetLastError();
}

} // namespace sluice_stream_cuda

/// Forward of a streaming attention on `stream`: WARPS warps of 16 query
/// rows per block, BN keys per step, head dims d, e <= HD (a multiple of
/// 16). Returns the launch's error (cudaErrorInvalidValue when d or e
/// exceeds HD).
template <typename T, int WARPS, int BN, int HD>
cudaError_t sluice_stream_attention_fwd_cuda(const sluice_stream_fwd_args &a,
                                             cudaStream_t stream) {
  using namespace sluice_stream_cuda;
  static_assert(BN % 16 == 0 && HD % 16 == 0, "tiles of whole mma steps");
  if (a.p.d > HD || a.p.e > HD)
    return cudaErrorInvalidValue;
  const int64_t blocks =
      sluice_stream_slices(a.p) * ((a.p.m + 16 * WARPS - 1) / (16 * WARPS));
  return launch(forwardKernel<T, WARPS, BN, HD>, blocks, 32 * WARPS,
                forwardSmem<T, WARPS, BN, HD>(), a, stream);
}

/// Backward of a streaming attention on `stream`: the dQ kernel (WARPS x 16
/// query rows per block, BN keys per step), then the dK/dV kernel (WARPS x
/// 16 keys per block, BMQ query rows per step).
template <typename T, int WARPS, int BN, int BMQ, int HD>
cudaError_t sluice_stream_attention_bwd_cuda(const sluice_stream_bwd_args &a,
                                             cudaStream_t stream) {
  using namespace sluice_stream_cuda;
  static_assert(BN % 16 == 0 && BMQ % 16 == 0 && HD % 16 == 0,
                "tiles of whole mma steps");
  if (a.p.d > HD || a.p.e > HD)
    return cudaErrorInvalidValue;
  const int64_t slices = sluice_stream_slices(a.p), rowsPerBlock = 16 * WARPS;
  cudaError_t status =
      launch(gradQueryKernel<T, WARPS, BN, HD>,
             slices * ((a.p.m + rowsPerBlock - 1) / rowsPerBlock), 32 * WARPS,
             gradQuerySmem<T, WARPS, BN, HD>(), a, stream);
  if (status != cudaSuccess)
    return status;
  return launch(gradKeyKernel<T, WARPS, BMQ, HD>,
                slices / sluice_stream_group_size(a.p) *
                    ((a.p.n + rowsPerBlock - 1) / rowsPerBlock),
                32 * WARPS, gradKeySmem<T, WARPS, BMQ, HD>(), a, stream);
}

/// The most dynamic shared memory a block of the forward's / backward's
/// launches asks for: what the device must let a block opt into
/// (cudaDevAttrMaxSharedMemoryPerBlockOptin). A module compiled for sm_80
/// runs on an sm_86 GPU, whose blocks get 99 KB instead of 163 KB: its
/// create checks this first, so that mismatch is a clear error there
/// rather than a failed launch later.
template <typename T, int WARPS, int BN, int HD>
constexpr int sluice_stream_attention_fwd_cuda_smem() {
  return sluice_stream_cuda::forwardSmem<T, WARPS, BN, HD>();
}

template <typename T, int WARPS, int BN, int BMQ, int HD>
constexpr int sluice_stream_attention_bwd_cuda_smem() {
  return sluice_stream_cuda::gradQuerySmem<T, WARPS, BN, HD>() >
                 sluice_stream_cuda::gradKeySmem<T, WARPS, BMQ, HD>()
             ? sluice_stream_cuda::gradQuerySmem<T, WARPS, BN, HD>()
             : sluice_stream_cuda::gradKeySmem<T, WARPS, BMQ, HD>();
}

#endif // SLUICE_STREAM_CUDA_CUH
