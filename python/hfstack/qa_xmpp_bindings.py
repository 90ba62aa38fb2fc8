#!/usr/bin/env python3
#
# Copyright 2026 gr-hfstack authors.
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""Python bindings of the XMPP bridge's kernel (hfstack.net): options by name, the
XEP-0114 handshake against a scripted server, and a chat message carried between two
bridges over each transport's link kernel, with a lossless 5066 path emulated here
from the links' own SIS frames (requests become indications and confirmations)."""

from gnuradio import gr_unittest
from gnuradio import hfstack

dl = hfstack.dl
net = hfstack.net
T = dl.sis_type

A_OPTIONS = "local_domains=a.example;peer_domains=b.example"
B_OPTIONS = "local_domains=b.example;peer_domains=a.example"
CHAT = ("<message from='alice@a.example/phone' to='bob@b.example' type='chat' id='m1'>"
        "<body>Position report: all well &amp; on time</body></message>")


class sis_path:
    """Nodes 1 and 2 joined by a path that delivers every U_PDU and confirms it with
    its first 16 bytes echoed, as our node does."""

    def __init__(self, link_a, link_b, sap):
        self.links = {1: link_a, 2: link_b}
        self.received = {1: [], 2: []}
        self.delivered = {1: [], 2: []}
        self.now = 0.0
        for link in self.links.values():
            link.start(self.now)
            ok = dl.sis_primitive()
            ok.type, ok.sap, ok.mtu = T.bind_accepted, sap, 2048
            link.on_sis(ok, self.now)

    def settle(self):
        for _ in range(10000):
            busy = False
            for node, link in self.links.items():
                frames, events, _ = link.take_actions()
                for kind, _, stanza_id, stanza, _ in events:
                    if kind == "stanza":
                        self.received[node].append(stanza)
                    elif kind == "delivered":
                        self.delivered[node].append(stanza_id)
                for frame in frames:
                    r = dl.decode_sis(frame)
                    if r.type != T.unidata_request:
                        continue
                    busy = True
                    self.carry(node, r)
            if not busy:
                deadline = min(link.next_deadline() for link in self.links.values())
                if deadline > self.now + 5:
                    return
                self.now = max(self.now, deadline)
                for link in self.links.values():
                    link.on_timer(self.now)
        raise AssertionError("the path never settled")

    def carry(self, node, r):
        other = 3 - node
        ind = dl.sis_primitive()
        ind.type = T.unidata_indication
        ind.destination_sap, ind.destination = r.destination_sap, r.destination
        ind.source_sap, ind.source = r.destination_sap, dl.sis_address(node, 7)
        ind.payload = r.payload
        self.links[other].on_sis(ind, self.now)
        answer = dl.sis_primitive()
        answer.type = T.unidata_request_confirm
        answer.destination_sap, answer.destination = r.destination_sap, r.destination
        answer.payload = bytes(r.payload)[:16]
        self.links[node].on_sis(answer, self.now)


class qa_xmpp_bindings(gr_unittest.TestCase):

    def test_options_by_name(self):
        names = [name for name, _, _ in net.xmpp_options()]
        self.assertIn("queue_timeout_s", names)
        values = net.check_xmpp_options(A_OPTIONS + ";transport=x2x-rcop;presence=strip")
        self.assertEqual(values["transport"], "x2x-rcop")
        self.assertEqual(values["presence"], "strip")
        with self.assertRaises(ValueError):
            net.check_xmpp_options("no_such_option=1")
        with self.assertRaises(ValueError):
            net.xmpp_bridge("local_domains=a.example")  # no peer domain

    def test_component_handshake(self):
        c = net.xmpp_component("b.example", "s3cret")
        c.start()
        header, events = c.take_actions()
        self.assertIn(b"jabber:component:accept", header)
        self.assertEqual(events, [])
        c.on_bytes(b"<?xml version='1.0'?><stream:stream xmlns:stream="
                   b"'http://etherx.jabber.org/streams' xmlns='jabber:component:accept' "
                   b"from='b.example' id='abc123'>")
        handshake, _ = c.take_actions()
        expected = net.component_handshake("abc123", "s3cret")
        self.assertEqual(handshake, f"<handshake>{expected}</handshake>".encode())
        self.assertFalse(c.send(CHAT))  # not ready yet
        c.on_bytes(b"<handshake/>" + CHAT.encode())
        _, events = c.take_actions()
        self.assertEqual([e[0] for e in events], ["ready", "stanza"])
        self.assertIn("Position report: all well &amp; on time", events[1][1])
        self.assertTrue(c.ready)
        self.assertTrue(c.send(CHAT))
        out, _ = c.take_actions()
        self.assertIn(b"<body>Position report", out)
        with self.assertRaises(ValueError):
            c.send("<message>unterminated")

    def carry_chat(self, make_link, sap):
        a, b = net.xmpp_bridge(A_OPTIONS), net.xmpp_bridge(B_OPTIONS)
        b.set_component_ready("a.example", True, 0)
        path = sis_path(make_link(1), make_link(1000), sap)
        a.from_component("b.example", CHAT, 0)
        stanza_id, wire = a.next_for_peer(0)
        self.assertIsNone(a.next_for_peer(0))
        self.assertNotIn("xmlns", wire)  # jabber:server implied on the link
        self.assertTrue(path.links[1].can_send(2))
        self.assertTrue(path.links[1].send(2, stanza_id, wire, path.now))
        path.settle()
        self.assertEqual(path.delivered[1], [stanza_id])
        a.delivered(stanza_id, path.now)
        self.assertEqual(a.counters()["delivered"], 1)
        self.assertEqual(len(path.received[2]), 1)
        b.from_peer(path.received[2][0], path.now)
        to_component, _ = b.take_actions()
        self.assertEqual(len(to_component), 1)
        component, stanza = to_component[0]
        self.assertEqual(component, "a.example")
        self.assertIn("<body>Position report: all well &amp; on time</body>", stanza)
        self.assertIn("to='bob@b.example'", stanza.replace('"', "'"))

    def test_chat_over_x2x_rcop(self):
        self.carry_chat(lambda _: net.x2x_rcop_link(A_OPTIONS), 6)

    def test_chat_over_x2x_slep(self):
        self.carry_chat(lambda incarnation: net.x2x_slep_link(A_OPTIONS, incarnation), 6)

    def test_bounce_when_undelivered(self):
        a = net.xmpp_bridge(A_OPTIONS + ";queue_timeout_s=30")
        a.set_component_ready("b.example", True, 0)
        a.from_component("b.example", CHAT, 0)
        stanza_id, _ = a.next_for_peer(0)
        a.on_timer(31)  # in flight: the transport's verdict is awaited
        self.assertEqual(a.take_actions()[0], [])
        a.failed(stanza_id, 32)  # waits retry_s, and is now past queue_timeout_s
        a.on_timer(33)
        to_component, _ = a.take_actions()
        self.assertEqual(len(to_component), 1)
        component, bounce = to_component[0]
        self.assertEqual(component, "b.example")
        self.assertIn("remote-server-timeout", bounce)
        self.assertIn("type='error'", bounce.replace('"', "'"))
        self.assertEqual(a.counters()["timed_out"], 1)


if __name__ == "__main__":
    gr_unittest.run(qa_xmpp_bindings)
