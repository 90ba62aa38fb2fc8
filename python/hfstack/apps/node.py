#!/usr/bin/env python3
#
# Copyright 2026 gr-hfstack authors.
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""hfstack-node: a STANAG 5066 node with its STANAG 4539 modem and radio, serving SIS
clients (any STANAG 5066 application: hfstack-console, Annex F IP clients, e-mail).

  hfstack-node --config field.yaml
  hfstack-node --address 0.0.0.5 --data-rate 1200 --interleaver long \\
      --kind audio --device plughw:CARD=Device --ptt serial:/dev/ttyUSB0:rts
  hfstack-node --kind uhd --frequency-hz 7.0758e6 --device-args type=b200 --rx-gain-db 40
  hfstack-node --pair --kind emulator --time-scale 20     # two nodes, SIS on P and P + 1
  hfstack-node --demo                                      # see below
  hfstack-node --address 0.0.0.1 --ip-client hf0 --ip-route 10.77.0.2=0.0.0.2 ...
                                                           # IP over HF on TUN hf0

The radio (--kind): audio (the default for one node), uhd, file, emulator, or loopback
(two nodes, --pair or --demo: their default); python/hfstack/radio/; every radio
option is also a YAML key under `radio:`. A loopback or emulator radio with
--air-publish and --air-subscribe shares its channel with a node in another process (or
network namespace) over ZeroMQ. --ip-client runs the STANAG 5066 IP client (Annex
F.12, docs/ip-client.md) on a TUN device as a client of this node (YAML: `ip_client:`),
its counters in the statistics. Command-line options override
the config file. Statistics go out as JSON lines every --stats-interval seconds and at
the end. SIGINT or SIGTERM stops the node cleanly. A bad option or config exits 2, a
device or port that cannot be opened exits 1, each with one line on stderr.

--demo: two nodes in this process, each with the real STANAG 4539 modem at 2400 bps,
joined by the Watterson channel (F.1487 mid-latitude moderate, 20 dB SNR each way;
--profile and --snr-db change them). A SIS client on each node binds, node A pings node
B, then sends --bytes with ARQ; progress is shown while it runs, and a summary at the end.
"""

import argparse
import json
import logging
import os
import signal
import sys
import threading
import time

from gnuradio import gr
from gnuradio import hfstack
from gnuradio.hfstack import cli
from gnuradio.hfstack import radio as radio_frontend
from gnuradio.hfstack.station import station as station_base
from gnuradio.hfstack.version import __version__

from .node_config import (CONFIG_KEYS, INTERLEAVER_LETTER, IP_CLIENT_ID, PEP_CLIENT_ID,
                          PEP_LISTENERS, XMPP_CLIENT_ID, check_files, config_error,
                          device_problems, read_secret, resource_error, settings, writable)
from .node_demo import demo, interrupted

PROG = "hfstack-node"
log = logging.getLogger(PROG)


def parse_args(argv):
    p = cli.one_line_parser(prog=PROG, description=__doc__.split("\n\n")[0],
                            epilog=__doc__.split("\n\n", 1)[1],
                            formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--config", help="YAML file with any of: " + ", ".join(CONFIG_KEYS))
    cli.add_version(p)
    n = p.add_argument_group("node")
    n.add_argument("--address", help="STANAG 5066 address a.b.c.d (default 0.0.0.1)")
    n.add_argument("--mode", help="waveform mode by the modem's name (hfstack-modem "
                   "--list-modes): a STANAG 4539 one (2400S, 9600VS), instead of --data-rate and "
                   "--interleaver, or a STANAG 5069 one, WN1-WN12 at any bandwidth "
                   "(WN12/48kHz/US is 240 kbps); with --data-rate auto the starting mode of a rate "
                   "adaptation across the WNs of its bandwidth and interleaver")
    cli.add_renamed(n, "--data-rate", "--rate", help="user data rate in bps (75..12800), or auto: start at 2400 "
                    "(or at --mode) and follow the received SNR (EOW data rate change); "
                    "default 2400")
    n.add_argument("--interleaver", choices=sorted(INTERLEAVER_LETTER),
                   help="interleaver (default short), any of the modem's: --data-rate 9600 "
                   "--interleaver very_short is the modem's 9600VS, none is 4800U or 12800U; "
                   "with --data-rate auto only short, long or none (a data rate change announces "
                   "STANAG 5066 Table C-6 interleavers only)")
    n.add_argument("--options", help='more node options "name=value;..." (see --list-options)')
    n.add_argument("--list-options", action="store_true",
                   help="print every node option with its default and exit")
    n.add_argument("--check", action="store_true",
                   help="check the config and options as the real run would (PTT specs, "
                   "channel profiles, capture and statistics paths), print the settings as "
                   "JSON and exit; a device a run here would not find (PTT serial port, "
                   "sound card, USRP, ipc:// directory) fails it with exit 1 (none is opened)")
    n.add_argument("--state-dir", metavar="DIR",
                   help="where each node keeps its journal, in DIR/ADDRESS, so that a restart "
                        "delivers every ARQ U_PDU once (default: $HFSTACK_STATE_DIR, else "
                        "/var/lib/hfstack as root, else $XDG_STATE_HOME/hfstack or "
                        "~/.local/state/hfstack; \"none\": no journal)")
    n.add_argument("--pcap", help="capture the D_PDUs sent and received to this file")
    n.add_argument("--peer-pcap", help="with --pair or --demo: capture node B's D_PDUs to "
                   "this file (both sides of each exchange, for Wireshark)")
    n.add_argument("--log-level", choices=("debug", "info", "warn", "error"),
                   help="GNU Radio log level of the blocks (default: info; demo: warn)")
    s = p.add_argument_group("SIS")
    s.add_argument("--sis-address", help="address the SIS server listens on (default 127.0.0.1)")
    s.add_argument("--sis-port", type=int, help="SIS port (default 5066; 0 picks a free one)")
    ip = p.add_argument_group("IP client (STANAG 5066 Annex F.12) on a TUN device, beside "
                              "this node (YAML: ip_client)")
    ip.add_argument("--ip-client", metavar="TUN",
                    help="run the IP client on TUN device TUN (made if allowed, or made "
                    "beforehand with `ip tuntap add dev TUN mode tun user NAME`)")
    ip.add_argument("--ip-route", action="append", metavar="PREFIX=NODE[,arq|non_arq][,repeats=N]",
                    help="address table entry: IP destinations to a STANAG 5066 node or group "
                    "(repeatable; PREFIX 'default' for everything else)")
    ip.add_argument("--ip-options", help='more IP client options "name=value;..." '
                    "(hfstack-ip --list-options)")
    ip.add_argument("--ip-configure", action="store_true",
                    help="set the device's address, MTU and routes and bring it up "
                    "(iproute2; needs CAP_NET_ADMIN)")
    ip.add_argument("--ip-address", help="with --ip-configure: address/prefix of the device")
    ip.add_argument("--ip-device-route", action="append", metavar="PREFIX",
                    help="with --ip-configure: a prefix Linux routes through the device "
                    "(repeatable)")
    pp = p.add_argument_group("HF-PEP: TCP over HF through a split proxy (docs/pep.md; YAML: pep)")
    pp.add_argument("--pep", action="store_true", help="run the HF-PEP beside this node")
    pp.add_argument("--pep-options", help='PEP options "name=value;..." (peers=PREFIX=NODE ..., '
                    "deny_ports, compress, ...; a far proxy: allow_peers=NODE ..., "
                    "allow_destinations=PREFIX[:PORTS] ...; hfstack-pep --list-options)")
    for name, what in (("socks", "SOCKS5 listener HOST:PORT (e.g. 127.0.0.1:1080)"),
                       ("http-connect", "HTTP CONNECT listener HOST:PORT"),
                       ("redirect", "listener for nftables REDIRECT, HOST:PORT"),
                       ("transparent", "listener for nftables TPROXY, HOST:PORT (CAP_NET_ADMIN)")):
        pp.add_argument(f"--pep-{name}", metavar="HOST:PORT", help=what)
    pp.add_argument("--pep-dns", metavar="HOST:PORT",
                    help="DNS proxy: answer DNS queries (UDP and TCP) here, from its cache or "
                    "across HF")
    pp.add_argument("--pep-dns-peer", metavar="NODE",
                    help="with --pep-dns: the node whose proxy resolves names (a.b.c.d)")
    pp.add_argument("--pep-dns-static", metavar="NAME=ADDRESS ...",
                    help="with --pep-dns: names answered here, without asking across HF")
    pp.add_argument("--pep-intercept", action="append", metavar="PREFIX",
                    help="install nftables rules (table inet hfstack_pep, removed on stop) "
                    "that send TCP to PREFIX into the proxy: REDIRECT to --pep-redirect, "
                    "TPROXY to --pep-transparent (with its policy route: fwmark 0x5067 "
                    "lookup table 5066, local default dev lo); UDP/443 rejected (repeatable; "
                    "needs root)")
    xg = p.add_argument_group("XMPP bridge: two XMPP servers federated over HF (docs/xmpp.md; "
                              "YAML: xmpp)")
    xg.add_argument("--xmpp", action="store_true",
                    help="run the XMPP bridge beside this node, as a component of the local "
                    "XMPP server")
    xg.add_argument("--xmpp-component", metavar="HOST:PORT",
                    help="the XMPP server's component port (default 127.0.0.1:5347)")
    xg.add_argument("--xmpp-secret-file", metavar="FILE",
                    help="the components' shared secret (first line of FILE)")
    xg.add_argument("--xmpp-local-domain", action="append", metavar="DOMAIN",
                    help="a domain of the local XMPP server (repeatable)")
    xg.add_argument("--xmpp-peer", action="append", metavar="DOMAIN=ADDRESS",
                    help="a remote domain and the node its bridge is on (repeatable)")
    xg.add_argument("--xmpp-transport", choices=("x2x-slep", "x2x-rcop"),
                    help="how stanzas travel over 5066 (default x2x-slep)")
    xg.add_argument("--xmpp-options", help='bridge options "name=value;..." '
                    "(hfstack-xmpp --list-options)")
    xg.add_argument("--xmpp-retry", type=float, metavar="SECONDS",
                    help="seconds between attempts to reconnect to the XMPP server (default 5)")
    ham = p.add_argument_group("host interfaces of amateur radio programs, beside this node "
                               "(SIS clients of it; docs/kiss.md, docs/ardop.md)")
    ham.add_argument("--kiss", nargs="?", const="127.0.0.1:8001", metavar="[HOST:]PORT",
                     help="KISS over TCP for KISS clients (kissutil, APRS and AX.25 software), "
                     "as hfstack-kiss does (default 127.0.0.1:8001)")
    ham.add_argument("--kiss-route", action="append", default=[], metavar="ROUTE",
                     help="with --kiss: as hfstack-kiss --route (repeatable)")
    ham.add_argument("--ardop", nargs="?", const="127.0.0.1:8515", metavar="[HOST:]PORT",
                     help="an ARDOP-compatible host interface for Pat and other ARDOP hosts, "
                     "command port PORT, data port PORT + 1, as hfstack-ardop does (default "
                     "127.0.0.1:8515; docs/ardop.md)")
    ham.add_argument("--ardop-station", action="append", default=[], metavar="CALL=ADDRESS",
                     help="with --ardop: as hfstack-ardop --station (repeatable)")
    ham.add_argument("--ardop-sap", type=int, help="with --ardop: as hfstack-ardop --sap")
    st = p.add_argument_group("statistics")
    st.add_argument("--stats-interval", type=float,
                    help="seconds between JSON statistics lines (default 10; 0: only at the end)")
    st.add_argument("--stats", dest="stats_file", help="write them to this file (default: stdout)")
    radio_frontend.add_arguments(p, skip=("mode", "data_rate", "interleaver"),  # --mode, --data-rate, --interleaver
                                 defaults_shown={"kind": "audio; --pair and --demo: loopback"})
    w = p.add_argument_group("window")
    w.add_argument("--gui", action="store_true",
                   help="show a window: waterfall of what the (first) node's radio receives, "
                   "constellation of its equalised symbols, the links (peer, state, modes, SNR, "
                   "queue) and SNR and throughput against time; closing it stops the node")
    w.add_argument("--screenshot", metavar="FILE.png",
                   help="with --gui: save the window as a PNG when the node stops (the demo: "
                   "when it is done, then exit)")
    two = p.add_argument_group("two nodes in one process (loopback or emulator radio)")
    two.add_argument("--pair", action="store_true",
                     help="also run node B (--peer-address) on the next SIS port")
    two.add_argument("--peer-address", help="node B's address (default 0.0.0.2)")
    d = p.add_argument_group("demo")
    d.add_argument("--demo", action="store_true", help="run the two-node demo and exit")
    d.add_argument("--bytes", type=int, default=20000, help="bytes the demo sends with ARQ")
    d.add_argument("--size", type=int, default=1000, help="bytes per U_PDU (1..2048)")
    d.add_argument("--pings", type=int, default=2, help="pings before the data")
    d.add_argument("--timeout", type=float, default=900.0,
                   help="real seconds the demo waits before giving up")
    d.add_argument("--stop-after", type=float, metavar="SECONDS",
                   help="end the transfer once it has run SECONDS (protocol time) and report "
                   "what was delivered by then, e.g. to measure a window of a long transfer")
    d.add_argument("--data-seed", type=int, default=5066, help="seed of the demo's data")
    d.add_argument("--json", metavar="FILE",
                   help="also write the demo's summary to FILE as JSON (bench/link_agreement.py "
                   "reads it), with a timeline of the transfer: bytes delivered, each node's "
                   "data rate and the channel's SNR, about once a second")
    d.add_argument("--snr-steps", metavar="SECONDS:DB,...",
                   help="loopback radios: set both channels' SNR to DB once the data transfer "
                   "has run SECONDS (protocol time; e.g. 0:25,400:12,800:25)")
    a = p.parse_args(argv)
    parse_host_interfaces(a)
    a.snr_steps = cli.parse_snr_steps(a.snr_steps) if a.snr_steps else []
    if a.snr_steps and not a.demo:
        raise config_error("--snr-steps needs --demo")
    if a.screenshot and not a.gui:
        raise config_error("--screenshot needs --gui")
    if a.json and not a.demo:
        raise config_error("--json needs --demo")
    if a.demo and not 1 <= a.size <= 2048:
        raise config_error("--size must be 1..2048 (the SIS MTU)")
    if a.demo and a.bytes < 1:
        raise config_error("--bytes must be at least 1")
    if a.demo and a.pings < 0:
        raise config_error("--pings must be 0 or more")
    return a


def parse_host_interfaces(a):
    """--kiss and --ardop checked as hfstack-kiss and hfstack-ardop check their options
    (config_error otherwise)."""
    from .ardop import DEFAULT_SAP, parse_stations
    from .kiss import parse_routes
    from ..cli import usage_error
    from ..pep.endpoint import parse_endpoint, proxy_error
    a.kiss_endpoint = a.kiss_routes = a.ardop_endpoint = a.ardop_stations = None
    if a.kiss_route and a.kiss is None:
        raise config_error("--kiss-route needs --kiss")
    if (a.ardop_station or a.ardop_sap is not None) and a.ardop is None:
        raise config_error("--ardop-station and --ardop-sap need --ardop")
    try:
        if a.kiss is not None:
            spec = a.kiss if ":" in a.kiss else "127.0.0.1:" + a.kiss
            a.kiss_endpoint = parse_endpoint(spec, "--kiss")
            a.kiss_routes = parse_routes(a.kiss_route)
        if a.ardop is not None:
            spec = a.ardop if ":" in a.ardop else "127.0.0.1:" + a.ardop
            a.ardop_endpoint = parse_endpoint(spec, "--ardop")
            a.ardop_stations = parse_stations(a.ardop_station)
            a.ardop_sap = DEFAULT_SAP if a.ardop_sap is None else a.ardop_sap
            if not 0 <= a.ardop_sap <= 15:
                raise usage_error("--ardop-sap must be 0..15")
    except (usage_error, proxy_error) as e:
        raise config_error(str(e))


def start_host_interfaces(a, s, stations, stop):
    """The KISS gateway (--kiss) and the ARDOP host interface (--ardop), each in a
    thread of its own, a SIS client of the first node's server; their listeners open
    here, so a busy port fails before the node runs. The threads, joined by the caller
    after `stop`."""
    sis = (s["sis_address"] if s["sis_address"] not in ("", "0.0.0.0") else "127.0.0.1",
           stations[0].server.port())
    apps = []
    if a.kiss_endpoint is not None:
        from .kiss import kiss_app
        try:
            apps.append(("kiss", kiss_app(sis, a.kiss_endpoint, a.kiss_routes, retry=1.0)))
        except OSError as e:
            raise resource_error(f"KISS port {a.kiss}: {e.strerror or e}")
        log.info("node %s: KISS on %s:%d", stations[0].address, *apps[-1][1].address)
    if a.ardop_endpoint is not None:
        from .ardop import ardop_app
        try:
            apps.append(("ardop", ardop_app(sis, a.ardop_endpoint, a.ardop_stations,
                                            a.ardop_sap, retry=1.0,
                                            channel_busy=stations[0].node.channel_busy)))
        except OSError as e:
            raise resource_error(f"ARDOP ports {a.ardop} and the next: {e.strerror or e}")
        log.info("node %s: ARDOP host interface on %s:%d (data %d)", stations[0].address,
                 *apps[-1][1].address, apps[-1][1].address[1] + 1)
    threads = []
    for name, app in apps:
        app.stop = stop
        threads.append(threading.Thread(target=app.run, name=name, daemon=True))
        threads[-1].start()
    return threads


class station(station_base):
    """One node with its radio and SIS server (the station hier block), its errors in
    the app's terms, and the IP client and HF-PEP the app may attach to it."""

    def __init__(self, address, port, s, radio_options, pcap=""):
        # settings() has checked the address, the options and the time scale.
        try:
            super().__init__(address, node_state_options(s, address), radio_options,
                             s["sis_address"], port, pcap=pcap)
        except radio_frontend.device_error as e:
            raise resource_error(str(e))
        except radio_frontend.radio_error as e:
            raise config_error(str(e))
        self.ip_client = None
        self.pep = None
        self.xmpp = None
        self.rules_installed = False

    def attach_pep(self, tb, pep):
        """The HF-PEP as one more SIS client of this node; its listeners open now, so a
        busy port fails before anything runs."""
        from gnuradio.hfstack.pep import pep_proxy, proxy_error
        try:
            self.pep = pep_proxy(pep["options"], client_id=PEP_CLIENT_ID, stats_interval=0,
                                 dns=pep["dns"], dns_peer=pep["dns_peer"],
                                 dns_static=pep["dns_static"],
                                 **{n: pep[n] for n in PEP_LISTENERS})
            bound = self.pep.open_listeners()
            if pep["intercept"]:
                from gnuradio.hfstack.pep import install_rules
                install_rules(pep["intercept"],
                              bound["redirect"][1] if "redirect" in bound else None,
                              bound["transparent"][1] if "transparent" in bound else None)
                self.rules_installed = True
        except proxy_error as e:
            raise resource_error(f"PEP: {e}")
        tb.msg_connect(self.pep, "sis_out", self, "sis_in")
        tb.msg_connect(self, "sis_out", self.pep, "sis_in")

    def attach_ip_client(self, tb, ip):
        """The IP client on its TUN device as one more SIS client of this node."""
        from gnuradio.hfstack.tun import ip_client_tun, tun_error
        try:
            self.ip_client = ip_client_tun(ip["tun"], ip["options"], IP_CLIENT_ID, 0,
                                           ip["configure"], ip["address"], ip["device_routes"])
        except tun_error as e:
            raise resource_error(f"IP client: {e}")
        tb.msg_connect(self.ip_client, "sis_out", self, "sis_in")
        tb.msg_connect(self, "sis_out", self.ip_client, "sis_in")

    def attach_xmpp(self, tb, x):
        """The XMPP bridge as one more SIS client of this node; it connects to the XMPP
        server once running, and again whenever that connection drops."""
        from gnuradio.hfstack.xmpp import bridge_error, xmpp_bridge
        try:
            self.xmpp = xmpp_bridge(x["peers"], x["local_domains"], read_secret(x["secret_file"]),
                                    x["component"], x["transport"], x["options"], x["retry"],
                                    client_id=XMPP_CLIENT_ID, stats_interval=0)
        except bridge_error as e:
            raise config_error(f"XMPP bridge: {e}")
        except OSError as e:
            raise resource_error(f"XMPP bridge: {e.strerror}: {x['secret_file']}")
        tb.msg_connect(self.xmpp, "sis_out", self, "sis_in")
        tb.msg_connect(self, "sis_out", self.xmpp, "sis_in")

    def client_statistics(self):
        """The IP client's counters and its TUN device's, and the PEP's (in total and per
        connection), or {}."""
        out = {"pep": self.pep.statistics(),
               "pep_connections": self.pep.connection_statistics()} if self.pep is not None else {}
        if self.xmpp is not None:
            out["xmpp"] = self.xmpp.statistics()
        if self.ip_client is None:
            return out
        counters = self.ip_client.client.counters()
        return {**out,
                "ip_client": {k: int(v) if v.is_integer() else v for k, v in counters.items()},
                "tun_device": dict(self.ip_client.tun.counters, name=self.ip_client.name)}

    def close(self):
        super().close()
        if self.rules_installed:
            from gnuradio.hfstack.pep import remove_rules
            remove_rules()
        if self.ip_client is not None:
            self.ip_client.close()


def node_state_options(s, address):
    """The node's options with its journal's directory (state_dir/ADDRESS), unless the
    options name one already or the journal is off (state_dir "none" or empty)."""
    options = s["node_options"]
    if s["state_dir"] in ("", "none") or "state_dir=" in options:
        return options
    return f"{options};state_dir={os.path.join(s['state_dir'], address)}"


def build(s, pair):
    tb = gr.top_block(PROG)
    stations = [station(s["address"], s["sis_port"], s, s["radio"], s["pcap"])]
    stations[0].add_to(tb)
    if s["ip_client"]:
        stations[0].attach_ip_client(tb, s["ip_client"])
    if s["pep"]:
        stations[0].attach_pep(tb, s["pep"])
    if s["xmpp"]:
        stations[0].attach_xmpp(tb, s["xmpp"])
    if pair:
        peer = dict(s["radio"], seed=int(s["radio"]["seed"]) + 1)
        port = s["sis_port"] + 1 if s["sis_port"] else 0
        stations.append(station(s["peer_address"], port, s, peer, s["peer_pcap"]))
        stations[1].add_to(tb)
        radio_frontend.join(tb, *stations)
    return tb, stations


def claim_stdout():
    """Standard output for the statistics alone: GNU Radio's logger writes to file
    descriptor 1, so that descriptor is pointed at standard error and the statistics
    get a copy of the original one."""
    sys.stdout.flush()
    stats = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)
    return stats


def statistics_writer(path):
    if not path or path == "-":
        return claim_stdout()
    try:
        return open(path, "a", buffering=1)
    except OSError as e:
        raise resource_error(f"statistics file {path}: {e.strerror}")


# Counters that are a state now, not a count since the start (no per-interval delta).
SNAPSHOTS = ("clients_connected", "queued_updus", "queued_bytes", "links_up",
             "ttl_awaiting_verdict")
EVENT_POLL_S = 0.2  # how often the nodes' recorded changes are written out


class statistics:
    """The JSON-lines statistics stream (docs/field-trial.md, section 6): one header
    line, then for each node a `stats` line every interval (totals and the last
    interval) and an `event` line for each change of link state, mode or binding, as
    it is seen. Nothing else is written to it: logs go to stderr."""

    def __init__(self, out, stations):
        self.out = out
        self.stations = stations
        self.last = {}   # address: (monotonic time, counters)
        self.started = time.monotonic()

    def write(self, record):
        self.out.write(json.dumps(record, allow_nan=False) + "\n")
        self.out.flush()

    def header(self, s):
        self.write({"type": "header", "program": PROG, "version": __version__,
                    "time": round(time.time(), 3), "nodes": [st.address for st in self.stations],
                    "mode": s["node_options"].split(";")[0].split("=")[1],
                    "time_scale": s["radio"]["time_scale"], "settings": s})

    def events(self):
        """Every change the nodes recorded since the last call (node.take_events())."""
        numbers = ("time", "sap", "client", "dropped")
        for st in self.stations:
            for e in st.node.take_events():
                e = {k: (float(v) if k == "time" else int(v)) if k in numbers else v
                     for k, v in e.items()}
                self.write({"type": "event", "time": round(e.pop("time"), 3),
                            "node": st.address, "event": e.pop("event"), **e})

    def stats(self):
        for st in self.stations:
            t, c = time.monotonic(), st.counters()
            t0, c0 = self.last.get(st.address, (self.started, {}))
            self.last[st.address] = (t, c)
            span = t - t0
            delta = {k: v - c0.get(k, 0) for k, v in c.items() if k not in SNAPSHOTS}
            delta = {k: (int(v) if float(v).is_integer() else round(v, 3))
                     for k, v in delta.items()}
            delta["seconds"] = round(span, 3)
            for name, key in (("tx_bps", "bytes_sent"), ("rx_bps", "bytes_received")):
                delta[name] = round(8 * delta[key] / span, 1) if span > 0 else None
            self.write({"type": "stats", "node": st.address, "time": round(time.time(), 3),
                        **{k: (int(v) if float(v).is_integer() else v) for k, v in c.items()},
                        "last_interval": delta,
                        "links": [dict(link) for link in st.node.links()],
                        "bindings": {str(k): int(v) for k, v in st.node.bindings().items()},
                        "radio": st.radio.stats(), **st.client_statistics()})


def serve(s, stations, stop, out):
    stream = statistics(out, stations)
    stream.header(s)
    for st in stations:
        log.info(f"node {st.address}: SIS on {s['sis_address']}:{st.server.port()}, radio "
                 f"{s['radio']['kind']}, options {s['node_options']}. Ctrl-C stops.")
        if st.ip_client is not None:
            log.info(f"node {st.address}: IP client on {st.ip_client.name}, "
                     f"{s['ip_client']['options']}")
        if st.pep is not None:
            bound = st.pep.open_listeners()
            log.info(f"node {st.address}: HF-PEP, listening "
                     + (", ".join(f"{m} {h}:{p}" for m, (h, p) in bound.items())
                        or "nowhere (far side only)"))
        if st.xmpp is not None:
            log.info(f"node {st.address}: XMPP bridge ({s['xmpp']['transport']}), component "
                     f"of the XMPP server at {s['xmpp']['component']} for "
                     f"{', '.join(s['xmpp']['peers'])}")
    interval = s["stats_interval"]
    due = time.monotonic() + interval if interval else None
    while not stop.wait(EVENT_POLL_S if due is None else
                        max(0.0, min(EVENT_POLL_S, due - time.monotonic()))):
        stream.events()
        if due is not None and time.monotonic() >= due:
            stream.stats()
            due += interval
    return stream


def with_window(window, run, stop, screenshot):
    """run() (the node's statistics loop, or the demo) in a thread while the window
    runs Qt in this one; its result, or its exception raised here. Closing the window
    stops the node (the demo: interrupted)."""
    from gnuradio.hfstack import gui
    finished = threading.Event()
    result = {}

    def work():
        try:
            result["code"] = run()
        except BaseException as e:  # raised again in the main thread
            result["error"] = e
        finally:
            finished.set()

    worker = threading.Thread(target=work, name="node", daemon=True)
    worker.start()
    gui.run_window(window, stop, finished, screenshot)
    stop.set()
    worker.join()
    if "error" in result:
        raise result["error"]
    return result["code"]


def refuse(e, code):
    """Each problem on its own line, `hfstack-node: ...`; returns the exit code."""
    for line in str(e).splitlines() or [type(e).__name__]:
        print(f"{PROG}: {line}", file=sys.stderr)
    return code


def main(argv=None):
    stop = cli.stop_event()
    try:
        a = parse_args(argv)
        if a.list_options:
            print(hfstack.node_option_help(), end="")
            return 0
        s = settings(a)
        check_files(s)
        if a.screenshot:
            why = writable(a.screenshot)
            if why:
                raise resource_error(f"screenshot {a.screenshot}: {why}")
        missing = device_problems(s["radio"], look_for_usrp=a.check)
        if a.check:
            # The settings as read, then what a run here would stop on: a device that
            # is not there fails the check (exit 1), one line each.
            print(json.dumps(s, indent=2))
            if missing:
                raise resource_error("\n".join(missing))
            return 0
        if missing:
            raise resource_error("\n".join(missing))
        if a.gui:
            from gnuradio.hfstack import gui
            try:
                gui.check_display()
            except gui.display_error as e:
                raise config_error(str(e))
        level = a.log_level or ("warn" if a.demo else "info")
        cli.setup_logging(PROG, level)
        gr.logging().set_default_level(getattr(gr.log_levels, level))
        for sig in (signal.SIGINT, signal.SIGTERM):  # before any device is opened
            signal.signal(sig, lambda *_: stop.set())
        # Before the blocks exist: they log as they are built.
        stats_out = None if a.demo else statistics_writer(s["stats_file"])
        tb, stations = build(s, a.pair or a.demo)
        # The demo's data flow into node B: its radio shows them (A's hears acknowledgements).
        shown = 1 if a.demo else 0
        window = (gui.node_window(tb, stations, f"{PROG} {stations[shown].address}", shown)
                  if a.gui else None)
        if stop.is_set():
            return 0
    except config_error as e:
        return refuse(e, 2)
    except resource_error as e:
        return refuse(e, 1)
    try:
        tb.start()
    except RuntimeError as e:
        return refuse(" ".join(str(e).split()), 1)
    out = None
    host_threads = []
    try:
        if not a.demo:
            host_threads = start_host_interfaces(a, s, stations, stop)
        if a.demo:
            run = lambda: demo(a, s, stations, stop)  # noqa: E731
        else:
            def run():
                nonlocal out
                out = serve(s, stations, stop, stats_out)
                return 0
        if a.gui:
            return with_window(window, run, stop, a.screenshot)
        return run()
    except resource_error as e:
        return refuse(e, 1)
    except interrupted:
        print(f"{PROG}: demo interrupted", file=sys.stderr)
        return 130
    finally:
        stop.set()
        for thread in host_threads:
            thread.join()
        tb.stop()
        tb.wait()
        if out is not None:  # the final figures
            out.events()
            out.stats()
        for st in stations:
            st.close()


if __name__ == "__main__":
    sys.exit(main())
