#
# Copyright 2026 gr-hfstack authors.
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""hfstack-sim network: the options, the traffic file and the output of a network run
(N nodes on one simulated channel, traffic/network_scenario.h).

Traffic file (JSON; nodes are numbered 0 .. N-1, node 0 being the hub of the presets):

  {
    "nodes": 4,
    "paths": [
      {"from": 1, "to": 2, "hears": false},
      {"from": 0, "to": 3, "snr": 12, "profile": "poor", "one_way": true}
    ],
    "flows": [
      {"kind": "bulk", "from": 0, "to": 1, "bytes": 100000},
      {"kind": "chat", "from": 2, "to": 3, "messages": 10, "interval": 5},
      {"kind": "broadcast", "from": 0, "messages": 5, "interval": 10}
    ]
  }

"nodes" may be left out (then --nodes). A path entry sets one pair's channel, both ways
unless "one_way": "hears": false (a hidden-terminal pair), "snr" (dB), "profile" (needs
"snr"), "ber", "propagation" (s). A flow has "kind" (bulk, chat, broadcast), "from",
"to" (not for broadcast), and optionally "bytes" (bulk; 0 = until the run ends),
"message_bytes", "messages", "interval" (s), "start" (s), "expedited" (true: STANAG
5066 expedited data), "via" (chat: the node whose client relays every message and
answer, as a router through a hub does). An optional "power" list,
e.g. [{"node": 2, "off": 120, "on": 300}], powers nodes off and on ("on" may be left
out: the node stays off), as --power-off does."""

import json
import math

from gnuradio.hfstack import modes
from gnuradio.hfstack import sim
from gnuradio.hfstack import traffic_report as tr

PATH_KEYS = {"from", "to", "one_way", "hears", "snr", "profile", "ber", "propagation"}
FLOW_KEYS = {"kind", "from", "to", "bytes", "message_bytes", "messages", "interval", "start",
             "expedited", "via"}
POWER_KEYS = {"node", "off", "on", "journal"}
FILE_KEYS = {"nodes", "paths", "flows", "power"}


def add_options(p):
    g = p.add_argument_group("network")
    g.add_argument("--nodes", type=int, default=4,
                   help=f"nodes on the channel, 2..{sim.max_network_nodes()} (default 4)")
    g.add_argument("--preset", choices=sim.network_preset_names() + ["none"],
                   default="hub-spoke",
                   help="traffic: hub-spoke (node 0 and every other node, bulk both ways), "
                        "spokes-to-hub (bulk from every other node to node 0), "
                        "mesh (chat between every pair), bulk (one bulk transfer beside "
                        "chat), broadcast (non-ARQ to all beside acknowledged unicast), "
                        "none (only --chat); default hub-spoke")
    g.add_argument("--traffic", metavar="FILE.json",
                   help="traffic and per-pair paths from a file instead of --preset "
                        "(format: docs/networks.md)")
    g.add_argument("--bytes", type=tr.byte_count, default=0,
                   help="preset: bytes of every bulk flow (default 0: until --duration)")
    g.add_argument("--messages", type=int, default=10,
                   help="preset: messages of every chat and broadcast flow (default 10)")
    g.add_argument("--chat", metavar="A-B", action="append", default=[],
                   help="add a chat flow: node A asks, node B answers, --messages messages "
                        "of 100 bytes, one at a time (repeatable)")
    g.add_argument("--hidden", metavar="A-B,...",
                   help="pairs of nodes that cannot hear each other, e.g. 1-2,3-4")
    g.add_argument("--mode", default="2400S", help="STANAG 4539 mode (default 2400S)")
    g.add_argument("--duration", type=tr.positive_float, default=600.0,
                   help="virtual seconds to run at most (default 600)")
    g.add_argument("--chat-timeout", type=tr.positive_float, default=900.0,
                   help="a chat message without an answer this long is lost, s (default 900)")
    g.add_argument("--seed", type=int, default=1, help="random seed (default 1)")
    g.add_argument("--node-option", action="append", default=[], metavar="NAME=VALUE",
                   help="node option for every node (repeatable)")
    g.add_argument("--power-off", action="append", default=[], metavar="NODE@T[:T_ON]",
                   help="node NODE loses power at T s (radio silent, all its state and "
                        "the messages it is handed meanwhile lost) and, with T_ON, starts "
                        "again then with a new incarnation (repeatable)")
    g = p.add_argument_group("channel (every pair a --traffic file does not set)")
    g.add_argument("--ber", type=float, default=0.0, help="independent bit errors (default 0)")
    g.add_argument("--snr", type=float, default=None, help="mean SNR in 3 kHz, dB")
    g.add_argument("--profile", metavar="NAME",
                   help="fading: " + ", ".join(sim.fading_profile_names()) + " (needs --snr)")
    g = p.add_argument_group("output")
    g.add_argument("--csv", metavar="FILE",
                   help="write the flow and node rows as CSV ('-' = stdout)")
    g.add_argument("--json", metavar="FILE", help="write everything as JSON ('-' = stdout)")
    g.add_argument("--timeline", metavar="FILE",
                   help="write every burst (node, start_s, end_s, to, bytes) as CSV "
                        "('-' = stdout): who held the channel when")
    g.add_argument("--plot", metavar="FILE.png",
                   help="draw the timeline of who holds the channel (needs matplotlib)")
    g.add_argument("--quiet", action="store_true", help="no tables")


def channel(snr=None, profile=None, ber=0.0, propagation=0.0, where="--snr"):
    ch = sim.channel_config()
    ch.ber = ber
    ch.propagation_s = propagation
    if profile is not None and snr is None:
        raise ValueError(f"{where}: a fading profile needs an SNR")
    if snr is not None:
        if not math.isfinite(snr):
            raise ValueError(f"{where}: the SNR must be a finite number of dB")
        ch.snr_db = snr
        ch.fading_profile = profile or "awgn"
    return ch


def _seconds(value, where, key):
    """value as a float, or a one-line error naming the key (JSON gives any type)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueError(f"{where}: '{key}' must be a number")
    return float(value)


def _entries(doc, key, path):
    entries = doc.get(key, [])
    if not isinstance(entries, list):
        raise ValueError(f"{path}: '{key}' must be a list")
    return entries


def _node(value, where):
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"{where}: a node is a number 0..N-1, not {value!r}")
    if value < 0:
        raise ValueError(f"{where} names node {value}, which does not exist")
    return value


def _unknown(entry, keys, where, required=()):
    if not isinstance(entry, dict):
        raise ValueError(f"{where} must be an object")
    extra = sorted(set(entry) - keys)
    if extra:
        raise ValueError(f"{where}: unknown key '{extra[0]}' (known: {', '.join(sorted(keys))})")
    for key in required:
        if key not in entry:
            raise ValueError(f"{where} needs '{key}'")


def path_from(entry, where):
    _unknown(entry, PATH_KEYS, where, required=("from", "to"))
    p = sim.network_path()
    p.from_node = _node(entry["from"], where)
    p.to_node = _node(entry["to"], where)
    p.both_ways = not entry.get("one_way", False)
    p.hears = bool(entry.get("hears", True))
    if not p.hears:
        said = [k for k in ("snr", "profile", "ber", "propagation") if k in entry]
        if said:
            raise ValueError(f"{where}: 'hears': false contradicts '{said[0]}' "
                             "(a pair that cannot hear has no channel)")
    numbers = {k: _seconds(entry[k], where, k) if k in entry else None
               for k in ("snr", "ber", "propagation")}
    if "profile" in entry and not isinstance(entry["profile"], str):
        raise ValueError(f"{where}: 'profile' must be a fading profile name")
    p.channel = channel(numbers["snr"], entry.get("profile"), numbers["ber"] or 0.0,
                        numbers["propagation"] or 0.0, where)
    return p


def flow_from(entry, where):
    _unknown(entry, FLOW_KEYS, where)
    f = sim.network_flow()
    try:
        f.kind = sim.flow_kind_by_name(str(entry.get("kind", "bulk")))
    except ValueError as e:
        raise ValueError(f"{where}: {e}") from None
    if "from" not in entry:
        raise ValueError(f"{where} needs 'from'")
    f.from_node = _node(entry["from"], where)
    if f.kind != sim.flow_kind.broadcast:
        if "to" not in entry:
            raise ValueError(f"{where} needs 'to'")
        f.to_node = _node(entry["to"], where)
    elif "to" in entry:
        raise ValueError(f"{where}: a broadcast goes to every node, it takes no 'to'")
    if f.kind != sim.flow_kind.bulk:
        f.message_bytes = 100 if f.kind == sim.flow_kind.chat else 512
    for key, attr in (("bytes", "bytes"), ("message_bytes", "message_bytes"),
                      ("messages", "messages")):
        if key in entry:
            v = entry[key]
            if isinstance(v, bool) or not isinstance(v, int) or v < 0:
                raise ValueError(f"{where}: '{key}' must be a whole number >= 0")
            setattr(f, attr, v)
    for key, attr in (("interval", "interval_s"), ("start", "start_s")):
        if key in entry:
            setattr(f, attr, _seconds(entry[key], where, key))
    if "expedited" in entry:
        if not isinstance(entry["expedited"], bool):
            raise ValueError(f"{where}: 'expedited' must be true or false")
        f.expedited = entry["expedited"]
    if "via" in entry:
        if f.kind != sim.flow_kind.chat:
            raise ValueError(f"{where}: only a chat flow is relayed ('via')")
        f.via = _node(entry["via"], where)
    return f


def power_cycle_from(entry, where):
    _unknown(entry, POWER_KEYS, where, required=("node", "off"))
    p = sim.network_power_cycle()
    p.node = _node(entry["node"], where)
    p.off_s = _seconds(entry["off"], where, "off")
    if "on" in entry:
        p.on_s = _seconds(entry["on"], where, "on")
    if "journal" in entry:
        if not isinstance(entry["journal"], bool):
            raise ValueError(f"{where}: 'journal' must be true or false")
        p.journal = entry["journal"]
    return p


def power_cycle_option(text):
    node, sep, times = text.partition("@")
    off, _, on = times.partition(":")
    try:
        if not sep or not node.isdigit():
            raise ValueError
        p = sim.network_power_cycle()
        p.node = int(node)
        p.off_s = float(off)
        if on:
            p.on_s = float(on)
    except ValueError:
        raise ValueError(f"--power-off: '{text}' is not NODE@T or NODE@T:T_ON") from None
    return p


def read_traffic(path):
    """(nodes or None, paths, flows, power cycles) of a traffic file."""
    try:
        with open(path) as f:
            doc = json.load(f)
    except json.JSONDecodeError as e:
        raise ValueError(f"{path}: not JSON ({e.msg}, line {e.lineno})") from None
    _unknown(doc, FILE_KEYS, path)
    nodes = doc.get("nodes")
    if nodes is not None and (isinstance(nodes, bool) or not isinstance(nodes, int)):
        raise ValueError(f"{path}: 'nodes' must be a whole number")
    paths = [path_from(e, f"{path}: path {i}")
             for i, e in enumerate(_entries(doc, "paths", path))]
    flows = [flow_from(e, f"{path}: flow {i}")
             for i, e in enumerate(_entries(doc, "flows", path))]
    if not flows:
        raise ValueError(f"{path}: no flows")
    cycles = [power_cycle_from(e, f"{path}: power {i}")
              for i, e in enumerate(_entries(doc, "power", path))]
    return nodes, paths, flows, cycles


def node_pair(item, option):
    a, sep, b = item.strip().partition("-")
    if not sep or not a.isdigit() or not b.isdigit():
        raise ValueError(f"{option}: '{item}' is not a pair A-B of node numbers")
    return int(a), int(b)


def hidden_pairs(text):
    paths = []
    for item in text.split(","):
        p = sim.network_path()
        p.from_node, p.to_node = node_pair(item, "--hidden")
        p.hears = False
        paths.append(p)
    return paths


def chat_flows(items, messages):
    flows = []
    for item in items:
        f = sim.network_flow()
        f.kind = sim.flow_kind.chat
        f.from_node, f.to_node = node_pair(item, "--chat")
        f.message_bytes = 100
        f.messages = messages
        flows.append(f)
    return flows


def config_from(args):
    problem = "/" not in args.mode and modes.mode_problem(args.mode)
    if problem:
        raise ValueError(f"--mode {args.mode}: {problem}")
    c = sim.network_scenario_config()
    c.mode = args.mode
    c.duration_s = args.duration
    c.chat_timeout_s = args.chat_timeout
    c.seed = args.seed
    c.node_options = ";".join(args.node_option)
    c.channel = channel(args.snr, args.profile, args.ber)
    nodes, paths, cycles = args.nodes, [], []
    if args.traffic:
        file_nodes, paths, flows, cycles = read_traffic(args.traffic)
        nodes = file_nodes if file_nodes is not None else nodes
    c.nodes = nodes
    if not args.traffic:
        flows = ([] if args.preset == "none" else
                 sim.network_preset(args.preset, nodes, args.bytes, args.messages))
    flows = flows + chat_flows(args.chat, args.messages)
    if not flows:
        raise ValueError("no traffic: --preset none needs --chat")
    if args.hidden:
        paths = paths + hidden_pairs(args.hidden)
    c.paths = paths
    c.flows = flows
    c.power_cycles = cycles + [power_cycle_option(t) for t in args.power_off]
    sim.validate_network(c)
    return c


def flow_rows(result):
    rows = []
    for i, f in enumerate(result["flows"]):
        rows.append({
            "row": "flow", "flow": i, "kind": f["kind"], "from": f["from"], "to": f["to"],
            "sent": f["messages_sent"], "delivered": f["messages_delivered"],
            "bytes_delivered": f["bytes_delivered"], "duplicates": f["duplicates"],
            "throughput_bps": round(f["throughput_bps"], 1),
            "first_delivery_s": f["first_delivery_s"],
            "latency_p50_s": f["latency_p50_s"], "latency_p90_s": f["latency_p90_s"],
            "latency_p99_s": f["latency_p99_s"],
            "round_trip_p50_s": f["round_trip_p50_s"],
            "round_trip_p90_s": f["round_trip_p90_s"],
            "round_trips": f["round_trips"],
            "round_trips_lost": f["round_trips_lost"],
        })
    return [{k: tr.nan_to_none(v) for k, v in r.items()} for r in rows]


def node_rows(result):
    return [{
        "row": "node", "node": n["node"], "bytes_delivered": n["bytes_delivered"],
        "link_setups": n["link_setups"], "link_failures": n["link_failures"],
        "transmissions": n["transmissions"], "air_time_s": round(n["air_time_s"], 3),
        "occupancy": round(n["occupancy"], 4), "collisions": n["collisions"],
    } for n in result["nodes"]]


SUMMARY_KEYS = ("end_time_s", "completed", "aggregate_bps", "occupancy", "jain_bulk",
                "worst_bulk_share", "collisions", "transmissions")


def summary(result):
    return {k: result[k] for k in SUMMARY_KEYS}


def timeline_rows(result):
    return [{"node": b["node"], "start_s": round(b["start_s"], 3),
             "end_s": round(b["end_s"], 3), "to": b["to"], "bytes": b["bytes"]}
            for b in result["timeline"]]


def plot_timeline(result, nodes, path, title):
    """One row per node, a bar for each burst it sent, coloured by its receiver."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(12, 1 + 0.35 * nodes))
    colours = plt.get_cmap("tab20")
    for b in result["timeline"]:
        colour = "grey" if b["to"] is None else colours(b["to"] % 20)
        ax.broken_barh([(b["start_s"], b["end_s"] - b["start_s"])], (b["node"] - 0.4, 0.8),
                       facecolors=colour)
    ax.set_yticks(range(nodes))
    ax.set_ylim(-0.6, nodes - 0.4)
    ax.invert_yaxis()
    ax.set_xlabel("virtual time, s (colour: the node the burst went to)")
    ax.set_ylabel("sending node")
    ax.set_title(title)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)


def run(args):
    """Runs the network of args and writes its output; returns the exit status."""
    c = config_from(args)
    result = sim.run_network(c)
    flows, nodes = flow_rows(result), node_rows(result)
    if not args.quiet and "-" not in (args.csv, args.json, args.timeline):
        print(f"{c.nodes} nodes, {c.mode}, {len(c.flows)} flows, seed {c.seed}")
        print(tr.format_table(flows), end="")
        print(tr.format_table(nodes), end="")
        print(tr.format_table([summary(result)]), end="")
    if args.csv:
        tr.write_csv(flows + nodes, args.csv)
    if args.timeline:
        tr.write_csv(timeline_rows(result), args.timeline)
    if args.plot:
        plot_timeline(result, c.nodes, args.plot,
                      f"{c.nodes} nodes, {c.mode}, seed {c.seed}: who holds the channel")
    if args.json:
        doc = {"config": {"nodes": c.nodes, "mode": c.mode, "seed": c.seed,
                          "duration_s": c.duration_s,
                          "preset": None if args.traffic else args.preset,
                          "traffic": args.traffic},
               "summary": summary(result), "flows": flows, "nodes": nodes}
        tr.write_json(doc, args.json)
    return 0
