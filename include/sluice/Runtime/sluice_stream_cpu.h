//===- sluice_stream_cpu.h - streaming attention, portable C++ -----*- C++
//-*-===//
//
// The portable C++ kernels of a streaming (online-softmax) attention kernel,
// the problem of sluice_stream.h, with the tiling of the CUDA kernels:
//
// * forward: per (slice, tile of BM query rows), stream over tiles of BN
//   keys with a running row max and row sum; the running output is
//   rescaled when the max grows and divided by the sum after the last tile
//   (so the softmax is normalized after the second contraction). Only O and
//   LSE are written.
// * backward (FlashAttention-2, two passes, no atomics and no scratch): a dQ
//   pass per (slice, query tile) streaming over key tiles, and a dK/dV pass
//   per (key/value slice, key tile) streaming over the query tiles of every
//   query slice of its group (grouped-query attention sums there). Each
//   recomputes P = exp(S - LSE) and the dropout draw; D[i] = sum_x dO[i, x]
//   O[i, x] is an input (an ordinary fused kernel computes it before).
//
// Accumulation is in f32 for float/f16/bf16 elements and in f64 for double
// (tests); LSE has that accumulation type. With OpenMP the (slice, tile)
// tasks run in parallel.
//
//===----------------------------------------------------------------------===//

#ifndef SLUICE_STREAM_CPU_H
#define SLUICE_STREAM_CPU_H

#include "Philox.h"
#include "sluice_kernels.h"
#include "sluice_stream.h"

#include <cmath>
#include <vector>

#ifdef _OPENMP
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

template <typename A>
static inline A dot(const A *x, const A *y, int64_t count) {
  A sum = 0;
  for (int64_t c = 0; c < count; ++c)
    sum += x[c] * y[c];
  return sum;
}

/// Copies rows [row0, row0 + rows) x columns [0, cols) of operand `x` in
/// `slice` into `dst` (dense, `cols` per row), widened to A.
template <typename T, typename A>
static void loadRows(A *dst, const sluice_stream_problem &p,
                     const sluice_stream_operand &x, int64_t slice,
                     int64_t row0, int64_t rows, int64_t cols) {
  const T *src = static_cast<const T *>(x.data) +
                 sluice_stream_slice_offset(p, x, slice) + row0 * x.row_stride;
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c)
      dst[r * cols + c] = widen(src[r * x.row_stride + c * x.col_stride]);
}

/// Stores `src` (dense, `cols` per row) times `factor` into rows [row0,
/// row0 + rows) of operand `x` in `slice`.
template <typename T, typename A>
static void storeRows(const sluice_stream_problem &p,
                      const sluice_stream_operand &x, int64_t slice,
                      int64_t row0, int64_t rows, int64_t cols, const A *src,
                      A factor) {
  T *dst = static_cast<T *>(x.data) + sluice_stream_slice_offset(p, x, slice) +
           row0 * x.row_stride;
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c)
      narrow(&dst[r * x.row_stride + c * x.col_stride],
             src[r * cols + c] * factor);
}

/// Loads LSE or D [row0, row0 + rows) of `slice`.
template <typename A>
static void loadStats(A *dst, const sluice_stream_problem &p,
                      const sluice_stream_operand &lse, int64_t slice,
                      int64_t row0, int64_t rows) {
  const A *src = static_cast<const A *>(lse.data) +
                 sluice_stream_slice_offset(p, lse, slice) +
                 row0 * lse.row_stride;
  for (int64_t r = 0; r < rows; ++r)
    dst[r] = src[r * lse.row_stride];
}

/// The dropout factor of element (i, j) of a slice whose counter offset is
/// `base`: 1 without dropout, else keep / (1 - p).
template <typename A>
static inline A dropFactor(const sluice_stream_problem &p, int64_t base,
                           int64_t i, int64_t j) {
  if (p.dropout_p == 0.0)
    return A(1);
  if (!sluice_stream_keep(p, base, i, j))
    return A(0);
  return A(1) / (A(1) - A(p.dropout_p));
}

/// The first key past the keys row tile [i0, i0 + rows) can see.
static inline int64_t keyEnd(const sluice_stream_problem &p, int64_t i0,
                             int64_t rows) {
  if (!p.causal)
    return p.n;
  return p.n < i0 + rows ? p.n : i0 + rows;
}

/// Per-thread tile storage (allocated once per thread and call).
template <typename A>
struct Scratch {
  std::vector<A> q, k, v, dO, s, acc, acc2, stat, stat2;
  Scratch(int64_t bm, int64_t bn, int64_t d, int64_t e)
      : q(bm * d), k(bn * d), v(bn * e), dO(bm * e), s(bn),
        acc(bm * (d > e ? d : e)), acc2(bn * e), stat(bm), stat2(bm) {}
};

/// Sets the first `count` elements of `x` to 0.
template <typename A>
static inline void zero(std::vector<A> &x, int64_t count) {
  for (int64_t i = 0; i < count; ++i)
    x[i] = 0;
}

/// Loads the key tiles [j0, j0 + BN) below `end` of K and V in turn and
/// calls body(j0, keys) on each.
template <typename T, int BN, typename A, typename Body>
static void forEachKeyTile(const sluice_stream_problem &p,
                           const sluice_stream_operand &k,
                           const sluice_stream_operand &v, int64_t slice,
                           int64_t end, Scratch<A> &t, Body body) {
  for (int64_t j0 = 0; j0 < end; j0 += BN) {
    const int64_t keys = end - j0 < BN ? end - j0 : BN;
    loadRows<T>(t.k.data(), p, k, slice, j0, keys, p.d);
    loadRows<T>(t.v.data(), p, v, slice, j0, keys, p.e);
    body(j0, keys);
  }
}

/// Forward of the query rows [i0, i0 + BM) of `slice`.
template <typename T, int BM, int BN>
static void forwardTile(const sluice_stream_fwd_args &a, int64_t slice,
                        int64_t i0, Scratch<typename acc_type<T>::type> &t) {
  typedef typename acc_type<T>::type A;
  const sluice_stream_problem &p = a.p;
  const int64_t rows = p.m - i0 < BM ? p.m - i0 : BM, d = p.d, e = p.e;
  const int64_t base = sluice_stream_counter_offset(p, slice);
  A *rowMax = t.stat.data(), *rowSum = t.stat2.data();
  loadRows<T>(t.q.data(), p, a.q, slice, i0, rows, d);
  for (int64_t r = 0; r < rows; ++r)
    rowMax[r] = -INFINITY, rowSum[r] = 0;
  zero(t.acc, rows * e);
  auto keyTile = [&](int64_t j0, int64_t cols) {
    for (int64_t r = 0; r < rows; ++r) {
      const int64_t i = i0 + r;
      A tileMax = -INFINITY;
      for (int64_t c = 0; c < cols; ++c) {
        A s = (p.causal && j0 + c > i)
                  ? A(-INFINITY)
                  : A(p.scale) * dot(&t.q[r * d], &t.k[c * d], d);
        t.s[c] = s;
        tileMax = s > tileMax ? s : tileMax;
      }
      A newMax = tileMax > rowMax[r] ? tileMax : rowMax[r];
      if (newMax == A(-INFINITY))
        continue; // every score so far masked: nothing to add
      A rescale = std::exp(rowMax[r] - newMax), *acc = &t.acc[r * e];
      rowSum[r] *= rescale;
      for (int64_t x = 0; x < e; ++x)
        acc[x] *= rescale;
      for (int64_t c = 0; c < cols; ++c) {
        A prob = std::exp(t.s[c] - newMax);
        rowSum[r] += prob;
        A weight = prob * dropFactor<A>(p, base, i, j0 + c);
        if (weight != A(0))
          for (int64_t x = 0; x < e; ++x)
            acc[x] += weight * t.v[c * e + x];
      }
      rowMax[r] = newMax;
    }
  };
  forEachKeyTile<T, BN>(p, a.k, a.v, slice, keyEnd(p, i0, rows), t, keyTile);
  A *lse = a.lse.data ? static_cast<A *>(a.lse.data) +
                            sluice_stream_slice_offset(p, a.lse, slice) +
                            i0 * a.lse.row_stride
                      : nullptr;
  for (int64_t r = 0; r < rows; ++r) {
    bool empty = rowSum[r] == A(0);
    A inverse = empty ? A(0) : A(1) / rowSum[r];
    storeRows<T>(p, a.o, slice, i0 + r, 1, e, &t.acc[r * e], inverse);
    if (lse)
      lse[r * a.lse.row_stride] =
          empty ? A(INFINITY) : rowMax[r] + std::log(rowSum[r]);
  }
}

/// The part of the backward shared by both passes: for query row r (global
/// i) and key c (global j) of the loaded tiles, P and dS.
template <typename A>
static inline void probAndGrad(const sluice_stream_problem &p, Scratch<A> &t,
                               int64_t base, int64_t r, int64_t i, int64_t c,
                               int64_t j, A &prob, A &drop, A &grad) {
  const int64_t d = p.d, e = p.e;
  A s = A(p.scale) * dot(&t.q[r * d], &t.k[c * d], d);
  prob = std::exp(s - t.stat[r]);
  drop = dropFactor<A>(p, base, i, j);
  A dp = dot(&t.dO[r * e], &t.v[c * e], e) * drop;
  grad = prob * (dp - t.stat2[r]);
}

/// Loads the query side (Q, dO, LSE, D) of rows [i0, i0 + rows).
template <typename T>
static void loadQuerySide(const sluice_stream_bwd_args &a, int64_t slice,
                          int64_t i0, int64_t rows,
                          Scratch<typename acc_type<T>::type> &t) {
  const sluice_stream_problem &p = a.p;
  loadRows<T>(t.q.data(), p, a.q, slice, i0, rows, p.d);
  loadRows<T>(t.dO.data(), p, a.d_o, slice, i0, rows, p.e);
  loadStats(t.stat.data(), p, a.lse, slice, i0, rows);
  loadStats(t.stat2.data(), p, a.d, slice, i0, rows);
}

/// Backward dQ of the query rows [i0, i0 + BM) of `slice`.
template <typename T, int BM, int BN>
static void gradQueryTile(const sluice_stream_bwd_args &a, int64_t slice,
                          int64_t i0, Scratch<typename acc_type<T>::type> &t) {
  typedef typename acc_type<T>::type A;
  const sluice_stream_problem &p = a.p;
  const int64_t rows = p.m - i0 < BM ? p.m - i0 : BM, d = p.d;
  const int64_t base = sluice_stream_counter_offset(p, slice);
  loadQuerySide<T>(a, slice, i0, rows, t);
  zero(t.acc, rows * d);
  auto keyTile = [&](int64_t j0, int64_t cols) {
    for (int64_t r = 0; r < rows; ++r) {
      if (t.stat[r] == A(INFINITY))
        continue; // a fully masked row: P = 0
      for (int64_t c = 0; c < cols; ++c) {
        if (p.causal && j0 + c > i0 + r)
          continue;
        A prob, drop, grad;
        probAndGrad(p, t, base, r, i0 + r, c, j0 + c, prob, drop, grad);
        for (int64_t x = 0; x < d; ++x)
          t.acc[r * d + x] += grad * t.k[c * d + x];
      }
    }
  };
  forEachKeyTile<T, BN>(p, a.k, a.v, slice, keyEnd(p, i0, rows), t, keyTile);
  storeRows<T>(p, a.dq, slice, i0, rows, d, t.acc.data(), A(p.scale));
}

/// Backward dK and dV of the keys [j0, j0 + BN) of key/value slice
/// `shared`, summed over the query slices of its group.
template <typename T, int BM, int BN>
static void gradKeyTile(const sluice_stream_bwd_args &a, int64_t shared,
                        int64_t j0, Scratch<typename acc_type<T>::type> &t) {
  typedef typename acc_type<T>::type A;
  const sluice_stream_problem &p = a.p;
  const int64_t cols = p.n - j0 < BN ? p.n - j0 : BN, d = p.d, e = p.e;
  const int64_t group = sluice_stream_group_size(p), first = shared * group;
  loadRows<T>(t.k.data(), p, a.k, first, j0, cols, d);
  loadRows<T>(t.v.data(), p, a.v, first, j0, cols, e);
  std::vector<A> &dk = t.acc, &dv = t.acc2;
  zero(dk, cols * d);
  zero(dv, cols * e);
  for (int64_t slice = first; slice < first + group; ++slice) {
    const int64_t base = sluice_stream_counter_offset(p, slice);
    // Causal: query rows before j0 see none of these keys.
    for (int64_t i0 = p.causal ? j0 : 0; i0 < p.m; i0 += BM) {
      const int64_t rows = p.m - i0 < BM ? p.m - i0 : BM;
      loadQuerySide<T>(a, slice, i0, rows, t);
      for (int64_t r = 0; r < rows; ++r) {
        if (t.stat[r] == A(INFINITY))
          continue;
        for (int64_t c = 0; c < cols; ++c) {
          if (p.causal && j0 + c > i0 + r)
            continue;
          A prob, drop, grad;
          probAndGrad(p, t, base, r, i0 + r, c, j0 + c, prob, drop, grad);
          A weight = prob * drop;
          for (int64_t x = 0; x < e; ++x)
            dv[c * e + x] += weight * t.dO[r * e + x];
          for (int64_t x = 0; x < d; ++x)
            dk[c * d + x] += grad * t.q[r * d + x];
        }
      }
    }
  }
  storeRows<T>(p, a.dk, first, j0, cols, d, dk.data(), A(p.scale));
  storeRows<T>(p, a.dv, first, j0, cols, e, dv.data(), A(1));
}

} // namespace sluice_stream_detail

/// Forward of a streaming attention (sluice_stream.h) with BM query rows and
/// BN keys per tile: writes O and LSE (acc_type<T>).
template <typename T, int BM, int BN>
void sluice_stream_attention_fwd_cpu(const sluice_stream_fwd_args &args) {
  using namespace sluice_stream_detail;
  sluice_stream_fwd_args a = args;
  a.p.dropout_threshold = sluice_dropout_threshold(a.p.dropout_p);
  typedef typename acc_type<T>::type A;
  const int64_t tiles = (a.p.m + BM - 1) / BM;
  const int64_t tasks = sluice_stream_slices(a.p) * tiles;
  SLUICE_STREAM_PRAGMA(omp parallel) {
    Scratch<A> t(BM, BN, a.p.d, a.p.e);
    SLUICE_STREAM_PRAGMA(omp for schedule(dynamic))
    for (int64_t task = 0; task < tasks; ++task)
      forwardTile<T, BM, BN>(a, task / tiles, (task % tiles) * BM, t);
  }
}

/// Backward of a streaming attention: writes dQ, dK and dV from Q, K, V,
/// dO, the forward's LSE and D = rowsum(dO * O) (the dQ pass, then the dK/dV
/// pass).
template <typename T, int BM, int BN>
void sluice_stream_attention_bwd_cpu(const sluice_stream_bwd_args &args) {
  using namespace sluice_stream_detail;
  sluice_stream_bwd_args a = args;
  a.p.dropout_threshold = sluice_dropout_threshold(a.p.dropout_p);
  typedef typename acc_type<T>::type A;
  const int64_t slices = sluice_stream_slices(a.p);
  const int64_t shared = slices / sluice_stream_group_size(a.p);
  const int64_t queryTiles = (a.p.m + BM - 1) / BM;
  const int64_t keyTiles = (a.p.n + BN - 1) / BN;
  SLUICE_STREAM_PRAGMA(omp parallel) {
    Scratch<A> t(BM > BN ? BM : BN, BN, a.p.d, a.p.e);
    SLUICE_STREAM_PRAGMA(omp for schedule(dynamic))
    for (int64_t task = 0; task < slices * queryTiles; ++task)
      gradQueryTile<T, BM, BN>(a, task / queryTiles, (task % queryTiles) * BM,
                               t);
    SLUICE_STREAM_PRAGMA(omp for schedule(dynamic))
    for (int64_t task = 0; task < shared * keyTiles; ++task)
      gradKeyTile<T, BM, BN>(a, task / keyTiles, (task % keyTiles) * BN, t);
  }
}

#endif // SLUICE_STREAM_CPU_H
