#!/bin/sh
#
# Copyright 2026 gr-hfstack authors.
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
# Three checks on the files in git: every source file (C++, Python, shell, Lua, CMake,
# the apps, Makefile) has an SPDX-License-Identifier line; no file names a path of one
# machine (a home, /root or the project machine's /work), the shared directory being
# named relative to the checkout (../shared, shared/spec/...); and no file of
# lib/kernels includes from a layer above its own (the order is below).
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
# The layers of lib/kernels, lowest first: a file includes headers of its own layer and
# of those below it, never of one above (an include names its layer's directory).
#   chan     channel models
#   phy      waveforms, modems and their curves
#   dl       the STANAG 5066 data link and node engine
#   net      IP and TCP over the data link (IP client, SLEP, HF-PEP)
#   sim      the simulated network: channel model, virtual network, emulated modem
#   traffic  clients and the simulator's runs over sim's network (scenario, hosts)
layers="chan phy dl net sim traffic"
layer_rank() {
    rank=0
    for layer in $layers; do
        [ "$layer" = "$1" ] && { echo $rank; return; }
        rank=$((rank + 1))
    done
    echo none
}
upward=""
for file in $(git ls-files 'lib/kernels/*.h' 'lib/kernels/*.cc'); do
    own=$(echo "$file" | cut -d/ -f3)
    own_rank=$(layer_rank "$own")
    for included in $(sed -n 's|^#include "\([a-z_]*\)/.*|\1|p' "$file" | sort -u); do
        included_rank=$(layer_rank "$included")
        if [ "$own_rank" = none ] || [ "$included_rank" = none ] ||
            [ "$included_rank" -gt "$own_rank" ]; then
            upward="$upward$file includes $included/
"
        fi
    done
done
if [ -n "$upward" ]; then
    echo "includes from a higher layer of lib/kernels (or of none; layers: $layers):"
    printf '%s' "$upward"
    status=1
fi
echo "$count source files: $([ -z "$unlicensed" ] && echo "every one has an SPDX line" || echo "some lack an SPDX line"); machine paths: $([ -z "$machine" ] && echo none || echo found); upward includes: $([ -z "$upward" ] && echo none || echo found)"
exit $status
