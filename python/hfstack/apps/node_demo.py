#
# Copyright 2026 gr-hfstack authors.
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""hfstack-node --demo: two nodes in one process (node.py builds them), a SIS client
on each; node A pings node B, then sends --bytes with ARQ, with progress while it runs
and a summary (optionally JSON, with a timeline) at the end."""

import json
import socket
import sys
import threading
import time

import numpy as np
from gnuradio import hfstack
from gnuradio.hfstack import modes
from gnuradio.hfstack import radio as radio_frontend
from gnuradio.hfstack.sis.client import bind_request, sis_client, unidata_request
from gnuradio.hfstack.traffic_report import progress_bar

from .node_config import resource_error

T = hfstack.dl.sis_type
DEMO_SAP = 14  # a SAP no Annex F client uses


def counted(n, thing, things=None):
    """'1 transmission', '3 transmissions'."""
    return f"{n} {thing if n == 1 else things or thing + 's'}"


class interrupted(Exception):
    """SIGINT or SIGTERM during the demo."""


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
        # Node A's transmissions since the transfer began, as the summary counts them.
        c, c0 = A.counters(), before[A.address]
        sent = int(c["transmissions"] - c0["transmissions"])
        line = (f"{received:6d} of {len(data)} bytes, {t:6.1f} s, "
                f"{8 * received / t if t > 0 else 0:5.0f} bit/s; node {A.address}: "
                f"{counted(sent, 'transmission')}, "
                f"{c['air_time_s'] - c0['air_time_s']:.0f} s on air")
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
    print("Summary (since the transfer began)")
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
        print(f"  node {st.address}  sent {counted(d['transmissions'], 'transmission')} "
              f"({counted(d['dpdus_sent'], 'D_PDU')}, {d['arq_retransmissions']} retransmitted); "
              f"its modem decoded {counted(heard, 'piece')}{seen}, "
              f"{counted(d['segment_crc_errors'], 'segment')} with CRC errors")
    if s["radio"]["kind"] != "emulator":
        print("  (a modem hands over a transmission in pieces as it decodes them, interleaver "
              "block by block)")
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
