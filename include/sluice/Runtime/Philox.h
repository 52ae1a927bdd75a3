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
// The dropout draw for element `e` of a mask with stream `s`, run seed `S`:
//   key     = { S & 0xffffffff, S >> 32 }
//   counter = { e & 0xffffffff, e >> 32, s & 0xffffffff, 0 }
//   u       = philox4x32_10(counter, key)[0] * 2^-32   (exact, in double)
//   keep    = u >= probability
// `e` is the element's row-major index with the dimensions ordered by name;
// only the low 32 bits of the stream are used.
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

/// The dropout uniform in [0, 1) for `element` of `stream` under `seed`:
/// the first output word times 2^-32, exact in double.
static inline SLUICE_HD double sluice_dropout_uniform(uint64_t seed,
                                                      uint64_t stream,
                                                      uint64_t element) {
  struct sluice_philox4x32 ctr;
  ctr.v[0] = (uint32_t)element;
  ctr.v[1] = (uint32_t)(element >> 32);
  ctr.v[2] = (uint32_t)stream;
  ctr.v[3] = 0;
  struct sluice_philox4x32 out =
      sluice_philox4x32_10(ctr, (uint32_t)seed, (uint32_t)(seed >> 32));
  return (double)out.v[0] * (1.0 / 4294967296.0);
}

/// True if dropout keeps `element` of `stream` under `seed`: the uniform is
/// at least `probability` (the drop probability).
static inline SLUICE_HD bool sluice_dropout_keep(uint64_t seed,
                                                 uint64_t stream,
                                                 uint64_t element,
                                                 double probability) {
  return sluice_dropout_uniform(seed, stream, element) >= probability;
}

#endif // SLUICE_RUNTIME_PHILOX_H
