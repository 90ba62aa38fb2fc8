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

DNS (`dns`, a UDP listener and a TCP one on the same address and port, with
`dns_peer`, the node whose proxy resolves): queries are answered from the DNS proxy's
cache or cross HF once (hfstack.net.dns_proxy); every proxy also answers questions from
the air with this machine's resolver (the first nameserver of /etc/resolv.conf). Both
ride the PEP's SLEP, extended address 2. DNS over TCP (RFC 1035 4.2.2, RFC 7766): each
message behind a 2-byte length, several queries on one connection (answered as they
come, so possibly out of order), a connection idle for DNS_TCP_IDLE_S closed, a length
of 0 or over the DNS proxy's 4096 bytes, or a message no server could answer, dropped
with the connection (counted); bounded connections, queries in progress and unsent
bytes per connection.

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

from ..hfstack_python import net
from ..pdu import make_pdu, pdu_bytes

log = logging.getLogger(__name__)

SO_ORIGINAL_DST = 80           # linux/netfilter_ipv4.h
SO_MARK = 36
OWN_MARK = 0x5066              # the far proxy's own connections: never intercepted again
RULES_TABLE = "hfstack_pep"
DNS_ADDRESS = 2                # the DNS proxy's SLEP extended address
LOOKUP_TIMEOUT_S = 5.0         # the system resolver's time to answer a question from the air
IP6T_SO_ORIGINAL_DST = 80      # linux/netfilter_ipv6/ip6_tables.h
IP_TRANSPARENT = 19
TPROXY_MARK = 0x5067           # packets nftables TPROXY took: routed locally by
TPROXY_TABLE = 5066            # this table's "local default dev lo" route
ROUTE_PROTOCOL = 102           # marks the ip rules and routes we add (rt_protos: unused)
REBIND_S = 5.0
CHUNK = 65536
MAX_HANDSHAKE = 8192           # bytes of a SOCKS or CONNECT request, at most
DNS_MAX_MESSAGE = 4096         # the DNS proxy's largest query (net/dns_proxy.h)
DNS_TCP_IDLE_S = 10.0          # RFC 7766 6.2.3: a DNS connection without progress closed
DNS_TCP_MAX_CONNECTIONS = 256  # DNS connections at once; more are closed at once
DNS_TCP_MAX_PENDING = 16       # queries of one connection in progress; more wait unread
DNS_TCP_MAX_OUTBOX = 65536     # answers not yet taken by a client; beyond, stop reading
MAX_LOOKUPS = 64               # questions from the air at the resolver at once; more: SERVFAIL
ACCEPT_PAUSE_S = 1.0           # listeners rest this long after accept() ran out of descriptors
LOCAL_ADDRESSES_S = 60.0       # how often the host's own addresses are read again

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


def literal_address(name):
    """The IP address a SOCKS5 domain name (bytes) spells out, "[v6]" too, or None."""
    try:
        text = name.decode("ascii").strip("[]")
    except UnicodeDecodeError:
        return None
    for family in (socket.AF_INET, socket.AF_INET6):
        try:
            return socket.inet_ntop(family, socket.inet_pton(family, text))
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
    `tproxy_port` for forwarded ones (marked TPROXY_MARK, which the policy route of
    install_policy_routing delivers locally; unmarked connections to that port
    dropped), UDP/443 rejected so browsers fall back
    from QUIC to TCP. The proxy's own connections carry mark 0x5066 and pass."""
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
            f"tproxy {f} to :{tproxy_port} meta mark set {TPROXY_MARK:#x} accept"))
    if tproxy_port:
        # The transparent listener (on 0.0.0.0, as TPROXY needs) takes only what TPROXY
        # marked: a connection made to its port directly is dropped, so the gateway is
        # no open proxy to whoever reaches it.
        rules += ["  chain transparent_guard {",
                  "    type filter hook input priority 0; policy accept;",
                  f"    tcp dport {tproxy_port} meta mark != {TPROXY_MARK:#x} drop", "  }"]
    if block_quic:
        rules += chain("quic", "filter hook output", 0, None)
        rules += chain("quic_forward", "filter hook forward", 0, None)
    rules.append("}")
    return "\n".join(rules) + "\n"


def _ip(*args):
    """`ip ARGS`: (return code, stdout, stderr); proxy_error when ip is missing."""
    import subprocess
    try:
        done = subprocess.run(["ip", *args], capture_output=True, text=True, timeout=20)
    except FileNotFoundError:
        raise proxy_error("ip is not installed (Debian: iproute2)")
    return done.returncode, done.stdout, done.stderr.strip()


def _ip_json(*args):
    """`ip -j ARGS` parsed; [] for a routing table that does not exist yet."""
    import json
    code, out, err = _ip("-j", *args)
    if code != 0:
        if "table does not exist" in err:
            return []
        raise proxy_error(f"ip {' '.join(args)}: {err}")
    return json.loads(out or "[]")


def policy_routing_families(destinations):
    """"-4" and/or "-6": the IP versions among `destinations` (prefixes)."""
    return [f for f, present in (("-4", any(":" not in d for d in destinations)),
                                 ("-6", any(":" in d for d in destinations))) if present]


def install_policy_routing(families):
    """The policy route TPROXY needs, for each of `families` ("-4", "-6"): packets
    marked TPROXY_MARK look up table TPROXY_TABLE, whose default route is local
    (`ip rule add fwmark 0x5067 lookup 5066; ip route add local default dev lo table
    5066`). Idempotent: a rule or route already there (ours from an earlier run, or
    someone else's identical one) is left as it is and not added twice. What this adds
    carries protocol ROUTE_PROTOCOL, so remove_policy_routing() deletes only that. A
    table TPROXY_TABLE whose default route is something else is not touched:
    proxy_error."""
    for family in families:
        routes = [r for r in _ip_json(family, "route", "show", "table", str(TPROXY_TABLE))
                  if r.get("dst") == "default"]
        if routes and not any(r.get("type") == "local" and r.get("dev") == "lo" for r in routes):
            raise proxy_error(f"routing table {TPROXY_TABLE} ({family}) already has a default "
                              f"route that is not 'local default dev lo': not touching it")
        if not routes:
            code, _, err = _ip(family, "route", "add", "local", "default", "dev", "lo", "table",
                               str(TPROXY_TABLE), "proto", str(ROUTE_PROTOCOL))
            if code != 0:
                raise proxy_error(f"ip {family} route add local default dev lo table "
                                  f"{TPROXY_TABLE}: {err}")
        if not _ip_json(family, "rule", "show", "fwmark", f"{TPROXY_MARK:#x}", "lookup",
                        str(TPROXY_TABLE)):
            code, _, err = _ip(family, "rule", "add", "fwmark", f"{TPROXY_MARK:#x}", "lookup",
                               str(TPROXY_TABLE), "protocol", str(ROUTE_PROTOCOL))
            if code != 0:
                raise proxy_error(f"ip {family} rule add fwmark {TPROXY_MARK:#x} lookup "
                                  f"{TPROXY_TABLE}: {err}")
        log.info("TPROXY policy routing (%s): fwmark %#x lookup %d, local default dev lo",
                 family, TPROXY_MARK, TPROXY_TABLE)


def remove_policy_routing():
    """Deletes the rules and routes install_policy_routing added (protocol
    ROUTE_PROTOCOL), in both IP versions; others' are left alone."""
    for family in ("-4", "-6"):
        for _ in range(16):  # an identical rule added more than once (by hand, say)
            code, _, _ = _ip(family, "rule", "del", "fwmark", f"{TPROXY_MARK:#x}", "lookup",
                             str(TPROXY_TABLE), "protocol", str(ROUTE_PROTOCOL))
            if code != 0:
                break
        _ip(family, "route", "del", "local", "default", "dev", "lo", "table", str(TPROXY_TABLE),
            "proto", str(ROUTE_PROTOCOL))


def install_rules(destinations, redirect_port=None, tproxy_port=None):
    """Installs the interception of TCP to `destinations` (prefixes): replaces the
    proxy's nftables table with nft_ruleset()'s (nft -f), and with a TPROXY port also
    the policy routing TPROXY needs (install_policy_routing). proxy_error with the
    reason when it cannot (no nft, no CAP_NET_ADMIN, a table in the way)."""
    import subprocess
    remove_rules()
    try:
        done = subprocess.run(["nft", "-f", "-"], capture_output=True, text=True, timeout=20,
                              input=nft_ruleset(destinations, redirect_port, tproxy_port))
    except FileNotFoundError:
        raise proxy_error("nft is not installed (Debian: nftables)")
    if done.returncode != 0:
        raise proxy_error(f"nft refused the rules: {done.stderr.strip()}")
    if tproxy_port:
        try:
            install_policy_routing(policy_routing_families(destinations))
        except proxy_error:
            remove_rules()
            raise


def remove_rules():
    """Deletes the proxy's nftables table if it is there, and its TPROXY policy routing."""
    import subprocess
    try:
        subprocess.run(["nft", "delete", "table", "inet", RULES_TABLE], capture_output=True,
                       timeout=20)
    except FileNotFoundError:
        pass
    try:
        remove_policy_routing()
    except proxy_error:
        pass  # no ip: nothing of ours to remove


def descriptor_budget(soft_limit):
    """The sockets the PEP may hold with RLIMIT_NOFILE `soft_limit`: the rest (a
    quarter, at least 256) stays for the process's other files, the node's SIS server
    and its clients when the PEP runs inside hfstack-node."""
    return max(64, soft_limit - max(256, soft_limit // 4))


def local_addresses():
    """This host's own addresses (every interface's, `ip -j addr show`), as text."""
    out = []
    for link in _ip_json("addr", "show"):
        for a in link.get("addr_info", []):
            if a.get("local"):
                out.append(a["local"].split("%")[0])
    return out


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


class dns_stream:
    """One DNS-over-TCP client connection (RFC 7766)."""
    __slots__ = ("sock", "inbox", "outbox", "pending", "eof", "idle_at", "closed")

    def __init__(self, sock, now):
        self.sock = sock
        self.inbox = b""          # bytes of queries not yet complete
        self.outbox = b""         # length-prefixed answers not yet sent
        self.pending = set()      # handles of its queries the DNS proxy has not answered
        self.eof = False          # the client has half-closed
        self.idle_at = now + DNS_TCP_IDLE_S
        self.closed = False

    def wants_read(self):
        return (not self.eof and len(self.pending) < DNS_TCP_MAX_PENDING
                and len(self.outbox) < DNS_TCP_MAX_OUTBOX)


def dns_tcp_frames(inbox):
    """(messages, rest, problem): the complete length-prefixed DNS messages at the
    start of `inbox`, the bytes after them, and why the stream cannot go on (a length
    of 0 or over DNS_MAX_MESSAGE, a message shorter than a DNS header or a response)
    or None."""
    messages = []
    while len(inbox) >= 2:
        n = int.from_bytes(inbox[:2], "big")
        if n == 0 or n > DNS_MAX_MESSAGE:
            return messages, inbox, f"a DNS message of {n} bytes (0 or over {DNS_MAX_MESSAGE})"
        if len(inbox) < 2 + n:
            break
        message, inbox = inbox[2:2 + n], inbox[2 + n:]
        if n < 12 or message[2] & 0x80:
            return messages, inbox, ("a DNS message shorter than its header" if n < 12
                                     else "a DNS response where a query belongs")
        messages.append(message)
    return messages, inbox, None


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
        self.lock = threading.RLock()
        self.conns = {}          # socket fd -> connection
        self.by_id = {}          # kernel id -> connection
        self.listeners = {}      # socket fd -> (socket, mode)
        self.counters = {"accepted": 0, "handshake_errors": 0, "socket_errors": 0,
                         "dns_tcp_connections": 0, "dns_tcp_queries": 0, "dns_tcp_dropped": 0,
                         "dns_tcp_refused": 0, "dns_tcp_idle_closed": 0,
                         "handshake_timeouts": 0, "handshakes_evicted": 0,
                         "descriptors_refused": 0,
                         "accept_paused": 0, "lookups_refused": 0}
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
        if self.dns_spec and self.dns_listener is None:
            # The same address and port as the UDP listener (its port, if 0 was asked).
            host, port = self.dns_socket.getsockname()[:2]
            t = socket.socket(self.dns_socket.family, socket.SOCK_STREAM)
            t.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            try:
                t.bind((host, port))
                t.listen(64)
            except OSError as e:
                t.close()
                raise proxy_error(f"dns TCP listener {self.dns_spec}: {e.strerror}")
            t.setblocking(False)
            self.dns_listener = t
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
            stream = self.dns_tcp_handles.pop(client, None)
            if stream is not None:
                self._dns_stream_answer(stream, client, message)
                continue
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
        if len(self.lookups) >= MAX_LOOKUPS:
            self.counters["lookups_refused"] += 1
            self._notice("lookups", f"{MAX_LOOKUPS} questions from the air at the resolver "
                                    "at once: more get SERVFAIL")
            self.dns.resolved(request, b"", self._now())
            return
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

    def _start_handshake(self, c, source):
        """Counts an unfinished SOCKS/CONNECT request. Beyond max_handshakes_per_source
        the source's oldest is closed, beyond max_handshakes the oldest of all: a client
        that finishes its request at once is never the oldest, a silent one soon is."""
        mine = self.handshake_sources.setdefault(source, {})
        if len(mine) >= self.max_handshakes_per_source:
            self.counters["handshakes_evicted"] += 1
            self._notice(f"handshakes {source}",
                         f"{source} has {self.max_handshakes_per_source} unfinished proxy "
                         "requests: closing its oldest for each new one (logged once per source)")
            self._close(next(iter(mine)), reset=True)
        elif len(self.handshakes) >= self.max_handshakes:
            self.counters["handshakes_evicted"] += 1
            self._notice("handshakes", f"{self.max_handshakes} unfinished proxy requests: "
                                       "closing the oldest for each new one")
            self._close(next(iter(self.handshakes)), reset=True)
        c.source = source
        self.handshakes[c] = None
        self.handshake_sources.setdefault(source, {})[c] = None
        return True

    def _end_handshake(self, c):
        if c.source is None:
            return
        self.handshakes.pop(c, None)
        mine = self.handshake_sources.get(c.source)
        if mine is not None:
            mine.pop(c, None)
            if not mine:
                del self.handshake_sources[c.source]
        c.source = None

    def _expire_handshakes(self, now):
        """Closes the SOCKS/CONNECT clients that did not finish within handshake_timeout_s."""
        while self.handshakes:
            c = next(iter(self.handshakes))
            if now < c.since + self.handshake_timeout_s:
                break
            self.counters["handshake_timeouts"] += 1
            self._close(c, reset=True)

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
            if atyp == 3:
                # A name: only an IP address written out (Chromium sends even those as
                # names) is taken.
                address = literal_address(c.inbox[5:need - 2])
            if cmd != 1 or (atyp == 3 and address is None):
                # Only CONNECT; names are resolved by the client (socks5, not socks5h)
                # through the DNS proxy: reply "not supported".
                code = 7 if cmd != 1 else 8
                c.outbox += bytes([5, code, 0, 1]) + bytes(6)
                self._notice(f"socks{code}", "SOCKS request refused: only CONNECT to an IP "
                                             "address (resolve names locally: socks5://, not socks5h://)")
                self._flush_and_close(c)
                return
            if atyp != 3:
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

    def _dns_handle(self):
        handle = self.next_dns_handle
        self.next_dns_handle += 1
        return handle

    def _dns_query(self):
        try:
            query, address = self.dns_socket.recvfrom(4096)
        except OSError:
            return
        self.counters["dns_queries"] = self.counters.get("dns_queries", 0) + 1
        handle = self._dns_handle()
        self.dns_clients[handle] = address
        if len(self.dns_clients) > 10000:  # clients whose question never got an answer
            self.dns_clients.pop(next(iter(self.dns_clients)))
        self.dns.on_query(handle, query, self._now())

    # --- DNS over TCP ------------------------------------------------------------------

    def _dns_accept(self):
        try:
            s, _ = self.dns_listener.accept()
        except OSError as e:
            self._accept_failed(e)
            return
        if len(self.dns_streams) >= DNS_TCP_MAX_CONNECTIONS:
            self.counters["dns_tcp_refused"] += 1
            self._notice("dns_tcp_full", f"DNS over TCP: {DNS_TCP_MAX_CONNECTIONS} connections "
                                         "open, closing new ones at once")
            s.close()
            return
        s.setblocking(False)
        self.counters["dns_tcp_connections"] += 1
        d = dns_stream(s, self._now())
        self.dns_streams[s.fileno()] = d
        self._dns_stream_watch(d)

    def _dns_stream_watch(self, d):
        if d.closed:
            return
        self._select(d.sock, (selectors.EVENT_READ if d.wants_read() else 0)
                     | (selectors.EVENT_WRITE if d.outbox else 0), d)

    def _dns_stream_close(self, d):
        if d.closed:
            return
        d.closed = True
        self._select(d.sock, 0, None)
        self.dns_streams.pop(d.sock.fileno(), None)
        for handle in d.pending:  # their answers, when they come, go nowhere
            self.dns_tcp_handles.pop(handle, None)
        d.pending.clear()
        d.sock.close()

    def _dns_stream_event(self, d, mask):
        now = self._now()
        if mask & selectors.EVENT_WRITE and d.outbox:
            try:
                sent = d.sock.send(d.outbox)
                d.outbox = d.outbox[sent:]
                d.idle_at = now + DNS_TCP_IDLE_S
            except (BlockingIOError, InterruptedError):
                pass
            except OSError:
                self.counters["socket_errors"] += 1
                self._dns_stream_close(d)
                return
        if mask & selectors.EVENT_READ and d.wants_read():
            try:
                data = d.sock.recv(4096)
            except (BlockingIOError, InterruptedError):
                data = None
            except OSError:
                self.counters["socket_errors"] += 1
                self._dns_stream_close(d)
                return
            if data == b"":
                d.eof = True
                if d.inbox:  # a query cut short
                    self.counters["dns_tcp_dropped"] += 1
                    d.inbox = b""
            elif data:
                d.idle_at = now + DNS_TCP_IDLE_S
                d.inbox += data
                messages, d.inbox, problem = dns_tcp_frames(d.inbox)
                for message in messages:
                    handle = self._dns_handle()
                    self.counters["dns_tcp_queries"] += 1
                    self.dns_tcp_handles[handle] = d
                    d.pending.add(handle)
                    self.dns.on_query(handle, message, now)
                if problem:
                    self.counters["dns_tcp_dropped"] += 1
                    self._notice("dns_tcp_garbage", f"DNS over TCP: {problem} from a client; "
                                                    "its connection closed")
                    self._dns_stream_close(d)
                    return
        if d.eof and not d.pending and not d.outbox:
            self._dns_stream_close(d)
            return
        self._dns_stream_watch(d)

    def _dns_stream_answer(self, d, handle, message):
        d.pending.discard(handle)
        if d.closed:
            return
        d.outbox += len(message).to_bytes(2, "big") + message
        self._dns_stream_watch(d)

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
