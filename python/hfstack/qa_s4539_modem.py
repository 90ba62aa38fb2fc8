#!/usr/bin/env python3
#
# Copyright 2026 gr-hfstack authors.
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""s4539_tx / s4539_rx: PDUs through the transmitter, the HF channel and the receiver
come back as PDUs with their mode and metadata, in audio and at complex baseband, in
either family of modes to one receiver; tags, PTT and status follow each transmission;
bad PDUs are refused."""

import numpy as np
import pmt

from gnuradio import blocks, gr, gr_unittest
from gnuradio import hfstack

from test_support import awgn_link


def pdu(data, **meta):
    d = pmt.make_dict()
    for k, v in meta.items():
        d = pmt.dict_add(d, pmt.intern(k), pmt.to_pmt(v))
    return pmt.cons(d, pmt.init_u8vector(len(data), list(data)))


def meta_of(msg):
    return pmt.to_python(pmt.car(msg))


def run_link(pdus, fs, complex_signal, seconds, snr_db=20.0, deliver_per_block=False):
    """Posts `pdus` to a transmitter joined to a receiver through the channel, runs
    `seconds` of samples, and returns (received PDUs, tx status, ptt, tags, rx status)."""
    tb, tx, head, rx = awgn_link(fs, complex_signal, seconds, snr_db, deliver_per_block=deliver_per_block)
    tags = blocks.vector_sink_c() if complex_signal else blocks.vector_sink_f()
    got, tx_status, ptt, rx_status = (blocks.message_debug() for _ in range(4))
    tb.connect(head, tags)
    tb.msg_connect((rx, "out"), (got, "store"))
    tb.msg_connect((tx, "status"), (tx_status, "store"))
    tb.msg_connect((tx, "ptt"), (ptt, "store"))
    tb.msg_connect((rx, "status"), (rx_status, "store"))
    for p in pdus:
        tx.to_basic_block()._post(pmt.intern("in"), p)
    tb.run()
    return ([got.get_message(i) for i in range(got.num_messages())],
            [pmt.to_python(tx_status.get_message(i))["event"] for i in range(tx_status.num_messages())],
            [pmt.to_python(ptt.get_message(i)) for i in range(ptt.num_messages())],
            [(pmt.symbol_to_string(t.key), t.offset) for t in tags.tags()],
            [pmt.to_python(rx_status.get_message(i))["event"] for i in range(rx_status.num_messages())])


def transmitted(data, fs, seconds, data_rate=2400):
    """`seconds` of the transmitter's audio at fs with `data` as one burst from the start."""
    tb = gr.top_block()
    tx = hfstack.s4539_tx(fs, False, data_rate, "short")
    samples = blocks.vector_sink_f()
    tb.connect(tx, blocks.head(gr.sizeof_float, int(seconds * fs)), samples)
    tx.to_basic_block()._post(pmt.intern("in"), pdu(data))
    tb.run()
    return np.array(samples.data(), dtype=np.float32)


def received_symbols(audio, fs):
    """(the receiver's tapped symbols, its PDUs) for `audio`."""
    tb = gr.top_block()
    rx = hfstack.s4539_rx(fs, False, False)
    symbols = blocks.vector_sink_c()
    got = blocks.message_debug()
    tb.connect(blocks.vector_source_f(audio.tolist()), rx, symbols)
    tb.msg_connect((rx, "out"), (got, "store"))
    tb.run()
    return np.array(symbols.data()), [got.get_message(i) for i in range(got.num_messages())]


def psk8_error_db(symbols):
    """Mean squared distance to the nearest 8PSK point, in dB (unit points)."""
    points = np.exp(1j * np.pi / 4 * np.arange(8))
    return 10 * np.log10(np.mean(np.min(np.abs(symbols[:, None] - points[None, :]) ** 2, axis=1)))


class qa_s4539_modem(gr_unittest.TestCase):

    def test_audio_link_carries_two_bursts_with_their_modes(self):
        rng = np.random.default_rng(1)
        a = bytes(rng.integers(0, 256, 120, dtype=np.uint8))
        b = bytes(rng.integers(0, 256, 60, dtype=np.uint8))
        got, tx_status, ptt, tags, rx_status = run_link(
            [pdu(a), pdu(b, data_rate=600, interleaver="short")], 8000, False, 9.0)
        self.assertEqual(len(got), 2)
        first, second = (meta_of(m) for m in got)
        self.assertEqual(bytes(pmt.u8vector_elements(pmt.cdr(got[0]))), a)
        self.assertEqual(bytes(pmt.u8vector_elements(pmt.cdr(got[1]))), b)
        self.assertEqual((first["data_rate"], first["interleaver"]), (2400, "short"))
        self.assertEqual((second["data_rate"], second["interleaver"]), (600, "short"))
        self.assertFalse(first["bytes_bad"])
        self.assertGreater(first["snr_db"], 14)
        # A burst shorter than 20 s: its recent report is the whole burst's.
        self.assertAlmostEqual(first["snr_db_recent"], first["snr_db"], places=6)
        self.assertAlmostEqual(first["frequency_offset_hz"], 0.0, delta=1.0)
        self.assertEqual(tx_status, ["tx_started", "tx_finished"] * 2)
        self.assertEqual(ptt, [True, False] * 2)
        self.assertEqual([k for k, _ in tags], ["tx_sob", "tx_eob"] * 2)
        self.assertEqual(tags[0][1], 0)
        self.assertEqual(rx_status, ["carrier_on", "carrier_off"] * 2)

    def test_complex_baseband_link(self):
        data = bytes(range(200))
        got, *_ = run_link([pdu(data, data_rate=1200, interleaver="long")], 9600, True, 12.0)
        self.assertEqual(len(got), 1)
        self.assertEqual(bytes(pmt.u8vector_elements(pmt.cdr(got[0]))), data)
        self.assertEqual(meta_of(got[0])["interleaver"], "long")

    def test_one_receiver_takes_both_families_without_being_told(self):
        # Auto-baud: a 110A burst, App C bursts at 9600 and 12800 bps (a rate alone
        # takes "none" where the default interleaver does not fit) and a 3200 bps one
        # with the very long interleaver, on one stream to one receiver.
        rng = np.random.default_rng(3)
        data = [bytes(rng.integers(0, 256, n, dtype=np.uint8)) for n in (300, 3000, 4000, 1000)]
        got, tx_status, _, _, rx_status = run_link(
            [pdu(data[0], data_rate=1200), pdu(data[1], data_rate=9600), pdu(data[2], data_rate=12800),
             pdu(data[3], data_rate=3200, interleaver="very_long")], 9600, True, 24.0, snr_db=30.0)
        self.assertEqual(tx_status, ["tx_started", "tx_finished"] * 4)
        self.assertEqual(len(got), 4)
        modes = [(meta_of(m)["data_rate"], meta_of(m)["interleaver"]) for m in got]
        self.assertEqual(modes, [(1200, "short"), (9600, "short"), (12800, "none"), (3200, "very_long")])
        for m, d in zip(got, data):
            self.assertEqual(bytes(pmt.u8vector_elements(pmt.cdr(m))), d)
            self.assertFalse(meta_of(m)["bytes_bad"])
        self.assertEqual(rx_status, ["carrier_on", "carrier_off"] * 4)

    def test_a_streaming_receiver_posts_each_burst_in_pieces(self):
        # deliver_per_block: both families post the bytes of each decoded interleaver
        # block at once; a burst's pieces join to what was sent, only its last PDU
        # lacks burst_continues, and status and burst counts stay one per burst.
        rng = np.random.default_rng(4)
        data = [bytes(rng.integers(0, 256, n, dtype=np.uint8)) for n in (400, 3000)]
        got, _, _, _, rx_status = run_link(
            [pdu(data[0], data_rate=1200), pdu(data[1], data_rate=9600)], 9600, True, 12.0,
            snr_db=30.0, deliver_per_block=True)
        bursts, pieces, joined = [], [], b""
        for m in got:
            joined += bytes(pmt.u8vector_elements(pmt.cdr(m)))
            pieces.append(m)
            if not meta_of(m).get("burst_continues", False):
                bursts.append((joined, len(pieces), meta_of(m)))
                joined, pieces = b"", []
        self.assertEqual(pieces, [])  # nothing after the last burst's end
        self.assertEqual([b[0] for b in bursts], data)
        self.assertGreaterEqual(bursts[0][1], 4)  # 1200S: 90 bytes a 0.6 s block
        self.assertGreaterEqual(bursts[1][1], 3)  # 9600S: 1080 bytes a block
        self.assertEqual([(b[2]["data_rate"], b[2]["bytes_bad"]) for b in bursts], [(1200, False), (9600, False)])
        self.assertEqual(rx_status, ["carrier_on", "carrier_off"] * 2)

    def test_symbols_of_a_burst_lost_in_noise_are_not_shown(self):
        # The display's tap: a 2400S burst cut before its end (a fade, the recording
        # stopped) and 6 s of noise after it. The receiver reads noise for blocks before
        # it judges the signal gone; those symbols (a diffuse ring: about 0 dB from the
        # points) were the last a constellation showed. Now only blocks judged part of
        # the burst are given out, so its last 480 symbols sit on the points.
        fs = 9600
        rng = np.random.default_rng(45)
        audio = transmitted(bytes(rng.integers(0, 256, 1500, dtype=np.uint8)), fs, 7.0)
        burst = np.flatnonzero(np.abs(audio) > 1e-4)
        cut = audio[:burst[0] + int(0.8 * (burst[-1] - burst[0]))]
        noise_rms = np.sqrt(np.mean(cut[burst[0]:] ** 2)) / 10 ** (15 / 20) * np.sqrt(fs / 2 / 3000)
        recording = np.concatenate([np.zeros(fs, np.float32), cut, np.zeros(6 * fs, np.float32)])
        recording += rng.normal(0, noise_rms, len(recording)).astype(np.float32)
        symbols, got = received_symbols(np.concatenate([recording, np.zeros(6 * fs, np.float32)]), fs)
        self.assertEqual(len(got), 1)
        self.assertGreater(len(symbols), 4800)
        shown = symbols[-480:]
        self.assertLess(psk8_error_db(shown), -10.0)
        # And a whole burst's symbols, to its end, are all given out.
        whole, got = received_symbols(np.concatenate([audio, np.zeros(6 * fs, np.float32)]), fs)
        self.assertFalse(meta_of(got[0])["bytes_bad"])
        self.assertLess(psk8_error_db(whole[-480:]), -25.0)
        self.assertLess(psk8_error_db(whole), -25.0)

    def test_bad_pdus_and_settings_are_refused(self):
        got, tx_status, ptt, tags, _ = run_link(
            [pmt.intern("not a pdu"), pdu(b"x", data_rate=9601), pdu(b"y", data_rate=75, interleaver="medium"),
             pdu(bytes(6000), data_rate=75)],  # 640 s of air time
            8000, False, 0.5)
        self.assertEqual(got, [])
        self.assertEqual(tx_status, ["tx_error", "tx_error", "tx_error"])
        self.assertEqual(ptt, [])
        self.assertEqual(tags, [])
        with self.assertRaises(ValueError):
            hfstack.s4539_tx(8000, False, 1234, "short")
        with self.assertRaises(ValueError):
            hfstack.s4539_tx(8000, False, 2400, "medium")
        with self.assertRaises(ValueError):
            hfstack.s4539_tx(8000, False, 9600, "none")
        with self.assertRaises(ValueError):
            hfstack.s4539_tx(9601.3)
        with self.assertRaises(ValueError):
            hfstack.s4539_rx(1000)


if __name__ == "__main__":
    gr_unittest.run(qa_s4539_modem)
