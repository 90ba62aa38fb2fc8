#!/usr/bin/env python3
#
# Copyright 2026 gr-hfstack authors.
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""A node pair in STANAG 4539 App C modes Table C-6 cannot announce (US, VS, M, VL
interleavers, 12800U), run as the nodes' fixed mode: the bursts name the mode to the
modem (metadata data_rate and interleaver) and data crosses, on emulated modems and on
the real modem (loopback radios through AWGN). No sleeps: the test waits on what the
recorders receive, with a bounded timeout."""

import pmt
from gnuradio import gr_unittest
from gnuradio import hfstack
from gnuradio.hfstack import modes
from gnuradio.hfstack import radio as radio_frontend

from test_support import QUIET, arq_exchange

# Modes and ARQ as the emulator's test runs them, without channel access (two nodes).
OPTIONS = QUIET + ";channel_access.mode=none"


def exchange(test, mode, radios, scale, payloads):
    """Payloads by ARQ from node 1 to node 2, both in `mode`; node 1's bursts."""
    return arq_exchange(test, f"mode={mode};{OPTIONS}", radios, scale, payloads)[1]


def burst_mode(msg):
    meta = pmt.car(msg)
    return modes.mode_name(pmt.to_long(pmt.dict_ref(meta, pmt.intern("data_rate"), pmt.PMT_NIL)),
                           pmt.symbol_to_string(pmt.dict_ref(meta, pmt.intern("interleaver"),
                                                             pmt.PMT_NIL)))


class qa_node_appc_modes(gr_unittest.TestCase):

    def test_node_pair_on_emulated_modems_in_each_app_c_interleaver(self):
        scale = 20.0
        payloads = [bytes((i * 17 + k) % 256 for k in range(600)) for i in range(3)]
        for mode in ("3200US", "9600VS", "9600M", "9600VL", "12800U"):
            with self.subTest(mode=mode):
                radios = [radio_frontend.radio(kind="emulator", time_scale=scale, profile="",
                                               seed=seed) for seed in (1, 2)]
                air = exchange(self, mode, radios, scale, payloads)
                # Every burst asks the modem for this mode, by the modem's own names.
                self.assertEqual({burst_mode(m) for m in air}, {mode})
                self.assertGreater(radios[1].stats()["bursts_received"], 0)

    def test_node_pair_on_the_real_modem_at_9600VS(self):
        # The STANAG 4539 modem (64QAM, very short interleaver) through AWGN at 30 dB.
        scale = 4.0
        radios = [radio_frontend.radio(kind="loopback", time_scale=scale, profile="awgn",
                                       snr_db=30.0, seed=seed, data_rate=9600,
                                       interleaver="very_short") for seed in (1, 2)]
        payloads = [bytes((i * 11 + k) % 256 for k in range(400)) for i in range(2)]
        air = exchange(self, "9600VS", radios, scale, payloads)
        self.assertEqual({burst_mode(m) for m in air}, {"9600VS"})
        # Both receivers decoded bursts: the data one way, the acknowledgements back.
        self.assertGreater(radios[0].stats()["bursts_received"], 0)
        self.assertGreater(radios[1].stats()["bursts_received"], 0)

    def test_app_c_mode_with_rate_adaptation_is_refused_in_one_line(self):
        with self.assertRaises(ValueError) as cm:
            hfstack.node("0.0.0.1", "mode=9600VS;rate_adaptation=true", 1.0)
        self.assertIn("mode 9600VS cannot be used with rate_adaptation", str(cm.exception))
        self.assertNotIn("\n", str(cm.exception))

    def test_one_reason_for_the_zero_interleaver_everywhere(self):
        reason = "the zero interleaver (Z) is not implemented in our modem"
        self.assertIn(reason, modes.mode_problem("2400Z"))
        with self.assertRaises(ValueError) as cm:
            hfstack.node("0.0.0.1", "mode=2400Z", 1.0)
        self.assertIn("option mode = '2400Z': " + reason, str(cm.exception))
        self.assertFalse(modes.s4539_pair_ok(2400, "none"))  # GRC's asserts
        self.assertNotIn("2400Z", modes.modem_mode_names())
        self.assertEqual(modes.mode_problem("9600vs"), "")


if __name__ == "__main__":
    gr_unittest.run(qa_node_appc_modes)
