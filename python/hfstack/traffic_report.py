#
# Copyright 2026 gr-hfstack authors.
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""What hfstack-sim and hfstack-console share: the test-client options, the results
as rows, and their output as a table, CSV, JSON or a throughput-over-time plot."""

import argparse
import csv
import io
import json
import math
import sys

from .hfstack_python import sim


def positive_float(text):
    value = float(text)
    if not value > 0 or not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"{text!r} is not a positive number")
    return value


def non_negative_float(text):
    value = float(text)
    if not value >= 0 or not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"{text!r} is not a number >= 0")
    return value


def byte_count(text):
    """1000, 100k, 2M (k = 1000, K = 1024)."""
    scale = {"k": 1000, "K": 1024, "M": 1000 ** 2, "G": 1000 ** 3}
    try:
        if text and text[-1] in scale:
            value = int(float(text[:-1]) * scale[text[-1]])
        else:
            value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a byte count (e.g. 2048, 100k, 1M)")
    if value < 0:
        raise argparse.ArgumentTypeError(f"{text!r} is negative")
    return value


def add_client_options(parser):
    """The test client's options (traffic/test_client.h), for both commands."""
    g = parser.add_argument_group("test client")
    g.add_argument("--non-arq", action="store_true", help="non-ARQ delivery (default ARQ)")
    g.add_argument("--expedited", action="store_true", help="expedited U_PDUs")
    g.add_argument("--priority", type=int, default=7, help="U_PDU priority 0..15 (default 7)")
    g.add_argument("--sap", type=int, default=None,
                   help="SAP of the test clients (default 13, with --client rcop 6 or 7)")
    g.add_argument("--client", choices=("raw", "rcop"), default="raw",
                   help="raw U_PDUs or STANAG 5066 Annex F RCOP/UDOP framing (default raw)")
    g.add_argument("--acknowledged", action="store_true",
                   help="throughput: ask for node delivery confirmation and keep at most "
                        "--window U_PDUs unconfirmed")
    g.add_argument("--window", type=int, default=64, help="see --acknowledged (default 64)")
    g.add_argument("--updu-size", type=byte_count, default=2048,
                   help="throughput U_PDU size in bytes (default 2048)")
    g.add_argument("--bytes", type=byte_count, default=0,
                   help="throughput: bytes to send (default: until --duration)")
    g.add_argument("--pings", type=int, default=10, help="ping: how many (default 10)")
    g.add_argument("--ping-bytes", type=byte_count, default=16,
                   help="ping U_PDU size (default 16)")
    g.add_argument("--interval", type=non_negative_float, default=0,
                   help="ping every INTERVAL s (default 0: the next on return)")
    g.add_argument("--gap", type=non_negative_float, default=10,
                   help="ping on return: wait GAP s after each answer (default 10)")
    g.add_argument("--ping-timeout", type=positive_float, default=900,
                   help="a ping unanswered this long is lost (default 900 s)")
    g.add_argument("--echo-delay", type=non_negative_float, default=0,
                   help="the echoing client answers this many seconds late (default 0)")
    g.add_argument("--ttl", type=non_negative_float, default=0,
                   help="U_PDU time to live in seconds (default 0: none)")


def client_config_from(args, test):
    """A sim.client_config from add_client_options() arguments; raises ValueError with
    a message naming the option."""
    c = sim.client_config()
    c.arq = not args.non_arq
    c.expedited = args.expedited
    if not 0 <= args.priority <= 15:
        raise ValueError("--priority must be 0..15")
    c.priority = args.priority
    c.framing = sim.encapsulation.rcop if args.client == "rcop" else sim.encapsulation.raw
    sap = args.sap
    if sap is None:
        sap = (6 if c.arq else 7) if args.client == "rcop" else 13
    if not 0 <= sap <= 15:
        raise ValueError("--sap must be 0..15")
    c.sap = c.peer_sap = sap
    c.confirm = args.acknowledged
    if args.acknowledged and args.non_arq:
        raise ValueError("--acknowledged needs ARQ (non-ARQ delivery has no confirmation)")
    if args.window < 1:
        raise ValueError("--window must be at least 1")
    c.window = args.window
    c.updu_size = args.updu_size
    c.ping_bytes = args.ping_bytes
    c.ping_interval_s = args.interval
    c.ping_gap_s = args.gap
    c.ping_timeout_s = args.ping_timeout
    c.echo_delay_s = args.echo_delay
    c.ttl = int(math.ceil(args.ttl / 2))
    if test == "ping":
        if args.pings < 1:
            raise ValueError("--pings must be at least 1")
        c.pings = args.pings
    else:
        c.send_bytes = args.bytes
    least = 8 + (6 if args.client == "rcop" else 0)  # payload header (+ RCOP header)
    if test == "ping" and args.ping_bytes < least:
        raise ValueError(f"--ping-bytes must be at least {least} with --client {args.client}")
    if test != "ping" and not least <= args.updu_size <= 65535:
        raise ValueError(f"--updu-size must be {least}..65535 with --client {args.client}")
    return c


def add_output_options(parser):
    g = parser.add_argument_group("output")
    g.add_argument("--csv", metavar="FILE", help="also write the rows as CSV ('-' = stdout)")
    g.add_argument("--json", metavar="FILE", help="also write everything as JSON ('-' = stdout)")
    g.add_argument("--plot", metavar="FILE.png",
                   help="throughput: bit/s per interval against time; ping: each round "
                        "trip; sweep: the results against the swept value "
                        "(needs python3-matplotlib)")
    g.add_argument("--plot-interval", type=positive_float, default=None, metavar="S",
                   help="throughput plot: seconds per step (default: a step from one delivery "
                        "instant to the next, the rate of each transmission cycle)")
    g.add_argument("--quiet", action="store_true", help="no table and no progress bar")


def nan_to_none(v):
    return None if isinstance(v, float) and not math.isfinite(v) else v


def clean(value):
    """NaN and infinities to None, all the way down, for strict JSON (RFC 8259 has no
    NaN); pybind11 maps and sequences become dicts and lists."""
    if isinstance(value, float):
        return nan_to_none(value)
    if isinstance(value, dict):
        return {str(k): clean(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [clean(v) for v in value]
    return value


def ping_rows(pings, label=None):
    """One row per ping: number, sent at, round trip (None when lost)."""
    rows = []
    for i, p in enumerate(pings):
        row = {"ping": i + 1, "sent_at_s": round(p.sent_at, 3),
               "rtt_s": None if math.isnan(p.rtt_s) else round(p.rtt_s, 3)}
        if label:
            row = {"run": label, **row}
        rows.append(row)
    return rows


def ping_summary_row(rtts):
    """first / later mean, min, max / lost from a list of round trips (None = lost)."""
    answered = [r for r in rtts[1:] if r is not None]
    return {
        "pings": len(rtts),
        "first_s": rtts[0] if rtts else None,
        "later_mean_s": round(sum(answered) / len(answered), 3) if answered else None,
        "later_min_s": min(answered) if answered else None,
        "later_max_s": max(answered) if answered else None,
        "lost": sum(1 for r in rtts if r is None),
    }


def ping_summary_text(label, rows, note):
    """One line: first and later round trips, losses; a lost ping reads "lost", never
    "None s"."""
    s = ping_summary_row([row["rtt_s"] for row in rows])

    def sec(v):
        return "-" if v is None else f"{v} s"

    first = "lost" if rows and rows[0]["rtt_s"] is None else sec(s["first_s"])
    return (f"{label}: first {first}, later mean {sec(s['later_mean_s'])} "
            f"(min {sec(s['later_min_s'])}, max {sec(s['later_max_s'])}), "
            f"lost {s['lost']} of {s['pings']} [{note}]")


def throughput_row(label, bytes_delivered, seconds, nominal_bps, steady=None):
    bps = bytes_delivered * 8 / seconds if seconds > 0 else 0.0
    row = {"flow": label, "bytes": bytes_delivered, "seconds": round(seconds, 1),
           "throughput_bps": round(bps, 1),
           "utilisation_pct": round(100 * bps / nominal_bps, 2) if nominal_bps else None}
    if steady is not None:
        row["steady_utilisation_pct"] = None if math.isnan(steady) else round(100 * steady, 2)
    return row


def mean_and_ci(values, confidence=0.95):
    """Mean and the half-width of its Student-t confidence interval (None with fewer
    than two values) of the values that are not None."""
    xs = [float(v) for v in values if v is not None and math.isfinite(float(v))]
    if not xs:
        return None, None
    mean = sum(xs) / len(xs)
    if len(xs) < 2:
        return mean, None
    from scipy.stats import t
    sd = math.sqrt(sum((x - mean) ** 2 for x in xs) / (len(xs) - 1))
    return mean, t.ppf(0.5 + confidence / 2, len(xs) - 1) * sd / math.sqrt(len(xs))


def seed_summary(runs, keys, label_key, seeds):
    """One row per label over several seeds' rows: for each numeric key its mean and
    95 % confidence half-width (key_ci95). runs: [[row, ...] per seed]."""
    out = []
    for i, first in enumerate(runs[0]):
        row = {label_key: first.get(label_key), "seeds": len(seeds),
               "seed_range": f"{seeds[0]}-{seeds[-1]}"}
        for k in keys:
            if k not in first or not isinstance(first[k], (int, float, type(None))):
                continue
            mean, ci = mean_and_ci([run[i].get(k) for run in runs if i < len(run)])
            row[k] = None if mean is None else round(mean, 3)
            row[k + "_ci95"] = None if ci is None else round(ci, 3)
        out.append(row)
    return out


def format_table(rows):
    if not rows:
        return "(no rows)\n"
    keys = []
    for r in rows:
        for k in r:
            if k not in keys:
                keys.append(k)

    def cell(v):
        if v is None:
            return "-"
        if isinstance(v, float):
            return f"{v:.6g}" if abs(v) < 1e6 else f"{v:.0f}"
        return str(v)

    cells = [[cell(r.get(k)) for k in keys] for r in rows]
    widths = [max(len(k), *(len(c[i]) for c in cells)) for i, k in enumerate(keys)]
    out = io.StringIO()
    out.write("  ".join(k.ljust(w) for k, w in zip(keys, widths)).rstrip() + "\n")
    for c in cells:
        out.write("  ".join(v.rjust(w) for v, w in zip(c, widths)).rstrip() + "\n")
    return out.getvalue()


def _open(path):
    return (sys.stdout, False) if path == "-" else (open(path, "w", newline=""), True)


def write_csv(rows, path):
    keys = []
    for r in rows:
        for k in r:
            if k not in keys:
                keys.append(k)
    f, close = _open(path)
    w = csv.DictWriter(f, fieldnames=keys)
    w.writeheader()
    for r in rows:
        w.writerow({k: ("" if r.get(k) is None else r.get(k)) for k in keys})
    if close:
        f.close()


def write_json(document, path):
    f, close = _open(path)
    json.dump(clean(document), f, indent=2, allow_nan=False)
    f.write("\n")
    if close:
        f.close()


def _pyplot():
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise RuntimeError("--plot needs matplotlib (Debian: apt-get install python3-matplotlib)")
    return plt


def _save(fig, ax, path, title, legend=True):
    ax.set_title(title)
    ax.grid(True, alpha=0.3)
    if legend and ax.get_legend_handles_labels()[0]:
        ax.legend(loc="best")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    fig.clf()
    import matplotlib.pyplot as plt
    plt.close(fig)


def interval_throughput(start, points, interval_s, end=None):
    """Bit/s delivered in each interval [start + k T, start + (k + 1) T) from
    cumulative (t, bytes) points; returns (interval starts, bit/s)."""
    if not points or not interval_s > 0:
        return [], []
    end = max(points[-1][0], end if end is not None else points[-1][0])
    n = max(1, int(math.ceil((end - start) / interval_s)))
    delivered = [0] * n
    before = 0
    for t, total in points:
        k = min(n - 1, max(0, int((t - start) // interval_s)))
        delivered[k] += total - before
        before = total
    return ([start + k * interval_s for k in range(n)],
            [8 * b / interval_s for b in delivered])


def delivery_throughput(start, points, same_instant_s=0.0):
    """Bit/s over each span between delivery instants (deliveries closer than
    same_instant_s are one instant): a window of data arrives at once, so this is the
    rate of each transmission cycle. Returns (span starts, span ends, bit/s)."""
    starts, ends, bps = [], [], []
    t0, before = start, 0
    for i, (t, total) in enumerate(points):
        if i + 1 < len(points) and points[i + 1][0] - t <= same_instant_s:
            continue  # the same instant: take its last total
        if t > t0:
            starts.append(t0)
            ends.append(t)
            bps.append(8 * (total - before) / (t - t0))
        t0, before = t, total
    return starts, ends, bps


def plot_series(series, nominal_bps, path, title, interval_s=None, clock="protocol",
                same_instant_s=0.0):
    """Throughput against time, a step per interval, for each flow, with the nominal
    rate: per interval_s seconds if given, else per span between delivery instants.
    series: {label: (start, [(t, cumulative bytes)])}; clock names the time axis."""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(9, 4.5))
    for label, (start, points) in series.items():
        if interval_s:
            starts, bps = interval_throughput(start, points, interval_s)
            ends = [t + interval_s for t in starts]
            what = f"bit/s per {interval_s:g} s"
        else:
            starts, ends, bps = delivery_throughput(start, points, same_instant_s)
            what = "bit/s between deliveries"
        if starts:
            ax.step(starts + [ends[-1]], bps + [bps[-1]], where="post", label=f"{label}: {what}")
    if nominal_bps:
        ax.axhline(nominal_bps, color="grey", linestyle="--", label="nominal rate")
    ax.set_xlabel(f"{clock} time, s")
    ax.set_ylabel("throughput, bit/s")
    ax.set_ylim(bottom=0)
    _save(fig, ax, path, title)


def plot_pings(rows, path, title, clock="protocol"):
    """Round trip of each ping; lost pings marked on the axis."""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(9, 4.5))
    got = [(r["ping"], r["rtt_s"]) for r in rows if r["rtt_s"] is not None]
    lost = [r["ping"] for r in rows if r["rtt_s"] is None]
    if got:
        ax.plot(*zip(*got), "o-", label="round trip")
    if lost:
        ax.plot(lost, [0] * len(lost), "rx", markersize=10, label="lost")
    ax.set_xlabel("ping")
    ax.set_ylabel(f"round trip, {clock} s")
    ax.set_ylim(bottom=0)
    _save(fig, ax, path, title)


def plot_sweep(rows, param, path, title):
    """Each numeric result column against the swept value (one panel per unit)."""
    plt = _pyplot()
    keys = [k for k in rows[0] if k != param and all(
        isinstance(r.get(k), (int, float)) or r.get(k) is None for r in rows)
        and any(r.get(k) is not None for r in rows)]
    groups = {}
    for k in keys:
        unit = ("%" if k.endswith("_pct") else "bit/s" if k.endswith("_bps")
                else "s" if k.endswith("_s") else "count")
        groups.setdefault(unit, []).append(k)
    fig, axes = plt.subplots(len(groups), 1, figsize=(9, 3.2 * len(groups)), squeeze=False)
    numeric = all(isinstance(r[param], (int, float)) for r in rows)
    xs = [r[param] for r in rows] if numeric else list(range(len(rows)))
    for ax, (unit, ks) in zip(axes[:, 0], groups.items()):
        for k in ks:
            ax.plot(xs, [math.nan if r.get(k) is None else r[k] for r in rows], "o-",
                    label=k)
        ax.set_ylabel(unit)
        if not numeric:
            ax.set_xticks(xs, [str(r[param]) for r in rows])
        ax.grid(True, alpha=0.3)
        ax.legend(loc="best")
    axes[-1, 0].set_xlabel(param)
    _save(fig, axes[0, 0], path, title, legend=False)


def emit(args, rows, document, series=None, nominal_bps=None, title="", clock="protocol",
         plot=None, same_instant_s=0.0):
    """Table on stdout (unless --quiet), then the --csv, --json and --plot files.
    `plot(path)` draws what is not a throughput series (pings, sweeps)."""
    if not args.quiet and args.csv != "-" and args.json != "-":
        sys.stdout.write(format_table(rows))
    if args.csv:
        write_csv(rows, args.csv)
    if args.json:
        write_json(document, args.json)
    if args.plot:
        if plot:
            plot(args.plot)
        elif series:
            plot_series(series, nominal_bps, args.plot, title,
                        getattr(args, "plot_interval", None), clock, same_instant_s)
        else:
            raise RuntimeError("--plot: this run has nothing to plot")


class progress_bar:
    """tqdm's bar (rate, time left, fitted to the terminal's width) on stderr, shown only
    once the run has lasted after_s seconds, and only on a terminal (or when forced)."""

    def __init__(self, total, enabled=True, after_s=2.0, stream=sys.stderr, force=False):
        self.enabled = enabled and (force or stream.isatty())
        self.bar = None
        if self.enabled:
            from tqdm import tqdm
            self.bar = tqdm(total=total, file=stream, delay=after_s, dynamic_ncols=True,
                            mininterval=0.2, unit="", unit_scale=True)

    def update(self, done, note=""):
        if self.bar is not None:
            self.bar.set_postfix_str(note, refresh=False)
            self.bar.update(min(done, self.bar.total) - self.bar.n)

    def close(self):
        if self.bar is not None:
            self.bar.close()
