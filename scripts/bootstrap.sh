#!/usr/bin/env bash
# Installs what Sluice needs on Debian 12 (only what is missing; `apt-get
# update` runs first when something is), then configures build/. Idempotent:
# a second run installs nothing and only re-runs CMake if build/ is missing.
set -euo pipefail

packages=(
  libmlir-22-dev mlir-22-tools llvm-22-dev llvm-22-tools
  nlohmann-json3-dev libgtest-dev libgmock-dev libbenchmark-dev
  cmake ninja-build g++ ccache graphviz python3 python3-numpy
  clang-format  # scripts/check-format.sh (test/Format)
  libopenblas-dev  # CPU modules use cblas_sgemm for GEMMs when it is there
  libsleef-dev     # and SLEEF's vector exp/erf/tanh/log (GNU vector ABI)
  libdnnl-dev      # oneDNN's sgemm: about 2x OpenBLAS on this CPU (docs/Codegen.md)
  # The Python package's tests (python/) and test/EndToEnd/llama.test's
  # float64 reference: torch 1.13 (about 1 min to
  # install, ~1 GB), pip and setuptools for `pip install ./python`.
  python3-torch python3-pip python3-setuptools
)

missing=()
for pkg in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$pkg")
  fi
done

if [ ${#missing[@]} -gt 0 ]; then
  echo "bootstrap: installing ${missing[*]}"
  sudo_cmd=""
  if [ "$(id -u)" != 0 ]; then sudo_cmd="sudo"; fi
  $sudo_cmd apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

if [ ! -x /usr/local/cuda/bin/nvcc ] && ! command -v nvcc >/dev/null 2>&1; then
  echo "bootstrap: note: no CUDA toolkit found (nvcc); CUDA compile tests will be skipped" >&2
fi

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
if [ ! -f "$root/build/build.ninja" ]; then
  cmake -G Ninja -S "$root" -B "$root/build" -DCMAKE_BUILD_TYPE=Release
fi
