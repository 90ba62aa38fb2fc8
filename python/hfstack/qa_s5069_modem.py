#!/usr/bin/env python3
#
# Copyright 2026 gr-hfstack authors.
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""s4539_tx / s4539_rx with STANAG 5069 (110D App D) modes by name: PDUs through
the transmitter and the receiver come back with their mode, noise-free, at complex
baseband and in audio; a receiver listening for both standards takes a 4539 burst and a
5069 burst from one recording without being told which; the readings and the constraint
length reach the waveform; bad mode names and settings are refused with their reason;
wider bandwidths (up to 48 kHz) at a radio's rate, and a rate too low for them refused."""

import numpy as np
import pmt

from gnuradio import blocks, gr, gr_unittest
from gnuradio import hfstack
from gnuradio.hfstack import sim


def pdu(data, **meta):
    d = pmt.make_dict()
    for k, v in meta.items():
        d = pmt.dict_add(d, pmt.intern(k), v if isinstance(v, pmt.pmt_base) else pmt.to_pmt(v))
    return pmt.cons(d, pmt.init_u8vector(len(data), list(data)))


def payload(n, seed):
    return bytes(np.random.default_rng(seed).integers(0, 256, n, dtype=np.uint8))


def transmit(pdus, fs=9600, complex_signal=True, settings="", tail_s=1.0, **make):
    """The transmitter's samples for `pdus`, back to back (silence between and `tail_s`
    after): a recording."""
    seconds = sum(sim.air_time(name, len(data)) + 0.2 for name, data, _ in pdus) + tail_s
    tb = gr.top_block()
    tx = hfstack.s4539_tx(float(fs), complex_signal, s5069_settings=settings, **make)
    head = blocks.head(gr.sizeof_gr_complex if complex_signal else gr.sizeof_float, int(seconds * fs))
    sink = blocks.vector_sink_c() if complex_signal else blocks.vector_sink_f()
    status = blocks.message_debug()
    tb.connect(tx, head, sink)
    tb.msg_connect((tx, "status"), (status, "store"))
    for _, data, meta in pdus:
        tx.to_basic_block()._post(pmt.intern("in"), pdu(data, **meta))
    tb.run()
    events = [pmt.to_python(status.get_message(i)) for i in range(status.num_messages())]
    return np.array(sink.data()), events


def receive(samples, fs=9600, complex_signal=True, listen="5069", settings="", threads=1):
    """(PDUs as (metadata, bytes), status events) the receiver posts for `samples`."""
    tb = gr.top_block()
    src = blocks.vector_source_c(samples) if complex_signal else blocks.vector_source_f(samples)
    rx = hfstack.s4539_rx(float(fs), complex_signal, False, listen, settings, threads)
    got, status = blocks.message_debug(), blocks.message_debug()
    tb.connect(src, rx)
    tb.msg_connect((rx, "out"), (got, "store"))
    tb.msg_connect((rx, "status"), (status, "store"))
    tb.run()
    out = [(pmt.to_python(pmt.car(m)), bytes(pmt.u8vector_elements(pmt.cdr(m))))
           for m in (got.get_message(i) for i in range(got.num_messages()))]
    return out, [pmt.to_python(status.get_message(i))["event"] for i in range(status.num_messages())]


class qa_s5069_modem(gr_unittest.TestCase):

    def test_modes_by_name_round_trip_at_complex_baseband(self):
        """Four WNs (BPSK with repetition, 8PSK, 256QAM, QPSK 9/16) and all four
        interleavers, each PDU naming its mode, back with name, rate and interleaver."""
        cases = [("WN2/3kHz/US", 40, "ultra_short", 300), ("WN7/3kHz/S", 300, "short", 4800),
                 ("WN12/3kHz/M", 900, "medium", 16000), ("WN13/3kHz/L", 200, "long", 2400)]
        pdus = [(name, payload(n, k), {"mode": name}) for k, (name, n, _, _) in enumerate(cases)]
        samples, events = transmit(pdus)
        self.assertEqual([e["event"] for e in events], ["tx_started", "tx_finished"] * len(cases))
        got, status = receive(samples)
        self.assertEqual([m["mode"] for m, _ in got], [c[0] for c in cases])
        for (meta, data), (name, _, interleaver, bps), (_, sent, _) in zip(got, cases, pdus):
            self.assertEqual(data, sent, name)
            self.assertEqual((meta["data_rate"], meta["interleaver"]), (bps, interleaver))
            self.assertFalse(meta["bytes_bad"])
            self.assertGreater(meta["snr_db"], 25)
            self.assertAlmostEqual(meta["frequency_offset_hz"], 0.0, delta=1.0)
        self.assertEqual(status, ["carrier_on", "carrier_off"] * len(cases))

    def test_default_mode_in_audio_with_walsh_wn0(self):
        """The block's default mode (any spelling) in real audio at 8000 Hz; WN0, the
        Walsh waveform, named in a PDU."""
        a, b = payload(120, 7), payload(12, 8)
        samples, _ = transmit([("WN6/3kHz/S", a, {}), ("WN0/3kHz/S", b, {"mode": "wn0/3khz/s"})],
                              fs=8000, complex_signal=False, mode="wn6/3KHZ/s")
        got, _ = receive(samples, fs=8000, complex_signal=False)
        self.assertEqual([(m["mode"], d) for m, d in got], [("WN6/3kHz/S", a), ("WN0/3kHz/S", b)])

    def test_both_standards_from_one_recording(self):
        """listen "both": a 110A burst, a 5069 burst, an App C burst and another 5069 one
        in one recording, each delivered once with its own mode; a receiver listening
        for one standard takes only its own."""
        pdus = [("2400S", payload(100, 1), {"mode": "2400S"}),
                ("WN8/3kHz/S", payload(400, 2), {"mode": "WN8/3kHz/S"}),
                ("9600S", payload(500, 3), {"data_rate": 9600, "interleaver": "short"}),
                ("WN3/3kHz/US", payload(30, 4), {"mode": "WN3/3kHz/US"})]
        samples, _ = transmit(pdus)
        both, status = receive(samples, listen="both")
        self.assertEqual([(m["mode"], d) for m, d in both], [(n, d) for n, d, _ in pdus])
        self.assertEqual(status, ["carrier_on", "carrier_off"] * 4)
        only_4539, _ = receive(samples, listen="4539")
        self.assertEqual([(m["mode"], d) for m, d in only_4539],
                         [(n, d) for n, d, _ in pdus if not n.startswith("WN")])
        only_5069, _ = receive(samples, listen="5069")
        self.assertEqual([(m["mode"], d) for m, d in only_5069],
                         [(n, d) for n, d, _ in pdus if n.startswith("WN")])

    def test_settings_reach_the_waveform(self):
        """Another scrambler and tail-biting reading with K = 9: received by a receiver
        told the same readings (it reads K from the WID), and not by one told others; the
        PN alignment and WID parity found by default (and named in the metadata), not
        with preamble=configured."""
        data = payload(200, 11)
        settings = "scrambler=b tail_biting=block_start constraint_length=9"
        samples, _ = transmit([("WN6/3kHz/S", data, {"mode": "WN6/3kHz/S"})], settings=settings)
        got, _ = receive(samples, settings="scrambler=b,tail_biting=block_start")
        self.assertEqual([(m["mode"], d, m["bytes_bad"]) for m, d in got], [("WN6/3kHz/S", data, False)])
        wrong, _ = receive(samples, settings="scrambler=a tail_biting=first_pair_bit_7")
        self.assertFalse(any(d == data for _, d in wrong))
        preamble = "pn_alignment=continuous wid_parity=caption_d2_zero"
        samples, _ = transmit([("WN8/3kHz/S", data, {"mode": "WN8/3kHz/S"})], settings=preamble)
        # the configured readings do not fit
        self.assertEqual(receive(samples, settings="preamble=configured")[0], [])
        found, _ = receive(samples)
        self.assertEqual([(m["mode"], d, m["readings"]) for m, d in found],
                         [("WN8/3kHz/S", data, "scrambler=a tail_biting=first_pair_bit_7 "
                           "pn_alignment=continuous wid_parity=caption_d2_zero")])
        told, _ = receive(samples, settings=preamble)
        self.assertEqual([(m["mode"], d) for m, d in told], [("WN8/3kHz/S", data)])

    def test_bad_modes_and_settings_refused_with_their_reason(self):
        for make, words in (
                (lambda: hfstack.s4539_tx(9600.0, True, mode="WN8/48kHz/L"), "48 kHz"),
                (lambda: hfstack.s4539_tx(9600.0, True, mode="WN8/48kHz/L"), "51840"),
                (lambda: hfstack.s4539_tx(192000.0, False, mode="WN12/48kHz/US"), "below 0 Hz"),
                (lambda: hfstack.s4539_tx(12000.0, False, mode="WN12/6kHz/US"), "13080"),
                (lambda: hfstack.s4539_rx(9600.0, True, False, "5069", "bandwidth_khz=48"), "38400 Bd"),
                (lambda: hfstack.s4539_rx(96000.0, True, False, "both", "bandwidth_khz=48"), "listen"),
                (lambda: hfstack.s4539_rx(96000.0, True, False, "5069", "bandwidth_khz=27"), "bandwidth_khz"),
                (lambda: hfstack.s4539_tx(9600.0, True, mode="WN4/9kHz/S"), "WN12/48kHz/US"),
                (lambda: hfstack.s4539_tx(9600.0, True, mode="WN0/3kHz/US"), "WN8/3kHz/L"),
                (lambda: hfstack.s4539_tx(9600.0, True, mode="WN99"), "STANAG 5069"),
                (lambda: hfstack.s4539_tx(9600.0, True, s5069_settings="scrambler=c"), "a or b"),
                (lambda: hfstack.s4539_tx(9600.0, True, s5069_settings="constraint_length=8"), "7 or 9"),
                (lambda: hfstack.s4539_tx(9600.0, True, s5069_settings="preamble=find"), "receiver"),
                (lambda: hfstack.s4539_tx(9600.0, True, s5069_settings="frequency_loop=second_order"),
                 "receiver"),
                (lambda: hfstack.s4539_rx(9600.0, True, False, "5069", "frequency_loop=2"), "second_order"),
                (lambda: hfstack.s4539_rx(9600.0, True, False, "5068"), "both"),
                (lambda: hfstack.s4539_rx(9600.0, True, False, "5069", "colour=red"), "colour"),
                (lambda: hfstack.s4539_rx(9600.0, True, False, "both", "constraint_length=9"), "WID"),
                (lambda: hfstack.s4539_rx(9600.0, True, False, "5069", "", 0), "threads")):
            with self.assertRaises(ValueError) as e:
                make()
            self.assertIn(words, str(e.exception))
        # A PDU naming a mode the modem lacks: dropped with a tx_error and its reason;
        # the next one goes out.
        data = payload(50, 5)
        samples, events = transmit([("WN8/3kHz/US", data, {"mode": "WN14/3kHz/S"}),
                                    ("WN8/3kHz/US", data, {"mode": pmt.from_long(8)}),
                                    ("WN8/3kHz/US", data, {"mode": "WN8/24kHz/US"}),
                                    ("WN8/3kHz/US", data, {"mode": "WN8/3kHz/US"})])
        self.assertEqual([e["event"] for e in events],
                         ["tx_error", "tx_error", "tx_error", "tx_started", "tx_finished"])
        self.assertIn("WN14/3kHz/S", events[0]["reason"])
        self.assertIn("not a symbol", events[1]["reason"])
        self.assertIn("24 kHz", events[2]["reason"])
        got, _ = receive(samples)
        self.assertEqual([(m["mode"], d) for m, d in got], [("WN8/3kHz/US", data)])

    def test_two_threads_give_what_one_gives(self):
        """threads=2 (each interleaver block decoded on a thread of its own): bursts of
        several medium and short blocks at 12 kHz through noise, then the recording's
        end (its tail two long blocks of noise): the same PDUs, metadata (but the wall
        clock's time) and status events as one thread, none left undelivered."""
        pdus = [("WN8/12kHz/M", payload(20000, 21), {"mode": "WN8/12kHz/M"}),
                ("WN10/12kHz/S", payload(9000, 22), {"mode": "WN10/12kHz/S"}),
                ("WN8/12kHz/M", payload(12000, 23), {"mode": "WN8/12kHz/M"})]
        fs = 38400
        samples, _ = transmit(pdus, fs=fs, tail_s=2 * 7.68 + 1, mode="WN8/12kHz/M")
        rng = np.random.default_rng(24)
        noise = (rng.standard_normal(len(samples)) + 1j * rng.standard_normal(len(samples)))
        power = np.mean(np.abs(samples[samples != 0]) ** 2)
        samples = (samples + noise * np.sqrt(power / 2 * 10 ** (-18 / 10))).astype(np.complex64)
        runs = []
        for threads in (1, 2):
            got, status = receive(samples, fs=fs, settings="bandwidth_khz=12", threads=threads)
            runs.append(([({k: v for k, v in m.items() if k != "time"}, d) for m, d in got],
                         status))
        self.assertEqual([(m["mode"], d) for m, d in runs[0][0]], [(n, d) for n, d, _ in pdus])
        self.assertEqual(runs[1], runs[0])

    def test_wider_bandwidths_at_a_radios_rate(self):
        """The widest modes: WN12/48kHz/US (240000 bps) and WN3/48kHz/US at 96 kS/s complex (5/2
        samples a symbol, the receiver resampling to 153.6 kHz), and WN8/6kHz/S in real
        audio at 48 kHz on its 3300 Hz sub-carrier, named in PDUs, back whole with their
        mode, rate and an SNR in their bandwidth."""
        pdus = [("WN12/48kHz/US", payload(3000, 11), {"mode": "WN12/48kHz/US"}),
                ("WN3/48kHz/US", payload(100, 12), {"mode": "wn3/48khz/us"})]
        samples, events = transmit(pdus, fs=96000, tail_s=0.5, mode="WN12/48kHz/US")
        self.assertEqual([e["event"] for e in events], ["tx_started", "tx_finished"] * 2)
        got, status = receive(samples, fs=96000, settings="bandwidth_khz=48")
        self.assertEqual([(m["mode"], d) for m, d in got], [(n, d) for n, d, _ in pdus])
        self.assertEqual(got[0][0]["data_rate"], 240000)
        self.assertGreater(got[0][0]["snr_db"], 25)
        # (A detection may follow in the digital silence after them, refused once read:
        # the 3 kHz receiver does so too in exact zeros; docs/modem-design.md.)
        self.assertEqual(status[:4], ["carrier_on", "carrier_off"] * 2)
        data = payload(500, 13)
        samples, _ = transmit([("WN8/6kHz/S", data, {"mode": "WN8/6kHz/S"})], fs=48000,
                              complex_signal=False, tail_s=0.5, mode="WN8/6kHz/S")
        got, _ = receive(samples, fs=48000, complex_signal=False, settings="bandwidth_khz=6")
        self.assertEqual([(m["mode"], d) for m, d in got], [("WN8/6kHz/S", data)])

    def test_symbol_output_carries_5069_symbols(self):
        """The optional symbol output: a WN6 (QPSK) burst's data symbols descrambled onto
        its set, one per data symbol (one 4-frame S block of 256), none of the probes."""
        samples, _ = transmit([("WN6/3kHz/S", payload(150, 9), {"mode": "WN6/3kHz/S"})])
        tb = gr.top_block()
        rx = hfstack.s4539_rx(9600.0, True, False, "both")
        symbols = blocks.vector_sink_c()
        tb.connect(blocks.vector_source_c(samples), rx, symbols)
        tb.run()
        z = np.array(symbols.data())
        self.assertEqual(len(z), 4 * 256)
        quarters = np.angle(z) / (np.pi / 2)
        self.assertLess(np.max(np.abs(quarters - np.round(quarters))), 0.2)
        self.assertLess(np.max(np.abs(np.abs(z) - 1)), 0.3)

    def test_grc_asserts(self):
        self.assertTrue(hfstack.modem_mode_ok("WN8/3kHz/L"))
        self.assertTrue(hfstack.modem_mode_ok("'9600VL'"))
        self.assertTrue(hfstack.modem_mode_ok("WN8/48kHz/L"))
        self.assertFalse(hfstack.modem_mode_ok("WN13/48kHz/L"))
        self.assertTrue(hfstack.s5069_settings_ok("bandwidth_khz=48", False))
        self.assertFalse(hfstack.s5069_settings_ok("bandwidth_khz=48", True))
        self.assertTrue(hfstack.s5069_settings_ok("scrambler=b constraint_length=9", True))
        self.assertFalse(hfstack.s5069_settings_ok("constraint_length=9", False))
        self.assertTrue(hfstack.s5069_settings_ok("preamble=find", False))
        self.assertTrue(hfstack.s5069_settings_ok("frequency_loop=second_order", False))
        self.assertFalse(hfstack.s5069_settings_ok("frequency_loop=second_order", True))


if __name__ == "__main__":
    gr_unittest.run(qa_s5069_modem)
