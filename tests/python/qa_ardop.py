#!/usr/bin/env python3
#
# Copyright 2026 gr-hfstack authors.
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""Winlink P2P with two real Pat instances (Debian's pat) over our ARDOP-compatible
host interface, all real processes on loopback: two hfstack-node processes over
emulated modems, an hfstack-ardop beside node A and the same interface inside node B
(hfstack-node --ardop), each Pat with its own configuration and mailbox, set up as
docs/winlink-p2p.md says. A message with a 5 kB attachment composed on each side
arrives intact in the other's inbox (attachment compared byte for byte) in one session
A calls; then the roles change (A listens, B calls) and a message goes each way again.
Bad input from a plain host: unknown and malformed commands and a data frame with a
wrong length prefix answer FAULT while the session goes on, its bytes arriving once;
a host that disconnects mid-session leaves the far host with DISCONNECTED. A host that
does not read its data connection: the interface holds a bounded amount for it and the
far sender waits, every byte arriving once when it reads. The interface inside a node
tells its host BUSY TRUE / BUSY FALSE while the other station transmits.
Skipped when pat is not installed (`make deps` installs it)."""

import json
import os
import random
import shutil
import socket
import subprocess
import sys
import threading
import unittest

from gnuradio import gr_unittest
from gnuradio.hfstack.apps import ardop as ardop_app_module
from ham_stations import START_S, two_stations
from test_support import accepts, free_port, tail, wait_for

ARDOP = [sys.executable, "-m", "gnuradio.hfstack.apps.ardop"]
PAT = shutil.which("pat-winlink") or shutil.which("pat")
SESSION_S = 180  # a Pat session over the emulated link within this


def b2f_parts(path):
    """(headers, body, {name: bytes}) of a Winlink message file (B2F)."""
    with open(path, "rb") as f:
        raw = f.read()
    head, _, rest = raw.partition(b"\r\n\r\n")
    headers = [line.split(b": ", 1) for line in head.split(b"\r\n")]
    body_size = int(next(v for k, v in headers if k == b"Body"))
    body, rest = rest[:body_size], rest[body_size + 2:]
    files = {}
    for k, v in headers:
        if k == b"File":
            size, name = v.split(b" ", 1)
            files[name.decode()], rest = rest[:int(size)], rest[int(size) + 2:]
    return dict(headers), body, files


class pat_station:
    """One Pat with its own configuration, mailbox and logs under `directory`."""

    def __init__(self, directory, call, ardop_port):
        self.dir, self.call = directory, call
        os.makedirs(directory)
        self.config = os.path.join(directory, "config.json")
        # The documented configuration (docs/winlink-p2p.md): the ARDOP section points
        # at our interface; http only because `pat http` is the way to keep listening.
        with open(self.config, "w") as f:
            json.dump({"mycall": call, "locator": "JO59",
                       "http_addr": f"127.0.0.1:{free_port()}",
                       "ardop": {"addr": f"127.0.0.1:{ardop_port}",
                                 "arq_bandwidth": {"Forced": False, "Max": 2000},
                                 "rig": "", "ptt_ctrl": False, "beacon_interval": 0,
                                 "cwid_enabled": False}}, f)

    def args(self, *command):
        d = self.dir
        return [PAT, "--config", self.config, "--mbox", os.path.join(d, "mailbox"),
                "--log", os.path.join(d, "pat.log"), "--event-log", os.path.join(d, "events"),
                "--forms", os.path.join(d, "forms"), *command]

    def compose(self, to, subject, body, attachment):
        path = os.path.join(self.dir, "attachment.bin")
        with open(path, "wb") as f:
            f.write(attachment)
        subprocess.run(self.args("compose", "--p2p-only", "-s", subject, "-a", path, to),
                       input=body.encode(), check=True, timeout=START_S, capture_output=True)

    def inbox(self):
        d = os.path.join(self.dir, "mailbox", self.call, "in")
        return sorted(os.path.join(d, n) for n in os.listdir(d)) if os.path.isdir(d) else []

    def outbox(self):
        d = os.path.join(self.dir, "mailbox", self.call, "out")
        return os.listdir(d) if os.path.isdir(d) else []


class plain_host:
    """A host on an ARDOP TNC's two ports, by hand: lines and data frames."""

    def __init__(self, port, receive_buffer=None):
        self.cmd = socket.create_connection(("127.0.0.1", port), timeout=SESSION_S)
        self.data = socket.socket()
        if receive_buffer:  # before connecting: the window it offers stays that small
            self.data.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, receive_buffer)
        self.data.settimeout(SESSION_S)
        self.data.connect(("127.0.0.1", port + 1))
        self.lines, self.partial, self.received = [], b"", bytearray()
        self.raw = bytearray()

    def send(self, line):
        self.cmd.sendall(line.encode() + b"\r")

    def wait_line(self, prefix):
        """The first line since the last wait that starts with `prefix`."""
        while True:
            while self.lines:
                line = self.lines.pop(0)
                if line.startswith(prefix):
                    return line
            chunk = self.cmd.recv(4096)
            if not chunk:
                raise AssertionError(f"the TNC closed the command connection before {prefix}")
            *done, self.partial = (self.partial + chunk).split(b"\r")
            self.lines += [d.decode() for d in done]

    def write(self, payload):
        self.data.sendall(len(payload).to_bytes(2, "big") + payload)

    def read_data(self, count):
        """ARQ payload until `count` bytes in all have arrived."""
        while len(self.received) < count:
            chunk = self.data.recv(65536)
            if not chunk:
                raise AssertionError("the TNC closed the data connection")
            self.raw += chunk
            while len(self.raw) >= 2 and len(self.raw) >= 2 + int.from_bytes(self.raw[:2], "big"):
                n = int.from_bytes(self.raw[:2], "big")
                if self.raw[2:5] != b"ARQ":
                    raise AssertionError(f"a data frame tagged {bytes(self.raw[2:5])!r}")
                self.received += self.raw[5:2 + n]
                del self.raw[:2 + n]
        return bytes(self.received)

    def close(self):
        self.cmd.close()
        self.data.close()


@unittest.skipUnless(PAT, "needs Debian's pat (make deps installs it)")
class qa_ardop(two_stations):

    def command_port(self):
        """A free port whose next one is free too and whose last digit is not 9: Pat
        finds the data port by adding one to the last character of the address."""
        while True:
            port = free_port()
            if port % 10 != 9 and self.port_free(port + 1):
                return port

    def start_stations(self):
        """Node A with hfstack-ardop beside it, node B with the interface inside;
        the two command ports (each data port is the next)."""
        port_b = self.command_port()
        self.start_node(2, 1, extra=["--ardop", str(port_b), "--ardop-station", "AAA1=0.0.0.1"])
        wait_for("hfstack-node --ardop", lambda: accepts(port_b), START_S)
        sis_a = self.start_node(1, 2)
        port_a = self.command_port()
        log = os.path.join(self.tmp, "ardop-a.log")
        p = self.spawn([*ARDOP, "--server", f"127.0.0.1:{sis_a}", "--listen",
                        f"127.0.0.1:{port_a}", "--station", "BBB1=0.0.0.2", "--retry", "1",
                        "--stats-interval", "1", "--stats",
                        os.path.join(self.tmp, "ardop-a.json")], log)
        wait_for("hfstack-ardop", lambda: "connected to the SIS server" in tail(log), START_S,
                 p, log)
        return port_a, port_b

    @staticmethod
    def port_free(port):
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
                return True
            except OSError:
                return False

    def listen(self, pat, name):
        """`pat --listen ardop http`, once it has told the TNC to listen."""
        log = os.path.join(self.tmp, f"pat-{name}-listen.log")
        env = dict(os.environ, ARDOP_DEBUG="1")  # its TNC dialogue in the log
        with open(log, "a") as out:
            p = self.spawn(pat.args("--listen", "ardop", "http"), log, stdout=out, env=env)
        wait_for(f"Pat {name} listening", lambda: "LISTEN now TRUE" in tail(log, 1 << 20),
                 START_S, p, log)
        return p

    def connect(self, pat, target, name):
        log = os.path.join(self.tmp, f"pat-{name}-connect.log")
        with open(log, "a") as out:
            r = subprocess.run(pat.args("connect", f"ardop:///{target}"), stdout=out,
                               stderr=subprocess.STDOUT, timeout=SESSION_S)
        self.assertEqual(r.returncode, 0, tail(log))
        self.assertIn("Disconnected", tail(log), tail(log))

    def check_received(self, pat, subject, body, attachment):
        for path in pat.inbox():
            headers, got_body, files = b2f_parts(path)
            if headers.get(b"Subject") == subject.encode():
                self.assertEqual(got_body.replace(b"\r\n", b"\n").rstrip(), body.encode().rstrip())
                self.assertEqual(files, {"attachment.bin": attachment})
                return
        self.fail(f"{subject!r} not in {pat.call}'s inbox: {pat.inbox()}")

    def test_pat_p2p_message_with_attachment_each_way(self):
        port_a, port_b = self.start_stations()
        a = pat_station(os.path.join(self.tmp, "pat-a"), "AAA1", port_a)
        b = pat_station(os.path.join(self.tmp, "pat-b"), "BBB1", port_b)
        rng = random.Random(4539)
        mail = {}
        for n, (sender, to) in enumerate(((a, "BBB1"), (b, "AAA1"), (a, "BBB1"), (b, "AAA1"))):
            mail[n] = (f"P2P test {n} from {sender.call}",
                       f"Message {n}: five kilobytes attached.\nSecond line.",
                       bytes(rng.getrandbits(8) for _ in range(5000)))
        # B listens, A calls: one session carries A's message to B and B's to A.
        for n in (0, 1):
            (a if n == 0 else b).compose("BBB1" if n == 0 else "AAA1", *mail[n])
        listener = self.listen(b, "b")
        self.connect(a, "BBB1", "a")
        self.check_received(b, *mail[0])
        self.check_received(a, *mail[1])
        self.assertEqual((a.outbox(), b.outbox()), ([], []))
        # The roles change: B's Pat lets its TNC go, A listens, B calls.
        self.stop(listener)
        for n in (2, 3):
            (a if n == 2 else b).compose("BBB1" if n == 2 else "AAA1", *mail[n])
        self.listen(a, "a")
        self.connect(b, "AAA1", "b")
        self.check_received(b, *mail[2])
        self.check_received(a, *mail[3])
        self.assertEqual((a.outbox(), b.outbox()), ([], []))

    def test_bad_input_faults_and_the_session_goes_on(self):
        port_a, port_b = self.start_stations()
        a, b = plain_host(port_a), plain_host(port_b)
        self.addCleanup(a.close)
        self.addCleanup(b.close)
        self.initialise(a, b)
        a.send("FROBNICATE 3")
        self.assertEqual(a.wait_line("FAULT"), "FAULT unknown command FROBNICATE")
        a.send("ARQTIMEOUT 5")
        self.assertEqual(a.wait_line("FAULT"), "FAULT ARQTIMEOUT needs 30..240 seconds")
        a.send("ARQCALL BBB1 5")
        self.assertEqual(a.wait_line("CONNECTED"), "CONNECTED BBB1 500")
        self.assertEqual(b.wait_line("CONNECTED"), "CONNECTED AAA1 500")
        # Mid-session: a malformed command, then a frame whose prefix promises more
        # than it brings (dropped with a FAULT once the rest does not come).
        a.send("MYCALL not-a-call!")
        self.assertTrue(a.wait_line("FAULT").startswith("FAULT MYCALL"))
        a.data.sendall(b"\x03\xe8only ten b")
        self.assertEqual(a.wait_line("FAULT"),
                         "FAULT data frame incomplete: 10 of 1000 bytes, dropped")
        payload = bytes(random.Random(5066).getrandbits(8) for _ in range(6000))
        for at in range(0, len(payload), 1500):
            a.write(payload[at:at + 1500])
        self.assertEqual(b.read_data(len(payload)), payload)
        self.assertEqual(a.wait_line("BUFFER 0"), "BUFFER 0")
        # The calling host goes away: the far host hears DISCONNECTED.
        a.close()
        b.wait_line("DISCONNECTED")
        self.assertEqual(b.wait_line("NEWSTATE"), "NEWSTATE DISC")
        b.send("BUFFER")
        self.assertEqual(b.wait_line("BUFFER"), "BUFFER 0")
        self.assertEqual(bytes(b.received), payload)  # nothing twice

    @staticmethod
    def initialise(a, b):
        """Both hosts initialised with their calls, b listening."""
        for host, call in ((a, "AAA1"), (b, "BBB1")):
            host.send("INITIALIZE")
            host.wait_line("INITIALIZE")
            host.send(f"MYCALL {call}")
            host.wait_line("MYCALL")
        b.send("LISTEN TRUE")
        b.wait_line("LISTEN")

    def start_session(self, receive_buffer_a=None):
        port_a, port_b = self.start_stations()
        a, b = plain_host(port_a, receive_buffer_a), plain_host(port_b)
        self.addCleanup(a.close)
        self.addCleanup(b.close)
        self.initialise(a, b)
        # Connected to its SIS server is not yet bound: an ARQCALL before that is a FAULT.
        wait_for("hfstack-ardop bound", lambda: self.ardop_a_statistics("sis_bound"), START_S)
        a.send("ARQCALL BBB1 5")
        self.assertEqual(a.wait_line("ARQCALL"), "ARQCALL BBB1 5")
        self.assertEqual(a.wait_line("CONNECTED"), "CONNECTED BBB1 500")
        self.assertEqual(b.wait_line("CONNECTED"), "CONNECTED AAA1 500")
        return a, b

    def ardop_a_statistics(self, part="app"):
        """hfstack-ardop A's latest statistics line (written every second), its `part`."""
        try:
            with open(os.path.join(self.tmp, "ardop-a.json")) as f:
                lines = [json.loads(line) for line in f if line.endswith("\n") and line.strip()]
        except FileNotFoundError:
            return {}
        return lines[-1][part] if lines else {}

    def test_a_host_that_does_not_read_holds_the_far_sender(self):
        # A's host reads nothing on its data connection while B sends 600 kB: the
        # interface holds at most its output limit for it (plus what one read of the
        # SLEP window brings), the rest waits at B; then A reads all of it, once.
        a, b = self.start_session(receive_buffer_a=4096)
        payload = bytes(random.Random(15).getrandbits(8) for _ in range(600000))
        writer = threading.Thread(
            target=lambda: [b.write(payload[at:at + 8000]) for at in range(0, len(payload), 8000)],
            daemon=True)
        writer.start()
        wait_for("A's interface holding back",
                 lambda: self.ardop_a_statistics().get("host_output_pauses", 0) > 0, SESSION_S)
        self.assertEqual(a.read_data(len(payload)), payload)
        writer.join(SESSION_S)
        peak = self.ardop_a_statistics()["host_output_peak"]
        self.assertLessEqual(peak, (ardop_app_module.MAX_HOST_OUTPUT + 262144) * 1.05)

    def test_busy_when_the_other_station_transmits(self):
        # B's interface is inside its node (hfstack-node --ardop): its host hears BUSY
        # TRUE while A's node sends it a transfer, then BUSY FALSE.
        a, b = self.start_session()
        # (The session's opening already made the channel busy and free again.)
        a.write(bytes(1000) * 20)  # about 17 s of 9600 bps air: several polls long
        self.assertEqual(b.wait_line("BUSY TRUE"), "BUSY TRUE")
        self.assertEqual(b.wait_line("BUSY"), "BUSY FALSE")
        self.assertEqual(b.read_data(20000), bytes(20000))


if __name__ == "__main__":
    gr_unittest.run(qa_ardop)
