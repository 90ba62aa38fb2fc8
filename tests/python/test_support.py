#
# Copyright 2026 gr-hfstack authors.
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""What the QA files (qa_*.py, here and beside the blocks in python/hfstack) share:
where the repository's apps and examples are,
recorders of message ports, SIS PDUs and their decoding, pcap files read back, free
TCP ports, a process stopped once it says something, the emulated-modem ARQ exchange
and the AWGN modem link. Imported as `test_support`: the QA files beside it find it
in their own directory, those in python/hfstack through PYTHONPATH (ctest sets it);
not installed."""

import codecs
import os
import select
import signal
import socket
import struct
import subprocess
import threading
import time

import pmt
from gnuradio import blocks, gr
from gnuradio import hfstack
from gnuradio.hfstack import radio as radio_frontend
from gnuradio.hfstack.sis.client import bind_request, unidata_request

dl = hfstack.dl

# The checkout this file is in (tests/python/).
TOP = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
APPS = os.path.join(TOP, "apps")
EXAMPLES = os.path.join(TOP, "examples")

# How long a recorder waits by default, real seconds.
RECORDER_TIMEOUT_S = 30.0


def app_path(name):
    """apps/NAME of the checkout, e.g. app_path("hfstack-node")."""
    return os.path.join(APPS, name)


# --- message ports ----------------------------------------------------------------------

class recorder(gr.basic_block):
    """Collects PDUs from a message port and wakes the test when they arrive."""

    def __init__(self):
        gr.basic_block.__init__(self, "recorder", None, None)
        self.message_port_register_in(pmt.intern("in"))
        self.set_msg_handler(pmt.intern("in"), self.handle)
        self.messages = []
        self.changed = threading.Condition()

    def handle(self, msg):
        with self.changed:
            self.messages.append(msg)
            self.changed.notify_all()

    def wait_for(self, predicate, timeout=RECORDER_TIMEOUT_S):
        with self.changed:
            return self.changed.wait_for(lambda: predicate(self.messages), timeout)


def events(messages):
    """The `event` of every status dict in `messages`, as strings."""
    return [pmt.symbol_to_string(pmt.dict_ref(m, pmt.intern("event"), pmt.PMT_NIL))
            for m in messages]


# --- SIS ----------------------------------------------------------------------------------

def sis_pdu(client, primitive):
    return hfstack.make_pdu(dl.encode_sis(primitive), client_id=client, from_client=True)


def primitives(messages):
    """(client_id, decoded primitive) of every SIS frame in recorded PDUs."""
    out = []
    for m in messages:
        meta, data = pmt.car(m), hfstack.pdu_bytes(m)
        if data:
            client = pmt.to_long(pmt.dict_ref(meta, pmt.intern("client_id"), pmt.from_long(-1)))
            out.append((client, dl.decode_sis(data)))
    return out


def types(messages):
    return [p.type for _, p in primitives(messages)]


# --- captures -----------------------------------------------------------------------------

def read_pcap(path):
    """A little-endian pcap file: (magic, link type, [(time in seconds, record bytes)])."""
    with open(path, "rb") as f:
        magic, _, _, _, _, _, linktype = struct.unpack("<IHHiIII", f.read(24))
        records = []
        while True:
            h = f.read(16)
            if not h:
                break
            sec, usec, incl, _ = struct.unpack("<IIII", h)
            records.append((sec + usec / 1e6, f.read(incl)))
    return magic, linktype, records


# --- TCP and processes --------------------------------------------------------------------

def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def free_port_pair():
    """P with P + 1 also free (hfstack-node serves node B on the next port)."""
    for _ in range(50):
        with socket.socket() as a:
            a.bind(("127.0.0.1", 0))
            port = a.getsockname()[1]
            if port >= 65535:
                continue
            with socket.socket() as b:
                try:
                    b.bind(("127.0.0.1", port + 1))
                except OSError:
                    continue
            return port
    raise RuntimeError("no two consecutive free TCP ports")


def accepts(port):
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.2):
            return True
    except OSError:
        return False


def tail(path, size=3000):
    """The end of a log file, for a failure's message ("" when there is none)."""
    if not path or not os.path.exists(path):
        return ""
    with open(path, errors="replace") as f:
        return f.read()[-size:]


def wait_for(what, condition, deadline_s, process=None, log=None):
    """Polls `condition()` of another process until it holds; fails, with the end of
    `log`, when `process` exits first or after `deadline_s`."""
    deadline = time.monotonic() + deadline_s
    while not condition():
        if process is not None and process.poll() is not None:
            raise AssertionError(f"{what}: the process exited: {tail(log)}")
        if time.monotonic() > deadline:
            raise AssertionError(f"{what}: not within {deadline_s} s: {tail(log)}")
        time.sleep(0.1)  # polling another process, bounded by the deadline


def sigterm_once_said(command, words, env, timeout=120):
    """Runs `command` until its stderr says `words` (AssertionError if it ends or stays
    silent for `timeout` seconds first), then sends it SIGTERM: (exit status, stdout,
    all its stderr)."""
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    seen = ""
    # Straight from the pipe: a buffered readline() can hold the awaited line while
    # select() sees nothing more to read.
    decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
    try:
        deadline = time.monotonic() + timeout
        while words not in seen:
            ready, _, _ = select.select([process.stderr], [], [], max(0.0, deadline - time.monotonic()))
            chunk = os.read(process.stderr.fileno(), 65536) if ready else b""
            if not chunk:
                raise AssertionError(f"{os.path.basename(command[1])} ended or did not say {words!r} "
                                     f"in time:\n{seen}")
            seen += decoder.decode(chunk)
        process.send_signal(signal.SIGTERM)
        out, err = process.communicate(timeout=timeout)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    return process.returncode, out, seen + err


# --- nodes and modems ---------------------------------------------------------------------

# The recorders never answer S_KEEP_ALIVE: no supervision within the tests.
QUIET = "supervision.keep_alive_interval_s=36000"
ARQ_EXCHANGE_TIMEOUT_S = 120.0


def arq_exchange(test, options, radios, scale, payloads):
    """Node 0.0.0.1 sends `payloads` by ARQ to 0.0.0.2, both with `options`, over two
    radios (joined here); asserts that all are delivered in order and confirmed.
    Returns node 0.0.0.1 and the PDUs it gave its modem."""
    tb = gr.top_block()
    a = hfstack.node("0.0.0.1", options, scale)
    b = hfstack.node("0.0.0.2", options, scale)
    air = recorder()
    tb.msg_connect(a, "to_phy", air, "in")
    for n, r in zip((a, b), radios):
        tb.msg_connect(n, "to_phy", r, "in")
        tb.msg_connect(r, "out", n, "from_phy")
        tb.msg_connect(r, "status", n, "phy_status")
    radio_frontend.join(tb, *radios)
    out_a, out_b = recorder(), recorder()
    tb.msg_connect(a, "sis_out", out_a, "in")
    tb.msg_connect(b, "sis_out", out_b, "in")
    a._post(pmt.intern("sis_in"), sis_pdu(7, bind_request(3)))
    b._post(pmt.intern("sis_in"), sis_pdu(9, bind_request(3)))
    for p in payloads:
        a._post(pmt.intern("sis_in"), sis_pdu(7, unidata_request(2, 3, p)))
    delivered = lambda m: types(m).count(dl.sis_type.unidata_indication)  # noqa: E731
    tb.start()
    try:
        done = out_b.wait_for(lambda m: delivered(m) >= len(payloads), ARQ_EXCHANGE_TIMEOUT_S)
        confirmed = out_a.wait_for(lambda m: types(m).count(
            dl.sis_type.unidata_request_confirm) >= len(payloads), ARQ_EXCHANGE_TIMEOUT_S)
    finally:
        tb.stop()
        tb.wait()
    test.assertTrue(done, f"{options}: {delivered(out_b.messages)} of {len(payloads)} delivered")
    test.assertTrue(confirmed, f"{options}: not confirmed")
    got = [p.payload for _, p in primitives(out_b.messages)
           if p.type == dl.sis_type.unidata_indication]
    test.assertEqual(got, payloads, options)
    return a, air.messages


def awgn_link(fs, complex_signal, seconds, snr_db, seed=5, deliver_per_block=False):
    """(top block, transmitter, its `seconds` of samples, receiver): the transmitter joined
    to the receiver through an AWGN channel at snr_db."""
    tb = gr.top_block()
    tx = hfstack.s4539_tx(fs, complex_signal, 2400, "short")
    head = blocks.head(gr.sizeof_gr_complex if complex_signal else gr.sizeof_float, int(seconds * fs))
    chan = (hfstack.hf_channel_cc if complex_signal else hfstack.hf_channel_ff)(
        fs, "awgn", snr_db=snr_db, signal_power=0.0625, seed=seed)
    rx = hfstack.s4539_rx(fs, complex_signal, deliver_per_block)
    tb.connect(tx, head, chan, rx)
    return tb, tx, head, rx
