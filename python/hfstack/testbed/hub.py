#
# Copyright 2026 gr-hfstack authors.
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""IP routed through a hub over HF, on one machine: a hub and `spokes` spokes, each an
hfstack-node process with its IP client on a TUN device (hf0) in a network namespace of
its own, their emulated modems on one channel over ZeroMQ ipc:// files (every modem
hears every other). The HF net is HF_NET.0/24 (hub .1 = node 0.0.0.1, spoke k .k+1 =
node 0.0.0.k+1); behind each station is a subnet of its own, LAN.k.0/24 (hub k = 0),
whose first address LAN.k.1 sits on the namespace's loopback (where its servers
listen).

Routing: the hub forwards (net.ipv4.ip_forward=1, no ICMP redirects, no reverse-path
filter) and its IP client sends each spoke's HF address and subnet to that spoke's
node. A spoke routes LAN.0.0/16 into hf0, and its IP client sends everything of the HF
net and of LAN.0.0/16 to the hub's node: a spoke reaches another spoke's subnet over two
HF hops, the hub's kernel forwarding between them (out of the device it came in by).
Needs root; `unavailable()` says why not.

    with hub_testbed(rate=2400, time_scale=1) as bed:
        bed.run("s1", "ping", "-c", "3", bed.lan_address(2))   # spoke 1 -> spoke 2's subnet
"""

import os
import shutil
import subprocess
import sys
import tempfile
import time

from . import stop_processes
from .ip import mode_bps, namespaces, run
from .ip import unavailable as ip_unavailable
from .pep import mode_arguments

NODE = [sys.executable, "-m", "gnuradio.hfstack.apps.node"]  # hfstack-node, installed or not
HF_NET = "10.76.0"
LAN = "10.86"
START_S = 60
SOCKS = "127.0.0.1:1080"  # a spoke's near proxy (pep=True), in its namespace


def unavailable():
    """Why this machine cannot run the test bed, or None."""
    return ip_unavailable()


def side_names(spokes):
    """The stations' names: "hub", "s1" .. "sN"."""
    return ["hub"] + [f"s{k}" for k in range(1, spokes + 1)]


def namespace_names(spokes, tag):
    return [f"hfh{name}{tag}" for name in side_names(spokes)]


class hub_testbed(namespaces):
    """`rate`: the nodes' mode (bps with the short interleaver, or a mode's name);
    `time_scale`: protocol seconds per real second; `node_options`: every node's
    options; `spokes`: 2..8. After start(): `ns[side]`, `hf_address(k)` and
    `lan_address(k)` of station k (0 the hub), `node[side]` the processes. `pep`: the
    HF-PEP beside every node too, a spoke's a near proxy (SOCKS5 on SOCKS in its
    namespace) whose streams to LAN.0.0/16 all go to the hub's far proxy, which opens
    them to the hub's own subnet or, over the IP client, to a spoke's: TCP ends at
    the proxies over the first hop and rides the IP client over the second.
    `capture_dir`: each station writes its D_PDUs to SIDE.pcap and its statistics and
    events to SIDE.jsonl there, and its log to SIDE.log at stop (to trace a run)."""

    def __init__(self, rate=2400, time_scale=1.0, spokes=3, tag=None,
                 node_options="supervision.keep_alive_interval_s=36000", pep=False,
                 capture_dir=None):
        if not 2 <= spokes <= 8:
            raise ValueError("a hub test bed has 2..8 spokes")
        tag = tag if tag is not None else os.getpid() % 100000
        self.sides = side_names(spokes)
        self.ns = dict(zip(self.sides, namespace_names(spokes, tag)))
        self.rate, self.time_scale = mode_bps(rate), time_scale
        self._mode, self.node_options = rate, node_options
        self.tmp = tempfile.mkdtemp(prefix="hfstack-hub-")
        self.node, self.procs = {}, []
        self.pep = pep
        self.capture_dir = capture_dir

    @staticmethod
    def hf_address(k):
        return f"{HF_NET}.{k + 1}"

    @staticmethod
    def lan_address(k):
        return f"{LAN}.{k}.1"

    def ip_routes(self, k):
        """Station k's IP client address table (prefix=node)."""
        if k == 0:
            return [r for s in range(1, len(self.sides))
                    for r in (f"{self.hf_address(s)}={s + 1}", f"{LAN}.{s}.0/24={s + 1}")]
        return [f"{HF_NET}.0/24=1", f"{LAN}.0.0/16=1"]

    def pep_arguments(self, k):
        """Station k's HF-PEP options (pep=True)."""
        if k == 0:
            spokes = range(1, len(self.sides))
            # The hub's own address is reachable only when a rule names it alone.
            allowed = [f"{self.lan_address(0)}/32"] + [f"{LAN}.{s}.0/24" for s in spokes]
            return ["--pep-options", f"allow_peers={' '.join(f'0.0.0.{s + 1}' for s in spokes)};"
                    f"allow_destinations={' '.join(allowed)}"]
        return ["--pep-options", f"peers={LAN}.0.0/16=0.0.0.1", "--pep-socks", SOCKS]

    def start(self):
        try:
            for k, side in enumerate(self.sides):
                ns = self.ns[side]
                run("ip", "netns", "add", ns)
                run("ip", "-n", ns, "link", "set", "lo", "up")
                run("ip", "-n", ns, "addr", "add", f"{self.lan_address(k)}/32", "dev", "lo")
            hub = self.ns["hub"]
            # Forwarding out of the device a datagram came in by is the hub's whole job:
            # no redirects (the spokes cannot reach each other directly), no reverse-path
            # check (set before the device exists, so that it inherits "default").
            for key, value in (("net.ipv4.ip_forward", 1),
                               ("net.ipv4.conf.all.send_redirects", 0),
                               ("net.ipv4.conf.default.send_redirects", 0),
                               ("net.ipv4.conf.all.rp_filter", 0),
                               ("net.ipv4.conf.default.rp_filter", 0)):
                run("ip", "netns", "exec", hub, "sysctl", "-q", "-w", f"{key}={value}")
            air = [f"ipc://{self.tmp}/air-{k}" for k in range(len(self.sides))]
            for k, side in enumerate(self.sides):
                device_routes = ([f"{LAN}.{s}.0/24" for s in range(1, len(self.sides))]
                                 if k == 0 else [f"{LAN}.0.0/16"])
                cmd = [*NODE, "--address", f"0.0.0.{k + 1}", *mode_arguments(self._mode),
                       "--kind", "emulator", "--profile", "",
                       "--time-scale", repr(float(self.time_scale)), "--seed", str(k + 1),
                       "--sis-port", "0", "--stats-interval", "0",
                       *self.capture_arguments(side),
                       "--air-publish", air[k],
                       "--air-subscribe", " ".join(a for j, a in enumerate(air) if j != k),
                       "--ip-client", "hf0", "--ip-configure",
                       "--ip-address", f"{self.hf_address(k)}/24"]
                for prefix in device_routes:
                    cmd += ["--ip-device-route", prefix]
                for route in self.ip_routes(k):
                    prefix, node = route.split("=")
                    cmd += ["--ip-route", f"{prefix}=0.0.0.{node}"]
                if self.node_options:
                    cmd += ["--options", self.node_options]
                if self.pep:
                    cmd += ["--pep", *self.pep_arguments(k)]
                log = open(os.path.join(self.tmp, f"node-{side}.log"), "w")
                p = subprocess.Popen(self.command(side, *cmd), stdout=subprocess.DEVNULL,
                                     stderr=log, stdin=subprocess.DEVNULL,
                                     env=dict(os.environ, HFSTACK_STATE_DIR="none"))
                log.close()
                self.procs.append(p)
                self.node[side] = p
            deadline = time.monotonic() + START_S
            for k, side in enumerate(self.sides):
                while self.hf_address(k) not in run("ip", "-n", self.ns[side], "-br", "addr",
                                                    "show", check=False).stdout:
                    if self.node[side].poll() is not None or time.monotonic() > deadline:
                        raise RuntimeError(f"station {side} did not configure hf0: "
                                           f"{self.log(side)[-2000:]}")
                    time.sleep(0.1)  # the node is starting; bounded by the deadline
        except Exception:
            self.stop()
            raise
        return self

    def capture_arguments(self, side):
        if not self.capture_dir:
            return []
        return ["--pcap", os.path.join(self.capture_dir, f"{side}.pcap"),
                "--stats", os.path.join(self.capture_dir, f"{side}.jsonl")]

    def log(self, side):
        try:
            with open(os.path.join(self.tmp, f"node-{side}.log")) as f:
                return f.read()
        except OSError:
            return ""

    def failed(self):
        """A station that has exited, with its log's tail; or None."""
        for side, p in self.node.items():
            if p.poll() is not None:
                return f"station {side} (namespace {self.ns[side]}) exited with status " \
                       f"{p.returncode}:\n{self.log(side)[-2000:]}"
        return None

    def stop(self):
        stop_processes(self.procs, grace_s=10)
        if self.capture_dir:
            for side in self.node:
                with open(os.path.join(self.capture_dir, f"{side}.log"), "w") as f:
                    f.write(self.log(side))
        for ns in self.ns.values():
            subprocess.run(["ip", "netns", "delete", ns], capture_output=True)
        shutil.rmtree(self.tmp, ignore_errors=True)
