#!/usr/bin/env python3
#
# Copyright 2026 gr-hfstack authors.
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""sis_server block: real TCP clients against a stand-in node; framing, client ids,
connection events, garbage handling, refused ports and stopping with clients attached."""

import socket
import threading

import pmt
from gnuradio import gr, gr_unittest
from gnuradio import hfstack
from gnuradio.hfstack.sis.client import sis_client

dl = hfstack.dl
T = dl.sis_type
TIMEOUT = 10.0  # bound on every wait; the happy path takes milliseconds


def meta_value(meta, key):
    v = pmt.dict_ref(meta, pmt.intern(key), pmt.PMT_NIL)
    if pmt.is_null(v):
        return None
    if pmt.is_symbol(v):
        return pmt.symbol_to_string(v)
    return pmt.to_python(v)


class stand_in_node(gr.basic_block):
    """Records every PDU from the server; answers S_BIND_REQUEST with S_BIND_ACCEPTED
    (mtu = 1000 + 100 * rank + sap, so each client can check it got its own answer) and
    a fatal "invalid" event with S_UNBIND_INDICATION (reason 3) and "disconnect"."""

    def __init__(self, answer_fatal=True):
        gr.basic_block.__init__(self, "stand_in_node", None, None)
        self.answer_fatal = answer_fatal
        self.records = []
        self.cond = threading.Condition()
        self.message_port_register_in(pmt.intern("sis_in"))
        self.message_port_register_out(pmt.intern("sis_out"))
        self.set_msg_handler(pmt.intern("sis_in"), self.handle)

    def handle(self, msg):
        meta = pmt.car(msg)
        r = {key: meta_value(meta, key)
             for key in ("client_id", "client_event", "from_client", "reason", "fatal",
                         "delivery", "reports_written")}
        r["data"] = hfstack.pdu_bytes(msg)
        with self.cond:
            self.records.append(r)
            self.cond.notify_all()
        cid = r["client_id"]
        if r["client_event"] is None:
            p = dl.decode_sis(r["data"])
            if p.type == T.bind_request:
                answer = hfstack.make_sis("bind_accepted", sap=p.sap,
                                          mtu=1000 + 100 * p.rank + p.sap)
                self.send(dl.encode_sis(answer), client_id=cid)
        elif r["client_event"] == "invalid" and r["fatal"] and self.answer_fatal:
            unbind = hfstack.make_sis("unbind_indication", reason=3)
            self.send(dl.encode_sis(unbind), client_id=cid)
            self.send(b"", client_id=cid, client_event="disconnect",
                      reason="too many invalid primitives")

    def send(self, data, **meta):
        self.message_port_pub(pmt.intern("sis_out"), hfstack.make_pdu(data, **meta))

    def wait_for(self, predicate):
        """Waits until predicate(records) holds; returns the records."""
        with self.cond:
            ok = self.cond.wait_for(lambda: predicate(self.records), timeout=TIMEOUT)
            assert ok, f"stand-in node: condition not met; records: {self.records}"
            return list(self.records)

    def events(self, cid):
        with self.cond:
            return [r["client_event"] for r in self.records
                    if r["client_id"] == cid and r["client_event"]]


def bind_request(sap=3, rank=0):
    return dl.encode_sis(hfstack.make_sis("bind_request", sap=sap, rank=rank))


class qa_sis_server(gr_unittest.TestCase):

    def setUp(self):
        self.clients = []
        self.started = False

    def tearDown(self):
        for c in self.clients:
            c.close()
        if self.started:
            self.tb.stop()
            self.tb.wait()

    def start(self, max_clients=64, answer_fatal=True):
        self.tb = gr.top_block()
        self.server = hfstack.sis_server("127.0.0.1", 0, max_clients)
        self.node = stand_in_node(answer_fatal)
        self.tb.msg_connect(self.server, "sis_out", self.node, "sis_in")
        self.tb.msg_connect(self.node, "sis_out", self.server, "sis_in")
        self.tb.start()
        self.started = True
        self.assertNotEqual(self.server.port(), 0)

    def connect(self, rcvbuf=None):
        c = sis_client("127.0.0.1", self.server.port(), TIMEOUT, rcvbuf)
        self.clients.append(c)
        return c

    def client_ids(self):
        with self.node.cond:
            return [r["client_id"] for r in self.node.records if r["client_event"] == "connected"]

    def test_bind_split_across_sends(self):
        self.start()
        c = self.connect()
        frame = bind_request(sap=5, rank=2)
        c.sock.sendall(frame[:3])
        self.node.wait_for(lambda rs: any(r["client_event"] == "connected" for r in rs))
        c.sock.sendall(frame[3:])
        answer = c.receive()
        self.assertEqual(answer.type, T.bind_accepted)
        self.assertEqual((answer.sap, answer.mtu), (5, 1205))

        records = self.node.wait_for(lambda rs: len(rs) >= 2)
        self.assertEqual(records[0]["client_event"], "connected")
        cid = records[0]["client_id"]
        self.assertEqual(cid, 1)
        self.assertEqual(records[1]["client_id"], cid)
        self.assertIs(records[1]["from_client"], True)
        self.assertEqual(records[1]["data"], frame)
        self.assertEqual(self.server.clients(), 1)

        c.close()
        self.node.wait_for(lambda rs: any(r["client_event"] == "closed" for r in rs))
        self.assertEqual(self.node.events(cid), ["connected", "closed"])

    def test_32_clients_each_get_their_own_answer(self):
        self.start()
        clients = [self.connect() for _ in range(32)]
        for i, c in enumerate(clients):
            c.sock.sendall(bind_request(sap=i % 16, rank=i // 16))
        for i, c in enumerate(clients):
            answer = c.receive()
            self.assertEqual(answer.type, T.bind_accepted)
            self.assertEqual((answer.sap, answer.mtu), (i % 16, 1000 + 100 * (i // 16) + i % 16))
            self.assertEqual(c.reassembler.buffered(), 0)
            self.assertEqual(c.pending, [])
        ids = self.client_ids()
        self.assertEqual(sorted(ids), list(range(1, 33)))
        binds = [r for r in self.node.records if r["client_event"] is None]
        self.assertEqual(sorted(r["client_id"] for r in binds), list(range(1, 33)))
        self.assertEqual(self.server.clients(), 32)

    def test_garbage_client_is_unbound_and_dropped(self):
        self.start()
        good = self.connect()
        good.sock.sendall(bind_request(sap=1))
        self.assertEqual(good.receive().type, T.bind_accepted)

        bad = self.connect()
        junk = b"GET / HTTP/1.1\r\nHost: localhost:5066\r\nUser-Agent: curl/7.88\r\n\r\n"
        bad.sock.sendall((junk * (5000 // len(junk) + 1))[:5000])
        got = bad.read_until_closed()
        self.assertEqual([p.type for p in got], [T.unbind_indication])
        self.assertEqual(got[0].reason, 3)

        records = self.node.wait_for(
            lambda rs: any(r["client_event"] == "closed" for r in rs))
        invalid = [r for r in records if r["client_event"] == "invalid"]
        self.assertTrue(invalid)
        self.assertIs(invalid[-1]["fatal"], True)
        self.assertTrue(all(r["fatal"] is False for r in invalid[:-1]))
        self.assertIn("bytes without SIS sync", invalid[-1]["reason"])
        bad_id = invalid[-1]["client_id"]
        self.assertEqual(self.node.events(bad_id)[-1], "closed")

        # The well-behaved client is unaffected.
        good.sock.sendall(bind_request(sap=2))
        answer = good.receive()
        self.assertEqual((answer.type, answer.sap), (T.bind_accepted, 2))

    def test_undecodable_frames_reported_then_fatal(self):
        self.start()
        c = self.connect()
        bad_frame = bytes.fromhex("90EB00000211FF")  # S_KEEP_ALIVE with a trailing byte
        c.sock.sendall(bad_frame + bind_request(sap=4))
        self.assertEqual(c.receive().sap, 4)
        records = self.node.wait_for(lambda rs: any(r["client_event"] == "invalid" for r in rs))
        invalid = [r for r in records if r["client_event"] == "invalid"]
        self.assertEqual(len(invalid), 1)
        self.assertIs(invalid[0]["fatal"], False)
        self.assertRegex(invalid[0]["reason"], "^undecodable S_KEEP_ALIVE: 1 trailing bytes")

        c.sock.sendall(bad_frame * 8)  # 9 in all: more than 8 is fatal
        self.assertEqual([p.type for p in c.read_until_closed()], [T.unbind_indication])
        records = self.node.wait_for(lambda rs: rs[-1]["client_event"] == "closed")
        invalid = [r for r in records if r["client_event"] == "invalid"]
        self.assertIs(invalid[-1]["fatal"], True)

    def test_fatal_client_closed_without_node_answer(self):
        self.start(answer_fatal=False)
        bad = self.connect()
        bad.sock.sendall(b"\x00" * 5000)
        self.assertEqual(bad.read_until_closed(), [])  # within the 2 s safety net
        records = self.node.wait_for(lambda rs: any(r["client_event"] == "closed" for r in rs))
        self.assertTrue(any(r["fatal"] is True for r in records))

    def test_disconnect_unknown_client_is_dropped(self):
        self.start()
        self.node.send(bind_request(), client_id=77)
        self.node.send(b"", client_id=78, client_event="disconnect", reason="x")
        c = self.connect()  # the server keeps serving
        c.sock.sendall(bind_request(sap=6))
        self.assertEqual(c.receive().sap, 6)

    def test_client_that_does_not_read_is_dropped(self):
        self.start()
        self.connect(rcvbuf=4096)
        records = self.node.wait_for(lambda rs: rs and rs[-1]["client_event"] == "connected")
        cid = records[-1]["client_id"]
        meta = pmt.dict_add(pmt.make_dict(), pmt.intern("client_id"), pmt.from_long(cid))
        for _ in range(16):  # 16 MiB: more than the socket buffers plus the 4 MiB queue
            self.node.message_port_pub(pmt.intern("sis_out"),
                                       pmt.cons(meta, pmt.make_u8vector(1 << 20, 0)))
        self.node.wait_for(lambda rs: rs[-1]["client_event"] == "closed")
        self.assertEqual(self.server.clients(), 0)

    def test_numbered_primitives_are_reported_written_or_dropped(self):
        # The node's journal follows each numbered delivery until it reaches the socket.
        self.start()
        c = self.connect()
        records = self.node.wait_for(lambda rs: rs and rs[-1]["client_event"] == "connected")
        self.assertIs(records[-1]["reports_written"], True)
        cid = records[-1]["client_id"]
        indication = dl.encode_sis(hfstack.make_sis("keep_alive"))
        self.node.send(indication, client_id=cid, delivery=5)
        self.assertEqual(c.receive().type, T.keep_alive)
        self.node.wait_for(lambda rs: any(r["client_event"] == "written" for r in rs))
        settled = [(r["client_event"], r["delivery"]) for r in self.node.records
                   if r["client_event"] in ("written", "dropped")]
        self.assertEqual(settled, [("written", 5)])

        # A client that does not read: what reached its socket is written, the rest
        # dropped with it; every number is reported once.
        self.connect(rcvbuf=4096)
        records = self.node.wait_for(
            lambda rs: [r["client_event"] for r in rs].count("connected") == 2)
        slow = records[-1]["client_id"]
        numbers = list(range(10, 26))
        for n in numbers:  # 16 MiB: more than the socket buffers plus the 4 MiB queue
            self.node.send(bytes(1 << 20), client_id=slow, delivery=n)
        self.node.wait_for(lambda rs: sum(r["client_event"] in ("written", "dropped") and
                                          r["client_id"] == slow for r in rs) == len(numbers))
        outcomes = {r["delivery"]: r["client_event"] for r in self.node.records
                    if r["client_id"] == slow and r["client_event"] in ("written", "dropped")}
        self.assertEqual(sorted(outcomes), numbers)
        self.assertIn("dropped", outcomes.values())

        # A client that has gone: dropped.
        c.close()
        self.node.wait_for(
            lambda rs: any(r["client_event"] == "closed" and r["client_id"] == cid for r in rs))
        self.node.send(indication, client_id=cid, delivery=99)
        records = self.node.wait_for(lambda rs: any(r["delivery"] == 99 for r in rs))
        self.assertEqual([r["client_event"] for r in records if r["delivery"] == 99],
                         ["dropped"])

    def test_extra_connections_are_refused(self):
        self.start(max_clients=2)
        a, b = self.connect(), self.connect()
        for c in (a, b):
            c.sock.sendall(bind_request())
            c.receive()
        extra = self.connect()
        # A client beyond max_clients is told why (not enough resources) before the close; the client's
        # own bind, sent at once, does not turn the close into a reset.
        extra.sock.sendall(bind_request())
        refusal = extra.receive()
        self.assertEqual((refusal.type, refusal.reason), (T.bind_rejected, 1))
        self.assertEqual(extra.sock.recv(16), b"")
        self.assertEqual(sorted(self.client_ids()), [1, 2])

    def test_oversized_unidata_request_is_rejected_and_never_parsed(self):
        # A 5,000-byte U_PDU holding a whole UNIDATA_REQUEST frame; the
        # server used to hunt for a sync inside it and pass the inner frame to the node.
        self.start()
        c = self.connect()
        c.sock.sendall(bind_request(sap=2))
        c.receive()
        inner = dl.encode_sis(hfstack.make_sis("unidata_request", destination_sap=9,
                                               payload=b"executed?"))
        big = hfstack.make_sis("unidata_request", destination_sap=6, payload=b"")
        big.payload = (inner * 200)[:5000]
        frame = dl.encode_sis(big)
        self.assertGreater(len(frame), dl.sis_default_max_frame)
        keep_alive = dl.encode_sis(dl.sis_primitive(T.keep_alive))
        c.sock.sendall(frame + keep_alive)
        answer = c.receive()
        self.assertEqual((answer.type, answer.reason, answer.destination_sap),
                         (T.unidata_request_rejected, 4, 6))
        records = self.node.wait_for(
            lambda rs: any(r["client_event"] is None and
                           dl.decode_sis(r["data"]).type == T.keep_alive for r in rs))
        frames = [dl.decode_sis(r["data"]) for r in records if r["client_event"] is None]
        self.assertEqual([f.type for f in frames], [T.bind_request, T.keep_alive])
        self.assertNotIn("invalid", self.node.events(1))

    def test_undecodable_bind_is_answered(self):
        # A BIND_REQUEST with a 2-byte body used to get no reply at all.
        self.start()
        c = self.connect()
        c.sock.sendall(bytes.fromhex("90eb00000301" "9014"))
        answer = c.receive()
        self.assertEqual((answer.type, answer.reason), (T.bind_rejected, 0))
        self.node.wait_for(lambda rs: "invalid" in self.node.events(1))

    def test_port_in_use_fails_start_with_address(self):
        taken = socket.socket()
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        try:
            tb = gr.top_block()
            server = hfstack.sis_server("127.0.0.1", port)
            node = stand_in_node()
            tb.msg_connect(server, "sis_out", node, "sis_in")
            tb.msg_connect(node, "sis_out", server, "sis_in")
            expected = f"sis_server: cannot listen on 127.0.0.1:{port}: Address already in use"
            with self.assertRaisesRegex(RuntimeError, expected):
                tb.start()
            with self.assertRaisesRegex(RuntimeError, f"cannot listen on 127.0.0.1:{port}"):
                hfstack.sis_server("127.0.0.1", port).start()  # outside a flowgraph too
        finally:
            taken.close()

    def test_bad_parameters_are_refused(self):
        with self.assertRaisesRegex(ValueError, "port must be 0..65535"):
            hfstack.sis_server("127.0.0.1", 70000)
        with self.assertRaisesRegex(ValueError, "max_clients must be at least 1"):
            hfstack.sis_server("127.0.0.1", 0, 0)

    def test_stop_closes_connected_clients(self):
        self.start()
        clients = [self.connect() for _ in range(3)]
        for c in clients:
            c.sock.sendall(bind_request())
            c.receive()
        stopper = threading.Thread(target=lambda: (self.tb.stop(), self.tb.wait()))
        stopper.start()
        stopper.join(TIMEOUT)
        self.assertFalse(stopper.is_alive(), "stop() did not return")
        self.started = False
        for c in clients:
            self.assertEqual(c.sock.recv(16), b"")
        self.assertEqual(self.server.clients(), 0)


if __name__ == "__main__":
    gr_unittest.run(qa_sis_server)
