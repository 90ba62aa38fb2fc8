#!/usr/bin/env python3
#
# Copyright 2026 gr-hfstack authors.
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""The Makefile's targets as a newcomer meets them: the build that `make demo`,
`make ip-demo` and `make pep-demo` run says one line (it said some 200 lines of
make[n]: Entering/Leaving directory and progress before the demo), a failed build shows
the end of its log, and the demos depend on it. `make quiet-build` runs on a small CMake
project of this test's own, never on the tree's build directory, which other tests are
using while this one runs. Skips where make or cmake is missing."""

import os
import shutil
import subprocess
import tempfile

from gnuradio import gr_unittest

from test_support import TOP

PROJECT = """cmake_minimum_required(VERSION 3.16)
project(quiet_build_check NONE)
add_custom_target(noisy ALL
    COMMAND ${CMAKE_COMMAND} -E echo "a line of build progress"
    COMMAND %s)
"""


class qa_makefile(gr_unittest.TestCase):

    def setUp(self):
        if not (shutil.which("make") and shutil.which("cmake")):
            self.skipTest("needs make and cmake")
        self.tmp = tempfile.mkdtemp(prefix="hfstack-make-")
        self.addCleanup(shutil.rmtree, self.tmp, True)

    def quiet_build(self, last_command):
        """`make quiet-build` on a project whose build runs `last_command`."""
        source, build = os.path.join(self.tmp, "src"), os.path.join(self.tmp, "build")
        os.mkdir(source)
        with open(os.path.join(source, "CMakeLists.txt"), "w") as f:
            f.write(PROJECT % last_command)
        subprocess.run(["cmake", "-S", source, "-B", build], check=True, capture_output=True,
                       timeout=120)
        done = subprocess.run(["make", "-C", TOP, "quiet-build", f"BUILD_DIR={build}", "JOBS=1"],
                              capture_output=True, text=True, timeout=120)
        lines = [line for line in done.stdout.splitlines()
                 if "Entering directory" not in line and "Leaving directory" not in line]
        return done, lines, build

    def test_a_build_says_one_line(self):
        done, lines, build = self.quiet_build("${CMAKE_COMMAND} -E true")
        self.assertEqual(done.returncode, 0, done.stdout + done.stderr)
        self.assertEqual(lines, [f"Building gr-hfstack in {build} (log: {build}/build.log) ..."],
                         done.stdout)
        self.assertEqual(done.stderr, "")
        with open(os.path.join(build, "build.log")) as f:
            self.assertIn("a line of build progress", f.read())

    def test_a_failed_build_shows_its_log(self):
        done, lines, build = self.quiet_build("${CMAKE_COMMAND} -E false")
        self.assertNotEqual(done.returncode, 0)
        self.assertIn("a line of build progress", done.stdout)
        self.assertEqual(lines[-1], f"Build failed: {build}/build.log")

    def test_the_demos_depend_on_it(self):
        with open(os.path.join(TOP, "Makefile")) as f:
            rules = f.read().splitlines()
        self.assertIn("demo: deps quiet-build", rules)
        self.assertIn("ip-demo pep-demo: deps quiet-build", rules)


if __name__ == "__main__":
    gr_unittest.main()
