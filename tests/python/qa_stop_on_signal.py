#!/usr/bin/env python3
#
# Copyright 2026 gr-hfstack authors.
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""A stop request set by a signal handler ends the wait it interrupts: the apps' stop
event (cli.stop_event) set from SIGALRM while the main thread waits on it in a tight
loop, many times over. threading.Event deadlocks here within a few rounds (its set()
takes the lock the interrupted wait() holds), which hung a node stopped by SIGTERM."""

import subprocess
import sys
import textwrap

from gnuradio import gr_unittest

ROUNDS = 2000

# Each round arms a one-shot timer a seeded random few hundred microseconds ahead and
# polls the event until the handler has set it; "done" only when every round ended.
CHILD = textwrap.dedent(f"""
    import random, signal, sys
    from gnuradio.hfstack import cli
    make = cli.stop_event if sys.argv[1] == "stop_event" else __import__("threading").Event
    rng = random.Random(7)
    for _ in range({ROUNDS}):
        stop = make()
        signal.signal(signal.SIGALRM, lambda *_: stop.set())
        signal.setitimer(signal.ITIMER_REAL, rng.uniform(50e-6, 500e-6))
        while not stop.wait(0):
            pass
        stop.wait()
    print("done")
""")


def rounds_with(kind, timeout):
    """'done' if every round of the child ended, 'hung' if it did not within `timeout`."""
    child = subprocess.Popen([sys.executable, "-c", CHILD, kind], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
    try:
        out, err = child.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        child.kill()
        child.communicate()
        return "hung"
    if child.returncode != 0:
        raise AssertionError(f"the child failed: {err}")
    return out.strip()


class qa_stop_on_signal(gr_unittest.TestCase):

    def test_set_from_a_signal_handler_ends_every_wait(self):
        self.assertEqual(rounds_with("stop_event", timeout=120), "done")

    def test_threading_event_is_what_hung(self):
        """The check above can fail: the same rounds with threading.Event hang."""
        self.assertEqual(rounds_with("threading", timeout=10), "hung")


if __name__ == "__main__":
    gr_unittest.run(qa_stop_on_signal)
