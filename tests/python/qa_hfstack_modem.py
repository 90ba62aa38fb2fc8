#!/usr/bin/env python3
#
# Copyright 2026 gr-hfstack authors.
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""apps/hfstack-modem: tx then rx gives back the text and the mode at 8000 and 48000 Hz;
rx finds several bursts and writes their bytes; ber counts no errors at a high SNR and
more at a low one, with CSV rows and a plot; burst matching counts lost and unrecognised
bursts; bad input is refused in one line. STANAG 5069 (App D, 3 kHz) modes by name:
tx then rx with another reading and K=9, a 4539 and a 5069 burst in one recording found
without naming either, ber; bad 5069 names and readings refused in one line."""

import csv
import io
import json
import os
import subprocess
import sys
import tempfile
import wave

import numpy as np

from gnuradio import gr_unittest
from gnuradio.hfstack.apps import modem

from test_support import app_path

APP = app_path("hfstack-modem")


def run(*args):
    return subprocess.run([sys.executable, APP, *args], capture_output=True, text=True,
                          timeout=300, env=os.environ)


def read_wav(path):
    with wave.open(path, "rb") as w:
        return (w.getframerate(), w.getnchannels(), w.getsampwidth(),
                np.frombuffer(w.readframes(w.getnframes()), dtype="<i2"))


def write_wav(path, x, fs, channels=1):
    with wave.open(path, "wb") as w:
        w.setnchannels(channels)
        w.setsampwidth(2)
        w.setframerate(fs)
        w.writeframes(np.asarray(x, dtype="<i2").tobytes())


class qa_hfstack_modem(gr_unittest.TestCase):

    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.d = self.dir.name

    def tearDown(self):
        self.dir.cleanup()

    def path(self, name):
        return os.path.join(self.d, name)

    def test_tx_then_rx_returns_the_text_and_the_mode(self):
        for mode, rate, text in (("2400S", 8000, "HELLO FROM 2400S"), ("600S", 48000, "hi, 600 bps"),
                                 ("9600S", 9600, "HELLO FROM APP C 64QAM")):
            wav = self.path(f"{mode}.wav")
            done = run("tx", "--mode", mode, "--text", text, wav, "--sample-rate", str(rate), "--json")
            self.assertEqual(done.returncode, 0, done.stderr)
            report = json.loads(done.stdout)
            self.assertEqual((report["mode"], report["bytes"], report["clipped"]), (mode, len(text), 0))
            fs, channels, width, x = read_wav(wav)
            self.assertEqual((fs, channels, width), (rate, 1, 2))
            self.assertEqual(len(x), report["samples"])
            # Preamble 0.6 s and one 0.6 s interleaver block (the bytes, EOM and flush
            # fit in one; App C 9600S: 287 symbols and nine 287-symbol frames, 1.196 s),
            # the filter's tail, 0.2 s of silence each side.
            self.assertAlmostEqual(report["air_time_s"], 1.2, delta=0.01)
            self.assertAlmostEqual(len(x), round(0.4 * rate) + report["air_time_s"] * rate, delta=5)
            self.assertTrue(np.all(x[: int(0.2 * rate)] == 0))
            self.assertTrue(np.all(x[-int(0.2 * rate):] == 0))
            self.assertGreater(np.sqrt(np.mean((x[int(0.2 * rate):-int(0.2 * rate)] / 32768.0) ** 2)), 0.2)

            done = run("rx", wav, "--json")
            self.assertEqual(done.returncode, 0, done.stderr)
            self.assertEqual(done.stderr, "")
            bursts = json.loads(done.stdout)["bursts"]
            self.assertEqual(len(bursts), 1)
            self.assertEqual(bursts[0]["mode"], mode)
            self.assertEqual(bursts[0]["text"], text)
            self.assertFalse(bursts[0]["bytes_bad"])
            self.assertGreater(bursts[0]["snr_db"], 30)

            done = run("rx", wav)
            self.assertEqual(done.returncode, 0, done.stderr)
            self.assertIn(mode, done.stdout)
            self.assertIn(json.dumps(text), done.stdout)

    def test_rx_finds_every_burst_and_writes_their_bytes(self):
        rng = np.random.default_rng(7)
        payload = bytes(rng.integers(0, 256, 300, dtype=np.uint8))
        first, second = self.path("a.wav"), self.path("b.wav")
        with open(self.path("payload.bin"), "wb") as f:
            f.write(payload)
        self.assertEqual(run("tx", "--mode", "1200L", "--input", self.path("payload.bin"), first,
                             "--sample-rate", "9600").returncode, 0)
        self.assertEqual(run("tx", "--mode", "4800U", "--text", "second", second,
                             "--sample-rate", "9600").returncode, 0)
        both = self.path("both.wav")
        # One recording that ends right after the second burst's last sample: the
        # receiver still has to finish it.
        write_wav(both, np.concatenate([read_wav(first)[3], read_wav(second)[3][:-1920]]), 9600)
        out = self.path("out.bin")
        done = run("rx", both, "--output", out)
        self.assertEqual(done.returncode, 0, done.stderr)
        lines = done.stdout.strip().splitlines()
        self.assertEqual(len(lines), 2, done.stdout)
        self.assertIn("1200L", lines[0])
        self.assertIn("300 bytes: hex ", lines[0])
        self.assertIn('4800U', lines[1])
        self.assertIn('"second"', lines[1])
        with open(out, "rb") as f:
            self.assertEqual(f.read(), payload + b"second")

    def test_loud_tx_is_clipped_and_counted(self):
        wav = self.path("loud.wav")
        done = run("tx", "--mode", "2400S", "--text", "LOUD", wav, "--level", "1", "--json")
        self.assertEqual(done.returncode, 0, done.stderr)
        report = json.loads(done.stdout)
        _, _, _, x = read_wav(wav)
        # Held at full scale, not wrapped: every clipped sample sits at +-32767 (a few
        # more may land there by rounding alone).
        at_limit = int(np.count_nonzero(np.abs(x.astype(int)) == 32767))
        self.assertGreater(report["clipped"], 100)
        self.assertLessEqual(report["clipped"], at_limit)
        self.assertGreater(report["clipped"], 0.99 * at_limit)
        self.assertEqual(int(np.abs(x.astype(int)).max()), 32767)

    def test_ber_no_errors_at_20_db(self):
        done = run("ber", "--modes", "1200S", "--snr", "20", "--seconds", "20", "--csv", "-")
        self.assertEqual(done.returncode, 0, done.stderr)
        rows = list(csv.DictReader(io.StringIO(done.stdout)))
        self.assertEqual(len(rows), 1, done.stdout + done.stderr)
        row = rows[0]
        self.assertEqual((row["mode"], float(row["snr_db"])), ("1200S", 20.0))
        self.assertEqual(int(row["errors"]), 0)
        self.assertEqual(int(row["bursts_lost"]), 0)
        # Two bursts of 9.6 s (15 interleaver blocks of 720 bits, less EOM and flush).
        self.assertEqual((int(row["bursts"]), int(row["bits"])), (2, 2 * 8 * 1328))
        self.assertAlmostEqual(float(row["ber_upper95"]), 3 / (2 * 8 * 1328), delta=1e-8)
        # One progress line per point, on stderr, with the table.
        progress = [line for line in done.stderr.splitlines()
                    if line.startswith("hfstack-modem: 1200S at 20 dB")]
        self.assertEqual(len(progress), 1, done.stderr)

    def test_ber_is_higher_at_0_db_and_plotted(self):
        png = self.path("ber.png")
        done = run("ber", "--modes", "1200S", "--snr", "20,0", "--seconds", "20", "--csv", "-",
                   "--plot", png, "--seed", "3")
        self.assertEqual(done.returncode, 0, done.stderr)
        rows = {float(r["snr_db"]): r for r in csv.DictReader(io.StringIO(done.stdout))}
        self.assertEqual(sorted(rows), [0.0, 20.0])
        self.assertEqual(int(rows[20.0]["errors"]), 0)
        self.assertGreater(int(rows[0.0]["errors"]), 0)
        self.assertGreater(float(rows[0.0]["ber"]), float(rows[20.0]["ber"]))
        self.assertGreater(float(rows[0.0]["ber"]), float(rows[20.0]["ber_upper95"]))
        with open(png, "rb") as f:
            self.assertEqual(f.read(8), b"\x89PNG\r\n\x1a\n")

    def test_burst_matching_counts_lost_and_unrecognised_bursts(self):
        rng = np.random.default_rng(11)
        sent = [rng.integers(0, 256, 200, dtype=np.uint8) for _ in range(4)]

        def damaged(x, nbits):
            y = x.copy()
            for k in rng.choice(8 * len(x), nbits, replace=False):
                y[k // 8] ^= np.uint8(1 << (k % 8))
            return y

        junk = rng.integers(0, 256, 200, dtype=np.uint8)
        # Burst 1 received as junk between two recognised ones: paired, its own errors.
        received = [damaged(sent[0], 30), junk, sent[2], np.concatenate([sent[3], junk])]
        self.assertEqual(modem.match_bursts(sent, received), {0: 0, 1: 1, 2: 2, 3: 3})
        # Bursts 1 and 2 with only one unrecognised burst between: both lost.
        received = [damaged(sent[0], 30), junk, sent[3]]
        self.assertEqual(modem.match_bursts(sent, received), {0: 0, 3: 2})
        # A burst missing entirely, and a short one: missing bytes count 8 wrong bits,
        # extra bytes none.
        received = [sent[0], sent[2][:150]]
        self.assertEqual(modem.match_bursts(sent, received), {0: 0, 2: 1})
        self.assertEqual(modem.bit_errors(sent[2][:150], sent[2]), 8 * 50)
        self.assertEqual(modem.bit_errors(np.concatenate([sent[3], junk]), sent[3]), 0)
        self.assertEqual(modem.bit_errors(damaged(sent[1], 17), sent[1]), 17)
        self.assertEqual(modem.upper95(0, 1000), 0.003)
        self.assertAlmostEqual(modem.upper95(4, 1000), (4 + 1.96 * 2 + 1) / 1000)

    def test_5069_tx_then_rx_with_readings(self):
        wav = self.path("wide.wav")
        text = "HELLO FROM WN8 IN 16QAM"
        done = run("tx", "--mode", "wn8/3khz/s", "--text", text, wav, "--sample-rate", "9600", "--json",
                   "--reading", "scrambler=b", "--reading", "tail_biting=block_start",
                   "--constraint-length", "9")
        self.assertEqual(done.returncode, 0, done.stderr)
        report = json.loads(done.stdout)
        self.assertEqual((report["mode"], report["data_rate"], report["interleaver"]),
                         ("WN8/3kHz/S", 6400, "short"))
        self.assertEqual(report["s5069_settings"],
                         "scrambler=b tail_biting=block_start constraint_length=9 superframes=1 "
                         "tlc_blocks=0 eot=off")
        # M = 1 preamble (10 Walsh symbols of 32 chips) and its 32-symbol mini-probe, one
        # S block of 4 frames of 256 data and 32 probe symbols: (320 + 32 + 1152) / 2400 s.
        self.assertAlmostEqual(report["air_time_s"], (320 + 32 + 1152) / 2400, delta=0.01)
        for loop in ("first_order", "second_order"):
            done = run("rx", wav, "--json", "--reading", "scrambler=b", "--reading", "tail_biting=block_start",
                       "--reading", f"frequency_loop={loop}")
            self.assertEqual(done.returncode, 0, done.stderr)
            bursts = json.loads(done.stdout)["bursts"]
            self.assertEqual([(b["mode"], b["data_rate"], b["text"], b["bytes_bad"]) for b in bursts],
                             [("WN8/3kHz/S", 6400, text, False)])
        # The scrambler's reading tried by the receiver (K = 9 from the block start with a
        # byte or more of fill reads either way: that reading told).
        done = run("rx", wav, "--json", "--reading", "scrambler=auto", "--reading", "tail_biting=block_start")
        self.assertEqual(done.returncode, 0, done.stderr)
        self.assertEqual([(b["text"], b["bytes_bad"]) for b in json.loads(done.stdout)["bursts"]],
                         [(text, False)])
        # Listening for STANAG 4539 alone: nothing.
        done = run("rx", wav, "--listen", "4539")
        self.assertEqual(done.returncode, 1, done.stderr)
        self.assertIn("no burst", done.stderr)

    def test_rx_finds_the_readings_sent_and_names_them(self):
        """rx with no --reading: App C under each tail-biting phase, STANAG 5069 under
        the other PN alignment and scrambler with a longer preamble (tx's field-trial
        knobs), each burst's text back and its readings in --json."""
        sent = [("3200S", ["tail_biting=full_register"], [], "scrambler=a tail_biting=full_register"),
                ("6400VS", ["tail_biting=block_start"], [], "scrambler=a tail_biting=block_start"),
                ("4800S", [], [], "scrambler=a tail_biting=first_pair_bit_7"),
                ("WN2/3kHz/US", ["pn_alignment=continuous", "scrambler=b", "tail_biting=full_register"],
                 ["--superframes", "3", "--tlc-blocks", "2", "--eot"],
                 "scrambler=b tail_biting=full_register pn_alignment=continuous wid_parity=checksum")]
        for i, (mode, readings, knobs, found) in enumerate(sent):
            wav = self.path(f"r{i}.wav")
            args = ["tx", "--mode", mode, "--text", f"READINGS {i}", wav, "--sample-rate", "9600", "--json"]
            for r in readings:
                args += ["--reading", r]
            done = run(*(args + knobs))
            self.assertEqual(done.returncode, 0, done.stderr)
            report = json.loads(done.stdout)
            for r in readings:
                self.assertIn(r, report["s5069_settings"])
            if knobs:
                self.assertIn("superframes=3 tlc_blocks=2 eot=on", report["s5069_settings"])
                done = run(*args)  # the same without the knobs: a shorter transmission
                self.assertGreater(report["air_time_s"], json.loads(done.stdout)["air_time_s"] + 0.3)
                run(*(args + knobs))
            done = run("rx", wav, "--json")
            self.assertEqual(done.returncode, 0, done.stderr)
            bursts = json.loads(done.stdout)["bursts"]
            self.assertEqual([(b["mode"], b["text"], b["readings"]) for b in bursts],
                             [(mode.upper() if "/" not in mode else mode, f"READINGS {i}", found)])
            done = run("rx", wav)
            self.assertIn(f"({found})", done.stdout)
        # A reading named is forced: the receiver does not find another.
        done = run("rx", self.path("r0.wav"), "--json", "--reading", "tail_biting=block_start")
        self.assertNotEqual([b["text"] for b in json.loads(done.stdout)["bursts"]], ["READINGS 0"])

    def test_4539_and_5069_bursts_in_one_recording(self):
        a, b = self.path("a.wav"), self.path("b.wav")
        self.assertEqual(run("tx", "--mode", "2400S", "--text", "first, STANAG 4539", a,
                             "--sample-rate", "9600").returncode, 0)
        self.assertEqual(run("tx", "--mode", "WN13/3kHz/US", "--text", "second, STANAG 5069", b,
                             "--sample-rate", "9600").returncode, 0)
        both = self.path("both.wav")
        write_wav(both, np.concatenate([read_wav(a)[3], read_wav(b)[3], read_wav(a)[3]]), 9600)
        done = run("rx", both, "--json")
        self.assertEqual(done.returncode, 0, done.stderr)
        bursts = json.loads(done.stdout)["bursts"]
        self.assertEqual([(x["mode"], x["text"]) for x in bursts],
                         [("2400S", "first, STANAG 4539"), ("WN13/3kHz/US", "second, STANAG 5069"),
                          ("2400S", "first, STANAG 4539")])
        done = run("rx", both, "--listen", "5069", "--json")
        self.assertEqual([x["mode"] for x in json.loads(done.stdout)["bursts"]], ["WN13/3kHz/US"])

    def test_wider_5069_tx_then_rx_and_ber(self):
        """A wider mode: WN12/6kHz/US (32000 bps) through tx (real audio at 48000 Hz, the
        default at 6 kHz; above 6 kHz the RRC-0.35 band on 300 Hz + BW / 2 reaches
        below 0 Hz and real audio is refused) and rx --bandwidth 6; ber of
        WN10/6kHz/US at a radio's rate (48000 Hz complex, resampled) and of
        WN12/48kHz/US at 96000 Hz, without errors at 25 and 36 dB."""
        wav = self.path("w6.wav")
        data = bytes(np.random.default_rng(24).integers(0, 256, 2000, dtype=np.uint8))
        blob = self.path("data.bin")
        with open(blob, "wb") as f:
            f.write(data)
        done = run("tx", "--mode", "WN12/6kHz/US", "--input", blob, wav, "--json")
        self.assertEqual(done.returncode, 0, done.stderr)
        report = json.loads(done.stdout)
        self.assertEqual((report["sample_rate_hz"], report["data_rate"]), (48000, 32000))
        got = self.path("got.bin")
        done = run("rx", wav, "--bandwidth", "6", "--json", "--output", got)
        self.assertEqual(done.returncode, 0, done.stderr)
        bursts = json.loads(done.stdout)["bursts"]
        self.assertEqual([(b["mode"], b["bytes_bad"]) for b in bursts], [("WN12/6kHz/US", False)])
        with open(got, "rb") as f:
            self.assertEqual(f.read(), data)
        done = run("ber", "--modes", "WN10/6kHz/US", "--snr", "25", "--seconds", "5", "--sample-rate", "48000",
                   "--csv", "-")
        self.assertEqual(done.returncode, 0, done.stderr)
        row = list(csv.DictReader(io.StringIO(done.stdout)))[0]
        self.assertEqual((row["mode"], int(row["errors"]), int(row["bursts_lost"])), ("WN10/6kHz/US", 0, 0))
        self.assertGreater(int(row["bits"]), 8 * 10000)
        done = run("ber", "--modes", "WN12/48kHz/US", "--snr", "36", "--seconds", "1", "--sample-rate", "96000",
                   "--burst-seconds", "0.5", "--csv", "-")
        self.assertEqual(done.returncode, 0, done.stderr)
        row = list(csv.DictReader(io.StringIO(done.stdout)))[0]
        self.assertEqual((row["mode"], int(row["errors"]), int(row["bursts_lost"])), ("WN12/48kHz/US", 0, 0))

    def test_5069_ber_no_errors_at_20_db(self):
        done = run("ber", "--modes", "WN6/3kHz/S", "--snr", "20", "--seconds", "20", "--csv", "-")
        self.assertEqual(done.returncode, 0, done.stderr)
        rows = list(csv.DictReader(io.StringIO(done.stdout)))
        self.assertEqual(len(rows), 1, done.stdout + done.stderr)
        row = rows[0]
        self.assertEqual((row["mode"], float(row["snr_db"])), ("WN6/3kHz/S", 20.0))
        self.assertEqual((int(row["errors"]), int(row["bursts_lost"])), (0, 0))
        self.assertGreater(int(row["bits"]), 2 * 8 * 3000)

    def test_list_modes(self):
        """The modes README.md and s4539_mode_problem's reason point to."""
        done = run("--list-modes")
        self.assertEqual(done.returncode, 0, done.stderr)
        lines = done.stdout.splitlines()
        self.assertEqual(len(lines), 3, done.stdout)
        self.assertTrue(lines[0].startswith("STANAG 4539: 75S 75L "), lines[0])
        self.assertIn(" 9600VL 12800U", lines[0])
        self.assertNotIn("2400Z", lines[0])
        self.assertTrue(lines[1].startswith("STANAG 5069: WN0/3kHz/S WN0/3kHz/M WN0/3kHz/L WN1/3kHz/US "))
        # 3 kHz: WN0 S/M/L, WN1-WN13 x 4; 11 wider bandwidths: WN0 S/M/L, WN1-WN12 x 4,
        # less WN4 at 9 and 18 kHz.
        self.assertEqual(len(lines[1].split()), 2 + 3 + 13 * 4 + 11 * (3 + 12 * 4) - 2 * 4)
        self.assertIn(" WN12/48kHz/US ", lines[1])
        self.assertIn("scrambler=a scrambler=b tail_biting=first_pair_bit_7 tail_biting=full_register "
                      "tail_biting=block_start", lines[2])

    def test_bad_5069_input_gives_one_line(self):
        out = self.path("out.wav")
        cases = [
            (["tx", "--mode", "WN8/48kHz/L", "--text", "x", out], "below 0 Hz"),
            (["tx", "--mode", "WN8/6kHz/L", "--text", "x", out, "--sample-rate", "12000"], "13080"),
            (["tx", "--mode", "WN13/6kHz/L", "--text", "x", out], "WN12/48kHz/US"),
            (["rx", out, "--bandwidth", "27"], "--bandwidth"),
            (["ber", "--modes", "WN8/48kHz/US", "--snr", "10", "--sample-rate", "9600"], "38400"),
            (["tx", "--mode", "WN0/3kHz/US", "--text", "x", out], "WN0 has no US"),
            (["tx", "--mode", "WN8/3kHz/X", "--text", "x", out], "did you mean WN8/3kHz/"),
            (["tx", "--mode", "WN8/3kHz/L", "--text", "x", "--reading", "scrambler=c", out], "a or b"),
            (["tx", "--mode", "WN8/3kHz/L", "--text", "x", "--reading", "scrambler", out], "NAME=VALUE"),
            (["tx", "--mode", "WN8/3kHz/L", "--text", "x", "--reading", "preamble=find", out],
             "receiver's"),
            (["tx", "--mode", "WN8/3kHz/L", "--text", "x", "--constraint-length", "8", out], "7, 9"),
            (["tx", "--mode", "WN8/3kHz/L", "--text", "x", "--reading", "frequency_loop=second_order", out],
             "receiver's"),
            (["tx", "--mode", "WN8/3kHz/L", "--text", "x", "--reading", "scrambler=auto", out], "receiver's"),
            (["rx", out, "--reading", "frequency_loop=third"], "first_order or second_order"),
            (["rx", out, "--listen", "5068"], "--listen"),
            (["rx", out, "--reading", "colour=red"], "no reading \"colour\""),
            (["ber", "--modes", "WN8/3kHz/L,WN14/3kHz/L", "--snr", "10"], "mode WN14/3kHz/L"),
        ]
        for args, words in cases:
            done = run(*args)
            self.assertEqual(done.returncode, 2, f"{args}: {done.stderr}")
            lines = done.stderr.strip().splitlines()
            self.assertEqual(len(lines), 1, f"{args}: {done.stderr}")
            self.assertTrue(lines[0].startswith("hfstack-modem: "), lines[0])
            self.assertIn(words, lines[0], f"{args}")
        self.assertFalse(os.path.exists(out))

    def test_bad_input_gives_one_line(self):
        stereo = self.path("stereo.wav")
        write_wav(stereo, np.zeros(800), 8000, channels=2)
        not_wav = self.path("junk.wav")
        with open(not_wav, "wb") as f:
            f.write(b"this is not a wav file")
        silence = self.path("silence.wav")
        write_wav(silence, np.zeros(16000), 8000)
        out = self.path("out.wav")
        cases = [
            (["tx", "--mode", "2400X", "--text", "x", out], 2,
             "mode 2400X: not a STANAG 4539 mode of our modem"),
            # The zero interleaver: refused with the reason the node and simulator give.
            (["tx", "--mode", "2400Z", "--text", "x", out], 2,
             "mode 2400Z: the zero interleaver (Z) is not implemented in our modem"),
            (["tx", "--mode", "2400S", "--input", self.path("missing.bin"), out], 2, "missing.bin"),
            (["tx", "--mode", "2400S", out], 2, "--text"),
            (["tx", "--mode", "2400S", "--text", "x", out, "--sample-rate", "1000"], 2, "--sample-rate"),
            (["tx", "--mode", "2400S", "--text", "x", os.path.join(self.d, "no", "o.wav")], 2,
             "no such directory"),
            (["rx", self.path("missing.wav")], 2, "missing.wav"),
            (["rx", not_wav], 2, "WAV"),
            (["rx", stereo], 2, "mono"),
            (["ber", "--modes", "1200S", "--snr", "nan"], 2, "finite"),
            (["ber", "--modes", "1200S,9600X", "--snr", "10"], 2, "mode 9600X: not a STANAG"),
            (["ber", "--modes", "1200S", "--snr", "10", "--profile", "stormy"], 2, "profile"),
            ([], 2, "subcommand"),
            (["rx", silence], 1, "no burst"),
            (["rx"], 2, "rx needs a WAV file (or --device with --gui)"),
            (["rx", "--device", "null"], 2, "--device (a sound card) is received with --gui only"),
            (["rx", silence, "--device", "null", "--gui"], 2, "a WAV file or --device, not both"),
            (["rx", silence, "--screenshot", self.path("x.png")], 2, "--screenshot needs --gui"),
            (["rx", silence, "--sound-rate", "8000"], 2, "--sound-rate is the sound card's"),
        ]
        for args, status, words in cases:
            done = run(*args)
            self.assertEqual(done.returncode, status, f"{args}: {done.stderr}")
            lines = done.stderr.strip().splitlines()
            self.assertEqual(len(lines), 1, f"{args}: {done.stderr}")
            self.assertTrue(lines[0].startswith("hfstack-modem: "), lines[0])
            self.assertIn(words, lines[0], f"{args}")
        self.assertFalse(os.path.exists(out))


if __name__ == "__main__":
    gr_unittest.run(qa_hfstack_modem)
