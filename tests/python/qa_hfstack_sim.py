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

from test_support import app_path

APP = app_path("hfstack-sim")


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

    def test_reproduce_covers_sections_a_to_d(self):
        with tempfile.TemporaryDirectory() as out:
            path = os.path.join(out, "anchors.csv")
            done = run("reproduce", "--csv", path)
            self.assertEqual(done.returncode, 0, done.stderr)
            self.assertIn("| section | scenario | published | ours | ratio | verdict |",
                          done.stdout)
            with open(path) as f:
                rows = list(csv.DictReader(f))
        self.assertEqual({r["section"] for r in rows}, {"A", "B", "C", "D"})
        # Section D: every HF-PEP transfer completes (simulated TCP ends, real kernels).
        pep_rows = {r["scenario"]: float(r["ours"]) for r in rows if r["section"] == "D"}
        self.assertEqual(len(pep_rows), 48, pep_rows)
        # The 240 kbps rows (STANAG 5069 WN12/48kHz/US): every transfer
        # completes; prose with DEFLATE crosses faster than the link's rate.
        wide = "HF-PEP 240 kbps (WN12/48kHz/US)"
        for size in ("1 kB", "10 kB", "100 kB", "1 MB", "10 MB"):
            self.assertGreater(pep_rows[f"{wide}, {size}"], 0, size)
        self.assertGreater(pep_rows[f"{wide}, 1 MB, text, DEFLATE"], 100)
        self.assertGreater(pep_rows["HF-PEP 9600 bps, 1 MB"], pep_rows["HF-PEP 9600 bps, 1 kB"])
        # DEFLATE: prose crosses faster than the published (uncompressed) figure allows
        # for bulk rows, random bytes gain nothing; bit errors cost utilisation.
        bulk = pep_rows["HF-PEP 9600 bps, 100 kB"]
        self.assertGreater(pep_rows["HF-PEP 9600 bps, 100 kB, text, DEFLATE"], 2 * bulk)
        self.assertLess(pep_rows["HF-PEP 9600 bps, 100 kB, random, DEFLATE"], bulk * 1.01)
        self.assertGreater(bulk, pep_rows["HF-PEP 9600 bps, 100 kB, BER 1e-5"])
        self.assertGreater(pep_rows["HF-PEP 9600 bps, 100 kB, BER 1e-5"],
                           pep_rows["HF-PEP 9600 bps, 100 kB, BER 1e-4"])
        self.assertGreater(len(rows), 50)
        # Section C: the IP client's ping and DNS rows, two IP hosts in virtual time.
        ip_rows = {r["scenario"]: float(r["ours"]) for r in rows if r["section"] == "C"}
        self.assertEqual(len(ip_rows), 8, ip_rows)
        self.assertLess(ip_rows["F.12 IP client ping 9600 bps, average of 5"],
                        ip_rows["F.12 IP client ping 300 bps, average of 5"])
        self.assertLess(ip_rows["F.12 IP client ping 240 kbps (WN12/48kHz/US), average of 5"],
                        ip_rows["F.12 IP client ping 9600 bps, average of 5"])
        for r in rows:
            self.assertNotIn(r["ours"], ("", "nan"), r)
        # What the model does not represent is said, not called better or worse.
        two_way = [r for r in rows if r["scenario"].startswith("two-way")]
        self.assertEqual(len(two_way), 4)
        for r in two_way + [r for r in rows if "zero interleaver" in r["scenario"]]:
            self.assertEqual(r["verdict"], "not comparable", r)
            self.assertTrue(r["not_represented"], r)
        self.assertEqual({r["verdict"] for r in rows} - {"not comparable"},
                         {"ours better", "published better"})
        # The published figures live in the repository.
        published = os.path.join(os.path.dirname(APP), "..", "docs",
                                 "published-measurements.md")
        with open(published) as f:
            text = f.read()
        self.assertIn("9600 -> 7700 out / 320 back", text)
        self.assertIn("9600: 25.0 (12.9/33.1)", text)

    @unittest.skipUnless(have_matplotlib(), "python3-matplotlib not installed")
    def test_plot_writes_a_png(self):
        with tempfile.TemporaryDirectory() as out:
            png = os.path.join(out, "saw.png")
            done = run("throughput", "--mode", "9600S", "--duration", "900", "--plot", png,
                       "--quiet")
            self.assertEqual(done.returncode, 0, done.stderr)
            with open(png, "rb") as f:
                self.assertEqual(f.read(8), b"\x89PNG\r\n\x1a\n")

    def test_json_is_strict(self):
        """No NaN or Infinity tokens (RFC 8259): a strict parser reads every output."""
        def strict(text):
            return json.loads(text, parse_constant=lambda c: self.fail(f"{c} in JSON"))
        for args in (("throughput", "--mode", "9600S", "--bytes", "2k"),
                     ("ping", "--mode", "1200S", "--pings", "2", "--ber", "0.01",
                      "--ping-timeout", "60", "--duration", "300"),
                     ("sweep", "--param", "snr", "--values", "0,30", "--mode", "2400S",
                      "--profile", "poor", "--duration", "600")):
            with self.subTest(args=args):
                done = run(*args, "--json", "-")
                self.assertIn(done.returncode, (0, 1), done.stderr)
                strict(done.stdout)

    def test_snr_alone_means_awgn(self):
        """--snr without --profile used to change nothing but the figure the nodes were
        told; it is AWGN at that SNR now."""
        def utilisation(snr):
            done = run("throughput", "--mode", "2400S", "--duration", "900", "--snr", snr,
                       "--json", "-")
            self.assertEqual(done.returncode, 0, done.stderr)
            doc = json.loads(done.stdout)
            self.assertEqual(doc["config"]["profile"], "awgn")
            return doc["rows"][0]["utilisation_pct"], doc["rows"][0]["retransmissions"]
        (low, low_retx), (high, high_retx) = utilisation("10"), utilisation("30")
        self.assertLess(low, high)
        self.assertGreater(low_retx, high_retx)  # 0 retransmissions at 30 dB

    def test_seeds_give_mean_and_confidence_interval(self):
        done = run("throughput", "--mode", "2400S", "--bytes", "20k", "--ber", "1e-4",
                   "--seeds", "4", "--json", "-")
        self.assertEqual(done.returncode, 0, done.stderr)
        doc = json.loads(done.stdout)
        self.assertEqual(doc["seeds"], [1, 2, 3, 4])
        (row,) = doc["rows"]
        values = [run_["rows"][0]["utilisation_pct"] for run_ in doc["runs"]]
        self.assertAlmostEqual(row["utilisation_pct"], sum(values) / 4, places=2)
        self.assertGreater(row["utilisation_pct_ci95"], 0)
        self.assertEqual(len(set(values)), 4)  # the seeds differ

    def test_throughput_per_interval(self):
        from gnuradio.hfstack import traffic_report as tr
        starts, bps = tr.interval_throughput(10.0, [(12.0, 100), (15.0, 300), (31.0, 400)], 10.0)
        self.assertEqual(starts, [10.0, 20.0, 30.0])
        self.assertEqual(bps, [8 * 300 / 10, 0.0, 8 * 100 / 10])
        # Default: one step per span between delivery instants (two U_PDUs at t=15).
        starts, ends, bps = tr.delivery_throughput(
            10.0, [(12.0, 100), (15.0, 200), (15.0, 300), (31.0, 400)])
        self.assertEqual((starts, ends), ([10.0, 12.0, 15.0], [12.0, 15.0, 31.0]))
        self.assertEqual(bps, [8 * 100 / 2, 8 * 200 / 3, 8 * 100 / 16])

    def test_progress_bar_shows_the_note_and_ends_its_line(self):
        from gnuradio.hfstack import traffic_report as tr
        out = io.StringIO()
        bar = tr.progress_bar(100, after_s=0, stream=out, force=True)
        bar.update(40, "40 of 100 bytes")  # may be skipped: at most 5 refreshes a second
        bar.update(250, "all of them")  # beyond the total: shown as the total
        bar.close()  # draws the last state
        text = out.getvalue()
        self.assertIn("100/100", text)
        self.assertIn("all of them", text)
        self.assertTrue(text.endswith("\n"))
        quiet = io.StringIO()
        tr.progress_bar(100, stream=quiet).update(50)  # not a terminal: nothing
        self.assertEqual(quiet.getvalue(), "")

    @unittest.skipUnless(have_matplotlib(), "python3-matplotlib not installed")
    def test_every_command_plots(self):
        with tempfile.TemporaryDirectory() as out:
            for args in (("ping", "--mode", "1200S", "--pings", "3"),
                         ("sweep", "--param", "updu-size", "--values", "256,2048",
                          "--mode", "1200S", "--duration", "1200"),
                         ("reproduce",)):
                with self.subTest(args=args):
                    png = os.path.join(out, args[0] + ".png")
                    done = run(*args, "--plot", png, "--quiet")
                    self.assertEqual(done.returncode, 0, done.stderr)
                    with open(png, "rb") as f:
                        self.assertEqual(f.read(8), b"\x89PNG\r\n\x1a\n")

    @unittest.skipUnless(have_matplotlib(), "python3-matplotlib not installed")
    def test_reproduce_plot_draws_each_row_against_the_published_figure(self):
        """--plot draws each row's advantage (> 1: ours better), whichever way its unit
        is better, rows in order and grouped by section, not %, s and bit/s on one
        log-log chart."""
        from gnuradio.hfstack import published_scenarios as ps
        rows = [{"section": "A", "scenario": "fast", "unit": "bit/s", "published": 100,
                 "ours": 200, "ratio": 2.0, "verdict": "ours better", "not_represented": ""},
                {"section": "A", "scenario": "slow ping", "unit": "s", "published": 10,
                 "ours": 40, "ratio": 4.0, "verdict": "published better",
                 "not_represented": ""},
                {"section": "B", "scenario": "quick ping", "unit": "s", "published": 10,
                 "ours": 5, "ratio": 0.5, "verdict": "ours better", "not_represented": ""},
                {"section": "B", "scenario": "dead", "unit": "%", "published": 50, "ours": 0,
                 "ratio": 0.0, "verdict": "published better", "not_represented": ""},
                {"section": "B", "scenario": "none", "unit": "%", "published": 50,
                 "ours": None, "ratio": None, "verdict": "not comparable",
                 "not_represented": ""}]
        self.assertEqual([ps.advantage(r) for r in rows], [2.0, 0.25, 2.0, 0.0, None])
        # A published scenario's own direction: its ping times are better lower.
        ping = next(a for a in ps.SCENARIOS if a.unit == "s")
        self.assertFalse(ping.higher_is_better)
        self.assertEqual(ps.advantage({"section": ping.section, "scenario": ping.name,
                                       "unit": "s", "ratio": 0.8}), 1.25)
        with tempfile.TemporaryDirectory() as out:
            png = os.path.join(out, "reproduce.png")
            drawn = ps.plot(rows, png)
            with open(png, "rb") as f:
                self.assertEqual(f.read(8), b"\x89PNG\r\n\x1a\n")
        self.assertEqual(drawn, [("A", "fast (bit/s)", 2.0), ("A", "slow ping (s)", 0.25),
                                 ("B", "quick ping (s)", 2.0), ("B", "dead (%)", 0.0)])

    def test_version(self):
        done = run("--version")
        self.assertEqual(done.returncode, 0, done.stderr)
        self.assertRegex(done.stdout, r"^hfstack-sim \S+")

    def test_app_c_modes_run_under_the_modems_names(self):
        """12800U used to be refused (no Table C-5 code) and App C's US/VS/M/VL mapped to
        short or long; they are the nodes' own fixed mode now."""
        for mode in ("12800U", "9600VS", "3200US"):
            with self.subTest(mode=mode):
                done = run("throughput", "--mode", mode, "--bytes", "10k", "--json", "-")
                self.assertEqual(done.returncode, 0, done.stderr)
                doc = json.loads(done.stdout)
                self.assertEqual(doc["config"]["mode"], mode)
                self.assertGreater(doc["rows"][0]["utilisation_pct"], 0)

    def test_5069_modes_run_with_the_waveforms_timing(self):
        """A STANAG 5069 mode by the modem's name: the nodes' air time is App D's
        (phy/m110d_timing.h), its nominal rate the mode's."""
        from gnuradio.hfstack import sim
        done = run("--list-modes")
        self.assertEqual(done.returncode, 0, done.stderr)
        self.assertIn("WN8/3kHz/L", done.stdout.splitlines()[1])
        for mode, bps in (("WN8/3kHz/L", 6400), ("WN13/3kHz/US", 2400),
                          ("WN12/48kHz/US", 240000)):
            with self.subTest(mode=mode):
                done = run("throughput", "--mode", mode, "--bytes", "10k", "--json", "-")
                self.assertEqual(done.returncode, 0, done.stderr)
                doc = json.loads(done.stdout)
                self.assertEqual(doc["config"]["mode"], mode)
                self.assertEqual(doc["nominal_bps"], bps)
                self.assertEqual(sim.nominal_bps(mode), bps)
                self.assertGreater(doc["rows"][0]["utilisation_pct"], 0)
        # The same timing the modem blocks and hfstack-modem use.
        self.assertAlmostEqual(sim.air_time("WN8/3kHz/S", 0), (320 + 32 + 1152) / 2400)

    def test_5069_rate_adaptation_across_the_wns_of_a_bandwidth(self):
        """--rate-adaptation auto from a STANAG 5069 mode: the nodes climb the WN ladder of
        48 kHz; a mode the ladder cannot run is refused in one line."""
        done = run("throughput", "--mode", "WN6/48kHz/US", "--rate-adaptation", "auto", "--snr", "35",
                   "--bytes", "1M", "--json", "-")
        self.assertEqual(done.returncode, 0, done.stderr)
        doc = json.loads(done.stdout)
        self.assertEqual(doc["nominal_bps"], 48000)
        # Utilisation of WN6's rate above 100 %: the link ran in faster WNs.
        self.assertGreater(doc["rows"][0]["utilisation_pct"], 150)
        done = run("throughput", "--mode", "WN8/48kHz/M", "--rate-adaptation", "auto")
        self.assertEqual(done.returncode, 2)
        self.assertIn("US, S or L interleaver", done.stderr)
        self.assertEqual(len(done.stderr.strip().splitlines()), 1, done.stderr)

    def test_automatic_rate_follows_snr_steps(self):
        # --rate-adaptation auto with the SNR stepping down and up again on F.1487 poor;
        # the trace's modes show the link slowing for the low segment and speeding up
        # after it (our modems' curves put 12 dB below 4800 bps there).
        with tempfile.TemporaryDirectory() as tmp:
            trace = os.path.join(tmp, "trace.csv")
            done = run("throughput", "--mode", "2400S", "--rate-adaptation", "auto", "--profile", "poor",
                       "--snr", "25", "--snr-steps", "400:12,800:25", "--duration", "1200",
                       "--bytes", "2M", "--seed", "2", "--trace", trace, "--json", "-")
            # 2 MB is more than the 1200 s carry: exit 1, the transfer did not finish.
            self.assertEqual(done.returncode, 1, done.stderr)
            with open(trace) as f:
                rows = [r for r in csv.DictReader(f) if r["node"] == "1"
                        and int(r["dpdus"]) >= 4]

        def fastest(t0, t1):
            return max((int(r["mode"][:-1]) for r in rows
                        if t0 <= float(r["start_s"]) < t1), default=0)
        self.assertGreaterEqual(fastest(0, 400), 4800)
        self.assertLess(min(int(r["mode"][:-1]) for r in rows
                            if 600 <= float(r["start_s"]) < 800), 4800)
        self.assertGreaterEqual(fastest(800, 1200), 4800)
        row = json.loads(done.stdout)["rows"][0]
        self.assertEqual(row["duplicates"] + row["rejected"], 0)

    def test_bad_options_are_refused_with_a_reason(self):
        cases = [
            (("ping", "--mode", "1300S"), "STANAG 4539 mode"),
            # The zero interleaver: the reason the node and the modem give.
            (("ping", "--mode", "2400Z"),
             "--mode 2400Z: the zero interleaver (Z) is not implemented in our modem"),
            (("ping", "--mode", "9600VS", "--node-option", "rate_adaptation=true"),
             "mode 9600VS cannot be used with rate_adaptation"),
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
            (("throughput", "--seeds", "0"), "--seeds"),
            (("throughput", "--snr-steps", "100:10"), "--snr-steps needs --snr"),
            (("throughput", "--snr", "20", "--snr-steps", "100:x"), "is not SECONDS:DB"),
            (("throughput", "--snr", "20", "--snr-steps", "200:10,100:5"), "increasing"),
            (("throughput", "--rate-adaptation", "sometimes"), "--rate-adaptation"),
            (("throughput", "--rate-adaptation", "auto", "--mode", "9600VS"),
             "cannot be used with rate_adaptation"),
            ((), "choose a command"),
        ]
        for args, needle in cases:
            done = run(*args)
            self.assertEqual(done.returncode, 2, (args, done.stdout, done.stderr))
            self.assertIn(needle, done.stderr, args)
            self.assertNotIn("Traceback", done.stderr, args)


if __name__ == "__main__":
    gr_unittest.run(qa_hfstack_sim)
