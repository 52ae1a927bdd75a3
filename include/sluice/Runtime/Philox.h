//===- Philox.h - Philox-4x32-10 and the dropout draw -----------*- C++ -*-===//
//
// The counter-based generator behind every dropout mask, written once for
// host C++ and CUDA (the interpreter, the portable C++ backend and the CUDA
// kernels all include this header, so they draw bit-identical masks).
//
// Philox-4x32-10 is the standard generator of Salmon et al., "Parallel Random
// Numbers: As Easy as 1, 2, 3" (SC'11), as shipped in Random123 and cuRAND:
// ten rounds, multipliers 0xD2511F53 / 0xCD9E8D57, Weyl key increments
// 0x9E3779B9 / 0xBB67AE85.
//
// The dropout draw. One Philox call serves four consecutive elements: for
// element `e` of a mask with stream `s`, run seed `S`,
//   key       = { S & 0xffffffff, S >> 32 }
//   block     = e >> 2                    (the counter, 64 bits)
//   counter   = { block & 0xffffffff, block >> 32, s & 0xffffffff, 0 }
//   word      = philox4x32_10(counter, key)[e & 3]
//   keep      = word >= threshold
//   threshold = min(ceil(probability * 2^32), 2^32 - 1)   (an integer)
// so for every probability p <= 1 - 2^-32 an element is kept exactly when
// word * 2^-32 >= p, with probability 1 - threshold * 2^-32 (= 1 - p when p
// is a multiple of 2^-32); above that (p < 1 is verified) an element is kept
// when its word is 2^32 - 1. `threshold` is computed once per mask (on the
// host: emitted code carries it as a literal), never per element, and the
// test is one unsigned compare: no floating point in the draw.
// `e` is the element's index in the canonical element order of the mask's
// type: row-major over its dims sorted by name, except that the innermost
// dim of its layout comes last (dialects/sluice/DropoutOrder.h, the one
// definition the interpreter and the emitters use), so four consecutive
// elements in memory share one Philox call when that dim's size is a
// multiple of 4. Only the low 32 bits of the stream are used.
//
// Only <stdint.h>: no other dependency, so emitted code (host C++ or CUDA)
// can include it.
//
//===----------------------------------------------------------------------===//

#ifndef SLUICE_RUNTIME_PHILOX_H
#define SLUICE_RUNTIME_PHILOX_H

#include <stdint.h>

#if defined(__CUDACC__)
#define SLUICE_HD __host__ __device__
#else
#define SLUICE_HD
#endif

/// Four 32-bit words: a Philox counter or output block.
struct sluice_philox4x32 {
  uint32_t v[4];
};

/// One Philox round: two 32x32->64 multiplies, then a permute-and-xor.
static inline SLUICE_HD struct sluice_philox4x32
sluice_philox_round(struct sluice_philox4x32 ctr, uint32_t key0,
                    uint32_t key1) {
  uint64_t p0 = (uint64_t)0xD2511F53u * ctr.v[0];
  uint64_t p1 = (uint64_t)0xCD9E8D57u * ctr.v[2];
  uint32_t hi0 = (uint32_t)(p0 >> 32), lo0 = (uint32_t)p0;
  uint32_t hi1 = (uint32_t)(p1 >> 32), lo1 = (uint32_t)p1;
  struct sluice_philox4x32 out;
  out.v[0] = hi1 ^ ctr.v[1] ^ key0;
  out.v[1] = lo1;
  out.v[2] = hi0 ^ ctr.v[3] ^ key1;
  out.v[3] = lo0;
  return out;
}

/// Philox-4x32-10 of `ctr` under the key (`key0`, `key1`).
static inline SLUICE_HD struct sluice_philox4x32
sluice_philox4x32_10(struct sluice_philox4x32 ctr, uint32_t key0,
                     uint32_t key1) {
  for (int round = 0; round < 10; ++round) {
    if (round > 0) {
      key0 += 0x9E3779B9u;
      key1 += 0xBB67AE85u;
    }
    ctr = sluice_philox_round(ctr, key0, key1);
  }
  return ctr;
}

/// The integer keep threshold of drop probability `probability` (in
/// [0, 1)): min(ceil(probability * 2^32), 2^32 - 1); 0 for p <= 0 or NaN.
/// probability * 2^32 is exact in double.
static inline SLUICE_HD uint32_t sluice_dropout_threshold(double probability) {
  double scaled = probability * 4294967296.0;
  if (!(scaled > 0.0))
    return 0u;
  if (scaled >= 4294967295.0)
    return 0xffffffffu;
  uint32_t floor = (uint32_t)scaled;
  return (double)floor < scaled ? floor + 1u : floor;
}

/// The Philox output block of counter `block` of `stream` under `seed`:
/// the words of elements 4 * block .. 4 * block + 3.
static inline SLUICE_HD struct sluice_philox4x32
sluice_dropout_block(uint64_t seed, uint64_t stream, uint64_t block) {
  struct sluice_philox4x32 ctr;
  ctr.v[0] = (uint32_t)block;
  ctr.v[1] = (uint32_t)(block >> 32);
  ctr.v[2] = (uint32_t)stream;
  ctr.v[3] = 0;
  return sluice_philox4x32_10(ctr, (uint32_t)seed, (uint32_t)(seed >> 32));
}

/// The 32-bit draw of `element`: word element % 4 of block element / 4
/// (selected without indexing, so the block stays in registers on a GPU).
static inline SLUICE_HD uint32_t sluice_dropout_word(uint64_t seed,
                                                     uint64_t stream,
                                                     uint64_t element) {
  struct sluice_philox4x32 out = sluice_dropout_block(seed, stream, element >> 2);
  uint32_t low = (element & 1u) ? out.v[1] : out.v[0];
  uint32_t high = (element & 1u) ? out.v[3] : out.v[2];
  return (element & 2u) ? high : low;
}

/// The per-element entry point: true if dropout keeps `element` of
/// `stream` under `seed`, for the threshold of sluice_dropout_threshold.
static inline SLUICE_HD bool sluice_dropout_keep(uint64_t seed,
                                                 uint64_t stream,
                                                 uint64_t element,
                                                 uint32_t threshold) {
  return sluice_dropout_word(seed, stream, element) >= threshold;
}

/// The same draw from the drop probability (the threshold is computed
/// here; with a literal probability compilers fold it). Kept for callers
/// that hold a probability; emitted code passes the threshold.
static inline SLUICE_HD bool sluice_dropout_keep(uint64_t seed,
                                                 uint64_t stream,
                                                 uint64_t element,
                                                 double probability) {
  return sluice_dropout_keep(seed, stream, element,
                             sluice_dropout_threshold(probability));
}

/// The 4-wide entry point: the keep bits of elements 4 * block + w, w = 0..3,
/// as bit w of the result (one Philox call).
static inline SLUICE_HD uint32_t sluice_dropout_keep4(uint64_t seed,
                                                      uint64_t stream,
                                                      uint64_t block,
                                                      uint32_t threshold) {
  struct sluice_philox4x32 out = sluice_dropout_block(seed, stream, block);
  return (uint32_t)(out.v[0] >= threshold) |
         (uint32_t)(out.v[1] >= threshold) << 1 |
         (uint32_t)(out.v[2] >= threshold) << 2 |
         (uint32_t)(out.v[3] >= threshold) << 3;
}

#endif // SLUICE_RUNTIME_PHILOX_H
