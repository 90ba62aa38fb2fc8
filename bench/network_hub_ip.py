#!/usr/bin/python3
#
# Copyright 2026 gr-hfstack authors.
#
# SPDX-License-Identifier: GPL-3.0-or-later
"""IP routed through a hub over HF, measured: the hub test bed (testbed.hub: a hub and
three spokes, hfstack-node processes with IP clients on TUN devices in namespaces of
their own, emulated modems on one clear channel, the hub forwarding) at each rate, and
from spoke 1: ping round trips to the hub's subnet (one HF hop) and to spoke 2's
subnet through the hub (two HF hops), then a curl download of --bytes from a web
server on each. Prints a line per measurement and a JSON line at the end. Needs root.

    PYTHONPATH=build/test_modules nice -n 10 timeout 600 /usr/bin/python3 \\
        bench/network_hub_ip.py [--rates 2400,9600] [--pings 5] [--bytes 10000] \\
        [--time-scale 1] [--node-options "exchange_bound_per_turn=false;..."] \\
        [--paths spoke-hub,spoke-spoke] [--deadline 240] [--curl-deadline 240] [--tag b] \\
        [--pep] [--capture-dir DIR]
--pep: the download goes through spoke 1's HF-PEP (SOCKS5) to the hub's far proxy,
which opens it to the hub's subnet or, over the IP client, to spoke 2's.
"""

import argparse
import json
import os
import re
import sys
import time

from gnuradio.hfstack.apps.testbed import HUB_NODE_OPTIONS, HTTP_PORT
from gnuradio.hfstack.testbed import hub, web


def ping(bed, target, count, deadline_s):
    """(round trips in s, duplicate replies) of `count` pings from spoke 1, one a
    second."""
    done = bed.run("s1", "ping", "-n", "-c", str(count), "-i", "1", "-w", str(deadline_s),
                   target, check=False, timeout=deadline_s + 30)
    lines = [line for line in done.stdout.splitlines() if "time=" in line]
    rtts = [float(re.search(r"time=([\d.]+) ms", line).group(1)) / 1000
            for line in lines if "DUP!" not in line]
    return rtts, len(lines) - len(rtts)


def curl(bed, url, deadline_s, socks=None):
    """(seconds, bytes, time to first byte) of one download from spoke 1, or None."""
    proxy = ["--socks5", socks] if socks else []
    done = bed.run("s1", "curl", *proxy, "-sS", "-o", "/dev/null", "-m", str(deadline_s), "-w",
                   "%{time_total} %{size_download} %{time_starttransfer}", url,
                   check=False, timeout=deadline_s + 30)
    if done.returncode != 0:
        return None
    total, size, first = done.stdout.split()
    return float(total), int(size), float(first)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--rates", default="2400,9600")
    p.add_argument("--pings", type=int, default=5)
    p.add_argument("--bytes", type=int, default=10000, help="size of the downloaded file")
    p.add_argument("--time-scale", type=float, default=1.0)
    p.add_argument("--node-options", default=HUB_NODE_OPTIONS,
                   help="every node's options beside its defaults (default: none)")
    p.add_argument("--deadline", type=int, default=240, help="of the pings, real s")
    p.add_argument("--curl-deadline", type=int, default=240, help="of the download, real s")
    p.add_argument("--paths", default="spoke-hub,spoke-spoke")
    p.add_argument("--tag", default="b", help="of the namespaces, to run two at once")
    p.add_argument("--pep", action="store_true",
                   help="curl through spoke 1's HF-PEP (SOCKS5) to the hub's far proxy")
    p.add_argument("--capture-dir",
                   help="each station's D_PDUs (SIDE.pcap), statistics and events "
                        "(SIDE.jsonl) and log, in DIR/RATE/")
    a = p.parse_args()
    why = hub.unavailable()
    if why:
        print(f"network_hub_ip: {why}", file=sys.stderr)
        return 1
    rows = []
    for rate in a.rates.split(","):
        options = ";".join(o for o in ("supervision.keep_alive_interval_s=36000",
                                       a.node_options) if o)
        capture = os.path.join(a.capture_dir, rate) if a.capture_dir else None
        if capture:
            os.makedirs(capture, exist_ok=True)
        with hub.hub_testbed(rate=int(rate), time_scale=a.time_scale, node_options=options,
                             tag=a.tag, pep=a.pep, capture_dir=capture) as bed:
            site = os.path.join(bed.tmp, "site")
            os.makedirs(site)
            with open(os.path.join(site, "file.bin"), "wb") as f:
                f.write(bytes(i * 7 % 251 for i in range(a.bytes)))
            web.write_site(site)
            for side, k in (("hub", 0), ("s2", 2)):
                bed.serve(side, web.SITE_SERVER, bed.lan_address(k), str(HTTP_PORT), site)
            for name, k in (("spoke-hub", 0), ("spoke-spoke", 2)):
                if name not in a.paths.split(","):
                    continue
                t0 = time.monotonic()
                rtts, duplicates = ping(bed, bed.lan_address(k), a.pings, a.deadline)
                got = curl(bed, f"http://{bed.lan_address(k)}:{HTTP_PORT}/file.bin",
                           a.curl_deadline, hub.SOCKS if a.pep else None)
                row = {"rate": int(rate), "path": name, "pings": a.pings, "answered": len(rtts),
                       "duplicates": duplicates,
                       "rtt_first_s": rtts[0] if rtts else None,
                       "rtt_median_s": sorted(rtts)[len(rtts) // 2] if rtts else None,
                       "rtt_min_s": min(rtts) if rtts else None,
                       "curl_bytes": a.bytes, "curl_s": got[0] if got else None,
                       "curl_first_byte_s": got[2] if got else None,
                       "curl_bps": round(8 * got[1] / got[0]) if got else None,
                       "real_s": round(time.monotonic() - t0, 1)}
                rows.append(row)
                print(json.dumps(row), flush=True)
            failed = bed.failed()
            if failed:
                print(failed, file=sys.stderr)
    print(json.dumps({"time_scale": a.time_scale, "node_options": a.node_options,
                      "pep": a.pep, "rows": rows}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
