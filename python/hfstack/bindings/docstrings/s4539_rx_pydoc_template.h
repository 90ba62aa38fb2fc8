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

static const char* __doc_gr_hfstack_s4539_rx = R"doc(STANAG 4539 / MIL-STD-188-110A serial-tone receiver (75-2400 bps, 4800 uncoded, detected automatically): posts each burst on `out` as a PDU (bytes; metadata data_rate, interleaver, snr_db, frequency_offset_hz, bytes_bad, time) and carrier_on/carrier_off on `status`.)doc";

static const char* __doc_gr_hfstack_s4539_rx_make = R"doc(Creates the receiver for real audio on an 1800 Hz carrier or complex baseband.)doc";

static const char* __doc_gr_hfstack_s4539_rx_bursts = R"doc(Bursts posted so far.)doc";

static const char* __doc_gr_hfstack_s4539_rx_carrier_detected = R"doc(True while a burst is being received.)doc";
