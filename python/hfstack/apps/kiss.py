#
# Copyright 2026 gr-hfstack authors.
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""hfstack-kiss: KISS over TCP onto STANAG 5066. Programs that speak to a packet TNC
by KISS over TCP (Direwolf's kissutil, APRS and AX.25 software, Reticulum's TCP KISS
interface) connect here, as they would to Direwolf's port 8001; each KISS data frame
becomes one U_PDU on the SAP its TNC port maps to (non-ARQ to the broadcast group
unless a --route says otherwise), and each U_PDU received on that SAP goes to every
connected client as a KISS frame of that port. One SIS connection per SAP, remade
every --retry seconds while the server is away (docs/kiss.md).

Exit status: 0 after SIGINT/SIGTERM, 2 for a bad option, 1 when the KISS port cannot
be opened, each with one line on stderr. Statistics as JSON lines on stdout (or
--stats), logs on stderr.
"""

import json
import logging
import selectors
import sys
import time

from ..cli import (add_sis_client_options, every, one_line_parser, run_with_stats_out, setup_logging,
                   stop_event, stop_on_signals, usage_error)
from ..hfstack_python import dl, net
from ..pep.endpoint import parse_endpoint, proxy_error
from .host_sockets import connection, listen, select_once, sis_link

PROG = "hfstack-kiss"
log = logging.getLogger(PROG)
DEFAULT_SAP = 14
MAX_CLIENTS = 16                  # KISS connections at once; more are refused
MAX_CLIENT_BACKLOG = 1024 * 1024  # bytes held for a client that does not read; whole
#                                   frames beyond it are dropped for that client
ROUTE_FORM = "PORT=DESTINATION[,OPTION...]"
ROUTE_HELP = (ROUTE_FORM + ": KISS port 0-15 to a STANAG 5066 group (non-ARQ) or node "
              "(non-ARQ, or ARQ with the option arq), with the options sap=N (its own "
              "SAP: default 14 for the first route, then 15, 13), arq, repeats=N, "
              "priority=N, ttl=SECONDS")


def parse_address(text, what):
    try:
        return dl.parse_address(text.strip())
    except (ValueError, TypeError):
        raise usage_error(f"{what}: {text!r} is not a STANAG 5066 address (a.b.c.d)")


def parse_routes(specs):
    """The gateway's route dicts from --route specs (default: port 0 to broadcast)."""
    specs = specs or ["0=31.255.255.255"]
    free_saps = [DEFAULT_SAP, 15, 13]
    routes = []
    for spec in specs:
        port, sep, rest = spec.partition("=")
        if not sep or not port.strip().isdigit() or int(port) > 15:
            raise usage_error(f"--route must be {ROUTE_FORM}, not {spec!r}")
        fields = rest.split(",")
        route = {"port": int(port), "destination": parse_address(fields[0], "--route")}
        for f in fields[1:]:
            name, sep, value = f.partition("=")
            name = name.strip()
            try:
                if name == "arq" and not sep:
                    route["arq"] = True
                elif name in ("sap", "repeats", "priority") and sep:
                    route[name] = int(value)
                    if not 0 <= route[name] <= 15:
                        raise ValueError
                elif name == "ttl" and sep:
                    route["ttl_s"] = float(value)
                    if not 0 <= route["ttl_s"] < 2e6:
                        raise ValueError
                else:
                    raise usage_error(f"--route {spec!r}: unknown field {f!r}")
            except ValueError:
                raise usage_error(f"--route {spec!r}: bad value in {f!r}")
        routes.append(route)
    taken = {r["sap"] for r in routes if "sap" in r}
    for r in routes:
        if "sap" not in r:
            left = [s for s in free_saps if s not in taken]
            if not left:
                raise usage_error("--route: give each route its own sap=N")
            r["sap"] = left[0]
            taken.add(left[0])
    try:
        net.kiss_gateway(routes)  # the kernel's own checks (a port or SAP twice...)
    except ValueError as e:
        raise usage_error(str(e))
    return routes


def add_kiss_arguments(p, prefix=""):
    """The options hfstack-kiss and hfstack-node --kiss share."""
    p.add_argument(f"--{prefix}route", action="append", default=[], metavar="ROUTE",
                   help=ROUTE_HELP + " (repeatable)")
    p.add_argument(f"--{prefix}max-frame", type=int, default=2048,
                   help="largest KISS frame in bytes (default 2048; the node's MTU bounds it)")


def parse_args(argv):
    p = one_line_parser(
        prog=PROG,
        description="KISS over TCP onto a STANAG 5066 node: KISS clients (kissutil, APRS "
                    "and AX.25 software, Reticulum) connect here as to a packet TNC.",
        epilog="Example: hfstack-kiss --server 127.0.0.1:5066 --listen 127.0.0.1:8001 "
               "(docs/kiss.md)")
    p.add_argument("--listen", default="127.0.0.1:8001",
                   help="KISS TCP HOST:PORT (default 127.0.0.1:8001, Direwolf's)")
    add_kiss_arguments(p)
    add_sis_client_options(p)
    a = p.parse_args(argv)
    try:
        a.sis = parse_endpoint(a.server, "--server")
        a.kiss = parse_endpoint(a.listen, "--listen")
    except proxy_error as e:
        raise usage_error(str(e))
    if a.retry <= 0 or a.stats_interval < 0:
        raise usage_error("--retry must be > 0 and --stats-interval >= 0")
    if not 1 <= a.max_frame <= 65535:
        raise usage_error("--max-frame must be 1..65535")
    a.routes = parse_routes(a.route)
    return a


class kiss_app:
    """The event loop: a SIS connection per SAP, the KISS listener and its clients."""

    def __init__(self, sis_endpoint, listen_endpoint, routes, max_frame=2048, retry=5.0):
        self.gateway = net.kiss_gateway(routes, max_frame=max_frame)
        self.sel = selectors.DefaultSelector()
        self.listener = listen(*listen_endpoint)
        self.address = self.listener.getsockname()[:2]
        self.sel.register(self.listener, selectors.EVENT_READ, "listener")
        self.links = {}
        for sap in self.gateway.saps():
            self.links[sap] = sis_link(
                self.sel, sis_endpoint, retry, f"SAP {sap}",
                on_up=lambda sap=sap: self.gateway.start(sap),
                on_down=lambda sap=sap: self.gateway.on_disconnected(sap),
                on_primitive=lambda p, sap=sap: self.gateway.on_sis(sap, p))
        self.clients = {}  # id: connection
        self.next_client = 1
        self.stop = stop_event()
        self.counters = {"clients_accepted": 0, "clients_refused": 0,
                         "bytes_dropped_unread": 0}

    def accept(self):
        try:
            sock, peer = self.listener.accept()
        except OSError:
            return
        if len(self.clients) >= MAX_CLIENTS:
            sock.close()
            if not self.counters["clients_refused"]:
                log.warning("KISS client from %s:%d refused: %d clients connected already "
                            "(counted as clients_refused from now on)", *peer[:2], MAX_CLIENTS)
            self.counters["clients_refused"] += 1
            return
        cid, self.next_client = self.next_client, self.next_client + 1
        self.clients[cid] = connection(sock, MAX_CLIENT_BACKLOG)
        self.sel.register(sock, selectors.EVENT_READ, cid)
        self.counters["clients_accepted"] += 1
        log.info("KISS client %d connected from %s:%d", cid, *peer[:2])

    def drop_client(self, cid):
        conn = self.clients.pop(cid)
        self.sel.unregister(conn.sock)
        conn.close()
        self.gateway.on_client_closed(cid)
        log.info("KISS client %d disconnected", cid)

    def pump(self):
        frames, to_clients, notices = self.gateway.take_actions()
        for text in notices:
            log.warning("%s", text)
        for sap, frame in frames:
            self.links[sap].write(frame)
        if to_clients:
            for conn in self.clients.values():
                if not conn.write(to_clients):
                    self.counters["bytes_dropped_unread"] += len(to_clients)

    def statistics(self):
        return {"time": round(time.time(), 3), "app": dict(self.counters),
                "clients": len(self.clients),
                "bound": {str(s): self.gateway.bound(s) for s in self.links},
                "gateway": self.gateway.counters()}

    def run(self, stats_out=None, stats_interval=0.0):
        stats = every(stats_interval if stats_out is not None else 0,
                      lambda: print(json.dumps(self.statistics()), file=stats_out, flush=True),
                      time.monotonic())
        while not self.stop.is_set():
            now = time.monotonic()
            deadlines = [now + 0.5]  # how soon a stop is noticed
            for link in self.links.values():
                d = link.poll(now)
                if d is not None:
                    deadlines.append(d)
            self.pump()
            deadlines.append(stats.due(now) or deadlines[0])
            conns = [link.conn for link in self.links.values()] + list(self.clients.values())
            ready = select_once(self.sel, conns, min(deadlines) - time.monotonic())
            now = time.monotonic()
            for key, mask in ready:
                if not mask & selectors.EVENT_READ:
                    continue
                what = key.data
                if what == "listener":
                    self.accept()
                elif isinstance(what, sis_link):
                    if what.conn is not None:
                        what.readable(now)
                elif what in self.clients:
                    data = self.clients[what].read()
                    if data == b"":
                        self.drop_client(what)
                    elif data:
                        self.gateway.on_client_bytes(what, data)
            self.pump()
        self.close()

    def close(self):
        for cid in list(self.clients):
            self.drop_client(cid)
        for link in self.links.values():
            link.close()
        self.sel.unregister(self.listener)
        self.listener.close()


def main(argv=None):
    try:
        a = parse_args(sys.argv[1:] if argv is None else argv)
    except usage_error as e:
        print(f"{PROG}: {e}", file=sys.stderr)
        return 2
    if a.check:
        print(json.dumps({"server": "%s:%d" % a.sis, "listen": "%s:%d" % a.kiss,
                          "routes": [dict(r, destination=dl.address_to_string(r["destination"]))
                                     for r in a.routes], "max_frame": a.max_frame}, indent=2))
        return 0
    setup_logging(PROG, a.log_level)
    try:
        app = kiss_app(a.sis, a.kiss, a.routes, a.max_frame, a.retry)
    except OSError as e:
        print(f"{PROG}: KISS port {a.listen}: {e.strerror or e}", file=sys.stderr)
        return 1

    stop_on_signals(app.stop.set)
    log.info("KISS on %s:%d, SIS server %s:%d; %s", *app.address, *a.sis,
             ", ".join(f"port {r['port']} -> {dl.address_to_string(r['destination'])} "
                       f"SAP {r['sap']}{' ARQ' if r.get('arq') else ''}" for r in a.routes))

    def run(stats_out):
        app.run(stats_out, a.stats_interval)
        print(json.dumps(app.statistics()), file=stats_out, flush=True)

    run_with_stats_out(run, a.stats_file)
    return 0


if __name__ == "__main__":
    sys.exit(main())
