#!/usr/bin/env bash
# Compile time of sluicec, spec to report (no nvcc), and its growth with the
# number of ops (benchmarks/compile_time.py; docs/Layout.md).
# Usage: benchmarks/compile-time.sh [build-dir] [compile_time.py options]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="$root/build"
if [ $# -gt 0 ] && [ "${1#--}" = "$1" ]; then build="$1"; shift; fi
sluicec="$build/bin/sluicec"
[ -x "$sluicec" ] || { echo "error: $sluicec not built (run: make build)" >&2; exit 1; }
exec /usr/bin/python3 "$root/benchmarks/compile_time.py" "$sluicec" "$@"
