#
# Copyright 2026 gr-hfstack authors.
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""hfstack-ardop: an ARDOP-compatible host interface on STANAG 5066. Programs written
for an ARDOP TNC, Pat (the Winlink client) above all, connect to its command port
(default 8515) and data port (the next one) as they would to ardopc; an ARQ session
is a SLEP stream to the station the called callsign maps to (--station), so its bytes
survive link breaks; FEC mode sends each frame non-ARQ to the broadcast group. It is a
SIS client of any STANAG 5066 server, remade every --retry seconds while the server
is away (docs/ardop.md lists each command and what it maps to).

Exit status: 0 after SIGINT/SIGTERM, 2 for a bad option, 1 when a host port cannot
be opened, each with one line on stderr. Statistics as JSON lines on stdout (or
--stats), logs on stderr.
"""

import json
import logging
import selectors
import socket
import sys
import time

from ..cli import (add_sis_client_options, every, one_line_parser, run_with_stats_out, setup_logging,
                   stop_event, stop_on_signals, usage_error)
from ..hfstack_python import dl, net
from ..pep.endpoint import parse_endpoint, proxy_error
from .host_sockets import connection, listen, select_once, sis_link

PROG = "hfstack-ardop"
log = logging.getLogger(PROG)
DEFAULT_SAP = 15
MAX_PENDING = 512 * 1024  # host bytes held before the data port is read again
# Output held for a host that does not read its data connection: above it the session's
# bytes wait in SLEP (whose window stops the far sender) until half of it has gone.
MAX_HOST_OUTPUT = 64 * 1024
MAX_COMMAND_OUTPUT = 1 << 20  # command lines beyond it, for a host that never reads, dropped
HOST_SEND_BUFFER = 64 * 1024  # the socket's own share of the data held for the host


def parse_stations(specs):
    """{CALLSIGN: node} from CALL=ADDRESS specs."""
    stations = {}
    for spec in specs:
        call, sep, address = spec.partition("=")
        norm = net.ardop_tnc.normalize_call(call)
        if not sep or norm is None:
            raise usage_error(f"--station must be CALLSIGN=ADDRESS, not {spec!r}")
        try:
            node = dl.parse_address(address.strip())
        except (ValueError, TypeError):
            raise usage_error(f"--station {spec!r}: {address!r} is not a STANAG 5066 address")
        if node >= 1 << 28 or node == 0:
            raise usage_error(f"--station {spec!r}: a node address is needed, not a group")
        if norm in stations:
            raise usage_error(f"--station: {norm} given twice")
        stations[norm] = node
    return stations


def add_ardop_arguments(p, prefix=""):
    """The options hfstack-ardop and hfstack-node --ardop share."""
    p.add_argument(f"--{prefix}station", action="append", default=[], metavar="CALL=ADDRESS",
                   help="a callsign and the STANAG 5066 node address of the station that "
                        "answers it, e.g. N0CALL=0.0.0.2 (repeatable; sessions are accepted "
                        "only from the nodes named)")
    p.add_argument(f"--{prefix}sap", type=int, default=DEFAULT_SAP,
                   help=f"the SAP of the sessions' SLEP (default {DEFAULT_SAP}; both stations "
                        "the same)")


def parse_args(argv):
    p = one_line_parser(
        prog=PROG,
        description="An ARDOP-compatible host interface on a STANAG 5066 node: Pat and "
                    "other ARDOP hosts connect here as to an ARDOP TNC.",
        epilog="Example: hfstack-ardop --server 127.0.0.1:5066 --listen 127.0.0.1:8515 "
               "--station N0CALL=0.0.0.2 (docs/ardop.md, docs/winlink-p2p.md)")
    p.add_argument("--listen", default="127.0.0.1:8515",
                   help="command port HOST:PORT (default 127.0.0.1:8515); the data port is "
                        "the next one")
    add_ardop_arguments(p)
    p.add_argument("--connect-timeout", type=float, default=120.0, metavar="SECONDS",
                   help="an ARQCALL without an answer this long fails (default 120)")
    add_sis_client_options(p)
    a = p.parse_args(argv)
    try:
        a.sis = parse_endpoint(a.server, "--server")
        a.host = parse_endpoint(a.listen, "--listen")
    except proxy_error as e:
        raise usage_error(str(e))
    if a.host[1] == 65535:
        raise usage_error("--listen: the data port (the next one) must exist")
    if a.retry <= 0 or a.stats_interval < 0 or a.connect_timeout <= 0:
        raise usage_error("--retry and --connect-timeout must be > 0, --stats-interval >= 0")
    if not 0 <= a.sap <= 15:
        raise usage_error("--sap must be 0..15")
    a.stations = parse_stations(a.station)
    return a


class ardop_app:
    """The event loop: the SIS connection, the command and data listeners and the one
    host connected to them."""

    def __init__(self, sis_endpoint, host_endpoint, stations, sap=DEFAULT_SAP, retry=5.0,
                 connect_timeout=120.0, channel_busy=None):
        """`channel_busy`: a callable saying whether the node's carrier sense hears the
        channel busy (hfstack-node --ardop); the host hears BUSY TRUE / FALSE on each
        change. None (a SIS client of another process): SIS carries no channel state,
        so no BUSY is sent."""
        # A larger incarnation at each start, so the far SLEP resets our old sessions.
        self.tnc = net.ardop_tnc(stations, sap=sap, incarnation=int(time.time()) & 0x7FFFFFFF,
                                 connect_timeout_s=connect_timeout)
        self.sel = selectors.DefaultSelector()
        host, port = host_endpoint
        self.command_listener = listen(host, port)
        port = self.command_listener.getsockname()[1]
        try:
            self.data_listener = listen(host, port + 1)
        except OSError:
            self.command_listener.close()
            raise
        self.address = (host, port)
        self.sel.register(self.command_listener, selectors.EVENT_READ, "command_listener")
        self.sel.register(self.data_listener, selectors.EVENT_READ, "data_listener")
        self.sis = sis_link(self.sel, sis_endpoint, retry, "ARDOP",
                            on_up=lambda: self.tnc.start(time.monotonic()),
                            on_down=lambda: self.tnc.on_disconnected(time.monotonic()),
                            on_primitive=lambda p: self.tnc.on_sis(p, time.monotonic()))
        self.host = {"command": None, "data": None}
        self.data_paused = False
        self.stop = stop_event()
        self.channel_busy = channel_busy
        self.counters = {"hosts_accepted": 0, "hosts_refused": 0, "host_output_peak": 0,
                         "host_output_pauses": 0, "command_bytes_dropped": 0}

    def accept(self, which):
        listener = self.command_listener if which == "command" else self.data_listener
        try:
            sock, peer = listener.accept()
        except OSError:
            return
        if self.host[which] is not None and self.gone(self.host[which]):
            self.host_closed(time.monotonic())  # it left; its end is not read yet
        if self.host[which] is not None:
            # An ARDOP TNC serves one host: a second one is closed.
            self.counters["hosts_refused"] += 1
            log.warning("a second host on the %s port (%s:%d) refused", which, *peer[:2])
            sock.close()
            return
        if which == "data":
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, HOST_SEND_BUFFER)
        self.host[which] = connection(
            sock, max_pending=MAX_COMMAND_OUTPUT if which == "command" else None)
        self.sel.register(sock, selectors.EVENT_READ, which)
        self.counters["hosts_accepted"] += 1
        log.info("host %s connection from %s:%d", which, *peer[:2])

    @staticmethod
    def gone(conn):
        """Whether the peer of this connection has closed it."""
        try:
            return conn.sock.recv(1, socket.MSG_PEEK) == b""
        except (BlockingIOError, InterruptedError):
            return False
        except OSError:
            return True

    def host_closed(self, now):
        """Either host connection closed: both go, the session with them."""
        for which, conn in self.host.items():
            if conn is not None:
                if self.sel.get_map().get(conn.sock) is not None:
                    self.sel.unregister(conn.sock)
                conn.close()
                self.host[which] = None
        self.data_paused = False
        self.tnc.on_host_closed(now)
        log.info("host disconnected")

    def pump(self):
        frames, to_command, to_data, notices = self.tnc.take_actions()
        for text in notices:
            log.warning("%s", text)
        for frame in frames:
            self.sis.write(frame)
        if to_command and self.host["command"] is not None:
            if not self.host["command"].write(to_command):
                self.counters["command_bytes_dropped"] += len(to_command)
        if to_data and self.host["data"] is not None:
            self.host["data"].write(to_data)
        self.hold_for_host()
        # Back-pressure on the host while SLEP holds too much of its data.
        data = self.host["data"]
        if data is not None:
            paused = self.tnc.pending > MAX_PENDING
            if paused != self.data_paused:
                self.data_paused = paused
                if paused:
                    self.sel.unregister(data.sock)
                else:
                    self.sel.register(data.sock, selectors.EVENT_READ, "data")

    def hold_for_host(self):
        """The kernel stops taking the session's bytes while the host's data connection
        holds MAX_HOST_OUTPUT, and takes them again once half of it has gone."""
        data = self.host["data"]
        held = len(data.out) if data is not None else 0
        self.counters["host_output_peak"] = max(self.counters["host_output_peak"], held)
        now = time.monotonic()
        if self.tnc.host_reading and held > MAX_HOST_OUTPUT:
            self.counters["host_output_pauses"] += 1
            self.tnc.set_host_reading(False, now)
        elif not self.tnc.host_reading and held <= MAX_HOST_OUTPUT // 2:
            self.tnc.set_host_reading(True, now)
            self.pump()  # what waited in SLEP

    def statistics(self):
        return {"time": round(time.time(), 3), "app": dict(self.counters),
                "state": self.tnc.state, "sis_bound": self.tnc.bound,
                "tnc": self.tnc.counters()}

    def run(self, stats_out=None, stats_interval=0.0):
        stats = every(stats_interval if stats_out is not None else 0,
                      lambda: print(json.dumps(self.statistics()), file=stats_out, flush=True),
                      time.monotonic())
        while not self.stop.is_set():
            now = time.monotonic()
            # 0.5: a stop is noticed; 0.1: the channel's busy state is polled
            deadlines = [now + (0.5 if self.channel_busy is None else 0.1),
                         self.tnc.next_deadline()]
            if self.channel_busy is not None:
                self.tnc.set_channel_busy(bool(self.channel_busy()))
            d = self.sis.poll(now)
            if d is not None:
                deadlines.append(d)
            self.tnc.on_timer(now)
            self.pump()
            deadlines.append(stats.due(now) or deadlines[0])
            conns = [self.sis.conn, self.host["command"]]
            if not self.data_paused:
                conns.append(self.host["data"])
            ready = select_once(self.sel, conns, min(deadlines) - time.monotonic())
            now = time.monotonic()
            for key, mask in ready:
                if not mask & selectors.EVENT_READ:
                    continue
                what = key.data
                if what in ("command_listener", "data_listener"):
                    self.accept(what.split("_")[0])
                elif isinstance(what, sis_link):
                    if what.conn is not None:
                        what.readable(now)
                elif self.host.get(what) is not None:
                    data = self.host[what].read()
                    if data == b"":
                        self.host_closed(now)
                    elif data and what == "command":
                        self.tnc.on_command_bytes(data, now)
                    elif data:
                        self.tnc.on_data_bytes(data, now)
                self.pump()
            if self.host["data"] is not None and (self.data_paused or not self.tnc.host_reading):
                self.host["data"].flush()
                self.hold_for_host()
        self.close()

    def close(self):
        if self.host["command"] is not None:
            self.host_closed(time.monotonic())
            self.pump()
        self.sis.close()
        for listener in (self.command_listener, self.data_listener):
            self.sel.unregister(listener)
            listener.close()


def main(argv=None):
    try:
        a = parse_args(sys.argv[1:] if argv is None else argv)
        net.ardop_tnc(a.stations, sap=a.sap)  # the kernel's own checks
    except (usage_error, ValueError) as e:
        print(f"{PROG}: {e}", file=sys.stderr)
        return 2
    if a.check:
        print(json.dumps({"server": "%s:%d" % a.sis, "command_port": "%s:%d" % a.host,
                          "data_port": "%s:%d" % (a.host[0], a.host[1] + 1), "sap": a.sap,
                          "stations": {c: dl.address_to_string(n) for c, n in a.stations.items()}},
                         indent=2))
        return 0
    setup_logging(PROG, a.log_level)
    try:
        app = ardop_app(a.sis, a.host, a.stations, a.sap, a.retry, a.connect_timeout)
    except OSError as e:
        print(f"{PROG}: host ports {a.listen} and the next: {e.strerror or e}", file=sys.stderr)
        return 1

    stop_on_signals(app.stop.set)
    log.info("ARDOP host interface on %s:%d (data %d), SIS server %s:%d, SAP %d; stations %s",
             *app.address, app.address[1] + 1, *a.sis, a.sap,
             ", ".join(f"{c}={dl.address_to_string(n)}" for c, n in a.stations.items()) or "none")

    def run(stats_out):
        app.run(stats_out, a.stats_interval)
        print(json.dumps(app.statistics()), file=stats_out, flush=True)

    run_with_stats_out(run, a.stats_file)
    return 0


if __name__ == "__main__":
    sys.exit(main())
