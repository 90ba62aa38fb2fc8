#!/usr/bin/env python3
#
# Copyright 2026 gr-hfstack authors.
#
# SPDX-License-Identifier: GPL-3.0-or-later

"""The SNR (1 dB grid) at which each STANAG 4539 mode reaches a coded BER of 1e-5, per channel.

Runs build/bench/bench_s4539_modem point by point: from a starting SNR it steps down
while a point reaches the target (its 95 % upper bound at or below 1e-5, so with no
errors at least 3e5 bits), and up while none has yet; it stops at the first point
below a reached one that misses. A point that misses stops at 30 errors.

    bench/s4539_threshold_sweep.py [--bench build/bench/bench_s4539_modem]
        [--channels awgn,poor,5ms5hz] [--modes 2400S,2400L,...] [--jobs 2] [--seed 1]
        [--snr-reference mean|unit]   (the bench's: SNR over the transmission's mean
        power, the default, or over unit-amplitude symbols; they differ for QAM only)
    (App C: --channels awgn,poor --modes 3200S,3200L,...,9600L)

Prints one line per point as it finishes, then a table: the lowest SNR reached and
the BER measured 1 dB below it. Needs only the standard library.
"""
import argparse
import re
import concurrent.futures
import subprocess
import sys

TARGET = 1e-5
TARGET_BITS = 330000  # no errors in this many bits bounds the BER at 9.1e-6
MAX_ERRORS = 30

CHANNELS = {
    "awgn": ["--profile", "awgn"],
    "poor": ["--profile", "poor"],  # F.1487 poor: 2 paths, 2 ms, 1 Hz
    "5ms5hz": ["--two-path", "5,5"],
}

# Where each sweep starts (dB in 3 kHz), near the expected threshold.
START = {
    "awgn": {"2400S": 10, "2400L": 9, "1200S": 5, "1200L": 4, "600S": 2, "600L": 2, "300S": 0, "300L": -1,
             "150S": -2, "150L": -3, "75S": -2, "75L": -3,
             "3200S": 8, "3200L": 7, "4800S": 12, "4800L": 11, "6400S": 15, "6400L": 14, "8000S": 18,
             "8000L": 17, "9600S": 20, "9600L": 19},
    "poor": {"2400S": 19, "2400L": 14, "1200S": 14, "1200L": 9, "600S": 11, "600L": 6,
             "300S": 8, "300L": 3, "150S": 6, "150L": 2, "75S": 5, "75L": 2,
             "3200S": 17, "3200L": 12, "4800S": 22, "4800L": 17, "6400S": 28, "6400L": 22, "8000S": 32,
             "8000L": 27, "9600S": 36, "9600L": 33},
    "5ms5hz": {"300S": 6, "300L": 5, "150S": 4, "150L": 3, "75S": 5, "75L": 1},
}

DEFAULT_MODES = {
    "awgn": ["2400S", "2400L", "1200S", "1200L", "600S", "600L", "300S", "300L", "150S", "150L", "75S", "75L"],
    "poor": ["2400S", "2400L", "1200S", "1200L", "600S", "600L", "300S", "300L", "150S", "150L", "75S", "75L"],
    "5ms5hz": ["300S", "300L", "150S", "150L", "75S", "75L"],
}


def start_snr(channel, mode):
    return START[channel].get(mode, 10)


def run_point(bench, channel, mode, snr, seconds, seed, reference):
    cmd = [bench, *CHANNELS[channel], "--modes", mode, "--snr", str(snr), "--seconds", str(int(seconds)),
           "--seed", str(seed), "--max-errors", str(MAX_ERRORS), "--snr-reference", reference]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    fields = out.strip().splitlines()[-1].split()
    point = {"snr": snr, "bits": int(fields[2]), "errors": int(fields[3]), "ber": float(fields[4]),
             "bound": float(fields[5]), "lost": int(fields[6]), "command": " ".join(cmd)}
    print(f"{channel:7s} {mode:6s} {snr:5.1f} dB  {point['errors']:6d} errors in {point['bits']:8d} bits  "
          f"BER {point['ber']:.2e} (95 % bound {point['bound']:.2e})", flush=True)
    return point


def sweep(bench, channel, mode, seed, reference):
    bps = int(re.match(r"\d+", mode).group())
    rate = 0.4 * bps  # user bits per second of signal, until a point measures it
    snr = start_snr(channel, mode)
    points = []
    reached = None
    for _ in range(16):
        p = run_point(bench, channel, mode, snr, 1.1 * TARGET_BITS / rate, seed, reference)
        if p["errors"] < MAX_ERRORS:
            rate = p["bits"] / (1.1 * TARGET_BITS / rate)
        points.append(p)
        if p["bound"] <= TARGET:
            reached = p
            snr -= 1
        elif reached is not None:
            break
        else:
            snr += 1
    below = next((p for p in points if reached and p["snr"] == reached["snr"] - 1), None)
    return channel, mode, reached, below


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bench", default="build/bench/bench_s4539_modem")
    ap.add_argument("--channels", default="awgn,poor,5ms5hz")
    ap.add_argument("--modes", default="", help="comma-separated; default: every mode the channel is quoted for")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--snr-reference", default="mean", choices=["mean", "unit"])
    args = ap.parse_args()
    jobs = []
    for channel in args.channels.split(","):
        if channel not in CHANNELS:
            sys.exit(f"s4539_threshold_sweep: unknown channel {channel} (awgn, poor, 5ms5hz)")
        modes = args.modes.split(",") if args.modes else DEFAULT_MODES[channel]
        jobs += [(channel, m) for m in modes]
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        results = list(pool.map(lambda j: sweep(args.bench, j[0], j[1], args.seed, args.snr_reference), jobs))
    print("\nchannel mode   reaches 1e-5 at        1 dB below")
    for channel, mode, reached, below in results:
        if reached is None:
            print(f"{channel:7s} {mode:6s} not reached")
            continue
        at = f"{reached['snr']:.0f} dB (0 in {reached['bits']})" if reached["errors"] == 0 else \
            f"{reached['snr']:.0f} dB ({reached['ber']:.1e})"
        under = f"{below['ber']:.1e} ({below['errors']} in {below['bits']})" if below else "-"
        print(f"{channel:7s} {mode:6s} {at:22s} {under}")


if __name__ == "__main__":
    main()
