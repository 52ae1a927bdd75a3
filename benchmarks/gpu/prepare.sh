#!/usr/bin/env bash
# Builds gpu-kit/: everything a bare GPU machine needs to check and time
# Sluice's CUDA modules (docs/GPU.md). Runs here, without a GPU, after
# `make build`; the work is done by prepare_kit.py.
#   benchmarks/gpu/prepare.sh                 # the full kit into ./gpu-kit
#   benchmarks/gpu/prepare.sh --quick --out D # one module, for `make test`
#   benchmarks/gpu/prepare.sh --check D       # check a kit's shape only
# Then, on the GPU machine: bash gpu-kit/run.sh OUTDIR
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
exec /usr/bin/python3 "$here/prepare_kit.py" "$@"
