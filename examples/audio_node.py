#!/usr/bin/env python3
#
# Copyright 2026 gr-hfstack authors.
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""One STANAG 5066 node on a sound card wired to an HF radio (radio kind audio: the
STANAG 4539 modem at 48 kHz), behind a SIS server, wired by hand from gr-hfstack's
blocks. Runs until Ctrl-C or SIGTERM, then prints the node's counters as one JSON
line on standard output. A sound card that cannot be opened: one line, exit 1.

  /usr/bin/python3 examples/audio_node.py --device plughw:CARD=Device --ptt vox
  /usr/bin/python3 examples/audio_node.py --ptt serial:/dev/ttyUSB0:rts --mode 1200L

docs/field-trial.md covers wiring, levels and PTT.
"""

import argparse
import json
import signal
import sys
import threading

from gnuradio import gr
from gnuradio import hfstack
from gnuradio.hfstack import radio

PROG = "audio_node.py"


def parse_args():
    p = argparse.ArgumentParser(prog=PROG, description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--device", default="", help="ALSA device, e.g. plughw:CARD=Device (default: the default)")
    p.add_argument("--ptt", default="vox", help="vox, serial:PORT[:rts|:dtr] or rigctld[:HOST[:PORT]]")
    p.add_argument("--address", default="0.0.0.1", help="STANAG 5066 address (default 0.0.0.1)")
    p.add_argument("--mode", default="2400S", help="node mode, e.g. 2400S, 600L (default 2400S)")
    p.add_argument("--sis-port", type=int, default=5066, help="SIS port on 127.0.0.1 (default 5066)")
    return p.parse_args()


def main():
    a = parse_args()
    tb = gr.top_block("audio_node")
    try:
        node = hfstack.node(a.address, f"mode={a.mode}", 1.0, "", 0)
        front = radio.radio(kind="audio", device=a.device, ptt=a.ptt)
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
    print(f"{PROG}: node {a.address} on sound card {a.device or 'default'}, SIS on 127.0.0.1:"
          f"{server.port()}; Ctrl-C stops", file=sys.stderr)
    stop.wait()
    tb.stop()
    tb.wait()
    front.close()
    print(json.dumps({"node": a.address, **dict(node.counters()), "radio": front.stats()}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
