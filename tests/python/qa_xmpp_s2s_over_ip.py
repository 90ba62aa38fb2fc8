#!/usr/bin/env python3
#
# Copyright 2026 gr-hfstack authors.
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""Standard XMPP federation over the IP client, beside the bridge for comparison: Prosody
for a.example in one namespace of the IP test bed and for b.example in the other,
federating by ordinary server-to-server streams (TCP port 5269, dialback) whose TCP
runs over HF (two nodes on time-scaled emulated modems). A slixmpp user on each
server; a message each way with its exact body. The same with S2S over TLS and the
peers authenticated by certificates (made by the test bed with openssl); each server's
log then shows its streams encrypted and the far server authenticated by SASL EXTERNAL,
which secure authentication allows only with the far server's certificate verified.
Skipped without root, network namespaces, prosody or slixmpp."""

import asyncio
import os
import shutil
import tempfile
import unittest

from gnuradio import gr_unittest
from gnuradio.hfstack.testbed.ip import testbed, unavailable
from gnuradio.hfstack.testbed.xmpp_s2s import federation

from qa_xmpp import START_S, chat_client, slixmpp

SCALE = 20.0  # as the IP client's tests
# A first message opens two S2S streams, each a TCP connection and its negotiation
# over HF plus dialback's verification: a few times a message's bound elsewhere.
FIRST_MESSAGE_S = 300


@unittest.skipIf(unavailable(), unavailable() or "")
@unittest.skipUnless(shutil.which("prosody") and shutil.which("prosodyctl") and slixmpp,
                     "needs Debian's prosody and python3-slixmpp (make deps installs them)")
class qa_xmpp_s2s_over_ip(gr_unittest.TestCase):

    def test_message_each_way_over_standard_s2s(self):
        self.each_way_across(tls=False)

    @unittest.skipUnless(shutil.which("openssl"), "needs openssl for the test certificates")
    def test_message_each_way_over_s2s_with_tls_and_certificates(self):
        tmp = self.each_way_across(tls=True)
        for domain, peer in (("a.example", "b.example"), ("b.example", "a.example")):
            log = open(os.path.join(tmp, domain, "prosody.log"), errors="replace").read()
            # With s2s_secure_auth an S2S stream completes only once the peer's
            # certificate has been verified; and it went over TLS.
            self.assertIn("Stream encrypted (TLS", log)
            self.assertIn(f"Accepting SASL EXTERNAL identity from {peer}", log)
            self.assertIn(f"Incoming s2s connection {peer}->{domain} complete", log)

    def each_way_across(self, tls):
        """A message each way between alice on a.example and bob on b.example; returns
        the directory of the servers' files (their logs), removed after the test."""
        tmp = tempfile.mkdtemp(prefix="hfstack-xmpp-s2s-")
        self.addCleanup(shutil.rmtree, tmp, True)
        with testbed(rate=9600, time_scale=SCALE, subnet="10.74.0") as bed, \
                federation(bed, tmp, tls=tls) as servers:
            async def each_way():
                alice = chat_client("alice@a.example/hf", "pw")
                bob = chat_client("bob@b.example/hf", "pw")
                for client, domain in ((alice, "a.example"), (bob, "b.example")):
                    client.connect(address=("127.0.0.1", servers.c2s[domain]),
                                   force_starttls=False, disable_starttls=True)
                    await asyncio.wait_for(client.online.wait(), START_S)
                alice.send_message(mto="bob@b.example", mbody="QRV? <over IP> & S2S",
                                   mtype="chat")
                m = await self.chat_message(bob)
                self.assertEqual(m["body"], "QRV? <over IP> & S2S")
                self.assertEqual(m["from"].bare, "alice@a.example")
                bob.send_message(mto="alice@a.example", mbody="Roger, <out>", mtype="chat")
                m = await self.chat_message(alice)
                self.assertEqual(m["body"], "Roger, <out>")
                self.assertEqual(m["from"].bare, "bob@b.example")
                for client in (alice, bob):
                    await asyncio.wait_for(client.disconnect(), START_S)

            # asyncio.run cancels what slixmpp leaves running before it closes its loop.
            asyncio.run(each_way())
        return tmp

    async def chat_message(self, client):
        """The client's next chat message (an error bounce fails here with its text)."""
        while True:
            m = await client.next_message(FIRST_MESSAGE_S)
            self.assertNotEqual(m["type"], "error", str(m))
            if m["body"]:
                return m


if __name__ == "__main__":
    gr_unittest.run(qa_xmpp_s2s_over_ip)
