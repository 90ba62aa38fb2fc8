#!/usr/bin/env python3
#
# Copyright 2026 gr-hfstack authors.
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""apps/hfstack-wire-demo: runs end to end, delivers the U_PDU, refuses bad flags."""

import os
import subprocess
import sys
import tempfile

from gnuradio import gr_unittest

from test_support import app_path

APP = app_path("hfstack-wire-demo")


def run(*args):
    return subprocess.run([sys.executable, APP, *args], capture_output=True, text=True,
                          timeout=120, env=os.environ)


class qa_wire_demo(gr_unittest.TestCase):

    def test_demo_delivers_and_captures(self):
        with tempfile.TemporaryDirectory() as out:
            done = run("--out", out, "--no-tshark", "--updu-size", "900", "--lose", "1")
            self.assertEqual(done.returncode, 0, done.stdout + done.stderr)
            self.assertIn("U_PDU 900 bytes intact", done.stdout)
            self.assertIn("<< lost on the air", done.stdout)
            self.assertIn("selective acks [2, 3, 4", done.stdout)
            self.assertIn("S_UNIDATA_REQUEST_CONFIRM", done.stdout)
            for name in ("dpdu.pcap", "sis.pcap"):
                self.assertGreater(os.path.getsize(os.path.join(out, name)), 24)

    def test_bad_flags_give_one_line_reason(self):
        for flags, reason in ((["--updu-size", "5000"], "--updu-size must be 1..2048"),
                              (["--segment-size", "0"], "--segment-size must be 1..1023"),
                              (["--frobnicate"], "unrecognized arguments")):
            done = run(*flags)
            self.assertEqual(done.returncode, 2, flags)
            self.assertIn(reason, done.stderr)
            self.assertNotIn("Traceback", done.stderr)


if __name__ == "__main__":
    gr_unittest.run(qa_wire_demo)
