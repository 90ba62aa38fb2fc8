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

static const char* __doc_gr_hfstack_s4539_rx =
    R"doc(STANAG 4539 receiver, every mode detected automatically: the MIL-STD-188-110A/B serial-tone modes 75-2400 bps and 4800 bps uncoded, and the App C modes 3200-9600 bps and 12800 bps uncoded. Posts each burst on `out` as a PDU (bytes; metadata data_rate, interleaver as s4539_tx names it, snr_db in 3 kHz, frequency_offset_hz, bytes_bad, time) and carrier_on/carrier_off on `status`.)doc";

static const char* __doc_gr_hfstack_s4539_rx_make =
    R"doc(Creates the receiver for real audio on an 1800 Hz carrier or complex baseband.)doc";

static const char* __doc_gr_hfstack_s4539_rx_bursts = R"doc(Bursts posted so far.)doc";

static const char* __doc_gr_hfstack_s4539_rx_carrier_detected =
    R"doc(True while a burst is being received.)doc";
