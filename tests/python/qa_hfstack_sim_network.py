#!/usr/bin/env python3
#
# Copyright 2026 gr-hfstack authors.
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""apps/hfstack-sim network: the JSON document of a hub-and-spoke run, a traffic file
with a hidden pair, CSV rows, a one-line reason for a bad network, and a node powered
off and on in the middle of a run."""

import csv
import io
import json
import os
import subprocess
import sys
import tempfile

from gnuradio import gr_unittest

from test_support import app_path

APP = app_path("hfstack-sim")


def run(*args):
    return subprocess.run([sys.executable, APP, "network", *args], capture_output=True,
                          text=True, timeout=300, env=os.environ)


class qa_hfstack_sim_network(gr_unittest.TestCase):

    def test_hub_and_spoke_json(self):
        r = run("--nodes", "4", "--bytes", "10k", "--duration", "86400", "--json", "-")
        self.assertEqual(r.returncode, 0, r.stderr)
        doc = json.loads(r.stdout)
        self.assertEqual(doc["config"]["nodes"], 4)
        self.assertEqual(doc["config"]["preset"], "hub-spoke")
        s = doc["summary"]
        self.assertTrue(s["completed"])
        self.assertGreater(s["aggregate_bps"], 0)
        self.assertLessEqual(s["jain_bulk"], 1.0)
        self.assertGreater(s["jain_bulk"], 0.0)
        self.assertEqual(len(doc["flows"]), 6)  # both ways on three spokes
        for f in doc["flows"]:
            self.assertEqual(f["kind"], "bulk")
            self.assertEqual(f["bytes_delivered"], 10000)
            self.assertEqual(f["duplicates"], 0)
            self.assertEqual(f["sent"], f["delivered"])
            self.assertLessEqual(f["latency_p50_s"], f["latency_p99_s"])
        self.assertEqual([n["node"] for n in doc["nodes"]], [0, 1, 2, 3])
        to_hub = sum(f["bytes_delivered"] for f in doc["flows"] if f["to"] == 0)
        self.assertEqual(doc["nodes"][0]["bytes_delivered"], to_hub)
        self.assertGreater(sum(n["link_setups"] for n in doc["nodes"]), 0)
        # Same seed, same document.
        again = json.loads(run("--nodes", "4", "--bytes", "10k", "--duration", "86400",
                               "--json", "-").stdout)
        self.assertEqual(again, doc)

    def test_traffic_file_with_a_hidden_pair_and_csv(self):
        traffic = {"nodes": 3,
                   "paths": [{"from": 1, "to": 2, "hears": False}],
                   "flows": [{"kind": "bulk", "from": 1, "to": 0, "bytes": 20000},
                             {"kind": "bulk", "from": 2, "to": 0, "bytes": 20000},
                             {"kind": "chat", "from": 0, "to": 1, "messages": 2}]}
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "net.json")
            with open(path, "w") as f:
                json.dump(traffic, f)
            r = run("--traffic", path, "--duration", "86400", "--csv", "-")
        self.assertEqual(r.returncode, 0, r.stderr)
        rows = list(csv.DictReader(io.StringIO(r.stdout)))
        flows = [row for row in rows if row["row"] == "flow"]
        nodes = [row for row in rows if row["row"] == "node"]
        self.assertEqual(len(flows), 3)
        self.assertEqual(len(nodes), 3)
        self.assertEqual(flows[2]["kind"], "chat")
        self.assertGreater(sum(int(n["collisions"]) for n in nodes), 0)

    def test_timeline_csv_and_plot(self):
        with tempfile.TemporaryDirectory() as d:
            png = os.path.join(d, "timeline.png")
            r = run("--nodes", "3", "--bytes", "5k", "--duration", "86400",
                    "--timeline", "-", "--plot", png)
            self.assertEqual(r.returncode, 0, r.stderr)
            with open(png, "rb") as f:
                self.assertEqual(f.read(8), b"\x89PNG\r\n\x1a\n")
        rows = list(csv.DictReader(io.StringIO(r.stdout)))
        self.assertGreater(len(rows), 2)
        starts = [float(row["start_s"]) for row in rows]
        self.assertEqual(starts, sorted(starts))
        for row in rows:
            self.assertIn(int(row["node"]), (0, 1, 2))
            self.assertIn(int(row["to"]), (0, 1, 2))  # unicast ARQ only
            self.assertNotEqual(row["to"], row["node"])
            self.assertGreater(float(row["end_s"]), float(row["start_s"]))
        # The same run's JSON counts as many transmissions.
        doc = json.loads(run("--nodes", "3", "--bytes", "5k", "--duration", "86400",
                             "--json", "-").stdout)
        self.assertEqual(doc["summary"]["transmissions"], len(rows))

    def test_hub_serving_spokes_in_turn(self):
        turns = ("--node-option", "serve_in_turn_s=60",
                 "--node-option", "cas.max_nonexclusive_links=16")
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "bursts.csv")
            r = run("--nodes", "4", "--duration", "1800", "--json", "-",
                    "--timeline", path, *turns)
            self.assertEqual(r.returncode, 0, r.stderr)
            with open(path) as f:
                bursts = list(csv.DictReader(f))
        doc = json.loads(r.stdout)
        for f in doc["flows"]:  # both ways on every spoke, nothing twice
            self.assertGreater(f["bytes_delivered"], 0, f)
            self.assertEqual(f["duplicates"], 0)
        # The hub keeps its links and turns from spoke to spoke, again and again.
        hub_to = [b["to"] for b in bursts if b["node"] == "0" and int(b["bytes"]) > 1000]
        for spoke in ("1", "2", "3"):
            self.assertGreaterEqual(hub_to.count(spoke), 2, hub_to)
        self.assertLessEqual(doc["nodes"][0]["link_setups"], 6)
        r = run("--nodes", "4", "--duration", "10", "--node-option", "serve_in_turn_s=0")
        self.assertEqual(r.returncode, 2)
        self.assertIn("serve_in_turn_s must be a positive number", r.stderr)

    def test_chat_beside_bulk_on_an_assumed_network(self):
        # Every station calls at the first instant and all collide: the bulk pair then
        # hears no third station, unless it knows it is on a net.
        traffic = {"nodes": 5, "flows": [{"kind": "bulk", "from": 3, "to": 0},
                                         {"kind": "bulk", "from": 4, "to": 0},
                                         {"kind": "chat", "from": 1, "to": 2,
                                          "messages": 5}]}
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "t.json")
            with open(path, "w") as f:
                json.dump(traffic, f)
            r = run("--traffic", path, "--duration", "3600", "--json", "-",
                    "--node-option", "network_assumed=true")
        self.assertEqual(r.returncode, 0, r.stderr)
        flows = json.loads(r.stdout)["flows"]
        chat = flows[2]
        self.assertEqual(chat["round_trips_lost"], 0)
        self.assertEqual(chat["delivered"], 5)
        self.assertIsNotNone(chat["round_trip_p50_s"])
        for f in flows[:2]:
            self.assertGreater(f["bytes_delivered"], 0, f)

    def test_bad_networks_are_refused_in_one_line(self):
        with tempfile.TemporaryDirectory() as d:
            def traffic(doc):
                path = os.path.join(d, "t.json")
                with open(path, "w") as f:
                    json.dump(doc, f)
                return run("--traffic", path)

            cases = [
                (run("--nodes", "40"), "nodes must be 2..32, not 40"),
                (traffic({"nodes": 3, "flows": [{"from": 0, "to": 5}]}),
                 "flow 0 names node 5, but the network has nodes 0..2"),
                (traffic({"nodes": 3, "paths": [{"from": 0, "to": 1, "hears": False,
                                                 "snr": 10}],
                          "flows": [{"from": 0, "to": 1}]}),
                 "'hears': false contradicts 'snr'"),
                (traffic({"nodes": 3, "paths": [{"from": 0, "to": 1},
                                                {"from": 1, "to": 0, "hears": False}],
                          "flows": [{"from": 0, "to": 1}]}),
                 "path 1 sets the path 1 -> 0 a second time"),
                (traffic({"nodes": 3, "flows": [{"kind": "fax", "from": 0, "to": 1}]}),
                 "unknown flow kind 'fax'"),
                (run("--hidden", "1-9"), "path 0 names node 9"),
                (run("--preset", "none"), "no traffic: --preset none needs --chat"),
                (traffic({"nodes": 40, "flows": [{"from": 0, "to": 1}]}),
                 "nodes must be 2..32, not 40"),
                (run("--chat", "1-7"), "names node 7, but the network has nodes 0..3"),
                (traffic({"nodes": 3, "paths": [{"from": 0, "to": 1, "snr": "high"}],
                          "flows": [{"from": 0, "to": 1}]}),
                 "path 0: 'snr' must be a number"),
                (traffic({"nodes": 3, "flows": [{"from": 0, "to": 1, "start": "soon"}]}),
                 "flow 0: 'start' must be a number"),
                (traffic({"nodes": 3, "flows": {"from": 0, "to": 1}}),
                 "'flows' must be a list"),
                (traffic({"nodes": 3, "flows": [{"from": 0, "to": 1}],
                          "power": [{"node": 3, "off": 10}]}),
                 "power cycle 0 names node 3, but the network has nodes 0..2"),
                (traffic({"nodes": 3, "flows": [{"from": 0, "to": 1}],
                          "power": [{"node": 1, "off": 10, "on": 5}]}),
                 "power cycle 0: the power-off time must be finite and >= 0"),
                (run("--power-off", "1@10:50", "--power-off", "1@40"),
                 "power cycle 1 overlaps power cycle 0 of node 1"),
                (run("--power-off", "1@later"), "--power-off: '1@later' is not NODE@T"),
                (traffic({"nodes": 3, "flows": [{"from": 0, "to": 1}],
                          "power": [{"node": 1, "off": 10, "journal": "yes"}]}),
                 "power 0: 'journal' must be true or false"),
                (traffic({"nodes": 3, "flows": [{"from": 0, "to": 1, "start": -5}]}),
                 "flow 0: start and interval must be finite and >= 0"),
                (traffic({"nodes": 3, "flows": [{"kind": "chat", "from": 1, "to": 2,
                                                 "via": 2}]}),
                 "flow 0 is relayed by one of its own ends"),
                (traffic({"nodes": 3, "flows": [{"from": 1, "to": 2, "via": 0}]}),
                 "flow 0: only a chat flow is relayed ('via')"),
                (traffic({"nodes": 3, "flows": [{"kind": "chat", "from": 1, "to": 2,
                                                 "via": 7}]}),
                 "flow 0 names node 7, but the network has nodes 0..2"),
            ]
        for r, reason in cases:
            self.assertEqual(r.returncode, 2, r.stdout)
            self.assertIn(reason, r.stderr)
            self.assertEqual(len(r.stderr.strip().splitlines()), 1, r.stderr)
            self.assertTrue(r.stderr.startswith("hfstack-sim: "), r.stderr)

    def test_a_chat_relayed_through_the_hub(self):
        """A spoke's chat to another spoke through the hub's client ("via"), as IP
        routed through the hub: every message and answer delivered once, across."""
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "t.json")
            with open(path, "w") as f:
                json.dump({"nodes": 4, "flows": [{"kind": "chat", "from": 1, "to": 2, "via": 0,
                                                  "messages": 3, "interval": 20}]}, f)
            r = run("--traffic", path, "--mode", "9600S", "--duration", "900", "--json", "-",
                    "--quiet")
        self.assertEqual(r.returncode, 0, r.stderr)
        flow = json.loads(r.stdout)["flows"][0]
        self.assertEqual((flow["delivered"], flow["duplicates"], flow["round_trips"]), (3, 0, 3))
        # Delivered to spoke 2 only, not to the hub that relayed it.
        nodes = json.loads(r.stdout)["nodes"]
        self.assertEqual([n["bytes_delivered"] > 0 for n in nodes], [False, False, True, False])

    def test_a_node_powered_off_and_on(self):
        # Node 0 sends bulk to 1 and receives bulk from 2; node 2 loses power at 300 s
        # and is back at 500 s with a new incarnation.
        traffic = {"nodes": 3, "flows": [{"from": 0, "to": 1}, {"from": 2, "to": 0}]}
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "t.json")
            with open(path, "w") as f:
                json.dump(traffic, f)

            def delivered(*extra):
                r = run("--traffic", path, "--duration", "2400", "--json", "-",
                        "--node-option", "network_assumed=true", *extra)
                self.assertEqual(r.returncode, 0, r.stderr)
                flows = json.loads(r.stdout)["flows"]
                for f in flows:
                    self.assertEqual(f["duplicates"], 0, f)
                return [f["bytes_delivered"] for f in flows]

            # Until the power-off, the run is the one without it.
            at_off = delivered("--duration", "300")
            self.assertEqual(delivered("--duration", "300", "--power-off", "2@300:500"),
                             at_off)
            at_on = delivered("--duration", "500", "--power-off", "2@300:500")
            end = delivered("--power-off", "2@300:500")
            gone = delivered("--power-off", "2@300")
            traffic["power"] = [{"node": 2, "off": 300, "on": 500}]
            with open(path, "w") as f:
                json.dump(traffic, f)
            self.assertEqual(delivered(), end)
        self.assertGreater(min(at_off), 0)
        # The others go on while node 2 is off, and after it is gone for good.
        self.assertGreater(at_on[0], at_off[0])
        self.assertGreater(gone[0], at_on[0])
        # Node 2's flow goes on after its return.
        self.assertGreater(end[1], at_on[1])


if __name__ == "__main__":
    gr_unittest.run(qa_hfstack_sim_network)
