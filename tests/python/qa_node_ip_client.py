#!/usr/bin/env python3
#
# Copyright 2026 gr-hfstack authors.
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""hfstack-node --ip-client, each node in a process and a network namespace of its own:
the two modem emulators share one channel over ZeroMQ ipc:// sockets (--air-publish,
--air-subscribe), each node serves an IP client on a TUN device inside its namespace,
and Linux's ping and a TCP transfer cross between the namespaces. The statistics
carry the IP client's counters. Bad --ip-* options and ip_client sections are refused
with one line (exit 2) before anything is opened. The cross-namespace test skips,
saying why, only where namespaces or /dev/net/tun are unavailable."""

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import unittest

from gnuradio import gr_unittest
from gnuradio.hfstack.testbed.ip import run, unavailable

from test_support import app_path

APP = app_path("hfstack-node")
SCALE = 20.0
TIMEOUT_S = 120


def node_command(side, peer, channel, extra=()):
    """hfstack-node for side "a" (0.0.0.1, 10.78.0.1) or "b" (0.0.0.2, 10.78.0.2)."""
    me, other = {"a": 1, "b": 2}[side], {"a": 1, "b": 2}[peer]
    return [sys.executable, APP, "--address", f"0.0.0.{me}", "--data-rate", "9600",
            "--kind", "emulator", "--profile", "", "--time-scale", str(SCALE), "--sis-port", "0",
            "--options", "supervision.keep_alive_interval_s=36000",
            "--air-publish", f"ipc://{channel}/{side}", "--air-subscribe", f"ipc://{channel}/{peer}",
            "--ip-client", f"hfn{side}{os.getpid() % 10000}", "--ip-configure",
            "--ip-address", f"10.78.0.{me}/24", "--ip-route", f"10.78.0.{other}=0.0.0.{other}",
            "--stats-interval", "0", *extra]


class qa_node_ip_client(gr_unittest.TestCase):

    def refused(self, *args, config=None):
        with tempfile.TemporaryDirectory() as d:
            if config is not None:
                path = os.path.join(d, "node.yaml")
                with open(path, "w") as f:
                    f.write(config)
                args = ("--config", path) + args
            done = subprocess.run([sys.executable, APP, "--kind", "emulator", "--check", *args],
                                  capture_output=True, text=True, timeout=60, env=os.environ)
        self.assertEqual(done.returncode, 2, done.stdout + done.stderr)
        return done.stderr

    def test_bad_ip_client_settings_are_refused_before_anything_opens(self):
        self.assertIn("--ip-route needs --ip-client TUN", self.refused("--ip-route", "10.1.0.2=0.0.0.2"))
        self.assertIn("needs an address table", self.refused("--ip-client", "hf9"))
        self.assertIn("IP client: ", self.refused("--ip-client", "hf9", "--ip-route", "10.1.0.2=zzz"))
        self.assertIn("need --ip-configure",
                      self.refused("--ip-client", "hf9", "--ip-route", "10.1.0.2=0.0.0.2",
                                   "--ip-address", "10.1.0.1/24"))
        self.assertIn("not with --pair", self.refused("--pair", "--ip-client", "hf9",
                                                      "--ip-route", "10.1.0.2=0.0.0.2"))
        err = self.refused(config="ip_client:\n  tun: hf9\n  rootes: [10.1.0.2=0.0.0.2]\n")
        self.assertRegex(err, r"node\.yaml:3: unknown key ip_client\.rootes \(did you mean routes\?\)")
        self.assertIn("'tun' is a required property", self.refused(config="ip_client:\n  routes: []\n"))
        self.assertIn("air_publish and air_subscribe go together",
                      self.refused("--air-publish", "ipc:///tmp/x"))

    def test_config_section_is_read(self):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "node.yaml")
            with open(path, "w") as f:
                f.write("ip_client:\n  tun: hf9\n  routes: [10.1.0.2=0.0.0.2, default=0.0.0.3]\n"
                        "  options: {mtu: 1200}\n"
                        "  configure: {address: 10.1.0.1/24, routes: [10.2.0.0/16]}\n")
            done = subprocess.run([sys.executable, APP, "--kind", "emulator", "--config", path,
                                   "--check"], capture_output=True, text=True, timeout=60)
        self.assertEqual(done.returncode, 0, done.stderr)
        ip = json.loads(done.stdout)["ip_client"]
        self.assertEqual(ip["tun"], "hf9")
        self.assertEqual(ip["options"], "routes=10.1.0.2=0.0.0.2 default=0.0.0.3;mtu=1200")
        self.assertEqual((ip["configure"], ip["address"], ip["device_routes"]),
                         (True, "10.1.0.1/24", ["10.2.0.0/16"]))

    def test_nodes_in_two_namespaces_carry_ping_and_tcp(self):
        why = unavailable()
        if why:
            raise unittest.SkipTest(why)
        tag = os.getpid() % 100000
        ns = {"a": f"hfna{tag}", "b": f"hfnb{tag}"}
        channel = tempfile.mkdtemp(prefix="hfstack-air-")
        nodes = {}
        try:
            for side in ("a", "b"):
                run("ip", "netns", "add", ns[side])
                run("ip", "-n", ns[side], "link", "set", "lo", "up")
            for side, peer in (("a", "b"), ("b", "a")):
                nodes[side] = subprocess.Popen(
                    ["ip", "netns", "exec", ns[side], *node_command(side, peer, channel)],
                    stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=os.environ)
            for side, p in nodes.items():
                header = json.loads(p.stdout.readline() or "{}")  # written once running
                self.assertEqual(header.get("type"), "header", p.stderr.read() if p.poll() else "")
                self.assertEqual(header["settings"]["radio"]["air_publish"], f"ipc://{channel}/{side}")
            # --ip-configure gave the HF subnet TCP congestion control for long turns.
            self.assertIn("congctl cubic", run("ip", "-n", ns["a"], "route", "show",
                                               "10.78.0.0/24").stdout)
            # -w: ping waits for the 3 replies up to the deadline (with -W alone it gives
            # up on a late one after twice the longest round trip seen).
            ping = run("ip", "netns", "exec", ns["a"], "ping", "-c", "3", "-w", str(TIMEOUT_S),
                       "10.78.0.2", check=False, timeout=2 * TIMEOUT_S)
            if "3 received" not in ping.stdout:
                logs = ""
                for side, p in nodes.items():
                    p.send_signal(signal.SIGTERM)
                    out, err = p.communicate(timeout=60)
                    logs += f"\n--- node {side} stderr:\n{err[-3000:]}\n--- stats:\n{out[-3000:]}"
                self.fail(ping.stdout + ping.stderr + logs)
            # TCP both ways through Linux's stacks: 20 kB echoed back intact.
            server = subprocess.Popen(
                ["ip", "netns", "exec", ns["b"], sys.executable, "-c",
                 "import socket,sys\ns=socket.create_server(('10.78.0.2',7001))\n"
                 "print('ready',flush=True)\nc,_=s.accept()\nd=b''\n"
                 "while len(d)<20000:\n  x=c.recv(65536)\n  if not x: break\n  d+=x\n"
                 "c.sendall(d[::-1])\nc.close()\n"],
                stdout=subprocess.PIPE, text=True)
            self.assertEqual(server.stdout.readline().strip(), "ready")
            data = bytes((7 * i) % 256 for i in range(20000))
            client = run("ip", "netns", "exec", ns["a"], sys.executable, "-c",
                         "import socket,sys\nc=socket.create_connection(('10.78.0.2',7001),"
                         f"timeout={TIMEOUT_S})\nc.sendall(bytes((7*i)%256 for i in range(20000)))\n"
                         "d=b''\nwhile len(d)<20000:\n  x=c.recv(65536)\n  if not x: break\n  d+=x\n"
                         "sys.stdout.write(d.hex())\n", timeout=4 * TIMEOUT_S)
            self.assertEqual(bytes.fromhex(client.stdout), data[::-1])
            server.wait(timeout=30)
            finals = {}
            for side, p in nodes.items():
                p.send_signal(signal.SIGTERM)
                out, err = p.communicate(timeout=60)
                self.assertEqual(p.returncode, 0, err)
                stats = [json.loads(line) for line in out.splitlines() if '"type": "stats"' in line]
                finals[side] = stats[-1]
            a, b = finals["a"]["ip_client"], finals["b"]["ip_client"]
            self.assertEqual(a["bound"], 1)
            self.assertGreaterEqual(a["peer.0.0.0.2.datagrams_out"], 3 + 14)  # pings + TCP
            self.assertGreaterEqual(b["datagrams_to_tun"], 3 + 14)
            self.assertGreater(finals["a"]["tun_device"]["datagrams_read"], 0)
        finally:
            for p in nodes.values():
                if p.poll() is None:
                    p.kill()
                    p.wait()
            for name in ns.values():
                subprocess.run(["ip", "netns", "delete", name], capture_output=True)
            shutil.rmtree(channel, ignore_errors=True)


if __name__ == "__main__":
    gr_unittest.run(qa_node_ip_client)
