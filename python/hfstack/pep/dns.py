#
# Copyright 2026 gr-hfstack authors.
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""The HF-PEP's DNS side (docs/pep.md, DNS): a UDP listener and a TCP one on the same
address and port for local clients, whose queries the DNS proxy (hfstack.net.dns_proxy)
answers from its cache or sends across HF once, and this machine's resolver for
questions from the air. DNS over TCP (RFC 1035 4.2.2, RFC 7766): each message behind a
2-byte length, several queries on one connection (answered as they come, so possibly
out of order), a connection idle for DNS_TCP_IDLE_S closed, a length of 0 or over the
DNS proxy's 4096 bytes, or a message no server could answer, dropped with the
connection (counted); bounded connections, queries in progress and unsent bytes per
connection.

dns_service is the part of pep_proxy (proxy.py) that serves these sockets: it runs in
the proxy's thread, under its lock, with its selector and counters."""

import selectors
import socket

from .endpoint import loopback_hint, parse_endpoint, proxy_error

DNS_ADDRESS = 2                # the DNS proxy's SLEP extended address
LOOKUP_TIMEOUT_S = 5.0         # the system resolver's time to answer a question from the air
DNS_MAX_MESSAGE = 4096         # the DNS proxy's largest query (net/dns_proxy.h)
DNS_TCP_IDLE_S = 10.0          # RFC 7766 6.2.3: a DNS connection without progress closed
DNS_TCP_MAX_CONNECTIONS = 256  # DNS connections at once; more are closed at once
DNS_TCP_MAX_PENDING = 16       # queries of one connection in progress; more wait unread
DNS_TCP_MAX_OUTBOX = 65536     # answers not yet taken by a client; beyond, stop reading
MAX_LOOKUPS = 64               # questions from the air at the resolver at once; more: SERVFAIL


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


class dns_service:
    """pep_proxy's DNS listeners, DNS-over-TCP connections and resolver lookups."""

    def _open_dns_listeners(self):
        """Opens the UDP and TCP listeners `dns` names, if not open yet; proxy_error
        says which cannot be had."""
        if self.dns_spec and self.dns_socket is None:
            host, port = parse_endpoint(self.dns_spec, "dns")
            u = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_DGRAM)
            try:
                u.bind((host, port))
            except OSError as e:
                u.close()
                raise proxy_error(f"dns listener {self.dns_spec}: {e.strerror}"
                                  + loopback_hint(e, host))
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
                raise proxy_error(f"dns TCP listener {self.dns_spec}: {e.strerror}"
                                  + loopback_hint(e, host))
            t.setblocking(False)
            self.dns_listener = t

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
