#!/usr/bin/env python3
#
# Copyright 2026 gr-hfstack authors.
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""One STANAG 5066 node on a sound card wired to an HF radio (radio kind audio: the
STANAG 4539 modem at 48 kHz), behind a SIS server. The flowgraph is one station hier
block (node, radio front end and SIS server wired together), gnuradio.hfstack.station
(python/hfstack/station.py), shared with the USRP example and hfstack-node. Runs until
Ctrl-C or SIGTERM, then prints the node's counters as one JSON line on standard
output. A sound card that cannot be opened: one line, exit 1.

  /usr/bin/python3 examples/audio_node.py --device plughw:CARD=Device --ptt vox
  /usr/bin/python3 examples/audio_node.py --ptt serial:/dev/ttyUSB0:rts --mode 1200L

docs/field-trial.md covers wiring, levels and PTT.
"""

import argparse
import sys

from gnuradio.hfstack import station

PROG = "audio_node.py"


def parse_args():
    p = argparse.ArgumentParser(prog=PROG, description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--device", default="", help="ALSA device, e.g. plughw:CARD=Device (default: the default)")
    p.add_argument("--ptt", default="vox", help="vox, serial:PORT[:rts|:dtr] or rigctld[:HOST[:PORT]]")
    station.add_arguments(p)
    return p.parse_args()


def main():
    a = parse_args()
    sound_card = dict(kind="audio", device=a.device, ptt=a.ptt)
    return station.serve_one(PROG, a.address, f"mode={a.mode}", sound_card, a.sis_port,
                             f"sound card {a.device or 'default'}")


if __name__ == "__main__":
    sys.exit(main())
