/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

/* Transmissions of the node engine: when it may key up, and what one transmission
 * carries (CAS, ARQ with acknowledgements, non-ARQ), within its air time. See
 * node_engine_impl.h. */
#include "node_engine_impl.h"

#include <algorithm>
#include <set>
#include <tuple>

namespace gr {
namespace hfstack {
namespace dl {

phy::waveform_timing node_engine::impl::timing(const modem_mode& m) const
{
    return cfg.timing ? cfg.timing(m) : waveform_timing_of(cfg.s5069_bandwidth_khz, m);
}

size_t node_engine::impl::segment_for(const modem_mode&) const
{
    return cfg.segment_size ? cfg.segment_size : max_segment_size;
}

size_t node_engine::impl::segment_for_non_arq(const modem_mode& m) const
{
    return cfg.non_arq_segment_size ? cfg.non_arq_segment_size : segment_for(m);
}

non_arq_config node_engine::impl::non_arq_sender_config(bool expedited) const
{
    non_arq_config c;
    c.segment_size = segment_for_non_arq(cfg.mode);
    c.expedited = expedited;
    c.first_id = uint16_t(cfg.incarnation % cpdu_id_modulus);
    return c;
}

double node_engine::impl::cycle_fixed_s(const phy::waveform_timing& phy) const
{
    return air_time(phy, 0) + air_time(phy, typical_answer_bytes) + 2 * cfg.turnaround_s;
}

size_t node_engine::impl::adaptive_segment(const peer_state& p,
                                           const phy::waveform_timing& phy,
                                           double max_s,
                                           size_t overhead,
                                           double ber) const
{
    arq_cycle cycle;
    cycle.header_bytes = overhead;
    cycle.window = p.tx.config().window;
    cycle.capacity_bytes = phy::max_bytes_within(phy, max_s);
    cycle.bit_rate = phy.bit_rate;
    cycle.fixed_s = cycle_fixed_s(phy);
    const size_t best = p.segments.segment_size_for(cycle, ber);
    const size_t capacity = cycle.capacity_bytes;
    if (capacity <= overhead + 1)
        return best;
    const size_t frames = (capacity + best + overhead - 1) / (best + overhead);
    if (frames > p.tx.config().window)
        return best; // the window, not the air time, ends the transmission
    const size_t packed = capacity / frames;
    return std::max<size_t>(1, std::min(best, packed > overhead ? packed - overhead : 1));
}

const segment_size_policy* node_engine::impl::heard_estimate(const peer_state& p) const
{
    if (!cfg.segment_from_heard_frames)
        return nullptr;
    // A peer not yet heard enough: the channel as heard from every station.
    const auto it = heard_frame_losses.find(p.address);
    const segment_size_policy& heard =
        it != heard_frame_losses.end() && it->second.confident() ? it->second
                                                                 : heard_from_all;
    return heard.confident() ? &heard : nullptr;
}

double node_engine::impl::segment_ber(const peer_state& p) const
{
    const double own = p.segments.bit_error_rate();
    if (p.segments.confident())
        return own;
    // Only ever more cautious than the prior: a clean channel heard changes nothing.
    const segment_size_policy* heard = heard_estimate(p);
    return heard ? std::max(own, heard->bit_error_rate()) : own;
}

bool node_engine::impl::losses_seen(const peer_state& p) const
{
    if (p.segments.confident())
        return p.segments.bit_error_rate() > 0;
    const segment_size_policy* heard = heard_estimate(p);
    return heard && heard->bit_error_rate() > 0;
}

bool node_engine::impl::wants_to_transmit() const
{
    if (!cas_out.empty() || !expedited_pending.empty() || !non_arq_pending.empty() ||
        ack_turn_due)
        return true;
    if (non_arq_queued > 0)
        return true; // non-ARQ U_PDUs go without a link
    for (auto& [addr, p] : peers) {
        if (p->warning_owed || !p->resync.acks_owed().empty())
            return true;
        if (!link_up(addr))
            continue;
        if (p->resync.request_due())
            return true;
        if (p->drc->management_pending())
            return true; // management messages go first in the next transmission
        if (!p->resync.synced())
            continue;
        if (p->awaiting_response)
            continue;
        if (cfg.exchange_bound_per_turn && waits_for_turn(*p))
            continue; // acknowledgements too wait for our turn
        if (p->rx.ack_due() || p->rx_exp.ack_due())
            return true;
        if (waits_for_turn(*p))
            continue;
        if (p->tx.has_pending_transmission() || p->tx_exp.has_pending_transmission())
            return true;
        if (control_spdus.count(addr) || arq_queued_by_peer.count(addr))
            return true;
    }
    return false;
}

double node_engine::impl::turn_gate() const
{
    double t = std::max(busy_until(), last_rx_end) + cfg.turnaround_s;
    if (busy_until() == -inf && last_rx_end == -inf)
        t = -inf;
    return std::max(t, receiving_until);
}

bool node_engine::impl::has_data_to_send() const
{
    if (non_arq_queued > 0 || !non_arq_pending.empty())
        return true;
    for (auto& [addr, p] : peers)
        if (!p->awaiting_response && !waits_for_turn(*p) &&
            (p->tx.has_pending_transmission() || p->tx_exp.has_pending_transmission() ||
             arq_queued_by_peer.count(addr) || control_spdus.count(addr)))
            return true;
    return false;
}

bool node_engine::impl::any_response_owed() const
{
    const bool network = network_in_use();
    for (auto& [addr, p] : peers) {
        if (p->asked_beside_others)
            continue; // another node's answer to the same burst goes at once
        if (cfg.exchange_bound_per_turn && turned_from_us(*p))
            continue; // it serves another now: our acknowledgement waits for our turn
        if (p->rx.ack_due() || p->rx_exp.ack_due() || !p->resync.acks_owed().empty() ||
            p->warning_owed)
            return true;
        if (p->last_heard >= rx_burst_began && link_up(addr) && has_link_work(addr) &&
            !turned_from_us(*p))
            return true;
        // The first repeat after a lost answer continues the exchange; it does not
        // contend for the channel as a new one would (check_response_timeouts). On a
        // network it does: the answer most often did not come because the peer was
        // busy with another node, and the other waiting nodes would repeat at once too.
        if (p->consecutive_timeouts == 1 && !p->awaiting_response && link_up(addr) &&
            has_link_work(addr) && !network)
            return true;
    }
    // Answers to the peer's CAS C_PDUs go at once; our own requests and breaks are
    // new exchanges. On a network a BREAK CONFIRM contends too: the node that broke
    // the link has usually turned to another, whose answer would collide with it.
    for (auto& o : cas_out)
        if (o.pdu.type != cpdu_type::physical_link_request &&
            o.pdu.type != cpdu_type::physical_link_break &&
            !peer_asked_beside_others(o.peer) &&
            !(network && o.pdu.type == cpdu_type::physical_link_break_confirm))
            return true;
    return false;
}

bool node_engine::impl::peer_asked_beside_others(uint32_t addr) const
{
    auto it = peers.find(addr);
    return it != peers.end() && it->second->asked_beside_others;
}

size_t node_engine::impl::stations_heard_recently() const
{
    size_t heard = 0;
    for (auto& [addr, t] : stations_heard)
        heard += now - t <= cfg.network_memory_s;
    return heard;
}

bool node_engine::impl::heard_network() const
{
    if (cfg.network_assumed || now - collision_heard_at <= cfg.network_memory_s ||
        now - peer_kept_network_at <= cfg.network_memory_s)
        return true;
    return stations_heard_recently() >= 2;
}

void node_engine::impl::carrier_began(double t)
{
    judge_carrier();
    carrier_now = carrier_period();
    carrier_now.began = t;
    carrier_now.bursts_before = bursts_delivered;
    // Carrier is detected a little after a burst starts, and we are deaf until a
    // little after ours ends: a carrier this close to our burst may have overlapped it.
    carrier_now.overlapped_own = t <= busy_until() + cfg.turnaround_s;
    carrier_now.in_turn_gap = leaves_turn_gap();
    for (const auto& [addr, p] : peers)
        if (p->awaiting_response || link_up(addr))
            carrier_now.peer_may_send = true;
}

void node_engine::impl::carrier_finished(double t)
{
    if (carrier_now.began == -inf || carrier_now.ended != -inf)
        return;
    carrier_now.ended = t;
    carrier_now.judged = false;
}

void node_engine::impl::judge_carrier()
{
    if (carrier_now.judged)
        return;
    // The modem is given as long to deliver the burst as an answer is (carrier_off).
    if (now < carrier_now.ended + cfg.turnaround_s + cfg.response_margin_s)
        return;
    carrier_now.judged = true;
    if (carrier_now.overlapped_own || bursts_delivered != carrier_now.bursts_before)
        return;
    if (carrier_now.in_turn_gap)
        unheard_callers_at = carrier_now.ended;
    if (carrier_now.peer_may_send)
        return;
    collision_heard_at = carrier_now.ended;
    counters.collisions_heard += 1;
}

bool node_engine::impl::network_in_use() const
{
    if (heard_network())
        return true;
    // Data for a node without a link, while another node has our data or a link:
    // two peers want the channel through us (one peer alone is a two-node link).
    bool waiting = false;
    std::set<uint32_t> involved;
    for (auto& [addr, n] : arq_queued_by_peer) {
        involved.insert(addr);
        waiting = waiting || cas.state(addr) != cas_link_state::up;
    }
    for (uint32_t addr : cas.up_peers())
        involved.insert(addr);
    return waiting && involved.size() >= 2;
}

bool node_engine::impl::serves_in_turn() const
{
    return std::isfinite(cfg.serve_in_turn_s) && network_in_use() && link_slots() > 1;
}

unsigned node_engine::impl::link_slots() const
{
    if (cfg.exchange_bound_per_turn && !heard_network())
        return 1u;
    return std::max(1u, cfg.cas.max_nonexclusive_links);
}

bool node_engine::impl::exchange_in_turn() const
{
    if (!cfg.exchange_bound_per_turn || !std::isfinite(cfg.serve_in_turn_s))
        return false;
    // Our own turn to a peer, while it lasts.
    if (serving != 0 && link_up(serving) && turn_time_left() && serves_in_turn())
        return true;
    // The last burst was a peer's that serves in turn and has turned to us.
    for (auto& [addr, p] : peers)
        if (!p->turned_away && p->serves_us &&
            now - p->turned_away_at <= cfg.network_memory_s &&
            p->last_heard >= rx_burst_began && link_up(addr))
            return true;
    return false;
}

bool node_engine::impl::turned_from_us(const peer_state& p) const
{
    // Its burst to another node is itself proof of a network: no other test needed.
    return p.turned_away && link_up(p.address) && std::isfinite(cfg.serve_in_turn_s) &&
           !has_expedited_work(p.address); // expedited data never waits for a turn
}

bool node_engine::impl::expedited_waiting() const
{
    // Only on a network: a two-node link has no one to contend with for the channel.
    if (!network_in_use())
        return false;
    if (!expedited_queued_by_peer.empty() || !control_spdus.empty())
        return true;
    for (auto& [addr, p] : peers)
        if (p->tx_exp.has_pending_transmission())
            return true;
    return false;
}

bool node_engine::impl::expedited_burst_due() const
{
    // Expedited data are for messages that must not wait (STANAG 5066 sends them ahead
    // of all normal data). A receiver has a C_PDU only when the burst carrying it has
    // ended, so beside regular data the message would still wait for a burst of up to
    // max_transmission_s each way. On a network the burst that carries expedited data
    // carries no regular data: it is a few seconds long. Their acknowledgement alone
    // does not shorten a burst: the message is delivered already, and a burst without
    // data would leave the exchange to the peer, whose answer would meet ours.
    // A two-node link keeps its long bursts (nobody else waits for the channel).
    if (!network_in_use())
        return false;
    for (uint32_t addr : cas.up_peers()) {
        auto it = peers.find(addr);
        if (it == peers.end() || !it->second->resync.synced() ||
            it->second->awaiting_response)
            continue;
        if (expedited_queued_by_peer.count(addr) || control_spdus.count(addr) ||
            it->second->tx_exp.has_pending_transmission())
            return true;
    }
    return false;
}

void node_engine::impl::repeat_unanswered_ack_turn()
{
    // Reception ends the hold (turn_held_until) whoever spoke: past it, nothing was
    // heard since our turn. The next burst gives the turn again, each counted as a bare
    // turn unanswered (gets_bare_turn: after bare_turn_retries the turn goes to the
    // next peer).
    if (!cfg.ack_turn_repeated || !ack_turn_held || turn_held_until == -inf ||
        now < turn_held_until || cs.carrier())
        return;
    ack_turn_held = false;
    ack_turn_due = serving != 0;
}

bool node_engine::impl::gets_bare_turn(uint32_t addr) const
{
    // Only where the peer takes a burst to it alone as its turn (the bound per turn).
    const peer_state& p = *peers.at(addr);
    return cfg.exchange_bound_per_turn && p.sends_to_us &&
           (p.bare_turn_at <= p.last_heard ||
            p.bare_turns_unanswered <= cfg.bare_turn_retries ||
            now - p.bare_turn_at >= cfg.bare_turn_retry_after_s);
}

bool node_engine::impl::unsynced_caller_turn(uint32_t addr) const
{
    // A node that called us and has not yet sent the FULL RESET that opens its data
    // (our acceptance went beside another peer's turn, so it waits for its own): its
    // turn is our FULL RESET alone, which it answers with its data.
    // gets_bare_turn: it has data for us, and our turns to it are not all unanswered.
    return cfg.unsynced_callers_served && !peers.at(addr)->made_by_us &&
           gets_bare_turn(addr);
}

bool node_engine::impl::waits_for_turn(const peer_state& p) const
{
    return turned_from_us(p);
}

double node_engine::impl::round_burst_s() const
{
    if (!std::isfinite(cfg.network_round_s))
        return inf;
    const size_t heard = stations_heard_recently();
    if (heard < 2)
        return inf;
    // Bursts per station in a round: one each way, or one where data go one way only
    // (network_round_by_directions).
    const bool both_ways =
        !cfg.network_round_by_directions ||
        (!arq_queued_by_peer.empty() &&
         std::any_of(peers.begin(), peers.end(), [](const auto& entry) {
             return entry.second->sends_to_us;
         }));
    const double per_station = both_ways ? 2.0 : 1.0;
    const double cap = std::max(network_round_min_burst_s,
                                cfg.network_round_s / (per_station * double(heard)));
    return cap < cfg.channel_access.network_burst_s ? cap : inf;
}

double node_engine::impl::base_turn_length() const
{
    const double round_share =
        cfg.serve_in_turn_round_s / double(std::max<size_t>(1, round_peers));
    // Where network_round_s shortens the bursts, a turn is one burst each way.
    return std::min({ cfg.serve_in_turn_s, round_share, round_burst_s() });
}

double node_engine::impl::turn_length() const
{
    return base_turn_length() + serving_extra_s;
}

bool node_engine::impl::turn_time_left() const
{
    // A turn whose time is up to within a microsecond is over: at 2400S a 60 s turn
    // is exactly one exchange of 30 s and 28.8 s bursts with their turnarounds, and
    // the rounding of the clock's sums (its origin, a real process's channel time)
    // decided whether another followed.
    constexpr double rounding = 1e-6;
    // A clock that has not started starts at the latest one turn length after the turn
    // began (a turn that never gets a burst out still ends).
    if (!turn_clock_running)
        return now - turn_begun_at < turn_length() + base_turn_length() - rounding;
    if (cfg.serve_in_turn_by_bursts) {
        // As many bursts as the turn's length holds at the longest burst on the net, at
        // least one; the time bound stays, doubled, for a turn whose bursts do not go.
        const double burst = std::min({ cfg.channel_access.network_burst_s,
                                        round_burst_s(),
                                        cfg.max_transmission_s });
        const double fits = std::floor(turn_length() / burst + 1e-6);
        return double(turn_bursts) < std::max(1.0, fits) &&
               now - serving_since < 2 * turn_length() - rounding;
    }
    return now - serving_since < turn_length() - rounding;
}

void node_engine::impl::begin_turn(uint32_t addr)
{
    if (serving != 0)
        peer(serving).turn_time_s += now - serving_since;
    serving = addr;
    serving_since = now;
    turn_begun_at = now;
    turn_clock_running = !cfg.serve_in_turn_from_service;
    turn_bursts = 0;
    counters.turns_served += 1;
    // Credit owed is paid in turns at most twice as long as the others'.
    peer_state& p = peer(addr);
    serving_extra_s = std::min(p.turn_credit_s, cfg.serve_in_turn_s);
    p.turn_credit_s -= serving_extra_s;
}

std::vector<uint32_t> node_engine::impl::unlinked_with_data() const
{
    std::vector<uint32_t> out;
    for (const auto& [addr, n] : arq_queued_by_peer)
        if (cas.state(addr) != cas_link_state::up)
            out.push_back(addr);
    return out;
}

void node_engine::impl::accrue_turn_credit(size_t linked_candidates)
{
    const double since = turn_credit_counted_at;
    turn_credit_counted_at = now;
    if (!(cfg.serve_in_turn_catch_up_s > 0) || since == -inf || now <= since ||
        linked_candidates == 0)
        return;
    // Peers we have data for and no link with: while the linked ones are served, each
    // is owed its share of the time. Also one whose requests went unanswered (lost
    // among the others' calls, most often); an absent one never uses its credit.
    std::vector<peer_state*> unlinked;
    for (uint32_t addr : unlinked_with_data()) {
        auto it = peers.find(addr);
        if (it != peers.end())
            unlinked.push_back(it->second.get());
    }
    const double share = (now - since) / double(linked_candidates + unlinked.size());
    for (peer_state* p : unlinked)
        p->turn_credit_s =
            std::min(cfg.serve_in_turn_catch_up_s, p->turn_credit_s + share);
}

uint32_t node_engine::impl::peer_to_serve()
{
    if (!serves_in_turn()) {
        turn_credit_counted_at = -inf;
        return 0;
    }
    std::vector<uint32_t> candidates; // ascending addresses (cas.up_peers)
    for (uint32_t addr : cas.up_peers())
        if (peer(addr).resync.synced() ? has_link_work(addr) || gets_bare_turn(addr)
                                       : unsynced_caller_turn(addr))
            candidates.push_back(addr);
    accrue_turn_credit(candidates.size());
    if (candidates.empty())
        return 0;
    // Those waiting for a link count too: the round they join is as long.
    if (std::isfinite(cfg.serve_in_turn_round_s))
        round_peers = candidates.size() + unlinked_with_data().size();
    const bool current =
        std::find(candidates.begin(), candidates.end(), serving) != candidates.end();
    // Expedited data never waits for its peer's turn: a peer with some is served
    // next, unless the one served has some too.
    if (!(current && has_expedited_work(serving)))
        for (uint32_t addr : candidates)
            if (has_expedited_work(addr) && addr != serving) {
                begin_turn(addr);
                return serving;
            }
    // Nor is the turn taken from a peer while it has expedited data: its turn would
    // pass with only their acknowledgement sent, and the data would wait a round.
    // A turn of acknowledgements alone (gets_bare_turn) lasts one burst: it does not
    // keep a peer we have data for waiting out serve_in_turn_s (a datagram relayed
    // through us waited a whole turn while the peer that sent us data sent no more).
    const bool work_waits =
        std::any_of(candidates.begin(), candidates.end(), [&](uint32_t a) {
            return a != serving && has_link_work(a);
        });
    // Nor while another peer's data wait does it go on after a short burst of the
    // served peer's (sender_turn_min_burst_s): that burst held all it had.
    const bool data_waits =
        std::any_of(candidates.begin(), candidates.end(), [&](uint32_t a) {
            return a != serving && has_arq_work(peer(a));
        });
    const bool sender_done =
        current && data_waits && !has_arq_work(peer(serving)) &&
        peer(serving).last_data_burst_s < cfg.sender_turn_min_burst_s;
    if (current && (candidates.size() == 1 ||
                    (turn_time_left() &&
                     ((has_link_work(serving) && !sender_done) || !work_waits)) ||
                    has_expedited_work(serving)))
        return serving;
    begin_turn(next_in_turn(candidates));
    return serving;
}

uint32_t node_engine::impl::next_in_turn(const std::vector<uint32_t>& candidates)
{
    // Round robin from the peer after the one served.
    std::vector<uint32_t> order(candidates);
    std::rotate(order.begin(),
                std::upper_bound(order.begin(), order.end(), serving),
                order.end());
    if (!(cfg.serve_in_turn_lag_max_s > 0))
        return order.front();
    // The peer served least, first in that order among near equals: a peer served early
    // alone (before the others' links came up) or one that lost turns in fades is
    // evened out within the hour. A peer's lag behind the most served counts up to
    // serve_in_turn_lag_max_s, so one linked late, or back after an absence, takes
    // no more than that in turns ahead of the others.
    double most_to = 0, most_from = 0;
    for (uint32_t addr : order) {
        most_to = std::max(most_to, peer(addr).service_to_s);
        most_from = std::max(most_from, peer(addr).service_from_s);
    }
    for (uint32_t addr : order) {
        peer_state& p = peer(addr);
        p.service_to_s = std::max(p.service_to_s, most_to - cfg.serve_in_turn_lag_max_s);
        p.service_from_s =
            std::max(p.service_from_s, most_from - cfg.serve_in_turn_lag_max_s);
    }
    // Peers within serve_in_turn_alike_turns of the least served count as served alike
    // and go in round robin: small exchanges (a datagram relayed between two spokes) are
    // not reordered by a few bytes.
    std::vector<double> served;
    std::vector<bool> with_work; // we have ARQ data for it
    for (uint32_t addr : order) {
        served.push_back(service_of(peer(addr)));
        with_work.push_back(has_arq_work(peer(addr)));
    }
    // A peer we have nothing for whose last burst of data was short sent all it had (a
    // caller that has sent nothing yet has not): being served less does not put it
    // ahead of peers we have data for. Put ahead, it was given turns of acknowledgements
    // it left unanswered while a datagram relayed through us waited out two of them
    // (sender_turn_min_burst_s). It keeps its place in the round
    // (short_senders_keep_their_place).
    double least_waiting = inf;
    for (size_t i = 0; i < order.size(); ++i)
        if (with_work[i])
            least_waiting = std::min(least_waiting, served[i]);
    if (cfg.short_senders_keep_their_place && std::isfinite(least_waiting))
        for (size_t i = 0; i < order.size(); ++i) {
            const double last = peer(order[i]).last_data_burst_s;
            if (!with_work[i] && last > 0 && last < cfg.sender_turn_min_burst_s)
                served[i] = std::max(served[i], least_waiting);
        }
    const double tie = *std::min_element(served.begin(), served.end()) +
                       base_turn_length() * cfg.serve_in_turn_alike_turns;
    return order[std::find_if(
                     served.begin(), served.end(), [&](double s) { return s <= tie; }) -
                 served.begin()];
}

double node_engine::impl::service_of(const peer_state& p) const
{
    const bool to = has_arq_work(p), from = p.sends_to_us;
    const double through = to && from ? std::min(p.service_to_s, p.service_from_s)
                           : to       ? p.service_to_s
                           : from     ? p.service_from_s
                                      : p.service_to_s + p.service_from_s;
    // A turn each way holds about half of each direction's data.
    const double per_direction = to && from ? 0.5 : 1.0;
    return std::max(through,
                    cfg.serve_in_turn_service_floor * per_direction * p.turn_time_s);
}

bool node_engine::impl::channel_promised() const
{
    if (!network_in_use())
        return false;
    if (now < turn_held_until)
        return true;
    for (auto& [addr, p] : peers) {
        if (p->awaiting_response && !p->answer_contends && now < p->response_deadline)
            return true;
        if (now < p->link_answer_until && p->last_heard < p->link_asked_at &&
            cas.state(addr) == cas_link_state::requesting)
            return true;
    }
    return false;
}

double node_engine::impl::exchange_bound() const
{
    const auto& ca = cfg.channel_access;
    const unsigned after = ca.max_exchange_stretch_after_gaps;
    if (!stretches_exchange_bound() || unused_turn_gaps < after || !serves_in_turn() ||
        unlinked_station_heard())
        return ca.max_exchange_s;
    return std::min(
        ca.max_exchange_stretch_s,
        std::ldexp(ca.max_exchange_s, int(std::min(unused_turn_gaps - after + 1, 16u))));
}

void node_engine::impl::judge_gap_burst_answer(bool sending_again)
{
    // Our next burst before anything was heard is a repeat of an unanswered one.
    if (gap_burst_answer_by == -inf ||
        (!sending_again && (now < gap_burst_answer_by || cs.carrier())))
        return;
    gap_burst_answer_by = -inf;
    unused_turn_gaps = 0;
    // As a carrier in the gap that brought nothing: callers we have not read.
    if (cfg.turn_change_floor_for_unheard_callers)
        unheard_callers_at = now;
}

void node_engine::impl::judge_turn_gap(double air_time_s)
{
    if (!stretches_exchange_bound() || !leaves_turn_gap())
        return;
    // A carrier in the gap: a station waited for it, or met our burst in a collision.
    unused_turn_gaps = carrier_now.began > yielding_since ? 0u : unused_turn_gaps + 1;
    // Or, if no one answers the burst, a caller may have met it unheard
    // (judge_gap_burst_answer).
    if (cfg.unanswered_gap_burst_ends_stretch)
        gap_burst_answer_by = now + air_time_s + cfg.turnaround_s + cfg.response_margin_s;
}

bool node_engine::impl::exchange_bound_reached(double at, bool within_turns) const
{
    const double bound = exchange_bound();
    return std::isfinite(bound) && cs.busy_since() != -inf &&
           at - cs.busy_since() >= bound && network_in_use() &&
           !(within_turns && exchange_in_turn());
}

bool node_engine::impl::answers_at_once() const
{
    return any_response_owed() && !yielding && !exchange_bound_reached(now);
}

double node_engine::impl::contention_wait_max() const
{
    const auto& ca = cfg.channel_access;
    // A slotted peer's slot number is not known here: up to 16 slots are allowed for.
    const double wait = ca.mode == channel_access_mode::slotted
                            ? ca.base_delay_s + 16 * ca.slot_length_s
                            : ca.backoff_max_s;
    return ca.idle_holdoff_s + wait;
}

bool node_engine::impl::turnaround_call_wanted() const
{
    const auto& ca = cfg.channel_access;
    if (!cfg.call_into_turnaround || ca.mode == channel_access_mode::none ||
        !std::isfinite(ca.max_exchange_s) || !cs.wanted() || cs.carrier() ||
        pair_since == -inf || pair_sources.size() != 2)
        return false;
    // The burst that just ended was another station's, after our own last one.
    if (carrier_ended == -inf || carrier_ended <= busy_until())
        return false;
    // We have waited our longest back-off, and the pair has held the channel without a
    // gap for twice what a pair keeping the network rules would (its answers contend
    // after max_exchange_s, and a gap follows the burst then going on). Once is not
    // enough: a hub and a spoke that both know of the net may hold that long, and a
    // call into them costs the net more than a late joiner's wait.
    if (now - cs.wanted_since() < contention_wait_max() ||
        carrier_ended - pair_since < 2 * (ca.max_exchange_s + cfg.max_transmission_s))
        return false;
    // Two other stations heard (their D_PDUs), not one: a two-node link never calls.
    return stations_heard_recently() >= 2;
}

double node_engine::impl::turnaround_call_time() const
{
    // Soon enough after the burst that the answering station, keying up a turnaround
    // after it, hears our carrier first (key-up, AGC and carrier detection take a
    // few tenths of a second), late enough that the station that sent it listens again.
    return carrier_ended + cfg.turnaround_s / 5;
}

bool node_engine::impl::turnaround_call_now()
{
    if (now < turnaround_call_time() || now >= carrier_ended + cfg.turnaround_s / 2 ||
        !turnaround_call_wanted())
        return false;
    if (turnaround_call_drawn_for != carrier_ended) {
        // Half the bursts: two waiting stations do not call into the same one for
        // ever.
        turnaround_call_drawn_for = carrier_ended;
        turnaround_call_chosen = (turnaround_call_rng() & 1) != 0;
    }
    return turnaround_call_chosen;
}

bool node_engine::impl::waited_through_a_gap() const
{
    // Only where stations serve in turn (as we do) is there such a gap.
    if (!std::isfinite(cfg.channel_access.waiting_caller_backoff_max_s) ||
        !std::isfinite(cfg.serve_in_turn_s) || !network_in_use() || !cs.wanted() ||
        now - cs.wanted_since() <
            cfg.channel_access.max_exchange_s + contention_wait_max())
        return false;
    for (auto& [addr, p] : peers)
        if (cas.state(addr) == cas_link_state::requesting)
            return true;
    return false;
}

bool node_engine::impl::unlinked_station_heard() const
{
    for (auto& [addr, t] : stations_heard)
        if (now - t <= cfg.network_memory_s && !link_up(addr))
            return true;
    return false;
}

bool node_engine::impl::callers_waiting_heard() const
{
    return unlinked_station_heard() || (cfg.turn_change_floor_for_unheard_callers &&
                                        now - unheard_callers_at <= cfg.network_memory_s);
}

void node_engine::impl::try_transmit()
{
    if (now == stalled_at || now < busy_until())
        return;
    if (!wants_to_transmit()) {
        cs.cancel();
        return;
    }
    // A yield left pending while a peer served others ends when it turns to us.
    if (yielding && exchange_in_turn())
        yielding = false;
    if (!yielding && any_response_owed() && exchange_bound_reached(now)) {
        yielding = true;
        yielding_since = now;
    }
    const bool at_once = answers_at_once() || break_at_once;
    // The gap a node serving in turn leaves at a change of turn, for stations waiting
    // to call: they draw from the whole range, and with none waiting the gap is idle.
    // A caller that has sat through such a gap draws from a range as short.
    cs.set_backoff_limit(leaves_turn_gap() ? cfg.channel_access.turn_change_backoff_max_s
                         : waited_through_a_gap()
                             ? cfg.channel_access.waiting_caller_backoff_max_s
                             : inf);
    const double floor = cfg.channel_access.turn_change_backoff_min_s;
    cs.set_backoff_floor(floor > 0 && leaves_turn_gap() && callers_waiting_heard() ? floor
                                                                                   : 0.0);
    cs.set_priority(expedited_waiting());
    cs.set_response_pending(at_once);
    cs.want_to_transmit(now);
    const bool turnaround_call = !at_once && turnaround_call_now();
    if (!turnaround_call && (now < turn_gate() || !cs.may_transmit(now)))
        return;
    if (now < retry_not_before && !at_once && !turnaround_call)
        return;
    if (channel_promised())
        return;
    contended = !at_once && cfg.channel_access.mode != channel_access_mode::none;
    node_transmission t = build_transmission();
    if (t.burst.empty()) {
        stalled_at = now;
        cs.cancel();
        return;
    }
    judge_gap_burst_answer(true);
    judge_turn_gap(t.air_time_s);
    if (yielding)
        counters.exchanges_yielded += 1;
    counters.turnaround_calls += turnaround_call;
    pair_since = -inf; // we are on the air: no pair holds the channel alone
    pair_sources.clear();
    yielding = false;
    break_at_once = false;
    if (cs.carrier())
        carrier_now.overlapped_own = true;
    cs.on_own_transmission(now, now + t.air_time_s);
    cs.set_response_pending(false);
    transmitting_until = now + t.air_time_s;
    counters.transmissions += 1;
    counters.bytes_sent += t.burst.size();
    counters.dpdus_sent += t.dpdu_sizes.size();
    counters.air_time_s += t.air_time_s;
    actions.transmissions.push_back(std::move(t));
}

size_t node_engine::impl::frame_overhead(dpdu_type type, uint32_t peer_addr) const
{
    dpdu d;
    d.type = type;
    d.source = cfg.address;
    d.destination = peer_addr;
    d.segment = bytes(1);
    if (carries_fsn(type)) {
        auto it = peers.find(peer_addr);
        d.long_fsn = it != peers.end() && it->second->lfsn;
    }
    return encoded_size(d) - 1;
}

size_t node_engine::impl::arq_queued_for(const peer_state& p, bool expedited) const
{
    auto count = [&](const std::map<uint32_t, size_t>& m) {
        auto it = m.find(p.address);
        return it == m.end() ? size_t(0) : it->second;
    };
    const size_t exp = count(expedited_queued_by_peer);
    return expedited ? exp : count(arq_queued_by_peer) - exp;
}

void node_engine::impl::pull_arq(peer_state& p, size_t budget, bool expedited)
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
    if (arq_queued_for(p, expedited) == 0)
        return;
    auto accept = [&](const updu_request& r) {
        return r.expedited == expedited && needs_arq(r.service) &&
               r.destination == dest &&
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

void node_engine::impl::add_arq(
    burst_builder& b, peer_state& p, bool expedited, bool& sent_data, bool with_data)
{
    auto& sender = expedited ? p.tx_exp : p.tx;
    auto& receiver = expedited ? p.rx_exp : p.rx;
    const dpdu_type data_type =
        expedited ? dpdu_type::expedited_data_only : dpdu_type::data_only;
    const size_t overhead = frame_overhead(data_type, p.address);
    // On a link losing frames, a burst of data to a peer we have heard data from says
    // again where our receive window stands, though nothing came since our last ack:
    // that ack may have been lost (serving in turn, it went in the burst that turned to
    // another peer), and without it the peer sends its whole window again in its turn.
    if (cfg.arq_ack_with_every_data_burst && !expedited && with_data && losses_seen(p) &&
        !p.awaiting_response && !receiver.ack_due() && receiver.counters().frames > 0 &&
        (sender.has_pending_transmission() || arq_queued_for(p, false)))
        receiver.ack_again();
    // The ack goes first: an EXPEDITED ACK-ONLY of its own, or (regular class) inside
    // the first data D_PDU, which then grows by the ack's bytes.
    std::optional<arq_ack> ack;
    size_t ack_copy_bytes = 0;
    if (receiver.ack_due()) {
        arq_ack largest;
        largest.long_fsn = p.lfsn;
        largest.selective_acks.assign(
            p.lfsn ? max_selective_acks_lfsn : max_selective_acks, 0);
        dpdu worst = make_ack_only(largest, expedited);
        worst.source = cfg.address;
        worst.destination = p.address;
        if (!b.fits(encoded_size(worst)))
            return; // no room even for the ack: it stays due for the next turn
        ack_copy_bytes = encoded_size(worst);
        ack = receiver.ack();
        if (expedited) {
            dpdu a = make_ack_only(*ack, true);
            a.destination = p.address;
            b.add(std::move(a));
            ack.reset();
        }
    }
    // On a link losing frames the ack inside the first data D_PDU goes as often as that
    // long frame; a copy in an ACK-ONLY D_PDU after the data, seconds later in the burst,
    // is lost only if it too falls in a fade. A lost ack costs the whole burst it
    // answers (every frame due again) and, serving in turn, a round.
    const bool ack_copy =
        ack && !expedited && cfg.arq_ack_copy_on_lossy_link && losses_seen(p);
    const size_t ack_bytes = ack ? 1 + 2 * p.lfsn + ack->selective_acks.size() +
                                       (ack_copy ? ack_copy_bytes : 0)
                                 : 0;
    // Enough queued to fill the transmission (and the window), but no more, so
    // later high-priority U_PDUs still overtake.
    size_t room = b.room(ack_bytes);
    // A probe after an unanswered transmission stepped the mode down: retransmissions
    // count too, since the unanswered transmission's frames are all due again.
    const bool rate_probe = cfg.unanswered_probe_s > 0 && p.drc &&
                            p.drc->awaiting_answer_after_step_down() &&
                            !p.awaiting_response;
    if (rate_probe)
        room = std::min(room, phy::max_bytes_within(b.phy(), cfg.unanswered_probe_s));
    std::vector<dpdu> data;
    if (!p.awaiting_response && with_data) {
        size_t budget = room;
        const bool probing = !cfg.segment_size && !p.segments.confident();
        if (probing)
            budget =
                std::min(budget, phy::max_bytes_within(b.phy(), cfg.segment_probe_s));
        pull_arq(p, budget, expedited);
        if (!cfg.segment_size) { // the size new segments are cut at (arq_sender)
            double ber = segment_ber(p);
            // A probe that more data follow is sized for the cautious probe BER: on a
            // noisier link than assumed its long frames, each lost again and again,
            // would hold the window's lower edge for cycles. A transfer the probe ends
            // loses at most a cycle whatever the size, so there fewer headers win.
            if (probing &&
                (sender.queued_bytes() > budget || arq_queued_for(p, expedited)))
                ber = std::max(ber, cfg.segment_probe_ber);
            sender.set_segment_size(
                adaptive_segment(p, b.phy(), b.max_s(), overhead, ber));
        }
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
    if (rate_probe && !data.empty())
        counters.rate_probes += 1;
    const bool ack_in_data = ack && !data.empty();
    for (auto& d : data)
        if (!b.add(std::move(d)))
            break;
    if (ack_copy && ack_in_data) {
        dpdu a = make_ack_only(*ack, false);
        a.destination = p.address;
        b.add(std::move(a)); // its room was kept above
    }
}

void node_engine::impl::add_data_with_link_request(burst_builder& b, peer_state& p)
{
    if (!cfg.data_with_link_request || p.refuses_data_with_request || !has_arq_work(p))
        return;
    if (p.resync.reset_windows_for_request())
        reset_windows(p);
    // The regular class only: control S_PDUs (hard links) wait for the link, where
    // their own time-outs apply.
    bool sent_data = false;
    add_arq(b, p, false, sent_data);
    p.sent_data_with_request = sent_data;
    if (sent_data)
        b.requests_with_data.push_back(p.address);
    counters.data_with_link_request += sent_data;
}

bool node_engine::impl::add_made_ahead(burst_builder& b, pending_dpdu& pd)
{
    non_arq_sender::refresh_window(
        pd.frame, pd.expires_at, now + air_time(b.phy(), b.bytes()));
    return b.add(pd.frame);
}

void node_engine::impl::add_non_arq(burst_builder& b)
{
    // Segment queued non-ARQ U_PDUs (any destination, no link needed).
    auto accept = [&](const updu_request& r) {
        return !needs_arq(r.service) &&
               hard.may_use(r.source_sap, r.destination, r.destination_sap);
    };
    for (;;) {
        if (!non_arq_pending.empty()) {
            auto& pd = non_arq_pending.front();
            if (!add_made_ahead(b, pd))
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
        const unsigned repeats = std::min(
            15u, std::max(cfg.non_arq_repeats, unsigned(r->service.min_retransmissions)));
        // Fill the transmission: a C_PDU that does not fit whole continues in our
        // next one (its reception window covers the wait), so no air time is left
        // empty. Start it only if its first segment fits.
        const size_t seg = nonarq_tx.config().segment_size;
        const size_t cpdu_bytes = r->updu.size() + 4;
        const size_t overhead = frame_overhead(dpdu_type::non_arq_data, r->destination);
        const size_t total =
            (cpdu_bytes + ((cpdu_bytes + seg - 1) / seg) * overhead) * (repeats + 1);
        if (!b.frames().empty() && !b.fits(std::min(cpdu_bytes, seg) + overhead))
            return;
        auto req = *queue.pop(r->id);
        note_dequeued(req);
        const bytes c = data_cpdu(data_spdu(req));
        // Time for every copy to reach the receiver, even when the C_PDU continues
        // in our next transmission (after a turnaround and a carrier-sense back-off).
        const double window = air_time(b.phy(), total) + 2 * cfg.max_transmission_s +
                              cfg.turnaround_s + cfg.channel_access.backoff_max_s +
                              cfg.non_arq_window_margin_s;
        auto& sender = req.expedited ? nonarq_exp_tx : nonarq_tx;
        auto batch =
            sender.make_dpdus(c,
                              req.destination,
                              req.service.delivery_order == sis_delivery_order::in_order,
                              window,
                              now,
                              int(repeats));
        for (auto& d : batch.dpdus)
            non_arq_pending.push_back({ std::move(d), batch.expires_at, std::nullopt });
        if (req.service.delivery_confirmation != sis_delivery_confirmation::none &&
            !non_arq_pending.empty())
            non_arq_pending.back().confirm_when_sent = std::move(req);
    }
}

node_transmission node_engine::impl::build_transmission()
{
    // The link peer (if any) decides the mode of the whole burst.
    const auto active = cas.active_peer();
    peer_state* link_peer = active ? &peer(*active) : nullptr;
    std::optional<drc_transmission> management;
    if (link_peer)
        management = link_peer->drc->take_management(now);
    modem_mode mode = management ? management->mode : tx_mode_for(link_peer);
    if (!management && link_peer && cfg.rate_adaptation && cfg.rate_change.autobaud &&
        cfg.answer_mode && less_robust(mode, *cfg.answer_mode) &&
        cfg.rate_change.supported.count(*cfg.answer_mode) && !has_data_to_send())
        mode = *cfg.answer_mode;
    double longest = std::min(cfg.max_transmission_s, max_eot_seconds);
    // Serving in turn, the other peers get at most the acknowledgement they are owed
    // (the one turned away from), and their links wait as if active.
    const uint32_t served_before = serving;
    ack_turn_due = false; // the turn is given again below, or to the next peer
    const uint32_t served = peer_to_serve();
    // A caller served before its windows are agreed (unsynced_caller_turn): its turn is
    // our FULL RESET.
    if (served != 0 && !peer(served).resync.synced())
        start_reset(peer(served));
    // A turn to a peer that has data for us and we none for it: an acknowledgement
    // (repeated if need be) is what turns to it, alone in the burst. Beside another
    // peer's acknowledgement neither could tell whose turn it is. With
    // turns_by_acknowledgement also when its acknowledgement was due anyway (the
    // others' wait for their turns).
    const bool bare_turn =
        served != 0 &&
        (!has_link_work(served) ||
         (cfg.turns_by_acknowledgement && !has_arq_work(peer(served)) &&
          !has_expedited_work(served) && peer(served).resync.acks_owed().empty() &&
          !peer(served).resync.request_due()));
    if (bare_turn)
        peer(served).rx.ack_again();
    // The first burst of a turn to another peer: its contention was the gap the
    // waiting stations needed, and a short one would give the peer less than its
    // answer takes (exchange_bound_per_turn).
    const bool opens_turn = cfg.exchange_bound_per_turn && served != 0 &&
                            served_before != 0 && served != served_before;
    // A burst that won the channel by contention on a network may collide with another
    // station that drew the same back-off slot: keep it short, so a collision costs
    // little; the exchange it opens then sends long bursts, answered at once.
    if (contended && network_in_use() && !opens_turn)
        longest = std::min(longest, cfg.channel_access.contended_burst_s);
    if (network_in_use())
        longest =
            std::min({ longest, cfg.channel_access.network_burst_s, round_burst_s() });
    burst_builder b(timing(mode), longest, cfg.address);
    // The ARQ senders' transmission numbers before this burst (see peer_state::asked).
    std::map<const peer_state*, std::pair<uint64_t, uint64_t>> serials_before;
    for (auto& [addr, pp] : peers)
        serials_before[pp.get()] = { pp->tx.last_transmission(),
                                     pp->tx_exp.last_transmission() };

    if (management) {
        for (auto& d : management->dpdus)
            b.add(std::move(d));
    }
    // Serving in turn, a burst that asks a node for a link serves it alone: the
    // answer to the request is the one owed.
    bool asks_link = false;
    // On a network, one link request per burst: two live peers asked in one burst
    // would both answer it at once and collide (a request unanswered in the first
    // instant's collision is repeated as a probe beside a new one). The others wait
    // for a later burst, their time-outs not running meanwhile (service()).
    const bool one_request_per_burst = network_in_use();
    // Nor beside our answer to another node's request, which that node follows at once.
    bool answers_request = false;
    for (auto& o : cas_out)
        answers_request =
            answers_request || o.pdu.type == cpdu_type::physical_link_accepted;
    std::set<uint32_t> requests_held, requests_sent;
    std::vector<cas_outgoing> held;
    // A request to a live peer goes before a probe of one that has not answered.
    std::stable_partition(cas_out.begin(), cas_out.end(), [&](const cas_outgoing& o) {
        return o.pdu.type != cpdu_type::physical_link_request || !cas.probing(o.peer);
    });
    for (auto& o : cas_out) {
        if (o.pdu.type == cpdu_type::physical_link_request) {
            if ((asks_link || answers_request) && one_request_per_burst) {
                requests_held.insert(o.peer);
                held.push_back(std::move(o));
                continue;
            }
            asks_link = true;
            requests_sent.insert(o.peer);
        }
        // CAS C_PDUs (expedited non-ARQ, Annex B.3.2 (2)).
        auto batch = nonarq_exp_tx.make_dpdus(
            encode(o.pdu), o.peer, false, cfg.max_transmission_s, now, 0);
        for (auto& d : batch.dpdus)
            expedited_pending.push_back({ std::move(d), batch.expires_at, std::nullopt });
    }
    cas_out = std::move(held);
    // On a net a link request repeated after an unanswered one carries our FULL RESET
    // again: the peer that accepts it would otherwise hold a link whose windows were
    // never agreed, and, serving in turn, give it no turn in which we could send the
    // reset (reset_with_repeated_request). A two-node link sends it in its next burst.
    if (cfg.reset_with_repeated_request && network_in_use())
        for (uint32_t addr : requests_sent) {
            auto it = peers.find(addr);
            if (it != peers.end() && !it->second->resync.synced())
                it->second->resync.send_again();
        }
    while (!expedited_pending.empty()) {
        if (!add_made_ahead(b, expedited_pending.front()))
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
        const auto& acks = p.resync.acks_owed();
        size_t sent = 0;
        for (; sent < acks.size(); ++sent) {
            dpdu r;
            r.type = dpdu_type::reset_win_resync;
            r.long_fsn = p.lfsn;
            r.destination = addr;
            r.reset_ack = true;
            r.reset_frame_id = acks[sent];
            if (!b.add(r))
                break;
        }
        p.resync.acks_sent(sent);
        const auto st = cas.state(addr);
        p.sent_data_with_request = false;
        if (p.resync.request_due() &&
            (st == cas_link_state::up ||
             (st == cas_link_state::requesting && !requests_held.count(addr)))) {
            // S5066-EP5: before the peer has answered, our FULL RESET (and the data
            // that ride with it) take the long form; its form is the form of the
            // windows it sets up, and the link's answer corrects it (link-up).
            const bool full = p.resync.full();
            if (full && cfg.large_windows && st == cas_link_state::requesting && !p.lfsn)
                set_long_fsn(p, true);
            dpdu r;
            r.type = dpdu_type::reset_win_resync;
            r.long_fsn = p.lfsn;
            r.destination = addr;
            r.full_reset = full;
            // After a restart with the journal: the peer's receiver restarts where our
            // transmit window now starts.
            r.reset_rx_win_command = !full;
            r.new_rx_lwe = full ? 0 : p.tx.tx_lwe();
            r.reset_frame_id = p.resync.request_id();
            if (b.add(r)) {
                p.resync.request_sent();
                counters.resets_sent += 1;
                b.answer_expected.insert(&p);
                if (full && st == cas_link_state::requesting)
                    add_data_with_link_request(b, p);
            }
        }
    }
    const bool expedited_only = expedited_burst_due();
    for (uint32_t addr : cas.up_peers()) {
        peer_state& p = peer(addr);
        if (!p.resync.synced())
            continue;
        const bool with_data =
            (served == 0 || addr == served) && !(asks_link && serves_in_turn());
        // A peer waiting for its turn keeps its link, also one that only sends to us
        // (its turn is our acknowledgement alone): broken as idle between its turns,
        // it would make a new link at each.
        if (!with_data &&
            (has_link_work(addr) || (cfg.exchange_bound_per_turn && p.sends_to_us &&
                                     now - p.last_heard <= cfg.network_memory_s)))
            note_activity(addr, now);
        if (bare_turn && addr != served)
            continue;
        const size_t before = b.frames().size();
        bool sent_data = false;
        add_arq(b, p, true, sent_data, with_data);
        add_arq(b, p, false, sent_data, with_data && !expedited_only);
        if (b.frames().size() > before) {
            if (auto eow = p.drc->take_eow(now)) {
                for (size_t i = before; i < b.frames().size(); ++i)
                    if (b.frames()[i].type != dpdu_type::management) {
                        b.frames()[i].eow = eow->first;
                        b.frames()[i].eow_content = eow->second;
                        break;
                    }
            }
        }
        if (sent_data)
            b.answer_expected.insert(&p);
    }
    add_non_arq(b);
    // The turn's clock starts with the first burst that serves the peer: a burst that
    // asks another node for a link (and the answer it draws) is no time of this turn.
    // Such bursts are what serve_in_turn_by_bursts counts.
    if (served != 0 && served == serving && !(asks_link && serves_in_turn()) &&
        std::any_of(b.frames().begin(), b.frames().end(), [&](const dpdu& d) {
            return d.destination == served;
        })) {
        turn_bursts += 1;
        if (!turn_clock_running) {
            turn_clock_running = true;
            serving_since = std::min(now, turn_begun_at + turn_length());
        }
    }
    // The turn is given only by a burst to the peer alone: beside a C_PDU for another
    // node (our answer to its call) the peer takes it for another's turn and waits, and
    // the turn would count as one it left unanswered. Counted from the first since we
    // last heard it.
    if (bare_turn &&
        std::all_of(b.frames().begin(), b.frames().end(), [&](const dpdu& d) {
            return d.destination == served;
        })) {
        peer_state& p = peer(served);
        p.bare_turns_unanswered =
            p.bare_turn_at > p.last_heard ? p.bare_turns_unanswered + 1 : 1;
        p.bare_turn_at = now;
    }

    node_transmission t;
    t.mode = mode;
    t.start = now;
    if (b.frames().empty())
        return t;
    stamp_eot(b.frames(), b.phy());
    t.burst.reserve(b.bytes());
    for (auto& d : b.frames()) {
        const size_t before = t.burst.size();
        encode_into(d, t.burst);
        t.dpdu_sizes.push_back(t.burst.size() - before);
    }
    t.air_time_s = air_time(b.phy(), t.burst.size());
    std::set<uint32_t> addressed, connection;
    for (auto& d : b.frames()) {
        if (is_group(d.destination))
            continue;
        addressed.insert(d.destination);
        if (d.type != dpdu_type::non_arq_data &&
            d.type != dpdu_type::expedited_non_arq_data)
            connection.insert(d.destination);
    }
    for (uint32_t a : addressed) {
        auto it = peers.find(a);
        if (it != peers.end()) {
            it->second->last_exchange = now + t.air_time_s;
            it->second->asked_beside_others = false;
        }
    }
    for (uint32_t a : connection)
        note_activity(a, now + t.air_time_s); // the link is busy until the end
    // Serving in turn, a burst that turned to a peer with no more than an
    // acknowledgement still gives it the channel: it may answer with data at once.
    if (cfg.exchange_bound_per_turn && served != 0 && connection.count(served) &&
        !std::any_of(b.answer_expected.begin(),
                     b.answer_expected.end(),
                     [&](const peer_state* p) { return p->address == served; })) {
        ack_turn_held = bare_turn && cfg.turns_by_acknowledgement;
        turn_held_until = now + t.air_time_s +
                          (ack_turn_held ? cfg.ack_turn_answer_wait_s
                                         : answer_wait(peer(served), b.phy()));
    }
    // Answers are awaited from the end of this burst; past the fairness bound the peer
    // may have to wait its turn for the channel first.
    // A peer serving in turn may leave the gap of a turn change before answering,
    // however it counts the exchange itself.
    const double contention =
        exchange_bound_reached(now + t.air_time_s, false) ? contention_wait_max() : 0.0;
    for (peer_state* p : b.answer_expected) {
        p->awaiting_response = true;
        // The peer whose turn it is answers at once when it knows we serve in turn,
        // else after its contention: the channel is its either way.
        p->answer_contends =
            contention > 0 && !(cfg.exchange_bound_per_turn && served != 0 &&
                                p->address == served && serves_in_turn());
        p->response_deadline = now + t.air_time_s + answer_wait(*p, b.phy()) + contention;
        p->asked.transmission = counters.transmissions + 1; // try_transmit counts it
        p->asked.until = now + t.air_time_s;
        std::tie(p->asked.regular_before, p->asked.expedited_before) = serials_before[p];
    }
    for (uint32_t a : b.requests_with_data)
        cas.request_on_air_until(a, now + t.air_time_s);
    if (cfg.link_request_holds_channel)
        promise_link_answers(b, requests_sent, t.air_time_s);
    return t;
}

void node_engine::impl::promise_link_answers(const burst_builder& b,
                                             const std::set<uint32_t>& requested,
                                             double air_time_s)
{
    // On a network the called node answers our request at once, unless the burst also
    // asked another node for an answer (then it contends, node_engine_reception.cc).
    // Our next burst, to another peer, would meet that answer: the link would be up at
    // the called node's end and not at ours.
    for (uint32_t addr : requested) {
        const bool all_sent = std::none_of(
            expedited_pending.begin(),
            expedited_pending.end(),
            [&](const pending_dpdu& pd) { return pd.frame.destination == addr; });
        const bool asks_others =
            std::any_of(b.frames().begin(), b.frames().end(), [&](const dpdu& d) {
                return d.destination != addr && !is_group(d.destination) &&
                       (is_arq_data(d.type) ||
                        d.type == dpdu_type::expedited_non_arq_data);
            });
        if (!all_sent || asks_others)
            continue;
        peer_state& p = peer(addr);
        p.link_asked_at = now;
        p.link_answer_until = now + air_time_s + answer_wait(b.phy());
    }
}

void node_engine::impl::hold_answers(
    const std::function<double(const peer_state&)>& until)
{
    for (auto& [addr, p] : peers)
        if (p->awaiting_response)
            p->response_deadline = std::max(p->response_deadline, until(*p));
}

double node_engine::impl::answer_wait(const peer_state& p,
                                      const phy::waveform_timing& phy) const
{
    double w = answer_wait(phy);
    // The called side waits longer, so after a lost burst the caller speaks first.
    if (!p.made_by_us)
        w += cfg.response_margin_s;
    return w;
}

double node_engine::impl::answer_wait(const phy::waveform_timing& phy) const
{
    return 2 * cfg.turnaround_s + air_time(phy, typical_answer_bytes) +
           cfg.response_margin_s;
}

} // namespace dl
} // namespace hfstack
} // namespace gr
