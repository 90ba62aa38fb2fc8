/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

/* Two XMPP servers federated over HF by the bridge, for the virtual-time simulator
 * (traffic/scenario.h): the measurement of anchors.md section B as the paper made it.
 * On each node the bridge kernel (net/xmpp_bridge.h) and its transport (x2x-slep or
 * x2x-rcop) run unchanged; what stands for the XMPP server and its test client is this
 * host, which hands the bridge what the server would write on the component stream
 * and reads what the bridge hands it back (a loopback TCP hop, taken as instant).
 *
 * When its transport is bound node 0's host sends its user's available presence (with
 * the entity capabilities a client announces) to the other user, as a client logging
 * in makes its server do, and node 1's answers with its own, as the far server answers
 * the probe. Then, ping-pong: node 0's user sends a chat message whose body
 * is a hex dump of seeded random bytes (payload_bytes characters, which DEFLATE
 * shrinks to about half, as the paper's did); node 1's user answers with a body of the
 * same length after typing_delay_s, having sent a <composing/> chat state when it
 * began to type (the bridge's policy decides whether that crosses); node 0 times the
 * round trip and sends the next message gap_s after the answer. One-way: node 0 keeps
 * `queue_depth` messages waiting at its bridge until `messages` are sent; node 1
 * records when each arrives. */
#ifndef HFSTACK_KERNELS_TRAFFIC_XMPP_HOST_H
#define HFSTACK_KERNELS_TRAFFIC_XMPP_HOST_H

#include "net/xmpp_bridge.h"
#include "net/xmpp_rcop_link.h"
#include "net/xmpp_slep_link.h"
#include "sis_application.h"
#include "traffic/scenario.h"

#include <deque>
#include <limits>
#include <memory>
#include <random>
#include <string>
#include <vector>

namespace gr {
namespace hfstack {
namespace traffic {

enum class xmpp_test { ping_pong, one_way };

struct xmpp_host_config {
    net::xmpp_bridge_config bridge; // domains, policy, transport
    bool initiator = false;         // node 0: sends the messages (and times them)
    std::string user, peer_user;    // bare JIDs: ours and the one we chat with
    uint32_t peer_node = 0;
    uint32_t incarnation = 1; // x2x-slep: distinct per host
    xmpp_test test = xmpp_test::ping_pong;
    size_t payload_bytes = 0; // characters of hex in each body
    unsigned messages = 20;
    double gap_s = 0;          // ping-pong: from an answer to the next message
    double typing_delay_s = 0; // ping-pong: from a message to its answer
    bool presence = true;
    size_t queue_depth = 8; // one-way: messages kept waiting at the bridge
    uint64_t seed = 1;
};

struct xmpp_host_report {
    // Initiator, ping-pong: each round trip in order; NaN for one that came back as an
    // error (bounced) or never came back.
    std::vector<double> round_trips;
    // Initiator, one-way: when the first message went to the bridge.
    double first_sent_at = std::numeric_limits<double>::quiet_NaN();
    // Messages received from the peer user: (time, body characters).
    std::vector<std::pair<double, size_t>> received;
    uint64_t presences_received = 0, errors_received = 0;
    net::xmpp_bridge_counters bridge;
    // Stanza bytes as serialized for the link and as carried (after DEFLATE for
    // x2x-slep; x2x-rcop carries them as they are), both directions.
    uint64_t plain_sent = 0, wire_sent = 0, plain_received = 0, wire_received = 0;
};

class xmpp_host : public sis_application
{
public:
    // Throws std::invalid_argument for a bad bridge configuration.
    explicit xmpp_host(xmpp_host_config config);

    void start(double now) override;
    void on_primitive(const dl::sis_primitive& p, double now) override;
    void on_timer(double now) override;
    double next_deadline() const override;
    std::vector<dl::sis_primitive> take_outgoing() override;
    bool done() const override;

    // Its counters filled in from the bridge and the transport.
    xmpp_host_report report() const;

private:
    struct due_answer {
        double at;
        std::string to;
    };
    template <typename Link>
    bool absorb(Link& link, double now);
    template <typename Link>
    bool feed(Link& link, double now);
    void collect(double now);
    void to_server(const net::xml_element& stanza, double now);
    void send_message(const std::string& to, double now);
    void send_presence(double now);
    void begin(double now); // the transport is bound
    bool bound() const;

    xmpp_host_config d_cfg;
    net::xmpp_bridge d_bridge;
    std::unique_ptr<net::x2x_slep_link> d_slep;
    std::unique_ptr<net::x2x_rcop_link> d_rcop;
    std::vector<dl::sis_primitive> d_out;
    xmpp_host_report d_report;
    std::mt19937_64 d_rng;    // the bodies' random bytes
    std::mt19937_64 d_id_rng; // the stanza ids' (apart, so the bodies stay as they were)
    unsigned d_sent = 0;
    bool d_begun = false;
    double d_waiting_since = std::numeric_limits<double>::quiet_NaN(); // ping-pong
    double d_next_message = std::numeric_limits<double>::infinity();
    std::deque<due_answer> d_answers; // responder
};

struct xmpp_run_result {
    xmpp_host_report initiator, responder; // node 0's host, node 1's
    sim::scenario_result scenario;
};

// Node 0's host chats with node 1's (`host` is the template: its domains, users and
// roles are filled in per node: a.example / alice on node 0, b.example / bob on node 1).
// `base` gives mode, channel, seed, duration; its test becomes none.
xmpp_run_result run_xmpp_exchange(sim::scenario_config base, xmpp_host_config host);

} // namespace traffic
} // namespace hfstack
} // namespace gr

#endif
