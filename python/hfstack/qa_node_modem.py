#!/usr/bin/env python3
#
# Copyright 2026 gr-hfstack authors.
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""Two node blocks joined by the real STANAG 4539 modem (s4539_tx / s4539_rx, 2400S,
audio at 9600 Hz) over the Watterson channel (hf_channel_ff, F.1487 moderate, 20 dB),
one channel per direction, each paced to real time by a throttle: the node and modem
blocks honour the same burst contract (PDUs to the modem, decoded bursts and
tx_started / tx_finished / carrier status back), so an ARQ exchange between SIS clients
completes. Real time: about 13 s. No sleeps: the test waits on what the recorders
receive, with a bounded timeout."""

import time

import pmt
from gnuradio import blocks, gr, gr_unittest
from gnuradio import hfstack
from gnuradio.hfstack.sis.client import bind_request, unidata_request

from test_support import primitives, recorder, sis_pdu, types

dl = hfstack.dl

SAMPLE_RATE = 9600
OPTIONS = "mode=2400S;channel_access.mode=none"
TIMEOUT_S = 120.0


class qa_node_modem(gr_unittest.TestCase):

    def test_two_nodes_exchange_arq_data_through_the_modem_over_a_fading_channel(self):
        tb = gr.top_block()
        a = hfstack.node("0.0.0.1", OPTIONS, 1.0)
        b = hfstack.node("0.0.0.2", OPTIONS, 1.0)
        out_a, out_b = recorder(), recorder()
        receivers = []
        for source, sink, seed in ((a, b, 1), (b, a, 2)):
            tx = hfstack.s4539_tx(SAMPLE_RATE, False, 2400, "short")
            pace = blocks.throttle(gr.sizeof_float, SAMPLE_RATE)
            channel = hfstack.hf_channel_ff(SAMPLE_RATE, "moderate", [], [], [], [], 20.0, 3000.0,
                                            0.0625, 0.0, 0.0, 0.02, seed)
            rx = hfstack.s4539_rx(SAMPLE_RATE, False, True)  # streaming, as the radio front end
            tb.connect(tx, pace, channel, rx)
            tb.msg_connect(source, "to_phy", tx, "in")
            tb.msg_connect(tx, "status", source, "phy_status")
            tb.msg_connect(rx, "out", sink, "from_phy")
            tb.msg_connect(rx, "status", sink, "phy_status")
            receivers.append(rx)
        tb.msg_connect(a, "sis_out", out_a, "in")
        tb.msg_connect(b, "sis_out", out_b, "in")
        payload = bytes(range(256)) * 2
        a._post(pmt.intern("sis_in"), sis_pdu(7, bind_request(3)))
        b._post(pmt.intern("sis_in"), sis_pdu(9, bind_request(3)))
        a._post(pmt.intern("sis_in"), sis_pdu(7, unidata_request(2, 3, payload)))
        started = time.monotonic()
        tb.start()
        try:
            got = out_b.wait_for(lambda m: dl.sis_type.unidata_indication in types(m), TIMEOUT_S)
            confirmed = out_a.wait_for(lambda m: dl.sis_type.unidata_request_confirm in types(m), TIMEOUT_S)
        finally:
            tb.stop()
            tb.wait()
        print("delivered and confirmed in %.1f s" % (time.monotonic() - started))
        self.assertTrue(got, "no S_UNIDATA_INDICATION at node b")
        self.assertTrue(confirmed, "no S_UNIDATA_REQUEST_CONFIRM at node a")
        client, indication = [x for x in primitives(out_b.messages)
                              if x[1].type == dl.sis_type.unidata_indication][0]
        self.assertEqual(client, 9)
        self.assertEqual(indication.payload, payload)
        self.assertEqual(indication.source.address, 1)
        # Both directions carried decoded bursts: the data one way, its ACK the other.
        self.assertGreaterEqual(receivers[0].bursts(), 1)
        self.assertGreaterEqual(receivers[1].bursts(), 1)


if __name__ == "__main__":
    gr_unittest.run(qa_node_modem)
