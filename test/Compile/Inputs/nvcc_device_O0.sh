#!/usr/bin/env bash
# nvcc as sluicec runs it, with the device code compiled without
# optimization (-G: cicc and ptxas at -O0), for tests whose nvcc step only
# checks that a module compiles (streaming-nvcc-*.test): the front end, the
# template instantiations and every static_assert (each streaming kernel's
# shared memory against the architecture compiled for) are the same as at
# -O3, in 60% of the time (a third for head dim 128 modules). The -O3
# device code is what examples-nvcc-*.test (whole modules) and
# test/Runtime/stream-cuda-ptxas-* (every streaming kernel, ptxas -v)
# compile. The real nvcc is $SLUICE_REAL_NVCC.
set -u
exec "${SLUICE_REAL_NVCC:?SLUICE_REAL_NVCC must name nvcc}" "$@" -G
