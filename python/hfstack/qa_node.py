#!/usr/bin/env python3
#
# Copyright 2026 gr-hfstack authors.
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""node block: options, two nodes wired back to back exchanging ARQ data between
in-process SIS clients, client errors, captures. No sleeps: the test waits on a
condition the recording blocks signal, with a bounded timeout."""

import os
import tempfile

import pmt
from gnuradio import blocks, gr, gr_unittest
from gnuradio import hfstack
from gnuradio.hfstack.sis.client import bind_request, unidata_request

from test_support import primitives, read_pcap, recorder, sis_pdu, types

dl = hfstack.dl

# Fast protocol settings so an exchange takes well under a second of real time.
FAST = "mode=9600S;turnaround_s=0.2;response_margin_s=1;channel_access.mode=none"
TIME_SCALE = 20.0


class qa_node(gr_unittest.TestCase):

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()

    def tearDown(self):
        self.tmp.cleanup()

    def test_options_are_checked_and_readable(self):
        n = hfstack.node("0.0.1.2", "mode=1200L; cas.idle_timeout=60")
        self.assertEqual(n.option("address"), "0.0.1.2")
        self.assertEqual(n.option("mode"), "1200L")
        self.assertEqual(n.option("cas.idle_timeout"), "60")
        self.assertIn("cas.idle_timeout (default 120)", hfstack.node_option_help())
        with self.assertRaisesRegex(ValueError, "unknown node option 'nosuch'"):
            hfstack.node("0.0.0.1", "nosuch=3")
        with self.assertRaisesRegex(ValueError, "option address = '1.2.3': expected a node address"):
            hfstack.node("1.2.3")
        with self.assertRaisesRegex(ValueError, "time_scale"):
            hfstack.node("0.0.0.1", "", 0.0)

    def test_unwritable_capture_makes_start_raise(self):
        """tb.start() used to wait for ever (the capture was opened in start(), in the
        block's thread, before GNU Radio's start barrier); a child process bounds the
        wait, so the old behaviour fails this test instead of hanging the suite."""
        import subprocess
        import sys
        code = ("from gnuradio import gr, hfstack\n"
                "tb = gr.top_block()\n"
                "tb.msg_connect(hfstack.node('0.0.0.1', '', 1.0, '/nonexistent/dir/n.pcap', 0),"
                " 'to_phy', hfstack.node('0.0.0.2', '', 1.0, '', 0), 'from_phy')\n"
                "try:\n"
                "    tb.start()\n"
                "except RuntimeError as e:\n"
                "    print('refused:', e)\n")
        done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                              timeout=60, env=os.environ)
        self.assertIn("refused: cannot create capture file '/nonexistent/dir/n.pcap'",
                      done.stdout, done.stderr)

    def test_two_nodes_exchange_arq_data_between_clients(self):
        tb = gr.top_block()
        pcap = os.path.join(self.tmp.name, "a.pcap")
        a = hfstack.node("0.0.0.1", FAST, TIME_SCALE, pcap, 1.0)  # stats every protocol second
        b = hfstack.node("0.0.0.2", FAST, TIME_SCALE)
        out_a, out_b = recorder(), recorder()
        stats = blocks.message_debug()
        # The air: each node's bursts reach the other one, error free.
        tb.msg_connect(a, "to_phy", b, "from_phy")
        tb.msg_connect(b, "to_phy", a, "from_phy")
        tb.msg_connect(a, "sis_out", out_a, "in")
        tb.msg_connect(b, "sis_out", out_b, "in")
        tb.msg_connect(a, "stats", stats, "store")
        a._post(pmt.intern("sis_in"), sis_pdu(7, bind_request(3)))
        b._post(pmt.intern("sis_in"), sis_pdu(9, bind_request(3)))
        a._post(pmt.intern("sis_in"), sis_pdu(7, unidata_request(2, 3, b"hello over HF")))
        tb.start()
        try:
            got = out_b.wait_for(lambda m: dl.sis_type.unidata_indication in types(m))
            confirmed = out_a.wait_for(lambda m: dl.sis_type.unidata_request_confirm in types(m))
        finally:
            tb.stop()
            tb.wait()
        self.assertTrue(got, "no S_UNIDATA_INDICATION at node b")
        self.assertTrue(confirmed, "no S_UNIDATA_REQUEST_CONFIRM at node a")
        client, ind = [x for x in primitives(out_b.messages)
                       if x[1].type == dl.sis_type.unidata_indication][0]
        self.assertEqual(client, 9)
        self.assertEqual(ind.payload, b"hello over HF")
        self.assertEqual(ind.source.address, 1)
        self.assertEqual(ind.source_sap, 3)
        self.assertEqual(types(out_a.messages)[:2],
                         [dl.sis_type.bind_accepted, dl.sis_type.subnet_availability])
        counters = a.counters()
        self.assertGreaterEqual(float(counters["transmissions"]), 2)
        # Periodic counter dicts on `stats` (the exchange lasts several protocol seconds).
        self.assertGreaterEqual(stats.num_messages(), 1)
        first = stats.get_message(0)
        self.assertTrue(pmt.is_dict(first))
        self.assertTrue(pmt.dict_has_key(first, pmt.intern("dpdus_sent")))
        self.assertEqual(float(counters["updus_confirmed"]), 1)
        # Every D_PDU a sent and received is in its capture, as whole D_PDUs.
        _, linktype, records = read_pcap(pcap)
        records = [data for _, data in records]
        self.assertEqual(linktype, 237)
        self.assertEqual(len(records), float(counters["dpdus_sent"]) + float(counters["dpdus_received"]))
        for r in records:
            self.assertEqual(r[:2], b"\x90\xeb")

    def test_bursts_carry_mode_metadata(self):
        tb = gr.top_block()
        a = hfstack.node("0.0.0.1", "mode=600L;channel_access.mode=none", 1000.0)
        air = recorder()
        tb.msg_connect(a, "to_phy", air, "in")
        a._post(pmt.intern("sis_in"), sis_pdu(1, bind_request(3)))
        a._post(pmt.intern("sis_in"), sis_pdu(1, unidata_request(2, 3, b"x")))
        tb.start()
        try:
            self.assertTrue(air.wait_for(lambda m: len(m) >= 1))
        finally:
            tb.stop()
            tb.wait()
        meta = pmt.car(air.messages[0])
        self.assertEqual(pmt.to_long(pmt.dict_ref(meta, pmt.intern("data_rate"), pmt.PMT_NIL)), 600)
        self.assertEqual(pmt.symbol_to_string(pmt.dict_ref(meta, pmt.intern("interleaver"), pmt.PMT_NIL)), "long")
        self.assertGreater(pmt.to_double(pmt.dict_ref(meta, pmt.intern("air_time"), pmt.PMT_NIL)), 9.6)
        # A link request and a window reset, addressed 0.0.0.1 -> 0.0.0.2.
        frames = dl.dpdu_deframer().push(hfstack.pdu_bytes(air.messages[0]))
        self.assertEqual([f.frame.type for f in frames],
                         [dl.dpdu_type.expedited_non_arq_data, dl.dpdu_type.reset_win_resync])

    def test_garbage_client_is_unbound_and_dropped(self):
        tb = gr.top_block()
        a = hfstack.node("0.0.0.1", FAST, TIME_SCALE)
        out = recorder()
        tb.msg_connect(a, "sis_out", out, "in")
        a._post(pmt.intern("sis_in"), sis_pdu(4, bind_request(2)))
        # Not SIS at all, then the transport gives up on the connection.
        a._post(pmt.intern("sis_in"), hfstack.make_pdu(b"GET / HTTP/1.1\r\n", client_id=4))
        meta = pmt.make_dict()
        for k, v in (("client_id", pmt.from_long(4)), ("client_event", pmt.intern("invalid")),
                     ("reason", pmt.intern("5000 bytes without SIS sync")), ("fatal", pmt.PMT_T)):
            meta = pmt.dict_add(meta, pmt.intern(k), v)
        a._post(pmt.intern("sis_in"), pmt.cons(meta, pmt.init_u8vector(0, [])))
        tb.start()
        try:
            dropped = out.wait_for(lambda m: any(
                pmt.symbol_to_string(pmt.dict_ref(pmt.car(x), pmt.intern("client_event"), pmt.intern("")))
                == "disconnect" for x in m))
        finally:
            tb.stop()
            tb.wait()
        self.assertTrue(dropped)
        self.assertIn(dl.sis_type.unbind_indication, types(out.messages))
        unbind = [p for _, p in primitives(out.messages) if p.type == dl.sis_type.unbind_indication][0]
        self.assertEqual(unbind.reason, 3)  # too many invalid primitives
        last = pmt.car(out.messages[-1])
        self.assertEqual(pmt.to_long(pmt.dict_ref(last, pmt.intern("client_id"), pmt.PMT_NIL)), 4)
        self.assertIn("SIS sync", pmt.symbol_to_string(pmt.dict_ref(last, pmt.intern("reason"), pmt.PMT_NIL)))

    def test_unknown_messages_are_dropped_without_harm(self):
        tb = gr.top_block()
        a = hfstack.node("0.0.0.1", FAST, TIME_SCALE)
        out = recorder()
        tb.msg_connect(a, "sis_out", out, "in")
        for port, msg in (("sis_in", pmt.intern("not a pdu")),
                          ("from_phy", pmt.from_long(3)),
                          ("phy_status", pmt.make_dict()),
                          ("from_phy", hfstack.make_pdu(b"\x90\xeb" + bytes(40)))):
            a._post(pmt.intern(port), msg)
        a._post(pmt.intern("sis_in"), sis_pdu(1, bind_request(5)))
        tb.start()
        try:
            answered = out.wait_for(lambda m: dl.sis_type.bind_accepted in types(m))
        finally:
            tb.stop()
            tb.wait()
        self.assertTrue(answered)
        counters = a.counters()
        self.assertEqual(float(counters["bursts_received"]), 1)


if __name__ == "__main__":
    gr_unittest.run(qa_node)
