#
# Copyright 2026 gr-hfstack authors.
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""A minimal blocking STANAG 5066 SIS client over TCP, for scripts and tests.

    from gnuradio.hfstack.sis.client import bind_request, sis_client
    c = sis_client("127.0.0.1", 5066)
    c.send(bind_request(3))  # ARQ, node delivery confirmation
    print(c.receive())          # S_BIND_ACCEPTED ...
"""

import socket

from ..hfstack_python import dl


def bind_request(sap, tx_mode="arq", confirmation="node", rank=0):
    """S_BIND_REQUEST for `sap` with the named service (tx_mode: arq, non_arq,
    non_arq_with_errors, ignore; confirmation: none, node, client)."""
    p = dl.sis_primitive()
    p.type = dl.sis_type.bind_request
    p.sap, p.rank = sap, rank
    p.service_type.tx_mode = getattr(dl.sis_tx_mode, tx_mode)
    p.service_type.delivery_confirmation = getattr(dl.sis_delivery_confirmation, confirmation)
    return p


def unidata_request(destination, sap, payload, priority=0, ttl=0):
    """S_UNIDATA_REQUEST of `payload` to `sap` at node `destination` (an int or
    "a.b.c.d"), with the service of the client's binding."""
    if isinstance(destination, str):
        destination = dl.parse_address(destination)
    p = dl.sis_primitive()
    p.type = dl.sis_type.unidata_request
    p.destination = dl.sis_address(destination, 7)
    p.destination_sap, p.priority, p.ttl = sap, priority, ttl
    p.payload = payload
    return p


class sis_client:
    """One SIS connection. Every call gives up after `timeout` seconds (socket.timeout)."""

    def __init__(self, host="127.0.0.1", port=5066, timeout=10.0, rcvbuf=None):
        self.sock = socket.socket()
        if rcvbuf:  # before connecting, which also turns receive autotuning off
            self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
        self.sock.settimeout(timeout)
        self.sock.connect((host, port))
        self.reassembler = dl.sis_reassembler()
        self.pending = []

    def send(self, primitive_or_bytes):
        """Sends a dl.sis_primitive (encoded here) or raw bytes."""
        data = primitive_or_bytes
        if not isinstance(data, (bytes, bytearray)):
            data = dl.encode_sis(data)
        self.sock.sendall(data)

    def receive(self):
        """The next primitive; AssertionError if the server closes first."""
        while not self.pending:
            data = self.sock.recv(65536)
            if not data:
                raise AssertionError("server closed the connection")
            self.pending += self.reassembler.push(data)
        return self.pending.pop(0)

    def receive_type(self, sis_type):
        """The next primitive of `sis_type`, skipping others (keep-alives are answered)."""
        while True:
            p = self.receive()
            if p.type == sis_type:
                return p
            if p.type == dl.sis_type.keep_alive:
                self.send(p)

    def answer_keep_alives(self):
        """Reads what has arrived, without waiting: answers the node's keep-alives and
        keeps everything else for receive(). For a connection nobody reads meanwhile: a
        node unbinds a client that leaves its S_KEEP_ALIVE unanswered (Annex A: 10 s)."""
        timeout = self.sock.gettimeout()
        self.sock.setblocking(False)
        try:
            while True:
                data = self.sock.recv(65536)
                if not data:
                    break  # closed: the next receive() says so
                self.pending += self.reassembler.push(data)
        except BlockingIOError:
            pass
        finally:
            self.sock.settimeout(timeout)
        kept = []
        for p in self.pending:
            if p.type == dl.sis_type.keep_alive:
                self.send(p)
            else:
                kept.append(p)
        self.pending = kept

    def read_until_closed(self):
        """Every primitive until the server closes the connection."""
        got = []
        while True:
            data = self.sock.recv(65536)
            if not data:
                out, self.pending = self.pending + got, []
                return out
            got += self.reassembler.push(data)

    def close(self):
        self.sock.close()
