#!/usr/bin/env python3
#
# Copyright 2026 gr-hfstack authors.
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""hfstack-testbed as a user runs it: `ip`, `pep` and `hub` each started as a process; the
commands it prints (ping, curl, dig; not the browser) are run as printed and work;
SIGINT leaves nothing behind (no namespace, no nftables table, no process, no state
file). A testbed killed with SIGKILL is named stale and removed by the next start; a
station that dies ends the testbed with status 1, saying which, and removes it too.
Skips, saying why, where namespaces (or nft, curl, dig) are unavailable."""

import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import time
import unittest

from gnuradio import gr_unittest
from gnuradio.hfstack.testbed.pep import unavailable

from test_support import app_path

TAG = f"q{os.getpid() % 10000}"   # not the default names, which a user may be running
UP_S = 30                          # the promise: a working pair in under 30 s


def namespaces():
    """This test's namespaces: tests running beside it make their own."""
    done = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True)
    return {line.split()[0] for line in done.stdout.splitlines()
            if line.strip() and line.split()[0].endswith(TAG)}


def nft_tables():
    done = subprocess.run(["nft", "list", "tables"], capture_output=True, text=True)
    return set(done.stdout.splitlines())


def children(pid):
    """Every descendant of `pid`."""
    found, frontier = set(), [pid]
    while frontier:
        p = frontier.pop()
        try:
            with open(f"/proc/{p}/task/{p}/children") as f:
                kids = [int(k) for k in f.read().split()]
        except OSError:
            kids = []
        found.update(kids)
        frontier += kids
    return found


def process_state(pid):
    """The state letter of a live process, None once it is gone."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return None


def command_line(pid):
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f.read()
    except OSError:
        return b""


def remove_left_namespaces():
    """What a failed test left of its namespaces (and the processes in them)."""
    from gnuradio.hfstack.apps.testbed import remove_set
    remove_set(sorted(namespaces()), [])


class testbed_process:
    """hfstack-testbed SCENARIO as a subprocess; `commands` once it is up."""

    def __init__(self, scenario, *extra):
        self.p = subprocess.Popen([sys.executable, app_path("hfstack-testbed"), scenario,
                                   "--tag", TAG, "--time-scale", "20", *extra],
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.out, self.commands = [], []
        t0 = time.monotonic()
        for line in self.p.stdout:
            self.out.append(line)
            if line.startswith("    ip netns exec"):
                self.commands.append(line.strip())
            if "running; Ctrl-C" in line:
                break
        self.up_s = time.monotonic() - t0
        if not self.commands:
            self.p.kill()
            raise AssertionError(f"testbed did not come up: {''.join(self.out)}{self.p.stderr.read()}")
        self.descendants = children(self.p.pid)

    def stop(self, sig=signal.SIGINT):
        self.p.send_signal(sig)
        out, err = self.p.communicate(timeout=60)
        return out, err


@unittest.skipIf(unavailable() or not all(shutil.which(t) for t in ("curl", "dig")),
                 unavailable() or "curl and dig are needed (make test installs them)")
class qa_hfstack_testbed(gr_unittest.TestCase):

    def setUp(self):
        self.before_ns, self.before_nft = namespaces(), nft_tables()

    def assert_nothing_left(self, bed):
        self.assertEqual(namespaces() - self.before_ns, set())
        self.assertEqual(nft_tables(), self.before_nft)
        alive = [p for p in bed.descendants if process_state(p) not in (None, "Z")]
        self.assertEqual(alive, [])
        self.assertFalse(os.path.exists(f"/run/hfstack-testbed/{bed.scenario}{TAG}.json"))
        self.assertFalse(os.path.exists(f"/etc/netns/hfpb{TAG}"))

    def run_printed(self, bed):
        """Each printed command but the browser, as printed; returns their outputs."""
        outputs = {}
        for command in bed.commands:
            if "chromium" in command:
                continue
            done = subprocess.run(shlex.split(command), capture_output=True, text=True,
                                  timeout=120)
            self.assertEqual(done.returncode, 0, f"{command}: {done.stdout}{done.stderr}")
            outputs[command] = done.stdout
        return outputs

    def assert_every_ping_answered(self, out, command):
        """ping -c 3 -w T stops at its third reply; probes it sent meanwhile (one a
        second, where two HF hops each way take longer) are still in flight then, and
        ping counts them lost. A datagram lost on the way leaves a gap: every probe up
        to the last one answered must have its reply, and three at least."""
        answered = {int(s) for s in re.findall(r"icmp_seq=(\d+) ", out)}
        self.assertGreaterEqual(len(answered), 3, f"{command}: {out}")
        self.assertEqual(answered, set(range(1, max(answered) + 1)), f"{command}: {out}")

    def check_outputs(self, outputs, tools):
        self.assertEqual({c.split()[4] for c in outputs}, set(tools))
        for command, out in outputs.items():
            tool = command.split()[4]
            if tool == "ping":
                self.assert_every_ping_answered(out, command)
            elif tool == "curl":
                self.assertIn("<html", out.lower(), command)
            elif tool == "dig":
                self.assertEqual(out.split(), ["10.99.0.1"])

    def scenario(self, name, tools):
        bed = testbed_process(name)
        bed.scenario = name
        try:
            self.assertLess(bed.up_s, UP_S)
            # The two-station beds offer a browser; the hub bed only the shell tools.
            self.assertEqual(any("chromium" in c for c in bed.commands), name != "hub")
            self.outputs = self.run_printed(bed)
            self.check_outputs(self.outputs, tools)
        finally:
            out, err = bed.stop()
        self.assertEqual(bed.p.returncode, 0, err)
        self.assertIn("removed the", out)
        self.assert_nothing_left(bed)
        # Each log line once: the two stations' IP clients both said "ip_client: bound
        # to SAP 9, MTU 1500", word for word; each now names its device.
        logged = [line for line in err.splitlines() if ": INFO: " in line]
        repeated = sorted({line for line in logged if logged.count(line) > 1})
        self.assertEqual(repeated, [], err)
        return err

    def test_ip(self):
        err = self.scenario("ip", ("ping", "curl", "dig"))
        self.assertEqual(len([line for line in err.splitlines() if "bound to SAP 9, MTU 1500" in line]), 2, err)

    def test_pep(self):
        self.scenario("pep", ("curl", "dig"))  # ping: no IP route across, by design

    def test_hub(self):
        """Spoke 1 reaches the hub's subnet over one HF hop and spoke 2's subnet over two,
        the hub's kernel forwarding between them: ping and curl as printed."""
        self.addCleanup(remove_left_namespaces)
        self.scenario("hub", ("ping", "curl"))
        ttl = {}
        for command, out in self.outputs.items():
            if command.split()[4] == "ping":
                ttl[command.split()[-1]] = {int(t) for t in re.findall(r"ttl=(\d+)", out)}
        hub_lan, spoke_lan = "10.86.0.1", "10.86.2.1"
        self.assertEqual(set(ttl), {hub_lan, spoke_lan})
        # One router more on the way to spoke 2 (the hub), one HF hop more each way.
        self.assertLess(max(ttl[spoke_lan]), min(ttl[hub_lan]))

    def test_killed_testbed_is_removed_at_next_start(self):
        bed = testbed_process("pep")
        bed.scenario = "pep"
        bed.p.kill()
        bed.p.communicate(timeout=60)
        self.assertTrue(namespaces() - self.before_ns)  # what a SIGKILL leaves
        again = testbed_process("pep")
        again.scenario = "pep"
        out, err = again.stop()
        self.assertIn("removing a stale pep testbed", err)
        self.assertEqual(again.p.returncode, 0, err)
        bed.descendants |= again.descendants
        self.assert_nothing_left(bed)

    def test_station_crash_ends_and_removes_the_testbed(self):
        bed = testbed_process("pep")
        bed.scenario = "pep"
        done = subprocess.run(["ip", "netns", "pids", f"hfpb{TAG}"], capture_output=True,
                              text=True)
        nodes = [int(p) for p in done.stdout.split() if b"apps.node" in command_line(p)]
        self.assertEqual(len(nodes), 1)
        os.kill(nodes[0], signal.SIGKILL)
        out, err = bed.p.communicate(timeout=60)
        self.assertEqual(bed.p.returncode, 1)
        self.assertIn("station B (hfstack-node", err)
        self.assert_nothing_left(bed)


if __name__ == "__main__":
    gr_unittest.run(qa_hfstack_testbed)
