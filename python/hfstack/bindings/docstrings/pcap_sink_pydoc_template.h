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

static const char* __doc_gr_hfstack_pcap_sink =
    R"doc(Writes PDUs to a capture file that Wireshark decodes: format "dpdu" (link type 237, one record per D_PDU found in each PDU) or "sis" (SIS bytes in synthetic TCP to port 5066, placed by metadata client_id and from_client).)doc";

static const char* __doc_gr_hfstack_pcap_sink_make =
    R"doc(Creates the sink; the file is created when the flowgraph starts.)doc";

static const char* __doc_gr_hfstack_pcap_sink_records =
    R"doc(Records written so far.)doc";
