#!/usr/bin/env python3
#
# Copyright 2026 gr-hfstack authors.
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""Limits of the host programs' sockets (hfstack-kiss, hfstack-ardop): a connection
whose peer never reads holds at most its limit of pending output, and the KISS port
refuses clients beyond MAX_CLIENTS, counted, while those connected stay."""

import selectors
import socket

from gnuradio import gr_unittest
from gnuradio.hfstack.apps import kiss
from gnuradio.hfstack.apps.host_sockets import connection

from test_support import free_port


class qa_host_sockets(gr_unittest.TestCase):

    def test_pending_output_is_bounded_and_resumes_once_read(self):
        with socket.create_server(("127.0.0.1", 0)) as server:
            far = socket.create_connection(server.getsockname(), timeout=5)
            near, _ = server.accept()
        self.addCleanup(far.close)
        conn = connection(near, max_pending=64 * 1024)
        self.addCleanup(conn.close)
        chunk = bytes(range(256)) * 16  # 4 KiB
        refused = 0
        for _ in range(2000):  # 8 MiB offered to a peer that does not read
            if not conn.write(chunk):
                refused += 1
            self.assertLessEqual(len(conn.out), 64 * 1024)
        self.assertGreater(refused, 0)
        far.setblocking(False)
        taken = bytearray()
        while True:  # the peer reads all it was sent: whole chunks, in order
            try:
                data = far.recv(1 << 20)
            except BlockingIOError:
                break
            taken += data
        self.assertEqual(len(taken) % len(chunk), 0)
        self.assertEqual(bytes(taken[:len(chunk)]), chunk)
        conn.flush()
        self.assertTrue(conn.write(chunk))

    def test_kiss_port_refuses_clients_beyond_its_limit(self):
        app = kiss.kiss_app(("127.0.0.1", free_port()), ("127.0.0.1", 0),
                            kiss.parse_routes([]))
        self.addCleanup(app.close)
        sel = selectors.DefaultSelector()
        self.addCleanup(sel.close)
        sel.register(app.listener, selectors.EVENT_READ)
        clients = []
        for _ in range(kiss.MAX_CLIENTS + 1):  # one at a time: the backlog is short
            clients.append(socket.create_connection(app.address, timeout=5))
            self.addCleanup(clients[-1].close)
            self.assertTrue(sel.select(timeout=5))
            app.accept()
        self.assertEqual(len(app.clients), kiss.MAX_CLIENTS)
        self.assertEqual(app.counters["clients_refused"], 1)
        self.assertEqual(app.counters["clients_accepted"], kiss.MAX_CLIENTS)
        self.assertEqual(clients[-1].recv(1), b"")  # the last one was closed
        clients[0].setblocking(False)
        with self.assertRaises(BlockingIOError):  # the first one is still open
            clients[0].recv(1)


if __name__ == "__main__":
    gr_unittest.run(qa_host_sockets)
