#
# Copyright 2026 gr-hfstack authors.
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""hfstack-testbed: two STANAG 5066 stations on this machine, each in a network
namespace of its own, joined by emulated (or loopback) modems, ready to try with real
tools. `ip`: the IP client on a TUN device on each side; `pep`: the HF-PEP and its DNS
proxy on each side; `hub`: four stations, a hub and three spokes on one channel, each
with an IP client and a subnet of its own, the hub forwarding between the spokes (a
spoke reaches another's subnet over two HF hops). Prints the commands to type in each namespace, runs until Ctrl-C
(SIGINT or SIGTERM), then removes the namespaces, their nftables tables, the processes
started in them and the files it wrote; a set left by a testbed that was killed is
removed at the next start.

Exit status: 0 after Ctrl-C, 1 when a station or the setup fails, 2 for a bad option.
"""

import json
import logging
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

from ..cli import add_version, one_line_parser, setup_logging, usage_error

PROG = "hfstack-testbed"
log = logging.getLogger(PROG)
# Where each running testbed records its pid, so that the next start can tell a
# running one from a stale one.
STATE_DIR = "/run/hfstack-testbed"
HTTP_PORT = 8080
NAME = "www.far.example"      # any name: the far side's DNS server answers every A question
ANSWER = "10.99.0.1"          # what it answers (testbed.ip.DNS_SERVER)
CHROMIUM_PROFILE = "/tmp/hfstack-testbed-chromium"
HUB_SPOKES = 3
# Every station of the hub test bed runs the node's defaults, as a net should
# (docs/networks.md, "IP through a hub"): the hub keeps a link to every spoke and serves
# them in turn; --node-options adds to them.
HUB_NODE_OPTIONS = ""


def parse_args(argv):
    p = one_line_parser(
        prog=PROG,
        description="Two STANAG 5066 stations in two network namespaces on this machine, "
                    "with the commands to try them (needs root).",
        epilog="Examples: hfstack-testbed ip; hfstack-testbed pep --data-rate 2400. "
               "Ctrl-C removes everything (docs/ip-client.md, docs/pep.md).")
    p.add_argument("scenario", choices=("ip", "pep", "hub"),
                   help="ip: IP client on TUN devices; pep: the HF-PEP and its DNS proxy; "
                        "hub: a hub and three spokes with IP clients, routing through the hub")
    p.add_argument("--kind", default="emulator", choices=("emulator", "loopback"),
                   help="the modems: emulator (link level, no DSP; default) or loopback "
                        "(the STANAG 4539 modem through an AWGN channel)")
    p.add_argument("--data-rate", default="9600", metavar="BPS",
                   help="the link's data rate in bps, or a mode's name (default 9600)")
    p.add_argument("--time-scale", type=float, default=1.0,
                   help="protocol seconds per real second (default 1: real time)")
    p.add_argument("--tag", default="",
                   help="suffix of the namespace names, to run more than one testbed")
    p.add_argument("--log-level", default="info", choices=("debug", "info", "warn", "error"))
    add_version(p)
    p.add_argument("--node-options", default=None, metavar="NAME=VALUE;...",
                   help="hub: options for every node, beside the node's defaults "
                        "(default: none)")
    a = p.parse_args(argv)
    if a.scenario != "hub" and a.node_options is not None:
        raise usage_error("--node-options is for the hub testbed")
    if a.scenario == "hub" and a.kind != "emulator":
        raise usage_error("the hub testbed runs emulated modems only (--kind emulator)")
    if not (a.time_scale > 0):
        raise usage_error("--time-scale must be > 0")
    if not a.tag.isalnum() and a.tag:
        raise usage_error("--tag takes letters and digits only")
    if len(a.tag) > 8:
        raise usage_error("--tag is at most 8 characters (network device names are short)")
    from ..testbed.ip import mode_bps
    try:
        mode_bps(a.data_rate)
    except ValueError as e:
        raise usage_error(f"--data-rate: {e}")
    if a.data_rate.isdigit():
        a.data_rate = int(a.data_rate)
    return a


def namespace_names(scenario, tag):
    """The namespaces a testbed of `scenario` makes (as testbed.ip / .pep / .hub name them)."""
    if scenario == "hub":
        from ..testbed.hub import namespace_names as hub_names
        return hub_names(HUB_SPOKES, tag)
    return [f"hf0a{tag}", f"hf0b{tag}"] if scenario == "ip" else [f"hfpa{tag}", f"hfpb{tag}"]


def existing_namespaces():
    done = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True)
    return {line.split()[0] for line in done.stdout.splitlines() if line.strip()}


def running(pid):
    """Whether `pid` is a live hfstack-testbed (not a reused pid)."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return b"testbed" in f.read()
    except OSError:
        return False


def empty_namespace(ns):
    """Ends every process in namespace `ns` (the stations, the servers, what the user
    started there): SIGTERM, then SIGKILL after 5 s."""
    def pids():
        done = subprocess.run(["ip", "netns", "pids", ns], capture_output=True, text=True)
        return [int(p) for p in done.stdout.split() if p.isdigit() and int(p) != os.getpid()]
    for sig, grace in ((signal.SIGTERM, 5.0), (signal.SIGKILL, 5.0)):
        left = pids()
        for pid in left:
            try:
                os.kill(pid, sig)
            except ProcessLookupError:
                pass
        deadline = time.monotonic() + grace
        while left and time.monotonic() < deadline:
            time.sleep(0.1)  # waiting for processes to exit, bounded by the deadline
            left = pids()
        if not left:
            return


def remove_set(namespaces, paths):
    """Removes namespaces (their processes, devices and nftables tables go with them)
    and files."""
    for ns in namespaces:
        empty_namespace(ns)
        subprocess.run(["ip", "netns", "delete", ns], capture_output=True)
        shutil.rmtree(f"/etc/netns/{ns}", ignore_errors=True)
    for path in paths:
        shutil.rmtree(path, ignore_errors=True)


class state_file:
    """/run/hfstack-testbed/SCENARIO[TAG].json: the running testbed's pid, namespaces
    and directories."""

    def __init__(self, scenario, tag):
        self.scenario = scenario
        self.path = os.path.join(STATE_DIR, f"{scenario}{tag}.json")
        self.namespaces = namespace_names(scenario, tag)
        self.paths = []

    def clear_stale(self):
        """Refuses to start over a running testbed; removes what a killed one left."""
        try:
            with open(self.path) as f:
                old = json.load(f)
        except (OSError, ValueError):
            old = {}
        if old.get("pid") and running(old["pid"]):
            raise RuntimeError(f"an {self.scenario} testbed is already running (pid {old['pid']}): "
                               f"stop it with Ctrl-C in its terminal or `kill {old['pid']}`, "
                               "or choose another --tag")
        left = sorted(existing_namespaces() & set(self.namespaces + old.get("namespaces", [])))
        paths = [p for p in old.get("paths", []) if os.path.exists(p)]
        if left or paths:
            who = f" (pid {old['pid']})" if old.get("pid") else ""
            log.warning("removing a stale %s testbed left by one that did not exit cleanly%s: "
                        "%s", self.scenario, who, ", ".join(left + paths))
            remove_set(left, paths)
        self.remove()

    def write(self):
        os.makedirs(STATE_DIR, exist_ok=True)
        with open(self.path, "w") as f:
            json.dump({"pid": os.getpid(), "namespaces": self.namespaces, "paths": self.paths}, f)

    def remove(self):
        try:
            os.unlink(self.path)
        except FileNotFoundError:
            pass


def drain(stream, path):
    """Copies a station's output to a file (a full pipe would stall it)."""
    def copy():
        with open(path, "a") as f:
            for line in stream:
                f.write(line)
                f.flush()
    threading.Thread(target=copy, daemon=True).start()


def tail(path, lines=20):
    try:
        with open(path) as f:
            return "".join(f.readlines()[-lines:])
    except OSError:
        return ""


class ip_scenario:
    """testbed.ip in this process, an HTTP server and a DNS server on side B."""

    def __init__(self, a, state):
        from ..testbed import ip, web
        self.ip, self.web = ip, web
        self.bed = ip.testbed(rate=a.data_rate, time_scale=a.time_scale, tag=a.tag, kind=a.kind,
                              profile="awgn" if a.kind == "loopback" else "")
        self.site = tempfile.mkdtemp(prefix="hfstack-testbed-ip-")
        state.paths.append(self.site)
        self.servers = []

    def start(self):
        self.bed.start()
        web = self.web
        web.write_site(self.site)
        far = self.bed.address["b"]
        for code, args in ((web.SITE_SERVER, (far, str(HTTP_PORT), self.site)),
                           (self.ip.DNS_SERVER, (far,))):
            p = subprocess.Popen(self.bed.command("b", sys.executable, "-c", code, *args),
                                 stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
            self.servers.append(p)
            if p.stdout.readline().strip() != "ready":
                raise RuntimeError("a server on side B did not start")

    def commands(self):
        ns, addr = self.bed.ns, self.bed.address
        a, b = ns["a"], ns["b"]
        return [
            f"# Side A: namespace {a}, {addr['a']} (node 0.0.0.1); side B: namespace {b}, "
            f"{addr['b']} (node 0.0.0.2), with a web site on port {HTTP_PORT} and a DNS "
            f"server answering every name with {ANSWER}.",
            f"ip netns exec {a} ping -c 3 -w 60 {addr['b']}",
            f"ip netns exec {a} curl -sS http://{addr['b']}:{HTTP_PORT}/",
            f"ip netns exec {a} dig +short +timeout=20 @{addr['b']} {NAME}",
            f"ip netns exec {b} ping -c 3 -w 60 {addr['a']}",
            "# A browser in side A (as root, Chromium needs --no-sandbox):",
            f"ip netns exec {a} chromium --no-sandbox --user-data-dir={CHROMIUM_PROFILE} "
            f"http://{addr['b']}:{HTTP_PORT}/",
        ]

    def failed(self):
        return None  # the stations run in this process: a crash ends it (cleaned at the next start)

    def stop(self):
        for p in self.servers:
            p.kill()
            p.wait()
        self.bed.stop()


class pep_scenario:
    """testbed.pep: two hfstack-node --pep processes, an HTTP server and the far
    namespace's DNS server on side B."""

    def __init__(self, a, state):
        from ..testbed import ip, pep, web
        self.ip, self.pep, self.web = ip, pep, web
        self.bed = pep.pep_testbed(rate=a.data_rate, time_scale=a.time_scale, tag=a.tag,
                                   kind=a.kind)
        state.paths.append(self.bed.tmp)
        self.logs = {}

    def start(self):
        bed = self.bed
        bed.start()
        for side, p in bed.node.items():
            self.logs[side] = os.path.join(bed.tmp, f"node-{side}.log")
            drain(p.stdout, os.path.join(bed.tmp, f"node-{side}.stats"))
            drain(p.stderr, self.logs[side])
        site = os.path.join(bed.tmp, "site")
        self.web.write_site(site)
        bed.serve("b", self.web.SITE_SERVER, self.pep.FAR, str(HTTP_PORT), site)
        bed.serve("b", self.ip.DNS_SERVER, self.pep.FAR)

    def commands(self):
        a, b, far = self.bed.ns["a"], self.bed.ns["b"], self.pep.FAR
        url = f"http://{far}:{HTTP_PORT}/"
        named = f"http://{self.pep.FAR_NAME}:{HTTP_PORT}/"
        return [
            f"# Side A: namespace {a}, the near proxy (node 0.0.0.1): SOCKS5 on {self.bed.socks}, "
            f"TCP to 10.78.0.0/24 taken by nftables REDIRECT, DNS proxy on {self.bed.dns}. "
            f"Side B: namespace {b}, the far proxy (node 0.0.0.2), a web site on {far}:{HTTP_PORT} "
            f"and a DNS server answering every name with {ANSWER}; its hosts file names "
            f"{far} {self.pep.FAR_NAME}, which the far proxy resolves for SOCKS5 clients.",
            f"ip netns exec {a} curl -sS --socks5 {self.bed.socks} {url}",
            f"ip netns exec {a} curl -sS --socks5-hostname {self.bed.socks} {named}",
            f"ip netns exec {a} curl -sS {url}",
            f"ip netns exec {a} dig +short +timeout=20 -p 5353 @127.0.0.1 {NAME}",
            "# A browser in side A through SOCKS5 (as root, Chromium needs --no-sandbox):",
            f"ip netns exec {a} chromium --no-sandbox --user-data-dir={CHROMIUM_PROFILE} "
            f"--proxy-server=socks5://{self.bed.socks} {named}",
        ]

    def failed(self):
        for side, p in self.bed.node.items():
            if p.poll() is not None:
                time.sleep(0.2)  # lets the log copier take the last lines
                return (f"station {side.upper()} (hfstack-node, namespace {self.bed.ns[side]}) "
                        f"exited with status {p.returncode}:\n{tail(self.logs.get(side, ''))}")
        return None

    def stop(self):
        self.bed.stop()


class hub_scenario:
    """testbed.hub: four hfstack-node processes with IP clients, the hub forwarding; a
    web server on the hub's and on spoke 2's subnet."""

    def __init__(self, a, state):
        from ..testbed import hub, web
        self.hub, self.web = hub, web
        options = HUB_NODE_OPTIONS if a.node_options is None else a.node_options
        self.bed = hub.hub_testbed(rate=a.data_rate, time_scale=a.time_scale, tag=a.tag,
                                   spokes=HUB_SPOKES,
                                   node_options=";".join(o for o in (
                                       "supervision.keep_alive_interval_s=36000", options) if o))
        state.paths.append(self.bed.tmp)

    def start(self):
        bed = self.bed
        bed.start()
        site = os.path.join(bed.tmp, "site")
        self.web.write_site(site)
        for side, k in (("hub", 0), ("s2", 2)):
            bed.serve(side, self.web.SITE_SERVER, bed.lan_address(k), str(HTTP_PORT), site)

    def commands(self):
        bed, ns = self.bed, self.bed.ns
        hub_lan, s2_lan = bed.lan_address(0), bed.lan_address(2)
        lines = [f"# Hub: namespace {ns['hub']}, {bed.hf_address(0)} on hf0 (node 0.0.0.1), "
                 f"subnet {self.hub.LAN}.0.0/24, forwarding. Spoke k (1..{HUB_SPOKES}): "
                 f"namespace {ns['s1'].replace('s1', 'sk', 1)}, {self.hub.HF_NET}.k+1 (node 0.0.0.k+1), subnet "
                 f"{self.hub.LAN}.k.0/24. Web servers on {hub_lan}:{HTTP_PORT} and "
                 f"{s2_lan}:{HTTP_PORT}; every subnet's first address is on its loopback.",
                 "# Spoke 1 to the hub's subnet (one HF hop):",
                 f"ip netns exec {ns['s1']} ping -c 3 -w 120 {hub_lan}",
                 f"ip netns exec {ns['s1']} curl -sS -m 300 http://{hub_lan}:{HTTP_PORT}/",
                 "# Spoke 1 to spoke 2's subnet through the hub (two HF hops):",
                 f"ip netns exec {ns['s1']} ping -c 3 -w 120 {s2_lan}",
                 f"ip netns exec {ns['s1']} curl -sS -m 300 http://{s2_lan}:{HTTP_PORT}/"]
        return lines

    def failed(self):
        return self.bed.failed()

    def stop(self):
        self.bed.stop()


def unavailable(scenario):
    if scenario == "hub":
        from ..testbed.hub import unavailable as why
        return why()
    if scenario == "ip":
        from ..testbed.ip import unavailable as why
    else:
        from ..testbed.pep import unavailable as why
    return why()


def stop_signal(signum, frame):
    raise KeyboardInterrupt


def main(argv=None):
    try:
        a = parse_args(sys.argv[1:] if argv is None else argv)
    except usage_error as e:
        print(f"{PROG}: {e}", file=sys.stderr)
        return 2
    setup_logging(PROG, a.log_level)
    why = unavailable(a.scenario)
    if why:
        log.error("cannot build the %s testbed: %s", a.scenario, why)
        return 1
    signal.signal(signal.SIGTERM, stop_signal)
    signal.signal(signal.SIGINT, stop_signal)
    state = state_file(a.scenario, a.tag)
    scenario, status, owned = None, 0, False
    try:
        state.clear_stale()
        owned = True  # from here on, the namespaces of this name are ours to remove
        state.write()
        t0 = time.monotonic()
        scenario = {"ip": ip_scenario, "pep": pep_scenario, "hub": hub_scenario}[a.scenario](a, state)
        state.write()
        scenario.start()
        print(f"{PROG}: the {a.scenario} testbed is up after {time.monotonic() - t0:.1f} s "
              f"({a.kind} modems, {a.data_rate} bps, time scale {a.time_scale:g}). "
              "Try, in another terminal:", flush=True)
        for line in scenario.commands():
            print(("  " if line.startswith("#") else "    ") + line, flush=True)
        who = "the stations" if a.scenario == "hub" else "both stations"
        print(f"{PROG}: running; Ctrl-C stops {who} and removes the namespaces "
              "(and whatever was started in them).", flush=True)
        while True:
            crash = scenario.failed()
            if crash:
                log.error("%s", crash.rstrip())
                status = 1
                break
            time.sleep(0.5)  # watching the stations until a signal interrupts
    except KeyboardInterrupt:
        pass
    except (RuntimeError, OSError, ValueError) as e:
        log.error("%s", str(e).rstrip())
        status = 1
    finally:
        # A second Ctrl-C must not interrupt the removal.
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        if scenario is not None and owned:
            try:
                scenario.stop()
            except Exception as e:  # the removal below still runs
                log.warning("stopping the stations: %s", e)
        if owned:
            remove_set([ns for ns in state.namespaces if ns in existing_namespaces()], state.paths)
            state.remove()
            print(f"{PROG}: removed the {a.scenario} testbed", flush=True)
    return status
