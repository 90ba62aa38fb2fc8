#
# Copyright 2026 gr-hfstack authors.
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""sis_tcp_link: a SIS client's connection to any STANAG 5066 server over TCP (port 5066,
Annex A), as the message ports a node would offer, so a client block (ip_client) works
the same against our node in a flowgraph and against another vendor's server.

    sis_in   frames from the client block (its `sis_out`): written to the server
    sis_out  frames from the server, with the client's `client_id`, for its `sis_in`;
             "connected" when the TCP connection is (re)made (the client binds then),
             "disconnect" when it drops.

The connection is made in start() and remade every `retry_s` seconds while it is down;
nothing the server sends or fails to send stops the flowgraph.
"""

import logging
import os
import select
import socket
import threading

import pmt
from gnuradio import gr

from ..cli import stop_event
from ..hfstack_python import dl
from ..pdu import make_pdu

log = logging.getLogger(__name__)


class sis_tcp_link(gr.basic_block):

    def __init__(self, host="127.0.0.1", port=5066, client_id=0x7FFF0009, retry_s=5.0):
        gr.basic_block.__init__(self, name="sis_tcp_link", in_sig=None, out_sig=None)
        self.host, self.port, self.client_id, self.retry_s = host, int(port), int(client_id), retry_s
        self.sock = None
        self.lock = threading.Lock()
        self.counters = {"connects": 0, "frames_in": 0, "frames_out": 0, "dropped_while_down": 0,
                         "garbage_bytes": 0}
        self._thread = None
        self._stop_r = self._stop_w = None
        self._noticed = set()
        self.connected = threading.Event()  # set at the first connection
        self.message_port_register_in(pmt.intern("sis_in"))
        self.message_port_register_out(pmt.intern("sis_out"))
        self.set_msg_handler(pmt.intern("sis_in"), self._from_client)

    def _notice(self, kind, text, level=logging.WARNING):
        if kind not in self._noticed:
            self._noticed.add(kind)
            log.log(level, "%s", text)

    def _event(self, event):
        self.message_port_pub(pmt.intern("sis_out"),
                              make_pdu(b"", client_id=self.client_id, client_event=event))

    def _from_client(self, msg):
        if not pmt.is_pair(msg) or not pmt.is_u8vector(pmt.cdr(msg)):
            return
        meta = pmt.car(msg)
        if pmt.is_dict(meta) and not pmt.is_null(
                pmt.dict_ref(meta, pmt.intern("client_event"), pmt.PMT_NIL)):
            return  # the client's own "connected": the TCP connection stands for it
        frame = bytes(pmt.u8vector_elements(pmt.cdr(msg)))
        with self.lock:
            sock = self.sock
        if sock is None:
            self.counters["dropped_while_down"] += 1
            # Part of the wait above when the server has never answered: not a failure.
            self._notice("down", f"SIS server {self.host}:{self.port} not connected: "
                         "frames from the client are dropped until it is",
                         logging.WARNING if self.connected.is_set() else logging.INFO)
            return
        try:
            sock.sendall(frame)
            self.counters["frames_out"] += 1
        except OSError as e:
            self.counters["dropped_while_down"] += 1
            self._notice(f"send{e.errno}", f"SIS server {self.host}:{self.port}: send failed: {e}")

    def start(self):
        self._stop_r, self._stop_w = os.pipe()
        self._thread = threading.Thread(target=self._run, name="sis_tcp_link", daemon=True)
        self._thread.start()
        return True

    def stop(self):
        if self._thread:
            os.write(self._stop_w, b"x")
            self._thread.join(10)
            self._thread = None
            os.close(self._stop_r)
            os.close(self._stop_w)
        with self.lock:
            if self.sock:
                self.sock.close()
                self.sock = None
        return True

    def _stopping(self, timeout):
        return bool(select.select([self._stop_r], [], [], timeout)[0])

    def _run(self):
        try:
            while True:
                try:
                    sock = socket.create_connection((self.host, self.port), timeout=10)
                except OSError as e:
                    # A station may start later: this is waiting, said once, not failing.
                    self._notice(f"connect{getattr(e, 'errno', 0)}",
                                 f"waiting for the SIS server at {self.host}:{self.port} "
                                 f"({e.strerror or e}); trying every {self.retry_s:g} s "
                                 "(--connect-timeout to give up)", logging.INFO)
                    if self._stopping(self.retry_s):
                        return
                    continue
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                sock.settimeout(10)  # bounds sendall() on a server that stops reading
                with self.lock:
                    self.sock = sock
                self.counters["connects"] += 1
                self.connected.set()
                self._noticed.clear()
                log.info("connected to the SIS server at %s:%d", self.host, self.port)
                self._event("connected")
                stopped = self._serve(sock)
                with self.lock:
                    self.sock = None
                sock.close()
                if stopped:
                    return
                self._event("disconnect")
                log.warning("SIS server %s:%d closed the connection; reconnecting",
                            self.host, self.port)
                if self._stopping(self.retry_s):
                    return
        except Exception:  # loud, but the flowgraph goes on
            log.exception("SIS link stopped by an internal error")

    def _serve(self, sock):
        """Reads frames until the server closes (False) or stop() (True)."""
        reassembler = dl.sis_reassembler()
        while True:
            ready, _, _ = select.select([self._stop_r, sock], [], [])
            if self._stop_r in ready:
                return True
            try:
                data = sock.recv(65536)
            except OSError:
                return False
            if not data:
                return False
            for p in reassembler.push(data):
                self.counters["frames_in"] += 1
                self.message_port_pub(pmt.intern("sis_out"),
                                      make_pdu(dl.encode_sis(p), client_id=self.client_id))
            self.counters["garbage_bytes"] = reassembler.counters().garbage_bytes


def serve_over_tcp(name, client, host, port, client_id, stats_file, stats_interval, statistics,
                   started=None, connect_timeout=0.0):
    """A standalone SIS client's main loop (hfstack-ip, hfstack-pep): `client` (a block
    with sis_in/sis_out) joined to the server at host:port, run until SIGINT or SIGTERM;
    statistics(link) -> dict written as a JSON line every stats_interval s (0: only at
    the end) to stats_file (or stdout). `started()` is called once running. With
    `connect_timeout` > 0, gives up when no connection was made in that many seconds.
    Returns the exit status: 0, or 1 after giving up."""
    import json
    import signal
    import sys
    import time

    from gnuradio import gr

    tb = gr.top_block(name)
    link = sis_tcp_link(host, port, client_id)
    tb.msg_connect(client, "sis_out", link, "sis_in")
    tb.msg_connect(link, "sis_out", client, "sis_in")
    out = open(stats_file, "a") if stats_file else sys.stdout
    stop = stop_event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: stop.set())
    tb.start()
    if started is not None:
        started()
    status = 0
    deadline = time.monotonic() + connect_timeout if connect_timeout > 0 else None
    try:
        while True:
            wait = stats_interval or None
            if deadline is not None and not link.connected.is_set():
                left = deadline - time.monotonic()
                if left <= 0:
                    log.error("no SIS server at %s:%d after %g s (--connect-timeout); "
                              "giving up", host, port, connect_timeout)
                    status = 1
                    break
                wait = min(wait or left, left, 0.5)
            if stop.wait(wait):
                break
            if deadline is not None and not link.connected.is_set():
                continue  # waiting for the server: no statistics line each half second
            if stats_interval:
                out.write(json.dumps(statistics(link)) + "\n")
                out.flush()
    finally:
        tb.stop()
        tb.wait()
        out.write(json.dumps(statistics(link)) + "\n")
        out.flush()
    return status
