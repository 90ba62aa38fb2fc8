#!/usr/bin/env python3
#
# Copyright 2026 gr-hfstack authors.
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""XMPP over HF with the bridge inside the node's process (hfstack-node --xmpp), all real
processes on loopback: two Prosody servers configured as docs/xmpp.md says, two nodes
over emulated modems (ipc:// air), each with its bridge in-process as a component for
the far domain and the far MUC domain, and a slixmpp client on each server. Across the
link: a message each way with its exact body, a presence subscription (asked, granted,
and the contact's presence seen), an IQ (software version) to the far server and its
answer, and a MUC room on B's server joined from A, whose group message reaches A.
The GRC example examples/xmpp_over_hf.grc (the bridge's GRC block) carries a message
each way between the same two servers.
Skipped when prosody or slixmpp is not installed (`make deps` installs both)."""

import asyncio
import os
import shutil
import sys
import time
import unittest

from gnuradio import gr_unittest
from test_support import accepts, free_port, tail, wait_for

import qa_xmpp
from qa_xmpp import MESSAGE_S, SECRET, START_S, chat_client, close_loop, slixmpp

NODE = [sys.executable, "-m", "gnuradio.hfstack.apps.node"]


class muc_client(chat_client):

    def __init__(self, jid, password):
        super().__init__(jid, password)
        for plugin in ("xep_0030", "xep_0045", "xep_0092"):
            self.register_plugin(plugin)
        self.presences = []  # (type, bare JID) of every presence received
        self.room_messages = asyncio.Queue()
        self.add_event_handler("presence", lambda p: self.presences.append(
            (p["type"], p["from"].bare)))
        self.add_event_handler("groupchat_message", self.room_messages.put_nowait)

    async def until(self, condition, what):
        """Waits (bounded) until condition() holds."""
        deadline = time.monotonic() + MESSAGE_S
        while not condition():
            if time.monotonic() > deadline:
                raise AssertionError(f"{what}: not within {MESSAGE_S} s; presences "
                                     f"{self.presences}")
            await asyncio.sleep(0.1)  # polling the client's own records, bounded


@unittest.skipUnless(shutil.which("prosody") and shutil.which("prosodyctl") and slixmpp,
                     "needs Debian's prosody and python3-slixmpp")
class qa_xmpp_node(qa_xmpp.qa_xmpp):  # the module, so gr_unittest runs ours alone
    """qa_xmpp's servers and helpers; the bridges in the nodes instead of beside them."""

    # qa_xmpp's own tests are not run again here.
    test_message_each_way_and_bounce = None
    test_message_each_way_over_x2x_rcop = None
    # The nodes' radios: modem emulators at time scale 20 (qa_xmpp_real_modem: the modem).
    RADIO = ("--kind", "emulator", "--profile", "", "--data-rate", "9600", "--time-scale", "20")

    def start_node_with_bridge(self, me, other, local, peer, transport, options=""):
        port, log = free_port(), os.path.join(self.tmp, f"node-{me}.log")
        secret_file = os.path.join(self.tmp, "secret")
        with open(secret_file, "w") as f:
            f.write(SECRET + "\n")
        component = self.prosody[local][2]
        p = self.spawn([*NODE, "--address", f"0.0.0.{me}", *self.RADIO,
                        "--sis-port", str(port), "--stats-interval", "0",
                        "--air-publish", f"ipc://{self.tmp}/air-{me}",
                        "--air-subscribe", f"ipc://{self.tmp}/air-{other}",
                        "--xmpp", "--xmpp-component", f"127.0.0.1:{component}",
                        "--xmpp-secret-file", secret_file,
                        "--xmpp-local-domain", local, "--xmpp-local-domain", "conference." + local,
                        "--xmpp-peer", f"{peer}=0.0.0.{other}",
                        "--xmpp-peer", f"conference.{peer}=0.0.0.{other}",
                        "--xmpp-transport", transport, "--xmpp-retry", "1",
                        *(["--xmpp-options", options] if options else []),
                        "--log-level", os.environ.get("XMPP_NODE_LOG", "info")], log)
        wait_for(f"node {me}", lambda: accepts(port), START_S, p, log)
        for domain in (peer, "conference." + peer):
            wait_for(f"node {me}'s component {domain}",
                     lambda: f"component {domain} accepted" in tail(log), START_S, p, log)
        return p

    def run_across(self, transport):
        c2s_a, _ = self.start_prosody("a.example", "b.example", "alice")
        c2s_b, _ = self.start_prosody("b.example", "a.example", "bob")
        self.start_node_with_bridge(1, 2, "a.example", "b.example", transport)
        self.start_node_with_bridge(2, 1, "b.example", "a.example", transport)
        loop = asyncio.new_event_loop()
        asyncio.set_event_loop(loop)
        self.addCleanup(close_loop, loop)
        alice = muc_client("alice@a.example/hf", "pw")
        bob = muc_client("bob@b.example/hf", "pw")

        async def across():
            await self.online(alice, c2s_a)
            await self.online(bob, c2s_b)
            await self.each_way(alice, bob)
            # A presence subscription: asked on A, seen by bob's client on B, which
            # grants it; then bob's presence reaches alice.
            alice.presences.clear()
            alice.send_presence_subscription(pto="bob@b.example")
            await bob.until(lambda: ("subscribe", "alice@a.example") in bob.presences,
                            "alice's subscription request at bob's")
            await alice.until(lambda: ("available", "bob@b.example") in alice.presences,
                              "bob's presence at alice's")
            # An IQ to the far server and its answer.
            version = await alice.plugin["xep_0092"].get_version("b.example", timeout=MESSAGE_S)
            self.assertEqual(version["type"], "result")
            self.assertEqual(version["software_version"]["name"], "Prosody")
            # A room on B's server, joined from A; bob's group message reaches alice.
            room = "ops@conference.b.example"
            await asyncio.wait_for(bob.plugin["xep_0045"].join_muc_wait(room, "bob"), MESSAGE_S)
            await asyncio.wait_for(alice.plugin["xep_0045"].join_muc_wait(room, "alice"),
                                   MESSAGE_S)
            bob.send_message(mto=room, mbody="Net check: all stations report", mtype="groupchat")
            while True:
                m = await asyncio.wait_for(alice.room_messages.get(), MESSAGE_S)
                if m["body"]:  # the room's subject arrives first, without a body
                    break
            self.assertEqual(m["body"], "Net check: all stations report")
            self.assertEqual(str(m["from"]), room + "/bob")

        loop.run_until_complete(across())
        for client in (alice, bob):
            client.disconnect()

    def test_grc_example_federates_two_servers(self):
        """examples/xmpp_over_hf.grc (the GRC block, compiled by grcc) in this process:
        a message each way between the two servers' users."""
        from qa_grc_examples import load_example
        _, comp_a = self.start_prosody("a.example", "b.example", "alice")
        _, comp_b = self.start_prosody("b.example", "a.example", "bob")
        flowgraph = load_example(self, "xmpp_over_hf")(
            component_a=f"127.0.0.1:{comp_a}", component_b=f"127.0.0.1:{comp_b}",
            secret=SECRET)
        flowgraph.start()
        self.addCleanup(flowgraph.wait)
        self.addCleanup(flowgraph.stop)
        for bridge in (flowgraph.xmpp_a, flowgraph.xmpp_b):
            wait_for("the example's bridges accepted by their servers",
                     lambda: all(c["ready"] for c in bridge.statistics()["components"].values()),
                     START_S)
        loop = asyncio.new_event_loop()
        asyncio.set_event_loop(loop)
        self.addCleanup(close_loop, loop)
        alice = muc_client("alice@a.example/hf", "pw")
        bob = muc_client("bob@b.example/hf", "pw")

        async def each_way():
            await self.online(alice, self.prosody["a.example"][1])
            await self.online(bob, self.prosody["b.example"][1])
            await self.each_way(alice, bob)

        loop.run_until_complete(each_way())
        for client in (alice, bob):
            client.disconnect()

    def test_x2x_rcop_bounces_when_the_far_node_has_no_bridge(self):
        """x2x-rcop asks for client delivery confirmation: a far node with no bridge bound
        rejects the stanza (node delivery confirmation would have confirmed it, and it
        would have been lost); the bridge sends it again until queue_timeout_s, then
        bounces it to its sender."""
        c2s_a, _ = self.start_prosody("a.example", "b.example", "alice")
        self.start_node_with_bridge(1, 2, "a.example", "b.example", "x2x-rcop",
                                    "queue_timeout_s=20;retry_s=3")
        self.start_node(2, 1)  # no bridge beside it
        loop = asyncio.new_event_loop()
        asyncio.set_event_loop(loop)
        self.addCleanup(close_loop, loop)
        alice = muc_client("alice@a.example/hf", "pw")

        async def bounced():
            await self.online(alice, c2s_a)
            alice.send_message(mto="bob@b.example", mbody="anyone there?", mtype="chat")
            m = await alice.next_message(MESSAGE_S)
            self.assertEqual(m["type"], "error")
            self.assertEqual(m["error"]["condition"], "remote-server-timeout")
            self.assertEqual(m["error"]["type"], "wait")

        loop.run_until_complete(bounced())
        alice.disconnect()

    def test_presence_iq_and_muc_over_x2x_slep(self):
        self.run_across("x2x-slep")

    def test_presence_iq_and_muc_over_x2x_rcop(self):
        self.run_across("x2x-rcop")


if __name__ == "__main__":
    gr_unittest.run(qa_xmpp_node)
