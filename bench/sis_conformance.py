#!/usr/bin/python3
#
# Copyright 2026 gr-hfstack authors.
#
# SPDX-License-Identifier: GPL-3.0-or-later

"""SIS conformance figures (docs/node-design.md, "SIS server and conformance"), measured
against a running node pair.

Starts `hfstack-node --pair` on emulated modems (node A 0.0.0.1 on PORT, node B
0.0.0.2 on PORT + 1, 9600 bps short interleaver, clock scaled by --time-scale) and
talks to it as an ordinary SIS client over TCP. The frames are built and parsed here
with `struct` from STANAG 5066 Annex A's layout, not with the
project's codec, so a mistake shared by our encoder and decoder cannot hide.

Prints one line per check, "name: figure", and a closing "N passed, N failed" line.
Every wait is bounded; the run takes about two minutes. Usage:
    PYTHONPATH=build/test_modules /usr/bin/python3 bench/sis_conformance.py
"""

import argparse
import os
import socket
import statistics
import struct
import subprocess
import sys
import tempfile
import threading
import time

NODE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "apps", "hfstack-node")

# Annex A primitive types used here.
BIND_REQUEST, UNBIND_REQUEST, BIND_ACCEPTED, BIND_REJECTED = 1, 2, 3, 4
KEEP_ALIVE, UNIDATA_REQUEST, UNIDATA_INDICATION = 17, 20, 21
UNIDATA_CONFIRM, UNIDATA_REJECTED = 22, 23
ARQ, NON_ARQ = 1, 2
CONFIRM_NONE, CONFIRM_NODE = 0, 1


def frame(ptype, body=b""):
    return struct.pack(">BBBH", 0x90, 0xEB, 0, 1 + len(body)) + bytes([ptype]) + body


def address(a, group=False):
    """Annex A address field: 3-bit size (7 nibbles), group bit, 28 address bits."""
    return struct.pack(">I", (7 << 29) | (int(group) << 28) | (a & 0x0FFFFFFF))


def dotted(text):
    parts = [int(x) for x in text.split(".")]
    return (parts[0] << 24) | (parts[1] << 16) | (parts[2] << 8) | parts[3]


def service(mode, confirm):
    return bytes([(mode << 4) | (confirm << 2)])


def bind(sap, mode=ARQ, confirm=CONFIRM_NODE, rank=0):
    return frame(BIND_REQUEST, bytes([(sap << 4) | rank]) + service(mode, confirm) + b"\x00")


def unidata(dest, dest_sap, payload, ttl=0, mode=0, confirm=0, group=False, priority=0):
    body = bytes([(priority << 4) | dest_sap]) + address(dest, group) + service(mode, confirm)
    body += struct.pack(">BH", (ttl >> 16) & 0x0F, ttl & 0xFFFF)
    return frame(UNIDATA_REQUEST, body + struct.pack(">H", len(payload)) + payload)


class client:
    """One SIS connection; parses what the node sends with the Annex A framing."""

    def __init__(self, port, timeout=5.0):
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=timeout)
        self.buffer = b""

    def send(self, data):
        self.sock.sendall(data)

    def receive(self, timeout):
        """(type, body) of the next primitive, or None when `timeout` passes or the
        node closes. KEEP_ALIVEs are answered and returned too."""
        deadline = time.monotonic() + timeout
        while True:
            if len(self.buffer) >= 6 and self.buffer[:3] == b"\x90\xeb\x00":
                size = struct.unpack(">H", self.buffer[3:5])[0]
                if len(self.buffer) >= 5 + size:
                    ptype, body = self.buffer[5], self.buffer[6:5 + size]
                    self.buffer = self.buffer[5 + size:]
                    if ptype == KEEP_ALIVE:
                        self.send(frame(KEEP_ALIVE))
                    return ptype, body
            elif len(self.buffer) >= 3:
                raise AssertionError("not a SIS frame: " + self.buffer[:16].hex())
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            self.sock.settimeout(left)
            try:
                data = self.sock.recv(65536)
            except socket.timeout:
                return None
            except ConnectionResetError:
                return None
            if not data:
                return None
            self.buffer += data

    def receive_type(self, wanted, timeout):
        deadline = time.monotonic() + timeout
        while (left := deadline - time.monotonic()) > 0:
            got = self.receive(left)
            if got is None:
                return None
            if got[0] in wanted:
                return got
        return None

    def bound(self, sap, **kw):
        self.send(bind(sap, **kw))
        got = self.receive_type({BIND_ACCEPTED, BIND_REJECTED}, 5)
        if not got or got[0] != BIND_ACCEPTED:
            raise AssertionError(f"bind of SAP {sap} not accepted: {got}")
        return self

    def close(self):
        self.sock.close()


def updu_of(ptype, body):
    """U_PDU of an UNIDATA_INDICATION (tx mode 1/2), CONFIRM or REJECTED body."""
    if ptype == UNIDATA_INDICATION:  # SAPs, destination, mode|SAP, source, size
        size = struct.unpack(">H", body[10:12])[0]
        return body[12:12 + size]
    size = struct.unpack(">H", body[5:7])[0]  # SAPs, destination, size
    return body[7:7 + size]


def settle(c, seconds):
    """Reads (and answers) whatever comes for `seconds`; returns the primitives."""
    out = []
    deadline = time.monotonic() + seconds
    while (left := deadline - time.monotonic()) > 0:
        got = c.receive(left)
        if got is None:
            break
        out.append(got)
    return out


class listener(threading.Thread):
    """Reads a client in the background (answering KEEP_ALIVEs at once, as a live
    application does) until stop(); returns what it received."""

    def __init__(self, c):
        super().__init__(daemon=True)
        self.c, self.got, self.running = c, [], True
        self.start()

    def run(self):
        while self.running:
            got = self.c.receive(0.2)
            if got is not None:
                self.got.append(got)

    def stop(self, linger):
        time.sleep(linger)  # let what is on its way arrive; a bounded benchmark wait
        self.running = False
        self.join(5)
        return self.got


class bench:
    def __init__(self, args):
        self.args = args
        self.results = []

    def start(self):
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        self.port = port
        self.log = tempfile.TemporaryFile()
        cmd = [sys.executable, NODE, "--pair", "--kind", "emulator", "--profile", "",
               "--time-scale", str(self.args.time_scale), "--rate", "9600",
               "--sis-port", str(port), "--stats-interval", "0"]
        self.node = subprocess.Popen(cmd, stdout=self.log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", port + 1), timeout=1).close()
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                return
            except OSError:
                if self.node.poll() is not None:
                    break
                time.sleep(0.1)  # polling a starting process, bounded by the deadline
        self.log.seek(0)
        raise SystemExit("hfstack-node did not start: " + self.log.read().decode(errors="replace"))

    def stop(self):
        self.node.terminate()
        try:
            self.node.wait(10)
        except subprocess.TimeoutExpired:
            self.node.kill()

    def report(self, name, ok, figure):
        self.results.append(ok)
        print(f"{name}: {figure} [{'ok' if ok else 'FAILED'}]", flush=True)

    def a(self):
        return client(self.port)

    def b(self):
        return client(self.port + 1)

    # B1 -------------------------------------------------------------------------
    def oversized_frame(self):
        far = self.b().bound(3)
        far_log = listener(far)
        sender = self.a().bound(2)
        inner = unidata(dotted("0.0.0.2"), 3, b"executed from inside a U_PDU", mode=ARQ)
        payload = (inner * (5000 // len(inner) + 1))[:5000]
        sender.send(unidata(dotted("0.0.0.2"), 6, payload, mode=ARQ))
        answer = sender.receive_type({UNIDATA_REJECTED, UNIDATA_CONFIRM}, 5)
        leaked = [p for p in far_log.stop(3) if p[0] == UNIDATA_INDICATION]
        reason = answer[1][0] >> 4 if answer and answer[0] == UNIDATA_REJECTED else None
        self.report("B1 5000-byte U_PDU holding a frame",
                    reason == 4 and not leaked,
                    f"answer {'REJECTED reason %s' % reason if answer else 'none'}, "
                    f"{len(leaked)} inner frames executed at the far client")
        far.close()
        sender.close()

    # B2 -------------------------------------------------------------------------
    def ttl(self):
        far = self.b().bound(4)
        far_log = listener(far)
        sender = self.a().bound(4)
        sender.send(unidata(dotted("0.0.0.2"), 4, b"link up first", mode=ARQ, confirm=CONFIRM_NODE))
        sender.receive_type({UNIDATA_CONFIRM, UNIDATA_REJECTED}, 30)
        answers = {}
        for i in range(24):  # one at a time, as an application waiting for each answer
            payload = bytes([i]) * (200 + 20 * i)
            sender.send(unidata(dotted("0.0.0.2"), 4, payload, ttl=1 + i % 3))
            got = sender.receive_type({UNIDATA_CONFIRM, UNIDATA_REJECTED}, 30)
            if got:
                answers[payload] = (got[0], got[1][0] >> 4)
        delivered = {updu_of(t, b) for t, b in far_log.stop(3) if t == UNIDATA_INDICATION}
        expired = {u for u, (t, reason) in answers.items() if t == UNIDATA_REJECTED and reason == 1}
        wrong = len(expired & delivered)
        self.report("B2 24 sends with TTL 1-3 (2-6 s), one at a time",
                    wrong == 0 and len(answers) == 24,
                    f"{len(delivered & set(answers))} delivered, {wrong} of them reported TTL "
                    f"expired; {len(expired)} expired in all, {len(answers)} of 24 answered")
        far.close()
        sender.close()

    # B3 -------------------------------------------------------------------------
    def group(self):
        sender = self.a().bound(5)
        sender.send(unidata(0x0FFFFFFF, 5, b"to everyone", group=True, mode=ARQ, confirm=CONFIRM_NODE))
        got = sender.receive_type({UNIDATA_CONFIRM, UNIDATA_REJECTED}, 20)
        name = {UNIDATA_CONFIRM: "CONFIRM", UNIDATA_REJECTED: "REJECTED"}.get(got[0]) if got else "nothing"
        self.report("B3 ARQ + node confirmation to broadcast", got is not None, f"answered {name}")
        sender.close()

    # B4 -------------------------------------------------------------------------
    def bad_binds(self):
        figures, ok = [], True
        for label, data in (("tx mode 0", frame(BIND_REQUEST, b"\x60" + service(0, 0) + b"\x00")),
                            ("tx mode 7", frame(BIND_REQUEST, b"\x60" + service(7, 0) + b"\x00")),
                            ("non-ARQ + node confirmation", bind(6, NON_ARQ, CONFIRM_NODE)),
                            ("2-byte body", frame(BIND_REQUEST, b"\x60\x10"))):
            c = self.a()
            c.send(data)
            got = c.receive_type({BIND_ACCEPTED, BIND_REJECTED}, 5)
            name = {BIND_ACCEPTED: "ACCEPTED", BIND_REJECTED: "REJECTED"}.get(got[0]) if got else "no reply"
            if got and got[0] == BIND_REJECTED:
                name += f" reason {got[1][0]}"
            ok = ok and got is not None and got[0] == BIND_REJECTED
            figures.append(f"{label}: {name}")
            c.close()
        self.report("B4 invalid binds", ok, "; ".join(figures))

    # B5 -------------------------------------------------------------------------
    def close_after_send(self):
        far = self.b().bound(7)
        far_log = listener(far)
        sender = self.a().bound(7)
        for i in range(6):
            sender.send(unidata(dotted("0.0.0.2"), 7, bytes([0x40 + i]) * 300, mode=ARQ, confirm=CONFIRM_NODE))
        # Close at once, in order (FIN): an abortive close would make the kernel discard
        # what the server had not read yet, which no server can help.
        sender.sock.shutdown(socket.SHUT_WR)
        sender.close()
        delivered = [p for p in far_log.stop(8) if p[0] == UNIDATA_INDICATION]
        self.report("B5 6 ARQ U_PDUs, then close at once", len(delivered) == 6,
                    f"{len(delivered)} of 6 delivered")
        far.close()

    # B6 -------------------------------------------------------------------------
    def latencies(self, sender, n):
        out = []
        for i in range(n):
            t = time.monotonic()
            sender.send(unidata(dotted("0.0.0.2"), 8, bytes([i]) * 100, mode=ARQ, confirm=CONFIRM_NODE))
            got = sender.receive_type({UNIDATA_CONFIRM, UNIDATA_REJECTED}, 30)
            if not got or got[0] != UNIDATA_CONFIRM:
                break
            out.append(time.monotonic() - t)
        return out

    def absent_peer(self):
        far = self.b().bound(8)
        far_log = listener(far)
        sender = self.a().bound(8)
        alone = self.latencies(sender, 10)
        sender.send(unidata(dotted("0.0.0.9"), 8, b"for nobody", mode=ARQ, confirm=CONFIRM_NODE))
        beside = self.latencies(sender, 20)
        ok = len(alone) == 10 and len(beside) == 20 and statistics.mean(beside) < 2 * statistics.mean(alone) + 0.2
        fmt = lambda v: f"mean {statistics.mean(v):.2f} s, max {max(v):.2f} s" if v else "none confirmed"
        self.report("B6 confirm latency to B (real s)", ok,
                    f"alone {fmt(alone)}; beside a U_PDU for absent 0.0.0.9 {fmt(beside)}")
        far_log.stop(0)
        far.close()
        sender.close()

    # B7 -------------------------------------------------------------------------
    def keep_alive(self):
        c = self.a().bound(10)
        seconds = 15.0
        probes = sum(1 for t, _ in settle(c, seconds) if t == KEEP_ALIVE)
        self.report(f"B7 KEEP_ALIVEs to a silent client in {seconds:.0f} s of real time",
                    probes == 0, f"{probes} (Annex A: at most one per 120 s)")
        c.close()

    # B8 -------------------------------------------------------------------------
    def client_limit(self):
        clients = [client(self.port) for _ in range(64)]
        extra = client(self.port)
        extra.send(bind(11))
        got = extra.receive(5)
        name = "plain close" if got is None else (f"BIND_REJECTED reason {got[1][0]}" if got[0] == BIND_REJECTED else f"type {got[0]}")
        self.report("B8 65th client", got is not None and got[0] == BIND_REJECTED, name)
        for c in clients + [extra]:
            c.close()


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--time-scale", type=float, default=20.0)
    args = p.parse_args()
    b = bench(args)
    b.start()
    try:
        for check in (b.oversized_frame, b.bad_binds, b.group, b.close_after_send, b.ttl,
                      b.absent_peer, b.keep_alive, b.client_limit):
            try:
                check()
            except (AssertionError, OSError) as e:
                b.report(check.__name__, False, f"error: {e}")
    finally:
        b.stop()
    passed = sum(b.results)
    print(f"{passed} passed, {len(b.results) - passed} failed")


if __name__ == "__main__":
    main()
