#
# Copyright 2026 gr-hfstack authors.
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""One station: a STANAG 5066 node with its radio front end and a SIS server, wired as
the node's modem contract wants, as one hier block. What hfstack-node runs (once, or
twice with --pair), what the example scripts build on and what GRC offers as "HF
Station".

    tb = gr.top_block()
    st = station("0.0.0.5", "mode=1200L", dict(kind="audio", device="plughw:CARD=Device"))
    tb.msg_connect(st, "sis_out", my_client, "sis_in")   # optional: an in-flowgraph client
    run_until_signalled(tb, [st], lambda: print(st.counters()))

Inside: node.to_phy -> radio.in, radio.out -> node.from_phy, radio.status ->
node.phy_status, and the SIS server's sis_out/sis_in to the node's sis_in/sis_out.

Message ports of the station (the rest stays inside):

  sis_in      (in)  SIS frames of in-flowgraph clients (ip_client, pep_proxy, ...) to
                    the node, beside the TCP clients of the SIS server; each client
                    uses its own client_id (the server's are small numbers)
  sis_out     (out) every SIS frame the node sends, the TCP clients' too: a client
                    takes those with its client_id
  status      (out) the radio's tx_started / tx_finished / carrier_on / carrier_off
  stats       (out) the node's counters (a dict) every stats_interval seconds (0: none
                    while it runs)
  burst_info  (out) modem kinds: each received burst's mode, SNR and offset
  air_in, air_out   emulator kind: the emulated channel, to join another station

Stream ports are the radio's (radio.py): a loopback radio's `air` input (what it hears),
and for the modem kinds the AIR_PORT, RECEIVED_PORT and SYMBOLS_PORT outputs;
radio.join(tb, a, b) puts two stations on one channel as it does two radios. A station
joins a flowgraph by its connections; add_to(tb) makes one that has none (it serves
TCP clients only) part of it.
"""

import signal

from gnuradio import blocks, gr

from . import radio as radio_frontend
from .cli import stop_event
from .hfstack_python import node, sis_server

# Each message port of the station: the block inside that has it, and its name there.
INNER_PORTS = {"sis_in": ("node", "sis_in"), "sis_out": ("node", "sis_out"),
               "status": ("radio", "status"), "stats": ("node", "stats"),
               "burst_info": ("radio", "burst_info"),
               "air_in": ("radio", "air_in"), "air_out": ("radio", "air_out")}


def message_ports(kind):
    """(inputs, outputs): the message ports of a station whose radio is of `kind`."""
    if kind == "emulator":
        return ("sis_in", "air_in"), ("sis_out", "status", "stats", "air_out")
    return ("sis_in",), ("sis_out", "status", "stats", "burst_info")


class station(gr.hier_block2):
    """node (address, node options "name=value;...", at the radio's time scale, D_PDU
    capture to pcap, counters on `stats` every stats_interval protocol seconds),
    radio (radio_options: a dict of radio.radio's keyword arguments) and sis_server
    (sis_address, sis_port: 0 picks a free one, see server.port(); max_clients).

    Bad radio options raise radio.radio_error, a device or file that cannot be used
    radio.device_error, bad node options ValueError; a SIS address and port that
    cannot be listened on make the flowgraph's start() raise RuntimeError naming them.
    """

    def __init__(self, address="0.0.0.1", node_options="", radio_options=None,
                 sis_address="127.0.0.1", sis_port=5066, max_clients=64, pcap="",
                 stats_interval=0.0):
        if isinstance(address, gr.hier_block2):
            raise TypeError("station() takes no flowgraph (it is a hier block now): build "
                            "it, then connect it or call add_to(tb)")
        radio_options = dict(radio_options or {})
        # Radio options checked and the node built first (neither opens anything), so
        # bad options fail before the radio takes a sound card or a USRP.
        checked = radio_frontend.check_options(radio_options)
        the_node = node(address, node_options, checked["time_scale"], pcap, stats_interval)
        the_radio = radio_frontend.radio(**radio_options)
        inputs = radio_frontend.radio.input_signature_of(checked)
        outputs = radio_frontend.radio.output_signature(
            checked["kind"], radio_frontend.complex_streams(checked))
        gr.hier_block2.__init__(self, "station", inputs, outputs)
        self.address = address
        self.node = the_node
        self.radio = the_radio
        self.added_to_flowgraph = False
        self.anchor = None  # see add_to()
        self.server = sis_server(sis_address, sis_port, max_clients)
        self.msg_connect(self.server, "sis_out", self.node, "sis_in")
        self.msg_connect(self.node, "sis_out", self.server, "sis_in")
        self.msg_connect(self.node, "to_phy", self.radio, "in")
        self.msg_connect(self.radio, "out", self.node, "from_phy")
        self.msg_connect(self.radio, "status", self.node, "phy_status")
        self.pass_messages(checked["kind"])
        for port in range(inputs.max_streams()):
            self.connect((self, port), (self.radio, port))
        for port in range(outputs.max_streams()):
            self.connect((self.radio, port), (self, port))

    def pass_messages(self, kind):
        """The station's message ports (message_ports), each to or from its block."""
        inputs, outputs = message_ports(kind)
        for port in inputs:
            block, inner = INNER_PORTS[port]
            self.message_port_register_hier_in(port)
            self.msg_connect(self, port, getattr(self, block), inner)
        for port in outputs:
            block, inner = INNER_PORTS[port]
            self.message_port_register_hier_out(port)
            self.msg_connect(getattr(self, block), inner, self, port)

    def add_to(self, tb):
        """Makes the station part of flowgraph tb whatever else is connected to it: GNU
        Radio runs only what connections reach, and a station that serves TCP clients
        alone has none. Before or after the other connections; once is enough."""
        if self.input_signature().max_streams() or self.added_to_flowgraph:
            return  # a loopback radio's `air` input must be connected anyway
        self.added_to_flowgraph = True
        if self.output_signature().max_streams() == 0:
            tb.connect(self)
            return
        # A block with stream ports cannot be added alone: one more reader of the
        # symbols output (a trickle, an output may have many) anchors it instead.
        self.anchor = blocks.null_sink(gr.sizeof_gr_complex)
        tb.connect((self, radio_frontend.SYMBOLS_PORT), self.anchor)

    def counters(self):
        """The node's counters, name: number."""
        return dict(self.node.counters())

    def close(self):
        """After the flowgraph has stopped: unkeys the radio and releases its PTT port."""
        self.radio.close()


def run_until_signalled(tb, stations, started=None):
    """Starts tb, calls started() (if given), and returns once SIGINT or SIGTERM has come,
    with tb stopped and the radios' PTT released. A flowgraph that cannot start (a SIS
    port in use) raises RuntimeError, the radios released too."""
    stop = stop_event()
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
            st.close()
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

    def refuse(e, status):
        print(f"{prog}: {' '.join(str(e).split())}", file=sys.stderr)
        return status

    tb = gr.top_block(prog)
    try:
        st = station(address, node_options, radio_options, sis_port=sis_port)
    except radio_frontend.device_error as e:
        return refuse(e, 1)
    except (radio_frontend.radio_error, ValueError, RuntimeError) as e:
        return refuse(e, 2)
    st.add_to(tb)

    def announce():
        print(f"{prog}: node {address} on {where}, SIS on 127.0.0.1:{st.server.port()}; Ctrl-C stops",
              file=sys.stderr)

    try:
        run_until_signalled(tb, [st], announce)
    except RuntimeError as e:  # the SIS port is taken, for one
        return refuse(e, 1)
    print(json.dumps({"node": address, **st.counters(), "radio": st.radio.stats()}))
    return 0
