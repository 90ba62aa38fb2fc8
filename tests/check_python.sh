#!/bin/sh
#
# Copyright 2026 gr-hfstack authors.
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
# flake8 (the repository's .flake8) on every Python file in git: the package, the apps'
# scripts (apps/hfstack-*), the tests, the bench scripts and the examples; the Doxygen
# helpers under docs/doxygen come from GNU Radio's module template and are left out.
#   tests/check_python.sh [PYTHON]      exit 0 clean, 1 not, 77 no flake8
set -u
cd "$(dirname "$0")/.."
python=${1:-/usr/bin/python3}
if ! "$python" -m flake8 --version > /dev/null 2>&1; then
    echo "SKIP: flake8 not found for $python (Debian: apt-get install python3-flake8)"
    exit 77
fi
if git rev-parse --is-inside-work-tree > /dev/null 2>&1; then
    files=$(git ls-files '*.py' 'apps/hfstack-*' | grep -v '^docs/doxygen/')
else
    files=$(find python apps tests bench examples -name '*.py' -o -name 'hfstack-*' | sort)
fi
count=$(echo "$files" | wc -l)
# shellcheck disable=SC2086  # one argument per file; no file name has a space
if "$python" -m flake8 $files; then
    echo "flake8: $count Python files clean"
    exit 0
fi
echo "flake8: fix the lines above (or, for a deliberate exception, '# noqa: CODE' with the reason)"
exit 1
