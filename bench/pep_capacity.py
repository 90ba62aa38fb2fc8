#!/usr/bin/python3
#
# Copyright 2026 gr-hfstack authors.
#
# SPDX-License-Identifier: GPL-3.0-or-later

"""The HF-PEP's capacity: 1,000 idle connections held open through the near
proxy, then 100 active ones each sending N bytes and waiting for the server's
confirmation, all at once; errors counted, and the CPU time the near node's process
(the PEP driver and kernel, the node, the emulated modem) used against the wall clock.

Two namespaces, two hfstack-node --pep processes (python/hfstack/pep_testbed.py) on
emulated modems at a time scale (default 20: the link is not what is measured here).
Needs root. Usage:
    PYTHONPATH=build/test_modules /usr/bin/python3 bench/pep_capacity.py [--idle 1000] [--active 100]
"""

import argparse
import json
import os
import sys
import time

from gnuradio.hfstack.pep_testbed import (CAPACITY_CLIENT, CONFIRMING_SERVER, FAR, pep_testbed,
                                          unavailable)



def cpu_seconds(pid):
    """utime + stime of a process and its threads, seconds."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--idle", type=int, default=1000)
    p.add_argument("--active", type=int, default=100)
    p.add_argument("--bytes", type=int, default=10000, help="bytes each active connection sends")
    p.add_argument("--time-scale", type=float, default=20.0)
    p.add_argument("--timeout", type=float, default=1800.0, help="real seconds for the active ones")
    p.add_argument("--max-connections", type=int, help="both proxies' max_connections (default: theirs)")
    a = p.parse_args()
    why = unavailable()
    if why:
        sys.exit(f"pep_capacity: {why}")
    limit = f"max_connections={a.max_connections}" if a.max_connections else ""
    with pep_testbed(rate=9600, time_scale=a.time_scale, pep_options=limit, far_options=limit) as bed:
        bed.serve("b", CONFIRMING_SERVER, FAR, "7200")
        node_pid = bed.node["a"].pid  # ip netns exec execs the node in place
        cpu0, wall0 = cpu_seconds(node_pid), time.monotonic()
        done = bed.run("a", sys.executable, "-c", CAPACITY_CLIENT, FAR, str(a.idle), str(a.active),
                       str(a.bytes), str(a.timeout), timeout=a.timeout + 600)
        r = json.loads(done.stdout.strip().splitlines()[-1])
        r["near_node_cpu_s"] = round(cpu_seconds(node_pid) - cpu0, 1)
        r["wall_s"] = round(time.monotonic() - wall0, 1)
        stats = bed.stop_node("a")["pep"]
        r["pep_connections_at_end"] = stats["connections"]
        r["pep_failed"] = stats["failed"]
    print(f"idle: {r['idle_opened']} opened in {r['idle_open_s']:.1f} s, {r['idle_still_open']} still "
          f"open at the end; active: {r['active_confirmed']} of {a.active} confirmed in "
          f"{r['active_s']:.1f} s; errors {r['error_count']}; near node CPU {r['near_node_cpu_s']} s "
          f"in {r['wall_s']} s wall clock", flush=True)
    print(json.dumps(r))


if __name__ == "__main__":
    main()
