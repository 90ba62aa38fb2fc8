#!/usr/bin/env python3
#
# Copyright 2026 gr-hfstack authors.
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""hfstack-node: a STANAG 5066 node with its STANAG 4539 modem and radio, serving SIS
clients (any STANAG 5066 application: hfstack-console, Annex F IP clients, e-mail).

  hfstack-node --config field.yaml
  hfstack-node --address 0.0.0.5 --rate 1200 --interleaver long \\
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
import math
import logging
import os
import signal
import socket
import sys
import threading
import time

import numpy as np
from gnuradio import gr
from gnuradio import hfstack
from gnuradio.hfstack import cli
from gnuradio.hfstack import modes
from gnuradio.hfstack import radio as radio_frontend
from gnuradio.hfstack.sis.client import bind_request, sis_client, unidata_request
from gnuradio.hfstack.station import station as station_base
from gnuradio.hfstack.traffic_report import progress_bar
from gnuradio.hfstack.version import __version__

dl = hfstack.dl
T = dl.sis_type
PROG = "hfstack-node"
CONFIG_KEYS = ("address", "peer_address", "mode", "rate", "interleaver", "options", "sis", "pcap",
               "peer_pcap", "stats", "radio", "ip_client", "pep", "state_dir")
# Every interleaver of the modem, by its name (the node runs App C's ultra_short,
# very_short, medium and very_long as a fixed mode: rate adaptation cannot announce them).
INTERLEAVER_LETTER = modes.LETTER
DEMO_SAP = 14  # a SAP no Annex F client uses
IP_CLIENT_ID = 0x7FFF0009  # the in-process IP client's SIS client id (the server's are small)
PEP_CLIENT_ID = 0x7FFF000D  # the in-process HF-PEP's (SLEP on SAP 13)
PEP_LISTENERS = ("socks", "http_connect", "redirect", "transparent")


config_error = cli.usage_error  # bad options or config: exit 2
log = logging.getLogger(PROG)


class resource_error(Exception):
    """A device, file or port that cannot be used: exit 1."""


class interrupted(Exception):
    """SIGINT or SIGTERM during the demo."""


def parse_args(argv):
    p = cli.one_line_parser(prog=PROG, description=__doc__.split("\n\n")[0],
                        epilog=__doc__.split("\n\n", 1)[1],
                        formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--config", help="YAML file with any of: " + ", ".join(CONFIG_KEYS))
    cli.add_version(p)
    n = p.add_argument_group("node")
    n.add_argument("--address", help="STANAG 5066 address a.b.c.d (default 0.0.0.1)")
    n.add_argument("--mode", help="waveform mode by the modem's name (hfstack-modem "
                   "--list-modes): a STANAG 4539 one (2400S, 9600VS), instead of --rate and "
                   "--interleaver, or a STANAG 5069 one, WN1-WN12 at any bandwidth "
                   "(WN12/48kHz/US is 240 kbps); with --rate auto the starting mode of a rate "
                   "adaptation across the WNs of its bandwidth and interleaver")
    n.add_argument("--rate", help="user data rate in bps (75..12800), or auto: start at 2400 "
                   "(or at --mode) and follow the received SNR (EOW data rate change); "
                   "default 2400")
    n.add_argument("--interleaver", choices=sorted(INTERLEAVER_LETTER),
                   help="interleaver (default short), any of the modem's: --rate 9600 "
                   "--interleaver very_short is the modem's 9600VS, none is 4800U or 12800U; "
                   "with --rate auto only short, long or none (a data rate change announces "
                   "STANAG 5066 Table C-6 interleavers only)")
    n.add_argument("--options", help='more node options "name=value;..." (see --list-options)')
    n.add_argument("--list-options", action="store_true",
                   help="print every node option with its default and exit")
    n.add_argument("--check", action="store_true",
                   help="check the config and options as the real run would (PTT specs, "
                   "channel profiles, capture and statistics paths), print the settings as "
                   "JSON and exit (no device is opened)")
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
    st = p.add_argument_group("statistics")
    st.add_argument("--stats-interval", type=float,
                    help="seconds between JSON statistics lines (default 10; 0: only at the end)")
    st.add_argument("--stats", dest="stats_file", help="write them to this file (default: stdout)")
    radio_frontend.add_arguments(p, skip=("mode", "data_rate", "interleaver"),  # --mode, --rate, --interleaver
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


def config_schema():
    """The YAML config's structure: every key, its type, and the radio options from
    radio.RADIO_OPTIONS (so the three front ends share one table)."""
    json_type = {bool: "boolean", int: "integer", float: "number", str: "string"}
    radio = {o.name: {"type": [json_type[type(o.default)]] +
                      (["integer"] if isinstance(o.default, float) else []) + ["null"]}
             for o in radio_frontend.RADIO_OPTIONS}
    radio["kind"] = {"enum": list(radio_frontend.KINDS)}
    text = {"type": ["string", "integer", "null"]}
    return {
        "type": "object", "additionalProperties": False,
        "properties": {
            "address": text, "peer_address": text, "pcap": {"type": ["string", "null"]},
            "state_dir": {"type": ["string", "null"]},
            "peer_pcap": {"type": ["string", "null"]},
            "mode": {"type": "string"},
            "rate": {"type": ["integer", "string"]},
            "interleaver": {"enum": sorted(INTERLEAVER_LETTER)},
            "options": {"type": ["string", "object", "null"]},
            "sis": {"type": "object", "additionalProperties": False, "properties": {
                "address": {"type": "string"},
                "port": {"type": "integer", "minimum": 0, "maximum": 65535}}},
            "stats": {"type": "object", "additionalProperties": False, "properties": {
                "interval": {"type": "number", "minimum": 0},
                "file": {"type": "string"}}},
            "radio": {"type": "object", "additionalProperties": False, "properties": radio},
            "pep": {"type": "object", "additionalProperties": False, "properties": {
                "options": {"type": ["string", "object", "null"]},
                "intercept": {"type": "array", "items": {"type": "string"}},
                "dns": {"type": "string"}, "dns_peer": {"type": "string"},
                "dns_static": {"type": "string"},
                **{name: {"type": "string"} for name in PEP_LISTENERS}}},
            "ip_client": {"type": "object", "additionalProperties": False, "required": ["tun"],
                          "properties": {
                              "tun": {"type": "string", "minLength": 1},
                              "routes": {"type": "array", "items": {"type": "string"}},
                              "options": {"type": ["string", "object", "null"]},
                              "configure": {"type": "object", "additionalProperties": False,
                                            "properties": {
                                                "address": {"type": "string"},
                                                "routes": {"type": "array",
                                                           "items": {"type": "string"}}}}}},
        },
    }


def _line_of(node, path):
    """1-based line of the YAML node at `path` (keys and indexes), or of the deepest
    node found on the way."""
    import yaml
    for key in path:
        if isinstance(node, yaml.MappingNode):
            found = [(k, v) for k, v in node.value if k.value == str(key)]
            if not found:
                break
            node = found[0][1] if key is not path[-1] else found[0][0]
        elif isinstance(node, yaml.SequenceNode) and isinstance(key, int) and key < len(node.value):
            node = node.value[key]
        else:
            break
    return node.start_mark.line + 1


def config_problems(path, text):
    """(document, problems): every problem of the config file at once, each as
    `FILE:LINE: key: what is wrong (valid: ...)` with the nearest valid name."""
    import jsonschema
    import yaml
    try:
        doc, tree = yaml.safe_load(text), yaml.compose(text)
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        where = f" at line {mark.line + 1}" if mark else ""
        return None, [f"config {path}: not valid YAML{where}"]
    doc = {} if doc is None else doc
    if not isinstance(doc, dict):
        return None, [f"config {path}: expected a mapping of {', '.join(CONFIG_KEYS)}"]
    schema = config_schema()
    problems = []
    for e in sorted(jsonschema.Draft7Validator(schema).iter_errors(doc),
                    key=lambda e: _line_of(tree, list(e.absolute_path))):
        where = list(e.absolute_path)
        name = ".".join(map(str, where))
        if e.validator == "additionalProperties":
            allowed = e.schema["properties"]
            for key in sorted(set(map(str, e.instance)) - set(allowed)):
                full = key if where == ["radio"] else ".".join(map(str, where + [key]))
                kind = "radio option" if where == ["radio"] else "key"
                problems.append(f"{path}:{_line_of(tree, where + [key])}: unknown {kind} "
                                f"{full}{cli.nearest(key, allowed)} "
                                f"(valid: {', '.join(allowed)})")
        elif e.validator == "enum":
            problems.append(f"{path}:{_line_of(tree, where)}: {name}: {e.instance!r} is not "
                            f"one of {', '.join(map(str, e.validator_value))}"
                            f"{cli.nearest(e.instance, e.validator_value)}")
        elif e.validator == "type" and e.validator_value == "object":
            problems.append(f"{path}:{_line_of(tree, where)}: `{name}` must be a mapping")
        else:
            problems.append(f"{path}:{_line_of(tree, where)}: {name}: {e.message}")
    return doc, problems


def load_config(path):
    try:
        with open(path) as f:
            text = f.read()
    except OSError as e:
        raise config_error(f"config {path}: {e.strerror}")
    doc, problems = config_problems(path, text)
    if problems:
        raise config_error("\n".join(problems))
    return doc


def writable(path):
    """Why `path` cannot be written (created or appended to), or None. Opens nothing."""
    if os.path.isdir(path):
        return "is a directory"
    if os.path.exists(path):
        return None if os.access(path, os.W_OK) else "permission denied"
    parent = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(parent):
        return f"no directory {parent}"
    return None if os.access(parent, os.W_OK) else f"directory {parent} is not writable"


def first(*values):
    return next((v for v in values if v is not None), None)


def settings(a):
    """Every setting from defaults < config file < command line; every problem found
    is reported at once (config_error, one problem a line)."""
    doc = load_config(a.config) if a.config else {}
    sis, stats = doc.get("sis", {}), doc.get("stats", {})
    problems = []
    s = {
        "address": str(first(a.address, doc.get("address"), "0.0.0.1")),
        "peer_address": str(first(a.peer_address, doc.get("peer_address"), "0.0.0.2")),
        "sis_address": str(first(a.sis_address, sis.get("address"), "127.0.0.1")),
        "pcap": str(first(a.pcap, doc.get("pcap"), "")),
        "peer_pcap": str(first(a.peer_pcap, doc.get("peer_pcap"), "")),
        "stats_file": first(a.stats_file, stats.get("file")),
        "state_dir": str(first(a.state_dir, doc.get("state_dir"), default_state_dir())),
    }
    s["sis_port"] = int(first(a.sis_port, sis.get("port"), 5066))
    s["stats_interval"] = float(first(a.stats_interval, stats.get("interval"),
                                      0 if a.demo else 10))
    if s["peer_pcap"] and not (a.pair or a.demo):
        problems.append("--peer-pcap captures node B of --pair or --demo; this run has one node")
    if not 0 <= s["sis_port"] <= (65534 if a.pair or a.demo else 65535):
        problems.append("--sis-port must be 0..65535 (--pair and --demo: 0..65534, node B "
                        "uses the next port)")
    if not s["stats_interval"] >= 0:
        problems.append("--stats-interval must be >= 0")

    mode = first(a.mode, doc.get("mode"))
    rate = str(first(a.rate, doc.get("rate"), 2400)).strip().lower()
    interleaver = str(first(a.interleaver, doc.get("interleaver"), "short"))
    automatic = rate == "auto"
    options = doc.get("options") or ""
    if isinstance(options, dict):
        options = ";".join(f"{k}={str(v).lower() if isinstance(v, bool) else v}"
                           for k, v in options.items())
    if mode is not None:
        mode, rate, interleaver = named_mode(str(mode), a, doc, automatic, problems)
    else:
        if automatic:
            rate = "2400"
            if interleaver not in ("short", "long", "none"):
                problems.append(f"--rate auto with interleaver {interleaver}: a data rate change "
                                "announces only STANAG 5066 Table C-6 interleavers (short, long, "
                                "none); pick one of those or a fixed --rate")
                interleaver = "short"
        if not rate.isdigit():
            problems.append(f"rate {rate!r}: a rate in bps such as 2400, or auto")
            rate = "2400"
        letter = INTERLEAVER_LETTER.get(interleaver, "S")
        if letter == "U" and int(rate) < 4800:
            letter = "Z"  # what no interleaving means there: refused with the modem's reason
        mode = f"{rate}{letter}"
    node_options = [f"mode={mode}"]
    if automatic:
        node_options += ["rate_adaptation=true", "rate_change.autobaud=true"]
    node_options += [str(options), a.options or ""]
    s["node_options"] = ";".join(o for o in node_options if o)
    s["mode"], s["rate"], s["interleaver"] = mode, int(rate), interleaver
    for address in (s["address"], s["peer_address"]):
        try:  # the node checks its address and options (cheap: no thread until started)
            hfstack.node(address, s["node_options"], 1.0, "", 0)
        except (ValueError, RuntimeError) as e:
            if str(e) not in problems:
                problems.append(str(e))

    radio = radio_frontend.from_arguments(a, doc.get("radio") or {})
    # One node goes on the air through a sound card unless told otherwise; two in one
    # process are joined by the Watterson channel.
    radio.setdefault("kind", "loopback" if a.pair or a.demo else "audio")
    mode_refused = any(p.startswith("option mode") for p in problems)  # said once is enough
    if radio["kind"] in radio_frontend.MODEM_KINDS and not mode_refused:
        if modes.is_s5069(mode):  # the modem's default mode and the bandwidth it hears
            radio.setdefault("mode", mode)
        else:
            radio.setdefault("data_rate", int(rate))  # the emulator takes the node's mode
            radio.setdefault("interleaver", interleaver)
    try:
        s["radio"] = radio_frontend.check_options(radio)
    except radio_frontend.radio_error as e:
        problems += str(e).splitlines()
        s["radio"] = dict(radio_frontend.DEFAULTS, kind=radio["kind"])
    if (a.pair or a.demo) and s["radio"]["kind"] not in ("loopback", "emulator"):
        problems.append("--pair and --demo join two nodes by a loopback or emulator radio, "
                        f"not {s['radio']['kind']}")
    if a.snr_steps and s["radio"]["kind"] != "loopback":
        problems.append("--snr-steps changes the Watterson channel of loopback radios, "
                        f"not of {s['radio']['kind']} ones")
    shared = bool(s["radio"]["air_publish"])
    if not (a.pair or a.demo) and s["radio"]["kind"] == "loopback" and not shared:
        problems.append("a loopback radio joins two nodes in one process: add --pair, or "
                        "--air-publish and --air-subscribe to hear a node in another process")
    if (a.pair or a.demo) and shared:
        problems.append("--pair and --demo join their two nodes in this process: leave out "
                        "--air-publish and --air-subscribe")
    s["ip_client"] = ip_client_settings(a, doc.get("ip_client"), problems)
    s["pep"] = pep_settings(a, doc.get("pep"), problems)
    if problems:
        raise config_error("\n".join(problems))
    return s


def named_mode(name, a, doc, automatic, problems):
    """(mode, rate in bps, interleaver) of --mode NAME (or the YAML `mode`), which names
    the rate and interleaver itself: --rate (but auto) and --interleaver go with it not."""
    if first(a.interleaver, doc.get("interleaver")) is not None or (
            not automatic and first(a.rate, doc.get("rate")) is not None):
        problems.append("--mode names the rate and interleaver: leave out --rate (but "
                        "auto) and --interleaver")
    found = modes.mode_info(name)
    if found is None:
        problems.append(f"--mode {name}: {modes.any_mode_problem(name)}")
        return "2400S", 2400, "short"
    bps, interleaver, canonical = found
    return canonical, bps, interleaver


def ip_client_settings(a, section, problems):
    """The IP client beside the node, from --ip-* over the YAML `ip_client` section, or
    None; its options are checked by building the client's kernel (nothing is opened)."""
    section = section or {}
    tun = first(a.ip_client, section.get("tun"))
    configure = section.get("configure") or {}
    given = [n for n in ("ip_route", "ip_options", "ip_address", "ip_device_route")
             if getattr(a, n)] + (["ip_configure"] if a.ip_configure else [])
    if not tun:
        if given:
            problems.append(f"--{given[0].replace('_', '-')} needs --ip-client TUN")
        return None
    if a.pair or a.demo:
        problems.append("--ip-client runs beside one node: not with --pair or --demo (give "
                        "each node its own process, or attach hfstack-ip to node B's SIS port)")
    options = section.get("options") or ""
    if isinstance(options, dict):
        options = ";".join(f"{k}={str(v).lower() if isinstance(v, bool) else v}"
                           for k, v in options.items())
    routes = a.ip_route or section.get("routes") or []
    ip = {"tun": str(tun), "routes": list(routes),
          "options": ";".join(o for o in ([f"routes={' '.join(routes)}"] if routes else [])
                              + [str(options), a.ip_options or ""] if o),
          "configure": bool(a.ip_configure or configure),
          "address": first(a.ip_address, configure.get("address"), ""),
          "device_routes": list(a.ip_device_route or configure.get("routes") or [])}
    if (ip["address"] or ip["device_routes"]) and not ip["configure"]:
        problems.append("--ip-address and --ip-device-route need --ip-configure")
    try:
        if not hfstack.ip_client(ip["options"], IP_CLIENT_ID, 0).option("routes"):
            problems.append("--ip-client needs an address table: give at least one "
                            "--ip-route PREFIX=NODE (or ip_client.routes)")
    except ValueError as e:
        problems.append(f"IP client: {e}")
    return ip


def pep_settings(a, section, problems):
    """The HF-PEP beside the node, from --pep* over the YAML `pep` section, or None;
    options checked by the kernel, listen addresses by their form (nothing opened)."""
    from gnuradio.hfstack import net
    from gnuradio.hfstack.pep import parse_endpoint, proxy_error
    given = {n: getattr(a, "pep_" + n) for n in PEP_LISTENERS}
    if section is None and not a.pep:
        named = [n for n, v in given.items() if v] + (["options"] if a.pep_options else []) \
            + (["intercept"] if a.pep_intercept else []) \
            + [n for n in ("dns", "dns_peer", "dns_static") if getattr(a, "pep_" + n)]
        if named:
            problems.append(f"--pep-{named[0].replace('_', '-')} needs --pep")
        return None
    section = section or {}
    if a.pair or a.demo:
        problems.append("--pep runs beside one node: not with --pair or --demo")
    options = section.get("options") or ""
    if isinstance(options, dict):
        options = ";".join(f"{k}={str(v).lower() if isinstance(v, bool) else v}"
                           for k, v in options.items())
    options = ";".join(o for o in (str(options), a.pep_options or "") if o)
    pep = {"options": options, **{n: str(first(given[n], section.get(n), "")) for n in PEP_LISTENERS},
           "intercept": list(a.pep_intercept or section.get("intercept") or []),
           **{n: str(first(getattr(a, "pep_" + n), section.get(n), ""))
              for n in ("dns", "dns_peer", "dns_static")}}
    if pep["dns"]:
        try:
            parse_endpoint(pep["dns"], "dns")
        except proxy_error as e:
            problems.append(f"PEP: {e}")
        if not pep["dns_peer"]:
            problems.append("--pep-dns needs --pep-dns-peer, the node whose proxy resolves names")
    if pep["dns_peer"] and hfstack.dl.parse_address(pep["dns_peer"]) is None:
        problems.append(f"--pep-dns-peer {pep['dns_peer']!r} is not a STANAG 5066 address a.b.c.d")
    if pep["intercept"] and not (pep["redirect"] or pep["transparent"]):
        problems.append("--pep-intercept needs --pep-redirect or --pep-transparent to send to")
    import ipaddress
    for prefix in pep["intercept"]:
        try:
            ipaddress.ip_network(prefix)
        except ValueError:
            problems.append(f"--pep-intercept {prefix!r} is not a prefix such as 10.78.0.0/24")
    try:
        net.check_pep_options(options)
    except ValueError as e:
        problems.append(f"PEP: {e}")
    for n in PEP_LISTENERS:
        if pep[n]:
            try:
                parse_endpoint(pep[n], n)
            except proxy_error as e:
                problems.append(f"PEP: {e}")
    return pep


def check_files(s):
    """The capture and statistics files the run would write: resource_error (exit 1)
    naming each one that cannot be written, before any device or thread starts."""
    problems = []
    for what, path in (("capture file", s["pcap"]), ("peer capture file", s["peer_pcap"]),
                       ("statistics file", s["stats_file"])):
        if path and path != "-":
            why = writable(path)
            if why:
                problems.append(f"{what} {path}: {why}")
    if problems:
        raise resource_error("\n".join(problems))


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

    def client_statistics(self):
        """The IP client's counters and its TUN device's, and the PEP's (in total and per
        connection), or {}."""
        out = {"pep": self.pep.statistics(),
               "pep_connections": self.pep.connection_statistics()} if self.pep is not None else {}
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


def default_state_dir():
    """Where nodes keep their journals unless told: $HFSTACK_STATE_DIR if set, else a
    system directory for root, the user's state directory otherwise."""
    if os.environ.get("HFSTACK_STATE_DIR"):
        return os.environ["HFSTACK_STATE_DIR"]
    if os.geteuid() == 0:
        return "/var/lib/hfstack"
    base = os.environ.get("XDG_STATE_HOME") or os.path.join(os.path.expanduser("~"), ".local",
                                                            "state")
    return os.path.join(base, "hfstack")


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
                        "links": [dict(l) for l in st.node.links()],
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
                     + ", ".join(f"{m} {h}:{p}" for m, (h, p) in bound.items()))
    interval = s["stats_interval"]
    due = time.monotonic() + interval if interval else None
    while not stop.wait(EVENT_POLL_S if due is None else
                        max(0.0, min(EVENT_POLL_S, due - time.monotonic()))):
        stream.events()
        if due is not None and time.monotonic() >= due:
            stream.stats()
            due += interval
    return stream


# --- demo ---------------------------------------------------------------------------

def describe_link(s):
    r = s["radio"]
    mode = (f"{s['mode']}, {s['rate']} bps" if modes.is_s5069(s["mode"])
            else f"{s['rate']} bps, {s['interleaver']} interleaver")
    if r["kind"] == "loopback":
        return (f"the real STANAG 4539 modem ({mode}) on audio at {radio_frontend.modem_rate(r):g} Hz, "
                f"joined by the Watterson channel ({r['profile']}, {r['snr_db']:g} dB SNR in "
                f"3 kHz each way)")
    return (f"emulated modems ({mode}; {r['profile'] or 'no fading'}, {r['snr_db']:g} dB, "
            f"BER {r['ber']:g}) at {r['time_scale']:g}x real time")


def demo(a, s, stations, stop):
    scale = s["radio"]["time_scale"]
    deadline = time.monotonic() + a.timeout
    left = lambda: max(0.1, deadline - time.monotonic())  # noqa: E731
    A, B = stations
    print(f"Two STANAG 5066 nodes, {A.address} and {B.address}, with {describe_link(s)}.")
    ca = sis_client(s["sis_address"], A.server.port(), left())
    cb = sis_client(s["sis_address"], B.server.port(), left())
    for c, st in ((ca, A), (cb, B)):
        c.send(bind_request(DEMO_SAP, "arq", "node"))
        c.receive_type(T.bind_accepted)
        print(f"  node {st.address}: SIS client on port {st.server.port()} bound SAP {DEMO_SAP} "
              "(ARQ, node delivery confirmation)")

    def wait_for(client, wanted, what, tick=None, idle=()):
        """The next primitive of a wanted type (others are skipped, keep-alives answered);
        `tick` is called about once a second meanwhile. The `idle` clients, which nobody
        else reads meanwhile, have their keep-alives answered too: a ping at a slow rate
        can outlast the node's keep-alive interval."""
        while True:
            try:
                for other in idle:
                    other.answer_keep_alives()
                client.sock.settimeout(min(1.0, left()))
                p = client.receive()
            except socket.timeout:
                if stop.is_set():
                    raise interrupted()
                if time.monotonic() >= deadline:
                    raise resource_error(f"demo gave up waiting for {what} after "
                                         f"{a.timeout:g} s (--timeout)")
                if tick:
                    tick()
                continue
            except (OSError, AssertionError) as e:
                raise resource_error(f"demo lost its SIS connection waiting for {what}: {e}")
            if p.type in wanted:
                return p
            if p.type == T.keep_alive:  # supervision: answer, as a client must
                client.send(hfstack.make_sis("keep_alive"))

    rtts = []
    for k in range(a.pings):
        t0 = time.monotonic()
        ca.send(unidata_request(B.address, DEMO_SAP, f"PING {k + 1}".encode()))
        ping = wait_for(cb, (T.unidata_indication,), f"ping {k + 1} at node B", idle=(ca,))
        cb.send(unidata_request(A.address, DEMO_SAP, ping.payload.replace(b"PING", b"PONG")))
        wait_for(ca, (T.unidata_indication,), f"pong {k + 1}", idle=(cb,))  # confirm skipped
        rtts.append((time.monotonic() - t0) * scale)
        note = " (link set-up included)" if k == 0 else ""
        print(f"  ping {k + 1}: {A.address} -> {B.address} -> {A.address} in {rtts[-1]:.1f} s{note}")

    before = {st.address: st.counters() for st in stations}
    before_radio = {st.address: st.radio.stats() for st in stations}
    rng = np.random.default_rng(a.data_seed)
    data = bytes(rng.integers(0, 256, a.bytes, dtype=np.uint8))
    updus = [data[i:i + a.size] for i in range(0, len(data), a.size)]
    print(f"Sending {len(data)} bytes as {len(updus)} U_PDUs with ARQ, {A.address} -> {B.address}:")
    t0 = time.monotonic()
    for u in updus:
        ca.send(unidata_request(B.address, DEMO_SAP, u))
    confirmed = [0]

    def count_confirms():
        try:
            while confirmed[0] < len(updus):
                wait_for(ca, (T.unidata_request_confirm,), "confirmations")
                confirmed[0] += 1
        except (resource_error, interrupted):
            pass  # the main thread reports

    th = threading.Thread(target=count_confirms, daemon=True)
    th.start()
    bar = progress_bar(len(data), stream=sys.stdout, after_s=0)
    got = []
    received = 0
    last_line = [time.monotonic()]

    timeline = []
    steps = list(a.snr_steps)
    snr_now = [s["radio"]["snr_db"]]

    def tx_mode(st, peer):
        for link in st.node.links():
            if link.get("peer") == peer.address:
                return link.get("tx_mode", "")
        return ""

    def follow(t):
        """SNR steps that are due, and a timeline point (about once a second)."""
        while steps and t >= steps[0][0]:
            snr_now[0] = steps.pop(0)[1]
            for st in stations:
                st.radio.channel.set_snr_db(snr_now[0])
            print(f"  {t:6.1f} s: channel SNR now {snr_now[0]:g} dB", flush=True)
        if not timeline or t - timeline[-1]["t_s"] >= 1.0 or received == len(data):
            # arq_bytes_received: what the link carried to B since the transfer began,
            # before in-order delivery holds it (a lost segment holds all behind it).
            carried = B.counters()["arq_bytes_received"] - before[B.address]["arq_bytes_received"]
            point = {"t_s": t, "delivered_bytes": received, "arq_bytes_received": int(carried),
                     "snr_db": snr_now[0], "tx_mode_a": tx_mode(A, B), "tx_mode_b": tx_mode(B, A)}
            # What each receiver last reported (B's: of A's bursts), so a run shows
            # which report moved a rate.
            for name, st in (("a", A), ("b", B)):
                r = st.radio.stats()
                point[f"bursts_received_{name}"] = r["bursts_received"]
                if "snr_db_last" in r:
                    point[f"snr_report_{name}"] = r["snr_db_last"]
                    point[f"burst_mode_{name}"] = r.get("mode_last", "")
            timeline.append(point)

    def show(delivery):
        t = (time.monotonic() - t0) * scale
        follow(t)
        c = A.counters()
        line = (f"{received:6d} of {len(data)} bytes, {t:6.1f} s, "
                f"{8 * received / t if t > 0 else 0:5.0f} bit/s; node {A.address}: "
                f"{int(c['transmissions'])} transmissions, {c['air_time_s']:.0f} s on air")
        if bar.enabled:
            bar.update(received, line)
        elif delivery or time.monotonic() - last_line[0] >= 10:
            # Not a terminal (a log): a line per delivery, and every 10 s while waiting.
            print(f"  {line}", flush=True)
            last_line[0] = time.monotonic()

    class transfer_stopped(Exception):
        pass

    def tick():
        show(False)
        if a.stop_after is not None and (time.monotonic() - t0) * scale >= a.stop_after:
            raise transfer_stopped()

    show(False)
    stopped = False
    while len(got) < len(updus):
        try:
            p = wait_for(cb, (T.unidata_indication,), f"U_PDU {len(got) + 1} at node B",
                         tick=tick)
        except transfer_stopped:
            stopped = True
            break
        got.append(p.payload)
        received += len(p.payload)
        show(True)
    elapsed = (time.monotonic() - t0) * scale
    bar.close()
    th.join(timeout=1.0 if stopped else max(1.0, min(left(), 60.0)))
    # Stopped by --stop-after: what arrived must be the data's beginning, intact.
    ok = data.startswith(b"".join(got)) if stopped else b"".join(got) == data
    if stopped:
        print(f"  transfer stopped after {elapsed:.0f} s (--stop-after)")
    rate_bps = s["rate"]
    bps = 8 * len(data) / elapsed
    print("Summary")
    print(f"  delivered     {received} of {len(data)} bytes in {len(got)} U_PDUs, "
          f"{'identical and in order' if ok else 'WITH DIFFERENCES'}; {confirmed[0]} confirmed "
          "to the sender")
    print(f"  time          {elapsed:.1f} s from the first U_PDU sent to the last delivered"
          + (" (protocol time)" if scale != 1 else ""))
    print(f"  throughput    {bps:.0f} bit/s: utilization {100 * bps / rate_bps:.0f} % of "
          f"{rate_bps} bps")
    for st in stations:
        c, c0 = st.counters(), before[st.address]
        d = {k: int(c[k] - c0.get(k, 0)) for k in ("transmissions", "dpdus_sent",
                                                    "arq_retransmissions", "segment_crc_errors")}
        r, r0 = st.radio.stats(), before_radio[st.address]
        heard = r["bursts_received"] - r0["bursts_received"]
        seen = ""
        if "snr_db_mean" in r:
            seen = f", SNR {r['snr_db_mean']:.1f} dB"
        if "frequency_offset_hz_mean" in r:
            seen += f", frequency offset {r['frequency_offset_hz_mean']:+.2f} Hz"
        print(f"  node {st.address}  sent {d['transmissions']} transmissions "
              f"({d['dpdus_sent']} D_PDUs, {d['arq_retransmissions']} retransmitted); "
              f"received {heard} bursts{seen}, {d['segment_crc_errors']} segments with CRC errors")
    if rtts:
        print("  pings         " + ", ".join(f"{x:.1f} s" for x in rtts)
              + " round trip (the first sets up the link)")
    if a.json:
        write_demo_summary(a.json, {
            "bytes": len(data), "delivered_bytes": received, "identical": ok,
            "confirmed_updus": confirmed[0], "updus": len(updus),
            "elapsed_s": elapsed, "stopped": stopped, "protocol_time": scale != 1,
            "rate_bps": rate_bps,
            "utilization_pct": 100 * bps / rate_bps, "ping_round_trips_s": rtts,
            "timeline": timeline,
            "nodes": {st.address: {k: float(v) for k, v in st.counters().items()}
                      for st in stations}})
    for c in (ca, cb):
        c.send(hfstack.make_sis("unbind_request"))
        c.close()
    return 0 if ok and (stopped or confirmed[0] == len(updus)) else 1


def write_demo_summary(path, summary):
    try:
        with open(path, "w") as f:
            json.dump(summary, f, indent=1, allow_nan=False)
            f.write("\n")
    except OSError as e:
        raise resource_error(f"--json {path}: {e.strerror or e}")


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
    stop = threading.Event()
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
        if a.check:
            print(json.dumps(s, indent=2))
            return 0
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
        window = gui.node_window(tb, stations, f"{PROG} {stations[0].address}") if a.gui else None
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
    try:
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
        tb.stop()
        tb.wait()
        if out is not None:  # the final figures
            out.events()
            out.stats()
        for st in stations:
            st.close()


if __name__ == "__main__":
    sys.exit(main())
