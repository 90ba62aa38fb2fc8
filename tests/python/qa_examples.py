#!/usr/bin/env python3
#
# Copyright 2026 gr-hfstack authors.
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""The hand-written flowgraph scripts examples/*.py: every one answers --help; the
loopback pair runs for real (node A's text delivered by node B over the real modem and
the Watterson channel, B's bursts listed); the sound-card node serves on ALSA's null
device until SIGTERM and prints its counters; the sound-card and USRP nodes refuse a
device that is not there in one line with exit status 1, without hanging."""

import glob
import json
import os
import subprocess
import sys

from gnuradio import gr_unittest

from test_support import EXAMPLES, sigterm_once_said


def run_example(name, *args, timeout=240):
    return subprocess.run([sys.executable, os.path.join(EXAMPLES, name), *args],
                          capture_output=True, text=True, timeout=timeout, env=os.environ)


class qa_examples(gr_unittest.TestCase):

    def test_every_script_answers_help(self):
        scripts = sorted(glob.glob(os.path.join(EXAMPLES, "*.py")))
        self.assertEqual([os.path.basename(s) for s in scripts],
                         ["audio_node.py", "loopback_pair.py", "usrp_node.py"])
        for script in scripts:
            with self.subTest(script=os.path.basename(script)):
                done = run_example(script, "--help", timeout=60)
                self.assertEqual(done.returncode, 0, done.stderr)
                self.assertIn("usage:", done.stdout)

    def test_loopback_pair_delivers_a_text(self):
        done = run_example("loopback_pair.py", "--text", "QA TEXT 20", "--snr-db", "25",
                           "--seed", "3", "--timeout", "180")
        self.assertEqual(done.returncode, 0, done.stdout + done.stderr)
        self.assertIn("node B delivered 'QA TEXT 20'", done.stdout)
        heard = [line for line in done.stdout.splitlines() if line.startswith("burst heard by node B: 2400S")]
        self.assertGreaterEqual(len(heard), 1, done.stdout)

    def test_sound_card_node_without_the_card(self):
        done = run_example("audio_node.py", "--device", "plughw:CARD=NoSuchCardHere", "--sis-port", "0",
                           timeout=60)
        self.assertEqual(done.returncode, 1, done.stdout + done.stderr)
        lines = done.stderr.strip().splitlines()
        self.assertEqual(len(lines), 1, done.stderr)
        self.assertIn("sound card plughw:CARD=NoSuchCardHere cannot be opened", lines[0])

    def test_sound_card_node_serves_until_sigterm(self):
        """On ALSA's null device (plays and records silence) the node serves; SIGTERM
        stops it and its counters come out as one JSON line."""
        returncode, out, err = sigterm_once_said(
            [sys.executable, os.path.join(EXAMPLES, "audio_node.py"), "--device", "null", "--sis-port", "0",
             "--address", "0.0.0.7"], "Ctrl-C stops", os.environ)
        self.assertEqual(returncode, 0, err)
        self.assertIn("node 0.0.0.7 on sound card null, SIS on 127.0.0.1:", err)
        counters = json.loads(out.strip().splitlines()[-1])
        self.assertEqual(counters["node"], "0.0.0.7")
        self.assertIn("bursts_received", counters["radio"])

    def test_usrp_node_without_the_usrp(self):
        done = run_example("usrp_node.py", "--frequency-hz", "7.0758e6", "--device-args",
                           "type=b200,serial=NOSUCHSERIAL", "--sis-port", "0", timeout=120)
        self.assertEqual(done.returncode, 1, done.stdout + done.stderr)
        lines = [line for line in done.stderr.strip().splitlines() if line.startswith("usrp_node.py:")]
        self.assertEqual(len(lines), 1, done.stderr)
        # In the user's terms: which device, and how to find and name one.
        self.assertIn("no USRP found for device_args type=b200,serial=NOSUCHSERIAL", lines[0])
        self.assertIn("uhd_find_devices", lines[0])

    def test_bad_option_is_a_usage_error(self):
        done = run_example("loopback_pair.py", "--mode", "2400X", timeout=60)
        self.assertEqual(done.returncode, 2)
        self.assertIn("--mode 2400X", done.stderr)


if __name__ == "__main__":
    gr_unittest.run(qa_examples)
