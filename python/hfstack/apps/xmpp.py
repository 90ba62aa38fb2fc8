#
# Copyright 2026 gr-hfstack authors.
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""hfstack-xmpp: the XMPP-over-HF bridge. It attaches to the local XMPP server as an
external component (XEP-0114), one component connection per remote domain, and to any
STANAG 5066 server's SIS (TCP port 5066) as a client, and carries the stanzas to the
far bridge with x2x-slep or x2x-rcop (docs/xmpp.md). The protocol is the sans-IO kernel
in hfstack.net; this module only moves bytes, keeps the clock and reconnects: when the
XMPP server or the SIS server goes away the connection is remade every --retry seconds,
and nothing queued is lost meanwhile.

Exit status: 0 after SIGINT/SIGTERM, 2 for a bad option (one line saying which).
Statistics as JSON lines on stdout (or --stats), logs on stderr.
"""

import json
import logging
import selectors
import signal
import socket
import sys
import time

from ..cli import add_version, one_line_parser, setup_logging, usage_error
from ..hfstack_python import dl, net
from ..pep.endpoint import parse_endpoint, proxy_error

PROG = "hfstack-xmpp"
log = logging.getLogger(PROG)
TRANSPORTS = ("x2x-slep", "x2x-rcop")
# Options the flags set: given with --option they would contradict them.
FLAG_OPTIONS = {"local_domains": "--local-domain", "peer_domains": "--peer",
                "transport": "--transport"}


def parse_args(argv):
    p = one_line_parser(
        prog=PROG,
        description="XMPP over HF: federates the local XMPP server with the servers "
                    "beside other STANAG 5066 nodes, as an external component (XEP-0114) "
                    "of the local server and a SIS client of the local node.",
        epilog="Example: hfstack-xmpp --secret-file /etc/hfstack/xmpp-secret "
               "--local-domain a.example --peer b.example=0.0.0.2 "
               "--peer conference.b.example=0.0.0.2 (docs/xmpp.md, Set up two Prosody "
               "servers)")
    p.add_argument("--server", default="127.0.0.1:5066",
                   help="SIS server HOST:PORT (default 127.0.0.1:5066)")
    p.add_argument("--component", default="127.0.0.1:5347",
                   help="the XMPP server's component port HOST:PORT (default 127.0.0.1:5347)")
    p.add_argument("--secret", default=None, help="the components' shared secret")
    p.add_argument("--secret-file", default=None,
                   help="a file holding the secret (first line), kept out of the process list")
    p.add_argument("--local-domain", action="append", default=[], metavar="DOMAIN",
                   help="a domain of the local XMPP server (repeatable, at least one)")
    p.add_argument("--peer", action="append", default=[], metavar="DOMAIN=ADDRESS",
                   help="a remote domain and the STANAG 5066 address of the node its "
                        "bridge is on, e.g. b.example=0.0.0.2 (repeatable; a component "
                        "each; the domains of one address share a bridge)")
    p.add_argument("--transport", default="x2x-slep", choices=TRANSPORTS,
                   help="how stanzas travel over 5066 (default x2x-slep)")
    p.add_argument("--option", action="append", default=[], metavar="NAME=VALUE",
                   help="a bridge option (repeatable; see --list-options)")
    p.add_argument("--list-options", action="store_true",
                   help="print every bridge option and exit")
    p.add_argument("--retry", type=float, default=5.0, metavar="SECONDS",
                   help="seconds between attempts to reconnect to either server (default 5)")
    p.add_argument("--stats-interval", type=float, default=60.0,
                   help="seconds between JSON statistics lines (0: only at the end)")
    p.add_argument("--stats", dest="stats_file", help="write them to this file (default stdout)")
    p.add_argument("--check", action="store_true",
                   help="check the options, print the settings as JSON and exit (no server "
                        "is contacted)")
    p.add_argument("--log-level", default="info", choices=("debug", "info", "warn", "error"))
    add_version(p)
    a = p.parse_args(argv)
    if a.list_options:
        return a
    try:
        a.sis = parse_endpoint(a.server, "--server")
        a.xmpp = parse_endpoint(a.component, "--component")
    except proxy_error as e:
        raise usage_error(str(e))
    if a.retry <= 0 or a.stats_interval < 0:
        raise usage_error("--retry must be > 0 and --stats-interval >= 0")
    if a.secret is not None and a.secret_file:
        raise usage_error("give --secret or --secret-file, not both")
    if a.secret_file:
        try:
            with open(a.secret_file) as f:
                a.secret = f.readline().strip()
        except OSError as e:
            raise usage_error(f"--secret-file: {e.strerror}: {a.secret_file}")
    if not a.secret:
        raise usage_error("the component secret is required (--secret or --secret-file)")
    if not a.local_domain:
        raise usage_error("at least one --local-domain is required")
    if not a.peer:
        raise usage_error("at least one --peer DOMAIN=ADDRESS is required")
    a.peers = {}  # node address -> [domains]
    seen = set()
    for spec in a.peer:
        domain, sep, address = spec.partition("=")
        domain = domain.strip().lower()
        if not sep or not domain or not address:
            raise usage_error(f"--peer must be DOMAIN=ADDRESS, not {spec!r}")
        try:
            node = int(address, 0) if address.strip().isdigit() else dl.parse_address(address)
        except (ValueError, TypeError):
            raise usage_error(f"--peer {spec!r}: {address!r} is not a STANAG 5066 address")
        if domain in seen:
            raise usage_error(f"--peer: {domain} given twice")
        seen.add(domain)
        a.peers.setdefault(node, []).append(domain)
    options = []
    for spec in a.option:
        name, sep, value = spec.partition("=")
        if not sep or not name.strip():
            raise usage_error(f"--option must be NAME=VALUE, not {spec!r}")
        if name.strip() in FLAG_OPTIONS:
            raise usage_error(f"--option {name.strip()}: use {FLAG_OPTIONS[name.strip()]}")
        options.append(f"{name.strip()}={value}")
    options.append("transport=" + a.transport)
    options.append("local_domains=" + ",".join(d.lower() for d in a.local_domain))
    a.options = ";".join(options)
    a.bridge_options = {node: a.options + ";peer_domains=" + ",".join(domains)
                        for node, domains in a.peers.items()}
    return a


class connection:
    """One non-blocking TCP client connection with its pending output."""

    def __init__(self, sock):
        self.sock, self.out = sock, bytearray()

    def write(self, data):
        self.out += data
        self.flush()

    def flush(self):
        while self.out:
            try:
                n = self.sock.send(self.out)
            except (BlockingIOError, InterruptedError):
                return
            except OSError:
                # Reset or closed by the other end: the next read says so and the
                # connection is remade (on the SIS side the link fails what was in
                # flight and the bridge sends it again; stanzas already handed to a
                # dying component connection are lost, as any TCP write would be).
                self.out.clear()
                return
            del self.out[:n]


def connect(host, port, timeout=5.0):
    sock = socket.create_connection((host, port), timeout=timeout)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    sock.setblocking(False)
    return connection(sock)


class xmpp_bridge_app:
    """The event loop: SIS connection, one component connection per remote domain, the
    bridges (one per peer node) and the link kernel between them."""

    def __init__(self, a):
        self.a = a
        self.sel = selectors.DefaultSelector()
        self.bridges = {node: net.xmpp_bridge(opts) for node, opts in a.bridge_options.items()}
        any_options = next(iter(a.bridge_options.values()))
        if a.transport == "x2x-slep":
            # A larger incarnation at each start, so the far SLEP resets our old streams.
            self.link = net.x2x_slep_link(any_options, int(time.time()) & 0x7FFFFFFF or 1)
        else:
            self.link = net.x2x_rcop_link(any_options)
        self.node_of = {}  # component domain -> peer node
        self.components = {}
        for node, domains in a.peers.items():
            for d in domains:
                self.node_of[d] = node
                self.components[d] = net.xmpp_component(d, a.secret)
        self.sis = None
        self.sis_retry_at = 0.0
        self.comp_conn = {d: None for d in self.components}
        self.comp_retry_at = {d: 0.0 for d in self.components}
        self.reassembler = None
        self.stopping = False
        self.noticed = set()
        self.counters = {"sis_connects": 0, "component_connects": 0}

    def notice(self, kind, text, *args):
        if kind not in self.noticed:
            self.noticed.add(kind)
            log.warning(text, *args)

    # --- the SIS side
    def sis_up(self, now):
        host, port = self.a.sis
        try:
            self.sis = connect(host, port)
        except OSError as e:
            self.notice("sis_connect", "SIS server %s:%d: %s; retrying every %g s", host, port,
                        e.strerror or e, self.a.retry)
            self.sis_retry_at = now + self.a.retry
            return
        self.noticed.discard("sis_connect")
        self.counters["sis_connects"] += 1
        self.reassembler = dl.sis_reassembler()
        self.sel.register(self.sis.sock, selectors.EVENT_READ, ("sis", None))
        log.info("connected to the SIS server at %s:%d", host, port)
        self.link.start(now)

    def sis_down(self, now, why):
        log.warning("SIS server connection lost (%s); reconnecting", why)
        self.sel.unregister(self.sis.sock)
        self.sis.sock.close()
        self.sis = None
        self.sis_retry_at = now + self.a.retry
        self.link.on_disconnected(now)

    def sis_readable(self, now):
        try:
            data = self.sis.sock.recv(65536)
        except (BlockingIOError, InterruptedError):
            return
        except OSError as e:
            return self.sis_down(now, e.strerror or str(e))
        if not data:
            return self.sis_down(now, "closed by the server")
        for p in self.reassembler.push(data):
            self.link.on_sis(p, now)

    # --- the XMPP server side
    def component_up(self, domain, now):
        host, port = self.a.xmpp
        try:
            conn = connect(host, port)
        except OSError as e:
            self.notice("xmpp_connect", "XMPP server %s:%d: %s; retrying every %g s", host,
                        port, e.strerror or e, self.a.retry)
            self.comp_retry_at[domain] = now + self.a.retry
            return
        self.noticed.discard("xmpp_connect")
        self.counters["component_connects"] += 1
        self.comp_conn[domain] = conn
        self.sel.register(conn.sock, selectors.EVENT_READ, ("component", domain))
        self.components[domain].start()

    def component_down(self, domain, now, why):
        conn = self.comp_conn[domain]
        if conn is None:
            return
        log.warning("component %s: %s; reconnecting", domain, why)
        self.sel.unregister(conn.sock)
        conn.sock.close()
        self.comp_conn[domain] = None
        self.comp_retry_at[domain] = now + self.a.retry
        self.components[domain].on_disconnected()
        self.bridges[self.node_of[domain]].set_component_ready(domain, False, now)

    def component_readable(self, domain, now):
        conn = self.comp_conn[domain]
        try:
            data = conn.sock.recv(65536)
        except (BlockingIOError, InterruptedError):
            return
        except OSError as e:
            return self.component_down(domain, now, e.strerror or str(e))
        if not data:
            return self.component_down(domain, now, "closed by the XMPP server")
        self.components[domain].on_bytes(data)

    # --- moving things between the parts until nothing more happens
    def pump(self, now):
        for _ in range(1000):
            busy = False
            for domain, comp in self.components.items():
                out, events = comp.take_actions()
                conn = self.comp_conn[domain]
                if out and conn is not None:
                    conn.write(out)
                bridge = self.bridges[self.node_of[domain]]
                for kind, stanza, text in events:
                    busy = True
                    if kind == "ready":
                        log.info("component %s accepted by the XMPP server", domain)
                        bridge.set_component_ready(domain, True, now)
                    elif kind == "stanza":
                        bridge.from_component(domain, stanza, now)
                    else:
                        self.component_down(domain, now, text or "stream closed")
            frames, events, notices = self.link.take_actions()
            for text in notices:
                log.warning("%s", text)
            if self.sis is not None:
                for frame in frames:
                    self.sis.write(frame)
            for kind, node, stanza_id, stanza, text in events:
                busy = True
                bridge = self.bridges.get(node)
                if kind == "bound":
                    log.info("bound to the SIS server (%s)", self.a.transport)
                elif kind == "unbound":
                    log.warning("the SIS server unbound us: %s", text)
                elif bridge is None:
                    self.notice("unknown_node", "stanzas from node %s, which no --peer "
                                "names, dropped", dl.address_to_string(node))
                elif kind == "delivered":
                    bridge.delivered(stanza_id, now)
                elif kind == "failed":
                    bridge.failed(stanza_id, now)
                elif kind == "stanza":
                    bridge.from_peer(stanza, now)
            for node, bridge in self.bridges.items():
                while self.link.can_send(node):
                    item = bridge.next_for_peer(now)
                    if item is None:
                        break
                    busy = True
                    self.link.send(node, item[0], item[1], now)
                to_component, notices = bridge.take_actions()
                for text in notices:
                    log.warning("%s", text)
                for domain, stanza in to_component:
                    busy = True
                    if not self.components[domain].send(stanza):
                        log.warning("component %s not ready: a stanza for it lost", domain)
            if not busy:
                return

    def writers(self):
        conns = [self.sis] + list(self.comp_conn.values())
        return [c for c in conns if c is not None and c.out]

    def statistics(self):
        return {"time": round(time.time(), 3), "app": dict(self.counters),
                "link": self.link.counters(), "sis_bound": self.link.bound,
                "components": {d: c.ready for d, c in self.components.items()},
                "bridges": {dl.address_to_string(n): b.counters()
                            for n, b in self.bridges.items()}}

    def run(self, stats_out):
        next_stats = time.monotonic() + self.a.stats_interval if self.a.stats_interval else None
        while not self.stopping:
            now = time.monotonic()
            if self.sis is None and now >= self.sis_retry_at:
                self.sis_up(now)
            for d in self.components:
                if self.comp_conn[d] is None and now >= self.comp_retry_at[d]:
                    self.component_up(d, now)
            self.link.on_timer(now)
            for b in self.bridges.values():
                b.on_timer(now)
            self.pump(now)
            for c in self.writers():
                c.flush()
            deadlines = [self.link.next_deadline(), now + 1.0]
            deadlines += [b.next_deadline() for b in self.bridges.values()]
            if self.sis is None:
                deadlines.append(self.sis_retry_at)
            deadlines += [self.comp_retry_at[d] for d in self.components
                          if self.comp_conn[d] is None]
            if next_stats is not None:
                if now >= next_stats:
                    print(json.dumps(self.statistics()), file=stats_out, flush=True)
                    next_stats = now + self.a.stats_interval
                deadlines.append(next_stats)
            wait = max(0.0, min(deadlines) - time.monotonic())
            # Output that did not fit in the socket waits for writability.
            pending = {c.sock: c for c in self.writers()}
            for sock in pending:
                self.sel.modify(sock, selectors.EVENT_READ | selectors.EVENT_WRITE,
                                self.sel.get_key(sock).data)
            try:
                ready = self.sel.select(wait)
            except InterruptedError:
                ready = []
            for sock in pending:
                if self.sel.get_map().get(sock) is not None:
                    self.sel.modify(sock, selectors.EVENT_READ, self.sel.get_key(sock).data)
            now = time.monotonic()
            for key, mask in ready:
                what, domain = key.data
                if mask & selectors.EVENT_WRITE and key.fileobj in pending:
                    pending[key.fileobj].flush()
                if not mask & selectors.EVENT_READ:
                    continue
                if what == "sis":
                    if self.sis is not None:
                        self.sis_readable(now)
                elif self.comp_conn.get(domain) is not None:
                    self.component_readable(domain, now)
            self.pump(now)
        for d, comp in self.components.items():
            if self.comp_conn[d] is not None:
                comp.close()
                out, _ = comp.take_actions()
                self.comp_conn[d].write(out)
        print(json.dumps(self.statistics()), file=stats_out, flush=True)


def main(argv=None):
    try:
        a = parse_args(sys.argv[1:] if argv is None else argv)
        if a.list_options:
            for name, default, help_text in net.xmpp_options():
                print(f"{name} (default {default!r}): {help_text}")
            return 0
        settings = net.check_xmpp_options(next(iter(a.bridge_options.values())))
        for opts in a.bridge_options.values():
            net.xmpp_bridge(opts)  # the bridge's own checks (domains in both sets...)
    except (usage_error, ValueError) as e:
        print(f"{PROG}: {e}", file=sys.stderr)
        return 2
    if a.check:
        del settings["peer_domains"]
        print(json.dumps({"server": "%s:%d" % a.sis, "component": "%s:%d" % a.xmpp,
                          "peers": {dl.address_to_string(n): d for n, d in a.peers.items()},
                          "options": settings}, indent=2))
        return 0
    setup_logging(PROG, a.log_level)
    app = xmpp_bridge_app(a)

    def stop(*_):
        app.stopping = True

    signal.signal(signal.SIGINT, stop)
    signal.signal(signal.SIGTERM, stop)
    log.info("XMPP bridge: SIS server %s:%d, XMPP server %s:%d, %s; peers %s", *a.sis, *a.xmpp,
             a.transport, ", ".join(f"{'+'.join(d)} at {dl.address_to_string(n)}"
                                    for n, d in a.peers.items()))
    stats_out = open(a.stats_file, "a") if a.stats_file else sys.stdout
    try:
        app.run(stats_out)
    finally:
        if stats_out is not sys.stdout:
            stats_out.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
