#!/usr/bin/env bash
# Checks C++ formatting against .clang-format without changing any file.
#
#   scripts/check-format.sh                 the files in scripts/format-checked.txt
#   scripts/check-format.sh FILE...         these files, whole
#   scripts/check-format.sh --base REF      only the lines changed since the
#                                           branch left REF (committed or not;
#                                           untracked files whole)
#
# Prints the reformatting clang-format would make and exits 1 when a checked
# file or line is not formatted; exits 0 otherwise. The tree is not
# formatted as a whole: files join format-checked.txt once formatted (in a
# commit of their own), and --base REF keeps new changes formatted before a
# landing. Needs clang-format (Debian: clang-format, installed by
# scripts/bootstrap.sh); CLANG_FORMAT overrides the binary.
set -uo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root" || exit 2
clang_format="${CLANG_FORMAT:-}"
if [ -z "$clang_format" ]; then
  for candidate in clang-format clang-format-14 clang-format-19 clang-format-22; do
    if command -v "$candidate" >/dev/null 2>&1; then
      clang_format="$candidate"
      break
    fi
  done
fi
if [ -z "$clang_format" ]; then
  echo "check-format: no clang-format found (install clang-format or set CLANG_FORMAT)" >&2
  exit 2
fi

is_cxx() { case "$1" in *.cpp|*.h|*.cu|*.cc) return 0 ;; *) return 1 ;; esac; }

if [ "${1:-}" = "--base" ]; then
  base="${2:?usage: check-format.sh --base REF}"
  if ! git rev-parse -q --verify "$base^{commit}" >/dev/null; then
    echo "check-format: '$base' is not a commit" >&2
    exit 2
  fi
  diff_tool="$(command -v clang-format-diff || command -v clang-format-diff-14 || true)"
  if [ -z "$diff_tool" ]; then
    echo "check-format: --base needs clang-format-diff (package clang-format)" >&2
    exit 2
  fi
  # Changed lines of tracked files, plus untracked new files whole.
  # Lines changed since the branch left REF (not REF's own later changes);
  # test inputs (test/*/Inputs) may be unformatted on purpose.
  fork="$(git merge-base "$base" HEAD)"
  changes="$(git diff -U0 --no-color "$fork" -- '*.cpp' '*.h' '*.cu' '*.cc' \
    ':(exclude)test/*/Inputs/*')"
  out="$(printf '%s\n' "$changes" | "$diff_tool" -p1 -binary "$(command -v "$clang_format")")"
  status=0
  if [ -n "$out" ]; then
    printf '%s\n' "$out"
    status=1
  fi
  for file in $(git ls-files --others --exclude-standard -- '*.cpp' '*.h' \
      '*.cu' '*.cc' ':(exclude)test/*/Inputs/*'); do
    if ! "$clang_format" --dry-run --Werror "$file" 2>/dev/null; then
      "$clang_format" "$file" | diff -u "$file" - | sed "1s|.*|--- $file|"
      status=1
    fi
  done
  [ "$status" = 0 ] && echo "check-format: lines changed since $base are formatted"
  exit "$status"
fi

if [ $# -gt 0 ]; then
  files=("$@")
else
  mapfile -t files < <(grep -v '^[[:space:]]*\(#\|$\)' scripts/format-checked.txt)
fi
status=0
checked=0
for file in "${files[@]}"; do
  if [ ! -f "$file" ]; then
    echo "check-format: $file: no such file" >&2
    status=1
    continue
  fi
  is_cxx "$file" || continue
  checked=$((checked + 1))
  if ! "$clang_format" --dry-run --Werror "$file" >/dev/null 2>&1; then
    echo "check-format: $file is not formatted (clang-format -i $file):"
    "$clang_format" "$file" | diff -u "$file" - | head -40
    status=1
  fi
done
[ "$status" = 0 ] && echo "check-format: $checked files formatted"
exit "$status"
