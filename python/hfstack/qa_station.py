#!/usr/bin/env python3
#
# Copyright 2026 gr-hfstack authors.
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""The station hier block (node + radio + SIS server): two stations on emulated modems
and on the real modem carry data between real SIS clients over TCP; an in-flowgraph
client on sis_in/sis_out works beside the TCP clients; status passes the radio's
events; a lone station serves once added to a flowgraph; bad options, a busy SIS port
fail with a clear reason; grc/hfstack_station.block.yml cannot drift from
RADIO_OPTIONS, the radio's GRC block or the station's ports."""

import ast
import os
import socket
import tempfile

import numpy as np
import pmt
from gnuradio import gr, gr_unittest
from gnuradio import hfstack
from gnuradio.hfstack import radio as R
from gnuradio.hfstack import station as S
from gnuradio.hfstack.sis.client import bind_request, sis_client, unidata_request

from test_support import QUIET, TOP, events, primitives, recorder, sis_pdu

dl = hfstack.dl
T = dl.sis_type
SAP = 3
CLIENT_TIMEOUT_S = 60.0
IN_FLOWGRAPH_CLIENT = 0x7FFF0042  # far from the SIS server's own (small) client ids
# The station's own GRC parameters; every other one is a radio option.
STATION_PARAMETERS = {"address", "node_options", "sis_address", "sis_port", "max_clients",
                      "pcap", "stats_interval"}


class sender(gr.basic_block):
    """Posts the PDUs a test gives it on its `out` port (an in-flowgraph SIS client)."""

    def __init__(self):
        gr.basic_block.__init__(self, "sender", None, None)
        self.message_port_register_out(pmt.intern("out"))

    def send(self, pdu):
        self.message_port_pub(pmt.intern("out"), pdu)


def emulator_pair(time_scale=20.0, options="mode=2400S;" + QUIET, **station_options):
    """Stations 0.0.0.1 and 0.0.0.2 on one emulated channel, SIS servers on free ports."""
    tb = gr.top_block()
    a = S.station("0.0.0.1", options, dict(kind="emulator", time_scale=time_scale), sis_port=0,
                  **station_options)
    b = S.station("0.0.0.2", options, dict(kind="emulator", time_scale=time_scale, seed=2),
                  sis_port=0, **station_options)
    R.join(tb, a, b)
    return tb, a, b


def bound_clients(stations):
    clients = [sis_client(port=st.server.port(), timeout=CLIENT_TIMEOUT_S) for st in stations]
    for c in clients:
        c.send(bind_request(SAP))
        assert c.receive_type(T.bind_accepted).sap == SAP
    return clients


class qa_station(gr_unittest.TestCase):

    def carry(self, tb, a, b, payloads):
        """Sends `payloads` by ARQ from a SIS client of station a to one of b over TCP;
        returns what b's client got and how many a's client saw confirmed."""
        tb.start()
        clients = []
        try:
            clients = bound_clients((a, b))
            for p in payloads:
                clients[0].send(unidata_request(b.address, SAP, p))
            got = [clients[1].receive_type(T.unidata_indication).payload for _ in payloads]
            confirmed = sum(1 for _ in payloads
                            if clients[0].receive_type(T.unidata_request_confirm))
        finally:
            for c in clients:
                c.close()
            tb.stop()
            tb.wait()
        return got, confirmed

    def test_two_emulator_stations_carry_data_between_tcp_clients(self):
        tb, a, b = emulator_pair()
        rng = np.random.default_rng(26)
        payloads = [bytes(rng.integers(0, 256, n, dtype=np.uint8)) for n in (1, 700, 2048, 300)]
        got, confirmed = self.carry(tb, a, b, payloads)
        self.assertEqual(got, payloads)
        self.assertEqual(confirmed, len(payloads))
        counters = a.counters()
        self.assertIsInstance(counters, dict)
        self.assertGreater(counters["transmissions"], 0)
        self.assertEqual(counters["updus_confirmed"], len(payloads))
        self.assertEqual(b.counters()["updus_delivered"], len(payloads))
        self.assertGreater(b.radio.stats()["bursts_received"], 0)

    def test_emulator_stations_carry_data_at_240_kbps(self):
        """Nodes at STANAG 5069 WN12/48kHz/US over emulated modems; the
        air time the nodes count is App D's."""
        # A clear channel: at the emulator's default, F.1487 moderate at 20 dB, WN12
        # (30 dB in D-LXIV) loses most frames.
        tb = gr.top_block()
        options = "mode=WN12/48kHz/US;" + QUIET
        a = S.station("0.0.0.1", options, dict(kind="emulator", time_scale=20.0, profile=""),
                      sis_port=0)
        b = S.station("0.0.0.2", options, dict(kind="emulator", time_scale=20.0, profile="",
                                               seed=2), sis_port=0)
        R.join(tb, a, b)
        rng = np.random.default_rng(24)
        payloads = [bytes(rng.integers(0, 256, 2048, dtype=np.uint8)) for _ in range(40)]
        got, confirmed = self.carry(tb, a, b, payloads)
        self.assertEqual(got, payloads)
        self.assertEqual(confirmed, len(payloads))
        counters = a.counters()
        self.assertEqual(counters["updus_confirmed"], len(payloads))
        # 80 kB at 240 kbps: under 3 s of air (at 9600 bps it would be 68 s).
        self.assertLess(counters["air_time_s"], 10.0)
        self.assertGreater(counters["air_time_s"], 80_000 * 8 / 240_000)
        self.assertEqual([(link["peer"], link["tx_mode"], link["rx_mode"]) for link in a.node.links()],
                         [("0.0.0.2", "WN12/48kHz/US", "WN12/48kHz/US")])

    def test_two_loopback_stations_carry_data_over_the_real_modem(self):
        tb = gr.top_block()
        a, b = (S.station(address, "mode=2400S;" + QUIET,
                          dict(kind="loopback", snr_db=25.0, seed=seed), sis_port=0)
                for address, seed in (("0.0.0.1", 3), ("0.0.0.2", 4)))
        R.join(tb, a, b)
        heard = recorder()
        tb.msg_connect(b, "burst_info", heard, "in")
        got, confirmed = self.carry(tb, a, b, [b"over the STANAG 4539 modem"])
        self.assertEqual(got, [b"over the STANAG 4539 modem"])
        self.assertEqual(confirmed, 1)
        self.assertGreater(len(heard.messages), 0)  # the radio's burst_info, through the station

    def test_two_loopback_stations_carry_data_in_a_6_khz_stanag_5069_mode(self):
        """The loopback kind carries a STANAG 5069 mode real audio
        holds (6 kHz at 48 kHz), the receivers listening at its bandwidth."""
        tb = gr.top_block()
        a, b = (S.station(address, "mode=WN10/6kHz/US;" + QUIET,
                          dict(kind="loopback", mode="WN10/6kHz/US", profile="awgn",
                               snr_db=30.0, seed=seed), sis_port=0)
                for address, seed in (("0.0.0.1", 3), ("0.0.0.2", 4)))
        R.join(tb, a, b)
        heard = recorder()
        tb.msg_connect(b, "burst_info", heard, "in")
        got, confirmed = self.carry(tb, a, b, [b"over STANAG 5069 in 6 kHz" * 40])
        self.assertEqual(got, [b"over STANAG 5069 in 6 kHz" * 40])
        self.assertEqual(confirmed, 1)
        modes = {pmt.symbol_to_string(pmt.dict_ref(m, pmt.intern("mode"), pmt.PMT_NIL))
                 for m in heard.messages}
        self.assertEqual(modes, {"WN10/6kHz/US"})

    def test_in_flowgraph_client_beside_the_tcp_clients(self):
        """A client on station A's sis_in/sis_out (as ip_client or pep_proxy attach)
        exchanges U_PDUs with a TCP client of station B; the node tells the two
        kinds of client apart by client_id."""
        tb, a, b = emulator_pair()
        inside, heard_inside = sender(), recorder()
        tb.msg_connect(inside, "out", a, "sis_in")
        tb.msg_connect(a, "sis_out", heard_inside, "in")
        mine = lambda m: [p for c, p in primitives(m) if c == IN_FLOWGRAPH_CLIENT]  # noqa: E731
        tb.start()
        client = None
        try:
            inside.send(sis_pdu(IN_FLOWGRAPH_CLIENT, bind_request(5)))
            self.assertTrue(heard_inside.wait_for(
                lambda m: any(p.type == T.bind_accepted for p in mine(m))))
            client = bound_clients((b,))[0]
            inside.send(sis_pdu(IN_FLOWGRAPH_CLIENT, unidata_request("0.0.0.2", SAP, b"from inside")))
            self.assertEqual(client.receive_type(T.unidata_indication).payload, b"from inside")
            client.send(unidata_request("0.0.0.1", 5, b"to the inside"))
            self.assertTrue(heard_inside.wait_for(
                lambda m: any(p.type == T.unidata_indication for p in mine(m)), CLIENT_TIMEOUT_S))
        finally:
            if client is not None:
                client.close()
            tb.stop()
            tb.wait()
        indications = [p.payload for p in mine(heard_inside.messages)
                       if p.type == T.unidata_indication]
        self.assertEqual(indications, [b"to the inside"])

    def test_status_and_stats_ports(self):
        tb, a, b = emulator_pair(stats_interval=1.0)  # protocol seconds: 20 a second
        status, stats = recorder(), recorder()
        tb.msg_connect(a, "status", status, "in")
        tb.msg_connect(a, "stats", stats, "in")
        tb.start()
        clients = []
        try:
            clients = bound_clients((a, b))
            clients[0].send(unidata_request("0.0.0.2", SAP, b"status"))
            clients[1].receive_type(T.unidata_indication)
            self.assertTrue(status.wait_for(
                lambda m: {"tx_started", "tx_finished"} <= set(events(m))))
            self.assertTrue(stats.wait_for(
                lambda m: any(pmt.to_python(x).get("transmissions", 0) > 0 for x in m)))
        finally:
            for c in clients:
                c.close()
            tb.stop()
            tb.wait()

    def test_lone_stations_serve_once_added(self):
        """A station nothing connects to runs only once add_to() has put it in the
        flowgraph: a kind without stream ports, and a modem kind (WAV files here)."""
        with tempfile.TemporaryDirectory() as d:
            for options in (dict(kind="emulator"),
                            dict(kind="file", record=os.path.join(d, "tx.wav"))):
                with self.subTest(kind=options["kind"]):
                    tb = gr.top_block()
                    st = S.station("0.0.0.9", "mode=2400S", options, sis_port=0)
                    st.add_to(tb)
                    st.add_to(tb)  # twice changes nothing
                    tb.start()
                    try:
                        c = bound_clients((st,))[0]
                        c.close()
                    finally:
                        tb.stop()
                        tb.wait()
                        st.close()

    def test_bad_radio_options_raise_radio_error_naming_them(self):
        for options, words in (
                (dict(kind="emulator", snr_db="loud"), "radio option snr_db: 'loud' is not a number"),
                (dict(kind="audio", frequncy_hz=7e6), "unknown radio option frequncy_hz"),
                (dict(kind="emulator", device="hw:1"), "radio option device does not apply to kind emulator"),
                (dict(kind="radio"), "radio kind 'radio'")):
            with self.subTest(options=options):
                with self.assertRaises(R.radio_error) as caught:
                    S.station("0.0.0.1", "mode=2400S", options, sis_port=0)
                self.assertIn(words, str(caught.exception))

    def test_bad_node_options_raise_value_error(self):
        with self.assertRaises(ValueError) as caught:
            S.station("0.0.0.1", "mode=2400Q", dict(kind="emulator"), sis_port=0)
        self.assertIn("mode", str(caught.exception))
        with self.assertRaises(ValueError):
            S.station("not an address", "mode=2400S", dict(kind="emulator"), sis_port=0)

    def test_a_flowgraph_as_first_argument_is_refused_clearly(self):
        """The station used to take the top block to wire itself into."""
        with self.assertRaises(TypeError) as caught:
            S.station(gr.top_block(), "0.0.0.1", "mode=2400S", dict(kind="emulator"))
        self.assertIn("add_to(tb)", str(caught.exception))

    def test_sis_port_in_use_fails_at_start_naming_it(self):
        with socket.socket() as taken:
            taken.bind(("127.0.0.1", 0))
            taken.listen()
            port = taken.getsockname()[1]
            tb = gr.top_block()
            st = S.station("0.0.0.1", "mode=2400S", dict(kind="emulator"), sis_port=port)
            st.add_to(tb)
            with self.assertRaises(RuntimeError) as caught:
                S.run_until_signalled(tb, [st])
        self.assertIn(f"cannot listen on 127.0.0.1:{port}", str(caught.exception))

    # --- the GRC block -------------------------------------------------------------------

    def grc_block(self, name):
        import yaml
        with open(os.path.join(TOP, "grc", name)) as f:
            return yaml.safe_load(f)

    def test_grc_block_radio_parameters_are_the_radio_blocks(self):
        """One parameter per radio option, with the table's default, each as the HF
        Radio Front End block has it (label, type, choices, when shown), in a Radio tab."""
        params = {q["id"]: q for q in self.grc_block("hfstack_station.block.yml")["parameters"]}
        self.assertEqual(set(params) - STATION_PARAMETERS, set(R.DEFAULTS))
        radio_params = {q["id"]: q for q in self.grc_block("hfstack_radio.block.yml")["parameters"]}
        for o in R.RADIO_OPTIONS:
            q = dict(params[o.name])
            self.assertEqual(q.pop("category"), "Radio", o.name)
            self.assertEqual(q, radio_params[o.name], o.name)
            self.assertEqual(type(o.default)(q.get("default", "")), o.default, o.name)

    def rendered_make(self, kind, **values):
        """The block's make template as GRC renders it for `kind` with every other
        parameter at its default (parameters as GRC writes them into Python)."""
        from mako.template import Template
        block = self.grc_block("hfstack_station.block.yml")
        code = {}
        for q in block["parameters"]:
            default = q.get("default", "")
            if q["dtype"] in ("string", "file_save", "file_open"):
                code[q["id"]] = repr(default)
            else:
                code[q["id"]] = str(default)
        code.update(kind=kind, id="st", **values)
        return Template(block["templates"]["make"]).render(**code).strip()

    def test_grc_block_passes_each_kind_its_radio_options(self):
        for kind in R.KINDS:
            with self.subTest(kind=kind):
                tree = ast.parse(self.rendered_make(kind))
                call = tree.body[0].value
                self.assertEqual(ast.unparse(call.func), "hfstack_station.station")
                options = call.args[2]
                self.assertEqual(ast.unparse(options.func), "hfstack_radio.options_for_kind")
                self.assertEqual({k.arg for k in options.keywords}, set(R.DEFAULTS))
                passed = eval(compile(ast.Expression(options), "make", "eval"), {"hfstack_radio": R})
                self.assertEqual(set(passed), {o.name for o in R.RADIO_OPTIONS if kind in o.kinds})
                self.assertEqual({k.arg for k in call.keywords}, STATION_PARAMETERS - {"address", "node_options"})

    def test_grc_block_builds_a_running_station(self):
        """The generated code itself: the station is built and part of the flowgraph."""
        tb = gr.top_block()
        make = self.rendered_make("emulator", sis_port="0", address="'0.0.0.4'",
                                  node_options="'mode=600L'")
        exec("self.st = " + make, {"self": tb, "hfstack_station": S, "hfstack_radio": R})
        tb.start()
        try:
            bound_clients((tb.st,))[0].close()
        finally:
            tb.stop()
            tb.wait()
        self.assertEqual(tb.st.address, "0.0.0.4")

    def test_grc_block_ports_are_the_stations(self):
        """Per kind, the message ports the block shows are those the station has."""
        block = self.grc_block("hfstack_station.block.yml")

        def shown(ports, kind):
            out = set()
            for q in ports:
                hide = str(q.get("hide", "False")).strip()
                if hide.startswith("${"):
                    hide = eval(hide[2:-1], {"kind": kind, "air_publish": ""})
                if q["domain"] == "message" and hide in (False, "False"):
                    out.add(q["id"])
            return out
        for kind in R.KINDS:
            with self.subTest(kind=kind):
                inputs, outputs = S.message_ports(kind)
                self.assertEqual(shown(block["inputs"], kind), set(inputs))
                self.assertEqual(shown(block["outputs"], kind), set(outputs))


if __name__ == "__main__":
    gr_unittest.run(qa_station)
