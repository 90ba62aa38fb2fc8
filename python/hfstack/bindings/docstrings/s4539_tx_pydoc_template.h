/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include "pydoc_macros.h"
#define D(...) DOC(gr, hfstack, __VA_ARGS__)
/*
  This file contains placeholders for docstrings for the Python bindings.
  Do not edit! These were automatically extracted during the binding process
  and will be overwritten during the build process
 */

static const char* __doc_gr_hfstack_s4539_tx =
    R"doc(STANAG 4539 transmitter: the MIL-STD-188-110A/B serial-tone modes 75-2400 bps (interleaver short or long) and 4800 bps uncoded (none), and the App C modes 3200, 4800, 6400, 8000, 9600 bps (ultra_short, very_short, short, medium, long, very_long) and 12800 bps uncoded (none). One PDU on `in` is one transmission (metadata data_rate and interleaver override the defaults); the output is a continuous stream with silence between transmissions, tagged tx_sob/tx_eob, real audio on an 1800 Hz carrier at rms `level` (default 0.25, power 0.0625: the default signal_power of hf_channel_ff/cc) or complex baseband; ports ptt (#t/#f) and status (tx_started, tx_finished, tx_error).)doc";

static const char* __doc_gr_hfstack_s4539_tx_make =
    R"doc(Creates the transmitter (sample_rate_hz, complex_output, data_rate, interleaver, level, rolloff); a rate and interleaver STANAG 4539 does not pair raise ValueError.)doc";

static const char* __doc_gr_hfstack_s4539_tx_queued =
    R"doc(Transmissions waiting to start.)doc";
