#!/usr/bin/env python3
#
# Copyright 2026 gr-hfstack authors.
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""One STANAG 5066 node on a USRP (radio kind uhd: the STANAG 4539 modem on complex
baseband at 240 kHz, tuned to the signal's centre, an SSB radio's USB dial + 1800 Hz;
transmissions go out as tx_sob/tx_eob bursts), behind a SIS server. The flowgraph
is one station hier block (node, radio front end and SIS server wired together),
gnuradio.hfstack.station (python/hfstack/station.py), shared with the sound-card example
and hfstack-node. Runs until Ctrl-C or SIGTERM, then prints the node's counters as one
JSON line on standard output. A USRP that cannot be found: one line, exit 1.

  /usr/bin/python3 examples/usrp_node.py --frequency-hz 7.0758e6 --device-args type=b200
  /usr/bin/python3 examples/usrp_node.py --frequency-hz 10.1418e6 --rx-gain-db 40 --mode 600L
"""

import argparse
import sys

from gnuradio.hfstack import station

PROG = "usrp_node.py"


def parse_args():
    p = argparse.ArgumentParser(prog=PROG, description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--frequency-hz", type=float, required=True,
                   help="centre of the signal, Hz (an SSB radio's USB dial + 1800 Hz)")
    p.add_argument("--device-args", default="",
                   help="UHD device arguments, e.g. type=b200 (default: the first found)")
    p.add_argument("--rx-gain-db", type=float, default=30.0, help="receive gain (default 30)")
    p.add_argument("--tx-gain-db", type=float, default=0.0, help="transmit gain (default 0)")
    p.add_argument("--ptt", default="vox", help="vox (the USRP's own T/R switch), serial:PORT[:rts|:dtr] "
                   "or rigctld[:HOST[:PORT]] for an amplifier")
    station.add_arguments(p)
    return p.parse_args()


def main():
    a = parse_args()
    usrp = dict(kind="uhd", frequency_hz=a.frequency_hz, device_args=a.device_args,
                rx_gain_db=a.rx_gain_db, tx_gain_db=a.tx_gain_db, ptt=a.ptt)
    return station.serve_one(PROG, a.address, f"mode={a.mode}", usrp, a.sis_port,
                             f"USRP {a.device_args or '(first found)'} at {a.frequency_hz:.1f} Hz")


if __name__ == "__main__":
    sys.exit(main())
