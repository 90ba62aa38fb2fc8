#
# Copyright 2026 gr-hfstack authors.
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""The HF-PEP's socket driver: TCP connections in and out, the protocol in the C++
kernel (hfstack.net.pep, lib/kernels/net/pep.h), SIS to a STANAG 5066 node.

    p = pep_proxy("peers=10.78.0.0/24=0.0.0.2", socks="127.0.0.1:1080",
                  redirect="0.0.0.0:3129")
    tb.msg_connect(p, "sis_out", node, "sis_in")
    tb.msg_connect(node, "sis_out", p, "sis_in")

How connections reach the near proxy (docs/pep.md):
  socks        SOCKS5 (RFC 1928, no authentication, CONNECT to an IP address or a
               host name): a browser or `curl --socks5-hostname` points at it; no
               root, no firewall rules.
  http_connect HTTP CONNECT (RFC 9110): `curl -x http://...`, browsers' HTTPS proxy.
  redirect     nftables nat REDIRECT for connections started on this machine; the
               original destination from SO_ORIGINAL_DST.
  transparent  nftables TPROXY for forwarded traffic (a gateway): IP_TRANSPARENT,
               the original destination from getsockname().
The far proxy connects to the destination itself, and looks up the host names that
SOCKS and CONNECT clients gave (resolve.py). A connection the far proxy could
not make is refused locally: SOCKS and CONNECT clients get the matching error reply,
intercepted ones a TCP reset (their handshake was already answered here).

DNS (`dns`, a UDP listener and a TCP one on the same address and port, with
`dns_peer`, the node whose proxy resolves): dns.py. SOCKS5 and HTTP CONNECT requests:
handshake.py. The nftables rules and policy routing that intercept connections:
rules.py.

One thread serves every socket (selectors), under one lock with the GNU Radio message
handler; the kernel's back-pressure decides when a socket is read.
"""

import errno
import logging
import selectors
import socket
import struct
import threading
import time

import pmt
from gnuradio import gr

from ..hfstack_python import net
from ..pdu import make_pdu, node_message
from .dns import (DNS_ADDRESS, DNS_TCP_IDLE_S, DNS_TCP_MAX_CONNECTIONS, MAX_LOOKUPS, dns_service,
                  dns_stream)
from .endpoint import loopback_hint, parse_endpoint, proxy_error
from .handshake import HTTP_REPLY, SOCKS_REPLY, handshake_service
from .resolve import MAX_RESOLVES, name_resolver
from .rules import OWN_MARK, local_addresses

log = logging.getLogger(__name__)

SO_ORIGINAL_DST = 80           # linux/netfilter_ipv4.h
SO_MARK = 36
IP6T_SO_ORIGINAL_DST = 80      # linux/netfilter_ipv6/ip6_tables.h
IP_TRANSPARENT = 19
REBIND_S = 5.0
CHUNK = 65536
ACCEPT_PAUSE_S = 1.0           # listeners rest this long after accept() ran out of descriptors
LOCAL_ADDRESSES_S = 60.0       # how often the host's own addresses are read again


def connect_status(err):
    """The PEP status for a failed connect's errno."""
    if err == errno.ECONNREFUSED:
        return "refused"
    if err == errno.ETIMEDOUT:
        return "timed_out"
    return "unreachable"


def descriptor_budget(soft_limit):
    """The sockets the PEP may hold with RLIMIT_NOFILE `soft_limit`: the rest (a
    quarter, at least 256) stays for the process's other files, the node's SIS server
    and its clients when the PEP runs inside hfstack-node."""
    return max(64, soft_limit - max(256, soft_limit // 4))


ABORT_ON_CLOSE = struct.pack("ii", 1, 0)  # SO_LINGER on, 0 s: close() sends RST


class connection:
    """One TCP connection the proxy serves."""
    __slots__ = ("id", "sock", "mode", "phase", "inbox", "outbox", "reading", "writing",
                 "eof_sent", "connecting", "closed", "source", "since")

    def __init__(self, sock, mode):
        self.id = None            # the kernel's, once it knows the connection
        self.sock = sock
        self.mode = mode          # socks, http_connect, redirect, transparent, far
        self.phase = "open"       # socks: greeting, request, waiting; http_connect: request, waiting
        self.inbox = b""          # handshake bytes
        self.outbox = b""         # bytes for the socket not yet sent
        self.reading = True
        self.writing = False      # the kernel has data for this socket
        self.eof_sent = False
        self.connecting = False
        self.closed = False
        self.source = None        # the client's address while its handshake is unfinished
        self.since = 0.0          # when it was accepted
        # Until the proxy closes it in order, an end of this process (a crash, kill -9)
        # resets the connection: the other end must not take a truncated stream for a
        # complete one.
        try:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, ABORT_ON_CLOSE)
        except OSError:
            pass


class pep_proxy(handshake_service, dns_service, gr.basic_block):
    """HF-PEP on a node: message ports `sis_in`, `sis_out` (to and from the node, like
    any SIS client) and `stats` (a dict of counters every `stats_interval` s)."""

    def __init__(self, options="", socks="", http_connect="", redirect="", transparent="",
                 client_id=0x7FFF000D, stats_interval=10.0, incarnation=None, dns="",
                 dns_peer="", dns_static=""):
        gr.basic_block.__init__(self, "pep_proxy", None, None)
        for port in ("sis_in",):
            self.message_port_register_in(pmt.intern(port))
        for port in ("sis_out", "stats"):
            self.message_port_register_out(pmt.intern(port))
        self.set_msg_handler(pmt.intern("sis_in"), self._from_node)
        try:
            # Grows from one start to the next, as SLEP needs (docs/slep.md, Restarts).
            self.kernel = net.pep(options, incarnation or (int(time.time()) & 0xFFFFFFFF) or 1)
        except ValueError as e:
            raise proxy_error(str(e))
        self.client_id = int(client_id)
        self.stats_interval = float(stats_interval)
        self.listen_specs = {"socks": socks, "http_connect": http_connect,
                             "redirect": redirect, "transparent": transparent}
        for mode, spec in self.listen_specs.items():
            if spec:
                parse_endpoint(spec, mode)
        from ..hfstack_python import dl
        self.dns_spec = dns
        if dns:
            parse_endpoint(dns, "dns")
            if not dns_peer:
                raise proxy_error("dns: give dns_peer, the node whose proxy resolves names")
        self.dns_peer = dl.parse_address(dns_peer) if dns_peer else None
        if dns_peer and self.dns_peer is None:
            raise proxy_error(f"dns_peer: {dns_peer!r} is not a STANAG 5066 address a.b.c.d")
        try:
            self.dns = net.dns_proxy(dns_static)
        except ValueError as e:
            raise proxy_error(f"dns_static: {e}")
        self.kernel.listen_datagrams(DNS_ADDRESS)
        self.dns_socket = None
        self.dns_listener = None  # DNS over TCP
        self.dns_clients = {}    # handle -> (address) of a UDP client
        self.dns_streams = {}    # socket fd -> dns_stream
        self.dns_tcp_handles = {}  # handle -> dns_stream of a query asked over TCP
        self.next_dns_handle = 1
        self.lookups = {}        # far side: socket fd -> (socket, request, deadline)
        self.resolver = name_resolver(self._wake)  # far side: host names of streams
        self.lock = threading.RLock()
        self.conns = {}          # socket fd -> connection
        self.by_id = {}          # kernel id -> connection
        self.listeners = {}      # socket fd -> (socket, mode)
        self.counters = {"accepted": 0, "handshake_errors": 0, "socket_errors": 0,
                         "dns_tcp_connections": 0, "dns_tcp_queries": 0, "dns_tcp_dropped": 0,
                         "dns_tcp_refused": 0, "dns_tcp_idle_closed": 0,
                         "handshake_timeouts": 0, "handshakes_evicted": 0,
                         "descriptors_refused": 0,
                         "accept_paused": 0, "lookups_refused": 0, "resolves_refused": 0}
        self.handshake_timeout_s = float(self.kernel.option("handshake_timeout_s"))
        self.max_handshakes = int(self.kernel.option("max_handshakes"))
        self.max_handshakes_per_source = int(self.kernel.option("max_handshakes_per_source"))
        self.handshakes = {}     # connection -> None, oldest first: unfinished SOCKS/CONNECT
        self.handshake_sources = {}  # client address -> {connection: None}, oldest first
        import resource
        self.socket_budget = descriptor_budget(resource.getrlimit(resource.RLIMIT_NOFILE)[0])
        self.accept_paused_until = None
        self.addresses_at = None     # when the host's own addresses are read again
        self.selector = None
        self.thread = None
        self.rebind_at = None
        self._noticed = set()

    # --- lifecycle -------------------------------------------------------------------

    def open_listeners(self):
        """Opens the listening sockets (also done by start()); proxy_error says which
        address cannot be had. Returns {mode: (host, port)} as bound."""
        bound = {}
        for mode, spec in self.listen_specs.items():
            if not spec or any(m == mode for _, m in self.listeners.values()):
                continue
            host, port = parse_endpoint(spec, mode)
            family = socket.AF_INET6 if ":" in host else socket.AF_INET
            s = socket.socket(family, socket.SOCK_STREAM)
            s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            try:
                if mode == "transparent":
                    s.setsockopt(socket.SOL_IP, IP_TRANSPARENT, 1)
                s.bind((host, port))
                s.listen(256)
            except OSError as e:
                s.close()
                raise proxy_error(f"{mode} listener {spec}: {e.strerror}"
                                  + (" (needs CAP_NET_ADMIN)" if mode == "transparent" else "")
                                  + loopback_hint(e, host))
            s.setblocking(False)
            self.listeners[s.fileno()] = (s, mode)
        self._open_dns_listeners()
        for s, mode in self.listeners.values():
            bound[mode] = s.getsockname()[:2]
        if self.dns_socket is not None:
            bound["dns"] = self.dns_socket.getsockname()[:2]
            bound["dns_tcp"] = self.dns_listener.getsockname()[:2]
        return bound

    def start(self):
        # Two sockets per connection (client side here, destination side there): a
        # thousand connections need more than the usual 1024 descriptors.
        import resource
        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        if soft < hard:
            try:
                resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
            except (ValueError, OSError):
                pass
        soft = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
        # Every socket of the PEP's within its budget, so that it never takes the
        # descriptors the node and its SIS server need: connections get what handshakes,
        # DNS and lookups may not use.
        self.socket_budget = descriptor_budget(soft)
        room = self.socket_budget - self.max_handshakes - DNS_TCP_MAX_CONNECTIONS - MAX_LOOKUPS - 16
        self.kernel.limit_connections(max(16, room))
        log.info("PEP: %d sockets at most (RLIMIT_NOFILE %d), %d connections",
                 self.socket_budget, soft, self.kernel.connection_limit())
        self._read_local_addresses()
        self.open_listeners()
        self._wake_r, self._wake_w = socket.socketpair()
        self._wake_r.setblocking(False)
        self.selector = selectors.DefaultSelector()
        self.selector.register(self._wake_r, selectors.EVENT_READ, None)
        for fd, (s, mode) in self.listeners.items():
            self.selector.register(s, selectors.EVENT_READ, ("listen", mode))
        if self.dns_socket is not None:
            self.selector.register(self.dns_socket, selectors.EVENT_READ, ("dns",))
            self.selector.register(self.dns_listener, selectors.EVENT_READ, ("dns_tcp",))
        self.running = True
        self.thread = threading.Thread(target=self._loop, name="pep_proxy", daemon=True)
        self.thread.start()
        with self.lock:
            self._bind()
        return True

    def stop(self):
        self.running = False
        self._wake()
        if self.thread:
            self.thread.join(10)
            self.thread = None
        self.resolver.stop()
        with self.lock:
            for c in list(self.conns.values()):
                self._close(c, reset=True)
            for s, _ in self.listeners.values():
                s.close()
            self.listeners.clear()
            for sock, _, _ in self.lookups.values():
                sock.close()
            self.lookups.clear()
            if self.dns_socket is not None:
                self.dns_socket.close()
                self.dns_socket = None
            for d in list(self.dns_streams.values()):
                self._dns_stream_close(d)
            if self.dns_listener is not None:
                self.dns_listener.close()
                self.dns_listener = None
            self._post_stats()
        if self.selector:
            self.selector.close()
            self._wake_r.close()
            self._wake_w.close()
            self.selector = None
        return True

    def _wake(self):
        try:
            self._wake_w.send(b"x")
        except (OSError, AttributeError):
            pass

    def _notice(self, key, text):
        if key not in self._noticed and len(self._noticed) < 1024:  # bounded: keys per source
            self._noticed.add(key)
            log.warning("%s (logged once)", text)

    def _now(self):
        return time.monotonic()

    def _read_local_addresses(self):
        """Tells the kernel this host's own addresses (refused as destinations unless
        named); again every LOCAL_ADDRESSES_S, as addresses come and go."""
        import subprocess
        try:
            self.kernel.set_local_addresses(local_addresses())
        except (proxy_error, ValueError, OSError, subprocess.SubprocessError) as e:
            self._notice("local_addresses", f"cannot read this host's addresses ({e}): only "
                                            "reserved ones are refused as destinations")
        self.addresses_at = self._now() + LOCAL_ADDRESSES_S

    def _sockets(self):
        return len(self.conns) + len(self.dns_streams) + len(self.lookups)

    # --- SIS side --------------------------------------------------------------------

    def _bind(self):
        self.message_port_pub(pmt.intern("sis_out"),
                              make_pdu(b"", client_id=self.client_id, client_event="connected"))
        self.kernel.start(self._now())
        self._dispatch()

    def _from_node(self, msg):
        what = node_message(msg, self.client_id)
        if what is None:
            return
        kind, frame = what
        with self.lock:
            now = self._now()
            if kind == "disconnect":
                log.warning("the node dropped the PEP; binding again in %g s", REBIND_S)
                self.kernel.on_disconnected(now)
                self.rebind_at = now + REBIND_S
            elif kind == "connected":
                self.kernel.start(now)
            else:
                why = self.kernel.on_sis_frame(frame, now)
                if why:
                    self._notice("sis_frame", f"undecodable SIS frame from the node: {why}")
            self._dispatch()
        self._wake()

    def _dispatch(self):
        """Carries out the kernel's actions (called with the lock held)."""
        for _ in range(8):  # DNS answers go out through the kernel again
            frames, tcp, notices, datagrams = self.kernel.take_actions()
            for n in notices:
                log.info("%s", n)
            for f in frames:
                self.message_port_pub(pmt.intern("sis_out"),
                                      make_pdu(f, client_id=self.client_id, from_client=True))
            for kind, cid, address, port, status in tcp:
                getattr(self, "_on_" + kind)(cid, address, port, status)
            now = self._now()
            for node, to, frm, data in datagrams:
                if to != DNS_ADDRESS or len(data) < 12:
                    continue
                if data[2] & 0x80:  # a response: ours, coming back
                    self.dns.on_answer(int.from_bytes(data[:2], "big"), data, now)
                else:
                    self.dns.on_question(data, node, now)
            if not self._dns_dispatch():
                break

    # --- kernel actions --------------------------------------------------------------

    def _on_resolve(self, cid, name, port, status):
        if not self.resolver.ask(cid, name, port):
            self.counters["resolves_refused"] += 1
            self._notice("resolves", f"{MAX_RESOLVES} host name lookups at once: refusing "
                                     "more until some finish")
            self.kernel.resolved(cid, [], self._now())

    def _on_connect(self, cid, address, port, status):
        family = socket.AF_INET6 if ":" in address else socket.AF_INET
        try:
            s = socket.socket(family, socket.SOCK_STREAM)
        except OSError as e:  # out of descriptors: the client hears "busy"
            self._notice("connect_socket", f"no socket for a connection out: {e.strerror}")
            self.kernel.connect_failed(cid, "busy", self._now())
            return
        s.setblocking(False)
        try:  # so interception rules on this machine let it pass (needs CAP_NET_ADMIN)
            s.setsockopt(socket.SOL_SOCKET, SO_MARK, OWN_MARK)
        except OSError:
            pass
        c = connection(s, "far")
        c.id = cid
        c.connecting = True
        c.reading = False
        err = s.connect_ex((address, port))
        if err not in (0, errno.EINPROGRESS):
            s.close()
            self.kernel.connect_failed(cid, connect_status(err), self._now())
            return
        self.conns[s.fileno()] = c
        self.by_id[cid] = c
        self._watch(c)

    def _on_connected(self, cid, *_):
        c = self.by_id.get(cid)
        if c is None:
            return
        if c.mode == "socks":
            c.outbox += b"\x05\x00\x00\x01" + bytes(6)
        elif c.mode == "http_connect":
            c.outbox += b"HTTP/1.1 200 Connection established\r\n\r\n"
        c.phase = "open"
        c.reading = self._offer(c)  # bytes the client sent behind its handshake
        self._watch(c)

    def _on_failed(self, cid, address, port, status):
        c = self.by_id.get(cid)
        if c is None:
            return
        if c.mode == "socks":
            c.outbox += bytes([5, SOCKS_REPLY.get(status, 1), 0, 1]) + bytes(6)
            self._flush_and_close(c)
        elif c.mode == "http_connect":
            line = HTTP_REPLY.get(status, "502 Bad Gateway")
            c.outbox += f"HTTP/1.1 {line}\r\nX-HF-PEP: {status}\r\n\r\n".encode()
            self._flush_and_close(c)
        else:
            self._close(c, reset=True)  # the client's handshake was answered here already

    def _on_data(self, cid, *_):
        c = self.by_id.get(cid)
        if c is not None:
            c.writing = True
            self._watch(c)

    def _on_resume(self, cid, *_):
        c = self.by_id.get(cid)
        if c is None or c.closed or c.phase != "open":
            return
        if self._offer(c):
            c.reading = True
        self._watch(c)

    def _on_finish(self, cid, *_):
        c = self.by_id.get(cid)
        if c is not None:
            c.writing = True  # flush, then shut the write side
            c.eof_sent = "due"
            self._watch(c)

    def _on_reset(self, cid, *_):
        c = self.by_id.get(cid)
        if c is not None:
            self._close(c, reset=True)

    def _on_closed(self, cid, *_):
        c = self.by_id.pop(cid, None)
        if c is not None and not c.closed:
            if c.outbox or c.eof_sent == "due":
                c.id = None
                self._flush_and_close(c)
            else:
                self._close(c, reset=False)

    # --- sockets ---------------------------------------------------------------------

    def _select(self, sock, events, data):
        """Watches `sock` for `events` (none: not at all), with `data` as its key's."""
        try:
            if events:
                try:
                    self.selector.modify(sock, events, data)
                except KeyError:
                    self.selector.register(sock, events, data)
            else:
                self.selector.unregister(sock)
        except (KeyError, ValueError, OSError, AttributeError):
            pass  # closed meanwhile, or not watched

    def _watch(self, c):
        if c.closed:
            return
        events = 0
        if c.reading:
            events |= selectors.EVENT_READ
        if c.outbox or c.writing or c.connecting or c.eof_sent == "due":
            events |= selectors.EVENT_WRITE
        self._select(c.sock, events, c)

    def _close(self, c, reset):
        if c.closed:
            return
        self._end_handshake(c)
        c.closed = True
        self._select(c.sock, 0, None)
        try:  # SO_LINGER 0: close() sends RST; else an orderly close
            c.sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER,
                              ABORT_ON_CLOSE if reset else struct.pack("ii", 0, 0))
        except OSError:
            pass
        self.conns.pop(c.sock.fileno(), None)
        c.sock.close()
        if c.id is not None:
            self.by_id.pop(c.id, None)

    def _flush_and_close(self, c):
        c.phase = "closing"
        c.reading = False
        self._watch(c)

    def _accept(self, listener, mode):
        try:
            s, peer = listener.accept()
        except OSError as e:
            self._accept_failed(e)
            return
        if self._sockets() >= self.socket_budget:
            self.counters["descriptors_refused"] += 1
            self._notice("budget", f"{self.socket_budget} sockets in use: new clients are "
                                   "closed at once")
            s.close()
            return
        s.setblocking(False)
        self.counters["accepted"] += 1
        c = connection(s, mode)
        c.since = self._now()
        self.conns[s.fileno()] = c
        if mode in ("socks", "http_connect"):
            self._start_handshake(c, peer[0])
        if mode in ("redirect", "transparent"):
            try:
                address, port = self._original_destination(s, mode)
            except OSError as e:
                self._notice("origdst", f"no original destination for an intercepted "
                                        f"connection ({e}): the nftables rules are missing?")
                self._close(c, reset=True)
                return
            self._open(c, address, port)
        else:
            c.phase = "greeting" if mode == "socks" else "request"
            self._watch(c)

    @staticmethod
    def _original_destination(s, mode):
        if mode == "transparent":
            return s.getsockname()[:2]
        if s.family == socket.AF_INET6:
            raw = s.getsockopt(socket.IPPROTO_IPV6, IP6T_SO_ORIGINAL_DST, 28)
            port = struct.unpack("!H", raw[2:4])[0]
            return socket.inet_ntop(socket.AF_INET6, raw[8:24]), port
        raw = s.getsockopt(socket.SOL_IP, SO_ORIGINAL_DST, 16)
        port = struct.unpack("!H", raw[2:4])[0]
        return socket.inet_ntoa(raw[4:8]), port

    def _accept_failed(self, e):
        """accept() out of descriptors: a listener stays readable, so the listeners rest
        ACCEPT_PAUSE_S instead of being polled in a spin."""
        if e.errno not in (errno.EMFILE, errno.ENFILE, errno.ENOBUFS, errno.ENOMEM):
            return
        self.counters["accept_paused"] += 1
        self._notice("emfile", f"accept: {e.strerror}; listeners rest {ACCEPT_PAUSE_S:g} s "
                               "at a time")
        self.accept_paused_until = self._now() + ACCEPT_PAUSE_S
        for ls, _ in self.listeners.values():
            self._select(ls, 0, None)
        if self.dns_listener is not None:
            self._select(self.dns_listener, 0, None)

    def _resume_accepting(self):
        self.accept_paused_until = None
        for s, mode in self.listeners.values():
            self._select(s, selectors.EVENT_READ, ("listen", mode))
        if self.dns_listener is not None:
            self._select(self.dns_listener, selectors.EVENT_READ, ("dns_tcp",))

    def _open(self, c, address, port):
        self._end_handshake(c)
        cid = self.kernel.accept(address, port, self._now())
        c.id = cid
        self.by_id[cid] = c
        if c.mode in ("socks", "http_connect"):
            c.phase = "waiting"
            c.reading = False  # nothing more before the reply
        self._dispatch()
        self._watch(c)

    def _readable(self, c):
        if c.phase in ("greeting", "request"):
            try:
                data = c.sock.recv(4096)
            except OSError:
                data = b""
            if not data:
                self._close(c, reset=False)
                return
            try:
                self._handshake(c, data)
            except (ValueError, OSError) as e:
                self.counters["handshake_errors"] += 1
                self._notice("handshake", f"bad proxy handshake from a client: {e}")
                self._close(c, reset=True)
                return
            self._watch(c)  # a reply to send
            return
        if c.id is None or c.phase != "open":
            return
        try:
            data = c.sock.recv(CHUNK)
        except (BlockingIOError, InterruptedError):
            return
        except OSError:
            self.counters["socket_errors"] += 1
            self.kernel.tcp_reset(c.id, self._now())
            self._close(c, reset=True)
            self._dispatch()
            return
        if data:
            c.inbox = data
            if not self._offer(c):
                c.reading = False  # the kernel says resume when it has room
        else:
            self.kernel.tcp_finished(c.id, self._now())
            c.reading = False
        self._dispatch()
        self._watch(c)

    def _offer(self, c):
        """Hands the bytes read but not yet taken to the kernel; True once all are in."""
        if c.inbox:
            taken = self.kernel.from_tcp(c.id, c.inbox, self._now())
            c.inbox = c.inbox[taken:]
        return not c.inbox

    def _writable(self, c):
        if c.connecting:
            c.connecting = False
            err = c.sock.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR)
            if err:
                self.kernel.connect_failed(c.id, connect_status(err), self._now())
                self._close(c, reset=False)
            else:
                c.reading = True
                self.kernel.connected(c.id, self._now())
            self._dispatch()
            self._watch(c)
            return
        while True:
            if not c.outbox and c.writing and c.id is not None:
                c.outbox = self.kernel.take_tcp_data(c.id, CHUNK, self._now())
                if not c.outbox:
                    c.writing = False
            if not c.outbox:
                break
            try:
                sent = c.sock.send(c.outbox)
            except (BlockingIOError, InterruptedError):
                break
            except OSError:
                self.counters["socket_errors"] += 1
                if c.id is not None:
                    self.kernel.tcp_reset(c.id, self._now())
                self._close(c, reset=True)
                self._dispatch()
                return
            c.outbox = c.outbox[sent:]
        if not c.outbox and c.eof_sent == "due" and not c.writing:
            c.eof_sent = True
            try:
                c.sock.shutdown(socket.SHUT_WR)
            except OSError:
                pass
        if c.phase == "closing" and not c.outbox:
            self._close(c, reset=False)
            return
        self._dispatch()
        self._watch(c)

    def _loop(self):
        next_stats = self._now() + self.stats_interval if self.stats_interval > 0 else None
        while self.running:
            with self.lock:
                deadline = min(self.kernel.next_deadline(), self.dns.next_deadline(),
                               *(d for _, _, d in self.lookups.values()),
                               *(d.idle_at for d in self.dns_streams.values()))
                if self.rebind_at is not None:
                    deadline = min(deadline, self.rebind_at)
                if self.handshakes:
                    deadline = min(deadline, next(iter(self.handshakes)).since
                                   + self.handshake_timeout_s)
                for at in (self.accept_paused_until, self.addresses_at):
                    if at is not None:
                        deadline = min(deadline, at)
                if next_stats is not None:
                    deadline = min(deadline, next_stats)
            timeout = None if deadline == float("inf") else max(0.0, deadline - self._now())
            events = self.selector.select(timeout)
            with self.lock:
                if not self.running:
                    return
                try:
                    for key, mask in events:
                        if key.data is None:
                            try:
                                while self._wake_r.recv(4096):
                                    pass
                            except (BlockingIOError, OSError):
                                pass
                        elif key.data == ("dns",):
                            self._dns_query()
                        elif key.data == ("lookup",):
                            self._lookup_answer(key.fileobj)
                        elif key.data == ("dns_tcp",):
                            self._dns_accept()
                        elif isinstance(key.data, dns_stream):
                            self._dns_stream_event(key.data, mask)
                        elif isinstance(key.data, tuple):
                            self._accept(key.fileobj, key.data[1])
                        else:
                            c = key.data
                            if not c.closed and mask & selectors.EVENT_WRITE:
                                self._writable(c)
                            if not c.closed and mask & selectors.EVENT_READ:
                                self._readable(c)
                    now = self._now()
                    for cid, addresses in self.resolver.take():
                        self.kernel.resolved(cid, addresses, now)
                    for sock, request, deadline in list(self.lookups.values()):
                        if now >= deadline:
                            self._end_lookup(sock)
                            self.dns.resolved(request, b"", now)
                    for d in [d for d in self.dns_streams.values() if now >= d.idle_at]:
                        if not d.pending:  # a query in progress is answered in time
                            self.counters["dns_tcp_idle_closed"] += 1
                            self._dns_stream_close(d)
                        else:
                            d.idle_at = now + DNS_TCP_IDLE_S
                    if now >= self.dns.next_deadline():
                        self.dns.on_timer(now)
                    if now >= self.kernel.next_deadline():
                        self.kernel.on_timer(now)
                    if self.rebind_at is not None and now >= self.rebind_at:
                        self.rebind_at = None
                        self._bind()
                    self._expire_handshakes(now)
                    if self.accept_paused_until is not None and now >= self.accept_paused_until:
                        self._resume_accepting()
                    if self.addresses_at is not None and now >= self.addresses_at:
                        self._read_local_addresses()
                    if next_stats is not None and now >= next_stats:
                        self._post_stats()
                        next_stats = now + self.stats_interval
                    self._dispatch()
                except Exception:  # loud, but the flowgraph goes on
                    log.exception("PEP driver error")

    def statistics(self):
        """The kernel's counters and the driver's, as one dict."""
        with self.lock:
            d = dict(self.kernel.counters())
            d.update({f"driver_{k}": v for k, v in self.counters.items()})
            d.update({f"dns_{k}": v for k, v in self.dns.counters().items()})
            d["sockets"] = len(self.conns)
            # DEFLATE's ratio over what this proxy wrote (1 without compression).
            d["compression_ratio"] = round(d["slep_plain_written"] / d["slep_wire_written"], 3) \
                if d["slep_wire_written"] else 1.0
            return d

    def connection_statistics(self):
        """One dict per connection the proxy serves now: the kernel's view (destination,
        peer, bytes each way, plain and over HF, compression ratio each way, connect time,
        bytes queued towards HF) and the socket's (its mode, bytes queued for it)."""
        out = []
        with self.lock:
            for cid, c in self.by_id.items():
                s = self.kernel.stats(cid)
                if s is None:
                    continue
                s["connection"] = cid
                s["mode"] = c.mode
                s["queued_for_socket"] = len(c.outbox)
                s["connect_s"] = round(s["established"] - s["opened"], 3) \
                    if s["established"] >= 0 else None
                for way in ("sent", "received"):
                    wire = s[f"wire_{way}"]
                    s[f"compression_{way}"] = round(s[f"plain_{way}"] / wire, 3) if wire else None
                out.append(s)
        return out

    def _post_stats(self):
        stats = self.statistics()
        meta = pmt.make_dict()
        for k, v in stats.items():
            meta = pmt.dict_add(meta, pmt.intern(k), pmt.from_double(float(v)))
        self.message_port_pub(pmt.intern("stats"), meta)
