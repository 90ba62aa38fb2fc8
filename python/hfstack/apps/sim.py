#!/usr/bin/env python3
#
# Copyright 2026 gr-hfstack authors.
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""hfstack-sim: STANAG 5066 nodes on a modelled HF channel, in virtual time.

The real node kernels (the same code the GNU Radio `node` block runs) exchange
bursts whose air time comes from the STANAG 4539 waveform tables, over a channel with
bit errors, outages and collisions, through radios with switching delays. A simulated
hour takes well under a second; a seed gives the same run every time.

  hfstack-sim ping --mode 1200S
  hfstack-sim throughput --mode 9600S --duration 3600 --plot saw.png
  hfstack-sim throughput --mode 9600S --bytes 100k --ber 1e-4
  hfstack-sim throughput --mode 2400L --profile poor --snr 18 --duration 7200
  hfstack-sim sweep --param snr --values 8,10,12,15,20 --mode 1200S --profile poor
  hfstack-sim sweep --param updu-size --values 64,128,256,512,1024,2048 --mode 1200S
  hfstack-sim reproduce --csv anchors.csv
  hfstack-sim network --nodes 8 --preset hub-spoke --mode 2400S --duration 600
  hfstack-sim network --traffic net.json --json -
"""

import argparse
import math
import sys
import time

from gnuradio.hfstack import cli
from gnuradio.hfstack import modes
from gnuradio.hfstack import network_run
from gnuradio.hfstack import sim
from gnuradio.hfstack import traffic_report as tr

PROG = "hfstack-sim"


def add_run_options(p):
    g = p.add_argument_group("network")
    g.add_argument("--mode", default="1200S",
                   help="STANAG 4539 mode: rate and interleaver, e.g. 75L, 1200S, 9600VL, "
                        "4800U, as the modem names them; or STANAG 5069: WN12/48kHz/US "
                        "(240 kbps) "
                        "(default 1200S; --list-modes lists them)")
    cli.add_renamed(g, "--rate-adaptation", "--rate", choices=("fixed", "auto"), default="fixed",
                    help="auto: the nodes change the data rate (STANAG 5066 Annex C EOW data "
                         "rate change) on the SNR their modems report, starting from --mode "
                         "(a mode Annex C can announce: S or L interleaver, 75..9600 bps; or "
                         "a STANAG 5069 WN1-WN12 with US, S or L: across the WNs of its "
                         "bandwidth, autobaud); default fixed")
    g.add_argument("--nodes", type=int, default=2, help="nodes on the channel (default 2)")
    g.add_argument("--max-transmission", type=tr.positive_float, default=127.5,
                   help="longest transmission, s (default 127.5)")
    g.add_argument("--two-way", action="store_true",
                   help="throughput: both nodes send at once")
    g.add_argument("--warm-up", action="store_true",
                   help="throughput: make the link with one ping before the measured data")
    g.add_argument("--duration", type=tr.positive_float, default=None,
                   help="virtual seconds to run at most (default: throughput 3600, "
                        "ping until done or 24 h)")
    g.add_argument("--seed", type=int, default=1, help="random seed (default 1)")
    g.add_argument("--seeds", type=int, default=1, metavar="N",
                   help="run seeds SEED..SEED+N-1 and report each figure's mean and 95 %% "
                        "confidence interval (Student t) over them (default 1)")
    g.add_argument("--trace", metavar="FILE",
                   help="write every transmission (start, node, bytes, D_PDUs, air time) "
                        "as CSV ('-' = stdout)")
    g.add_argument("--node-option", action="append", default=[], metavar="NAME=VALUE",
                   help="node option for every node (repeatable; hfstack-node "
                        "--list-options lists them)")
    g = p.add_argument_group("channel")
    g.add_argument("--ber", type=float, default=0.0, help="independent bit errors (default 0)")
    g.add_argument("--profile", metavar="NAME",
                   help="fading channel: " + ", ".join(sim.fading_profile_names()) +
                        " (needs --snr; bit errors per interleaver block from our modem's "
                        "measured BER curve of the mode, bursts whose preamble falls in a "
                        "fade missed whole)")
    g.add_argument("--snr", type=float, default=None,
                   help="mean SNR in 3 kHz, dB, reported to the nodes; bit errors per "
                        "interleaver block from the mode's BER curve, fading by --profile "
                        "(without --profile: AWGN, a constant SNR)")
    g.add_argument("--snr-steps", metavar="SECONDS:DB,...",
                   help="the mean SNR steps to DB at each SECONDS of virtual time (needs "
                        "--snr, which holds before the first step; e.g. 0:25,400:12,800:25)")
    g.add_argument("--outage-period", type=tr.non_negative_float, default=0,
                   help="an outage every PERIOD s (default none)")
    g.add_argument("--outage-duration", type=tr.non_negative_float, default=0,
                   help="each outage lasts this long, s")
    g.add_argument("--propagation", type=tr.non_negative_float, default=0,
                   help="path delay, s (default 0)")
    g = p.add_argument_group("radio")
    radio = sim.radio_config()
    for name, help_text in (("key_up_s", "receive-to-transmit switching"),
                            ("unkey_s", "transmit-to-receive switching"),
                            ("agc_settle_s", "AGC settling at the start of a reception"),
                            ("carrier_detect_s", "carrier detection delay"),
                            ("rx_latency_s", "decoder latency after a burst ends")):
        flag = "--" + name[:-2].replace("_", "-")
        g.add_argument(flag, dest=name, type=tr.non_negative_float, default=getattr(radio, name),
                       help=f"{help_text}, s (default {getattr(radio, name)})")
    g.add_argument("--deliver-at-burst-end", dest="deliver_per_block", action="store_false",
                   help="the modems hand on a burst's bytes only after it ends (default: "
                        "after each interleaver block, as a streaming modem does)")
    tr.add_client_options(p)
    tr.add_output_options(p)


def scenario_from(args, test):
    if getattr(args, "seeds", 1) < 1:
        raise ValueError("--seeds must be at least 1")
    c = sim.scenario_config()
    c.test = sim.test_kind.ping if test == "ping" else sim.test_kind.throughput
    problem = "/" not in args.mode and modes.mode_problem(args.mode)
    if problem:
        raise ValueError(f"--mode {args.mode}: {problem}")
    c.mode = args.mode
    c.nodes = args.nodes
    c.max_transmission_s = args.max_transmission
    c.two_way = args.two_way
    c.warm_up = args.warm_up
    c.seed = args.seed
    # --rate-adaptation auto first, so that --node-option can override what it sets.
    auto = ["rate_adaptation=true", "rate_change.autobaud=true"]
    c.node_options = ";".join((auto if getattr(args, "rate_adaptation", "fixed") == "auto" else []) +
                              args.node_option)
    c.duration_s = args.duration or (3600.0 if test == "throughput" else 24 * 3600.0)
    ch = sim.channel_config()
    ch.ber = args.ber
    ch.outage_period_s = args.outage_period
    ch.outage_duration_s = args.outage_duration
    ch.propagation_s = args.propagation
    if args.profile is not None:
        if args.snr is None:
            raise ValueError("--profile needs --snr (the mean SNR in 3 kHz, dB)")
        ch.fading_profile = args.profile
    if args.snr is not None:
        if not math.isfinite(args.snr):
            raise ValueError("--snr must be a finite number of dB")
        ch.snr_db = args.snr
        # An SNR alone used to change nothing but the figure the nodes were told: it
        # now means AWGN at that SNR (errors from the mode's BER curve).
        ch.fading_profile = args.profile or "awgn"
    if getattr(args, "snr_steps", None):
        if args.snr is None:
            raise ValueError("--snr-steps needs --snr (the mean SNR before the first step)")
        ch.snr_steps = cli.parse_snr_steps(args.snr_steps)
    c.channel = ch
    radio = sim.radio_config()
    for name in ("key_up_s", "unkey_s", "agc_settle_s", "carrier_detect_s", "rx_latency_s"):
        setattr(radio, name, getattr(args, name))
    radio.deliver_per_block = getattr(args, "deliver_per_block", True)
    c.radio = radio
    c.trace = bool(args.trace)
    c.client = tr.client_config_from(args, test)
    sim.validate(c)
    return c


def run(c, args, label=""):
    """Runs one scenario with a progress bar; returns (result, cpu seconds)."""
    bar = tr.progress_bar(c.duration_s, enabled=not args.quiet)
    cpu0 = time.process_time()

    def progress(now):
        bar.update(now, f"{now:.0f} / {c.duration_s:.0f} s simulated {label}")
        return True

    r = sim.run_scenario(c, progress, max(1.0, c.duration_s / 200))
    cpu = time.process_time() - cpu0
    bar.close()
    if getattr(args, "trace", None):
        tr.write_csv([{"start_s": round(t.start_s, 3), "node": t.node + 1, "bytes": t.bytes,
                       "dpdus": t.dpdus, "air_time_s": round(t.air_time_s, 3),
                       "mode": t.mode}
                      for t in r.transmissions], args.trace)
    return r, cpu


def flow_label(f):
    return f"{f.from_node + 1}->{f.to_node + 1}"


def retransmissions(r):
    return int(sum(n["counters"].get("arq_retransmissions", 0) for n in r.nodes))


def throughput_rows(r):
    rows = []
    for f in r.flows:
        start = f.first_send_at if not math.isnan(f.first_send_at) else 0.0
        row = tr.throughput_row(flow_label(f), f.bytes_delivered, r.end_time_s - start,
                                r.nominal_bps, f.steady_utilisation)
        row.update({"updus": f.updus_delivered, "lost_or_late": f.out_of_order,
                    "duplicates": f.duplicates, "rejected": f.rejected})
        rows.append(row)
    return rows


def document(c, r, cpu, rows):
    return {
        "config": {"mode": c.mode, "nodes": c.nodes, "max_transmission_s": c.max_transmission_s,
                   "two_way": c.two_way, "warm_up": c.warm_up,
                   "ber": c.channel.ber, "profile": c.channel.fading_profile,
                   "snr_db": c.channel.snr_db, "seed": c.seed, "node_options": c.node_options,
                   "duration_s": c.duration_s},
        "nominal_bps": r.nominal_bps, "end_time_s": r.end_time_s, "completed": r.completed,
        "stopped": r.stopped, "cpu_s": cpu, "rows": rows,
        "ping": tr.ping_rows(r.ping.pings) if c.test == sim.test_kind.ping else None,
        "series": {flow_label(f): f.delivered for f in r.flows},
        "nodes": r.nodes, "network": r.network,
    }


def cmd_ping(args):
    if args.seeds > 1:
        return cmd_seeds(args, "ping")
    c = scenario_from(args, "ping")
    r, cpu = run(c, args)
    rows = tr.ping_rows(r.ping.pings)
    tr.emit(args, rows, document(c, r, cpu, rows),
            plot=lambda path: tr.plot_pings(rows, path, f"{c.mode} ping, seed {c.seed}",
                                            "virtual"))
    if not args.quiet and args.csv != "-" and args.json != "-":
        print(tr.ping_summary_text(c.mode, rows, f"{r.end_time_s:.0f} s simulated in "
                                                 f"{cpu:.2f} s CPU"))
    return 0 if r.completed else 1


def cmd_seeds(args, test):
    """The test over seeds SEED..SEED+N-1: each figure's mean and 95 % confidence
    interval, one row per flow (throughput) or one row (ping)."""
    if args.plot:
        raise ValueError("--plot draws one run: leave out --seeds")
    seeds = list(range(args.seed, args.seed + args.seeds))
    runs, docs = [], []
    for seed in seeds:
        args.seed = seed
        c = scenario_from(args, test)
        r, cpu = run(c, args, f"(seed {seed})")
        if test == "ping":
            rows = [{"mode": c.mode, **tr.ping_summary_row(
                [row["rtt_s"] for row in tr.ping_rows(r.ping.pings)])}]
        else:
            rows = throughput_rows(r)
            for row in rows:
                row["retransmissions"] = retransmissions(r)
        runs.append(rows)
        docs.append(dict(document(c, r, cpu, rows), seed=seed))
    args.seed = seeds[0]
    label = "mode" if test == "ping" else "flow"
    keys = [k for k in runs[0][0] if k != label]
    rows = tr.seed_summary(runs, keys, label, seeds)
    tr.emit(args, rows, {"seeds": seeds, "rows": rows, "runs": docs})
    completed = all(d["completed"] or (test == "throughput" and not args.bytes) for d in docs)
    return 0 if completed else 1


def cmd_throughput(args):
    if args.seeds > 1:
        return cmd_seeds(args, "throughput")
    c = scenario_from(args, "throughput")
    r, cpu = run(c, args)
    rows = throughput_rows(r)
    for row in rows:
        row["retransmissions"] = retransmissions(r)
    series = {flow_label(f): (f.first_send_at, f.delivered) for f in r.flows}
    tr.emit(args, rows, document(c, r, cpu, rows), series, r.nominal_bps,
            f"{c.mode} {'ARQ' if c.client.arq else 'non-ARQ'}, {c.client.updu_size}-byte U_PDUs, "
            f"seed {c.seed}", "virtual (protocol)")
    if not args.quiet and args.csv != "-" and args.json != "-":
        print(f"[{r.end_time_s:.0f} s simulated in {cpu:.2f} s CPU"
              + ("" if r.completed or not c.client.send_bytes else f"; not finished: {r.stopped or 'duration reached'}")
              + "]")
    return 0 if (r.completed or not c.client.send_bytes) else 1


SWEEPABLE = {
    "mode": ("mode", str),
    "ber": ("ber", float),
    "snr": ("snr", float),
    "updu-size": ("updu_size", tr.byte_count),
    "max-transmission": ("max_transmission", float),
    "nodes": ("nodes", int),
    "ping-bytes": ("ping_bytes", tr.byte_count),
    "echo-delay": ("echo_delay", float),
    "gap": ("gap", float),
}


def cmd_sweep(args):
    if args.param not in SWEEPABLE:
        raise ValueError(f"--param must be one of {', '.join(SWEEPABLE)}")
    attr, parse = SWEEPABLE[args.param]
    try:
        values = [parse(v) for v in args.values.split(",") if v.strip()]
    except (ValueError, argparse.ArgumentTypeError) as e:
        raise ValueError(f"--values: {e}")
    if not values:
        raise ValueError("--values needs at least one value")
    if args.seeds > 1:
        raise ValueError("sweep runs one seed per value: leave out --seeds")
    rows, runs = [], []
    for v in values:
        setattr(args, attr, v)
        c = scenario_from(args, args.test)
        r, cpu = run(c, args, f"({args.param} {v})")
        if args.test == "ping":
            s = r.ping
            row = {args.param: v, "first_s": tr.nan_to_none(round(s.first_s, 2)),
                   "later_mean_s": tr.nan_to_none(round(s.later_mean_s, 2)),
                   "later_min_s": tr.nan_to_none(round(s.later_min_s, 2)),
                   "later_max_s": tr.nan_to_none(round(s.later_max_s, 2)), "lost": s.lost}
        else:
            row = {args.param: v}
            for fr in throughput_rows(r):
                prefix = "" if len(r.flows) == 1 else fr["flow"] + " "
                row[prefix + "throughput_bps"] = fr["throughput_bps"]
                row[prefix + "utilisation_pct"] = fr["utilisation_pct"]
                row[prefix + "steady_utilisation_pct"] = fr["steady_utilisation_pct"]
            row["retransmissions"] = retransmissions(r)
        rows.append(row)
        runs.append(document(c, r, cpu, [row]))
    tr.emit(args, rows, {"param": args.param, "rows": rows, "runs": runs},
            plot=lambda path: tr.plot_sweep(rows, args.param, path,
                                            f"{args.test} against {args.param}"))
    return 0


def cmd_reproduce(args):
    from gnuradio.hfstack import published_scenarios
    bar = tr.progress_bar(len(published_scenarios.SCENARIOS), enabled=not args.quiet)
    rows = []
    for i, scenario in enumerate(published_scenarios.SCENARIOS):
        bar.update(i, scenario.name)
        rows.append(scenario.run(args.seed))
    bar.close()
    if not args.quiet and args.csv != "-" and args.json != "-":
        sys.stdout.write(published_scenarios.markdown_table(rows))
    if args.csv:
        tr.write_csv(rows, args.csv)
    if args.json:
        tr.write_json({"rows": rows}, args.json)
    if args.plot:
        published_scenarios.plot(rows, args.plot)
    return 0


def main(argv=None):
    parser = cli.one_line_parser(
        prog=PROG, description=__doc__.split("\n\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__.split("\n\n", 1)[1])
    parser.add_argument("--list-modes", action="store_true", help="list the STANAG 4539 modes")
    cli.add_version(parser)
    sub = parser.add_subparsers(dest="command")
    p = sub.add_parser("ping", help="ARQ or non-ARQ ping: round trips, first and later")
    add_run_options(p)
    p = sub.add_parser("throughput", help="send-only, acknowledged or two-way throughput")
    add_run_options(p)
    p = sub.add_parser("sweep", help="one test for each value of one parameter")
    add_run_options(p)
    p.add_argument("--test", choices=("ping", "throughput"), default="throughput")
    p.add_argument("--param", required=True, help="one of " + ", ".join(SWEEPABLE))
    p.add_argument("--values", required=True, help="comma-separated values")
    p = sub.add_parser("reproduce",
                       help="every scenario of docs/published-measurements.md sections A, B, "
                            "C (ping, DNS) and D (HF-PEP) against the published figures")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--csv", metavar="FILE", help="also write the rows as CSV ('-' = stdout)")
    p.add_argument("--json", metavar="FILE", help="also write the rows as JSON ('-' = stdout)")
    p.add_argument("--plot", metavar="FILE.png",
                   help="each row against the published figure: x times better or worse")
    p.add_argument("--quiet", action="store_true")
    p = sub.add_parser("network", help="N nodes (2-32) on one channel: per-flow and per-node "
                                       "figures, fairness (docs/networks.md)")
    network_run.add_options(p)
    try:
        args = parser.parse_args(argv)
    except cli.usage_error as e:
        print(f"{PROG}: {e}", file=sys.stderr)
        return 2
    if args.list_modes:
        print("STANAG 4539:", " ".join(modes.modem_mode_names()))
        print("STANAG 5069:", " ".join(sim.wideband_mode_names()))
        return 0
    if not args.command:
        print(f"{PROG}: choose a command: ping, throughput, sweep, reproduce or network", file=sys.stderr)
        return 2
    try:
        return {"ping": cmd_ping, "throughput": cmd_throughput, "sweep": cmd_sweep,
                "reproduce": cmd_reproduce, "network": network_run.run}[args.command](args)
    except (ValueError, RuntimeError, OSError) as e:
        print(f"{PROG}: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
