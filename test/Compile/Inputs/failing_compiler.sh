#!/bin/sh
# Stands in for nvcc or c++ in error tests: prints a diagnostic naming its
# arguments' source file and fails.
for arg in "$@"; do
  case "$arg" in
    *.cu|*.cpp) echo "$arg(1): error: the failing compiler refuses this file" >&2 ;;
  esac
done
exit 2
