#
# Copyright 2026 gr-hfstack authors.
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""A non-blocking STANAG 5066 SIS client over TCP that drives one test client
(traffic/test_client.h, sim.test_client): the connection hfstack-console runs its
pings, throughput flows and echo over, for an event loop (selectors) to serve.

    link = sis_test_client("near", "127.0.0.1", 5066, config)   # connects; ValueError if not
    link.start(now)                                       # the client binds
    ...  # on readable: link.receive(now); on writable: link.send();
         # at link.deadline(): link.serve_timer(now)
    link.close()

The blocking client for scripts and tests is client.py beside this one.
"""

import math
import socket

from ..hfstack_python import dl, sim

T = dl.sis_type
UNIDATA_REQUESTS = (T.unidata_request, T.expedited_unidata_request)
PAYLOAD_HEADER = 8  # 'H' 'F' kind flow seq(4) in every test U_PDU (traffic/test_client.h)
ANSWER_KIND = 3     # kind byte of a ping's answer
# Encoded bytes waiting for the socket beyond which the sender is not asked for more:
# a server without DATA_FLOW_OFF would otherwise have us queue all of --bytes in memory.
BACKLOG_LIMIT = 256 * 1024
CONNECT_TIMEOUT_S = 10.0


class link_failure(Exception):
    """The connection ended, or carried bytes that are not SIS."""


class sis_test_client:
    """One SIS connection driving one test client: bytes in through the reassembler to
    the client, the client's primitives out through a send backlog (non-blocking)."""

    def __init__(self, role, host, port, config):
        self.role = role
        self.where = f"{host}:{port}"
        self.client = sim.test_client(config)  # validates before we connect
        self.framing_size = self.client.min_updu_size() - PAYLOAD_HEADER
        self.counts_answers = config.echo
        self.pings_answered = 0
        self.reassembler = dl.sis_reassembler()
        self.backlog = bytearray()
        self.started = False
        try:
            self.sock = socket.create_connection((host, port), timeout=CONNECT_TIMEOUT_S)
        except socket.gaierror as e:
            raise ValueError(f"cannot resolve host {host!r}: {e.strerror}")
        except ConnectionRefusedError:
            raise ValueError(f"cannot connect to {self.where}: connection refused")
        except socket.timeout:
            raise ValueError(f"cannot connect to {self.where}: no answer within "
                             f"{CONNECT_TIMEOUT_S:g} s")
        except OSError as e:
            raise ValueError(f"cannot connect to {self.where}: {e.strerror or e}")
        self.sock.setblocking(False)
        # Pings are single small frames: Nagle would add its delay to every round trip.
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def start(self, now):
        self.started = True
        self.client.start(now)
        self.collect()

    def collect(self):
        """Encodes what the client wants sent onto the backlog."""
        for p in self.client.take_outgoing():
            if self.counts_answers and p.type in UNIDATA_REQUESTS:
                payload = p.payload
                if len(payload) > self.framing_size + 2 and \
                        payload[self.framing_size + 2] == ANSWER_KIND:
                    self.pings_answered += 1
            self.backlog += dl.encode_sis(p)

    def paused(self):
        return len(self.backlog) > BACKLOG_LIMIT

    def deadline(self):
        """When the client next wants on_timer (protocol seconds); inf while it is not
        started or the socket is behind (then the socket wakes us, not the clock)."""
        if not self.started or self.paused():
            return math.inf
        return self.client.next_deadline()

    def serve_timer(self, now):
        if self.deadline() <= now:
            self.client.on_timer(now)
            self.collect()

    def io(self, call, *args):
        """call(*args) on the socket; None when it would block; link_failure when the
        connection is gone."""
        try:
            return call(*args)
        except (BlockingIOError, InterruptedError):
            return None
        except (ConnectionResetError, BrokenPipeError):
            raise link_failure(f"server {self.where} closed the connection (reset)")
        except OSError as e:
            raise link_failure(f"connection to {self.where} lost: {e.strerror or e}")

    def receive(self, now):
        data = self.io(self.sock.recv, 65536)
        if data is None:
            return
        if not data:
            raise link_failure(f"server {self.where} closed the connection")
        primitives = self.reassembler.push(data)
        c = self.reassembler.counters()
        if c.garbage_bytes or c.decode_errors or c.oversized:
            why = (self.reassembler.last_error()
                   or f"{c.garbage_bytes} bytes without a 90 EB preamble")
            raise link_failure(f"{self.where} sent something that is not STANAG 5066 SIS: {why}")
        for p in primitives:
            self.client.on_primitive(p, now)
        self.collect()

    def send(self):
        sent = self.io(self.sock.send, self.backlog)
        if sent:
            del self.backlog[:sent]

    def close(self):
        """S_UNBIND_REQUEST when it can follow a whole frame at once, then close: the
        server unbinds a closed connection anyway, this only says it politely."""
        try:
            if self.started and not self.backlog:
                self.sock.settimeout(1.0)
                self.sock.sendall(dl.encode_sis(dl.sis_primitive(T.unbind_request)))
        except OSError:
            pass
        self.sock.close()
