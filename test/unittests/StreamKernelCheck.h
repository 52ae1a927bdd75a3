//===- StreamKernelCheck.h - checks of the streaming attention kernels -*- C++
//-*-===//
//
// A naive reference of sluice_stream.h's problem that materializes the
// scores: S, the causal mask, the softmax, dropout with the same
// per-element draws (Philox.h), P V; and the backward from the materialized
// P (the softmax backward with rowsum(P * dP), not the kernels' rowsum(dO *
// O), which they compute from O or take as D). The checks run any pair of
// kernels (StreamKernelTest.cpp: the C++ kernels built into the test;
// StreamKernelNativeTest.cpp: the same header compiled as a module is,
// -march=native with OpenMP) on layouts with the batch dims interleaved between
// the rows and columns.
//
//===----------------------------------------------------------------------===//

#ifndef SLUICE_TEST_STREAMKERNELCHECK_H
#define SLUICE_TEST_STREAMKERNELCHECK_H

#include "sluice/Runtime/sluice_stream_cpu.h"
#include <algorithm>
#include <cmath>
#include <gtest/gtest.h>
#include <random>
#include <string>
#include <vector>

namespace sluice_stream_check {

/// A shape: two batch dims (b, h), m query rows, n keys, d and e columns.
struct Shape {
  int64_t b = 2, h = 3, m = 7, n = 7, d = 16, e = 8;
  bool causal = false;
  double dropout = 0;
  double scale = 0.25;
};

/// A dense tensor [dims...] holding elements of T, with the strides of a
/// permuted layout: `order` lists the logical dims outermost first.
template <typename T>
struct Tensor {
  std::vector<T> data;
  std::vector<int64_t> strides; // per logical dim
  Tensor(const std::vector<int64_t> &sizes, const std::vector<int> &order) {
    strides.assign(sizes.size(), 0);
    int64_t stride = 1;
    for (int k = (int)order.size() - 1; k >= 0; --k) {
      strides[order[k]] = stride;
      stride *= sizes[order[k]];
    }
    data.resize(stride);
  }
  /// The operand view: logical dims are (b, h, row, col).
  sluice_stream_operand operand() {
    sluice_stream_operand x = {};
    x.data = data.data();
    x.batch_stride[0] = strides[0];
    x.batch_stride[1] = strides[1];
    x.row_stride = strides[2];
    x.col_stride = strides.size() > 3 ? strides[3] : 0;
    return x;
  }
  T &at(int64_t b, int64_t h, int64_t r, int64_t c = 0) {
    int64_t offset = b * strides[0] + h * strides[1] + r * strides[2];
    if (strides.size() > 3)
      offset += c * strides[3];
    return data[offset];
  }
};

inline double toDouble(double x) { return x; }
inline double toDouble(float x) { return x; }
inline double toDouble(sluice_f16 x) { return sluice_to_f32(x); }
inline double toDouble(sluice_bf16 x) { return sluice_to_f32(x); }
inline void fromDouble(double *p, double x) { *p = x; }
template <typename T>
void fromDouble(T *p, double x) {
  sluice_store(p, (float)x);
}

/// Layouts of Q, K, V, O (logical dims b, h, row, col): one interleaved
/// like BERT's [b, seq, h, p], one with the batch dims innermost but one.
const std::vector<int> kInterleaved = {0, 2, 1, 3};
const std::vector<int> kHeadsFirst = {1, 0, 2, 3};
const std::vector<int> kColumnMajor = {0, 1, 3, 2};

/// The tensors of one problem, with random inputs.
template <typename T>
struct Problem {
  typedef typename sluice_stream_detail::acc_type<T>::type A;
  Shape s;
  Tensor<T> q, k, v, o, dO, dq, dk, dv;
  Tensor<A> lse, rowDot;
  Problem(const Shape &shape, unsigned seed)
      : s(shape), q({s.b, s.h, s.m, s.d}, kInterleaved),
        k({s.b, s.h, s.n, s.d}, kHeadsFirst),
        v({s.b, s.h, s.n, s.e}, kColumnMajor),
        o({s.b, s.h, s.m, s.e}, kInterleaved),
        dO({s.b, s.h, s.m, s.e}, kHeadsFirst),
        dq({s.b, s.h, s.m, s.d}, kColumnMajor),
        dk({s.b, s.h, s.n, s.d}, kInterleaved),
        dv({s.b, s.h, s.n, s.e}, kHeadsFirst), lse({s.b, s.h, s.m}, {1, 0, 2}),
        rowDot({s.b, s.h, s.m}, {0, 2, 1}) {
    std::mt19937 gen(seed);
    std::uniform_real_distribution<double> dist(-2.0, 2.0);
    for (Tensor<T> *t : {&q, &k, &v, &dO})
      for (T &x : t->data)
        fromDouble(&x, dist(gen));
  }
  sluice_stream_problem problem() const {
    sluice_stream_problem p = {};
    p.batch_rank = 2;
    p.batch[0] = s.b, p.batch[1] = s.h;
    p.m = s.m, p.n = s.n, p.d = s.d, p.e = s.e;
    p.scale = s.scale;
    p.causal = s.causal;
    p.dropout_p = s.dropout;
    p.seed = 0x1234567890abcdefULL;
    p.stream = 3;
    // The interpreter's order, by name: the mask [b, h, i, j] row-major
    // with the dims sorted as (b, h, i, j)... here deliberately another
    // order, (h, i, b, j), so the kernel cannot assume one.
    p.counter_row = s.b * s.n;
    p.counter_col = 1;
    p.counter_batch[0] = s.n;
    p.counter_batch[1] = s.m * s.b * s.n;
    return p;
  }
  sluice_stream_fwd_args forwardArgs() {
    sluice_stream_fwd_args a = {problem(),   q.operand(), k.operand(),
                                v.operand(), o.operand(), lse.operand()};
    return a;
  }
  /// The backward reading D (computeRowDots first), or O with `fromO`
  /// (the kernels compute D; what the fusion pass's kernels do).
  sluice_stream_bwd_args backwardArgs(bool fromO = false) {
    sluice_stream_bwd_args a = {problem(),        q.operand(),  k.operand(),
                                v.operand(),      dO.operand(), lse.operand(),
                                rowDot.operand(), dq.operand(), dk.operand(),
                                dv.operand()};
    if (fromO)
      a.o = o.operand();
    return a;
  }
  /// D = rowsum(dO * O) from the O the forward wrote (what the ordinary
  /// kernel before the backward computes).
  void computeRowDots() {
    for (int64_t b = 0; b < s.b; ++b)
      for (int64_t h = 0; h < s.h; ++h)
        for (int64_t i = 0; i < s.m; ++i) {
          A sum = 0;
          for (int64_t x = 0; x < s.e; ++x)
            sum +=
                (A)toDouble(dO.at(b, h, i, x)) * (A)toDouble(o.at(b, h, i, x));
          rowDot.at(b, h, i) = sum;
        }
  }
};

/// The reference results of one slice, in double, from the stored inputs.
struct Reference {
  std::vector<double> o, lse, dq, dk, dv; // dense [rows, cols]
};

template <typename T>
Reference reference(Problem<T> &pr, int64_t b, int64_t h) {
  const Shape &s = pr.s;
  sluice_stream_problem p = pr.problem();
  const int64_t base = b * p.counter_batch[0] + h * p.counter_batch[1];
  std::vector<double> prob(s.m * s.n, 0), drop(s.m * s.n, 1);
  Reference r;
  r.lse.assign(s.m, INFINITY);
  for (int64_t i = 0; i < s.m; ++i) {
    std::vector<double> scores(s.n);
    double max = -INFINITY;
    for (int64_t j = 0; j < s.n; ++j) {
      double dot = 0;
      for (int64_t c = 0; c < s.d; ++c)
        dot += toDouble(pr.q.at(b, h, i, c)) * toDouble(pr.k.at(b, h, j, c));
      scores[j] = (s.causal && j > i) ? -INFINITY : (double)p.scale * dot;
      max = std::max(max, scores[j]);
    }
    double sum = 0;
    for (int64_t j = 0; j < s.n; ++j)
      sum += std::exp(scores[j] - max);
    for (int64_t j = 0; j < s.n; ++j) {
      prob[i * s.n + j] = std::exp(scores[j] - max) / sum;
      uint64_t counter = base + i * p.counter_row + j * p.counter_col;
      if (s.dropout > 0)
        drop[i * s.n + j] =
            sluice_dropout_keep(p.seed, p.stream, counter, s.dropout)
                ? 1.0 / (1.0 - s.dropout)
                : 0.0;
    }
    if (s.n > 0)
      r.lse[i] = max + std::log(sum);
  }
  r.o.assign(s.m * s.e, 0);
  r.dv.assign(s.n * s.e, 0);
  r.dq.assign(s.m * s.d, 0);
  r.dk.assign(s.n * s.d, 0);
  for (int64_t i = 0; i < s.m; ++i) {
    std::vector<double> dp(s.n);
    double rowDot = 0;
    for (int64_t j = 0; j < s.n; ++j) {
      double pd = prob[i * s.n + j] * drop[i * s.n + j], dpd = 0;
      for (int64_t x = 0; x < s.e; ++x) {
        r.o[i * s.e + x] += pd * toDouble(pr.v.at(b, h, j, x));
        r.dv[j * s.e + x] += pd * toDouble(pr.dO.at(b, h, i, x));
        dpd += toDouble(pr.dO.at(b, h, i, x)) * toDouble(pr.v.at(b, h, j, x));
      }
      dp[j] = dpd * drop[i * s.n + j];
      rowDot += prob[i * s.n + j] * dp[j];
    }
    for (int64_t j = 0; j < s.n; ++j) {
      double ds = prob[i * s.n + j] * (dp[j] - rowDot) * p.scale;
      for (int64_t c = 0; c < s.d; ++c) {
        r.dq[i * s.d + c] += ds * toDouble(pr.k.at(b, h, j, c));
        r.dk[j * s.d + c] += ds * toDouble(pr.q.at(b, h, i, c));
      }
    }
  }
  return r;
}

/// Largest |got - want| over the slice, relative to max(1, max |want|).
template <typename T>
double relError(Tensor<T> &got, int64_t b, int64_t h,
                const std::vector<double> &want, int64_t rows, int64_t cols) {
  double err = 0, scale = 1;
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) {
      double w = want[r * cols + c], g = toDouble(got.at(b, h, r, c));
      if (std::isnan(g))
        return INFINITY;
      err = std::max(err, std::fabs(g - w));
      scale = std::max(scale, std::fabs(w));
    }
  return err / scale;
}

/// The kernels under test: the forward and the backward of one element
/// type (a tile choice, a backward strategy, or a natively compiled copy).
template <typename T>
struct Kernels {
  void (*forward)(const sluice_stream_fwd_args &);
  void (*backward)(const sluice_stream_bwd_args &);
  std::string name;
};

/// Runs `kernels` and checks every output of every slice against the
/// reference within `tolerance`.
template <typename T>
void check(const Kernels<T> &kernels, const Shape &s, double tolerance,
           unsigned seed = 1) {
  SCOPED_TRACE("m=" + std::to_string(s.m) + " n=" + std::to_string(s.n) +
               " causal=" + std::to_string(s.causal) +
               " dropout=" + std::to_string(s.dropout) + " " + kernels.name);
  Problem<T> pr(s, seed);
  // The backward computes D = rowsum(dO * O) from the O the forward wrote
  // (checkGrouped gives it D instead); the reference computes the softmax
  // backward from P and dP.
  kernels.forward(pr.forwardArgs());
  kernels.backward(pr.backwardArgs(/*fromO=*/true));
  for (int64_t b = 0; b < s.b; ++b)
    for (int64_t h = 0; h < s.h; ++h) {
      Reference r = reference(pr, b, h);
      EXPECT_LE(relError(pr.o, b, h, r.o, s.m, s.e), tolerance) << "O";
      for (int64_t i = 0; i < s.m; ++i) {
        double got = toDouble(pr.lse.at(b, h, i));
        if (std::isinf(r.lse[i]))
          EXPECT_EQ(got, r.lse[i]) << "LSE row " << i;
        else
          EXPECT_NEAR(got, r.lse[i], tolerance * (1 + std::fabs(r.lse[i])))
              << "LSE row " << i;
      }
      EXPECT_LE(relError(pr.dq, b, h, r.dq, s.m, s.d), tolerance) << "dQ";
      EXPECT_LE(relError(pr.dk, b, h, r.dk, s.n, s.d), tolerance) << "dK";
      EXPECT_LE(relError(pr.dv, b, h, r.dv, s.n, s.e), tolerance) << "dV";
    }
}

/// Every size, masking and dropout combination for one element type.
template <typename T>
void checkAll(const Kernels<T> &kernels, double tolerance) {
  const int64_t square[] = {1, 7, 77, 128, 130};
  const int64_t pairs[][2] = {{7, 130}, {130, 7}, {77, 1}, {1, 77}};
  for (bool causal : {false, true})
    for (double dropout : {0.0, 0.3}) {
      Shape s;
      s.causal = causal;
      s.dropout = dropout;
      for (int64_t size : square) {
        s.m = s.n = size;
        check(kernels, s, tolerance);
      }
      for (const auto &pair : pairs) {
        s.m = pair[0], s.n = pair[1];
        check(kernels, s, tolerance);
      }
    }
}

/// Grouped-query attention: the h query heads of each b share one K and V
/// (batch stride 0 along h, group_rank = 1, h the last batch dim). O, LSE
/// and dQ are per slice as before; dK and dV are the sums over the group of
/// the slices' reference gradients.
template <typename T>
void checkGrouped(const Kernels<T> &kernels, const Shape &s, double tolerance) {
  SCOPED_TRACE(kernels.name);
  Problem<T> pr(s, 5);
  for (Tensor<T> *shared : {&pr.k, &pr.v, &pr.dk, &pr.dv})
    shared->strides[1] = 0;
  sluice_stream_fwd_args forward = pr.forwardArgs();
  forward.p.group_rank = 1;
  kernels.forward(forward);
  pr.computeRowDots();
  sluice_stream_bwd_args backward = pr.backwardArgs();
  backward.p.group_rank = 1;
  kernels.backward(backward);
  for (int64_t b = 0; b < s.b; ++b) {
    Reference sum = reference(pr, b, 0);
    for (int64_t h = 0; h < s.h; ++h) {
      Reference r = reference(pr, b, h);
      EXPECT_LE(relError(pr.o, b, h, r.o, s.m, s.e), tolerance) << "O";
      EXPECT_LE(relError(pr.dq, b, h, r.dq, s.m, s.d), tolerance) << "dQ";
      for (size_t x = 0; h > 0 && x < sum.dk.size(); ++x)
        sum.dk[x] += r.dk[x];
      for (size_t x = 0; h > 0 && x < sum.dv.size(); ++x)
        sum.dv[x] += r.dv[x];
    }
    EXPECT_LE(relError(pr.dk, b, 0, sum.dk, s.n, s.d), tolerance) << "dK";
    EXPECT_LE(relError(pr.dv, b, 0, sum.dv, s.n, s.e), tolerance) << "dV";
  }
}

} // namespace sluice_stream_check

#endif // SLUICE_TEST_STREAMKERNELCHECK_H
