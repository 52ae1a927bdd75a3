//===- StreamTilesTest.cpp - the CUDA streaming kernels' tiles per arch ---===//
//
// sluice_stream_cuda_tiles_for (sluice_stream.h) against the per-block
// shared-memory limits of sluice_cuda_block_smem_limit: every compute
// capability with a known limit gets tiles whose three kernels (forward, dQ,
// dK/dV) fit a block, for f16/bf16 (2-byte) and f32 elements and every head
// dim up to the maximum; sm_80 and sm_90 keep the tiles their ptxas checks
// (test/Runtime/stream-cuda-ptxas-sm{80,90}.test) were measured with.
//
//===----------------------------------------------------------------------===//

#include "sluice/Runtime/sluice_stream.h"

#include <gtest/gtest.h>

namespace {

/// Every compute capability of the programming guide's table (7.5, 8.0,
/// 8.6, 8.7, 8.9, 9.0, 10.0, 10.3, 11.0, 12.0, 12.1).
constexpr int kKnownArchs[] = {75, 80, 86, 87, 89, 90, 100, 103, 110, 120, 121};

TEST(StreamTiles, GuideLimitsInBytes) {
  // The limits the issue quotes, as cudaDevAttrMaxSharedMemoryPerBlockOptin
  // reports them (KB = 1024 bytes).
  EXPECT_EQ(sluice_cuda_block_smem_limit(80), 166912);
  EXPECT_EQ(sluice_cuda_block_smem_limit(86), 101376);
  EXPECT_EQ(sluice_cuda_block_smem_limit(89), 101376);
  EXPECT_EQ(sluice_cuda_block_smem_limit(90), 232448);
  EXPECT_EQ(sluice_cuda_block_smem_limit(100), 232448);
  EXPECT_EQ(sluice_cuda_block_smem_limit(120), 101376);
  EXPECT_EQ(sluice_cuda_block_smem_limit(70), 0);
  EXPECT_EQ(sluice_cuda_block_smem_limit(88), 0);
}

TEST(StreamTiles, EveryKernelFitsABlock) {
  for (int arch : kKnownArchs) {
    const int limit = sluice_cuda_block_smem_limit(arch);
    ASSERT_GT(limit, 0) << "sm_" << arch;
    for (int bytes : {2, 4})
      for (int64_t headDim = 1; headDim <= SLUICE_STREAM_MAX_HEAD_DIM;
           ++headDim) {
        SCOPED_TRACE("sm_" + std::to_string(arch) + ", " +
                     std::to_string(bytes) + "-byte elements, head dim " +
                     std::to_string(headDim));
        sluice_stream_cuda_tiles t =
            sluice_stream_cuda_tiles_for(arch, bytes, headDim);
        if (bytes == 2 && arch < 80) {
          EXPECT_EQ(t.warps, 0); // no mma.sync.m16n8k16 before sm_80
          continue;
        }
        ASSERT_GT(t.warps, 0);
        EXPECT_GE(t.head_dim, headDim);
        EXPECT_EQ(t.head_dim % 16, 0);
        EXPECT_EQ(t.key_tile % 16, 0);
        EXPECT_EQ(t.query_tile % 16, 0);
        EXPECT_GE(t.key_tile, 16);
        EXPECT_GE(t.query_tile, 16);
        EXPECT_LE(sluice_stream_cuda_forward_smem(bytes, t.warps, t.key_tile,
                                                  t.head_dim),
                  limit);
        EXPECT_LE(sluice_stream_cuda_grad_query_smem(bytes, t.warps, t.key_tile,
                                                     t.head_dim),
                  limit);
        EXPECT_LE(sluice_stream_cuda_grad_key_smem(bytes, t.warps, t.query_tile,
                                                   t.head_dim),
                  limit);
      }
  }
}

/// The tiles sm_80 and sm_90 had before the choice looked at the limit
/// (their ptxas register counts in docs/Codegen.md were measured with
/// these): f16/bf16 4 warps on sm_80 and 8 on sm_90, 64 keys, 32 query rows
/// (16 at head dim 128); f32 4 warps, 32 keys, 16 query rows.
TEST(StreamTiles, Sm80AndSm90Unchanged) {
  for (int arch : {80, 90})
    for (int64_t headDim : {32, 64, 128}) {
      sluice_stream_cuda_tiles half =
          sluice_stream_cuda_tiles_for(arch, 2, headDim);
      EXPECT_EQ(half.warps, arch == 90 ? 8 : 4);
      EXPECT_EQ(half.key_tile, 64);
      EXPECT_EQ(half.query_tile, headDim <= 64 ? 32 : 16);
      EXPECT_EQ(half.head_dim, headDim);
      sluice_stream_cuda_tiles single =
          sluice_stream_cuda_tiles_for(arch, 4, headDim);
      EXPECT_EQ(single.warps, 4);
      EXPECT_EQ(single.key_tile, 32);
      EXPECT_EQ(single.query_tile, 16);
      EXPECT_EQ(single.head_dim, headDim);
    }
}

/// Where the f32 head-dim-128 tiles of sm_80 do not fit (the dQ kernel's
/// 114,944 bytes against 99 KB), the key tile halves; the warps stay.
TEST(StreamTiles, SmallerBlocksShrinkTheKeyTileFirst) {
  for (int arch : {86, 89, 120}) {
    ASSERT_GT(sluice_stream_cuda_grad_query_smem(4, 4, 32, 128),
              sluice_cuda_block_smem_limit(arch));
    sluice_stream_cuda_tiles t = sluice_stream_cuda_tiles_for(arch, 4, 128);
    EXPECT_EQ(t.warps, 4);
    EXPECT_EQ(t.key_tile, 16);
    EXPECT_EQ(t.query_tile, 16);
    // f16 keeps sm_80's 4 warps: the 8-warp tiles are for 227 KB blocks.
    EXPECT_EQ(sluice_stream_cuda_tiles_for(arch, 2, 128).warps, 4);
  }
}

TEST(StreamTiles, NoChoice) {
  EXPECT_EQ(sluice_stream_cuda_tiles_for(80, 2, 129).warps, 0);
  EXPECT_EQ(sluice_stream_cuda_tiles_for(70, 4, 64).warps, 0); // not known
  EXPECT_EQ(sluice_stream_cuda_tiles_for(88, 2, 64).warps, 0); // not known
  EXPECT_EQ(sluice_stream_cuda_tiles_for(75, 2, 64).warps, 0); // no mma
}

} // namespace
