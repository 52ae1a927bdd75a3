/*===- sluice_runtime.h - the C ABI shared by every emitted module --------===*
 *
 * Status codes, the tensor descriptor of the generic entry points, and the
 * stream type. Plain C, no dependency: a runner that dlopens a module
 * includes this and the module's header, with no CUDA headers needed.
 * docs/Codegen.md ("Emitted code") describes the whole ABI.
 *
 *===----------------------------------------------------------------------===*/

#ifndef SLUICE_RUNTIME_H
#define SLUICE_RUNTIME_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The version of the C ABI below and of the modules' entry points
 * (sluice_abi_version). 2: the saved and scratch regions are separate, and
 * sluice_create_shared makes a context on a caller's scratch region. */
#define SLUICE_ABI_VERSION 2

/* What every entry point returns; sluice_*_last_error gives the text. */
enum {
  SLUICE_OK = 0,
  SLUICE_ERROR_CUDA = 1,
  SLUICE_ERROR_CUBLAS = 2,
  SLUICE_ERROR_ALLOC = 3,
  SLUICE_ERROR_ARGUMENT = 4,
  SLUICE_ERROR_UNSUPPORTED = 5
};

/* Element types of boundary tensors. */
enum { SLUICE_DTYPE_F32 = 0, SLUICE_DTYPE_F16 = 1, SLUICE_DTYPE_BF16 = 2 };

/* One boundary tensor of a phase: `dims` in layout order (row-major, the
 * last dimension fastest), the canonical boundary name. */
typedef struct {
  const char *name;
  int dtype;
  int rank;
  const int64_t *dims;
  int is_output;
} sluice_tensor_info;

/* A CUDA module's stream is a cudaStream_t (the same type, spelled without
 * the CUDA headers); a CPU module ignores its stream. */
#if defined(SLUICE_RUNTIME_CUDA)
typedef struct CUstream_st *sluice_stream_t;
#else
typedef void *sluice_stream_t;
#endif

#ifdef __cplusplus
}
#endif

#endif /* SLUICE_RUNTIME_H */
