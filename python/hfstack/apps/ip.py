#
# Copyright 2026 gr-hfstack authors.
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""hfstack-ip: the STANAG 5066 IP client (Annex F.12) as a standalone SIS client.

It attaches a TUN device to any STANAG 5066 server over TCP (ours: hfstack-node; or
another vendor's), so IP datagrams routed into the device travel as U_PDUs on SAP 9
and datagrams from the air come out of it. Statistics are JSON lines (stdout or
--stats), logs go to stderr; the two never mix.

Exit status: 0 after SIGINT/SIGTERM, 2 for a bad option (one line saying which), 1
when the TUN device cannot be had or configured.
"""

import argparse
import json
import logging
import sys
import time

from ..cli import add_version, setup_logging
from ..hfstack_python import ip_client_option_help
from ..sis.tcp_link import serve_over_tcp
from ..tun import ip_client_tun, tun_error

log = logging.getLogger("hfstack-ip")


class usage_error(Exception):
    pass


def parse_args(argv):
    p = argparse.ArgumentParser(
        prog="hfstack-ip",
        description="STANAG 5066 Annex F.12 IP client: a TUN device over any STANAG 5066 "
                    "server's SIS (TCP port 5066).",
        epilog="Example: hfstack-ip --server 127.0.0.1:5066 --tun hf0 --configure "
               "--address 10.77.0.1/24 --ip-route 10.77.0.2=0.0.0.2")
    p.add_argument("--server", default="127.0.0.1:5066",
                   help="SIS server HOST:PORT (default 127.0.0.1:5066)")
    p.add_argument("--tun", default="hf0", help="TUN device (default hf0; made if allowed)")
    p.add_argument("--ip-route", action="append", default=[], metavar="PREFIX=NODE[,arq|non_arq][,repeats=N]",
                   help="address table entry: IP destinations to a STANAG 5066 node or group "
                        "address (repeatable; PREFIX 'default' for everything else)")
    p.add_argument("--options", default="",
                   help='more IP client options "name=value;..." (see --list-options)')
    p.add_argument("--list-options", action="store_true",
                   help="print every IP client option with its default and exit")
    p.add_argument("--configure", action="store_true",
                   help="set the device's address, MTU and routes and bring it up (iproute2; "
                        "needs CAP_NET_ADMIN)")
    p.add_argument("--address", default="", help="with --configure: address/prefix of the device")
    p.add_argument("--route", action="append", default=[], metavar="PREFIX",
                   help="with --configure: a prefix Linux routes through the device (repeatable)")
    p.add_argument("--client-id", type=int, default=0x7FFF0009, help=argparse.SUPPRESS)
    p.add_argument("--stats-interval", type=float, default=10.0,
                   help="seconds between JSON statistics lines (0: only at the end)")
    p.add_argument("--stats", dest="stats_file", help="write them to this file (default stdout)")
    p.add_argument("--check", action="store_true",
                   help="check the options, print the settings as JSON and exit (no device "
                        "is opened, no server contacted)")
    p.add_argument("--connect-timeout", type=float, default=0.0, metavar="SECONDS",
                   help="give up (exit 1) when the SIS server has not answered in this many "
                        "seconds (default 0: wait for it, trying every 5 s)")
    p.add_argument("--log-level", default="info", choices=("debug", "info", "warn", "error"))
    add_version(p)
    a = p.parse_args(argv)
    if not a.connect_timeout >= 0:
        raise usage_error("--connect-timeout must be >= 0")
    host, sep, port = a.server.rpartition(":")
    if not sep or not port.isdigit() or not 0 < int(port) < 65536:
        raise usage_error(f"--server must be HOST:PORT, not {a.server!r}")
    a.host, a.port = host.strip("[]") or "127.0.0.1", int(port)
    if a.stats_interval < 0:
        raise usage_error("--stats-interval must be >= 0")
    if (a.address or a.route) and not a.configure:
        raise usage_error("--address and --route need --configure")
    return a


def client_options(a):
    """The IP client's option string from the command line."""
    parts = []
    if a.ip_route:
        parts.append("routes=" + " ".join(a.ip_route))
    if a.options:
        parts.append(a.options)
    return ";".join(parts)


def main(argv=None):
    try:
        a = parse_args(sys.argv[1:] if argv is None else argv)
    except usage_error as e:
        print(f"hfstack-ip: {e}", file=sys.stderr)
        return 2
    setup_logging("hfstack-ip", a.log_level)  # the format of every app's log lines
    if a.list_options:
        print(ip_client_option_help(), end="")
        return 0
    options = client_options(a)
    try:
        from ..hfstack_python import ip_client  # validates every option, opens nothing
        probe = ip_client(options, a.client_id, 0)
    except ValueError as e:
        print(f"hfstack-ip: {e}", file=sys.stderr)
        return 2
    if not probe.option("routes"):
        print("hfstack-ip: no address table: give at least one --ip-route PREFIX=NODE",
              file=sys.stderr)
        return 2
    if a.check:
        names = [line.split(" (")[0] for line in ip_client_option_help().splitlines()]
        print(json.dumps({"server": f"{a.host}:{a.port}", "tun": a.tun,
                          "options": {n: probe.option(n) for n in names}}, indent=2))
        return 0
    del probe

    try:
        client = ip_client_tun(a.tun, options, a.client_id, a.stats_interval, a.configure,
                               a.address, a.route)
    except tun_error as e:
        print(f"hfstack-ip: {e}", file=sys.stderr)
        return 1

    def statistics(link):
        counters = dict(client.client.counters())
        return {"time": time.time(), "tun": client.name, "server": f"{a.host}:{a.port}",
                "tun_device": dict(client.tun.counters), "sis_link": dict(link.counters),
                "ip_client": counters}

    try:
        return serve_over_tcp("hfstack-ip", client, a.host, a.port, a.client_id, a.stats_file,
                              a.stats_interval, statistics,
                              lambda: log.info("IP client on %s, SIS server %s:%d", client.name,
                                               a.host, a.port),
                              connect_timeout=a.connect_timeout)
    finally:
        client.close()
