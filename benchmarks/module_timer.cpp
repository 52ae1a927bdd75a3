//===- module_timer.cpp - time an emitted module's phases -----------------===//
//
// module_timer LIB [--iterations N] [--warmup W] [--seed S] [--copy-bytes B]
//              [--time-limit SECONDS] [--clock wall|cpu]
//              [--init fan-in|uniform] [--show-init]
//
// Opens a module compiled by `sluicec --compile` (dlopen, generic entry
// points only), fills its inputs with random values (--init: fan-in, the
// default, scales them as a framework initializes a layer; uniform draws
// U(-0.5, 0.5) for all; --show-init prints how each input would be drawn,
// its role and distribution, and runs nothing), and runs
// forward then backward (training) N times, as the ABI allows (one forward,
// then its backward, per context). Prints one JSON object: per phase the
// median / min / max milliseconds, and, when the module exports the optional
// profiling hook (docs/Compile.md),
//   int sluice_profile(const void *ctx, int phase, int capacity,
//                      const char **names, double *milliseconds);
// the median time of every kernel; the outputs of the last run that hold a
// NaN or an infinity ("nonfinite_outputs"); with --copy-bytes B, the median
// rate of a B-byte copy between two buffers of the same memory, counted as
// 2 B bytes moved per copy ("copy_gbs", the yardstick for the kernels'
// bandwidth; on the host split over the OpenMP threads when built with
// -fopenmp); every sample ("samples_ms") and the median of the per-iteration
// totals ("total_median_ms"). Compiled by the host compiler for a CPU
// module; with
// -DSLUICE_TIMER_CUDA by nvcc for a CUDA module (tensors in device memory,
// CUDA events on one stream around each phase and each copy). With
// --time-limit, no iteration starts once that many seconds have passed
// since the first one and at least one was timed: "iterations" is then the
// number timed and "time_limited" is true. With --clock cpu (host only),
// phases and the copy are timed in the process's CPU time instead of the
// steady clock ("clock": "cpu"): on a shared machine, a one-thread run
// then measures what it would take on a core of its own (a module built
// with -DSLUICE_PROFILE_CPU_TIME times its kernels the same way).
//
//===----------------------------------------------------------------------===//

#include <dlfcn.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <map>
#include <random>
#include <string>
#include <vector>

#ifdef SLUICE_TIMER_CUDA
#include <cuda_runtime.h>
#endif
#ifdef _OPENMP
#include <omp.h>
#endif

namespace {

struct TensorInfo {
  const char *name;
  int dtype;
  int rank;
  const int64_t *dims;
  int is_output;
};

struct Module {
  const char *(*moduleName)();
  int (*numPhases)();
  int (*numTensors)(int);
  const TensorInfo *(*tensor)(int, int);
  int (*create)(void **);
  void (*destroy)(void *);
  const char *(*lastError)(const void *);
  int (*run)(void *, int, void *const *, uint64_t, void *);
  int (*profile)(const void *, int, int, const char **, double *);
};

[[noreturn]] void die(const std::string &message) {
  std::fprintf(stderr, "module_timer: error: %s\n", message.c_str());
  std::exit(1);
}

template <typename T>
void resolve(void *handle, T &slot, const char *symbol, bool required) {
  slot = reinterpret_cast<T>(dlsym(handle, symbol));
  if (!slot && required)
    die(std::string("the module does not export '") + symbol + "'");
}

uint16_t toHalf(float f) {
  // Round to nearest even; the values here are small normal numbers.
  uint32_t bits;
  std::memcpy(&bits, &f, 4);
  uint32_t sign = (bits >> 16) & 0x8000u;
  int exponent = static_cast<int>((bits >> 23) & 0xff) - 112;
  if (exponent <= 0)
    return static_cast<uint16_t>(sign);
  uint32_t mantissa = bits & 0x7fffff;
  uint32_t half =
      sign | (static_cast<uint32_t>(exponent) << 10) | (mantissa >> 13);
  uint32_t rest = mantissa & 0x1fff;
  if (rest > 0x1000 || (rest == 0x1000 && (half & 1)))
    ++half;
  return static_cast<uint16_t>(half);
}

uint16_t toBFloat(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, 4);
  bits += 0x7fff + ((bits >> 16) & 1);
  return static_cast<uint16_t>(bits >> 16);
}

/// How module inputs are filled (--init).
enum class Init {
  /// As a framework initializes a layer (torch_layer_timer.py's PyTorch
  /// layer), by the input's role (fanInDraw): weights U(-1/sqrt(in),
  /// 1/sqrt(in)) as torch.nn.Linear's default, `in` the size of the dims
  /// the weight contracts with its activation; biases and layer-norm
  /// parameters U(-0.05, 0.05) (scales 1 + that); activations and gradients
  /// N(0, 0.5^2) as the torch timer's x and dy. Pre-activations and
  /// attention scores then stay O(1), as in training.
  FanIn,
  /// Every value U(-0.5, 0.5) (scales 1 + that), whatever its fan-in: the
  /// earlier default. Weights of a 1024-wide layer then give
  /// pre-activations near 8 and attention scores in the hundreds, whose
  /// exponentials are subnormal (microcoded on some CPUs), so memory-bound
  /// kernels are timed on inputs no training run sees.
  Uniform,
};

/// The distribution one input is drawn from.
struct Draw {
  enum Kind { Normal, Uniform } kind;
  float spread; // the standard deviation, or the bound of U(-b, b)
  float offset; // added to every value (1 for scales)
  std::string role;
};

/// What input `info` is, from its place in the layer's signature (the
/// module ABI has names and dims, not roles; `first` is phase 0's first
/// input, x [batch, seq, width]):
/// * an activation or gradient (x, y, dy): rank >= 3 with x's batch and
///   sequence as its first two dims;
/// * a scale: a name with "scale" (layer-norm gains);
/// * a bias: rank 1, or a name starting with 'b' (bq is [heads, head_dim]);
/// * otherwise a weight. Its fan-in: a weight whose first dim is the
///   layer's width reads everything after it (wo [width, heads, head_dim],
///   w2 [width, ffn]); any other reads its last dim (wq [heads, head_dim,
///   width], w1 [ffn, width]) -- the [out, in] convention with the
///   projections' head dims kept apart. Counting only rank-2 inputs as
///   weights, as the timer once did, drew the rank-3 attention weights as
///   activations: scores in the tens, softmax probabilities below 2^-126,
///   and subnormal arithmetic timed instead of the layer (docs/Compile.md).
bool isScale(const TensorInfo &info) {
  return std::strstr(info.name, "scale") != nullptr;
}

Draw fanInDraw(const TensorInfo &info, const TensorInfo &first) {
  bool activation = info.rank >= 3 && first.rank >= 3 &&
                    info.dims[0] == first.dims[0] &&
                    info.dims[1] == first.dims[1];
  if (activation || std::strcmp(info.name, first.name) == 0)
    return {Draw::Normal, 0.5f, 0.0f, "activation"};
  if (isScale(info))
    return {Draw::Uniform, 0.05f, 1.0f, "scale"};
  if (info.rank <= 1 || info.name[0] == 'b')
    return {Draw::Uniform, 0.05f, 0.0f, "bias"};
  int64_t width = first.rank > 0 ? first.dims[first.rank - 1] : 0;
  int64_t in = info.dims[info.rank - 1];
  if (info.dims[0] == width) {
    in = 1;
    for (int d = 1; d < info.rank; ++d)
      in *= info.dims[d];
  }
  return {Draw::Uniform, 1.0f / std::sqrt(static_cast<float>(in > 0 ? in : 1)),
          0.0f, "weight, fan-in " + std::to_string(in)};
}

Draw drawFor(const TensorInfo &info, const TensorInfo &first, Init init) {
  if (init == Init::FanIn)
    return fanInDraw(info, first);
  return {Draw::Uniform, 0.5f, isScale(info) ? 1.0f : 0.0f, "any"};
}

/// Host bytes of `count` values in `dtype` (0 f32, 1 f16, 2 bf16) drawn
/// from `draw`.
std::vector<uint8_t> randomBytes(int64_t count, int dtype, const Draw &draw,
                                 std::mt19937 &rng) {
  std::normal_distribution<float> normal(0.0f, draw.spread);
  std::uniform_real_distribution<float> uniform(-draw.spread, draw.spread);
  int width = dtype == 0 ? 4 : 2;
  std::vector<uint8_t> bytes(count * width);
  for (int64_t i = 0; i < count; ++i) {
    float value =
        (draw.kind == Draw::Normal ? normal(rng) : uniform(rng)) + draw.offset;
    if (dtype == 0) {
      std::memcpy(&bytes[i * 4], &value, 4);
    } else {
      uint16_t half = dtype == 1 ? toHalf(value) : toBFloat(value);
      std::memcpy(&bytes[i * 2], &half, 2);
    }
  }
  return bytes;
}

#ifdef SLUICE_TIMER_CUDA
void check(cudaError_t status, const char *what) {
  if (status != cudaSuccess)
    die(std::string(what) + ": " + cudaGetErrorString(status));
}
#endif

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  size_t n = values.size();
  return n % 2 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
}

/// An output tensor of the module: name, dtype code, bytes.
struct Output {
  std::string name;
  int dtype;
  size_t bytes;
};

/// Whether every value of `dtype` (0 f32, 1 f16, 2 bf16) in `bytes` is
/// finite: an all-ones exponent is a NaN or an infinity.
bool allFinite(const std::vector<uint8_t> &bytes, int dtype) {
  if (dtype == 0) {
    for (size_t i = 0; i + 4 <= bytes.size(); i += 4) {
      float value;
      std::memcpy(&value, &bytes[i], 4);
      if (!std::isfinite(value))
        return false;
    }
    return true;
  }
  uint16_t exponent = dtype == 1 ? 0x7c00 : 0x7f80;
  for (size_t i = 0; i + 2 <= bytes.size(); i += 2) {
    uint16_t half;
    std::memcpy(&half, &bytes[i], 2);
    if ((half & exponent) == exponent)
      return false;
  }
  return true;
}

/// Host milliseconds: the steady clock, or with --cpu-time the process's
/// CPU time (what a single-threaded run takes on a core of its own, even
/// when other processes share the machine).
bool useCpuTime = false;
double hostMs() {
  if (useCpuTime) {
    timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return t.tv_sec * 1e3 + t.tv_nsec * 1e-6;
  }
  return std::chrono::duration<double, std::milli>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

/// Threads the host copy uses: OpenMP's when module_timer is built with
/// -fopenmp (as the CPU modules are), else 1.
int copyThreads() {
#ifdef _OPENMP
  return omp_get_max_threads();
#else
  return 1;
#endif
}

/// memcpy of `bytes`, split into one contiguous slice per thread, so the
/// yardstick uses the cores the modules' kernels use.
void parallelCopy(uint8_t *to, const uint8_t *from, uint64_t bytes) {
#ifdef _OPENMP
#pragma omp parallel
  {
    uint64_t threads = omp_get_num_threads(), t = omp_get_thread_num();
    uint64_t slice = (bytes / threads + 63) / 64 * 64;
    uint64_t begin = std::min<uint64_t>(bytes, t * slice);
    uint64_t end = std::min<uint64_t>(bytes, begin + slice);
    std::memcpy(to + begin, from + begin, end - begin);
  }
#else
  std::memcpy(to, from, bytes);
#endif
}

/// The median rate in GB/s of copying `bytes` between two buffers of the
/// memory the module's tensors live in (device-to-device on the stream for
/// CUDA), counting the bytes read and written: 2 * bytes per copy.
double copyRate(uint64_t bytes, int iterations, void *stream) {
  std::vector<double> times;
#ifdef SLUICE_TIMER_CUDA
  cudaStream_t cudaStream = static_cast<cudaStream_t>(stream);
  void *from = nullptr, *to = nullptr;
  check(cudaMalloc(&from, bytes), "cudaMalloc (copy source)");
  check(cudaMalloc(&to, bytes), "cudaMalloc (copy target)");
  check(cudaMemset(from, 1, bytes), "cudaMemset");
  cudaEvent_t start, stop;
  check(cudaEventCreate(&start), "cudaEventCreate");
  check(cudaEventCreate(&stop), "cudaEventCreate");
  for (int i = 0; i < iterations + 2; ++i) {
    check(cudaEventRecord(start, cudaStream), "cudaEventRecord");
    check(
        cudaMemcpyAsync(to, from, bytes, cudaMemcpyDeviceToDevice, cudaStream),
        "cudaMemcpyAsync (device to device)");
    check(cudaEventRecord(stop, cudaStream), "cudaEventRecord");
    check(cudaEventSynchronize(stop), "cudaEventSynchronize");
    float ms;
    check(cudaEventElapsedTime(&ms, start, stop), "cudaEventElapsedTime");
    if (i >= 2)
      times.push_back(ms);
  }
  check(cudaFree(from), "cudaFree");
  check(cudaFree(to), "cudaFree");
#else
  (void)stream;
  std::vector<uint8_t> from(bytes, 1), to(bytes, 0);
  for (int i = 0; i < iterations + 2; ++i) {
    double begin = hostMs();
    parallelCopy(to.data(), from.data(), bytes);
    double ms = hostMs() - begin;
    if (i >= 2)
      times.push_back(ms);
  }
#endif
  double ms = median(times);
  return ms > 0 ? 2.0 * bytes / (ms * 1e-3) / 1e9 : 0.0;
}

std::string jsonString(const std::string &text) {
  std::string out = "\"";
  for (char c : text)
    out += (c == '"' || c == '\\') ? std::string("\\") + c : std::string(1, c);
  return out + "\"";
}

} // namespace

int main(int argc, char **argv) {
  if (argc < 2)
    die("usage: module_timer LIB [--iterations N] [--warmup W] [--seed S] "
        "[--clock wall|cpu] [--init fan-in|uniform] "
        "[--copy-bytes B] [--time-limit SECONDS] [--show-init]");
  const char *path = argv[1];
  int iterations = 20, warmup = 3;
  uint64_t seed = 1, copyBytes = 0;
  double timeLimit = 0; // seconds, 0: none
  Init init = Init::FanIn;
  bool showInit = false;
  for (int i = 2; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--show-init") {
      showInit = true;
      continue;
    }
    if (i + 1 >= argc)
      die("option '" + arg + "' needs a value");
    if (arg == "--iterations")
      iterations = std::atoi(argv[++i]);
    else if (arg == "--warmup")
      warmup = std::atoi(argv[++i]);
    else if (arg == "--seed")
      seed = std::strtoull(argv[++i], nullptr, 10);
    else if (arg == "--copy-bytes")
      copyBytes = std::strtoull(argv[++i], nullptr, 10);
    else if (arg == "--time-limit")
      timeLimit = std::atof(argv[++i]);
    else if (arg == "--init") {
      std::string name = argv[++i];
      if (name != "fan-in" && name != "uniform")
        die("--init must be 'fan-in' or 'uniform', not '" + name + "'");
      init = name == "fan-in" ? Init::FanIn : Init::Uniform;
    } else if (arg == "--clock") {
      std::string clock = argv[++i];
      if (clock != "wall" && clock != "cpu")
        die("--clock must be 'wall' or 'cpu', not '" + clock + "'");
      useCpuTime = clock == "cpu";
    } else
      die("unknown option '" + arg + "'");
  }
  if (iterations < 1 || warmup < 0)
    die("--iterations must be at least 1 and --warmup at least 0");

  void *handle = dlopen(path, RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
  if (!handle)
    die(std::string("cannot load '") + path + "': " + dlerror());
  Module m;
  resolve(handle, m.moduleName, "sluice_module_name", true);
  resolve(handle, m.numPhases, "sluice_num_phases", true);
  resolve(handle, m.numTensors, "sluice_num_tensors", true);
  resolve(handle, m.tensor, "sluice_tensor", true);
  resolve(handle, m.create, "sluice_create", true);
  resolve(handle, m.destroy, "sluice_destroy", true);
  resolve(handle, m.lastError, "sluice_last_error", true);
  resolve(handle, m.run, "sluice_run", true);
  resolve(handle, m.profile, "sluice_profile", false);

  // x [batch, seq, width], what fanInDraw tells the other inputs' roles by.
  const TensorInfo *first = m.numTensors(0) > 0 ? m.tensor(0, 0) : nullptr;
  if (!first || !first->name)
    die("the module's forward has no described first input");

  // --show-init: how each input would be drawn, one line each, and no run.
  if (showInit) {
    std::map<std::string, bool> shown;
    for (int phase = 0; phase < m.numPhases(); ++phase)
      for (int index = 0; index < m.numTensors(phase); ++index) {
        const TensorInfo *info = m.tensor(phase, index);
        if (!info || !info->name || info->is_output || shown[info->name])
          continue;
        shown[info->name] = true;
        Draw draw = drawFor(*info, *first, init);
        const char *offset = draw.offset != 0.0f ? "1 + " : "";
        if (draw.kind == Draw::Normal)
          std::printf("%s: %s, %sN(0, %.6g^2)\n", info->name, draw.role.c_str(),
                      offset, draw.spread);
        else
          std::printf("%s: %s, %sU(-%.6g, %.6g)\n", info->name,
                      draw.role.c_str(), offset, draw.spread, draw.spread);
      }
    return 0;
  }

  // One buffer per tensor name, shared by the phases (y feeds backward).
  std::mt19937 rng(1234);
  std::map<std::string, void *> buffers;
  int phases = m.numPhases();
  if (phases < 1 || phases > 2)
    die("the module declares " + std::to_string(phases) + " phases");
  std::vector<std::vector<void *>> arguments(phases);
  uint64_t boundaryBytes = 0;
  std::vector<Output> outputs;
  for (int phase = 0; phase < phases; ++phase) {
    for (int index = 0; index < m.numTensors(phase); ++index) {
      const TensorInfo *info = m.tensor(phase, index);
      if (!info || !info->name)
        die("tensor " + std::to_string(index) + " of phase " +
            std::to_string(phase) + " has no description");
      auto it = buffers.find(info->name);
      if (it == buffers.end()) {
        int64_t count = 1;
        for (int d = 0; d < info->rank; ++d)
          count *= info->dims[d];
        std::vector<uint8_t> host =
            info->is_output
                ? std::vector<uint8_t>(count * (info->dtype == 0 ? 4 : 2), 0)
                : randomBytes(count, info->dtype, drawFor(*info, *first, init),
                              rng);
        boundaryBytes += host.size();
        if (info->is_output)
          outputs.push_back({info->name, info->dtype, host.size()});
        void *buffer = nullptr;
#ifdef SLUICE_TIMER_CUDA
        check(cudaMalloc(&buffer, host.size()), "cudaMalloc");
        check(cudaMemcpy(buffer, host.data(), host.size(),
                         cudaMemcpyHostToDevice),
              "cudaMemcpy");
#else
        buffer = std::malloc(host.size());
        if (!buffer)
          die("out of memory");
        std::memcpy(buffer, host.data(), host.size());
#endif
        it = buffers.emplace(info->name, buffer).first;
      }
      arguments[phase].push_back(it->second);
    }
  }

  void *ctx = nullptr;
  if (int status = m.create(&ctx))
    die("sluice_create: status " + std::to_string(status) + ": " +
        (ctx ? m.lastError(ctx) : ""));
  void *stream = nullptr;
#ifdef SLUICE_TIMER_CUDA
  cudaStream_t cudaStream;
  check(cudaStreamCreate(&cudaStream), "cudaStreamCreate");
  stream = cudaStream;
  cudaEvent_t start, stop;
  check(cudaEventCreate(&start), "cudaEventCreate");
  check(cudaEventCreate(&stop), "cudaEventCreate");
#endif

  std::vector<std::vector<double>> times(phases);
  std::vector<std::map<std::string, std::vector<double>>> kernelTimes(phases);
  std::vector<std::vector<std::string>> kernelOrder(phases);
  auto loopStart = std::chrono::steady_clock::now();
  bool timeLimited = false;
  for (int iteration = 0; iteration < warmup + iterations; ++iteration) {
    if (timeLimit > 0 && iteration > warmup &&
        std::chrono::duration<double>(std::chrono::steady_clock::now() -
                                      loopStart)
                .count() > timeLimit) {
      timeLimited = true;
      break;
    }
    for (int phase = 0; phase < phases; ++phase) {
#ifdef SLUICE_TIMER_CUDA
      check(cudaEventRecord(start, cudaStream), "cudaEventRecord");
#else
      double begin = hostMs();
#endif
      int status = m.run(ctx, phase, arguments[phase].data(), seed, stream);
      if (status)
        die("sluice_run phase " + std::to_string(phase) + ": status " +
            std::to_string(status) + ": " + m.lastError(ctx));
      double ms;
#ifdef SLUICE_TIMER_CUDA
      check(cudaEventRecord(stop, cudaStream), "cudaEventRecord");
      check(cudaEventSynchronize(stop), "cudaEventSynchronize");
      float elapsed;
      check(cudaEventElapsedTime(&elapsed, start, stop),
            "cudaEventElapsedTime");
      ms = elapsed;
#else
      ms = hostMs() - begin;
#endif
      if (iteration < warmup)
        continue;
      times[phase].push_back(ms);
      if (!m.profile)
        continue;
      const char *names[4096];
      double kernelMs[4096];
      int count = m.profile(ctx, phase, 4096, names, kernelMs);
      for (int k = 0; k < count && k < 4096; ++k) {
        auto &series = kernelTimes[phase][names[k]];
        if (series.empty())
          kernelOrder[phase].push_back(names[k]);
        series.push_back(kernelMs[k]);
      }
    }
  }

  // The last run's outputs: a NaN or an infinity is a broken module even
  // when it is fast.
  std::vector<std::string> nonfinite;
  for (const Output &output : outputs) {
    std::vector<uint8_t> host(output.bytes);
    void *buffer = buffers[output.name];
#ifdef SLUICE_TIMER_CUDA
    check(cudaMemcpy(host.data(), buffer, output.bytes, cudaMemcpyDeviceToHost),
          "cudaMemcpy (output to the host)");
#else
    std::memcpy(host.data(), buffer, output.bytes);
#endif
    if (!allFinite(host, output.dtype))
      nonfinite.push_back(output.name);
  }
  double copyGBs = copyBytes ? copyRate(copyBytes, iterations, stream) : 0.0;

  std::string device = "host CPU";
  double peakGBs = 0; // unknown on the host
#ifdef SLUICE_TIMER_CUDA
  // Peak DRAM bandwidth: 2 transfers per memory clock (DDR) x bus width.
  // (cudaDeviceProp::memoryClockRate is gone in CUDA 13; the attribute is
  // not.)
  int deviceIndex = 0, clockKHz = 0, busBits = 0;
  check(cudaGetDevice(&deviceIndex), "cudaGetDevice");
  cudaDeviceProp properties;
  check(cudaGetDeviceProperties(&properties, deviceIndex),
        "cudaGetDeviceProperties");
  check(cudaDeviceGetAttribute(&clockKHz, cudaDevAttrMemoryClockRate,
                               deviceIndex),
        "cudaDeviceGetAttribute");
  check(cudaDeviceGetAttribute(&busBits, cudaDevAttrGlobalMemoryBusWidth,
                               deviceIndex),
        "cudaDeviceGetAttribute");
  device = properties.name;
  peakGBs = 2.0 * clockKHz * 1e3 * (busBits / 8.0) / 1e9;
#endif
  std::printf("{\"module\": %s, \"device\": %s, \"peak_gbs\": %.1f, "
              "\"iterations\": %d, \"boundary_bytes\": %llu, \"phases\": [",
              jsonString(m.moduleName()).c_str(), jsonString(device).c_str(),
              peakGBs, static_cast<int>(times[0].size()),
              static_cast<unsigned long long>(boundaryBytes));
  for (int phase = 0; phase < phases; ++phase) {
    const std::vector<double> &t = times[phase];
    std::printf("%s\n  {\"phase\": \"%s\", \"median_ms\": %.6f, \"min_ms\": "
                "%.6f, \"max_ms\": %.6f, \"samples_ms\": [",
                phase ? "," : "", phase ? "backward" : "forward", median(t),
                *std::min_element(t.begin(), t.end()),
                *std::max_element(t.begin(), t.end()));
    for (size_t i = 0; i < t.size(); ++i)
      std::printf("%s%.6f", i ? ", " : "", t[i]);
    std::printf("], \"kernels\": [");
    for (size_t k = 0; k < kernelOrder[phase].size(); ++k) {
      const std::string &name = kernelOrder[phase][k];
      std::printf("%s{\"name\": %s, \"median_ms\": %.6f}", k ? ", " : "",
                  jsonString(name).c_str(), median(kernelTimes[phase][name]));
    }
    std::printf("]}");
  }
  // Per-iteration totals of all phases (their median is not the sum of
  // the phases' medians).
  std::vector<double> totals(times[0].size(), 0.0);
  for (const std::vector<double> &t : times)
    for (size_t i = 0; i < t.size() && i < totals.size(); ++i)
      totals[i] += t[i];
  std::printf("], \"total_median_ms\": %.6f, \"time_limited\": %s, "
              "\"copy_bytes\": %llu, ",
              median(totals), timeLimited ? "true" : "false",
              static_cast<unsigned long long>(copyBytes));
  std::printf("\"clock\": \"%s\", \"copy_threads\": %d, \"copy_gbs\": %.1f, "
              "\"init\": \"%s\", \"nonfinite_outputs\": [",
              useCpuTime ? "cpu" : "wall", copyThreads(), copyGBs,
              init == Init::FanIn ? "fan-in" : "uniform");
  for (size_t i = 0; i < nonfinite.size(); ++i)
    std::printf("%s%s", i ? ", " : "", jsonString(nonfinite[i]).c_str());
  std::printf("]}\n");

  m.destroy(ctx);
  for (auto &entry : buffers) {
#ifdef SLUICE_TIMER_CUDA
    cudaFree(entry.second);
#else
    std::free(entry.second);
#endif
  }
  return 0;
}
