#!/usr/bin/env python3
#
# Copyright 2026 gr-hfstack authors.
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""apps/hfstack-node: the loopback demo delivers over real TCP SIS clients; bad flags
and bad node options give a one-line reason."""

import os
import subprocess
import sys
import tempfile

from gnuradio import gr_unittest

APP = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "apps",
                   "hfstack-node")


def run(*args):
    return subprocess.run([sys.executable, APP, *args], capture_output=True, text=True,
                          timeout=180, env=os.environ)


class qa_node_app(gr_unittest.TestCase):

    def test_demo_delivers_over_a_noisy_loopback(self):
        with tempfile.TemporaryDirectory() as out:
            pcap = os.path.join(out, "a.pcap")
            done = run("--demo", "--sis-port", "0", "--time-scale", "50", "--count", "8",
                       "--size", "1500", "--ber", "1e-4", "--seed", "3", "--pcap", pcap,
                       "--options", "mode=9600S;channel_access.mode=none")
            self.assertEqual(done.returncode, 0, done.stdout + done.stderr)
            self.assertIn("delivered 8 U_PDUs, identical and in order; 8 confirmed", done.stdout)
            self.assertIn("at 9600S", done.stdout)
            self.assertGreater(os.path.getsize(pcap), 24)

    def test_options_are_listed(self):
        done = run("--list-options")
        self.assertEqual(done.returncode, 0)
        self.assertIn("channel_access.mode (default random_backoff)", done.stdout)

    def test_bad_input_gives_one_line_reason(self):
        for flags, reason in ((["--ber", "2"], "--ber must be in [0, 0.5)"),
                              (["--sis-port", "70000"], "--sis-port must be 0..65534"),
                              (["--options", "mode=1234X"], "hfstack-node: option mode"),
                              (["--address-a", "1.2"], "hfstack-node: option address"),
                              (["--link", "usrp"], "invalid choice")):
            done = run(*flags)
            self.assertNotEqual(done.returncode, 0, flags)
            self.assertIn(reason, done.stderr)
            self.assertNotIn("Traceback", done.stderr)


if __name__ == "__main__":
    gr_unittest.run(qa_node_app)
