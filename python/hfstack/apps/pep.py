#
# Copyright 2026 gr-hfstack authors.
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""hfstack-pep: the HF-PEP (and its DNS proxy) as a standalone SIS client of any STANAG
5066 server over TCP: ours (hfstack-node) or another vendor's. The same options as
`hfstack-node --pep`; statistics as JSON lines on stdout (or --stats), logs on stderr.

Exit status: 0 after SIGINT/SIGTERM, 2 for a bad option (one line saying which), 1
when a listening port, the nftables rules or the server address cannot be had.
"""

import json
import logging
import sys
import time

from ..cli import add_version, one_line_parser, setup_logging, usage_error
from ..hfstack_python import net
from ..pep import install_rules, parse_endpoint, pep_proxy, proxy_error, remove_rules
from ..sis.tcp_link import serve_over_tcp

PROG = "hfstack-pep"
log = logging.getLogger(PROG)
LISTENERS = ("socks", "http_connect", "redirect", "transparent")


def parse_args(argv):
    p = one_line_parser(
        prog=PROG, description="HF-PEP: TCP (and DNS) over HF through a split proxy, attached "
                               "to any STANAG 5066 server's SIS (TCP port 5066).",
        epilog="Example, near side: hfstack-pep --server 127.0.0.1:5066 --options "
               "'peers=10.78.0.0/24=0.0.0.2' --socks 127.0.0.1:1080; far side: --options "
               "'allow_peers=0.0.0.1;allow_destinations=10.78.0.0/24:80,443' (a far proxy "
               "takes streams only from allow_peers, default the nodes of peers; docs/pep.md, "
               "Security)")
    p.add_argument("--server", default="127.0.0.1:5066", help="SIS server HOST:PORT (default 127.0.0.1:5066)")
    p.add_argument("--options", default="", help='PEP options "name=value;..." (see --list-options)')
    p.add_argument("--list-options", action="store_true", help="print every PEP option and exit")
    for name, what in (("socks", "SOCKS5 listener HOST:PORT"),
                       ("http-connect", "HTTP CONNECT listener HOST:PORT"),
                       ("redirect", "listener for nftables REDIRECT, HOST:PORT"),
                       ("transparent", "listener for nftables TPROXY, HOST:PORT (CAP_NET_ADMIN)")):
        p.add_argument(f"--{name}", default="", metavar="HOST:PORT", help=what)
    p.add_argument("--intercept", action="append", default=[], metavar="PREFIX",
                   help="install nftables rules sending TCP to PREFIX into the proxy, and "
                        "with --transparent TPROXY's policy route (removed on exit; needs root)")
    p.add_argument("--dns", default="", metavar="HOST:PORT", help="DNS proxy listener, UDP and TCP")
    p.add_argument("--dns-peer", default="", metavar="NODE", help="the node whose proxy resolves names")
    p.add_argument("--dns-static", default="", metavar="NAME=ADDRESS ...", help="names answered here")
    p.add_argument("--client-id", type=int, default=0x7FFF000D, help="SIS client id (in-process use)")
    p.add_argument("--stats-interval", type=float, default=10.0,
                   help="seconds between JSON statistics lines (0: only at the end)")
    p.add_argument("--stats", dest="stats_file", help="write them to this file (default stdout)")
    p.add_argument("--connect-timeout", type=float, default=0.0, metavar="SECONDS",
                   help="give up (exit 1) when the SIS server has not answered in this many "
                        "seconds (default 0: wait for it, trying every 5 s)")
    p.add_argument("--check", action="store_true",
                   help="check the options, print the settings as JSON and exit (no port is "
                        "opened, no rule installed, no server contacted)")
    p.add_argument("--log-level", default="info", choices=("debug", "info", "warn", "error"))
    add_version(p)
    a = p.parse_args(argv)
    if not a.connect_timeout >= 0:
        raise usage_error("--connect-timeout must be >= 0")
    a.host, a.port = parse_endpoint(a.server, "--server")
    if a.stats_interval < 0:
        raise usage_error("--stats-interval must be >= 0")
    if a.intercept and not (a.redirect or a.transparent):
        raise usage_error("--intercept needs --redirect or --transparent to send to")
    return a


def main(argv=None):
    try:
        a = parse_args(sys.argv[1:] if argv is None else argv)
        if a.list_options:
            for name, default, help_text in net.pep_options():
                print(f"{name} (default {default!r}): {help_text}")
            return 0
        net.check_pep_options(a.options)
        proxy = pep_proxy(a.options, client_id=a.client_id, stats_interval=0, dns=a.dns,
                          dns_peer=a.dns_peer, dns_static=a.dns_static,
                          **{n: getattr(a, n) for n in LISTENERS})
    except (usage_error, proxy_error, ValueError) as e:
        print(f"{PROG}: {e}", file=sys.stderr)
        return 2
    if a.check:
        print(json.dumps({"server": f"{a.host}:{a.port}", "options": a.options,
                          **{n: getattr(a, n) for n in LISTENERS}, "intercept": a.intercept,
                          "dns": a.dns, "dns_peer": a.dns_peer, "dns_static": a.dns_static,
                          "connect_timeout": a.connect_timeout}, indent=2))
        return 0
    setup_logging(PROG, a.log_level)
    try:
        bound = proxy.open_listeners()
        if a.intercept:
            install_rules(a.intercept, bound.get("redirect", (0, None))[1],
                          bound.get("transparent", (0, None))[1])
    except proxy_error as e:
        print(f"{PROG}: {e}", file=sys.stderr)
        return 1

    def statistics(link):
        return {"time": round(time.time(), 3), "server": f"{a.host}:{a.port}",
                "sis_link": dict(link.counters), "pep": proxy.statistics(),
                "pep_connections": proxy.connection_statistics()}

    try:
        return serve_over_tcp(
            PROG, proxy, a.host, a.port, a.client_id, a.stats_file, a.stats_interval, statistics,
            lambda: log.info("HF-PEP on SIS server %s:%d, listening %s", a.host, a.port,
                             ", ".join(f"{m} {h}:{p}" for m, (h, p) in bound.items())
                             or "nowhere (far side only)"),
            connect_timeout=a.connect_timeout)
    finally:
        if a.intercept:
            remove_rules()


if __name__ == "__main__":
    sys.exit(main())
