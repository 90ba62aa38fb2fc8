#!/usr/bin/env python3
#
# Copyright 2026 gr-hfstack authors.
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""Every app answers --version with its name and the package's version (MAJOR.API.ABI,
as debian/changelog has it), on standard output, exit 0."""

import os
import subprocess
import sys

from gnuradio import gr_unittest
from gnuradio.hfstack.version import __version__

from test_support import APPS


class qa_app_versions(gr_unittest.TestCase):

    def test_every_app_has_version(self):
        names = sorted(n for n in os.listdir(APPS) if n.startswith("hfstack-"))
        self.assertGreaterEqual(len(names), 6)
        for name in names:
            with self.subTest(app=name):
                done = subprocess.run([sys.executable, os.path.join(APPS, name), "--version"],
                                      capture_output=True, text=True, timeout=120,
                                      env=os.environ)
                self.assertEqual(done.returncode, 0, done.stderr)
                self.assertEqual(done.stdout.strip(), f"{name} {__version__}")
        self.assertTrue(__version__)

    def test_one_version_string(self):
        """One version string: the apps' is the Debian package's, MAJOR.API.ABI."""
        changelog = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                                 "debian", "changelog")
        with open(changelog) as f:
            package = f.readline().split("(")[1].split(")")[0]
        self.assertEqual(__version__, package)
        self.assertRegex(__version__, r"^\d+\.\d+\.\d+$")


if __name__ == "__main__":
    gr_unittest.run(qa_app_versions)
