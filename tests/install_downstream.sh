#!/bin/sh
# SPDX-License-Identifier: GPL-3.0-or-later
#
# What a downstream C++ developer does with gr-hfstack, against a temporary prefix:
#  1. cmake --install BUILD_DIR --prefix TMP (nothing may land outside TMP, no test
#     code lands at all);
#  2. tests/downstream: find_package(gnuradio-hfstack), link gnuradio::gnuradio-hfstack,
#     make a node and a SIS server in a top block, run it;
#  3. examples/node_cpp.grc generated as C++ by grcc with the installed GRC blocks,
#     configured, built and run (started, and stopped at once by an empty stdin).
# Usage: install_downstream.sh BUILD_DIR [CMAKE] [GRCC]; with no GRCC step 3 is skipped.
set -eu

build_dir=$(cd "$1" && pwd)
cmake=${2:-cmake}
grcc=${3:-}
case $grcc in *-NOTFOUND) grcc= ;; esac  # CMake's find_program found none
source_dir=$(cd "$(dirname "$0")/.." && pwd)
tmp_name=hfstack-install
. "$source_dir/tests/temporary_install.sh"

step() { echo "== $*"; }
fail() { echo "FAIL: $*" >&2; exit 1; }
# Runs a command quietly; shows its output when it fails.
quiet() {
    if ! "$@" > "$tmp/log" 2>&1; then
        cat "$tmp/log" >&2
        fail "$*"
    fi
}

step "install to $prefix"
quiet "$cmake" --install "$build_dir" --prefix "$prefix"
outside=$(grep -v "^$prefix/" "$manifest" || true)
[ -z "$outside" ] || fail "installed outside the prefix: $outside"
# What users run is installed, the tests are not (tests/python, python/hfstack/**/qa_*.py).
tests=$(grep -E '/(qa_[^/]*|test_support[^/]*)$' "$manifest" || true)
[ -z "$tests" ] || fail "test code installed: $tests"
config=$(find "$prefix" -name gnuradio-hfstackConfig.cmake)
[ -n "$config" ] || fail "no gnuradio-hfstackConfig.cmake installed"
[ -n "$(find "$prefix" -name gnuradio-hfstackTargets.cmake)" ] ||
    fail "no gnuradio-hfstackTargets.cmake installed"

# Builds the CMake project in $1 into $2 against the prefix alone.
build_against_prefix() {
    quiet "$cmake" -S "$1" -B "$2" -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_BUILD_TYPE=Release
    grep -q "gnuradio-hfstack.*$prefix" "$2/CMakeCache.txt" ||
        fail "$1 did not take gnuradio-hfstack from $prefix"
    quiet "$cmake" --build "$2" -j 1
}

step "downstream program: find_package(gnuradio-hfstack), node::make"
build_against_prefix "$source_dir/tests/downstream" "$tmp/downstream"
"$tmp/downstream/make_node" || fail "make_node exited $?"

if [ -z "$grcc" ]; then
    echo "SKIP: no grcc, the GRC C++ flowgraph is not built"
    exit 0
fi
step "GRC flowgraph generated as C++: examples/node_cpp.grc"
quiet env GRC_BLOCKS_PATH="$prefix/share/gnuradio/grc/blocks" "$grcc" -o "$tmp/grc" "$source_dir/examples/node_cpp.grc"
build_against_prefix "$tmp/grc/node_cpp" "$tmp/grc/build"
"$tmp/grc/build/node_cpp" --sis_port 0 < /dev/null > "$tmp/run.log" 2>&1 ||
    { cat "$tmp/run.log" >&2; fail "node_cpp exited with an error"; }
echo "node_cpp ran: $(cat "$tmp/run.log")"
echo "install, downstream program and GRC C++ flowgraph: all passed"
