#!/usr/bin/env bash
# `make fuzz FUZZ_SECONDS=N`: builds the libFuzzer harnesses in build-asan/
# (clang-22, ASan+UBSan, see scripts/sanitize.sh) and runs each for N seconds
# on one core, starting from fuzz/corpus/<name>/ (copied; new inputs go to
# build-asan/fuzz/<name>/corpus, not into the repository). Limits per input:
# 25 s, 2048 MB RSS. Prints each harness's executions per second, coverage
# and peak RSS; a crash, timeout or out-of-memory leaves its input in
# build-asan/fuzz/<name>/artifacts/ and fails the run: copy it into
# fuzz/corpus/<name>/ with the fix so `make test` replays it. fuzz/README.md.
#
#   scripts/fuzz.sh SECONDS [HARNESS...]
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${SLUICE_ASAN_BUILD:-$root/build-asan}"
seconds="${1:-60}"
shift || true
harnesses=("$@")
[ ${#harnesses[@]} -gt 0 ] || harnesses=(spec npy ir)

"$root/scripts/install-clang.sh" || exit 1
if [ ! -f "$build/build.ninja" ]; then
  cmake -G Ninja -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_C_COMPILER=clang-22 -DCMAKE_CXX_COMPILER=clang++-22 \
    -DSLUICE_SANITIZE=ON -DSLUICE_FUZZ=ON || exit 1
fi
ninja -C "$build" -j2 sluice-fuzzers || exit 1
source "$root/scripts/sanitizer-env.sh"

status=0
for harness in "${harnesses[@]}"; do
  dir="$build/fuzz/$harness"
  mkdir -p "$dir/corpus" "$dir/artifacts"
  cp -n "$root/fuzz/corpus/$harness/"* "$dir/corpus/" 2>/dev/null
  log="$dir/fuzz.log"
  echo "fuzz: $harness for ${seconds}s (log: $log)"
  "$build/bin/sluice-fuzz-$harness" "$dir/corpus" \
    -max_total_time="$seconds" -timeout=25 -rss_limit_mb=2048 -max_len=8192 \
    -print_final_stats=1 -artifact_prefix="$dir/artifacts/" >"$log" 2>&1
  rc=$?
  last=$(grep -E '^#[0-9]+' "$log" | tail -1)
  execs=$(grep -oE 'stat::number_of_executed_units: *[0-9]+' "$log" | grep -o '[0-9]*$')
  speed=$(grep -oE 'stat::average_exec_per_sec: *[0-9]+' "$log" | grep -o '[0-9]*$')
  rss=$(grep -oE 'stat::peak_rss_mb: *[0-9]+' "$log" | grep -o '[0-9]*$')
  echo "fuzz: $harness: exit $rc, ${execs:-?} executions, ${speed:-?} exec/s, peak RSS ${rss:-?} MB"
  echo "fuzz: $harness: last status: ${last:-none}"
  if [ $rc -ne 0 ]; then
    status=1
    echo "fuzz: $harness FAILED; the input is in $dir/artifacts/:" >&2
    ls "$dir/artifacts" >&2
    grep -E 'ERROR|SUMMARY|deadly signal|timeout|out-of-memory' "$log" | head -5 >&2
  fi
done
exit $status
