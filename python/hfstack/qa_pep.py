#!/usr/bin/env python3
#
# Copyright 2026 gr-hfstack authors.
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""The HF-PEP end to end: two hfstack-node processes with --pep, each in a network
namespace of its own, their emulated modems on one channel over ZeroMQ ipc://. In the
near namespace curl fetches a file from an HTTP server in the far one through SOCKS5
and through nftables REDIRECT (rules installed by --pep-intercept and removed on
stop); a port nobody listens on is refused locally; 50 connections at once all
complete; dig asks the near DNS proxy, the far one resolves with its namespace's
resolver (a small DNS server there), and the second lookup comes from the cache. Bad --pep settings are refused with one line. The namespace tests skip,
saying why, only where namespaces are unavailable or nft/curl are missing."""

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import unittest

from gnuradio import gr_unittest
from gnuradio.hfstack.ip_testbed import DNS_SERVER, run
from gnuradio.hfstack.pep import RULES_TABLE, nft_ruleset
from gnuradio.hfstack.pep_testbed import FAR, pep_testbed, unavailable

APP = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "apps",
                   "hfstack-node")
SCALE = 20.0
TIMEOUT_S = 120


class qa_pep_settings(gr_unittest.TestCase):

    def refused(self, *args):
        done = subprocess.run([sys.executable, APP, "--kind", "emulator", "--check", *args],
                              capture_output=True, text=True, timeout=60)
        self.assertEqual(done.returncode, 2, done.stdout + done.stderr)
        return done.stderr

    def test_bad_settings_are_refused_before_anything_opens(self):
        self.assertIn("--pep-socks needs --pep", self.refused("--pep-socks", "127.0.0.1:1080"))
        self.assertIn("PEP: ", self.refused("--pep", "--pep-options", "deny_ports=99999"))
        self.assertIn("unknown PEP option", self.refused("--pep", "--pep-options", "sox=1"))
        self.assertIn("is not HOST:PORT", self.refused("--pep", "--pep-socks", "1080"))
        self.assertIn("needs --pep-redirect or --pep-transparent",
                      self.refused("--pep", "--pep-intercept", "10.0.0.0/8"))
        self.assertIn("is not a prefix", self.refused("--pep", "--pep-redirect", ":3129",
                                                      "--pep-intercept", "10.0.0.0/33"))
        self.assertIn("not with --pair", self.refused("--pair", "--pep"))

    def test_ruleset(self):
        text = nft_ruleset(["10.78.0.0/24", "fd00:78::/64"], redirect_port=3129, tproxy_port=3130)
        self.assertIn(f"table inet {RULES_TABLE}", text)
        self.assertIn("meta mark != 0x5066 ip daddr { 10.78.0.0/24 } tcp dport != 3129 "
                      "redirect to :3129", text)
        self.assertIn("ip6 daddr { fd00:78::/64 }", text)
        self.assertIn("tproxy ip to :3130", text)
        self.assertIn("udp dport 443 reject", text)
        if shutil.which("nft") and os.geteuid() == 0:
            check = subprocess.run(["nft", "-c", "-f", "-"], input=text, capture_output=True,
                                   text=True, timeout=20)
            self.assertEqual(check.returncode, 0, check.stderr)


class qa_pep_namespaces(gr_unittest.TestCase):

    @classmethod
    def setUpClass(cls):
        why = unavailable()
        for tool in ("curl", "dig"):
            if not why and not shutil.which(tool):
                why = f"{tool} is not installed (make test installs curl and dnsutils)"
        if why:
            raise unittest.SkipTest(why)
        cls.bed = pep_testbed(rate=9600, time_scale=SCALE).start()
        cls.ns = cls.bed.ns
        try:
            cls.body = os.urandom(100_000)
            www = os.path.join(cls.bed.tmp, "www")
            os.makedirs(www)
            with open(os.path.join(www, "file.bin"), "wb") as f:
                f.write(cls.body)
            with open(os.path.join(www, "small.bin"), "wb") as f:
                f.write(cls.body[:5000])
            cls.bed.serve("b", DNS_SERVER, FAR)
            cls.bed.serve("b", "import functools, http.server\n"
                               "h = functools.partial(http.server.SimpleHTTPRequestHandler,"
                               f" directory={www!r})\n"
                               "class S(http.server.ThreadingHTTPServer):\n"
                               "    request_queue_size = 128\n"
                               f"s = S(({FAR!r}, 8080), h)\n"
                               "print('ready', flush=True)\n"
                               "s.serve_forever()\n")
        except Exception:
            cls.bed.stop()
            raise

    @classmethod
    def tearDownClass(cls):
        cls.bed.stop()

    def curl(self, *args):
        return subprocess.run(["ip", "netns", "exec", self.ns["a"], "curl", "-s", "--max-time",
                               str(TIMEOUT_S), *args], capture_output=True, timeout=2 * TIMEOUT_S)

    def test_1_socks5_carries_a_file(self):
        done = self.curl("--socks5", self.bed.socks, "http://10.78.0.2:8080/file.bin")
        self.assertEqual(done.returncode, 0, done.stderr)
        self.assertEqual(done.stdout, self.body)

    def test_2_intercepted_connection_carries_a_file(self):
        rules = run("ip", "netns", "exec", self.ns["a"], "nft", "list", "table", "inet",
                    RULES_TABLE).stdout
        self.assertIn("redirect to :3129", rules)
        done = self.curl("http://10.78.0.2:8080/file.bin")  # no proxy setting at all
        self.assertEqual(done.returncode, 0, done.stderr)
        self.assertEqual(done.stdout, self.body)

    def test_3_refused_at_the_far_end_is_refused_here(self):
        socks = self.curl("--socks5", "127.0.0.1:1080", "http://10.78.0.2:8081/")
        self.assertEqual(socks.returncode, 97, socks.stderr)  # SOCKS reply: refused
        intercepted = self.curl("http://10.78.0.2:8081/")
        self.assertIn(intercepted.returncode, (7, 52, 56), intercepted.stderr)  # reset

    def test_4_fifty_connections_at_once(self):
        script = ("for i in $(seq 50); do curl -s --max-time %d --socks5 127.0.0.1:1080 "
                  "-o /dev/null -w '%%{http_code} %%{size_download}\\n' "
                  "http://10.78.0.2:8080/small.bin & done; wait" % TIMEOUT_S)
        done = subprocess.run(["ip", "netns", "exec", self.ns["a"], "sh", "-c", script],
                              capture_output=True, text=True, timeout=3 * TIMEOUT_S)
        lines = done.stdout.split("\n")
        self.assertEqual(sorted(l for l in lines if l), ["200 5000"] * 50, done.stdout)

    def dig(self, name):
        done = subprocess.run(["ip", "netns", "exec", self.ns["a"], "dig", "@127.0.0.1", "-p",
                               self.bed.dns.split(":")[1], name, "A", "+tries=1", f"+time={TIMEOUT_S}", "+short"],
                              capture_output=True, text=True, timeout=2 * TIMEOUT_S)
        return done.stdout.split()

    def test_4b_dns_lookups_cross_once_then_come_from_the_cache(self):
        self.assertEqual(self.dig("www.far.example"), ["10.99.0.1"])  # across HF
        self.assertEqual(self.dig("WWW.far.example"), ["10.99.0.1"])  # the cache
        self.assertEqual(self.dig("gateway.hf"), ["10.79.0.1"])       # static

    def test_5_statistics_and_rules_removed_on_stop(self):
        final = self.bed.stop_node("a")
        self.assertGreaterEqual(final["pep"]["accepted"], 2)
        self.assertGreater(final["pep"]["bytes_down"], 0)
        self.assertEqual(final["pep"]["dns_forwarded"], 1)
        self.assertEqual(final["pep"]["dns_cache_hits"], 1)
        self.assertEqual(final["pep"]["dns_static_answers"], 1)
        tables = run("ip", "netns", "exec", self.ns["a"], "nft", "list", "tables").stdout
        self.assertNotIn(RULES_TABLE, tables)


class qa_pep_real_modem(gr_unittest.TestCase):
    """A short exchange through the real STANAG 4539 modem (2400 bps, short interleaver;
    each node's audio reaches the other process over ZeroMQ) through AWGN at 30 dB, in
    real time: a small page through the transparent path."""

    def test_page_over_the_real_modem(self):
        why = unavailable()
        if not why and not shutil.which("curl"):
            why = "curl is not installed (make test installs it)"
        if why:
            self.skipTest(why)
        with pep_testbed(rate=2400, time_scale=1.0, kind="loopback", snr_db=30.0) as bed:
            page = bytes(range(256)) * 8
            www = os.path.join(bed.tmp, "www")
            os.makedirs(www)
            with open(os.path.join(www, "p.bin"), "wb") as f:
                f.write(page)
            bed.serve("b", "import functools, http.server\n"
                           f"h = functools.partial(http.server.SimpleHTTPRequestHandler, directory={www!r})\n"
                           f"s = http.server.HTTPServer(({FAR!r}, 8080), h)\n"
                           "print('ready', flush=True)\n"
                           "s.serve_forever()\n")
            done = subprocess.run(bed.command("a", "curl", "-s", "--max-time", "300",
                                              f"http://{FAR}:8080/p.bin"),
                                  capture_output=True, timeout=400)
            self.assertEqual(done.returncode, 0, done.stderr)
            self.assertEqual(done.stdout, page)
            final = bed.stop_node("b")
            self.assertGreater(final["radio"]["bursts_received"], 0)


class qa_hfstack_pep(gr_unittest.TestCase):
    """hfstack-pep, a SIS client over TCP, twice against hfstack-node --pair (emulated
    modems): curl through the near one's SOCKS5 fetches a page the far one connects
    to; no root, no namespaces. Bad options exit 2 with one line. Where dumpcap and
    tshark run, the SIS traffic is captured and our Wireshark dissector
    (wireshark/hfstack_slep.lua) must read the SLEP and PEP fields in it."""

    def check_dissector(self, capture, port, web_port):
        script = os.path.join(os.path.dirname(APP), "..", "wireshark", "hfstack_slep.lua")
        done = subprocess.run(["tshark", "-X", f"lua_script:{script}", "-r", capture,
                               "-d", f"tcp.port=={port},s5066sis", "-d",
                               f"tcp.port=={port + 1},s5066sis", "-Y", "slep", "-T", "fields",
                               "-e", "slep.type", "-e", "hfpep.address", "-e", "hfpep.port",
                               "-e", "hfpep.status"], capture_output=True, text=True, timeout=120)
        self.assertEqual(done.returncode, 0, done.stderr)
        rows = [l.split("\t") for l in done.stdout.splitlines()]
        opens = [r for r in rows if r[0] == "3"]
        self.assertTrue(opens, done.stdout[:2000])
        self.assertEqual((opens[0][1], opens[0][2]), ("127.0.0.1", str(web_port)))
        self.assertIn("0", [r[3] for r in rows if r[0] == "4"])  # status: connected
        self.assertGreater(sum(1 for r in rows if r[0] == "4"), 15)  # the page's DATA

    def test_bad_options(self):
        pep_app = os.path.join(os.path.dirname(APP), "hfstack-pep")
        for args, reason in ((["--options", "deny_ports=x"], "deny_ports"),
                             (["--socks", "nowhere"], "is not HOST:PORT"),
                             (["--intercept", "10.0.0.0/8"], "needs --redirect"),
                             (["--dns", "127.0.0.1:5353"], "dns_peer")):
            done = subprocess.run([sys.executable, pep_app, *args], capture_output=True,
                                  text=True, timeout=60)
            self.assertEqual(done.returncode, 2, done.stderr)
            self.assertIn(reason, done.stderr)
            self.assertEqual(len(done.stderr.strip().splitlines()), 1, done.stderr)

    def test_two_peps_over_a_node_pair(self):
        if not shutil.which("curl"):
            self.skipTest("curl is not installed (make test installs it)")
        from qa_hfstack_console import accepts, free_port_pair
        import socket
        import time
        pep_app = os.path.join(os.path.dirname(APP), "hfstack-pep")
        with tempfile.TemporaryDirectory() as www:
            body = os.urandom(30_000)
            with open(os.path.join(www, "page.bin"), "wb") as f:
                f.write(body)
            web = subprocess.Popen([sys.executable, "-m", "http.server", "0", "--bind",
                                    "127.0.0.1", "--directory", www],
                                   stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
            self.addCleanup(lambda: (web.kill(), web.communicate()))
            line = web.stdout.readline()  # "Serving HTTP on 127.0.0.1 port N ..."
            web_port = int(line.split(" port ")[1].split()[0])
            port = free_port_pair()
            node = subprocess.Popen([sys.executable, APP, "--pair", "--kind", "emulator",
                                     "--profile", "", "--time-scale", str(int(SCALE)), "--rate",
                                     "9600", "--sis-port", str(port), "--stats-interval", "0"],
                                    stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
            self.addCleanup(lambda: (node.terminate(), node.communicate(timeout=30)))
            deadline = time.monotonic() + 60
            while not (accepts(port) and accepts(port + 1)):
                self.assertIsNone(node.poll(), "hfstack-node exited")
                self.assertLess(time.monotonic(), deadline, "hfstack-node never listened")
                time.sleep(0.05)  # polling a starting process, bounded by the deadline
            with socket.socket() as s:
                s.bind(("127.0.0.1", 0))
                socks_port = s.getsockname()[1]
            peps = []
            for sis, extra in ((port, ["--options", "peers=127.0.0.0/8=0.0.0.2",
                                       "--socks", f"127.0.0.1:{socks_port}"]),
                               (port + 1, [])):
                p = subprocess.Popen([sys.executable, pep_app, "--server", f"127.0.0.1:{sis}",
                                      "--stats-interval", "0", *extra],
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                self.addCleanup(lambda p=p: p.poll() is None and (p.kill(), p.communicate()))
                for line in p.stderr:  # it logs once listening and attached
                    if "HF-PEP on SIS server" in line:
                        break
                self.assertIsNone(p.poll(), "hfstack-pep exited")
                peps.append(p)
            # The SIS traffic of both proxies, for the Wireshark dissector (when there).
            capture = os.path.join(www, "sis.pcapng")
            dumpcap = None
            if shutil.which("dumpcap") and shutil.which("tshark") and os.geteuid() == 0:
                dumpcap = subprocess.Popen(["dumpcap", "-q", "-i", "lo", "-f",
                                            f"tcp port {port} or tcp port {port + 1}", "-w", capture],
                                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
                for line in dumpcap.stderr:  # "File: ..." once it captures
                    if "File:" in line:
                        break
            done = subprocess.run(["curl", "-s", "--max-time", str(TIMEOUT_S), "--socks5",
                                   f"127.0.0.1:{socks_port}",
                                   f"http://127.0.0.1:{web_port}/page.bin"],
                                  capture_output=True, timeout=2 * TIMEOUT_S)
            self.assertEqual(done.returncode, 0, done.stderr)
            self.assertEqual(done.stdout, body)
            if dumpcap is not None:
                dumpcap.terminate()
                dumpcap.wait(timeout=30)
                self.check_dissector(capture, port, web_port)
            peps[0].send_signal(signal.SIGTERM)
            out, err = peps[0].communicate(timeout=60)
            self.assertEqual(peps[0].returncode, 0, err)
            final = json.loads(out.strip().splitlines()[-1])
            self.assertEqual(final["pep"]["accepted"], 1)
            self.assertGreater(final["pep"]["bytes_down"], len(body))  # body and headers
            self.assertGreater(final["sis_link"]["connects"], 0)


if __name__ == "__main__":
    gr_unittest.main()
