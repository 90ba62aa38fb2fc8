#
# Copyright 2026 gr-hfstack authors.
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""What hfstack-kiss and hfstack-ardop share: non-blocking TCP connections with their
pending output, a SIS connection that is remade every `retry` seconds while its server
is away, and listening sockets for the host programs. One selector drives them all; the
protocols are kernels in hfstack.net."""

import logging
import selectors
import socket

from ..hfstack_python import dl

log = logging.getLogger("hfstack")


class connection:
    """One non-blocking TCP connection with its pending output, at most `max_pending`
    bytes of it (None: no limit) so that a peer that never reads cannot take the memory."""

    def __init__(self, sock, max_pending=None):
        self.sock, self.out, self.max_pending = sock, bytearray(), max_pending
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.sock.setblocking(False)

    def write(self, data):
        """Queues `data` and sends what the socket takes; False, dropping `data`, when
        that would hold more than max_pending bytes."""
        if self.max_pending is not None and len(self.out) + len(data) > self.max_pending:
            self.flush()
            if len(self.out) + len(data) > self.max_pending:
                return False
        self.out += data
        self.flush()
        return True

    def flush(self):
        while self.out:
            try:
                n = self.sock.send(self.out)
            except (BlockingIOError, InterruptedError):
                return
            except OSError:
                # Reset by the other end: the next read says so and the owner closes.
                self.out.clear()
                return
            del self.out[:n]

    def read(self):
        """Bytes received, b"" once the peer closed, None when nothing is there."""
        try:
            return self.sock.recv(65536)
        except (BlockingIOError, InterruptedError):
            return None
        except OSError:
            return b""

    def close(self):
        self.sock.close()


def listen(host, port):
    """A listening socket; OSError when the address is taken or not ours."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
        sock.listen(8)
    except OSError:
        sock.close()
        raise
    sock.setblocking(False)
    return sock


class sis_link:
    """A SIS client connection to HOST:PORT, remade every `retry` seconds while the
    server is away. `on_up()` runs once it is connected, `on_down()` when it is lost,
    `on_primitive(p)` for each primitive received."""

    def __init__(self, selector, endpoint, retry, name, on_up, on_down, on_primitive):
        self.sel, self.endpoint, self.retry, self.name = selector, endpoint, retry, name
        self.on_up, self.on_down, self.on_primitive = on_up, on_down, on_primitive
        self.conn = None
        self.retry_at = 0.0
        self.reassembler = None
        self.warned = False

    def poll(self, now):
        """Connects when it is time; the deadline of the next attempt, or None."""
        if self.conn is not None:
            return None
        if now < self.retry_at:
            return self.retry_at
        host, port = self.endpoint
        try:
            sock = socket.create_connection((host, port), timeout=5.0)
        except OSError as e:
            if not self.warned:
                log.warning("%s: SIS server %s:%d: %s; retrying every %g s", self.name, host,
                            port, e.strerror or e, self.retry)
                self.warned = True
            self.retry_at = now + self.retry
            return self.retry_at
        self.warned = False
        self.conn = connection(sock)
        self.reassembler = dl.sis_reassembler()
        self.sel.register(sock, selectors.EVENT_READ, self)
        log.info("%s: connected to the SIS server at %s:%d", self.name, host, port)
        self.on_up()
        return None

    def write(self, frame):
        if self.conn is not None:
            self.conn.write(frame)

    def readable(self, now):
        data = self.conn.read()
        if data is None:
            return
        if not data:
            log.warning("%s: SIS server connection lost; reconnecting", self.name)
            self.sel.unregister(self.conn.sock)
            self.conn.close()
            self.conn = None
            self.retry_at = now + self.retry
            self.on_down()
            return
        for p in self.reassembler.push(data):
            self.on_primitive(p)

    def close(self):
        if self.conn is not None:
            self.sel.unregister(self.conn.sock)
            self.conn.close()
            self.conn = None


def select_once(sel, conns, wait):
    """Waits up to `wait` seconds; the ready (key, mask) pairs. Connections with output
    pending wait for writability too, and are flushed when writable."""
    pending = [c for c in conns if c is not None and c.out]
    for c in pending:
        key = sel.get_key(c.sock)
        sel.modify(c.sock, selectors.EVENT_READ | selectors.EVENT_WRITE, key.data)
    try:
        ready = sel.select(max(0.0, wait))
    except InterruptedError:
        ready = []
    for c in pending:
        if sel.get_map().get(c.sock) is not None:
            sel.modify(c.sock, selectors.EVENT_READ, sel.get_key(c.sock).data)
            c.flush()
    return ready
