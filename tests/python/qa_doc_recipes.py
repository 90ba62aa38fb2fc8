#!/usr/bin/env python3
#
# Copyright 2026 gr-hfstack authors.
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""The step-by-step recipes of docs/ip-client.md, docs/pep.md and docs/networks.md (IP
through a hub), run as written: each shell block marked `<!-- recipe: ... -->` goes to
`bash -e` unchanged, so a recipe that leaves out a step (a loopback down, a missing
ipc:// directory, a route) fails here instead of for a reader. The only differences from
a reader's shell: hfstack-* on PATH run the checkout's apps with this interpreter, and
the block runs in a mount namespace of its own with fresh /run, /etc/netns and
/var/lib/hfstack, so its namespace names, ipc:// files, /etc/netns files and ARQ journals
cannot meet a real installation's or another test's. Needs root (the recipes do); skips,
saying why, where namespaces or curl, ping, nft, unshare are missing."""

import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile

from gnuradio import gr_unittest
from gnuradio.hfstack.testbed.ip import unavailable

from test_support import APPS

DOCS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "docs")
RECIPE = re.compile(r"^<!-- recipe:[^>]*-->\n```sh\n(.*?)^```", re.M | re.S)
TIMEOUT_S = 300


def recipes(doc):
    """The marked shell blocks of docs/DOC, in order."""
    with open(os.path.join(DOCS, doc)) as f:
        return RECIPE.findall(f.read())


class qa_doc_recipes(gr_unittest.TestCase):

    def test_every_doc_marks_its_recipe(self):
        for doc in ("ip-client.md", "pep.md", "networks.md"):
            self.assertEqual(len(recipes(doc)), 1, doc)

    def run_recipe(self, doc):
        why = unavailable()
        if why:
            self.skipTest(why)
        for tool in ("curl", "nft", "unshare"):
            if not shutil.which(tool):
                self.skipTest(f"{tool} is not installed (make test installs it)")
        (script,) = recipes(doc)
        bin_dir = tempfile.mkdtemp(prefix="hfstack-recipe-")
        self.addCleanup(shutil.rmtree, bin_dir, True)
        for app in os.listdir(APPS):
            if app.startswith("hfstack-"):
                with open(os.path.join(bin_dir, app), "w") as f:
                    f.write(f'#!/bin/sh\nexec {sys.executable} {os.path.join(APPS, app)} "$@"\n')
                os.chmod(os.path.join(bin_dir, app), 0o755)
        env = dict(os.environ, PATH=f"{bin_dir}:{os.environ.get('PATH', '/usr/bin:/bin')}")
        # The mount points of the private copies (the nodes' ARQ journals included, so
        # that no run restores another's windows).
        for point in ("/etc/netns", "/var/lib/hfstack"):
            os.makedirs(point, exist_ok=True)
        private = ("mount --make-rprivate / && mount -t tmpfs recipe /run && "
                   "mount -t tmpfs recipe /etc/netns && "
                   "mount -t tmpfs recipe /var/lib/hfstack && exec bash -e -c \"$0\"")
        # Output to a file: what the recipe leaves running in the background would hold
        # a pipe open after a failed step.
        out_file = tempfile.TemporaryFile(mode="w+")
        self.addCleanup(out_file.close)
        p = subprocess.Popen(["unshare", "--mount", "bash", "-c", private, script],
                             stdout=out_file, stderr=subprocess.STDOUT, text=True, env=env,
                             start_new_session=True)
        try:
            p.wait(timeout=TIMEOUT_S)
        except subprocess.TimeoutExpired:
            pass
        finally:
            # Whatever a failed recipe left running (its namespaces go with the mount
            # namespace's last process).
            try:
                os.killpg(p.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            p.wait()
        out_file.seek(0)
        out = out_file.read()
        self.assertEqual(p.returncode, 0, f"{doc}: the recipe failed:\n{out[-3000:]}")
        return out

    def test_ip_client_recipe(self):
        out = self.run_recipe("ip-client.md")
        self.assertIn("3 packets transmitted, 3 received", out)

    def test_network_hub_recipe(self):
        out = self.run_recipe("networks.md")
        # Spoke 1 to the hub's subnet, then to spoke 2's through the hub (3 replies each
        # within the deadline: ping goes on sending while it waits); the web page.
        # (ping -c 3 -w goes on until 3 replies; one more may be on its way then).
        received = [int(n) for n in re.findall(r"\d+ packets transmitted, (\d+) received", out)]
        self.assertEqual(len(received), 2, out[-3000:])
        self.assertTrue(all(n >= 3 for n in received), received)
        self.assertIn("<title>directory listing", out.lower())

    def test_pep_recipe(self):
        out = self.run_recipe("pep.md")
        self.assertEqual(out.lower().count("<title>directory listing"), 2, out[-3000:])


if __name__ == "__main__":
    gr_unittest.main()
