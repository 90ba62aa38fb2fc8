#!/usr/bin/env python3
#
# Copyright 2026 gr-hfstack authors.
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""The radio front end: option checking (one table for Python, CLI and YAML), a clear
error for every missing device or file, the `file` kind replaying a recording made by
hfstack-modem, the burst gate that turns the modem's stream into USRP bursts, and the
command-line mapping. The loopback and emulator kinds carry nodes' traffic in
qa_node_app and qa_modem_emulator."""

import argparse
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import unittest
import wave
from unittest import mock

import numpy as np
import pmt
from gnuradio import blocks, gr, gr_unittest
from gnuradio import hfstack
from gnuradio.hfstack import radio as R
from gnuradio.hfstack.radio import ptt

from test_support import APPS, TOP, events, recorder

TIMEOUT_S = 60.0


class usrp_stand_in(gr.sync_block):
    """The transmit side of a USRP as the radio uses it: records the samples and tags it
    is given and wakes the test at a tx_eob."""

    def __init__(self, device_args, stream_args):
        gr.sync_block.__init__(self, "usrp_sink_stand_in", [np.complex64], None)
        self.rate, self.settings = 0.0, {}
        self.samples, self.tags, self.changed = [], [], threading.Condition()

    def set_samp_rate(self, rate):
        self.rate = rate

    def get_samp_rate(self):
        return self.rate

    def set_center_freq(self, f, chan):
        self.settings["frequency"] = f

    def set_gain(self, g, chan):
        self.settings["gain"] = g

    def set_antenna(self, a, chan):
        self.settings["antenna"] = a

    def work(self, input_items, output_items):
        x = input_items[0]
        with self.changed:
            for t in self.get_tags_in_window(0, 0, len(x)):
                self.tags.append((t.offset, pmt.symbol_to_string(t.key)))
            self.samples.append(np.array(x))
            self.changed.notify_all()
        return len(x)


class usrp_source_stand_in(gr.hier_block2):
    """The receive side: silence at the USRP rate."""

    def __init__(self, device_args, stream_args):
        gr.hier_block2.__init__(self, "usrp_source_stand_in", gr.io_signature(0, 0, 0),
                                gr.io_signature(1, 1, gr.sizeof_gr_complex))
        self.rate = 0.0
        self.source = blocks.null_source(gr.sizeof_gr_complex)
        self.pace = blocks.throttle(gr.sizeof_gr_complex, 240000)
        self.connect(self.source, self.pace, self)

    def set_samp_rate(self, rate):
        self.rate = rate

    def get_samp_rate(self):
        return self.rate

    def set_center_freq(self, f, chan):
        pass

    def set_gain(self, g, chan):
        pass

    def set_antenna(self, a, chan):
        pass


class rigctld_stand_in:
    """Hamlib's rigctld as far as PTT goes: records the commands, answers RPRT 0."""

    def __init__(self):
        self.listener = socket.socket()
        self.listener.bind(("127.0.0.1", 0))
        self.listener.listen(1)
        self.spec = "rigctld:127.0.0.1:%d" % self.listener.getsockname()[1]
        self.received, self.changed = [], threading.Condition()
        threading.Thread(target=self.serve, daemon=True).start()

    def serve(self):
        conn, _ = self.listener.accept()
        with conn:
            try:
                for line in conn.makefile("rb"):
                    with self.changed:
                        self.received.append(line.decode().strip())
                        self.changed.notify_all()
                    conn.sendall(b"RPRT 0\n")
            except OSError:
                pass  # the radio closed its connection

    def commands(self):
        with self.changed:
            return list(self.received)

    def wait_for(self, count):
        with self.changed:
            return self.changed.wait_for(lambda: len(self.received) >= count, TIMEOUT_S)

    def close(self):
        self.listener.close()


class real_rigctld:
    """Hamlib's own rigctld (libhamlib-utils) with its dummy rig on a loopback port; `-P
    RIG` gives the dummy CAT PTT (without it the dummy refuses `T 1`, as a radio whose
    PTT rigctld cannot drive does)."""

    def __init__(self, cat_ptt=True):
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.port = s.getsockname()[1]
        self.spec = f"rigctld:127.0.0.1:{self.port}"
        # -vvvvv (trace): rigctld then says when it listens, which the test waits for.
        self.process = subprocess.Popen(
            ["rigctld", "-m", "1", "-T", "127.0.0.1", "-t", str(self.port), "-vvvvv"]
            + (["-P", "RIG"] if cat_ptt else []),
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        self.listening = threading.Event()
        threading.Thread(target=self.drain, daemon=True).start()
        if not self.listening.wait(TIMEOUT_S):
            self.close()
            raise AssertionError("rigctld did not start listening")

    def drain(self):
        for line in self.process.stderr:  # read all of it, so rigctld never blocks
            if b"listening on port" in line:
                self.listening.set()

    def keyed(self):
        """PTT as the daemon reports it to another client (`t`, by hand)."""
        other = R.rigctld_text("127.0.0.1", self.port)
        try:
            return other.keyed()
        finally:
            other.close()

    def close(self):
        self.process.terminate()
        self.process.wait(TIMEOUT_S)
        self.process.stderr.close()


needs_rigctld = unittest.skipUnless(shutil.which("rigctld"), "rigctld (libhamlib-utils) missing")


class qa_radio(gr_unittest.TestCase):

    def assert_refused(self, fragment, **options):
        with self.assertRaises(R.radio_error) as cm:
            R.radio(**options)
        self.assertIn(fragment, str(cm.exception))
        self.assertNotIn("\n", str(cm.exception))

    def test_options_are_checked(self):
        self.assert_refused("unknown radio option colour", colour="red")
        self.assert_refused("radio kind 'cb'", kind="cb")
        self.assert_refused("snr_db: 'loud' is not a number", snr_db="loud")
        self.assert_refused("device does not apply to kind loopback", device="hw:0")
        self.assert_refused("record does not apply to kind emulator", kind="emulator", record="x.wav")
        self.assert_refused("time_scale must be > 0", kind="emulator", time_scale=0)
        self.assert_refused("sample_rate must be >= 4000 Hz", sample_rate=-8000.0)
        # A full option set (as radio.options holds) is accepted again: a second node.
        R.check_options(R.check_options({"kind": "emulator", "seed": 3}))
        self.assert_refused("profile", profile="no_such_profile")
        self.assert_refused("profile", kind="emulator", profile="no_such_profile")
        self.assert_refused("data_rate does not apply to kind emulator", kind="emulator",
                            data_rate=1200)
        self.assert_refused("seed must be >= 0", seed=-1)
        self.assert_refused("level must be in (0, 1]", level=-1.0)
        self.assert_refused("sample_rate must be >= 4000 Hz", sample_rate=100.0)
        self.assert_refused("data_rate 2400 and interleaver 'medium'", interleaver="medium")
        # None (an empty YAML value) is the default, not the text "None".
        self.assertEqual(R.check_options({"kind": "audio", "device": None})["device"], "")

    def test_readings_and_preamble_options_reach_both_ends(self):
        """readings go to the transmitter (less the receiver's own words) and, forced, to
        the receiver; the STANAG 5069 shape knobs to the transmitter; bad ones refused
        before anything is built."""
        o = R.check_options({"mode": "WN8/3kHz/L", "readings": "tail_biting=full_register "
                             "scrambler=b k7_newest_bit=lsb", "constraint_length": 9,
                             "superframes": 20, "tlc_blocks": 3, "eot": "on"})
        self.assertEqual(R.transmitter_settings(o), "tail_biting=full_register scrambler=b "
                         "constraint_length=9 superframes=20 tlc_blocks=3 eot=on")
        self.assertEqual(R.receiver_listen(o), ("5069", "bandwidth_khz=3 tail_biting=full_register "
                                                "scrambler=b k7_newest_bit=lsb"))
        self.assertEqual(R.receiver_listen(R.check_options({"readings": "scrambler=b"})),
                         ("4539", "scrambler=b"))
        self.assert_refused("radio option readings", readings="tail_biting=bit_8")
        self.assert_refused("superframes (the preamble's M) takes 1 to 32", superframes=33)
        self.assert_refused("eot", eot="yes")
        self.assert_refused("readings does not apply to kind emulator", kind="emulator",
                            readings="scrambler=b")
        # The receiver's threads: as given, or two where the process has two cores.
        self.assertEqual(R.receiver_threads(R.check_options({"rx_threads": 1})), 1)
        self.assertEqual(R.receiver_threads(R.check_options({})),
                         min(2, len(os.sched_getaffinity(0))))
        self.assert_refused("rx_threads must be >= 0", rx_threads=-1)

    def test_missing_devices_and_files_give_one_line_errors(self):
        self.assert_refused("sound card no_such_card cannot be opened", kind="audio",
                            device="no_such_card")
        self.assert_refused("replay file /nonexistent/rx.wav", kind="file", replay="/nonexistent/rx.wav")
        self.assert_refused("kind file needs record and/or replay", kind="file")
        self.assert_refused("frequency_hz must be > 0 for kind uhd", kind="uhd")
        self.assert_refused("is not a multiple", kind="uhd", frequency_hz=7e6, usrp_rate=250001.0)

    def test_ptt_specs(self):
        with self.assertRaises(R.radio_error) as cm:
            R.ptt_switch("serial:/nonexistent/ttyUSB9")
        self.assertIn("ptt serial port /nonexistent/ttyUSB9", str(cm.exception))
        with self.assertRaises(R.radio_error):
            R.ptt_switch("serial:/dev/null:cts")
        with self.assertRaises(R.device_error) as cm:  # opens, but is no serial port
            R.ptt_switch("serial:/dev/null")
        self.assertIn("ptt serial port /dev/null: ", str(cm.exception))
        self.assertIn("Inappropriate ioctl", str(cm.exception))
        with self.assertRaises(R.radio_error) as cm:
            R.ptt_switch("rigctld:127.0.0.1:99999")
        self.assertIn("rigctld port is a number 1..65535", str(cm.exception))
        with self.assertRaises(R.radio_error):
            R.ptt_switch("carrier-pigeon")
        with self.assertRaises(R.radio_error) as cm:
            R.ptt_switch("rigctld:127.0.0.1:1")  # nothing listens on port 1
        self.assertIn("ptt rigctld at 127.0.0.1:1", str(cm.exception))

    def test_check_reports_ptt_specs_and_profiles_without_opening_anything(self):
        """Everything wrong with a config at once, one problem a line; a PTT spec or
        a channel profile used to pass the check and fail only when opened."""
        with self.assertRaises(R.radio_error) as cm:
            R.check_options({"kind": "audio", "ptt": "serial:/dev/ttyUSB0:cts",
                             "levle": 0.3, "ptt_tail_s": "x"})
        lines = str(cm.exception).splitlines()
        self.assertEqual(len(lines), 3, lines)
        self.assertIn("unknown radio option levle (did you mean level?)", lines[0])
        self.assertIn("radio option ptt_tail_s: 'x' is not a number", lines[1])
        self.assertIn("ptt 'serial:/dev/ttyUSB0:cts': the serial line is rts or dtr", lines[2])
        with self.assertRaises(R.radio_error) as cm:
            R.check_options({"kind": "loopback", "profile": "moderat"})
        self.assertIn("profile 'moderat' (did you mean moderate?)", str(cm.exception))
        with self.assertRaises(R.radio_error):
            R.check_options({"kind": "uhd", "frequency_hz": 7e6, "ptt": "rigctld:h:0"})
        # Fine specs open nothing at check time.
        R.check_options({"kind": "audio", "ptt": "serial:/nonexistent/ttyUSB9:dtr"})
        R.check_options({"kind": "emulator", "profile": ""})

    def test_ptt_through_rigctld_keys_and_unkeys_after_the_tail(self):
        rig = rigctld_stand_in()  # the text protocol by hand (no python3-hamlib)
        switch = R.ptt_switch(rig.spec, use_hamlib=False)
        control = R.ptt_control(switch, 0.05)
        try:
            control.handle(pmt.PMT_T)
            control.handle(pmt.PMT_F)   # unkeys after the tail...
            control.handle(pmt.PMT_T)   # ...unless keyed again meanwhile:
            control.set(False, 2)       # the first tail's unkey, stale now, is ignored
            self.assertEqual(rig.commands(), ["T 0", "T 1", "T 1"])  # key() waits for RPRT
            control.handle(pmt.PMT_F)
            self.assertTrue(rig.wait_for(4))
        finally:
            control.close()
            rig.close()
        # Unkeyed at opening, keyed twice, unkeyed once after the last tail, and at close
        # (key() waits for each answer, so all are recorded).
        self.assertEqual(rig.commands(), ["T 0", "T 1", "T 1", "T 0", "T 0"])
        self.assertIsNone(control.failed)

    @needs_rigctld
    @unittest.skipIf(ptt.Hamlib is None, "python3-hamlib missing")
    def test_ptt_through_hamlib_and_a_real_rigctld(self):
        rig = real_rigctld()
        try:
            switch = R.ptt_switch(rig.spec)
            self.assertIsInstance(switch.sock, R.hamlib_rigctld)
            control = R.ptt_control(switch, 0.05)
            self.assertFalse(switch.keyed())  # unkeyed at opening
            control.handle(pmt.PMT_T)
            self.assertTrue(switch.keyed())
            self.assertTrue(rig.keyed())      # what another client of the daemon sees
            control.stop()                    # unkeys at once, no tail
            self.assertFalse(switch.keyed())
            self.assertFalse(rig.keyed())
            control.handle(pmt.PMT_T)
            control.close()                   # unkeys, then lets the daemon go
            self.assertFalse(rig.keyed())
            self.assertIsNone(control.failed)
        finally:
            rig.close()

    @needs_rigctld
    def test_ptt_through_the_text_protocol_and_a_real_rigctld(self):
        """The fallback for machines without python3-hamlib, against the real daemon."""
        rig = real_rigctld()
        try:
            switch = R.ptt_switch(rig.spec, use_hamlib=False)
            self.assertIsInstance(switch.sock, R.rigctld_text)
            self.assertFalse(rig.keyed())
            switch.key(True)
            self.assertTrue(rig.keyed())
            self.assertTrue(switch.keyed())
            switch.key(False)
            self.assertFalse(rig.keyed())
            switch.close()
        finally:
            rig.close()

    @needs_rigctld
    def test_rigctld_that_cannot_key_is_refused_at_opening(self):
        # A daemon per client: after an error rigctld may close its rig and reopen it a
        # second later (its client loop's retry), and a client that opens meanwhile
        # fails with Hamlib's IO error (seen once in CI).
        for hamlib in ((False, True) if ptt.Hamlib is not None else (False,)):
            with self.subTest(hamlib=hamlib):
                rig = real_rigctld(cat_ptt=False)
                try:
                    with self.assertRaises(R.device_error) as cm:
                        R.ptt_switch(rig.spec, use_hamlib=hamlib)
                    self.assertIn(f"ptt rigctld at 127.0.0.1:{rig.port}: rigctld answered",
                                  str(cm.exception))
                    self.assertNotIn("\n", str(cm.exception))
                finally:
                    rig.close()

    def test_audio_kind_keys_the_radio_for_a_transmission(self):
        # ALSA's null device plays and records silence: the whole audio chain runs.
        rig = rigctld_stand_in()
        tb = gr.top_block()
        with mock.patch.object(ptt, "Hamlib", None):  # the stand-in speaks text only
            r = R.radio(kind="audio", device="null", ptt=rig.spec, ptt_tail_s=0.05)
        status = recorder()
        tb.msg_connect(r, "status", status, "in")
        tb.start()
        try:
            r.tx._post(pmt.intern("in"), hfstack.make_pdu(b"\x01\x02\x03"))
            keyed_and_released = rig.wait_for(3)
            finished = status.wait_for(lambda m: len(m) >= 2, TIMEOUT_S)
        finally:
            tb.stop()
            tb.wait()
            r.close()
        self.assertTrue(rig.wait_for(4))
        rig.close()
        self.assertTrue(keyed_and_released and finished)
        # Unkeyed at opening, keyed, unkeyed after the tail, and again when closed (and
        # perhaps once more by the scheduler's stop, before the close).
        commands = rig.commands()
        self.assertEqual(commands[:4], ["T 0", "T 1", "T 0", "T 0"])
        self.assertEqual(set(commands[4:]), set() if len(commands) == 4 else {"T 0"})
        self.assertEqual(events(status.messages), ["tx_started", "tx_finished"])

    def test_file_kind_decodes_a_recording(self):
        with tempfile.TemporaryDirectory() as d:
            wav = os.path.join(d, "burst.wav")
            env = dict(os.environ)
            done = subprocess.run([sys.executable, os.path.join(APPS, "hfstack-modem"), "tx",
                                   "--mode", "1200S", "--text", "RADIO FILE KIND", wav,
                                   "--sample-rate", "9600"],
                                  capture_output=True, text=True, timeout=120, env=env)
            self.assertEqual(done.returncode, 0, done.stderr)
            tb = gr.top_block()
            r = R.radio(kind="file", replay=wav, time_scale=20.0)
            out, status = recorder(), recorder()
            tb.msg_connect(r, "out", out, "in")
            tb.msg_connect(r, "status", status, "in")
            tb.start()
            try:
                self.assertTrue(out.wait_for(lambda m: len(m) >= 1, TIMEOUT_S))
            finally:
                tb.stop()
                tb.wait()
        data = bytes(pmt.u8vector_elements(pmt.cdr(out.messages[0])))
        self.assertTrue(data.startswith(b"RADIO FILE KIND"), data)
        self.assertEqual(r.stats()["bursts_received"], 1)
        self.assertIn("snr_db_mean", r.stats())

    def test_file_kind_records_its_transmissions(self):
        with tempfile.TemporaryDirectory() as d:
            wav = os.path.join(d, "tx.wav")
            tb = gr.top_block()
            r = R.radio(kind="file", record=wav, sample_rate=8000.0)
            status = recorder()
            tb.msg_connect(r, "status", status, "in")
            tb.start()
            try:
                # (a hier block's port takes no posts: to its transmitter directly)
                r.tx._post(pmt.intern("in"), hfstack.make_pdu(b"\x01\x02\x03"))
                started = status.wait_for(lambda m: len(m) >= 1, TIMEOUT_S)
            finally:
                tb.stop()
                tb.wait()
            self.assertTrue(started)
            with wave.open(wav) as w:
                self.assertEqual((w.getframerate(), w.getnchannels(), w.getsampwidth()), (8000, 1, 2))

    def uhd_radio(self, **options):
        """A uhd radio built on stand-ins for the USRP (none is needed), and its sink."""
        from gnuradio import uhd
        sinks = []

        def make_sink(*args):
            sinks.append(usrp_stand_in(*args))
            return sinks[-1]

        saved = uhd.usrp_source, uhd.usrp_sink
        uhd.usrp_source, uhd.usrp_sink = usrp_source_stand_in, make_sink
        try:
            r = R.radio(kind="uhd", **options)
        finally:
            uhd.usrp_source, uhd.usrp_sink = saved
        (sink,) = sinks
        return r, sink

    def send_to_usrp(self, r, sink, payload):
        """Runs the radio until `payload`'s burst has reached the sink (its tx_eob)."""
        tb = gr.top_block()
        status = recorder()
        tb.msg_connect(r, "status", status, "in")  # brings the hier block into the flowgraph
        tb.start()
        try:
            r.tx._post(pmt.intern("in"), hfstack.make_pdu(payload))
            with sink.changed:
                return sink.changed.wait_for(lambda: any(k == "tx_eob" for _, k in sink.tags),
                                             TIMEOUT_S)
        finally:
            tb.stop()
            tb.wait()

    def test_uhd_kind_sends_only_the_bursts_to_the_usrp(self):
        r, sink = self.uhd_radio(frequency_hz=7.0758e6, tx_gain_db=10.0, tx_antenna="TX/RX")
        self.assertEqual((sink.rate, sink.settings),
                         (240000.0, {"frequency": 7.0758e6, "gain": 10.0, "antenna": "TX/RX"}))
        done = self.send_to_usrp(r, sink, b"\x01\x02\x03")
        self.assertTrue(done)
        x = np.concatenate(sink.samples)
        # One burst, tagged on its first and last sample, nothing before it: the silence
        # between transmissions never reaches the USRP.
        eob = [o for o, k in sink.tags if k == "tx_eob"][0]
        self.assertEqual([o for o, k in sink.tags if k == "tx_sob"], [0])
        self.assertEqual(len(x), eob + 1)
        self.assertGreater(eob, 1.2 * 240000)  # 2400S: a 0.6 s preamble and a 0.6 s block
        self.assertGreater(np.abs(x[:eob + 1]).max(), 0.1)

    def test_stanag_5069_bandwidths_rates_and_refusals(self):
        """A STANAG 5069 mode sets the rates and the tuning; real audio refuses
        the bandwidths it cannot hold, in one clear line."""
        self.assert_refused("radio kind audio: mode WN12/48kHz/US (48 kHz) does not fit real "
                            "audio at 48000 Hz", kind="audio", mode="WN12/48kHz/US")
        self.assert_refused("radio kind loopback: mode WN6/9kHz/S (9 kHz) does not fit real "
                            "audio at 48000 Hz", mode="WN6/9kHz/S")
        self.assert_refused("radio option mode 'WN12/50kHz/US'", kind="audio", mode="WN12/50kHz/US")
        self.assert_refused("mode does not apply to kind emulator", kind="emulator",
                            mode="WN12/48kHz/US")
        # Real audio holds 3 and 6 kHz; files above that are I/Q; the USRP takes any.
        for kind, mode, rate, iq in (("audio", "WN8/6kHz/US", 48000.0, False),
                                     ("loopback", "WN8/3kHz/S", 9600.0, False),
                                     ("file", "WN8/6kHz/US", 48000.0, False),
                                     ("file", "WN12/48kHz/US", 153600.0, True),
                                     ("uhd", "WN12/48kHz/US", 153600.0, True)):
            with self.subTest(kind=kind, mode=mode):
                extra = {"record": "x.wav"} if kind == "file" else (
                    {"frequency_hz": 7e6} if kind == "uhd" else {})
                o = R.check_options(dict(kind=kind, mode=mode, **extra))
                self.assertEqual((R.modem_rate(o), R.complex_streams(o)), (rate, iq))

        def uhd(**kw):
            return R.uhd_rates(R.check_options(dict(kind="uhd", frequency_hz=7e6, **kw)))
        self.assertEqual(uhd(), {"usrp_rate": 240000.0, "modem_rate": 9600.0, "decimation": 25})
        self.assertEqual(uhd(mode="WN12/48kHz/US"),
                         {"usrp_rate": 307200.0, "modem_rate": 153600.0, "decimation": 2})
        self.assertEqual(uhd(mode="WN10/6kHz/L"),
                         {"usrp_rate": 249600.0, "modem_rate": 19200.0, "decimation": 13})
        self.assertEqual(uhd(mode="WN12/48kHz/US", usrp_rate=153600.0)["decimation"], 1)
        self.assert_refused("usrp_rate 240000 is not a multiple of the modem rate 153600",
                            kind="uhd", frequency_hz=7e6, mode="WN12/48kHz/US", usrp_rate=240000.0)
        # A modem rate that cannot hold the band: refused at construction, naming both.
        self.assert_refused("mode WN12/48kHz/US (48 kHz) does not fit complex baseband at "
                            "48000 Hz", kind="uhd", frequency_hz=7e6, mode="WN12/48kHz/US",
                            sample_rate=48000.0)
        self.assert_refused("mode WN12/48kHz/US (48 kHz) does not fit complex baseband at "
                            "48000 Hz", kind="file", record="x.wav", mode="WN12/48kHz/US",
                            sample_rate=48000.0)
        # Tuning on the signal's centre: the USB dial plus the mode's carrier.
        self.assertEqual(R.signal_centre_hz(7.074e6, "2400S"), 7.0758e6)
        self.assertEqual(R.signal_centre_hz(7.0e6, "WN12/48kHz/US"), 7.0243e6)
        self.assertEqual(R.signal_centre_hz(7.0e6, "WN8/3kHz/L"), 7.0018e6)

    def test_uhd_kind_sends_a_48_khz_burst_at_the_chosen_rate(self):
        r, sink = self.uhd_radio(mode="WN12/48kHz/US",
                                 frequency_hz=R.signal_centre_hz(7.0e6, "WN12/48kHz/US"))
        self.assertEqual((sink.rate, sink.settings["frequency"]), (307200.0, 7.0243e6))
        self.assertEqual(r.rates["decimation"], 2)
        done = self.send_to_usrp(r, sink, bytes(range(200)))
        self.assertTrue(done)
        eob = [o for o, k in sink.tags if k == "tx_eob"][0]
        self.assertEqual([o for o, k in sink.tags if k == "tx_sob"], [0])
        # The burst lasts App D's air time of 200 bytes at 240 kbps, at 307.2 kS/s.
        from gnuradio.hfstack import sim
        self.assertAlmostEqual((eob + 1) / 307200.0, sim.air_time("WN12/48kHz/US", 200),
                               delta=0.002)

    @staticmethod
    def run_radio(r, port, until, *payloads):
        """Runs radio `r` (posting `payloads` to its transmitter) until what its `port`
        posted satisfies `until`; (satisfied, the posts)."""
        tb = gr.top_block()
        posts = recorder()
        tb.msg_connect(r, port, posts, "in")
        tb.start()
        try:
            for payload in payloads:
                r.tx._post(pmt.intern("in"), hfstack.make_pdu(payload))
            return posts.wait_for(until, TIMEOUT_S), posts
        finally:
            tb.stop()
            tb.wait()

    def test_file_kind_records_and_replays_48_khz_as_iq(self):
        def event(x):
            return pmt.symbol_to_string(pmt.dict_ref(x, pmt.intern("event"), pmt.PMT_NIL))
        with tempfile.TemporaryDirectory() as d:
            wav = os.path.join(d, "wide.wav")
            r = R.radio(kind="file", record=wav, mode="WN12/48kHz/US", time_scale=10.0)
            # Stopping a flowgraph drops what its buffers hold (up to ~0.1 s of air after
            # tx_finished): a second transmission, longer than the buffers, fences the
            # first one into the file.
            finished, _ = self.run_radio(
                r, "status", lambda m: sum(event(x) == "tx_finished" for x in m) == 2,
                b"WIDEBAND FILE KIND" * 20, b"FENCE" * 72)
            self.assertTrue(finished)
            with wave.open(wav) as w:
                self.assertEqual((w.getframerate(), w.getnchannels()), (153600, 2))
                frames = w.readframes(w.getnframes())
            with wave.open(wav, "wb") as w:  # half a second of silence after the burst
                w.setnchannels(2)
                w.setsampwidth(2)
                w.setframerate(153600)
                w.writeframes(frames + bytes(4 * 76800))
            r = R.radio(kind="file", replay=wav, mode="WN12/48kHz/US", time_scale=10.0)
            got, out = self.run_radio(r, "out", lambda m: sum(
                len(pmt.u8vector_elements(pmt.cdr(x))) for x in m) >= 360)
        self.assertTrue(got)
        data = b"".join(bytes(pmt.u8vector_elements(pmt.cdr(x))) for x in out.messages)
        self.assertTrue(data.startswith(b"WIDEBAND FILE KIND" * 20), data[:40])
        meta = pmt.car(out.messages[-1])
        self.assertEqual(pmt.symbol_to_string(pmt.dict_ref(meta, pmt.intern("mode"), pmt.PMT_NIL)),
                         "WN12/48kHz/US")
        # A mono file is not I/Q: refused in one line.
        self.assert_refused("2 channels", kind="file", replay=self.mono_wav(), mode="WN12/48kHz/US")

    def mono_wav(self):
        path = os.path.join(tempfile.mkdtemp(), "mono.wav")
        with wave.open(path, "wb") as w:
            w.setnchannels(1)
            w.setsampwidth(2)
            w.setframerate(48000)
            w.writeframes(bytes(960))
        self.addCleanup(shutil.rmtree, os.path.dirname(path))
        return path

    def test_burst_gate_passes_only_bursts_with_their_tags(self):
        x = np.arange(1, 101, dtype=np.complex64)
        tags = []
        for offset, key in ((10, "tx_sob"), (19, "tx_eob"), (50, "tx_sob"), (52, "tx_eob")):
            t = gr.tag_t()
            t.offset, t.key, t.value = offset, pmt.intern(key), pmt.PMT_T
            tags.append(t)
        tb = gr.top_block()
        src = blocks.vector_source_c(x.tolist(), False, 1, tags)
        sink = blocks.vector_sink_c()
        gate = R.burst_gate()  # a Python block must outlive the run
        tb.connect(src, gate, sink)
        tb.run()
        expected = np.concatenate([x[10:20], x[50:53]])
        np.testing.assert_array_equal(np.array(sink.data()), expected)
        got = sorted((t.offset, pmt.symbol_to_string(t.key)) for t in sink.tags())
        self.assertEqual(got, [(0, "tx_sob"), (9, "tx_eob"), (10, "tx_sob"), (12, "tx_eob")])

    def test_command_line_options_map_to_the_table(self):
        p = argparse.ArgumentParser()
        R.add_arguments(p)
        a = p.parse_args(["--kind", "emulator", "--snr-db", "12", "--ber", "1e-4"])
        o = R.from_arguments(a, {"seed": 7, "snr_db": 30.0})
        self.assertEqual(o, {"kind": "emulator", "snr_db": 12.0, "ber": 1e-4, "seed": 7})
        self.assertEqual(R.check_options(o)["profile"], "mid_latitude_moderate")
        names = {o.name for o in R.RADIO_OPTIONS}
        self.assertEqual(len(names), len(R.RADIO_OPTIONS))

    def test_grc_block_offers_every_option_with_its_default_for_its_kinds(self):
        """grc/hfstack_radio.block.yml and RADIO_OPTIONS cannot drift apart: one GRC
        parameter per option, the same default, and the block's make template passes an
        option exactly for the kinds the table gives it."""
        import ast
        import yaml
        from mako.template import Template
        with open(os.path.join(TOP, "grc", "hfstack_radio.block.yml")) as f:
            block = yaml.safe_load(f)
        params = {q["id"]: q for q in block["parameters"]}
        self.assertEqual(set(params), set(R.DEFAULTS))
        for o in R.RADIO_OPTIONS:
            default = params[o.name].get("default", "")
            self.assertEqual(type(o.default)(default), o.default, o.name)

        def code(o):  # a parameter's value as GRC writes it into Python
            q = params[o.name]
            if q["dtype"] == "enum":
                return str(q["default"])
            if isinstance(o.default, str):
                return repr(o.default)
            return str(o.default)
        make = Template(block["templates"]["make"])
        for kind in R.KINDS:
            values = {o.name: code(o) for o in R.RADIO_OPTIONS}
            values["kind"] = kind
            call = ast.parse(make.render(**values).strip(), mode="eval").body
            passed = {k.arg for k in call.keywords}
            wanted = {o.name for o in R.RADIO_OPTIONS if kind in o.kinds} | {"kind"}
            self.assertEqual(passed, wanted, kind)


if __name__ == "__main__":
    gr_unittest.run(qa_radio)
