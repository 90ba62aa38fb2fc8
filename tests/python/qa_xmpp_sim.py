#!/usr/bin/env python3
#
# Copyright 2026 gr-hfstack authors.
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""The XMPP bridge kernel in the simulator (traffic/xmpp_host.h, what section B of
hfstack-sim reproduce and bench/xmpp_section_b.py measure), both transports: a chat
completes every round trip with both users' presence across, the typing notification is
dropped by the link policy, x2x-slep's DEFLATE shrinks the stanzas, and a one-way run
delivers every message once, nothing bounced. Virtual time, fixed seed; no timing is
asserted."""

import math

from gnuradio import gr_unittest
from gnuradio.hfstack import published_scenarios
from gnuradio.hfstack.hfstack_python import sim


def config(mode="1200S"):
    c = sim.scenario_config()
    c.mode, c.duration_s, c.seed = mode, 24 * 3600.0, 1
    c.node_options = published_scenarios.XMPP_NODE_OPTIONS
    return c


class qa_xmpp_sim(gr_unittest.TestCase):

    def chat(self, transport, typing_delay_s=0.0, options="", trace=False):
        c = config()
        c.trace = trace
        r = sim.run_xmpp_exchange(c, "ping_pong", 40, 6, 0.0, typing_delay_s, True, 8,
                                  ";".join(o for o in ("transport=" + transport, options) if o))
        self.assertTrue(r["completed"], r["stopped"])
        trips = r["initiator"]["round_trips"]
        self.assertEqual(len(trips), 6)
        self.assertFalse(any(math.isnan(t) for t in trips), trips)
        self.assertEqual(r["initiator"]["presences_received"], 1)
        self.assertEqual(r["responder"]["presences_received"], 1)
        self.assertEqual([n for _, n in r["responder"]["received"]], [40] * 6)
        self.assertEqual([n for _, n in r["initiator"]["received"]], [40] * 6)
        for side in ("initiator", "responder"):
            self.assertEqual(r[side]["errors_received"], 0)
            self.assertEqual(r[side]["bridge"]["bounced"], 0)
        return r

    def test_chat_over_x2x_slep(self):
        r = self.chat("x2x-slep")
        for side in ("initiator", "responder"):
            self.assertLess(r[side]["wire_sent"], 0.75 * r[side]["plain_sent"])
            self.assertEqual(r[side]["bridge"]["sent"], 7)  # presence and six messages

    def test_slep_node_confirmation_sends_no_delivery_confirmations(self):
        air = {}
        for confirmation in ("client", "node", "peer"):
            r = self.chat("x2x-slep", options="slep_confirmation=" + confirmation, trace=True)
            air[confirmation] = sum(t.bytes for t in r["transmissions"])
        # A delivery confirmation is a D_PDU of 35 bytes: one per message and answer.
        self.assertLess(air["node"], air["client"] - 12 * 30, air)
        # The far SLEP's ACK rides on the answer (8 bytes) instead: most of that saved.
        self.assertLess(air["peer"], air["client"] - 10 * 20, air)

    def test_peer_acks_are_the_default(self):
        default = self.chat("x2x-slep", trace=True)
        peer = self.chat("x2x-slep", options="slep_confirmation=peer", trace=True)
        self.assertEqual(sum(t.bytes for t in default["transmissions"]),
                         sum(t.bytes for t in peer["transmissions"]))

    def test_chat_over_x2x_rcop(self):
        r = self.chat("x2x-rcop")
        self.assertEqual(r["initiator"]["wire_sent"], r["initiator"]["plain_sent"])

    def test_typing_notification_stays_home(self):
        r = self.chat("x2x-slep", typing_delay_s=5.0)
        self.assertEqual(r["responder"]["bridge"]["chat_states_dropped"], 6)
        self.assertEqual(r["responder"]["bridge"]["sent"], 7)

    def test_one_way_delivers_every_message_once(self):
        for transport in published_scenarios.XMPP_TRANSPORTS:
            r = sim.run_xmpp_exchange(config("9600S"), "one_way", 300, 50, 0.0, 0.0, True, 16,
                                      "transport=" + transport)
            self.assertTrue(r["completed"], transport)
            self.assertEqual([n for _, n in r["responder"]["received"]], [300] * 50)
            self.assertEqual(r["initiator"]["bridge"]["bounced"], 0)
            self.assertTrue(math.isfinite(r["initiator"]["first_sent_at"]))

    def test_bad_test_name(self):
        with self.assertRaises(ValueError):
            sim.run_xmpp_exchange(config(), "both_ways")


if __name__ == "__main__":
    gr_unittest.run(qa_xmpp_sim)
