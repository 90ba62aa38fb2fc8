#!/usr/bin/env python3
#
# Copyright 2026 gr-hfstack authors.
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""apps/hfstack-sim: identical output for identical seeds, sane figures in every output
format, the anchors table, and a one-line reason for bad options."""

import csv
import io
import json
import os
import subprocess
import sys
import tempfile
import unittest

from gnuradio import gr_unittest

APP = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "apps",
                   "hfstack-sim")


def run(*args):
    return subprocess.run([sys.executable, APP, *args], capture_output=True, text=True,
                          timeout=300, env=os.environ)


def have_matplotlib():
    try:
        import matplotlib  # noqa: F401
        return True
    except ImportError:
        return False


class qa_hfstack_sim(gr_unittest.TestCase):

    def test_same_seed_same_output(self):
        args = ("throughput", "--mode", "2400S", "--bytes", "50k", "--ber", "1e-4",
                "--seed", "9", "--json", "-")
        a, b = run(*args), run(*args)
        self.assertEqual(a.returncode, 0, a.stderr)
        doc_a, doc_b = json.loads(a.stdout), json.loads(b.stdout)
        doc_a.pop("cpu_s")
        doc_b.pop("cpu_s")
        self.assertEqual(doc_a, doc_b)
        other = json.loads(run(*args[:-4], "--seed", "10", "--json", "-").stdout)
        other.pop("cpu_s")
        other["config"]["seed"] = doc_a["config"]["seed"]
        self.assertNotEqual(other, doc_a)  # other errors: other timings and counters
        # All 50,000 offered bytes delivered, in order, no more than the link could carry.
        row = doc_a["rows"][0]
        self.assertEqual(row["bytes"], 50000)
        self.assertEqual(row["duplicates"] + row["lost_or_late"] + row["rejected"], 0)
        self.assertLessEqual(row["utilisation_pct"], 100)

    def test_ping_csv_has_a_row_per_ping(self):
        done = run("ping", "--mode", "1200S", "--pings", "4", "--csv", "-")
        self.assertEqual(done.returncode, 0, done.stderr)
        rows = list(csv.DictReader(io.StringIO(done.stdout)))
        self.assertEqual([r["ping"] for r in rows], ["1", "2", "3", "4"])
        rtts = [float(r["rtt_s"]) for r in rows]
        self.assertTrue(all(0 < t < 60 for t in rtts), rtts)
        self.assertGreater(rtts[0], rtts[1])  # the first one makes the link

    def test_sweep_makes_one_row_per_value(self):
        done = run("sweep", "--param", "updu-size", "--values", "128,2048", "--mode", "1200S",
                   "--duration", "2000", "--csv", "-")
        self.assertEqual(done.returncode, 0, done.stderr)
        rows = list(csv.DictReader(io.StringIO(done.stdout)))
        self.assertEqual([r["updu-size"] for r in rows], ["128", "2048"])
        small, large = (float(r["steady_utilisation_pct"]) for r in rows)
        self.assertLess(small, large)
        self.assertLessEqual(large, 100)

    def test_fading_costs_less_as_the_snr_rises(self):
        done = run("sweep", "--param", "snr", "--values", "8,12,20", "--mode", "1200S",
                   "--profile", "poor", "--duration", "3600", "--csv", "-")
        self.assertEqual(done.returncode, 0, done.stderr)
        rows = list(csv.DictReader(io.StringIO(done.stdout)))
        util = [float(r["utilisation_pct"]) for r in rows]
        retx = [int(r["retransmissions"]) for r in rows]
        self.assertEqual(util, sorted(util), util)
        self.assertEqual(retx, sorted(retx, reverse=True), retx)
        self.assertGreater(retx[0], 10 * max(retx[2], 1))

    def test_reproduce_covers_sections_a_and_b(self):
        with tempfile.TemporaryDirectory() as out:
            path = os.path.join(out, "anchors.csv")
            done = run("reproduce", "--csv", path)
            self.assertEqual(done.returncode, 0, done.stderr)
            self.assertIn("| section | scenario | published | ours | ratio | better |",
                          done.stdout)
            with open(path) as f:
                rows = list(csv.DictReader(f))
        self.assertEqual({r["section"] for r in rows}, {"A", "B"})
        self.assertGreater(len(rows), 50)
        for r in rows:
            self.assertNotIn(r["ours"], ("", "nan"), r)

    @unittest.skipUnless(have_matplotlib(), "python3-matplotlib not installed")
    def test_plot_writes_a_png(self):
        with tempfile.TemporaryDirectory() as out:
            png = os.path.join(out, "saw.png")
            done = run("throughput", "--mode", "9600S", "--duration", "900", "--plot", png,
                       "--quiet")
            self.assertEqual(done.returncode, 0, done.stderr)
            with open(png, "rb") as f:
                self.assertEqual(f.read(8), b"\x89PNG\r\n\x1a\n")

    def test_bad_options_are_refused_with_a_reason(self):
        cases = [
            (("ping", "--mode", "1300S"), "STANAG 4539 mode"),
            (("ping", "--mode", "12800U"), "Table C-5"),
            (("throughput", "--priority", "20"), "--priority"),
            (("throughput", "--updu-size", "4"), "--updu-size"),
            (("throughput", "--acknowledged", "--non-arq"), "--acknowledged"),
            (("throughput", "--ber", "2"), "ber"),
            (("throughput", "--nodes", "1"), "nodes"),
            (("throughput", "--node-option", "bogus=1"), "bogus"),
            (("throughput", "--bytes", "lots"), "byte count"),
            (("throughput", "--duration", "-5"), "positive"),
            (("sweep", "--param", "colour", "--values", "1"), "--param"),
            (("throughput", "--profile", "poor"), "--snr"),
            (("throughput", "--profile", "stormy", "--snr", "10"), "profile"),
            ((), "choose a command"),
        ]
        for args, needle in cases:
            done = run(*args)
            self.assertEqual(done.returncode, 2, (args, done.stdout, done.stderr))
            self.assertIn(needle, done.stderr, args)
            self.assertNotIn("Traceback", done.stderr, args)


if __name__ == "__main__":
    gr_unittest.run(qa_hfstack_sim)
