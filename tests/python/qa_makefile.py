#!/usr/bin/env python3
#
# Copyright 2026 gr-hfstack authors.
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""The Makefile's targets as a newcomer meets them: the build that `make demo`,
`make ip-demo` and `make pep-demo` run says one line (it said some 200 lines of
make[n]: Entering/Leaving directory and progress before the demo), and the demos
depend on it. Runs `make quiet-build` on this test's build directory, which is up to
date when the tests run, so it builds nothing; skips where make is missing or the
module is not from a build tree."""

import os
import shutil
import subprocess

from gnuradio import gr_unittest
from gnuradio import hfstack

from test_support import TOP


def build_dir():
    """The build directory whose test_modules this test imports, or None."""
    modules = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(hfstack.__file__))))
    return os.path.dirname(modules) if os.path.basename(modules) == "test_modules" else None


class qa_makefile(gr_unittest.TestCase):

    def test_the_demos_build_quietly(self):
        build = build_dir()
        if build is None or not shutil.which("make"):
            self.skipTest("needs make and a build tree (test_modules)")
        done = subprocess.run(["make", "-C", TOP, "quiet-build", f"BUILD_DIR={build}", "JOBS=1"],
                              capture_output=True, text=True, timeout=600)
        self.assertEqual(done.returncode, 0, done.stdout + done.stderr)
        lines = [line for line in done.stdout.splitlines()
                 if "Entering directory" not in line and "Leaving directory" not in line]
        self.assertEqual(lines, [f"Building gr-hfstack in {build} (log: {build}/build.log) ..."],
                         done.stdout)
        self.assertEqual(done.stderr, "")
        with open(os.path.join(TOP, "Makefile")) as f:
            rules = f.read().splitlines()
        self.assertIn("demo: deps quiet-build", rules)
        self.assertIn("ip-demo pep-demo: deps quiet-build", rules)


if __name__ == "__main__":
    gr_unittest.main()
