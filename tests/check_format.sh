#!/bin/sh
#
# Copyright 2026 gr-hfstack authors.
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
# clang-format --dry-run --Werror (the repository's .clang-format) on every C++ file
# in git. With --changed BASE it checks instead only the lines changed since BASE
# (git clang-format), for a branch to check its own edits quickly.
#   tests/check_format.sh [CLANG_FORMAT]      exit 0 clean, 1 not, 77 no clang-format
#   tests/check_format.sh --changed BASE      (make format-check-changed BASE=main)
# `make format-check` runs the first; `clang-format -i FILE` reformats a file.
set -u
cd "$(dirname "$0")/.."
if [ "${1:-}" = "--changed" ]; then
    base=${2:?usage: check_format.sh --changed BASE}
    out=$(git clang-format --diff --extensions cc,h,cpp,hpp "$base" -- lib include tests fuzz bench python 2>&1)
    case $out in
        *"no modified files"*|*"did not modify"*) echo "clang-format: lines changed since $base are clean"; exit 0 ;;
        *) printf '%s\n' "$out"; echo "clang-format: lines changed since $base need formatting (git clang-format $base)"; exit 1 ;;
    esac
fi
clang_format=${1:-clang-format}
if ! command -v "$clang_format" > /dev/null 2>&1; then
    echo "SKIP: $clang_format not found (Debian: apt-get install clang-format)"
    exit 77
fi
if git rev-parse --is-inside-work-tree > /dev/null 2>&1; then
    files=$(git ls-files '*.cc' '*.h' '*.cpp' '*.hpp' | grep -v '^docs/doxygen/')
else
    files=$(find lib include tests fuzz bench python -name '*.cc' -o -name '*.h' | sort)
fi

status=0
checked=0
for f in $files; do
    checked=$((checked + 1))
    if ! "$clang_format" --dry-run --Werror "$f"; then
        echo "$f: not clang-format clean (clang-format -i $f)"
        status=1
    fi
done
echo "$checked files checked"
[ $status -eq 0 ] && echo "clang-format: clean"
exit $status
