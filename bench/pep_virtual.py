#!/usr/bin/python3
#
# Copyright 2026 gr-hfstack authors.
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""HF-PEP transfers in virtual time over several error seeds: the simulator's section D
procedure (traffic/pep_host.h: connect, send N bytes, wait for a short confirmation) on
a fresh link, one transfer per seed, with the nodes' options as given. Prints one line
per seed and the mean, and a JSON line at the end. Usage:
    PYTHONPATH=build/test_modules /usr/bin/python3 bench/pep_virtual.py \\
        [--rate 9600] [--size 100000] [--ber 1e-5] [--seeds 12] \\
        [--node-options "data_with_link_request=true"]
"""

import argparse
import json
import math
import statistics
import sys

from gnuradio.hfstack import published_scenarios


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--rate", type=int, default=9600, help="bps, short interleaver")
    p.add_argument("--size", type=int, default=100_000, help="bytes per transfer")
    p.add_argument("--ber", type=float, default=0.0, help="bit error rate on every burst")
    p.add_argument("--seeds", type=int, default=12, help="seeds 1..N")
    p.add_argument("--node-options", default=published_scenarios.PEP_NODE_OPTIONS,
                   help=f"both nodes' options (default {published_scenarios.PEP_NODE_OPTIONS!r}; '' for none)")
    args = p.parse_args(argv)
    if args.seeds < 1 or args.size < 1 or not 0 <= args.ber < 1:
        p.error("--seeds and --size must be positive, --ber in [0, 1)")
    figures = []
    for seed in range(1, args.seeds + 1):
        u = published_scenarios.pep_transfer_utilization(f"{args.rate}S", args.size, seed,
                                                         args.ber, args.node_options)
        figures.append(u)
        print(f"pep {args.rate} bps {args.size} bytes, BER {args.ber:g}, seed {seed}: {u:.1f} %")
    done = [u for u in figures if not math.isnan(u)]
    mean = statistics.fmean(done) if done else math.nan
    print(f"mean {mean:.1f} % over {len(done)} of {len(figures)} seeds (min {min(done, default=math.nan):.1f},"
          f" max {max(done, default=math.nan):.1f}); node options {args.node_options!r}")
    print(json.dumps({"rate": args.rate, "size": args.size, "ber": args.ber,
                      "node_options": args.node_options, "utilization": figures, "mean": mean}))
    return 0 if done else 1


if __name__ == "__main__":
    sys.exit(main())
