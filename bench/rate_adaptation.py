#!/usr/bin/env python3
#
# Copyright 2026 gr-hfstack authors.
#
# SPDX-License-Identifier: GPL-3.0-or-later

"""Automatic data rate end to end with the real modems, against the best fixed rate.

One ARQ transfer between two nodes with the real STANAG 4539 modems
over the Watterson channel in real time (hfstack-node --demo --rate auto), while the
channel's SNR steps (default 25 -> 12 -> 25 dB on F.1487 poor, 400 s each). Then, for
every SNR level, the same demo at each fixed mode of --candidates (rate and interleaver;
the link made first, --reference-s of transfer each), so the best fixed mode in hindsight
is known per segment. Prints each segment's adaptive throughput against that best one (target: within
15 %), and writes the figures as JSON and a plot of the data rate, the SNR and the
throughput against time (PNG, matplotlib).

    bench/rate_adaptation.py [--steps 0:25,400:12,800:25] [--duration 1200]
        [--profile poor] [--interleaver short] [--candidates 2400S,2400L,1200L,600L]
        [--reference-s 300] [--seed 1] [--json FILE] [--plot FILE.png]
        [--skip-references] [--node-option NAME=VALUE ...] [--way real|virtual] [--seeds N]

Real time: the adaptive run takes --duration seconds or more (it sends --duration at the
highest candidate rate; only its first --duration seconds count), each reference run about
--reference-s; the defaults take about 60 minutes. Run it in the background.

--way virtual runs the same comparison in the simulator (hfstack-sim's scenarios, virtual
time, seconds of CPU): our modems' measured curves decide errors and lost preambles, and
the SNR reports are modelled on our receivers' (lib/kernels/phy/snr_report_map.h);
--seeds N averages N channel seeds (the segments' ratios are of the sums). The SNR steps
take effect at once there too, inside a burst as well.

--references-from FILE takes the fixed modes' figures from an earlier run's --json (same
steps, profile and way) instead of measuring them again: for trying node options on the
adaptive run alone.

Real way: each segment is measured twice, by the bytes delivered to the client in order
(the part 5 figure) and by the bytes the link carried to the receiver as they arrived
(node B's arq_bytes_received, before in-order delivery holds them); each against the best
fixed mode by the same measure, where the references carry it (carried_bps).

bench/rate_adaptation_same_stretch_references.json holds the same-stretch references of
channel seeds 1-4 (keyed by seed; --references-from picks --seed's).

--references same-stretch (real way) measures each fixed mode over the segment's own
stretch of the channel: the demo at the segment's SNR throughout, same channel seed, run
to the segment's end, its throughput counted over the segment's window of the transfer, as
the adaptive run's is. The default (steady) counts --reference-s from the start of the
transfer, a different stretch of fades for the later segments. --jobs N runs that many
reference demos at once (each takes a few per cent of a core).
"""
import argparse
import concurrent.futures
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
NODE = [sys.executable, os.path.join(HERE, "..", "apps", "hfstack-node")]
TARGET = 0.85  # the adaptive link's throughput over the best fixed rate's, per segment
# Two measures of a segment's throughput, by their timeline key and their reference's key:
# bytes delivered to the client in order (the part 5 figure), and bytes the link carried
# to the receiver (node B's arq_bytes_received) as they arrived. In-order delivery
# releases data in lumps (a lost segment holds everything behind it until a repair
# round, up to a whole transmission later), so a 400 s window of the first can gain or
# lose a lump at either edge; the second shows the rate choice without that.
# Each: its timeline key, its references' figure, its rows in --json, its name.
MEASURES = (("delivered_bytes", "bps", "segments", "delivered in order"),
            ("arq_bytes_received", "carried_bps", "carried_segments", "carried by the link"))


def parse_steps(text):
    steps = []
    for item in text.split(","):
        t, db = item.split(":")
        steps.append((float(t), float(db)))
    if not steps or steps[0][0] != 0 or any(b[0] <= a[0] for a, b in zip(steps, steps[1:])):
        raise SystemExit("rate_adaptation: --steps must start at 0 and increase")
    return steps


def demo(args, json_path, timeout_s):
    """Runs hfstack-node --demo with `args`; its JSON summary."""
    cmd = NODE + ["--demo", "--sis-port", "0", "--pings", "1", "--size", "2048",
                  "--timeout", str(timeout_s), "--json", json_path] + args
    done = subprocess.run(cmd, capture_output=True, text=True)
    if done.returncode not in (0, 1) or not os.path.exists(json_path):
        raise SystemExit(f"rate_adaptation: {' '.join(cmd)} failed:\n{done.stderr[-2000:]}")
    with open(json_path) as f:
        return json.load(f)


def bytes_at(timeline, t, key="delivered_bytes"):
    """Bytes delivered (or, by key, carried) by time t (the last timeline point at or
    before it)."""
    got = 0
    for p in timeline:
        if p["t_s"] > t:
            break
        got = p[key]
    return got


def throughput(timeline, start, end, key="delivered_bytes"):
    """Bit/s delivered (or, by key, carried) from start to end."""
    return 8 * (bytes_at(timeline, end, key) - bytes_at(timeline, start, key)) / (end - start)


def segment_throughputs(timeline, steps, duration, key="delivered_bytes"):
    """[(start, end, snr, bit/s)] of the adaptive run, one per SNR step, by the measure
    `key`; a segment the transfer did not reach is left out, one it ended in is cut at
    its end."""
    end_of_run = timeline[-1]["t_s"] if timeline else 0
    out = []
    for start, end, snr in segment_windows(steps, duration):
        end = min(end, end_of_run)
        if end <= start:
            continue
        out.append((start, end, snr, throughput(timeline, start, end, key)))
    return out


def virtual_run(mode, auto, snr, steps, duration, size, seed, profile, node_options=()):
    """One hfstack-sim throughput run: a timeline like the demo's (t_s, delivered_bytes,
    tx_mode_a, snr_db) and the bytes delivered."""
    import argparse as ap
    from gnuradio.hfstack import sim
    from gnuradio.hfstack.apps import sim as sim_app
    parser = ap.ArgumentParser()
    sim_app.add_run_options(parser)
    args = ["--mode", mode, "--rate", "auto" if auto else "fixed", "--profile", profile,
            "--snr", str(snr), "--duration", str(duration), "--bytes", str(size),
            "--seed", str(seed), "--trace", "-"]
    for o in node_options:
        args += ["--node-option", o]
    if not steps:  # a reference: the link made first; the steps count from t = 0
        args.append("--warm-up")
    if steps:
        args += ["--snr-steps", ",".join(f"{t:g}:{db:g}" for t, db in steps)]
    c = sim_app.scenario_from(parser.parse_args(args), "throughput")
    r = sim.run_scenario(c)
    flow = r.flows[0]
    t0 = flow.first_send_at if flow.first_send_at == flow.first_send_at else 0.0
    sent = sorted((t.start_s, t.mode) for t in r.transmissions if t.node == 0 and t.dpdus >= 4)
    timeline, k, mode_now = [], 0, mode
    for t, delivered in flow.delivered:
        while k < len(sent) and sent[k][0] <= t:
            mode_now = sent[k][1]
            k += 1
        level = [db for s, db in ([(0, snr)] + list(steps or [])) if s <= t - t0][-1]
        timeline.append({"t_s": t - t0, "delivered_bytes": delivered, "tx_mode_a": mode_now,
                         "snr_db": level})
    return timeline, flow.bytes_delivered


def rate_of(mode):
    digits = "".join(c for c in mode if c.isdigit())
    return int(digits) if digits else 0


def plot(path, timeline, segments, best, best_carried=None):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    t = [p["t_s"] for p in timeline]
    fig, (ax1, ax2) = plt.subplots(2, 1, sharex=True, figsize=(9, 6))
    ax1.step(t, [rate_of(p["tx_mode_a"]) for p in timeline], where="post", label="data rate (bps)")
    for i, p in enumerate(timeline):  # each mode by name where it begins (S or L too)
        if i == 0 or timeline[i - 1]["tx_mode_a"] != p["tx_mode_a"]:
            ax1.annotate(p["tx_mode_a"], (p["t_s"], rate_of(p["tx_mode_a"])),
                         textcoords="offset points", xytext=(2, 4), fontsize=8)
    ax1.set_ylabel("data rate, bps")
    snr = ax1.twinx()
    snr.step(t, [p["snr_db"] for p in timeline], where="post", color="tab:red", label="SNR")
    snr.set_ylabel("channel SNR, dB")
    window = 30.0

    def average(key):  # bit/s over the last `window` seconds at each point
        return [throughput(timeline, max(0.0, p["t_s"] - window), p["t_s"], key)
                if p["t_s"] > 0 else 0 for p in timeline]

    ax2.plot(t, average("delivered_bytes"), label=f"adaptive, delivered in order, "
                                                  f"{window:g} s average")
    if timeline and "arq_bytes_received" in timeline[0]:
        ax2.plot(t, average("arq_bytes_received"), color="tab:gray", linewidth=0.8,
                 label=f"adaptive, carried by the link, {window:g} s average")
    for start, end, snr_db, _ in segments:
        b = best_for(best, start, snr_db)
        if b:
            ax2.hlines(b[1], start, end, colors="tab:green", linestyles="dashed")
    ax2.plot([], [], "g--", label="best fixed rate, delivered in order")
    for start, end, snr_db, _ in segments if best_carried else []:
        b = best_for(best_carried, start, snr_db)
        if b:
            ax2.hlines(b[1], start, end, colors="tab:gray", linestyles="dotted")
    if best_carried:
        ax2.plot([], [], color="tab:gray", linestyle="dotted",
                 label="best fixed rate, carried by the link")
    ax2.set_xlabel("time in the transfer, s")
    ax2.set_ylabel("throughput, bit/s")
    ax2.legend(loc="upper right")
    fig.tight_layout()
    fig.savefig(path)


def loaded_references(a):
    """The fixed modes' figures of --references-from (None without it)."""
    if not a.references_from:
        return None
    with open(a.references_from) as f:
        figures = json.load(f)
    # A file of several seeds' references keys them by seed.
    if isinstance(figures.get("seeds"), dict):
        if str(a.seed) not in figures["seeds"]:
            raise SystemExit(f"rate_adaptation: {a.references_from} has no references for "
                             f"seed {a.seed} (it has {', '.join(figures['seeds'])})")
        references = figures["seeds"][str(a.seed)]
    else:
        references = figures["references"]
    for r in references:
        print_reference(r, f" (from {a.references_from})")
    return references


def reference_key(r):
    """What a reference stands for: its segment's start (same-stretch) or its SNR."""
    return ("start", r["start_s"]) if "start_s" in r else ("snr", r["snr_db"])


def best_of(references, figure="bps"):
    """{key: (mode, bit/s)}: the best fixed mode per SNR (steady references) or per
    segment (same-stretch ones) that delivered intact, by `figure` (references without
    it do not count)."""
    best = {}
    for r in references:
        key = reference_key(r)
        if r.get("identical", True) and r.get(figure, 0) > best.get(key, ("", 0))[1]:
            best[key] = (r["mode"], r[figure])
    return best


def best_for(best, start, snr):
    """The best fixed mode of the segment that starts at `start` at `snr`, or None."""
    return best.get(("start", start), best.get(("snr", snr)))


def compare(segments, best, measure="delivered in order"):
    """Prints each segment's adaptive throughput against the best fixed one; the rows."""
    rows = []
    for start, end, snr, bps in segments:
        row = {"start_s": start, "end_s": end, "snr_db": snr, "adaptive_bps": bps}
        tail = ""
        b = best_for(best, start, snr)
        if b:
            ratio = bps / b[1]
            row.update(best_mode=b[0], best_bps=b[1], ratio=ratio)
            tail = (f"; best fixed {b[0]}: {b[1]:.0f} bit/s, ratio {ratio:.2f} "
                    f"({'within' if ratio >= TARGET else 'OUTSIDE'} 15 %)")
        rows.append(row)
        print(f"segment {start:.0f}-{end:.0f} s at {snr:g} dB, {measure}: adaptive "
              f"{bps:.0f} bit/s{tail}")
    return rows


def earlier_adaptive(path, steps, profile, seed):
    """The adaptive run of an earlier --json, checked to be of the same steps, profile
    and channel seed."""
    try:
        with open(path) as f:
            run = json.load(f)
        ran = ([list(map(float, x)) for x in run["steps"]], run["profile"], run["seed"])
        missing = [k for k in ("timeline", "delivered_bytes", "identical") if k not in run]
        if missing:
            raise KeyError(", ".join(missing))
    except (OSError, ValueError, KeyError, TypeError) as e:
        raise SystemExit(f"rate_adaptation: --adaptive-from {path}: not a real-way --json "
                         f"of this script ({type(e).__name__}: {e})")
    if ran != ([list(x) for x in steps], profile, seed):
        raise SystemExit(f"rate_adaptation: {path} ran steps {run['steps']}, profile "
                         f"{run['profile']}, seed {run['seed']}: not this comparison")
    return run


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--steps", default="0:25,400:12,800:25", help="SECONDS:DB,... of the channel")
    p.add_argument("--duration", type=float, default=1200, help="seconds of the adaptive run")
    p.add_argument("--profile", default="poor")
    p.add_argument("--interleaver", default="short", choices=("short", "long"),
                   help="the adaptive run's first interleaver")
    p.add_argument("--candidates", default="2400S,2400L,1200L,600L",
                   help="fixed modes to compare with (110A: rate and S or L)")
    p.add_argument("--reference-s", type=float, default=300, help="seconds per reference run")
    p.add_argument("--seed", type=int, default=1, help="channel seed")
    p.add_argument("--json", help="write every figure here")
    p.add_argument("--plot", help="write the plot here (PNG)")
    p.add_argument("--skip-references", action="store_true", help="only the adaptive run")
    p.add_argument("--references-from", metavar="FILE",
                   help="the fixed modes' figures from an earlier run's --json")
    p.add_argument("--adaptive-from", metavar="FILE",
                   help="real way: score an earlier run's adaptive timeline (its --json) "
                        "instead of running the adaptive demo")
    p.add_argument("--way", choices=("real", "virtual"), default="real",
                   help="real: the real modems in real time (default); virtual: hfstack-sim")
    p.add_argument("--node-option", action="append", default=[], metavar="NAME=VALUE",
                   help="node option for the adaptive run (repeatable), e.g. "
                        "rate_policy.hysteresis_db=2")
    p.add_argument("--references", choices=("steady", "same-stretch"), default="steady",
                   help="real way: fixed modes from the transfer's start (steady) or over "
                        "each segment's own stretch of the channel (same-stretch)")
    p.add_argument("--jobs", type=int, default=1, help="reference demos at once (real way)")
    p.add_argument("--seeds", type=int, default=1,
                   help="--way virtual: channel seeds SEED..SEED+N-1, summed (default 1)")
    a = p.parse_args(argv)
    steps = parse_steps(a.steps)
    if a.way == "virtual":
        return main_virtual(a, steps)
    channel = ["--kind", "loopback", "--profile", a.profile, "--seed", str(a.seed)]
    candidates = [(rate_of(m), {"S": "short", "L": "long"}[m[-1]], m)
                  for m in a.candidates.split(",")]
    with tempfile.TemporaryDirectory() as tmp:
        # Enough data for the whole run at the highest candidate rate.
        top = max(rate for rate, _, _ in candidates)
        size = int(a.duration * top / 8)
        options = ["--options", ";".join(a.node_option)] if a.node_option else []
        references = loaded_references(a)
        levels = [] if references is not None or a.skip_references else \
            sorted({s for _, s in steps})
        with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
            # The references beside the adaptive run: they need only the steps' windows.
            measuring = pool.submit(measured_references, a, channel, candidates, levels,
                                    segment_windows(steps, a.duration), tmp)
            if a.adaptive_from:
                adaptive = earlier_adaptive(a.adaptive_from, steps, a.profile, a.seed)
            else:
                adaptive = demo(channel + options + ["--rate", "auto", "--interleaver",
                                                     a.interleaver, "--snr-db",
                                                     str(steps[0][1]), "--snr-steps", a.steps,
                                                     "--bytes", str(size), "--stop-after",
                                                     str(a.duration + 10)],
                                os.path.join(tmp, "adaptive.json"), 2 * a.duration + 600)
            if references is None:
                references = measuring.result()
        timeline = adaptive["timeline"]
        # The run stops at --duration: what was delivered (carried) by then counts. An
        # older run's timeline may lack a measure.
        by_measure = {key: segment_throughputs(timeline, steps, a.duration, key)
                      for key, *_ in MEASURES if timeline and key in timeline[0]}
        segments = by_measure["delivered_bytes"]
        modes = [p["tx_mode_a"] for p in timeline]
        sequence = [m for i, m in enumerate(modes) if i == 0 or modes[i - 1] != m]
        changes = len(sequence) - 1
        print(f"adaptive: {len(segments)} segments, {changes} data rate changes "
              f"({' -> '.join(sequence)}), {adaptive['delivered_bytes']} bytes delivered, "
              f"{'identical' if adaptive['identical'] else 'WITH DIFFERENCES'}")
    rows, best = {}, {}
    for key, figure, rows_key, label in MEASURES:
        if key in by_measure:
            best[key] = best_of(references, figure)
            rows[rows_key] = compare(by_measure[key], best[key], label)
    if a.plot:
        plot(a.plot, timeline, segments, best["delivered_bytes"], best.get("arq_bytes_received"))
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"steps": steps, "profile": a.profile, "interleaver": a.interleaver,
                       "seed": a.seed, **rows, "references": references,
                       "data_rate_changes": changes, "delivered_bytes": adaptive["delivered_bytes"],
                       "identical": adaptive["identical"], "timeline": timeline,
                       "nodes": adaptive.get("nodes", {}), "adaptive_from": a.adaptive_from},
                      f, indent=1)
    return 0


def segment_windows(steps, duration):
    """[(start, end, snr)] of the steps, the last ending at duration."""
    bounds = [t for t, _ in steps[1:]] + [duration]
    return [(start, end, snr) for (start, snr), end in zip(steps, bounds) if end > start]


def measured_references(a, channel, candidates, levels, windows, tmp):
    """The fixed modes' figures at each SNR level, --jobs demos at once (real way)."""
    def steady(snr, rate, interleaver, mode):
        r = demo(channel + ["--rate", str(rate), "--interleaver", interleaver,
                            "--snr-db", str(snr), "--bytes", str(int(a.reference_s * rate / 8))],
                 os.path.join(tmp, f"ref-{snr}-{mode}.json"), 3 * a.reference_s + 600)
        return [{"snr_db": snr, "mode": mode, "bps": 8 * r["delivered_bytes"] / r["elapsed_s"],
                 "identical": r["identical"]}]

    def same_stretch(snr, rate, interleaver, mode):
        stretches = [(start, end) for start, end, level in windows if level == snr]
        if not stretches:
            return []
        run_s = max(end for _, end in stretches)
        # More than the mode can carry in run_s; the transfer stops at run_s.
        r = demo(channel + ["--rate", str(rate), "--interleaver", interleaver,
                            "--snr-db", str(snr), "--bytes", str(int(1.2 * run_s * rate / 8)),
                            "--stop-after", str(run_s + 1)],
                 os.path.join(tmp, f"ref-{snr}-{mode}.json"), 2 * run_s + 600)
        tl = r["timeline"]
        figures = []
        for start, end in stretches:
            if not tl or tl[-1]["t_s"] < end:
                continue
            f = {"snr_db": snr, "mode": mode, "start_s": start, "end_s": end,
                 "identical": r["identical"]}
            for key, figure, _, _ in MEASURES:
                if key in tl[0]:
                    f[figure] = throughput(tl, start, end, key)
            figures.append(f)
        return figures

    chosen = same_stretch if a.references == "same-stretch" else steady

    def measure(snr, rate, interleaver, mode):
        # A fixed mode that cannot hold the link at this SNR is no candidate for the best:
        # its failure is reported and the others still count.
        try:
            return chosen(snr, rate, interleaver, mode)
        except (SystemExit, OSError, ValueError, KeyError) as failure:
            print(f"fixed {mode} at {snr:g} dB: no figure ({failure})", file=sys.stderr)
            return []

    jobs = [(snr, rate, interleaver, mode) for snr in levels
            for rate, interleaver, mode in candidates]
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, a.jobs)) as pool:
        results = list(pool.map(lambda j: measure(*j), jobs))
    references = [r for rs in results for r in rs]
    for r in references:
        print_reference(r)
    return references


def print_reference(r, source=""):
    where = f" over {r['start_s']:.0f}-{r['end_s']:.0f} s" if "start_s" in r else ""
    carried = f", carried {r['carried_bps']:.0f}" if "carried_bps" in r else ""
    print(f"fixed {r['mode']} at {r['snr_db']:g} dB{where}: {r['bps']:.0f} bit/s{carried}"
          f"{source}")


def main_virtual(a, steps):
    """The comparison in virtual time, summed over seeds."""
    modes = a.candidates.split(",")
    top = max(rate_of(m) for m in modes)
    first = f"2400{'S' if a.interleaver == 'short' else 'L'}"
    seeds = range(a.seed, a.seed + a.seeds)
    adaptive = [virtual_run(first, True, steps[0][1], steps[1:], a.duration + 300,
                            int(2 * a.duration * top / 8), s, a.profile, a.node_option)[0]
                for s in seeds]
    per_seed = [segment_throughputs(tl, steps, a.duration) for tl in adaptive]
    for s, tl in zip(seeds, adaptive):
        seq = [m for i, m in enumerate(p["tx_mode_a"] for p in tl)
               if i == 0 or tl[i - 1]["tx_mode_a"] != m]
        print(f"adaptive, seed {s}: {' -> '.join(seq)}")
    references = loaded_references(a)
    if references is None:
        references = []
        for snr in ([] if a.skip_references else sorted({db for _, db in steps})):
            for mode in modes:
                bps = 0.0
                for s in seeds:
                    tl, _ = virtual_run(mode, False, snr, [], a.reference_s + 300,
                                        int(2 * a.reference_s * rate_of(mode) / 8), s, a.profile)
                    bps += 8 * bytes_at(tl, a.reference_s) / a.reference_s / len(seeds)
                references.append({"snr_db": snr, "mode": mode, "bps": bps})
                print(f"fixed {mode} at {snr:g} dB: {bps:.0f} bit/s")
    best = best_of(references)
    mean_segments = [(start, end, snr, sum(seg[i][3] for seg in per_seed if i < len(seg))
                      / len(per_seed)) for i, (start, end, snr, _) in enumerate(per_seed[0])]
    rows = compare(mean_segments, best)
    if a.plot:
        plot(a.plot, adaptive[0], per_seed[0], best)
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"way": "virtual", "steps": steps, "profile": a.profile,
                       "seeds": list(seeds), "segments": rows, "references": references,
                       "timeline": adaptive[0]}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
