// Every CUDA streaming attention kernel the emitter can pick for one
// architecture (ARCH = 80, 90, ..., the compute capability nvcc compiles
// for): the forward and the backward for f16, bf16 (sm_80 and newer) and
// f32 at each padded head dim, with the tiles of
// sluice_stream_cuda_tiles_for. test/Runtime/stream-cuda-*.test compile it
// with ptxas -v and check that no kernel spills; the static_asserts check
// that every kernel's dynamic shared memory fits one block.
//
// With -DUNLIKE_ARCH=<another compute capability> only the kernels whose
// tiles differ from that architecture's are compiled (the static_asserts
// still check every kernel's): a sibling architecture's check that the
// other one's test already makes for the same kernels stays out of
// `make test` (stream-cuda-ptxas-sm86.test; the whole set for sm_86 is
// stream-cuda-ptxas-sm86-all.test, REQUIRES: slow).
#include "sluice_stream_cuda.cuh"

#ifndef ARCH
#error "compile with -DARCH=<compute capability, e.g. 80>"
#endif

// The most dynamic shared memory a block can opt into, transcribed here
// from the NVIDIA CUDA C++ Programming Guide ("Compute Capabilities", Table
// 31 "Memory Information per Compute Capability", row "Maximum amount of
// shared memory per thread block"; KB = 1024 bytes) rather than taken from
// sluice_stream.h, so that the header's table is checked against it: every
// kernel's tiles must fit, else its launch fails.
#if ARCH == 75
#define SLUICE_SMEM_LIMIT (64 * 1024)
#elif ARCH == 80 || ARCH == 87
#define SLUICE_SMEM_LIMIT (163 * 1024)
#elif ARCH == 86 || ARCH == 89 || ARCH == 120 || ARCH == 121
#define SLUICE_SMEM_LIMIT (99 * 1024)
#elif ARCH == 90 || ARCH == 100 || ARCH == 103 || ARCH == 110
#define SLUICE_SMEM_LIMIT (227 * 1024)
#else
#error "no per-block shared-memory limit known for this ARCH"
#endif
static_assert(sluice_cuda_block_smem_limit(ARCH) == SLUICE_SMEM_LIMIT,
              "sluice_stream.h's shared-memory limit differs from the guide's");

#define SLUICE_TILES(T, HD) sluice_stream_cuda_tiles_for(ARCH, sizeof(T), HD)

// Whether the kernels of (T, HD) are compiled: always, or with UNLIKE_ARCH
// only where ARCH's tiles differ from UNLIKE_ARCH's.
template <typename T, int HD>
constexpr bool compiled() {
#ifdef UNLIKE_ARCH
  constexpr sluice_stream_cuda_tiles mine = SLUICE_TILES(T, HD);
  constexpr sluice_stream_cuda_tiles other =
      sluice_stream_cuda_tiles_for(UNLIKE_ARCH, sizeof(T), HD);
  return mine.warps != other.warps || mine.key_tile != other.key_tile ||
         mine.query_tile != other.query_tile || mine.head_dim != other.head_dim;
#else
  return true;
#endif
}

// The forward and the backward launchers of (T, HD) with ARCH's tiles, and
// so their kernels (forward, dQ, dK/dV), are instantiated by an explicit
// instantiation of Kernels<T, HD>; for a (T, HD) not compiled() it is empty.
template <typename T, int HD, bool = compiled<T, HD>()>
struct Kernels {};
template <typename T, int HD>
struct Kernels<T, HD, true> {
  static constexpr sluice_stream_cuda_tiles tiles = SLUICE_TILES(T, HD);
  static constexpr auto forward =
      &sluice_stream_attention_fwd_cuda<T, tiles.warps, tiles.key_tile,
                                        tiles.head_dim>;
  static constexpr auto backward =
      &sluice_stream_attention_bwd_cuda<T, tiles.warps, tiles.key_tile,
                                        tiles.query_tile, tiles.head_dim>;
};

#define SLUICE_INSTANTIATE(T, HD)                                              \
  template struct Kernels<T, HD>;                                              \
  static_assert(                                                               \
      sluice_stream_cuda::forwardSmem<T, SLUICE_TILES(T, HD).warps,            \
                                      SLUICE_TILES(T, HD).key_tile,            \
                                      SLUICE_TILES(T, HD).head_dim>() <=       \
          SLUICE_SMEM_LIMIT,                                                   \
      "forward tiles exceed the shared memory of a block");                    \
  static_assert(                                                               \
      sluice_stream_cuda::gradQuerySmem<T, SLUICE_TILES(T, HD).warps,          \
                                        SLUICE_TILES(T, HD).key_tile,          \
                                        SLUICE_TILES(T, HD).head_dim>() <=     \
          SLUICE_SMEM_LIMIT,                                                   \
      "dQ tiles exceed the shared memory of a block");                         \
  static_assert(                                                               \
      sluice_stream_cuda::gradKeySmem<T, SLUICE_TILES(T, HD).warps,            \
                                      SLUICE_TILES(T, HD).query_tile,          \
                                      SLUICE_TILES(T, HD).head_dim>() <=       \
          SLUICE_SMEM_LIMIT,                                                   \
      "dK/dV tiles exceed the shared memory of a block");

#define SLUICE_INSTANTIATE_TYPE(T)                                             \
  SLUICE_INSTANTIATE(T, 32)                                                    \
  SLUICE_INSTANTIATE(T, 64)                                                    \
  SLUICE_INSTANTIATE(T, 128)

// f16/bf16 run on tensor cores through mma.sync.m16n8k16 (sm_80 and
// newer); sluice_stream_cuda_tiles_for picks nothing for them before.
#if ARCH >= 80
SLUICE_INSTANTIATE_TYPE(sluice_f16)
SLUICE_INSTANTIATE_TYPE(sluice_bf16)
#else
static_assert(SLUICE_TILES(sluice_f16, 32).warps == 0,
              "no f16/bf16 tiles before sm_80");
#endif
SLUICE_INSTANTIATE_TYPE(float)
