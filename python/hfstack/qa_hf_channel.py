#!/usr/bin/env python3
#
# Copyright 2026 gr-hfstack authors.
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""hf_channel_cc / hf_channel_ff blocks: the kernel's behaviour through GNU Radio's
scheduler (delays, offsets, resampling, noise), run-time settings and refusals."""

import math

import numpy as np

from gnuradio import blocks, gr, gr_unittest
from gnuradio import hfstack


def run_block(block, data, complex_signal=True):
    tb = gr.top_block()
    src = (blocks.vector_source_c if complex_signal else blocks.vector_source_f)(list(data), False)
    snk = (blocks.vector_sink_c if complex_signal else blocks.vector_sink_f)()
    tb.connect(src, block, snk)
    tb.run()
    return np.array(snk.data())


class qa_hf_channel(gr_unittest.TestCase):

    def test_static_path_delays_the_input_by_the_latency(self):
        # One static path 5 samples long at 9600 Hz, no noise: the output is the input
        # delayed by 5 + latency samples, exactly.
        b = hfstack.hf_channel_cc(9600, "custom", [5 / 9600], [0], [0], [0], snr_db=math.inf)
        rng = np.random.default_rng(1)
        x = (rng.standard_normal(5000) + 1j * rng.standard_normal(5000)).astype(np.complex64)
        y = run_block(b, x)
        self.assertEqual(len(y), len(x))
        lag = 5 + int(b.latency_samples())
        np.testing.assert_allclose(y[lag:], x[:-lag], atol=1e-6)

    def test_frequency_offset_turns_dc_into_a_tone(self):
        b = hfstack.hf_channel_cc(9600, "awgn", snr_db=1000, frequency_offset_hz=100.0)
        y = run_block(b, np.ones(9600, dtype=np.complex64))[100:]
        step = np.angle(np.sum(y[1:] * np.conj(y[:-1])))
        self.assertAlmostEqual(step / (2 * math.pi) * 9600, 100.0, places=3)

    def test_sample_rate_offset_changes_the_count_by_its_ratio(self):
        b = hfstack.hf_channel_cc(9600, "awgn", snr_db=1000, sample_rate_offset_ppm=1000)
        n = 96000
        y = run_block(b, np.ones(n, dtype=np.complex64))
        self.assertAlmostEqual(len(y) / n, 1.001, delta=3e-5)

    def test_noise_follows_the_snr_and_the_setters(self):
        rng = np.random.default_rng(2)
        x = np.exp(1j * np.pi / 4 * rng.integers(0, 8, 200000)).astype(np.complex64)
        b = hfstack.hf_channel_cc(9600, "awgn", snr_db=10, seed=3, signal_power=1.0)
        run_block(b, x)
        self.assertAlmostEqual(b.measured_snr_db(), 10.0, delta=0.1)
        b.set_snr_db(0)
        b.set_noise_bandwidth_hz(9600)
        self.assertEqual(b.snr_db(), 0)
        self.assertEqual(b.noise_bandwidth_hz(), 9600)
        # Whole-band SNR 0 dB: output power = signal 1 + noise 1.
        y = run_block(b, x)
        self.assertAlmostEqual(float(np.mean(np.abs(y) ** 2)), 2.0, delta=0.05)
        b.set_profile("flutter")
        self.assertEqual(b.profile(), "flutter")
        b.set_paths([0.0, 0.001], [0.0, -3.0], [0.0, 1.0], [0.5, 0.5])
        self.assertEqual(b.profile(), "custom")
        b.set_frequency_offset_hz(12.5)
        b.set_sample_rate_offset_ppm(-50)
        b.set_signal_power(2.0)
        self.assertEqual(b.frequency_offset_hz(), 12.5)
        self.assertEqual(b.sample_rate_offset_ppm(), -50)
        self.assertEqual(b.signal_power(), 2.0)

    def test_real_block_shifts_a_tone(self):
        fs = 8000
        t = np.arange(4 * fs) / fs
        x = np.cos(2 * np.pi * 1000 * t).astype(np.float32)
        b = hfstack.hf_channel_ff(fs, "awgn", snr_db=1000, frequency_offset_hz=50.0, signal_power=0.5)
        y = run_block(b, x, complex_signal=False)
        self.assertEqual(len(y), len(x))
        spectrum = np.abs(np.fft.rfft(y[-fs:])) ** 2  # 1 Hz bins
        self.assertEqual(int(np.argmax(spectrum)), 1050)
        self.assertGreater(10 * np.log10(spectrum[1050] / spectrum[950]), 60)

    def test_fading_keeps_the_seed(self):
        rng = np.random.default_rng(4)
        x = np.exp(1j * np.pi / 4 * rng.integers(0, 8, 20000)).astype(np.complex64)
        a = run_block(hfstack.hf_channel_cc(9600, "poor", snr_db=15, seed=7), x)
        b = run_block(hfstack.hf_channel_cc(9600, "poor", snr_db=15, seed=7), x)
        c = run_block(hfstack.hf_channel_cc(9600, "poor", snr_db=15, seed=8), x)
        np.testing.assert_allclose(a, b, atol=1e-4)
        self.assertGreater(float(np.max(np.abs(a - c))), 0.1)

    def test_bad_parameters_are_refused_naming_them(self):
        cases = [
            (dict(profile="stormy"), "profile"),
            (dict(profile="custom", delays_s=[0.0], powers_db=[0.0], shifts_hz=[0.0], spreads_hz=[-1.0]),
             "spread_hz"),
            (dict(profile="custom", delays_s=[0.5], powers_db=[0.0], shifts_hz=[0.0], spreads_hz=[1.0]),
             "delay_s"),
            (dict(profile="custom", delays_s=[0.0, 0.001], powers_db=[0.0], shifts_hz=[0.0], spreads_hz=[1.0]),
             "paths"),
            (dict(snr_db=math.nan), "snr_db"),
            (dict(frequency_offset_hz=math.nan), "frequency_offset_hz"),
        ]
        for kwargs, name in cases:
            with self.assertRaises(ValueError) as ctx:
                hfstack.hf_channel_cc(9600, **kwargs)
            self.assertIn(name, str(ctx.exception))
        b = hfstack.hf_channel_ff(8000, "poor")
        with self.assertRaises(ValueError) as ctx:
            b.set_snr_db(math.nan)
        self.assertIn("snr_db", str(ctx.exception))
        with self.assertRaises(ValueError):
            b.set_profile("stormy")
        self.assertEqual(b.profile(), "poor")

    def test_default_levels_give_the_snr_set(self):
        """s4539_tx's default level (0.25 rms) and the channel's default signal power
        agree, so tx -> channel -> rx with defaults reports the SNR set on the channel
        (with signal power 1.0 it reported 10.5 dB for 20 dB)."""
        import pmt
        fs = 9600.0
        for complex_signal in (False, True):
            with self.subTest(complex_signal=complex_signal):
                tb = gr.top_block()
                tx = hfstack.s4539_tx(fs, complex_signal)
                chan = (hfstack.hf_channel_cc if complex_signal else hfstack.hf_channel_ff)(
                    fs, "awgn", snr_db=20.0, seed=7)
                head = blocks.head(gr.sizeof_gr_complex if complex_signal else gr.sizeof_float,
                                   int(3 * fs))
                rx = hfstack.s4539_rx(fs, complex_signal)
                got = blocks.message_debug()
                tb.connect(tx, head, chan, rx)
                tb.msg_connect((rx, "out"), (got, "store"))
                data = bytes(range(200))
                tx.to_basic_block()._post(pmt.intern("in"), pmt.cons(
                    pmt.make_dict(), pmt.init_u8vector(len(data), list(data))))
                tb.run()
                self.assertEqual(got.num_messages(), 1)
                meta = pmt.to_python(pmt.car(got.get_message(0)))
                self.assertAlmostEqual(meta["snr_db"], 20.0, delta=1.5)


if __name__ == "__main__":
    gr_unittest.run(qa_hf_channel)
