#!/usr/bin/env python3
#
# Copyright 2026 gr-hfstack authors.
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""bench/network_real_time.py on three hfstack-node emulator processes sharing one
ZeroMQ channel: the preset's flows are served and reported in the simulator's shape
(the same flow, node and summary fields as `hfstack-sim network --json`); the three
stations call at the first instant and their modems count the collision, as the
simulator's do; the nodes' queues are filled as the simulator's client fills them;
what the channel has no counterpart for is refused. No namespaces, no root."""

import json
import os
import subprocess
import sys

from gnuradio import gr_unittest

from test_support import TOP

BENCH = os.path.join(TOP, "bench", "network_real_time.py")


def bench(*args, timeout=300):
    return subprocess.run([sys.executable, BENCH, *args], capture_output=True, text=True,
                          timeout=timeout, env=dict(os.environ, HFSTACK_STATE_DIR="none"))


class qa_network_real_time(gr_unittest.TestCase):

    def test_three_stations_on_one_channel_in_the_simulators_shape(self):
        done = bench("--nodes", "3", "--preset", "bulk", "--mode", "2400S", "--duration", "300",
                     "--time-scale", "20", "--compare", "--json", "-")
        self.assertEqual(done.returncode, 0, done.stderr[-3000:])
        doc = json.loads(done.stdout)
        virtual = doc["virtual"]
        for part in ("flows", "nodes"):
            self.assertEqual([sorted(r) for r in doc[part]], [sorted(r) for r in virtual[part]])
        self.assertLessEqual(set(virtual["summary"]), set(doc["summary"]))
        # bulk 0 -> 1 beside chat 2 -> 0 (fewer than four nodes)
        self.assertEqual([(f["kind"], f["from"], f["to"]) for f in doc["flows"]],
                         [("bulk", 0, 1), ("chat", 2, 0)])
        self.assertGreater(doc["flows"][0]["bytes_delivered"], 0)
        self.assertEqual(doc["flows"][0]["duplicates"], 0)
        # Nodes 0 and 2 both call at the first instant: both calls are lost at every
        # receiver that heard them overlap.
        self.assertGreater(doc["summary"]["collisions"], 0)
        self.assertEqual([n["node"] for n in doc["nodes"]], [0, 1, 2])
        self.assertGreater(doc["summary"]["occupancy"], 0)

    def test_queues_filled_and_first_bursts_heard_as_in_the_simulator(self):
        # The hub's three flows share one DATA_FLOW_OFF: the simulator's client hands
        # over a batch of 64, then one U_PDU at a time until the node says stop; a
        # second whole batch (128 queued) shifted every later hand-over and with it the
        # median latencies. Nothing is acknowledged in the first 20 s.
        done = bench("--nodes", "3", "--preset", "hub-spoke", "--mode", "2400S",
                     "--duration", "20", "--time-scale", "20", "--compare", "--json", "-")
        self.assertEqual(done.returncode, 0, done.stderr[-3000:])
        doc = json.loads(done.stdout)
        sent = [f["sent"] for f in doc["flows"]]
        self.assertEqual(sent, [f["sent"] for f in doc["virtual"]["flows"]])
        self.assertLess(sent[0] + sent[2], 128)
        # The three first link requests collide at every station: each emulator heard
        # both others' (a subscriber still waiting to join its publisher heard none).
        self.assertEqual([n["collisions"] for n in doc["nodes"]],
                         [n["collisions"] for n in doc["virtual"]["nodes"]])

    def test_what_the_emulated_channel_cannot_do_is_refused(self):
        for args in (("--hidden", "1-2"), ("--power-off", "1@10")):
            done = bench("--nodes", "3", *args, timeout=60)
            self.assertEqual(done.returncode, 2, done.stderr)
            self.assertIn("no counterpart on the emulated channel", done.stderr)


if __name__ == "__main__":
    gr_unittest.run(qa_network_real_time)
