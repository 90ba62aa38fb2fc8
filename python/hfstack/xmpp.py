#
# Copyright 2026 gr-hfstack authors.
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""The XMPP-over-HF bridge's socket driver (docs/xmpp.md): the component connections
to the local XMPP server (XEP-0114), the bridges and their transport (the sans-IO
kernels of hfstack.net), and a SIS side that is either a TCP connection to any STANAG
5066 server (hfstack-xmpp) or a node's message ports (the `xmpp_bridge` block, which
hfstack-node --xmpp and GRC attach to a station):

    b = xmpp_bridge("b.example=0.0.0.2", "a.example", secret="...",
                    component="127.0.0.1:5347")
    tb.msg_connect(b, "sis_out", node, "sis_in")
    tb.msg_connect(node, "sis_out", b, "sis_in")

Connections are made without blocking (a server that does not answer delays nothing
else) and remade every `retry` seconds when they drop. What the bridge wrote to a
component connection stays with the component kernel until the server has confirmed
it, and is written again after a reconnect (net/xmpp_component.h)."""

import errno
import os
import logging
import selectors
import socket
import threading
import time

import pmt
from gnuradio import gr

from .cli import every
from .hfstack_python import dl, net
from .pdu import make_pdu, node_message

log = logging.getLogger("hfstack-xmpp")
TRANSPORTS = ("x2x-slep", "x2x-rcop")
XMPP_CLIENT_ID = 0x7FFF0006  # the block's SIS client id at the node
REBIND_S = 5.0


class bridge_error(Exception):
    """A bad bridge setting (one line saying which)."""


def parse_peers(specs):
    """["b.example=0.0.0.2", ...] (or one string of them, blank- or comma-separated)
    -> {node address: [domains]}; bridge_error for a bad entry."""
    if isinstance(specs, str):
        specs = specs.replace(",", " ").split()
    peers, seen = {}, set()
    for spec in specs:
        domain, sep, address = spec.partition("=")
        domain = domain.strip().lower()
        if not sep or not domain or not address:
            raise bridge_error(f"a peer is DOMAIN=ADDRESS, not {spec!r}")
        try:
            node = int(address, 0) if address.strip().isdigit() else dl.parse_address(address)
        except (ValueError, TypeError):
            node = None
        if node is None:
            raise bridge_error(f"peer {spec!r}: {address!r} is not a STANAG 5066 address")
        if domain in seen:
            raise bridge_error(f"peer {domain} given twice")
        seen.add(domain)
        peers.setdefault(node, []).append(domain)
    if not peers:
        raise bridge_error("at least one peer DOMAIN=ADDRESS is required")
    return peers


def bridge_options(options, transport, local_domains, peers):
    """{node: the bridge option string for the peer at node}; bridge_error when the
    kernel refuses them."""
    if transport not in TRANSPORTS:
        raise bridge_error(f"transport is one of {', '.join(TRANSPORTS)}, not {transport!r}")
    locals_ = [d.strip().lower() for d in local_domains if d.strip()]
    if not locals_:
        raise bridge_error("at least one local domain is required")
    base = ";".join(o for o in (options, "transport=" + transport,
                                "local_domains=" + ",".join(locals_)) if o)
    out = {node: base + ";peer_domains=" + ",".join(domains) for node, domains in peers.items()}
    try:
        net.check_xmpp_options(next(iter(out.values())))
        for opts in out.values():
            net.xmpp_bridge(opts)  # the bridge's own checks (domains in both sets...)
    except ValueError as e:
        raise bridge_error(str(e))
    return out


class connection:
    """One non-blocking TCP client connection with its pending output. The connect
    itself does not block: `connecting` until the socket is writable, then
    finish_connect() says whether it worked."""

    def __init__(self, host, port):
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
        family, kind, proto, _, address = infos[0]
        self.sock = socket.socket(family, kind, proto)
        self.sock.setblocking(False)
        self.out = bytearray()
        err = self.sock.connect_ex(address)
        if err not in (0, errno.EINPROGRESS, errno.EWOULDBLOCK, errno.EINTR):
            self.sock.close()
            raise OSError(err, os.strerror(err))
        self.connecting = err != 0

    def finish_connect(self):
        err = self.sock.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR)
        if err:
            raise OSError(err, os.strerror(err))
        self.connecting = False
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def write(self, data):
        self.out += data
        self.flush()

    def flush(self):
        while self.out and not self.connecting:
            try:
                n = self.sock.send(self.out)
            except (BlockingIOError, InterruptedError):
                return
            except OSError:
                # Reset or closed by the other end: the next read says so and the
                # connection is remade (the component kernel writes again what the
                # server has not confirmed; on the SIS side the link fails what was in
                # flight and the bridge sends it again).
                self.out.clear()
                return
            del self.out[:n]

    def close(self):
        self.sock.close()


class bridge_core:
    """The component connections, the bridges (one per peer node) and the link kernel
    between them, driven from one thread with a selector the owner gives. The SIS side
    is the owner's: it calls sis_up / sis_down / on_sis_bytes, and `send_sis(frames)`
    carries what the link writes."""

    def __init__(self, options_by_node, peers, secret, component, transport, retry,
                 send_sis, sel, incarnation=None):
        self.sel = sel
        self.send_sis = send_sis
        self.component_address = component
        self.transport = transport
        self.retry = retry
        self.bridges = {node: net.xmpp_bridge(opts) for node, opts in options_by_node.items()}
        any_options = next(iter(options_by_node.values()))
        if transport == "x2x-slep":
            # A larger incarnation at each start, so the far SLEP resets our old streams.
            self.link = net.x2x_slep_link(
                any_options, incarnation or (int(time.time()) & 0x7FFFFFFF) or 1)
        else:
            self.link = net.x2x_rcop_link(any_options)
        self.node_of = {}  # component domain -> peer node
        self.components = {}
        for node, domains in peers.items():
            for d in domains:
                self.node_of[d] = node
                self.components[d] = net.xmpp_component(d, secret, confirm_written=True)
        self.comp_conn = {d: None for d in self.components}
        self.comp_retry_at = {d: 0.0 for d in self.components}
        self.sis_connected = False
        self.reassembler = None
        self.noticed = set()
        self.counters = {"sis_connects": 0, "component_connects": 0}

    def notice(self, kind, text, *args):
        if kind not in self.noticed:
            self.noticed.add(kind)
            log.warning(text, *args)

    # --- the SIS side (the owner's)
    def sis_up(self, now):
        self.sis_connected = True
        self.counters["sis_connects"] += 1
        self.reassembler = dl.sis_reassembler()
        self.link.start(now)
        self.pump(now)

    def sis_down(self, now):
        self.sis_connected = False
        self.link.on_disconnected(now)
        self.pump(now)

    def on_sis_bytes(self, data, now):
        for p in self.reassembler.push(data):
            self.link.on_sis(p, now)
        self.pump(now)

    # --- the XMPP server side
    def component_up(self, domain, now):
        host, port = self.component_address
        try:
            conn = connection(host, port)
        except OSError as e:
            self.notice("xmpp_connect", "XMPP server %s:%d: %s; retrying every %g s", host,
                        port, e.strerror or e, self.retry)
            self.comp_retry_at[domain] = now + self.retry
            return
        self.comp_conn[domain] = conn
        if conn.connecting:
            self.sel.register(conn.sock, selectors.EVENT_WRITE, ("component", domain))
        else:
            self.component_connected(domain, now)

    def component_connected(self, domain, now):
        conn = self.comp_conn[domain]
        try:
            conn.finish_connect()
        except OSError as e:
            host, port = self.component_address
            self.notice("xmpp_connect", "XMPP server %s:%d: %s; retrying every %g s", host,
                        port, e.strerror or e, self.retry)
            self.drop_component(domain, now)
            return
        self.noticed.discard("xmpp_connect")
        self.counters["component_connects"] += 1
        key = self.sel.get_map().get(conn.sock)
        if key is None:
            self.sel.register(conn.sock, selectors.EVENT_READ, ("component", domain))
        else:
            self.sel.modify(conn.sock, selectors.EVENT_READ, ("component", domain))
        self.components[domain].start()
        self.pump(now)

    def drop_component(self, domain, now):
        conn = self.comp_conn[domain]
        if self.sel.get_map().get(conn.sock) is not None:
            self.sel.unregister(conn.sock)
        conn.close()
        self.comp_conn[domain] = None
        self.comp_retry_at[domain] = now + self.retry

    def component_down(self, domain, now, why):
        if self.comp_conn[domain] is None:
            return
        log.warning("component %s: %s; reconnecting", domain, why)
        self.drop_component(domain, now)
        self.components[domain].on_disconnected()
        self.bridges[self.node_of[domain]].set_component_ready(domain, False, now)

    def component_event(self, domain, mask, now):
        conn = self.comp_conn.get(domain)
        if conn is None:
            return
        if conn.connecting:
            if mask & selectors.EVENT_WRITE:
                self.component_connected(domain, now)
            return
        if mask & selectors.EVENT_WRITE:
            conn.flush()
        if not mask & selectors.EVENT_READ:
            return
        try:
            data = conn.sock.recv(65536)
        except (BlockingIOError, InterruptedError):
            return
        except OSError as e:
            return self.component_down(domain, now, e.strerror or str(e))
        if not data:
            return self.component_down(domain, now, "closed by the XMPP server")
        self.components[domain].on_bytes(data)
        self.pump(now)

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
                        log.debug("from the XMPP server on %s: %.300s", domain, stanza)
                        bridge.from_component(domain, stanza, now)
                    else:
                        self.component_down(domain, now, text or "stream closed")
            frames, events, notices = self.link.take_actions()
            for text in notices:
                log.warning("%s", text)
            if self.sis_connected and frames:
                self.send_sis(frames)
            for kind, node, stanza_id, stanza, text in events:
                busy = True
                bridge = self.bridges.get(node)
                if kind == "bound":
                    log.info("bound to the SIS server (%s)", self.transport)
                elif kind == "unbound":
                    log.warning("the SIS server unbound us: %s", text)
                elif bridge is None:
                    self.notice("unknown_node", "stanzas from node %s, which no peer "
                                "names, dropped", dl.address_to_string(node))
                elif kind == "delivered":
                    bridge.delivered(stanza_id, now)
                elif kind == "failed":
                    bridge.failed(stanza_id, now)
                elif kind == "stanza":
                    log.debug("from node %s: %.300s", dl.address_to_string(node), stanza)
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

    def step(self, now):
        """Reconnects what is due, runs the timers, pumps; the next deadline."""
        for d in self.components:
            if self.comp_conn[d] is None and now >= self.comp_retry_at[d]:
                self.component_up(d, now)
        self.link.on_timer(now)
        for b in self.bridges.values():
            b.on_timer(now)
        self.pump(now)
        deadlines = [self.link.next_deadline(), now + 1.0]
        deadlines += [b.next_deadline() for b in self.bridges.values()]
        deadlines += [self.comp_retry_at[d] for d in self.components if self.comp_conn[d] is None]
        return min(deadlines)

    def watch_writes(self):
        """Component connections with output the socket did not take wait for
        writability; the owner calls this before select and unwatch_writes after."""
        for d, c in self.comp_conn.items():
            if c is not None and c.out and not c.connecting:
                self.sel.modify(c.sock, selectors.EVENT_READ | selectors.EVENT_WRITE,
                                ("component", d))

    def unwatch_writes(self):
        for d, c in self.comp_conn.items():
            if c is not None and not c.connecting:
                self.sel.modify(c.sock, selectors.EVENT_READ, ("component", d))

    def close(self):
        for d, comp in self.components.items():
            conn = self.comp_conn[d]
            if conn is not None:
                if not conn.connecting:
                    comp.close()
                    out, _ = comp.take_actions()
                    conn.write(out)
                self.drop_component(d, 0.0)

    def statistics(self):
        return {"time": round(time.time(), 3), "app": dict(self.counters),
                "link": self.link.counters(), "sis_bound": self.link.bound,
                "components": {d: {"ready": c.ready, "unconfirmed": c.unconfirmed,
                                   "rewritten": c.rewritten}
                               for d, c in self.components.items()},
                "bridges": {dl.address_to_string(n): b.counters()
                            for n, b in self.bridges.items()}}


class xmpp_bridge(gr.basic_block):
    """The XMPP-over-HF bridge on a node: message ports `sis_in`, `sis_out` (to and from
    the node, like any SIS client) and `stats` (a dict every `stats_interval` s, 0:
    never). `peers`: "DOMAIN=NODE ..." (blank- or comma-separated), a component each;
    `local_domains`: the local server's domains (blank- or comma-separated);
    `component`: the server's component port HOST:PORT; `options`: bridge options
    "name=value;..." (hfstack-xmpp --list-options)."""

    def __init__(self, peers, local_domains, secret, component="127.0.0.1:5347",
                 transport="x2x-slep", options="", retry=5.0, client_id=XMPP_CLIENT_ID,
                 stats_interval=60.0):
        gr.basic_block.__init__(self, "xmpp_bridge", None, None)
        self.message_port_register_in(pmt.intern("sis_in"))
        for port in ("sis_out", "stats"):
            self.message_port_register_out(pmt.intern(port))
        self.set_msg_handler(pmt.intern("sis_in"), self._from_node)
        from .pep.endpoint import parse_endpoint, proxy_error
        if not secret:
            raise bridge_error("the component secret is required")
        try:
            address = parse_endpoint(component, "component")
        except proxy_error as e:
            raise bridge_error(str(e))
        if retry <= 0:
            raise bridge_error("retry must be > 0")
        self.peers = parse_peers(peers)
        if isinstance(local_domains, str):
            local_domains = local_domains.replace(",", " ").split()
        self.options = bridge_options(options, transport, local_domains, self.peers)
        self.client_id = int(client_id)
        self.stats_interval = float(stats_interval)
        self.lock = threading.RLock()
        self.sel = selectors.DefaultSelector()
        self.core = bridge_core(self.options, self.peers, secret, address, transport,
                                float(retry), self._to_node, self.sel)
        self.thread = None
        self.running = False
        self.rebind_at = None

    def _to_node(self, frames):
        for f in frames:
            self.message_port_pub(pmt.intern("sis_out"),
                                  make_pdu(f, client_id=self.client_id, from_client=True))

    def start(self):
        self._wake_r, self._wake_w = socket.socketpair()
        self._wake_r.setblocking(False)
        self.sel.register(self._wake_r, selectors.EVENT_READ, ("wake", None))
        self.running = True
        with self.lock:
            self._bind()
        self.thread = threading.Thread(target=self._loop, name="xmpp_bridge", daemon=True)
        self.thread.start()
        return True

    def stop(self):
        self.running = False
        self._wake()
        if self.thread:
            self.thread.join(10)
            self.thread = None
        with self.lock:
            self.core.close()
            self._post_stats()
        self.sel.unregister(self._wake_r)
        self._wake_r.close()
        self._wake_w.close()
        return True

    def statistics(self):
        with self.lock:
            return self.core.statistics()

    def _wake(self):
        try:
            self._wake_w.send(b"x")
        except (OSError, AttributeError):
            pass

    def _bind(self):
        self.message_port_pub(pmt.intern("sis_out"),
                              make_pdu(b"", client_id=self.client_id, client_event="connected"))
        self.core.sis_up(time.monotonic())

    def _from_node(self, msg):
        what = node_message(msg, self.client_id)
        if what is None:
            return
        kind, frame = what
        with self.lock:
            now = time.monotonic()
            if kind == "disconnect":
                log.warning("the node dropped the XMPP bridge; binding again in %g s", REBIND_S)
                self.core.sis_down(now)
                self.rebind_at = now + REBIND_S
            elif kind == "connected":
                self.core.sis_up(now)
            elif self.core.sis_connected:
                self.core.on_sis_bytes(frame, now)
        self._wake()

    def _post_stats(self):
        self.message_port_pub(pmt.intern("stats"), pmt.to_pmt(self.core.statistics()))

    def _loop(self):
        stats = every(self.stats_interval, self._post_stats, time.monotonic())
        while self.running:
            with self.lock:
                now = time.monotonic()
                if self.rebind_at is not None and now >= self.rebind_at:
                    self.rebind_at = None
                    self._bind()
                deadline = self.core.step(now)
                if self.rebind_at is not None:
                    deadline = min(deadline, self.rebind_at)
                deadline = min(deadline, stats.due(now) or deadline)
                self.core.watch_writes()
            ready = self.sel.select(max(0.0, deadline - time.monotonic()))
            with self.lock:
                now = time.monotonic()
                self.core.unwatch_writes()
                for key, mask in ready:
                    what, domain = key.data
                    if what == "wake":
                        try:
                            self._wake_r.recv(4096)
                        except (BlockingIOError, InterruptedError):
                            pass
                    else:
                        self.core.component_event(domain, mask, now)
