//===- sluice_kernels.h - helpers the emitted kernels call -------*- C++
//-*-===//
//
// Included by every emitted module, CUDA (.cu) and portable C++ (_cpu.cpp):
// storage types and f32 conversions for f16/bf16, the scalar functions a map
// body may need that C lacks (IEEE maximum/minimum, rsqrt), the
// NaN-propagating max of reductions, 16-byte vector loads and stores, and
// the CUDA-only warp and block reductions. Math shared by both backends is
// __host__ __device__ so that both compute the same thing.
//
//===----------------------------------------------------------------------===//

#ifndef SLUICE_KERNELS_H
#define SLUICE_KERNELS_H

#include <math.h>
#include <stdint.h>
#include <string.h>
#if !defined(__CUDACC__) && defined(_OPENMP)
#include <omp.h> // column reductions split their columns by thread
#endif

#ifndef SLUICE_HD
#if defined(__CUDACC__)
#define SLUICE_HD __host__ __device__
#else
#define SLUICE_HD
#endif
#endif

#if defined(__CUDACC__)
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
typedef __half sluice_f16;
typedef __nv_bfloat16 sluice_bf16;
static __host__ __device__ __forceinline__ float sluice_to_f32(sluice_f16 x) {
  return __half2float(x);
}
static __host__ __device__ __forceinline__ float sluice_to_f32(sluice_bf16 x) {
  return __bfloat162float(x);
}
static __host__ __device__ __forceinline__ void sluice_store(sluice_f16 *p,
                                                             float x) {
  *p = __float2half_rn(x);
}
static __host__ __device__ __forceinline__ void sluice_store(sluice_bf16 *p,
                                                             float x) {
  *p = __float2bfloat16_rn(x);
}
#else
// Host storage types: the bits, converted with round-to-nearest-even (the
// rounding of the interpreter and of the CUDA intrinsics).
struct sluice_f16 {
  uint16_t bits;
};
struct sluice_bf16 {
  uint16_t bits;
};
static inline float sluice_bits_to_f32(uint32_t bits) {
  float f;
  memcpy(&f, &bits, 4);
  return f;
}
static inline uint32_t sluice_f32_to_bits(float f) {
  uint32_t bits;
  memcpy(&bits, &f, 4);
  return bits;
}
static inline float sluice_to_f32(sluice_f16 x) {
  uint32_t sign = (uint32_t)(x.bits & 0x8000u) << 16;
  uint32_t exponent = (x.bits >> 10) & 0x1fu, mantissa = x.bits & 0x3ffu;
  if (exponent == 0) { // zero or subnormal: mantissa * 2^-24, exact
    float magnitude = (float)mantissa * (1.0f / 16777216.0f);
    return sign ? -magnitude : magnitude;
  }
  if (exponent == 31)
    return sluice_bits_to_f32(sign | 0x7f800000u | (mantissa << 13));
  return sluice_bits_to_f32(sign | ((exponent + 112u) << 23) |
                            (mantissa << 13));
}
static inline float sluice_to_f32(sluice_bf16 x) {
  return sluice_bits_to_f32((uint32_t)x.bits << 16);
}
static inline void sluice_store(sluice_f16 *p, float f) {
  uint32_t x = sluice_f32_to_bits(f);
  uint32_t sign = (x >> 16) & 0x8000u, magnitude = x & 0x7fffffffu;
  uint32_t half;
  if (magnitude > 0x7f800000u)
    half = 0x7e00u; // NaN
  else if (magnitude >= 0x477ff000u)
    half = 0x7c00u;                 // rounds to infinity (>= 65520)
  else if (magnitude < 0x38800000u) // below 2^-14: a subnormal half
    half = (uint32_t)nearbyintf(sluice_bits_to_f32(magnitude) * 16777216.0f);
  else {
    half = ((magnitude >> 23) - 112u) << 10 | ((magnitude >> 13) & 0x3ffu);
    uint32_t rest = magnitude & 0x1fffu;
    if (rest > 0x1000u || (rest == 0x1000u && (half & 1u)))
      ++half; // a carry into the exponent is still correct
  }
  p->bits = (uint16_t)(sign | half);
}
static inline void sluice_store(sluice_bf16 *p, float f) {
  uint32_t x = sluice_f32_to_bits(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) {
    p->bits = (uint16_t)((x >> 16) | 0x40u); // quiet NaN
    return;
  }
  x += 0x7fffu + ((x >> 16) & 1u);
  p->bits = (uint16_t)(x >> 16);
}
#endif

//===----------------------------------------------------------------------===//
// CPU vector math: SLEEF through the GNU vector-function ABI
//===----------------------------------------------------------------------===//

// With -DSLUICE_HAVE_SLEEF (the toolchain links -lsleefgnuabi, Debian's
// libsleef-dev), the float functions map bodies call are declared SIMD
// functions: in the `#pragma omp simd` loops of the CPU kernels GCC calls
// SLEEF's vector versions (_ZGVbN4v_expf for SSE, _ZGVdN8v_ for AVX2,
// _ZGVeN16v_ for AVX-512, whichever -march allows), whose maximum error is
// 1.0 ulp (SLEEF's u10 functions); scalar code still calls libm.
// test/unittests/CpuVectorMathTest.cpp measures the error against double
// precision. docs/Codegen.md, "CPU backend".
#if !defined(__CUDACC__) && defined(SLUICE_HAVE_SLEEF) && defined(__x86_64__)
#ifdef __cplusplus
extern "C" {
#endif
float expf(float) __attribute__((simd("notinbranch")));
float erff(float) __attribute__((simd("notinbranch")));
float tanhf(float) __attribute__((simd("notinbranch")));
float logf(float) __attribute__((simd("notinbranch")));
#ifdef __cplusplus
}
#endif
#endif


//===----------------------------------------------------------------------===//
// CPU exp and erf written for the vectorizer
//===----------------------------------------------------------------------===//

// The CPU kernels' f32 `math.exp`, `math.erf` and `math.tanh` (MapBody.cpp
// prints them for the C++ target; CUDA keeps expf/erff/tanhf). Straight-line code with
// selects instead of branches, so inside a `#pragma omp simd` loop GCC
// inlines and vectorizes them at any -march (SSE2 included: no fma, no
// rint, no call), where SLEEF's erff is an out-of-line call of ~1.4 ns per
// element on AVX-512. Maximum error against double precision, measured by
// test/unittests/CpuVectorMathTest.cpp on dense samples (native and
// portable builds): exp 1.01 ulp, erf 1.18 ulp, tanh 1.33 ulp. Special
// values as libm:
// exp(+-inf) = inf/0, overflow above 88.7228 to inf, results below
// 2^-149 / 2 to 0 (subnormals in between), NaN in NaN out; erf(+-inf) = +-1,
// erf(+-0) = +-0, tanh(+-inf) = +-1, tanh(+-0) = +-0.
#if !defined(__CUDACC__)
/// The reduction both exp paths share: x = n ln 2 + r (|r| <= ln 2 / 2,
/// two-step Cody-Waite) and Cephes' degree-6 polynomial for exp(r). Returns
/// exp(r) and sets `biased` to the bits of n + 1.5 * 2^23, whose low bits
/// hold n (|n| < 2^22): no float-to-int conversion, so a NaN x (NaN result)
/// converts nothing out of range.
static inline float sluice_exp_reduced(float x, uint32_t &biased) {
  // Adding 1.5 * 2^23 rounds x / ln 2 to an integer.
  float shifted = x * 0x1.715476p+0f + 0x1.8p23f;
  biased = sluice_f32_to_bits(shifted);
  float n = shifted - 0x1.8p23f;
  float r = x - n * 0x1.63p-1f; // exact: 0x1.63p-1 has 9 bits
  r = r - n * -2.12194440e-4f;
  float z = r * r;
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  return p * z + r + 1.0f;
}

/// 2^n for n in [-126, 127] (a normal number).
static inline float sluice_exp2i(int32_t n) {
  return sluice_bits_to_f32((uint32_t)(n + 127) << 23);
}

/// n from sluice_exp_reduced's `biased`.
static inline int32_t sluice_exp_whole(uint32_t biased) {
  return (int32_t)(biased - 0x4b400000u);
}

/// exp(x) for x in [-87, 88] or NaN, where 2^n is a normal number: one
/// scaling, no clamps (the callers' arguments are in range by
/// construction: erf's in [-20, 0], tanh's in [0, 40]).
static inline float sluice_expf_normal(float x) {
  uint32_t biased;
  float p = sluice_exp_reduced(x, biased);
  return p * sluice_exp2i(sluice_exp_whole(biased));
}

/// exp(x): clamped to [-104, 89] (beyond them the result is 0 or inf
/// anyway), then two exact power-of-two scalings, so subnormal results
/// round once. A NaN x stays NaN through the clamps and the polynomial.
static inline float sluice_expf(float x) {
  float xc = x < -104.0f ? -104.0f : x;
  xc = xc > 89.0f ? 89.0f : xc;
  uint32_t biased;
  float p = sluice_exp_reduced(xc, biased);
  // 2^n = 2^h * 2^(n - h), h = floor(n / 2): both factors normal.
  int32_t whole = sluice_exp_whole(biased);
  int32_t half = whole >> 1;
  return p * sluice_exp2i(half) * sluice_exp2i(whole - half);
}

/// erf(x): an odd polynomial below |x| = 0.927734375, else
/// 1 - exp(polynomial in |x|) with x's sign (N. Juffa's minimax
/// coefficients); both sides computed and one selected.
static inline float sluice_erff(float a) {
  float t = fabsf(a), s = a * a;
  float r = -1.72853470e-5f * t + 3.83197126e-4f;
  float u = -3.88396438e-3f * t + 2.42546219e-2f;
  r = r * s + u;
  r = r * t + -1.06777877e-1f;
  r = r * t + -6.34846687e-1f;
  r = r * t + -1.28717512e-1f;
  r = r * t + -t;
  // Below -20, exp(r) < 2^-25 and 1 - exp(r) rounds to 1 anyway: the clamp
  // changes no result and keeps exp's result out of the subnormal range
  // (|x| near 10), whose arithmetic is microcoded on some CPUs (Zen 3:
  // gelu over inputs of standard deviation 10 took 3.1 instead of 1.9 ns
  // per element). r is then in [-20, 0] (never NaN for a finite or
  // infinite x; a NaN x takes the small side), so exp needs no range
  // handling.
  r = r < -20.0f ? -20.0f : r;
  float large = copysignf(1.0f - sluice_expf_normal(r), a);
  float q = -5.96761703e-4f;
  q = q * s + 4.99119423e-3f;
  q = q * s + -2.67681349e-2f;
  q = q * s + 1.12819925e-1f;
  q = q * s + -3.76125336e-1f;
  q = q * s + 1.28379166e-1f;
  float small = q * a + a;
  return t > 0.927734375f ? large : small;
}

/// tanh(x): 1 - 2 / (exp(2|x|) + 1) with x's sign from |x| = 0.625 up,
/// below it x + x^3 P(x^2) (P of degree 4 fitted to tanh's relative error,
/// 0.15 ulp in exact arithmetic); tanh(+-0) = +-0.
static inline float sluice_tanhf(float x) {
  float t = fabsf(x);
  // From |x| = 20 on, 2 / (exp(2|x|) + 1) < 2^-25 and the result rounds to
  // +-1 either way: exp(40) keeps exp out of its overflow path, which is
  // microcoded on some CPUs (Zen 3: tanh over inputs of standard deviation
  // 100 took 2.4 instead of 1.45 ns per element). NaN stays NaN. The
  // argument is in [0, 40] or NaN, so exp needs no range handling.
  float e = sluice_expf_normal(t > 20.0f ? 40.0f : t + t);
  float large = copysignf(1.0f - 2.0f / (e + 1.0f), x);
  float s = x * x;
  float p = -0x1.75e1a8p-8f;
  p = p * s + 0x1.522692p-6f;
  p = p * s + -0x1.b83c58p-5f;
  p = p * s + 0x1.110726p-3f;
  p = p * s + -0x1.555532p-2f;
  float small = x + x * s * p;
  small = x == 0.0f ? x : small;
  return t < 0.625f ? small : large;
}
#endif

static inline SLUICE_HD float sluice_to_f32(float x) { return x; }
static inline SLUICE_HD void sluice_store(float *p, float x) { *p = x; }

/// `x` rounded to f16 / bf16 and back: an intermediate tensor of that type
/// holds exactly what the interpreter stores, even when it stays in
/// registers.
static inline SLUICE_HD float sluice_round_f16(float x) {
  sluice_f16 h;
  sluice_store(&h, x);
  return sluice_to_f32(h);
}
static inline SLUICE_HD float sluice_round_bf16(float x) {
  sluice_bf16 h;
  sluice_store(&h, x);
  return sluice_to_f32(h);
}

//===----------------------------------------------------------------------===//
// Scalar functions of map bodies (the interpreter's semantics)
//===----------------------------------------------------------------------===//

/// arith.maximumf / minimumf: NaN propagates, +0 > -0.
template <typename T>
static inline SLUICE_HD T sluice_extremum(T a, T b, bool maximum) {
  if (a != a || b != b)
    return NAN;
  if (a == b)
    return (signbit(a) != 0) == maximum ? b : a;
  return (a > b) == maximum ? a : b;
}
static inline SLUICE_HD float sluice_maximumf(float a, float b) {
  return sluice_extremum(a, b, true);
}
static inline SLUICE_HD float sluice_minimumf(float a, float b) {
  return sluice_extremum(a, b, false);
}
static inline SLUICE_HD double sluice_maximum(double a, double b) {
  return sluice_extremum(a, b, true);
}
static inline SLUICE_HD double sluice_minimum(double a, double b) {
  return sluice_extremum(a, b, false);
}
/// a / b for a division marked fastmath<arcp>: a times the correctly
/// rounded reciprocal of b (two roundings, within 2^-23 relative of the
/// exact quotient where IEEE division is within 2^-24; both targets round
/// the same way). On the device this avoids div.rn's FCHK test and slow
/// path per element, and a loop-invariant divisor's reciprocal is hoisted.
static inline SLUICE_HD float sluice_mul_rcp(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fmul_rn(a, __frcp_rn(b));
#else
  return a * (1.0f / b);
#endif
}
static inline SLUICE_HD double sluice_mul_rcp(double a, double b) {
  return a * (1.0 / b);
}
static inline SLUICE_HD float sluice_rsqrtf(float x) { return 1.0f / sqrtf(x); }
static inline SLUICE_HD double sluice_rsqrt(double x) { return 1.0 / sqrt(x); }

/// The combine of `reduce max`: a NaN anywhere wins (as in the
/// interpreter), otherwise the larger.
static inline SLUICE_HD float sluice_max_combine(float acc, float x) {
  if (acc != acc)
    return acc;
  return (x != x || x > acc) ? x : acc;
}
static inline SLUICE_HD float sluice_sum_combine(float acc, float x) {
  return acc + x;
}

//===----------------------------------------------------------------------===//
// Bit-packed masks: element e is bit e % 32 of 32-bit word e / 32
//===----------------------------------------------------------------------===//

static inline SLUICE_HD float sluice_load_bit(const uint32_t *words,
                                              int64_t e) {
  return (words[e >> 5] >> (e & 31)) & 1u ? 1.0f : 0.0f;
}

/// Sets bit e when `x` is non-zero. Threads share words, so the bits are
/// or-ed in atomically; the words were cleared before the kernel. On the
/// GPU the lanes of a warp that store into one word first combine their bits
/// (a warp-aggregated atomic: the active lanes partitioned by word, their
/// bits or-reduced, one atomicOr per word instead of one per set bit), so a
/// warp storing 32 consecutive elements issues one atomic, as a
/// `__ballot_sync` would, without assuming which lanes are active or which
/// elements they hold.
static inline SLUICE_HD void sluice_store_bit(uint32_t *words, int64_t e,
                                              float x) {
#if defined(__CUDA_ARCH__)
  namespace cg = cooperative_groups;
  cg::coalesced_group sameWord = cg::labeled_partition(
      cg::coalesced_threads(), (unsigned long long)(e >> 5));
  uint32_t bits = cg::reduce(sameWord, x != 0.0f ? 1u << (e & 31) : 0u,
                             cg::bit_or<uint32_t>());
  if (sameWord.thread_rank() == 0 && bits != 0)
    atomicOr(&words[e >> 5], bits);
#else
  if (x != 0.0f)
    __atomic_fetch_or(&words[e >> 5], 1u << (e & 31), __ATOMIC_RELAXED);
#endif
}

#if !defined(__CUDACC__)
/// Host: the bits of `count` consecutive elements from `e`, staged one
/// float per element (`x`, non-zero = set), stored as whole words. `e` and
/// `count` are multiples of 32 (the emitter checks: a vector group that
/// starts a word and fills whole words), so no other group writes these
/// words and plain stores replace sluice_store_bit's atomic per set bit
/// (BERT-base's activation-dropout mask kernel under --mask-policy=bitpack:
/// 7.1 ms with the atomics; docs/Codegen.md, "Bit-packed masks").
static inline void sluice_store_bits(uint32_t *words, int64_t e, const float *x,
                                     int count) {
  for (int w = 0; w < count / 32; ++w) {
    uint32_t word = 0;
    for (int k = 0; k < 32; ++k)
      word |= (x[32 * w + k] != 0.0f ? 1u : 0u) << k;
    words[(e >> 5) + w] = word;
  }
}
#endif

//===----------------------------------------------------------------------===//
// V contiguous elements at once
//===----------------------------------------------------------------------===//

#if defined(__CUDA_ARCH__)
/// The raw bits of one element of T holding f32 `x` (rounded to nearest
/// even), in the low bits of a word, and back.
static __device__ __forceinline__ uint32_t sluice_bits_of(float x, float *) {
  return __float_as_uint(x);
}
static __device__ __forceinline__ uint32_t sluice_bits_of(float x,
                                                          sluice_f16 *) {
  return __half_as_ushort(__float2half_rn(x));
}
static __device__ __forceinline__ uint32_t sluice_bits_of(float x,
                                                          sluice_bf16 *) {
  return __bfloat16_as_ushort(__float2bfloat16_rn(x));
}
static __device__ __forceinline__ float sluice_from_bits(uint32_t b,
                                                         const float *) {
  return __uint_as_float(b);
}
static __device__ __forceinline__ float sluice_from_bits(uint32_t b,
                                                         const sluice_f16 *) {
  return __half2float(__ushort_as_half((unsigned short)b));
}
static __device__ __forceinline__ float sluice_from_bits(uint32_t b,
                                                         const sluice_bf16 *) {
  return __bfloat162float(__ushort_as_bfloat16((unsigned short)b));
}

/// One global access of W 32-bit words (W = 1, 2 or 4: 4, 8, 16 bytes).
template <int W>
static __device__ __forceinline__ void sluice_load_words(uint32_t (&w)[W],
                                                         const void *p) {
  if (W == 4) {
    uint4 r = *reinterpret_cast<const uint4 *>(p);
    w[0] = r.x, w[1 % W] = r.y, w[2 % W] = r.z, w[3 % W] = r.w;
  } else if (W == 2) {
    uint2 r = *reinterpret_cast<const uint2 *>(p);
    w[0] = r.x, w[1 % W] = r.y;
  } else {
    w[0] = *reinterpret_cast<const uint32_t *>(p);
  }
}
template <int W>
static __device__ __forceinline__ void sluice_store_words(void *p,
                                                          const uint32_t (&w)[W]) {
  // __stwb: a plain (write-back) store that stays one vector instruction
  // (a uint4 assignment is split into four 32-bit stores by nvcc 13).
  if (W == 4)
    __stwb(reinterpret_cast<uint4 *>(p),
           make_uint4(w[0], w[1 % W], w[2 % W], w[3 % W]));
  else if (W == 2)
    __stwb(reinterpret_cast<uint2 *>(p), make_uint2(w[0], w[1 % W]));
  else
    *reinterpret_cast<uint32_t *>(p) = w[0];
}
#endif

/// Loads p[0..V) widened to f32. With `Aligned` (CUDA: the launcher checked
/// that every pointer of the kernel is 16-byte aligned, so p, at a multiple
/// of V elements, is aligned to V * sizeof(T)) a group of 4, 8 or 16 bytes
/// is one global access (16-byte groups: 128-bit loads); otherwise, and on
/// the host, element loads. No alignment test runs per thread.
template <int V, bool Aligned = false, typename T>
static inline SLUICE_HD void sluice_load_vec(float (&out)[V], const T *p) {
#if defined(__CUDA_ARCH__)
  constexpr int bytes = (int)sizeof(T) * V;
  if (Aligned && (bytes == 4 || bytes == 8 || bytes == 16)) {
    constexpr int words = bytes / 4 > 0 ? bytes / 4 : 1;
    constexpr int perWord = 4 / (int)sizeof(T);
    uint32_t w[words];
    sluice_load_words<words>(w, p);
#pragma unroll
    for (int v = 0; v < V; ++v)
      out[v] = sluice_from_bits(
          perWord == 1 ? w[v] : (w[v / perWord] >> (16 * (v % perWord))) & 0xffffu,
          p);
    return;
  }
#endif
  for (int v = 0; v < V; ++v)
    out[v] = sluice_to_f32(p[v]);
}

/// Stores in[0..V) narrowed to T at p[0..V): the elements are packed into
/// 32-bit words in registers and written as one 4-, 8- or 16-byte access
/// when `Aligned` (CUDA), element by element otherwise.
template <int V, bool Aligned = false, typename T>
static inline SLUICE_HD void sluice_store_vec(T *p, const float (&in)[V]) {
#if defined(__CUDA_ARCH__)
  constexpr int bytes = (int)sizeof(T) * V;
  if (Aligned && (bytes == 4 || bytes == 8 || bytes == 16)) {
    constexpr int words = bytes / 4 > 0 ? bytes / 4 : 1;
    constexpr int perWord = 4 / (int)sizeof(T);
    uint32_t w[words];
#pragma unroll
    for (int i = 0; i < words; ++i)
      w[i] = 0;
#pragma unroll
    for (int v = 0; v < V; ++v)
      w[v / perWord] |= sluice_bits_of(in[v], p) << (16 * (v % perWord));
    sluice_store_words<words>(p, w);
    return;
  }
#endif
  for (int v = 0; v < V; ++v)
    sluice_store(&p[v], in[v]);
}

//===----------------------------------------------------------------------===//
// CUDA reductions: every thread of the block calls them and gets the total
//===----------------------------------------------------------------------===//

#if defined(__CUDACC__)
template <bool IsMax>
static __device__ __forceinline__ float sluice_combine(float a, float b) {
  return IsMax ? sluice_max_combine(a, b) : sluice_sum_combine(a, b);
}

/// Butterfly over the 32 lanes: every lane ends with the warp's total.
template <bool IsMax>
static __device__ __forceinline__ float sluice_warp_reduce(float v) {
#pragma unroll
  for (int offset = 16; offset > 0; offset /= 2)
    v = sluice_combine<IsMax>(v, __shfl_xor_sync(0xffffffffu, v, offset));
  return v;
}

/// Threads (a multiple of 32, at most 1024) combine through `scratch` (32
/// floats of shared memory); the first barrier lets a block reuse
/// `scratch` for its next reduction.
template <bool IsMax, int Threads>
static __device__ __forceinline__ float sluice_block_reduce(float v,
                                                            float *scratch) {
  v = sluice_warp_reduce<IsMax>(v);
  if (Threads <= 32)
    return v;
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  __syncthreads();
  if (lane == 0)
    scratch[warp] = v;
  __syncthreads();
  v = lane < Threads / 32 ? scratch[lane] : (IsMax ? -INFINITY : 0.0f);
  return sluice_warp_reduce<IsMax>(v);
}
#endif

#endif // SLUICE_KERNELS_H
