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

static const char* __doc_gr_hfstack_node =
    R"doc(A STANAG 5066 node (subnet interface, CAS-1 soft links, ARQ and non-ARQ data transfer) driven in real time. Ports: sis_in / sis_out (SIS frames of clients named by client_id, and client_event messages from a sis_server), to_phy / from_phy (one modem burst per PDU), phy_status (dicts with event), stats (counter dicts).)doc";

static const char* __doc_gr_hfstack_node_make =
    R"doc(node(address, options, time_scale, pcap_file, stats_interval): options are "name=value;..." pairs, see node_option_help().)doc";

static const char* __doc_gr_hfstack_node_option =
    R"doc(Current value of a node option, as text.)doc";

static const char* __doc_gr_hfstack_node_counters =
    R"doc(Every counter as a dict {name: value}; clients_connected counts the clients connected now, clients_accepted every connection since the start.)doc";
static const char* __doc_gr_hfstack_node_links =
    R"doc(One dict per peer: peer (a.b.c.d), state (idle, requesting, up, breaking), tx_mode and rx_mode ("2400S").)doc";
static const char* __doc_gr_hfstack_node_take_events =
    R"doc(Link, mode and binding changes since the last call, as dicts of text: event (link_up, link_down, rate_change, client_bind, client_unbind), time, and peer/tx_mode/rx_mode, direction/old/new or sap/client.)doc";
static const char* __doc_gr_hfstack_node_channel_busy =
    R"doc(Whether the modem hears another station's carrier now: the channel busy, as the node's carrier sense sees it.)doc";
static const char* __doc_gr_hfstack_node_bindings =
    R"doc(The bound SAPs as a dict {sap: client id}.)doc";

static const char* __doc_gr_hfstack_node_option_help =
    R"doc(Every node option with its default and meaning, one per line.)doc";
