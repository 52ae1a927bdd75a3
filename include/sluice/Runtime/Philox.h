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
// Only <stdint.h> (and, in host code compiled for AVX-512F, AVX2 or SSE2,
// <immintrin.h> for sluice_dropout_words' hand-vectorized draw), so emitted
// code (host C++ or CUDA) can include it.
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

//===----------------------------------------------------------------------===//
// Host: many consecutive blocks at once, vectorized by hand
//===----------------------------------------------------------------------===//

#if !defined(__CUDACC__)
#if defined(__AVX2__) || defined(__SSE2__)
#include <immintrin.h>
#endif

#if defined(__AVX2__) || defined(__SSE2__)
// One Philox block per 32-bit lane (16 lanes with AVX-512F, 8 with AVX2, 4 with
// SSE2): the 32x32->64 multiplies are `mul_epu32` on the even lanes and on the
// odd lanes shifted down, the high and low halves blended back into 32-bit
// lanes. GCC and Clang vectorize sluice_dropout_block's 64-bit multiply by
// a constant as shift-and-add chains (and, without AVX2, not at all), about
// 4x slower (docs/Codegen.md, "CPU backend"). The same arithmetic as
// sluice_philox_round, so the same words bit for bit.
#if defined(__AVX512F__)
// 16 lanes with AVX-512F: the carry and the even/odd blends are mask
// operations; the 4 x 16 transpose of sluice_pv_store4 ends in 128-bit lane
// shuffles.
typedef __m512i sluice_philox_vec;
#define SLUICE_PHILOX_LANES 16
#define sluice_pv_set1(x) _mm512_set1_epi32((int)(x))
#define sluice_pv_xor(a, b) _mm512_xor_si512(a, b)
#define sluice_pv_add(a, b) _mm512_add_epi32(a, b)
#define sluice_pv_lanes()                                                      \
  _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15)
#define sluice_pv_mul_even(a, m) _mm512_mul_epu32(a, m)
#define sluice_pv_srl64(a) _mm512_srli_epi64(a, 32)
#define sluice_pv_sll64(a) _mm512_slli_epi64(a, 32)
#define sluice_pv_blend(even, odd) _mm512_mask_blend_epi32(0xAAAA, even, odd)
#define sluice_pv_unpacklo32(a, b) _mm512_unpacklo_epi32(a, b)
#define sluice_pv_unpackhi32(a, b) _mm512_unpackhi_epi32(a, b)
#define sluice_pv_unpacklo64(a, b) _mm512_unpacklo_epi64(a, b)
#define sluice_pv_unpackhi64(a, b) _mm512_unpackhi_epi64(a, b)
#elif defined(__AVX2__)
typedef __m256i sluice_philox_vec;
#define SLUICE_PHILOX_LANES 8
#define sluice_pv_set1(x) _mm256_set1_epi32((int)(x))
#define sluice_pv_xor(a, b) _mm256_xor_si256(a, b)
#define sluice_pv_add(a, b) _mm256_add_epi32(a, b)
#define sluice_pv_sub(a, b) _mm256_sub_epi32(a, b)
#define sluice_pv_cmpgt(a, b) _mm256_cmpgt_epi32(a, b)
#define sluice_pv_lanes() _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7)
#define sluice_pv_mul_even(a, m) _mm256_mul_epu32(a, m)
#define sluice_pv_srl64(a) _mm256_srli_epi64(a, 32)
#define sluice_pv_sll64(a) _mm256_slli_epi64(a, 32)
/// Even 32-bit lanes from `even`, odd ones from `odd`.
#define sluice_pv_blend(even, odd) _mm256_blend_epi32(even, odd, 0xAA)
#define sluice_pv_unpacklo32(a, b) _mm256_unpacklo_epi32(a, b)
#define sluice_pv_unpackhi32(a, b) _mm256_unpackhi_epi32(a, b)
#define sluice_pv_unpacklo64(a, b) _mm256_unpacklo_epi64(a, b)
#define sluice_pv_unpackhi64(a, b) _mm256_unpackhi_epi64(a, b)
#else
typedef __m128i sluice_philox_vec;
#define SLUICE_PHILOX_LANES 4
#define sluice_pv_set1(x) _mm_set1_epi32((int)(x))
#define sluice_pv_xor(a, b) _mm_xor_si128(a, b)
#define sluice_pv_add(a, b) _mm_add_epi32(a, b)
#define sluice_pv_sub(a, b) _mm_sub_epi32(a, b)
#define sluice_pv_cmpgt(a, b) _mm_cmpgt_epi32(a, b)
#define sluice_pv_lanes() _mm_setr_epi32(0, 1, 2, 3)
#define sluice_pv_mul_even(a, m) _mm_mul_epu32(a, m)
#define sluice_pv_srl64(a) _mm_srli_epi64(a, 32)
#define sluice_pv_sll64(a) _mm_slli_epi64(a, 32)
#define sluice_pv_blend(even, odd)                                             \
  _mm_or_si128(_mm_and_si128(even, _mm_set1_epi64x(0xffffffffLL)),             \
               _mm_andnot_si128(_mm_set1_epi64x(0xffffffffLL), odd))
#define sluice_pv_unpacklo32(a, b) _mm_unpacklo_epi32(a, b)
#define sluice_pv_unpackhi32(a, b) _mm_unpackhi_epi32(a, b)
#define sluice_pv_unpacklo64(a, b) _mm_unpacklo_epi64(a, b)
#define sluice_pv_unpackhi64(a, b) _mm_unpackhi_epi64(a, b)
#endif

/// The high and low 32 bits of `a * m` per 32-bit lane (the low ones by
/// vpmulld with AVX2: one instruction instead of a shift and a blend, ~10%
/// faster draws on Zen 3).
static inline void sluice_pv_mulhilo(sluice_philox_vec a, sluice_philox_vec m,
                                     sluice_philox_vec *hi,
                                     sluice_philox_vec *lo) {
  sluice_philox_vec even = sluice_pv_mul_even(a, m);
  sluice_philox_vec odd = sluice_pv_mul_even(sluice_pv_srl64(a), m);
  *hi = sluice_pv_blend(sluice_pv_srl64(even), odd);
#if defined(__AVX512F__)
  *lo = _mm512_mullo_epi32(a, m);
#elif defined(__AVX2__)
  *lo = _mm256_mullo_epi32(a, m);
#else
  *lo = sluice_pv_blend(even, sluice_pv_sll64(odd));
#endif
}

/// Stores lane l of c0..c3 at words[4 * l + k] (a 4 x LANES transpose).
/// The unpacks work per 128-bit lane q: u_r's lane q is block 4q + r (all
/// of it with SSE2); wider vectors then transpose their 128-bit lanes so
/// that blocks 4q..4q+3 land in 128-bit lane q's place.
static inline void sluice_pv_store4(uint32_t *words, sluice_philox_vec c0,
                                    sluice_philox_vec c1, sluice_philox_vec c2,
                                    sluice_philox_vec c3) {
  sluice_philox_vec t0 = sluice_pv_unpacklo32(c0, c1),
                    t1 = sluice_pv_unpackhi32(c0, c1);
  sluice_philox_vec t2 = sluice_pv_unpacklo32(c2, c3),
                    t3 = sluice_pv_unpackhi32(c2, c3);
  sluice_philox_vec u0 = sluice_pv_unpacklo64(t0, t2),
                    u1 = sluice_pv_unpackhi64(t0, t2);
  sluice_philox_vec u2 = sluice_pv_unpacklo64(t1, t3),
                    u3 = sluice_pv_unpackhi64(t1, t3);
#if defined(__AVX512F__)
  __m512i a = _mm512_shuffle_i32x4(u0, u1, 0x44),
          b = _mm512_shuffle_i32x4(u2, u3, 0x44);
  __m512i c = _mm512_shuffle_i32x4(u0, u1, 0xEE),
          d = _mm512_shuffle_i32x4(u2, u3, 0xEE);
  _mm512_storeu_si512((void *)(words + 0), _mm512_shuffle_i32x4(a, b, 0x88));
  _mm512_storeu_si512((void *)(words + 16), _mm512_shuffle_i32x4(a, b, 0xDD));
  _mm512_storeu_si512((void *)(words + 32), _mm512_shuffle_i32x4(c, d, 0x88));
  _mm512_storeu_si512((void *)(words + 48), _mm512_shuffle_i32x4(c, d, 0xDD));
#elif defined(__AVX2__)
  _mm256_storeu_si256((__m256i *)(words + 0),
                      _mm256_permute2x128_si256(u0, u1, 0x20));
  _mm256_storeu_si256((__m256i *)(words + 8),
                      _mm256_permute2x128_si256(u2, u3, 0x20));
  _mm256_storeu_si256((__m256i *)(words + 16),
                      _mm256_permute2x128_si256(u0, u1, 0x31));
  _mm256_storeu_si256((__m256i *)(words + 24),
                      _mm256_permute2x128_si256(u2, u3, 0x31));
#else
  _mm_storeu_si128((__m128i *)(words + 0), u0);
  _mm_storeu_si128((__m128i *)(words + 4), u1);
  _mm_storeu_si128((__m128i *)(words + 8), u2);
  _mm_storeu_si128((__m128i *)(words + 12), u3);
#endif
}

/// SLUICE_PHILOX_BATCHES independent groups of LANES blocks per step: the
/// rounds' multiply latency overlaps across groups.
#define SLUICE_PHILOX_BATCHES 4

/// The counters of LANES consecutive blocks from `block`: words 0 and 1 the
/// 64-bit block index, with the carry into the high word where the low one
/// wraps (an unsigned compare via the sign bit; the carry mask is -1, so
/// subtracting it adds one), word 2 the stream, word 3 zero.
static inline void sluice_pv_counters(uint64_t block, uint64_t stream,
                                      sluice_philox_vec c[4]) {
#if defined(__AVX512F__)
  sluice_philox_vec low = sluice_pv_set1((uint32_t)block);
  c[0] = sluice_pv_add(low, sluice_pv_lanes());
  __mmask16 wrapped = _mm512_cmplt_epu32_mask(c[0], low);
  sluice_philox_vec high = sluice_pv_set1((uint32_t)(block >> 32));
  c[1] = _mm512_mask_add_epi32(high, wrapped, high, sluice_pv_set1(1u));
  c[2] = sluice_pv_set1((uint32_t)stream);
  c[3] = sluice_pv_set1(0u);
#else
  const sluice_philox_vec sign = sluice_pv_set1(0x80000000u);
  sluice_philox_vec low = sluice_pv_set1((uint32_t)block);
  c[0] = sluice_pv_add(low, sluice_pv_lanes());
  sluice_philox_vec wrapped =
      sluice_pv_cmpgt(sluice_pv_xor(low, sign), sluice_pv_xor(c[0], sign));
  c[1] = sluice_pv_sub(sluice_pv_set1((uint32_t)(block >> 32)), wrapped);
  c[2] = sluice_pv_set1((uint32_t)stream);
  c[3] = sluice_pv_set1(0u);
#endif
}

/// One Philox round (sluice_philox_round) in every lane.
static inline void sluice_pv_round(sluice_philox_vec c[4],
                                   sluice_philox_vec key0,
                                   sluice_philox_vec key1) {
  const sluice_philox_vec m0 = sluice_pv_set1(0xD2511F53u);
  const sluice_philox_vec m1 = sluice_pv_set1(0xCD9E8D57u);
  sluice_philox_vec hi0, lo0, hi1, lo1;
  sluice_pv_mulhilo(c[0], m0, &hi0, &lo0);
  sluice_pv_mulhilo(c[2], m1, &hi1, &lo1);
  c[0] = sluice_pv_xor(sluice_pv_xor(hi1, c[1]), key0);
  c[2] = sluice_pv_xor(sluice_pv_xor(hi0, c[3]), key1);
  c[1] = lo1;
  c[3] = lo0;
}
#endif
#endif // !__CUDACC__

/// The Philox words of `blocks` consecutive blocks of `stream` under
/// `seed`, starting at block `first`:
///   words[4 * w + k] = sluice_dropout_block(seed, stream, first + w).v[k]
/// for w < blocks (element 4 * (first + w) + k's word). Bit-identical to
/// sluice_dropout_block; vectorized by hand where the host has SSE2, AVX2 or
/// AVX-512F: BATCHES groups of LANES blocks per step, then one group at a time
/// (short runs: a tile row of the streaming attention kernels draws 16 to 33
/// blocks), the rest one block at a time. Host code only; in a .cu file
/// (the GPU kit's reference, nvcc's host pass) it is the scalar loop.
static inline void sluice_dropout_words(uint64_t seed, uint64_t stream,
                                        uint64_t first, int64_t blocks,
                                        uint32_t *words) {
  int64_t w = 0;
#if defined(SLUICE_PHILOX_LANES)
  enum { lanes = SLUICE_PHILOX_LANES, batches = SLUICE_PHILOX_BATCHES };
  if (blocks >= lanes * batches) {
    sluice_philox_vec key0[10], key1[10];
    for (int round = 0; round < 10; ++round) {
      key0[round] =
          sluice_pv_set1((uint32_t)seed + 0x9E3779B9u * (uint32_t)round);
      key1[round] = sluice_pv_set1((uint32_t)(seed >> 32) +
                                   0xBB67AE85u * (uint32_t)round);
    }
    for (; w + lanes * batches <= blocks; w += lanes * batches) {
      sluice_philox_vec c[batches][4];
      for (int b = 0; b < batches; ++b)
        sluice_pv_counters(first + (uint64_t)(w + lanes * b), stream, c[b]);
      for (int round = 0; round < 10; ++round)
        for (int b = 0; b < batches; ++b)
          sluice_pv_round(c[b], key0[round], key1[round]);
      for (int b = 0; b < batches; ++b)
        sluice_pv_store4(words + 4 * (w + lanes * b), c[b][0], c[b][1], c[b][2],
                         c[b][3]);
    }
  }
  // Short runs skip the key tables (their set-up costs more than it saves
  // on two or three groups: tile rows of 16-17 blocks ran ~10% slower).
  for (; w + lanes <= blocks; w += lanes) {
    sluice_philox_vec c[4];
    sluice_pv_counters(first + (uint64_t)w, stream, c);
    uint32_t k0 = (uint32_t)seed, k1 = (uint32_t)(seed >> 32);
    for (int round = 0; round < 10;
         ++round, k0 += 0x9E3779B9u, k1 += 0xBB67AE85u)
      sluice_pv_round(c, sluice_pv_set1(k0), sluice_pv_set1(k1));
    sluice_pv_store4(words + 4 * w, c[0], c[1], c[2], c[3]);
  }
#endif
  // The rest one block at a time (a pointer per block: indexing by 4 * w
  // made GCC warn about an overflow in this loop when it runs 0 times).
  for (uint32_t *out = words + 4 * w; w < blocks; ++w, out += 4) {
    struct sluice_philox4x32 drawn =
        sluice_dropout_block(seed, stream, first + (uint64_t)w);
    out[0] = drawn.v[0];
    out[1] = drawn.v[1];
    out[2] = drawn.v[2];
    out[3] = drawn.v[3];
  }
}

#endif // SLUICE_RUNTIME_PHILOX_H
