#!/usr/bin/env python3
#
# Copyright 2026 gr-hfstack authors.
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""Slow (about a minute of real time, labelled `slow`): XMPP federated over HF with the
real STANAG 4539 modem rather than the emulator. Two Prosody servers configured as
docs/xmpp.md says, two hfstack-node processes each with its bridge inside (--xmpp,
x2x-slep), their radios the modem on audio (kind loopback, 2400 bps short interleaver)
through a white-noise channel (30 dB), the audio carried between the processes over
ZeroMQ; a slixmpp client on each server sends a message to the other, and each arrives
with its exact body and sender.
Skipped when prosody or slixmpp is not installed (`make deps` installs both)."""

import asyncio
import shutil
import unittest

from gnuradio import gr_unittest

import qa_xmpp_node as emulated  # the module: this one would run its tests too
from qa_xmpp import slixmpp


@unittest.skipUnless(shutil.which("prosody") and shutil.which("prosodyctl") and slixmpp,
                     "needs Debian's prosody and python3-slixmpp (make deps installs them)")
class qa_xmpp_real_modem(emulated.qa_xmpp_node):

    RADIO = ("--kind", "loopback", "--profile", "awgn", "--snr-db", "30",
             "--data-rate", "2400", "--interleaver", "short")

    def test_message_each_way_over_the_real_modem(self):
        c2s_a, _ = self.start_prosody("a.example", "b.example", "alice")
        c2s_b, _ = self.start_prosody("b.example", "a.example", "bob")
        self.start_node_with_bridge(1, 2, "a.example", "b.example", "x2x-slep")
        self.start_node_with_bridge(2, 1, "b.example", "a.example", "x2x-slep")
        alice = emulated.muc_client("alice@a.example/hf", "pw")
        bob = emulated.muc_client("bob@b.example/hf", "pw")

        async def each_way():
            try:
                await self.online(alice, c2s_a)
                await self.online(bob, c2s_b)
                await self.each_way(alice, bob)
            finally:  # bounded, and never in place of the test's own failure
                await asyncio.gather(*(asyncio.wait_for(c.disconnect(), 10) for c in (alice, bob)),
                                     return_exceptions=True)

        asyncio.run(each_way())

    # The emulator's tests belong to qa_xmpp_node: not run again here.
    test_grc_example_federates_two_servers = None
    test_x2x_rcop_bounces_when_the_far_node_has_no_bridge = None
    test_presence_iq_and_muc_over_x2x_slep = None
    test_presence_iq_and_muc_over_x2x_rcop = None


if __name__ == "__main__":
    gr_unittest.run(qa_xmpp_real_modem)
