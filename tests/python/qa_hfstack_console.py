#!/usr/bin/env python3
#
# Copyright 2026 gr-hfstack authors.
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""apps/hfstack-console against our own live server (apps/hfstack-node: two nodes on
an emulated link, their clocks 50 times faster than real time): pings answered by a
second connection or by a separate echo, every byte of a throughput run delivered in
order, and a one-line reason with exit 2 for bad input."""

import csv
import io
import json
import math
import os
import socket
import subprocess
import sys
import tempfile
import threading
import time

from gnuradio import gr_unittest

from test_support import APPS, accepts, free_port_pair

CONSOLE = os.path.join(APPS, "hfstack-console")
NODE = os.path.join(APPS, "hfstack-node")
# 9600 bit/s with the node clocks 50x faster: a 20 kB run takes well under a second.
TIME_SCALE = "50"
# Two nodes joined by emulated modems (air time, latency, no errors), 9600S.
SERVER = ["--pair", "--kind", "emulator", "--profile", "", "--time-scale", TIME_SCALE,
          "--data-rate", "9600", "--options", "channel_access.mode=none", "--stats-interval", "0"]


def run(*args, timeout=60):
    return subprocess.run([sys.executable, CONSOLE, *args], capture_output=True, text=True,
                          timeout=timeout, env=os.environ)


class qa_hfstack_console(gr_unittest.TestCase):

    def setUp(self):
        self.server = None

    def tearDown(self):
        if self.server and self.server.poll() is None:
            self.server.terminate()
            try:
                self.server.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.server.kill()
                self.server.wait()
        if self.server:
            self.server_log.close()

    def start_server(self):
        """hfstack-node on P (node A, 0.0.0.1) and P + 1 (node B, 0.0.0.2); returns P
        once both accept connections."""
        port = free_port_pair()
        self.server_log = tempfile.TemporaryFile()
        self.server = subprocess.Popen([sys.executable, NODE, "--sis-port", str(port), *SERVER],
                                       stdout=self.server_log, stderr=subprocess.STDOUT,
                                       env=os.environ)
        deadline = time.monotonic() + 30  # GNU Radio's import is slow on a loaded machine
        while not (accepts(port) and accepts(port + 1)):
            if self.server.poll() is not None:
                self.server_log.seek(0)
                self.fail("hfstack-node exited: " + self.server_log.read().decode(errors="replace"))
            self.assertLess(time.monotonic(), deadline, "hfstack-node never listened")
            time.sleep(0.05)  # between polls only: the loop is bounded by the deadline
        return port

    def assert_one_line_reason(self, done, reason):
        self.assertEqual(done.returncode, 2, done.stdout + done.stderr)
        self.assertEqual(len(done.stderr.splitlines()), 1, done.stderr)
        self.assertTrue(done.stderr.startswith("hfstack-console: "), done.stderr)
        self.assertIn(reason, done.stderr)
        self.assertNotIn("Traceback", done.stderr)

    def test_ping_answered_by_the_far_connection(self):
        port = self.start_server()
        done = run("ping", "--port", str(port), "--far-port", str(port + 1), "--peer", "0.0.0.2",
                   "--pings", "3", "--gap", "0", "--time-scale", TIME_SCALE, "--csv", "-")
        self.assertEqual(done.returncode, 0, done.stdout + done.stderr)
        rows = list(csv.DictReader(io.StringIO(done.stdout)))
        self.assertEqual([r["ping"] for r in rows], ["1", "2", "3"])
        for r in rows:
            rtt = float(r["rtt_s"])  # an empty cell (lost) would not parse
            self.assertTrue(math.isfinite(rtt) and rtt > 0, r)
        print("ping round trips, protocol s:", [float(r["rtt_s"]) for r in rows])

    def test_throughput_delivers_every_byte_in_order(self):
        port = self.start_server()
        done = run("throughput", "--port", str(port), "--far-port", str(port + 1),
                   "--peer", "0.0.0.2", "--bytes", "20k", "--line-rate", "9600", "--duration", "40",
                   "--time-scale", TIME_SCALE, "--json", "-")
        self.assertEqual(done.returncode, 0, done.stdout + done.stderr)
        doc = json.loads(done.stdout)
        self.assertTrue(doc["completed"])
        (row,) = doc["rows"]
        self.assertEqual(row["flow"], "near->far")
        self.assertEqual(row["bytes"], 20000)
        self.assertEqual((row["lost_or_late"], row["duplicates"], row["corrupt"],
                          row["rejected"]), (0, 0, 0, 0))
        far = doc["clients"]["far"]
        self.assertEqual((far["updus_received"], far["bytes_received"]), (row["updus"], 20000))
        self.assertEqual(doc["clients"]["near"]["bytes_sent"], 20000)
        self.assertEqual(doc["series"]["near->far"][-1][1], 20000)
        # Utilisation as the simulator computes it; the emulated modems take the air time
        # of every burst, so it stays below 100 %.
        seconds = doc["end_time_s"] - doc["clients"]["near"]["first_send_at"]
        self.assertAlmostEqual(row["utilisation_pct"], 100 * 20000 * 8 / (9600 * seconds),
                               delta=0.006)
        self.assertLess(row["utilisation_pct"], 100)
        print(f"one-way 20 kB: {row['throughput_bps']} bit/s in {row['seconds']} s "
              f"protocol time ({row['utilisation_pct']} % of 9600)")

        # Both ways at once, on another SAP so nothing of the first run can mix in.
        done = run("throughput", "--port", str(port), "--far-port", str(port + 1),
                   "--peer", "0.0.0.2", "--two-way", "--near-address", "0.0.0.1",
                   "--sap", "3", "--bytes", "20k", "--time-scale", TIME_SCALE, "--json", "-",
                   "--duration", "40")
        self.assertEqual(done.returncode, 0, done.stdout + done.stderr)
        doc = json.loads(done.stdout)
        self.assertEqual([(r["flow"], r["bytes"], r["lost_or_late"], r["duplicates"])
                          for r in doc["rows"]],
                         [("near->far", 20000, 0, 0), ("far->near", 20000, 0, 0)])
        self.assertIsNone(doc["rows"][0]["utilisation_pct"])  # no --line-rate, only bit/s

    def test_ping_to_an_unknown_peer_says_so_and_fails(self):
        """It printed "first None s" and exited 0."""
        port = self.start_server()
        done = run("ping", "--port", str(port), "--peer", "0.0.0.9", "--pings", "1",
                   "--ping-timeout", "120", "--time-scale", TIME_SCALE)
        self.assertEqual(done.returncode, 1, done.stdout + done.stderr)
        self.assertNotIn("None", done.stdout)
        self.assertIn("first lost", done.stdout)
        self.assertIn("1 of 1 pings not answered", done.stderr)

    def test_throughput_with_nobody_at_the_far_end_counts_confirmed_bytes(self):
        """With no far connection it counted the bytes handed to the local node: 71
        Mbit/s with nobody at the far end. Now the node's delivery confirmations."""
        port = self.start_server()
        done = run("throughput", "--port", str(port), "--peer", "0.0.0.2", "--bytes", "20k",
                   "--line-rate", "9600", "--duration", "40", "--time-scale", TIME_SCALE,
                   "--json", "-")
        self.assertEqual(done.returncode, 0, done.stdout + done.stderr)
        (row,) = json.loads(done.stdout)["rows"]
        self.assertEqual(row["bytes"], 20000)
        self.assertLess(row["utilisation_pct"], 100)
        self.assertGreater(row["utilisation_pct"], 10)
        self.assert_one_line_reason(
            run("throughput", "--port", str(port), "--peer", "0.0.0.2", "--non-arq"),
            "non-ARQ throughput needs --far-port")

    def test_figures_a_wrong_time_scale_makes_impossible_are_refused(self):
        """Against a server 50x faster than real time, --time-scale 1 would report 50
        times the link's rate and round trips shorter than the air time."""
        port = self.start_server()
        done = run("throughput", "--port", str(port), "--far-port", str(port + 1),
                   "--peer", "0.0.0.2", "--bytes", "20k", "--line-rate", "9600", "--duration", "40")
        self.assertEqual(done.returncode, 1, done.stdout + done.stderr)
        self.assertIn("which no link delivers: --line-rate and --time-scale must match", done.stderr)
        done = run("ping", "--port", str(port), "--far-port", str(port + 1), "--peer", "0.0.0.2",
                   "--pings", "2", "--gap", "0", "--line-rate", "9600")
        self.assertEqual(done.returncode, 1, done.stdout + done.stderr)
        self.assertIn("shorter than the air time of a ping and its answer", done.stderr)

    def test_rate_and_time_scale_from_the_node_statistics(self):
        """The node's statistics header says its mode and time scale; with
        --node-stats the console takes them from there and its figures are right."""
        port = self.start_server()
        with tempfile.TemporaryDirectory() as d:
            stats = os.path.join(d, "stats.jsonl")
            with open(stats, "w") as f:
                f.write(json.dumps({"type": "header", "mode": "9600S",
                                    "time_scale": float(TIME_SCALE)}) + "\n")
            done = run("throughput", "--port", str(port), "--far-port", str(port + 1),
                       "--peer", "0.0.0.2", "--bytes", "20k", "--duration", "40",
                       "--node-stats", stats, "--json", "-")
        self.assertEqual(done.returncode, 0, done.stdout + done.stderr)
        doc = json.loads(done.stdout)
        self.assertEqual((doc["nominal_bps"], doc["time_scale"]), (9600.0, 50.0))
        self.assertLess(doc["rows"][0]["utilisation_pct"], 100)

    def test_version(self):
        done = run("--version")
        self.assertEqual(done.returncode, 0, done.stderr)
        self.assertRegex(done.stdout, r"^hfstack-console \S+")

    def test_echo_answers_a_separate_console_and_stops_at_duration(self):
        port = self.start_server()
        started = time.monotonic()
        echo = subprocess.Popen([sys.executable, CONSOLE, "echo", "--port", str(port + 1),
                                 "--duration", "4", "--time-scale", TIME_SCALE, "--json", "-"],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                env=os.environ)
        try:
            ready = echo.stderr.readline()  # once its SAP is bound; --duration bounds it
            self.assertIn("bound SAP 13", ready)
            done = run("ping", "--port", str(port), "--peer", "2", "--pings", "3", "--gap", "0",
                       "--time-scale", TIME_SCALE, "--json", "-")
            self.assertEqual(done.returncode, 0, done.stdout + done.stderr)
            self.assertEqual(len([p for p in json.loads(done.stdout)["ping"]
                                  if p["rtt_s"] is not None]), 3)
            out, err = echo.communicate(timeout=30)
        finally:
            if echo.poll() is None:
                echo.kill()
                echo.wait()
        elapsed = time.monotonic() - started
        self.assertEqual(echo.returncode, 0, err)
        self.assertGreaterEqual(elapsed, 4)
        self.assertLess(elapsed, 20)
        self.assertEqual(json.loads(out)["clients"]["echo"]["pings_answered"], 3)

    def test_bad_input_gives_exit_2_and_one_line_reason(self):
        closed = free_port_pair()  # nothing listens there
        self.assert_one_line_reason(run("ping", "--port", str(closed), "--peer", "0.0.0.2"),
                                    "connection refused")
        self.assert_one_line_reason(run("ping", "--peer", "1.2"), "is not a node address")
        self.assert_one_line_reason(run("ping", "--peer", "0.0.0.2", "--priority", "99"),
                                    "--priority must be 0..15")
        self.assert_one_line_reason(run("throughput", "--peer", "2", "--two-way"),
                                    "--two-way needs --far-port")
        self.assert_one_line_reason(run("ping", "--peer", "2", "--port", "0"), "TCP port")

        # A server that hangs up before the bind is answered.
        with socket.socket() as listener:
            listener.bind(("127.0.0.1", 0))
            listener.listen()

            def hang_up():
                connection, _ = listener.accept()
                connection.close()

            th = threading.Thread(target=hang_up, daemon=True)
            th.start()
            done = run("ping", "--port", str(listener.getsockname()[1]), "--peer", "0.0.0.2")
            th.join(timeout=10)
        self.assert_one_line_reason(done, "closed the connection")


if __name__ == "__main__":
    gr_unittest.run(qa_hfstack_console)
