#!/usr/bin/env python3
#
# Copyright 2026 gr-hfstack authors.
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""Two nodes, each behind a sis_server, with real TCP SIS clients: bind, send to the
other node, receive the indication and the confirmation, unbind; a garbage client;
32 clients at once. Waits are socket timeouts, never sleeps."""

from gnuradio import gr, gr_unittest
from gnuradio import hfstack
from gnuradio.hfstack.sis.client import bind_request, sis_client, unidata_request

dl = hfstack.dl

FAST = "mode=9600S;turnaround_s=0.2;response_margin_s=1;channel_access.mode=none"
TIME_SCALE = 20.0
TIMEOUT = 20.0
T = dl.sis_type


class qa_node_tcp(gr_unittest.TestCase):

    def setUp(self):
        self.tb = gr.top_block()
        self.nodes, self.servers = [], []
        for address in ("0.0.0.1", "0.0.0.2"):
            n = hfstack.node(address, FAST, TIME_SCALE)
            s = hfstack.sis_server("127.0.0.1", 0, 64)
            self.tb.msg_connect(s, "sis_out", n, "sis_in")
            self.tb.msg_connect(n, "sis_out", s, "sis_in")
            self.nodes.append(n)
            self.servers.append(s)
        a, b = self.nodes
        self.tb.msg_connect(a, "to_phy", b, "from_phy")
        self.tb.msg_connect(b, "to_phy", a, "from_phy")
        self.tb.start()
        self.clients = []

    def tearDown(self):
        for c in self.clients:
            c.close()
        self.tb.stop()
        self.tb.wait()

    def connect(self, node):
        c = sis_client("127.0.0.1", self.servers[node].port(), TIMEOUT)
        self.clients.append(c)
        return c

    def test_bind_send_receive_unbind(self):
        a, b = self.connect(0), self.connect(1)
        a.send(bind_request(3))
        b.send(bind_request(4))
        self.assertEqual(a.receive_type(T.bind_accepted).mtu, 2048)
        b.receive_type(T.bind_accepted)
        a.send(unidata_request(2, 4, b"across the HF link"))
        ind = b.receive_type(T.unidata_indication)
        self.assertEqual(ind.payload, b"across the HF link")
        self.assertEqual((ind.source.address, ind.source_sap), (1, 3))
        conf = a.receive_type(T.unidata_request_confirm)
        self.assertEqual(conf.destination.address, 2)
        # Unbind and leave: the node forgets the client (a new one may take the SAP).
        a.send(hfstack.make_sis("unbind_request"))
        a.close()
        c = self.connect(0)
        c.send(bind_request(3))
        self.assertEqual(c.receive_type(T.bind_accepted).sap, 3)

    def test_garbage_client_is_told_and_dropped_others_unaffected(self):
        good, bad = self.connect(0), self.connect(0)
        good.send(bind_request(1))
        bad.send(bind_request(2))
        good.receive_type(T.bind_accepted)
        bad.receive_type(T.bind_accepted)
        bad.send(b"GET / HTTP/1.1\r\nHost: example\r\n\r\n" * 200)
        rest = bad.read_until_closed()
        unbinds = [p for p in rest if p.type == T.unbind_indication]
        self.assertEqual(len(unbinds), 1)
        self.assertEqual(unbinds[0].reason, 3)  # too many invalid primitives
        # The well-behaved client still gets answers, and the freed SAP can be bound.
        good.send(hfstack.make_sis("keep_alive"))
        good.receive_type(T.keep_alive)
        again = self.connect(0)
        again.send(bind_request(2))
        again.receive_type(T.bind_accepted)

    def test_32_clients_at_once(self):
        clients = [self.connect(1) for _ in range(32)]
        # 16 SAPs: the first 16 clients get them; the rest ask for taken SAPs at the
        # same rank and are refused, each with its own answer.
        for i, c in enumerate(clients):
            c.send(bind_request(i % 16))
        answers = [c.receive() for c in clients]
        self.assertEqual([p.type for p in answers[:16]], [T.bind_accepted] * 16)
        self.assertEqual([p.sap for p in answers[:16]], list(range(16)))
        self.assertEqual([p.type for p in answers[16:]], [T.bind_rejected] * 16)
        self.assertEqual({p.reason for p in answers[16:]}, {3})  # SAP already allocated
        # Every bound client receives its own U_PDU from the other node.
        sender = self.connect(0)
        sender.send(bind_request(0))
        sender.receive_type(T.bind_accepted)
        for sap in range(16):
            sender.send(unidata_request(2, sap, bytes([sap]) * 50))
        for sap, c in enumerate(clients[:16]):
            self.assertEqual(c.receive_type(T.unidata_indication).payload, bytes([sap]) * 50)


if __name__ == "__main__":
    gr_unittest.run(qa_node_tcp)
