#!/usr/bin/env bash
# Installs clang-22 and libclang-rt-22-dev (libFuzzer, the sanitizer
# runtimes) from Debian when missing: the fuzz and sanitizer builds need
# them, `make test` does not.
set -euo pipefail
missing=()
for pkg in clang-22 libclang-rt-22-dev; do
  if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$pkg")
  fi
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "install-clang: installing ${missing[*]}"
  sudo_cmd=""
  if [ "$(id -u)" != 0 ]; then sudo_cmd="sudo"; fi
  $sudo_cmd apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get -o DPkg::Lock::Timeout=600 \
    install -y -qq --no-install-recommends "${missing[@]}"
fi
