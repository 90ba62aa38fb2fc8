#!/usr/bin/env python3
#
# Copyright 2026 gr-hfstack authors.
#
# SPDX-License-Identifier: GPL-3.0-or-later

"""Measures our STANAG 4539 modems' curves into lib/kernels/sim/modem_curves.csv,
which the simulator's error model and the SNR report map are built from.

For every mode and channel, build/bench/bench_s4539_modem runs a grid of SNRs around
where the mode is expected to reach 1e-5 (the figures of docs/modem-design.md) and
records per point: bits sent, bit errors (a lost burst counts all its bits), bursts
sent and lost (preamble missed or burst never reported), the bits and errors of the
received bursts alone, and the mean and spread of the SNR the receiver reported.

    bench/s4539_curves.py [--modes 2400S,1200L,...] [--channels awgn,poor,moderate,5ms5hz]
        [--bench build/bench/bench_s4539_modem] [--fitter build/bench/bench_curve_fit]
        [--data lib/kernels/sim/modem_curves.csv] [--seed 1] [--jobs 1]
        [--scale 1.0] (signal seconds per point times this) [--estimate] [--fit-only]
        [--no-fit] [--target-fer F] (the rate thresholds' frame-error target, default 0.5)

Grid (dB in 3 kHz, over the transmission's mean power; T = the expected 1e-5 SNR of
the mode on the channel, START below): AWGN T-8 .. T+1 in 1 dB steps, fading T-8
(App C: T-14, where a link lands after a fall) .. T+2 in 2 dB steps (fading curves
are shallow). Signal per point: enough bits for a 1e-5 bound (330,000) within
60-1500 s on AWGN, 240-600 s on fading (so a point averages a few hundred 1 Hz
fades). Modes default to all of 110A (75S..2400L) and App C
S/L (3200..9600) plus 12800U; channels to AWGN, F.1487 poor and moderate and the
5 ms / 5 Hz two-path one. --estimate prints the plan and its single-core CPU time.

The data file keeps what other runs measured: a (mode, channel) measured again replaces
its points. Each run is a row of [runs] (commit, UTC date, command, the curves it
finished: a run stopped early lists fewer than its command asks for) and each point
names its run. After measuring, the fitter (bench_curve_fit) rewrites [fits]: the EESM
beta and the preamble detection SNR per mode fitted to the fading points, with their
errors. The kernels embed the file at build time (lib/CMakeLists.txt).
"""
import argparse
import csv
import datetime
import io
import os
import re
import shlex
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..")

MODES_110A = ["75S", "75L", "150S", "150L", "300S", "300L", "600S", "600L", "1200S", "1200L",
              "2400S", "2400L"]
MODES_APPC = ["3200S", "3200L", "4800S", "4800L", "6400S", "6400L", "8000S", "8000L",
              "9600S", "9600L", "12800U"]

CHANNELS = {
    "awgn": ["--profile", "awgn"],
    "poor": ["--profile", "poor"],          # F.1487 poor: 2 paths, 2 ms, 1 Hz
    "moderate": ["--profile", "moderate"],  # F.1487 moderate: 2 paths, 1 ms, 0.5 Hz
    "5ms5hz": ["--two-path", "5,5"],        # 2 equal paths, 5 ms, 5 Hz
}

# Expected 1e-5 SNR (dB) per channel and mode: docs/modem-design.md's sweeps where
# measured; elsewhere a guess that only places the grid (moderate as poor; 5 ms / 5 Hz
# 4 dB above poor for the modes the requirement rows do not quote; 12800U 4 dB above
# 9600S).
START = {
    "awgn": {"75S": -1, "75L": -5, "150S": -2, "150L": -4, "300S": 0, "300L": -1, "600S": 2,
             "600L": 2, "1200S": 5, "1200L": 4, "2400S": 11, "2400L": 9, "3200S": 7, "3200L": 8,
             "4800S": 12, "4800L": 12, "6400S": 14, "6400L": 13, "8000S": 17, "8000L": 16,
             "9600S": 20, "9600L": 19, "12800U": 24},
    "poor": {"75S": 12, "75L": 4, "150S": 7, "150L": 3, "300S": 8, "300L": 3, "600S": 11,
             "600L": 7, "1200S": 13, "1200L": 10, "2400S": 19, "2400L": 14, "3200S": 15,
             "3200L": 12, "4800S": 22, "4800L": 18, "6400S": 23, "6400L": 19, "8000S": 25,
             "8000L": 22, "9600S": 33, "9600L": 29, "12800U": 37},
    "5ms5hz": {"75S": 8, "75L": 2, "150S": 4, "150L": 2, "300S": 6, "300L": 3},
}
START["moderate"] = dict(START["poor"])

# Single-core receiver speed (x real time) for the CPU estimate: docs/modem-design.md.
SPEED = {("110A", "awgn"): 150, ("110A", "fading"): 80, ("appc", "awgn"): 90, ("appc", "fading"): 30}

TARGET_BITS = 330000
POINT_FIELDS = ["run", "mode", "channel", "snr_db", "seconds", "bits", "errors", "bursts", "lost",
                "rx_bits", "rx_errors", "snr_report_db", "snr_report_sd"]
RUN_FIELDS = ["run", "commit", "date", "command", "curves"]
FIT_FIELDS = ["mode", "eesm_beta", "fading_loss_db", "beta_rms_log10", "beta_points", "detect_snr_db",
              "detect_width_db", "loss_rms",
              "loss_points", "rate_snr_db", "rate_target", "source"]


def bps_of(mode):
    return int(re.match(r"\d+", mode).group())


def expected(channel, mode):
    table = START[channel]
    if mode in table:
        return table[mode]
    if channel == "5ms5hz":
        return START["poor"][mode] + 4
    raise SystemExit(f"s4539_curves: no expected SNR for {mode} on {channel}")


def grid(channel, mode):
    t = expected(channel, mode)
    if channel == "awgn":
        return [t + d for d in range(-8, 2)]
    # App C on fading from T-14: a link lands there after a fall (25 -> 12 dB from 8000S,
    # bench/rate_adaptation.py), and its receiver's report of a burst over lost lock is what the
    # rate policy reads; below T-8 the report map had no points and assumed slope 1.
    lowest = -14 if mode in MODES_APPC else -8
    return [t + d for d in range(lowest, 3, 2)]


def seconds_for(channel, mode, scale):
    need = TARGET_BITS / (0.8 * bps_of(mode))  # bursts leave 0.5 s gaps and preambles
    lo, hi = (60, 1500) if channel == "awgn" else (240, 600)
    return max(1, int(round(scale * min(hi, max(lo, need)))))


def cpu_estimate(channel, mode, scale):
    family = "110A" if mode in MODES_110A else "appc"
    speed = SPEED[(family, "awgn" if channel == "awgn" else "fading")]
    return len(grid(channel, mode)) * (seconds_for(channel, mode, scale) + 10) / speed


def read_data(path):
    """{'runs': [...], 'points': [...], 'fits': [...]} (rows as dicts); empty if absent."""
    doc = {"runs": [], "points": [], "fits": []}
    if not os.path.exists(path):
        return doc
    section, header = None, None
    with open(path, newline="") as f:
        for row in csv.reader(line for line in f if not line.startswith("#")):
            if not row:
                continue
            if len(row) == 1 and row[0].startswith("[") and row[0].endswith("]"):
                section, header = row[0][1:-1], None
                continue
            if header is None:
                header = row
                continue
            doc.setdefault(section, []).append(dict(zip(header, row)))
    return doc


def write_data(path, doc):
    out = io.StringIO()
    out.write("# gr-hfstack: our STANAG 4539 modems' measured curves. Written by\n"
              "# bench/s4539_curves.py (points) and build/bench/bench_curve_fit (fits); do not edit by\n"
              "# hand. Compiled into the kernels (lib/CMakeLists.txt -> sim/modem_curves.h).\n"
              "# [points]: SNR dB in 3 kHz over the transmission's mean power; bits/errors count a\n"
              "# lost burst's bits as errors; rx_bits/rx_errors the received bursts alone; bursts\n"
              "# sent, lost (never reported); snr_report_db/_sd the receiver's report (nan: none).\n"
              "# [fits]: EESM beta (linear SNR), fading loss (dB) and preamble detection SNR and width\n"
              "# (dB) per mode, fitted to the points, with their RMS errors; rate_snr_db the rate-change\n"
              "# threshold for rate_target; source: fitted or the mode it falls back to.\n")
    w = csv.writer(out, lineterminator="\n")
    for name, fields in (("runs", RUN_FIELDS), ("points", POINT_FIELDS), ("fits", FIT_FIELDS)):
        w.writerow([f"[{name}]"])
        w.writerow(fields)
        for row in doc[name]:
            w.writerow([row.get(k, "") for k in fields])
    with open(path, "w") as f:
        f.write(out.getvalue())


# What the bench's figures depend on: its source and the modem and channel kernels.
BENCH_SOURCES = ["bench/bench_s4539_modem.cc", "lib/kernels/phy", "lib/kernels/chan",
                 ":!lib/kernels/phy/modem_curves.*"]


def commit_id():
    """HEAD, with "+changes" when the bench's sources differ from it."""
    head = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short=12", "HEAD"],
                          capture_output=True, text=True).stdout.strip() or "unknown"
    changed = subprocess.run(["git", "-C", ROOT, "status", "--porcelain", "--", *BENCH_SOURCES],
                             capture_output=True, text=True).stdout.strip()
    return head + ("+changes" if changed else "")


def run_curve(bench, channel, mode, snrs, seconds, seed):
    cmd = ["nice", "-n", "19", bench, *CHANNELS[channel], "--modes", mode,
           "--snr", ",".join(str(s) for s in snrs), "--seconds", str(seconds), "--seed", str(seed)]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    points = []
    for line in out.splitlines():
        f = line.split()
        if len(f) < 17 or f[0] != mode:
            continue
        received = int(f[9])
        lost = int(f[6])
        points.append({"mode": mode, "channel": channel, "snr_db": f"{float(f[1]):g}",
                       "seconds": str(seconds), "bits": f[2], "errors": f[3],
                       "bursts": str(received + lost), "lost": str(lost), "rx_bits": f[13],
                       "rx_errors": f[14], "snr_report_db": f[15], "snr_report_sd": f[16]})
    if len(points) != len(snrs):
        raise SystemExit(f"s4539_curves: {' '.join(cmd)} gave {len(points)} points, wanted {len(snrs)}")
    return points


def fit(fitter, data, target_fer=None):
    cmd = [fitter, data] + (["--target-fer", str(target_fer)] if target_fer else [])
    out = subprocess.run(["nice", "-n", "19"] + cmd, check=True, capture_output=True, text=True).stdout
    rows = list(csv.DictReader(io.StringIO(out)))
    print(out, end="")
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--modes", default=",".join(MODES_110A + MODES_APPC))
    ap.add_argument("--channels", default="awgn,poor,moderate,5ms5hz")
    ap.add_argument("--bench", default="build/bench/bench_s4539_modem")
    ap.add_argument("--fitter", default="build/bench/bench_curve_fit")
    # The committed thresholds are fitted at 0.5 (docs/simulator-design.md); the fitter's
    # own default, 0.1, moved every mode's threshold when a run measuring a few modes
    # refitted them all.
    ap.add_argument("--target-fer", type=float, default=0.5,
                    help="the fitter's frame-error target for the rate thresholds (0.5, as "
                         "the committed fits)")
    ap.add_argument("--data", default=os.path.join("lib", "kernels", "sim", "modem_curves.csv"))
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--jobs", type=int, default=1, help="only 1: one bench process at a time")
    ap.add_argument("--scale", type=float, default=1.0, help="signal seconds per point times this")
    ap.add_argument("--estimate", action="store_true", help="print the plan and its CPU time only")
    ap.add_argument("--fit-only", action="store_true", help="refit [fits] from the points in the file")
    ap.add_argument("--no-fit", action="store_true")
    a = ap.parse_args()
    if a.jobs != 1:
        ap.error("--jobs: the sweep runs one bench process at a time")
    modes = a.modes.split(",")
    channels = a.channels.split(",")
    for m in modes:
        if m not in MODES_110A + MODES_APPC:
            ap.error(f"--modes: {m!r} is not one of {','.join(MODES_110A + MODES_APPC)}")
    for c in channels:
        if c not in CHANNELS:
            ap.error(f"--channels: {c!r} is not one of {','.join(CHANNELS)}")
    jobs = [(c, m) for m in modes for c in channels]
    total = sum(cpu_estimate(c, m, a.scale) for c, m in jobs)
    if a.estimate:
        for c, m in jobs:
            print(f"{m:7s} {c:9s} SNR {grid(c, m)} dB, {seconds_for(c, m, a.scale)} s per point, "
                  f"~{cpu_estimate(c, m, a.scale):.0f} s CPU")
        print(f"{len(jobs)} curves, about {total / 60:.0f} min of one idle core")
        return
    if not a.fit_only:
        doc = read_data(a.data)
        run_id = str(1 + max((int(r["run"]) for r in doc["runs"]), default=0))
        command = "bench/s4539_curves.py " + " ".join(shlex.quote(x) for x in sys.argv[1:])
        run = {"run": run_id, "commit": commit_id(),
               "date": datetime.datetime.utcnow().strftime("%Y-%m-%dT%H:%MZ"), "command": command,
               "curves": ""}
        print(f"run {run_id}: {len(jobs)} curves, about {total / 60:.0f} min of one idle core", flush=True)
        for c, m in jobs:
            t0 = time.time()
            snrs = grid(c, m)
            points = run_curve(a.bench, c, m, snrs, seconds_for(c, m, a.scale), a.seed)
            for p in points:
                p["run"] = run_id
            # Read again: the file may have been refitted meanwhile. A stopped run keeps
            # what it measured.
            doc = read_data(a.data)
            run["curves"] = (run["curves"] + f" {m}/{c}").strip()
            doc["runs"] = [r for r in doc["runs"] if r["run"] != run_id] + [run]
            doc["points"] = [p for p in doc["points"] if (p["mode"], p["channel"]) != (m, c)] + points
            write_data(a.data, doc)
            cells = "  ".join(f"{p['snr_db']}:{int(p['rx_errors']) / max(1, int(p['rx_bits'])):.1e}"
                              f"/{p['lost']}" for p in points)
            print(f"{m:7s} {c:9s} ({time.time() - t0:.0f} s) {cells}", flush=True)
    if not a.no_fit:
        fits = fit(a.fitter, a.data, a.target_fer)
        doc = read_data(a.data)
        doc["fits"] = fits
        write_data(a.data, doc)


if __name__ == "__main__":
    main()
