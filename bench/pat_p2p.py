#!/usr/bin/python3
#
# Copyright 2026 gr-hfstack authors.
#
# SPDX-License-Identifier: GPL-3.0-or-later

"""Winlink P2P over STANAG 5066 with two real Pat instances (Debian's pat), as
docs/winlink-p2p.md sets them up: two hfstack-node processes over emulated modems
(--mode, --profile, --snr-db, --ber), each with the ARDOP-compatible host interface
inside (hfstack-node --ardop); Pat B listens, Pat A composes one message with an
attachment of --bytes (random bytes by default, which Pat's compression cannot shrink;
--text for English-like text) and connects. Reports the session time (Pat's connect,
start to end, in protocol seconds: real seconds x --time-scale; Pat's own work is
scaled too, so time scale 1 gives figures to quote), the message's size as Pat
proposed it (plain and compressed) and two payload rates in bytes per minute, both of
the message's size as proposed (plain): over the whole session (Pat's connect, start to
end: the call, the B2F turns, the message, the close), and over the message's transfer
alone (from the listener's "FS +" reaching the caller to the caller's BUFFER 0, Pat's log
clock in 1 s steps), the way ARDOP's published ARQ rates count, beside those rates
(about 310 to 12,072 bytes per minute across its 200-2000 Hz modes, ARDOP
specification). With --outage-at S the air between the two nodes
(ZeroMQ, relayed by this script) carries nothing from S protocol seconds after Pat's
connect for --outage-s seconds, both ways: the session should ride it out. One line
per run and a JSON list at the end. Usage:
    PYTHONPATH=build/test_modules /usr/bin/python3 bench/pat_p2p.py \\
        [--mode 2400S] [--bytes 10000] [--runs 1] [--time-scale 1] [--profile ""]
        [--outage-at 20 --outage-s 30]
"""

import argparse
import json
import os
import random
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time

from gnuradio.hfstack.testbed import stop_processes

NODE = [sys.executable, "-m", "gnuradio.hfstack.apps.node"]
PAT = shutil.which("pat-winlink") or shutil.which("pat")
ARDOP_PUBLISHED_BYTES_PER_MIN = (310, 12072)
WORDS = ("position report weather wind north south east west visibility sea state "
         "supply request fuel water medical team arrival departure confirm negative "
         "the of and to in is for on with at by from").split()


def free_port(pair=False):
    """A free port; with `pair`, one whose next is free too and whose last digit is not
    9 (Pat finds the data port by adding one to the address's last character)."""
    while True:
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        if not pair:
            return port
        if port % 10 == 9:
            continue
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port + 1))
                return port
            except OSError:
                continue


def accepts(port):
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.2):
            return True
    except OSError:
        return False


def wait_for(what, condition, seconds, log=None):
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            said = open(log, errors="replace").read()[-2000:] if log else ""
            raise SystemExit(f"pat_p2p: {what} not within {seconds} s\n{said}")
        time.sleep(0.1)


class air_relay:
    """Forwards each node's published air to the other's subscription, except while
    `silent()` (the outage)."""

    def __init__(self, pairs, silent):
        import zmq
        self.ctx = zmq.Context()
        self.stop = threading.Event()
        self.threads = []
        for source, sink in pairs:
            sub = self.ctx.socket(zmq.SUB)
            sub.setsockopt(zmq.SUBSCRIBE, b"")
            sub.setsockopt(zmq.RCVTIMEO, 100)
            sub.connect(source)
            pub = self.ctx.socket(zmq.PUB)
            pub.bind(sink)
            self.threads.append(threading.Thread(target=self.forward, args=(sub, pub, silent),
                                                 daemon=True))
            self.threads[-1].start()
        self.dropped = 0

    def forward(self, sub, pub, silent):
        import zmq
        while not self.stop.is_set():
            try:
                parts = sub.recv_multipart()
            except zmq.Again:
                continue
            if silent():
                self.dropped += 1
                continue
            pub.send_multipart(parts)
        sub.close(0)
        pub.close(0)

    def close(self):
        self.stop.set()
        for t in self.threads:
            t.join()
        self.ctx.term()


def pat_args(d, call, *command):
    return [PAT, "--config", os.path.join(d, f"{call}.json"), "--mbox",
            os.path.join(d, "mbox-" + call), "--log", os.path.join(d, f"{call}.log"),
            "--event-log", os.path.join(d, f"{call}.events"), *command]


def transfer_span(pat_log):
    """Seconds from the listener's "FS +" reaching the caller (its Pat starts writing the
    message) to the caller's interface saying BUFFER 0 (the far station confirmed every
    byte): the message's transfer, as ARDOP's published ARQ rates count it. From Pat's
    ARDOP_DEBUG log, whose clock has 1 s steps; None if the log lacks either."""
    stamp = re.compile(r"^(\d{4})/(\d\d)/(\d\d) (\d\d):(\d\d):(\d\d) ")
    start = end = None
    for line in open(pat_log, errors="replace"):
        m = stamp.match(line)
        if not m:
            continue
        t = time.mktime(tuple(int(x) for x in m.groups()) + (0, 0, -1))
        if start is None and "frame {ARQ [70 83 32 43" in line:  # "FS +"
            start = t
        elif start is not None and "<-- BUFFER 0\t" in line and t > start:
            end = t
            break
    return None if start is None or end is None else end - start


def run_once(a, d, n, rng):
    procs = []
    relay = None
    outage = {"from": float("inf"), "to": float("inf")}
    try:
        if a.outage_at is not None:
            relay = air_relay([(f"ipc://{d}/air-1-{n}", f"ipc://{d}/relay-1-{n}"),
                               (f"ipc://{d}/air-2-{n}", f"ipc://{d}/relay-2-{n}")],
                              lambda: outage["from"] <= time.monotonic() < outage["to"])
        ports = {}
        for me, call, peer, peer_call in ((1, "AAA1", 2, "BBB1"), (2, "BBB1", 1, "AAA1")):
            ardop = free_port(pair=True)
            sis = free_port()
            ports[call] = ardop
            log = open(os.path.join(d, f"node-{me}-{n}.log"), "w")
            procs.append(subprocess.Popen(
                [*NODE, "--address", f"0.0.0.{me}", "--kind", a.kind, "--mode", a.mode,
                 # The real modem's clear channel: white noise at --snr-db.
                 "--profile", a.profile or ("awgn" if a.kind == "loopback" else ""),
                 "--snr-db", str(a.snr_db),
                 *(["--ber", str(a.ber)] if a.kind == "emulator" else []),
                 "--seed", str(a.seed + me), "--time-scale", str(a.time_scale),
                 "--sis-port", str(sis), "--state-dir", "none",
                 "--stats-interval", str(a.node_stats_interval),
                 "--stats", os.path.join(d, f"node-{me}-{n}.stats"),
                 "--air-publish", f"ipc://{d}/air-{me}-{n}",
                 "--air-subscribe", f"ipc://{d}/{'relay' if relay else 'air'}-{peer}-{n}",
                 "--log-level", a.node_log_level,
                 *(["--options", a.node_options] if a.node_options else []),
                 "--ardop", str(ardop), "--ardop-station", f"{peer_call}=0.0.0.{peer}"],
                stdout=subprocess.DEVNULL, stderr=log))
            wait_for(f"node {me}", lambda: accepts(ardop), 60)
            with open(os.path.join(d, f"{call}.json"), "w") as f:
                json.dump({"mycall": call, "locator": "JO59",
                           "http_addr": f"127.0.0.1:{free_port()}",
                           "ardop": {"addr": f"127.0.0.1:{ardop}",
                                     "arq_bandwidth": {"Forced": False, "Max": 2000},
                                     "rig": "", "ptt_ctrl": False, "beacon_interval": 0,
                                     "cwid_enabled": False}}, f)
        attachment = os.path.join(d, f"attachment-{n}")
        with open(attachment, "wb") as f:
            if a.text:
                text = " ".join(rng.choice(WORDS) for _ in range(a.bytes))
                f.write(text.encode()[:a.bytes])
            else:
                f.write(bytes(rng.getrandbits(8) for _ in range(a.bytes)))
        subprocess.run(pat_args(d, "AAA1", "compose", "--p2p-only", "-s", f"Bench {n}",
                                "-a", attachment, "BBB1"),
                       input=b"Benchmark message.\n", check=True, capture_output=True)
        listen_log = os.path.join(d, f"listen-{n}.log")
        with open(listen_log, "w") as out:
            procs.append(subprocess.Popen(pat_args(d, "BBB1", "--listen", "ardop", "http"),
                                          stdout=out, stderr=subprocess.STDOUT,
                                          env=dict(os.environ, ARDOP_DEBUG="1")))
        wait_for("Pat B listening", lambda: "LISTEN now TRUE" in open(listen_log).read(), 60,
                 listen_log)
        inbox = os.path.join(d, "mbox-BBB1", "BBB1", "in")

        def in_inbox():
            return len(os.listdir(inbox)) if os.path.isdir(inbox) else 0

        # Runs share the mailboxes: this run's message is the one more than before.
        before = in_inbox()
        start = time.monotonic()
        if a.outage_at is not None:
            outage["from"] = start + a.outage_at / a.time_scale
            outage["to"] = outage["from"] + a.outage_s / a.time_scale
        r = subprocess.run(pat_args(d, "AAA1", "connect", "ardop:///BBB1"),
                           capture_output=True, text=True, timeout=a.timeout,
                           env=dict(os.environ, ARDOP_DEBUG="1"))
        real = time.monotonic() - start
        out = r.stdout + r.stderr
        with open(os.path.join(d, f"connect-{n}.log"), "w") as f:
            f.write(out)
        proposal = re.search(r"FD EM \S+ (\d+) (\d+)", out)
        delivered = in_inbox() - before
        session_s = real * a.time_scale
        result = {"run": n, "mode": a.mode, "profile": a.profile or "clear",
                  "snr_db": a.snr_db if a.profile else None, "time_scale": a.time_scale,
                  "attachment_bytes": a.bytes, "content": "text" if a.text else "random",
                  "message_bytes": int(proposal.group(1)) if proposal else None,
                  "compressed_bytes": int(proposal.group(2)) if proposal else None,
                  "delivered": delivered == 1 and "Disconnected" in out,
                  "session_s": round(session_s, 1)}
        if relay is not None:
            result["outage"] = {"at_s": a.outage_at, "seconds": a.outage_s,
                                "bursts_dropped": relay.dropped}
        if result["delivered"] and proposal:
            result["payload_bytes_per_min"] = round(int(proposal.group(1)) / session_s * 60)
            result["air_bytes_per_min"] = round(int(proposal.group(2)) / session_s * 60)
            span = transfer_span(os.path.join(d, "AAA1.log"))
            if span:
                result["transfer_s"] = round(span * a.time_scale, 1)
                result["transfer_payload_bytes_per_min"] = round(
                    int(proposal.group(1)) / (span * a.time_scale) * 60)
        else:
            result["pat_output"] = out[-2000:]
        return result
    finally:
        if relay is not None:
            relay.close()
        stop_processes(procs)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--mode", default="2400S", help="both nodes' waveform mode (2400S, 9600S...)")
    p.add_argument("--kind", default="emulator", choices=("emulator", "loopback"),
                   help="the nodes' radios: the modem emulator (default) or the real STANAG "
                        "4539 modem on audio (loopback), its audio carried between them")
    p.add_argument("--bytes", type=int, default=10000, help="attachment size")
    p.add_argument("--text", action="store_true", help="English-like text, not random bytes")
    p.add_argument("--runs", type=int, default=1)
    p.add_argument("--time-scale", type=float, default=1.0)
    p.add_argument("--profile", default="", help="emulator channel ('' clear, or a fading one)")
    p.add_argument("--snr-db", type=float, default=20.0)
    p.add_argument("--ber", type=float, default=0.0)
    p.add_argument("--seed", type=int, default=5066)
    p.add_argument("--timeout", type=float, default=900.0, help="real seconds a session may take")
    p.add_argument("--outage-at", type=float, metavar="SECONDS",
                   help="the air carries nothing from SECONDS (protocol time) after the connect")
    p.add_argument("--outage-s", type=float, default=30.0, help="for this long (default 30)")
    p.add_argument("--work-dir", help="keep Pat's and the nodes' files and logs here "
                   "(default: a temporary directory, removed)")
    p.add_argument("--node-log-level", default="warn", help="the nodes' --log-level")
    p.add_argument("--node-options", default="",
                   help='more node options for both nodes, "name=value;..." (hfstack-node '
                        "--options; default none)")
    p.add_argument("--node-stats-interval", type=float, default=0,
                   help="the nodes' --stats-interval (their JSON lines go to node-*.stats "
                        "in --work-dir; default 0: once at the end)")
    a = p.parse_args()
    if PAT is None:
        raise SystemExit("pat_p2p: needs Debian's pat (make deps installs it)")
    rng = random.Random(a.seed)
    results = []
    with tempfile.TemporaryDirectory(prefix="hfstack-pat-bench-") as temporary:
        d = a.work_dir or temporary
        os.makedirs(d, exist_ok=True)
        for n in range(a.runs):
            r = run_once(a, d, n, rng)
            results.append(r)
            if "outage" in r:
                print(f"run {n}: outage of {a.outage_s} s at {a.outage_at} s, "
                      f"{r['outage']['bursts_dropped']} bursts dropped", flush=True)
            print(f"run {n}: {a.mode} {r['profile']}: message {r['message_bytes']} B "
                  f"({r['compressed_bytes']} B compressed), session {r['session_s']} s, "
                  f"{r.get('payload_bytes_per_min', 'failed')} B/min payload; transfer "
                  f"{r.get('transfer_s')} s, {r.get('transfer_payload_bytes_per_min')} B/min "
                  f"(ARDOP published: {ARDOP_PUBLISHED_BYTES_PER_MIN[0]}-"
                  f"{ARDOP_PUBLISHED_BYTES_PER_MIN[1]} B/min)", flush=True)
    print(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
