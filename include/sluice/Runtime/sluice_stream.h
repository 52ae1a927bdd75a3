//===- sluice_stream.h - the problem of a streaming attention kernel -*- C++
//-*-===//
//
// Plain structs shared by the portable C++ (sluice_stream_cpu.h) and CUDA
// (sluice_stream_cuda.cuh) streaming kernels: the kernels the fusion pass's
// streaming rule makes of a contraction -> softmax -> contraction chain
// (docs/Fusion.md), FlashAttention-style. The emitted code fills one
// `sluice_stream_problem` plus one `sluice_stream_operand` per tensor and
// calls the kernel of its target. Per slice (one point of the batch dims):
//
//   S[i, j]  = scale * sum_c Q[i, c] * K[j, c]      i < m, j < n, c < d
//   masked   = causal && j > i    (sluice.causal_mask: key > query -> -inf)
//   LSE[i]   = log sum_j exp(S[i, j])   (natural log of the scaled, masked
//              scores; +inf for a row with every score masked or n == 0)
//   P[i, j]  = exp(S[i, j] - LSE[i])                (softmax over j)
//   Pd[i, j] = P[i, j] * keep(i, j) / (1 - p)       (dropout when p > 0)
//   O[i, x]  = sum_j Pd[i, j] * V[j, x]             x < e
//
// and the backward (FlashAttention-2) takes dO, LSE and either O (the kernels
// then compute D[i] = sum_x dO[i, x] O[i, x] from the dO and O rows they
// load) or D itself, and gives dQ, dK, dV. Query-only batch dims (grouped-query
// attention, group_rank): K and V are shared by the slices of a group, and
// dK, dV are the sums of the group's slices' gradients. A row
// with every score masked has O = 0 and LSE = +inf, so its P is 0 in the
// backward (no NaN).
//
// keep(i, j) is Philox.h's per-element dropout draw at counter
//   counter_offset(batch point) + i * counter_row + j * counter_col
// with every counter stride given by the caller (today the row-major index
// over the score tensor's dims sorted by name, as the interpreter draws; the
// kernels never assume an order).
//
// Strides are in elements and non-negative (a transposed or interleaved
// layout is just other strides). Only <stdint.h> and Philox.h.
//
//===----------------------------------------------------------------------===//

#ifndef SLUICE_STREAM_H
#define SLUICE_STREAM_H

#include "Philox.h" // the dropout draw; SLUICE_HD
#include <stdint.h>

/// At most this many batch dims (b, h, ...) index the independent slices.
#define SLUICE_STREAM_MAX_BATCH 4
/* The largest contracted (d) and value (e) dim the CUDA kernels hold in
   registers; the streaming rule fuses no longer heads. */
#define SLUICE_STREAM_MAX_HEAD_DIM 128

/// One tensor of the problem: its base pointer and element strides.
struct sluice_stream_operand {
  /// Base pointer (const for the inputs; the kernels cast).
  void *data;
  /// Stride of each batch dim, in the order of sluice_stream_problem::batch.
  int64_t batch_stride[SLUICE_STREAM_MAX_BATCH];
  /// Stride of the row dim: i for Q, O, dO, dQ, LSE, D; j for K, V, dK, dV.
  int64_t row_stride;
  /// Stride of the column dim: c for Q, K, dQ, dK; x for V, O, dO, dV.
  /// Unused for LSE and D.
  int64_t col_stride;
};

/// Sizes, scale, mask and dropout of one streaming attention.
struct sluice_stream_problem {
  /// Number of batch dims (0..SLUICE_STREAM_MAX_BATCH) and their sizes.
  int batch_rank;
  int64_t batch[SLUICE_STREAM_MAX_BATCH];
  /// The last `group_rank` batch dims are query-only (grouped- or
  /// multi-query attention: the query heads sharing one key/value head):
  /// K, V, dK and dV do not vary along them (batch stride 0), and the
  /// backward sums dK and dV over them. 0: every batch dim is shared.
  int group_rank;
  /// Query rows, key rows, QK^T's contracted extent, V's columns.
  int64_t m, n, d, e;
  /// Multiplies Q K^T before the mask and the softmax.
  float scale;
  /// Non-zero: scores with j > i are masked.
  int causal;
  /// Dropout of the softmax output: off when dropout_p == 0.
  double dropout_p;
  uint64_t seed, stream;
  /// Set by the CUDA entry functions (callers leave them), so that device
  /// code does no double arithmetic: dropout_p > 0, and 1 / (1 - dropout_p)
  /// in f32.
  int has_dropout;
  float keep_scale;
  /// sluice_dropout_threshold(dropout_p), set by the entry functions of
  /// both targets (callers leave it).
  uint32_t dropout_threshold;
  /// Counter strides of the dropout draw (see the file comment).
  int64_t counter_batch[SLUICE_STREAM_MAX_BATCH];
  int64_t counter_row, counter_col;
};

/// Forward: reads q, k, v; writes o and, unless lse.data is NULL
/// (inference), lse (float, or double when the elements are double).
struct sluice_stream_fwd_args {
  struct sluice_stream_problem p;
  struct sluice_stream_operand q, k, v, o, lse;
};

/// Backward: reads q, k, v, d_o, lse (the forward's) and the row term
/// D[i] = sum_x dO[i, x] O[i, x]: from o (the forward's output, elements
/// and dims like d_o's) when o.data is not NULL, the kernels computing D
/// per query row from the dO and O rows they load (the fusion pass's
/// default); else from d (float, or double; computed before by an ordinary
/// kernel). Writes dq, dk, dv. `o` is last so that initializers listing the
/// fields in order up to dv leave it NULL.
struct sluice_stream_bwd_args {
  struct sluice_stream_problem p;
  struct sluice_stream_operand q, k, v, d_o, lse, d, dq, dk, dv, o;
};

/// Number of slices (the product of the batch sizes; 1 without batch dims).
static inline SLUICE_HD int64_t
sluice_stream_slices(const struct sluice_stream_problem &p) {
  int64_t slices = 1;
  for (int b = 0; b < p.batch_rank; ++b)
    slices *= p.batch[b];
  return slices;
}

/// Number of query slices sharing one key/value slice (the product of the
/// last group_rank batch sizes; 1 without query-only dims). Slices
/// [s * group, (s + 1) * group) share key/value slice s.
static inline SLUICE_HD int64_t
sluice_stream_group_size(const struct sluice_stream_problem &p) {
  int64_t group = 1;
  for (int b = p.batch_rank - p.group_rank; b < p.batch_rank; ++b)
    group *= p.batch[b];
  return group;
}

/// The offset of `slice` (row-major over the batch dims, the last fastest)
/// given one stride per batch dim.
static inline SLUICE_HD int64_t
sluice_stream_batch_offset(const struct sluice_stream_problem &p,
                           const int64_t *strides, int64_t slice) {
  int64_t offset = 0;
  for (int b = p.batch_rank - 1; b >= 0; --b) {
    offset += (slice % p.batch[b]) * strides[b];
    slice /= p.batch[b];
  }
  return offset;
}

/// The element offset of `slice` in operand `x`.
static inline SLUICE_HD int64_t sluice_stream_slice_offset(
    const struct sluice_stream_problem &p,
    const struct sluice_stream_operand &x, int64_t slice) {
  return sluice_stream_batch_offset(p, x.batch_stride, slice);
}

/// The dropout counter of element (0, 0) of `slice`.
static inline SLUICE_HD int64_t sluice_stream_counter_offset(
    const struct sluice_stream_problem &p, int64_t slice) {
  return sluice_stream_batch_offset(p, p.counter_batch, slice);
}

/// True if dropout keeps element (i, j) of a slice whose counter offset is
/// `base` (the one call of Philox.h's per-element draw).
static inline SLUICE_HD bool
sluice_stream_keep(const struct sluice_stream_problem &p, int64_t base,
                   int64_t i, int64_t j) {
  uint64_t counter = (uint64_t)(base + i * p.counter_row + j * p.counter_col);
  return sluice_dropout_keep(p.seed, p.stream, counter, p.dropout_threshold);
}

/// The CUDA kernels' tiles: `warps` warps per block, each owning 16 rows
/// (query rows in the forward and dQ kernels, keys in the dK/dV kernel);
/// `key_tile` keys per step of the forward and dQ kernels; `query_tile`
/// query rows per step of the dK/dV kernel; `head_dim` the padded extent
/// (>= d and e) of the shared-memory tiles. 0 warps: not supported.
struct sluice_stream_cuda_tiles {
  int warps, key_tile, query_tile, head_dim;
};

/// The most dynamic shared memory one block can opt into (bytes;
/// cudaFuncAttributeMaxDynamicSharedMemorySize, the runtime's
/// cudaDevAttrMaxSharedMemoryPerBlockOptin) on compute capability `arch`
/// (80 for 8.0, 120 for 12.0), or 0 where it is not known. From the NVIDIA
/// CUDA C++ Programming Guide, "Compute Capabilities", Table 31 "Memory
/// Information per Compute Capability", row "Maximum amount of shared
/// memory per thread block" (1 KB = 1024 bytes; 1 KB less than the SM's
/// shared memory, kept for the system):
/// https://docs.nvidia.com/cuda/cuda-programming-guide/05-appendices/compute-capabilities.html
///   7.5: 64 KB   8.0, 8.7: 163 KB   8.6, 8.9, 12.x: 99 KB
///   9.0, 10.x, 11.0: 227 KB
/// Capabilities the guide does not list (7.0 and older, 8.8) get 0.
static inline SLUICE_HD constexpr int sluice_cuda_block_smem_limit(int arch) {
  return arch == 75                                     ? 64 * 1024
         : arch == 80 || arch == 87                     ? 163 * 1024
         : arch == 86 || arch == 89 || arch / 10 == 12  ? 99 * 1024
         : arch == 90 || arch / 10 == 10 || arch == 110 ? 227 * 1024
                                                        : 0;
}

/// Rounds a shared-memory byte count up to 16 (every tile starts 16-byte
/// aligned).
static inline SLUICE_HD constexpr int sluice_stream_cuda_align16(int bytes) {
  return (bytes + 15) / 16 * 16;
}

/// Dynamic shared memory of the CUDA forward kernel (sluice_stream_cuda.cuh)
/// with `warps` warps, `key_tile` keys per step, elements of
/// `element_bytes` and padded head dim `head_dim`: Q (16 * warps rows), K
/// and V (key_tile rows), each head_dim + 8 wide, and P (16 * warps x
/// key_tile + 8).
static inline SLUICE_HD constexpr int
sluice_stream_cuda_forward_smem(int element_bytes, int warps, int key_tile,
                                int head_dim) {
  return sluice_stream_cuda_align16((16 * warps + 2 * key_tile) *
                                    (head_dim + 8) * element_bytes) +
         sluice_stream_cuda_align16(16 * warps * (key_tile + 8) *
                                    element_bytes);
}

/// Dynamic shared memory of the dQ kernel: Q and dO (16 * warps rows), K
/// and V (key_tile rows), each head_dim + 8 wide; dS (16 * warps x key_tile
/// + 8); D of the rows (f32).
static inline SLUICE_HD constexpr int
sluice_stream_cuda_grad_query_smem(int element_bytes, int warps, int key_tile,
                                   int head_dim) {
  return sluice_stream_cuda_align16((32 * warps + 2 * key_tile) *
                                    (head_dim + 8) * element_bytes) +
         sluice_stream_cuda_align16(16 * warps * (key_tile + 8) *
                                    element_bytes) +
         sluice_stream_cuda_align16(16 * warps * 4);
}

/// Dynamic shared memory of the dK/dV kernel: K and V (16 * warps keys), Q
/// and dO (query_tile rows), each head_dim + 8 wide; P and dS transposed
/// (16 * warps x query_tile + 8); LSE and D of the query tile (f32 each).
static inline SLUICE_HD constexpr int
sluice_stream_cuda_grad_key_smem(int element_bytes, int warps, int query_tile,
                                 int head_dim) {
  return sluice_stream_cuda_align16((32 * warps + 2 * query_tile) *
                                    (head_dim + 8) * element_bytes) +
         sluice_stream_cuda_align16(2 * 16 * warps * (query_tile + 8) *
                                    element_bytes) +
         sluice_stream_cuda_align16(2 * query_tile * 4);
}

/// The tiles the emitter picks for compute capability `arch` (80, 90, ...),
/// elements of `element_bytes` (2: f16/bf16 through tensor cores, 4: f32
/// on the SIMT cores) and head dims up to `head_dim` (at most 128).
///
/// It starts from the tiles tuned for sm_80 and sm_90, sized so that ptxas
/// keeps the accumulators in registers (test/Runtime checks no spills):
/// f16/bf16 4 warps, 64 keys per step, 32 query rows per dK/dV step (16 at
/// head dim 128), and 8 warps where a block can hold 227 KB (sm_90's class:
/// 128 query rows share every K/V tile); f32 4 warps, 32 keys, 16 rows.
/// Where a kernel's shared memory exceeds the block limit of `arch`
/// (sluice_cuda_block_smem_limit) it halves the key tile (forward and dQ),
/// the query tile (dK/dV) down to 16, and then the warps, so that every
/// kernel launches; on sm_80 and sm_90 every start fits and is kept.
/// 0 warps: no choice (head dim above 128, a capability without a known
/// limit, f16/bf16 before sm_80's mma.sync.m16n8k16, or nothing fits).
static inline constexpr struct sluice_stream_cuda_tiles
sluice_stream_cuda_tiles_for(int arch, int element_bytes, int64_t head_dim) {
  const int limit = sluice_cuda_block_smem_limit(arch);
  if (head_dim > SLUICE_STREAM_MAX_HEAD_DIM || head_dim < 0 || limit == 0 ||
      (element_bytes == 2 && arch < 80))
    return sluice_stream_cuda_tiles{0, 0, 0, 0};
  const int hd = head_dim <= 32 ? 32 : head_dim <= 64 ? 64 : 128;
  const bool tensorCores = element_bytes == 2;
  for (int warps = tensorCores && limit >= 227 * 1024 ? 8 : 4; warps >= 1;
       warps /= 2) {
    int key = tensorCores ? 64 : 32;
    while (key >= 16 && (sluice_stream_cuda_forward_smem(element_bytes, warps,
                                                         key, hd) > limit ||
                         sluice_stream_cuda_grad_query_smem(
                             element_bytes, warps, key, hd) > limit))
      key /= 2;
    int query = tensorCores && hd <= 64 ? 32 : 16;
    while (query >= 16 && sluice_stream_cuda_grad_key_smem(element_bytes, warps,
                                                           query, hd) > limit)
      query /= 2;
    if (key >= 16 && query >= 16)
      return sluice_stream_cuda_tiles{warps, key, query, hd};
  }
  return sluice_stream_cuda_tiles{0, 0, 0, 0};
}

#endif // SLUICE_STREAM_H
