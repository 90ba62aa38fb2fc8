/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

/* The STANAG 5066 node engine: composition of the sub-layer pieces. See node_engine.h
 * and docs/node-design.md. */
#include "node_engine.h"

#include "cpdu.h"
#include "segment_size_policy.h"
#include "phy/s4539_modes.h"
#include "spdu.h"

#include <algorithm>
#include <cstring>
#include <deque>
#include <limits>
#include <optional>
#include <random>
#include <stdexcept>
#include <tuple>
#include <unordered_map>

namespace gr {
namespace hfstack {
namespace dl {

namespace {

constexpr double inf = std::numeric_limits<double>::infinity();

// Annex C WARNING reason: a connection-related D_PDU arrived while not connected.
constexpr uint8_t warning_not_connected = 1;
// ACK-ONLY D_PDU with a full selective-ack map, for answer-time estimates.
constexpr size_t typical_answer_bytes = 40;
// Bound on requests waiting for a client-level delivery confirmation per peer.
constexpr size_t max_awaiting_client_confirm = 4096;
// State kept for a node we have nothing pending with is forgotten after this long
// (the next contact starts with a window reset), so nodes heard once cost nothing.
constexpr double forget_idle_peer_s = 3600.0;

bool is_group(uint32_t a) { return (a & group_address_flag) != 0; }

sis_address sis_addr(uint32_t a) { return sis_address{ a, 7 }; }

// C_PDU DATA around an S_PDU.
bytes data_cpdu(const spdu& s)
{
    cpdu c;
    c.type = cpdu_type::data;
    c.spdu = encode(s);
    return encode(c);
}

bool needs_arq(const sis_service_type& s) { return s.tx_mode == sis_tx_mode::arq; }

// S_PDU DATA carrying a client's U_PDU (no TTD: the node's clock is not GMT).
spdu data_spdu(const updu_request& r)
{
    spdu s;
    s.type = spdu_type::data;
    s.priority = r.priority;
    s.source_sap = r.source_sap;
    s.destination_sap = r.destination_sap;
    // Client-level confirmation only means something where an ack comes back (ARQ).
    s.client_delivery_confirm_required =
        needs_arq(r.service) && r.service.delivery_confirmation == sis_delivery_confirmation::client;
    s.updu = r.updu;
    return s;
}

} // namespace

phy::waveform_timing default_waveform_timing(const modem_mode& mode)
{
    if (auto w = phy::s4539_timing(to_string(mode)))
        return *w;
    const unsigned bps = data_rate_bps(mode.data_rate);
    const bool serial_tone = bps <= 2400;
    const char* interleaver = mode.interleaving == interleaving_long    ? "L"
                              : mode.interleaving == interleaving_short ? "S"
                              : serial_tone                             ? "Z"
                                                                        : "US";
    if (auto w = phy::s4539_timing(std::to_string(bps) + interleaver))
        return *w;
    // Table C-5 rates STANAG 4539 lacks (3600, 7200 bps): a linear model with the
    // serial-tone preamble and interleaver figures.
    phy::waveform_timing w;
    w.bit_rate = bps ? double(bps) : 2400.0;
    const double block_s = mode.interleaving == interleaving_long ? 4.8 : 0.6;
    w.preamble_s = block_s;
    w.tail_s = mode.interleaving == interleaving_none ? 0.0 : block_s;
    return w;
}

const char* to_string(phy_event e)
{
    switch (e) {
    case phy_event::tx_started:
        return "tx_started";
    case phy_event::tx_finished:
        return "tx_finished";
    case phy_event::carrier_on:
        return "carrier_on";
    case phy_event::carrier_off:
        return "carrier_off";
    }
    return "unknown";
}

std::vector<std::pair<std::string, double>> counter_list(const node_counters& c)
{
    return {
        { "transmissions", double(c.transmissions) },
        { "bytes_sent", double(c.bytes_sent) },
        { "dpdus_sent", double(c.dpdus_sent) },
        { "air_time_s", c.air_time_s },
        { "bursts_received", double(c.bursts_received) },
        { "bytes_received", double(c.bytes_received) },
        { "dpdus_received", double(c.dpdus_received) },
        { "dpdus_not_for_us", double(c.dpdus_not_for_us) },
        { "header_crc_errors", double(c.header_crc_errors) },
        { "segment_crc_errors", double(c.segment_crc_errors) },
        { "junk_bytes", double(c.junk_bytes) },
        { "arq_segments_sent", double(c.arq_segments_sent) },
        { "arq_retransmissions", double(c.arq_retransmissions) },
        { "response_timeouts", double(c.response_timeouts) },
        { "resets_sent", double(c.resets_sent) },
        { "resets_received", double(c.resets_received) },
        { "warnings_sent", double(c.warnings_sent) },
        { "warnings_received", double(c.warnings_received) },
        { "data_with_link_request", double(c.data_with_link_request) },
        { "dpdus_dropped_unsynced", double(c.dpdus_dropped_unsynced) },
        { "link_setups", double(c.link_setups) },
        { "link_failures", double(c.link_failures) },
        { "links_down", double(c.links_down) },
        { "clients_connected", double(c.clients_connected) },
        { "clients_accepted", double(c.clients_accepted) },
        { "updus_accepted", double(c.updus_accepted) },
        { "updus_rejected", double(c.updus_rejected) },
        { "ttl_expired", double(c.ttl_expired) },
        { "ttl_awaiting_verdict", double(c.ttl_awaiting_verdict) },
        { "updus_discarded", double(c.updus_discarded) },
        { "updus_confirmed", double(c.updus_confirmed) },
        { "updus_delivered", double(c.updus_delivered) },
        { "updus_undeliverable", double(c.updus_undeliverable) },
        { "non_arq_discarded", double(c.non_arq_discarded) },
        { "queued_updus", double(c.queued_updus) },
        { "queued_bytes", double(c.queued_bytes) },
        { "links_up", double(c.links_up) },
    };
}

// ------------------------------------------------------------------------- impl

struct node_engine::impl {
    // A U_PDU (or a control S_PDU of ours) inside an ARQ sender.
    struct in_flight {
        bool from_client = false; // false: DATA DELIVERY CONFIRM/FAIL or hard-link S_PDU
        bool dropping = false;    // TTL expired: the sender is dropping it (DROP flag)
        bool past_ttl = false;    // TTL passed while the peer may already hold it
        updu_request request;     // from_client only
    };
    struct peer_state {
        explicit peer_state(const node_config& cfg, uint32_t addr, size_t segment)
            : address(addr),
              tx(arq_config{ cfg.arq_window, segment, false }),
              tx_exp(arq_config{ cfg.arq_window, segment, true }),
              rx(false),
              rx_exp(true),
              segments([&] {
                  segment_size_policy_config s;
                  s.prior_ber = cfg.segment_prior_ber;
                  return s;
              }())
        {
        }
        uint32_t address;
        arq_sender tx, tx_exp;
        arq_receiver rx, rx_exp;
        std::unordered_map<uint64_t, in_flight> flights, flights_exp;
        std::deque<updu_request> awaiting_client; // acknowledged, waiting for the client's confirm
        // RESET/WIN-RESYNC: windows agreed with the peer since we started.
        bool synced = false;
        bool reset_request_due = false; // our FULL RESET request must be (re)sent
        bool reset_outstanding = false; // sent, waiting for its RESET-ACK
        uint8_t reset_id = 0;           // frame ID of our outstanding request
        // Data with the link request: our windows were reset when the FULL RESET with
        // this frame ID went out (its RESET-ACK must not reset them again), and whether
        // our last burst to the peer carried such data. A WARNING answering that burst
        // means the peer does not take them: never again to this peer.
        int windows_reset_for = -1;
        bool sent_data_with_request = false;
        bool refuses_data_with_request = false;
        // Receiving: the FULL RESET whose burst brought us data; a repeat of it (our
        // RESET-ACK lost) must not reset our windows again, even after a link break,
        // or the data would be taken twice.
        int reset_with_data_id = -1;
        std::vector<uint8_t> reset_acks_owed;
        int last_reset_id_received = -1;
        bool warning_owed = false;
        // Turn taking.
        bool awaiting_response = false;
        double response_deadline = inf;
        unsigned consecutive_timeouts = 0;
        double link_retry_at = -inf;
        unsigned failed_links = 0; // link attempts in a row the peer never answered
        double link_requested_at = inf; // start of our current link request
        double waiting_since = inf;     // has had work without a link since then
        double made_way_at = -inf;      // its idle link was released for a waiting peer
        double last_heard = -inf; // time of the last burst with connection D_PDUs from it
        double last_exchange = -inf; // end of the last burst to or from it
        // Idle link policy (done here rather than in cas_link_manager, which cannot tell
        // whose carrier it hears): time of the last data exchanged on the link, and
        // whether any came since the link was made.
        double last_activity = -inf;
        bool data_seen = false;
        bool made_by_us = true;
        // Rate change.
        std::unique_ptr<rate_change> drc;
        std::unique_ptr<rate_policy> policy;
        uint64_t reported_segments = 0, reported_retx = 0; // rx counters given to the policy
        segment_size_policy segments; // ARQ segment size from the frames the peer lost
    };
    // A D_PDU made ahead of the transmission that will carry it.
    struct pending_dpdu {
        dpdu frame;
        double expires_at = inf; // non-ARQ: end of the reception window
        // Last D_PDU of a non-ARQ U_PDU whose client asked delivery confirmation:
        // confirmed when this goes to the modem (sent, the most a node can know).
        std::optional<updu_request> confirm_when_sent;
    };

    node_config& cfg;
    sap_table saps;
    updu_queue queue;
    client_supervision supervision;
    hard_link_manager hard;
    cas_link_manager cas;
    carrier_sense cs;
    dpdu_deframer deframer;
    non_arq_sender nonarq_tx, nonarq_exp_tx;
    non_arq_receiver nonarq_rx;
    std::map<uint32_t, std::unique_ptr<peer_state>> peers;
    std::set<uint32_t> clients;
    // What `queue` holds, so decisions need no scan: ARQ U_PDUs per destination, and
    // non-ARQ U_PDUs.
    std::map<uint32_t, size_t> arq_queued_by_peer;      // expedited included
    std::map<uint32_t, size_t> expedited_queued_by_peer;
    size_t non_arq_queued = 0;
    std::vector<cas_outgoing> cas_out;             // CAS C_PDUs for the next transmission
    std::deque<pending_dpdu> expedited_pending;    // CAS C_PDUs in type 8 D_PDUs
    std::deque<pending_dpdu> non_arq_pending;      // non-ARQ data, segmented
    // Hard-link S_PDUs waiting for a link to their peer (sent expedited ARQ). Each is
    // useless once the hard-link manager's own time-out for it has run out.
    struct control_spdu {
        spdu pdu;
        double expires_at;
    };
    std::map<uint32_t, std::deque<control_spdu>> control_spdus;
    node_actions actions;
    node_counters counters;

    double now = 0;
    double transmitting_until = -inf; // end of our last burst, as estimated
    double modem_busy_until = -inf;   // set by tx_started until tx_finished comes
    double carrier_ended = -inf;
    double last_rx_end = -inf;
    // A transmission attempt at this time produced nothing: timers at the same instant
    // do not retry (that would spin); any input does.
    double stalled_at = -inf;
    double next_deadline_cache = inf;
    uint8_t next_reset_id = 0;
    bool reset_ids_drawn = false;
    // After an unanswered transmission (ours or a CAS retry) the next one that answers
    // nobody waits a random time, so nodes whose timers run in step do not collide
    // again and again on an idle channel (carrier sense only separates them at the end
    // of a busy period).
    std::mt19937 retry_rng;
    double retry_not_before = -inf;
    uint64_t cas_retries_seen = 0;

    explicit impl(node_config& c)
        : cfg(c),
          saps(sap_table_config{ c.mtu, c.broadcast_only }),
          queue(queue_limits(c)),
          supervision(c.supervision),
          hard(c.hard_link, &saps),
          cas(without_idle_timers(c.cas)),
          cs(c.channel_access),
          nonarq_tx(non_arq_config{ segment_for_non_arq(c.mode), 0, false, 0.0 }),
          nonarq_exp_tx(non_arq_config{ segment_for_non_arq(c.mode), 0, true, 0.0 }),
          nonarq_rx(receiver_config()),
          retry_rng(c.channel_access.seed ^ 0x9e3779b9u)
    {
    }

    static updu_queue_limits queue_limits(const node_config& c)
    {
        updu_queue_limits q = c.queue;
        if (q.flow_off_bytes == 0) {
            const auto w = c.timing ? c.timing(c.mode) : default_waveform_timing(c.mode);
            q.flow_off_bytes =
                std::max<size_t>(64 * 1024, 2 * phy::max_bytes_within(w, c.max_transmission_s));
        }
        if (q.flow_on_bytes == 0)
            q.flow_on_bytes = q.flow_off_bytes / 2;
        return q;
    }

    static cas_config without_idle_timers(cas_config c)
    {
        c.idle_timeout = inf;
        c.first_data_timeout = inf;
        return c;
    }

    void note_activity(uint32_t addr, double t)
    {
        auto it = peers.find(addr);
        if (it == peers.end())
            return;
        it->second->last_activity = std::max(it->second->last_activity, t);
        it->second->data_seen = true;
    }

    // When an up link with nothing to do has been idle long enough: idle_timeout, or
    // first_data_timeout on a link the peer made and has not used yet (Annex B).
    double idle_deadline(const peer_state& p) const
    {
        const double limit =
            (p.data_seen || p.made_by_us) ? cfg.cas.idle_timeout : cfg.cas.first_data_timeout;
        return p.last_activity + limit;
    }

    // When the up link to `p` may be broken as idle; +inf while it has work, an answer
    // is awaited or a carrier is heard. Not before a burst that just ended has had time
    // to be decoded either: it may be the peer, with data.
    double idle_break_time(const peer_state& p) const
    {
        if (cs.carrier() || has_link_work(p.address) || p.awaiting_response)
            return inf;
        return std::max(idle_deadline(p),
                        carrier_ended + cfg.turnaround_s + cfg.response_margin_s);
    }

    void break_idle_links()
    {
        for (uint32_t addr : cas.up_peers())
            if (now >= idle_break_time(peer(addr)))
                cas.release(addr, physical_link_break_reason::no_more_data, now);
    }

    // Wait before the next link attempt to a peer that failed `failures` times in a row.
    double link_backoff(unsigned failures) const
    {
        const unsigned doublings = std::min(failures > 0 ? failures - 1 : 0u, 16u);
        return std::min(cfg.link_retry_max_s, cfg.link_retry_s * double(1u << doublings));
    }

    void hold_off_retry()
    {
        const auto& ca = cfg.channel_access;
        double wait = 0;
        switch (ca.mode) {
        case channel_access_mode::slotted: // our own slot: no draw needed
            wait = ca.base_delay_s + ca.slot_number * ca.slot_length_s;
            break;
        case channel_access_mode::none: // no carrier sense, but two nodes whose requests
                                        // collided must not retry in lockstep either
        case channel_access_mode::random_backoff:
            wait = std::uniform_real_distribution<double>(ca.backoff_min_s, ca.backoff_max_s)(retry_rng);
            break;
        }
        retry_not_before = std::max(retry_not_before, now + wait);
    }

    static non_arq_receiver_config receiver_config()
    {
        non_arq_receiver_config r;
        // Every SAP decides for itself: incomplete C_PDUs come out and are dropped
        // unless their SAP asked for non-ARQ delivery with errors.
        r.deliver_with_errors = true;
        return r;
    }

    phy::waveform_timing timing(const modem_mode& m) const
    {
        return cfg.timing ? cfg.timing(m) : default_waveform_timing(m);
    }
    // ARQ segments start at the largest; with segment_size 0, add_arq adapts them.
    size_t segment_for(const modem_mode&) const
    {
        return cfg.segment_size ? cfg.segment_size : max_segment_size;
    }
    size_t segment_for_non_arq(const modem_mode& m) const
    {
        return cfg.non_arq_segment_size ? cfg.non_arq_segment_size : segment_for(m);
    }
    // Air time an ARQ cycle costs whatever it carries: our preamble and trailer, the
    // peer's acknowledgement burst, two turnarounds.
    double cycle_fixed_s(const phy::waveform_timing& phy) const
    {
        return air_time(phy, 0) + air_time(phy, typical_answer_bytes) + 2 * cfg.turnaround_s;
    }

    // The segment size the link's losses call for (segment_size_policy.h), lowered so
    // that whole D_PDUs fill a transmission of max_s (at 75 bps one 1023-byte segment
    // would leave 10 % of it empty) unless the ARQ window fills first.
    size_t adaptive_segment(const peer_state& p, const phy::waveform_timing& phy, double max_s,
                            size_t overhead) const
    {
        arq_cycle cycle;
        cycle.header_bytes = overhead;
        cycle.window = cfg.arq_window;
        cycle.capacity_bytes = phy::max_bytes_within(phy, max_s);
        cycle.bit_rate = phy.bit_rate;
        cycle.fixed_s = cycle_fixed_s(phy);
        const size_t best = p.segments.segment_size(cycle);
        const size_t capacity = cycle.capacity_bytes;
        if (capacity <= overhead + 1)
            return best;
        const size_t frames = (capacity + best + overhead - 1) / (best + overhead);
        if (frames > cfg.arq_window)
            return best; // the window, not the air time, ends the transmission
        const size_t packed = capacity / frames;
        return std::max<size_t>(1, std::min(best, packed > overhead ? packed - overhead : 1));
    }

    // ------------------------------------------------------------------ peers

    peer_state& peer(uint32_t addr)
    {
        auto it = peers.find(addr);
        if (it != peers.end())
            return *it->second;
        auto p = std::make_unique<peer_state>(cfg, addr, segment_for(cfg.mode));
        rate_change_config rc = cfg.rate_change;
        rc.own_address = cfg.address;
        rc.peer_address = addr;
        rc.initial_mode = cfg.mode;
        // The timer runs from the moment the MANAGEMENT D_PDU is handed over, which may
        // open a burst of up to max_transmission_s, and the answer may follow the peer's
        // own burst of that length.
        rc.ack_timeout += 2 * cfg.max_transmission_s;
        if (!cfg.rate_adaptation) {
            // A fixed-mode node refuses every change ("not equipped") and advises none.
            rc.supported = { cfg.mode };
            rc.follow_advisory = false;
        } else {
            rc.supported.insert(cfg.mode);
        }
        p->drc = std::make_unique<rate_change>(rc);
        if (cfg.rate_adaptation) {
            rate_policy_config pc = cfg.rate_policy;
            p->policy = std::make_unique<rate_policy>(pc);
            p->policy->set_current(cfg.mode, now);
        }
        return *peers.emplace(addr, std::move(p)).first->second;
    }

    modem_mode tx_mode_for(const peer_state* p) const
    {
        return p ? p->drc->tx_mode() : cfg.mode;
    }

    bool link_up(uint32_t addr) const { return cas.state(addr) == cas_link_state::up; }

    // ---------------------------------------------------------------- clients

    void to_client(uint32_t client, sis_primitive p)
    {
        if (client == departed_client)
            return;
        actions.to_clients.push_back(client_message{ client, std::move(p) });
    }

    void ensure_client(uint32_t client)
    {
        if (clients.insert(client).second) {
            supervision.on_connected(client, now);
            counters.clients_accepted += 1;
        }
    }

    void reject(const updu_request& r, sis_unidata_rejected_reason reason)
    {
        sis_primitive p;
        p.type = r.expedited ? sis_type::expedited_unidata_request_rejected
                             : sis_type::unidata_request_rejected;
        p.reason = uint8_t(reason);
        p.destination_sap = r.destination_sap;
        p.destination = sis_addr(r.destination);
        p.payload = r.updu;
        counters.updus_rejected += 1;
        if (reason == sis_unidata_rejected_reason::ttl_expired)
            counters.ttl_expired += 1;
        to_client(r.client, std::move(p));
    }

    void confirm(const updu_request& r)
    {
        sis_primitive p;
        p.type = r.expedited ? sis_type::expedited_unidata_request_confirm
                             : sis_type::unidata_request_confirm;
        p.destination_sap = r.destination_sap;
        p.destination = sis_addr(r.destination);
        p.payload = r.updu;
        counters.updus_confirmed += 1;
        to_client(r.client, std::move(p));
    }

    // The client no longer exists for us: its SAP, queued U_PDUs, hard link.
    void forget_client(uint32_t client)
    {
        saps.unbind(client);
        hard.on_client_gone(client, now);
        // What it queued is still sent (its TTL still applies) and answered to nobody,
        // unless the node is told to discard it: never lost in silence.
        if (cfg.discard_on_client_close) {
            for (auto& r : queue.remove_client(client)) {
                note_dequeued(r);
                counters.updus_discarded += 1;
            }
        } else {
            queue.orphan_client(client);
        }
        // U_PDUs already in ARQ senders still go out; their answers reach nobody.
        for (auto& [addr, p] : peers) {
            for (auto* m : { &p->flights, &p->flights_exp })
                for (auto& [h, f] : *m)
                    if (f.from_client && f.request.client == client)
                        f.request.client = departed_client;
            for (auto& w : p->awaiting_client)
                if (w.client == client)
                    w.client = departed_client;
        }
    }

    void note_dequeued(const updu_request& r)
    {
        if (needs_arq(r.service)) {
            auto it = arq_queued_by_peer.find(r.destination);
            if (it != arq_queued_by_peer.end() && --it->second == 0)
                arq_queued_by_peer.erase(it);
            if (r.expedited) {
                auto e = expedited_queued_by_peer.find(r.destination);
                if (e != expedited_queued_by_peer.end() && --e->second == 0)
                    expedited_queued_by_peer.erase(e);
            }
        } else {
            non_arq_queued -= 1;
        }
    }

    void on_sis(uint32_t client, const sis_primitive& p)
    {
        ensure_client(client);
        switch (p.type) {
        case sis_type::bind_request:
        case sis_type::unbind_request:
        case sis_type::hard_link_establish:
        case sis_type::hard_link_terminate:
        case sis_type::hard_link_accept:
        case sis_type::hard_link_reject:
        case sis_type::keep_alive:
        case sis_type::management_msg_request:
        case sis_type::unidata_request:
        case sis_type::expedited_unidata_request:
            break;
        default:
            supervision.on_invalid(client,
                                   std::string(to_string(p.type)) +
                                       " is a node-to-client primitive",
                                   now);
            return;
        }
        supervision.on_primitive(client, p, now);
        const sap_binding* own = saps.by_client(client);
        switch (p.type) {
        case sis_type::bind_request: {
            const int previous_sap = own ? own->sap : -1;
            for (auto& m : saps.bind(client, p)) {
                const bool accepted = m.client == client &&
                                      m.primitive.type == sis_type::bind_accepted;
                // A client moving to another SAP leaves its hard link behind; a refused
                // rebind keeps both.
                if (accepted && previous_sap >= 0 && previous_sap != p.sap)
                    hard.on_client_gone(client, now);
                if (m.primitive.type == sis_type::unbind_indication && m.client != client)
                    forget_client(m.client); // pre-empted by a higher rank
                actions.to_clients.push_back(m);
                if (accepted) {
                    sis_primitive s;
                    s.type = sis_type::subnet_availability;
                    s.subnet_status = sis_subnet_status::on;
                    to_client(client, s);
                }
            }
            break;
        }
        case sis_type::unbind_request:
            forget_client(client);
            break;
        case sis_type::hard_link_establish:
            if (!own) {
                supervision.on_invalid(client, "S_HARD_LINK_ESTABLISH before a bind", now);
                return;
            }
            if ((p.remote.address & node_address_mask) == cfg.address ||
                is_group(p.remote.address)) {
                // A hard link needs another node (Annex A.2.2: an individual address).
                sis_primitive r = p;
                r.type = sis_type::hard_link_rejected;
                r.reason = 0;
                to_client(client, std::move(r));
                return;
            }
            hard.on_establish(client, own->sap, p, now);
            break;
        case sis_type::hard_link_terminate:
            hard.on_terminate(client, now);
            break;
        case sis_type::hard_link_accept:
        case sis_type::hard_link_reject:
            hard.on_client_answer(client, p, now);
            break;
        case sis_type::unidata_request:
        case sis_type::expedited_unidata_request:
            on_unidata_request(client, own, p);
            break;
        default: // keep-alive: answered by supervision; management: not supported
            break;
        }
    }

    void on_unidata_request(uint32_t client, const sap_binding* own, const sis_primitive& p)
    {
        updu_request r;
        r.client = client;
        r.expedited = p.type == sis_type::expedited_unidata_request;
        r.destination_sap = p.destination_sap;
        r.destination = p.destination.address & (group_address_flag | node_address_mask);
        r.priority = r.expedited ? 15 : p.priority;
        r.service = p.service_type;
        r.updu = p.payload;
        r.deadline = ttl_deadline(p.ttl, now);
        if (!own) {
            supervision.on_invalid(client, "unidata request before a bind", now);
            reject(r, sis_unidata_rejected_reason::unknown);
            return;
        }
        r.source_sap = own->sap;
        if (r.updu.size() > cfg.mtu) {
            reject(r, sis_unidata_rejected_reason::updu_larger_than_mtu);
            return;
        }
        if (r.service.tx_mode == sis_tx_mode::ignore)
            r.service = own->service;
        if (r.service.tx_mode == sis_tx_mode::ignore ||
            unsigned(r.service.tx_mode) > unsigned(sis_tx_mode::non_arq_with_errors)) {
            reject(r, sis_unidata_rejected_reason::tx_mode_not_specified);
            return;
        }
        // ARQ cannot serve a group, and a broadcast-only node has no links: such
        // requests go as non-ARQ (broadcast data exchange).
        if (needs_arq(r.service) && (is_group(r.destination) || cfg.broadcast_only))
            r.service.tx_mode = sis_tx_mode::non_arq;
        // Non-ARQ cannot learn of delivery. A client asking confirmation gets it once
        // the last copy is sent, or (confirm_non_arq_when_sent off) a rejection now;
        // never silence.
        if (!needs_arq(r.service) &&
            r.service.delivery_confirmation != sis_delivery_confirmation::none &&
            !cfg.confirm_non_arq_when_sent) {
            reject(r, sis_unidata_rejected_reason::tx_mode_not_specified);
            return;
        }
        if (r.destination == cfg.address) {
            deliver_local(r);
            return;
        }
        const auto id = queue.push(r, now);
        if (!id) {
            reject(r, r.deadline <= now ? sis_unidata_rejected_reason::ttl_expired
                                        : sis_unidata_rejected_reason::unknown);
            return;
        }
        counters.updus_accepted += 1;
        if (needs_arq(r.service)) {
            arq_queued_by_peer[r.destination] += 1;
            if (r.expedited)
                expedited_queued_by_peer[r.destination] += 1;
        } else {
            non_arq_queued += 1;
        }
    }

    // A U_PDU addressed to this node itself: handed over at once.
    void deliver_local(const updu_request& r)
    {
        if (!deliver_data(cfg.address, cfg.address, data_spdu(r), r.expedited, r.service.tx_mode,
                          nullptr)) {
            reject(r, sis_unidata_rejected_reason::destination_sap_not_bound);
            return;
        }
        counters.updus_accepted += 1;
        if (r.service.delivery_confirmation != sis_delivery_confirmation::none)
            confirm(r);
    }

    // ---------------------------------------------------------------- receive

    // Hands a received S_PDU DATA to the client bound at its destination SAP. Returns
    // false if no client holds it.
    bool deliver_data(uint32_t source,
                      uint32_t destination,
                      const spdu& s,
                      bool expedited,
                      sis_tx_mode mode,
                      const non_arq_delivery* partial)
    {
        const sap_binding* b = saps.by_sap(s.destination_sap);
        // Reassembly admits C_PDUs far above any MTU; a U_PDU larger than the largest MTU a
        // node may announce comes from a broken or hostile peer (and might not even fit
        // the 16-bit SIS size field).
        if (!b || !hard.may_use(s.destination_sap, source, s.source_sap) ||
            s.updu.size() > broadcast_only_max_mtu) {
            counters.updus_undeliverable += 1;
            return false;
        }
        sis_primitive p;
        p.type = expedited ? sis_type::expedited_unidata_indication
                           : sis_type::unidata_indication;
        p.priority = s.priority;
        p.destination_sap = s.destination_sap;
        p.destination = sis_addr(destination);
        p.service_type.tx_mode = mode;
        p.source_sap = s.source_sap;
        p.source = sis_addr(source);
        p.payload = s.updu;
        if (partial) {
            // Block offsets count C_PDU bytes; the U_PDU starts after C_PCI and S_PCI.
            const size_t skip = cpdu_header_size + spdu_header_size(s);
            auto shift = [&](const std::vector<sis_block_range>& in) {
                std::vector<sis_block_range> out;
                for (auto r : in) {
                    size_t a = r.offset, e = size_t(r.offset) + r.size;
                    a = std::max(a, skip);
                    if (e <= a)
                        continue;
                    out.push_back({ uint16_t(a - skip), uint16_t(e - a) });
                }
                return out;
            };
            p.errored_blocks = shift(partial->errored);
            p.non_received_blocks = shift(partial->non_received);
        }
        counters.updus_delivered += 1;
        to_client(b->client, std::move(p));
        return true;
    }

    // DATA DELIVERY CONFIRM / FAIL back to `addr`, in the regular ARQ class.
    void queue_delivery_answer(uint32_t addr, const spdu& s)
    {
        peer_state& p = peer(addr);
        p.flights.emplace(p.tx.enqueue(data_cpdu(s), true), in_flight{});
    }

    // A complete C_PDU from `source` over ARQ (regular or expedited class).
    void on_arq_cpdu(uint32_t source, const bytes& c, bool expedited)
    {
        const auto cp = decode_cpdu(c);
        if (!cp || cp.value.type != cpdu_type::data)
            return;
        const auto sp = decode_spdu(cp.value.spdu);
        if (!sp)
            return;
        const spdu& s = sp.value;
        note_activity(source, now);
        switch (s.type) {
        case spdu_type::data: {
            const bool ok = deliver_data(source, cfg.address, s, expedited, sis_tx_mode::arq, nullptr);
            if (s.client_delivery_confirm_required) {
                spdu answer;
                answer.type = ok ? spdu_type::data_delivery_confirm : spdu_type::data_delivery_fail;
                answer.reason = ok ? 0 : uint8_t(data_delivery_fail_reason::destination_sap_not_bound);
                answer.source_sap = s.source_sap;
                answer.destination_sap = s.destination_sap;
                answer.updu.assign(s.updu.begin(),
                                   s.updu.begin() + std::min(s.updu.size(), cfg.confirm_prefix_bytes));
                queue_delivery_answer(source, answer);
            }
            break;
        }
        case spdu_type::data_delivery_confirm:
        case spdu_type::data_delivery_fail:
            on_delivery_answer(source, s);
            break;
        default:
            hard.on_spdu(source, s, now);
            break;
        }
    }

    void on_delivery_answer(uint32_t source, const spdu& s)
    {
        peer_state& p = peer(source);
        auto& a = p.awaiting_client;
        for (auto it = a.begin(); it != a.end(); ++it) {
            const updu_request& r = *it;
            if (r.source_sap != s.source_sap || r.destination_sap != s.destination_sap ||
                s.updu.size() > r.updu.size() ||
                !std::equal(s.updu.begin(), s.updu.end(), r.updu.begin()))
                continue;
            if (s.type == spdu_type::data_delivery_confirm)
                confirm(r);
            else
                reject(r, sis_unidata_rejected_reason::destination_sap_not_bound);
            a.erase(it);
            return;
        }
    }

    void on_non_arq_delivery(const non_arq_delivery& d)
    {
        const auto cp = decode_cpdu(d.data);
        if (!cp) {
            counters.non_arq_discarded += !d.complete;
            return;
        }
        const cpdu& c = cp.value;
        if (c.type != cpdu_type::data) {
            // CAS-1 is point to point: link C_PDUs sent to a group are not for us.
            if (d.complete && d.expedited && d.destination == cfg.address) {
                if (c.type == cpdu_type::physical_link_request)
                    rx_burst.link_requested.insert(d.source);
                cas.on_cpdu(d.source, c, now);
                // Part of an exchange with that node: what we send it next (data on a
                // link just accepted) follows at once.
                peer_state& p = peer(d.source);
                p.last_heard = p.last_exchange = now;
            }
            return;
        }
        const auto sp = decode_spdu(c.spdu);
        if (!sp || sp.value.type != spdu_type::data) {
            counters.non_arq_discarded += !d.complete;
            return;
        }
        const spdu& s = sp.value;
        if (!d.complete) {
            const sap_binding* b = saps.by_sap(s.destination_sap);
            if (!b || b->service.tx_mode != sis_tx_mode::non_arq_with_errors) {
                counters.non_arq_discarded += 1;
                return;
            }
            deliver_data(d.source, d.destination, s, d.expedited,
                         sis_tx_mode::non_arq_with_errors, &d);
            return;
        }
        deliver_data(d.source, d.destination, s, d.expedited, sis_tx_mode::non_arq, nullptr);
    }

    bool for_us(uint32_t destination) const
    {
        if (destination == cfg.address)
            return true;
        if (!is_group(destination))
            return false;
        return destination == broadcast_address ||
               std::find(cfg.groups.begin(), cfg.groups.end(), destination) != cfg.groups.end();
    }

    void handle_reset(peer_state& p, const dpdu& d)
    {
        counters.resets_received += d.reset_ack ? 0 : 1;
        if (d.reset_ack) {
            if (p.reset_outstanding && d.reset_frame_id == p.reset_id) {
                if (p.windows_reset_for != int(d.reset_frame_id))
                    reset_windows(p); // else reset as the request went, data numbered since
                p.reset_outstanding = false;
                p.reset_request_due = false;
                p.synced = true;
            }
            return;
        }
        if (d.full_reset) {
            // A repeated request (our RESET-ACK was lost) is only acknowledged again:
            // data exchanged since the first copy must not be reset.
            if (d.reset_frame_id != p.last_reset_id_received || !p.synced) {
                reset_windows(p);
                p.synced = true;
                p.reset_outstanding = false;
                p.reset_request_due = false;
                p.last_reset_id_received = d.reset_frame_id;
            }
            p.reset_acks_owed.push_back(d.reset_frame_id);
            return;
        }
        if (d.reset_rx_win_command) {
            p.rx.reset(d.new_rx_lwe);
            p.reset_acks_owed.push_back(d.reset_frame_id);
            return;
        }
        // RESET-TX-WIN-RQST alone: acknowledged, our sender keeps its window.
        p.reset_acks_owed.push_back(d.reset_frame_id);
    }

    // Both ARQ classes restart at sequence 0 in both directions. C_PDUs in flight are
    // sent again whole (the peer lost them, or it is the peer that restarted).
    // The exchange that followed our last transmission to `p` is over. Segments sent
    // then and still undecided were not acknowledged: they become due again (the ARQ
    // sender only repeats a segment after a verdict, so leaving them undecided would
    // stall the window). `acked` names the classes whose acks did arrive.
    void end_exchange(peer_state& p, bool regular_acked = false, bool expedited_acked = false)
    {
        p.awaiting_response = false;
        p.response_deadline = inf;
        if (!regular_acked)
            p.tx.on_ack_timeout();
        if (!expedited_acked)
            p.tx_exp.on_ack_timeout();
        // A RESET still unacknowledged is asked again.
        if (p.reset_outstanding)
            p.reset_request_due = true;
    }

    void reset_windows(peer_state& p)
    {
        p.tx.reset(0, true);
        p.tx_exp.reset(0, true);
        p.rx.reset(0);
        p.rx_exp.reset(0);
    }

    void start_reset(peer_state& p)
    {
        if (p.reset_outstanding)
            return;
        p.reset_outstanding = true;
        p.reset_request_due = true;
        if (cfg.data_with_link_request && !reset_ids_drawn) {
            // A peer keeps the frame ID of a reset that brought data, to know repeats;
            // a restarted node must not start from the same one (see reset_with_data_id).
            uint64_t x;
            std::memcpy(&x, &now, sizeof x);
            x ^= uint64_t(cfg.address) << 32;
            x = (x ^ (x >> 33)) * 0xff51afd7ed558ccdULL;
            x = (x ^ (x >> 33)) * 0xc4ceb9fe1a85ec53ULL;
            next_reset_id = uint8_t(x ^ (x >> 33));
            reset_ids_drawn = true;
        }
        p.reset_id = next_reset_id++;
    }

    // A burst delivered in pieces (burst_info::burst_continues): what its pieces so far
    // told, answered once its last piece is in.
    struct burst_in_progress {
        std::set<uint32_t> heard; // peers that sent us connection D_PDUs
        std::map<uint32_t, std::pair<bool, bool>> acked; // regular / expedited ack seen
        std::set<uint32_t> snr_reported;
        std::set<uint32_t> link_requested; // peers whose PHYSICAL LINK REQUEST came in it
        std::set<uint32_t> reset_by;       // peers whose FULL RESET came in it
    };
    burst_in_progress rx_burst;
    // While a burst is arriving in pieces, its sender is on the air: no answer before
    // its last piece, or this long after its last piece if the modem never ends it.
    double receiving_until = -inf;
    // When the burst being received, or the last one, began to arrive (its first piece).
    double rx_burst_began = -inf;

    void on_burst(const uint8_t* data, size_t size, const burst_info& info)
    {
        counters.bytes_received += size;
        if (receiving_until == -inf)
            rx_burst_began = now;
        last_rx_end = now;
        std::vector<received_dpdu> frames;
        deframer.push(data, size, frames);
        std::set<uint32_t> heard; // in this piece
        auto& acked = rx_burst.acked;
        auto& snr_reported = rx_burst.snr_reported;
        for (auto& rf : frames) {
            const dpdu& d = rf.frame;
            if (d.source == cfg.address)
                continue; // our own burst heard back
            if (!for_us(d.destination)) {
                counters.dpdus_not_for_us += 1;
                continue;
            }
            counters.dpdus_received += 1;
            if (!rf.segment_ok)
                counters.segment_crc_errors += 1;
            const uint32_t src = d.source;
            if (d.type == dpdu_type::non_arq_data || d.type == dpdu_type::expedited_non_arq_data) {
                nonarq_rx.on_dpdu(d, rf.segment_ok, now);
                // At once: a PHYSICAL LINK REQUEST must make the link before a RESET
                // later in the same burst is judged.
                for (auto& nd : nonarq_rx.take_delivered())
                    on_non_arq_delivery(nd);
                continue;
            }
            if (is_group(d.destination) || is_group(src))
                continue; // connection D_PDUs are point to point
            peer_state& p = peer(src);
            if (p.drc) {
                p.drc->on_dpdu(d, now);
                if (p.policy && !std::isnan(info.snr_db) && snr_reported.insert(src).second) {
                    p.policy->on_snr(info.snr_db, now);
                    p.drc->advise_rx(p.policy->recommended(), now);
                }
            }
            if (d.type == dpdu_type::warning) {
                counters.warnings_received += 1;
                if (d.warning_reason == warning_not_connected && p.sent_data_with_request) {
                    // The data that rode with our link request, refused: the link stands.
                    p.refuses_data_with_request = true;
                    continue;
                }
                if (d.warning_reason == warning_not_connected && link_up(src))
                    cas.release(src, physical_link_break_reason::unknown, now);
                continue;
            }
            if (d.type == dpdu_type::management) {
                heard.insert(src);
                continue;
            }
            if (!link_up(src)) {
                // A RESET may ride with a link request we refused; it needs no warning.
                if (d.type != dpdu_type::reset_win_resync)
                    p.warning_owed = true;
                continue;
            }
            heard.insert(src);
            p.last_heard = now;
            p.last_exchange = std::max(p.last_exchange, now);
            if (d.type == dpdu_type::reset_win_resync) {
                if (d.full_reset && !d.reset_ack)
                    rx_burst.reset_by.insert(src);
                handle_reset(p, d);
                continue;
            }
            if (!p.synced) {
                // We hold no agreed windows with this node (we restarted, or it is new
                // to us): its sequence numbers mean nothing until a FULL RESET.
                start_reset(p);
                continue;
            }
            if (rx_burst.reset_by.count(src)) {
                // Data riding with a FULL RESET (data_with_link_request): numbered in the
                // windows it set up, or, for a repeated reset, in the ones it set up
                // before. Its frame ID is kept (see reset_with_data_id).
                if (is_arq_data(d.type))
                    p.reset_with_data_id = p.last_reset_id_received;
            } else if (rx_burst.link_requested.count(src)) {
                // With a link request whose reset was lost: our windows may be an older
                // link's. Dropped; they follow the reset.
                if (is_arq_data(d.type)) {
                    counters.dpdus_dropped_unsynced += 1;
                    continue;
                }
            } else {
                // Regular traffic after a reset: the peer has our RESET-ACK, so a later
                // FULL RESET with the same frame ID is a new one (the peer restarted).
                p.last_reset_id_received = -1;
                p.reset_with_data_id = -1;
            }
            switch (d.type) {
            case dpdu_type::data_only:
                p.rx.on_data(d, rf.segment_ok);
                break;
            case dpdu_type::data_ack:
                p.rx.on_data(d, rf.segment_ok);
                on_ack(p, ack_of(d), false);
                acked[src].first = true;
                break;
            case dpdu_type::ack_only:
                on_ack(p, ack_of(d), false);
                acked[src].first = true;
                break;
            case dpdu_type::expedited_data_only:
                p.rx_exp.on_data(d, rf.segment_ok);
                break;
            case dpdu_type::expedited_ack_only:
                on_ack(p, ack_of(d), true);
                acked[src].second = true;
                break;
            default:
                break;
            }
        }
        rx_burst.heard.insert(heard.begin(), heard.end());
        if (info.burst_continues)
            receiving_until = now + cfg.max_transmission_s;
        else
            end_received_burst();
        // Complete C_PDUs, at once: a piece's data need not wait for the burst's end.
        for (uint32_t src : heard) {
            peer_state& p = peer(src);
            p.consecutive_timeouts = 0;
            note_activity(src, now);
            for (auto& c : p.rx_exp.take_delivered())
                on_arq_cpdu(src, c, true);
            for (auto& c : p.rx.take_delivered())
                on_arq_cpdu(src, c, false);
        }
        nonarq_rx.poll(now);
        for (auto& d : nonarq_rx.take_delivered())
            on_non_arq_delivery(d);
    }

    // The burst's last piece is in (or the modem never sent it): the exchanges its
    // sender answered are over; acknowledgements it did not carry are timeouts.
    void end_received_burst()
    {
        counters.bursts_received += 1;
        deframer.end_of_burst();
        receiving_until = -inf;
        for (uint32_t src : rx_burst.heard) {
            peer_state& p = peer(src);
            if (p.awaiting_response)
                end_exchange(p, rx_burst.acked[src].first, rx_burst.acked[src].second);
        }
        rx_burst = burst_in_progress();
    }

    static bool is_arq_data(dpdu_type t)
    {
        return t == dpdu_type::data_only || t == dpdu_type::data_ack || t == dpdu_type::expedited_data_only;
    }

    void on_ack(peer_state& p, const arq_ack& a, bool expedited)
    {
        auto& sender = expedited ? p.tx_exp : p.tx;
        auto& flights = expedited ? p.flights_exp : p.flights;
        const auto confirmed = sender.on_ack(a);
        const auto outcome = sender.take_ack_outcome();
        const size_t overhead =
            frame_overhead(expedited ? dpdu_type::expedited_data_only : dpdu_type::data_only, p.address);
        p.segments.on_outcome(outcome.frames, outcome.segment_bytes + outcome.frames * overhead,
                              outcome.lost_frames);
        for (uint64_t h : confirmed) {
            auto it = flights.find(h);
            if (it == flights.end())
                continue;
            if (it->second.from_client) {
                const updu_request& r = it->second.request;
                switch (r.service.delivery_confirmation) {
                case sis_delivery_confirmation::node:
                    confirm(r);
                    break;
                case sis_delivery_confirmation::client:
                    if (p.awaiting_client.size() >= max_awaiting_client_confirm) {
                        reject(p.awaiting_client.front(),
                               sis_unidata_rejected_reason::unknown);
                        p.awaiting_client.pop_front();
                    }
                    p.awaiting_client.push_back(r);
                    break;
                default:
                    break;
                }
            }
            flights.erase(it);
        }
    }

    // ---------------------------------------------------------------- events

    void process_cas_events()
    {
        for (auto& e : cas.take_events()) {
            peer_state& p = peer(e.peer);
            switch (e.type) {
            case cas_event_type::link_up:
                p.failed_links = 0;
                p.made_by_us = e.cause == cas_cause::made_by_us;
                p.last_activity = now;
                p.data_seen = false;
                p.consecutive_timeouts = 0;
                end_exchange(p);
                p.drc->reset(now);
                p.tx.set_segment_size(segment_for(p.drc->tx_mode()));
                p.tx_exp.set_segment_size(segment_for(p.drc->tx_mode()));
                if (!p.synced && has_arq_work(p))
                    start_reset(p);
                break;
            case cas_event_type::link_failed:
                give_up_verdicts(p);
                // Only silence marks a peer as absent: a rejection or a local refusal
                // says nothing about whether it can be reached.
                if (e.cause == cas_cause::no_response)
                    p.failed_links += 1;
                p.link_retry_at = now + link_backoff(p.failed_links);
                end_exchange(p);
                hard.on_link_lost(e.peer, now);
                break;
            case cas_event_type::link_down:
                if (p.last_reset_id_received != p.reset_with_data_id)
                    p.last_reset_id_received = -1;
                end_exchange(p);
                if (e.cause != cas_cause::superseded)
                    hard.on_link_lost(e.peer, now);
                break;
            }
        }
    }

    void process_hard_link()
    {
        for (auto& s : hard.take_spdus())
            control_spdus[s.peer].push_back(
                { std::move(s.pdu), now + std::max({ cfg.hard_link.response_timeout,
                                                     cfg.hard_link.accept_timeout,
                                                     cfg.hard_link.terminate_timeout }) });
        for (auto& m : hard.take_client_messages())
            actions.to_clients.push_back(std::move(m));
    }

    void process_drc_events(peer_state& p)
    {
        if (!p.drc)
            return;
        for (auto& e : p.drc->take_events()) {
            if (e.type == drc_event_type::tx_mode_changed) {
                p.tx.set_segment_size(segment_for(e.mode));
                p.tx_exp.set_segment_size(segment_for(e.mode));
            }
            if (p.policy && (e.type == drc_event_type::failed))
                p.policy->set_current(p.drc->rx_mode(), now);
            if (e.connection_lost && link_up(p.address))
                cas.release(p.address, physical_link_break_reason::unknown, now);
        }
    }

    void expire(double t)
    {
        for (auto& r : queue.expire(t)) {
            note_dequeued(r);
            reject(r, sis_unidata_rejected_reason::ttl_expired);
        }
        for (auto it = control_spdus.begin(); it != control_spdus.end();) {
            auto& q = it->second;
            while (!q.empty() && q.front().expires_at <= t)
                q.pop_front();
            it = q.empty() ? control_spdus.erase(it) : std::next(it);
        }
        for (auto& [addr, p] : peers) {
            for (int exp = 0; exp < 2; ++exp) {
                auto& flights = exp ? p->flights_exp : p->flights;
                auto& sender = exp ? p->tx_exp : p->tx;
                for (auto& [h, f] : flights) {
                    if (!f.from_client || f.dropping || f.request.deadline > t)
                        continue;
                    // Possibly delivered already: reporting it expired would make an
                    // application send it twice. The peer's next ack decides.
                    if (sender.may_be_complete_at_peer(h)) {
                        if (!f.past_ttl)
                            counters.ttl_awaiting_verdict += 1;
                        f.past_ttl = true;
                        continue;
                    }
                    f.dropping = true;
                    sender.drop(h);
                }
                for (uint64_t h : sender.take_dropped()) {
                    auto it = flights.find(h);
                    if (it == flights.end())
                        continue;
                    if (it->second.from_client)
                        reject(it->second.request, sis_unidata_rejected_reason::ttl_expired);
                    flights.erase(it);
                }
            }
            // awaiting_client: delivered to the far node already, so never expired;
            // the far node's DATA DELIVERY CONFIRM / FAIL or a failed link answers.
        }
    }

    // The peer did not answer our link requests: what only it could decide (a U_PDU
    // past its TTL it may hold, a client confirmation it owes) is answered
    // "destination node not responding", never "TTL expired".
    void give_up_verdicts(peer_state& p)
    {
        for (int exp = 0; exp < 2; ++exp) {
            auto& flights = exp ? p.flights_exp : p.flights;
            auto& sender = exp ? p.tx_exp : p.tx;
            for (auto& [h, f] : flights) {
                if (!f.from_client || !f.past_ttl || f.dropping)
                    continue;
                reject(f.request, sis_unidata_rejected_reason::destination_not_responding);
                f.from_client = false;
                f.dropping = true;
                sender.drop(h);
            }
        }
        for (auto& r : p.awaiting_client)
            reject(r, sis_unidata_rejected_reason::destination_not_responding);
        p.awaiting_client.clear();
    }

    void check_response_timeouts()
    {
        for (auto& [addr, p] : peers) {
            if (!p->awaiting_response || now < p->response_deadline)
                continue;
            if (cs.carrier()) // someone is still talking: the answer may be in it
                continue;
            end_exchange(*p);
            p->consecutive_timeouts += 1;
            counters.response_timeouts += 1;
            // One lost answer: send again at once (the called side's longer wait keeps the
            // pair from answering together). Timeouts in a row may be collisions: back off.
            if (p->consecutive_timeouts > 1)
                hold_off_retry();
            if (p->consecutive_timeouts >= cfg.max_response_timeouts && link_up(addr)) {
                // The node stopped answering: give the link up; data stays queued and
                // the link is made again when it answers.
                p->consecutive_timeouts = 0;
                cas.release(addr, physical_link_break_reason::unknown, now);
            }
        }
    }

    // ---------------------------------------------------------------- links

    bool has_arq_work(const peer_state& p) const
    {
        return !p.tx.idle() || !p.tx_exp.idle() || arq_queued_by_peer.count(p.address) ||
               control_spdus.count(p.address);
    }
    bool has_link_work(uint32_t addr) const
    {
        auto it = peers.find(addr);
        const auto& h = hard.active();
        if (h && h->peer == addr)
            return true;
        if (arq_queued_by_peer.count(addr) || control_spdus.count(addr))
            return true;
        if (it == peers.end())
            return false;
        const peer_state& p = *it->second;
        return !p.tx.idle() || !p.tx_exp.idle() || p.rx.ack_due() || p.rx_exp.ack_due() ||
               p.reset_request_due || !p.reset_acks_owed.empty();
    }

    // data_with_link_request: a first contact's request waits for the data still coming.
    double data_hold_until(const peer_state& p) const
    {
        if (!cfg.data_with_link_request || p.synced || p.waiting_since == inf)
            return -inf;
        return p.waiting_since + cfg.link_request_hold_s;
    }

    void manage_links()
    {
        if (cfg.broadcast_only)
            return;
        std::set<uint32_t> wanted;
        for (auto& [addr, n] : arq_queued_by_peer)
            wanted.insert(addr);
        for (auto& [addr, q] : control_spdus)
            wanted.insert(addr);
        for (auto& [addr, p] : peers)
            if (!p->tx.idle() || !p->tx_exp.idle())
                wanted.insert(addr);
        if (hard.active())
            wanted = { hard.active()->peer };
        // Peers that answered their last link request come first; one that did not
        // (absent, out of propagation) is probed beside them, holding no link slot,
        // one at a time, so it never keeps a live peer waiting.
        const auto suspect = [&](uint32_t addr) {
            auto it = peers.find(addr);
            return it != peers.end() && it->second->failed_links > 0;
        };
        // A live peer that could take a slot now (not already requesting, not backing off).
        bool live_wanted = false;
        for (uint32_t addr : wanted) {
            auto it = peers.find(addr);
            live_wanted = live_wanted ||
                          (!suspect(addr) && cas.state(addr) == cas_link_state::idle &&
                           (it == peers.end() || now >= it->second->link_retry_at));
        }
        // Links with nothing left to do make way for a live node that is waiting.
        size_t busy = 0;
        bool probing = false;
        for (auto& [addr, p] : peers) {
            const auto st = cas.state(addr);
            if (st == cas_link_state::idle)
                continue;
            // A request unanswered for a whole response timeout is a probe too.
            if (st == cas_link_state::requesting &&
                (p->failed_links > 0 ||
                 now - p->link_requested_at >= cfg.cas.response_timeout)) {
                cas.mark_probe(addr);
                probing = true;
                continue;
            }
            ++busy;
            // A link the peer made stays until it is idle: only the caller knows whether
            // more is coming.
            if (st == cas_link_state::up && p->made_by_us && !wanted.count(addr) &&
                !has_link_work(addr) && live_wanted && !p->awaiting_response) {
                cas.release(addr, physical_link_break_reason::no_more_data, now);
                p->made_way_at = now;
            }
        }
        // Live peers in the order they began waiting: a link released to make way for
        // one peer is not taken back by the peer that just released it.
        for (auto& [addr, p] : peers)
            if (!wanted.count(addr) || cas.state(addr) == cas_link_state::up)
                p->waiting_since = inf;
        for (uint32_t addr : wanted)
            if (addr != cfg.address && !is_group(addr) && cas.state(addr) != cas_link_state::up)
                peer(addr).waiting_since = std::min(peer(addr).waiting_since, now);
        std::vector<uint32_t> order(wanted.begin(), wanted.end());
        // Sort key: suspects last, then longest waiting; of peers waiting since the same
        // moment, one that made way then comes after those it made way for.
        const auto key = [&](uint32_t addr) {
            auto it = peers.find(addr);
            if (it == peers.end())
                return std::make_tuple(false, now, false);
            const peer_state& p = *it->second;
            return std::make_tuple(p.failed_links > 0, p.waiting_since,
                                   p.made_way_at >= p.waiting_since);
        };
        std::stable_sort(order.begin(), order.end(),
                         [&](uint32_t x, uint32_t y) { return key(x) < key(y); });
        for (uint32_t addr : order) {
            if (addr == cfg.address || is_group(addr) || cas.state(addr) != cas_link_state::idle)
                continue;
            peer_state& p = peer(addr);
            if (now < p.link_retry_at || now < data_hold_until(p))
                continue;
            const bool probe = p.failed_links > 0;
            if (probe) {
                if (probing)
                    continue;
                probing = true;
            } else {
                if (busy >= std::max(1u, cfg.cas.max_nonexclusive_links))
                    continue;
                ++busy;
            }
            cas.request_link(addr, false, now, probe);
            p.link_requested_at = now;
            // Ask for the window reset in the same burst as the link request when the
            // windows were never agreed: saves a round trip on first contact.
            if (!p.synced)
                start_reset(p);
        }
    }

    // ---------------------------------------------------------------- transmit

    bool wants_to_transmit() const
    {
        if (!cas_out.empty() || !expedited_pending.empty() || !non_arq_pending.empty())
            return true;
        if (non_arq_queued > 0)
            return true; // non-ARQ U_PDUs go without a link
        for (auto& [addr, p] : peers) {
            if (p->warning_owed || !p->reset_acks_owed.empty())
                return true;
            if (!link_up(addr))
                continue;
            if (p->reset_request_due)
                return true;
            if (p->drc->management_pending())
                return true; // management messages go first in the next transmission
            if (!p->synced)
                continue;
            if (p->awaiting_response)
                continue;
            if (p->rx.ack_due() || p->rx_exp.ack_due())
                return true;
            if (p->tx.has_pending_transmission() || p->tx_exp.has_pending_transmission())
                return true;
            if (control_spdus.count(addr) || arq_queued_by_peer.count(addr))
                return true;
        }
        return false;
    }

    // Earliest time the half-duplex rules let us key up (ignoring carrier sense).
    double turn_gate() const
    {
        double t = std::max(busy_until(), last_rx_end) + cfg.turnaround_s;
        if (busy_until() == -inf && last_rx_end == -inf)
            t = -inf;
        return std::max(t, receiving_until);
    }

    // True when our next transmission continues an exchange the last burst belonged to:
    // it then goes right after the turnaround, without carrier-sense back-off.
    bool any_response_owed() const
    {
        for (auto& [addr, p] : peers) {
            if (p->rx.ack_due() || p->rx_exp.ack_due() || !p->reset_acks_owed.empty() ||
                p->warning_owed)
                return true;
            if (p->last_heard >= rx_burst_began && link_up(addr) && has_link_work(addr))
                return true;
            // The first repeat after a lost answer continues the exchange; it does not
            // contend for the channel as a new one would (check_response_timeouts).
            if (p->consecutive_timeouts == 1 && !p->awaiting_response && link_up(addr) &&
                has_link_work(addr))
                return true;
        }
        // Answers to the peer's CAS C_PDUs go at once; our own requests and breaks are
        // new exchanges.
        for (auto& o : cas_out)
            if (o.pdu.type != cpdu_type::physical_link_request &&
                o.pdu.type != cpdu_type::physical_link_break)
                return true;
        return false;
    }

    void try_transmit()
    {
        if (now == stalled_at || now < busy_until())
            return;
        if (!wants_to_transmit()) {
            cs.cancel();
            return;
        }
        cs.set_response_pending(any_response_owed());
        cs.want_to_transmit(now);
        if (now < turn_gate() || !cs.may_transmit(now))
            return;
        if (now < retry_not_before && !any_response_owed())
            return;
        node_transmission t = build_transmission();
        if (t.burst.empty()) {
            stalled_at = now;
            cs.cancel();
            return;
        }
        cs.on_own_transmission(now, now + t.air_time_s);
        cs.set_response_pending(false);
        transmitting_until = now + t.air_time_s;
        counters.transmissions += 1;
        counters.bytes_sent += t.burst.size();
        counters.dpdus_sent += t.dpdu_sizes.size();
        counters.air_time_s += t.air_time_s;
        actions.transmissions.push_back(std::move(t));
    }

    struct burst_builder {
        impl& e;
        phy::waveform_timing phy;
        double max_s;
        std::vector<dpdu> frames;
        size_t bytes = 0;
        std::set<peer_state*> answer_expected; // peers whose answer this burst asks for
        std::vector<uint32_t> requests_with_data; // peers whose link request carries data

        bool fits(size_t more) const { return air_time(phy, bytes + more) <= max_s; }
        bool add(dpdu d)
        {
            d.source = e.cfg.address;
            const size_t n = encoded_size(d);
            if (!fits(n))
                return false;
            bytes += n;
            frames.push_back(std::move(d));
            return true;
        }
        // Payload bytes that still fit, after `overhead` bytes of headers.
        size_t room(size_t overhead) const
        {
            const size_t most = phy::max_bytes_within(phy, max_s);
            const size_t left = most > bytes ? most - bytes : 0;
            return left > overhead ? left - overhead : 0;
        }
    };

    // D_PDU overhead of a data frame of `type` between us and `peer`.
    size_t frame_overhead(dpdu_type type, uint32_t peer_addr) const
    {
        dpdu d;
        d.type = type;
        d.source = cfg.address;
        d.destination = peer_addr;
        d.segment = bytes(1);
        return encoded_size(d) - 1;
    }

    // Pulls queued ARQ U_PDUs for `p` into its senders while they fit the transmission.
    void pull_arq(peer_state& p, size_t budget, bool expedited)
    {
        auto& sender = expedited ? p.tx_exp : p.tx;
        auto& flights = expedited ? p.flights_exp : p.flights;
        if (expedited) {
            auto cit = control_spdus.find(p.address);
            if (cit != control_spdus.end()) {
                for (auto& c : cit->second)
                    flights.emplace(sender.enqueue(data_cpdu(c.pdu), true), in_flight{});
                control_spdus.erase(cit);
            }
        }
        const uint32_t dest = p.address;
        auto count = [](const std::map<uint32_t, size_t>& m, uint32_t a) {
            auto it = m.find(a);
            return it == m.end() ? size_t(0) : it->second;
        };
        const size_t exp = count(expedited_queued_by_peer, dest);
        if ((expedited ? exp : count(arq_queued_by_peer, dest) - exp) == 0)
            return;
        auto accept = [&](const updu_request& r) {
            return r.expedited == expedited && needs_arq(r.service) && r.destination == dest &&
                   hard.may_use(r.source_sap, r.destination, r.destination_sap);
        };
        while (sender.queued_bytes() < budget) {
            const updu_request* r = queue.peek(accept);
            if (!r)
                break;
            auto req = *queue.pop(r->id);
            note_dequeued(req);
            const spdu s = data_spdu(req);
            const bool in_order = req.service.delivery_order == sis_delivery_order::in_order;
            const uint64_t h = sender.enqueue(data_cpdu(s), in_order);
            in_flight f;
            f.from_client = true;
            f.request = std::move(req);
            flights.emplace(h, std::move(f));
        }
    }

    void add_arq(burst_builder& b, peer_state& p, bool expedited, bool& sent_data)
    {
        auto& sender = expedited ? p.tx_exp : p.tx;
        auto& receiver = expedited ? p.rx_exp : p.rx;
        const dpdu_type data_type = expedited ? dpdu_type::expedited_data_only : dpdu_type::data_only;
        const size_t overhead = frame_overhead(data_type, p.address);
        // The ack goes first: an EXPEDITED ACK-ONLY of its own, or (regular class) inside
        // the first data D_PDU, which then grows by the ack's bytes.
        std::optional<arq_ack> ack;
        if (receiver.ack_due()) {
            arq_ack largest;
            largest.selective_acks.assign(max_selective_acks, 0);
            dpdu worst = make_ack_only(largest, expedited);
            worst.source = cfg.address;
            worst.destination = p.address;
            if (!b.fits(encoded_size(worst)))
                return; // no room even for the ack: it stays due for the next turn
            ack = receiver.ack();
            if (expedited) {
                dpdu a = make_ack_only(*ack, true);
                a.destination = p.address;
                b.add(std::move(a));
                ack.reset();
            }
        }
        const size_t ack_bytes = ack ? 1 + ack->selective_acks.size() : 0;
        // Enough queued to fill the transmission (and the window), but no more, so
        // later high-priority U_PDUs still overtake.
        const size_t room = b.room(ack_bytes);
        std::vector<dpdu> data;
        if (!p.awaiting_response) {
            size_t budget = room;
            if (!cfg.segment_size) { // for the C_PDUs pulled from now on
                sender.set_segment_size(adaptive_segment(p, b.phy, b.max_s, overhead));
                if (!p.segments.confident())
                    budget = std::min(budget, phy::max_bytes_within(b.phy, cfg.segment_probe_s));
            }
            pull_arq(p, budget, expedited);
            data = sender.next_transmission(SIZE_MAX, room, overhead);
        }
        for (auto& d : data)
            d.destination = p.address;
        if (ack) {
            if (!data.empty()) {
                fill_data_ack(data.front(), *ack);
            } else {
                dpdu a = make_ack_only(*ack, false);
                a.destination = p.address;
                b.add(std::move(a)); // fits: checked against the largest ack above
            }
        }
        // The budget above makes every D_PDU fit. Should one not, it was still numbered
        // as sent: the answer this transmission awaits (or its time-out) makes it due.
        sent_data = sent_data || !data.empty();
        for (auto& d : data)
            if (!b.add(std::move(d)))
                break;
    }

    // ARQ data after the FULL RESET riding with our link request (data_with_link_request):
    // numbered in windows reset now, once per reset frame ID, so a repeated request
    // repeats the same numbering the peer may already hold.
    void add_data_with_link_request(burst_builder& b, peer_state& p)
    {
        if (!cfg.data_with_link_request || p.refuses_data_with_request || !has_arq_work(p))
            return;
        if (p.windows_reset_for != int(p.reset_id)) {
            reset_windows(p);
            p.windows_reset_for = p.reset_id;
        }
        // The regular class only: control S_PDUs (hard links) wait for the link, where
        // their own time-outs apply.
        bool sent_data = false;
        add_arq(b, p, false, sent_data);
        p.sent_data_with_request = sent_data;
        if (sent_data)
            b.requests_with_data.push_back(p.address);
        counters.data_with_link_request += sent_data;
    }

    void add_non_arq(burst_builder& b)
    {
        // Segment queued non-ARQ U_PDUs (any destination, no link needed).
        auto accept = [&](const updu_request& r) {
            return !needs_arq(r.service) &&
                   hard.may_use(r.source_sap, r.destination, r.destination_sap);
        };
        for (;;) {
            if (!non_arq_pending.empty()) {
                auto& pd = non_arq_pending.front();
                non_arq_sender::refresh_window(pd.frame, pd.expires_at, now + air_time(b.phy, b.bytes));
                if (!b.add(pd.frame))
                    return;
                if (pd.confirm_when_sent)
                    confirm(*pd.confirm_when_sent);
                non_arq_pending.pop_front();
                continue;
            }
            if (non_arq_queued == 0)
                return;
            const updu_request* r = queue.peek(accept);
            if (!r)
                return;
            const unsigned repeats =
                std::min(15u, std::max(cfg.non_arq_repeats, unsigned(r->service.min_retransmissions)));
            // Fill the transmission: a C_PDU that does not fit whole continues in our
            // next one (its reception window covers the wait), so no air time is left
            // empty. Start it only if its first segment fits.
            const size_t seg = nonarq_tx.config().segment_size;
            const size_t cpdu_bytes = r->updu.size() + 4;
            const size_t overhead = frame_overhead(dpdu_type::non_arq_data, r->destination);
            const size_t total = (cpdu_bytes + ((cpdu_bytes + seg - 1) / seg) * overhead) *
                                 (repeats + 1);
            if (!b.frames.empty() && !b.fits(std::min(cpdu_bytes, seg) + overhead))
                return;
            auto req = *queue.pop(r->id);
            note_dequeued(req);
            const bytes c = data_cpdu(data_spdu(req));
            // Time for every copy to reach the receiver, even when the C_PDU continues
            // in our next transmission (after a turnaround and a carrier-sense back-off).
            const double window = air_time(b.phy, total) + 2 * cfg.max_transmission_s +
                                  cfg.turnaround_s + cfg.channel_access.backoff_max_s +
                                  cfg.non_arq_window_margin_s;
            auto& sender = req.expedited ? nonarq_exp_tx : nonarq_tx;
            auto batch = sender.make_dpdus(c, req.destination,
                                           req.service.delivery_order == sis_delivery_order::in_order,
                                           window, now, int(repeats));
            for (auto& d : batch.dpdus)
                non_arq_pending.push_back({ std::move(d), batch.expires_at, std::nullopt });
            if (req.service.delivery_confirmation != sis_delivery_confirmation::none &&
                !non_arq_pending.empty())
                non_arq_pending.back().confirm_when_sent = std::move(req);
        }
    }

    node_transmission build_transmission()
    {
        // The link peer (if any) decides the mode of the whole burst.
        const auto active = cas.active_peer();
        peer_state* link_peer = active ? &peer(*active) : nullptr;
        std::optional<drc_transmission> management;
        if (link_peer)
            management = link_peer->drc->take_management(now);
        const modem_mode mode = management ? management->mode : tx_mode_for(link_peer);
        burst_builder b{ *this, timing(mode), std::min(cfg.max_transmission_s, max_eot_seconds), {}, 0 };

        if (management) {
            for (auto& d : management->dpdus)
                b.add(std::move(d));
        }
        // CAS C_PDUs (expedited non-ARQ, Annex B.3.2 (2)).
        for (auto& o : cas_out) {
            auto batch = nonarq_exp_tx.make_dpdus(encode(o.pdu), o.peer, false,
                                                  cfg.max_transmission_s, now, 0);
            for (auto& d : batch.dpdus)
                expedited_pending.push_back({ std::move(d), batch.expires_at, std::nullopt });
        }
        cas_out.clear();
        while (!expedited_pending.empty()) {
            auto& pd = expedited_pending.front();
            non_arq_sender::refresh_window(pd.frame, pd.expires_at, now + air_time(b.phy, b.bytes));
            if (!b.add(pd.frame))
                break;
            expedited_pending.pop_front();
        }
        // Warnings, resets, then ARQ per linked peer.
        for (auto& [addr, pp] : peers) {
            peer_state& p = *pp;
            if (p.warning_owed) {
                dpdu w;
                w.type = dpdu_type::warning;
                w.destination = addr;
                w.received_frame_type = uint8_t(dpdu_type::data_only);
                w.warning_reason = warning_not_connected;
                if (b.add(w)) {
                    counters.warnings_sent += 1;
                    p.warning_owed = false;
                }
            }
            // What does not fit stays owed for the next transmission.
            auto& acks = p.reset_acks_owed;
            size_t sent = 0;
            for (; sent < acks.size(); ++sent) {
                dpdu r;
                r.type = dpdu_type::reset_win_resync;
                r.destination = addr;
                r.reset_ack = true;
                r.reset_frame_id = acks[sent];
                if (!b.add(r))
                    break;
            }
            acks.erase(acks.begin(), acks.begin() + sent);
            const auto st = cas.state(addr);
            p.sent_data_with_request = false;
            if (p.reset_request_due && (st == cas_link_state::up || st == cas_link_state::requesting)) {
                dpdu r;
                r.type = dpdu_type::reset_win_resync;
                r.destination = addr;
                r.full_reset = true;
                r.reset_frame_id = p.reset_id;
                if (b.add(r)) {
                    p.reset_request_due = false;
                    counters.resets_sent += 1;
                    b.answer_expected.insert(&p);
                    if (st == cas_link_state::requesting)
                        add_data_with_link_request(b, p);
                }
            }
        }
        for (uint32_t addr : cas.up_peers()) {
            peer_state& p = peer(addr);
            if (!p.synced)
                continue;
            const size_t before = b.frames.size();
            bool sent_data = false;
            add_arq(b, p, true, sent_data);
            add_arq(b, p, false, sent_data);
            if (b.frames.size() > before) {
                if (auto eow = p.drc->take_eow(now)) {
                    for (size_t i = before; i < b.frames.size(); ++i)
                        if (b.frames[i].type != dpdu_type::management) {
                            b.frames[i].eow = eow->first;
                            b.frames[i].eow_content = eow->second;
                            break;
                        }
                }
            }
            if (sent_data)
                b.answer_expected.insert(&p);
        }
        add_non_arq(b);

        node_transmission t;
        t.mode = mode;
        t.start = now;
        if (b.frames.empty())
            return t;
        stamp_eot(b.frames, b.phy);
        t.burst.reserve(b.bytes);
        for (auto& d : b.frames) {
            const size_t before = t.burst.size();
            encode_into(d, t.burst);
            t.dpdu_sizes.push_back(t.burst.size() - before);
        }
        t.air_time_s = air_time(b.phy, t.burst.size());
        std::set<uint32_t> addressed, connection;
        for (auto& d : b.frames) {
            if (is_group(d.destination))
                continue;
            addressed.insert(d.destination);
            if (d.type != dpdu_type::non_arq_data && d.type != dpdu_type::expedited_non_arq_data)
                connection.insert(d.destination);
        }
        for (uint32_t a : addressed) {
            auto it = peers.find(a);
            if (it != peers.end())
                it->second->last_exchange = now + t.air_time_s;
        }
        for (uint32_t a : connection)
            note_activity(a, now + t.air_time_s); // the link is busy until the end
        // Answers are awaited from the end of this burst.
        for (peer_state* p : b.answer_expected) {
            p->awaiting_response = true;
            p->response_deadline = now + t.air_time_s + answer_wait(*p, b.phy);
        }
        for (uint32_t a : b.requests_with_data)
            cas.request_on_air_until(a, now + t.air_time_s);
        return t;
    }

    // Our transmitter is busy until the estimated end of the burst, or, when the modem
    // reports it, until tx_finished (a burst never outlasts max_transmission_s).
    double busy_until() const { return std::max(transmitting_until, modem_busy_until); }

    // Awaited answers are not due before until(p).
    void hold_answers(const std::function<double(const peer_state&)>& until)
    {
        for (auto& [addr, p] : peers)
            if (p->awaiting_response)
                p->response_deadline = std::max(p->response_deadline, until(*p));
    }


    double answer_wait(const peer_state& p, const phy::waveform_timing& phy) const
    {
        double w = 2 * cfg.turnaround_s + air_time(phy, typical_answer_bytes) + cfg.response_margin_s;
        // The called side waits longer, so after a lost burst the caller speaks first.
        if (!p.made_by_us)
            w += cfg.response_margin_s;
        return w;
    }

    // ---------------------------------------------------------------- driver

    void forget_idle_peers()
    {
        for (auto it = peers.begin(); it != peers.end();) {
            const peer_state& p = *it->second;
            const bool idle = cas.state(p.address) == cas_link_state::idle &&
                              !has_link_work(p.address) && p.flights.empty() &&
                              p.flights_exp.empty() && p.awaiting_client.empty() &&
                              !p.reset_outstanding && !p.warning_owed &&
                              p.drc->state() == drc_state::idle &&
                              now - std::max(p.last_exchange, p.link_retry_at) > forget_idle_peer_s;
            it = idle ? peers.erase(it) : std::next(it);
        }
    }

    void service()
    {
        if (receiving_until != -inf && now >= receiving_until)
            end_received_burst(); // the modem stopped delivering without ending it
        forget_idle_peers();
        expire(now);
        check_response_timeouts();
        supervision.on_timer(now);
        drop_disconnected_clients();
        hard.on_timer(now);
        // A hard link keeps its physical link (Annex A.1.1.2).
        if (const auto& h = hard.active(); h && h->state == hard_link_state::established)
            note_activity(h->peer, now);
        break_idle_links();
        cas.on_timer(now);
        const uint64_t retries = cas.counters().request_retries + cas.counters().break_retries;
        if (retries != cas_retries_seen) {
            cas_retries_seen = retries;
            hold_off_retry();
        }
        nonarq_rx.poll(now);
        for (auto& d : nonarq_rx.take_delivered())
            on_non_arq_delivery(d);
        for (auto& [addr, p] : peers) {
            p->drc->on_timer(now);
            process_drc_events(*p);
            if (p->policy) {
                // The policy advises the mode the peer should send us in, so it learns
                // from what we receive: damaged segments will be sent again.
                const auto& c = p->rx.counters();
                if (c.frames > p->reported_segments) {
                    p->policy->on_arq_stats(c.frames - p->reported_segments,
                                            c.damaged - p->reported_retx, now);
                    p->reported_segments = c.frames;
                    p->reported_retx = c.damaged;
                    p->drc->advise_rx(p->policy->recommended(), now);
                }
            }
        }
        process_hard_link();
        process_cas_events();
        manage_links();
        process_cas_events();
        process_hard_link();
        for (auto& o : cas.take_outgoing())
            cas_out.push_back(std::move(o));
        try_transmit();
        process_cas_events();
        collect_client_actions();
        compute_deadline();
    }

    void collect_client_actions()
    {
        for (auto& f : queue.take_flow_events())
            to_client_flow(f);
        drop_disconnected_clients();
        for (auto& m : hard.take_client_messages())
            actions.to_clients.push_back(std::move(m));
    }

    // Clients supervision gave up on: told (if bound) and forgotten, before the hard-link
    // manager and the transmitter run, so a hard link they held is terminated at once.
    void drop_disconnected_clients()
    {
        auto disconnects = supervision.take_disconnects();
        std::set<uint32_t> unbound_gone;
        for (auto& d : disconnects) {
            if (!saps.by_client(d.client))
                unbound_gone.insert(d.client);
        }
        for (auto& m : supervision.take_messages()) {
            // S_UNBIND_INDICATION only applies to a client holding a SAP.
            if (m.primitive.type == sis_type::unbind_indication && unbound_gone.count(m.client))
                continue;
            actions.to_clients.push_back(std::move(m));
        }
        for (auto& d : disconnects) {
            forget_client(d.client);
            clients.erase(d.client);
            actions.disconnects.push_back(std::move(d));
        }
    }

    void to_client_flow(const flow_event& f)
    {
        sis_primitive p;
        p.type = f.flow_on ? sis_type::data_flow_on : sis_type::data_flow_off;
        to_client(f.client, p);
    }

    void compute_deadline()
    {
        double d = inf;
        d = std::min(d, queue.next_deadline());
        d = std::min(d, supervision.next_deadline());
        d = std::min(d, hard.next_deadline());
        d = std::min(d, cas.next_deadline());
        d = std::min(d, nonarq_rx.next_deadline());
        for (auto& [addr, q] : control_spdus)
            d = std::min(d, q.front().expires_at);
        if (receiving_until != -inf)
            d = std::min(d, receiving_until);
        for (uint32_t addr : cas.up_peers())
            d = std::min(d, idle_break_time(peer(addr)));
        for (auto& [addr, p] : peers) {
            if (p->awaiting_response && !cs.carrier())
                d = std::min(d, p->response_deadline);
            d = std::min(d, p->drc->next_deadline());
            for (auto* m : { &p->flights, &p->flights_exp })
                for (auto& [h, f] : *m)
                    if (f.from_client && !f.dropping && !f.past_ttl)
                        d = std::min(d, f.request.deadline);
            if (p->link_retry_at > now && has_arq_work(*p))
                d = std::min(d, p->link_retry_at);
            if (const double hold = data_hold_until(*p); hold > now && cas.state(p->address) == cas_link_state::idle)
                d = std::min(d, hold);
        }
        if (now != stalled_at && wants_to_transmit()) {
            if (now < busy_until())
                d = std::min(d, busy_until());
            else {
                double gate = turn_gate();
                if (!any_response_owed())
                    gate = std::max(gate, retry_not_before);
                const double cst = cs.transmit_time(now);
                d = std::min(d, std::max(gate, cst));
            }
        }
        next_deadline_cache = d;
    }
};

// ------------------------------------------------------------------------- engine

namespace {
node_config validated(node_config c)
{
    auto fail = [](const std::string& what) { throw std::invalid_argument("node_config." + what); };
    if (c.address > node_address_mask)
        fail("address must be an individual node address (0.0.0.0-15.255.255.255)");
    for (uint32_t g : c.groups)
        if (!is_group(g) || g > broadcast_address)
            fail("groups: " + address_to_string(g) + " is not a group address (16.0.0.0-31.255.255.255)");
    if (c.mtu < 1 || (!c.broadcast_only && c.mtu > default_mtu) || c.mtu > broadcast_only_max_mtu)
        fail("mtu must be 1..2048 (up to 4096 on a broadcast-only node)");
    if (c.arq_window < 1 || c.arq_window > arq_max_window)
        fail("arq_window must be 1..128");
    if (c.segment_size > max_segment_size)
        fail("segment_size must be 0 (by data rate) or 1..1023");
    if (c.non_arq_segment_size > max_segment_size)
        fail("non_arq_segment_size must be 0 (as ARQ) or 1..1023");
    if (c.non_arq_repeats > 15)
        fail("non_arq_repeats must be 0..15");
    if (!(c.max_transmission_s > 0) || c.max_transmission_s > max_eot_seconds)
        fail("max_transmission_s must be in (0, 127.5]");
    if (!(c.segment_probe_s > 0) || !std::isfinite(c.segment_probe_s))
        fail("segment_probe_s must be a positive number of seconds");
    if (!(c.segment_prior_ber >= 0) || !(c.segment_prior_ber < 0.5))
        fail("segment_prior_ber must be in [0, 0.5)");
    if (!(c.turnaround_s >= 0) || !(c.response_margin_s >= 0) || !(c.link_retry_s >= 0) ||
        !(c.non_arq_window_margin_s >= 0))
        fail("turnaround_s, response_margin_s, link_retry_s and non_arq_window_margin_s must be >= 0");
    if (c.max_response_timeouts < 1)
        fail("max_response_timeouts must be at least 1");
    const bool announceable = is_valid_mode(c.mode) && data_rate_bps(c.mode.data_rate) != 0;
    if (!announceable && !phy::s4539_mode_by_name(to_string(c.mode)))
        fail("mode is not a valid data rate / interleaving pair");
    // A data rate change names the new mode by Table C-5/C-6 codes, which have no App C
    // interleaver other than S and L, nor 12800 bps: such a mode cannot be left or
    // returned to, so it is a fixed mode only.
    if (c.rate_adaptation && !announceable)
        fail("mode " + to_string(c.mode) + " cannot be used with rate_adaptation: a data rate change " +
             "announces only STANAG 5066 Table C-6 interleavers (S, L, 4800U) up to 9600 bps; " +
             "set rate_adaptation=false or pick such a mode");
    c.cas.own_address = c.address;
    c.cas.broadcast_only = c.broadcast_only;
    if (c.channel_access.seed == 0)
        c.channel_access.seed = 0x5066u ^ (c.address * 2654435761u);
    return c;
}
} // namespace

node_engine::node_engine(node_config config)
    : d_cfg(validated(std::move(config))), d(std::make_unique<impl>(d_cfg))
{
}

node_engine::~node_engine() = default;

void node_engine::on_client_connected(uint32_t client, double now)
{
    d->now = now;
    d->stalled_at = -inf; // new input: worth another attempt
    d->ensure_client(client);
    d->service();
}

void node_engine::on_client_closed(uint32_t client, double now)
{
    d->now = now;
    d->stalled_at = -inf; // new input: worth another attempt
    if (d->clients.erase(client)) {
        d->forget_client(client);
        d->supervision.on_closed(client);
    }
    d->service();
}

void node_engine::on_sis(uint32_t client, const sis_primitive& p, double now)
{
    d->now = now;
    d->stalled_at = -inf; // new input: worth another attempt
    d->on_sis(client, p);
    d->service();
}

void node_engine::on_client_invalid(uint32_t client, const std::string& why, bool fatal, double now)
{
    d->now = now;
    d->stalled_at = -inf; // new input: worth another attempt
    d->ensure_client(client);
    if (fatal)
        d->supervision.expel(client, sis_unbind_reason::too_many_invalid_primitives, why);
    else
        d->supervision.on_invalid(client, why, now);
    d->service();
}

void node_engine::on_burst(const uint8_t* data, size_t size, const burst_info& info, double now)
{
    d->now = now;
    d->stalled_at = -inf; // new input: worth another attempt
    d->on_burst(data, size, info);
    d->service();
}

void node_engine::on_phy_status(phy_event e, double now)
{
    d->now = now;
    d->stalled_at = -inf; // new input: worth another attempt
    switch (e) {
    case phy_event::tx_started:
        d->modem_busy_until = now + d_cfg.max_transmission_s;
        break;
    case phy_event::tx_finished:
        d->modem_busy_until = -inf;
        d->transmitting_until = now; // the real end, earlier or later than estimated
        // Answers are timed from the real end of our burst when the modem reports it.
        d->hold_answers([&](const impl::peer_state& p) {
            return now + d->answer_wait(p, d->timing(d->tx_mode_for(&p)));
        });
        break;
    case phy_event::carrier_on:
        d->cs.on_carrier(true, now);
        break;
    case phy_event::carrier_off:
        d->cs.on_carrier(false, now);
        d->carrier_ended = now;
        // An answer may have been in what we just heard: give the modem time to
        // deliver it before counting the peer as silent.
        d->hold_answers([&](const impl::peer_state&) {
            return now + d_cfg.turnaround_s + d_cfg.response_margin_s;
        });
        break;
    }
    d->service();
}

void node_engine::on_timer(double now)
{
    d->now = now;
    d->service();
}

node_actions node_engine::take_actions()
{
    node_actions a;
    std::swap(a, d->actions);
    return a;
}

double node_engine::next_deadline() const { return d->next_deadline_cache; }

node_counters node_engine::counters() const
{
    node_counters c = d->counters;
    for (auto& [addr, p] : d->peers) {
        c.arq_segments_sent += p->tx.counters().new_segments + p->tx_exp.counters().new_segments;
        c.arq_retransmissions +=
            p->tx.counters().retransmissions + p->tx_exp.counters().retransmissions;
    }
    c.header_crc_errors = d->deframer.counters().header_crc_errors;
    c.junk_bytes = d->deframer.counters().junk_bytes;
    c.queued_updus = d->queue.size();
    c.queued_bytes = d->queue.total_bytes();
    c.links_up = d->cas.up_peers().size();
    c.link_setups = d->cas.counters().link_setups;
    c.link_failures = d->cas.counters().link_failures;
    c.links_down = d->cas.counters().links_down;
    c.clients_connected = d->clients.size();
    return c;
}

std::vector<sap_binding> node_engine::bindings() const { return d->saps.bindings(); }

std::vector<link_status> node_engine::links() const
{
    std::vector<link_status> out;
    for (auto& [addr, p] : d->peers) {
        link_status l;
        l.peer = addr;
        l.state = d->cas.state(addr);
        l.tx_mode = p->drc ? p->drc->tx_mode() : d_cfg.mode;
        l.rx_mode = p->drc ? p->drc->rx_mode() : d_cfg.mode;
        out.push_back(l);
    }
    return out;
}

cas_link_state node_engine::link_state(uint32_t peer) const { return d->cas.state(peer); }

std::vector<uint32_t> node_engine::bound_clients() const
{
    std::vector<uint32_t> out;
    for (auto& b : d->saps.bindings())
        out.push_back(b.client);
    return out;
}

bool node_engine::transmitting(double now) const { return now < d->busy_until(); }

} // namespace dl
} // namespace hfstack
} // namespace gr
