/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

/* x2x-rcop on a STANAG 5066 node: a sans-IO SIS client that binds the transport's SAP,
 * sends each stanza the bridge gives it as RCOP PDUs (xmpp_x2x_rcop.h) in ARQ with
 * client (or node) delivery confirmation and in-order delivery, and reports it
 * delivered once every segment is confirmed, failed as soon as one is rejected (the
 * bridge sends it again, whole, with a new U_PDU ID: XEP-0365 0.1's rule). It
 * reassembles what peers send, one receiver per peer node. Confirmations are matched
 * by the 6-byte RCOP header the node echoes (ours echoes 16 bytes of each U_PDU): at
 * most max_outstanding stanzas per peer await confirmation, far fewer than the 256
 * U_PDU IDs, so a header is never ambiguous. A stanza delivered but reported rejected
 * is sent twice: delivery confirmation cannot tell, and XEP-0365 defines no duplicate
 * detection. */
#ifndef HFSTACK_KERNELS_NET_XMPP_RCOP_LINK_H
#define HFSTACK_KERNELS_NET_XMPP_RCOP_LINK_H

#include "dl/sis.h"
#include "xmpp_bridge.h"
#include "xmpp_x2x_rcop.h"

#include <deque>
#include <limits>
#include <map>
#include <set>

namespace gr {
namespace hfstack {
namespace net {

struct x2x_rcop_link_config {
    uint8_t sap = dl::rcop_sap;
    uint8_t rank = 0;
    uint8_t priority = 0;
    uint8_t connection_id = 0;
    uint16_t application_id = x2x_rcop_application_id;
    size_t max_stanza_bytes = 16384;
    size_t max_outstanding = 64; // stanzas per peer awaiting confirmation (< 256)
    // client: the far node confirms once the far bridge took the PDU, and rejects it
    // when no bridge is bound there; node: once the far node has it.
    dl::sis_delivery_confirmation confirmation = dl::sis_delivery_confirmation::client;
};

// The link settings a bridge configuration names (sap, rcop_connection_id,
// rcop_application_id, max_stanza_bytes).
x2x_rcop_link_config x2x_rcop_link_config_for(const xmpp_bridge_config& c);

struct x2x_rcop_event {
    enum class kind {
        bound,     // the node accepted our bind
        unbound,   // the node dropped or refused us (`text`)
        delivered, // stanza `id` to `node` confirmed
        failed,    // stanza `id` to `node` rejected, or its fate lost with the node
        stanza,    // `stanza` from `node`
    };
    kind what = kind::bound;
    uint32_t node = 0;
    xmpp_stanza_id id = 0;
    xml_element stanza;
    std::string text;
};

struct x2x_rcop_actions {
    std::vector<dl::sis_primitive> to_sis;
    std::vector<x2x_rcop_event> events;
    std::vector<std::string> notices; // first occurrence of each kind of trouble
};

class x2x_rcop_link
{
public:
    // Throws std::invalid_argument: sap > 15, connection_id > 15, max_outstanding
    // not 1..128.
    explicit x2x_rcop_link(x2x_rcop_link_config config);

    void start(double now); // S_BIND_REQUEST; call when the SIS connection is up
    void on_disconnected(double now);
    void on_sis(const dl::sis_primitive& p, double now);
    void on_timer(double) {}
    double next_deadline() const { return std::numeric_limits<double>::infinity(); }
    x2x_rcop_actions take_actions();

    bool can_send(uint32_t node) const; // bound, flow on, room for this peer
    // The stanza's PDUs to the node; false (nothing sent) unless can_send(node).
    bool send(uint32_t node, xmpp_stanza_id id, const std::string& wire, double now);

    bool bound() const { return d_bound; }
    // What the receivers counted, all peers together.
    x2x_rcop_counters receive_counters() const;
    uint64_t stale_confirmations() const { return d_stale; }

private:
    struct awaiting {
        uint32_t node;
        xmpp_stanza_id id;
        uint8_t updu_id;
        uint16_t segments, confirmed = 0;
    };
    void on_confirm(const dl::sis_primitive& p, bool delivered);
    void fail_all();
    void notice(const std::string& kind, const std::string& text);

    x2x_rcop_link_config d_cfg;
    bool d_bound = false, d_flow_on = true;
    size_t d_mtu = 2048;
    std::map<uint32_t, x2x_rcop_sender> d_senders;
    std::map<uint32_t, x2x_rcop_receiver> d_receivers;
    std::deque<awaiting> d_awaiting;
    x2x_rcop_actions d_actions;
    std::set<std::string> d_noticed;
    uint64_t d_stale = 0;
};

} // namespace net
} // namespace hfstack
} // namespace gr

#endif
