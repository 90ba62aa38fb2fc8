#!/usr/bin/env python3
#
# Copyright 2026 gr-hfstack authors.
#
# SPDX-License-Identifier: GPL-3.0-or-later

"""Hub and spoke on one channel, measured against the targets of docs/networks.md.

Runs `hfstack-sim network --preset hub-spoke` (saturating bulk both ways on every spoke;
--preset spokes-to-hub: from every spoke to the hub alone) for every mode x channel x
node count, in virtual time, and prints per run the aggregate
throughput, its share of the two-node figure of the same mode and channel, the Jain
index of the bulk flows, the worst flow's share against 1/(2N), the flows that delivered
nothing and the collisions. --node-option compares another channel-access setting with
the defaults (the same names as hfstack-node). The share is of the two-node figure with
the node's defaults. With several --seeds every figure is the median over them (the
two-node figure too), with the range of the share and of Jain in
brackets; on a clear channel the seed changes nothing (it drives the channel's noise
and fading; back-offs are seeded from the node addresses) unless
--backoff-seeds-from-seed mixes it into the back-offs too.

    bench/network_table.py [--modes 2400S,9600S] [--channels clear,moderate:20]
        [--nodes 2,4,8,16] [--preset hub-spoke|spokes-to-hub] [--duration 3600]
        [--seeds 1[,2,...]]
        [--node-option NAME=VALUE ...] [--backoff-seeds-from-seed] [--json FILE]

Each run takes seconds (N = 16 at 9600S with fading about half a minute).
"""
import argparse
import json
import statistics
import sys

from gnuradio.hfstack import network_run, sim


def run_one(mode, channel, nodes, seed, args, node_options=None):
    c = sim.network_scenario_config()
    c.nodes = nodes
    c.mode = mode
    c.duration_s = args.duration
    c.seed = seed
    c.backoff_seeds_from_seed = args.backoff_seeds_from_seed
    c.node_options = ";".join(args.node_option if node_options is None else node_options)
    if channel != "clear":
        profile, snr = channel.split(":")
        c.channel = network_run.channel(float(snr), profile)
    c.flows = sim.network_preset(args.preset, nodes, 0, 10)
    sim.validate_network(c)
    r = sim.run_network(c)
    bulk = [f for f in r["flows"] if f["kind"] == "bulk"]
    return {"mode": mode, "channel": channel, "nodes": nodes,
            "aggregate_bps": round(r["aggregate_bps"]),
            "jain": round(r["jain_bulk"], 3),
            "worst_share": round(r["worst_bulk_share"], 4),
            "worst_target": round(1 / (2 * nodes), 4),
            "starved": sum(1 for f in bulk if f["bytes_delivered"] == 0),
            "flows": len(bulk), "collisions": r["collisions"],
            # Per flow, for tracing which spoke is worst: (from, to, bytes delivered).
            "per_flow": [[f["from"], f["to"], f["bytes_delivered"]] for f in bulk]}


def run_seeds(mode, channel, nodes, args, node_options=None):
    """One row: each figure the median over the seeds, the runs kept in `runs`."""
    runs = [run_one(mode, channel, nodes, seed, args, node_options) for seed in args.seeds]
    row = {k: runs[0][k] for k in ("mode", "channel", "nodes", "worst_target", "flows")}
    for k in ("aggregate_bps", "jain", "worst_share", "starved", "collisions"):
        row[k] = statistics.median(r[k] for r in runs)
    row["seeds"] = args.seeds
    row["runs"] = runs
    return row


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--modes", default="2400S,9600S")
    p.add_argument("--channels", default="clear,moderate:20",
                   help="clear, or PROFILE:SNR (e.g. moderate:20)")
    p.add_argument("--nodes", default="2,4,8,16")
    p.add_argument("--preset", default="hub-spoke", choices=("hub-spoke", "spokes-to-hub"),
                   help="hub-spoke: bulk both ways on every spoke; spokes-to-hub: bulk from "
                        "every spoke to the hub alone (default hub-spoke)")
    p.add_argument("--duration", type=float, default=3600)
    p.add_argument("--seeds", default="1", help="comma-separated seeds (default 1)")
    p.add_argument("--node-option", action="append", default=[], metavar="NAME=VALUE")
    p.add_argument("--backoff-seeds-from-seed", action="store_true",
                   help="every node's back-offs also depend on the seed, so that a clear "
                        "channel's cell is measured over --seeds too (default: from the "
                        "node addresses alone, the same run for every seed)")
    p.add_argument("--json", metavar="FILE")
    args = p.parse_args(argv)
    args.seeds = [int(s) for s in args.seeds.split(",")]
    counts = sorted({int(n) for n in args.nodes.split(",")} | {2})
    rows = []
    print("mode   channel      N  aggregate  vs N=2 [range]    Jain [range]       "
          "worst/target  starved  collisions")
    for mode in args.modes.split(","):
        for channel in args.channels.split(","):
            # The reference is the two-node link with the node's defaults, also when
            # the options compared change it.
            two = run_seeds(mode, channel, 2, args, [])["aggregate_bps"]
            for n in counts:
                row = run_seeds(mode, channel, n, args)
                shares = [r["aggregate_bps"] / two for r in row["runs"]] if two else [0]
                row["vs_two_node"] = round(statistics.median(shares), 3)
                row["vs_two_node_range"] = [round(min(shares), 3), round(max(shares), 3)]
                jains = [r["jain"] for r in row["runs"]]
                rows.append(row)
                print(f"{mode:6} {channel:11} {n:2} {row['aggregate_bps']:10} "
                      f"{100 * row['vs_two_node']:5.1f} % [{100 * min(shares):3.0f}-"
                      f"{100 * max(shares):3.0f}] {row['jain']:5.3f} [{min(jains):.2f}-"
                      f"{max(jains):.2f}] {row['worst_share']:6.4f}/{row['worst_target']:.4f} "
                      f"{row['starved']:4} of {row['flows']:2} {row['collisions']:8}")
                sys.stdout.flush()
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"preset": args.preset, "node_options": args.node_option,
                       "backoff_seeds_from_seed": args.backoff_seeds_from_seed,
                       "seeds": args.seeds,
                       "rows": rows}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
