#
# Copyright 2026 gr-hfstack authors.
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""Radio front ends: one node's modem and radio as one hier block.

  front_end  radio, its kinds and RADIO_OPTIONS, the one table of its options
  ptt        the push-to-talk switches a transmitter is keyed with (serial, rigctld)
  errors     radio_error and device_error

The names below are the package's API: `from gnuradio.hfstack import radio;
radio.radio(kind="audio", ...)`."""

from .. import modes  # noqa: F401  (the GRC blocks' asserts)
from ..modes import s4539_pair_ok  # noqa: F401  (the GRC blocks' asserts)
from .errors import device_error, radio_error  # noqa: F401
from .front_end import (AIR_PORT, DEFAULTS, KINDS, KINDS_OF, MODEM_KINDS,  # noqa: F401
                        PACE_CHUNK_S, RADIO_OPTIONS, RECEIVED_PORT, SYMBOLS_PORT,
                        add_arguments, burst_gate, burst_monitor, check_options,
                        complex_streams, from_arguments, is_wideband, join, modem_problems,
                        modem_rate, options_for_kind, pacer, quiet_stderr, radio,
                        receiver_listen, receiver_threads, signal_centre_hz, transmitter_settings, uhd_rates)
from .ptt import hamlib_rigctld, parse_ptt, ptt_control, ptt_switch, rigctld_text  # noqa: F401
