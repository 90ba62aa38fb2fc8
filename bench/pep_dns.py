#!/usr/bin/python3
#
# Copyright 2026 gr-hfstack authors.
#
# SPDX-License-Identifier: GPL-3.0-or-later

"""DNS over HF through the HF-PEP's DNS proxy, in real time, beside docs/published-measurements.md section C's
DNS rows (a lookup over the IP client: 9600 bps 11 s, 1200 bps 14 s, 300 bps 21 s).

Two namespaces and two hfstack-node --pep processes (python/hfstack/testbed/pep.py),
short interleaver, clear channel; a small DNS server in the far namespace (every A
question: 10.99.0.1). In the near namespace `dig` asks the near DNS proxy over UDP and
over TCP (`dig +tcp`): a name nobody asked before crosses HF (the first one on a fresh
link, so it pays for the CAS-1 link set-up; the next on the link as it then is), then
the same name comes from the cache. The time is dig's own "Query time". Prints one
line per lookup and a JSON list at the end; needs root. Usage:
    PYTHONPATH=build/test_modules /usr/bin/python3 bench/pep_dns.py [--rates 9600,1200,300]
"""

import argparse
import json
import re
import sys

from gnuradio.hfstack.testbed.ip import DNS_SERVER
from gnuradio.hfstack.testbed.pep import FAR, pep_testbed, unavailable

SECTION_C_S = {9600: 11.0, 1200: 14.0, 300: 21.0}  # published, section C: DNS lookup
TIMEOUT_S = 600


def lookup(bed, name, tcp):
    """(answer, seconds) of one dig in the near namespace."""
    port = bed.dns.split(":")[1]
    done = bed.run("a", "dig", *(["+tcp"] if tcp else []), "@127.0.0.1", "-p", port, name, "A",
                   "+tries=1", f"+time={TIMEOUT_S}", timeout=TIMEOUT_S + 60, check=False)
    answer = re.search(r"IN\s+A\s+(\S+)", done.stdout)
    took = re.search(r"Query time: (\d+) msec", done.stdout)
    if done.returncode != 0 or not answer or not took:
        raise RuntimeError(f"dig {name}: {done.stdout[-500:]}{done.stderr[-500:]}")
    return answer.group(1), int(took.group(1)) / 1000


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--rates", default="9600,1200,300")
    a = p.parse_args()
    why = unavailable()
    if why:
        sys.exit(f"pep_dns: {why}")
    results = []
    for rate in [int(x) for x in a.rates.split(",") if x]:
        with pep_testbed(rate=rate, time_scale=1.0) as bed:
            bed.serve("b", DNS_SERVER, FAR)
            steps = (("udp", False, "one.far.example", "across HF, fresh link"),
                     ("udp", False, "two.far.example", "across HF"),
                     ("udp", False, "two.far.example", "cache"),
                     ("tcp", True, "three.far.example", "across HF"),
                     ("tcp", True, "three.far.example", "cache"))
            for transport, tcp, name, what in steps:
                try:
                    answer, took = lookup(bed, name, tcp)
                except (RuntimeError, OSError) as e:
                    print(f"pep_dns {rate} bps {transport} {name}: failed: {e}", flush=True)
                    continue
                results.append({"rate": rate, "transport": transport, "name": name,
                                "what": what, "seconds": took, "answer": answer})
                print(f"pep_dns {rate} bps {transport} {name} ({what}): {took:.2f} s"
                      + (f"; section C over the IP client {SECTION_C_S[rate]:g} s"
                         if rate in SECTION_C_S and what != "cache" else ""), flush=True)
    print(json.dumps(results))


if __name__ == "__main__":
    main()
