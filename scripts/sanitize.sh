#!/usr/bin/env bash
# The sanitizer suite (docs/Testing.md "Sanitizers"): configures build-asan/
# with clang-22, AddressSanitizer + UndefinedBehaviorSanitizer
# (-DSLUICE_SANITIZE=ON) and libFuzzer instrumentation (-DSLUICE_FUZZ=ON),
# builds everything including the fuzz/ harnesses, runs the whole ctest
# suite there, then each harness over its corpus. .ci/run runs it after
# `make test`. Installs clang-22 and libclang-rt-22-dev when missing.
#
#   scripts/sanitize.sh [--build-only]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${SLUICE_ASAN_BUILD:-$root/build-asan}"

"$root/scripts/install-clang.sh"

if [ ! -f "$build/build.ninja" ]; then
  cmake -G Ninja -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_C_COMPILER=clang-22 -DCMAKE_CXX_COMPILER=clang++-22 \
    -DSLUICE_SANITIZE=ON -DSLUICE_FUZZ=ON
fi
ninja -C "$build" -j2
[ "${1:-}" = "--build-only" ] && exit 0

source "$root/scripts/sanitizer-env.sh"
# install-package builds an out-of-tree consumer with the plain host
# compiler, which cannot link the instrumented static libraries; the normal
# suite (`make test`) runs it.
(cd "$build" && ctest -j2 --output-on-failure -E "^install-package$")
for harness in spec npy ir; do
  "$build/bin/sluice-fuzz-$harness" -runs=0 "$root/fuzz/corpus/$harness"
done
