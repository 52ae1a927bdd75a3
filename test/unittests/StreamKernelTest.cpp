//===- StreamKernelTest.cpp - the portable streaming attention kernels ----===//
//
// sluice_stream_cpu.h against the naive reference of StreamKernelCheck.h:
// f64 and f32, f16/bf16 with their rounding; causal or not, dropout on or
// off, many sizes (not multiples of the tiles), several tile sizes, both
// backward strategies (one pass per key/value slice; a dQ pass and a dK/dV
// pass). Their dropout words are Philox.h's sluice_dropout_words
// (PhiloxWordsTest).
//
//===----------------------------------------------------------------------===//

#include "StreamKernelCheck.h"

#include <cmath>
#if defined(__x86_64__)
#include <xmmintrin.h>
#endif

namespace {

using namespace sluice_stream_check;

/// The kernels with tiles BM x BN; the backward as the entry point picks
/// it, or forced to one pass or two.
enum class Passes { Auto, One, Two };
template <typename T, int BM, int BN>
void twoPassBackward(const sluice_stream_bwd_args &a) {
  sluice_stream_detail::backward<T, BM, BN>(a, /*onePass=*/false);
}
template <typename T, int BM, int BN>
void onePassBackward(const sluice_stream_bwd_args &a) {
  sluice_stream_detail::backward<T, BM, BN>(a, /*onePass=*/true);
}
template <typename T, int BM, int BN>
Kernels<T> tiles(Passes passes = Passes::Auto) {
  Kernels<T> k;
  k.forward = &sluice_stream_attention_fwd_cpu<T, BM, BN>;
  k.backward = passes == Passes::Two ? &twoPassBackward<T, BM, BN>
               : passes == Passes::One
                   ? &onePassBackward<T, BM, BN>
                   : &sluice_stream_attention_bwd_cpu<T, BM, BN>;
  k.name = "tiles " + std::to_string(BM) + "x" + std::to_string(BN) +
           (passes == Passes::Two   ? " two passes"
            : passes == Passes::One ? " one pass"
                                    : "");
  return k;
}

TEST(StreamKernel, F64Tiles16x16) { checkAll(tiles<double, 16, 16>(), 1e-12); }
TEST(StreamKernel, F64Tiles64x32) { checkAll(tiles<double, 64, 32>(), 1e-12); }
TEST(StreamKernel, F64Tiles1x128) { checkAll(tiles<double, 1, 128>(), 1e-12); }
TEST(StreamKernel, F32Tiles32x64) { checkAll(tiles<float, 32, 64>(), 2e-5); }
TEST(StreamKernel, F32Tiles128x16) { checkAll(tiles<float, 128, 16>(), 2e-5); }

/// The backward's other strategy (the dQ pass, then the dK/dV pass over
/// ranges of key tiles), which the entry point takes when there are fewer
/// than two key/value slices per thread.
TEST(StreamKernel, F64TwoPasses) {
  checkAll(tiles<double, 16, 16>(Passes::Two), 1e-12);
  checkAll(tiles<double, 64, 32>(Passes::Two), 1e-12);
}
TEST(StreamKernel, F32TwoPasses) {
  checkAll(tiles<float, 64, 64>(Passes::Two), 2e-5);
}

/// f16/bf16 inputs and outputs, f32 accumulation: within the output
/// rounding (the reference reads the same rounded inputs).
TEST(StreamKernel, HalfTypes) {
  for (bool causal : {false, true})
    for (double dropout : {0.0, 0.2}) {
      Shape s;
      s.m = 77, s.n = 130, s.causal = causal, s.dropout = dropout;
      check(tiles<sluice_f16, 64, 64>(), s, 4e-3);
      check(tiles<sluice_bf16, 64, 64>(), s, 2e-2);
      check(tiles<sluice_f16, 64, 64>(Passes::Two), s, 4e-3);
    }
}

/// Head dims that are not powers of two, and no batch dims' worth of
/// slices beyond one.
TEST(StreamKernel, OddHeadDims) {
  Shape s;
  s.b = 1, s.h = 1, s.m = 33, s.n = 45, s.d = 5, s.e = 3;
  s.scale = 1 / std::sqrt(5.0);
  for (bool causal : {false, true}) {
    s.causal = causal;
    check(tiles<double, 16, 8>(), s, 1e-12);
    check(tiles<float, 16, 8>(), s, 2e-5);
    check(tiles<float, 16, 8>(Passes::Two), s, 2e-5);
  }
}

/// Dropout matters: the same inputs with dropout off give another O, and
/// another seed gives other masks (so the draws are really used).
TEST(StreamKernel, DropoutChangesOutput) {
  Shape s;
  s.m = s.n = 40, s.dropout = 0.5;
  Problem<double> with(s, 2), without(s, 2), otherSeed(s, 2);
  sluice_stream_attention_fwd_cpu<double, 16, 16>(with.forwardArgs());
  sluice_stream_fwd_args a = without.forwardArgs();
  a.p.dropout_p = 0;
  sluice_stream_attention_fwd_cpu<double, 16, 16>(a);
  a = otherSeed.forwardArgs();
  a.p.seed += 1;
  sluice_stream_attention_fwd_cpu<double, 16, 16>(a);
  Reference r = reference(with, 1, 2);
  EXPECT_GT(relError(without.o, 1, 2, r.o, s.m, s.e), 1e-2);
  EXPECT_GT(relError(otherSeed.o, 1, 2, r.o, s.m, s.e), 1e-2);
  EXPECT_LE(relError(with.o, 1, 2, r.o, s.m, s.e), 1e-12);
}

TEST(StreamKernel, GroupedQuery) {
  for (bool causal : {false, true})
    for (double dropout : {0.0, 0.3}) {
      Shape s;
      s.m = s.n = 77, s.causal = causal, s.dropout = dropout;
      SCOPED_TRACE(std::string(causal ? "causal" : "") +
                   (dropout > 0 ? " dropout" : ""));
      checkGrouped(tiles<double, 16, 32>(), s, 1e-12);
      checkGrouped(tiles<float, 64, 64>(), s, 2e-5);
      checkGrouped(tiles<double, 16, 32>(Passes::Two), s, 1e-12);
    }
}

/// Inference: no LSE operand (NULL), the same O.
TEST(StreamKernel, InferenceWithoutLse) {
  Shape s;
  s.m = 20, s.n = 30, s.causal = true;
  Problem<double> pr(s, 4);
  sluice_stream_fwd_args a = pr.forwardArgs();
  a.lse.data = nullptr;
  for (double &x : pr.lse.data)
    x = 42;
  sluice_stream_attention_fwd_cpu<double, 8, 8>(a);
  Reference r = reference(pr, 1, 0);
  EXPECT_LE(relError(pr.o, 1, 0, r.o, s.m, s.e), 1e-12);
  for (double x : pr.lse.data)
    EXPECT_EQ(x, 42);
}

/// No keys: every row is fully masked. O and every gradient are 0, LSE is
/// +inf, nothing is NaN.
TEST(StreamKernel, NoKeys) {
  Shape s;
  s.m = 9, s.n = 0;
  Problem<float> pr(s, 3);
  for (float &x : pr.o.data)
    x = NAN;
  for (float &x : pr.dq.data)
    x = NAN;
  sluice_stream_attention_fwd_cpu<float, 4, 4>(pr.forwardArgs());
  pr.computeRowDots();
  sluice_stream_attention_bwd_cpu<float, 4, 4>(pr.backwardArgs());
  for (float x : pr.dq.data) // NaN before: every dQ element was written
    EXPECT_EQ(x, 0.0f);
  for (float &x : pr.dq.data)
    x = NAN;
  twoPassBackward<float, 4, 4>(pr.backwardArgs());
  for (float x : pr.o.data)
    EXPECT_EQ(x, 0.0f);
  for (float x : pr.lse.data)
    EXPECT_EQ(x, INFINITY);
  for (float x : pr.dq.data)
    EXPECT_EQ(x, 0.0f);
}

/// The backward computing D = rowsum(dO * O) itself from O gives what it
/// gives when D is computed before and passed (the two forms the fusion
/// pass emits: with and without the row term inside the kernel); D is NaN
/// when O is given, so it is not read then.
template <typename T>
void checkRowDotFromOutput(const Shape &s, bool onePass, double tolerance) {
  SCOPED_TRACE("m=" + std::to_string(s.m) + " n=" + std::to_string(s.n) +
               " causal=" + std::to_string(s.causal) + " dropout=" +
               std::to_string(s.dropout) + (onePass ? " one pass" : ""));
  Problem<T> given(s, 6);
  sluice_stream_attention_fwd_cpu<T, 16, 16>(given.forwardArgs());
  Problem<T> fromO = given;
  given.computeRowDots();
  for (auto &x : fromO.rowDot.data)
    x = NAN;
  sluice_stream_detail::backward<T, 16, 16>(given.backwardArgs(), onePass);
  sluice_stream_detail::backward<T, 16, 16>(fromO.backwardArgs(true), onePass);
  for (auto [got, want] :
       {std::pair(&fromO.dq, &given.dq), std::pair(&fromO.dk, &given.dk),
        std::pair(&fromO.dv, &given.dv)})
    for (size_t x = 0; x < want->data.size(); ++x)
      ASSERT_NEAR(toDouble(got->data[x]), toDouble(want->data[x]),
                  tolerance * (1 + std::fabs(toDouble(want->data[x]))))
          << "element " << x;
}

TEST(StreamKernel, RowDotFromOutput) {
  for (bool causal : {false, true})
    for (double dropout : {0.0, 0.3})
      for (bool onePass : {false, true}) {
        Shape s;
        s.m = 77, s.n = 130, s.causal = causal, s.dropout = dropout;
        checkRowDotFromOutput<double>(s, onePass, 1e-13);
        checkRowDotFromOutput<float>(s, onePass, 1e-5);
      }
}

/// Softmax probabilities below 2^-126 are zero inside the kernels (FTZ and
/// DAZ while they run: subnormal arithmetic is microcoded on Intel cores),
/// and the caller's floating-point mode is restored after. Scores 0 and
/// -100 give probabilities 1 and e^-100 (3.7e-44, subnormal in f32); with V
/// = (0, 1e30) IEEE arithmetic would give O = 3.7e-14, the kernels 0 -- the
/// documented bound: a flushed probability moves O by at most 2^-126 max|V|.
TEST(StreamKernel, SubnormalProbabilitiesAreFlushed) {
  Shape s;
  s.b = 1, s.h = 1, s.m = 1, s.n = 2, s.d = 1, s.e = 1, s.scale = 1;
  Problem<float> pr(s, 7);
  pr.q.data[0] = 1.0f;
  pr.k.data[0] = 0.0f, pr.k.data[pr.k.strides[2]] = -100.0f;
  pr.v.data[0] = 0.0f, pr.v.data[pr.v.strides[2]] = 1e30f;
#if defined(__x86_64__)
  const unsigned mode = _mm_getcsr();
#endif
  sluice_stream_attention_fwd_cpu<float, 4, 4>(pr.forwardArgs());
  EXPECT_EQ(pr.o.data[0], 0.0f);
  pr.computeRowDots();
  sluice_stream_attention_bwd_cpu<float, 4, 4>(pr.backwardArgs());
  for (const Tensor<float> *t : {&pr.dq, &pr.dk, &pr.dv})
    for (float x : t->data)
      EXPECT_NE(std::fpclassify(x), FP_SUBNORMAL);
#if defined(__x86_64__)
  EXPECT_EQ(_mm_getcsr(), mode);
  // Subnormals still work out here: 2^-126 / 2 is not flushed.
  volatile float tiny = 0x1p-126f;
  EXPECT_EQ(tiny / 2, 0x1p-127f);
#endif
}

} // namespace
