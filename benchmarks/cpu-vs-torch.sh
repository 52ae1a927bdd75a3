#!/usr/bin/env bash
# Sluice's CPU module vs PyTorch eager on the same training layer, in one run.
#
# For BERT-base (post-LN, gelu, batch 4, seq 128) and GPT-2-medium shapes
# (pre-LN, causal, gelu_tanh, batch 2, seq 256), f32, training, dropout 0.1
# (docs/SpecFormat.md semantics; torch_layer_timer.py builds the same layer
# as torch.nn.TransformerEncoderLayer): compiles the CPU module with sluicec
# (fused, a -DSLUICE_PROFILE build of it, and --fuse=off), then for ROUNDS
# rounds and 1 and 2 threads runs the Sluice module and PyTorch alternately,
# N iterations each (forward then backward). Prints per layer and thread
# count the medians over all samples of forward, backward and total, and
# torch / Sluice; then per phase the time in GEMMs, in attention and the rest
# for both, with torch / Sluice per column (shares from the profile builds'
# kernels and from torch.profiler over 3 more torch iterations after each
# run's timed ones, torch_layer_timer.py --split, applied to the medians
# above); then, from the profile builds, each memory-bound kernel's
# bandwidth (bytes from report.json) as a fraction of a copy measured in the
# same process, the bytes-weighted mean fraction and all their bytes over
# all their time (a fraction of the copy too), and the memory-bound kernels'
# total time fused vs --fuse=off, also like for like (without the unfused
# kernels whose ops the fused build runs inside GEMM kernels: bias adds as
# epilogues, bias gradients, timed there as the GEMM's); memory-bound =
# every kernel whose report class is not "contraction" (cpu_vs_torch.py);
# at 1 thread those are timed in process CPU
# time (module_timer --clock cpu), at 2 threads by the steady clock; the
# profile runs repeat ROUNDS times (each round's bytes-weighted fraction
# and fused/unfused ratio, and their medians, are printed).
# benchmarks/README.md.
#
# Usage: benchmarks/cpu-vs-torch.sh [build-dir] [iterations] [rounds]
#   defaults: build, 10, 3. SLUICE_BENCH_LAYERS="bert gpt2" picks layers.
#   sluicec options in SLUICE_BENCH_FLAGS (default --cpu-arch=native:
#   sluicec's defaults otherwise, streaming attention included;
#   docs/Codegen.md). SLUICE_BENCH_INIT=uniform fills the Sluice module's
#   inputs with U(-0.5, 0.5) instead of the default fan-in scaling that
#   matches the PyTorch layer's initialization (module_timer --init).
# Run it under `nice -n -5` on a shared machine and quote medians.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="$(cd "${1:-$root/build}" && pwd)"
iterations="${2:-10}"
rounds="${3:-3}"
init="${SLUICE_BENCH_INIT:-fan-in}"
layers="${SLUICE_BENCH_LAYERS:-bert gpt2}"
# Built and run here, so -march=native unless told otherwise.
read -r -a extra_flags <<<"${SLUICE_BENCH_FLAGS:---cpu-arch=native}"
sluicec="$build/bin/sluicec"
[ -x "$sluicec" ] || { echo "error: $sluicec not built (run: make build)" >&2; exit 1; }
# Debian's interpreter: python3-torch lives there (not in a pyenv/venv).
python=/usr/bin/python3
if ! "$python" -c 'import torch' 2>/dev/null; then
  echo "cpu-vs-torch: installing python3-torch (Debian)" >&2
  sudo_cmd=""
  [ "$(id -u)" = 0 ] || sudo_cmd="sudo"
  $sudo_cmd apt-get -o DPkg::Lock::Timeout=600 install -y -qq \
    --no-install-recommends python3-torch >&2
fi
cxx="${SLUICE_CXX:-${CXX:-c++}}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

"$cxx" -O2 -std=c++17 -fopenmp "$root/benchmarks/module_timer.cpp" \
  -o "$work/module_timer" -ldl

spec_of() { # layer -> spec JSON
  case "$1" in
  bert) cat <<'EOF'
{"name": "bert_base_b4s128", "layer": "encoder", "norm": "post", "causal": false,
 "dims": {"batch": 4, "seq": 128, "heads": 12, "head_dim": 64, "embed": 768, "ffn": 3072},
 "activation": "gelu", "dropout": {"attention": 0.1, "residual": 0.1, "activation": 0.1},
 "layernorm_eps": 1e-12, "dtype": "f32", "training": true}
EOF
    ;;
  gpt2) cat <<'EOF'
{"name": "gpt2_medium_b2s256", "layer": "encoder", "norm": "pre", "causal": true,
 "dims": {"batch": 2, "seq": 256, "heads": 16, "head_dim": 64, "embed": 1024, "ffn": 4096},
 "activation": "gelu_tanh", "dropout": {"attention": 0.1, "residual": 0.1, "activation": 0.1},
 "layernorm_eps": 1e-5, "dtype": "f32", "training": true}
EOF
    ;;
  *) echo "error: unknown layer '$1' (bert, gpt2)" >&2; exit 1 ;;
  esac
}

echo "cpu-vs-torch: $iterations iterations x $rounds rounds per thread count," \
  "$(getconf _NPROCESSORS_ONLN) cores, load average $(cut -d' ' -f1-3 /proc/loadavg)," \
  "$(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo '?')," \
  "sluicec flags: ${extra_flags[*]:-(none)}"
for layer in $layers; do
  spec_of "$layer" > "$work/$layer.json"
  name="$($python -c 'import json,sys; print(json.load(open(sys.argv[1]))["name"])' "$work/$layer.json")"
  start=$(date +%s)
  "$sluicec" "$work/$layer.json" -o "$work/$layer-on" --compile --no-cuda --quiet "${extra_flags[@]}"
  # Profile builds, fused and unfused, timing kernels with the steady clock
  # (2 threads) and in process CPU time (1 thread: what a core of its own
  # would take, whatever else runs on the machine).
  for clock in wall cpu; do
    flags=-DSLUICE_PROFILE
    [ $clock = cpu ] && flags="$flags -DSLUICE_PROFILE_CPU_TIME"
    SLUICE_CXXFLAGS="$flags" "$sluicec" "$work/$layer.json" -o "$work/$layer-prof-$clock" \
      --compile --no-cuda --quiet "${extra_flags[@]}"
    SLUICE_CXXFLAGS="$flags" "$sluicec" "$work/$layer.json" -o "$work/$layer-off-$clock" \
      --compile --no-cuda --quiet --fuse=off "${extra_flags[@]}"
  done
  echo "$layer: modules built in $(( $(date +%s) - start )) s"
  # Alternate Sluice and torch within each round so both see the same load.
  # torch's profiled iterations (--split) run after its timed ones.
  for round in $(seq 1 "$rounds"); do
    for threads in 1 2; do
      export OMP_NUM_THREADS=$threads OPENBLAS_NUM_THREADS=$threads
      "$work/module_timer" "$work/$layer-on/lib${name}_cpu.so" \
        --iterations "$iterations" --init "$init" \
        > "$work/$layer-sluice-t$threads-r$round.json"
      "$python" "$root/benchmarks/torch_layer_timer.py" "$work/$layer.json" \
        --iterations "$iterations" --threads "$threads" --split \
        > "$work/$layer-torch-t$threads-r$round.json"
    done
  done
  # Per-kernel times: the profile builds (fused and unfused), each with a
  # 16 MiB copy measured in the same process and the same clock, ROUNDS
  # times alternately (the spread shows how much the machine's load moves
  # the copy rate and the memory-bound kernels).
  for round in $(seq 1 "$rounds"); do
    for threads in 1 2; do
      export OMP_NUM_THREADS=$threads OPENBLAS_NUM_THREADS=$threads
      clock=wall
      [ $threads = 1 ] && clock=cpu
      for variant in prof off; do
        "$work/module_timer" "$work/$layer-$variant-$clock/lib${name}_cpu.so" \
          --iterations "$iterations" --copy-bytes $((16 << 20)) --clock $clock \
          --init "$init" \
          > "$work/$layer-$variant-t$threads-r$round.json"
      done
    done
  done
  unset OMP_NUM_THREADS OPENBLAS_NUM_THREADS
  "$python" "$root/benchmarks/cpu_vs_torch.py" "$work" "$layer" "$rounds"
done
