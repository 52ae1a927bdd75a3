// stream_attention_check: the CUDA streaming attention kernels
// (include/sluice/Runtime/sluice_stream_cuda.cuh) against the portable C++
// ones (sluice_stream_cpu.h, themselves checked against a materializing
// reference by test/unittests/StreamKernelTest.cpp) on the GPU kit's
// machine: f16, bf16 and f32, head dims 32 / 64 / 128, causal or not,
// dropout 0 or 0.1 (the same Philox draws on both sides), sequence lengths
// that are not multiples of the tiles, batch dims interleaved with the rows
// as in BERT's [b, seq, h, p] layout, multi-query cases (one K/V head
// shared by every query head), with the tiles of sm_80 and sm_90, the
// backward given D = rowsum(dO * O) and computing it from O itself (the
// fusion pass's default).
//
// Prints one line per case ("ok" or "FAIL", the largest error of O, LSE,
// dQ, dK, dV relative to max(1, max |cpu|)) and exits 1 if any case fails.
//
// With --time it checks nothing and times the kernels instead, with the
// tiles of the device's architecture, on the shapes of the paper's layers
// and longer causal ones (timeAll): one line per shape,
//   time TYPE b=B h=H l=L d=D causal=C dropout=P fwd_ms=F bwd_ms=G
// (medians of CUDA-event times; bwd_ms is the dQ/dK/dV kernels computing
// the row dot D = rowsum(dO * O) from O, as the emitted modules run them
// and as PyTorch's backward includes it; bwd_given_d_ms the same kernels
// reading a given D). benchmarks/gpu/attention_torch.py times PyTorch's
// scaled_dot_product_attention on the same lines.
//
// Built by benchmarks/gpu/prepare.sh into gpu-kit/bin; test/Runtime
// compiles it with nvcc.
//
//   nvcc -std=c++17 -O3 -arch=sm_90 -I include/sluice/Runtime \
//     benchmarks/gpu/stream_attention_check.cu -o stream_attention_check

#include "sluice_stream_cpu.h"
#include "sluice_stream_cuda.cuh"

#include <algorithm>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <vector>

namespace {

/// One case: [b, m, h, d]-laid-out Q, O, dO; [b, h, n, d] K, V, or with
/// `multiQuery` one K/V head [b, n, d] shared by the h query heads (h a
/// query-only batch dim, group_rank 1: dK and dV sum over it).
struct Case {
  int64_t b, h, m, n, d;
  int causal;
  double dropout;
  int multiQuery = 0;
};

/// Host and device copies of one tensor of T.
template <typename T>
struct Buffer {
  std::vector<T> host;
  T *device = nullptr;
  explicit Buffer(int64_t count) : host(count) {
    cudaMalloc(&device, count * sizeof(T));
  }
  ~Buffer() { cudaFree(device); }
  void upload() {
    cudaMemcpy(device, host.data(), host.size() * sizeof(T),
               cudaMemcpyHostToDevice);
  }
  std::vector<T> download() const {
    std::vector<T> out(host.size());
    cudaMemcpy(out.data(), device, out.size() * sizeof(T),
               cudaMemcpyDeviceToHost);
    return out;
  }
};

/// An operand over `data` with (b, h, row, col) strides.
sluice_stream_operand operand(void *data, int64_t sb, int64_t sh, int64_t sr,
                              int64_t sc) {
  sluice_stream_operand x;
  memset(&x, 0, sizeof(x));
  x.data = data;
  x.batch_stride[0] = sb;
  x.batch_stride[1] = sh;
  x.row_stride = sr;
  x.col_stride = sc;
  return x;
}

template <typename T>
double maxError(const std::vector<T> &got, const std::vector<T> &want) {
  double err = 0, scale = 1;
  for (size_t i = 0; i < want.size(); ++i) {
    double g = sluice_stream_detail::widen(got[i]);
    double w = sluice_stream_detail::widen(want[i]);
    if (g != g && w == w)
      return INFINITY;
    if (!(isinf(g) && g == w))
      err = fmax(err, fabs(g - w));
    scale = fmax(scale, fabs(w));
  }
  return err / scale;
}

/// The problem of case `c`: b x h slices, scale 1/sqrt(d), dropout drawn
/// with `seed` over the mask [b, h, i, j] row-major (dims b, h, j, k sorted
/// by name).
sluice_stream_problem problemFor(const Case &c, uint64_t seed) {
  sluice_stream_problem p;
  memset(&p, 0, sizeof(p));
  p.batch_rank = 2;
  p.batch[0] = c.b, p.batch[1] = c.h;
  p.m = c.m, p.n = c.n, p.d = c.d, p.e = c.d;
  p.scale = 1.0f / sqrtf((float)c.d);
  p.causal = c.causal;
  p.dropout_p = c.dropout;
  p.seed = seed;
  p.stream = 7;
  p.counter_batch[0] = c.h * c.m * c.n, p.counter_batch[1] = c.m * c.n;
  p.counter_row = c.n, p.counter_col = 1;
  p.group_rank = c.multiQuery ? 1 : 0;
  return p;
}

/// A [b, rows, h, d] tensor (Q, O, dO; in the timing also K, V).
sluice_stream_operand rowsThenHeads(const Case &c, int64_t rows, void *data) {
  return operand(data, rows * c.h * c.d, c.d, c.h * c.d, 1);
}

/// A per-row statistic [b, h, i] (LSE, the row dot D).
sluice_stream_operand statistic(const Case &c, void *data) {
  return operand(data, c.h * c.m, c.m, 1, 0);
}

/// The forward / backward kernels with the tiles of ARCH for head dims up
/// to HD, as the emitter picks them.
template <typename T, int ARCH, int HD>
cudaError_t launchForward(const sluice_stream_fwd_args &args) {
  constexpr sluice_stream_cuda_tiles tiles =
      sluice_stream_cuda_tiles_for(ARCH, sizeof(T), HD);
  return sluice_stream_attention_fwd_cuda<T, tiles.warps, tiles.key_tile,
                                          tiles.head_dim>(args, 0);
}
template <typename T, int ARCH, int HD>
cudaError_t launchBackward(const sluice_stream_bwd_args &args) {
  constexpr sluice_stream_cuda_tiles tiles =
      sluice_stream_cuda_tiles_for(ARCH, sizeof(T), HD);
  return sluice_stream_attention_bwd_cuda<T, tiles.warps, tiles.key_tile,
                                          tiles.query_tile, tiles.head_dim>(
      args, 0);
}

/// Runs the CUDA kernels with the tiles of ARCH on the device buffers of
/// `fwd` / `bwd` and compares them with the C++ results in the host copies;
/// prints the case's line. The backward reads the C++ LSE and O, so it is
/// checked on its own; with `fromO` it computes D from that O (bwd.o set)
/// rather than reading bwd.d.
template <typename T, int ARCH, int HD>
bool onGpu(const char *type, const Case &c, double tolerance,
           const sluice_stream_fwd_args &fwd, sluice_stream_bwd_args bwd,
           bool fromO, Buffer<T> &o, Buffer<float> &lse, Buffer<T> &dq,
           Buffer<T> &dk, Buffer<T> &dv) {
  cudaError_t status = launchForward<T, ARCH, HD>(fwd);
  std::vector<T> gpuO = o.download();
  std::vector<float> gpuLse = lse.download();
  lse.upload();
  o.upload();
  if (fromO) {
    bwd.o = fwd.o;
    bwd.d.data = nullptr;
  }
  if (status == cudaSuccess)
    status = launchBackward<T, ARCH, HD>(bwd);
  if (status == cudaSuccess)
    status = cudaDeviceSynchronize();
  double errors[5] = {maxError(gpuO, o.host), maxError(gpuLse, lse.host),
                      maxError(dq.download(), dq.host),
                      maxError(dk.download(), dk.host),
                      maxError(dv.download(), dv.host)};
  bool ok = status == cudaSuccess;
  for (double e : errors)
    ok = ok && e <= tolerance;
  printf("%s sm_%d tiles, %s hd=%d b=%lld h=%lld m=%lld n=%lld d=%lld "
         "causal=%d dropout=%g mq=%d D=%s: O %.2e LSE %.2e dQ %.2e dK %.2e "
         "dV %.2e%s%s\n",
         ok ? "ok  " : "FAIL", ARCH, type, HD, (long long)c.b, (long long)c.h,
         (long long)c.m, (long long)c.n, (long long)c.d, c.causal, c.dropout,
         c.multiQuery, fromO ? "from-O" : "given", errors[0], errors[1],
         errors[2], errors[3], errors[4], status == cudaSuccess ? "" : " ",
         status == cudaSuccess ? "" : cudaGetErrorString(status));
  return ok;
}

/// Runs one case with the C++ kernels, then with the CUDA kernels at the
/// tiles of sm_80 and of sm_90; true if every output is within `tolerance`.
template <typename T, int HD>
bool runCase(const char *type, const Case &c, double tolerance, unsigned seed) {
  const int64_t qCount = c.b * c.m * c.h * c.d, kCount = c.b * c.h * c.n * c.d;
  const int64_t rows = c.b * c.h * c.m;
  Buffer<T> q(qCount), k(kCount), v(kCount), o(qCount), dO(qCount);
  Buffer<T> dq(qCount), dk(kCount), dv(kCount);
  Buffer<float> lse(rows), rowDot(rows);
  srand(seed);
  for (Buffer<T> *x : {&q, &k, &v, &dO})
    for (T &e : x->host)
      sluice_stream_detail::narrow(&e, (float)(rand() % 4001 - 2000) / 1000.0f);
  for (Buffer<T> *x : {&q, &k, &v, &dO})
    x->upload();

  sluice_stream_problem p = problemFor(c, 0x5eed0000ULL + seed);
  auto queries = [&](void *data) { return rowsThenHeads(c, c.m, data); };
  auto keys = [&](void *data) { // [b, h, n, d], or [b, n, d] shared
    return operand(data, c.h * c.n * c.d, c.multiQuery ? 0 : c.n * c.d, c.d,
                   1);
  };
  // Shared K/V: only the first head's part of dK, dV is written.
  cudaMemset(dk.device, 0, kCount * sizeof(T));
  cudaMemset(dv.device, 0, kCount * sizeof(T));
  auto stats = [&](void *data) { return statistic(c, data); };

  // The C++ kernels on the host copies.
  sluice_stream_fwd_args cpuFwd = {p,
                                   queries(q.host.data()),
                                   keys(k.host.data()),
                                   keys(v.host.data()),
                                   queries(o.host.data()),
                                   stats(lse.host.data())};
  sluice_stream_attention_fwd_cpu<T, 64, 64>(cpuFwd);
  for (int64_t r = 0; r < rows; ++r) { // D = rowsum(dO * O), [b, h, i]
    int64_t bb = r / (c.h * c.m), hh = r / c.m % c.h, i = r % c.m;
    float sum = 0;
    for (int64_t x = 0; x < c.d; ++x) {
      int64_t at = ((bb * c.m + i) * c.h + hh) * c.d + x;
      sum += sluice_stream_detail::widen(dO.host[at]) *
             sluice_stream_detail::widen(o.host[at]);
    }
    rowDot.host[r] = sum;
  }
  rowDot.upload();
  sluice_stream_bwd_args cpuBwd = {p,
                                   queries(q.host.data()),
                                   keys(k.host.data()),
                                   keys(v.host.data()),
                                   queries(dO.host.data()),
                                   stats(lse.host.data()),
                                   stats(rowDot.host.data()),
                                   queries(dq.host.data()),
                                   keys(dk.host.data()),
                                   keys(dv.host.data())};
  sluice_stream_attention_bwd_cpu<T, 64, 64>(cpuBwd);

  // The CUDA kernels on the device copies: D given (from the host's O), or
  // computed by the kernels from O (onGpu uploads the host's O).
  sluice_stream_fwd_args gpuFwd = {p,
                                   queries(q.device),
                                   keys(k.device),
                                   keys(v.device),
                                   queries(o.device),
                                   stats(lse.device)};
  sluice_stream_bwd_args gpuBwd = {p,
                                   queries(q.device),
                                   keys(k.device),
                                   keys(v.device),
                                   queries(dO.device),
                                   stats(lse.device),
                                   stats(rowDot.device),
                                   queries(dq.device),
                                   keys(dk.device),
                                   keys(dv.device)};
  bool ok = true;
  for (int arch : {80, 90})
    for (bool fromO : {false, true})
      ok &= arch == 80 ? onGpu<T, 80, HD>(type, c, tolerance, gpuFwd, gpuBwd,
                                          fromO, o, lse, dq, dk, dv)
                       : onGpu<T, 90, HD>(type, c, tolerance, gpuFwd, gpuBwd,
                                          fromO, o, lse, dq, dk, dv);
  return ok;
}

/// Every case for one element type, head dim and architecture's tiles.
template <typename T, int HD>
int runAll(const char *type, double tolerance) {
  const Case cases[] = {
      {2, 3, 1, 1, HD, 0, 0.0},         {2, 3, 7, 7, HD - 3, 1, 0.1},
      {2, 2, 77, 77, HD, 0, 0.1},       {1, 2, 128, 128, HD, 1, 0.0},
      {2, 2, 130, 130, HD - 1, 1, 0.1}, {1, 3, 77, 200, HD, 0, 0.0},
      {1, 3, 200, 77, HD, 1, 0.1},      {1, 2, 256, 256, HD, 0, 0.1},
      {2, 3, 77, 77, HD, 1, 0.1, 1},    {1, 4, 130, 130, HD - 1, 0, 0.0, 1},
  };
  int failures = 0;
  unsigned seed = 1;
  for (const Case &c : cases)
    failures += !runCase<T, HD>(type, c, tolerance, seed++);
  return failures;
}

int runEverything() {
  return runAll<float, 32>("f32", 1e-4) + runAll<float, 64>("f32", 1e-4) +
         runAll<float, 128>("f32", 1e-4) + runAll<sluice_f16, 32>("f16", 2e-2) +
         runAll<sluice_f16, 64>("f16", 2e-2) +
         runAll<sluice_f16, 128>("f16", 2e-2) +
         runAll<sluice_bf16, 64>("bf16", 6e-2) +
         runAll<sluice_bf16, 128>("bf16", 6e-2);
}

/// The median of `repeats` CUDA-event times of `launch` (after warm-ups),
/// in ms; negative if a launch fails.
template <typename Launch>
double medianMs(Launch launch, int repeats) {
  cudaEvent_t start, stop;
  cudaEventCreate(&start);
  cudaEventCreate(&stop);
  std::vector<float> times;
  bool ok = true;
  for (int i = 0; i < repeats + 3 && ok; ++i) {
    cudaEventRecord(start, 0);
    ok = launch() == cudaSuccess;
    cudaEventRecord(stop, 0);
    ok = ok && cudaEventSynchronize(stop) == cudaSuccess;
    float ms = 0;
    cudaEventElapsedTime(&ms, start, stop);
    if (i >= 3)
      times.push_back(ms);
  }
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  if (!ok || times.empty())
    return -1;
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

/// Times the forward and the backward kernels of one case, every tensor
/// laid out [b, l, h, d] as a projection writes it (the layout PyTorch's
/// scaled_dot_product_attention reads through a transpose), with the tiles
/// of ARCH; prints the case's "time" line.
template <typename T, int ARCH, int HD>
void timeCase(const char *type, const Case &c, int repeats) {
  const int64_t count = c.b * c.m * c.h * c.d, rows = c.b * c.h * c.m;
  Buffer<T> q(count), k(count), v(count), o(count), dO(count);
  Buffer<T> dq(count), dk(count), dv(count);
  Buffer<float> lse(rows), rowDot(rows);
  srand(11);
  for (Buffer<T> *x : {&q, &k, &v, &dO}) {
    for (T &e : x->host)
      sluice_stream_detail::narrow(&e, (float)(rand() % 2001 - 1000) / 1000.0f);
    x->upload();
  }
  for (float &e : rowDot.host)
    e = 0;
  rowDot.upload();
  sluice_stream_problem p = problemFor(c, 0x5eedULL);
  auto at = [&](void *data) { return rowsThenHeads(c, c.m, data); };
  auto stats = [&](void *data) { return statistic(c, data); };
  sluice_stream_fwd_args fwd = {p,        at(q.device), at(k.device),
                                at(v.device), at(o.device), stats(lse.device)};
  sluice_stream_bwd_args bwd = {
      p,           at(q.device),  at(k.device),      at(v.device),
      at(dO.device), stats(lse.device), stats(rowDot.device), at(dq.device),
      at(dk.device), at(dv.device)};
  double fwdMs =
      medianMs([&] { return launchForward<T, ARCH, HD>(fwd); }, repeats);
  double givenMs =
      medianMs([&] { return launchBackward<T, ARCH, HD>(bwd); }, repeats);
  bwd.o = fwd.o; // D from O (the forward's), as the modules run it
  double bwdMs =
      medianMs([&] { return launchBackward<T, ARCH, HD>(bwd); }, repeats);
  cudaError_t status = cudaGetLastError();
  printf("time %s b=%lld h=%lld l=%lld d=%lld causal=%d dropout=%g "
         "fwd_ms=%.4f bwd_ms=%.4f bwd_given_d_ms=%.4f tiles=sm_%d%s%s\n",
         type, (long long)c.b, (long long)c.h, (long long)c.m, (long long)c.d,
         c.causal, c.dropout, fwdMs, bwdMs, givenMs, ARCH,
         status == cudaSuccess ? "" : " error=",
         status == cudaSuccess ? "" : cudaGetErrorString(status));
}

template <typename T, int HD>
void timeOnDevice(const char *type, const Case &c, int major, int repeats) {
  if (major >= 9)
    timeCase<T, 90, HD>(type, c, repeats);
  else
    timeCase<T, 80, HD>(type, c, repeats);
}

/// The timed shapes: BERT-large's attention (B8/L512, 16 heads of 64) with
/// and without its dropout, GPT-2-medium's (causal, L1024), and long causal
/// ones with head dim 128 in f16 and bf16.
void timeAll(int repeats) {
  int device = 0, major = 0;
  cudaGetDevice(&device);
  cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device);
  timeOnDevice<sluice_f16, 64>("f16", {8, 16, 512, 512, 64, 0, 0.1}, major,
                               repeats);
  timeOnDevice<sluice_f16, 64>("f16", {8, 16, 512, 512, 64, 0, 0.0}, major,
                               repeats);
  timeOnDevice<sluice_f16, 64>("f16", {8, 16, 1024, 1024, 64, 1, 0.0}, major,
                               repeats);
  timeOnDevice<sluice_f16, 128>("f16", {2, 32, 2048, 2048, 128, 1, 0.0}, major,
                                repeats);
  timeOnDevice<sluice_bf16, 128>("bf16", {2, 32, 4096, 4096, 128, 1, 0.0},
                                 major, repeats);
}

} // namespace

int main(int argc, char **argv) {
  bool timing = argc > 1 && strcmp(argv[1], "--time") == 0;
  if (argc > 2 || (argc == 2 && !timing)) {
    fprintf(stderr, "usage: stream_attention_check [--time]\n");
    return 2;
  }
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    printf("skipped: no CUDA device\n");
    return 0;
  }
  if (timing) {
    timeAll(/*repeats=*/20);
    return 0;
  }
  int failures = runEverything();
  printf("%s: %d failing cases\n", failures ? "FAIL" : "ok", failures);
  return failures ? 1 : 0;
}
