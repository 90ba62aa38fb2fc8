#!/usr/bin/env python3
#
# Copyright 2026 gr-hfstack authors.
#
# SPDX-License-Identifier: GPL-3.0-or-later

"""One ARQ transfer three ways: in virtual time, on emulated modems and on the real modems.

The agreement check (docs/simulator-design.md, "Agreement with the real modems"):
the same scenario run

  virtual   hfstack-sim throughput --warm-up (the simulator's fading error model)
  emulator  hfstack-node --demo --kind emulator (the emulated modem, same error model,
            the real node block, at --emulator-time-scale)
  modem     hfstack-node --demo --kind loopback (the real STANAG 4539 modems through
            the Watterson channel, in real time)

for every mode x channel x seed, and prints each run's utilization (delivered bits over
the nominal rate and the time from the first U_PDU sent to the last delivered, the link
made beforehand), then per scenario the mean of each way, the simulator's distance to
the real modems' mean and the spread. The figures go in docs/simulator-design.md.

    bench/link_agreement.py [--modes 2400S,1200L] [--channels moderate:20,poor:15]
        [--seeds 1,2,3] [--bytes 100000] [--ways virtual,emulator,modem]
        [--emulator-time-scale 10] [--json FILE] [--sis-port 0]

Real time: a 100 kB transfer takes about 6 min at 2400 bps and 12 min at 1200 bps per
modem run; run it in the background. Without --json the rows are printed only.
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
APPS = os.path.join(HERE, "..", "apps")
WAYS = ("virtual", "emulator", "modem")


def split_mode(mode):
    """'2400S' -> (2400, 'short'); the node's --rate and --interleaver."""
    m = re.fullmatch(r"(\d+)([SL])", mode)
    if not m:
        raise SystemExit(f"link_agreement: mode {mode!r}: only the 110A modes (e.g. 2400S, 1200L)")
    return int(m.group(1)), {"S": "short", "L": "long"}[m.group(2)]


def app(name):
    return [sys.executable, os.path.join(APPS, name)]


def run_virtual(mode, profile, snr, seed, size):
    cmd = app("hfstack-sim") + ["throughput", "--mode", mode, "--bytes", str(size),
                                "--updu-size", "2048", "--profile", profile,
                                "--snr", str(snr), "--seed", str(seed), "--warm-up",
                                "--json", "-", "--quiet"]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    doc = json.loads(out)
    row = doc["rows"][0]
    ok = doc["completed"] and row["bytes"] == size
    return {"utilization_pct": row["utilisation_pct"] if ok else None,
            "seconds": row["seconds"], "command": " ".join(cmd)}


def run_demo(kind, mode, profile, snr, seed, size, time_scale, timeout, sis_port):
    rate, interleaver = split_mode(mode)
    with tempfile.TemporaryDirectory() as tmp:
        summary = os.path.join(tmp, "summary.json")
        cmd = app("hfstack-node") + ["--demo", "--kind", kind, "--rate", str(rate),
                                     "--interleaver", interleaver, "--profile", profile,
                                     "--snr-db", str(snr), "--seed", str(seed),
                                     "--bytes", str(size), "--size", "2048", "--pings", "1",
                                     "--time-scale", str(time_scale), "--sis-port", str(sis_port),
                                     "--timeout", str(timeout), "--json", summary]
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode != 0 or not os.path.exists(summary):
            tail = (r.stderr or r.stdout).strip().splitlines()[-3:]
            return {"utilization_pct": None, "error": " / ".join(tail), "command": " ".join(cmd)}
        with open(summary) as f:
            s = json.load(f)
    ok = s["identical"] and s["delivered_bytes"] == size
    return {"utilization_pct": s["utilization_pct"] if ok else None,
            "seconds": s["elapsed_s"], "command": " ".join(cmd)}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--modes", default="2400S,1200L")
    ap.add_argument("--channels", default="moderate:20,poor:15",
                    help="profile:SNR dB pairs, comma-separated")
    ap.add_argument("--seeds", default="1,2,3")
    ap.add_argument("--bytes", type=int, default=100000)
    ap.add_argument("--ways", default=",".join(WAYS))
    ap.add_argument("--emulator-time-scale", type=float, default=10.0)
    ap.add_argument("--json", metavar="FILE", help="write every run and the summary as JSON")
    ap.add_argument("--sis-port", type=int, default=0,
                    help="the demo nodes' SIS port (default 0: a free one, so runs can go on "
                         "beside another demo holding 5066)")
    a = ap.parse_args()
    ways = a.ways.split(",")
    for w in ways:
        if w not in WAYS:
            ap.error(f"--ways: {w!r} is not one of {', '.join(WAYS)}")
    channels = []
    for c in a.channels.split(","):
        try:
            profile, snr = c.split(":")
            channels.append((profile, float(snr)))
        except ValueError:
            ap.error(f"--channels: {c!r} is not PROFILE:SNR")
    seeds = [int(s) for s in a.seeds.split(",")]
    modes = a.modes.split(",")
    for mode in modes:
        split_mode(mode)

    runs = []
    for mode in modes:
        rate, _ = split_mode(mode)
        # The demo gives up after this many real seconds: four times the air time.
        timeout = 4 * 8 * a.bytes / rate + 300
        for profile, snr in channels:
            for seed in seeds:
                for way in ways:
                    if way == "virtual":
                        r = run_virtual(mode, profile, snr, seed, a.bytes)
                    else:
                        kind, scale = (("emulator", a.emulator_time_scale) if way == "emulator"
                                       else ("loopback", 1.0))
                        r = run_demo(kind, mode, profile, snr, seed, a.bytes, scale,
                                     timeout / scale, a.sis_port)
                    r.update(mode=mode, profile=profile, snr_db=snr, seed=seed, way=way)
                    runs.append(r)
                    u = r["utilization_pct"]
                    shown = f"{u:5.1f} %" if u is not None else "failed: " + r.get("error", "incomplete")
                    print(f"{mode:6s} {profile:9s} {snr:4.0f} dB seed {seed}  {way:8s} {shown}",
                          flush=True)

    print("\nmode   channel        " + "".join(f"{w:>16s}" for w in ways) + "   virtual - modem")
    summary = []
    for mode in modes:
        for profile, snr in channels:
            row = {"mode": mode, "profile": profile, "snr_db": snr}
            cells = []
            for w in ways:
                us = [r["utilization_pct"] for r in runs if r["mode"] == mode and
                      r["profile"] == profile and r["snr_db"] == snr and r["way"] == w]
                good = [u for u in us if u is not None]
                row[w] = {"mean": statistics.mean(good) if good else None,
                          "min": min(good) if good else None, "max": max(good) if good else None,
                          "failed": len(us) - len(good)}
                cells.append(f"{row[w]['mean']:5.1f} ({row[w]['min']:.0f}-{row[w]['max']:.0f})"
                             if good else "-")
            diff = ""
            if "virtual" in ways and "modem" in ways and row["virtual"]["mean"] is not None \
                    and row["modem"]["mean"] is not None:
                row["virtual_minus_modem"] = row["virtual"]["mean"] - row["modem"]["mean"]
                diff = f"{row['virtual_minus_modem']:+6.1f} points"
            summary.append(row)
            print(f"{mode:6s} {profile:9s} {snr:3.0f} dB" + "".join(f"{c:>16s}" for c in cells)
                  + "   " + diff)
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"runs": runs, "summary": summary, "bytes": a.bytes}, f, indent=1)


if __name__ == "__main__":
    main()
