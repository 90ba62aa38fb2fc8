#!/usr/bin/python3
#
# Copyright 2026 gr-hfstack authors.
#
# SPDX-License-Identifier: GPL-3.0-or-later
"""Section B round trips and throughput in real time, real servers and clients: two Prosody
servers (docs/xmpp.md's configuration, on loopback, in a temporary directory), two
hfstack-node --xmpp processes over emulated modems at time scale 1 (short interleaver,
clear channel, ipc:// air), and a slixmpp client on each server. As the paper measured:
both users log in (their presence crosses), then alice sends a chat message whose body
is a hex dump of random bytes and bob's client answers with one of the same length as
soon as it arrives (after --typing-delay), N times; each round trip is timed at alice's
client. Prints one line per rate and a JSON line at the end; needs Debian's prosody and
python3-slixmpp. Usage:
    PYTHONPATH=build/test_modules nice -n 10 timeout 600 /usr/bin/python3 \\
        bench/xmpp_section_b_real_time.py [--rates 1200,9600] [--round-trips 10] \\
        [--payload 0] [--transport x2x-slep] [--typing-delay 0] [--pcap-dir DIR] \\
        [--throughput [--seconds 300]] [--keep-dir DIR] [--ip-client-options OPTS] \\
        [--congestion-control cubic] [--tcp-window planned] [--tcp-rto-min planned] \\
        [--compact] [--sysctl NAME=VALUE]
--pcap-dir keeps each node's D_PDUs (DIR/node-RATE-N.pcap, Wireshark's link type 237) to
set the bursts beside the simulator's trace.
--transport s2s-ip: no bridge; the two servers federate by standard S2S (TCP port 5269,
dialback, no TLS) over the IP client instead, each in a namespace of the IP test bed at
time scale 1 (the paper's "over IP" rows; needs root), with
TCP set on the HF route as a planner sets it (docs/ip-client.md): cubic, a window of
a minute of air at the rate, and a least retransmission timeout of one and a half times
that (--congestion-control system --tcp-window 0 --tcp-rto-min 0: Linux's own).
With --pcap-dir, s2s-ip keeps in DIR/RATE: each node's D_PDUs (node-a.pcap, node-b.pcap),
the datagrams on each side's TUN device (tun-a.pcap, tun-b.pcap; needs dumpcap, Debian's
tshark), `ss -tin` in both namespaces every 5 s (ss.txt) and both nodes' and IP
clients' counters at the end (counters.json).
--transport s2s-ip-tls: the same with TLS required on S2S and the servers authenticated
by certificates (s2s_secure_auth; made with openssl by the test bed), as a real
deployment runs it.
--throughput: instead of round trips, alice sends --payload-character messages back to
back, keeping as many unanswered as the virtual-time bench keeps waiting at the bridge;
bob's client times their arrivals. The steady figure counts the messages that arrive
after the first and within --seconds of it (the sender then stops): payload bit/s, and
utilisation counting the payload's DEFLATE size as the paper did
(published_scenarios.xmpp_utilisation, as bench/xmpp_section_b.py). Where messages
arrive together (over TLS a record of 8 KiB holds about seven), the line and the JSON
also give the figure counted from the last message of the first such burst, and the
JSON every arrival's time after the first.
"""

import argparse
import asyncio
import contextlib
import json
import os
import random
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

from gnuradio.hfstack import published_scenarios as ps

try:
    import slixmpp
except ImportError:
    slixmpp = None

NODE = [sys.executable, "-m", "gnuradio.hfstack.apps.node"]
DOCS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "docs", "xmpp.md")
SECRET = "hf-component-secret"
NODE_OPTIONS = "data_with_link_request=true"  # as bench/xmpp_section_b.py's nodes
START_S = 60
FIRST_ARRIVAL_S = 300  # --throughput: the first message at bob's client within this


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def accepts(port):
    try:
        socket.create_connection(("127.0.0.1", port), timeout=1).close()
        return True
    except OSError:
        return False


def wait_until(what, condition, seconds, log=None):
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            text = open(log, errors="replace").read()[-2000:] if log and os.path.exists(log) else ""
            raise RuntimeError(f"{what}: not within {seconds} s {text}")
        time.sleep(0.2)  # another process's state, bounded by the deadline


def prosody_config(domain, peer, directory, c2s, component):
    block = re.search(r"```lua\n(.*?)```", open(DOCS).read(), re.S).group(1)
    for key, value in (("DOMAIN", domain), ("PEER_DOMAIN", peer), ("DIR", directory),
                       ("C2S_PORT", str(c2s)), ("COMPONENT_PORT", str(component)),
                       ("SECRET", SECRET)):
        block = block.replace("@" + key + "@", value)
    return block


class bed:
    """Two Prosody servers and two nodes with their bridges, at one rate."""

    def __init__(self, tmp, rate, transport, pcap_dir=None):
        self.tmp, self.processes, self.c2s = tmp, [], {}
        secret_file = os.path.join(tmp, "secret")
        with open(secret_file, "w") as f:
            f.write(SECRET + "\n")
        component = {}
        for domain, peer, user in (("a.example", "b.example", "alice"),
                                   ("b.example", "a.example", "bob")):
            d = os.path.join(tmp, domain)
            os.makedirs(os.path.join(d, "data"))
            self.c2s[domain], component[domain] = free_port(), free_port()
            config = os.path.join(d, "prosody.cfg.lua")
            with open(config, "w") as f:
                f.write(prosody_config(domain, peer, d, self.c2s[domain], component[domain]))
            subprocess.run(["prosodyctl", "--config", config, "register", user, domain, "pw"],
                           check=True, timeout=START_S, capture_output=True)
            self.spawn(["prosody", "--config", config, "-F"], os.path.join(d, "stderr.log"))
            wait_until(f"prosody {domain}", lambda: accepts(self.c2s[domain]), START_S)
        for me, other, local, peer in ((1, 2, "a.example", "b.example"),
                                       (2, 1, "b.example", "a.example")):
            log = os.path.join(tmp, f"node-{me}.log")
            pcap = ["--pcap", os.path.join(pcap_dir, f"node-{rate}-{me}.pcap")] if pcap_dir else []
            self.spawn([*NODE, *pcap, "--address", f"0.0.0.{me}", "--kind", "emulator", "--profile", "",
                        "--data-rate", str(rate), "--interleaver", "short",
                        "--options", NODE_OPTIONS, "--sis-port", str(free_port()),
                        "--stats-interval", "0",
                        "--air-publish", f"ipc://{tmp}/air-{me}",
                        "--air-subscribe", f"ipc://{tmp}/air-{other}",
                        "--xmpp", "--xmpp-component", f"127.0.0.1:{component[local]}",
                        "--xmpp-secret-file", secret_file, "--xmpp-local-domain", local,
                        "--xmpp-local-domain", "conference." + local,
                        "--xmpp-peer", f"{peer}=0.0.0.{other}",
                        "--xmpp-peer", f"conference.{peer}=0.0.0.{other}",
                        "--xmpp-transport", transport, "--log-level", "info"], log)
            for domain in (peer, "conference." + peer):
                wait_until(f"node {me}'s component {domain}",
                           lambda: f"component {domain} accepted" in open(log).read(),
                           START_S, log)

    def spawn(self, args, log):
        with open(log, "a") as out:
            self.processes.append(subprocess.Popen(
                args, stdout=subprocess.DEVNULL, stderr=out, stdin=subprocess.DEVNULL,
                env=dict(os.environ, HFSTACK_STATE_DIR="none")))

    def close(self):
        from gnuradio.hfstack.testbed import stop_processes
        stop_processes(self.processes)


class client(slixmpp.ClientXMPP if slixmpp else object):

    def __init__(self, jid, answer_after=None):
        super().__init__(jid, "pw")
        self.inbox = asyncio.Queue()
        self.online = asyncio.Event()
        self.answer_after = answer_after  # bob: answer every message after this long
        self.add_event_handler("session_start", self.started)
        self.add_event_handler("message", self.on_message)

    async def started(self, _):
        self.send_presence()
        self.online.set()

    def on_message(self, m):
        if m["type"] != "chat" or not m["body"]:
            return
        if self.answer_after is None:
            self.inbox.put_nowait((time.monotonic(), m))
            return
        body, to = m["body"], m["from"]
        self.loop.call_later(self.answer_after,
                             lambda: self.send_message(mto=to, mbody=body[::-1], mtype="chat"))


def hex_dump(n, rng):
    return rng.randbytes((n + 1) // 2).hex()[:n]


async def chat(b, round_trips, payload, typing_delay, seed):
    alice = client("alice@a.example/hf")
    bob = client("bob@b.example/hf", answer_after=typing_delay)
    for c, domain in ((bob, "b.example"), (alice, "a.example")):
        c.connect(address=("127.0.0.1", b.c2s[domain]), force_starttls=False,
                  disable_starttls=True)
        await asyncio.wait_for(c.online.wait(), START_S)
    rng, trips = random.Random(seed), []
    for i in range(round_trips):
        t0 = time.monotonic()
        alice.send_message(mto="bob@b.example", mbody=hex_dump(payload, rng) or "-",
                           mtype="chat")
        try:
            t1, _ = await asyncio.wait_for(alice.inbox.get(), 600)
        except asyncio.TimeoutError:
            trips.append(None)
            continue
        trips.append(t1 - t0)
        print(f"  round trip {i + 1}: {t1 - t0:.1f} s", flush=True)
    await disconnect(alice, bob)
    return trips


async def disconnect(*clients):
    """Each client's stream closed (bounded); what slixmpp leaves running is cancelled
    by asyncio.run (run_chat)."""
    for c in clients:
        try:
            await asyncio.wait_for(c.disconnect(), 10)
        except (asyncio.TimeoutError, OSError):
            pass


def throughput_depth(payload):
    """Messages kept unanswered: as many as the bridge takes waiting (its max_queue, and
    three quarters of max_queue_bytes for the payload and its markup), as the
    virtual-time bench keeps its queue full."""
    return max(8, min(ps.XMPP_BRIDGE_MAX_QUEUE,
                      ps.XMPP_BRIDGE_MAX_QUEUE_BYTES * 3 // 4 // (payload + 256)))


async def throughput(b, payload, seconds, seed):
    """alice sends `payload`-character messages, at most throughput_depth() of them not
    yet at bob's client, from the first arrival on for `seconds`; returns the arrivals
    in that span (time, body characters) and a count of what happened to the messages:
    sent, arrived (in all), first_arrival_s (after the first was sent), exact (every
    body one alice sent, none twice, in the order sent), missing (sent before the last
    arrival and not arrived: bounced or lost) and bounced (errors back at alice's
    client; the bridge bounces what its queue has no room for)."""
    alice = client("alice@a.example/hf")
    bob = client("bob@b.example/hf")
    for c, domain in ((bob, "b.example"), (alice, "a.example")):
        c.connect(address=("127.0.0.1", b.c2s[domain]), force_starttls=False,
                  disable_starttls=True)
        await asyncio.wait_for(c.online.wait(), START_S)
    rng, sent, index, arrivals, order = random.Random(seed), [], {}, [], []
    window = asyncio.Semaphore(throughput_depth(payload))
    bounced = [0]

    def on_alice_message(m):
        # A bounce: that message will not reach bob, and its place in the window stays
        # taken, so the window shrinks to what the bridge's queue holds (which counts
        # what is in flight until the far end confirms it) instead of refilling it at
        # once with more to bounce.
        if m["type"] == "error":
            bounced[0] += 1

    alice.add_event_handler("message", on_alice_message)

    async def receive():
        while True:
            t, m = await bob.inbox.get()
            body = str(m["body"])
            order.append(index.get(body, -1))
            arrivals.append((t, len(body)))
            window.release()

    receiver = asyncio.ensure_future(receive())
    began = time.monotonic()
    end = began + FIRST_ARRIVAL_S  # until the first arrival
    try:
        while True:
            if arrivals:
                # The span counts from the first arrival, however long that took (S2S
                # over IP opens its streams first: about 100 s at 1200 bps;
                # the bridge's first at 75 bps takes minutes).
                end = arrivals[0][0] + seconds
            if time.monotonic() >= end:
                break
            try:
                await asyncio.wait_for(window.acquire(), end - time.monotonic())
            except asyncio.TimeoutError:
                break
            sent.append(hex_dump(payload, rng) or "-")
            index[sent[-1]] = len(sent) - 1
            alice.send_message(mto="bob@b.example", mbody=sent[-1], mtype="chat")
    finally:
        receiver.cancel()
        await asyncio.gather(receiver, return_exceptions=True)
        await disconnect(alice, bob)
    known = [i for i in order if i >= 0]
    count = {"sent": len(sent), "arrived": len(arrivals),
             "first_arrival_s": arrivals[0][0] - began if arrivals else None,
             "exact": len(known) == len(order) and all(a < b for a, b in zip(known, known[1:])),
             "missing": max(known, default=-1) + 1 - len(set(known)), "bounced": bounced[0]}
    return [(t, n) for t, n in arrivals if t <= end], count


def steady(arrivals, bps):
    """(payload bit/s, utilisation %) between the first and the last arrival, as
    published_scenarios.xmpp_throughput counts them; NaN with fewer than three."""
    if len(arrivals) < 3 or arrivals[-1][0] <= arrivals[0][0]:
        return float("nan"), float("nan")
    payload_bps = sum(n for _, n in arrivals[1:]) * 8 / (arrivals[-1][0] - arrivals[0][0])
    return payload_bps, ps.xmpp_utilisation(payload_bps, bps)


def first_burst(arrivals, within_s=1.0):
    """How many arrivals came together with the first (within `within_s` of it): over
    TLS, Prosody's 8 KiB records deliver about seven 1024-byte messages at once, and
    counting from the first of them credits the span with the others."""
    return sum(1 for t, _ in arrivals if t - arrivals[0][0] <= within_s)


def run_chat(servers, a):
    # asyncio.run closes the loop only once every pending task has been cancelled and
    # has finished: slixmpp keeps a task per client reading its send queue, and bob's
    # answers wait in call_later; a loop closed under them made Python cancel them at
    # exit on a closed loop (RuntimeError: Event loop is closed).
    if a.throughput:
        return asyncio.run(throughput(servers, a.payload, a.seconds, a.seed))
    return asyncio.run(chat(servers, a.round_trips, a.payload, a.typing_delay, a.seed))


def over_ip(tmp, rate, a):
    """The round trips with the servers federating by S2S over the IP test bed."""
    from gnuradio.hfstack.testbed import ip
    from gnuradio.hfstack.testbed.xmpp_s2s import federation
    why = ip.unavailable()
    if why:
        sys.exit(f"xmpp_section_b_real_time: --transport s2s-ip {why}")
    # `timeout` ends a run with SIGTERM: exit through the context managers below, so
    # that the namespaces, servers and /etc/netns files go with it.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(128 + signal.SIGTERM))
    options = "supervision.keep_alive_interval_s=36000;" + NODE_OPTIONS
    cc = None if a.congestion_control == "system" else a.congestion_control
    window = ip.planned_tcp_window(rate) if a.tcp_window == "planned" else int(a.tcp_window)
    rto_min = (ip.planned_tcp_rto_min(rate) if a.tcp_rto_min == "planned"
               else float(a.tcp_rto_min))
    floor = f"{rto_min:g} s" if rto_min else "Linux's own"
    print(f"TCP on the HF route: congestion control {cc or 'the system default'}, window "
          f"{window or 'unclamped'}{' bytes' if window else ''}, least retransmission "
          f"timeout {floor}", flush=True)
    captures = None
    if a.pcap_dir:
        captures = os.path.join(a.pcap_dir, str(rate))
        os.makedirs(captures)
    with ip.testbed(rate=rate, time_scale=1.0, subnet="10.73.0", node_options=options,
                    options=a.ip_client_options, congestion_control=cc,
                    tcp_window=window or None, pcap_dir=captures,
                    tcp_rto_min=rto_min or None, compact=a.compact,
                    sysctls=a.sysctl) as t, \
            federation(t, tmp, tls=a.transport == "s2s-ip-tls") as servers, \
            link_captures(t, captures):
        return run_chat(servers, a)


@contextlib.contextmanager
def link_captures(t, directory):
    """With `directory`: the datagrams on each namespace's TUN device (dumpcap), `ss -tin`
    of both namespaces every 5 s, and at the end the nodes' and clients' counters."""
    if directory is None:
        yield
        return
    dumpcaps, stop = [], threading.Event()
    for side in ("a", "b"):
        dumpcaps.append(subprocess.Popen(
            t.command(side, "dumpcap", "-q", "-i", t.clients[side].name,
                      "-w", os.path.join(directory, f"tun-{side}.pcap")),
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))

    def sample():
        with open(os.path.join(directory, "ss.txt"), "w") as out:
            began = time.monotonic()
            while not stop.wait(5.0):
                for side in ("a", "b"):
                    text = subprocess.run(t.command(side, "ss", "-tin"), capture_output=True,
                                          text=True).stdout
                    out.write(f"== {time.monotonic() - began:.0f} s {side}\n{text}")
                out.flush()

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    try:
        yield
    finally:
        stop.set()
        sampler.join()
        with open(os.path.join(directory, "counters.json"), "w") as out:
            json.dump({side: {"node": dict(t.nodes[side].counters()),
                              "links": [dict(x) for x in t.nodes[side].links()],
                              "ip_client": dict(t.clients[side].client.counters())}
                       for side in ("a", "b")}, out, indent=1, sort_keys=True)
        for p in dumpcaps:
            p.terminate()
            p.wait(10)


@contextlib.contextmanager
def kept_or_temporary(keep_dir, rate):
    """DIR/RATE, made empty and kept, or a temporary directory removed at the end."""
    if keep_dir is None:
        with tempfile.TemporaryDirectory(prefix="hfstack-xmpp-bench-") as tmp:
            yield tmp
        return
    directory = os.path.join(keep_dir, str(rate))
    os.makedirs(directory)
    yield directory


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--rates", default="1200,9600", help="bps, comma-separated (short interleaver)")
    p.add_argument("--round-trips", type=int, default=10)
    p.add_argument("--payload", type=int, default=0, help="body characters (0: a one-character body)")
    p.add_argument("--transport", default="x2x-slep", choices=("x2x-slep", "x2x-rcop", "s2s-ip", "s2s-ip-tls"))
    p.add_argument("--typing-delay", type=float, default=0.0, help="bob answers after this, s")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--pcap-dir", help="keep each node's D_PDUs here (pcap, link type 237); "
                                      "s2s-ip: also the TUN devices' datagrams and ss -tin")
    p.add_argument("--keep-dir", help="the servers' and nodes' files and logs in DIR/RATE "
                                      "(kept) instead of a temporary directory")
    p.add_argument("--ip-client-options", default="",
                   help="s2s-ip: more IP client options for both clients, name=value;... "
                        "(docs/ip-client.md; e.g. ttl_s=0)")
    p.add_argument("--congestion-control", default="cubic",
                   help="s2s-ip: TCP congestion control on the HF route (default cubic, as "
                        "the IP client's configure step sets; 'system': the machine's)")
    p.add_argument("--tcp-window", default="planned",
                   help="s2s-ip: the HF route's TCP window, bytes ('planned': a minute of air "
                        "at the rate, testbed.ip.planned_tcp_window; 0: Linux's own)")
    p.add_argument("--tcp-rto-min", default="planned",
                   help="s2s-ip: the HF route's least TCP retransmission timeout, s ('planned': "
                        "testbed.ip.planned_tcp_rto_min, 90 s at 1200 and 9600 bps; 0: Linux's "
                        "own, 0.2 s)")
    p.add_argument("--compact", action="store_true",
                   help="s2s-ip: the IP clients send each other's datagrams with the compact "
                        "header (docs/ip-client.md)")
    p.add_argument("--sysctl", action="append", default=[], metavar="NAME=VALUE",
                   help="s2s-ip: a network setting for both namespaces, e.g. "
                        "net.ipv4.tcp_timestamps=0 (repeatable)")
    p.add_argument("--throughput", action="store_true",
                   help="one-way throughput of --payload-character messages instead of round trips")
    p.add_argument("--seconds", type=float, default=300.0,
                   help="--throughput: send for this long after the first arrival, s")
    a = p.parse_args(argv)
    if not (shutil.which("prosody") and shutil.which("prosodyctl") and slixmpp):
        sys.exit("xmpp_section_b_real_time: needs Debian's prosody and python3-slixmpp")
    if a.round_trips < 2:
        p.error("--round-trips must be at least 2")
    out = {"transport": a.transport, "payload": a.payload, "typing_delay": a.typing_delay,
           "node_options": NODE_OPTIONS, "rates": {}}
    if a.throughput:
        out.update(throughput_seconds=a.seconds, typing_delay=None,
                   hex_dump_deflate_ratio=ps.hex_dump_deflate_ratio())
    for rate in [int(r) for r in a.rates.split(",") if r.strip()]:
        with kept_or_temporary(a.keep_dir, rate) as tmp:
            if a.transport.startswith("s2s-ip"):
                result = over_ip(tmp, rate, a)
            else:
                b = bed(tmp, rate, a.transport, a.pcap_dir)
                try:
                    result = run_chat(b, a)
                finally:
                    b.close()
        if a.throughput:
            arrivals, count = result
            payload_bps, utilisation = steady(arrivals, rate)
            span = arrivals[-1][0] - arrivals[0][0] if arrivals else 0.0
            burst = first_burst(arrivals)
            _, after_burst = steady(arrivals[burst - 1:], rate) if burst else (None, float("nan"))
            out["rates"][rate] = {"payload_bps": payload_bps, "utilisation": utilisation,
                                  "messages_counted": len(arrivals), "span_s": span, **count,
                                  "first_burst": burst,
                                  "utilisation_after_first_burst": after_burst,
                                  "arrivals_s": [round(t - arrivals[0][0], 2)
                                                 for t, _ in arrivals]}
            first = count["first_arrival_s"]
            print(f"{a.transport} {rate} bps throughput, {a.payload}-byte messages, real time: "
                  f"{payload_bps:.0f} bit/s of payload, {utilisation:.1f} % ({len(arrivals)} "
                  f"messages over {span:.0f} s after the first, which arrived "
                  f"{'never' if first is None else f'{first:.0f} s after it was sent'}; "
                  f"{count['sent']} sent, {count['arrived']} arrived, bodies "
                  f"{'exact, none twice, in order' if count['exact'] else 'NOT all exact and in order'}"
                  f", {count['missing']} missing, {count['bounced']} bounced; {burst} came with "
                  f"the first, {after_burst:.1f} % counted from the last of them)", flush=True)
            continue
        trips = result
        later = [t for t in trips[1:] if t is not None]
        avg = sum(later) / len(later) if later else float("nan")
        first = trips[0] if trips[0] is not None else float("nan")
        out["rates"][rate] = {"round_trips": trips, "first": first, "average": avg}
        print(f"{a.transport} {rate} bps, {a.payload}-byte payload, answer {a.typing_delay:g} s "
              f"late, real time: first {first:.1f} s, average of {len(later)} {avg:.1f} s "
              f"(min {min(later, default=float('nan')):.1f}, "
              f"max {max(later, default=float('nan')):.1f})", flush=True)
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
