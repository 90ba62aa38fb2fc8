#!/usr/bin/env python3
#
# Copyright 2026 gr-hfstack authors.
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""Every examples/*.grc compiles with grcc against our GRC block definitions."""

import glob
import os
import py_compile
import subprocess
import tempfile

from gnuradio import gr_unittest

TOP = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")


class qa_grc_examples(gr_unittest.TestCase):

    def test_examples_compile(self):
        flowgraphs = sorted(glob.glob(os.path.join(TOP, "examples", "*.grc")))
        self.assertGreater(len(flowgraphs), 0)
        env = dict(os.environ, GRC_BLOCKS_PATH=os.path.join(TOP, "grc"))
        with tempfile.TemporaryDirectory() as out:
            for grc in flowgraphs:
                done = subprocess.run(["grcc", "-o", out, grc], capture_output=True,
                                      text=True, env=env, timeout=300)
                self.assertEqual(done.returncode, 0, f"{grc}:\n{done.stdout}{done.stderr}")
                generated = os.path.join(out, os.path.basename(grc)[:-4] + ".py")
                py_compile.compile(generated, doraise=True)


if __name__ == "__main__":
    gr_unittest.run(qa_grc_examples)
