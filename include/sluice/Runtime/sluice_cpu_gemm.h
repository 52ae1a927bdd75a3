//===- sluice_cpu_gemm.h - strided-batched GEMM for the C++ backend -*- C++
//-*-===//
//
// The CPU counterpart of cublasGemmStridedBatchedEx, with the same
// column-major parameters (GemmMapping): C = alpha * op(A) op(B) + beta * C
// (beta 0 or 1), per batch.
// The library is chosen when the module is compiled (the toolchain probes
// for them, docs/Codegen.md "CPU backend"): f32 GEMMs use oneDNN's
// dnnl_sgemm with SLUICE_HAVE_DNNL (measured about twice OpenBLAS's rate on
// the BERT shapes), else cblas_sgemm with SLUICE_HAVE_CBLAS (OpenBLAS),
// else a loop nest accumulating in f32. f16/bf16 operands go through f32
// scratch and prefer OpenBLAS, whose summation order matches the reference
// interpreter's on the test sizes (oneDNN's moves f16 roundings of an
// analytically zero gradient past the f16 tests' tolerance). With oneDNN
// the batches of a batched GEMM (attention) run in parallel, one OpenMP
// thread each (oneDNN's own threading inside a single big GEMM).
//
//===----------------------------------------------------------------------===//

#ifndef SLUICE_CPU_GEMM_H
#define SLUICE_CPU_GEMM_H

#include "sluice_kernels.h"

#include <stdint.h>
#include <stdlib.h>

#include <type_traits>

#if defined(SLUICE_HAVE_DNNL)
#include <oneapi/dnnl/dnnl.h>
#endif
#if defined(SLUICE_HAVE_CBLAS)
#include <cblas.h>
#endif

/// Copies `count` elements at `p` into f32 (a no-op cost for f32 aside from
/// the copy; only used on the CBLAS path).
template <typename T>
static inline void sluice_cpu_widen(float *out, const T *p, int64_t count) {
  for (int64_t e = 0; e < count; ++e)
    out[e] = sluice_to_f32(p[e]);
}

/// The portable loop nest: one column-major GEMM, accumulating in f32.
template <typename TA, typename TB, typename TC>
static void
sluice_cpu_gemm_loops(bool transA, bool transB, int64_t m, int64_t n, int64_t k,
                      float alpha, const TA *pa, int64_t lda, const TB *pb,
                      int64_t ldb, TC *pc, int64_t ldc, float beta) {
  for (int64_t j = 0; j < n; ++j)
    for (int64_t i = 0; i < m; ++i) {
      float sum = 0.0f;
      for (int64_t p = 0; p < k; ++p) {
        float va = sluice_to_f32(transA ? pa[p + i * lda] : pa[i + p * lda]);
        float vb = sluice_to_f32(transB ? pb[j + p * ldb] : pb[p + j * ldb]);
        sum += va * vb;
      }
      float acc = beta != 0.0f ? beta * sluice_to_f32(pc[i + j * ldc]) : 0.0f;
      sluice_store(&pc[i + j * ldc], alpha * sum + acc);
    }
}

#if defined(SLUICE_HAVE_DNNL) || defined(SLUICE_HAVE_CBLAS)
/// One f32 column-major GEMM through the library: oneDNN when there and
/// `preferDnnl`, else OpenBLAS.
static inline void sluice_cpu_sgemm(bool transA, bool transB, int64_t m,
                                    int64_t n, int64_t k, float alpha,
                                    const float *a, int64_t lda, const float *b,
                                    int64_t ldb, float *c, int64_t ldc,
                                    float beta, bool preferDnnl) {
#if defined(SLUICE_HAVE_DNNL)
#if defined(SLUICE_HAVE_CBLAS)
  if (preferDnnl)
#endif
  {
    // oneDNN is row-major: column-major C = op(A) op(B) is row-major
    // C^T = op(B)^T op(A)^T, the same bytes.
    if (dnnl_sgemm(transB ? 'T' : 'N', transA ? 'T' : 'N', n, m, k, alpha, b,
                   ldb, a, lda, beta, c, ldc) != dnnl_success)
      // Not expected for the valid sizes the emitter passes; stay correct.
      sluice_cpu_gemm_loops(transA, transB, m, n, k, alpha, a, lda, b, ldb, c,
                            ldc, beta);
    return;
  }
#endif
#if defined(SLUICE_HAVE_CBLAS)
  (void)preferDnnl;
  cblas_sgemm(CblasColMajor, transA ? CblasTrans : CblasNoTrans,
              transB ? CblasTrans : CblasNoTrans, (int)m, (int)n, (int)k, alpha,
              a, (int)lda, b, (int)ldb, beta, c, (int)ldc);
#endif
}
#endif

/// Returns 0, or SLUICE_ERROR_ALLOC when scratch cannot be allocated.
template <typename TA, typename TB, typename TC>
static int sluice_cpu_gemm(bool transA, bool transB, int64_t m, int64_t n,
                           int64_t k, float alpha, const TA *a, int64_t lda,
                           int64_t strideA, const TB *b, int64_t ldb,
                           int64_t strideB, TC *c, int64_t ldc, int64_t strideC,
                           int64_t batchCount, float beta = 0.0f) {
#if defined(SLUICE_HAVE_DNNL) || defined(SLUICE_HAVE_CBLAS)
  if constexpr (std::is_same<TA, float>::value &&
                std::is_same<TB, float>::value &&
                std::is_same<TC, float>::value) {
    // All f32: straight into the library, no scratch. A single GEMM is
    // called outside any parallel region: inside one (even an inactive
    // `if (false)` region) oneDNN's threads form a nested team, and libgomp
    // then runs a third thread next to the two of the top-level pool, which
    // cost BERT-base's GEMMs their second core (docs/Codegen.md, "GEMM
    // library").
    if (batchCount == 1) {
      sluice_cpu_sgemm(transA, transB, m, n, k, alpha, a, lda, b, ldb, c, ldc,
                       beta, /*preferDnnl=*/true);
      return 0;
    }
#if defined(SLUICE_HAVE_DNNL) && defined(_OPENMP)
#pragma omp parallel for
#endif
    for (int64_t batch = 0; batch < batchCount; ++batch)
      sluice_cpu_sgemm(transA, transB, m, n, k, alpha, a + batch * strideA, lda,
                       b + batch * strideB, ldb, c + batch * strideC, ldc, beta,
                       /*preferDnnl=*/true);
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
    TC *out = c + batch * strideC;
    if (beta != 0.0f)
      sluice_cpu_widen(fc, out, extentC);
    sluice_cpu_sgemm(transA, transB, m, n, k, alpha, fa, lda, fb, ldb, fc, ldc,
                     beta, /*preferDnnl=*/false);
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
    for (int64_t j = 0; j < n; ++j)
      sluice_cpu_gemm_loops(transA, transB, m, 1, k, alpha, a + batch * strideA,
                            lda, b + batch * strideB + (transB ? j : j * ldb),
                            ldb, c + batch * strideC + j * ldc, ldc, beta);
#endif
  return 0;
}

#endif // SLUICE_CPU_GEMM_H
