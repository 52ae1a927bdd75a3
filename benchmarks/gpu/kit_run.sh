#!/usr/bin/env bash
# gpu-kit/run.sh OUTDIR: checks and times Sluice's CUDA modules on a GPU
# machine from this directory alone (docs/GPU.md); built by
# benchmarks/gpu/prepare.sh. Needs bash, python3 with numpy (torch for the
# PyTorch timings), the CUDA driver and libraries; compute-sanitizer and ncu
# when present. No MLIR, no network, nothing installed.
#
# Steps, each under its own time limit within a total budget (default 330 s,
# SLUICE_KIT_BUDGET overrides), each recorded even when it fails or times
# out, results written after every step:
#   env          device, driver, tool and torch versions
#   correctness  every CUDA module vs the CPU backend and the reference
#   attention    the CUDA streaming attention kernels vs the C++ ones, then
#                timed against PyTorch's scaled_dot_product_attention
#   sanitizer    compute-sanitizer memcheck, racecheck, synccheck (3 layers)
#   timing       Sluice modules, forward and backward (module_timer)
#   profile      per-kernel times (-DSLUICE_PROFILE modules), copy rate
#   torch        PyTorch eager, then torch.compile, same layers
#   python       the sluice package on CUDA (python/tests/gpu_check.py):
#                layers and a 4-layer stack on one shared scratch vs torch
#   ncu          the three slowest memory-bound kernels, if time is left
# OUTDIR gets gpu-results.json, gpu-results.md and run.log (nothing else).
# Without a GPU it prints "skipped: no GPU ..." and exits 0.
set -uo pipefail
kit="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
out="${1:-}"
if [ -z "$out" ]; then
  echo "usage: bash gpu-kit/run.sh OUTDIR" >&2
  exit 2
fi
mkdir -p "$out" || { echo "error: cannot create $out" >&2; exit 2; }
out="$(cd "$out" && pwd)"

skip() {
  echo "skipped: $*"
  printf '{"skipped": "%s", "steps": {}}\n' "$*" > "$out/gpu-results.json"
  printf '# Sluice GPU kit results\n\nskipped: %s\n' "$*" > "$out/gpu-results.md"
  exit 0
}
command -v nvidia-smi >/dev/null 2>&1 || skip "no GPU (no nvidia-smi)"
gpus="$(timeout 20 nvidia-smi -L 2>&1)"
echo "$gpus" | grep -q "^GPU " || skip "no GPU (nvidia-smi -L lists none)"
# The first python3 with numpy (PATH's may be a bare virtual environment).
python=""
for candidate in "$(command -v python3)" /usr/bin/python3 /usr/local/bin/python3; do
  if [ -n "$candidate" ] && "$candidate" -c "import numpy" 2>/dev/null; then
    python="$candidate"
    break
  fi
done
[ -n "$python" ] || skip "no python3 with numpy"

budget="${SLUICE_KIT_BUDGET:-330}"
start=$(date +%s)
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
log="$out/run.log"
: > "$log"
export PATH="$PATH:/usr/local/cuda/bin"
export PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1
echo "$gpus" | tee -a "$log"

# The modules need libcublas/libcublasLt (CUDA 13). If the loader does not
# find them, look in the toolkit and then in torch's bundled NVIDIA wheels.
module="$(ls "$kit"/cases/*/lib*.so 2>/dev/null | head -1)"
export LD_LIBRARY_PATH="${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}/usr/local/cuda/lib64:/usr/local/cuda/targets/x86_64-linux/lib"
if [ -n "$module" ] && ldd "$module" 2>&1 | grep -q "not found"; then
  extra="$(timeout 30 "$python" - <<'EOF' 2>>"$log"
import glob, os, site
dirs = set()
for base in site.getsitepackages() + [site.getusersitepackages()]:
    for path in glob.glob(os.path.join(base, "nvidia", "**", "libcublas*.so*"),
                          recursive=True):
        dirs.add(os.path.dirname(path))
print(":".join(sorted(dirs)))
EOF
)"
  [ -n "$extra" ] && export LD_LIBRARY_PATH="$LD_LIBRARY_PATH:$extra"
fi
[ -n "$module" ] && { echo "ldd $module:"; ldd "$module"; } >>"$log" 2>&1
"$python" - "$out" <<'EOF' 2>>"$log"
import json, sys, time
with open(sys.argv[1] + "/gpu-results.json", "w") as f:
    json.dump({"started": time.strftime("%Y-%m-%d %H:%M:%S %Z"),
               "steps": {}}, f)
EOF

# step NAME MAX_SECONDS: runs gpu_kit.py NAME with min(MAX, what is left).
step() {
  local name="$1" max="$2"
  local now left limit t0 code
  now=$(date +%s)
  left=$(( start + budget - now - 5 ))
  limit=$(( max < left ? max : left ))
  if [ "$limit" -lt 10 ]; then
    echo "== $name: skipped, no time left" | tee -a "$log"
    "$python" "$kit/py/gpu_kit.py" note "$name" skipped 0 \
      "no time left in the run's budget" --out "$out" 2>>"$log"
    return
  fi
  echo "== [$(( now - start ))s] $name (limit ${limit}s)" | tee -a "$log"
  t0=$(date +%s)
  timeout -k 5 $(( limit + 10 )) "$python" "$kit/py/gpu_kit.py" "$name" \
    --kit "$kit" --out "$out" --work "$work" --budget "$limit" >>"$log" 2>&1
  code=$?
  if [ "$code" = 124 ] || [ "$code" = 137 ]; then
    "$python" "$kit/py/gpu_kit.py" note "$name" "timed out" \
      $(( $(date +%s) - t0 )) "killed after ${limit}s" --out "$out" 2>>"$log"
  fi
  tail -n 1 "$log"
}

step env 40
step correctness 90
step attention 60
step sanitizer 80
step timing 40
step profile 45
step torch 170
step python 60
step ncu 60
echo "done in $(( $(date +%s) - start ))s; results in $out/gpu-results.md" |
  tee -a "$log"
exit 0
