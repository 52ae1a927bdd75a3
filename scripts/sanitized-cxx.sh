#!/usr/bin/env bash
# A host compiler for emitted CPU modules under the sanitizers (SLUICE_CXX in
# test/Sanitize): clang++-22 with AddressSanitizer and UBSan, so a module
# dlopened by the ASan build of sluicec is checked as well.
exec clang++-22 -fsanitize=address,undefined -fno-sanitize-recover=undefined \
  -fno-omit-frame-pointer "$@"
