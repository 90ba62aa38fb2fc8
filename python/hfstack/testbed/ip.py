#
# Copyright 2026 gr-hfstack authors.
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""IP over HF on one machine, for tests and benchmarks: two network namespaces, each
with a TUN device served by an IP client, joined by two STANAG 5066 nodes on emulated
modems. Linux's own TCP/IP stack and real tools (ping, curl, dig) run in the
namespaces; only the HF link between them is emulated (air time, latency, turnaround,
bit errors; no DSP).

Needs root (namespaces, TUN devices) and iproute2; `unavailable()` says why not.

    with testbed(rate=9600) as t:
        t.run("a", "ping", "-c", "3", t.address["b"])
"""

import os
import shutil
import subprocess
import sys

from gnuradio import gr

from .. import modes
from .. import radio as radio_frontend
from ..hfstack_python import node
from ..tun import ip_client_tun


# A minimal DNS server for the test beds, listening on argv[1] port 53; prints "ready"
# once bound. With no more arguments every A question gets 10.99.0.1 (TTL 60 s). With
# NAME=ADDRESS arguments only those names are known: their A question is answered, any
# other question of theirs gets no records, and other names NXDOMAIN (so an XMPP
# server's SRV question fails and it falls back to the A record).
DNS_SERVER = r"""
import socket, struct, sys
names = dict(arg.lower().split("=") for arg in sys.argv[2:])
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind((sys.argv[1], 53))
print("ready", flush=True)
while True:
    q, peer = s.recvfrom(512)
    if len(q) < 12:
        continue
    i, labels = 12, []
    while i < len(q) and q[i]:
        labels.append(q[i + 1:i + 1 + q[i]].decode(errors="replace"))
        i += q[i] + 1
    qtype = struct.unpack("!H", q[i + 1:i + 3])[0] if i + 3 <= len(q) else 0
    name = ".".join(labels).lower()
    question = q[12:i + 5]
    address = names.get(name) if names else "10.99.0.1"
    flags = b"\x85\x80" if names else b"\x81\x80"
    if address and (qtype == 1 or not names):
        answer = b"\xc0\x0c\x00\x01\x00\x01\x00\x00\x00\x3c\x00\x04" + socket.inet_aton(address)
        header = q[:2] + flags + b"\x00\x01\x00\x01\x00\x00\x00\x00"
    else:
        answer = b""
        header = q[:2] + (flags if address else b"\x85\x83") + b"\x00\x01\x00\x00\x00\x00\x00\x00"
    s.sendto(header + question + answer, peer)
"""


def unavailable():
    """Why this machine cannot run a testbed, or None."""
    if os.geteuid() != 0:
        return "needs root for network namespaces and TUN devices"
    if not os.path.exists("/dev/net/tun"):
        return "/dev/net/tun is missing"
    for tool in ("ip", "ping"):
        if not shutil.which(tool):
            return f"{tool} is not installed (make test installs iproute2 and iputils-ping)"
    probe = f"hfprobe{os.getpid()}"
    if subprocess.run(["ip", "netns", "add", probe], capture_output=True).returncode != 0:
        return "network namespaces are not available here"
    subprocess.run(["ip", "netns", "delete", probe], capture_output=True)
    return None


def run(*cmd, timeout=60, check=True, **kw):
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, **kw)
    if check and done.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed ({done.returncode}): {done.stdout}{done.stderr}")
    return done


class namespaces:
    """What a test bed of two namespaces `ns` ("a", "b") offers: a context manager over
    start() and stop(), and commands run inside a namespace."""

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()

    def command(self, side, *cmd):
        """The command line that runs `cmd` in namespace `side`."""
        return ["ip", "netns", "exec", self.ns[side], *cmd]

    def run(self, side, *cmd, **kw):
        return run(*self.command(side, *cmd), **kw)

    def serve(self, side, code, *args):
        """A Python program in namespace `side`, kept in `procs` for stop(); returned
        once it printed "ready"."""
        p = subprocess.Popen(self.command(side, sys.executable, "-c", code, *args),
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.procs.append(p)
        if p.stdout.readline().strip() != "ready":
            raise RuntimeError(f"server in {side} did not start: {p.stderr.read()[-2000:]}")
        return p


def planned_tcp_window(bps):
    """The TCP window (bytes) a planner sets on the HF route at `bps`: a minute of air
    at the modem's rate, at least three full segments. Unclamped, TCP fills the node's
    queue (64 KiB, about seven minutes at 1200 bps): its round trip then outgrows its
    longest retransmission timeout (120 s) and the U_PDUs their SIS TTL, and nothing
    is acknowledged for minutes (docs/ip-client.md, "TCP's window")."""
    return max(3 * 1460, int(bps) * 60 // 8)


def planned_tcp_rto_min(bps):
    """The least retransmission timeout (s) a planner sets on the HF route at `bps`: one
    and a half times the air time of planned_tcp_window, at most TCP's longest (120 s).
    A segment waits for the rest of its side's transmission, which a full window keeps
    a minute long, and for the far side's turn with the acknowledgement; Linux's timeout
    (the smoothed round trip plus this floor) otherwise fires before the acknowledgement
    can come, and each needless retransmission of a full segment costs ten seconds of
    air at 1200 bps (docs/ip-client.md, "TCP's retransmission timeout")."""
    return min(120.0, 1.5 * planned_tcp_window(bps) * 8 / int(bps))


def mode_bps(rate):
    """The bps of a test bed's `rate`: a number, or a mode's name ("WN12/48kHz/US")."""
    if isinstance(rate, str) and not rate.isdigit():
        found = modes.mode_info(rate)
        if found is None:
            raise ValueError(f"mode {rate!r}: {modes.any_mode_problem(rate)}")
        return found[0]
    return int(rate)


class testbed(namespaces):
    """Namespaces `ns[side]` (side "a", node 0.0.0.1; "b", node 0.0.0.2), addresses
    `address[side]` on a /24, the flowgraph running between start() and stop().
    `rate`/`interleaver`: the nodes' waveform mode (or `rate` a mode's name,
    "WN12/48kHz/US", and `self.rate` its bps); `time_scale`: protocol seconds per
    real second; `ber`: independent bit errors on every burst (emulator); `tun_mtu`:
    the devices' MTU (the IP clients' own MTU stays 1500 unless `options` says
    otherwise); `kind`: "emulator" or "loopback" (the real modem, `profile`, `snr_db`);
    `compact`: the clients mark each other compact (docs/ip-client.md);
    `congestion_control`: TCP's algorithm on the HF route of both namespaces ("cubic",
    "bbr", ...; None keeps the machine's default, which a new namespace inherits);
    `tcp_window`: the largest window TCP advertises on the HF route of both namespaces,
    bytes (the route's `window`, and receive buffers of twice that so that it holds; so
    the most the other side has in flight; None: Linux's own, see planned_tcp_window);
    `tcp_rto_min`: the least retransmission timeout TCP uses on the HF route of both
    namespaces, s (the route's `rto_min`; None: Linux's 0.2 s; see planned_tcp_rto_min);
    `sysctls`: more settings for both namespaces' network stacks, "name=value" each
    (net.ipv4.tcp_timestamps=0, ...), as a gateway's planner may set them;
    `pcap_dir`: each node's D_PDUs captured to `pcap_dir`/node-SIDE.pcap (Wireshark's
    link type 237)."""

    def __init__(self, rate=9600, interleaver="S", time_scale=20.0, ber=0.0, subnet="10.77.0",
                 options="", node_options="supervision.keep_alive_interval_s=36000",
                 tun_mtu=1500, tag=None, kind="emulator", profile="", snr_db=30.0,
                 congestion_control=None, compact=False, tcp_window=None, pcap_dir=None,
                 tcp_rto_min=None, sysctls=()):
        tag = tag if tag is not None else os.getpid() % 100000
        self.ns = {"a": f"hf{subnet.split('.')[-1]}a{tag}", "b": f"hf{subnet.split('.')[-1]}b{tag}"}
        self.address = {"a": f"{subnet}.1", "b": f"{subnet}.2"}
        self.rate, self.time_scale = mode_bps(rate), time_scale
        self.tb = gr.top_block("ip_testbed")
        named = isinstance(rate, str) and not rate.isdigit()
        mode = f"mode={rate}" if named else f"mode={rate}{interleaver}"
        if named and rate.startswith("WN"):
            # STANAG 5069 wideband: both nodes run S5066-EP5 large windows (docs/pep.md).
            mode += ";large_windows=true;arq_window=4096"
        pcap = {side: os.path.join(pcap_dir, f"node-{side}.pcap") if pcap_dir else ""
                for side in ("a", "b")}
        nodes = {"a": node("0.0.0.1", f"{mode};{node_options}", time_scale, pcap["a"]),
                 "b": node("0.0.0.2", f"{mode};{node_options}", time_scale, pcap["b"])}
        # kind "emulator": link-level modems; "loopback": the real STANAG 4539 modem
        # through the Watterson channel (`profile`, `snr_db`; "awgn" or "" for noise only).
        settings = ({"ber": ber} if kind == "emulator" else {"mode": rate} if named else
                    {"data_rate": rate, "interleaver": {"S": "short", "L": "long"}[interleaver]})
        radios = {side: radio_frontend.radio(kind=kind, time_scale=time_scale, profile=profile,
                                             snr_db=snr_db, seed=seed, **settings)
                  for side, seed in (("a", 1), ("b", 2))}
        for side in ("a", "b"):
            n, r = nodes[side], radios[side]
            self.tb.msg_connect(n, "to_phy", r, "in")
            self.tb.msg_connect(r, "out", n, "from_phy")
            self.tb.msg_connect(r, "status", n, "phy_status")
        radio_frontend.join(self.tb, radios["a"], radios["b"])
        self.nodes, self.radios = nodes, radios
        self.clients = {}
        created = []
        try:
            for ns in self.ns.values():
                run("ip", "netns", "add", ns)
                created.append(ns)
                run("ip", "-n", ns, "link", "set", "lo", "up")
            for side, peer, peer_node in (("a", "b", "0.0.0.2"), ("b", "a", "0.0.0.1")):
                routes = f"routes={self.address[peer]}={peer_node}"
                if compact:
                    routes += f",compact;own_address_v4={self.address[side]}"
                c = ip_client_tun(f"hft{side}{tag}", f"{routes};{options}", stats_interval=0)
                self.clients[side] = c
                self.tb.msg_connect(c, "sis_out", nodes[side], "sis_in")
                self.tb.msg_connect(nodes[side], "sis_out", c, "sis_in")
                # The device moves into its namespace with its file descriptor still ours.
                ns, dev = self.ns[side], c.name
                run("ip", "link", "set", "dev", dev, "netns", ns)
                run("ip", "-n", ns, "addr", "add", f"{self.address[side]}/24", "dev", dev)
                run("ip", "-n", ns, "link", "set", "dev", dev, "mtu", str(tun_mtu), "up")
                # Per route: a namespace may only pick the host's allowed algorithms
                # as its default, but root may set any on a route.
                metrics = (["congctl", congestion_control] if congestion_control else []) + \
                    (["window", str(int(tcp_window))] if tcp_window else []) + \
                    (["rto_min", f"{int(tcp_rto_min * 1000)}ms"] if tcp_rto_min else [])
                if metrics:
                    run("ip", "-n", ns, "route", "replace", f"{subnet}.0/24", "dev", dev,
                        *metrics)
                for setting in sysctls:
                    run("ip", "netns", "exec", ns, "sysctl", "-q", "-w", setting)
                if tcp_window:
                    # Linux raises the window past the route's once data flows (to 26 kB
                    # at 1200 bps, autotuning off or on): cap the receive buffer, which
                    # bounds the window to about half of it, in the namespace.
                    buffer = 2 * int(tcp_window)
                    run("ip", "netns", "exec", ns, "sysctl", "-q", "-w",
                        f"net.ipv4.tcp_rmem=4096 {buffer} {buffer}")
        except Exception:
            self._release(created)
            raise

    def start(self):
        self.tb.start()
        return self

    def stop(self):
        self.tb.stop()
        self.tb.wait()
        self._release(list(self.ns.values()))

    def _release(self, namespaces):
        for c in self.clients.values():
            c.close()
        for ns in namespaces:
            subprocess.run(["ip", "netns", "delete", ns], capture_output=True)
