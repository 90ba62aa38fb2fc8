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
  socks        SOCKS5 (RFC 1928, no authentication, CONNECT to an IP address): a
               browser or `curl --socks5` points at it; no root, no firewall rules.
  http_connect HTTP CONNECT (RFC 9110): `curl -x http://...`, browsers' HTTPS proxy.
  redirect     nftables nat REDIRECT for connections started on this machine; the
               original destination from SO_ORIGINAL_DST.
  transparent  nftables TPROXY for forwarded traffic (a gateway): IP_TRANSPARENT,
               the original destination from getsockname().
The far proxy connects to the destination itself. A connection the far proxy could
not make is refused locally: SOCKS and CONNECT clients get the matching error reply,
intercepted ones a TCP reset (their handshake was already answered here).

DNS (`dns`, a UDP listener, with `dns_peer`, the node whose proxy resolves): queries
are answered from the DNS proxy's cache or cross HF once (hfstack.net.dns_proxy); every
proxy also answers questions from the air with this machine's resolver (the first
nameserver of /etc/resolv.conf). Both ride the PEP's SLEP, extended address 2.

One thread serves every socket (selectors), under one lock with the GNU Radio message
handler; the kernel's back-pressure decides when a socket is read.
"""

import errno
import logging
import os
import selectors
import socket
import struct
import threading
import time

import pmt
from gnuradio import gr

from .hfstack_python import net
from .pdu import make_pdu, pdu_bytes

log = logging.getLogger(__name__)

SO_ORIGINAL_DST = 80           # linux/netfilter_ipv4.h
SO_MARK = 36
OWN_MARK = 0x5066              # the far proxy's own connections: never intercepted again
RULES_TABLE = "hfstack_pep"
DNS_ADDRESS = 2                # the DNS proxy's SLEP extended address
LOOKUP_TIMEOUT_S = 5.0         # the system resolver's time to answer a question from the air
IP6T_SO_ORIGINAL_DST = 80      # linux/netfilter_ipv6/ip6_tables.h
IP_TRANSPARENT = 19
REBIND_S = 5.0
CHUNK = 65536
MAX_HANDSHAKE = 8192           # bytes of a SOCKS or CONNECT request, at most

# SOCKS5 replies (RFC 1928 section 6) for the far proxy's answers.
SOCKS_REPLY = {"connected": 0, "busy": 1, "forbidden": 2, "no_peer": 3, "unreachable": 4,
               "refused": 5, "timed_out": 4, "bad_request": 1}
HTTP_REPLY = {"forbidden": "403 Forbidden", "busy": "503 Service Unavailable",
              "timed_out": "504 Gateway Timeout"}


class proxy_error(ValueError):
    """Options or listen addresses the proxy cannot use."""


def parse_endpoint(spec, what):
    """("host", port) from "HOST:PORT" or "[v6]:PORT"."""
    host, sep, port = spec.rpartition(":")
    if not sep or not port.isdigit() or not 0 <= int(port) < 65536:
        raise proxy_error(f"{what}: {spec!r} is not HOST:PORT")
    return host.strip("[]") or "0.0.0.0", int(port)


def system_nameserver(path="/etc/resolv.conf"):
    """The first nameserver of resolv.conf (port 53), or None."""
    try:
        with open(path) as f:
            for line in f:
                parts = line.split()
                if len(parts) >= 2 and parts[0] == "nameserver":
                    return parts[1]
    except OSError:
        pass
    return None


def connect_status(err):
    """The PEP status for a failed connect's errno."""
    if err == errno.ECONNREFUSED:
        return "refused"
    if err == errno.ETIMEDOUT:
        return "timed_out"
    return "unreachable"


def nft_ruleset(destinations, redirect_port=None, tproxy_port=None, block_quic=True):
    """The nftables table that sends TCP to `destinations` (prefixes) into the proxy:
    nat REDIRECT to `redirect_port` for connections this machine starts, TPROXY to
    `tproxy_port` for forwarded ones (with the policy route of docs/pep.md), UDP/443
    rejected so browsers fall back from QUIC to TCP. The proxy's own connections
    carry mark 0x5066 and pass."""
    by_family = (("ip", [d for d in destinations if ":" not in d]),
                 ("ip6", [d for d in destinations if ":" in d]))

    def chain(name, hook, priority, rule):
        """A base chain with `rule(family, prefixes)` for each family that has some."""
        body = [rule(f, p) for f, p in by_family if p] if rule else ["udp dport 443 reject"]
        return ([f"  chain {name} {{", f"    type {hook} priority {priority}; policy accept;"]
                + [f"    {r}" for r in body] + ["  }"])

    rules = [f"table inet {RULES_TABLE} {{"]
    if redirect_port:
        rules += chain("output", "nat hook output", -100, lambda f, p: (
            f"meta mark != {OWN_MARK:#x} {f} daddr {{ {', '.join(p)} }} "
            f"tcp dport != {redirect_port} redirect to :{redirect_port}"))
    if tproxy_port:
        rules += chain("prerouting", "filter hook prerouting", "mangle", lambda f, p: (
            f"{f} daddr {{ {', '.join(p)} }} meta l4proto tcp "
            f"tproxy {f} to :{tproxy_port} meta mark set 1 accept"))
    if block_quic:
        rules += chain("quic", "filter hook output", 0, None)
        rules += chain("quic_forward", "filter hook forward", 0, None)
    rules.append("}")
    return "\n".join(rules) + "\n"


def install_rules(ruleset):
    """Replaces the proxy's nftables table with `ruleset` (nft -f); proxy_error with
    nft's reason when it cannot (no nft, no CAP_NET_ADMIN)."""
    import subprocess
    remove_rules()
    try:
        done = subprocess.run(["nft", "-f", "-"], input=ruleset, capture_output=True, text=True,
                              timeout=20)
    except FileNotFoundError:
        raise proxy_error("nft is not installed (Debian: nftables)")
    if done.returncode != 0:
        raise proxy_error(f"nft refused the rules: {done.stderr.strip()}")


def remove_rules():
    """Deletes the proxy's nftables table if it is there."""
    import subprocess
    try:
        subprocess.run(["nft", "delete", "table", "inet", RULES_TABLE], capture_output=True,
                       timeout=20)
    except FileNotFoundError:
        pass


class connection:
    """One TCP connection the proxy serves."""
    __slots__ = ("id", "sock", "mode", "phase", "inbox", "outbox", "reading", "writing",
                 "eof_sent", "connecting", "closed")

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


class pep_proxy(gr.basic_block):
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
        from .hfstack_python import dl
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
        self.dns_clients = {}    # handle -> (address) of a UDP client
        self.lookups = {}        # far side: socket fd -> (socket, request, deadline)
        self.lock = threading.RLock()
        self.conns = {}          # socket fd -> connection
        self.by_id = {}          # kernel id -> connection
        self.listeners = {}      # socket fd -> (socket, mode)
        self.counters = {"accepted": 0, "handshake_errors": 0, "socket_errors": 0}
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
                                  + (" (needs CAP_NET_ADMIN)" if mode == "transparent" else ""))
            s.setblocking(False)
            self.listeners[s.fileno()] = (s, mode)
        if self.dns_spec and self.dns_socket is None:
            host, port = parse_endpoint(self.dns_spec, "dns")
            u = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_DGRAM)
            try:
                u.bind((host, port))
            except OSError as e:
                u.close()
                raise proxy_error(f"dns listener {self.dns_spec}: {e.strerror}")
            u.setblocking(False)
            self.dns_socket = u
        for s, mode in self.listeners.values():
            bound[mode] = s.getsockname()[:2]
        if self.dns_socket is not None:
            bound["dns"] = self.dns_socket.getsockname()[:2]
        return bound

    def start(self):
        # Two sockets per connection (client side here, destination side there): a
        # thousand connections need more than the usual 1024 descriptors.
        import resource
        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        if soft < hard:
            resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
        self.open_listeners()
        self._wake_r, self._wake_w = socket.socketpair()
        self._wake_r.setblocking(False)
        self.selector = selectors.DefaultSelector()
        self.selector.register(self._wake_r, selectors.EVENT_READ, None)
        for fd, (s, mode) in self.listeners.items():
            self.selector.register(s, selectors.EVENT_READ, ("listen", mode))
        if self.dns_socket is not None:
            self.selector.register(self.dns_socket, selectors.EVENT_READ, ("dns",))
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
        if key not in self._noticed:
            self._noticed.add(key)
            log.warning("%s (logged once)", text)

    def _now(self):
        return time.monotonic()

    # --- SIS side --------------------------------------------------------------------

    def _bind(self):
        self.message_port_pub(pmt.intern("sis_out"),
                              make_pdu(b"", client_id=self.client_id, client_event="connected"))
        self.kernel.start(self._now())
        self._dispatch()

    def _from_node(self, msg):
        if not pmt.is_pair(msg) or not pmt.is_dict(pmt.car(msg)):
            return
        meta = pmt.car(msg)
        cid = pmt.dict_ref(meta, pmt.intern("client_id"), pmt.PMT_NIL)
        if not pmt.is_integer(cid) or pmt.to_long(cid) != self.client_id:
            return  # another client's
        event = pmt.dict_ref(meta, pmt.intern("client_event"), pmt.PMT_NIL)
        with self.lock:
            now = self._now()
            if pmt.is_symbol(event) and pmt.symbol_to_string(event) == "disconnect":
                log.warning("the node dropped the PEP; binding again in %g s", REBIND_S)
                self.kernel.on_disconnected(now)
                self.rebind_at = now + REBIND_S
            elif pmt.is_symbol(event) and pmt.symbol_to_string(event) == "connected":
                self.kernel.start(now)
            elif pmt.is_u8vector(pmt.cdr(msg)):
                why = self.kernel.on_sis_frame(pdu_bytes(msg), now)
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

    def _dns_dispatch(self):
        """Carries out the DNS proxy's actions; True when some went to the kernel."""
        replies, forwards, lookups, back = self.dns.take_actions()
        now = self._now()
        for client, message in replies:
            address = self.dns_clients.pop(client, None)
            if address is not None and self.dns_socket is not None:
                try:
                    self.dns_socket.sendto(message, address)
                except OSError:
                    self.counters["socket_errors"] += 1
        for request, question in forwards:
            self.kernel.send_datagram(self.dns_peer, DNS_ADDRESS, DNS_ADDRESS, question, now)
        for request, query in lookups:
            self._lookup(request, query)
        for node, message in back:
            self.kernel.send_datagram(node, DNS_ADDRESS, DNS_ADDRESS, message, now)
        return bool(forwards or back)

    def _lookup(self, request, query):
        """Asks this machine's resolver; its answer (or nothing) comes back in the loop."""
        server = system_nameserver()
        if server is None:
            self._notice("resolver", "no nameserver in /etc/resolv.conf: questions from the "
                                     "air get SERVFAIL")
            self.dns.resolved(request, b"", self._now())
            return
        u = socket.socket(socket.AF_INET6 if ":" in server else socket.AF_INET, socket.SOCK_DGRAM)
        u.setblocking(False)
        try:
            u.connect((server, 53))
            u.send(query)
        except OSError:
            u.close()
            self.dns.resolved(request, b"", self._now())
            return
        self.lookups[u.fileno()] = (u, request, self._now() + LOOKUP_TIMEOUT_S)
        self.selector.register(u, selectors.EVENT_READ, ("lookup",))

    # --- kernel actions --------------------------------------------------------------

    def _on_connect(self, cid, address, port, status):
        family = socket.AF_INET6 if ":" in address else socket.AF_INET
        s = socket.socket(family, socket.SOCK_STREAM)
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

    def _watch(self, c):
        if c.closed:
            return
        events = 0
        if c.reading:
            events |= selectors.EVENT_READ
        if c.outbox or c.writing or c.connecting or c.eof_sent == "due":
            events |= selectors.EVENT_WRITE
        try:
            if events:
                try:
                    self.selector.modify(c.sock, events, c)
                except KeyError:
                    self.selector.register(c.sock, events, c)
            else:
                try:
                    self.selector.unregister(c.sock)
                except KeyError:
                    pass
        except (ValueError, OSError):
            pass

    def _close(self, c, reset):
        if c.closed:
            return
        c.closed = True
        try:
            self.selector.unregister(c.sock)
        except (KeyError, ValueError, OSError, AttributeError):
            pass
        if reset:
            try:  # SO_LINGER 0: close() sends RST
                c.sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
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
        except OSError:
            return
        s.setblocking(False)
        self.counters["accepted"] += 1
        c = connection(s, mode)
        self.conns[s.fileno()] = c
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

    def _open(self, c, address, port):
        cid = self.kernel.accept(address, port, self._now())
        c.id = cid
        self.by_id[cid] = c
        if c.mode in ("socks", "http_connect"):
            c.phase = "waiting"
            c.reading = False  # nothing more before the reply
        self._dispatch()
        self._watch(c)

    def _handshake(self, c, data):
        """SOCKS5 or HTTP CONNECT bytes before the connection opens."""
        c.inbox += data
        if len(c.inbox) > MAX_HANDSHAKE:
            raise ValueError("handshake too long")
        if c.mode == "socks" and c.phase == "greeting":
            if len(c.inbox) < 2:
                return
            if c.inbox[0] != 5:
                raise ValueError("not SOCKS5")
            n = c.inbox[1]
            if len(c.inbox) < 2 + n:
                return
            methods, c.inbox = c.inbox[2:2 + n], c.inbox[2 + n:]
            if 0 not in methods:
                c.outbox += b"\x05\xff"
                self._flush_and_close(c)
                return
            c.outbox += b"\x05\x00"
            c.phase = "request"
        if c.mode == "socks" and c.phase == "request":
            if len(c.inbox) < 5:
                return
            ver, cmd, _, atyp = c.inbox[:4]
            if ver != 5:
                raise ValueError("not SOCKS5")
            if atyp == 1:
                need, address = 10, None
            elif atyp == 4:
                need, address = 22, None
            elif atyp == 3:
                need = 7 + c.inbox[4]
            else:
                raise ValueError(f"SOCKS address type {atyp}")
            if len(c.inbox) < need:
                return
            if cmd != 1 or atyp == 3:
                # Only CONNECT; names are resolved by the client (socks5, not socks5h)
                # or, once it lands, by the DNS proxy: reply "not supported".
                code = 7 if cmd != 1 else 8
                c.outbox += bytes([5, code, 0, 1]) + bytes(6)
                self._notice(f"socks{code}", "SOCKS request refused: only CONNECT to an IP "
                                             "address (resolve names locally: socks5://, not socks5h://)")
                self._flush_and_close(c)
                return
            raw = c.inbox[4:need - 2]
            address = socket.inet_ntop(socket.AF_INET if atyp == 1 else socket.AF_INET6, raw)
            port = struct.unpack("!H", c.inbox[need - 2:need])[0]
            c.inbox = c.inbox[need:]
            self._open(c, address, port)
            return
        if c.mode == "http_connect" and c.phase == "request":
            end = c.inbox.find(b"\r\n\r\n")
            if end < 0:
                return
            head = c.inbox[:end].decode("latin-1").split("\r\n")[0].split()
            c.inbox = c.inbox[end + 4:]
            if len(head) != 3 or head[0] != "CONNECT":
                c.outbox += b"HTTP/1.1 405 Method Not Allowed\r\n\r\n"
                self._flush_and_close(c)
                return
            try:
                address, port = parse_endpoint(head[1], "CONNECT")
                socket.inet_pton(socket.AF_INET6 if ":" in address else socket.AF_INET, address)
            except (proxy_error, OSError):
                c.outbox += b"HTTP/1.1 400 Bad Request\r\nX-HF-PEP: CONNECT needs IP:PORT\r\n\r\n"
                self._flush_and_close(c)
                return
            self._open(c, address, port)

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
                               *(d for _, _, d in self.lookups.values()))
                if self.rebind_at is not None:
                    deadline = min(deadline, self.rebind_at)
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
                        elif isinstance(key.data, tuple):
                            self._accept(key.fileobj, key.data[1])
                        else:
                            c = key.data
                            if not c.closed and mask & selectors.EVENT_WRITE:
                                self._writable(c)
                            if not c.closed and mask & selectors.EVENT_READ:
                                self._readable(c)
                    now = self._now()
                    for sock, request, deadline in list(self.lookups.values()):
                        if now >= deadline:
                            self._end_lookup(sock)
                            self.dns.resolved(request, b"", now)
                    if now >= self.dns.next_deadline():
                        self.dns.on_timer(now)
                    if now >= self.kernel.next_deadline():
                        self.kernel.on_timer(now)
                    if self.rebind_at is not None and now >= self.rebind_at:
                        self.rebind_at = None
                        self._bind()
                    if next_stats is not None and now >= next_stats:
                        self._post_stats()
                        next_stats = now + self.stats_interval
                    self._dispatch()
                except Exception:  # loud, but the flowgraph goes on
                    log.exception("PEP driver error")

    def _dns_query(self):
        try:
            query, address = self.dns_socket.recvfrom(4096)
        except OSError:
            return
        handle = self.counters.setdefault("dns_queries", 0) + 1
        self.counters["dns_queries"] = handle
        self.dns_clients[handle] = address
        if len(self.dns_clients) > 10000:  # clients whose question never got an answer
            self.dns_clients.pop(next(iter(self.dns_clients)))
        self.dns.on_query(handle, query, self._now())

    def _lookup_answer(self, sock):
        entry = self.lookups.get(sock.fileno())
        if entry is None:
            return
        try:
            answer = sock.recv(4096)
        except OSError:
            answer = b""
        self._end_lookup(sock)
        self.dns.resolved(entry[1], answer, self._now())

    def _end_lookup(self, sock):
        self.lookups.pop(sock.fileno(), None)
        try:
            self.selector.unregister(sock)
        except (KeyError, ValueError):
            pass
        sock.close()

    def statistics(self):
        """The kernel's counters and the driver's, as one dict."""
        with self.lock:
            d = dict(self.kernel.counters())
            d.update({f"driver_{k}": v for k, v in self.counters.items()})
            d.update({f"dns_{k}": v for k, v in self.dns.counters().items()})
            d["sockets"] = len(self.conns)
            return d

    def _post_stats(self):
        stats = self.statistics()
        meta = pmt.make_dict()
        for k, v in stats.items():
            meta = pmt.dict_add(meta, pmt.intern(k), pmt.from_double(float(v)))
        self.message_port_pub(pmt.intern("stats"), meta)
