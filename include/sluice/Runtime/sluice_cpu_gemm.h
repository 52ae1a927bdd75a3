//===- sluice_cpu_gemm.h - strided-batched GEMM for the C++ backend -*- C++
//-*-===//
//
// The CPU counterpart of cublasGemmStridedBatchedEx, with the same
// column-major parameters (GemmMapping): C = alpha * op(A) op(B), per batch.
// With SLUICE_HAVE_CBLAS (link a CBLAS such as OpenBLAS) each batch is one
// cblas_sgemm, f16/bf16 operands going through f32 scratch; otherwise a loop
// nest accumulating in f32.
//
//===----------------------------------------------------------------------===//

#ifndef SLUICE_CPU_GEMM_H
#define SLUICE_CPU_GEMM_H

#include "sluice_kernels.h"

#include <stdint.h>
#include <stdlib.h>

#include <type_traits>

#ifdef SLUICE_HAVE_CBLAS
#include <cblas.h>
#endif

/// Copies `count` elements at `p` into f32 (a no-op cost for f32 aside from
/// the copy; only used on the CBLAS path).
template <typename T>
static inline void sluice_cpu_widen(float *out, const T *p, int64_t count) {
  for (int64_t e = 0; e < count; ++e)
    out[e] = sluice_to_f32(p[e]);
}

/// Returns 0, or SLUICE_ERROR_ALLOC when scratch cannot be allocated.
template <typename TA, typename TB, typename TC>
static int sluice_cpu_gemm(bool transA, bool transB, int64_t m, int64_t n,
                           int64_t k, float alpha, const TA *a, int64_t lda,
                           int64_t strideA, const TB *b, int64_t ldb,
                           int64_t strideB, TC *c, int64_t ldc, int64_t strideC,
                           int64_t batchCount) {
#ifdef SLUICE_HAVE_CBLAS
  if constexpr (std::is_same<TA, float>::value &&
                std::is_same<TB, float>::value &&
                std::is_same<TC, float>::value) {
    // All f32: straight into the BLAS, no scratch.
    for (int64_t batch = 0; batch < batchCount; ++batch)
      cblas_sgemm(CblasColMajor, transA ? CblasTrans : CblasNoTrans,
                  transB ? CblasTrans : CblasNoTrans, (int)m, (int)n, (int)k,
                  alpha, a + batch * strideA, (int)lda, b + batch * strideB,
                  (int)ldb, 0.0f, c + batch * strideC, (int)ldc);
    return 0;
  }
  // The elements one batch of each operand spans: (columns - 1) * ld + rows
  // (not columns * ld, which would read past the last batch when ld is
  // larger than the rows).
  int64_t extentA = ((transA ? m : k) - 1) * lda + (transA ? k : m);
  int64_t extentB = ((transB ? k : n) - 1) * ldb + (transB ? n : k);
  int64_t extentC = (n - 1) * ldc + m;
  float *scratch =
      (float *)malloc(sizeof(float) * (size_t)(extentA + extentB + extentC));
  if (!scratch)
    return 3; // SLUICE_ERROR_ALLOC
  for (int64_t batch = 0; batch < batchCount; ++batch) {
    float *fa = scratch, *fb = scratch + extentA, *fc = fb + extentB;
    sluice_cpu_widen(fa, a + batch * strideA, extentA);
    sluice_cpu_widen(fb, b + batch * strideB, extentB);
    cblas_sgemm(CblasColMajor, transA ? CblasTrans : CblasNoTrans,
                transB ? CblasTrans : CblasNoTrans, (int)m, (int)n, (int)k,
                alpha, fa, (int)lda, fb, (int)ldb, 0.0f, fc, (int)ldc);
    TC *out = c + batch * strideC;
    for (int64_t j = 0; j < n; ++j)
      for (int64_t i = 0; i < m; ++i)
        sluice_store(&out[i + j * ldc], fc[i + j * ldc]);
  }
  free(scratch);
#else
#ifdef _OPENMP
#pragma omp parallel for collapse(2)
#endif
  for (int64_t batch = 0; batch < batchCount; ++batch)
    for (int64_t j = 0; j < n; ++j) {
      const TA *pa = a + batch * strideA;
      const TB *pb = b + batch * strideB;
      TC *pc = c + batch * strideC;
      for (int64_t i = 0; i < m; ++i) {
        float sum = 0.0f;
        for (int64_t p = 0; p < k; ++p) {
          float va = sluice_to_f32(transA ? pa[p + i * lda] : pa[i + p * lda]);
          float vb = sluice_to_f32(transB ? pb[j + p * ldb] : pb[p + j * ldb]);
          sum += va * vb;
        }
        sluice_store(&pc[i + j * ldc], alpha * sum);
      }
    }
#endif
  return 0;
}

#endif // SLUICE_CPU_GEMM_H
