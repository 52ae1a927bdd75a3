#!/usr/bin/env bash
# CPU backend, fusion on vs off: builds the CPU module of one layer twice
# (sluicec --compile --no-cuda, and the same with --fuse=off), times forward
# and backward of both in one run with benchmarks/module_timer.cpp (median of
# N iterations, one forward then its backward per iteration) and prints them
# side by side with the bytes of the memory-bound kernels from each
# report.json. docs/Compile.md, benchmarks/README.md.
# Usage: benchmarks/cpu-fusion.sh [build-dir] [spec] [iterations]
#   defaults: build, benchmarks/specs/bert-base-b1s128.json, 10
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${1:-$root/build}"
spec="${2:-$root/benchmarks/specs/bert-base-b1s128.json}"
iterations="${3:-10}"
sluicec="$build/bin/sluicec"
[ -x "$sluicec" ] || { echo "error: $sluicec not built (run: make build)" >&2; exit 1; }
cxx="${SLUICE_CXX:-${CXX:-c++}}"
python=/usr/bin/python3
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

"$cxx" -O2 -std=c++17 "$root/benchmarks/module_timer.cpp" -o "$work/module_timer" -ldl

# The module name as the emitter spells its files: [A-Za-z0-9_] only.
name="$($python -c 'import json, re, sys; n = json.load(open(sys.argv[1])).get("name") or re.sub(r"\.json$", "", sys.argv[1].split("/")[-1]); print(n if re.fullmatch(r"[A-Za-z0-9_][A-Za-z0-9._-]*", n) else re.sub(r"[^A-Za-z0-9_]", "_", n))' "$spec")"
echo "spec: $spec (module $name), $iterations iterations, $(getconf _NPROCESSORS_ONLN) cores," \
  "OMP_NUM_THREADS=${OMP_NUM_THREADS:-unset}, load average $(cut -d' ' -f1-3 /proc/loadavg)"
# OpenMP threads spin-wait: on a loaded machine OMP_NUM_THREADS=1 gives
# steadier numbers.

start=$(date +%s)
"$sluicec" "$spec" -o "$work/on" --compile --no-cuda --quiet
echo "fused module built in $(( $(date +%s) - start )) s"
have_off=1
# (Read the help first: grep -q closing the pipe early would fail it.)
help="$("$sluicec" --help 2>/dev/null || true)"
if grep -qE -- '^ +--fuse[= ]' <<<"$help"; then
  start=$(date +%s)
  "$sluicec" "$spec" -o "$work/off" --compile --no-cuda --quiet --fuse=off
  echo "unfused module built in $(( $(date +%s) - start )) s"
else
  have_off=0
  echo "note: this sluicec has no --fuse option; timing the fused module only"
fi

# Alternate the two modules so that both see the same machine state.
"$work/module_timer" "$work/on/lib${name}_cpu.so" --iterations "$iterations" > "$work/on.json"
if [ $have_off = 1 ]; then
  "$work/module_timer" "$work/off/lib${name}_cpu.so" --iterations "$iterations" > "$work/off.json"
  $python "$root/benchmarks/timings.py" fusion "$work/on.json" "$work/on/report.json" \
    "$work/off.json" "$work/off/report.json"
else
  $python "$root/benchmarks/timings.py" kernels "$work/on.json" "$work/on/report.json"
fi
