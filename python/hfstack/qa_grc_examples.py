#!/usr/bin/env python3
#
# Copyright 2026 gr-hfstack authors.
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""Every examples/*.grc compiles with grcc against our GRC block definitions; the
two-node modem loopback runs: both SIS servers accept a client and bind it."""

import glob
import importlib.util
import os
import py_compile
import subprocess
import tempfile

from gnuradio import gr_unittest
from gnuradio import hfstack
from gnuradio.hfstack.sis_client import bind_request, sis_client

from qa_hfstack_console import free_port_pair

dl = hfstack.dl

TOP = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")


def compile_example(name, out):
    env = dict(os.environ, GRC_BLOCKS_PATH=os.path.join(TOP, "grc"))
    grc = os.path.join(TOP, "examples", name + ".grc")
    done = subprocess.run(["grcc", "-o", out, grc], capture_output=True, text=True, env=env, timeout=300)
    return done, os.path.join(out, name + ".py")


class qa_grc_examples(gr_unittest.TestCase):

    def test_examples_compile(self):
        flowgraphs = sorted(glob.glob(os.path.join(TOP, "examples", "*.grc")))
        self.assertGreater(len(flowgraphs), 0)
        with tempfile.TemporaryDirectory() as out:
            for grc in flowgraphs:
                done, generated = compile_example(os.path.basename(grc)[:-4], out)
                self.assertEqual(done.returncode, 0, f"{grc}:\n{done.stdout}{done.stderr}")
                py_compile.compile(generated, doraise=True)

    def test_modem_loopback_example_runs(self):
        with tempfile.TemporaryDirectory() as out:
            done, generated = compile_example("node_modem_loopback", out)
            self.assertEqual(done.returncode, 0, done.stdout + done.stderr)
            spec = importlib.util.spec_from_file_location("node_modem_loopback", generated)
            module = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(module)
        port = free_port_pair()
        tb = module.node_modem_loopback(sis_port=port)
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


if __name__ == "__main__":
    gr_unittest.run(qa_grc_examples)
