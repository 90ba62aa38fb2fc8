#
# Copyright 2026 gr-hfstack authors.
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""What qa_kiss and qa_ardop share: two hfstack-node processes over emulated modems
(ipc:// air between them) with the host programs' gateways beside them, all real
processes on loopback, stopped at the end of each test. Not a test itself."""

import os
import shutil
import subprocess
import sys
import tempfile
import unittest

from gnuradio.hfstack.testbed import stop_processes
from test_support import accepts, free_port, wait_for

NODE = [sys.executable, "-m", "gnuradio.hfstack.apps.node"]  # hfstack-node, installed or not
START_S = 60  # a process ready within this, or the test fails


class two_stations(unittest.TestCase):
    """A test case with a temporary directory, processes stopped in tearDown, and
    start_node()."""

    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="hfstack-ham-")
        self.addCleanup(shutil.rmtree, self.tmp, True)
        self.processes = []

    def tearDown(self):
        stop_processes(self.processes)

    @staticmethod
    def stop(p):
        stop_processes([p])

    def spawn(self, args, log, stdout=subprocess.DEVNULL, stdin=subprocess.DEVNULL, env=None):
        with open(log, "a") as err:
            p = subprocess.Popen(args, stdout=stdout, stderr=err, stdin=stdin, env=env)
        self.processes.append(p)
        return p

    def start_node(self, me, other, rate="9600", extra=(), real_modem=False):
        """Node 0.0.0.ME, its air shared with node 0.0.0.OTHER, with more options
        `extra`; its SIS port. Over the modem emulator at time scale 20, or with
        `real_modem` the STANAG 4539 modem itself on audio through a white-noise channel
        (30 dB) in real time."""
        port, log = free_port(), os.path.join(self.tmp, f"node-{me}.log")
        radio = (["--kind", "loopback", "--profile", "awgn", "--snr-db", "30"] if real_modem
                 else ["--kind", "emulator", "--profile", "", "--time-scale", "20"])
        p = self.spawn([*NODE, "--address", f"0.0.0.{me}", *radio, "--data-rate", rate,
                        "--sis-port", str(port), "--stats-interval", "0",
                        "--air-publish", f"ipc://{self.tmp}/air-{me}",
                        "--air-subscribe", f"ipc://{self.tmp}/air-{other}",
                        "--log-level", "warn", *extra], log)
        wait_for(f"node {me}", lambda: accepts(port), START_S, p, log)
        return port
