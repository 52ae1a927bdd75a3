# Sourced by scripts/sanitize.sh and scripts/fuzz.sh: the runtime options of
# the sanitizer build (docs/Testing.md "Sanitizers").
# allow_user_poisoning=0: LLVM's BumpPtrAllocator (inline, in headers)
#   poisons and unpoisons its slabs when it is compiled with ASan, but the
#   copies inside the uninstrumented libMLIR/libLLVM do not; memory one side
#   poisoned would be reported when the other side uses it.
# detect_leaks=0: libMLIR/libLLVM keep process-lifetime registries (options,
#   dialect and pass registrations) that LeakSanitizer reports at exit.
export ASAN_OPTIONS="allow_user_poisoning=0:detect_leaks=0:abort_on_error=1:${ASAN_OPTIONS:-}"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:${UBSAN_OPTIONS:-}"
