#
# Copyright 2026 gr-hfstack authors.
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
# Sourced by the tests that install the build into a scratch prefix
# (install_downstream.sh, check_man_pages.sh). Needs build_dir and tmp_name; sets tmp
# (a directory removed on exit) and prefix (inside it). cmake --install rewrites
# BUILD_DIR/install_manifest.txt, which `make uninstall` reads: the one of a real
# install is put back on exit.
tmp=$(mktemp -d "${TMPDIR:-/tmp}/$tmp_name.XXXXXX")
manifest=$build_dir/install_manifest.txt
[ ! -e "$manifest" ] || cp "$manifest" "$tmp.manifest"
restore() {
    if [ -e "$tmp.manifest" ]; then mv "$tmp.manifest" "$manifest"; else rm -f "$manifest"; fi
    rm -rf "$tmp"
}
trap restore EXIT
prefix=$tmp/prefix
