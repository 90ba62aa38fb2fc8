#
# Copyright 2026 gr-hfstack authors.
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""One STANAG 5066 node with its radio front end and a SIS server, wired as the node's
modem contract wants: what hfstack-node runs (once, or twice with --pair) and what the
example scripts build on.

    tb = gr.top_block()
    st = station(tb, "0.0.0.5", "mode=1200L", dict(kind="audio", device="plughw:CARD=Device"))
    run_until_signalled(tb, [st], lambda: print(st.counters()))
"""

import signal
import threading

from . import radio as radio_frontend
from .hfstack_python import node, sis_server


class station:
    """node (address, node options "name=value;...", at the radio's time scale), radio
    (radio_options: keyword arguments of radio.radio) and sis_server (sis_address,
    sis_port: 0 picks a free one, see server.port()). Bad radio options raise
    radio.radio_error, a device or file that cannot be used radio.device_error."""

    def __init__(self, tb, address, node_options="", radio_options=None, sis_address="127.0.0.1",
                 sis_port=5066, pcap="", max_clients=64):
        radio_options = dict(radio_options or {})
        time_scale = float(radio_options.get("time_scale", 1.0))
        self.address = address
        self.node = node(address, node_options, time_scale, pcap, 0)
        self.radio = radio_frontend.radio(**radio_options)
        self.server = sis_server(sis_address, sis_port, max_clients)
        tb.msg_connect(self.server, "sis_out", self.node, "sis_in")
        tb.msg_connect(self.node, "sis_out", self.server, "sis_in")
        tb.msg_connect(self.node, "to_phy", self.radio, "in")
        tb.msg_connect(self.radio, "out", self.node, "from_phy")
        tb.msg_connect(self.radio, "status", self.node, "phy_status")

    def counters(self):
        return dict(self.node.counters())


def run_until_signalled(tb, stations, started=None):
    """Starts tb, calls started() (if given), and returns once SIGINT or SIGTERM has come,
    with tb stopped and the radios' PTT released. A flowgraph that cannot start (a SIS
    port in use) raises RuntimeError, the radios released too."""
    stop = threading.Event()
    previous = {sig: signal.signal(sig, lambda *_: stop.set()) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        tb.start()
        if started is not None:
            started()
        stop.wait()
        tb.stop()
        tb.wait()
    finally:
        for st in stations:
            st.radio.close()
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def add_arguments(parser):
    """--address, --mode and --sis-port of a one-node script (serve_one)."""
    parser.add_argument("--address", default="0.0.0.1", help="STANAG 5066 address (default 0.0.0.1)")
    parser.add_argument("--mode", default="2400S", help="node mode, e.g. 2400S, 600L (default 2400S)")
    parser.add_argument("--sis-port", type=int, default=5066, help="SIS port on 127.0.0.1 (default 5066)")


def serve_one(prog, address, node_options, radio_options, sis_port, where):
    """A one-node script's main (examples/audio_node.py, usrp_node.py): a station on
    127.0.0.1:sis_port, run until SIGINT or SIGTERM, then its counters as one JSON line
    on stdout. Returns the exit status: 0; 1 for a device or port that cannot be used,
    2 for bad options, each with one line `prog: reason` on stderr."""
    import json
    import sys
    from gnuradio import gr

    def refuse(e, status):
        print(f"{prog}: {' '.join(str(e).split())}", file=sys.stderr)
        return status

    tb = gr.top_block(prog)
    try:
        st = station(tb, address, node_options, radio_options, sis_port=sis_port)
    except radio_frontend.device_error as e:
        return refuse(e, 1)
    except (radio_frontend.radio_error, ValueError, RuntimeError) as e:
        return refuse(e, 2)

    def announce():
        print(f"{prog}: node {address} on {where}, SIS on 127.0.0.1:{st.server.port()}; Ctrl-C stops",
              file=sys.stderr)

    try:
        run_until_signalled(tb, [st], announce)
    except RuntimeError as e:  # the SIS port is taken, for one
        return refuse(e, 1)
    print(json.dumps({"node": address, **st.counters(), "radio": st.radio.stats()}))
    return 0
