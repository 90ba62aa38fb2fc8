#!/bin/sh
#
# Copyright 2026 gr-hfstack authors.
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
# Two checks on the files in git: every source file (C++, Python, shell, Lua, CMake,
# the apps, Makefile) has an SPDX-License-Identifier line, and no file names a path
# of one machine (a home, /root or the project machine's /work); the shared directory
# is named relative to the checkout (../shared, shared/spec/...).
#   tests/check_sources.sh            exit 0 clean, 1 not, 77 not a git checkout
set -u
cd "$(dirname "$0")/.."
if ! git rev-parse --is-inside-work-tree > /dev/null 2>&1; then
    echo "SKIP: not a git checkout"
    exit 77
fi
status=0
sources=$(git ls-files '*.cc' '*.h' '*.cpp' '*.hpp' '*.c' '*.py' '*.sh' '*.lua' \
    '*.cmake' '*.cmake.in' '*CMakeLists.txt' Makefile 'apps/*' .ci/run)
count=$(echo "$sources" | wc -l)
unlicensed=$(echo "$sources" | xargs grep -L "SPDX-License-Identifier")
if [ -n "$unlicensed" ]; then
    echo "no SPDX-License-Identifier line:"
    echo "$unlicensed"
    status=1
fi
# The pattern is split so that this file does not match itself.
machine=$(git grep -nE "/(wo)rk/|/(ho)me/|/(ro)ot/|/(Us)ers/" -- . ':!*.pcap' ':!*.pcm' || true)
if [ -n "$machine" ]; then
    echo "paths of one machine:"
    echo "$machine"
    status=1
fi
echo "$count source files: $([ -z "$unlicensed" ] && echo "every one has an SPDX line" || echo "some lack an SPDX line"); machine paths: $([ -z "$machine" ] && echo none || echo found)"
exit $status
