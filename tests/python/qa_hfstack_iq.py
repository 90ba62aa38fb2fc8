#!/usr/bin/env python3
#
# Copyright 2026 gr-hfstack authors.
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""IQ recordings in apps/hfstack-modem and apps/hfstack-chan: tx then rx gives the bytes
back through SigMF (cf32_le and ci16_le) at every bandwidth 3-48 kHz, through raw cf32
given its rate, and from a uhd_rx_cfile-style recording off the carrier given its centre
frequency; hfstack-chan passes a SigMF recording through the channel; every bad
recording (missing or contradictory metadata, a rate too low for the bandwidth, a
truncated data file, the wrong type) is refused in one line with a non-zero exit."""

import json
import os
import subprocess
import sys
import tempfile

import numpy as np

from gnuradio import gr_unittest

from test_support import app_path

MODEM = app_path("hfstack-modem")
CHAN = app_path("hfstack-chan")


def run(app, *args):
    return subprocess.run([sys.executable, app, *args], capture_output=True, text=True,
                          timeout=300, env=os.environ)


class qa_hfstack_iq(gr_unittest.TestCase):

    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.d = self.dir.name
        self.payload = self.path("f.bin")
        with open(self.payload, "wb") as f:
            f.write(bytes(np.random.default_rng(5).integers(0, 256, 200, dtype=np.uint8)))

    def tearDown(self):
        self.dir.cleanup()

    def path(self, name):
        return os.path.join(self.d, name)

    def tx(self, mode, out, *extra):
        done = run(MODEM, "tx", "--mode", mode, "--input", self.payload, out, "--json", *extra)
        self.assertEqual(done.returncode, 0, done.stderr)
        return json.loads(done.stdout)

    def rx_gives_the_payload_back(self, recording, *extra):
        out = self.path("g.bin")
        done = run(MODEM, "rx", recording, "--output", out, "--json", *extra)
        self.assertEqual(done.returncode, 0, done.stderr)
        with open(out, "rb") as got, open(self.payload, "rb") as sent:
            self.assertEqual(got.read(), sent.read())
        return json.loads(done.stdout)

    def refused(self, app, args, words):
        done = run(app, *args)
        self.assertNotEqual(done.returncode, 0, done.stdout)
        self.assertEqual(len(done.stderr.strip().splitlines()), 1, done.stderr)
        self.assertIn(words, done.stderr)

    def test_sigmf_round_trip_at_every_bandwidth(self):
        for mode, datatype in (("WN6/3kHz/US", "cf32_le"), ("WN8/6kHz/US", "ci16_le"),
                               ("WN10/12kHz/US", "cf32_le"), ("WN8/24kHz/US", "ci16_le"),
                               ("WN12/48kHz/US", "cf32_le"), ("WN12/48kHz/US", "ci16_le")):
            meta = self.path(f"rec-{datatype}.sigmf-meta")
            report = self.tx(mode, meta, "--datatype", datatype, "--centre-frequency", "7.1e6")
            bw = int(mode.split("/")[1][:-3])
            rate = 9600 if bw == 3 else 3200 * bw  # the receiver's own: 4 samples a symbol
            self.assertEqual((report["sample_rate_hz"], report["datatype"], report["clipped"]),
                             (rate, datatype, 0))
            with open(meta) as f:
                m = json.load(f)
            self.assertEqual((m["global"]["core:datatype"], m["global"]["core:sample_rate"]),
                             (datatype, rate))
            self.assertEqual(m["captures"][0]["core:frequency"], 7.1e6)
            self.assertEqual(m["annotations"][0]["core:label"], mode)
            width = {"cf32_le": 8, "ci16_le": 4}[datatype]
            self.assertEqual(os.path.getsize(self.path(f"rec-{datatype}.sigmf-data")),
                             width * report["samples"])
            got = self.rx_gives_the_payload_back(meta)
            self.assertEqual((len(got["bursts"]), got["bursts"][0]["mode"], got["bandwidth_khz"]),
                             (1, mode, bw))

    def test_raw_cf32_with_rate_and_centre_frequency(self):
        raw = self.path("rec.cf32")
        report = self.tx("WN10/12kHz/US", raw, "--sample-rate", "48000")
        self.assertEqual((report["format"], report["sample_rate_hz"]), ("raw", 48000))
        self.assertEqual(os.path.getsize(raw), 8 * report["samples"])
        self.rx_gives_the_payload_back(raw, "--sample-rate", "48000", "--bandwidth", "12",
                                       "--centre-frequency", "10e6")

    def test_uhd_rx_cfile_recording_off_its_centre(self):
        # A radio tuned 20 kHz below the carrier at 250 kHz: the signal sits at +20 kHz.
        base = self.path("base.cf32")
        self.tx("WN12/24kHz/US", base, "--sample-rate", "250000")
        x = np.fromfile(base, dtype="<c8")
        n = np.arange(len(x))
        shifted = (x * np.exp(2j * np.pi * 20e3 / 250e3 * n)).astype("<c8")
        cfile = self.path("usrp.cfile")
        shifted.tofile(cfile)
        self.rx_gives_the_payload_back(cfile, "--sample-rate", "250000", "--bandwidth", "24",
                                       "--centre-frequency", "14.98e6", "--carrier-frequency", "15e6")
        # Without the carrier the band is 20 kHz off: the bytes do not come back.
        out = self.path("off.bin")
        run(MODEM, "rx", cfile, "--sample-rate", "250000", "--bandwidth", "24", "--output", out)
        with open(out, "rb") as got, open(self.payload, "rb") as sent:
            self.assertNotEqual(got.read(), sent.read())

    def test_one_receiver_thread_or_two_give_the_same(self):
        meta = self.path("rec.sigmf-meta")
        self.tx("WN12/48kHz/US", meta)
        one = self.rx_gives_the_payload_back(meta, "--threads", "1")
        two = self.rx_gives_the_payload_back(meta, "--threads", "2")
        self.assertEqual([{k: v for k, v in b.items() if k != "time"} for b in two["bursts"]],
                         [{k: v for k, v in b.items() if k != "time"} for b in one["bursts"]])
        self.refused(MODEM, ["rx", meta, "--threads", "0"], "--threads")

    def test_rate_above_the_receivers_is_decimated(self):
        raw = self.path("fast.cf32")
        self.tx("WN12/48kHz/US", raw, "--sample-rate", "1228800")
        self.rx_gives_the_payload_back(raw, "--sample-rate", "1228800", "--bandwidth", "48")

    def test_chan_passes_a_sigmf_recording_through_the_channel(self):
        meta = self.path("clean.sigmf-meta")
        self.tx("WN6/12kHz/US", meta, "--datatype", "ci16_le")
        # The SNR asked for, in the annotated mode's 12 kHz, measured where the signal is
        # (AWGN: a fading burst this short has its own power).
        noisy = self.path("noisy.sigmf-meta")
        done = run(CHAN, meta, noisy, "--profile", "awgn", "--snr", "20", "--json")
        self.assertEqual(done.returncode, 0, done.stderr)
        report = json.loads(done.stdout)
        self.assertEqual((report["format"], report["sample_rate_hz"], report["noise_bandwidth_hz"]),
                         ("sigmf", 38400, 12000))
        self.assertAlmostEqual(report["snr_measured_db"], 20, delta=0.5)
        faded = self.path("faded.sigmf-meta")
        done = run(CHAN, meta, faded, "--profile", "good", "--snr", "30")
        self.assertEqual(done.returncode, 0, done.stderr)
        with open(meta) as f, open(faded) as g:
            before, after = json.load(f), json.load(g)
        self.assertEqual(after["global"]["core:datatype"], "ci16_le")
        self.assertEqual(after["annotations"], before["annotations"])
        self.assertEqual(os.path.getsize(self.path("faded.sigmf-data")),
                         os.path.getsize(self.path("clean.sigmf-data")))
        self.rx_gives_the_payload_back(faded)

    def test_bad_recordings_are_refused_in_one_line(self):
        meta = self.path("good.sigmf-meta")
        self.tx("WN8/24kHz/US", meta, "--centre-frequency", "5e6")
        with open(meta) as f:
            good = json.load(f)
        data = self.path("good.sigmf-data")

        def variant(name, change, data_bytes=None):
            m = json.loads(json.dumps(good))
            change(m)
            with open(self.path(name + ".sigmf-meta"), "w") as f:
                json.dump(m, f)
            with open(data, "rb") as f:
                raw = f.read()
            with open(self.path(name + ".sigmf-data"), "wb") as f:
                f.write(raw if data_bytes is None else data_bytes(raw))
            return self.path(name + ".sigmf-meta")

        cases = [
            (variant("nodt", lambda m: m["global"].pop("core:datatype")), "missing core:datatype"),
            (variant("norate", lambda m: m["global"].pop("core:sample_rate")), "missing core:sample_rate"),
            (variant("nover", lambda m: m["global"].pop("core:version")), "missing core:version"),
            (variant("ri8", lambda m: m["global"].update({"core:datatype": "ri8"})), "cf32_le and ci16_le"),
            (variant("caps", lambda m: m["captures"].append({"core:sample_start": 5,
                                                             "core:frequency": 6e6})),
             "several centre frequencies"),
            (variant("edges", lambda m: m["annotations"][0].update({"core:freq_upper_edge": 4e6})),
             "wrong way round"),
            (variant("label", lambda m: m["annotations"][0].update({"core:label": "WN8/48kHz/US"})),
             "not its 48 kHz"),
            (variant("short", lambda m: None, lambda raw: raw[:len(raw) // 2]), "truncated"),
            (variant("odd", lambda m: None, lambda raw: raw[:-3]), "truncated"),
            # 24 kHz at 12000 Hz: the band does not fit.
            (variant("slow", lambda m: (m["global"].update({"core:sample_rate": 12000}),
                                        m["captures"][0].pop("core:frequency"))),
             "cannot carry the 24 kHz band"),
        ]
        for path, words in cases:
            self.refused(MODEM, ["rx", path], words)
        with open(self.path("notjson.sigmf-meta"), "w") as f:
            f.write("RIFF....WAVE")
        with open(self.path("notjson.sigmf-data"), "wb") as f:
            f.write(bytes(8))
        self.refused(MODEM, ["rx", self.path("notjson.sigmf-meta")], "not JSON")
        self.refused(MODEM, ["rx", meta, "--sample-rate", "96000"], "contradicts core:sample_rate")
        self.refused(MODEM, ["rx", meta, "--centre-frequency", "7e6"], "contradicts core:frequency")
        self.refused(MODEM, ["rx", meta, "--bandwidth", "12"], "contradicts")
        self.refused(MODEM, ["rx", self.path("none.sigmf-meta")], "No such file")
        raw = self.path("x.cf32")
        with open(raw, "wb") as f:
            f.write(bytes(8 * 1000))
        self.refused(MODEM, ["rx", raw], "--sample-rate")
        self.refused(MODEM, ["rx", raw, "--sample-rate", "3000"], "cannot carry the 3 kHz band")
        self.refused(MODEM, ["rx", raw, "--sample-rate", "48000", "--carrier-frequency", "1e6"],
                     "needs the recording's centre")
        self.refused(MODEM, ["tx", "--mode", "WN12/48kHz/US", "--text", "x", self.path("r.sigmf-meta"),
                             "--sample-rate", "48000"], "needs complex samples at")
        self.refused(MODEM, ["tx", "--mode", "WN12/48kHz/US", "--text", "x", self.path("r.wav")],
                     "name the output .sigmf-meta")
        self.refused(MODEM, ["tx", "--mode", "WN8/24kHz/US", "--text", "x", raw, "--datatype", "ci16_le"],
                     "its name says cf32_le")
        self.refused(CHAN, [variant("short2", lambda m: None, lambda raw: raw[:-2]), self.path("o.sigmf-meta")],
                     "truncated")
        self.refused(CHAN, [meta, self.path("o.wav")], "SigMF")


if __name__ == "__main__":
    gr_unittest.run(qa_hfstack_iq)
