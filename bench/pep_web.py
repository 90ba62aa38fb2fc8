#!/usr/bin/python3
#
# Copyright 2026 gr-hfstack authors.
#
# SPDX-License-Identifier: GPL-3.0-or-later

"""Web over HF: headless Chromium loads pages through the HF-PEP over emulated modems in
real time, as the seed's web table measured browsers, and reports first paint,
DOMContentLoaded and load complete beside the seed's example.com figure (18 s at 9600
bps with HF-PEP, Firefox; docs/published-measurements.md section D).

Two namespaces and two hfstack-node --pep processes (python/hfstack/testbed/pep.py),
short interleaver, clear channel; an HTTP/1.1 server in the far namespace serves the
test site of python/hfstack/testbed/web.py (index.html, style.css, app.js, four PNG images:
seven files, 18.8 kB) and example.html (one file the size of example.com's page).
Each load is a fresh Chromium with an empty profile (nothing cached), in the near
namespace, through SOCKS5 (`--mode socks`, the site by its address; `--mode
socks-hostname`, by a host name the far proxy resolves, testbed.pep.FAR_NAME) or with no
proxy setting at all, its connections taken by nftables REDIRECT (`--mode redirect`);
or (`--mode tproxy`) on a client host behind the near namespace, a gateway whose
nftables TPROXY takes them.
The first load of each rate runs on a fresh link (it pays for the CAS-1 link set-up),
the following ones on the link as it is then. Times are from the start of navigation
(Navigation and Paint Timing in the page, each file's Resource Timing in the JSON's
`timeline`), in protocol seconds (real seconds x --time-scale; the browser's own work
is scaled too, so only time scale 1 gives figures to quote). Prints one line per load
and a JSON list at the end; needs root. Usage:
    PYTHONPATH=build/test_modules /usr/bin/python3 bench/pep_web.py \\
        [--rates 9600] [--pages example.html,index.html] [--loads 2]
        [--mode socks|socks-hostname|redirect|tproxy] [--compress]
"""

import argparse
import json
import logging
import os
import sys

from gnuradio.hfstack.testbed import web as pep_web
from gnuradio.hfstack.testbed.pep import FAR, FAR_NAME, NODE_OPTIONS, pep_testbed, unavailable

SEED_EXAMPLE_S = {9600: 18.0}  # published, section D: example.com with HF-PEP (Firefox)


def seconds(ms, scale):
    return None if ms is None else round(ms / 1000 * scale, 1)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--rates", default="9600")
    p.add_argument("--pages", default="example.html,index.html",
                   help="pages of the test site, loaded in this order")
    p.add_argument("--loads", type=int, default=2, help="loads of each page, one after another")
    p.add_argument("--mode", choices=("socks", "socks-hostname", "redirect", "tproxy"),
                   default="socks")
    p.add_argument("--compress", action="store_true", help="DEFLATE on the streams")
    p.add_argument("--time-scale", type=float, default=1.0)
    p.add_argument("--timeout", type=float, default=1200.0, help="real seconds a load may take")
    p.add_argument("--node-options", default=NODE_OPTIONS,
                   help="both nodes' options (default: the PEP test bed's, %(default)r)")
    a = p.parse_args()
    logging.basicConfig(level=logging.WARNING, format="%(name)s: %(message)s")
    why = unavailable() or pep_web.unavailable()
    if why:
        sys.exit(f"pep_web: {why}")
    results = []
    for rate in [int(x) for x in a.rates.split(",") if x]:
        with pep_testbed(rate=rate, time_scale=a.time_scale, client_host=a.mode == "tproxy",
                         pep_options="compress=true" if a.compress else "",
                         node_options=a.node_options) as bed:
            site = os.path.join(bed.tmp, "site")
            files = pep_web.write_site(site)
            bed.serve("b", pep_web.SITE_SERVER, FAR, "8090", site)
            print(f"pep_web {rate} bps: test site {len(files)} files, {sum(files.values())} "
                  f"bytes; example.html {os.path.getsize(os.path.join(site, 'example.html'))} "
                  "bytes", flush=True)
            host = FAR_NAME if a.mode == "socks-hostname" else FAR
            n = 0
            for page in [x for x in a.pages.split(",") if x]:
                for i in range(a.loads):
                    n += 1
                    try:
                        r = pep_web.load_page(bed.command("c" if a.mode == "tproxy" else "a"),
                                              f"http://{host}:8090/{page}",
                                              proxy=f"socks5://{bed.socks}"
                                              if a.mode.startswith("socks") else None,
                                              timeout_s=a.timeout)
                    except pep_web.browser_error as e:
                        print(f"pep_web {rate} bps {page} load {i + 1}: failed: {e}", flush=True)
                        continue
                    row = {"rate": rate, "page": page, "load": i + 1, "fresh_link": n == 1,
                           "mode": a.mode, "compress": a.compress,
                           "first_paint_s": seconds(r["first_paint_ms"], a.time_scale),
                           "first_contentful_paint_s": seconds(r["first_contentful_paint_ms"],
                                                               a.time_scale),
                           "dom_content_loaded_s": seconds(r["dom_content_loaded_ms"],
                                                           a.time_scale),
                           "load_s": seconds(r["load_ms"], a.time_scale),
                           "wall_load_s": round(r["wall_load_s"] * a.time_scale, 1),
                           "images_decoded": r["images_decoded"], "images": r["images"],
                           "resources": r["resources"],
                           "complete": r["images_decoded"] == r["images"],
                           # name, start, connected, request, response start and end (s)
                           "timeline": [[e[0], *(seconds(t, a.time_scale) for t in e[1:])]
                                        for e in r["timeline"]]}
                    results.append(row)
                    seed = SEED_EXAMPLE_S.get(rate)
                    print(f"pep_web {rate} bps {page} load {i + 1}"
                          f"{' (fresh link)' if n == 1 else ''}: first paint "
                          f"{row['first_paint_s']} s, first contentful paint "
                          f"{row['first_contentful_paint_s']} s, DOMContentLoaded "
                          f"{row['dom_content_loaded_s']} s, load {row['load_s']} s "
                          f"({r['resources']} resources, images "
                          f"{r['images_decoded']}/{r['images']})"
                          + (f"; seed example.com {seed:g} s" if seed else ""), flush=True)
    print(json.dumps(results))


if __name__ == "__main__":
    main()
