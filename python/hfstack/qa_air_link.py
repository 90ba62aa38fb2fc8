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

import tempfile

import pmt
from gnuradio import gr, gr_unittest
from gnuradio import hfstack
from gnuradio.hfstack import radio as radio_frontend
from gnuradio.hfstack.air_link import link_emulator, link_samples
from gnuradio.hfstack.sis.client import bind_request, unidata_request

from test_support import free_port, primitives, recorder, sis_pdu, types

dl = hfstack.dl
TIMEOUT_S = 60.0


def station(address, scale, radio_block, wire_air):
    """A flowgraph: a node, its radio (a modem_emulator or a radio hier block) joined
    to the shared channel by `wire_air(tb, radio_block)`, and a recorder of its SIS
    output."""
    tb = gr.top_block()
    node = hfstack.node(address, "mode=2400S;supervision.keep_alive_interval_s=36000", scale)
    tb.msg_connect(node, "to_phy", radio_block, "in")
    tb.msg_connect(radio_block, "out", node, "from_phy")
    tb.msg_connect(radio_block, "status", node, "phy_status")
    wire_air(tb, radio_block)
    out = recorder()
    tb.msg_connect(node, "sis_out", out, "in")
    return tb, node, out


class qa_air_link(gr_unittest.TestCase):

    def exchange(self, a, b, sent):
        """U_PDUs `sent` from station a's client to b's; returns once b got them all."""
        (tb_a, node_a, _), (tb_b, node_b, out_b) = a, b
        node_a._post(pmt.intern("sis_in"), sis_pdu(7, bind_request(3)))
        node_b._post(pmt.intern("sis_in"), sis_pdu(9, bind_request(3)))
        for u in sent:
            node_a._post(pmt.intern("sis_in"), sis_pdu(7, unidata_request(2, 3, u)))
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

    def test_two_flowgraphs_share_one_channel(self):
        scale = 20.0
        pa, pb = (f"tcp://127.0.0.1:{free_port()}" for _ in range(2))
        em_a = hfstack.modem_emulator(scale, "", 20.0, 0.0, 1, "emulator_id=101")
        em_b = hfstack.modem_emulator(scale, "", 20.0, 0.0, 1, "emulator_id=102")
        a = station("0.0.0.1", scale, em_a, lambda tb, em: link_emulator(tb, em, pa, [pb]))
        b = station("0.0.0.2", scale, em_b, lambda tb, em: link_emulator(tb, em, pb, [pa]))
        self.exchange(a, b, [bytes((i * 7 + k) % 256 for k in range(500)) for i in range(5)])
        self.assertGreater(int(em_b.counters()["bursts_heard"]), 0)

    def test_real_modems_share_audio_over_zeromq(self):
        # The STANAG 4539 modem at 2400S through the AWGN channel at 30 dB, clock 4x.
        scale = 4.0
        pa, pb = (f"tcp://127.0.0.1:{free_port()}" for _ in range(2))
        ra, rb = (radio_frontend.radio(kind="loopback", time_scale=scale, profile="awgn",
                                       snr_db=30.0, seed=seed, data_rate=2400,
                                       interleaver="short") for seed in (1, 2))
        a = station("0.0.0.1", scale, ra, lambda tb, r: link_samples(tb, r, pa, pb))
        b = station("0.0.0.2", scale, rb, lambda tb, r: link_samples(tb, r, pb, pa))
        self.exchange(a, b, [bytes((i * 11 + k) % 256 for k in range(300)) for i in range(2)])
        self.assertGreater(rb.stats()["bursts_received"], 0)

    def test_radio_options_join_real_modems_across_flowgraphs(self):
        # What hfstack-node --kind loopback --air-publish/--air-subscribe builds: the
        # radio front end does the ZeroMQ wiring itself, here over ipc:// files.
        scale = 4.0
        with tempfile.TemporaryDirectory() as d:
            ra, rb = (radio_frontend.radio(kind="loopback", time_scale=scale, profile="awgn",
                                           snr_db=30.0, seed=seed, data_rate=2400,
                                           interleaver="short", air_publish=f"ipc://{d}/{me}",
                                           air_subscribe=f"ipc://{d}/{other}")
                      for seed, me, other in ((1, "a", "b"), (2, "b", "a")))
            a = station("0.0.0.1", scale, ra, lambda tb, r: None)
            b = station("0.0.0.2", scale, rb, lambda tb, r: None)
            self.exchange(a, b, [bytes((i * 13 + k) % 256 for k in range(200)) for i in range(2)])
        self.assertGreater(rb.stats()["bursts_received"], 0)
        with self.assertRaises(radio_frontend.radio_error):
            radio_frontend.join(gr.top_block(), ra, rb)


if __name__ == "__main__":
    gr_unittest.run(qa_air_link)
