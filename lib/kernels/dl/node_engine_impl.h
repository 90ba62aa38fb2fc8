/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

/* The node engine's state (node_engine::impl), shared by the files that implement it,
 * one concern each: node_engine.cc (construction, peers, the public interface),
 * node_engine_clients.cc (SIS clients), node_engine_reception.cc (bursts in, ARQ and
 * non-ARQ delivery, RESET/WIN-RESYNC), node_engine_links.cc (CAS, hard links, time-outs,
 * idle links), node_engine_transmit.cc (turn taking and building a transmission) and
 * node_engine_service.cc (the service loop and its deadline). Internal to the kernels. */
#ifndef HFSTACK_KERNELS_DL_NODE_ENGINE_IMPL_H
#define HFSTACK_KERNELS_DL_NODE_ENGINE_IMPL_H

#include "node_engine.h"

#include "cpdu.h"
#include "segment_size_policy.h"
#include "spdu.h"
#include "window_resync.h"

#include <unordered_map>
#include <cstdint>
#include <deque>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <set>
#include <vector>

namespace gr {
namespace hfstack {
namespace dl {

struct node_engine::impl {
    static constexpr double inf = std::numeric_limits<double>::infinity();
    // Annex C WARNING reason: a connection-related D_PDU arrived while not connected.
    static constexpr uint8_t warning_not_connected = 1;
    // ACK-ONLY D_PDU with a full selective-ack map, for answer-time estimates.
    static constexpr size_t typical_answer_bytes = 40;
    // Bound on requests waiting for a client-level delivery confirmation per peer.
    static constexpr size_t max_awaiting_client_confirm = 4096;
    // State kept for a node we have nothing pending with is forgotten after this long
    // (the next contact starts with a window reset), so nodes heard once cost nothing.
    static constexpr double forget_idle_peer_s = 3600.0;

    static bool is_group(uint32_t a) { return (a & group_address_flag) != 0; }
    static sis_address sis_addr(uint32_t a) { return sis_address{ a, 7 }; }
    static bool needs_arq(const sis_service_type& s)
    {
        return s.tx_mode == sis_tx_mode::arq;
    }
    // C_PDU DATA around an S_PDU.
    static bytes data_cpdu(const spdu& s);
    // S_PDU DATA carrying a client's U_PDU (no TTD: the node's clock is not GMT).
    static spdu data_spdu(const updu_request& r);

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
              tx(arq_config{ std::min(cfg.arq_window, arq_max_window), segment, false }),
              tx_exp(
                  arq_config{ std::min(cfg.arq_window, arq_max_window), segment, true }),
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
        std::deque<updu_request>
            awaiting_client; // acknowledged, waiting for the client's confirm
        // The peer's DATA DELIVERY CONFIRM / FAIL for a U_PDU whose ARQ acknowledgement
        // has not come yet: when the ack was lost (a fade, an outage) but the data got
        // through, the peer's client answer can overtake our retransmission's ack. Kept
        // until the ack moves the U_PDU to awaiting_client (the peer answers only once).
        std::deque<spdu> early_client_answers;
        window_resync resync; // RESET/WIN-RESYNC with the peer
        bool lfsn = false;    // S5066-EP5 long FSNs, as the last link made agreed
        // Whether our last burst to the peer carried data with the link request. A
        // WARNING answering that burst means the peer does not take them: never again
        // to this peer.
        bool sent_data_with_request = false;
        bool refuses_data_with_request = false;
        bool warning_owed = false;
        // Turn taking.
        bool awaiting_response = false;
        double response_deadline = inf;
        // Our last burst that asked the peer for an answer: its number (as
        // counters.transmissions counts), its end (estimated, then the modem's), and
        // the ARQ senders' last_transmission() before it. A burst from the peer that
        // began before that end cannot answer it (burst_began_while_asking).
        struct {
            uint64_t transmission = 0;
            double until = -inf;
            uint64_t regular_before = 0, expedited_before = 0;
        } asked;
        unsigned consecutive_timeouts = 0;
        double link_retry_at = -inf;
        unsigned failed_links = 0;      // link attempts in a row the peer never answered
        double link_requested_at = inf; // start of our current link request
        // Our link request went in a burst (begun at link_asked_at) that asked no other
        // node for an answer: the peer answers at once, and the channel is its until
        // link_answer_until unless it is heard first (channel_promised).
        double link_asked_at = -inf, link_answer_until = -inf;
        double waiting_since = inf; // has had work without a link since then
        double made_way_at = -inf;  // its idle link was released for a waiting peer
        // Its link with work was broken for a peer that had waited
        // (cas.yield_link_after_s): its calls are refused until our request to the
        // waiting peer is out. It calls again with its BREAK CONFIRM, before that
        // request could go, and would take the slot back every time.
        bool refused_for_waiting = false;
        double link_up_at = -inf; // when the current link came up
        // The burst we await an answer to went out past the fairness bound: the peer
        // contends for the channel before answering, so the channel is not its alone.
        bool answer_contends = false;
        // Its last burst carried data for another node and none for us: it serves
        // another peer (serve_in_turn_s); we wait until it sends us data again.
        bool turned_away = false;
        // When it last turned away from us: it serves its peers in turn, and leaves
        // the gaps between turns (exchange_bound_per_turn).
        double turned_away_at = -inf;
        // It has turned to us on this link (its ARQ data for us, or a burst to us
        // alone after serving others): it serves us in turn, and the exchange after
        // its turn to us is within a turn (exchange_in_turn).
        bool serves_us = false;
        // It has ARQ data for us, as far as we know: it called us or sent us data, and
        // has not since answered us without data. Serving in turn, it gets its turns
        // as a peer we have data for does, or it could only send at contention gaps.
        bool sends_to_us = false;
        // When we last turned to it with its acknowledgement alone (no data of ours
        // for it), and how many such turns in a row went unanswered: past
        // bare_turn_retries, it gets no more turns until we hear from it.
        double bare_turn_at = -inf;
        unsigned bare_turns_unanswered = 0;
        // Air time of the ARQ data in its last burst that sent us data
        // (sender_turn_min_burst_s).
        double last_data_burst_s = 0;
        // Its data bursts in a row that lasted between half and all of
        // channel_access.network_burst_s (network_from_peer_bursts).
        unsigned net_bound_bursts = 0;
        // Serving in turn, the turn time it is owed for the time we had data for it
        // and no link while others were served (serve_in_turn_catch_up_s).
        double turn_credit_s = 0;
        // The ARQ data exchanged with it, both ways, that got through (acknowledged
        // by it, or new and good from it), in seconds at the bit rate they went at:
        // serving in turn, the next turn goes to the peer served least
        // (serve_in_turn_lag_max_s). Air time would count bursts lost in collisions.
        double service_to_s = 0, service_from_s = 0;
        // The length of the turns we gave it (serve_in_turn_service_floor).
        double turn_time_s = 0;
        // Its last burst asked us for a link and also carried ARQ data or a link
        // C_PDU for another node, whose answer is owed at once: we answer it after a
        // back-off, so the two answers do not collide. Cleared when we have answered.
        bool asked_beside_others = false;
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
        uint64_t reported_segments = 0,
                 reported_retx = 0;   // rx counters given to the policy
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
    // segment_from_heard_frames: per source, the losses of the ARQ data D_PDUs heard
    // from it (to any node): its path to us, taken as ours to it until measured.
    std::map<uint32_t, segment_size_policy> heard_frame_losses;
    segment_size_policy heard_from_all; // the same over every source
    std::set<uint32_t> clients;
    std::set<uint32_t> clients_reporting_writes; // see on_client_connected
    // What `queue` holds, so decisions need no scan: ARQ U_PDUs per destination, and
    // non-ARQ U_PDUs.
    std::map<uint32_t, size_t> arq_queued_by_peer; // expedited included
    std::map<uint32_t, size_t> expedited_queued_by_peer;
    size_t non_arq_queued = 0;
    std::vector<cas_outgoing> cas_out;          // CAS C_PDUs for the next transmission
    std::deque<pending_dpdu> expedited_pending; // CAS C_PDUs in type 8 D_PDUs
    std::deque<pending_dpdu> non_arq_pending;   // non-ARQ data, segmented
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
    uint64_t junk_counted = 0; // the deframer's junk bytes up to the last burst's end
    double next_deadline_cache = inf;
    uint8_t next_reset_id = 0;
    bool reset_ids_drawn = false;
    bool journal_restored = false; // restore_journal found peers: reset IDs are drawn
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
          nonarq_tx(non_arq_sender_config(false)),
          nonarq_exp_tx(non_arq_sender_config(true)),
          nonarq_rx(receiver_config()),
          retry_rng(c.channel_access.seed ^ 0x9e3779b9u),
          turnaround_call_rng(c.channel_access.seed ^ 0x85ebca6bu)
    {
        if (c.large_windows)
            deframer.set_long_fsn(
                [this](uint32_t source, uint32_t) { return long_fsn_from(source); });
    }

    static updu_queue_limits queue_limits(const node_config& c);

    static cas_config without_idle_timers(cas_config c);

    void note_activity(uint32_t addr, double t);

    // When an up link with nothing to do has been idle long enough: idle_timeout, or
    // first_data_timeout on a link the peer made and has not used yet (Annex B).
    double idle_deadline(const peer_state& p) const;

    // When the up link to `p` may be broken as idle; +inf while it has work, an answer
    // is awaited or a carrier is heard. Not before a burst that just ended has had time
    // to be decoded either: it may be the peer, with data.
    double idle_break_time(const peer_state& p) const;

    void break_idle_links();

    // Wait before the next link attempt to a peer that failed `failures` times in a row.
    double link_backoff(unsigned failures) const;

    void hold_off_retry();

    static non_arq_receiver_config receiver_config();

    phy::waveform_timing timing(const modem_mode& m) const;
    // ARQ segments start at the largest; with segment_size 0, add_arq adapts them.
    size_t segment_for(const modem_mode&) const;
    size_t segment_for_non_arq(const modem_mode& m) const;
    non_arq_config non_arq_sender_config(bool expedited) const;
    // Air time an ARQ cycle costs whatever it carries: our preamble and trailer, the
    // peer's acknowledgement burst, two turnarounds.
    double cycle_fixed_s(const phy::waveform_timing& phy) const;

    // The segment size the link's losses call for (segment_size_policy.h), lowered so
    // that whole D_PDUs fill a transmission of max_s (at 75 bps one 1023-byte segment
    // would leave 10 % of it empty) unless the ARQ window fills first. `ber`: the bit
    // error rate to size for.
    // U_PDUs queued for the peer (of one class) that no sender has taken yet.
    size_t arq_queued_for(const peer_state& p, bool expedited) const;
    // The bit error rate a link's segments are cut for: its own estimate, or (while
    // that is not yet confident, with segment_from_heard_frames) the one heard from
    // the peer where that is higher.
    double segment_ber(const peer_state& p) const;
    // The confident estimate heard from the peer (else from every station), if any.
    const segment_size_policy* heard_estimate(const peer_state& p) const;
    // Frames lost on the link as measured, or (not yet measured) as heard.
    bool losses_seen(const peer_state& p) const;
    void note_heard_frame(const received_dpdu& rf);
    size_t adaptive_segment(const peer_state& p,
                            const phy::waveform_timing& phy,
                            double max_s,
                            size_t overhead,
                            double ber) const;

    // ------------------------------------------------------------------ peers

    peer_state& peer(uint32_t addr);

    modem_mode tx_mode_for(const peer_state* p) const;

    bool link_up(uint32_t addr) const { return cas.state(addr) == cas_link_state::up; }
    // S5066-EP5: puts the peer's ARQ windows in the FSN form its new link agreed.
    void set_long_fsn(peer_state& p, bool lfsn);
    // Whether D_PDUs from `source` carry long FSNs (the deframer asks).
    bool long_fsn_from(uint32_t source) const;

    // ---------------------------------------------------------------- clients

    void to_client(uint32_t client, sis_primitive p);

    void ensure_client(uint32_t client);

    void reject(const updu_request& r, sis_unidata_rejected_reason reason);

    void confirm(const updu_request& r);

    // The client no longer exists for us: its SAP, queued U_PDUs, hard link.
    void forget_client(uint32_t client);

    void note_dequeued(const updu_request& r);

    void on_sis(uint32_t client, const sis_primitive& p);

    void
    on_unidata_request(uint32_t client, const sap_binding* own, const sis_primitive& p);

    // A U_PDU addressed to this node itself: handed over at once.
    void deliver_local(const updu_request& r);

    // ---------------------------------------------------------------- receive

    // Hands a received S_PDU DATA to the client bound at its destination SAP. Returns
    // false if no client holds it.
    bool deliver_data(uint32_t source,
                      uint32_t destination,
                      const spdu& s,
                      bool expedited,
                      sis_tx_mode mode,
                      const non_arq_delivery* partial);

    // DATA DELIVERY CONFIRM / FAIL back to `addr`, in the regular ARQ class.
    void queue_delivery_answer(uint32_t addr, const spdu& s);

    // A complete C_PDU from `source` over ARQ (regular or expedited class).
    void on_arq_cpdu(uint32_t source, const bytes& c, bool expedited);

    void on_delivery_answer(uint32_t source, const spdu& s);
    void answer_client(const updu_request& r, const spdu& answer);
    // An answer kept in early_client_answers for `r`: given to its client and dropped.
    bool answered_early(peer_state& p, const updu_request& r);

    void on_non_arq_delivery(const non_arq_delivery& d);

    bool for_us(uint32_t destination) const;

    void handle_reset(peer_state& p, const dpdu& d);

    // The exchange that followed our last transmission to `p` is over. Segments sent
    // then and still undecided were not acknowledged: they become due again (the ARQ
    // sender only repeats a segment after a verdict, so leaving them undecided would
    // stall the window). `acked` names the classes whose acks did arrive.
    void
    end_exchange(peer_state& p, bool regular_acked = false, bool expedited_acked = false);

    // Both ARQ classes restart at sequence 0 in both directions. C_PDUs in flight are
    // sent again whole (the peer lost them, or it is the peer that restarted).
    void reset_windows(peer_state& p);
    // The journal (state_dir): records of what the receivers hold, a rewrite of the whole
    // when what was appended since outgrows journal_rewrite_bytes.
    static constexpr size_t journal_rewrite_bytes = 1 << 20;
    bool journaling() const { return !cfg.state_dir.empty(); }
    void journal_state(const peer_state& p);
    void journal_frame(const peer_state& p, const dpdu& d, bool segment_ok);
    void journal_compact();
    size_t restore_journal(const bytes& journal);
    bool journal_rewrite_due = true; // the first actions start the file
    size_t journal_appended = 0;
    void journal_append(const bytes& record);
    // Deliveries handed towards clients and not yet reported written (journal 'D'
    // records without their 'W'), by number: the encoded indications. Those restored
    // from the journal are owed again, once, to the client that binds their SAP.
    std::map<uint64_t, bytes> unsettled;
    size_t unsettled_bytes = 0;
    std::map<uint64_t, uint8_t> owed; // delivery number -> destination SAP
    uint64_t last_delivery = 0;
    // Above this the oldest unsettled delivery is given up (counted): a transport that
    // never reports its writes must not grow the journal without end.
    static constexpr size_t max_unsettled_bytes = 16 << 20;
    // Hands `p` to `client`; with the journal and a client that reports its writes, as
    // a numbered delivery written down first.
    void deliver_journaled(uint32_t client, sis_primitive p);
    void settle_delivery(uint64_t delivery, bool written);
    void deliver_owed(uint32_t client, uint8_t sap);
    // Our transmit windows restarted (a restored journal): the peer's receiver is told
    // by RESET/WIN-RESYNC (RESET-RX-WIN command), without resetting its transmit side.
    void start_tx_resync(peer_state& p);

    void start_reset(peer_state& p);

    // A burst delivered in pieces (burst_info::burst_continues): what its pieces so far
    // told, answered once its last piece is in.
    struct burst_in_progress {
        std::set<uint32_t> heard; // peers that sent us connection D_PDUs
        std::map<uint32_t, std::pair<bool, bool>> acked; // regular / expedited ack seen
        std::set<uint32_t> snr_reported; // peers with a rate policy heard in it
        std::map<uint32_t, burst_frames> data_frames; // its ARQ data D_PDUs by sender
        std::map<uint32_t, size_t> data_bytes;        // and their bytes on the wire
        // The modem's SNR report and mode for the burst (its last piece's): given to the
        // peer we await an answer from when no D_PDU of it names its sender.
        double snr_db = std::numeric_limits<double>::quiet_NaN();
        double snr_db_recent = std::numeric_limits<double>::quiet_NaN(); // its last 20 s
        std::optional<modem_mode> mode;
        std::set<uint32_t> link_requested; // peers whose PHYSICAL LINK REQUEST came in it
        std::set<uint32_t> link_accepted; // peers whose PHYSICAL LINK ACCEPTED came in it
        std::set<uint32_t> reset_by;      // peers whose FULL RESET came in it
        std::set<uint32_t> rx_win_reset_by; // peers whose RESET-RX-WIN command came in it
        std::set<uint32_t> sources;         // senders of its D_PDUs
        std::set<uint32_t> served_others;   // peers that sent another node ARQ data in it
        std::set<uint32_t> sent_us_data;    // peers that sent us ARQ data in it
        std::set<uint32_t> addressed_others; // peers that sent another node D_PDUs in it
    };
    burst_in_progress rx_burst;
    // While a burst is arriving in pieces, its sender is on the air: no answer before
    // its last piece, or this long after its last piece if the modem never ends it.
    double receiving_until = -inf;
    // When the burst being received, or the last one, began to arrive (its first piece).
    double rx_burst_began = -inf;
    // When we last heard a D_PDU from each node (its source address). Two or more
    // heard within network_memory_s: we are on a network (heard_network).
    std::map<uint32_t, double> stations_heard;
    bool heard_network() const;
    // When a peer's data bursts last showed that it keeps a net's rules
    // (network_from_peer_bursts).
    double peer_kept_network_at = -inf;
    // Other stations whose D_PDUs we heard within network_memory_s.
    size_t stations_heard_recently() const;
    // A carrier that came while we were off the air and brought no burst, while no peer
    // of ours was linked or owed us an answer: two other stations' bursts overlapped.
    // (A linked or answering peer's burst lost whole in a fade is heard just so: on a
    // two-node link through a blackout that made the node keep to the network rules.)
    // That is two stations heard as surely as their D_PDUs, and it is often all a pair
    // that links after the first instant's collision hears of the others: the time of
    // the last one, counted like stations_heard.
    double collision_heard_at = -inf;
    // A carrier in the gap we left at a change of turn that brought no burst: stations
    // calling us whose calls met (our linked peers wait for their turns), so callers we
    // have not heard (turn_change_floor_for_unheard_callers). The time of the last.
    double unheard_callers_at = -inf;
    // While a station heard has no link, or callers were heard unread: the gap's first
    // slot is theirs (channel_access.turn_change_backoff_min_s).
    bool callers_waiting_heard() const;
    // The carrier being heard, or the last one: when it began, whether our own burst
    // overlapped it, bursts received before it began; and, after it ended, until when
    // its burst may still be delivered.
    struct carrier_period {
        double began = -inf;
        double ended = -inf;
        bool overlapped_own = false;
        bool peer_may_send = false; // a peer linked or owing us an answer as it began
        bool in_turn_gap = false;   // it began in the gap we left at a change of turn
        uint64_t bursts_before = 0;
        bool judged = true;
    };
    carrier_period carrier_now;
    uint64_t bursts_delivered = 0; // on_burst calls, pieces included
    void carrier_began(double t);
    void carrier_finished(double t);
    // Past the delivery margin: a carrier that brought no burst is a collision heard.
    void judge_carrier();
    // The fairness bound made our owed answer contend: it keeps contending until it has
    // gone out, even if another station's burst starts a new busy period meanwhile.
    bool yielding = false;
    double yielding_since = -inf;
    // We were yielding and a linked peer sent us data again before a peer that waits
    // for contended answers would have: it knows of no other station (the collision
    // that told us of them went unheard while it was on the air itself), and its
    // repeats would keep the channel for the two of us. The link is broken, so that
    // its next call contends like every other station's.
    void break_link_of_peer_that_did_not_wait();
    bool break_at_once = false;
    // call_into_turnaround: whether we would call into the turnaround after the burst
    // just heard (all but the instant and the draw), the instant, and the draw made
    // once per burst end (its own generator: the back-off draws stay as they were).
    bool turnaround_call_wanted() const;
    double turnaround_call_time() const;
    bool turnaround_call_now();
    std::mt19937 turnaround_call_rng;
    // The channel held by one pair: since when only two other stations' bursts have
    // been heard, with no gap a contender could use between them and none of ours.
    double pair_since = -inf;
    double pair_last_end = -inf;
    std::set<uint32_t> pair_sources;
    void note_pair_burst();
    double turnaround_call_drawn_for = -inf;
    bool turnaround_call_chosen = false;
    // The transmission being built won the channel by contention (a back-off or slot
    // wait), not as an answer owed at once.
    bool contended = false;
    // serve_in_turn_s: the peer whose turn it is, and since when.
    uint32_t serving = 0;
    double serving_since = -inf;
    // The turn served is longer by this much: credit it was owed (turn_credit_s).
    double serving_extra_s = 0;
    // Peers waiting for a turn when the turn was chosen (serve_in_turn_round_s).
    size_t round_peers = 1;
    // Turn credit is counted up to here (accrue_turn_credit).
    double turn_credit_counted_at = -inf;
    void accrue_turn_credit(size_t linked_candidates);
    // Peers with ARQ data queued and no link up (ascending addresses).
    std::vector<uint32_t> unlinked_with_data() const;
    void begin_turn(uint32_t addr);
    double turn_length() const;
    // serve_in_turn_from_service: the turn's clock waits for the first burst that
    // serves the peer (bursts asking others for links serve no one), at most one turn
    // length; turn_time_left() is whether the turn still has time.
    bool turn_clock_running = true;
    // Our bursts that served the peer in this turn (serve_in_turn_by_bursts).
    unsigned turn_bursts = 0;
    double turn_begun_at = -inf;
    bool turn_time_left() const;
    // The shortest burst network_round_s sets: shorter, the preamble and turnaround
    // would take a tenth of it or more.
    static constexpr double network_round_min_burst_s = 10.0;
    // The longest burst network_round_s allows; inf where it does not bind (shorter
    // than channel_access.network_burst_s only).
    double round_burst_s() const;
    // The turn length before credit (serve_in_turn_s, serve_in_turn_round_s,
    // network_round_s).
    double base_turn_length() const;
    // Our last burst turned to the peer served with an acknowledgement alone: the
    // channel stays its until then, in case it answers with data (channel_promised).
    double turn_held_until = -inf;
    // turn_held_until holds a turn given by an acknowledgement alone
    // (turns_by_acknowledgement).
    bool ack_turn_held = false;
    // That turn went unanswered (ack_turn_repeated): the next burst gives it again.
    bool ack_turn_due = false;
    // Once such a turn has been held for its answer and nothing was heard, gives it
    // again (ack_turn_repeated).
    void repeat_unanswered_ack_turn();
    bool serves_in_turn() const;
    // Serving in turn, we leave the gap at a change of turn: our answer contends.
    bool leaves_turn_gap() const { return yielding && serves_in_turn(); }
    bool unsynced_caller_turn(uint32_t addr) const;
    // Its last burst served another node alone: its answer is not ours to give.
    bool turned_from_us(const peer_state& p) const;
    // So we wait for it to turn back rather than contend: it turns to every peer it
    // has data for or that has data for it (peer_state::sends_to_us), so also to one
    // that has never sent us data.
    bool waits_for_turn(const peer_state& p) const;
    // We have a link request out and have wanted the channel past the exchange bound
    // and a contention: we sat through a gap left at a change of turn
    // (channel_access.waiting_caller_backoff_max_s).
    bool waited_through_a_gap() const;
    // A station heard within network_memory_s has no link with us: most likely it
    // waits to call (channel_access.turn_change_backoff_min_s).
    bool unlinked_station_heard() const;
    // Serving in turn, the peer whose turn is next among `candidates` (ascending
    // addresses): round robin, or the one served least (serve_in_turn_lag_max_s).
    uint32_t next_in_turn(const std::vector<uint32_t>& candidates);
    // Adds data that reached the peer or came from it (new good segment bytes) to its
    // service, in seconds at the bit rate of `mode` (serve_in_turn_lag_max_s).
    void count_service(double& service_s, size_t bytes, const modem_mode& mode) const;
    // Serving in turn, how much a peer has been served: the direction with data
    // waiting that got least (serve_in_turn_lag_max_s).
    double service_of(const peer_state& p) const;
    // Serving in turn: a peer that has data for us and we none for it gets a turn of
    // its acknowledgement alone (peer_state::sends_to_us, bare_turn_at).
    bool gets_bare_turn(uint32_t addr) const;
    // Links we keep at once: cas.max_nonexclusive_links; with exchange_bound_per_turn
    // only once we have heard the network, else one (a peer never heard beside one
    // live peer is a two-node link with a probe, not a net to serve in turn).
    unsigned link_slots() const;
    // exchange_bound_per_turn: the exchange on the air is a turn of a peer serving in
    // turn (its own young turn, or a served peer's answer to the burst it turned to
    // us with): channel_access.max_exchange_s is left to the turn changes.
    bool exchange_in_turn() const;
    // The one peer whose ARQ data the next burst may carry; 0: every peer's.
    uint32_t peer_to_serve();

    void on_burst(const uint8_t* data, size_t size, const burst_info& info);
    // A burst's SNR reports (whole and recent) from `p` to its rate policy (corrected for
    // the receiving mode, the burst's if the modem says, else the one the peer was told
    // to send in), as covering the burst's span_s seconds.
    void report_snr(peer_state& p,
                    double snr_db,
                    double snr_db_recent,
                    const std::optional<modem_mode>& mode,
                    double span_s,
                    const burst_frames& frames = {});

    // The burst's last piece is in (or the modem never sent it): the exchanges its
    // sender answered are over; acknowledgements it did not carry are timeouts.
    void end_received_burst();

    static bool is_arq_data(dpdu_type t);

    void on_ack(peer_state& p, const arq_ack& a, bool expedited);
    // True when the burst being received began before our last burst asking `p` for
    // an answer had ended: the peer built it without having heard that burst whole
    // (its late answer to an earlier one, heard while we were on the air again).
    bool burst_began_while_asking(const peer_state& p) const;

    // ---------------------------------------------------------------- events

    void process_cas_events();

    void process_hard_link();

    void process_drc_events(peer_state& p);

    void expire(double t);

    // The peer did not answer our link requests: what only it could decide (a U_PDU
    // past its TTL it may hold, a client confirmation it owes) is answered
    // "destination node not responding", never "TTL expired".
    void give_up_verdicts(peer_state& p);

    void check_response_timeouts();

    // ---------------------------------------------------------------- links

    bool has_arq_work(const peer_state& p) const;
    // True when the next transmission would carry data (ARQ or non-ARQ).
    bool has_data_to_send() const;
    bool has_link_work(uint32_t addr) const;
    // Expedited ARQ data (or hard-link control S_PDUs) for or from `addr` to send.
    bool has_expedited_work(uint32_t addr) const;
    // On a network, the next burst carries expedited ARQ data to a linked peer, and so
    // no regular data (build_transmission).
    bool expedited_burst_due() const;
    // On a network, expedited ARQ data (or hard-link S_PDUs) wait to be sent, to any
    // peer, linked or not: our back-offs are the shortest (carrier_sense::set_priority).
    bool expedited_waiting() const;

    // data_with_link_request: a first contact's request waits for the data still coming.
    double data_hold_until(const peer_state& p) const;

    void manage_links();

    // ---------------------------------------------------------------- transmit

    bool wants_to_transmit() const;

    // Earliest time the half-duplex rules let us key up (ignoring carrier sense).
    double turn_gate() const;

    // True when our next transmission continues an exchange the last burst belonged to:
    // it then goes right after the turnaround, without carrier-sense back-off.
    bool any_response_owed() const;
    bool peer_asked_beside_others(uint32_t addr) const;
    // Whether other stations may be waiting for the channel: two or more other nodes
    // heard within network_memory_s, or ARQ data of ours queued for a node we have no
    // link with while a second node has our data or a link.
    bool network_in_use() const;
    // On a network, a peer owes us an answer and its time has not run out: the channel
    // is its turn, and a burst of ours to another node would collide with the answer.
    bool channel_promised() const;
    // The channel has been busy for channel_access.max_exchange_s by `at` and other
    // stations may be waiting: answers contend for the channel like new exchanges.
    // within_turns false: as if no exchange were a turn (exchange_bound_per_turn off).
    bool exchange_bound_reached(double at, bool within_turns = true) const;
    // channel_access.max_exchange_s, stretched while the gaps left at it go unused.
    double exchange_bound() const;
    bool stretches_exchange_bound() const
    {
        return cfg.channel_access.max_exchange_stretch_s >
               cfg.channel_access.max_exchange_s;
    }
    // Serving in turn, the gaps left at the exchange bound in a row that no other
    // station used (channel_access.max_exchange_stretch_s).
    unsigned unused_turn_gaps = 0;
    // Our burst of `air_time_s` ends the gap we left: was a carrier heard in it, and is
    // an answer to the burst awaited (unanswered_gap_burst_ends_stretch)?
    void judge_turn_gap(double air_time_s);
    // The end of the answer window of our burst that ended such a gap, until something
    // is heard after it (unanswered_gap_burst_ends_stretch); -inf when none is awaited.
    double gap_burst_answer_by = -inf;
    void judge_gap_burst_answer(bool sending_again = false);
    // any_response_owed, unless the fairness bound says to contend.
    bool answers_at_once() const;
    // The longest a peer that owes us an answer may wait for the channel when the
    // fairness bound makes it contend (its back-off or slot wait).
    double contention_wait_max() const;

    void try_transmit();

    // A transmission being built, and what sending it will start.
    struct burst_builder : transmission_budget {
        using transmission_budget::transmission_budget;
        std::set<peer_state*> answer_expected; // peers whose answer this burst asks for
        std::vector<uint32_t> requests_with_data; // peers whose link request carries data
    };

    // D_PDU overhead of a data frame of `type` between us and `peer`.
    size_t frame_overhead(dpdu_type type, uint32_t peer_addr) const;

    // Pulls queued ARQ U_PDUs for `p` into its senders while they fit the transmission.
    void pull_arq(peer_state& p, size_t budget, bool expedited);

    void add_arq(burst_builder& b,
                 peer_state& p,
                 bool expedited,
                 bool& sent_data,
                 bool with_data = true);

    // ARQ data after the FULL RESET riding with our link request
    // (data_with_link_request): numbered in windows reset now, once per reset frame ID,
    // so a repeated request repeats the same numbering the peer may already hold.
    void add_data_with_link_request(burst_builder& b, peer_state& p);

    // A D_PDU made ahead, its reception window counted from where it goes in the burst.
    bool add_made_ahead(burst_builder& b, pending_dpdu& pd);

    void add_non_arq(burst_builder& b);

    node_transmission build_transmission();

    // Our transmitter is busy until the estimated end of the burst, or, when the modem
    // reports it, until tx_finished (a burst never outlasts max_transmission_s).
    double busy_until() const { return std::max(transmitting_until, modem_busy_until); }

    // The channel is the peer's to answer a link request of `requested` that this burst
    // carried alone (link_answer_until).
    void promise_link_answers(const burst_builder& b,
                              const std::set<uint32_t>& requested,
                              double air_time_s);
    // Awaited answers are not due before until(p).
    void hold_answers(const std::function<double(const peer_state&)>& until);


    // How long an answer to our burst may take to come from its end: turnarounds, a
    // short answer and response_margin_s; from `p`, longer where it made the link.
    double answer_wait(const phy::waveform_timing& phy) const;
    double answer_wait(const peer_state& p, const phy::waveform_timing& phy) const;

    // ---------------------------------------------------------------- driver

    // Every input starts here: the time, and another transmission attempt is worth it.
    void begin_input(double t)
    {
        now = t;
        stalled_at = -inf;
    }

    void forget_idle_peers();

    void service();

    void collect_client_actions();

    // Clients supervision gave up on: told (if bound) and forgotten, before the hard-link
    // manager and the transmitter run, so a hard link they held is terminated at once.
    void drop_disconnected_clients();

    void to_client_flow(const flow_event& f);

    void compute_deadline();
};

} // namespace dl
} // namespace hfstack
} // namespace gr

#endif
