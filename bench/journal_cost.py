#!/usr/bin/env python3
#
# Copyright 2026 gr-hfstack authors.
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""What the node's journal (--state-dir) costs: (1) the latency of one journal write
as the node makes it (a record appended, then fdatasync) on the file system of DIR;
(2) the two-node demo (hfstack-node --demo, emulated modems) with and without the
journal: the same transfer's protocol time and throughput, and the journal's size.

  PYTHONPATH=build/test_modules /usr/bin/python3 bench/journal_cost.py --dir /var/lib/hfstack
"""

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

NODE = [sys.executable, "-m", "gnuradio.hfstack.apps.node"]


def sync_latency(directory, records, size):
    """Seconds per append + fdatasync of `size` bytes, `records` times: median, 99th."""
    os.makedirs(directory, exist_ok=True)
    path = os.path.join(directory, "journal-cost-probe")
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_TRUNC, 0o600)
    times = []
    try:
        for _ in range(records):
            t0 = time.perf_counter()
            os.write(fd, b"x" * size)
            os.fdatasync(fd)
            times.append(time.perf_counter() - t0)
    finally:
        os.close(fd)
        os.unlink(path)
    times.sort()
    return statistics.median(times), times[int(0.99 * (len(times) - 1))]


def demo(state_dir, nbytes, rate, scale):
    done = subprocess.run([*NODE, "--demo", "--kind", "emulator", "--profile", "", "--data-rate",
                           str(rate), "--time-scale", str(scale), "--bytes", str(nbytes),
                           "--size", "1000", "--pings", "0", "--stats-interval", "0",
                           "--state-dir", state_dir], capture_output=True, text=True,
                          timeout=3600)
    last = [line for line in done.stdout.splitlines() + done.stderr.splitlines()
            if re.search(rf"\b{nbytes} of {nbytes} bytes,", line)]
    if done.returncode != 0 or not last:
        raise SystemExit(f"demo failed: {done.stderr[-2000:]}")
    m = re.search(r"bytes,\s+([0-9.]+) s,\s+([0-9]+) bit/s", last[-1])
    return float(m.group(1)), int(m.group(2))


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--dir", default=tempfile.gettempdir(), help="file system to probe")
    p.add_argument("--records", type=int, default=1000)
    p.add_argument("--bytes", type=int, default=1_000_000, help="the demo's transfer")
    p.add_argument("--rate", type=int, default=9600)
    p.add_argument("--time-scale", type=float, default=20)
    a = p.parse_args()
    median, p99 = sync_latency(a.dir, a.records, 1060)
    print(f"append 1060 B + fdatasync in {a.dir}: median {median * 1e3:.2f} ms, "
          f"99th percentile {p99 * 1e3:.2f} ms ({a.records} writes)")
    with tempfile.TemporaryDirectory() as state:
        for label, where in (("no journal", "none"), ("journal", state)):
            t, bps = demo(where, a.bytes, a.rate, a.time_scale)
            size = ""
            if where != "none":
                size = f", journal of node B {os.path.getsize(os.path.join(state, '0.0.0.2', 'arq-journal'))} bytes"
            print(f"demo {a.bytes} bytes at {a.rate} bps: {label}: {t:.1f} s, {bps} bit/s{size}")


if __name__ == "__main__":
    main()
