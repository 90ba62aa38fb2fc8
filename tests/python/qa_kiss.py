#!/usr/bin/env python3
#
# Copyright 2026 gr-hfstack authors.
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""KISS over TCP end to end, all real processes on loopback: two hfstack-node
processes over emulated modems, an hfstack-kiss beside each (port 0 to the broadcast
group, non-ARQ; port 1 to the other node, ARQ), and Direwolf's kissutil on each as the
KISS client. After a frame each way over the ARQ route, AX.25 UI frames kissutil makes
from text go each way and arrive byte for byte as it sent them (its -v dump against
what a plain KISS client and the far kissutil receive), decoding to the same text
there. Then bad input from a plain client (garbage before the first FEND, a bad escape,
an oversize frame, an unrouted port, a TXDELAY command) is dropped and counted while
the good frame after it, with FEND and FESC in its data, arrives intact over ARQ at a
gateway inside the far node (hfstack-node --kiss). Skipped when kissutil is not
installed (`make deps` installs Direwolf)."""

import json
import os
import re
import shutil
import socket
import subprocess
import sys
import unittest

from gnuradio import gr_unittest
from ham_stations import START_S, two_stations
from test_support import accepts, free_port, tail, wait_for

KISS = [sys.executable, "-m", "gnuradio.hfstack.apps.kiss"]
FRAME_S = 60  # a frame through the emulated HF link within this
FEND, FESC = 0xC0, 0xDB


def dumped_frames(log, heading):
    """The KISS frames kissutil -v dumped under `heading` ("Sending to KISS TNC" for
    those it sent, "From KISS TNC" for those it received), as bytes."""
    frames, current = [], None
    for line in tail(log, 1 << 20).splitlines():
        if line.startswith(heading):
            current = bytearray()
            frames.append(current)
        elif current is not None and re.match(r"^\s+[0-9a-f]{3}:  ", line):
            hex_part = line.split(":", 1)[1][2:2 + 48]
            current += bytes.fromhex(hex_part.replace(" ", ""))
        else:
            current = None
    return [bytes(f) for f in frames]


def received_text(log):
    """The frames kissutil printed as received, as text (its "[0] " prefix removed)."""
    return [line[4:] for line in tail(log, 1 << 20).splitlines() if line.startswith("[0] ")]


class kiss_client:
    """A plain KISS-over-TCP client: whole frames as the gateway sends them."""

    def __init__(self, port):
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=FRAME_S)
        self.buf = bytearray()

    def frames(self, count):
        """The next `count` complete frames, FENDs included (TimeoutError if slow)."""
        out = []
        while len(out) < count:
            start = self.buf.find(bytes([FEND]))
            end = self.buf.find(bytes([FEND]), start + 1) if start >= 0 else -1
            if end > start + 1:
                out.append(bytes(self.buf[start:end + 1]))
                del self.buf[:end + 1]
                continue
            if end == start + 1:  # back-to-back FENDs
                del self.buf[:start + 1]
                continue
            data = self.sock.recv(65536)
            if not data:
                raise AssertionError("the gateway closed the connection")
            self.buf += data
        return out

    def close(self):
        self.sock.close()


@unittest.skipUnless(shutil.which("kissutil"), "needs Direwolf's kissutil (make deps installs it)")
class qa_kiss(two_stations):

    def start_gateway(self, name, sis_port, peer):
        port, log = free_port(), os.path.join(self.tmp, f"kiss-{name}.log")
        stats = os.path.join(self.tmp, f"kiss-{name}.json")
        p = self.spawn([*KISS, "--server", f"127.0.0.1:{sis_port}",
                        "--listen", f"127.0.0.1:{port}", "--route", "0=31.255.255.255",
                        "--route", f"1={peer},arq", "--max-frame", "512",
                        "--stats-interval", "0", "--stats", stats, "--retry", "1"], log)
        wait_for(f"hfstack-kiss {name}", lambda: tail(log).count("connected to the SIS") == 2,
                 START_S, p, log)
        wait_for(f"hfstack-kiss {name} listening", lambda: accepts(port), START_S, p, log)
        return p, port, stats

    def start_kissutil(self, name, port):
        """kissutil on the gateway at `port`: sends the files put in tx-NAME, prints
        what it receives and dumps every frame (-v) to kissutil-NAME.log."""
        tx = os.path.join(self.tmp, f"tx-{name}")
        os.makedirs(tx)
        log = os.path.join(self.tmp, f"kissutil-{name}.log")
        # kissutil reads commands from stdin until it ends: a pipe kept open.
        with open(log, "a") as out:
            p = self.spawn(["stdbuf", "-oL", "kissutil", "-h", "127.0.0.1", "-p", str(port),
                            "-v", "-f", tx], log, stdout=out, stdin=subprocess.PIPE)
        self.addCleanup(p.stdin.close)
        return tx, log

    def send_text(self, tx, name, lines):
        path = os.path.join(tx, name)
        with open(path + ".part", "w") as f:
            f.write("".join(line + "\n" for line in lines))
        os.rename(path + ".part", path)  # kissutil sees the file whole

    def test_kissutil_frames_each_way_byte_exact(self):
        sis_a, sis_b = self.start_node(1, 2), self.start_node(2, 1)
        _, port_a, _ = self.start_gateway("a", sis_a, "0.0.0.2")
        _, port_b, _ = self.start_gateway("b", sis_b, "0.0.0.1")
        watch_a, watch_b = kiss_client(port_a), kiss_client(port_b)
        self.addCleanup(watch_a.close)
        self.addCleanup(watch_b.close)
        # The air between the two processes comes up as each subscribes to the other
        # (ZeroMQ): a frame each way over the ARQ route first, so that no broadcast
        # (non-ARQ, sent once) goes out before the far node hears.
        for sender, receiver in ((watch_a, watch_b), (watch_b, watch_a)):
            frame = bytes([FEND, 0x10]) + b"link check" + bytes([FEND])
            sender.sock.sendall(frame)
            self.assertEqual(receiver.frames(1), [frame])
        tx_a, log_a = self.start_kissutil("a", port_a)
        tx_b, log_b = self.start_kissutil("b", port_b)
        # Connected: the gateway's third client (after the readiness probe and the
        # plain client); a file kissutil reads before that is lost.
        wait_for("both kissutils connected", lambda: all(
            tail(os.path.join(self.tmp, f"kiss-{n}.log")).count("KISS client 3 connected")
            for n in "ab"), START_S)

        for (tx, log, watch, far_log, lines) in (
                (tx_a, log_a, watch_b, log_b,
                 ["N0CALL>APRS,WIDE1-1:Position report over STANAG 5066",
                  "N0CALL-7>CQ:second frame: 0123456789 {}[]"]),
                (tx_b, log_b, watch_a, log_a, ["W1AW-15>ID,RELAY*:answer from B"])):
            self.send_text(tx, "frames.txt", lines)
            got = watch.frames(len(lines))
            wait_for("kissutil's dumps", lambda: len(dumped_frames(log, "Sending")) >= len(lines)
                     and len(dumped_frames(far_log, "From")) >= len(lines), FRAME_S)
            sent = dumped_frames(log, "Sending")
            self.assertEqual(got, sent)
            self.assertEqual(dumped_frames(far_log, "From"), sent)
            self.assertEqual(received_text(far_log), lines)

    def test_bad_input_dropped_and_counted_good_frame_intact(self):
        # B's gateway runs inside its node (hfstack-node --kiss).
        port_b = free_port()
        self.start_node(2, 1, extra=["--kiss", str(port_b), "--kiss-route", "0=31.255.255.255",
                                     "--kiss-route", "1=0.0.0.1,arq"])
        wait_for("hfstack-node --kiss", lambda: accepts(port_b), START_S)
        sis_a = self.start_node(1, 2)
        gateway_a, port_a, stats_a = self.start_gateway("a", sis_a, "0.0.0.2")
        watch_b = kiss_client(port_b)
        self.addCleanup(watch_b.close)
        data = bytes([0x82, FEND, 0x00, FESC, FESC, 0xDC, 0xDD, FEND, 0x7F]) + bytes(range(256))
        good = bytes([FEND, 0x10]) + data.replace(bytes([FESC]), bytes([FESC, 0xDD])).replace(
            bytes([FEND]), bytes([FESC, 0xDC])) + bytes([FEND])
        bad = (b"garbage before the first FEND"
               + bytes([FEND, 0x00, 0x41, FESC, 0x41, FEND])  # bad escape
               + bytes([FEND, 0x00]) + bytes(600) + bytes([FEND])  # above --max-frame 512
               + bytes([FEND, 0x50, 0x41, FEND])  # port 5: no route
               + bytes([FEND, 0x01, 0x30, FEND]))  # TXDELAY: ignored
        with socket.create_connection(("127.0.0.1", port_a)) as s:
            s.sendall(bad + good)
            self.assertEqual(watch_b.frames(1), [good])
        self.stop(gateway_a)
        with open(stats_a) as f:
            stats = json.loads(f.read().splitlines()[-1])["gateway"]
        self.assertEqual(stats["garbage_bytes"], len(b"garbage before the first FEND"))
        self.assertEqual(stats["bad_escapes"], 1)
        self.assertEqual(stats["oversize"], 1)
        self.assertEqual(stats["unknown_port"], 1)
        self.assertEqual(stats["commands_ignored"], 1)
        self.assertEqual(stats["updus_sent"], 1)


if __name__ == "__main__":
    gr_unittest.run(qa_kiss)
