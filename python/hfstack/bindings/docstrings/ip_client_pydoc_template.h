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

static const char* __doc_gr_hfstack_ip_client =
    R"doc(The IP client of STANAG 5066 Annex F.12: IP datagrams on ip_in/ip_out (e.g. a TUN device), SIS frames to and from a node on sis_out/sis_in, one whole datagram per U_PDU on SAP 9; counters on stats.)doc";

static const char* __doc_gr_hfstack_ip_client_make =
    R"doc(Creates the client from IP client options "name=value;..." (ip_client_option_help()); it binds once the flowgraph starts.)doc";

static const char* __doc_gr_hfstack_ip_client_option =
    R"doc(Current value of an option, as text.)doc";

static const char* __doc_gr_hfstack_ip_client_counters =
    R"doc(Every counter as "name=value" lines (per peer: peer.a.b.c.d.name).)doc";

static const char* __doc_gr_hfstack_ip_client_bound =
    R"doc(Whether the node accepted the bind.)doc";

static const char* __doc_gr_hfstack_ip_client_option_help =
    R"doc(Every IP client option with its default and meaning.)doc";
