#!/usr/bin/env bash
#
# Copyright 2026 gr-hfstack authors.
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
# Builds and runs libFuzzer targets with AddressSanitizer and UBSan.
#   fuzz/run.sh TARGET [SECONDS]   one target (fuzz/fuzz_TARGET.cc), e.g. node_engine
#   fuzz/run.sh all [SECONDS]      every fuzz/fuzz_*.cc in turn, SECONDS each
# SECONDS defaults to 600. The targets are built by CMake (-DHFSTACK_FUZZ=ON: clang, the
# kernels library of lib/CMakeLists.txt) in $FUZZ_BUILD_DIR (default build-fuzz/). Each
# corpus grows in build-fuzz/corpus-TARGET, seeded from fuzz/seeds/TARGET and the seeds
# fuzz/make_seeds.cc writes to build-fuzz/seeds/TARGET; findings land
# in build-fuzz/artifacts/. Exits non-zero naming every target that had a finding (all
# of them run). Needs Debian's clang and libclang-rt-14-dev (make deps-fuzz).
set -euo pipefail
usage="usage: fuzz/run.sh TARGET|all [SECONDS]"
what=${1:?$usage}
seconds=${2:-600}
[[ $seconds =~ ^[1-9][0-9]*$ ]] || { echo "fuzz/run.sh: SECONDS must be a whole number above 0, got '$seconds'" >&2; exit 2; }
top=$(cd "$(dirname "$0")/.." && pwd)
out=${FUZZ_BUILD_DIR:-$top/build-fuzz}
jobs=${JOBS:-$(nproc)}

targets=()
if [ "$what" = all ]; then
    for src in "$top"/fuzz/fuzz_*.cc; do
        name=$(basename "$src" .cc)
        targets+=("${name#fuzz_}")
    done
else
    [ -f "$top/fuzz/fuzz_$what.cc" ] || { echo "fuzz/run.sh: no target '$what' (fuzz/fuzz_$what.cc); $usage" >&2; exit 2; }
    targets=("$what")
fi

command -v clang++ >/dev/null || { echo "fuzz/run.sh: clang++ missing: make deps-fuzz (clang libclang-rt-14-dev)" >&2; exit 2; }
# Configured every time (seconds): a target added since is then known to the build.
launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
cmake -S "$top" -B "$out" -DHFSTACK_FUZZ=ON -DCMAKE_CXX_COMPILER=clang++ \
    -DCMAKE_C_COMPILER=clang -DPYTHON_EXECUTABLE=/usr/bin/python3 "${launcher[@]}" >/dev/null
build_targets=(--target make_seeds)
for t in "${targets[@]}"; do build_targets+=(--target "fuzz_$t"); done
cmake --build "$out" -j "$jobs" "${build_targets[@]}"
# Generated seeds (fuzz/make_seeds.cc) beside the committed ones in fuzz/seeds/.
"$out/make_seeds" "$out/seeds"

mkdir -p "$out/artifacts"
failed=()
for t in "${targets[@]}"; do
    mkdir -p "$out/corpus-$t"
    seeds=()
    for dir in "$top/fuzz/seeds/$t" "$out/seeds/$t"; do
        [ -d "$dir" ] && seeds+=("$dir")
    done
    echo "== fuzz_$t: $seconds s"
    # -timeout: an input that takes over 60 s is a finding (a hang), not a slow target.
    if ! "$out/fuzz_$t" -max_total_time="$seconds" -timeout=60 -print_final_stats=1 \
        -artifact_prefix="$out/artifacts/$t-" "$out/corpus-$t" "${seeds[@]}"; then
        failed+=("$t")
    fi
done
if [ ${#failed[@]} -gt 0 ]; then
    echo "fuzz/run.sh: findings in: ${failed[*]} (inputs in $out/artifacts/)" >&2
    exit 1
fi
