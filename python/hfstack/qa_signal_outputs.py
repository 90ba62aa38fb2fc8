#!/usr/bin/env python3
#
# Copyright 2026 gr-hfstack authors.
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""What the displays are fed: s4539_rx's optional symbols output (the equalised data
symbols on the mode's constellation, every data symbol of a burst, for a serial-tone
and an App C mode, real and complex input) and its burst_info dicts; the same bursts
with and without the output connected; burst_history's vector of the last values;
the radio front end's air, received and symbols outputs for the loopback and file
kinds."""

import threading

import numpy as np
import pmt
from gnuradio import blocks, gr, gr_unittest
from gnuradio import hfstack
from gnuradio.hfstack import radio as R
from gnuradio.hfstack.burst_history import burst_history

from test_support import awgn_link, recorder

FS = 9600.0


def burst(data, data_rate, interleaver):
    return hfstack.make_pdu(data, data_rate=data_rate, interleaver=interleaver)


def receive(pdu, seconds, complex_signal=False, with_symbols=True, snr_db=30.0):
    """(symbols or None, burst_info dicts, received PDUs) of one burst through AWGN."""
    tb, tx, _, rx = awgn_link(FS, complex_signal, seconds, snr_db, seed=7)
    info, got = blocks.message_debug(), blocks.message_debug()
    symbols = None
    if with_symbols:
        symbols = blocks.vector_sink_c()
        tb.connect(rx, symbols)
    tb.msg_connect((rx, "burst_info"), (info, "store"))
    tb.msg_connect((rx, "out"), (got, "store"))
    tx.to_basic_block()._post(pmt.intern("in"), pdu)
    tb.run()
    return (None if symbols is None else np.array(symbols.data()),
            [pmt.to_python(info.get_message(i)) for i in range(info.num_messages())],
            [got.get_message(i) for i in range(got.num_messages())])


class symbol_sink(gr.sync_block):
    """Keeps the symbols it is given and says when the first have come: the receiver
    publishes a burst's burst_info before its symbols leave its work call."""

    def __init__(self):
        gr.sync_block.__init__(self, "symbol_sink", [np.complex64], None)
        self.symbols = []
        self.arrived = threading.Event()

    def work(self, input_items, output_items):
        self.symbols.extend(input_items[0])
        self.arrived.set()
        return len(input_items[0])


def phases_of(symbols):
    """Each symbol's nearest 8PSK point (0..7)."""
    return np.round(np.angle(symbols) / (np.pi / 4)).astype(int) % 8


class qa_signal_outputs(gr_unittest.TestCase):

    def test_serial_tone_symbols_are_the_bursts_8psk(self):
        data = bytes(np.random.default_rng(3).integers(0, 256, 300, dtype=np.uint8))
        symbols, info, got = receive(burst(data, 2400, "short"), 8.0)
        self.assertEqual(len(info), 1)
        self.assertEqual(info[0]["mode"], "2400S")
        self.assertEqual(info[0]["bytes"], len(data))
        self.assertGreater(info[0]["snr_db"], 25.0)
        self.assertEqual(set(info[0]) >= {"snr_db", "frequency_offset_hz", "data_rate", "interleaver",
                                          "bytes_bad", "time"}, True)
        self.assertEqual(bytes(pmt.u8vector_elements(pmt.cdr(got[0]))), data)
        # 2400S: frames of 32 data and 16 probe symbols, 3 bits a data symbol, whole
        # 0.6 s interleaver blocks (960 data symbols each) until the EOM's block.
        self.assertEqual(len(symbols) % 960, 0)
        self.assertGreaterEqual(len(symbols), len(data) * 8 * 2 / 3)
        self.assertLess(np.max(np.abs(np.abs(symbols) - 1)), 0.3)  # on the unit circle at 30 dB
        error = np.abs(symbols - np.exp(1j * np.pi / 4 * phases_of(symbols)))
        self.assertLess(np.mean(error), 0.1)
        self.assertEqual(set(phases_of(symbols)), set(range(8)))

    def test_app_c_qpsk_symbols_are_unscrambled_onto_qpsk(self):
        data = bytes(np.random.default_rng(4).integers(0, 256, 300, dtype=np.uint8))
        symbols, info, _ = receive(burst(data, 3200, "short"), 6.0, complex_signal=True)
        self.assertEqual([i["mode"] for i in info], ["3200S"])
        self.assertGreater(len(symbols), 0)
        # The scrambler turns the points round the whole 8PSK circle on the air; taken
        # back, only QPSK's four remain.
        self.assertEqual(set(phases_of(symbols)), {0, 2, 4, 6})

    def test_qam_symbols_fill_the_qam_constellation(self):
        data = bytes(np.random.default_rng(5).integers(0, 256, 600, dtype=np.uint8))
        symbols, info, _ = receive(burst(data, 9600, "short"), 6.0, snr_db=35.0)
        self.assertEqual([i["mode"] for i in info], ["9600S"])
        # 64QAM: points of many amplitudes, the outer ones at 1.
        amplitudes = np.abs(symbols)
        self.assertLess(np.max(amplitudes), 1.2)
        self.assertGreater(len(np.unique(np.round(amplitudes, 1))), 5)

    def test_bursts_are_the_same_with_and_without_the_symbols_output(self):
        data = bytes(range(200))
        _, info_with, got_with = receive(burst(data, 1200, "short"), 6.0, with_symbols=True)
        none, info_without, got_without = receive(burst(data, 1200, "short"), 6.0, with_symbols=False)
        self.assertIsNone(none)
        self.assertEqual([hfstack.pdu_bytes(m) for m in got_with],
                         [hfstack.pdu_bytes(m) for m in got_without])
        self.assertEqual(len(got_with), 1)
        strip = lambda infos: [{k: v for k, v in i.items() if k != "time"} for i in infos]  # noqa: E731
        self.assertEqual(strip(info_with), strip(info_without))

    def test_burst_history_keeps_the_last_values(self):
        history = burst_history("snr_db", 3)
        out = blocks.message_debug()
        tb = gr.top_block()
        tb.msg_connect((history, "out"), (out, "store"))
        port = pmt.intern("in")
        for k, snr in enumerate((10.0, 11.0, 12.0, 13.0)):
            info = pmt.dict_add(pmt.make_dict(), pmt.intern("snr_db"), pmt.from_double(snr))
            # burst_info dicts and received PDUs alike
            history.to_basic_block()._post(port, info if k % 2 else pmt.cons(info, pmt.init_u8vector(1, [0])))
        history.to_basic_block()._post(port, pmt.make_dict())  # no snr_db: nothing
        history.to_basic_block()._post(pmt.intern("system"), pmt.cons(pmt.intern("done"), pmt.from_long(1)))
        tb.start()
        tb.wait()
        self.assertEqual(history.values(), [11.0, 12.0, 13.0])
        self.assertEqual(out.num_messages(), 4)
        last = out.get_message(3)
        self.assertEqual(list(pmt.f32vector_elements(pmt.cdr(last))), [11.0, 12.0, 13.0])
        with self.assertRaises(ValueError):
            burst_history("snr_db", 0)

    def test_loopback_radios_show_air_received_and_symbols(self):
        tb = gr.top_block()
        a = R.radio(kind="loopback", profile="awgn", snr_db=30.0, time_scale=20.0, seed=1)
        b = R.radio(kind="loopback", profile="awgn", snr_db=30.0, time_scale=20.0, seed=2)
        R.join(tb, a, b)
        self.assertEqual((R.AIR_PORT, R.RECEIVED_PORT, R.SYMBOLS_PORT), (0, 1, 2))
        received = blocks.vector_sink_f()
        symbols = symbol_sink()
        info = recorder()
        tb.connect((b, R.RECEIVED_PORT), received)
        tb.connect((b, R.SYMBOLS_PORT), symbols)
        tb.msg_connect((b, "burst_info"), (info, "in"))
        tb.start()
        try:
            a.tx._post(pmt.intern("in"), burst(bytes(100), 2400, "short"))
            heard = info.wait_for(lambda m: len(m) >= 1)
            symbols_came = symbols.arrived.wait(timeout=30)
        finally:
            tb.stop()
            tb.wait()
        self.assertTrue(heard)
        self.assertEqual(pmt.to_python(info.messages[0])["mode"], "2400S")
        self.assertTrue(symbols_came)
        self.assertGreater(len(symbols.symbols), 0)
        x = np.array(received.data())
        self.assertGreater(len(x), int(FS))  # the audio B heard, silence and the burst
        self.assertGreater(np.max(np.abs(x)), 0.1)


if __name__ == "__main__":
    gr_unittest.run(qa_signal_outputs)
