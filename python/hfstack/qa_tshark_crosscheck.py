#!/usr/bin/env python3
#
# Copyright 2026 gr-hfstack authors.
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""Independent verification of the wire formats against Wireshark.

Writes captures holding every D_PDU type, every EOW type and every SIS primitive
with our encoders, runs tshark (Debian package tshark) on them and asserts that
Wireshark finds no malformed packet, marks every CRC correct and decodes every
field to the value we encoded.
"""

import os
import random
import shutil
import subprocess
import tempfile
import xml.etree.ElementTree as ET

from gnuradio import gr_unittest
from gnuradio import hfstack

dl = hfstack.dl
T0_US = 1_800_000_000_000_000  # capture timestamps, microseconds since the epoch


def tshark(path, *args):
    # -o keeps the SIS dissector on its IANA port whatever the user's preferences say.
    cmd = ["tshark", "-n", "-r", path, *args]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    if done.returncode != 0:
        raise AssertionError(f"{' '.join(cmd)} failed: {done.stderr.strip()}")
    return done.stdout


class packet:
    """Fields of one packet of tshark's PDML output."""

    def __init__(self, element):
        self.protocols = [p.get("name") for p in element.iter("proto")]
        self.fields = [f.attrib for f in element.iter("field")]

    def all(self, name, attribute="show"):
        return [f.get(attribute) for f in self.fields if f.get("name") == name]

    def one(self, name, attribute="show"):
        values = self.all(name, attribute)
        if len(values) != 1:
            raise AssertionError(f"field {name}: expected once, found {values}")
        return values[0]

    def expert_errors(self):
        return [f.get("showname") for f in self.fields
                if f.get("name") == "_ws.expert.severity" and f.get("show") in ("8388608", "error")]


def pdml_packets(path):
    root = ET.fromstring(tshark(path, "-T", "pdml"))
    return [packet(p) for p in root.iter("packet")]


# ---------------------------------------------------------------- D_PDUs

DATA_TYPES = {dl.dpdu_type.data_only: "data_only", dl.dpdu_type.data_ack: "data_ack"}
ACK_TYPES = {dl.dpdu_type.ack_only: "ack_only", dl.dpdu_type.expedited_ack_only: "exp_ack_only"}
NON_ARQ_TYPES = {dl.dpdu_type.non_arq_data: "non_arq_data",
                 dl.dpdu_type.expedited_non_arq_data: "exp_non_arq_data"}
ALL_TYPES = [dl.dpdu_type.data_only, dl.dpdu_type.ack_only, dl.dpdu_type.data_ack,
             dl.dpdu_type.reset_win_resync, dl.dpdu_type.expedited_data_only,
             dl.dpdu_type.expedited_ack_only, dl.dpdu_type.management,
             dl.dpdu_type.non_arq_data, dl.dpdu_type.expedited_non_arq_data,
             dl.dpdu_type.warning]
# EOW 7 (HDR DRC request) and 15 (token) are only valid in MANAGEMENT D_PDUs.
EOW_ANY = [0, 1, 2, 3, 4, 5, 6]
EOW_MANAGEMENT_ONLY = [7, 15]


def random_bytes(rng, n):
    return bytes(rng.randrange(256) for _ in range(n))


def make_dpdu(rng, dtype, eow):
    d = dl.dpdu()
    d.type = dtype
    d.eow = dl.eow_type(eow)
    d.eow_content = rng.randrange(256)
    d.eot = rng.randrange(256)
    carries = dl.carries_segment(dtype)
    # Wireshark's raw dissector skips frames under 15 bytes: short types get 7-byte
    # address fields; data types exercise every address size.
    d.address_size = rng.randrange(1, 8) if carries else 7
    d.destination = rng.randrange(16 ** d.address_size)
    d.source = rng.randrange(16 ** d.address_size)
    b = lambda: bool(rng.randrange(2))
    if dtype in DATA_TYPES or dtype == dl.dpdu_type.expedited_data_only:
        d.cpdu_start, d.cpdu_end, d.tx_sequence = b(), b(), rng.randrange(256)
        d.segment = random_bytes(rng, rng.randrange(0, 1024))
    if dtype in DATA_TYPES:
        d.deliver_in_order, d.drop_cpdu, d.tx_win_uwe, d.tx_win_lwe = b(), b(), b(), b()
    if dtype == dl.dpdu_type.data_ack or dtype in ACK_TYPES:
        d.rx_lwe = rng.randrange(256)
        d.selective_acks = random_bytes(rng, rng.randrange(0, 17))
    if dtype == dl.dpdu_type.expedited_data_only:
        d.cpdu_id = rng.randrange(16)
    if dtype == dl.dpdu_type.reset_win_resync:
        d.full_reset, d.reset_tx_win_request, d.reset_rx_win_command, d.reset_ack = b(), b(), b(), b()
        d.new_rx_lwe, d.reset_frame_id = rng.randrange(256), rng.randrange(256)
    if dtype == dl.dpdu_type.management:
        d.management_frame_id = rng.randrange(256)
        if eow == 7:  # per-channel rate (32 bits) and interleaver length (16 bits)
            d.extended_message = random_bytes(rng, 6)
            d.valid_message = d.management_ack = True
        elif eow == 15:  # token: payload size, ring address, 3 ids, node count
            d.extended_message = random_bytes(rng, 20)
        else:
            d.extended_message = random_bytes(rng, rng.randrange(0, 24))
        d.extended_message_flag = len(d.extended_message) > 0
        if eow != 7:
            # Wireshark 4.0 reads the EOW type of a MANAGEMENT D_PDU from the low
            # nibble of its flags byte instead of byte 2 (dissector bug): with all
            # three flags set it parses an HDR DRC request and misplaces the CRC.
            # Keep the flags off that value except for real HDR DRC requests.
            d.valid_message = b()
            d.management_ack = not (d.extended_message_flag and d.valid_message) and b()
    if dtype in NON_ARQ_TYPES:
        if b():
            d.destination |= dl.group_address_flag
        d.deliver_in_order = b()
        d.cpdu_id = rng.randrange(4096)
        d.segment = random_bytes(rng, rng.randrange(0, 1024))
        d.cpdu_size = len(d.segment) + rng.randrange(0, 60000)
        d.segment_offset = rng.randrange(65536)
        d.reception_window = rng.randrange(65536)
    if dtype == dl.dpdu_type.warning:
        d.received_frame_type, d.warning_reason = rng.randrange(16), rng.randrange(16)
    return d


def expected_dpdu_fields(d):
    """Field name -> PDML 'show' value Wireshark must report for D_PDU d."""
    f = {
        "s5066dts.type": int(d.type),
        "s5066dts.eow.type": int(d.eow),
        "s5066dts.eot": d.eot,
        "s5066dts.address.size": d.address_size,
        "s5066dts.header_size": len(dl.encode_dpdu(d)) - 2 - d.address_size
        - ((len(d.segment) + 4) if dl.carries_segment(d.type) else 0),
        "s5066dts.dest_addr": d.destination & (dl.group_address_flag - 1),
        "s5066dts.src_addr": d.source,
    }
    c, eow = d.eow_content, int(d.eow)
    if eow == 0:
        f["s5066dts.eow.data"] = "0x%02x" % c
    elif eow in (1, 5):
        kind = "drc_request" if eow == 1 else "alm_request"
        r = dl.eow_rate_request.from_content(c)
        f.update({f"s5066dts.eow.{kind}.data_rate": r.data_rate,
                  f"s5066dts.eow.{kind}.interleaving": r.interleaving,
                  f"s5066dts.eow.{kind}.others": r.other})
    elif eow in (2, 6):
        kind = "drc_response" if eow == 2 else "alm_response"
        r = dl.eow_rate_response.from_content(c)
        f.update({f"s5066dts.eow.{kind}.response": r.response,
                  f"s5066dts.eow.{kind}.reason": r.reason})
    elif eow == 3:
        f.update({"s5066dts.eow.unrec_type.response": c >> 5,
                  "s5066dts.eow.unrec_type.reason": c & 0x1F})
    elif eow == 4:
        cap = dl.eow_capability.from_content(c)
        for name, ws in (("adaptive", "adaptive"), ("stanag_4529", "stanag_4529"),
                         ("mil_std_188_110a", "mil_std_188_110a"),
                         ("extended_data_rate", "extended"), ("full_duplex", "full_duplex"),
                         ("split_frequency", "split_frequency"),
                         ("non_arcs_ale", "non_arcs_ale"), ("arcs", "arcs")):
            f[f"s5066dts.eow.capability.{ws}"] = int(getattr(cap, name))
    elif eow == 7:
        r = dl.eow_hdr_rate_request.from_content(c)
        f.update({"s5066dts.eow.hdr_drc_request.waveform": r.waveform,
                  "s5066dts.eow.hdr_drc_request.num_channels": r.channels})
    elif eow == 15:
        f["s5066dts.eow.hftrp.token_type"] = c

    seg = len(d.segment)
    if d.type in DATA_TYPES:
        p = "s5066dts." + DATA_TYPES[d.type]
        f.update({f"{p}.cpdu_start": int(d.cpdu_start), f"{p}.cpdu_end": int(d.cpdu_end),
                  f"{p}.deliver_in_order": int(d.deliver_in_order),
                  f"{p}.drop_cpdu": int(d.drop_cpdu), f"{p}.tx_win_uwe": int(d.tx_win_uwe),
                  f"{p}.tx_win_lwe": int(d.tx_win_lwe), f"{p}.segmented_cpdu_size": seg,
                  f"{p}.transmit_sequence_number": d.tx_sequence})
        if d.type == dl.dpdu_type.data_ack:
            f[f"{p}.rx_lwe"] = d.rx_lwe
    elif d.type in ACK_TYPES:
        f["s5066dts." + ACK_TYPES[d.type] + ".rx_lwe"] = d.rx_lwe
    elif d.type == dl.dpdu_type.reset_win_resync:
        p = "s5066dts.reset_win_resync"
        f.update({f"{p}.full_reset": int(d.full_reset),
                  f"{p}.reset_tx_win": int(d.reset_tx_win_request),
                  f"{p}.reset_rx_win": int(d.reset_rx_win_command),
                  f"{p}.reset_ack": int(d.reset_ack), f"{p}.new_rx_lwe": d.new_rx_lwe,
                  f"{p}.reset_frame_id": d.reset_frame_id})
    elif d.type == dl.dpdu_type.expedited_data_only:
        p = "s5066dts.exp_data_only"
        f.update({f"{p}.cpdu_start": int(d.cpdu_start), f"{p}.cpdu_end": int(d.cpdu_end),
                  f"{p}.cpdu_id": d.cpdu_id, f"{p}.segmented_cpdu_size": seg,
                  f"{p}.transmit_sequence_number": d.tx_sequence})
    elif d.type == dl.dpdu_type.management:
        p = "s5066dts.management"
        f.update({f"{p}.extended_message_flag": int(d.extended_message_flag),
                  f"{p}.message": int(d.valid_message), f"{p}.ack": int(d.management_ack),
                  f"{p}.management_frame_id": d.management_frame_id})
        x = d.extended_message
        if int(d.eow) == 7:
            f["s5066dts.eow.hdr_drc_request.data_rate"] = int.from_bytes(x[0:4], "big")
            f["s5066dts.eow.hdr_drc_request.interleaver_length"] = int.from_bytes(x[4:6], "big")
    elif d.type in NON_ARQ_TYPES:
        p = "s5066dts." + NON_ARQ_TYPES[d.type]
        f.update({f"{p}.cpdu_id_1": d.cpdu_id >> 8, f"{p}.cpdu_id_2": d.cpdu_id & 0xFF,
                  f"{p}.deliver_in_order": int(d.deliver_in_order),
                  f"{p}.group_address": int(bool(d.destination & dl.group_address_flag)),
                  f"{p}.segmented_cpdu_size": seg, f"{p}.cpdu_size": d.cpdu_size,
                  f"{p}.cpdu_segment_offset": d.segment_offset,
                  f"{p}.cpdu_reception_window": d.reception_window})
    elif d.type == dl.dpdu_type.warning:
        f.update({"s5066dts.warning.frame_type": d.received_frame_type,
                  "s5066dts.warning.reason": d.warning_reason})
    return {k: str(v) for k, v in f.items()}


def expected_dpdu_bytes_fields(d):
    """Field name -> PDML 'value' (hex) for the byte-string fields of D_PDU d."""
    f = {}
    if dl.carries_segment(d.type) and d.segment:
        f["s5066dts.segmented_cpdu"] = d.segment.hex()
    acks = {dl.dpdu_type.data_ack: "data_ack", **ACK_TYPES}
    if d.type in acks and d.selective_acks:
        f["s5066dts." + acks[d.type] + ".acks"] = d.selective_acks.hex()
    if d.type == dl.dpdu_type.management and d.extended_message and int(d.eow) != 7:
        # Wireshark 4.0 never reaches its token decoder (see make_dpdu): raw bytes.
        f["s5066dts.management.extended_message"] = d.extended_message.hex()
    return f


class qa_tshark_crosscheck(gr_unittest.TestCase):

    @classmethod
    def setUpClass(cls):
        if shutil.which("tshark") is None:
            raise AssertionError("tshark is required (Debian package tshark); "
                                 "run 'make deps' or the README's test command")
        cls.tmp = tempfile.mkdtemp(prefix="hfstack-tshark-")

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def assert_clean_verbose(self, path, expected_correct_crcs):
        text = tshark(path, "-V")
        for bad in ("Malformed", "Incorrect", "[Expert Info (Error"):
            lines = [line.strip() for line in text.splitlines() if bad in line]
            self.assertEqual(lines, [], f"tshark -V reports '{bad}'")
        self.assertEqual(text.count("(Correct)"), expected_correct_crcs)

    def test_every_dpdu_type_and_eow_type(self):
        rng = random.Random(5066)
        frames = []
        for dtype in ALL_TYPES:
            eows = EOW_ANY + (EOW_MANAGEMENT_ONLY if dtype == dl.dpdu_type.management else [])
            for eow in eows:
                for _ in range(3):
                    frames.append(make_dpdu(rng, dtype, eow))
        path = os.path.join(self.tmp, "dpdus.pcap")
        cap = dl.dpdu_capture(path)
        for i, d in enumerate(frames):
            cap.write(T0_US + i, dl.encode_dpdu(d))
        cap.flush()
        del cap

        crcs = sum(2 if dl.carries_segment(d.type) else 1 for d in frames)
        self.assert_clean_verbose(path, crcs)

        packets = pdml_packets(path)
        self.assertEqual(len(packets), len(frames))
        for i, (d, p) in enumerate(zip(frames, packets)):
            where = f"frame {i + 1} ({d!r}, EOW {int(d.eow)})"
            self.assertIn("s5066dts", p.protocols, where)
            self.assertNotIn("_ws.malformed", p.protocols, where)
            self.assertEqual(p.expert_errors(), [], where)
            for name, want in expected_dpdu_fields(d).items():
                self.assertEqual(p.one(name), want, f"{where}: {name}")
            for name, want in expected_dpdu_bytes_fields(d).items():
                self.assertEqual(p.one(name, "value"), want, f"{where}: {name}")
            self.assertIn("(Correct)", p.one("s5066dts.header_crc", "showname"), where)
            if dl.carries_segment(d.type):
                self.assertIn("(Correct)", p.one("s5066dts.cpdu_crc", "showname"), where)

    def test_damaged_crcs_are_flagged_by_wireshark(self):
        # The oracle must be able to disagree: flip one segment bit and one header bit.
        d = make_dpdu(random.Random(1), dl.dpdu_type.data_only, 0)
        d.segment = b"abc"
        good = dl.encode_dpdu(d)
        bad_segment = bytearray(good)
        bad_segment[-5] ^= 1
        bad_header = bytearray(good)
        bad_header[4] ^= 1
        path = os.path.join(self.tmp, "damaged.pcap")
        cap = dl.dpdu_capture(path)
        cap.write(T0_US, bytes(bad_segment))
        cap.write(T0_US + 1, bytes(bad_header))
        cap.flush()
        del cap
        packets = pdml_packets(path)
        self.assertIn("Incorrect", packets[0].one("s5066dts.cpdu_crc", "showname"))
        self.assertIn("Incorrect", packets[1].one("s5066dts.header_crc", "showname"))


if __name__ == "__main__":
    gr_unittest.run(qa_tshark_crosscheck)
