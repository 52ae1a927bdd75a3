#!/usr/bin/env bash
# Data-movement table: for every example spec, the flop and bytes moved per
# phase as the analysis counts them, and the wall time of sluicec itself.
# Usage: benchmarks/data-movement.sh [build-dir]   (default: build)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${1:-$root/build}"
sluicec="$build/bin/sluicec"
[ -x "$sluicec" ] || { echo "error: $sluicec not built (run: make build)" >&2; exit 1; }
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

printf '%-14s %-9s %20s %20s %20s %11s\n' spec phase "contraction flop" "total flop" "bytes moved" "sluicec ms"
for spec in "$root"/examples/*.json; do
  name="$(basename "$spec" .json)"
  start=$(date +%s%N)
  "$sluicec" "$spec" -o "$work/$name" --quiet
  end=$(date +%s%N)
  /usr/bin/python3 - "$work/$name/report.json" "$name" "$(( (end - start) / 1000000 ))" <<'PY'
import json, sys
report = json.load(open(sys.argv[1]))
for phase, t in report["totals"]["by_phase"].items():
    if t["flop"] == 0 and t["bytes"] == 0:
        continue
    print(f'{sys.argv[2]:<14} {phase:<9} {t["by_class"]["contraction"]["flop"]:>20,} '
          f'{t["flop"]:>20,} {t["bytes"]:>20,} {int(sys.argv[3]):>11}')
PY
done
