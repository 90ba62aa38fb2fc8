#!/usr/bin/env python3
#
# Copyright 2026 gr-hfstack authors.
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""pcap_sink block: PDUs in, capture records out, bad parameters refused."""

import os
import struct
import tempfile

import pmt
from gnuradio import gr, gr_unittest
from gnuradio import hfstack

from test_support import read_pcap

dl = hfstack.dl


class idle_source(gr.basic_block):
    """A message output for the sink to hang on; PDUs are posted to the sink directly."""

    def __init__(self):
        gr.basic_block.__init__(self, "idle_source", None, None)
        self.message_port_register_out(pmt.intern("out"))


DONE = pmt.cons(pmt.intern("done"), pmt.from_long(1))


class qa_pcap_sink(gr_unittest.TestCase):

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()

    def tearDown(self):
        self.tmp.cleanup()

    def run_sink(self, fmt, pdus):
        path = os.path.join(self.tmp.name, fmt + ".pcap")
        tb = gr.top_block()
        src = idle_source()
        sink = hfstack.pcap_sink(path, fmt)
        tb.msg_connect(src, "out", sink, "in")
        for p in pdus:
            sink._post(pmt.intern("in"), p)
        sink._post(pmt.intern("system"), DONE)
        src._post(pmt.intern("system"), DONE)
        tb.start()
        tb.wait()
        return path, sink.records()

    def frames(self, n):
        return [dl.encode_dpdu(hfstack.make_dpdu("data_only", tx_sequence=i,
                                                 segment=bytes([i]) * (10 + i)))
                for i in range(n)]

    def test_dpdu_burst_is_split_into_records(self):
        f = self.frames(3)
        burst = b"\x00junk" + f[0] + f[1] + b"\xff" + f[2]
        path, n = self.run_sink("dpdu", [hfstack.make_pdu(burst, time=1800000000.5),
                                         hfstack.make_pdu(b"no frame here")])
        magic, linktype, records = read_pcap(path)
        self.assertEqual((magic, linktype), (0xA1B2C3D4, 237))
        self.assertEqual([r[1] for r in records], f + [b"no frame here"])
        self.assertAlmostEqual(records[0][0], 1800000000.5, places=5)
        self.assertEqual(n, 4)

    def test_sis_records_are_tcp_to_port_5066(self):
        path, n = self.run_sink("sis", [hfstack.make_pdu(b"\x90\xeb\x00\x00\x01\x11", client_id=3, from_client=True)])
        _, linktype, records = read_pcap(path)
        self.assertEqual(linktype, 101)  # raw IPv4
        self.assertEqual(n, 4)  # SYN, SYN-ACK, ACK, data
        ip = records[-1][1]
        self.assertEqual(ip[0] >> 4, 4)
        src_port, dst_port = struct.unpack(">HH", ip[20:24])
        self.assertEqual((src_port, dst_port), (40003, 5066))
        self.assertEqual(ip[40:], b"\x90\xeb\x00\x00\x01\x11")

    def test_bad_format_is_refused(self):
        with self.assertRaisesRegex(ValueError, 'format must be "dpdu" or "sis"'):
            hfstack.pcap_sink(os.path.join(self.tmp.name, "x.pcap"), "wav")

    def test_unwritable_path_is_refused_with_the_path(self):
        with self.assertRaisesRegex(RuntimeError, "cannot create capture file '/nonexistent-dir/x.pcap'"):
            hfstack.pcap_sink("/nonexistent-dir/x.pcap", "dpdu")


if __name__ == "__main__":
    gr_unittest.run(qa_pcap_sink)
