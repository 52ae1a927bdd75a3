// A hand-written module that implements the generic C ABI of an emitted
// module (docs/Compile.md), to test the toolchain and the loader without the
// emitter. Training-shaped: phase 0 computes y[r, c] = x[r, c] * w[c] + seed
// % 7; phase 1 gets dy and writes d_x = dy * w and d_w[c] = sum_r dy * x.
// x, y, dy, d_x are f32 [2, 3]; w and d_w are f16 [3]. Seed 999 is refused
// with SLUICE_ERROR_ARGUMENT so that error reporting can be tested.
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

namespace {
typedef struct {
  const char *name;
  int dtype;
  int rank;
  const int64_t *dims;
  int is_output;
} sluice_tensor_info;

const int64_t matrix[] = {2, 3};
const int64_t vector[] = {3};
const sluice_tensor_info forward[] = {
    {"x", 0, 2, matrix, 0}, {"w", 1, 1, vector, 0}, {"y", 0, 2, matrix, 1}};
const sluice_tensor_info backward[] = {
    {"x", 0, 2, matrix, 0},   {"w", 1, 1, vector, 0},
    {"y", 0, 2, matrix, 0},   {"dy", 0, 2, matrix, 0},
    {"d_x", 0, 2, matrix, 1}, {"d_w", 1, 1, vector, 1}};

struct Context {
  char error[256];
};

// f16 <-> f32 for normal numbers and zero (enough for the test's values).
float halfToFloat(uint16_t h) {
  uint32_t sign = (h & 0x8000u) << 16, exponent = (h >> 10) & 0x1f,
           mantissa = h & 0x3ff;
  uint32_t bits =
      exponent == 0 ? sign : sign | ((exponent + 112) << 23) | (mantissa << 13);
  float f;
  memcpy(&f, &bits, 4);
  return f;
}
uint16_t floatToHalf(float f) {
  uint32_t bits;
  memcpy(&bits, &f, 4);
  uint32_t sign = (bits >> 16) & 0x8000u;
  int exponent = (int)((bits >> 23) & 0xff) - 112;
  if (exponent <= 0)
    return (uint16_t)sign;
  uint32_t mantissa = bits & 0x7fffff;
  uint32_t half = sign | ((uint32_t)exponent << 10) | (mantissa >> 13);
  if ((mantissa & 0x1fff) > 0x1000 ||
      ((mantissa & 0x1fff) == 0x1000 && (half & 1)))
    ++half;
  return (uint16_t)half;
}
} // namespace

extern "C" {
const char *sluice_module_name(void) { return "handwritten"; }
int sluice_num_phases(void) { return 2; }
int sluice_num_tensors(int phase) {
  return phase == 0 ? 3 : phase == 1 ? 6 : 0;
}
const sluice_tensor_info *sluice_tensor(int phase, int index) {
  if (phase == 0 && index >= 0 && index < 3)
    return &forward[index];
  if (phase == 1 && index >= 0 && index < 6)
    return &backward[index];
  return 0;
}
int sluice_create(void **ctx) {
  Context *context = (Context *)calloc(1, sizeof(Context));
  *ctx = context;
  return context ? 0 : 3;
}
void sluice_destroy(void *ctx) { free(ctx); }
const char *sluice_last_error(const void *ctx) {
  return ((const Context *)ctx)->error;
}
int sluice_run(void *ctx, int phase, void *const *tensors, uint64_t seed,
               void *stream) {
  (void)stream;
  Context *context = (Context *)ctx;
  if (seed == 999) {
    snprintf(context->error, sizeof context->error,
             "sluice_run: seed %llu is refused by the test module",
             (unsigned long long)seed);
    return 4;
  }
  const float *x = (const float *)tensors[0];
  const uint16_t *w = (const uint16_t *)tensors[1];
  if (phase == 0) {
    float *y = (float *)tensors[2];
    for (int r = 0; r < 2; ++r)
      for (int c = 0; c < 3; ++c)
        y[r * 3 + c] = x[r * 3 + c] * halfToFloat(w[c]) + (float)(seed % 7);
    return 0;
  }
  const float *dy = (const float *)tensors[3];
  float *dx = (float *)tensors[4];
  uint16_t *dw = (uint16_t *)tensors[5];
  for (int c = 0; c < 3; ++c) {
    float sum = 0;
    for (int r = 0; r < 2; ++r) {
      dx[r * 3 + c] = dy[r * 3 + c] * halfToFloat(w[c]);
      sum += dy[r * 3 + c] * x[r * 3 + c];
    }
    dw[c] = floatToHalf(sum);
  }
  return 0;
}
}
