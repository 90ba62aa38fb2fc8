#!/usr/bin/env python3
#
# Copyright 2026 gr-hfstack authors.
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""IP over HF end to end, with Linux's own IP stack and real tools on both sides: two
network namespaces, each with a TUN device served by an IP client, joined through two
STANAG 5066 nodes on emulated modems (9600 bps, clock 20x). ping gets replies, a UDP
request is answered, 100 kB over TCP arrive intact, curl fetches a page over HTTP, and
an oversize DF datagram gets ICMP "fragmentation needed" with the HF MTU, which
Linux's path-MTU cache records. Skips, saying why, only where namespaces or
/dev/net/tun are not available (not root, no iproute2)."""

import hashlib
import json
import logging
import os
import random
import re
import shutil
import socket
import subprocess
import tempfile
import threading
import time
import unittest

from gnuradio import gr_unittest
from gnuradio.hfstack.testbed.ip import (planned_tcp_rto_min, planned_tcp_window, run, testbed,
                                         unavailable)
from gnuradio.hfstack.tun import tun_device, tun_error

from test_support import APPS

SCALE = 20.0
PY = "/usr/bin/python3"
TIMEOUT_S = 60


class qa_ip_client(gr_unittest.TestCase):

    @classmethod
    def setUpClass(cls):
        why = unavailable()
        if why:
            raise unittest.SkipTest(why)
        if not shutil.which("curl"):
            raise unittest.SkipTest("curl is not installed (make test installs it)")
        # The devices' MTU is raised above the IP clients' 1500 so that oversize
        # datagrams reach the client (Linux would refuse them locally otherwise).
        cls.bed = testbed(rate=9600, time_scale=SCALE, tun_mtu=2000).start()
        cls.ns, cls.addr, cls.clients = cls.bed.ns, cls.bed.address, cls.bed.clients
        cls.tmp = tempfile.mkdtemp()

    @classmethod
    def tearDownClass(cls):
        cls.bed.stop()
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def in_ns(self, side, *cmd, **kw):
        return run("ip", "netns", "exec", self.ns[side], *cmd, **kw)

    def server(self, side, code):
        """A Python server in a namespace; returns it once it printed "ready"."""
        p = subprocess.Popen(["ip", "netns", "exec", self.ns[side], PY, "-c", code],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.addCleanup(lambda: (p.kill(), p.communicate()))
        line = p.stdout.readline()  # blocks until the server has bound its socket
        self.assertEqual(line.strip(), "ready", p.stderr.read() if p.poll() is not None else line)
        return p

    def test_1_ping_gets_replies(self):
        done = self.in_ns("a", "ping", "-c", "3", "-i", "0.5", "-w", "40", self.addr["b"])
        self.assertIn("3 received", done.stdout)
        counters = self.clients["b"].client.counters()
        self.assertGreater(counters["peer.0.0.0.1.datagrams_in"], 0)

    def test_2_udp_request_is_answered(self):
        self.server("b", (
            "import socket\n"
            "s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)\n"
            f"s.bind(('{self.addr['b']}', 7777))\n"
            "print('ready', flush=True)\n"
            "data, peer = s.recvfrom(2048)\n"
            "s.sendto(data.upper(), peer)\n"))
        done = self.in_ns("a", PY, "-c", (
            "import socket\n"
            "s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)\n"
            "s.settimeout(5)\n"
            "for attempt in range(6):\n"  # UDP: the first may wait for the link
            f"    s.sendto(b'hello over hf', ('{self.addr['b']}', 7777))\n"
            "    try:\n"
            "        print(s.recv(2048).decode()); break\n"
            "    except socket.timeout:\n"
            "        pass\n"))
        self.assertIn("HELLO OVER HF", done.stdout)

    def test_3_tcp_100_kB_arrive_intact(self):
        payload = os.urandom(100_000)
        self.server("b", (
            "import hashlib, socket\n"
            "s = socket.create_server(('" + self.addr["b"] + "', 7778))\n"
            "print('ready', flush=True)\n"
            "c, _ = s.accept()\n"
            "h, n = hashlib.sha256(), 0\n"
            "while True:\n"
            "    d = c.recv(65536)\n"
            "    if not d: break\n"
            "    h.update(d); n += len(d)\n"
            "c.sendall(f'{n} {h.hexdigest()}'.encode())\n"
            "c.close()\n"))
        sender = (
            "import socket, sys\n"
            "data = sys.stdin.buffer.read()\n"
            f"c = socket.create_connection(('{self.addr['b']}', 7778), timeout=120)\n"
            "c.sendall(data)\n"
            "c.shutdown(socket.SHUT_WR)\n"
            "print(c.recv(200).decode())\n")
        done = subprocess.run(["ip", "netns", "exec", self.ns["a"], PY, "-c", sender],
                              input=payload, capture_output=True, timeout=180)
        self.assertEqual(done.returncode, 0, done.stderr)
        self.assertEqual(done.stdout.decode().split(),
                         [str(len(payload)), hashlib.sha256(payload).hexdigest()])

    def test_4_oversize_df_datagram_gets_fragmentation_needed(self):
        done = self.in_ns("a", "ping", "-M", "do", "-s", "1600", "-c", "1", "-w", "10",
                          self.addr["b"], check=False)
        # Either form, as the ICMP reaches ping: "Frag needed ... (mtu = 1500)" or, once
        # the kernel has applied it to the socket, "local error: message too long, mtu=1500".
        self.assertRegex(done.stdout + done.stderr, r"mtu ?= ?1500")
        route = self.in_ns("a", "ip", "route", "get", self.addr["b"])
        self.assertIn("mtu 1500", route.stdout)  # Linux's path-MTU cache learned it
        # ping repeats its datagram until its deadline: at least one reached the client.
        self.assertGreaterEqual(self.clients["a"].client.counters()["drop.too_big"], 1)

    def test_5_curl_fetches_a_page_over_http(self):
        page = os.path.join(self.tmp, "index.html")
        body = b"<html><body>" + b"HF " * 2000 + b"</body></html>"
        with open(page, "wb") as f:
            f.write(body)
        self.server("b", (
            "import functools, http.server\n"
            f"h = functools.partial(http.server.SimpleHTTPRequestHandler, directory='{self.tmp}')\n"
            f"s = http.server.HTTPServer(('{self.addr['b']}', 8080), h)\n"
            "print('ready', flush=True)\n"
            "s.handle_request()\n"))
        done = subprocess.run(["ip", "netns", "exec", self.ns["a"], "curl", "-s", "--max-time",
                               "60", f"http://{self.addr['b']}:8080/index.html"],
                              capture_output=True, timeout=90)
        self.assertEqual(done.returncode, 0, done.stderr)
        self.assertEqual(done.stdout, body)


class qa_ip_client_compact(gr_unittest.TestCase):
    """The compact header between two hosts that mark each other compact: ping and a TCP
    transfer cross with 2-byte headers on the air, and Linux accepts the rebuilt
    datagrams (its IP, ICMP and TCP checksums pass, so the rebuilt addresses are the
    sent ones)."""

    def test_ping_and_tcp_with_compact_headers(self):
        why = unavailable()
        if why:
            self.skipTest(why)
        with testbed(rate=9600, time_scale=SCALE, subnet="10.76.0", compact=True) as bed:
            done = bed.run("a", "ping", "-c", "2", "-i", "0.5", "-W", "40", bed.address["b"],
                           timeout=120)
            self.assertIn("2 received", done.stdout)
            self.assert_tcp_carries(bed, os.urandom(20_000))
            for side in ("a", "b"):
                c = bed.clients[side].client.counters()
                self.assertGreater(c["compact_sent"], 0, side)
                self.assertGreater(c["compact_received"], 0, side)
                self.assertEqual(c["drop.compact_unmapped"], 0, side)

    def assert_tcp_carries(self, bed, payload, port=7779):
        """Linux TCP from a to b across the link: b's SHA-256 of what arrived is a's."""
        server = subprocess.Popen(bed.command("b", PY, "-c", (
            "import hashlib, socket\n"
            f"s = socket.create_server(('{bed.address['b']}', {port}))\n"
            "print('ready', flush=True)\n"
            "c, _ = s.accept()\n"
            "h = hashlib.sha256()\n"
            "while (d := c.recv(65536)):\n"
            "    h.update(d)\n"
            "c.sendall(h.hexdigest().encode())\n")), stdout=subprocess.PIPE, text=True)
        self.addCleanup(lambda: (server.kill(), server.communicate()))
        self.assertEqual(server.stdout.readline().strip(), "ready")
        sent = subprocess.run(bed.command("a", PY, "-c", (
            "import socket, sys\n"
            f"c = socket.create_connection(('{bed.address['b']}', {port}), timeout=120)\n"
            "c.sendall(sys.stdin.buffer.read())\n"
            "c.shutdown(socket.SHUT_WR)\n"
            "print(c.recv(100).decode())\n")), input=payload, capture_output=True, timeout=180)
        self.assertEqual(sent.stdout.decode().strip(), hashlib.sha256(payload).hexdigest(),
                         sent.stderr)

    def test_ping_and_tcp_over_stanag_5069_at_240_kbps(self):
        """At 240 kbps: the nodes in WN12/48kHz/US with S5066-EP5 large windows (the
        testbed's setting for 5069 modes): ping and a 300 kB TCP transfer through
        Linux's stack."""
        why = unavailable()
        if why:
            self.skipTest(why)
        with testbed(rate="WN12/48kHz/US", time_scale=SCALE, subnet="10.75.0") as bed:
            done = bed.run("a", "ping", "-c", "2", "-i", "0.5", "-W", "40", bed.address["b"],
                           timeout=120)
            self.assertIn("2 received", done.stdout)
            self.assert_tcp_carries(bed, random.Random(24).randbytes(300_000), port=7780)


class qa_ip_client_tcp_window(gr_unittest.TestCase):
    """The test bed sets TCP on the HF route as a planner does (docs/ip-client.md): a
    window of a minute of air, so that TCP cannot fill the node's queue for minutes, and
    a retransmission timeout that a full window's turn does not outlast."""

    def test_planned_window_is_a_minute_of_air(self):
        self.assertEqual(planned_tcp_window(1200), 9000)
        self.assertEqual(planned_tcp_window(9600), 72000)
        self.assertEqual(planned_tcp_window(75), 3 * 1460)  # at least three segments

    def test_planned_rto_floor_outlasts_a_window_of_air(self):
        self.assertEqual(planned_tcp_rto_min(1200), 90.0)
        self.assertEqual(planned_tcp_rto_min(9600), 90.0)
        self.assertEqual(planned_tcp_rto_min(75), 120.0)  # TCP's longest timeout

    @unittest.skipIf(unavailable(), unavailable() or "")
    def test_far_side_advertises_no_more_than_the_route_window(self):
        window = planned_tcp_window(1200)
        with testbed(rate=9600, time_scale=SCALE, subnet="10.72.0", congestion_control="cubic",
                     tcp_window=window, tcp_rto_min=planned_tcp_rto_min(1200)) as bed:
            for side in ("a", "b"):
                route = run("ip", "-n", bed.ns[side], "route", "show", "10.72.0.0/24").stdout
                self.assertIn(f"window {window}", route)
                self.assertIn("rto_min lock 90s", route)
                self.assertEqual(run("ip", "netns", "exec", bed.ns[side], "sysctl", "-n",
                                     "net.ipv4.tcp_rmem").stdout.split(),
                                 ["4096", str(2 * window), str(2 * window)])
                self.assertIn("congctl cubic", route)
            server = subprocess.Popen(
                ["ip", "netns", "exec", bed.ns["b"], PY, "-c",
                 "import socket, sys\n"
                 f"s = socket.create_server(('{bed.address['b']}', 7779))\n"
                 "print('ready', flush=True)\n"
                 "c, _ = s.accept()\n"
                 "sys.stdin.read()\n"],
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
            self.addCleanup(server.kill)
            try:
                self.assertEqual(server.stdout.readline().strip(), "ready")
                # The client holds its connection open until ss has looked at it.
                client = subprocess.Popen(
                    ["ip", "netns", "exec", bed.ns["a"], PY, "-c",
                     "import socket, sys\n"
                     f"c = socket.create_connection(('{bed.address['b']}', 7779), timeout=120)\n"
                     "print('connected', flush=True)\n"
                     "sys.stdin.read()\n"],
                    stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
                self.addCleanup(client.kill)
                try:
                    self.assertEqual(client.stdout.readline().strip(), "connected")
                    info = run("ip", "netns", "exec", bed.ns["a"], "ss", "-tni", "state",
                               "established", "dst", bed.address["b"]).stdout
                    found = re.search(r"snd_wnd:(\d+)", info)
                    self.assertIsNotNone(found, info)
                    self.assertLessEqual(int(found.group(1)), window, info)
                    # The route's floor holds on the connection (Linux's own: 0.2 s).
                    rto_ms = re.search(r"\brto:(\d+)", info)
                    self.assertIsNotNone(rto_ms, info)
                    self.assertGreaterEqual(int(rto_ms.group(1)), 90_000, info)
                finally:
                    client.communicate("", timeout=TIMEOUT_S)
            finally:
                server.communicate("", timeout=TIMEOUT_S)


class qa_ip_client_real_modem(gr_unittest.TestCase):
    """A short exchange through the real STANAG 4539 modem (2400 bps, short
    interleaver) over the AWGN channel at 30 dB, in real time: ping gets replies."""

    def test_ping_over_the_real_modem(self):
        why = unavailable()
        if why:
            self.skipTest(why)
        with testbed(rate=2400, time_scale=1.0, kind="loopback", profile="awgn", snr_db=30.0,
                     subnet="10.79.0") as bed:
            done = bed.run("a", "ping", "-c", "2", "-i", "1", "-W", "60", bed.address["b"],
                           timeout=120)
            self.assertIn("2 received", done.stdout)
            self.assertGreater(bed.radios["b"].stats()["bursts_received"], 0)


class qa_hfstack_ip(gr_unittest.TestCase):
    """The standalone hfstack-ip, a SIS client over TCP, against hfstack-node --pair: two
    processes, each with its TUN device moved into a namespace, ping across HF."""

    def setUp(self):
        why = unavailable()
        if why:
            self.skipTest(why)
        from test_support import accepts, free_port_pair
        tag = os.getpid() % 100000
        self.ns = {"a": f"hfia{tag}", "b": f"hfib{tag}"}
        for ns in self.ns.values():
            run("ip", "netns", "add", ns)
            self.addCleanup(subprocess.run, ["ip", "netns", "delete", ns], capture_output=True)
        port = free_port_pair()
        self.node = subprocess.Popen(
            [PY, os.path.join(APPS, "hfstack-node"), "--pair", "--kind", "emulator", "--profile",
             "", "--time-scale", str(int(SCALE)), "--data-rate", "9600", "--sis-port", str(port),
             "--stats-interval", "0"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        self.addCleanup(lambda: (self.node.terminate(), self.node.communicate(timeout=30)))
        deadline = time.monotonic() + 60  # GNU Radio's import is slow on a loaded machine
        while not (accepts(port) and accepts(port + 1)):
            self.assertIsNone(self.node.poll(), "hfstack-node exited")
            self.assertLess(time.monotonic(), deadline, "hfstack-node never listened")
            time.sleep(0.05)  # between polls of a starting process, bounded by the deadline
        self.ip = {}
        for side, own, peer, sis in (("a", "10.78.0.1", "10.78.0.2=0.0.0.2", port),
                                     ("b", "10.78.0.2", "10.78.0.1=0.0.0.1", port + 1)):
            dev = f"hfi{side}{tag}"
            p = subprocess.Popen(
                [PY, os.path.join(APPS, "hfstack-ip"), "--server", f"127.0.0.1:{sis}",
                 "--tun", dev, "--ip-route", peer, "--stats-interval", "0"],
                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            self.addCleanup(lambda p=p: (p.send_signal(2), p.communicate(timeout=30)))
            # It logs "IP client on DEV" once the device is open and the flowgraph runs.
            for line in p.stderr:
                if "IP client on" in line:
                    break
            self.assertIsNone(p.poll(), "hfstack-ip exited")
            run("ip", "link", "set", "dev", dev, "netns", self.ns[side])
            run("ip", "-n", self.ns[side], "addr", "add", f"{own}/24", "dev", dev)
            run("ip", "-n", self.ns[side], "link", "set", "dev", dev, "up")
            self.ip[side] = p

    def test_ping_across_two_hfstack_ip_processes(self):
        done = run("ip", "netns", "exec", self.ns["a"], "ping", "-c", "3", "-i", "0.5", "-w",
                   "40", "10.78.0.2")
        self.assertIn("3 received", done.stdout)
        # SIGINT ends it with status 0 and a last JSON statistics line on stdout.
        self.ip["a"].send_signal(2)
        out, _ = self.ip["a"].communicate(timeout=30)
        self.assertEqual(self.ip["a"].returncode, 0)
        last = json.loads(out.strip().splitlines()[-1])
        self.assertGreaterEqual(last["ip_client"]["peer.0.0.0.2.datagrams_in"], 3)
        self.assertEqual(last["sis_link"]["connects"], 1)

    def test_bad_options_and_missing_server(self):
        ip = os.path.join(APPS, "hfstack-ip")
        done = subprocess.run([PY, ip, "--ip-route", "10.0.0.1/8=0.0.0.2"], capture_output=True,
                              text=True, timeout=60)
        self.assertEqual(done.returncode, 2)
        self.assertEqual(len(done.stderr.strip().splitlines()), 1, done.stderr)
        self.assertIn("host bits", done.stderr)
        done = subprocess.run([PY, ip], capture_output=True, text=True, timeout=60)
        self.assertEqual(done.returncode, 2)
        self.assertIn("--ip-route", done.stderr)


class fake_sis_server(threading.Thread):
    """A SIS server that refuses the first bind and drops the connection, then accepts
    the next one (a vendor's server restarting)."""

    def __init__(self):
        super().__init__(daemon=True)
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.listener.settimeout(TIMEOUT_S)
        self.port = self.listener.getsockname()[1]
        self.binds = 0
        self.kept = None
        self.start()

    def run(self):
        from gnuradio import hfstack
        dl = hfstack.dl
        for answer in ("bind_rejected", "bind_accepted"):
            conn, _ = self.listener.accept()
            conn.settimeout(TIMEOUT_S)
            r = dl.sis_reassembler()
            got = []
            while not got:
                got = [p for p in r.push(conn.recv(4096)) if p.type == dl.sis_type.bind_request]
            self.binds += 1
            reply = (hfstack.make_sis("bind_rejected", reason=3) if answer == "bind_rejected"
                     else hfstack.make_sis("bind_accepted", sap=9, mtu=2048))
            conn.sendall(dl.encode_sis(reply))
            if answer == "bind_rejected":
                conn.close()
            else:
                self.kept = conn


class qa_ip_client_bad_input(gr_unittest.TestCase):
    """A SIS server that refuses the bind and disconnects, a TUN device that disappears:
    logged once, counted, recovered; never a crash."""

    def test_hfstack_ip_outlives_a_refusing_and_restarting_server(self):
        why = unavailable()
        if why:
            self.skipTest(why)
        server = fake_sis_server()
        p = subprocess.Popen(
            [PY, os.path.join(APPS, "hfstack-ip"), "--server", f"127.0.0.1:{server.port}",
             "--tun", f"hfr{os.getpid() % 100000}", "--ip-route", "default=0.0.0.2",
             "--stats-interval", "0"],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.addCleanup(lambda: (p.kill(), p.communicate()))
        seen = []
        for line in p.stderr:  # its log, line by line, until the second bind is accepted
            seen.append(line)
            if "bound to SAP 9" in line:
                break
        self.assertTrue(any("refused SAP 9 (reason 3)" in s for s in seen), seen)
        self.assertTrue(any("closed the connection" in s for s in seen), seen)
        server.join(TIMEOUT_S)
        self.assertEqual(server.binds, 2)
        p.send_signal(2)
        out, _ = p.communicate(timeout=30)
        self.assertEqual(p.returncode, 0)
        lines = out.strip().splitlines()
        for line in lines:  # stdout is statistics only
            json.loads(line)
        last = json.loads(lines[-1])
        self.assertEqual(last["sis_link"]["connects"], 2)
        self.assertEqual(last["ip_client"]["bound"], 1)
        server.kept.close()

    def test_a_tun_device_that_disappears_is_reattached(self):
        why = unavailable()
        if why:
            self.skipTest(why)
        name = f"hfg{os.getpid() % 100000}"
        run("ip", "tuntap", "add", "dev", name, "mode", "tun")
        self.addCleanup(subprocess.run, ["ip", "link", "delete", name], capture_output=True)
        lost, back = threading.Event(), threading.Event()

        class watcher(logging.Handler):
            def emit(self, record):
                text = record.getMessage()
                if "cannot read" in text:
                    lost.set()
                if "reattached" in text:
                    back.set()

        log = logging.getLogger("gnuradio.hfstack.tun")
        handler = watcher()
        log.addHandler(handler)
        self.addCleanup(log.removeHandler, handler)
        self.addCleanup(log.setLevel, log.level)
        log.setLevel(logging.INFO)
        from gnuradio import gr
        device = tun_device(name)
        tb = gr.top_block()
        tb.msg_connect(device, "out", device, "in")
        tb.start()
        try:
            run("ip", "link", "delete", name)
            self.assertTrue(lost.wait(TIMEOUT_S))
            run("ip", "tuntap", "add", "dev", name, "mode", "tun")
            self.assertTrue(back.wait(TIMEOUT_S))
        finally:
            tb.stop()
            tb.wait()
            device.close()
        self.assertEqual(device.counters["read_errors"], 1)
        self.assertEqual(device.counters["reattached"], 1)


class qa_tun_errors(gr_unittest.TestCase):
    """A TUN device that cannot be had gives a clear error, never a hang."""

    def test_bad_names_and_busy_devices(self):
        with self.assertRaisesRegex(tun_error, "name must be"):
            tun_device("x" * 20)
        if os.geteuid() != 0 or not os.path.exists("/dev/net/tun"):
            self.skipTest("needs root and /dev/net/tun for the busy-device case")
        first = tun_device(f"hfbusy{os.getpid() % 10000}")
        try:
            with self.assertRaisesRegex(tun_error, "in use"):
                tun_device(first.name)
        finally:
            first.close()


if __name__ == "__main__":
    gr_unittest.main()
