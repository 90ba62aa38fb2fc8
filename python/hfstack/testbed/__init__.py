#
# Copyright 2026 gr-hfstack authors.
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""Test beds for running the stack with real processes and Linux's own network stack:
two network namespaces joined by STANAG 5066 nodes on emulated modems.

  ip    IP clients on TUN devices in two namespaces (testbed.ip.testbed)
  pep   hfstack-node --pep (or hfstack-pep) in two namespaces (testbed.pep.pep_testbed)
  web   a test web site and a headless browser loading it through the HF-PEP
"""

import subprocess


def stop_processes(processes, grace_s=20):
    """Ends the processes a test bed started: SIGTERM to each still running (newest
    first), SIGKILL to any that has not ended grace_s seconds later."""
    for p in reversed(processes):
        if p.poll() is None:
            p.terminate()
    for p in reversed(processes):
        try:
            p.wait(timeout=grace_s)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait(timeout=grace_s)
