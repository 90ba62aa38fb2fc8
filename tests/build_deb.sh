#!/bin/sh
#
# Copyright 2026 gr-hfstack authors.
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
# Builds the Debian binary packages (debian/) from a copy of this checkout and runs
# lintian on them: `dpkg-buildpackage -b -us -uc` in a temporary directory outside the
# checkout (so the checkout gets no build products and the copy is no git work tree),
# then `lintian` on the .changes, failing on any error, then that the unpacked packages
# hold no test code and each packaged app answers --version. The .deb, .changes and
# .buildinfo files, the build log and lintian's report end up in OUT_DIR.
# DEB_BUILD_OPTIONS defaults to "nocheck parallel=2" (`make test` runs the tests).
# The copy holds the files git knows (tracked, and new ones not ignored), or without
# git every file but build directories.
#   build_deb.sh OUT_DIR        exit 0 built and lintian has no error, 1 not,
#                               77 dpkg-buildpackage or debhelper missing
set -eu

out=$1
source_dir=$(cd "$(dirname "$0")/.." && pwd)
for tool in dpkg-buildpackage dh lintian; do
    if ! command -v "$tool" > /dev/null 2>&1; then
        echo "SKIP: $tool not installed (Debian: dpkg-dev, debhelper, lintian; make deps installs them)"
        exit 77
    fi
done
: "${DEB_BUILD_OPTIONS:=nocheck parallel=2}"
export DEB_BUILD_OPTIONS

mkdir -p "$out"
out=$(cd "$out" && pwd)
rm -f "$out"/*.deb "$out"/*.changes "$out"/*.buildinfo "$out"/build.log "$out"/lintian.log
work=$(mktemp -d "${TMPDIR:-/tmp}/hfstack-deb.XXXXXX")
trap 'rm -rf "$work"' EXIT
tree=$work/gr-hfstack
mkdir -p "$tree"

echo "== copy of $source_dir in $tree"
cd "$source_dir"
if git rev-parse --is-inside-work-tree > /dev/null 2>&1; then
    # Deleted files git still lists are left out.
    git ls-files -z --cached --others --exclude-standard |
        xargs -0 sh -c 'for f; do [ -e "$f" ] && printf "%s\0" "$f"; done' sh |
        tar --null -T - -cf - | tar -xf - -C "$tree"
else
    tar --exclude='./build' --exclude='./build-*' --exclude='./obj-*' -cf - . |
        tar -xf - -C "$tree"
fi

echo "== dpkg-buildpackage -b -us -uc (DEB_BUILD_OPTIONS=$DEB_BUILD_OPTIONS)"
start=$(date +%s)
cd "$tree"
if ! dpkg-buildpackage -b -us -uc > "$out/build.log" 2>&1; then
    tail -n 60 "$out/build.log"
    echo "FAIL: dpkg-buildpackage (whole log: $out/build.log)"
    exit 1
fi
echo "built in $(($(date +%s) - start)) s:"
changes=$(ls "$work"/*.changes)
for deb in "$work"/*.deb; do
    echo "  $(basename "$deb")"
done

echo "== lintian $(basename "$changes")"
status=0
lintian --fail-on error "$changes" > "$out/lintian.log" 2>&1 || status=$?
cat "$out/lintian.log"
errors=$(grep -c '^E: ' "$out/lintian.log" || true)
warnings=$(grep -c '^W: ' "$out/lintian.log" || true)
echo "lintian: $errors errors, $warnings warnings"
mv "$work"/*.deb "$changes" "$work"/*.buildinfo "$out"/
if [ "$status" -ne 0 ] || [ "$errors" -ne 0 ]; then
    echo "FAIL: lintian reports errors"
    exit 1
fi

# The packaged apps run: each one's --version from the unpacked packages.
echo "== the packaged apps, unpacked"
root=$work/root
for deb in "$out"/libgnuradio-hfstack0*.deb "$out"/gr-hfstack_*.deb; do
    dpkg-deb -x "$deb" "$root"
done
# The packages carry what users run, not the tests (no qa_*.py, no test_support).
tests=$(find "$root" -name 'qa_*' -o -name 'test_support*')
if [ -n "$tests" ]; then
    echo "$tests"
    echo "FAIL: test code in the packages"
    exit 1
fi
multiarch=$(dpkg-architecture -qDEB_HOST_MULTIARCH)
for app in "$root"/usr/bin/*; do
    if ! version=$(PYTHONPATH="$root/usr/lib/python3/dist-packages" \
            LD_LIBRARY_PATH="$root/usr/lib/$multiarch" "$app" --version 2>&1); then
        echo "$version"
        echo "FAIL: the packaged $(basename "$app") --version"
        exit 1
    fi
    echo "  $version"
done
echo "packages in $out"
