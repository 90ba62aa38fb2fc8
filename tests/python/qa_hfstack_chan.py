#!/usr/bin/env python3
#
# Copyright 2026 gr-hfstack authors.
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""apps/hfstack-chan: WAV and raw round trips, the SNR it reports against the one asked
for, JSON output, clipping, and one-line refusals of bad input."""

import json
import os
import shutil
import subprocess
import sys
import tempfile
import wave

import numpy as np

from gnuradio import gr_unittest

from test_support import app_path

APP = app_path("hfstack-chan")


def run(*args):
    return subprocess.run([sys.executable, APP, *args], capture_output=True, text=True,
                          timeout=300, env=os.environ)


def write_wav(path, x, fs):
    with wave.open(path, "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(fs)
        w.writeframes(np.clip(np.round(x * 32768), -32767, 32767).astype("<i2").tobytes())


def read_wav(path):
    with wave.open(path, "rb") as w:
        return w.getframerate(), np.frombuffer(w.readframes(w.getnframes()), dtype="<i2")


def burst(fs, seconds, level, seed):
    """A noise-like signal in 400-3200 Hz: `seconds` long after 1 s of silence, then 1 s more."""
    rng = np.random.default_rng(seed)
    t = np.arange(int(fs * seconds)) / fs
    sig = np.zeros_like(t)
    for f in np.arange(400, 3200, 25):
        sig += np.cos(2 * np.pi * f * t + rng.uniform(0, 2 * np.pi))
    sig *= level / np.sqrt(np.mean(sig ** 2))
    return np.concatenate([np.zeros(fs), sig, np.zeros(fs)])


class qa_hfstack_chan(gr_unittest.TestCase):

    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.d = self.dir.name

    def tearDown(self):
        self.dir.cleanup()

    def test_wav_keeps_rate_and_length_and_reports_the_snr_asked_for(self):
        fs = 8000
        x = burst(fs, 20, 0.1, 1)
        src, dst = os.path.join(self.d, "in.wav"), os.path.join(self.d, "out.wav")
        write_wav(src, x, fs)
        done = run(src, dst, "--profile", "awgn", "--snr", "6", "--json")
        self.assertEqual(done.returncode, 0, done.stderr)
        report = json.loads(done.stdout)
        self.assertAlmostEqual(report["snr_measured_db"], 6.0, delta=0.3)
        self.assertEqual(report["clipped"], 0)
        rate, y = read_wav(dst)
        self.assertEqual(rate, fs)
        self.assertEqual(len(y), len(x))
        # The noise is there in the silent second too, at the level the burst set.
        noise = y[: fs // 2].astype(float) / 32768
        expected = 0.1 ** 2 * 10 ** (-6 / 10) * fs / (2 * 3000)
        self.assertAlmostEqual(float(np.mean(noise ** 2)) / expected, 1.0, delta=0.1)

    def test_raw_complex_runs_the_complex_channel(self):
        fs = 9600
        rng = np.random.default_rng(2)
        x = np.exp(1j * np.pi / 4 * rng.integers(0, 8, fs * 10)).astype(np.complex64)
        src, dst = os.path.join(self.d, "in.c64"), os.path.join(self.d, "out.c64")
        x.tofile(src)
        done = run(src, dst, "--sample-rate", "9600", "--profile", "awgn", "--snr", "12",
                   "--freq-offset", "25", "--json")
        self.assertEqual(done.returncode, 0, done.stderr)
        self.assertAlmostEqual(json.loads(done.stdout)["snr_measured_db"], 12.0, delta=0.2)
        y = np.fromfile(dst, dtype=np.complex64)
        self.assertEqual(len(y), len(x))

    def test_loud_input_is_clipped_and_counted_not_wrapped(self):
        fs = 8000
        x = burst(fs, 3, 0.6, 3)
        src, dst = os.path.join(self.d, "in.wav"), os.path.join(self.d, "out.wav")
        write_wav(src, x, fs)
        done = run(src, dst, "--profile", "awgn", "--snr", "0", "--json")
        self.assertEqual(done.returncode, 0, done.stderr)
        report = json.loads(done.stdout)
        self.assertGreater(report["clipped"], 0)
        _, y = read_wav(dst)
        self.assertEqual(report["clipped"], int(np.count_nonzero(np.abs(y.astype(int)) >= 32767)))

    def test_stereo_and_float_wav_are_read(self):
        """Through soundfile: a stereo float WAV (refused before: "2 channels; mono
        only") gives a mono float WAV of its first channel through the channel; 24-bit
        PCM in gives 16-bit PCM out."""
        import soundfile
        fs = 8000
        x = burst(fs, 10, 0.1, 2)
        src, dst = os.path.join(self.d, "st.wav"), os.path.join(self.d, "out.wav")
        soundfile.write(src, np.stack([x, np.zeros_like(x)], axis=1).astype(np.float32), fs,
                        subtype="FLOAT")
        done = run(src, dst, "--profile", "awgn", "--snr", "10", "--json")
        self.assertEqual(done.returncode, 0, done.stderr)
        self.assertIn("2 channels; the first (left) is the signal", done.stderr)
        self.assertAlmostEqual(json.loads(done.stdout)["snr_measured_db"], 10.0, delta=0.3)
        info = soundfile.info(dst)
        self.assertEqual((info.channels, info.subtype, info.frames), (1, "FLOAT", len(x)))
        soundfile.write(src, x, fs, subtype="PCM_24")
        done = run(src, dst, "--profile", "awgn", "--snr", "10")
        self.assertEqual(done.returncode, 0, done.stderr)
        self.assertEqual(soundfile.info(dst).subtype, "PCM_16")

    def test_unreadable_input_in_the_words_of_hfstack_modem(self):
        """hfstack-chan said "System error." (libsndfile) where hfstack-modem said
        "Permission denied", and "no such file" for a directory."""
        modem = app_path("hfstack-modem")
        with tempfile.TemporaryDirectory() as d:
            os.chmod(d, 0o755)
            locked = os.path.join(d, "locked.wav")
            write_wav(locked, np.zeros(800), 8000)
            os.chmod(locked, 0o600)
            folder = os.path.join(d, "folder.wav")
            os.mkdir(folder)
            cases = [os.path.join(d, "missing.wav"), folder]
            # Root reads every file: the unreadable one is tried as nobody.
            as_nobody = []
            if os.geteuid() == 0 and shutil.which("setpriv"):
                as_nobody = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]
                cases.append(locked)
            elif os.geteuid() != 0:
                os.chmod(locked, 0)
                cases.append(locked)
            for path in cases:
                with self.subTest(path=path):
                    said = {}
                    for name, command in (("hfstack-chan", [APP, path, os.path.join(d, "o.wav")]),
                                          ("hfstack-modem", [modem, "rx", path])):
                        done = subprocess.run([*as_nobody, sys.executable, *command],
                                              capture_output=True, text=True, timeout=120,
                                              env=dict(os.environ, HOME=d))
                        self.assertEqual(done.returncode, 2, done.stderr)
                        prefix = f"{name}: {path}: "
                        self.assertTrue(done.stderr.startswith(prefix), done.stderr)
                        said[name] = done.stderr.strip()[len(prefix):]
                    self.assertEqual(said["hfstack-chan"], said["hfstack-modem"])
                    self.assertNotIn("System error", said["hfstack-chan"])

    def test_bad_input_gives_exit_2_and_one_line(self):
        src = os.path.join(self.d, "in.wav")
        write_wav(src, burst(8000, 1, 0.1, 4), 8000)
        not_wav = os.path.join(self.d, "junk.wav")
        with open(not_wav, "wb") as f:
            f.write(b"this is not a wav file")
        out = os.path.join(self.d, "out.wav")
        cases = [
            ([os.path.join(self.d, "missing.wav"), out], "missing"),
            ([not_wav, out], "WAV"),
            ([src, out, "--profile", "stormy"], "profile"),
            ([src, out, "--paths", "1:2:3"], "--paths"),
            ([src, out, "--snr", "nan"], "finite"),
            ([os.path.join(self.d, "x.f32"), out + ".f32"], "--sample-rate"),
            ([src, out, "--paths", "0:0:0:-1"], "spread_hz"),
            ([src], "output"),
        ]
        for args, words in cases:
            done = run(*args)
            self.assertEqual(done.returncode, 2, f"{args}: {done.stderr}")
            lines = done.stderr.strip().splitlines()
            self.assertEqual(len(lines), 1, f"{args}: {done.stderr}")
            self.assertTrue(lines[0].startswith("hfstack-chan: "), lines[0])
            self.assertIn(words, lines[0], f"{args}")

    def test_list_profiles(self):
        done = run("--list-profiles")
        self.assertEqual(done.returncode, 0)
        names = done.stdout.split()
        self.assertIn("poor", names)
        self.assertIn("mid_latitude_disturbed_nvis", names)
        self.assertEqual(len(names), 15)


if __name__ == "__main__":
    gr_unittest.run(qa_hfstack_chan)
