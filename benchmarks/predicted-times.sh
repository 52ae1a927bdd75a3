#!/usr/bin/env bash
# Predicted layer times: for every example spec and every built-in target, the
# cost model's forward, backward and total milliseconds (docs/Layout.md), read
# from each run's report.json, and the kernel that takes the longest.
# Usage: benchmarks/predicted-times.sh [build-dir]   (default: build)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${1:-$root/build}"
sluicec="$build/bin/sluicec"
[ -x "$sluicec" ] || { echo "error: $sluicec not built (run: make build)" >&2; exit 1; }
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

printf '%-14s %-6s %11s %11s %11s  %s\n' spec target "forward ms" "backward ms" "total ms" "longest kernel"
for spec in "$root"/examples/*.json; do
  name="$(basename "$spec" .json)"
  for target in v100 a100 h100 h200; do
    "$sluicec" "$spec" -o "$work/$name-$target" --quiet --target "$target"
    /usr/bin/python3 - "$work/$name-$target/report.json" "$name" "$target" <<'PY'
import json, sys
p = json.load(open(sys.argv[1]))["prediction"]
k = max(p["kernels"], key=lambda k: k["predicted_us"])
print(f'{sys.argv[2]:<14} {sys.argv[3]:<6} {p["forward_us"] / 1e3:>11.3f} '
      f'{p["backward_us"] / 1e3:>11.3f} {p["total_us"] / 1e3:>11.3f}  '
      f'{k["phase"]} {k["name"]} {k["predicted_us"]:.1f} us ({k["bound"]}, '
      f'{100 * k["fraction_of_peak"]:.0f}% of peak)')
PY
  done
done
