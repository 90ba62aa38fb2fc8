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

static const char* __doc_gr_hfstack_sis_server =
    R"doc(TCP server for STANAG 5066 SIS clients (Annex A): each S_primitive a client sends leaves on sis_out as a PDU {client_id, from_client} with its Edition 3 frame, with "connected", "closed" and "invalid" events; PDUs {client_id} on sis_in are written to that client, and the event "disconnect" closes it once its queue is written.)doc";

static const char* __doc_gr_hfstack_sis_server_make =
    R"doc(Creates the server; it listens once the flowgraph starts (port 0 picks a free port), and top_block.start() raises RuntimeError if it cannot.)doc";

static const char* __doc_gr_hfstack_sis_server_port =
    R"doc(Port listened on once started (the requested one before).)doc";

static const char* __doc_gr_hfstack_sis_server_clients =
    R"doc(Client connections currently open.)doc";
