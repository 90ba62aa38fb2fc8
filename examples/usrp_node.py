#!/usr/bin/env python3
#
# Copyright 2026 gr-hfstack authors.
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""One STANAG 5066 node on a USRP (radio kind uhd: the STANAG 4539 modem on complex
baseband at 240 kHz, tuned to the signal's centre, an SSB radio's USB dial + 1800 Hz;
transmissions go out as tx_sob/tx_eob bursts), behind a SIS server, wired by hand from
gr-hfstack's blocks. Runs until Ctrl-C or SIGTERM, then prints the node's counters as
one JSON line on standard output. A USRP that cannot be found: one line, exit 1.

  /usr/bin/python3 examples/usrp_node.py --frequency-hz 7.0758e6 --device-args type=b200
  /usr/bin/python3 examples/usrp_node.py --frequency-hz 10.1418e6 --rx-gain-db 40 --mode 600L
"""

import argparse
import json
import signal
import sys
import threading

from gnuradio import gr
from gnuradio import hfstack
from gnuradio.hfstack import radio

PROG = "usrp_node.py"


def parse_args():
    p = argparse.ArgumentParser(prog=PROG, description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--frequency-hz", type=float, required=True,
                   help="centre of the signal, Hz (an SSB radio's USB dial + 1800 Hz)")
    p.add_argument("--device-args", default="", help="UHD device arguments, e.g. type=b200 (default: first found)")
    p.add_argument("--rx-gain-db", type=float, default=30.0, help="receive gain (default 30)")
    p.add_argument("--tx-gain-db", type=float, default=0.0, help="transmit gain (default 0)")
    p.add_argument("--ptt", default="vox", help="vox (the USRP's own T/R switch), serial:PORT[:rts|:dtr] "
                   "or rigctld[:HOST[:PORT]] for an amplifier")
    p.add_argument("--address", default="0.0.0.1", help="STANAG 5066 address (default 0.0.0.1)")
    p.add_argument("--mode", default="2400S", help="node mode, e.g. 2400S, 600L (default 2400S)")
    p.add_argument("--sis-port", type=int, default=5066, help="SIS port on 127.0.0.1 (default 5066)")
    return p.parse_args()


def main():
    a = parse_args()
    tb = gr.top_block("usrp_node")
    try:
        node = hfstack.node(a.address, f"mode={a.mode}", 1.0, "", 0)
        front = radio.radio(kind="uhd", frequency_hz=a.frequency_hz, device_args=a.device_args,
                            rx_gain_db=a.rx_gain_db, tx_gain_db=a.tx_gain_db, ptt=a.ptt)
    except radio.device_error as e:
        print(f"{PROG}: {e}", file=sys.stderr)
        return 1
    except (radio.radio_error, ValueError, RuntimeError) as e:
        print(f"{PROG}: {' '.join(str(e).split())}", file=sys.stderr)
        return 2
    server = hfstack.sis_server("127.0.0.1", a.sis_port, 64)
    tb.msg_connect(server, "sis_out", node, "sis_in")
    tb.msg_connect(node, "sis_out", server, "sis_in")
    tb.msg_connect(node, "to_phy", front, "in")
    tb.msg_connect(front, "out", node, "from_phy")
    tb.msg_connect(front, "status", node, "phy_status")
    stop = threading.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: stop.set())
    try:
        tb.start()
    except RuntimeError as e:  # the SIS port is taken, for one
        front.close()
        print(f"{PROG}: {' '.join(str(e).split())}", file=sys.stderr)
        return 1
    print(f"{PROG}: node {a.address} on USRP {a.device_args or '(first found)'} at "
          f"{a.frequency_hz:.1f} Hz, SIS on 127.0.0.1:"
          f"{server.port()}; Ctrl-C stops", file=sys.stderr)
    stop.wait()
    tb.stop()
    tb.wait()
    front.close()
    print(json.dumps({"node": a.address, **dict(node.counters()), "radio": front.stats()}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
