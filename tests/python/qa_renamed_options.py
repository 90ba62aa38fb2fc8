#!/usr/bin/env python3
#
# Copyright 2026 gr-hfstack authors.
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""Each app's former --rate (a sample rate in hfstack-modem and hfstack-chan, a data
rate in hfstack-node, rate adaptation in hfstack-sim, a line rate in hfstack-console)
still sets what its new name sets, for scripts written against the previous release,
and --help shows only the new name."""

import argparse
import re
import subprocess
import sys

from gnuradio import gr_unittest
from gnuradio.hfstack import cli
from gnuradio.hfstack.apps import chan, console, modem, node, sim

from test_support import app_path

OLD = re.compile(r"--rate(?![-\w])")


def parsed(parse, argv):
    """`parse(argv)` as usage_error would leave it: the namespace, or the error's text."""
    try:
        return parse(argv)
    except cli.usage_error as e:
        return str(e)


class qa_renamed_options(gr_unittest.TestCase):

    def assertSameSetting(self, parse, before, after, old, new, dest):
        a, b = parsed(parse, before + [old] + after), parsed(parse, before + [new] + after)
        self.assertIsInstance(a, argparse.Namespace, a)
        self.assertIsInstance(b, argparse.Namespace, b)
        self.assertEqual(getattr(a, dest), getattr(b, dest))
        self.assertEqual(vars(a), vars(b))
        return getattr(b, dest)

    def test_sample_rate(self):
        self.assertEqual(self.assertSameSetting(chan.parse_args, ["in.f32", "out.f32"], ["9600"],
                                                "--rate", "--sample-rate", "sample_rate"), 9600.0)
        tx = ["tx", "--mode", "2400S", "--text", "x", "out.wav"]
        self.assertEqual(self.assertSameSetting(modem.parse_args, tx, ["48000"], "--rate",
                                                "--sample-rate", "sample_rate"), 48000)
        ber = ["ber", "--modes", "2400S", "--snr", "10"]
        self.assertEqual(self.assertSameSetting(modem.parse_args, ber, ["19200"], "--rate",
                                                "--sample-rate", "sample_rate"), 19200)

    def test_data_rate(self):
        for value in ("1200", "auto"):
            self.assertEqual(self.assertSameSetting(node.parse_args, [], [value], "--rate",
                                                    "--data-rate", "data_rate"), value)

    def test_rate_adaptation(self):
        p = cli.one_line_parser()
        sim.add_run_options(p)
        self.assertEqual(self.assertSameSetting(p.parse_args, [], ["auto"], "--rate",
                                                "--rate-adaptation", "rate_adaptation"), "auto")
        self.assertEqual(p.parse_args([]).rate_adaptation, "fixed")
        self.assertIn("invalid choice", parsed(p.parse_args, ["--rate", "sometimes"]))

    def test_line_rate(self):
        p = cli.one_line_parser()
        console.add_connection_options(p, far=True)
        self.assertEqual(self.assertSameSetting(p.parse_args, ["--peer", "0.0.0.2"], ["9600"],
                                                "--rate", "--line-rate", "line_rate"), 9600.0)
        self.assertIsNone(p.parse_args(["--peer", "0.0.0.2"]).line_rate)

    def test_help_names_only_the_new_options(self):
        for app, command, new in (("hfstack-chan", [], "--sample-rate"),
                                  ("hfstack-modem", ["tx"], "--sample-rate"),
                                  ("hfstack-modem", ["ber"], "--sample-rate"),
                                  ("hfstack-node", [], "--data-rate"),
                                  ("hfstack-sim", ["throughput"], "--rate-adaptation"),
                                  ("hfstack-console", ["throughput"], "--line-rate")):
            done = subprocess.run([sys.executable, app_path(app), *command, "--help"],
                                  capture_output=True, text=True, timeout=120)
            self.assertEqual(done.returncode, 0, done.stderr)
            self.assertIn(new, done.stdout, (app, command))
            self.assertIsNone(OLD.search(done.stdout), (app, command))

    def test_a_misspelt_option_is_not_pointed_at_a_hidden_one(self):
        self.assertIn("did you mean --data-rate?", parsed(node.parse_args, ["--data-rte", "1"]))
        self.assertNotIn("--rate?", parsed(node.parse_args, ["--rat3", "1"]))


if __name__ == "__main__":
    gr_unittest.run(qa_renamed_options)
