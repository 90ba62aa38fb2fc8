#
# Copyright 2026 gr-hfstack authors.
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""hfstack-node's settings: defaults < YAML config file < command line, checked all at
once (every problem reported, one a line), for node.py to build from. The config's
schema shares the radio's options with the command line (radio.RADIO_OPTIONS)."""

import os

from gnuradio import hfstack
from gnuradio.hfstack import cli
from gnuradio.hfstack import modes
from gnuradio.hfstack import radio as radio_frontend

CONFIG_KEYS = ("address", "peer_address", "mode", "rate", "interleaver", "options", "sis", "pcap",
               "peer_pcap", "stats", "radio", "ip_client", "pep", "xmpp", "state_dir")
# Every interleaver of the modem, by its name (the node runs App C's ultra_short,
# very_short, medium and very_long as a fixed mode: rate adaptation cannot announce them).
INTERLEAVER_LETTER = modes.LETTER
IP_CLIENT_ID = 0x7FFF0009  # the in-process IP client's SIS client id (the server's are small)
PEP_CLIENT_ID = 0x7FFF000D  # the in-process HF-PEP's (SLEP on SAP 13)
PEP_LISTENERS = ("socks", "http_connect", "redirect", "transparent")
XMPP_CLIENT_ID = 0x7FFF0006  # the in-process XMPP bridge's (SAP 6)

config_error = cli.usage_error  # bad options or config: exit 2


class resource_error(Exception):
    """A device, file or port that cannot be used: exit 1."""


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
            "xmpp": {"type": "object", "additionalProperties": False, "properties": {
                "component": {"type": "string"}, "secret_file": {"type": "string"},
                "local_domains": {"type": "array", "items": {"type": "string"}},
                "peers": {"type": "array", "items": {"type": "string"}},
                "transport": {"enum": ["x2x-slep", "x2x-rcop"]},
                "options": {"type": ["string", "object", "null"]},
                "retry": {"type": "number", "exclusiveMinimum": 0}}},
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


def _duplicate_keys(path, node, where=()):
    """`FILE:LINE: key K given twice (first at line N)` for every mapping key repeated
    in the composed YAML `node` (PyYAML keeps the last one silently)."""
    import yaml
    problems = []
    if isinstance(node, yaml.MappingNode):
        seen = {}
        for k, v in node.value:
            name = ".".join((*where, str(k.value)))
            if isinstance(k, yaml.ScalarNode) and k.value in seen:
                problems.append(f"{path}:{k.start_mark.line + 1}: key {name} given twice "
                                f"(first at line {seen[k.value]}; only one may stay)")
            else:
                seen[k.value] = k.start_mark.line + 1
            problems += _duplicate_keys(path, v, (*where, str(k.value)))
    elif isinstance(node, yaml.SequenceNode):
        for i, v in enumerate(node.value):
            problems += _duplicate_keys(path, v, (*where, str(i)))
    return problems


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
    duplicates = _duplicate_keys(path, tree)
    if duplicates:
        return None, duplicates
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
        with open(path, "rb") as f:
            data = f.read()
    except OSError as e:
        raise config_error(f"config {path}: {e.strerror}")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise config_error(f"config {path}: not a YAML text file (byte {e.start} is not "
                           "UTF-8 text); give the node's YAML configuration")
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
    rate = str(first(a.data_rate, doc.get("rate"), 2400)).strip().lower()
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
                problems.append(f"--data-rate auto with interleaver {interleaver}: a data rate change "
                                "announces only STANAG 5066 Table C-6 interleavers (short, long, "
                                "none); pick one of those or a fixed --data-rate")
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
    s["xmpp"] = xmpp_settings(a, doc.get("xmpp"), problems)
    if problems:
        raise config_error("\n".join(problems))
    return s


def named_mode(name, a, doc, automatic, problems):
    """(mode, rate in bps, interleaver) of --mode NAME (or the YAML `mode`), which names
    the rate and interleaver itself: --data-rate (but auto) and --interleaver go with it not."""
    if first(a.interleaver, doc.get("interleaver")) is not None or (
            not automatic and first(a.data_rate, doc.get("rate")) is not None):
        problems.append("--mode names the rate and interleaver: leave out --data-rate (but "
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


def alsa_card_missing(device):
    """The card an ALSA name such as plughw:CARD=Device,DEV=0 or hw:1 names, when the
    kernel has no such card (/proc/asound); None when it is there or the name names
    no card (default, null, pulse, ...)."""
    if ":" not in device:
        return None
    card = device.split(":", 1)[1].split(",")[0]
    card = card[len("CARD="):] if card.startswith("CARD=") else card
    if not card:
        return None
    entry = f"card{card}" if card.isdigit() else card
    return None if os.path.exists(os.path.join("/proc/asound", entry)) else card


def usrp_missing(device_args):
    """A line saying no USRP answers to device_args (uhd_find_devices' search), or None."""
    try:
        from gnuradio import uhd
    except ImportError:
        return "kind uhd needs GNU Radio's UHD support (Debian: gnuradio, libuhd)"
    from gnuradio.hfstack.radio import quiet_stderr
    from gnuradio.uhd import uhd_python
    with quiet_stderr():  # UHD's banner
        # The device search itself: gnuradio.uhd.find_devices wraps a function this
        # GNU Radio (3.10.5) does not have.
        found = uhd_python.find(uhd.device_addr_t(device_args))
    if found:
        return None
    return (f"no USRP found for device_args {device_args or '(empty: the first found)'}: "
            "uhd_find_devices lists the USRPs this host sees; choose one with --device-args "
            "(e.g. \"serial=...\" or \"addr=192.168.10.2\")")


def device_problems(radio, look_for_usrp=False):
    """What can be told of the radio's devices without opening them: a PTT serial port
    that does not exist, an ipc:// address whose directory does not (ZeroMQ says only
    "No such file or directory"), a sound card the kernel does not have and, with
    look_for_usrp (it takes a network search), a USRP nobody answers for."""
    problems = []
    kind = radio.get("kind")
    if kind == "audio":
        card = alsa_card_missing(radio.get("device") or "")
        if card is not None:
            problems.append(f"sound card {radio['device']}: no card {card} on this host "
                            "(aplay -l lists the cards; arecord -L their names)")
    if kind == "uhd" and look_for_usrp:
        missing = usrp_missing(radio.get("device_args") or "")
        if missing:
            problems.append(missing)
    ptt = radio.get("ptt") or ""
    if ptt.startswith("serial:"):
        port = radio_frontend.parse_ptt(ptt)[1]
        if not os.path.exists(port):
            problems.append(f"ptt {ptt}: no serial port {port} (ls /dev/serial/by-id lists "
                            "the connected ones)")
    address = radio.get("air_publish") or ""
    if address.startswith("ipc://"):
        directory = os.path.dirname(os.path.abspath(address[len("ipc://"):]))
        if not os.path.isdir(directory):
            problems.append(f"air_publish {address}: no directory {directory} (create it: "
                            f"mkdir -p {directory})")
    return problems


def read_secret(path):
    """The first line of `path`, stripped (OSError when it cannot be read)."""
    with open(path) as f:
        return f.readline().strip()


def xmpp_settings(a, section, problems):
    """The XMPP bridge beside the node, from --xmpp* over the YAML `xmpp` section, or
    None; peers and options checked by the kernel, the secret read from its file
    (nothing contacted)."""
    from gnuradio.hfstack.pep import parse_endpoint, proxy_error
    from gnuradio.hfstack.xmpp import bridge_error, bridge_options, parse_peers
    if section is None and not a.xmpp:
        named = [n for n in ("component", "secret_file", "local_domain", "peer", "transport",
                             "options", "retry") if getattr(a, "xmpp_" + n) is not None]
        if named:
            problems.append(f"--xmpp-{named[0].replace('_', '-')} needs --xmpp")
        return None
    section = section or {}
    if a.pair or a.demo:
        problems.append("--xmpp runs beside one node: not with --pair or --demo")
    options = section.get("options") or ""
    if isinstance(options, dict):
        options = ";".join(f"{k}={str(v).lower() if isinstance(v, bool) else v}"
                           for k, v in options.items())
    x = {"component": str(first(a.xmpp_component, section.get("component"), "127.0.0.1:5347")),
         "secret_file": first(a.xmpp_secret_file, section.get("secret_file")),
         "local_domains": list(a.xmpp_local_domain or section.get("local_domains") or []),
         "peers": list(a.xmpp_peer or section.get("peers") or []),
         "transport": str(first(a.xmpp_transport, section.get("transport"), "x2x-slep")),
         "options": ";".join(o for o in (str(options), a.xmpp_options or "") if o),
         "retry": float(first(a.xmpp_retry, section.get("retry"), 5.0))}
    try:
        parse_endpoint(x["component"], "--xmpp-component")
    except proxy_error as e:
        problems.append(f"XMPP bridge: {e}")
    if x["retry"] <= 0:
        problems.append("--xmpp-retry must be > 0")
    if not x["secret_file"]:
        problems.append("--xmpp needs --xmpp-secret-file (the component secret, first line)")
    else:
        # Read here to check it, and again when the bridge starts: the settings are
        # written to the statistics, the secret never.
        try:
            if not read_secret(x["secret_file"]):
                problems.append(f"--xmpp-secret-file {x['secret_file']}: the first line is empty")
        except OSError as e:
            problems.append(f"--xmpp-secret-file: {e.strerror}: {x['secret_file']}")
    try:
        bridge_options(x["options"], x["transport"], x["local_domains"], parse_peers(x["peers"]))
    except bridge_error as e:
        problems.append(f"XMPP bridge: {e} (--xmpp-local-domain, --xmpp-peer, --xmpp-options)")
    return x
