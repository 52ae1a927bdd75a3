//===- sluice_stream_cpu.h - streaming attention, portable C++ -----*- C++
//-*-===//
//
// The portable C++ kernels of a streaming (online-softmax) attention kernel,
// the problem of sluice_stream.h. A CPU core holds a whole block of scores
// in its L1/L2 cache, so unlike the CUDA kernels these work on blocks: BM
// query rows against a tile of keys (BN rounded up to the register block's
// width), each product a register-blocked loop nest over dense copies of
// the operands (blockProduct below, as fast as oneDNN's sgemm on these
// sizes), the exp and the dropout draws in SIMD loops over a whole row of
// the tile.
//
// * forward: per (slice, BM query rows), stream over the key tiles with a
//   running row max and row sum: S = Q K^T, P = exp(scale S - max), the
//   running output rescaled when the max grows, O += P_dropped V, divided by
//   the sum after the last tile (so the softmax is normalized after the
//   second contraction). Only O and LSE are written.
// * backward (FlashAttention-2 by recomputation, no atomics): per tile
//   S = Q K^T and dP = dO V^T, P = exp(scale S - LSE), dS = P (dP - D), then
//   dQ += dS K, dK += dS^T Q, dV += P_dropped^T dO. With enough key/value
//   slices for the threads, one task per key/value slice does all three in
//   one pass over its query slices (grouped-query attention sums there);
//   otherwise a dQ pass over (slice, query rows) and a dK/dV pass over
//   (key/value slice, key tiles), each recomputing P. D[i] = sum_x dO[i, x]
//   O[i, x] is computed from the dO rows of a query block and its O rows,
//   once per load of the block (when O is given; else D is an input).
// * causal: key tiles past a row block's last row are skipped; inside a
//   tile, columns past a row's diagonal are masked.
// * dropout: the keep factors of a tile row come from one Philox call per
//   four consecutive counters (Philox.h's sluice_dropout_words: eight
//   blocks at a time with AVX2) when the counter's key stride is 1, the
//   interpreter's order; one call per element otherwise. Identical draws either
//   way.
//
// Accumulation is in f32 for float/f16/bf16 elements and in f64 for double
// (tests); LSE has that accumulation type. With OpenMP the tasks run in
// parallel; each thread owns its scratch.
//
//===----------------------------------------------------------------------===//

#ifndef SLUICE_STREAM_CPU_H
#define SLUICE_STREAM_CPU_H

#include "Philox.h"
#include "sluice_kernels.h"
#include "sluice_stream.h"

#include <cmath>
#include <vector>

#if (defined(__SSE__) || defined(__x86_64__)) && !defined(__CUDACC__)
#include <xmmintrin.h>
#define SLUICE_STREAM_HAVE_MXCSR 1
#endif

// The SIMD row loops stay functions of their own: inlined into the tile
// loops, GCC 12 no longer if-converts them and runs them scalar.
#if defined(__GNUC__)
#define SLUICE_STREAM_NOINLINE __attribute__((noinline))
#else
#define SLUICE_STREAM_NOINLINE
#endif

#ifdef _OPENMP
#include <omp.h>
#define SLUICE_STREAM_PRAGMA(x) _Pragma(#x)
#else
#define SLUICE_STREAM_PRAGMA(x)
#endif

namespace sluice_stream_detail {

/// The accumulation type of element type T.
template <typename T>
struct acc_type {
  typedef float type;
};
template <>
struct acc_type<double> {
  typedef double type;
};

static inline float widen(float x) { return x; }
static inline float widen(sluice_f16 x) { return sluice_to_f32(x); }
static inline float widen(sluice_bf16 x) { return sluice_to_f32(x); }
static inline double widen(double x) { return x; }
template <typename T>
static inline void narrow(T *p, float x) {
  sluice_store(p, x);
}
static inline void narrow(double *p, double x) { *p = x; }

/// exp in the accumulation type: sluice_kernels.h's inline, vectorizable
/// sluice_expf for f32 (1.01 ulp), libm for f64. Under nvcc (the GPU kit's
/// stream_attention_check.cu builds these kernels as its reference)
/// sluice_kernels.h has no sluice_expf: libm's expf there.
#if defined(__CUDACC__)
static inline float expAcc(float x) { return expf(x); }
#else
static inline float expAcc(float x) { return sluice_expf(x); }
#endif
static inline double expAcc(double x) { return std::exp(x); }

/// Flushes subnormal results and operands to zero (x86's MXCSR FTZ and DAZ
/// bits) on the calling thread while alive, restoring the caller's mode
/// after. Each thread of a streaming kernel's parallel region holds one.
/// Why: a softmax over scores spread by more than ~87 draws probabilities
/// below 2^-126, and every product and sum they enter is then microcoded on
/// Intel cores: BERT-base's attention forward took 29.1 ms instead of
/// 3.9 ms on a Xeon (docs/Codegen.md, "Subnormals"). Such a probability is
/// below 2^-126 of the row's largest, which is exp(0) = 1, so flushing it
/// changes no f32 row sum or product by more than its own value. The GEMMs
/// and fused kernels keep IEEE subnormals (their inputs are the caller's).
struct FlushSubnormals {
#ifdef SLUICE_STREAM_HAVE_MXCSR
  unsigned saved = _mm_getcsr();
  FlushSubnormals() { _mm_setcsr(saved | 0x8040u); } // FTZ | DAZ
  ~FlushSubnormals() { _mm_setcsr(saved); }
#else
  FlushSubnormals() {}
#endif
  FlushSubnormals(const FlushSubnormals &) = delete;
  FlushSubnormals &operator=(const FlushSubnormals &) = delete;
};

//===----------------------------------------------------------------------===//
// Block products
//===----------------------------------------------------------------------===//

#if defined(__AVX512F__)
constexpr int kVectorBytes = 64;
#elif defined(__AVX__)
constexpr int kVectorBytes = 32;
#else
constexpr int kVectorBytes = 16;
#endif
/// The register block of a product: kBlockRows rows of C times two vector
/// registers of columns (6 x 2 accumulators: 12 of 16 AVX2/SSE registers).
constexpr int kBlockRows = 6;
template <typename A>
constexpr int64_t blockCols() {
  return 2 * kVectorBytes / (int64_t)sizeof(A);
}
/// `count` rounded up to whole register blocks of columns.
template <typename A>
static inline int64_t padCols(int64_t count) {
  return (count + blockCols<A>() - 1) / blockCols<A>() * blockCols<A>();
}

/// C[R x NR] = (accumulate ? C : 0) + sum_k a(i, k) B[k, :] with
/// a(i, k) = a[i * ars + k * acs] and B rows ldb apart: the accumulators
/// stay in registers over k (R and NR are constants, so the loops unroll).
template <typename A, int R>
static inline void microProduct(int64_t k, const A *a, int64_t ars, int64_t acs,
                                const A *b, int64_t ldb, A *c, int64_t ldc,
                                bool accumulate) {
  constexpr int NR = (int)blockCols<A>();
  A acc[R][NR];
  for (int i = 0; i < R; ++i) {
    SLUICE_STREAM_PRAGMA(omp simd)
    for (int j = 0; j < NR; ++j)
      acc[i][j] = accumulate ? c[i * ldc + j] : A(0);
  }
  for (int64_t p = 0; p < k; ++p) {
    const A *row = b + p * ldb;
    for (int i = 0; i < R; ++i) {
      const A weight = a[i * ars + p * acs];
      SLUICE_STREAM_PRAGMA(omp simd)
      for (int j = 0; j < NR; ++j)
        acc[i][j] += weight * row[j];
    }
  }
  for (int i = 0; i < R; ++i) {
    SLUICE_STREAM_PRAGMA(omp simd)
    for (int j = 0; j < NR; ++j)
      c[i * ldc + j] = acc[i][j];
  }
}

/// microProduct for `rows` <= R rows (R a constant per instantiation).
template <typename A, int R>
static inline void microRows(int64_t rows, int64_t k, const A *a, int64_t ars,
                             int64_t acs, const A *b, int64_t ldb, A *c,
                             int64_t ldc, bool accumulate) {
  if constexpr (R > 1) {
    if (rows < R)
      return microRows<A, R - 1>(rows, k, a, ars, acs, b, ldb, c, ldc,
                                 accumulate);
  }
  microProduct<A, R>(k, a, ars, acs, b, ldb, c, ldc, accumulate);
}

/// C[m x n] = (accumulate ? C : 0) + op(A)[m x k] B[k x n], n a multiple of
/// blockCols<A>(); op(A)(i, k) = a[i * ars + k * acs] (ars = 1 reads a
/// transposed block).
template <typename A>
static void blockProduct(int64_t m, int64_t n, int64_t k, const A *a,
                         int64_t ars, int64_t acs, const A *b, int64_t ldb,
                         A *c, int64_t ldc, bool accumulate) {
  constexpr int64_t NR = blockCols<A>();
  for (int64_t j = 0; j < n; j += NR)
    for (int64_t i = 0; i < m; i += kBlockRows)
      microRows<A, kBlockRows>(m - i, k, a + i * ars, ars, acs, b + j, ldb,
                               c + i * ldc + j, ldc, accumulate);
}

//===----------------------------------------------------------------------===//
// Dense copies of the operands
//===----------------------------------------------------------------------===//

/// put(&dst(r, c), src(r, c)) for r < rows, c < cols, with element strides
/// (dr, dc) and (sr, sc). The loops follow the source's unit stride (the
/// view transposed when that is the rows'); when the destination's unit
/// stride is the other dim, eight outer rows go together so that both
/// sides move runs of eight (O and dO are laid out [x][i] in BERT's
/// modules, K and V [j][c], their transposed copies [c][j]).
template <typename D, typename S, typename Put>
static void copyStrided(D *dst, int64_t dr, int64_t dc, const S *src,
                        int64_t sr, int64_t sc, int64_t rows, int64_t cols,
                        Put put) {
  if (rows <= 0 || cols <= 0)
    return; // an empty view: its pointers may be null (no keys, no rows)
  if (sr == 1 && sc != 1) {
    int64_t swap = rows;
    rows = cols, cols = swap;
    swap = dr, dr = dc, dc = swap;
    swap = sr, sr = sc, sc = swap;
  }
  int64_t r = 0;
  if (dc != 1)
    for (; r + 8 <= rows; r += 8)
      for (int64_t c = 0; c < cols; ++c)
        for (int64_t k = 0; k < 8; ++k)
          put(dst + (r + k) * dr + c * dc, src[(r + k) * sr + c * sc]);
  for (; r < rows; ++r) {
    D *out = dst + r * dr;
    const S *in = src + r * sr;
    if (dc == 1 && sc == 1) {
      SLUICE_STREAM_PRAGMA(omp simd)
      for (int64_t c = 0; c < cols; ++c)
        put(out + c, in[c]);
    } else {
      for (int64_t c = 0; c < cols; ++c)
        put(out + c * dc, in[c * sc]);
    }
  }
}

/// The element of operand `x` at (row0, 0) of `slice`; null for an
/// operand with no elements (null data: offsetting it is undefined, and
/// nothing will be read or written through it).
template <typename T>
static inline T *operandAt(const sluice_stream_problem &p,
                           const sluice_stream_operand &x, int64_t slice,
                           int64_t row0) {
  if (!x.data)
    return nullptr;
  return static_cast<T *>(x.data) + sluice_stream_slice_offset(p, x, slice) +
         row0 * x.row_stride;
}

/// Copies rows [row0, row0 + rows) x columns [0, cols) of operand `x` in
/// `slice` into `dst` (rows `ld` apart), widened to A; columns [cols, ld)
/// are zeroed.
template <typename T, typename A>
static void loadRows(A *dst, int64_t ld, const sluice_stream_problem &p,
                     const sluice_stream_operand &x, int64_t slice,
                     int64_t row0, int64_t rows, int64_t cols) {
  copyStrided(dst, ld, 1, operandAt<const T>(p, x, slice, row0), x.row_stride,
              x.col_stride, rows, cols, [](A *out, T in) { *out = widen(in); });
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = cols; c < ld; ++c)
      dst[r * ld + c] = A(0);
}

/// The transpose of the same rows: dst[c * ld + r] = x(row0 + r, c), zero
/// for r in [rows, ld).
template <typename T, typename A>
static void loadTransposed(A *dst, int64_t ld, const sluice_stream_problem &p,
                           const sluice_stream_operand &x, int64_t slice,
                           int64_t row0, int64_t rows, int64_t cols) {
  copyStrided(dst, 1, ld, operandAt<const T>(p, x, slice, row0), x.row_stride,
              x.col_stride, rows, cols, [](A *out, T in) { *out = widen(in); });
  for (int64_t c = 0; c < cols; ++c)
    for (int64_t r = rows; r < ld; ++r)
      dst[c * ld + r] = A(0);
}

/// Stores `src` (rows `ld` apart) times `factor` into rows [row0, row0 +
/// rows) x columns [0, cols) of operand `x` in `slice`.
template <typename T, typename A>
static void storeRows(const sluice_stream_problem &p,
                      const sluice_stream_operand &x, int64_t slice,
                      int64_t row0, int64_t rows, int64_t cols, const A *src,
                      int64_t ld, A factor) {
  copyStrided(operandAt<T>(p, x, slice, row0), x.row_stride, x.col_stride, src,
              ld, 1, rows, cols,
              [factor](T *out, A in) { narrow(out, in * factor); });
}

/// Loads LSE or D [row0, row0 + rows) of `slice`.
template <typename A>
static void loadStats(A *dst, const sluice_stream_problem &p,
                      const sluice_stream_operand &lse, int64_t slice,
                      int64_t row0, int64_t rows) {
  const A *src = operandAt<const A>(p, lse, slice, row0);
  for (int64_t r = 0; r < rows; ++r)
    dst[r] = src[r * lse.row_stride];
}

/// `x` with room for at least `count` elements.
template <typename X>
static inline X *room(std::vector<X> &x, int64_t count) {
  if ((int64_t)x.size() < count)
    x.resize(count);
  return x.data();
}

/// Per-thread storage, grown on demand and kept over the thread's tasks.
template <typename A>
struct Scratch {
  // Key side: K^T [d x ld], K [ld x dp], V [ld x ep], V^T [e x ld], and
  // the dK / dV sums [ld x dp / ep].
  std::vector<A> kt, k, v, vt, dk, dv;
  // Query side: Q [BM x dp], dO and O [BM x ep], the O or dQ sums, LSE, D,
  // the running max and sum; one tile's S / P, dP / dS and dropout factors.
  std::vector<A> q, dO, o, acc, stat, stat2, rowMax, rowSum, s, dp, factor;
  std::vector<uint32_t> words;
};

/// The keys [first, first + count) of one key/value slice, copied densely
/// (`ld` = count rounded up to a register block; columns past count zero).
template <typename A>
struct Keys {
  int64_t first, count, ld;
  const A *kt, *k, *v, *vt;
};

/// Loads keys [first, first + count) of K and V in `slice`: K^T and V for
/// the forward, K^T, K and V^T for the backward.
template <typename T, typename A>
static Keys<A>
loadKeys(const sluice_stream_problem &p, const sluice_stream_operand &k,
         const sluice_stream_operand &v, int64_t slice, int64_t first,
         int64_t count, bool backward, Scratch<A> &t) {
  const int64_t ld = padCols<A>(count), dp = padCols<A>(p.d),
                ep = padCols<A>(p.e);
  Keys<A> keys = {first, count, ld, nullptr, nullptr, nullptr, nullptr};
  A *kt = room(t.kt, p.d * ld);
  loadTransposed<T>(kt, ld, p, k, slice, first, count, p.d);
  keys.kt = kt;
  if (backward) {
    A *kr = room(t.k, ld * dp), *vt = room(t.vt, p.e * ld);
    loadRows<T>(kr, dp, p, k, slice, first, count, p.d);
    loadTransposed<T>(vt, ld, p, v, slice, first, count, p.e);
    keys.k = kr, keys.vt = vt;
  } else {
    A *vr = room(t.v, ld * ep);
    loadRows<T>(vr, ep, p, v, slice, first, count, p.e);
    keys.v = vr;
  }
  return keys;
}

/// The first key past the keys row block [i0, i0 + rows) can see.
static inline int64_t keyEnd(const sluice_stream_problem &p, int64_t i0,
                             int64_t rows) {
  if (!p.causal)
    return p.n;
  return p.n < i0 + rows ? p.n : i0 + rows;
}

/// How many of the `cols` keys from j0 on query row i sees (<= 0: none).
static inline int64_t visibleKeys(const sluice_stream_problem &p, int64_t i,
                                  int64_t j0, int64_t cols) {
  if (!p.causal || i - j0 + 1 > cols)
    return cols;
  return i - j0 + 1;
}

/// The key tile: BN rounded up to whole register blocks.
template <typename A, int BN>
constexpr int64_t keyTile() {
  return (BN + blockCols<A>() - 1) / blockCols<A>() * blockCols<A>();
}

//===----------------------------------------------------------------------===//
// Dropout factors of a tile
//===----------------------------------------------------------------------===//

/// factor[r * ld + c], c < width, is the dropout factor of element (i0 + r,
/// j0 + c) of a slice whose counter offset is `base`: 1 / (1 - p) if kept,
/// else 0; 0 for keys the row does not see. Rows of consecutive counters
/// (counter_col 1) draw four keys per Philox call.
template <typename A>
static void dropoutFactors(const sluice_stream_problem &p, int64_t base,
                           int64_t i0, int64_t rows, int64_t j0, int64_t cols,
                           int64_t width, A *factor, int64_t ld,
                           std::vector<uint32_t> &words) {
  const A keep = A(1) / (A(1) - A(p.dropout_p));
  const uint32_t threshold = p.dropout_threshold;
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t visible = visibleKeys(p, i0 + r, j0, cols);
    A *row = factor + r * ld;
    if (visible <= 0) {
      for (int64_t c = 0; c < width; ++c)
        row[c] = A(0);
      continue;
    }
    const uint64_t counter =
        (uint64_t)(base + (i0 + r) * p.counter_row + j0 * p.counter_col);
    if (p.counter_col != 1) {
      for (int64_t c = 0; c < width; ++c)
        row[c] = c < visible && sluice_stream_keep(p, base, i0 + r, j0 + c)
                     ? keep
                     : A(0);
      continue;
    }
    const uint64_t first = counter >> 2;
    const int64_t blocks =
        (int64_t)(((counter + visible - 1) >> 2) - first) + 1;
    // Room past the drawn words: the loop below reads `width` of them.
    uint32_t *w = room(words, 4 * blocks + width);
    sluice_dropout_words(p.seed, p.stream, first, blocks, w);
    const uint32_t *drawn = w + (counter & 3);
    SLUICE_STREAM_PRAGMA(omp simd)
    for (int64_t c = 0; c < width; ++c)
      row[c] = c < visible && drawn[c] >= threshold ? keep : A(0);
  }
}

//===----------------------------------------------------------------------===//
// Forward
//===----------------------------------------------------------------------===//

/// Scales the `visible` scores of a tile row and sets the keys past them
/// to -inf (masked: exp gives 0); returns the row's max.
template <typename A>
SLUICE_STREAM_NOINLINE static A maskRow(A *row, int64_t width, int64_t visible,
                                        A scale) {
  A max = -INFINITY;
  SLUICE_STREAM_PRAGMA(omp simd reduction(max : max))
  for (int64_t c = 0; c < width; ++c) {
    row[c] = c < visible ? scale * row[c] : A(-INFINITY);
    max = row[c] > max ? row[c] : max;
  }
  return max;
}

/// One row of a forward tile (maskRow's): row[c] = exp(row[c] - max),
/// times drop[c] with Dropout; returns the sum before dropout. No branch in
/// the loop (a `c < visible` test here makes GCC split the loop and run the
/// exp part scalar).
template <typename A, bool Dropout>
SLUICE_STREAM_NOINLINE static A probRow(A *row, const A *drop, int64_t width,
                                        A max) {
  A sum = 0;
  SLUICE_STREAM_PRAGMA(omp simd reduction(+ : sum))
  for (int64_t c = 0; c < width; ++c) {
    const A prob = expAcc(row[c] - max);
    sum += prob;
    row[c] = Dropout ? prob * drop[c] : prob;
  }
  return sum;
}

/// Forward of the query rows [i0, i0 + rows) of `slice` against `keys`
/// (which start at key 0 and reach every key the rows see).
template <typename T, int BN>
static void forwardBlock(const sluice_stream_fwd_args &a, int64_t slice,
                         int64_t i0, int64_t rows,
                         const Keys<typename acc_type<T>::type> &keys,
                         Scratch<typename acc_type<T>::type> &t) {
  typedef typename acc_type<T>::type A;
  const sluice_stream_problem &p = a.p;
  constexpr int64_t KT = keyTile<A, BN>();
  const int64_t d = p.d, ep = padCols<A>(p.e);
  const int64_t base = sluice_stream_counter_offset(p, slice);
  const bool dropout = p.dropout_p != 0.0;
  const A scale = A(p.scale);
  A *q = room(t.q, rows * d), *acc = room(t.acc, rows * ep);
  A *rowMax = room(t.rowMax, rows), *rowSum = room(t.rowSum, rows);
  A *s = room(t.s, rows * KT), *factor = room(t.factor, rows * KT);
  loadRows<T>(q, d, p, a.q, slice, i0, rows, d);
  for (int64_t r = 0; r < rows; ++r)
    rowMax[r] = -INFINITY, rowSum[r] = 0;
  for (int64_t x = 0; x < rows * ep; ++x)
    acc[x] = 0;
  const int64_t end = keyEnd(p, i0, rows);
  for (int64_t j0 = 0; j0 < end; j0 += KT) {
    const int64_t cols = end - j0 < KT ? end - j0 : KT;
    const int64_t width = padCols<A>(cols);
    blockProduct(rows, width, d, q, d, 1, keys.kt + j0, keys.ld, s, KT, false);
    if (dropout)
      dropoutFactors(p, base, i0, rows, j0, cols, width, factor, KT, t.words);
    for (int64_t r = 0; r < rows; ++r) {
      A *row = s + r * KT;
      const A tileMax =
          maskRow(row, width, visibleKeys(p, i0 + r, j0, cols), scale);
      const A newMax = tileMax > rowMax[r] ? tileMax : rowMax[r];
      if (newMax == A(-INFINITY)) { // nothing seen yet: P = 0
        for (int64_t c = 0; c < width; ++c)
          row[c] = 0;
        continue;
      }
      const A rescale = expAcc(rowMax[r] - newMax);
      if (rescale != A(1)) {
        rowSum[r] *= rescale;
        SLUICE_STREAM_PRAGMA(omp simd)
        for (int64_t x = 0; x < ep; ++x)
          acc[r * ep + x] *= rescale;
      }
      const A *drop = factor + r * KT;
      rowSum[r] += dropout ? probRow<A, true>(row, drop, width, newMax)
                           : probRow<A, false>(row, drop, width, newMax);
      rowMax[r] = newMax;
    }
    blockProduct(rows, ep, cols, s, KT, 1, keys.v + j0 * ep, ep, acc, ep, true);
  }
  A *lse = operandAt<A>(p, a.lse, slice, i0);
  for (int64_t r = 0; r < rows; ++r) {
    const bool empty = rowSum[r] == A(0);
    const A inverse = empty ? A(0) : A(1) / rowSum[r];
    storeRows<T>(p, a.o, slice, i0 + r, 1, p.e, acc + r * ep, ep, inverse);
    if (lse)
      lse[r * a.lse.row_stride] =
          empty ? A(INFINITY) : rowMax[r] + std::log(rowSum[r]);
  }
}

/// Forward of the query blocks [block0, block1) of `slice`.
template <typename T, int BM, int BN>
static void forwardBlocks(const sluice_stream_fwd_args &a, int64_t slice,
                          int64_t block0, int64_t block1,
                          Scratch<typename acc_type<T>::type> &t) {
  const sluice_stream_problem &p = a.p;
  const int64_t row0 = block0 * BM;
  const int64_t row1 = p.m < block1 * BM ? p.m : block1 * BM;
  const auto keys = loadKeys<T>(p, a.k, a.v, slice, 0,
                                keyEnd(p, row0, row1 - row0), false, t);
  for (int64_t i0 = row0; i0 < row1; i0 += BM)
    forwardBlock<T, BN>(a, slice, i0, row1 - i0 < BM ? row1 - i0 : BM, keys, t);
}

//===----------------------------------------------------------------------===//
// Backward
//===----------------------------------------------------------------------===//

/// The query side of a backward block: Q [rows x dp], dO [rows x ep], LSE,
/// D, and the dQ sums [rows x dp].
template <typename A>
struct Queries {
  int64_t slice, base, i0, rows;
  const A *q, *dO, *lse, *rowDot;
  A *dq;
};

/// D of the query rows [i0, i0 + rows) of `slice`: sum_x dO[i, x] O[i, x]
/// from the loaded dO rows (`ep` apart) and O's rows when a.o is given,
/// else a.d's.
template <typename T, typename A>
static void rowDots(A *dst, const sluice_stream_bwd_args &a, int64_t slice,
                    int64_t i0, int64_t rows, const A *dO, int64_t ep,
                    Scratch<A> &t) {
  if (!a.o.data)
    return loadStats(dst, a.p, a.d, slice, i0, rows);
  A *o = room(t.o, rows * ep);
  loadRows<T>(o, ep, a.p, a.o, slice, i0, rows, a.p.e);
  for (int64_t r = 0; r < rows; ++r) {
    A sum = 0;
    for (int64_t x = 0; x < a.p.e; ++x)
      sum += dO[r * ep + x] * o[r * ep + x];
    dst[r] = sum;
  }
}

/// One row of a backward tile: from the masked, scaled scores (row,
/// maskRow's) and dP (grad), P = exp(row - LSE) (0 for masked keys, and
/// for a fully masked row, whose LSE is +inf), then row = P dropped and
/// grad = dS = P (dP dropped - D).
template <typename A, bool Dropout>
SLUICE_STREAM_NOINLINE static void gradRow(A *row, A *grad, const A *drop,
                                           int64_t width, A lse, A rowDot) {
  SLUICE_STREAM_PRAGMA(omp simd)
  for (int64_t c = 0; c < width; ++c) {
    const A prob = expAcc(row[c] - lse);
    const A keep = Dropout ? drop[c] : A(1);
    row[c] = prob * keep;
    grad[c] = prob * (grad[c] * keep - rowDot);
  }
}

/// One tile of the backward: keys [j0, j0 + cols) of `keys` against the
/// rows of `qs`; adds to dQ (when qs.dq) and to dK, dV (when dk).
template <typename A, int BN>
static void gradTile(const sluice_stream_problem &p, const Queries<A> &qs,
                     const Keys<A> &keys, int64_t j0, int64_t cols, A *dk,
                     A *dv, Scratch<A> &t) {
  constexpr int64_t KT = keyTile<A, BN>();
  const int64_t rows = qs.rows, dp = padCols<A>(p.d), ep = padCols<A>(p.e);
  const int64_t width = padCols<A>(cols), at = j0 - keys.first;
  const bool dropout = p.dropout_p != 0.0;
  const A scale = A(p.scale);
  A *s = room(t.s, rows * KT), *dpr = room(t.dp, rows * KT);
  A *factor = room(t.factor, rows * KT);
  blockProduct(rows, width, p.d, qs.q, dp, 1, keys.kt + at, keys.ld, s, KT,
               false);
  blockProduct(rows, width, p.e, qs.dO, ep, 1, keys.vt + at, keys.ld, dpr, KT,
               false);
  if (dropout)
    dropoutFactors(p, qs.base, qs.i0, rows, j0, cols, width, factor, KT,
                   t.words);
  for (int64_t r = 0; r < rows; ++r) {
    const A lse = qs.lse[r], rowDot = qs.rowDot[r];
    A *row = s + r * KT, *grad = dpr + r * KT;
    const A *drop = factor + r * KT;
    maskRow(row, width, visibleKeys(p, qs.i0 + r, j0, cols), scale);
    if (dropout)
      gradRow<A, true>(row, grad, drop, width, lse, rowDot);
    else
      gradRow<A, false>(row, grad, drop, width, lse, rowDot);
  }
  if (qs.dq)
    blockProduct(rows, dp, cols, dpr, KT, 1, keys.k + at * dp, dp, qs.dq, dp,
                 true);
  if (dk) {
    blockProduct(cols, ep, rows, s, 1, KT, qs.dO, ep, dv + at * ep, ep, true);
    blockProduct(cols, dp, rows, dpr, 1, KT, qs.q, dp, dk + at * dp, dp, true);
  }
}

/// The backward of query blocks [block0, block1) of `slice` against the
/// loaded `keys`: writes their dQ when `dq`, adds to dk / dv (the sums of
/// keys, rows `dp` / `ep` apart) when dk is not null.
template <typename T, int BM, int BN>
static void gradBlocks(const sluice_stream_bwd_args &a, int64_t slice,
                       int64_t block0, int64_t block1,
                       const Keys<typename acc_type<T>::type> &keys, bool dq,
                       typename acc_type<T>::type *dk,
                       typename acc_type<T>::type *dv,
                       Scratch<typename acc_type<T>::type> &t) {
  typedef typename acc_type<T>::type A;
  const sluice_stream_problem &p = a.p;
  constexpr int64_t KT = keyTile<A, BN>();
  const int64_t dp = padCols<A>(p.d), ep = padCols<A>(p.e);
  const int64_t keysEnd = keys.first + keys.count;
  for (int64_t i0 = block0 * BM; i0 < p.m && i0 < block1 * BM; i0 += BM) {
    const int64_t rows = p.m - i0 < BM ? p.m - i0 : BM;
    const int64_t end =
        keyEnd(p, i0, rows) < keysEnd ? keyEnd(p, i0, rows) : keysEnd;
    if (end <= keys.first && !dq)
      continue; // none of these keys is seen by these rows
    A *q = room(t.q, rows * dp), *dO = room(t.dO, rows * ep);
    A *lse = room(t.stat, rows), *rowDot = room(t.stat2, rows);
    A *sums = dq ? room(t.acc, rows * dp) : nullptr;
    loadRows<T>(q, dp, p, a.q, slice, i0, rows, p.d);
    loadRows<T>(dO, ep, p, a.d_o, slice, i0, rows, p.e);
    loadStats(lse, p, a.lse, slice, i0, rows);
    rowDots<T>(rowDot, a, slice, i0, rows, dO, ep, t);
    for (int64_t x = 0; sums && x < rows * dp; ++x)
      sums[x] = 0;
    const Queries<A> qs = {slice, sluice_stream_counter_offset(p, slice),
                           i0,    rows,
                           q,     dO,
                           lse,   rowDot,
                           sums};
    for (int64_t j0 = keys.first; j0 < end; j0 += KT)
      gradTile<A, BN>(p, qs, keys, j0, end - j0 < KT ? end - j0 : KT, dk, dv,
                      t);
    if (dq)
      storeRows<T>(p, a.dq, slice, i0, rows, p.d, sums, dp, A(p.scale));
  }
}

/// dK and dV of keys [j0, j0 + count) of key/value slice `shared`, summed
/// over the query slices of its group (and their dQ too when `dq`: then
/// the keys are all of them).
template <typename T, int BM, int BN>
static void gradKeys(const sluice_stream_bwd_args &a, int64_t shared,
                     int64_t j0, int64_t count, bool dq,
                     Scratch<typename acc_type<T>::type> &t) {
  typedef typename acc_type<T>::type A;
  const sluice_stream_problem &p = a.p;
  const int64_t group = sluice_stream_group_size(p), first = shared * group;
  const auto keys = loadKeys<T>(p, a.k, a.v, first, j0, count, true, t);
  const int64_t dp = padCols<A>(p.d), ep = padCols<A>(p.e);
  A *dk = room(t.dk, keys.ld * dp), *dv = room(t.dv, keys.ld * ep);
  for (int64_t x = 0; x < keys.ld * dp; ++x)
    dk[x] = 0;
  for (int64_t x = 0; x < keys.ld * ep; ++x)
    dv[x] = 0;
  // Causal: query rows before j0 see none of these keys.
  const int64_t block0 = p.causal && !dq ? j0 / BM : 0;
  for (int64_t slice = first; slice < first + group; ++slice)
    gradBlocks<T, BM, BN>(a, slice, block0, (p.m + BM - 1) / BM, keys, dq, dk,
                          dv, t);
  storeRows<T>(p, a.dk, first, j0, count, p.d, dk, dp, A(p.scale));
  storeRows<T>(p, a.dv, first, j0, count, p.e, dv, ep, A(1));
}

/// The OpenMP threads a parallel region will have (1 without OpenMP).
static inline int64_t threadCount() {
#ifdef _OPENMP
  return omp_get_max_threads();
#else
  return 1;
#endif
}

/// Tasks per slice when `slices` slices of `blocks` blocks each are shared
/// by the threads: whole slices (one load of the keys each) when there are
/// enough of them for four tasks per thread, else slices cut in ranges of
/// blocks.
static inline int64_t rangesPerSlice(int64_t slices, int64_t blocks) {
  int64_t ranges = (4 * threadCount() + slices - 1) / slices;
  return ranges < 1 ? 1 : ranges > blocks ? blocks : ranges;
}

} // namespace sluice_stream_detail

/// Forward of a streaming attention (sluice_stream.h) with BM query rows per
/// block and BN keys per tile (rounded up to the register block): writes O
/// and LSE (acc_type<T>).
template <typename T, int BM, int BN>
void sluice_stream_attention_fwd_cpu(const sluice_stream_fwd_args &args) {
  using namespace sluice_stream_detail;
  sluice_stream_fwd_args a = args;
  a.p.dropout_threshold = sluice_dropout_threshold(a.p.dropout_p);
  typedef typename acc_type<T>::type A;
  const int64_t blocks = (a.p.m + BM - 1) / BM;
  const int64_t slices = sluice_stream_slices(a.p);
  const int64_t ranges = rangesPerSlice(slices, blocks);
  SLUICE_STREAM_PRAGMA(omp parallel) {
    FlushSubnormals flush;
    Scratch<A> t;
    SLUICE_STREAM_PRAGMA(omp for schedule(dynamic))
    for (int64_t task = 0; task < slices * ranges; ++task) {
      const int64_t range = task % ranges;
      forwardBlocks<T, BM, BN>(a, task / ranges, range * blocks / ranges,
                               (range + 1) * blocks / ranges, t);
    }
  }
}

namespace sluice_stream_detail {

/// The backward in one pass per key/value slice (`onePass`) or as a dQ
/// pass and a dK/dV pass (sluice_stream_attention_bwd_cpu picks; tests run
/// both).
template <typename T, int BM, int BN>
void backward(const sluice_stream_bwd_args &args, bool onePass) {
  sluice_stream_bwd_args a = args;
  a.p.dropout_threshold = sluice_dropout_threshold(a.p.dropout_p);
  typedef typename acc_type<T>::type A;
  const int64_t slices = sluice_stream_slices(a.p);
  const int64_t shared = slices / sluice_stream_group_size(a.p);
  const int64_t blocks = (a.p.m + BM - 1) / BM;
  constexpr int64_t KT = keyTile<A, BN>();
  const int64_t keyTiles = (a.p.n + KT - 1) / KT;
  const int64_t queryRanges = rangesPerSlice(slices, blocks);
  const int64_t keyRanges = rangesPerSlice(shared, keyTiles);
  SLUICE_STREAM_PRAGMA(omp parallel) {
    FlushSubnormals flush;
    Scratch<A> t;
    if (onePass) {
      SLUICE_STREAM_PRAGMA(omp for schedule(dynamic))
      for (int64_t task = 0; task < shared; ++task)
        gradKeys<T, BM, BN>(a, task, 0, a.p.n, true, t);
    } else {
      SLUICE_STREAM_PRAGMA(omp for schedule(dynamic))
      for (int64_t task = 0; task < slices * queryRanges; ++task) {
        const int64_t slice = task / queryRanges, range = task % queryRanges;
        const int64_t block0 = range * blocks / queryRanges;
        const int64_t block1 = (range + 1) * blocks / queryRanges;
        const int64_t rows =
            (a.p.m < block1 * BM ? a.p.m : block1 * BM) - block0 * BM;
        const auto keys = loadKeys<T>(a.p, a.k, a.v, slice, 0,
                                      keyEnd(a.p, block0 * BM, rows), true, t);
        gradBlocks<T, BM, BN>(a, slice, block0, block1, keys, true, nullptr,
                              nullptr, t);
      }
      SLUICE_STREAM_PRAGMA(omp for schedule(dynamic))
      for (int64_t task = 0; task < shared * keyRanges; ++task) {
        const int64_t range = task % keyRanges;
        const int64_t tile0 = range * keyTiles / keyRanges;
        const int64_t tile1 = (range + 1) * keyTiles / keyRanges;
        const int64_t j1 = a.p.n < tile1 * KT ? a.p.n : tile1 * KT;
        gradKeys<T, BM, BN>(a, task / keyRanges, tile0 * KT, j1 - tile0 * KT,
                            false, t);
      }
    }
  }
}

} // namespace sluice_stream_detail

/// Backward of a streaming attention: writes dQ, dK and dV from Q, K, V,
/// dO, the forward's LSE and O (or D = rowsum(dO * O); sluice_stream.h). One
/// pass per key/value slice when there are at least two per thread (or one
/// thread), else a dQ pass and a dK/dV pass, whose (slice, rows) and (key/value
/// slice, keys) tasks keep every thread busy at the cost of recomputing P
/// twice.
template <typename T, int BM, int BN>
void sluice_stream_attention_bwd_cpu(const sluice_stream_bwd_args &args) {
  using namespace sluice_stream_detail;
  const int64_t shared =
      sluice_stream_slices(args.p) / sluice_stream_group_size(args.p);
  const int64_t threads = threadCount();
  backward<T, BM, BN>(args, threads == 1 || shared >= 2 * threads);
}

#endif // SLUICE_STREAM_CPU_H
