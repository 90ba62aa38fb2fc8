/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

/* Channel Access Sublayer, CAS-1 linking protocol: STANAG 5066 Edition 3 Annex B.
 *
 * cas_link_manager keeps the physical-link state of one node towards every remote node
 * and runs the make / break protocols of Annex B.3.2. It is sans-IO: every input carries
 * `now` (seconds), the outputs are C_PDUs for the engine to send (always in EXPEDITED
 * NON-ARQ D_PDUs, Annex B.3.2 (2)) and link events, and next_deadline() says when
 * on_timer() must be called next. It never builds D_PDUs; a DATA C_PDU handed to it only
 * counts as data activity on the link.
 *
 * Per remote node the state is one of
 *   idle        no link;
 *   requesting  we sent PHYSICAL LINK REQUEST and wait for ACCEPTED / REJECTED;
 *   up          the link is made (we called, or the peer did and we accepted);
 *   breaking    we sent PHYSICAL LINK BREAK and wait for BREAK CONFIRM.
 *
 * Rules applied (Annex B section and requirement numbers as in Edition 3):
 *  - Make, caller (B.3.2.1 steps 1 and 3): send REQUEST, wait response_timeout
 *    ((3),(4)), resend on expiry up to request_retries more times ((22),(23)), then
 *    declare the link failed ((24)). ACCEPTED makes it ((20)); REJECTED fails it with
 *    the peer's reason ((21)). A caller that made an EXCLUSIVE link breaks its other
 *    nonexclusive links ((19)).
 *  - Make, called (B.3.2.1 step 2, and B.3 (3)-(5)): every received REQUEST is
 *    answered ((9) of B.3.1.2; also 3.2 of B.3 for nodes that never call):
 *      broadcast-only node                         -> REJECTED broadcast-only node (1)
 *      exclusive request, exclusive not supported  -> REJECTED unknown (0)
 *      exclusive request, fewer than two exclusive
 *        links up                                   -> ACCEPTED ((9), B.2 (7))
 *      exclusive request, two exclusive links up   -> REJECTED supporting exclusive (3)
 *      nonexclusive request, an exclusive link up
 *        or being requested by us                   -> REJECTED supporting exclusive (3)
 *                                                      ((4),(6))
 *      nonexclusive request, max_nonexclusive_links
 *        already up                                 -> REJECTED unknown (0) ((7); the
 *        annex has no "too many links" reason and footnote 3 leaves "link busy" to the
 *        Annex C WARNING; 0 is always valid); with yield_link_after_s, ACCEPTED when
 *        a link of ours is that old: it is broken to make room
 *      nonexclusive request, the free slot is held
 *        by our own pending request to another node -> REJECTED higher-priority link
 *                                                      request pending (2)
 *      otherwise                                   -> ACCEPTED, link made ((8),(14))
 *    A REQUEST from a node whose link is already up is ACCEPTED again ((15)) when it
 *    asks for the same link type. An exclusive REQUEST on a nonexclusive link ends ours
 *    (link_down, cause superseded) and is decided as new; for the reverse see below.
 *    A called node that sees no data on a new link within first_data_timeout breaks
 *    it ((16),(17)); we use the break protocol (BREAK, reason no more data) rather than
 *    a silent abort so the caller learns of it.
 *  - Break (B.3.2.2): the initiator sends BREAK, waits break_timeout ((3)), resends up
 *    to break_retries more times ((6)) and then declares the link broken anyway ((7)),
 *    so a lost CONFIRM never wedges the state. A received BREAK always gets a BREAK
 *    CONFIRM (B.3.1.5 (5), B.3.2.2 (4)), also for a link we do not know and for a
 *    reason value Edition 3 leaves unspecified; the link is declared broken at once.
 *  - CAS-1 is point-to-point (B.3 (2)): Annex B allows several nonexclusive links, one
 *    per remote node, up to a configured maximum; this node's default maximum is 1.
 *
 * Choices the annex leaves open (documented, deterministic):
 *  - Request collision (both nodes send REQUEST to each other): with the same link type
 *    both answer ACCEPTED and declare the link made (no tie-break is needed). With
 *    different types the exclusive request wins: its sender answers the nonexclusive
 *    one REJECTED supporting exclusive link (3) (step 2 (6)) and keeps its request; the
 *    other side answers ACCEPTED, declares the exclusive link made (link_up, cause
 *    made_by_peer, exclusive) and abandons its own request. A node that is up with an
 *    exclusive link and receives a nonexclusive REQUEST from the same peer (a stale
 *    retry of a request that lost a collision) answers REJECTED (3) and keeps the link.
 *    Both ends agree on one link and its type whichever copies are lost, provided a
 *    one-way delivery takes less than half of response_timeout / break_timeout (the
 *    timers must cover a round trip anyway, B.3.2.1 (3)); C_PDUs carry no identifier,
 *    so slower stale copies can still confuse the link type until the idle timeout.
 *  - A REQUEST received while we are breaking the link to that node is answered
 *    REJECTED unknown (0): our BREAK may still be on its way and would end any link
 *    made now. The peer asks again once the break has completed.
 *  - An ACCEPTED received with no request pending (a late answer to a request we gave
 *    up or cancelled) is answered with one BREAK (reason unknown), without entering the
 *    breaking state, so the peer does not keep a link we do not have.
 *  - request_link() while breaking the link to that node is remembered and starts once
 *    the break completes; request_link() that local limits forbid fails at once
 *    (link_failed, cause local_refusal, with the reason we would send a peer).
 *  - release() while requesting cancels the request (link_failed, cause cancelled): the
 *    peer may have accepted already, and no C_PDU names the request or BREAK it
 *    answers (B.3.1.3 note), so we send one BREAK and then keep out of linking with
 *    that peer for break_timeout (state breaking, no link_down at its end): REQUESTs
 *    get REJECTED unknown (0), ACCEPTED / CONFIRM / BREAK are answered or ignored as
 *    usual but do not end the wait. Afterwards no copy of the old exchange is still
 *    under way, so none can be taken for part of a later one with another link type.
 *    A request_link() meanwhile starts when the wait ends.
 *  - Idle timeout: a link up with no on_data_activity() for idle_timeout is broken
 *    with reason no more data (B.3.1.5 reason 4).
 */
#ifndef HFSTACK_KERNELS_DL_CAS_H
#define HFSTACK_KERNELS_DL_CAS_H

#include "cpdu.h"

#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <vector>

namespace gr {
namespace hfstack {
namespace dl {

struct cas_config {
    // This node's address (28-bit node address): request_link() to it throws, C_PDUs
    // from it (our own transmissions heard back) are ignored.
    uint32_t own_address = 0;

    // Extra REQUEST transmissions after the first when no answer comes (B.3.2.1 (23)):
    // 1 + 3 = 4 attempts. HF expedited non-ARQ D_PDUs are lost often at low SNR, and
    // four attempts keep a 0.3 loss per C_PDU (per direction) below 1% link failures.
    unsigned request_retries = 3;
    // Time to wait for ACCEPTED / REJECTED after each REQUEST (B.3.2.1 (3),(4)). It must
    // cover our burst, the peer's turnaround and its answering burst, plus receive
    // latency: at 75 bps with the long interleaver one short burst lasts about 10 s
    // (preamble + 4.8 s interleaver flush + data), so a round trip is about 25-30 s.
    double response_timeout = 30.0;
    // BREAK retransmissions after the first and the wait for CONFIRM (B.3.2.2
    // (3),(6),(7)).
    unsigned break_retries = 3;
    double break_timeout = 30.0;
    // A link with no data for this long is broken with reason "no more data".
    // +infinity disables it.
    double idle_timeout = 120.0;
    // Called node: time to wait for the first data on a link it accepted before breaking
    // it (B.3.2.1 (16),(17)). Covers the caller's next turn plus its data burst.
    // +infinity disables it.
    double first_data_timeout = 120.0;
    // Broadcast-only node: every request is rejected with reason broadcast-only node,
    // and request_link() fails locally.
    bool broadcast_only = false;
    // Whether this node makes / accepts exclusive links (hard-link sessions).
    bool exclusive_links_supported = true;
    // Most nonexclusive links up (or being requested by us) at once (B.3 (4), step 2
    // (7)).
    unsigned max_nonexclusive_links = 1;
    // Soft-link release for a waiting node: a nonexclusive REQUEST that the limit above
    // would reject is ACCEPTED instead when one of our nonexclusive links has been up
    // this long; that link is broken (reason higher-priority link request pending,
    // B.3.1.5 reason 3) to make room. Several stations calling one node (a hub) then
    // take turns instead of being rejected for as long as one link lasts. +infinity:
    // rejected as Edition 3 describes (the default of this class; the node sets its
    // own, node_engine.h).
    double yield_link_after_s = std::numeric_limits<double>::infinity();
    // S5066-EP5 large windows: advertise Long Frame Sequence Numbers in every PHYSICAL
    // LINK REQUEST and use them on a link when the peer advertises them too (its
    // REQUEST, or its ACCEPTED of ours, has the bit). Off: Edition 3 C_PDUs bit for bit.
    bool large_windows = false;
};

enum class cas_link_state : uint8_t { idle, requesting, up, breaking };

enum class cas_event_type : uint8_t { link_up, link_failed, link_down };

// Why an event happened.
enum class cas_cause : uint8_t {
    // link_up
    made_by_us = 0, // our REQUEST was ACCEPTED
    made_by_peer,   // we ACCEPTED the peer's REQUEST (including a collision we yielded)
    // link_failed
    rejected,      // peer REJECTED; `reason` is its physical_link_reject_reason
    no_response,   // request retries exhausted
    local_refusal, // request_link() not allowed here; `reason` as a reject reason
    cancelled,     // release() while requesting
    // link_down
    peer_break,  // peer sent BREAK; `reason` is its physical_link_break_reason (raw)
    confirmed,   // our BREAK was confirmed (or the peer's new REQUEST implied it)
    unconfirmed, // break retries exhausted without CONFIRM
    superseded,  // the peer requested an exclusive link while our nonexclusive one was up
};

struct cas_event {
    cas_event_type type = cas_event_type::link_up;
    uint32_t peer = 0;
    cas_cause cause = cas_cause::made_by_us;
    bool exclusive = false; // link type (link_up / link_down) or requested (link_failed)
    uint8_t reason = 0;     // reject or break reason, see cas_cause
};

// A C_PDU (types 1-5) the engine must send to `peer` in an EXPEDITED NON-ARQ D_PDU.
struct cas_outgoing {
    uint32_t peer = 0;
    cpdu pdu;
};

struct cas_counters {
    uint64_t requests_sent = 0;   // every REQUEST transmission, retries included
    uint64_t request_retries = 0; // REQUEST retransmissions on timeout
    uint64_t requests_received = 0;
    uint64_t accepted_sent = 0;
    uint64_t accepted_received = 0;
    uint64_t rejected_sent = 0;
    uint64_t rejected_received = 0;
    uint64_t breaks_sent = 0; // every BREAK transmission, retries included
    uint64_t break_retries = 0;
    uint64_t breaks_received = 0;
    uint64_t confirms_sent = 0;
    uint64_t confirms_received = 0;
    uint64_t link_setups = 0;   // link_up events
    uint64_t link_failures = 0; // link_failed events
    uint64_t links_down = 0;    // link_down events
    uint64_t idle_timeouts = 0; // breaks started by idle / first-data timeout
    uint64_t links_yielded = 0; // links broken to accept a waiting node (see
                                // yield_link_after_s)
    uint64_t ignored = 0;       // C_PDUs that did not fit the state (stale answers)
};

class cas_link_manager
{
public:
    explicit cas_link_manager(const cas_config& cfg = cas_config());

    // The engine has traffic for `peer`: make a link unless one is up or being made.
    // A probe (a request to a peer that has not been answering) does not count against
    // max_nonexclusive_links while it is pending, so it never keeps a link to a live
    // peer from being made; once accepted it is an ordinary link.
    void request_link(uint32_t peer, bool exclusive, double now, bool probe = false);
    // Turns the pending request to `peer` into a probe (see request_link).
    void mark_probe(uint32_t peer);
    // Our REQUEST to `peer` went out in a burst on the air until `until` (a long one,
    // carrying data): its answer is awaited response_timeout from then.
    void request_on_air_until(uint32_t peer, double until);
    // A received CAS C_PDU from `peer`. Types 1-5 run the protocol; a DATA C_PDU (type 0)
    // counts as data activity.
    void on_cpdu(uint32_t peer, const cpdu& c, double now);
    // Break the link to `peer` (up -> breaking), or cancel a pending request. `reason`
    // must be a defined physical_link_break_reason value (0-4).
    void release(uint32_t peer, physical_link_break_reason reason, double now);
    // Requests from `peer` are rejected (higher-priority link request pending) until
    // `until`: a link broken to make way for waiting stations is not made again by its
    // peer before they have had the channel.
    void refuse_requests_until(uint32_t peer, double until);
    void on_timer(double now);
    // Data flowed on the link to `peer`: restarts its idle timer. No effect unless up.
    void on_data_activity(uint32_t peer, double now);

    std::vector<cas_outgoing> take_outgoing();
    std::vector<cas_event> take_events();
    size_t outgoing_size() const { return d_out.size(); }
    size_t events_size() const { return d_events.size(); }

    cas_link_state state(uint32_t peer) const;
    // Whether the link to `peer` is exclusive (meaningful while requesting / up).
    bool exclusive(uint32_t peer) const;
    // Whether the pending request to `peer` is a probe (request_link, mark_probe).
    bool probing(uint32_t peer) const;
    // Whether the link to `peer` is up with S5066-EP5 long FSNs negotiated.
    bool long_fsn(uint32_t peer) const;
    // The peer of the link that has been up longest, if any link is up.
    std::optional<uint32_t> active_peer() const;
    // Every peer whose link is up, in address order.
    std::vector<uint32_t> up_peers() const;
    // Number of remote nodes with state other than idle (bounded: idle entries are
    // freed).
    size_t tracked_peers() const { return d_links.size(); }
    // Earliest time on_timer() has work to do; +infinity if none.
    double next_deadline() const;

    const cas_counters& counters() const { return d_counters; }
    const cas_config& config() const { return d_cfg; }

private:
    struct link {
        cas_link_state st = cas_link_state::idle;
        bool exclusive = false;
        unsigned attempts = 0; // transmissions of the current REQUEST / BREAK
        uint8_t break_reason = 0;
        double deadline = std::numeric_limits<double>::infinity();
        uint64_t made_seq = 0;        // order in which links came up
        double made_at = 0;           // when it came up
        bool pending_request = false; // request_link() while breaking
        bool pending_exclusive = false;
        bool cancelling = false; // breaking after release() of a pending request
        bool probe = false;      // requesting: not counted against the link limit
        bool lfsn = false;       // S5066-EP5 long FSNs on this link (both support)
    };

    static constexpr double inf = std::numeric_limits<double>::infinity();

    void send(uint32_t peer, cpdu_type t, bool exclusive = false, uint8_t reason = 0);
    void
    emit(cas_event_type t, uint32_t peer, cas_cause c, bool exclusive, uint8_t reason);
    // Reject reason if a link of this type to `peer` may not be made now (as caller or
    // called), or nullopt if it may.
    std::optional<uint8_t> refusal(uint32_t peer, bool exclusive) const;
    void start_request(uint32_t peer, link& l, bool exclusive, double now);
    void make_up(uint32_t peer, link& l, bool exclusive, bool by_us, double now);
    void start_break(uint32_t peer, link& l, uint8_t reason, double now);
    // breaking -> idle with link_down(cause); starts a remembered request.
    void finish_break(uint32_t peer, link& l, cas_cause cause, double now);
    void handle_request(uint32_t peer, bool exclusive, bool lfsn, double now);
    // Breaks the longest-made nonexclusive link up for yield_link_after_s, if any, so
    // for_peer's REQUEST can be accepted.
    void yield_oldest_link(uint32_t for_peer, double now);
    void forget_if_idle(uint32_t peer);

    cas_config d_cfg;
    std::map<uint32_t, link> d_links; // only peers not idle (or with a pending request)
    std::map<uint32_t, double> d_refuse_until; // refuse_requests_until
    std::vector<cas_outgoing> d_out;
    std::vector<cas_event> d_events;
    cas_counters d_counters;
    uint64_t d_seq = 0;
};

const char* to_string(cas_link_state s);
const char* to_string(cas_event_type t);
const char* to_string(cas_cause c);

} // namespace dl
} // namespace hfstack
} // namespace gr

#endif
