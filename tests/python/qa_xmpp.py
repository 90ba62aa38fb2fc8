#!/usr/bin/env python3
#
# Copyright 2026 gr-hfstack authors.
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""XMPP over HF end to end, all real processes on loopback: two Prosody servers
(a.example and b.example, each with a component for the other's domain, configured as
docs/xmpp.md "Set up two Prosody servers" says), two hfstack-node processes over
emulated modems (ipc:// air), an hfstack-xmpp bridge beside each, and a slixmpp client
on each server. While B's bridge is not yet running, alice's message comes back as an
error with remote-server-timeout; then a message goes each way with its exact body; then
B's server restarts and a message sent meanwhile reaches bob once B's bridge has
reconnected (--retry). A message each way over x2x-rcop as well.
Skipped when prosody or slixmpp is not installed (`make deps` installs both)."""

import asyncio
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest

from gnuradio import gr_unittest
from gnuradio.hfstack.testbed import stop_processes
from test_support import accepts, free_port, tail, wait_for

try:
    import slixmpp
except ImportError:
    slixmpp = None

NODE = [sys.executable, "-m", "gnuradio.hfstack.apps.node"]  # hfstack-node, installed or not
BRIDGE = [sys.executable, "-m", "gnuradio.hfstack.apps.xmpp"]
DOCS = os.path.join(os.path.dirname(__file__), "..", "..", "docs", "xmpp.md")
SECRET = "hf-component-secret"
START_S = 60     # a process ready within this, or the test fails
MESSAGE_S = 90   # a message (or its bounce) through the emulated HF link within this


def prosody_config(domain, peer, directory, c2s_port, component_port):
    """docs/xmpp.md's Prosody configuration for `domain`, its placeholders filled."""
    text = open(DOCS).read()
    block = re.search(r"```lua\n(.*?)```", text, re.S).group(1)
    for key, value in (("DOMAIN", domain), ("PEER_DOMAIN", peer), ("DIR", directory),
                       ("C2S_PORT", str(c2s_port)), ("COMPONENT_PORT", str(component_port)),
                       ("SECRET", SECRET)):
        block = block.replace("@" + key + "@", value)
    return block


def close_loop(loop):
    """Closes a test's event loop once what slixmpp leaves running (each client's task
    reading its send queue, a disconnect not awaited) has been cancelled and has ended,
    as asyncio.run does: closed under them, they were cancelled by Python at exit on a
    closed loop, which printed "RuntimeError: Event loop is closed"."""
    pending = asyncio.all_tasks(loop)
    for task in pending:
        task.cancel()
    loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))
    loop.run_until_complete(loop.shutdown_asyncgens())
    loop.close()


class chat_client(slixmpp.ClientXMPP if slixmpp else object):

    def __init__(self, jid, password):
        super().__init__(jid, password)
        self.inbox = asyncio.Queue()
        self.online = asyncio.Event()
        self.add_event_handler("session_start", self.started)
        self.add_event_handler("message", self.inbox.put_nowait)

    async def started(self, _):
        self.send_presence()
        self.online.set()

    async def next_message(self, timeout):
        return await asyncio.wait_for(self.inbox.get(), timeout)


@unittest.skipUnless(shutil.which("prosody") and shutil.which("prosodyctl") and slixmpp,
                     "needs Debian's prosody and python3-slixmpp (make deps installs them)")
class qa_xmpp(gr_unittest.TestCase):

    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="hfstack-xmpp-")
        self.addCleanup(shutil.rmtree, self.tmp, True)
        self.processes = []
        self.prosody = {}  # domain: (config, c2s port, component port)
        self.prosody_process = {}

    def tearDown(self):
        stop_processes(self.processes)

    def spawn(self, args, log):
        with open(log, "a") as out:
            p = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=out,
                                 stdin=subprocess.DEVNULL)
        self.processes.append(p)
        return p

    def start_node(self, me, other):
        port, log = free_port(), os.path.join(self.tmp, f"node-{me}.log")
        p = self.spawn([*NODE, "--address", f"0.0.0.{me}", "--kind", "emulator",
                        "--profile", "", "--data-rate", "9600", "--time-scale", "20",
                        "--sis-port", str(port), "--stats-interval", "0",
                        "--air-publish", f"ipc://{self.tmp}/air-{me}",
                        "--air-subscribe", f"ipc://{self.tmp}/air-{other}",
                        "--log-level", "warn"], log)
        wait_for(f"node {me}", lambda: accepts(port), START_S, p, log)
        return port

    def start_prosody(self, domain, peer, user):
        directory = os.path.join(self.tmp, domain)
        os.makedirs(os.path.join(directory, "data"))
        c2s, component = free_port(), free_port()
        config = os.path.join(directory, "prosody.cfg.lua")
        with open(config, "w") as f:
            f.write(prosody_config(domain, peer, directory, c2s, component))
        subprocess.run(["prosodyctl", "--config", config, "register", user, domain, "pw"],
                       check=True, timeout=START_S, capture_output=True)
        self.prosody[domain] = (config, c2s, component)
        self.run_prosody(domain)
        return c2s, component

    def run_prosody(self, domain):
        config, c2s, component = self.prosody[domain]
        log = os.path.join(os.path.dirname(config), "stderr.log")
        p = self.spawn(["prosody", "--config", config, "-F"], log)
        wait_for(f"prosody {domain}", lambda: accepts(c2s) and accepts(component), START_S, p,
                 os.path.join(os.path.dirname(config), "prosody.log"))
        self.prosody_process[domain] = p

    def start_bridge(self, name, sis_port, component_port, local, peer, peer_node,
                     transport="x2x-slep"):
        log = os.path.join(self.tmp, f"bridge-{name}.log")
        secret_file = os.path.join(self.tmp, "secret")
        with open(secret_file, "w") as f:
            f.write(SECRET + "\n")
        p = self.spawn([*BRIDGE, "--server", f"127.0.0.1:{sis_port}",
                        "--component", f"127.0.0.1:{component_port}",
                        "--secret-file", secret_file, "--local-domain", local,
                        "--peer", f"{peer}={peer_node}", "--transport", transport,
                        "--option", "queue_timeout_s=20", "--option", "retry_s=3",
                        "--retry", "1", "--stats-interval", "0"], log)
        self.wait_accepted(name, peer, 1)
        wait_for(f"bridge {name}", lambda: "bound to the SIS server" in tail(log), START_S, p, log)
        return p

    def wait_accepted(self, name, peer, times):
        log = os.path.join(self.tmp, f"bridge-{name}.log")
        wait_for(f"bridge {name}'s component {peer} accepted {times} times",
                 lambda: tail(log).count(f"component {peer} accepted") >= times, START_S,
                 log=log)

    def start_servers(self):
        """Both nodes and both servers; (SIS ports, c2s ports, component ports), A then B."""
        sis = self.start_node(1, 2), self.start_node(2, 1)
        c2s_a, comp_a = self.start_prosody("a.example", "b.example", "alice")
        c2s_b, comp_b = self.start_prosody("b.example", "a.example", "bob")
        loop = asyncio.new_event_loop()
        asyncio.set_event_loop(loop)
        self.addCleanup(close_loop, loop)
        return loop, sis, (c2s_a, c2s_b), (comp_a, comp_b)

    async def online(self, client, port):
        client.connect(address=("127.0.0.1", port), force_starttls=False,
                       disable_starttls=True)
        await asyncio.wait_for(client.online.wait(), START_S)

    async def each_way(self, alice, bob):
        alice.send_message(mto="bob@b.example", mbody="Position report: all well & on time",
                           mtype="chat")
        m = await bob.next_message(MESSAGE_S)
        self.assertEqual(m["type"], "chat")
        self.assertEqual(m["body"], "Position report: all well & on time")
        self.assertEqual(m["from"].bare, "alice@a.example")
        bob.send_message(mto="alice@a.example/hf", mbody="Roger, <out>", mtype="chat")
        m = await alice.next_message(MESSAGE_S)
        self.assertEqual(m["type"], "chat")
        self.assertEqual(m["body"], "Roger, <out>")
        self.assertEqual(m["from"].bare, "bob@b.example")

    def test_message_each_way_and_bounce(self):
        loop, (sis_a, sis_b), (c2s_a, c2s_b), (comp_a, comp_b) = self.start_servers()
        self.start_bridge("a", sis_a, comp_a, "a.example", "b.example", "0.0.0.2")
        alice = chat_client("alice@a.example/hf", "pw")
        bob = chat_client("bob@b.example/hf", "pw")
        online = self.online

        async def each_way():
            await online(bob, c2s_b)
            await self.each_way(alice, bob)

        async def bounce_while_far_bridge_down():
            await online(alice, c2s_a)
            alice.send_message(mto="bob@b.example", mbody="anyone there?", mtype="chat")
            m = await alice.next_message(MESSAGE_S)
            self.assertEqual(m["type"], "error")
            self.assertEqual(m["error"]["condition"], "remote-server-timeout")
            self.assertEqual(m["error"]["type"], "wait")
            self.assertEqual(str(m["from"]), "bob@b.example")

        async def across_server_restart():
            # B's server goes away: its bridge keeps what comes over HF meanwhile and
            # hands it over once it has reconnected; the server stores it for bob.
            bob.disconnect()
            prosody_b = self.prosody_process["b.example"]
            prosody_b.terminate()
            prosody_b.wait(timeout=START_S)
            alice.send_message(mto="bob@b.example", mbody="sent while your server was down",
                               mtype="chat")
            self.run_prosody("b.example")
            self.wait_accepted("b", "a.example", 2)
            bob_again = chat_client("bob@b.example/hf2", "pw")
            await online(bob_again, c2s_b)
            m = await bob_again.next_message(MESSAGE_S)
            self.assertEqual(m["body"], "sent while your server was down")
            self.assertEqual(m["from"].bare, "alice@a.example")
            bob_again.disconnect()

        loop.run_until_complete(bounce_while_far_bridge_down())
        self.start_bridge("b", sis_b, comp_b, "b.example", "a.example", "0.0.0.1")
        loop.run_until_complete(each_way())
        loop.run_until_complete(across_server_restart())
        alice.disconnect()

    def test_message_each_way_over_x2x_rcop(self):
        loop, (sis_a, sis_b), (c2s_a, c2s_b), (comp_a, comp_b) = self.start_servers()
        self.start_bridge("a", sis_a, comp_a, "a.example", "b.example", "0.0.0.2", "x2x-rcop")
        self.start_bridge("b", sis_b, comp_b, "b.example", "a.example", "0.0.0.1", "x2x-rcop")
        alice = chat_client("alice@a.example/hf", "pw")
        bob = chat_client("bob@b.example/hf", "pw")

        async def each_way():
            await self.online(alice, c2s_a)
            await self.online(bob, c2s_b)
            await self.each_way(alice, bob)

        loop.run_until_complete(each_way())
        for client in (alice, bob):
            client.disconnect()


if __name__ == "__main__":
    gr_unittest.run(qa_xmpp)
