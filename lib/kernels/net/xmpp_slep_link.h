/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

/* x2x-slep on a STANAG 5066 node: a sans-IO SIS client that runs a SLEP instance
 * (slep.h) and carries the bridge's stanzas as XEP-0361 byte streams (xmpp_x2x_slep.h).
 * Each bridge opens its own stream to each peer for what it sends and reads the one
 * the peer opened: XEP-0361's rule for servers that open connections at the same time
 * (each sends on the one it opened), which spares an election over a slow link. Streams
 * are opened without SLEP's compression: the x2x codec DEFLATEs, flushed per stanza.
 *
 * A stanza is delivered when SLEP has had the stream's bytes up to its end confirmed by
 * the far client; when SLEP resets the stream (give_up_s without progress, the peer
 * restarted), the stanzas not yet confirmed fail and the bridge sends them again on a
 * new stream. What a peer sends that does not parse (garbage, a DEFLATE error,
 * malformed XML, an oversized stanza) resets its stream, counted. */
#ifndef HFSTACK_KERNELS_NET_XMPP_SLEP_LINK_H
#define HFSTACK_KERNELS_NET_XMPP_SLEP_LINK_H

#include "slep.h"
#include "xmpp_bridge.h"
#include "xmpp_x2x_slep.h"

#include <map>
#include <set>

namespace gr {
namespace hfstack {
namespace net {

struct x2x_slep_link_config {
    slep_config slep;     // its sap is the transport's (both ends agree)
    uint8_t address = 6;  // SLEP extended address both bridges listen on and open to
    bool compress = true; // DEFLATE per direction, flushed per stanza
    size_t max_stanza_bytes = 16384;
};

// The link settings a bridge configuration names (sap, slep_address, compress,
// max_stanza_bytes); incarnation 0 is taken as 1.
x2x_slep_link_config x2x_slep_link_config_for(const xmpp_bridge_config& c,
                                              uint32_t incarnation);

struct x2x_slep_link_event {
    enum class kind { bound, unbound, delivered, failed, stanza };
    kind what = kind::bound;
    uint32_t node = 0;
    xmpp_stanza_id id = 0;
    xml_element stanza;
    std::string text;
};

struct x2x_slep_link_actions {
    std::vector<dl::sis_primitive> to_sis;
    std::vector<x2x_slep_link_event> events;
    std::vector<std::string> notices;
};

struct x2x_slep_link_counters {
    uint64_t stanzas_sent = 0, stanzas_received = 0;
    uint64_t plain_sent = 0, wire_sent = 0; // stanza bytes before / after DEFLATE
    uint64_t plain_received = 0, wire_received = 0;
    uint64_t streams_opened = 0, streams_failed = 0, bad_streams = 0;
};

class x2x_slep_link
{
public:
    explicit x2x_slep_link(x2x_slep_link_config config);

    void start(double now);
    void on_disconnected(double now);
    void on_sis(const dl::sis_primitive& p, double now);
    void on_timer(double now);
    double next_deadline() const { return d_slep.next_deadline(); }
    x2x_slep_link_actions take_actions();

    // Bound, and the stream to `node` (or a new one) has room for a stanza.
    bool can_send(uint32_t node) const;
    // False (nothing sent) unless can_send(node). The stanzas sent one after the other
    // before the next take_actions() (or on_sis, on_timer) form one burst: DEFLATE
    // flushes once at its end, and SLEP takes the burst's bytes in one write.
    bool send(uint32_t node, xmpp_stanza_id id, const std::string& wire, double now);

    bool bound() const { return d_slep.bound(); }
    const x2x_slep_link_counters& counters() const { return d_counters; }
    const slep& transport() const { return d_slep; }

private:
    struct outgoing {
        x2x_slep_writer writer;
        bool opened = false; // the SLEP stream opens with the first burst's bytes
        slep_stream stream = 0;
        bytes unsent; // the writer's bytes of the burst under way
    };
    void end_bursts(double now); // flush every burst and hand its bytes to SLEP
    void absorb(double now);     // SLEP's actions into ours
    void drain(slep_stream s, double now);
    void check_delivered();
    void fail_stream(uint32_t node);
    void notice(const std::string& kind, const std::string& text);

    x2x_slep_link_config d_cfg;
    slep d_slep;
    std::map<uint32_t, outgoing> d_out;          // by peer node
    std::map<slep_stream, x2x_slep_reader> d_in; // streams peers opened
    x2x_slep_link_actions d_actions;
    x2x_slep_link_counters d_counters;
    std::set<std::string> d_noticed;
    double d_now = 0;
};

} // namespace net
} // namespace hfstack
} // namespace gr

#endif
