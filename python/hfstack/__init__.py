#
# Copyright 2026 gr-hfstack authors.
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""gr-hfstack: an open HF data stack for GNU Radio.

Blocks live in this package; the STANAG 5066 wire-format codecs and capture
writers live in ``hfstack.dl``; ``make_dpdu``, ``make_sis``, ``make_pdu`` and
``pdu_bytes`` build codec objects and PDUs in one expression (handy in GRC).
"""

from .hfstack_python import *  # noqa: F401,F403
from .pdu import make_dpdu, make_pdu, make_sis, pdu_bytes  # noqa: F401
from .modes import modem_mode_ok, s4539_pair_ok, s5069_settings_ok  # noqa: F401  (GRC asserts)
