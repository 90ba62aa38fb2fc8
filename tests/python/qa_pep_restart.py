#!/usr/bin/env python3
#
# Copyright 2026 gr-hfstack authors.
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""The far HF-PEP is killed (kill -9) and restarted in the middle of a 1 MB upload, with
real processes in two network namespaces (pep_testbed, each proxy its own hfstack-pep
over its node's SIS server): the client must see its connection reset within the bound
docs/slep.md states (not hang, not end cleanly) and the server must see RST, never the
FIN of a complete upload. Needs root, nft and the emulated modems; skipped otherwise."""

import json
import time
import unittest

from gnuradio import gr_unittest
from gnuradio.hfstack.testbed.pep import FAR, pep_testbed, unavailable

PORT = 8080
UPLOAD = 1_000_000
KILL_AFTER = 200_000   # bytes the server has when the far proxy is killed
RETRY_S, KEEPALIVE_S = 5, 30   # SLEP's, both proxies: a shorter test, the same rules
# docs/slep.md: a restarted peer's streams are reset within keepalive_s + one round trip
# (sooner while this side sends); the round trip of the emulated 9600 bps link at time
# scale 20 is well under 10 s.
BOUND_S = KEEPALIVE_S + RETRY_S + 10
LIMIT_S = 300          # every process and wait of the test ends by then

# The server: one connection, read to its end; prints progress once, then how it ended.
SERVER = r"""
import json, socket, sys
s = socket.create_server((sys.argv[1], int(sys.argv[2])))
print("ready", flush=True)
c, _ = s.accept()
c.settimeout(float(sys.argv[4]))
got, told, end = 0, False, "timeout"
try:
    while True:
        d = c.recv(65536)
        if not d:
            end = "fin"
            break
        got += len(d)
        if not told and got >= int(sys.argv[3]):
            print(json.dumps({"progress": got}), flush=True)
            told = True
except ConnectionResetError:
    end = "rst"
except socket.timeout:
    pass
print(json.dumps({"end": end, "bytes": got}), flush=True)
"""

# The client: SOCKS5 to the far server, then UPLOAD bytes, a half-close, and a read for
# the answer; prints how the connection ended and when (CLOCK_MONOTONIC, shared by every
# process of the machine).
CLIENT = r"""
import json, socket, struct, sys, time
socks, far, port, size, limit = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), float(sys.argv[5])
host, sport = socks.rsplit(":", 1)
c = socket.create_connection((host, int(sport)), timeout=limit)
c.sendall(b"\x05\x01\x00")
assert c.recv(2) == b"\x05\x00"
c.sendall(b"\x05\x01\x00\x01" + socket.inet_aton(far) + struct.pack("!H", port))
assert c.recv(10)[:2] == b"\x05\x00"
print("ready", flush=True)
sent, end = 0, "timeout"
block = bytes(range(256)) * 64
try:
    while sent < size:
        sent += c.send(block[:min(len(block), size - sent)])
    c.shutdown(socket.SHUT_WR)
    end = "closed" if c.recv(1) == b"" else "answered"
except (ConnectionResetError, BrokenPipeError):
    end = "reset"
except socket.timeout:
    pass
print(json.dumps({"end": end, "sent": sent, "at": time.monotonic()}), flush=True)
"""


def read_json(p, key, what):
    """The next line of process p holding `key` (a hang ends at the process's own limit)."""
    for line in p.stdout:
        row = json.loads(line)
        if key in row:
            return row
    raise AssertionError(f"{what} ended without a {key!r} line: {p.stderr.read()[-2000:]}")


class qa_pep_restart(gr_unittest.TestCase):

    def setUp(self):
        why = unavailable()
        if why:
            raise unittest.SkipTest(why)
        slep = f"retry_s={RETRY_S};keepalive_s={KEEPALIVE_S}"
        self.bed = pep_testbed(rate=9600, pep_in_node=False, pep_options=slep,
                               far_options=slep).start()
        self.addCleanup(self.bed.stop)

    def test_far_proxy_killed_mid_upload_resets_both_ends(self):
        server = self.bed.serve("b", SERVER, FAR, str(PORT), str(KILL_AFTER), str(LIMIT_S))
        client = self.bed.serve("a", CLIENT, self.bed.socks, FAR, str(PORT), str(UPLOAD),
                                str(LIMIT_S))
        progress = read_json(server, "progress", "the server")
        self.assertLess(progress["progress"], UPLOAD)
        self.bed.kill_pep("b")
        # What the server saw of a proxy that died mid-stream: RST (SO_LINGER 0), never
        # the FIN of an upload that looks complete.
        ended = read_json(server, "end", "the server")
        self.assertEqual(ended["end"], "rst", ended)
        self.assertLess(ended["bytes"], UPLOAD)
        self.bed.start_pep("b")
        restarted = time.monotonic()
        done = read_json(client, "end", "the client")
        self.assertEqual(done["end"], "reset", done)
        self.assertLess(done["sent"], UPLOAD + 1)
        self.assertLessEqual(done["at"] - restarted, BOUND_S, done)


if __name__ == "__main__":
    gr_unittest.main()
