#!/bin/sh
#
# Copyright 2026 gr-hfstack authors.
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
# Every app is installed and every installed app has a manual page: installs BUILD_DIR
# to a temporary prefix, then checks that each apps/hfstack-* of the source is in
# bin/ and that each program in bin/ has share/man/man1/NAME.1 with a NAME section
# naming it and a SYNOPSIS or usage, which man(1) formats without error when installed.
# Usage: check_man_pages.sh BUILD_DIR [CMAKE]
set -eu

build_dir=$(cd "$1" && pwd)
cmake=${2:-cmake}
source_dir=$(cd "$(dirname "$0")/.." && pwd)
tmp_name=hfstack-man
. "$source_dir/tests/temporary_install.sh"

if ! "$cmake" --install "$build_dir" --prefix "$prefix" > "$tmp/log" 2>&1; then
    cat "$tmp/log" >&2
    echo "FAIL: cmake --install" >&2
    exit 1
fi

status=0
for app in "$source_dir"/apps/hfstack-*; do
    name=$(basename "$app")
    [ -x "$prefix/bin/$name" ] || { echo "FAIL: apps/$name is not installed in bin/"; status=1; }
done
count=0
for program in "$prefix"/bin/*; do
    name=$(basename "$program")
    page=$prefix/share/man/man1/$name.1
    count=$((count + 1))
    if [ ! -s "$page" ]; then
        echo "FAIL: bin/$name has no manual page share/man/man1/$name.1"
        status=1
        continue
    fi
    grep -q '^\.SH NAME' "$page" && grep -q "^$name \\\\- " "$page" ||
        { echo "FAIL: $name.1 has no NAME section naming $name"; status=1; }
    grep -qi 'usage\|^\.SH SYNOPSIS' "$page" ||
        { echo "FAIL: $name.1 shows no usage"; status=1; }
    if command -v man > /dev/null 2>&1; then
        warnings=$(LC_ALL=C.UTF-8 MANWIDTH=80 man --warnings -l "$page" 2>&1 > /dev/null || true)
        [ -z "$warnings" ] || { echo "FAIL: man reports for $name.1: $warnings"; status=1; }
    fi
done
echo "$count installed programs checked for a manual page: $([ $status = 0 ] && echo all have one || echo some lack one)"
exit $status
