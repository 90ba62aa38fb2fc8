#!/usr/bin/env python3
#
# Copyright 2026 gr-hfstack authors.
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""The modem blocks' Python docstrings describe what the blocks do: both waveform
families (they described the serial-tone modes 75-2400 bps only, long after App C came),
and the transmitter's default level that matches the channel's default signal power."""

from gnuradio import gr_unittest
from gnuradio import hfstack


class qa_block_docs(gr_unittest.TestCase):

    def test_modem_docstrings_cover_app_c(self):
        tx, rx = hfstack.s4539_tx.__doc__, hfstack.s4539_rx.__doc__
        for doc in (tx, rx):
            self.assertIn("3200", doc)
            self.assertIn("12800", doc)
            self.assertNotIn("MIL-STD-188-110A serial-tone transmitter (75-2400", doc)
        for name in ("ultra_short", "very_short", "medium", "very_long"):
            self.assertIn(name, tx)
        self.assertIn("0.0625", tx)  # the level and the channel's default agree

    def test_channel_default_signal_power_is_the_modem_level(self):
        for block in (hfstack.hf_channel_ff, hfstack.hf_channel_cc):
            self.assertEqual(block(9600.0, "awgn").signal_power(), 0.25 ** 2)


if __name__ == "__main__":
    gr_unittest.run(qa_block_docs)
