/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

/* x2x-rcop, the XMPP bridge's transport after XEP-0365 0.1 ("Server to Server
 * communication over STANAG 5066 ARQ", xmpp.org/extensions/xep-0365.html): each stanza
 * is one RCOP PDU (STANAG 5066 Annex F.8, dl/rcop.h) sent ARQ; the whole PDU is sent
 * again when its delivery fails. This file is the PDU codec and the reassembly; the
 * application binds the SAP, sends each PDU as an S_UNIDATA_REQUEST (ARQ, with client
 * or node delivery confirmation, both of which XEP-0365 allows: xmpp_rcop_link.h) and
 * reports each stanza delivered or failed to the bridge.
 *
 * What XEP-0365 0.1 fixes: a stanza per RCOP PDU; connection ID agreed, 0
 * recommended; the SAP agreed (the XEP recommends 2, calling it RCOP's; Annex F
 * Table F-1 gives RCOP SAP 6, which is our default, `sap` option); delivery failure
 * resends the whole PDU; no XEP-0198, no whitespace or XEP-0199 pings. What we chose:
 *  - APPLICATION IDENTIFIER 0x8365 (in the user-defined range 0x8000-0xFFFF of Annex
 *    F Table F-5; "8365" recalls the XEP's number), configurable;
 *  - APP_DATA is the stanza's UTF-8 bytes, top-level xmlns left out (jabber:server
 *    implied, as in XEP-0361), no compression;
 *  - U_PDU ID NUMBER counts stanzas per sender modulo 256; a stanza longer than one
 *    U_PDU (the node's MTU less the 6-byte header) is cut into segments numbered from
 *    0 with the same U_PDU ID, sent in order (ARQ, in-order delivery); the receiver
 *    knows the last segment because the stanza's element is then complete.
 * Reassembly per sending node: a segment 0 starts a stanza (an unfinished one is
 * dropped, counted truncated); a segment out of sequence, of another connection or
 * application, or that does not parse, is dropped and counted. Nothing from the air
 * throws. */
#ifndef HFSTACK_KERNELS_NET_XMPP_X2X_RCOP_H
#define HFSTACK_KERNELS_NET_XMPP_X2X_RCOP_H

#include "dl/rcop.h"
#include "xmpp_splitter.h"

#include <optional>

namespace gr {
namespace hfstack {
namespace net {

using dl::bytes;

constexpr uint16_t x2x_rcop_application_id = 0x8365;

// Splits one stanza into RCOP PDUs (U_PDUs) of at most `max_pdu_bytes` each.
class x2x_rcop_sender
{
public:
    // Throws std::invalid_argument: connection_id > 15, max_pdu_bytes <= 6.
    x2x_rcop_sender(uint8_t connection_id, uint16_t application_id, size_t max_pdu_bytes);
    std::vector<bytes> encode(const std::string& stanza);
    uint8_t last_updu_id() const { return uint8_t(d_next - 1); }

private:
    uint8_t d_connection;
    uint16_t d_application;
    size_t d_max;
    uint8_t d_next = 0;
};

struct x2x_rcop_counters {
    uint64_t pdus = 0, stanzas = 0;
    uint64_t truncated = 0; // a stanza given up unfinished (a new one began)
    uint64_t out_of_order = 0, foreign = 0, short_pdus = 0, malformed = 0;
};

// Reassembles the stanzas from one sending node.
class x2x_rcop_receiver
{
public:
    x2x_rcop_receiver(uint8_t connection_id,
                      uint16_t application_id,
                      size_t max_stanza_bytes);
    // A U_PDU from the node: the stanza it completes, if any.
    std::optional<xml_element> on_pdu(const uint8_t* data, size_t size);
    const x2x_rcop_counters& counters() const { return d_counters; }
    const std::string& last_error() const { return d_error; }

private:
    void drop(uint64_t& counter, const std::string& why);

    uint8_t d_connection;
    uint16_t d_application;
    size_t d_max;
    std::optional<xmpp_splitter> d_splitter; // the stanza being reassembled
    uint8_t d_updu_id = 0;
    uint16_t d_next_segment = 0;
    x2x_rcop_counters d_counters;
    std::string d_error;
};

} // namespace net
} // namespace hfstack
} // namespace gr

#endif
