#!/usr/bin/env bash
# nvcc as sluicec runs it, keeping what the static GPU checks read: set
# SLUICE_NVCC to this script and SLUICE_KEEP_DIR to a directory; the module
# compiles exactly as usual and the directory receives the PTX (nvcc --keep)
# and ptxas.log (ptxas -v: registers, spills, shared memory per kernel).
# benchmarks/gpu/static_report.py reads them. The real nvcc is
# $SLUICE_REAL_NVCC, else nvcc on PATH, else /usr/local/cuda/bin/nvcc.
set -u
keep="${SLUICE_KEEP_DIR:?SLUICE_KEEP_DIR must name the directory for the PTX and ptxas.log}"
real="${SLUICE_REAL_NVCC:-}"
if [ -z "$real" ]; then
  real="$(command -v nvcc || true)"
  [ -n "$real" ] || real=/usr/local/cuda/bin/nvcc
fi
mkdir -p "$keep"
"$real" "$@" -Xptxas -v --keep --keep-dir "$keep" 2> "$keep/ptxas.log"
status=$?
grep -v -e '^ptxas info' -e 'bytes stack frame' "$keep/ptxas.log" >&2
# Only the PTX and the log are read; the other intermediates are large.
find "$keep" -maxdepth 1 -type f ! -name '*.ptx' ! -name ptxas.log -delete
exit $status
