/*===- sluice_host.h - checks and timing inside emitted entry points ------===*
 *
 * The macros the host code of every emitted module expands: status checks
 * (CUDA) and the optional per-kernel timing (-DSLUICE_PROFILE). Each one
 * expands inside an emitted function where `ctx` (the module's context),
 * `phase` (the entry point's name, for messages) and, on CUDA, `stream` are
 * in scope, and where the module's `sluice_fail(ctx, status, format, ...)`
 * is declared; a failed check returns its status from that function.
 * docs/Codegen.md ("Emitted code") describes the ABI.
 *
 *===----------------------------------------------------------------------===*/

#ifndef SLUICE_HOST_H
#define SLUICE_HOST_H

#include "sluice_runtime.h"

#include <stdint.h>

#if defined(SLUICE_RUNTIME_CUDA)
#include <stdlib.h>

/* A CUDA runtime call that must return cudaSuccess. */
#define SLUICE_CHECK_CUDA(call, what)                                          \
  do {                                                                         \
    cudaError_t e_ = (call);                                                   \
    if (e_ != cudaSuccess)                                                     \
      return sluice_fail(ctx, SLUICE_ERROR_CUDA, "%s: %s: %s", phase, what,    \
                         cudaGetErrorString(e_));                              \
  } while (0)
/* Right after a kernel launch: the launch itself succeeded. */
#define SLUICE_CHECK_LAUNCH(what)                                              \
  do {                                                                         \
    cudaError_t e_ = cudaGetLastError();                                       \
    if (e_ != cudaSuccess)                                                     \
      return sluice_fail(ctx, SLUICE_ERROR_CUDA, "%s: launch of %s: %s",       \
                         phase, what, cudaGetErrorString(e_));                 \
  } while (0)
/* Before launching a kernel with vector accesses: true if the pointer is
 * 16-byte aligned. The launch takes the kernel's Aligned = true variant
 * (one 4-, 8- or 16-byte access per vector group, no test per thread) when
 * every pointer is, the element-access variant otherwise. */
static inline int sluice_aligned16(const void *p) {
  return ((uintptr_t)p & 15u) == 0;
}
/* True when the environment variable `name` is set to something other than
 * "" or "0". Create reads SLUICE_LT_NO_EPILOGUE with it: set, every GEMM
 * with a library epilogue takes its fallback (docs/GPU.md). */
static inline int sluice_env_flag(const char *name) {
  const char *value = getenv(name);
  return value && value[0] && !(value[0] == '0' && !value[1]);
}
/* A cuBLAS / cuBLASLt call that must return CUBLAS_STATUS_SUCCESS. */
#define SLUICE_CHECK_CUBLAS(call, what)                                        \
  do {                                                                         \
    cublasStatus_t s_ = (call);                                                \
    if (s_ != CUBLAS_STATUS_SUCCESS)                                           \
      return sluice_fail(ctx, SLUICE_ERROR_CUBLAS, "%s: %s: %s", phase, what,  \
                         cublasGetStatusString(s_));                           \
  } while (0)
/* A cuBLASLt call with a library epilogue that has a fallback: its status
 * goes to `status`; CUBLAS_STATUS_NOT_SUPPORTED is left for the caller (it
 * runs the fallback), any other failure fails as SLUICE_CHECK_CUBLAS. */
#define SLUICE_CHECK_CUBLAS_OR_UNSUPPORTED(status, call, what)                 \
  do {                                                                         \
    status = (call);                                                           \
    if (status != CUBLAS_STATUS_SUCCESS &&                                     \
        status != CUBLAS_STATUS_NOT_SUPPORTED)                                 \
      return sluice_fail(ctx, SLUICE_ERROR_CUBLAS, "%s: %s: %s", phase, what,  \
                         cublasGetStatusString(status));                       \
  } while (0)
#endif

/* Per-kernel timing: only in a module compiled with -DSLUICE_PROFILE (no
 * cost otherwise: the macros vanish and sluice_profile is not exported).
 * Slot k of phase p: CUDA records events 2k and 2k + 1 of ctx->events[p]
 * on the stream; the CPU stores the steady-clock time in
 * ctx->profile_ms[p][k]. */
#ifndef SLUICE_PROFILE
#define SLUICE_PROFILE_BEGIN(p, k) (void)0
#define SLUICE_PROFILE_END(p, k) (void)0
#elif defined(SLUICE_RUNTIME_CUDA)
#define SLUICE_PROFILE_BEGIN(p, k)                                             \
  SLUICE_CHECK_CUDA(cudaEventRecord(ctx->events[p][2 * (k)], stream),          \
                    "profiling event")
#define SLUICE_PROFILE_END(p, k)                                               \
  SLUICE_CHECK_CUDA(cudaEventRecord(ctx->events[p][2 * (k) + 1], stream),      \
                    "profiling event")
#else
#include <chrono>
#include <time.h>
/* With -DSLUICE_PROFILE_CPU_TIME the CPU kernels are timed in the
 * process's CPU time (benchmarks/module_timer --clock cpu): on a shared
 * machine a one-thread run then measures the kernel, not the other
 * processes. */
static inline double sluice_now_ms() {
#ifdef SLUICE_PROFILE_CPU_TIME
  struct timespec t;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return t.tv_sec * 1e3 + t.tv_nsec * 1e-6;
#else
  return std::chrono::duration<double, std::milli>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
#endif
}
#define SLUICE_PROFILE_BEGIN(p, k) const double sluice_start_##k = sluice_now_ms()
#define SLUICE_PROFILE_END(p, k)                                               \
  ctx->profile_ms[p][k] = sluice_now_ms() - sluice_start_##k
#endif

#endif /* SLUICE_HOST_H */
