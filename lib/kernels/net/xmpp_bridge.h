/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

/* The core of the XMPP-over-HF bridge (hfstack-xmpp) for one peer, as a sans-IO kernel:
 * the stanzas our XMPP server hands the components that stand for the peer's domains,
 * and the stanzas the far bridge sends over HF, with everything between them decided
 * here so that the bridge and hfstack-sim run the same code.
 *
 *  - Addresses: a stanza from our server must come from one of local_domains and go to
 *    one of peer_domains; a stanza from the peer the other way round (XEP-0361 section
 *    "Message Validation" asks the receiver to validate to and from against the peer
 *    agreement). Anything else is dropped and counted (rejected_from / rejected_to).
 *  - Namespaces: the component stream's default namespace is jabber:component:accept,
 *    the server-to-server one jabber:server (XEP-0361 has both ends behave as if a
 *    jabber:server stream were open, without sending its header). Top-level stanzas
 *    travel with no xmlns (implied); any descendant declaring the one is rewritten to
 *    the other. Payload namespaces (jabber:client in a forwarded message...) are kept.
 *  - Link policy (XEP-0365 "General Operation" lets a sender drop stanzas of little
 *    value such as chat state notifications and strip XHTML-IM; it forbids whitespace
 *    and XEP-0199 pings over the link): drop_chat_states, strip_xhtml, presence
 *    pass | strip (show/status/priority/MUC kept, caps, avatars and the rest removed) |
 *    throttle (one available presence per from/to pair per presence_interval_s, the
 *    latest kept), refuse_pings (a ping IQ is answered here with service-unavailable).
 *  - Queue: stanzas wait for the transport in order, up to max_queue stanzas and
 *    max_queue_bytes; one the transport reports failed is carried again, whole, after
 *    retry_s; one not delivered within queue_timeout_s, or refused for lack of room,
 *    is bounced to its sender with <remote-server-timeout/> (type wait). Error stanzas
 *    are never bounced (RFC 6120 8.3.1): dropped and counted.
 *  - Our server away: stanzas from the peer wait (max_held, hold_timeout_s) for their
 *    component to be ready again; beyond either they are bounced back over HF. The
 *    queue towards the peer does not depend on the components at all.
 * The transport (x2x_slep_link in xmpp_slep_link.h, x2x_rcop_link in xmpp_rcop_link.h)
 * moves the bytes next_for_peer() gives and reports each id delivered or failed.
 * `now` in seconds is passed in. */
#ifndef HFSTACK_KERNELS_NET_XMPP_BRIDGE_H
#define HFSTACK_KERNELS_NET_XMPP_BRIDGE_H

#include "xmpp_element.h"

#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace gr {
namespace hfstack {
namespace net {

enum class xmpp_presence_policy { pass, strip, throttle };
enum class xmpp_transport { x2x_slep, x2x_rcop };

constexpr const char* xmpp_ns_stanzas = "urn:ietf:params:xml:ns:xmpp-stanzas";

struct xmpp_bridge_config {
    std::set<std::string> local_domains; // our server's domains
    std::set<std::string>
        peer_domains; // the peer's: base, MUC, upload...; a component each
    bool drop_chat_states = true;
    bool strip_xhtml = true;
    xmpp_presence_policy presence = xmpp_presence_policy::pass;
    double presence_interval_s = 300;
    bool refuse_pings = true;
    size_t max_stanza_bytes = 16384; // as serialized for the link
    size_t max_queue = 512;
    size_t max_queue_bytes =
        1048576; // at 9600 bps two 127.5 s transmissions of DEFLATEd text
    double queue_timeout_s = 1800; // HF links can be down for many minutes
    double retry_s = 60;
    size_t max_held = 1024;
    double hold_timeout_s = 3600;
    // For the application that runs the transport (the kernel only carries them).
    xmpp_transport transport = xmpp_transport::x2x_slep;
    uint8_t sap = 6;
    bool compress = true;     // x2x-slep: DEFLATE per direction
    uint8_t slep_address = 6; // x2x-slep: SLEP extended address of the bridge
    uint8_t rcop_connection_id = 0;
    uint16_t rcop_application_id = 0x8365; // x2x-rcop, see xmpp_x2x_rcop.h
    // x2x-rcop: what confirms a stanza. Node delivery confirmation only says the far
    // node has it: with no bridge bound there the stanza would be confirmed and lost.
    // Client delivery confirmation (the default) has the far node confirm once its
    // bridge took it, and reject it otherwise, so the stanza is sent again and bounced
    // when it times out. XEP-0365 0.1 allows either.
    bool rcop_client_confirmation = true;
    // x2x-slep: the same choice for SLEP's stream PDUs. Node confirmation spares the
    // far node's delivery confirmation on the air (35 bytes a chat turn; a 75 bps
    // round trip 24.5 -> 16.9 s) at the same risk: bytes that reach a node whose
    // bridge is not bound are confirmed and lost, until SLEP finds the restart.
    bool slep_client_confirmation = true;
    // x2x-slep, the default: the far SLEP acknowledges what it has (an ACK that rides
    // on the far bridge's next stanza, or its own PDU asked for by the last PDU of each
    // burst), over the far node's ARQ acknowledgement; a stream's OPEN and FIN keep the
    // far node's client delivery confirmation. Nothing counts as delivered before the
    // far bridge's SLEP has it, as with client confirmation, for fewer bytes on the
    // air. Both bridges must have it (slep_confirmation=peer).
    bool slep_peer_acks = true;
};
// Options by name: "local_domains", "peer_domains" (blank- or comma-separated),
// "drop_chat_states", "strip_xhtml", "presence" (pass|strip|throttle),
// "presence_interval_s", "refuse_pings", "max_stanza_bytes", "max_queue",
// "max_queue_bytes", "queue_timeout_s", "retry_s", "max_held", "hold_timeout_s",
// "transport" (x2x-slep|x2x-rcop), "sap", "compress", "slep_address",
// "rcop_connection_id", "rcop_application_id", "rcop_confirmation" (client|node),
// "slep_confirmation" (peer|client|node).
void set_xmpp_option(xmpp_bridge_config& c,
                     const std::string& name,
                     const std::string& value);
void set_xmpp_options(xmpp_bridge_config& c, const std::string& assignments);
std::string get_xmpp_option(const xmpp_bridge_config& c, const std::string& name);
struct xmpp_option {
    std::string name, default_value, help;
};
std::vector<xmpp_option> xmpp_options();

// The domain part of a JID, lower case ("Alice@Example.org/phone" -> "example.org").
std::string jid_domain(const std::string& jid);
// The error reply to `original`: from and to swapped, its id, type='error', an <error
// type=TYPE> holding CONDITION (urn:ietf:params:xml:ns:xmpp-stanzas); the original's
// children with it when with_payload.
xml_element make_bounce(const xml_element& original,
                        const std::string& condition,
                        const std::string& type,
                        bool with_payload);
// Rewrites the namespace `from` to `to` below the top level and drops the top-level
// xmlns when it is either (the stream's default is implied). False when the top level
// declares some other namespace: not a stanza of either stream.
bool rewrite_stanza_namespace(xml_element& stanza,
                              const std::string& from,
                              const std::string& to);

using xmpp_stanza_id = uint64_t;

struct xmpp_outgoing {
    xmpp_stanza_id id = 0;
    std::string wire; // the stanza as the link carries it (jabber:server form)
};

struct xmpp_to_component {
    std::string component; // the peer domain whose component stream carries it
    xml_element stanza;    // in jabber:component:accept form
};

struct xmpp_bridge_actions {
    std::vector<xmpp_to_component> to_component;
    std::vector<std::string> notices; // first occurrence of each kind of trouble
};

struct xmpp_bridge_counters {
    uint64_t from_component = 0, from_peer = 0; // stanzas received either side
    uint64_t sent = 0, resent = 0, delivered = 0, failures = 0;
    uint64_t wire_bytes_sent = 0; // stanza bytes handed to the transport
    uint64_t to_component = 0;
    uint64_t rejected_from = 0, rejected_to = 0, not_stanza = 0, oversize = 0;
    uint64_t chat_states_dropped = 0, chat_states_stripped = 0, xhtml_stripped = 0;
    uint64_t presence_stripped = 0, presence_throttled = 0, pings_refused = 0;
    uint64_t bounced = 0, queue_full = 0, timed_out = 0, errors_dropped = 0;
    uint64_t held = 0, held_bounced = 0;
};

class xmpp_bridge
{
public:
    // Throws std::invalid_argument: no local or peer domain, a domain in both sets,
    // max_queue or max_stanza_bytes 0.
    explicit xmpp_bridge(xmpp_bridge_config config);

    // A stanza our server sent on the component stream of `component` (a peer domain).
    void from_component(const std::string& component, xml_element stanza, double now);
    // Whether the component stream of `component` is up (handshake accepted).
    void set_component_ready(const std::string& component, bool ready, double now);
    // A stanza the far bridge sent (as the splitter read it from the link).
    void from_peer(xml_element stanza, double now);

    // The transport's side: the next stanza to carry (in order), and its fate.
    std::optional<xmpp_outgoing> next_for_peer(double now);
    void delivered(xmpp_stanza_id id, double now);
    void failed(xmpp_stanza_id id, double now);

    void on_timer(double now);
    double next_deadline() const;
    xmpp_bridge_actions take_actions();

    size_t queued() const { return d_queue.size(); } // waiting or in flight
    size_t held() const { return d_held.size(); }
    const xmpp_bridge_counters& counters() const { return d_counters; }
    const xmpp_bridge_config& config() const { return d_cfg; }

private:
    struct queued_stanza {
        xml_element stanza; // jabber:server form, kept for a bounce
        std::string wire;
        std::string throttle_key; // from|to of an available presence under throttle
        double queued_at = 0, not_before = 0;
        bool in_flight = false;
        bool retrying =
            false; // failed, waiting for retry_s: later stanzas wait too (order)
    };
    struct held_stanza {
        std::string component;
        xml_element stanza;
        double held_at;
    };

    bool apply_policy(xml_element& s, double now); // false: consumed here
    void enqueue(xml_element s, double now);
    void bounce_local(const xml_element& server_form,
                      const std::string& condition,
                      const std::string& type,
                      double now);
    void bounce_to_peer(const xml_element& component_form, double now);
    void deliver_local(xml_element component_form, double now);
    void expire(double now);
    void notice(const std::string& kind, const std::string& text);

    xmpp_bridge_config d_cfg;
    std::map<xmpp_stanza_id, queued_stanza> d_queue;
    size_t d_queue_bytes = 0;
    xmpp_stanza_id d_next_id = 1;
    std::map<std::string, double> d_presence_sent; // throttle key: when last sent
    std::set<std::string> d_ready;                 // components up
    std::deque<held_stanza> d_held;
    xmpp_bridge_actions d_actions;
    xmpp_bridge_counters d_counters;
    std::set<std::string> d_noticed;
};

} // namespace net
} // namespace hfstack
} // namespace gr

#endif
