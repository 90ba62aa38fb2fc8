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
stop); from a third namespace, a client host routed through the near one, curl's
connection is taken by nftables TPROXY (its policy routing installed by the node,
idempotently, and removed on stop); a port nobody listens on is refused locally; 50
connections at once all complete; dig asks the near DNS proxy over UDP and over TCP,
the far one resolves with its namespace's resolver (a small DNS server there), and
later lookups come from the cache; garbage, oversize and stalled DNS-over-TCP
connections are dropped while other clients are answered; headless Chromium loads a
multi-file site (HTML, CSS, script, images) through SOCKS5. Bad --pep settings are
refused with one line. The namespace tests skip, saying why, only where namespaces are
unavailable or nft/curl/dig/chromium are missing."""

import json
import os
import queue
import random
import select
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time
import unittest
from unittest import mock

from gnuradio import gr_unittest
from gnuradio.hfstack.testbed.ip import DNS_SERVER, run
from gnuradio.hfstack import pep
from gnuradio.hfstack.testbed import web as pep_web
from gnuradio.hfstack.pep import (DNS_MAX_MESSAGE, DNS_TCP_IDLE_S, RULES_TABLE, TPROXY_MARK,
                                  TPROXY_TABLE, dns_tcp_frames, host_name, literal_address,
                                  nft_ruleset)
from gnuradio.hfstack.testbed.pep import (CAPACITY_CLIENT, CLIENT, CONFIRMING_SERVER, FAR, FAR_NAME,
                                          GATEWAY, pep_testbed, unavailable)

APP = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "apps",
                   "hfstack-node")
SCALE = 20.0
TIMEOUT_S = 120

# A DNS client in a namespace (argv: port, then a JSON list of steps on TCP
# connections to 127.0.0.1:PORT), printing a JSON list of what each step saw. Steps:
# ["open", k]: connection k; ["send", k, hex]: bytes on it; ["ask", k, id, name]: a
# framed A query; ["answer", k]: read one framed message, its id and rcode;
# ["eof", k, seconds]: wait that long at most for the server to close it; ["close", k];
# ["shut", k]: half-close it; ["mark", k]: print "mark" at once (the test waits for it).
DNS_TCP_CLIENT = r"""
import json, socket, struct, sys, time
port, steps = int(sys.argv[1]), json.loads(sys.argv[2])
conns, seen = {}, []
def query(qid, name):
    q = struct.pack("!HHHHHH", qid, 0x0100, 1, 0, 0, 0)
    q += b"".join(bytes([len(l)]) + l.encode() for l in name.split(".")) + b"\0"
    return q + struct.pack("!HH", 1, 1)
def read(c, n):
    data = b""
    while len(data) < n:
        d = c.recv(n - len(data))
        if not d:
            raise EOFError
        data += d
    return data
for step in steps:
    kind, k = step[0], step[1]
    if kind == "open":
        conns[k] = socket.create_connection(("127.0.0.1", port), timeout=60)
        seen.append("open")
    elif kind == "send":
        conns[k].sendall(bytes.fromhex(step[2]))
        seen.append("sent")
    elif kind == "ask":
        q = query(step[2], step[3])
        conns[k].sendall(struct.pack("!H", len(q)) + q)
        seen.append("asked")
    elif kind == "answer":
        try:
            m = read(conns[k], struct.unpack("!H", read(conns[k], 2))[0])
            an = struct.unpack("!H", m[6:8])[0]
            seen.append({"id": struct.unpack("!H", m[:2])[0], "rcode": m[3] & 15,
                         "address": socket.inet_ntoa(m[-4:]) if an else None})
        except (EOFError, OSError) as e:
            seen.append(f"no answer: {e!r}")
    elif kind == "close":
        conns[k].close()
        seen.append("closed")
    elif kind == "shut":
        conns[k].shutdown(socket.SHUT_WR)
        seen.append("shut")
    elif kind == "mark":
        print("mark", flush=True)
        seen.append("mark")
    elif kind == "eof":
        conns[k].settimeout(step[2])
        t0 = time.monotonic()
        try:
            seen.append("eof" if conns[k].recv(1) == b"" else "data")
        except ConnectionResetError:
            seen.append("eof")
        except socket.timeout:
            seen.append("still open")
        seen[-1] = [seen[-1], round(time.monotonic() - t0, 1)]
print(json.dumps(seen))
"""


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
        self.assertIn("tcp dport 3130 meta mark != 0x5067 drop", text)
        self.assertIn("udp dport 443 reject", text)
        self.assertIn(f"meta mark set {TPROXY_MARK:#x}", text)
        if shutil.which("nft") and os.geteuid() == 0:
            check = subprocess.run(["nft", "-c", "-f", "-"], input=text, capture_output=True,
                                   text=True, timeout=20)
            self.assertEqual(check.returncode, 0, check.stderr)

    def test_dns_over_tcp_framing(self):
        rng = random.Random(7)
        q1, q2 = bytes(rng.getrandbits(8) & 0x7F for _ in range(29)), bytes(range(12, 40))
        messages, rest, problem = dns_tcp_frames(b"\x00\x1d" + q1 + b"\x00\x1c" + q2
                                                 + b"\x00\x1c\x00")
        self.assertEqual((messages, rest, problem), ([q1, q2], b"\x00\x1c\x00", None))
        self.assertEqual(dns_tcp_frames(b"\x00"), ([], b"\x00", None))
        for garbage, why in ((b"\x00\x00", "0 or over"),
                             ((DNS_MAX_MESSAGE + 1).to_bytes(2, "big") + bytes(9), "0 or over"),
                             (b"GET / HTTP/1.1\r\n", "0 or over"),
                             (b"\x00\x05hello", "shorter than its header"),
                             (b"\x00\x0c" + b"\x00\x01\x81\x80" + bytes(8), "a DNS response")):
            messages, _, problem = dns_tcp_frames(garbage)
            self.assertEqual(messages, [])
            self.assertIn(why, problem)
        # A good query before the garbage is still taken.
        messages, _, problem = dns_tcp_frames(b"\x00\x1d" + q1 + b"\xff\xff")
        self.assertEqual(messages, [q1])
        self.assertIsNotNone(problem)

    def test_socks_names_that_are_addresses(self):
        self.assertEqual(literal_address(b"10.78.0.2"), "10.78.0.2")
        self.assertEqual(literal_address(b"[fd00:78::2]"), "fd00:78::2")
        self.assertIsNone(literal_address(b"www.example.com"))
        self.assertIsNone(literal_address(b"10.78.0.300"))
        self.assertIsNone(literal_address(b"\xff\xfe"))

    def test_far_side_lookups(self):
        """The far proxy's lookups run beside its thread and come back through take();
        at most MAX_RESOLVES wait at once."""
        from gnuradio.hfstack.pep import resolve
        self.assertIn("127.0.0.1", resolve.addresses_of("localhost", 80))
        woken = threading.Event()
        gate = threading.Event()

        def lookup(name, port):
            gate.wait(60)
            return {"one.example": ["192.0.2.1", "2001:db8::1"]}.get(name, [])

        r = resolve.name_resolver(woken.set, threads=2, lookup=lookup)
        self.addCleanup(r.stop)
        self.assertTrue(r.ask(7, "one.example", 80))
        self.assertTrue(r.ask(8, "none.example", 80))
        self.assertEqual(r.take(), [])  # nothing answered yet
        for key in range(resolve.MAX_RESOLVES - 2):
            self.assertTrue(r.ask(100 + key, "none.example", 80))
        self.assertFalse(r.ask(9, "one.example", 80))  # the bound
        gate.set()
        answers = {}
        while len(answers) < resolve.MAX_RESOLVES:
            self.assertTrue(woken.wait(60))
            woken.clear()
            answers.update(r.take())
        self.assertEqual(answers[7], ["192.0.2.1", "2001:db8::1"])
        self.assertEqual(answers[8], [])
        self.assertTrue(r.ask(9, "one.example", 80))  # room again

    def test_socks_host_names(self):
        """Names the near proxy passes on for the far one to resolve; the rest refused."""
        self.assertEqual(host_name(b"www.example.org"), "www.example.org")
        self.assertEqual(host_name(b"www.example.org."), "www.example.org")  # rooted
        self.assertEqual(host_name(b"a" * 253), "a" * 253)
        for bad in (b"", b".", b"a" * 254, b"a b", b"a/b", b"a\x00b", b"\xc3\xa9.fr"):
            self.assertIsNone(host_name(bad), bad)

    def test_policy_routing_is_idempotent_and_leaves_others_alone(self):
        """install_policy_routing twice adds one rule and one route; remove takes out
        only those; someone else's rules stay; a table in the way is refused."""
        why = unavailable()
        if why:
            self.skipTest(why)
        ns = f"hfpr{os.getpid() % 100000}"
        run("ip", "netns", "add", ns)
        self.addCleanup(subprocess.run, ["ip", "netns", "delete", ns], capture_output=True)
        run("ip", "-n", ns, "link", "set", "lo", "up")
        run("ip", "-n", ns, "rule", "add", "fwmark", "7", "lookup", "77")  # someone else's
        run("ip", "-n", ns, "route", "add", "local", "default", "dev", "lo", "table", "77")
        script = ("import json, sys\n"
                  "from gnuradio.hfstack import pep\n"
                  "step = sys.argv[1]\n"
                  "try:\n"
                  "    if step == 'install':\n"
                  "        pep.install_policy_routing(['-4', '-6'])\n"
                  "    else:\n"
                  "        pep.remove_policy_routing()\n"
                  "    print('ok')\n"
                  "except pep.proxy_error as e:\n"
                  "    print('refused: ' + str(e))\n")

        def step(name):
            return run("ip", "netns", "exec", ns, sys.executable, "-c", script, name).stdout.strip()

        def rules(family):
            return [line for line in run("ip", "-n", ns, family, "rule", "show").stdout.splitlines()
                    if "lookup" in line and "main" not in line and "local" not in line.split()[-1]
                    and "default" not in line]

        mark = f"fwmark {TPROXY_MARK:#x} lookup {TPROXY_TABLE}"
        self.assertEqual(step("install"), "ok")
        self.assertEqual(step("install"), "ok")
        for family in ("-4", "-6"):
            ours = [line for line in rules(family) if mark in line]
            self.assertEqual(len(ours), 1, rules(family))
            routes = run("ip", "-n", ns, family, "route", "show", "table", str(TPROXY_TABLE)).stdout
            self.assertEqual(routes.count("local default dev lo"), 1, routes)
        self.assertIn("fwmark 0x7 lookup 77", "\n".join(rules("-4")))
        self.assertEqual(step("remove"), "ok")
        for family in ("-4", "-6"):
            self.assertFalse([line for line in rules(family) if mark in line], rules(family))
            self.assertEqual(run("ip", "-n", ns, family, "route", "show", "table",
                                 str(TPROXY_TABLE)).stdout.strip(), "")
        self.assertIn("fwmark 0x7 lookup 77", "\n".join(rules("-4")))
        self.assertIn("local default dev lo", run("ip", "-n", ns, "route", "show", "table",
                                                  "77").stdout)
        # Someone else's identical rule: used, not doubled, and left behind on removal.
        run("ip", "-n", ns, "rule", "add", "fwmark", f"{TPROXY_MARK:#x}", "lookup",
            str(TPROXY_TABLE))
        self.assertEqual(step("install"), "ok")
        self.assertEqual(len([line for line in rules("-4") if mark in line]), 1, rules("-4"))
        self.assertEqual(step("remove"), "ok")
        self.assertEqual(len([line for line in rules("-4") if mark in line]), 1, rules("-4"))
        # A table already routing elsewhere is not touched.
        run("ip", "-n", ns, "route", "add", "blackhole", "default", "table", str(TPROXY_TABLE))
        self.assertIn("not touching it", step("install"))
        self.assertIn("blackhole default", run("ip", "-n", ns, "route", "show", "table",
                                               str(TPROXY_TABLE)).stdout)


class qa_pep_dns_tcp_limits(gr_unittest.TestCase):
    """The DNS proxy's TCP listener in this process (no node, no root: static names are
    answered locally): a client that sends and never reads costs a bounded outbox and
    is then not read; connections beyond the limit are closed at once; other clients
    are answered meanwhile."""

    QUERY = (struct.pack("!HHHHHH", 5, 0x0100, 1, 0, 0, 0) + b"\x07gateway\x02hf\x00"
             + struct.pack("!HH", 1, 1))
    FRAME = struct.pack("!H", len(QUERY)) + QUERY

    def setUp(self):
        self.proxy = pep.pep_proxy("", dns="127.0.0.1:0", dns_peer="0.0.0.2",
                                   dns_static="gateway.hf=10.79.0.1")
        self.address = self.proxy.open_listeners()["dns_tcp"]
        self.proxy.start()
        self.addCleanup(self.proxy.stop)

    def answered(self):
        """True when a new connection's query is answered with the static address."""
        with socket.create_connection(self.address, timeout=30) as c:
            c.sendall(self.FRAME)
            n = struct.unpack("!H", c.recv(2))[0]
            answer = b""
            while len(answer) < n:
                data = c.recv(n - len(answer))
                if not data:
                    break
                answer += data
        return answer[:2] == self.QUERY[:2] and answer[-4:] == socket.inet_aton("10.79.0.1")

    def test_a_client_that_never_reads(self):
        c = socket.socket()
        self.addCleanup(c.close)
        c.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        c.connect(self.address)
        c.setblocking(False)
        chunk = self.FRAME * 100
        most, stalled, deadline = 0, False, time.monotonic() + 60
        for _ in range(100_000):  # bounded by count and by the deadline
            try:
                c.send(chunk)
                continue
            except BlockingIOError:
                pass
            with self.proxy.lock:
                streams = list(self.proxy.dns_streams.values())
                most = max([most] + [len(d.outbox) for d in streams])
                stalled = any(len(d.outbox) >= pep.dns.DNS_TCP_MAX_OUTBOX and not d.wants_read()
                              for d in streams)
            if stalled or time.monotonic() > deadline:
                break
            select.select([], [c], [], 0.05)  # room again, or look at the proxy again
        self.assertTrue(stalled, f"the proxy still reads a client that never reads ({most} "
                                 "bytes of answers queued)")
        self.assertLessEqual(most, pep.dns.DNS_TCP_MAX_OUTBOX + 2 + DNS_MAX_MESSAGE)
        self.assertTrue(self.answered())  # another client meanwhile

    def test_connections_beyond_the_limit_are_closed_at_once(self):
        with mock.patch.object(pep.dns, "DNS_TCP_MAX_CONNECTIONS", 3):
            held = [socket.create_connection(self.address, timeout=30) for _ in range(3)]
            for c in held:
                self.addCleanup(c.close)
                c.sendall(self.FRAME)
                self.assertEqual(struct.unpack("!H", c.recv(2))[0], 44)  # answered: held open
                c.recv(44)
            with socket.create_connection(self.address, timeout=30) as extra:
                try:
                    self.assertEqual(extra.recv(1), b"")  # closed by the proxy
                except ConnectionResetError:
                    pass
            self.assertEqual(self.proxy.statistics()["driver_dns_tcp_refused"], 1)
            # A client that half-closes is closed by the proxy, which frees its place.
            held[-1].shutdown(socket.SHUT_WR)
            self.assertEqual(held[-1].recv(1), b"")
            self.assertTrue(self.answered())


class qa_pep_descriptors(gr_unittest.TestCase):
    """The proxy in this process (no node, no root) when accept() runs out of
    descriptors: the listeners rest instead of being polled in a spin, and serve again
    once descriptors are free."""

    def test_out_of_descriptors_rests_the_listeners(self):
        import resource
        proxy = pep.pep_proxy("peers=default=0.0.0.2", socks="127.0.0.1:0",
                              stats_interval=0)
        address = proxy.open_listeners()["socks"]
        proxy.start()
        self.addCleanup(proxy.stop)
        limits = resource.getrlimit(resource.RLIMIT_NOFILE)
        self.addCleanup(resource.setrlimit, resource.RLIMIT_NOFILE, limits)
        # Clients in another process; this one may open 4 more descriptors.
        clients = subprocess.Popen(
            [sys.executable, "-c", "import socket, sys\n"
             f"s = [socket.create_connection({address!r}) for _ in range(20)]\n"
             "print('ready', flush=True)\nsys.stdin.readline()\n"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        self.addCleanup(lambda: clients.poll() is None and (clients.kill(), clients.wait()))
        resource.setrlimit(resource.RLIMIT_NOFILE,
                           (len(os.listdir("/proc/self/fd")) + 4, limits[1]))
        self.assertEqual(clients.stdout.readline().strip(), "ready")
        deadline = time.monotonic() + 30
        while proxy.statistics()["driver_accept_paused"] == 0 and time.monotonic() < deadline:
            time.sleep(0.05)  # polling the proxy's counter, bounded by the deadline
        resting = proxy.statistics()
        resource.setrlimit(resource.RLIMIT_NOFILE, limits)
        clients.stdin.write("\n")
        clients.stdin.close()
        clients.wait(timeout=30)
        self.assertGreaterEqual(resting["driver_accept_paused"], 1)
        self.assertLess(resting["driver_accepted"], 20)  # not all: no descriptor for more
        # Descriptors free again: a new client is served (its SOCKS greeting answered).
        with socket.create_connection(address, timeout=30) as c:
            c.sendall(b"\x05\x01\x00")
            self.assertEqual(c.recv(2), b"\x05\x00")


class qa_pep_namespaces(gr_unittest.TestCase):

    @classmethod
    def setUpClass(cls):
        why = unavailable()
        for tool in ("curl", "dig"):
            if not why and not shutil.which(tool):
                why = f"{tool} is not installed (make test installs curl and dnsutils)"
        if why:
            raise unittest.SkipTest(why)
        cls.bed = pep_testbed(rate=9600, time_scale=SCALE, client_host=True).start()
        cls.ns = cls.bed.ns
        try:
            cls.body = random.Random(22).randbytes(100_000)
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
            cls.site = os.path.join(cls.bed.tmp, "site")
            cls.site_files = pep_web.write_site(cls.site)
            cls.bed.serve("b", pep_web.SITE_SERVER, FAR, "8090", cls.site)
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

    def test_2b_tproxy_carries_a_forwarded_connection(self):
        """A client host routed through the near namespace: nftables TPROXY hands its
        connection to the transparent listener, over the policy route the node set up."""
        a = self.ns["a"]
        rules = run("ip", "netns", "exec", a, "nft", "list", "table", "inet", RULES_TABLE).stdout
        self.assertIn("tproxy ip to :3130", rules)
        self.assertIn(f"fwmark {TPROXY_MARK:#x} lookup {TPROXY_TABLE}",
                      run("ip", "-n", a, "rule", "show").stdout)
        self.assertIn("local default dev lo",
                      run("ip", "-n", a, "route", "show", "table", str(TPROXY_TABLE)).stdout)
        done = subprocess.run(["ip", "netns", "exec", self.ns["c"], "curl", "-s", "--max-time",
                               str(TIMEOUT_S), "-w", "%{local_ip}",
                               "-o", os.path.join(self.bed.tmp, "tproxy.bin"),
                               "http://10.78.0.2:8080/file.bin"],
                              capture_output=True, text=True, timeout=2 * TIMEOUT_S)
        self.assertEqual(done.returncode, 0, done.stderr)
        self.assertEqual(done.stdout, CLIENT)  # from the client host itself
        with open(os.path.join(self.bed.tmp, "tproxy.bin"), "rb") as f:
            self.assertEqual(f.read(), self.body)
        # The listener itself (0.0.0.0:3130) takes nothing TPROXY did not hand it.
        direct = subprocess.run(["ip", "netns", "exec", self.ns["c"], "curl", "-s",
                                 "--max-time", "3", f"http://{GATEWAY}:3130/"],
                                capture_output=True, text=True, timeout=60)
        self.assertEqual(direct.returncode, 28, direct.stderr)  # dropped: curl timed out

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
        self.assertEqual(sorted(line for line in lines if line), ["200 5000"] * 50, done.stdout)

    def dig(self, name):
        done = subprocess.run(["ip", "netns", "exec", self.ns["a"], "dig", "@127.0.0.1", "-p",
                               self.bed.dns.split(":")[1], name, "A", "+tries=1", f"+time={TIMEOUT_S}", "+short"],
                              capture_output=True, text=True, timeout=2 * TIMEOUT_S)
        return done.stdout.split()

    def test_4b_dns_lookups_cross_once_then_come_from_the_cache(self):
        self.assertEqual(self.dig("www.far.example"), ["10.99.0.1"])  # across HF
        self.assertEqual(self.dig("WWW.far.example"), ["10.99.0.1"])  # the cache
        self.assertEqual(self.dig("gateway.hf"), ["10.79.0.1"])       # static

    def dns_tcp(self, *steps):
        """DNS_TCP_CLIENT with `steps` in the near namespace, started; its process."""
        return subprocess.Popen(["ip", "netns", "exec", self.ns["a"], sys.executable, "-c",
                                 DNS_TCP_CLIENT, self.bed.dns.split(":")[1], json.dumps(steps)],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

    def dns_tcp_seen(self, client):
        out, err = client.communicate(timeout=2 * TIMEOUT_S)
        self.assertEqual(client.returncode, 0, err)
        return json.loads(out.splitlines()[-1])

    def dig_tcp(self, name):
        done = subprocess.run(["ip", "netns", "exec", self.ns["a"], "dig", "+tcp", "@127.0.0.1",
                               "-p", self.bed.dns.split(":")[1], name, "A", "+tries=1",
                               f"+time={TIMEOUT_S}", "+short"],
                              capture_output=True, text=True, timeout=2 * TIMEOUT_S)
        self.assertEqual(done.returncode, 0, done.stderr)
        return done.stdout.split()

    def test_4c_dns_over_tcp(self):
        """dig +tcp across HF; then several queries on one connection, sent at once;
        a query followed by the client's half-close is answered, then closed."""
        self.assertEqual(self.dig_tcp("tcp.far.example"), ["10.99.0.1"])
        seen = self.dns_tcp_seen(self.dns_tcp(
            ["open", 0], ["ask", 0, 11, "tcp.far.example"], ["ask", 0, 12, "gateway.hf"],
            ["ask", 0, 13, "www.far.example"], ["answer", 0], ["answer", 0], ["answer", 0],
            ["open", 1], ["ask", 1, 14, "gateway.hf"], ["shut", 1], ["answer", 1],
            ["eof", 1, 30]))
        answers = sorted((a["id"], a["rcode"], a["address"]) for a in seen[4:7])
        self.assertEqual(answers, [(11, 0, "10.99.0.1"), (12, 0, "10.79.0.1"),
                                   (13, 0, "10.99.0.1")], seen)
        self.assertEqual(seen[10], {"id": 14, "rcode": 0, "address": "10.79.0.1"}, seen)
        self.assertEqual(seen[11][0], "eof", seen)

    def test_4d_dns_over_tcp_garbage_is_dropped_others_answered(self):
        """An oversize length and a message shorter than a header each lose their
        connection at once, a stalled query when idle; a malformed query gets FORMERR
        and its connection goes on; while the stalled one waits, other clients on TCP
        and UDP are answered."""
        client = self.dns_tcp(
            ["open", 0], ["open", 1], ["open", 2], ["open", 3], ["open", 4],
            ["send", 0, "ffff" + "41" * 64],                   # 65535 bytes announced
            ["send", 1, "0005" + b"hello".hex()],              # shorter than a header
            ["send", 2, "000c" + "00070000" + "0001" + "0000" * 3],  # its question missing
            ["send", 3, "0010"],                               # a length, then nothing
            ["ask", 4, 41, "gateway.hf"], ["answer", 4],       # another client
            ["eof", 0, 30], ["eof", 1, 30], ["answer", 2],
            ["ask", 2, 42, "gateway.hf"], ["answer", 2], ["close", 2], ["close", 4],
            ["mark", 0], ["eof", 3, DNS_TCP_IDLE_S + 30])
        self.assertEqual(client.stdout.readline().strip(), "mark", client.stderr.read()
                         if client.poll() is not None else "")
        self.assertEqual(self.dig_tcp("www.far.example"), ["10.99.0.1"])
        self.assertEqual(self.dig("gateway.hf"), ["10.79.0.1"])  # UDP
        seen = self.dns_tcp_seen(client)
        self.assertEqual(seen[10], {"id": 41, "rcode": 0, "address": "10.79.0.1"}, seen)
        self.assertEqual((seen[11][0], seen[12][0]), ("eof", "eof"), seen)
        self.assertEqual(seen[13], {"id": 7, "rcode": 1, "address": None}, seen)  # FORMERR
        self.assertEqual(seen[15], {"id": 42, "rcode": 0, "address": "10.79.0.1"}, seen)
        self.assertEqual(seen[19][0], "eof", seen)  # the stalled one, once idle

    def test_4e_chromium_loads_a_site(self):
        """Headless Chromium in the near namespace, through SOCKS5, loads a site of
        seven files from the far one: its script, run after the load event, finds the
        style sheet applied and the four images decoded, and writes into the page."""
        why = pep_web.unavailable()
        if why:
            self.skipTest(why)
        report = pep_web.load_page(self.bed.command("a"), f"http://{FAR}:8090/",
                                   proxy=f"socks5://{self.bed.socks}", timeout_s=4 * TIMEOUT_S)
        self.assertEqual(report["dom"], f"{pep_web.INSERTED}: images {pep_web.IMAGES}/"
                                        f"{pep_web.IMAGES}, colour {pep_web.CSS_COLOR}", report)
        self.assertEqual(report["images_decoded"], pep_web.IMAGES, report)
        self.assertEqual(report["resources"], len(self.site_files) - 1, report)  # not the page
        self.assertGreaterEqual(report["load_ms"], report["dom_content_loaded_ms"], report)

    def test_4f_host_names_through_socks5(self):
        """curl --socks5-hostname and Chromium through SOCKS5 (which sends every host
        name to the proxy) reach the far site by its name, which only the far
        namespace's hosts file knows; a name that resolves to what the far policy does
        not allow is refused there."""
        done = self.curl("--socks5-hostname", self.bed.socks,
                         f"http://{FAR_NAME}:8080/small.bin")
        self.assertEqual(done.returncode, 0, done.stderr)
        self.assertEqual(done.stdout, self.body[:5000])
        done = self.curl("--socks5-hostname", self.bed.socks, "http://localhost:8080/")
        self.assertEqual(done.returncode, 97, done.stderr)  # forbidden: the far host's own
        why = pep_web.unavailable()
        if why:
            self.skipTest(why)
        report = pep_web.load_page(self.bed.command("a"), f"http://{FAR_NAME}:8090/",
                                   proxy=f"socks5://{self.bed.socks}", timeout_s=4 * TIMEOUT_S)
        self.assertEqual(report["dom"], f"{pep_web.INSERTED}: images {pep_web.IMAGES}/"
                                        f"{pep_web.IMAGES}, colour {pep_web.CSS_COLOR}", report)
        self.assertEqual(report["images_decoded"], pep_web.IMAGES, report)

    def test_5_statistics_and_rules_removed_on_stop(self):
        final = self.bed.stop_node("a")
        self.assertGreaterEqual(final["pep"]["accepted"], 2)
        self.assertGreater(final["pep"]["bytes_down"], 0)
        # Across HF: www.far.example (UDP), tcp.far.example (TCP); the cache: WWW.far.
        # example (UDP), tcp. and www.far.example (TCP, one connection), www.far.example
        # (dig +tcp); static: gateway.hf once on UDP in 4b and once more in 4d, four
        # times over TCP.
        self.assertEqual(final["pep"]["dns_forwarded"], 2)
        self.assertEqual(final["pep"]["dns_cache_hits"], 4)
        self.assertEqual(final["pep"]["dns_static_answers"], 6)
        self.assertEqual(final["pep"]["driver_dns_tcp_connections"], 9)
        self.assertEqual(final["pep"]["driver_dns_tcp_dropped"], 2)
        self.assertEqual(final["pep"]["driver_dns_tcp_idle_closed"], 1)
        self.assertEqual(final["pep"]["dns_malformed"], 1)
        tables = run("ip", "netns", "exec", self.ns["a"], "nft", "list", "tables").stdout
        self.assertNotIn(RULES_TABLE, tables)
        self.assertNotIn(f"lookup {TPROXY_TABLE}", run("ip", "-n", self.ns["a"], "rule",
                                                       "show").stdout)
        self.assertEqual(run("ip", "-n", self.ns["a"], "route", "show", "table",
                             str(TPROXY_TABLE)).stdout.strip(), "")


# A SOCKS5 client (argv: proxy port, destination address, port): the proxy's reply
# code and what the destination sent first (up to 64 bytes, 30 s), as JSON.
SOCKS_PROBE = r"""
import json, socket, struct, sys
c = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=30)
c.sendall(b"\x05\x01\x00")
assert c.recv(2) == b"\x05\x00"
c.sendall(b"\x05\x01\x00\x01" + socket.inet_aton(sys.argv[2]) + struct.pack("!H", int(sys.argv[3])))
reply = c.recv(10)
data = b""
try:
    while reply[1:2] == b"\x00" and len(data) < 64:
        d = c.recv(64)
        if not d:
            break
        data += d
except OSError:
    pass
print(json.dumps({"reply": reply[1], "data": data.decode("latin-1")}))
"""

# A service only the far host's loopback offers (argv: port): a secret to whoever
# connects.
LOOPBACK_SECRET = r"""
import socket, sys, threading
s = socket.create_server(("127.0.0.1", int(sys.argv[1])))
print("ready", flush=True)
while True:
    c, _ = s.accept()
    c.sendall(b"far loopback secret")
    c.close()
"""

# Silent clients (argv: count, source address, proxy port, seconds): `count` TCP
# connections to the proxy from `source` that never say a word; "ready" once they are
# made (or the connect phase ran out of its bound), then, after a line on stdin, a JSON
# line: how many were made, how many the proxy closed within `seconds`, how many of
# the rest closed within `seconds` after a byte, and how many stayed open.
SILENT_FLOOD = r"""
import json, resource, selectors, socket, sys, time
resource.setrlimit(resource.RLIMIT_NOFILE, (resource.getrlimit(resource.RLIMIT_NOFILE)[1],) * 2)
count, source, port, seconds = int(sys.argv[1]), sys.argv[2], int(sys.argv[3]), float(sys.argv[4])
sel = selectors.DefaultSelector()
made, pending = [], 0
deadline = time.monotonic() + 30
def settle(most):
    global pending
    while pending > most and time.monotonic() < deadline:
        for key, _ in sel.select(1.0):
            s = key.fileobj
            sel.unregister(s)
            pending -= 1
            if s.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR) == 0:
                made.append(s)
            else:
                s.close()
for i in range(count):
    s = socket.socket()
    s.setblocking(False)
    s.bind((source, 0))
    s.connect_ex(("127.0.0.1", port))
    sel.register(s, selectors.EVENT_WRITE)
    pending += 1
    settle(200)
settle(0)
print("ready", len(made), flush=True)
sys.stdin.readline()
for s in made:
    sel.register(s, selectors.EVENT_READ)
def wait(seconds):
    end = time.monotonic() + seconds
    while sel.get_map() and time.monotonic() < end:
        for key, _ in sel.select(1.0):
            sel.unregister(key.fileobj)  # readable: EOF or reset (the proxy never sends)
wait(seconds)
closed = len(made) - len(sel.get_map())
# Those left may never have reached the proxy: completed here while its listen queue
# was full, they exist on this side only until they send. A byte tells: the kernel
# resets a connection it does not know; the proxy closes an unfinished request in time.
for key in list(sel.get_map().values()):
    key.fileobj.send(b"\x05")
wait(seconds)
print(json.dumps({"made": len(made), "closed_by_proxy": closed,
                  "closed_after_a_byte": len(made) - closed - len(sel.get_map()),
                  "open": len(sel.get_map())}))
"""


def cpu_seconds(pid):
    """utime + stime of a process and its threads, seconds."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


class qa_pep_security(gr_unittest.TestCase):
    """The far proxy as an attacker on the air would use it, and the near one under a
    flood, with the real apps in namespaces (python/hfstack/testbed/pep.py), both nodes
    at RLIMIT_NOFILE 4096: the far proxy does not reach its host's loopback; it binds
    its SAP again after another client took it; 5,000 silent SOCKS connections cost a
    bounded number of descriptors while a new client is served and every silent one is
    closed; 1,000 idle + 100 active connections hold with the default limits. Figures
    (descriptors, CPU) are printed, not asserted."""

    NOFILE = 4096

    @classmethod
    def setUpClass(cls):
        why = unavailable()
        if not why and not shutil.which("curl"):
            why = "curl is not installed (make test installs it)"
        if not why and not shutil.which("prlimit"):
            why = "prlimit is not installed (Debian: util-linux)"
        if why:
            raise unittest.SkipTest(why)
        # The near proxy sends everything to the far one, as an attacker's would.
        cls.bed = pep_testbed(rate=9600, time_scale=SCALE, nofile=cls.NOFILE,
                              pep_options="peers=default=0.0.0.2", tag=os.getpid() % 100000 + 1
                              ).start()
        cls.ns = cls.bed.ns
        try:
            www = os.path.join(cls.bed.tmp, "www")
            os.makedirs(www)
            cls.body = random.Random(23).randbytes(5000)
            with open(os.path.join(www, "small.bin"), "wb") as f:
                f.write(cls.body)
            cls.bed.serve("b", "import functools, http.server\n"
                               "h = functools.partial(http.server.SimpleHTTPRequestHandler,"
                               f" directory={www!r})\n"
                               f"s = http.server.ThreadingHTTPServer(({FAR!r}, 8080), h)\n"
                               "print('ready', flush=True)\n"
                               "s.serve_forever()\n")
            cls.bed.serve("b", LOOPBACK_SECRET, "7070")
            cls.bed.serve("b", CONFIRMING_SERVER, FAR, "7200")
        except Exception:
            cls.bed.stop()
            raise

    @classmethod
    def tearDownClass(cls):
        cls.bed.stop()

    def fetch(self, max_time=TIMEOUT_S):
        return subprocess.run(["ip", "netns", "exec", self.ns["a"], "curl", "-s", "--max-time",
                               str(max_time), "--socks5", self.bed.socks,
                               f"http://{FAR}:8080/small.bin"],
                              capture_output=True, timeout=2 * max_time)

    def probe(self, address, port):
        done = self.bed.run("a", sys.executable, "-c", SOCKS_PROBE,
                            self.bed.socks.split(":")[1], address, str(port), timeout=TIMEOUT_S)
        return json.loads(done.stdout.strip().splitlines()[-1])

    def sis_port(self, side):
        """The port of the SIS server of the node in namespace `side`."""
        proxy = {int(self.bed.socks.split(":")[1]), int(self.bed.dns.split(":")[1]), 3129}
        listening = run("ip", "netns", "exec", self.ns[side], "ss", "-Hltnp").stdout
        ports = [int(line.split()[3].rsplit(":", 1)[1]) for line in listening.splitlines()
                 if f"pid={self.bed.node[side].pid}," in line]
        (port,) = [p for p in ports if p not in proxy]
        return port

    def bind(self, side, sap, rank):
        """A SIS client binds `sap` with `rank` at the node in `side`, then leaves; its
        output ("bound" once the node accepted)."""
        script = ("from gnuradio.hfstack.sis.client import bind_request, sis_client\n"
                  "from gnuradio.hfstack.hfstack_python import dl\n"
                  f"c = sis_client('127.0.0.1', {self.sis_port(side)}, timeout=60)\n"
                  f"c.send(bind_request({sap}, rank={rank}))\n"
                  "c.receive_type(dl.sis_type.bind_accepted)\n"
                  "print('bound', flush=True)\n")
        done = self.bed.run(side, sys.executable, "-c", script, timeout=TIMEOUT_S, check=False)
        return done.stdout + done.stderr

    def test_1_the_far_proxy_does_not_reach_its_hosts_loopback(self):
        refused = self.probe("127.0.0.1", 7070)
        self.assertEqual(refused, {"reply": 2, "data": ""})  # SOCKS: not allowed by ruleset
        # What the far policy names is reached.
        done = self.fetch()
        self.assertEqual(done.returncode, 0, done.stderr)
        self.assertEqual(done.stdout, self.body)

    def test_3_a_thousand_idle_and_a_hundred_active_with_the_defaults(self):
        done = self.bed.run("a", sys.executable, "-c", CAPACITY_CLIENT, FAR, "1000", "100",
                            "2000", "600", timeout=900)
        r = json.loads(done.stdout.strip().splitlines()[-1])
        print(f"\n1,000 idle + 100 active, default limits: {json.dumps(r)}", file=sys.stderr)
        self.assertEqual((r["idle_opened"], r["idle_still_open"], r["active_confirmed"],
                          r["error_count"]), (1000, 1000, 100, 0), r["errors"])

    def test_2_silent_clients_cost_bounded_descriptors_and_new_clients_are_served(self):
        node = self.bed.node["a"].pid  # ip netns exec and prlimit exec the node in place
        before = len(os.listdir(f"/proc/{node}/fd"))
        cpu_start, wall_start = cpu_seconds(node), time.monotonic()
        flood = subprocess.Popen(self.bed.command("a", sys.executable, "-c", SILENT_FLOOD,
                                                  "5000", "127.0.0.2",
                                                  self.bed.socks.split(":")[1], "20"),
                                 stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE, text=True)
        self.bed.procs.append(flood)
        ready = flood.stdout.readline().split()
        self.assertEqual(ready[:1], ["ready"], flood.stderr.read() if not ready else "")
        cpu0, wall0 = cpu_seconds(node), time.monotonic()
        held = len(os.listdir(f"/proc/{node}/fd"))
        done = self.fetch(max_time=60)  # a new client, from another address, meanwhile
        cpu = cpu_seconds(node) - cpu0
        wall = time.monotonic() - wall0
        sis = self.bind("a", 5, 0)  # the node's own SIS server still takes a client
        flood.stdin.write("\n")
        flood.stdin.flush()
        result = json.loads(flood.stdout.readline())
        flood.wait(timeout=60)
        flood_cpu, flood_wall = cpu_seconds(node) - cpu_start, time.monotonic() - wall_start
        print(f"\n{result['made']} silent connections: near node descriptors {before} before, "
              f"{held} during; a new client's fetch {'served' if done.returncode == 0 else 'failed'}"
              f" in {wall:.1f} s, the node used {cpu:.2f} s CPU meanwhile; "
              f"{result['closed_by_proxy']} closed by the proxy, {result['closed_after_a_byte']} "
              f"after a byte, {result['open']} open; a SIS client "
              f"{'bound' if 'bound' in sis else 'failed to bind'} at the node meanwhile; over "
              f"the whole flood the node used "
              f"{flood_cpu:.2f} s CPU in {flood_wall:.1f} s", file=sys.stderr)
        self.assertGreater(result["made"], self.NOFILE)
        self.assertEqual(done.returncode, 0, done.stderr)
        self.assertEqual(done.stdout, self.body)
        self.assertIn("bound", sis)
        # Unfinished handshakes are capped (max_handshakes 256) far below the limit.
        self.assertLess(held, 512)
        self.assertEqual(result["open"], 0)

    def test_4_the_far_proxy_binds_again_after_another_client_took_its_sap(self):
        # What the open relay let a station do: bind the PEP's SAP with rank 15 at the
        # far node, which unbinds the far proxy.
        self.assertIn("bound", self.bind("b", 13, 15))
        # The intruder has gone; the far proxy says it binds again (after 5 s) and that
        # the node took it, then carries streams again.
        log, said = self.bed.node["b"].stderr.fileno(), ""
        deadline = time.monotonic() + 60
        while "bound SAP 13 again" not in said and time.monotonic() < deadline:
            if select.select([log], [], [], max(0.0, deadline - time.monotonic()))[0]:
                said += os.read(log, 65536).decode(errors="replace")
        self.assertIn("the node dropped SAP 13: binding again in 5 s", said)
        self.assertIn("bound SAP 13 again", said)
        fetched = self.fetch()
        self.assertEqual(fetched.returncode, 0, fetched.stderr)
        self.assertEqual(fetched.stdout, self.body)

    def test_5_refusals_and_rebinds_are_counted(self):
        stats = self.bed.stop_node("b")["pep"]
        self.assertGreaterEqual(stats["destinations_refused"], 1)
        self.assertGreaterEqual(stats["rebinds"], 1)
        self.assertEqual(stats["peers_refused"], 0)


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
        rows = [line.split("\t") for line in done.stdout.splitlines()]
        opens = [r for r in rows if r[0] == "3"]
        self.assertTrue(opens, done.stdout[:2000])
        self.assertEqual((opens[0][1], opens[0][2]), ("127.0.0.1", str(web_port)))
        self.assertIn("0", [r[3] for r in rows if r[0] == "4"])  # status: connected
        self.assertGreater(sum(1 for r in rows if r[0] == "4"), 15)  # the page's DATA

    def test_bad_options(self):
        pep_app = os.path.join(os.path.dirname(APP), "hfstack-pep")
        for args, reason in ((["--options", "deny_ports=x"], "deny_ports"),
                             (["--options", "allow_destinations=10.78.0.0/33"],
                              "allow_destinations: \"10.78.0.0/33\" is not PREFIX[:PORTS]"),
                             (["--options", "allow_peers=0.0.0.1 any"], "allow_peers"),
                             (["--options", "max_handshakes=lots"], "max_handshakes"),
                             (["--socks", "nowhere"], "is not HOST:PORT"),
                             (["--intercept", "10.0.0.0/8"], "needs --redirect"),
                             (["--dns", "127.0.0.1:5353"], "dns_peer")):
            done = subprocess.run([sys.executable, pep_app, *args], capture_output=True,
                                  text=True, timeout=60)
            self.assertEqual(done.returncode, 2, done.stderr)
            self.assertIn(reason, done.stderr)
            self.assertEqual(len(done.stderr.strip().splitlines()), 1, done.stderr)

    def pep_pair(self, www, near_args, far_options):
        """A web server on 127.0.0.1 serving `www`, hfstack-node --pair and an
        hfstack-pep on each of its nodes (the near one with `near_args`, the far one
        with `far_options`, web_port in them filled in); returns (web_port, port, peps)
        once both are attached and listening, everything stopped at cleanup."""
        from test_support import accepts, free_port_pair
        web = subprocess.Popen([sys.executable, "-m", "http.server", "0", "--bind",
                                "127.0.0.1", "--directory", www],
                               stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        self.addCleanup(lambda: (web.kill(), web.communicate()))
        line = web.stdout.readline()  # "Serving HTTP on 127.0.0.1 port N ..."
        web_port = int(line.split(" port ")[1].split()[0])
        port = free_port_pair()
        node = subprocess.Popen([sys.executable, APP, "--pair", "--kind", "emulator",
                                 "--profile", "", "--time-scale", str(int(SCALE)), "--data-rate",
                                 "9600", "--sis-port", str(port), "--stats-interval", "0"],
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        self.addCleanup(lambda: (node.terminate(), node.communicate(timeout=30)))
        deadline = time.monotonic() + 60
        while not (accepts(port) and accepts(port + 1)):
            self.assertIsNone(node.poll(), "hfstack-node exited")
            self.assertLess(time.monotonic(), deadline, "hfstack-node never listened")
            time.sleep(0.05)  # polling a starting process, bounded by the deadline
        pep_app = os.path.join(os.path.dirname(APP), "hfstack-pep")
        peps = []
        for sis, extra in ((port, near_args),
                           (port + 1, ["--options", far_options.format(web_port=web_port),
                                       "--stats-interval", "0"])):
            p = subprocess.Popen([sys.executable, pep_app, "--server", f"127.0.0.1:{sis}",
                                  *extra],
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            self.addCleanup(lambda p=p: p.poll() is None and (p.kill(), p.communicate()))
            for line in p.stderr:  # it logs once listening and attached
                if "HF-PEP on SIS server" in line:
                    break
            self.assertIsNone(p.poll(), "hfstack-pep exited")
            peps.append(p)
        return web_port, port, peps

    def test_two_peps_over_a_node_pair(self):
        if not shutil.which("curl"):
            self.skipTest("curl is not installed (make test installs it)")
        import socket
        with tempfile.TemporaryDirectory() as www:
            body = os.urandom(30_000)
            with open(os.path.join(www, "page.bin"), "wb") as f:
                f.write(body)
            socks_port = free_tcp_port()
            # The far proxy takes the near node's streams to the page's server only (on
            # loopback: named).
            web_port, port, peps = self.pep_pair(
                www, ["--options", "peers=127.0.0.0/8=0.0.0.2", "--socks",
                      f"127.0.0.1:{socks_port}", "--stats-interval", "0.5"],
                "allow_peers=0.0.0.1;allow_destinations=127.0.0.1/32:{web_port}")
            # The near proxy's statistics lines, read as they come (a full pipe would
            # stall it).
            lines = queue.Queue()
            reader = threading.Thread(target=lambda: [lines.put(x) for x in peps[0].stdout],
                                      daemon=True)
            reader.start()
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
            # A SOCKS client that connects and then idles: its connection is in the
            # statistics, with its connect time over HF and its bytes each way.
            idle = socket.create_connection(("127.0.0.1", socks_port), timeout=TIMEOUT_S)
            self.addCleanup(idle.close)
            idle.sendall(b"\x05\x01\x00")
            self.assertEqual(idle.recv(2), b"\x05\x00")
            idle.sendall(b"\x05\x01\x00\x01" + socket.inet_aton("127.0.0.1")
                         + struct.pack("!H", web_port))
            self.assertEqual(idle.recv(10)[:2], b"\x05\x00")  # connected at the far end
            since, live = time.time(), []
            for _ in range(100):  # a line every 0.5 s; bounded by count and by the timeout
                line = json.loads(lines.get(timeout=TIMEOUT_S))
                if line["time"] > since and line["pep_connections"]:
                    (live,) = line["pep_connections"]
                    break
            self.assertTrue(live, "no statistics line with the idle connection")
            self.assertEqual((live["mode"], live["destination"], live["port"], live["peer"]),
                             ("socks", "127.0.0.1", web_port, "0.0.0.2"))
            self.assertGreater(live["connect_s"], 0)
            self.assertEqual(live["plain_sent"], live["wire_sent"])  # no DEFLATE here
            self.assertEqual(live["plain_received"], 2)  # the far proxy's status only
            peps[0].send_signal(signal.SIGTERM)
            peps[0].wait(timeout=60)
            reader.join(timeout=60)  # stdout is the reader's alone
            err = peps[0].stderr.read()
            self.assertEqual(peps[0].returncode, 0, err)
            final = None
            while not lines.empty():
                final = json.loads(lines.get())
            self.assertEqual(final["pep"]["accepted"], 2)
            self.assertGreater(final["pep"]["bytes_down"], len(body))  # body and headers
            self.assertGreater(final["sis_link"]["connects"], 0)
            self.assertEqual(final["pep"]["compression_ratio"], 1.0)
            self.assertGreater(final["pep"]["connect_seconds"], 0)

    def test_host_names_are_resolved_by_the_far_proxy(self):
        """SOCKS5 with a domain name (curl --socks5-hostname, as browsers send) and HTTP
        CONNECT to HOST:PORT: the name crosses HF and the far proxy resolves it; a name
        whose addresses its policy does not allow, or that has none, is refused."""
        if not shutil.which("curl"):
            self.skipTest("curl is not installed (make test installs it)")
        with tempfile.TemporaryDirectory() as www:
            body = os.urandom(20_000)
            with open(os.path.join(www, "page.bin"), "wb") as f:
                f.write(body)
            socks_port, connect_port = free_tcp_port(), free_tcp_port()
            # localhost is ::1 and 127.0.0.1 there; only the latter is allowed, so the
            # far proxy must pass over ::1 to it.
            web_port, port, peps = self.pep_pair(
                www, ["--options", "peers=127.0.0.0/8=0.0.0.2", "--socks",
                      f"127.0.0.1:{socks_port}", "--http-connect", f"127.0.0.1:{connect_port}"],
                "allow_peers=0.0.0.1;allow_destinations=127.0.0.1/32:{web_port}")
            # The SIS traffic, for the Wireshark dissector's reading of a name (when there).
            capture = os.path.join(www, "sis.pcapng")
            dumpcap = None
            if shutil.which("dumpcap") and shutil.which("tshark") and os.geteuid() == 0:
                dumpcap = subprocess.Popen(["dumpcap", "-q", "-i", "lo", "-f",
                                            f"tcp port {port} or tcp port {port + 1}", "-w", capture],
                                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
                self.addCleanup(lambda: dumpcap.poll() is None and (dumpcap.kill(), dumpcap.wait()))
                for line in dumpcap.stderr:  # "File: ..." once it captures
                    if "File:" in line:
                        break

            def curl(*args):
                return subprocess.run(["curl", "-s", "--max-time", str(TIMEOUT_S), *args],
                                      capture_output=True, timeout=2 * TIMEOUT_S)
            page = f"http://localhost:{web_port}/page.bin"
            done = curl("--socks5-hostname", f"127.0.0.1:{socks_port}", page)
            self.assertEqual(done.returncode, 0, done.stderr)
            self.assertEqual(done.stdout, body)
            if dumpcap is not None:
                dumpcap.terminate()
                dumpcap.wait(timeout=30)
                script = os.path.join(os.path.dirname(APP), "..", "wireshark", "hfstack_slep.lua")
                read = subprocess.run(["tshark", "-X", f"lua_script:{script}", "-r", capture,
                                       "-d", f"tcp.port=={port},s5066sis", "-d",
                                       f"tcp.port=={port + 1},s5066sis", "-Y", "slep", "-T",
                                       "fields", "-e", "slep.type", "-e", "hfpep.name", "-e",
                                       "hfpep.port"], capture_output=True, text=True, timeout=120)
                self.assertEqual(read.returncode, 0, read.stderr)
                opens = [line.split("\t") for line in read.stdout.splitlines()
                         if line.startswith("3\t")]
                self.assertEqual(opens[0][1:], ["localhost", str(web_port)], read.stdout[:2000])
            done = curl("--proxytunnel", "-x", f"http://127.0.0.1:{connect_port}", page)
            self.assertEqual(done.returncode, 0, done.stderr)
            self.assertEqual(done.stdout, body)
            # A port the policy does not name: forbidden there, SOCKS reply 2 here.
            done = curl("--socks5-hostname", f"127.0.0.1:{socks_port}",
                        f"http://localhost:{web_port + 1}/")
            self.assertEqual(done.returncode, 97, done.stderr)  # the proxy refused
            done = curl("--socks5-hostname", f"127.0.0.1:{socks_port}",
                        "http://no-such-host.invalid/")
            self.assertEqual(done.returncode, 97, done.stderr)
            far = peps[1]
            far.send_signal(signal.SIGTERM)
            out, err = far.communicate(timeout=60)
            self.assertEqual(far.returncode, 0, err)
            final = json.loads(out.splitlines()[-1])
            self.assertEqual(final["pep"]["resolves"], 4)
            self.assertEqual(final["pep"]["resolve_failures"], 1)  # no-such-host.invalid
            self.assertEqual(final["pep"]["destinations_refused"], 1)  # port web_port + 1


def free_tcp_port():
    """A TCP port on 127.0.0.1 nobody listens on now."""
    import socket
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


if __name__ == "__main__":
    gr_unittest.main()
