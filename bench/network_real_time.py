#!/usr/bin/python3
#
# Copyright 2026 gr-hfstack authors.
#
# SPDX-License-Identifier: GPL-3.0-or-later
"""`hfstack-sim network` on real processes: N `hfstack-node --kind emulator` processes
(one per station, addresses 0.0.0.1 .. 0.0.0.N) whose emulated modems share one channel
over ZeroMQ ipc:// files (each publishes its bursts and subscribes to every other's),
driven over their SIS servers by the flows of the simulator's presets or traffic file
(the same options: --nodes, --preset, --traffic, --bytes, --messages, --chat, --mode,
--duration, --chat-timeout, --seed, --node-option, --snr/--profile/--ber), run in real time at
--time-scale protocol seconds per real second. Each flow is served as
traffic/network_scenario.h serves it (bulk: 2048-byte ARQ U_PDUs keeping the node's
queue supplied, DATA_FLOW_OFF respected; chat: one 100-byte message at a time, answered
with as many bytes; broadcast: non-ARQ U_PDUs every interval), and the output has the
simulator's rows and summary (--json, --csv, tables); times are protocol seconds.

--compare also runs the same configuration in virtual time (the simulator) and prints
both summaries with the emulated/virtual ratios of the aggregate and of the median
latency of every flow. --timeline and --plot write the bursts the nodes sent, from
their captures (--pcap), as the simulator's do; the summary's occupancy comes from
them, a node's collisions from its modem emulator's counters. Per-path settings (hidden
pairs, a traffic file's "paths") and power cycles have no counterpart on the emulated
channel and are refused.

    PYTHONPATH=build/test_modules nice -n 10 timeout 600 /usr/bin/python3 \\
        bench/network_real_time.py --nodes 4 --preset hub-spoke --mode 2400S \\
        --duration 1200 --time-scale 10 --compare [--json FILE]
"""

import argparse
import heapq
import json
import os
import selectors
import shutil
import socket
import struct
import subprocess
import sys
import tempfile
import time

from gnuradio.hfstack import network_run, sim
from gnuradio.hfstack import traffic_report as tr
from gnuradio.hfstack.hfstack_python import dl
from gnuradio.hfstack.testbed import stop_processes

NODE = [sys.executable, "-m", "gnuradio.hfstack.apps.node"]
STATION_SAP = 13
HEADER = 9
DATA, CHAT_ASK, CHAT_ANSWER = 1, 2, 3
# U_PDUs handed over before reading what the node said (its DATA_FLOW_OFF), as the
# simulator's client hands over at most this many at one instant.
PUMP_BATCH = 64
START_S = 60
# A node's subscriber that connected before the publisher it listens to was bound
# retries every 100 ms (ZeroMQ's reconnect interval); bursts published before it has
# joined are never heard. The clock starts once every retry has had time to succeed.
AIR_JOIN_S = 0.5
T = dl.sis_type
FILLER = bytes((i * 7) & 0xFF for i in range(65536))


def percentile(values, p):
    """Nearest rank, as network_scenario.cc."""
    if not values:
        return None
    v = sorted(values)
    rank = max(1, -(-int(p * len(v) * 1000000) // 1000000))
    return v[min(len(v), rank) - 1]


def jain(x):
    squares = sum(v * v for v in x)
    return min(1.0, sum(x) ** 2 / (len(x) * squares)) if squares > 0 else 1.0


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class flow:
    def __init__(self, spec):
        self.spec = spec
        self.kind = ("bulk", "chat", "broadcast")[int(spec.kind)]
        self.sent_at, self.bytes_sent, self.all_sent = [], 0, False
        self.seen = {}
        self.delivered = self.bytes_delivered = self.duplicates = 0
        self.first_delivery_at = None
        self.latencies, self.round_trips = [], []
        self.outstanding, self.lost = False, 0


class station:
    """One node process and the SIS connection of its flows."""

    def __init__(self, index, port, process):
        self.index, self.port, self.process = index, port, process
        self.sock = None
        self.reassembler = dl.sis_reassembler()
        self.bound = self.flow_off = False
        # A keep-alive sent after a batch, not yet answered: the node has not read the
        # batch yet, so its DATA_FLOW_OFF may still come.
        self.probing = False
        # DATA_FLOW_ON came while probing: a whole batch once the probe is answered.
        self.batch_due = False
        self.bulk, self.next_bulk = [], 0
        self.rejected = 0


class network:
    def __init__(self, config, args, tmp):
        self.c, self.args, self.tmp = config, args, tmp
        self.scale = args.time_scale
        self.flows = [flow(f) for f in config.flows]
        self.processes, self.stations = [], []
        self.timers, self.timer_seq = [], 0
        self.node_bytes = [0] * config.nodes
        self.sel = selectors.DefaultSelector()
        self.t0 = None

    # --- processes -------------------------------------------------------------------
    def start_nodes(self):
        n = self.c.nodes
        air = [f"ipc://{self.tmp}/air-{k}" for k in range(n)]
        a = self.args
        if a.snr is not None:
            radio = ["--profile", a.profile or "awgn", "--snr-db", repr(a.snr)]
        else:
            radio = ["--profile", ""]
        options = ";".join(o for o in (self.c.node_options,
                                       "supervision.keep_alive_interval_s=36000") if o)
        for k in range(n):
            port = free_port()
            log = open(os.path.join(self.tmp, f"node-{k}.log"), "w")
            cmd = [*NODE, "--address", f"0.0.0.{k + 1}", "--mode", self.c.mode,
                   "--kind", "emulator", *radio, "--ber", repr(a.ber),
                   "--time-scale", repr(self.scale), "--seed", str(a.seed + k),
                   "--sis-port", str(port), "--stats-interval", "0", "--options", options,
                   "--pcap", os.path.join(self.tmp, f"node-{k}.pcap"),
                   "--air-publish", air[k],
                   "--air-subscribe", " ".join(air[j] for j in range(n) if j != k)]
            p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=log, text=True,
                                 stdin=subprocess.DEVNULL, env=dict(os.environ, HFSTACK_STATE_DIR="none"))
            self.processes.append(p)
            self.stations.append(station(k, port, p))
        for s in self.stations:
            header = json.loads(s.process.stdout.readline() or "{}")
            if header.get("type") != "header":
                raise RuntimeError(f"node {s.index} did not start: "
                                   f"{open(os.path.join(self.tmp, f'node-{s.index}.log')).read()[-2000:]}")
        time.sleep(AIR_JOIN_S)
        for s in self.stations:
            deadline = time.monotonic() + START_S
            while True:
                try:
                    s.sock = socket.create_connection(("127.0.0.1", s.port), timeout=5)
                    break
                except OSError:
                    if time.monotonic() > deadline:
                        raise RuntimeError(f"node {s.index}'s SIS server at {s.port} never answered")
                    time.sleep(0.1)  # the node is still opening its server; bounded
            s.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            self.sel.register(s.sock, selectors.EVENT_READ, s)
        for f_index, f in enumerate(self.flows):
            if f.kind == "bulk":
                self.stations[f.spec.from_node].bulk.append(f_index)

    def stop_nodes(self):
        """SIGTERM; each node's last statistics line."""
        for s in self.stations:
            if s.sock:
                s.sock.close()
        last = []
        for s in self.stations:
            if s.process.poll() is None:
                s.process.terminate()
            out = s.process.communicate(timeout=60)[0]
            with open(os.path.join(self.tmp, f"node-{s.index}.out"), "w") as f:
                f.write(out)  # the node's events and statistics, for tracing a run
            lines = [json.loads(x) for x in out.splitlines() if '"type": "stats"' in x]
            last.append(lines[-1] if lines else {})
        return last

    # --- time ------------------------------------------------------------------------
    def now(self):
        return (time.monotonic() - self.t0) * self.scale

    def call_at(self, t, fn):
        self.timer_seq += 1
        heapq.heappush(self.timers, (t, self.timer_seq, fn))

    # --- SIS -------------------------------------------------------------------------
    def send(self, s, primitive):
        s.sock.sendall(dl.encode_sis(primitive))

    def unidata(self, f_index, kind, seq, size):
        f = self.flows[f_index]
        u = dl.sis_primitive()
        u.type = T.unidata_request
        u.priority = 7
        bcast = f.kind == "broadcast"
        to = f.spec.from_node if kind == CHAT_ANSWER else f.spec.to_node
        u.destination = dl.sis_address(0xFFFFFFFF if bcast else to + 1, 7)
        u.destination_sap = STATION_SAP
        u.service_type.tx_mode = dl.sis_tx_mode.non_arq if bcast else dl.sis_tx_mode.arq
        # The simulator's filler, byte i = seq * 131 + i * 7 (mod 256), by table.
        shift = bytes((x + seq * 131) & 0xFF for x in range(256))
        u.payload = (b"NW" + bytes([kind]) + struct.pack(">HI", f_index, seq) +
                     FILLER[HEADER:size].translate(shift))
        return u

    def hand_over(self, f_index, kind, seq, size):
        f = self.flows[f_index]
        node = f.spec.to_node if kind == CHAT_ANSWER else f.spec.from_node
        if kind != CHAT_ANSWER:
            f.sent_at.append(self.now())
            f.bytes_sent += size
        self.send(self.stations[node], self.unidata(f_index, kind, seq, size))

    def pump(self, s, batch=PUMP_BATCH, probe=True):
        """Bulk: up to `batch` U_PDUs, the node's bulk flows in turn, then (probe) a
        keep-alive whose answer says the node has read them; the loop then goes on one
        U_PDU at a time. The simulator's client does the same: a batch handed over
        within one event, before the node's DATA_FLOW_OFF can be seen, then one U_PDU
        at a time, each seeing the node's answer."""
        if not s.bound or s.flow_off or s.probing or not s.bulk:
            return
        now = self.now()
        for _ in range(batch):
            if s.flow_off:
                return
            order = [s.bulk[(s.next_bulk + k) % len(s.bulk)] for k in range(len(s.bulk))]
            ready = [i for i in order if not self.flows[i].all_sent and
                     self.flows[i].spec.start_s <= now]
            if not ready:
                return
            i = ready[0]
            s.next_bulk = (s.bulk.index(i) + 1) % len(s.bulk)
            f = self.flows[i]
            left = f.spec.bytes - f.bytes_sent if f.spec.bytes else f.spec.message_bytes
            self.hand_over(i, DATA, len(f.sent_at), max(min(f.spec.message_bytes, left), HEADER))
            if f.spec.bytes and f.bytes_sent >= f.spec.bytes:
                f.all_sent = True
        if probe:
            s.probing = True
            self.send(s, dl.sis_primitive(T.keep_alive))

    def ask(self, f_index):
        f = self.flows[f_index]
        if len(f.sent_at) >= f.spec.messages:
            f.all_sent = True
            return
        seq = len(f.sent_at)
        f.outstanding = True
        self.hand_over(f_index, CHAT_ASK, seq, f.spec.message_bytes)

        def timeout():
            if f.outstanding and len(f.sent_at) == seq + 1:
                f.outstanding = False
                f.lost += 1
                self.ask(f_index)
        self.call_at(self.now() + self.c.chat_timeout_s, timeout)

    def broadcast(self, f_index):
        f = self.flows[f_index]
        self.hand_over(f_index, DATA, len(f.sent_at), f.spec.message_bytes)
        if len(f.sent_at) < f.spec.messages:
            self.call_at(self.now() + f.spec.interval_s, lambda: self.broadcast(f_index))
        else:
            f.all_sent = True

    def start_flows(self, s):
        """Timers of the station's flows that start later; bulk is pumped by the
        caller."""
        for k, f in enumerate(self.flows):
            if f.spec.from_node != s.index:
                continue
            if f.kind == "bulk" and f.spec.start_s > self.now():
                self.call_at(f.spec.start_s, lambda s=s: self.pump(s, 1))
            elif f.kind == "chat":
                self.call_at(f.spec.start_s, lambda k=k: self.ask(k))
            elif f.kind == "broadcast":
                self.call_at(f.spec.start_s, lambda k=k: self.broadcast(k))

    def received(self, s, p):
        b = bytes(p.payload)
        if len(b) < HEADER or b[:2] != b"NW":
            return
        f_index, seq = struct.unpack(">HI", b[3:9])
        if f_index >= len(self.flows):
            return
        f, now = self.flows[f_index], self.now()
        if b[2] == CHAT_ANSWER:
            if f.outstanding and seq + 1 == len(f.sent_at):
                f.outstanding = False
                f.round_trips.append(now - f.sent_at[seq])
                self.call_at(now + f.spec.interval_s, lambda: self.ask(f_index))
            return
        if seq >= len(f.sent_at):
            return
        seen = f.seen.setdefault(s.index, set())
        if seq in seen:
            f.duplicates += 1
            return
        seen.add(seq)
        f.delivered += 1
        f.bytes_delivered += len(b)
        self.node_bytes[s.index] += len(b)
        f.first_delivery_at = now if f.first_delivery_at is None else min(f.first_delivery_at, now)
        f.latencies.append(now - f.sent_at[seq])
        if b[2] == CHAT_ASK:
            self.hand_over(f_index, CHAT_ANSWER, seq, len(b))

    def read(self, s):
        data = s.sock.recv(1 << 16)
        if not data:
            raise RuntimeError(f"node {s.index} closed its SIS connection")
        return s.reassembler.push(data)

    def on_primitive(self, s, p):
        if p.type == T.bind_accepted:
            if not s.bound:
                s.bound = True
                self.start_flows(s)
                self.pump(s)
        elif p.type in (T.bind_rejected, T.unbind_indication):
            raise RuntimeError(f"node {s.index} refused its client")
        elif p.type == T.keep_alive:
            if s.probing:
                s.probing = False  # the answer: the node has read the batch
                batch = PUMP_BATCH if s.batch_due else 1
                s.batch_due = False
                self.pump(s, batch)
            else:
                self.send(s, p)
        elif p.type == T.data_flow_off:
            s.flow_off = True
        elif p.type == T.data_flow_on:
            s.flow_off = False
            # A batch, as the simulator's client hands over on DATA_FLOW_ON; after the
            # keep-alive's answer if one is outstanding.
            s.batch_due = s.probing
            self.pump(s)
        elif p.type in (T.unidata_indication, T.expedited_unidata_indication):
            self.received(s, p)
        elif p.type == T.unidata_request_rejected:
            s.rejected += 1

    # --- the run ---------------------------------------------------------------------
    def finished(self):
        for f in self.flows:
            if f.kind == "bulk" and (not f.spec.bytes or not f.all_sent or
                                     f.delivered < len(f.sent_at)):
                return False
            if f.kind != "bulk" and not f.all_sent:
                return False
        return True

    def run(self):
        """Binds every station's client, then starts the clock and every flow at once
        (the simulator binds and starts them all at its time zero)."""
        for s in self.stations:
            b = dl.sis_primitive()
            b.type = T.bind_request
            b.sap = STATION_SAP
            b.service_type.tx_mode = dl.sis_tx_mode.arq
            self.send(s, b)
        deadline = time.monotonic() + START_S
        waiting = set(self.stations)
        while waiting:
            if time.monotonic() > deadline:
                raise RuntimeError(f"nodes {sorted(s.index for s in waiting)} did not accept their client")
            for key, _ in self.sel.select(1.0):
                s = key.data
                for p in self.read(s):
                    if p.type == T.bind_accepted:
                        waiting.discard(s)
                    else:
                        self.on_primitive(s, p)
        self.t0, self.wall0 = time.monotonic(), time.time()
        for s in self.stations:
            s.bound = True
        # Every station's first U_PDU before any station's second: the simulator starts
        # all flows at one instant, and stations whose first link requests are a
        # carrier-detect time apart no longer collide as they do there. Handing over a
        # whole batch took a few real milliseconds per station, which times the time
        # scale (and the machine's load) was enough to part the runs from the start.
        for s in self.stations:
            self.pump(s, 1, probe=False)
        for s in self.stations:
            self.pump(s, PUMP_BATCH - 1)
            self.start_flows(s)
        end = self.c.duration_s
        while True:
            now = self.now()
            if now >= end or self.finished():
                break
            for s in self.stations:
                if s.process.poll() is not None:
                    raise RuntimeError(f"node {s.index} exited with status {s.process.returncode}")
            wake = min(end, self.timers[0][0] if self.timers else end)
            timeout = max(0.0, min(1.0, (wake - now) / self.scale))
            for key, _ in self.sel.select(timeout):
                s = key.data
                for p in self.read(s):
                    self.on_primitive(s, p)
            while self.timers and self.timers[0][0] <= self.now():
                heapq.heappop(self.timers)[2]()
        return self.now()

    def result(self, t, last_stats, bursts):
        flows, bulk_bps, all_bytes = [], [], 0
        for i, f in enumerate(self.flows):
            span = t - f.spec.start_s
            bps = f.bytes_delivered * 8 / span if span > 0 else 0
            flows.append({
                "row": "flow", "flow": i, "kind": f.kind, "from": f.spec.from_node,
                "to": None if f.kind == "broadcast" else f.spec.to_node,
                "sent": len(f.sent_at), "delivered": f.delivered,
                "bytes_delivered": f.bytes_delivered, "duplicates": f.duplicates,
                "throughput_bps": round(bps, 1),
                "first_delivery_s": (None if f.first_delivery_at is None else
                                     round(f.first_delivery_at - f.spec.start_s, 3)),
                "latency_p50_s": percentile(f.latencies, 0.5),
                "latency_p90_s": percentile(f.latencies, 0.9),
                "latency_p99_s": percentile(f.latencies, 0.99),
                "round_trip_p50_s": percentile(f.round_trips, 0.5),
                "round_trip_p90_s": percentile(f.round_trips, 0.9),
                "round_trips": len(f.round_trips),
                "round_trips_lost": f.lost,
            })
            for key in ("latency_p50_s", "latency_p90_s", "latency_p99_s", "round_trip_p50_s",
                        "round_trip_p90_s"):
                if flows[-1][key] is not None:
                    flows[-1][key] = round(flows[-1][key], 3)
            all_bytes += f.bytes_delivered
            if f.kind == "bulk":
                bulk_bps.append(bps)
        nodes = []
        for k, st in enumerate(last_stats):
            radio = st.get("radio", {}).get("emulator", {})
            air = radio.get("air_time_s", 0.0)
            nodes.append({
                "row": "node", "node": k, "bytes_delivered": self.node_bytes[k],
                "link_setups": st.get("link_setups"), "link_failures": st.get("link_failures"),
                "transmissions": radio.get("transmissions"), "air_time_s": round(air, 3),
                "occupancy": round(air / t, 4) if t > 0 else 0,
                "collisions": radio.get("collisions"),
            })
        summary = {
            "end_time_s": round(t, 3), "completed": self.finished(),
            "aggregate_bps": all_bytes * 8 / t if t > 0 else 0,
            "occupancy": occupancy(bursts, t), "jain_bulk": jain(bulk_bps),
            "worst_bulk_share": (min(bulk_bps) / sum(bulk_bps) if bulk_bps and sum(bulk_bps) > 0
                                 else 0),
            "collisions": sum(n["collisions"] or 0 for n in nodes),
            "transmissions": sum(n["transmissions"] or 0 for n in nodes),
            "rejected": sum(s.rejected for s in self.stations),
        }
        return flows, nodes, summary


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter,
                                epilog=__doc__.split("\n\n", 1)[1])
    network_run.add_options(p)
    g = p.add_argument_group("real time")
    g.add_argument("--time-scale", type=float, default=10.0,
                   help="protocol seconds per real second (default 10)")
    g.add_argument("--compare", action="store_true",
                   help="also run the simulator on the same configuration and compare")
    a = p.parse_args(argv)
    if a.hidden or a.power_off:
        p.error("--hidden and --power-off have no counterpart on the emulated channel")
    if not a.time_scale > 0:
        p.error("--time-scale must be > 0")
    return a


def virtual(args):
    c = network_run.config_from(args)
    r = sim.run_network(c)
    return network_run.flow_rows(r), network_run.node_rows(r), network_run.summary(r), r


def occupancy(bursts, t):
    """Time some node was on the air (the union of the bursts) / run time."""
    on_air, until = 0.0, 0.0
    for b in bursts:
        start, end = max(b["start_s"], 0.0), min(b["end_s"], t)
        on_air += max(0.0, end - max(start, until))
        until = max(until, end)
    return min(on_air, t) / t if t > 0 else 0


def read_pcap(path):
    """(timestamp s, D_PDU bytes) of every record of a capture."""
    with open(path, "rb") as f:
        data = f.read()
    at, records = 24, []
    while at + 16 <= len(data):
        sec, usec, length, _ = struct.unpack("<IIII", data[at:at + 16])
        records.append((sec + usec / 1e6, data[at + 16:at + 16 + length]))
        at += 16 + length
    return records


def timeline(net):
    """Every burst the nodes sent, from their captures, as `hfstack-sim network
    --timeline` writes it: the D_PDUs a node sent at one instant are one burst, which
    went to the node most of their bytes were for."""
    rows = []
    for k in range(net.c.nodes):
        bursts = {}
        for stamp, b in read_pcap(os.path.join(net.tmp, f"node-{k}.pcap")):
            try:
                d = dl.decode_dpdu(b)
            except ValueError:
                continue
            if d.source != k + 1:
                continue  # received
            bytes_to = bursts.setdefault(stamp, {})
            bytes_to[d.destination] = bytes_to.get(d.destination, 0) + len(b)
        for stamp, bytes_to in sorted(bursts.items()):
            start = (stamp - net.wall0) * net.scale
            size = sum(bytes_to.values())
            # As the simulator counts: the station most bytes went to, the lowest of
            # those that tie; none when all went to a group or the broadcast.
            stations = [a for a in bytes_to if 1 <= a <= net.c.nodes]
            to = min(stations, key=lambda a: (-bytes_to[a], a)) if stations else None
            rows.append({"node": k, "start_s": round(start, 3),
                         "end_s": round(start + sim.air_time(net.c.mode, size), 3),
                         "to": None if to is None else to - 1, "bytes": size})
    return sorted(rows, key=lambda r: r["start_s"])


# Two bursts are the same event when they come from one node to one node with the same
# bytes this close in time (protocol seconds): the real run's times are its captures',
# a few real milliseconds (times the time scale) after the node decided.
SAME_BURST_S = 0.5


def first_parting(real, virtual_rows, context=4):
    """The first burst at which the real timeline leaves the virtual one (both in start
    order; bursts that start within SAME_BURST_S of each other match in any order, as
    the first instant's link requests do): its index, the bursts around it on each
    side, and how far the matched real bursts before it were from the virtual ones
    (the largest difference of their starts). None when every burst of the shorter
    timeline matches."""
    def key(b):
        return b["node"], b["to"], b["bytes"]

    def group(rows, i):
        """Rows from i that start within SAME_BURST_S of rows[i]."""
        j = i
        while j < len(rows) and rows[j]["start_s"] - rows[i]["start_s"] <= SAME_BURST_S:
            j += 1
        return rows[i:j]

    lag, i, n = 0.0, 0, min(len(real), len(virtual_rows))
    while i < n:
        r, v = group(real, i), group(virtual_rows, i)
        if (len(r) == len(v) and sorted(map(key, r)) == sorted(map(key, v)) and
                abs(r[0]["start_s"] - v[0]["start_s"]) <= SAME_BURST_S):
            lag = max([lag] + [abs(a["start_s"] - b["start_s"]) for a, b in zip(r, v)
                               if key(a) == key(b)])
            i += len(r)
            continue
        if (key(real[i]) == key(virtual_rows[i]) and
                abs(real[i]["start_s"] - virtual_rows[i]["start_s"]) <= SAME_BURST_S):
            lag = max(lag, abs(real[i]["start_s"] - virtual_rows[i]["start_s"]))
            i += 1  # the same burst; a neighbour fell on the other side of the window
            continue
        around = slice(max(0, i - context), i + context)
        return {"burst": i, "start_s": min(real[i]["start_s"], virtual_rows[i]["start_s"]),
                "lag_before_s": round(lag, 3), "real": real[around],
                "virtual": virtual_rows[around]}
    return None


def main(argv=None):
    args = parse_args(sys.argv[1:] if argv is None else argv)
    try:
        c = network_run.config_from(args)
    except ValueError as e:
        print(f"network_real_time: {e}", file=sys.stderr)
        return 2
    if c.paths or c.power_cycles:
        print("network_real_time: per-path settings and power cycles have no counterpart "
              "on the emulated channel", file=sys.stderr)
        return 2
    tmp = tempfile.mkdtemp(prefix="hfstack-netreal-")
    net = network(c, args, tmp)
    try:
        net.start_nodes()
        t = net.run()
        stats = net.stop_nodes()
        bursts = timeline(net)
        flows, nodes, summary = net.result(t, stats, bursts)
    finally:
        stop_processes(net.processes)
        if os.environ.get("KEEP_NETREAL_DIR"):
            print(f"kept {tmp}", file=sys.stderr)
        else:
            shutil.rmtree(tmp, ignore_errors=True)
    config = {"nodes": c.nodes, "mode": c.mode, "seed": c.seed, "duration_s": c.duration_s,
              "preset": None if args.traffic else args.preset, "traffic": args.traffic,
              "time_scale": args.time_scale, "kind": "emulator processes"}
    doc = {"config": config, "summary": summary, "flows": flows, "nodes": nodes}
    if args.compare:
        vflows, vnodes, vsummary, vresult = virtual(args)
        ratio = (summary["aggregate_bps"] / vsummary["aggregate_bps"]
                 if vsummary["aggregate_bps"] else None)
        vbursts = network_run.timeline_rows(vresult)
        doc["virtual"] = {"summary": vsummary, "flows": vflows, "nodes": vnodes,
                          "timeline": vbursts}
        doc["timeline"] = bursts
        doc["comparison"] = {
            "aggregate_ratio": ratio,
            "latency_p50_ratio": [
                (r["latency_p50_s"] / v["latency_p50_s"]
                 if r["latency_p50_s"] and v["latency_p50_s"] else None)
                for r, v in zip(flows, vflows)],
            "bursts": [len(bursts), len(vbursts)],
            "first_parting": first_parting(bursts, vbursts)}
    if not args.quiet and "-" not in (args.csv, args.json):
        print(f"{c.nodes} emulator processes, {c.mode}, {len(c.flows)} flows, time scale "
              f"{args.time_scale:g}")
        print(tr.format_table(flows), end="")
        print(tr.format_table(nodes), end="")
        print(tr.format_table([summary]), end="")
        if args.compare:
            print("virtual time (hfstack-sim network):")
            print(tr.format_table(doc["virtual"]["flows"]), end="")
            print(tr.format_table([doc["virtual"]["summary"]]), end="")
            parting = doc["comparison"]["first_parting"]
            print(json.dumps({k: v for k, v in doc["comparison"].items()
                              if k != "first_parting"}))
            if parting is None:
                print("the timelines agree burst by burst")
            else:
                print(f"the timelines part at burst {parting['burst']}, "
                      f"{parting['start_s']:.3f} s (real bursts before it within "
                      f"{parting['lag_before_s']:.3f} s of the virtual ones); real, then virtual:")
                print(tr.format_table(parting["real"]), end="")
                print(tr.format_table(parting["virtual"]), end="")
    if args.csv:
        tr.write_csv(flows + nodes, args.csv)
    if args.timeline:
        tr.write_csv(bursts, args.timeline)
    if args.plot:
        network_run.plot_timeline({"timeline": bursts}, c.nodes, args.plot,
                                  f"{c.nodes} emulator processes, {c.mode}: who holds the channel")
    if args.json:
        tr.write_json(doc, args.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
