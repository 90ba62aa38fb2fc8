#
# Copyright 2026 gr-hfstack authors.
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""Small helpers to build codec objects and GNU Radio PDUs from Python or GRC.

    from gnuradio import hfstack
    d = hfstack.make_dpdu("data_only", tx_sequence=3, segment=b"abc")
    msg = hfstack.make_pdu(hfstack.dl.encode_dpdu(d), time=1.8e9)
"""

import pmt

from .hfstack_python import dl


def _fill(obj, fields):
    for name, value in fields.items():
        if not hasattr(obj, name):
            raise AttributeError(f"{type(obj).__name__} has no field '{name}'")
        setattr(obj, name, value)
    return obj


def make_dpdu(type_name, **fields):
    """A dl.dpdu of the named type ('data_only', 'ack_only', ...) with fields set."""
    d = dl.dpdu()
    d.type = getattr(dl.dpdu_type, type_name)
    return _fill(d, fields)


def make_sis(type_name, **fields):
    """A dl.sis_primitive of the named type ('bind_request', ...) with fields set."""
    s = dl.sis_primitive()
    s.type = getattr(dl.sis_type, type_name)
    return _fill(s, fields)


def make_pdu(data, **metadata):
    """A PDU (metadata dict . u8vector) from bytes and keyword metadata."""
    meta = pmt.make_dict()
    for key, value in metadata.items():
        meta = pmt.dict_add(meta, pmt.intern(key), pmt.to_pmt(value))
    data = bytes(data)
    return pmt.cons(meta, pmt.init_u8vector(len(data), list(data)))


def pdu_bytes(pdu):
    """The payload of a PDU as bytes."""
    return bytes(pmt.u8vector_elements(pmt.cdr(pdu)))


def node_message(msg, client_id):
    """What a node's sis_out message means to its in-process SIS client `client_id`:
    ("disconnect", None) or ("connected", None) for the node's events, ("frame", bytes)
    for a SIS frame, None for a message that is malformed or another client's."""
    if not pmt.is_pair(msg) or not pmt.is_dict(pmt.car(msg)):
        return None
    meta = pmt.car(msg)
    cid = pmt.dict_ref(meta, pmt.intern("client_id"), pmt.PMT_NIL)
    if not pmt.is_integer(cid) or pmt.to_long(cid) != client_id:
        return None
    event = pmt.dict_ref(meta, pmt.intern("client_event"), pmt.PMT_NIL)
    if pmt.is_symbol(event) and pmt.symbol_to_string(event) in ("disconnect", "connected"):
        return pmt.symbol_to_string(event), None
    if pmt.is_u8vector(pmt.cdr(msg)):
        return "frame", pdu_bytes(msg)
    return None
