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

#ifndef SLUICE_HD
#if defined(__CUDACC__)
#define SLUICE_HD __host__ __device__
#else
#define SLUICE_HD
#endif
#endif

#if defined(__CUDACC__)
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

/// Sets bit e when `x` is non-zero. Threads share words, so the bit is
/// or-ed in atomically; the words were cleared before the kernel.
static inline SLUICE_HD void sluice_store_bit(uint32_t *words, int64_t e,
                                              float x) {
  if (x == 0.0f)
    return;
#if defined(__CUDA_ARCH__)
  atomicOr(&words[e >> 5], 1u << (e & 31));
#else
  __atomic_fetch_or(&words[e >> 5], 1u << (e & 31), __ATOMIC_RELAXED);
#endif
}

//===----------------------------------------------------------------------===//
// V contiguous elements at once (16 bytes when V * sizeof(T) == 16)
//===----------------------------------------------------------------------===//

/// Loads p[0..V) widened to f32; one 16-byte load on the device when the
/// group is 16 bytes and `p` is 16-byte aligned, element loads otherwise.
template <int V, typename T>
static inline SLUICE_HD void sluice_load_vec(float (&out)[V], const T *p) {
#if defined(__CUDA_ARCH__)
  if (sizeof(T) * V == 16 && (reinterpret_cast<uintptr_t>(p) & 15) == 0) {
    uint4 raw = *reinterpret_cast<const uint4 *>(p);
    const T *elements = reinterpret_cast<const T *>(&raw);
#pragma unroll
    for (int v = 0; v < V; ++v)
      out[v] = sluice_to_f32(elements[v]);
    return;
  }
#endif
  for (int v = 0; v < V; ++v)
    out[v] = sluice_to_f32(p[v]);
}

/// Stores in[0..V) narrowed to T at p[0..V).
template <int V, typename T>
static inline SLUICE_HD void sluice_store_vec(T *p, const float (&in)[V]) {
#if defined(__CUDA_ARCH__)
  if (sizeof(T) * V == 16 && (reinterpret_cast<uintptr_t>(p) & 15) == 0) {
    uint4 raw;
    T *elements = reinterpret_cast<T *>(&raw);
#pragma unroll
    for (int v = 0; v < V; ++v)
      sluice_store(&elements[v], in[v]);
    *reinterpret_cast<uint4 *>(p) = raw;
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
