#!/usr/bin/env python3
#
# Copyright 2026 gr-hfstack authors.
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""modem_emulator: full nodes exchanging a long ARQ transfer through emulated modems at
time_scale 20 (the radio front end's `emulator` kind), three emulators sharing one
channel (a collision destroys both bursts, the carrier is seen), and bad input on its
ports. No sleeps: the tests wait on what recorders receive."""

import time

import pmt
from gnuradio import gr, gr_unittest
from gnuradio import hfstack
from gnuradio.hfstack import radio as radio_frontend

from test_support import QUIET, arq_exchange, events, recorder

dl = hfstack.dl
TIMEOUT_S = 120.0


def burst(data, rate=2400, interleaver="short"):
    return hfstack.make_pdu(data, data_rate=rate, interleaver=interleaver)


class qa_modem_emulator(gr_unittest.TestCase):

    def test_long_arq_transfer_between_nodes_at_time_scale_20(self):
        scale = 20.0
        # A receiver's settings make the errors of what it hears: the data to b get
        # errors, which ARQ must repair.
        ra = radio_frontend.radio(kind="emulator", time_scale=scale, profile="", seed=1)
        rb = radio_frontend.radio(kind="emulator", time_scale=scale, profile="", ber=2e-5, seed=2)
        count, size = 40, 1000
        sent = [bytes((i * 31 + k) % 256 for k in range(size)) for i in range(count)]
        a, _ = arq_exchange(self, "mode=2400S;" + QUIET, (ra, rb), scale, sent)
        received = rb.emulator.counters()
        self.assertGreater(int(received["bits_flipped"]), 0)
        self.assertGreater(a.counters()["arq_retransmissions"], 0)
        self.assertGreater(ra.stats()["bursts_received"], 0)
        self.assertGreater(rb.stats()["bytes_received"], count * size)

    def test_three_modems_share_a_channel_collisions_destroy_both(self):
        tb = gr.top_block()
        options = "key_up_s=0;carrier_detect_s=0.01;rx_latency_s=0"
        em = [hfstack.modem_emulator(10.0, "", 20.0, 0.0, k + 1, options) for k in range(3)]
        for i in range(3):
            for j in range(3):
                if i != j:
                    tb.msg_connect(em[i], "air_out", em[j], "air_in")
        out_c, status_c = recorder(), recorder()
        tb.msg_connect(em[2], "out", out_c, "in")
        tb.msg_connect(em[2], "status", status_c, "in")
        tb.start()
        try:
            # a and b transmit 100 bytes each at once (0.6 s on air each): they overlap.
            em[0]._post(pmt.intern("in"), burst(b"\x01" * 100))
            em[1]._post(pmt.intern("in"), burst(b"\x02" * 100))
            self.assertTrue(status_c.wait_for(lambda m: "carrier_off" in events(m), TIMEOUT_S))
            # A later burst from a alone arrives; delivery is in time order, so the two
            # colliding ones would have come first.
            em[0]._post(pmt.intern("in"), burst(b"\x03" * 10))
            self.assertTrue(out_c.wait_for(lambda m: len(m) >= 1, TIMEOUT_S))
        finally:
            tb.stop()
            tb.wait()
        self.assertEqual([hfstack.pdu_bytes(m) for m in out_c.messages], [b"\x03" * 10])
        c = em[2].counters()
        self.assertEqual(int(c["collisions"]), 2)
        self.assertEqual(int(c["bursts_heard"]), 3)
        meta = pmt.car(out_c.messages[0])
        self.assertEqual(pmt.to_long(pmt.dict_ref(meta, pmt.intern("data_rate"), pmt.PMT_NIL)), 2400)
        self.assertEqual(pmt.to_double(pmt.dict_ref(meta, pmt.intern("snr_db"), pmt.PMT_NIL)), 20.0)

    def test_a_burst_keys_up_as_of_the_decision_it_names(self):
        """A node names the channel time of its decision (channel_time, the shared
        monotonic clock times the time scale): the emulator keys the burst up from then,
        not from when the message reached it, but from no more than two real seconds
        back (times the time scale, at least 1 s); the status messages name their
        channel time."""
        tb = gr.top_block()
        key_up = 0.25
        a = hfstack.modem_emulator(1.0, "", 20.0, 0.0, 1, f"key_up_s={key_up}")
        air_c, status_c = recorder(), recorder()
        tb.msg_connect(a, "air_out", air_c, "in")
        tb.msg_connect(a, "status", status_c, "in")
        tb.start()

        def decided_at(data, t):
            p = burst(data)
            return pmt.cons(pmt.dict_add(pmt.car(p), pmt.intern("channel_time"),
                                         pmt.from_double(t)), pmt.cdr(p))

        def start_of(m):
            return pmt.to_double(pmt.dict_ref(pmt.car(m), pmt.intern("air_start"), pmt.PMT_NIL))
        try:
            # Half a second back: taken as it is (the emulator reads it within 0.5 s).
            decided = time.monotonic() - 0.5
            a._post(pmt.intern("in"), decided_at(b"\x01" * 10, decided))
            self.assertTrue(air_c.wait_for(lambda m: len(m) >= 1, TIMEOUT_S))
            self.assertTrue(status_c.wait_for(
                lambda m: sum("tx_finished" in events([x]) for x in m) >= 1, TIMEOUT_S))
            # A minute back: a stalled node is late, its burst starts 2 s back at most.
            stale = time.monotonic() - 60.0
            a._post(pmt.intern("in"), decided_at(b"\x02" * 10, stale))
            self.assertTrue(air_c.wait_for(lambda m: len(m) >= 2, TIMEOUT_S))
        finally:
            tb.stop()
            tb.wait()
        self.assertEqual(start_of(air_c.messages[0]), decided + key_up)
        self.assertGreater(start_of(air_c.messages[1]), stale + 30.0)
        started = [m for m in status_c.messages if "tx_started" in events([m])]
        self.assertEqual(pmt.to_double(pmt.dict_ref(started[0], pmt.intern("channel_time"),
                                                    pmt.PMT_NIL)), decided + key_up)

    def test_bad_input_is_counted_and_dropped(self):
        tb = gr.top_block()
        a = hfstack.modem_emulator(50.0, "", 20.0, 0.0, 1, "key_up_s=0")
        b = hfstack.modem_emulator(50.0)
        tb.msg_connect(a, "air_out", b, "air_in")
        out_b = recorder()
        tb.msg_connect(b, "out", out_b, "in")
        tb.start()
        try:
            b._post(pmt.intern("air_in"), pmt.intern("garbage"))
            b._post(pmt.intern("air_in"), burst(b"no air metadata"))
            b._post(pmt.intern("in"), pmt.from_long(5))
            # A burst from an emulator with another time scale is refused.
            meta = pmt.make_dict()
            for k, v in (("source", pmt.from_long(99)), ("air_start", pmt.from_double(0.0)),
                         ("air_time", pmt.from_double(1.0)), ("time_scale", pmt.from_double(1.0)),
                         ("data_rate", pmt.from_long(2400)), ("interleaver", pmt.intern("short"))):
                meta = pmt.dict_add(meta, pmt.intern(k), v)
            b._post(pmt.intern("air_in"), pmt.cons(meta, pmt.init_u8vector(3, [1, 2, 3])))
            # The same time scale but a start that is not a number: refused, the
            # emulator's schedule untouched (it still delivers below).
            meta = pmt.dict_add(meta, pmt.intern("time_scale"), pmt.from_double(50.0))
            meta = pmt.dict_add(meta, pmt.intern("air_start"), pmt.from_double(float("nan")))
            b._post(pmt.intern("air_in"), pmt.cons(meta, pmt.init_u8vector(3, [1, 2, 3])))
            a._post(pmt.intern("in"), burst(b"fine"))
            self.assertTrue(out_b.wait_for(lambda m: len(m) >= 1, TIMEOUT_S))
        finally:
            tb.stop()
            tb.wait()
        self.assertEqual([hfstack.pdu_bytes(m) for m in out_b.messages], [b"fine"])
        c = b.counters()
        self.assertEqual(int(c["bad_inputs"]), 5)
        self.assertEqual(int(c["bursts_heard"]), 1)

    def test_bad_parameters_raise(self):
        for args in ((0.0,), (1.0, "no_such_profile"), (1.0, "", 20.0, 1.5),
                     (1.0, "", 20.0, 0.0, 1, "key_up_s=-1"), (1.0, "", 20.0, 0.0, 1, "bogus=1"),
                     (1.0, "", 20.0, 0.0, 1, "unkey_s=fast")):
            with self.assertRaises(ValueError, msg=repr(args)):
                hfstack.modem_emulator(*args)


if __name__ == "__main__":
    gr_unittest.run(qa_modem_emulator)
