#
# Copyright 2026 gr-hfstack authors.
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""burst_history: one measured value of the last received bursts as a vector, for a
QT GUI time sink in message mode (SNR or frequency offset over time, one point a
burst)."""

import collections
import threading

import numpy as np
import pmt
from gnuradio import gr


class burst_history(gr.basic_block):
    """Takes s4539_rx's `burst_info` dicts (or received-burst PDUs, whose metadata hold
    the same keys) on `in`; after each one that carries `key`, posts on `out` a PDU
    whose f32vector holds that value for the last `length` bursts, oldest first.
    values() gives the same list from Python."""

    def __init__(self, key="snr_db", length=100):
        gr.basic_block.__init__(self, "burst_history", None, None)
        if length < 1:
            raise ValueError(f"burst_history: length must be at least 1, not {length}")
        self.key = pmt.intern(key)
        self.lock = threading.Lock()
        self.history = collections.deque(maxlen=int(length))
        self.message_port_register_in(pmt.intern("in"))
        self.message_port_register_out(pmt.intern("out"))
        self.set_msg_handler(pmt.intern("in"), self.handle)

    def handle(self, msg):
        # A dict is a list of pairs to pmt: a PDU is told apart by its payload vector.
        is_pdu = pmt.is_pair(msg) and pmt.is_uniform_vector(pmt.cdr(msg))
        info = pmt.car(msg) if is_pdu else msg
        if not pmt.is_dict(info):
            return
        value = pmt.dict_ref(info, self.key, pmt.PMT_NIL)
        if not pmt.is_real(value):
            return
        with self.lock:
            self.history.append(pmt.to_double(value))
            vector = np.array(self.history, dtype=np.float32)
        self.message_port_pub(pmt.intern("out"),
                              pmt.cons(pmt.make_dict(), pmt.init_f32vector(len(vector), vector)))

    def values(self):
        with self.lock:
            return list(self.history)
