#!/usr/bin/env bash
#
# Copyright 2026 gr-hfstack authors.
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
# Builds and runs one libFuzzer target with AddressSanitizer and UBSan.
#   fuzz/run.sh TARGET [SECONDS]     TARGET: deframer | sis_reassembler | node_engine | m110a_receiver | m110c_receiver | m110d_receiver | emulated_modem | ip_client | slep | pep | dns_proxy
# The corpus grows in build-fuzz/corpus-TARGET (seeded from fuzz/seeds/TARGET);
# findings land in build-fuzz/artifacts/. Needs Debian's clang and libclang-rt-14-dev.
set -euo pipefail
target=${1:?usage: fuzz/run.sh deframer|sis_reassembler|node_engine|m110a_receiver|m110c_receiver|m110d_receiver|emulated_modem|ip_client [seconds]}
seconds=${2:-600}
top=$(cd "$(dirname "$0")/.." && pwd)
out=$top/build-fuzz
src=$top/fuzz/fuzz_$target.cc
[ -f "$src" ] || { echo "fuzz/run.sh: no target '$target' (fuzz/fuzz_$target.cc)" >&2; exit 2; }
command -v clang++ >/dev/null || { echo "fuzz/run.sh: clang++ missing: apt-get install clang libclang-rt-14-dev" >&2; exit 2; }
mkdir -p "$out/corpus-$target" "$out/artifacts"
flags="-std=c++17 -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined"
# Every kernel source: dl/ uses phy/ (air time), and sim/ uses chan/ (VOLK, liquid-dsp).
mapfile -t kernels < <(find "$top/lib/kernels" -name '*.cc' | sort)
clang++ $flags -I"$top/lib/kernels" "$src" "${kernels[@]}" -lvolk -lliquid -lz -o "$out/fuzz_$target"
seeds=()
[ -d "$top/fuzz/seeds/$target" ] && seeds=("$top/fuzz/seeds/$target")
exec "$out/fuzz_$target" -max_total_time="$seconds" -print_final_stats=1 \
    -artifact_prefix="$out/artifacts/" "$out/corpus-$target" "${seeds[@]}"
