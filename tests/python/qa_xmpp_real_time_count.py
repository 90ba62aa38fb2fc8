#!/usr/bin/env python3
#
# Copyright 2026 gr-hfstack authors.
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""bench/xmpp_section_b_real_time.py's throughput count, on arrival times made up here:
messages that arrive together with the first (over TLS, one 8 KiB record holds about
seven 1024-byte ones) must not be credited to the span, so the figure counted from the
last of them is the link's. No servers, no namespaces."""

import importlib.util
import os

from gnuradio import gr_unittest

from test_support import TOP

spec = importlib.util.spec_from_file_location(
    "xmpp_section_b_real_time", os.path.join(TOP, "bench", "xmpp_section_b_real_time.py"))
real_time = importlib.util.module_from_spec(spec)
spec.loader.exec_module(real_time)


class qa_xmpp_real_time_count(gr_unittest.TestCase):

    def test_messages_one_at_a_time_form_no_burst(self):
        arrivals = [(10.0 * i, 1024) for i in range(5)]
        self.assertEqual(real_time.first_burst(arrivals), 1)

    def test_a_record_of_seven_counts_from_its_last(self):
        cycle, per_record = 67.8, 7
        arrivals = [(cycle * k + 0.001 * i, 1024) for k in range(4) for i in range(per_record)]
        burst = real_time.first_burst(arrivals)
        self.assertEqual(burst, per_record)
        bunched, _ = real_time.steady(arrivals, 1200)
        settled, _ = real_time.steady(arrivals[burst - 1:], 1200)
        # Three records after the first one, in three cycles (less the first record's
        # spread): 7 messages a cycle.
        self.assertAlmostEqual(settled, per_record * 1024 * 8 / cycle, delta=1.0)
        # Counted from the first arrival, the first record's other six are credited too.
        self.assertGreater(bunched, settled * 1.2)

    def test_too_few_arrivals_give_no_figure(self):
        self.assertEqual(real_time.first_burst([]), 0)


if __name__ == "__main__":
    gr_unittest.run(qa_xmpp_real_time_count)
