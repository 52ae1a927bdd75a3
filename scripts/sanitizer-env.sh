# Sourced by scripts/sanitize.sh and scripts/fuzz.sh: the runtime options of
# the sanitizer build (docs/Testing.md "Sanitizers").
# allow_user_poisoning=0: LLVM's BumpPtrAllocator (inline, in headers)
#   poisons and unpoisons its slabs when it is compiled with ASan, but the
#   copies inside the uninstrumented libMLIR/libLLVM do not; with the
#   default (1) the suite reports use-after-poison inside MLIR's parser,
#   attribute constraints and builders (10 processes, 2026-11-30).
# LeakSanitizer stays on (the suite runs leak-free).
export ASAN_OPTIONS="allow_user_poisoning=0:abort_on_error=1:${ASAN_OPTIONS:-}"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:${UBSAN_OPTIONS:-}"
