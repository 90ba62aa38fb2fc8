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

static const char* __doc_gr_hfstack_s4539_tx = R"doc(STANAG 4539 / MIL-STD-188-110A serial-tone transmitter (75-2400 bps, 4800 uncoded): one PDU on `in` is one transmission (metadata data_rate and interleaver override the defaults); the output is a continuous stream with silence between transmissions, tagged tx_sob/tx_eob; ports ptt (#t/#f) and status (tx_started, tx_finished, tx_error).)doc";

static const char* __doc_gr_hfstack_s4539_tx_make = R"doc(Creates the transmitter; a mode 110A lacks raises ValueError.)doc";

static const char* __doc_gr_hfstack_s4539_tx_queued = R"doc(Transmissions waiting to start.)doc";
