#!/usr/bin/env bash
# GPU benchmark and tests, for a machine with an NVIDIA GPU (H100/H200) and
# no internet: uses only the repository and what is installed (no apt).
#   1. skips cleanly (exit 0, "skipped: ...") without a GPU, nvcc, cmake,
#      ninja or MLIR 22;
#   2. builds sluicec and sluice-opt into build-gpu/ (all cores);
#   3. runs the GPU and compile lit tests (test/Compile: gpu.test, the
#      CUDA/CPU module tests);
#   4. compiles examples/bert-large.json for this GPU's sm_XX and times
#      forward and backward with benchmarks/module_timer.cpp built by nvcc
#      (CUDA events on one stream around each phase, median of N), printing
#      the bytes of the memory-bound kernels (report.json) per phase time
#      and, if the module exports sluice_profile, per kernel, as a fraction
#      of the peak DRAM bandwidth (cudaDevAttrMemoryClockRate x bus width);
#   5. with nsys installed, the per-kernel GPU time summary of a short run.
# Each step has a time limit so the whole script stays under 8 minutes.
# Usage: benchmarks/gpu/run.sh [iterations]   (default 50)
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
iterations="${1:-50}"
build="$root/build-gpu"
python=/usr/bin/python3
start=$(date +%s)
elapsed() { echo "$(( $(date +%s) - start ))s"; }
skip() { echo "skipped: $*"; exit 0; }
step() { echo; echo "== [$(elapsed)] $*"; }

command -v nvidia-smi >/dev/null 2>&1 || skip "no nvidia-smi (no GPU driver)"
gpus="$(nvidia-smi -L 2>/dev/null)"
echo "$gpus" | grep -q "GPU " || skip "no GPU: nvidia-smi -L lists none"
echo "$gpus"
nvcc="${SLUICE_NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}"
[ -x "$nvcc" ] || skip "no nvcc (set SLUICE_NVCC)"
export SLUICE_NVCC="$nvcc"
for tool in cmake ninja "$python"; do
  command -v "$tool" >/dev/null 2>&1 || skip "no $tool"
done
[ -d /usr/lib/llvm-22/lib/cmake/mlir ] || skip "no MLIR 22 (/usr/lib/llvm-22)"
[ -x /usr/lib/llvm-22/bin/lit ] || skip "no lit (/usr/lib/llvm-22/bin/lit)"
cap="$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader | head -1 | tr -d ' .')"
arch="sm_${cap:-80}"
echo "nvcc: $nvcc; target: $arch; $(nproc) cores"

step "build ($build)"
if [ ! -f "$build/build.ninja" ]; then
  timeout 120 cmake -G Ninja -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release >/dev/null ||
    { echo "error: cmake failed"; exit 1; }
fi
timeout 300 ninja -C "$build" sluicec sluice-opt >/dev/null ||
  { echo "error: build failed (rerun: ninja -C $build)"; exit 1; }

status=0
step "GPU and module tests (lit test/Compile, gpu.test must PASS, not be UNSUPPORTED)"
timeout 240 /usr/lib/llvm-22/bin/lit -sv "$build/test/Compile" \
  --filter 'gpu|cuda-module|cpu-module|cpu-vs-reference-post_relu' 2>&1 | tail -15
[ "${PIPESTATUS[0]}" = 0 ] || { echo "error: lit failed"; status=1; }

step "bert-large: compile for $arch"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
timeout 240 "$root/build-gpu/bin/sluicec" "$root/examples/bert-large.json" -o "$work/bl" \
  --compile --no-cpu --cuda-arch "$arch" --quiet || { echo "error: sluicec --compile failed"; exit 1; }
timeout 120 "$nvcc" -O2 -std=c++17 -DSLUICE_TIMER_CUDA -x cu "$root/benchmarks/module_timer.cpp" \
  -o "$work/module_timer" -ldl || { echo "error: cannot build module_timer"; exit 1; }

step "bert-large: forward and backward, median of $iterations (CUDA events)"
timeout 180 "$work/module_timer" "$work/bl/libbert-large.so" --iterations "$iterations" \
  --warmup 5 > "$work/timer.json" || { echo "error: module_timer failed"; cat "$work/timer.json"; exit 1; }
$python "$root/benchmarks/timings.py" kernels "$work/timer.json" "$work/bl/report.json"

if command -v nsys >/dev/null 2>&1; then
  step "bert-large: per-kernel GPU times (nsys, 5 iterations)"
  timeout 150 nsys profile -o "$work/profile" --force-overwrite=true --stats=false \
    "$work/module_timer" "$work/bl/libbert-large.so" --iterations 5 --warmup 1 >/dev/null 2>&1 &&
    timeout 60 nsys stats --report cuda_gpu_kern_sum --format column "$work/profile.nsys-rep" 2>/dev/null |
      head -60 || echo "(nsys failed; no per-kernel table)"
else
  echo "(nsys not installed: per-kernel times only through sluice_profile)"
fi
echo
echo "done in $(elapsed)"
exit $status
