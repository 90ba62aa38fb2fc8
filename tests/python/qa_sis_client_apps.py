#!/usr/bin/env python3
#
# Copyright 2026 gr-hfstack authors.
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""hfstack-ip and hfstack-pep before their SIS server is there: they wait (a station may
start later), saying so once in a line that reads as waiting, at level INFO, however
many times they try; --connect-timeout gives up with status 1 and one line saying why.
hfstack-pep --check prints its settings and opens nothing, as the other apps' --check."""

import json
import os
import socket
import subprocess
import sys
import time
import unittest

from gnuradio import gr_unittest

from test_support import app_path


def unused_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def run(app, *args, timeout=60):
    return subprocess.run([sys.executable, app_path(app), *args], capture_output=True,
                          text=True, timeout=timeout, env=os.environ)


class qa_sis_client_apps(gr_unittest.TestCase):

    def assert_waited_then_gave_up(self, done, app, port, seconds):
        where = f"127.0.0.1:{port}"
        self.assertEqual(done.returncode, 1, done.stderr)
        lines = done.stderr.splitlines()
        waiting = [line for line in lines if "waiting for the SIS server" in line]
        self.assertEqual(waiting, [f"{app}: INFO: waiting for the SIS server at {where} "
                                   "(Connection refused); trying every 5 s (--connect-timeout "
                                   "to give up)"], done.stderr)  # once, however many tries
        # Nothing before the end reads as a failure, and every line has the app's format.
        self.assertEqual([line for line in lines if not line.startswith(f"{app}: INFO: ")],
                         [f"{app}: ERROR: no SIS server at {where} after {seconds:g} s "
                          "(--connect-timeout); giving up"], done.stderr)

    def test_pep_waits_then_gives_up_at_the_connect_timeout(self):
        port = unused_port()
        t0 = time.monotonic()
        done = run("hfstack-pep", "--server", f"127.0.0.1:{port}", "--stats-interval", "0",
                   "--connect-timeout", "11")  # three tries, 5 s apart
        self.assertGreaterEqual(time.monotonic() - t0, 11)
        self.assert_waited_then_gave_up(done, "hfstack-pep", port, 11)

    @unittest.skipIf(os.geteuid() != 0 or not os.path.exists("/dev/net/tun"),
                     "needs root and /dev/net/tun for the TUN device")
    def test_ip_waits_then_gives_up_at_the_connect_timeout(self):
        port = unused_port()
        done = run("hfstack-ip", "--server", f"127.0.0.1:{port}", "--tun",
                   f"hfw{os.getpid() % 100000}", "--ip-route", "10.9.0.0/24=0.0.0.2",
                   "--stats-interval", "0", "--connect-timeout", "1")
        self.assert_waited_then_gave_up(done, "hfstack-ip", port, 1)

    def test_bad_connect_timeout_is_refused(self):
        for app in ("hfstack-pep", "hfstack-ip"):
            with self.subTest(app=app):
                done = run(app, "--connect-timeout", "-1")
                self.assertEqual(done.returncode, 2, done.stderr)
                self.assertEqual(done.stderr.strip(), f"{app}: --connect-timeout must be >= 0")

    def test_pep_check_prints_settings_and_opens_nothing(self):
        with socket.socket() as held:  # --check must not try to listen on it
            held.bind(("127.0.0.1", 0))
            held.listen()
            socks = f"127.0.0.1:{held.getsockname()[1]}"
            done = run("hfstack-pep", "--check", "--socks", socks, "--server", "127.0.0.1:1",
                       "--options", "peers=10.78.0.0/24=0.0.0.2")
        self.assertEqual(done.returncode, 0, done.stderr)
        s = json.loads(done.stdout)
        self.assertEqual((s["socks"], s["server"], s["options"]),
                         (socks, "127.0.0.1:1", "peers=10.78.0.0/24=0.0.0.2"))
        done = run("hfstack-pep", "--check", "--options", "peers=nonsense")
        self.assertEqual(done.returncode, 2, done.stderr)


if __name__ == "__main__":
    gr_unittest.run(qa_sis_client_apps)
