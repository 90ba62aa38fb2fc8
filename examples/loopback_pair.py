#!/usr/bin/env python3
#
# Copyright 2026 gr-hfstack authors.
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""Two STANAG 5066 nodes in one flowgraph, each with the real STANAG 4539 modem on
audio, joined by the Watterson channel: two station hier blocks (node, radio front end
of kind loopback and SIS server in one; python/hfstack/station.py) whose radios hear
each other. A SIS client on each node binds, node A sends a text to node B with ARQ,
and the script prints what B delivered and each burst node B's modem received (mode,
SNR, frequency offset: the station's burst_info port). No display needed.

  /usr/bin/python3 examples/loopback_pair.py
  /usr/bin/python3 examples/loopback_pair.py --profile poor --snr-db 15 --text "CQ CQ"
"""

import argparse
import sys
import time

import pmt
from gnuradio import blocks, gr
from gnuradio import hfstack
from gnuradio.hfstack import radio
from gnuradio.hfstack.sis.client import bind_request, sis_client, unidata_request
from gnuradio.hfstack.station import station

SAP = 14  # a SAP no Annex F client uses


def parse_args():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--text", default="HELLO FROM NODE A", help="what node A sends to node B")
    p.add_argument("--mode", default="2400S", help="node mode, e.g. 2400S, 600L (default 2400S)")
    p.add_argument("--profile", default="mid_latitude_moderate",
                   help="channel each way: awgn, good, moderate, poor, or an F.1487 condition")
    p.add_argument("--snr-db", type=float, default=20.0, help="SNR each way, dB in 3 kHz (default 20)")
    p.add_argument("--seed", type=int, default=1, help="channel seed of A's transmissions (B's: + 1)")
    p.add_argument("--timeout", type=float, default=120.0,
                   help="seconds to wait for the delivery (default 120)")
    return p.parse_args()


def main():
    a = parse_args()
    rate = "".join(c for c in a.mode if c.isdigit())
    interleaver = {"S": "short", "L": "long", "U": "none"}.get(a.mode[len(rate):])
    if not rate or interleaver is None:
        print(f"loopback_pair.py: --mode {a.mode}: use a rate and S, L or U, e.g. 2400S", file=sys.stderr)
        return 2
    gr.logging().set_default_level(gr.log_levels.info)  # each burst's debug line is noise here
    tb = gr.top_block("loopback_pair")
    try:
        stations = [station(address, f"mode={a.mode}",
                            dict(kind="loopback", data_rate=int(rate), interleaver=interleaver,
                                 profile=a.profile, snr_db=a.snr_db, seed=a.seed + k), sis_port=0)
                    for k, address in enumerate(("0.0.0.1", "0.0.0.2"))]
    except (radio.radio_error, ValueError, RuntimeError) as e:
        print(f"loopback_pair.py: {e}", file=sys.stderr)
        return 2
    a_side, b_side = stations
    # The two stations' radios hear each other, each through its own channel.
    radio.join(tb, a_side, b_side)
    heard_by_b = blocks.message_debug()
    tb.msg_connect(b_side, "burst_info", heard_by_b, "store")
    tb.start()
    try:
        clients = [sis_client("127.0.0.1", st.server.port(), a.timeout) for st in stations]
        for c in clients:
            c.send(bind_request(SAP))
            c.receive_type(hfstack.dl.sis_type.bind_accepted)
        started = time.monotonic()
        clients[0].send(unidata_request("0.0.0.2", SAP, a.text.encode()))
        delivered = clients[1].receive_type(hfstack.dl.sis_type.unidata_indication)
        print(f"node B delivered {delivered.payload.decode(errors='replace')!r} "
              f"after {time.monotonic() - started:.1f} s")
    except OSError as e:  # a timeout included
        print(f"loopback_pair.py: no delivery within {a.timeout:g} s ({e})", file=sys.stderr)
        return 1
    finally:
        tb.stop()
        tb.wait()
    for i in range(heard_by_b.num_messages()):
        b = pmt.to_python(heard_by_b.get_message(i))
        print(f"burst heard by node B: {b['mode']}, SNR {b['snr_db']:.1f} dB, "
              f"offset {b['frequency_offset_hz']:+.1f} Hz, {b['bytes']} bytes")
    return 0


if __name__ == "__main__":
    sys.exit(main())
