#!/usr/bin/env python3
#
# Copyright 2026 gr-hfstack authors.
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""Python bindings of the STANAG 5066 codecs: spec vectors, round trips, errors."""

import random

from gnuradio import gr_unittest
from gnuradio import hfstack

dl = hfstack.dl


class qa_dl_codecs(gr_unittest.TestCase):

    def test_crc_check_values(self):
        self.assertEqual(dl.crc16(b"123456789"), 0x7D01)
        self.assertEqual(dl.crc32(b"123456789"), 0x6738A384)

    def test_warning_vector(self):
        d = dl.dpdu()
        d.type = dl.dpdu_type.warning
        d.destination = 5
        d.source = 100
        d.warning_reason = 2
        wire = bytes.fromhex("90EBF0000047056402 5F1E".replace(" ", ""))
        self.assertEqual(dl.encode_dpdu(d), wire)
        back = dl.decode_dpdu(wire)
        self.assertEqual(back.type, dl.dpdu_type.warning)
        self.assertEqual((back.destination, back.source, back.warning_reason), (5, 100, 2))

    def test_round_trip_from_python(self):
        rng = random.Random(5066)
        for _ in range(200):
            d = dl.dpdu()
            d.type = dl.dpdu_type.data_ack
            d.destination = rng.randrange(1 << 28)
            d.source = rng.randrange(1 << 28)
            d.tx_sequence = rng.randrange(256)
            d.rx_lwe = rng.randrange(256)
            d.selective_acks = bytes(rng.randrange(256) for _ in range(rng.randrange(17)))
            d.segment = bytearray(rng.randrange(256) for _ in range(rng.randrange(1024)))
            back = dl.decode_dpdu(dl.encode_dpdu(d))
            d.address_size = back.address_size
            self.assertEqual(back, d)
            self.assertIsInstance(back.segment, bytes)

    def test_long_fsn_from_python(self):
        """S5066-EP5: two-byte FSNs when the caller says the link uses them."""
        d = dl.dpdu()
        d.type = dl.dpdu_type.data_ack
        d.long_fsn = True
        d.tx_sequence, d.rx_lwe = 40000, 65535
        d.selective_acks = bytes(range(19))
        d.segment = b"large"
        back = dl.decode_dpdu(dl.encode_dpdu(d), long_fsn=True)
        d.address_size = back.address_size
        self.assertEqual(back, d)

    def test_errors_are_clear(self):
        d = dl.dpdu()
        d.segment = bytes(1024)
        with self.assertRaisesRegex(ValueError, "segment has 1024 bytes"):
            dl.encode_dpdu(d)
        with self.assertRaisesRegex(ValueError, "truncated"):
            dl.decode_dpdu(b"\x90\xeb\x00")
        wire = bytearray(dl.encode_dpdu(dl.dpdu()))
        wire[4] ^= 1
        with self.assertRaisesRegex(ValueError, "header_crc"):
            dl.decode_dpdu(bytes(wire))

    def test_deframer_from_python(self):
        frames = []
        stream = b"junk"
        for seq in range(5):
            d = dl.dpdu()
            d.tx_sequence = seq
            d.segment = bytes([seq]) * 10
            frames.append(d)
            stream += dl.encode_dpdu(d)
        f = dl.dpdu_deframer()
        got = f.push(stream[:30]) + f.push(stream[30:])
        self.assertEqual([r.frame.tx_sequence for r in got], list(range(5)))
        self.assertTrue(all(r.segment_ok for r in got))
        self.assertEqual(f.counters().junk_bytes, 4)

    def test_keyword_helpers(self):
        d = hfstack.make_dpdu("data_only", tx_sequence=5, segment=b"xyz")
        self.assertEqual(dl.decode_dpdu(dl.encode_dpdu(d)).segment, b"xyz")
        s = hfstack.make_sis("bind_request", sap=9)
        self.assertEqual(dl.encode_sis(s)[6] >> 4, 9)
        msg = hfstack.make_pdu(b"\x01\x02", client_id=4)
        self.assertEqual(hfstack.pdu_bytes(msg), b"\x01\x02")
        with self.assertRaisesRegex(AttributeError, "no field 'tx_seq'"):
            hfstack.make_dpdu("data_only", tx_seq=5)
        with self.assertRaises(AttributeError):
            hfstack.make_dpdu("no_such_type")


if __name__ == "__main__":
    gr_unittest.run(qa_dl_codecs)
