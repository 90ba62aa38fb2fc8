#!/usr/bin/env python3
#
# Copyright 2026 gr-hfstack authors.
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""air_link: two flowgraphs, each a node with its modem emulator, share one emulated
channel through ZeroMQ sockets on loopback, as two processes would (each could then
live in its own network namespace): ARQ data cross, through the link-level emulators
and through the real modems' audio."""

import socket

import pmt
from gnuradio import gr, gr_unittest
from gnuradio import hfstack
from gnuradio.hfstack import radio as radio_frontend
from gnuradio.hfstack.air_link import link_emulator, link_samples
from gnuradio.hfstack.sis_client import bind_request, unidata_request

from qa_node import primitives, recorder, sis_pdu, types

dl = hfstack.dl
TIMEOUT_S = 60.0


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def station(address, emulator_id, scale, publish, subscribe):
    tb = gr.top_block()
    node = hfstack.node(address, "mode=2400S;supervision.keep_alive_interval_s=36000", scale)
    em = hfstack.modem_emulator(scale, "", 20.0, 0.0, 1, f"emulator_id={emulator_id}")
    tb.msg_connect(node, "to_phy", em, "in")
    tb.msg_connect(em, "out", node, "from_phy")
    tb.msg_connect(em, "status", node, "phy_status")
    link_emulator(tb, em, publish, subscribe)
    out = recorder()
    tb.msg_connect(node, "sis_out", out, "in")
    return tb, node, em, out


class qa_air_link(gr_unittest.TestCase):

    def test_two_flowgraphs_share_one_channel(self):
        pa, pb = (f"tcp://127.0.0.1:{free_port()}" for _ in range(2))
        tb_a, a, em_a, out_a = station("0.0.0.1", 101, 20.0, pa, [pb])
        tb_b, b, em_b, out_b = station("0.0.0.2", 102, 20.0, pb, [pa])
        sent = [bytes((i * 7 + k) % 256 for k in range(500)) for i in range(5)]
        a._post(pmt.intern("sis_in"), sis_pdu(7, bind_request(3)))
        b._post(pmt.intern("sis_in"), sis_pdu(9, bind_request(3)))
        for u in sent:
            a._post(pmt.intern("sis_in"), sis_pdu(7, unidata_request(2, 3, u)))
        tb_a.start()
        tb_b.start()
        try:
            done = out_b.wait_for(
                lambda m: types(m).count(dl.sis_type.unidata_indication) >= len(sent), TIMEOUT_S)
        finally:
            for tb in (tb_a, tb_b):
                tb.stop()
                tb.wait()
        self.assertTrue(done)
        got = [p.payload for _, p in primitives(out_b.messages)
               if p.type == dl.sis_type.unidata_indication]
        self.assertEqual(got, sent)
        heard = dict(line.split("=") for line in em_b.counters().split())
        self.assertGreater(int(heard["bursts_heard"]), 0)

    def test_real_modems_share_audio_over_zeromq(self):
        # The STANAG 4539 modem at 2400S through the AWGN channel at 30 dB, clock 4x.
        scale = 4.0
        pa, pb = (f"tcp://127.0.0.1:{free_port()}" for _ in range(2))
        stations = []
        for address, seed, publish, subscribe in (("0.0.0.1", 1, pa, pb), ("0.0.0.2", 2, pb, pa)):
            tb = gr.top_block()
            node = hfstack.node(address, "mode=2400S;supervision.keep_alive_interval_s=36000", scale)
            r = radio_frontend.radio(kind="loopback", time_scale=scale, profile="awgn",
                                     snr_db=30.0, seed=seed, data_rate=2400, interleaver="short")
            tb.msg_connect(node, "to_phy", r, "in")
            tb.msg_connect(r, "out", node, "from_phy")
            tb.msg_connect(r, "status", node, "phy_status")
            link_samples(tb, r, publish, subscribe)
            out = recorder()
            tb.msg_connect(node, "sis_out", out, "in")
            stations.append((tb, node, r, out))
        (tb_a, a, ra, _), (tb_b, b, rb, out_b) = stations
        sent = [bytes((i * 11 + k) % 256 for k in range(300)) for i in range(2)]
        a._post(pmt.intern("sis_in"), sis_pdu(7, bind_request(3)))
        b._post(pmt.intern("sis_in"), sis_pdu(9, bind_request(3)))
        for u in sent:
            a._post(pmt.intern("sis_in"), sis_pdu(7, unidata_request(2, 3, u)))
        tb_a.start()
        tb_b.start()
        try:
            done = out_b.wait_for(
                lambda m: types(m).count(dl.sis_type.unidata_indication) >= len(sent), TIMEOUT_S)
        finally:
            for tb in (tb_a, tb_b):
                tb.stop()
                tb.wait()
        self.assertTrue(done)
        got = [p.payload for _, p in primitives(out_b.messages)
               if p.type == dl.sis_type.unidata_indication]
        self.assertEqual(got, sent)
        self.assertGreater(rb.stats()["bursts_received"], 0)


if __name__ == "__main__":
    gr_unittest.run(qa_air_link)
