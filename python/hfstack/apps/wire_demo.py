#!/usr/bin/env python3
#
# Copyright 2026 gr-hfstack authors.
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""Encode a scripted STANAG 5066 exchange, capture it and print what it decodes to.

Node A (0.0.0.1) carries one U_PDU from an IP client on SAP 9 to node B (0.0.0.2)
over an ARQ link: SIS bind and unidata request on A, physical link set-up, the C_PDU
cut into DATA-ONLY segments, one segment lost on the air, a selective ACK, the
retransmission, delivery to B's client and the confirm back to A's client. Every
frame is made by gr-hfstack's codecs, written to two pcap files (raw D_PDUs, link
type 237, and SIS as TCP port 5066), read back with our deframer and SIS
reassembler, and, when tshark is installed, summarised by Wireshark as an
independent check. The exchange is scripted: the ARQ engine itself is the node's job.
"""

import argparse
import os
import shutil
import subprocess
import sys

from gnuradio import hfstack
from gnuradio.hfstack import cli
from gnuradio.hfstack import make_dpdu as dpdu, make_sis as sis

dl = hfstack.dl
NODE_A, NODE_B = 1, 2
IP_SAP = 9
T0 = 1_800_000_000.0  # seconds since the epoch; virtual time of the script


def parse_args(argv=None):
    p = argparse.ArgumentParser(prog="hfstack-wire-demo", description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    cli.add_version(p)
    p.add_argument("--out", default="hfstack-demo", help="directory for the two pcap files")
    p.add_argument("--updu-size", type=int, default=1200,
                   help="bytes of the U_PDU the client sends (1..2048)")
    p.add_argument("--segment-size", type=int, default=200,
                   help="C_PDU segment size per DATA-ONLY D_PDU (1..1023)")
    p.add_argument("--lose", type=int, default=2,
                   help="index of the segment lost on the air on first transmission (-1: none)")
    p.add_argument("--no-tshark", action="store_true", help="skip the Wireshark summary")
    a = p.parse_args(argv)
    if not 1 <= a.updu_size <= 2048:
        p.error("--updu-size must be 1..2048 (the SIS MTU)")
    if not 1 <= a.segment_size <= 1023:
        p.error("--segment-size must be 1..1023")
    return a


def address(a):
    return dl.sis_address(a, 7)


def service_arq():
    st = dl.sis_service_type()
    st.tx_mode = dl.sis_tx_mode.arq
    st.delivery_confirmation = dl.sis_delivery_confirmation.node
    return st


def cpdu_link(type_):
    c = dl.cpdu()
    c.type = getattr(dl.cpdu_type, type_)
    return dl.encode_cpdu(c)


class script:
    """Collects the timeline: SIS bytes per client and D_PDUs on the air."""

    def __init__(self, out):
        self.t = T0
        self.sis = dl.sis_capture(os.path.join(out, "sis.pcap"))
        self.air = dl.dpdu_capture(os.path.join(out, "dpdu.pcap"))
        self.sis_log, self.air_log = [], []

    def client(self, client_id, from_client, primitive, dt=0.05):
        self.t += dt
        wire = dl.encode_sis(primitive)
        self.sis.write(round(self.t * 1e6), client_id, from_client, wire)
        self.sis_log.append((client_id, from_client, wire))

    def transmit(self, sender, frames, dt=1.0, lost=()):
        """One half-duplex transmission: D_PDUs back to back; `lost` never arrive."""
        self.t += dt
        for i, d in enumerate(frames):
            d.source = sender
            d.destination = NODE_B if sender == NODE_A else NODE_A
            # Wireshark's raw D_PDU dissector ignores frames under 15 bytes; full-size
            # address fields keep the short ACK-ONLY frames visible in the capture.
            d.address_size = 7
            wire = dl.encode_dpdu(d)
            self.air.write(round(self.t * 1e6), wire)
            self.air_log.append((sender, wire, i in lost))
            self.t += 0.01


def run(a):
    os.makedirs(a.out, exist_ok=True)
    s = script(a.out)
    updu = bytes((i * 7 + 3) & 0xFF for i in range(a.updu_size))

    # SIS: both IP clients bind SAP 9; A's client sends one U_PDU to B.
    for client in (1, 2):
        s.client(client, True, sis("bind_request", sap=IP_SAP, rank=0, service_type=service_arq()))
        s.client(client, False, sis("bind_accepted", sap=IP_SAP, mtu=2048))
    s.client(1, True, sis("unidata_request", priority=2, destination_sap=IP_SAP,
                          destination=address(NODE_B), service_type=service_arq(), ttl=60,
                          payload=updu))

    # Channel access: physical link request / accepted in EXPEDITED NON-ARQ D_PDUs.
    for sender, kind in ((NODE_A, "physical_link_request"), (NODE_B, "physical_link_accepted")):
        c = cpdu_link(kind)
        s.transmit(sender, [dpdu("expedited_non_arq_data", cpdu_id=0, cpdu_size=len(c),
                                 segment=c, eot=4)])

    # The C_PDU: C_PCI (CAS DATA) + S_PDU DATA + U_PDU, cut into ARQ segments.
    sp = dl.spdu()
    sp.type = dl.spdu_type.data
    sp.priority, sp.source_sap, sp.destination_sap = 2, IP_SAP, IP_SAP
    sp.updu = updu
    c = dl.cpdu()
    c.type = dl.cpdu_type.data
    c.spdu = dl.encode_spdu(sp)
    cpdu_bytes = dl.encode_cpdu(c)
    pieces = [cpdu_bytes[i:i + a.segment_size] for i in range(0, len(cpdu_bytes), a.segment_size)]
    if len(pieces) > 128:
        sys.exit("hfstack-wire-demo: the C_PDU needs more than 128 segments; raise --segment-size")

    def data_only(seq, eot):
        return dpdu("data_only", tx_sequence=seq, segment=pieces[seq],
                    cpdu_start=seq == 0, cpdu_end=seq == len(pieces) - 1,
                    deliver_in_order=True, tx_win_lwe=seq == 0,
                    tx_win_uwe=seq == len(pieces) - 1, eot=eot)

    lost = {a.lose} if 0 <= a.lose < len(pieces) else set()
    first = [data_only(i, 2 * (len(pieces) - i)) for i in range(len(pieces))]
    s.transmit(NODE_A, first, lost=lost)

    # B acknowledges what arrived: RX LWE is the first missing sequence number; the
    # selective-ack bitmap starts at RX LWE + 1 in the least significant bit.
    received = [i for i in range(len(pieces)) if i not in lost]
    lwe = min(lost) if lost else len(pieces)
    uwe = len(pieces) - 1
    bitmap = bytearray((max(0, uwe - lwe) + 8) // 8) if lost else bytearray()
    for i in received:
        if i > lwe:
            bitmap[(i - lwe - 1) // 8] |= 1 << ((i - lwe - 1) % 8)
    s.transmit(NODE_B, [dpdu("ack_only", rx_lwe=lwe, selective_acks=bytes(bitmap), eot=2)])
    if lost:
        s.transmit(NODE_A, [data_only(i, 2) for i in sorted(lost)])
        s.transmit(NODE_B, [dpdu("ack_only", rx_lwe=len(pieces) % 256, eot=2)])

    # B delivers the U_PDU; A's client gets the node delivery confirm.
    s.client(2, False, sis("unidata_indication", priority=2, destination_sap=IP_SAP,
                           destination=address(NODE_B), source_sap=IP_SAP,
                           source=address(NODE_A), service_type=service_arq(), payload=updu))
    s.client(1, False, sis("unidata_request_confirm", destination_sap=IP_SAP,
                           destination=address(NODE_B), payload=updu[:32]))
    # Link release.
    for sender, kind in ((NODE_A, "physical_link_break"), (NODE_B, "physical_link_break_confirm")):
        c = cpdu_link(kind)
        s.transmit(sender, [dpdu("expedited_non_arq_data", cpdu_id=1, cpdu_size=len(c),
                                 segment=c, eot=4)])
    s.sis.flush()
    s.air.flush()
    return s, updu, pieces


def summarise(s, updu, pieces, out, use_tshark):
    print(f"On the air ({os.path.join(out, 'dpdu.pcap')}): decoded by our deframer")
    deframer = dl.dpdu_deframer()
    segments = {}
    for sender, wire, lost in s.air_log:
        for r in deframer.push(wire):
            d = r.frame
            what = f"{dl.address_to_string(d.source)} -> {dl.address_to_string(d.destination)}  {d.type.name:<22}"
            if d.type == dl.dpdu_type.data_only:
                what += f" seq {d.tx_sequence:3d}  {len(d.segment):4d} bytes  EOT {d.eot / 2:5.1f} s"
                if not lost:
                    segments[d.tx_sequence] = d.segment
            elif d.type == dl.dpdu_type.ack_only:
                acked = [d.rx_lwe + 1 + b for b in range(8 * len(d.selective_acks))
                         if d.selective_acks[b // 8] >> (b % 8) & 1]
                what += f" RX LWE {d.rx_lwe}  selective acks {acked or 'none'}"
            else:
                c = dl.decode_cpdu(d.segment)
                what += f" C_PDU {c.type.name}"
            print(f"  {what}{'   << lost on the air' if lost else ''}")
    received = b"".join(segments[i] for i in sorted(segments))
    c = dl.decode_cpdu(received)
    sp = dl.decode_spdu(c.spdu)
    ok = sp.updu == updu and sorted(segments) == list(range(len(pieces)))
    print(f"  reassembled C_PDU: {len(received)} bytes, S_PDU {sp.type.name} "
          f"SAP {sp.source_sap}->{sp.destination_sap}, U_PDU {len(sp.updu)} bytes "
          f"{'intact' if ok else 'DAMAGED'}")

    print(f"\nSIS ({os.path.join(out, 'sis.pcap')}): decoded by our reassembler")
    for client, from_client, wire in s.sis_log:
        for p in dl.sis_reassembler().push(wire):
            arrow = "client -> node" if from_client else "node -> client"
            extra = f" {len(p.payload)}-byte payload" if p.payload else ""
            print(f"  client {client}  {arrow}  {dl.sis_type_name(p.type)}{extra}")

    if use_tshark:
        if not shutil.which("tshark"):
            print("\n(tshark not installed: 'make deps' installs it for the Wireshark summary)")
        else:
            for name in ("dpdu.pcap", "sis.pcap"):
                print(f"\nWireshark's reading of {name}:")
                done = subprocess.run(["tshark", "-n", "-r", os.path.join(out, name),
                                       "-Y", "s5066dts || s5066sis"],
                                      capture_output=True, text=True)
                print(done.stdout.rstrip() or done.stderr.rstrip())
    return ok


def main(argv=None):
    a = parse_args(argv)
    s, updu, pieces = run(a)
    ok = summarise(s, updu, pieces, a.out, not a.no_tshark)
    print(f"\nOpen {a.out}/dpdu.pcap and {a.out}/sis.pcap in Wireshark to browse every field.")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
