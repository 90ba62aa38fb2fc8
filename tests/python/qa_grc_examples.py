#!/usr/bin/env python3
#
# Copyright 2026 gr-hfstack authors.
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""Every examples/*.grc compiles with grcc against our GRC block definitions; the
two-node modem loopback runs (both SIS servers accept a client and bind it), and the
two nodes on emulated modems carry a U_PDU from one SIS client to the other."""

import glob
import importlib.util
import os
import py_compile
import subprocess
import tempfile

from gnuradio import gr_unittest
from gnuradio import hfstack
from gnuradio.hfstack.sis.client import bind_request, sis_client, unidata_request

from test_support import TOP, free_port_pair

dl = hfstack.dl


def load_example(test, name):
    """The flowgraph class grcc generates from examples/NAME.grc."""
    with tempfile.TemporaryDirectory() as out:
        done, generated = compile_example(name, out)
        test.assertEqual(done.returncode, 0, done.stdout + done.stderr)
        spec = importlib.util.spec_from_file_location(name, generated)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    return getattr(module, name)


def compile_example(name, out):
    env = dict(os.environ, GRC_BLOCKS_PATH=os.path.join(TOP, "grc"))
    grc = os.path.join(TOP, "examples", name + ".grc")
    done = subprocess.run(["grcc", "-o", out, grc], capture_output=True, text=True, env=env, timeout=300)
    if os.path.exists(os.path.join(out, name, name + ".cpp")):
        return done, os.path.join(out, name, name + ".cpp")  # C++ output: a directory
    return done, os.path.join(out, name + ".py")


class qa_grc_examples(gr_unittest.TestCase):

    def test_examples_compile(self):
        flowgraphs = sorted(glob.glob(os.path.join(TOP, "examples", "*.grc")))
        self.assertGreater(len(flowgraphs), 0)
        with tempfile.TemporaryDirectory() as out:
            for grc in flowgraphs:
                done, generated = compile_example(os.path.basename(grc)[:-4], out)
                self.assertEqual(done.returncode, 0, f"{grc}:\n{done.stdout}{done.stderr}")
                if generated.endswith(".cpp"):
                    # Built and run against an install by tests/install_downstream.sh.
                    self.assertTrue(os.path.exists(os.path.join(os.path.dirname(generated),
                                                                "CMakeLists.txt")))
                else:
                    py_compile.compile(generated, doraise=True)

    def test_hardware_and_clocked_examples_raise_no_throttle_warning(self):
        """The radio front end is paced by its sound card, USRP or clock, and so are the
        modem emulators: GRC's "may not have flow control" warning was misleading."""
        with tempfile.TemporaryDirectory() as out:
            for name in ("node_audio", "node_usrp", "node_emulator_pair",
                         "gui_audio", "gui_usrp", "gui_loopback"):
                with self.subTest(example=name):
                    done, _ = compile_example(name, out)
                    self.assertEqual(done.returncode, 0, done.stdout + done.stderr)
                    self.assertNotIn("flow control", done.stdout + done.stderr)

    def test_impossible_rate_and_interleaver_refused_by_grc(self):
        """Accepted until run time before; now the block's asserts refuse the pair."""
        import yaml
        with open(os.path.join(TOP, "examples", "node_modem_loopback.grc")) as f:
            doc = yaml.safe_load(f)
        with tempfile.TemporaryDirectory() as out:
            for rate, interleaver, ok in (("9600", '"none"', False), ("75", '"medium"', False),
                                          ("12800", '"none"', True), ("9600", '"very_long"', True)):
                with self.subTest(rate=rate, interleaver=interleaver):
                    for b in doc["blocks"]:
                        if b["id"] == "hfstack_s4539_tx":
                            b["parameters"].update(data_rate=rate, interleaver=interleaver)
                    path = os.path.join(out, "node_modem_loopback.grc")
                    with open(path, "w") as f:
                        yaml.safe_dump(doc, f)
                    env = dict(os.environ, GRC_BLOCKS_PATH=os.path.join(TOP, "grc"))
                    done = subprocess.run(["grcc", "-o", out, path], capture_output=True,
                                          text=True, env=env, timeout=300)
                    self.assertEqual(done.returncode == 0, ok, done.stdout + done.stderr)
                    if not ok:
                        self.assertIn("s4539_pair_ok", done.stdout + done.stderr)

    def test_modem_loopback_example_runs(self):
        flowgraph = load_example(self, "node_modem_loopback")
        port = free_port_pair()
        tb = flowgraph(sis_port=port)
        tb.start()
        clients = []
        try:
            for p in (port, port + 1):
                c = sis_client(port=p)
                clients.append(c)
                c.send(bind_request(3))
                self.assertEqual(c.receive().type, dl.sis_type.bind_accepted)
        finally:
            for c in clients:
                c.close()
            tb.stop()
            tb.wait()

    def test_emulator_pair_example_carries_a_updu(self):
        flowgraph = load_example(self, "node_emulator_pair")
        port = free_port_pair()
        # The test's clients do not answer S_KEEP_ALIVE: no supervision at 50x.
        tb = flowgraph(sis_port=port, time_scale=50.0,
                       options="mode=2400S;supervision.keep_alive_interval_s=36000")
        tb.start()
        clients = []
        try:
            for p in (port, port + 1):
                c = sis_client(port=p, timeout=60.0)
                clients.append(c)
                c.send(bind_request(3))
                self.assertEqual(c.receive().type, dl.sis_type.bind_accepted)
            clients[0].send(unidata_request("0.0.0.2", 3, b"through the emulated modems"))
            got = clients[1].receive_type(dl.sis_type.unidata_indication)
        finally:
            for c in clients:
                c.close()
            tb.stop()
            tb.wait()
        self.assertEqual(got.payload, b"through the emulated modems")

    def test_pcap_capture_script_writes_its_bursts_and_ends(self):
        """Run from a script (stdin not a terminal), the generated flowgraph writes its
        bursts and ends by itself; it used to stop at its "Press Enter" prompt at
        once, leaving an empty capture."""
        with tempfile.TemporaryDirectory() as out:
            done, generated = compile_example("pcap_capture", out)
            self.assertEqual(done.returncode, 0, done.stdout + done.stderr)
            pcap = os.path.join(out, "bursts.pcap")
            ran = subprocess.run(["/usr/bin/python3", generated, "-o", pcap, "-n", "3"],
                                 stdin=subprocess.DEVNULL, capture_output=True, text=True,
                                 cwd=out, env=os.environ, timeout=120)
            self.assertEqual(ran.returncode, 0, ran.stdout + ran.stderr)
            with open(pcap, "rb") as f:
                data = f.read()
        records, offset = 0, 24  # pcap global header, then 16-byte record headers
        while offset + 16 <= len(data):
            records += 1
            offset += 16 + int.from_bytes(data[offset + 8:offset + 12], "little")
        self.assertEqual(records, 3 * 4)  # four D_PDUs per burst


if __name__ == "__main__":
    gr_unittest.run(qa_grc_examples)
