#
# Copyright 2026 gr-hfstack authors.
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""TCP over HF on one machine, for tests and benchmarks: two network namespaces, each
with an hfstack-node process running the HF-PEP, their emulated modems on one channel
over ZeroMQ ipc:// files. The near side ("a", node 0.0.0.1) takes SOCKS5 on
127.0.0.1:1080 and REDIRECTs TCP to 10.78.0.0/24 into its proxy (nftables, installed
by the node); the far side ("b", node 0.0.0.2) owns 10.78.0.2, where servers listen,
and resolves names with the namespace's resolver (/etc/netns/NS/resolv.conf, pointing
at 10.78.0.2, and /etc/netns/NS/hosts, which names 10.78.0.2 FAR_NAME). With
`client_host`, a third namespace ("c", 10.80.0.2) is a host whose traffic is routed
through the near one (a gateway, 10.80.0.1, over a veth pair), where nftables TPROXY
hands its TCP to 10.78.0.0/24 to the near proxy's transparent listener (0.0.0.0:3130,
policy routing installed by the node). Needs root; `unavailable()` says
why not.

    with pep_testbed(rate=9600, time_scale=1) as bed:
        bed.run("a", "curl", "--socks5", bed.socks, "http://10.78.0.2:8080/")
"""

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

from ..published_scenarios import PEP_NODE_OPTIONS, pep_node_options, pep_proxy_options
from .ip import mode_bps, namespaces, run
from .ip import unavailable as ip_unavailable

NODE = [sys.executable, "-m", "gnuradio.hfstack.apps.node"]  # hfstack-node, installed or not
PEP = [sys.executable, "-m", "gnuradio.hfstack.apps.pep"]    # hfstack-pep, installed or not
SIS_PORT = 5066  # each node's SIS server, on its namespace's loopback (pep_in_node=False)
FAR = "10.78.0.2"
# The servers' host name, in the far namespace's hosts file: the far proxy resolves it
# for SOCKS5 and HTTP CONNECT clients that give names.
FAR_NAME = "site.far.hf"
# Both ends run this stack: ARQ data ride with the link request (docs/pep.md), as in
# the simulator's section D rows.
NODE_OPTIONS = PEP_NODE_OPTIONS
GATEWAY, CLIENT = "10.80.0.1", "10.80.0.2"   # the near namespace and the client host
# The far proxy's access policy: streams from the near node only, to the servers on
# its own address (which, as the host's own, a /32 rule must name).
FAR_POLICY = f"allow_peers=0.0.0.1;allow_destinations={FAR}/32"


# The server of the PEP benchmarks (argv: address, port): for each connection, a
# 16-byte header announcing N, then N bytes read, then "OK" back; held open until the
# client closes. One thread a connection, so a thousand idle ones cost nothing.
CONFIRMING_SERVER = r"""
import resource, socket, sys, threading
resource.setrlimit(resource.RLIMIT_NOFILE, (resource.getrlimit(resource.RLIMIT_NOFILE)[1],) * 2)
s = socket.create_server((sys.argv[1], int(sys.argv[2])), backlog=2048)
print("ready", flush=True)
def serve(c):
    try:
        want = int(c.recv(16).split(b"\n")[0] or 0)
        got = 0
        while got < want:
            d = c.recv(65536)
            if not d:
                return
            got += len(d)
        c.sendall(b"OK")
        while c.recv(1024):
            pass
    except (OSError, ValueError):
        pass
    finally:
        c.close()
while True:
    c, _ = s.accept()
    threading.Thread(target=serve, args=(c,), daemon=True).start()
"""


# The load of the PEP capacity figures (argv: far address, idle, active, bytes, seconds):
# `idle` connections to far:7200 (intercepted by REDIRECT) held open saying nothing,
# then `active` ones each sending a 16-byte header and `bytes` bytes and waiting for the
# CONFIRMING_SERVER's "OK", all at once; a JSON line of what happened.
CAPACITY_CLIENT = r"""
import json, resource, selectors, socket, sys, time
resource.setrlimit(resource.RLIMIT_NOFILE, (resource.getrlimit(resource.RLIMIT_NOFILE)[1],) * 2)
far, idle, active, size = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
errors = []
held = []
t0 = time.monotonic()
for i in range(idle):
    try:
        c = socket.create_connection((far, 7200), timeout=30)  # intercepted: REDIRECT
        held.append(c)  # says nothing: the server waits for its header, the stream idles
    except OSError as e:
        errors.append(f"idle {i}: {e}")
t_idle = time.monotonic() - t0
sel = selectors.DefaultSelector()
payload = bytes(i % 251 for i in range(size))
states = {}
t1 = time.monotonic()
for i in range(active):
    try:
        c = socket.create_connection((far, 7200), timeout=30)
        c.setblocking(False)
        states[c] = [f"{size}\n".encode().ljust(16) + payload, b""]
        sel.register(c, selectors.EVENT_WRITE | selectors.EVENT_READ)
    except OSError as e:
        errors.append(f"active {i}: {e}")
done = 0
deadline = time.monotonic() + float(sys.argv[5])
while states and time.monotonic() < deadline:
    for key, mask in sel.select(1.0):
        c = key.fileobj
        out, got = states[c]
        try:
            if mask & selectors.EVENT_WRITE and out:
                n = c.send(out)
                states[c][0] = out[n:]
                if not states[c][0]:
                    sel.modify(c, selectors.EVENT_READ)
            if mask & selectors.EVENT_READ:
                d = c.recv(16)
                if not d:
                    raise OSError("closed before the confirmation")
                states[c][1] = got + d
                if states[c][1] == b"OK":
                    done += 1
                    sel.unregister(c)
                    c.close()
                    del states[c]
        except OSError as e:
            if c in states:
                errors.append(f"active: {e}")
                sel.unregister(c)
                c.close()
                del states[c]
alive = 0
for c in held:
    try:
        c.setblocking(False)
        c.recv(1)
    except BlockingIOError:
        alive += 1  # still open, nothing to read: held as it should be
    except OSError:
        pass
print(json.dumps({"idle_opened": len(held), "idle_still_open": alive, "idle_open_s": t_idle,
                  "active_confirmed": done, "active_unfinished": len(states),
                  "active_s": time.monotonic() - t1, "errors": errors[:20], "error_count": len(errors)}))
"""


def unavailable():
    """Why this machine cannot run the test bed, or None."""
    why = ip_unavailable()
    if not why and not shutil.which("nft"):
        why = "nft is not installed (make test installs nftables)"
    return why


def mode_arguments(rate):
    """hfstack-node's options for a test bed's `rate`."""
    if isinstance(rate, str) and not rate.isdigit():
        return ["--mode", rate]
    return ["--data-rate", str(rate)]


class pep_testbed(namespaces):
    """`rate`: the nodes' mode, a rate in bps (short interleaver) or a mode's name
    ("WN12/48kHz/US", published_scenarios.WIDEBAND), `self.rate` its bps; `time_scale`:
    protocol seconds per real second; `ber`: bit errors on every burst; `pep_options`:
    more options of the near proxy (compress=true, ...), `far_options` of the far one
    (after FAR_POLICY); `kind`: "emulator", or "loopback" for the real STANAG 4539
    modem, its audio across the processes, through AWGN at `snr_db`; `client_host`: the
    third namespace "c" behind the near one (TPROXY); `node_options`: both nodes'
    options (default: NODE_OPTIONS, with S5066-EP5 large windows over STANAG 5069 modes,
    published_scenarios.pep_node_options; "" for STANAG 5066 as published); `nofile`:
    both nodes' RLIMIT_NOFILE (soft and hard), or None to inherit it; `pep_in_node`:
    False runs each proxy as its own hfstack-pep process, a SIS client of its node (SIS
    port 5066 in its namespace), SOCKS5 only on the near side, so a test can kill and
    restart one (kill_pep, start_pep)."""

    def __init__(self, rate=9600, time_scale=20.0, ber=0.0, pep_options="", tag=None,
                 kind="emulator", snr_db=30.0, far_options="", seed=1, client_host=False,
                 node_options=None, nofile=None, pep_in_node=True):
        tag = tag if tag is not None else os.getpid() % 100000
        self.ns = {"a": f"hfpa{tag}", "b": f"hfpb{tag}"}
        if client_host:
            self.ns["c"] = f"hfpc{tag}"
        self.veth = (f"hfva{tag}", f"hfvc{tag}")
        self.socks = "127.0.0.1:1080"
        self.dns = "127.0.0.1:5353"
        self.rate, self.time_scale = mode_bps(rate), time_scale
        self.tmp = tempfile.mkdtemp(prefix="hfstack-pep-")
        self.netns_etc = f"/etc/netns/{self.ns['b']}"
        self.node, self.procs = {}, []
        self._args = (rate, time_scale, ber, pep_options)
        self.kind, self.snr_db, self.far_options = kind, snr_db, far_options
        self.node_options = pep_node_options(rate) if node_options is None else node_options
        self.seed = seed  # of the channel's error draws (node b's radio: seed + 1)
        self.limit = ["prlimit", f"--nofile={nofile}:{nofile}", "--"] if nofile else []
        self.pep_in_node = pep_in_node
        self.pep, self._pep_args = {}, {}

    def start(self):
        rate, scale, ber, pep_options = self._args
        try:
            for ns in self.ns.values():
                run("ip", "netns", "add", ns)
                run("ip", "-n", ns, "link", "set", "lo", "up")
            # The far side's servers; the near side routes the far prefix through lo
            # from an address of its own: only the proxy ever answers it.
            run("ip", "-n", self.ns["b"], "addr", "add", f"{FAR}/32", "dev", "lo")
            run("ip", "-n", self.ns["a"], "addr", "add", "10.79.0.1/32", "dev", "lo")
            run("ip", "-n", self.ns["a"], "route", "add", "10.78.0.0/24", "dev", "lo", "src",
                "10.79.0.1")
            if "c" in self.ns:
                self._client_host()
            os.makedirs(self.netns_etc, exist_ok=True)
            with open(os.path.join(self.netns_etc, "resolv.conf"), "w") as f:
                f.write(f"nameserver {FAR}\n")
            with open(os.path.join(self.netns_etc, "hosts"), "w") as f:
                f.write(f"127.0.0.1 localhost\n::1 localhost\n{FAR} {FAR_NAME}\n")
            radio = (["--kind", "emulator", "--profile", "", "--ber", repr(float(ber))]
                     if self.kind == "emulator" else
                     ["--kind", "loopback", "--profile", "awgn", "--snr-db", repr(float(self.snr_db))])
            common = [*mode_arguments(rate), *radio, "--time-scale", repr(float(scale)),
                      "--stats-interval", "0"]
            common += (["--sis-port", "0", "--pep"] if self.pep_in_node else
                       ["--sis-port", str(SIS_PORT)])
            if self.node_options:
                common += ["--options", self.node_options]
            air = os.path.join(self.tmp, "air")
            # STANAG 5069 modes: both proxies' SLEP limits grow with the large windows.
            wide = pep_proxy_options(rate) if self.node_options == pep_node_options(rate) else ""
            near = ["--pep-options", ";".join(o for o in ("peers=10.78.0.0/24=0.0.0.2", wide,
                                                          pep_options) if o),
                    "--pep-socks", self.socks, "--pep-redirect", "127.0.0.1:3129",
                    "--pep-intercept", "10.78.0.0/24", "--pep-dns", self.dns,
                    "--pep-dns-peer", "0.0.0.2", "--pep-dns-static", "gateway.hf=10.79.0.1"]
            if "c" in self.ns:
                near += ["--pep-transparent", "0.0.0.0:3130"]
            far_options = ";".join(o for o in (FAR_POLICY, wide, self.far_options) if o)
            far = ["--pep-options", far_options]
            if not self.pep_in_node:
                self._pep_args = {"a": ["--options", near[1], "--socks", self.socks],
                                  "b": ["--options", far_options]}
                near = far = []
            for side, me, other, extra in (("a", 1, "b", near), ("b", 2, "a", far)):
                p = subprocess.Popen(
                    ["ip", "netns", "exec", self.ns[side], *self.limit, *NODE, "--address",
                     f"0.0.0.{me}", *common, "--seed", str(self.seed + me - 1),
                     "--air-publish", f"ipc://{air}-{side}",
                     "--air-subscribe", f"ipc://{air}-{other}", *extra],
                    stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                self.procs.append(p)
                self.node[side] = p
            for side, p in self.node.items():
                header = json.loads(p.stdout.readline() or "{}")  # written once running
                if header.get("type") != "header":
                    raise RuntimeError(f"node {side} did not start: {p.stderr.read()[-2000:]}")
            for side in self._pep_args:
                self.start_pep(side)
        except Exception:
            self.stop()
            raise
        return self

    def _client_host(self):
        """Namespace c behind namespace a: a veth pair, c's default route via a."""
        a, c = self.veth
        run("ip", "link", "add", a, "netns", self.ns["a"], "type", "veth", "peer", "name", c,
            "netns", self.ns["c"])
        for side, dev, address in (("a", a, GATEWAY), ("c", c, CLIENT)):
            run("ip", "-n", self.ns[side], "addr", "add", f"{address}/24", "dev", dev)
            run("ip", "-n", self.ns[side], "link", "set", dev, "up")
        run("ip", "-n", self.ns["c"], "route", "add", "default", "via", GATEWAY)

    def start_pep(self, side, timeout=60):
        """(pep_in_node=False) Starts side's hfstack-pep; returns once it is attached to
        its node and listening. Its log goes to a file (a full pipe would stall it)."""
        log = open(os.path.join(self.tmp, f"pep-{side}.log"), "a+")
        start = log.tell()
        p = subprocess.Popen(self.command(side, *PEP, "--server", f"127.0.0.1:{SIS_PORT}",
                                          "--stats-interval", "0", *self._pep_args[side]),
                             stdout=subprocess.DEVNULL, stderr=log, text=True)
        self.procs.append(p)
        self.pep[side] = p
        deadline = time.monotonic() + timeout
        with log:
            while True:
                log.seek(start)
                if "HF-PEP on SIS server" in log.read():
                    return p
                if p.poll() is not None or time.monotonic() > deadline:
                    log.seek(start)
                    raise RuntimeError(f"hfstack-pep {side} did not start: {log.read()[-2000:]}")
                time.sleep(0.05)  # polling a starting process, bounded by the deadline

    def kill_pep(self, side):
        """(pep_in_node=False) kill -9 of side's hfstack-pep, as a crash would end it."""
        p = self.pep.pop(side)
        p.kill()
        p.wait(timeout=60)

    def stop_node(self, side):
        """Stops a node with SIGTERM; returns its last statistics line (a dict)."""
        p = self.node[side]
        p.terminate()
        out, err = p.communicate(timeout=60)
        if p.returncode != 0:
            raise RuntimeError(f"node {side} exited {p.returncode}: {err[-2000:]}")
        return [json.loads(line) for line in out.splitlines() if '"type": "stats"' in line][-1]

    def stop(self):
        for p in self.procs:
            if p.poll() is None:
                p.kill()
                p.communicate()
        for ns in self.ns.values():
            subprocess.run(["ip", "netns", "delete", ns], capture_output=True)
        shutil.rmtree(self.tmp, ignore_errors=True)
        shutil.rmtree(self.netns_etc, ignore_errors=True)
