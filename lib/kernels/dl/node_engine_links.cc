/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

/* Links of the node engine: CAS-1 and hard-link events, data rate change events, TTL
 * expiry, response time-outs, making, sharing and releasing links, idle links. See
 * node_engine_impl.h. */
#include "node_engine_impl.h"

#include <algorithm>
#include <tuple>

namespace gr {
namespace hfstack {
namespace dl {

void node_engine::impl::note_activity(uint32_t addr, double t)
{
    auto it = peers.find(addr);
    if (it == peers.end())
        return;
    it->second->last_activity = std::max(it->second->last_activity, t);
    it->second->data_seen = true;
}

double node_engine::impl::idle_deadline(const peer_state& p) const
{
    const double limit =
        (p.data_seen || p.made_by_us) ? cfg.cas.idle_timeout : cfg.cas.first_data_timeout;
    return p.last_activity + limit;
}

double node_engine::impl::idle_break_time(const peer_state& p) const
{
    if (cs.carrier() || has_link_work(p.address) || p.awaiting_response)
        return inf;
    return std::max(idle_deadline(p),
                    carrier_ended + cfg.turnaround_s + cfg.response_margin_s);
}

void node_engine::impl::break_idle_links()
{
    for (uint32_t addr : cas.up_peers())
        if (now >= idle_break_time(peer(addr)))
            cas.release(addr, physical_link_break_reason::no_more_data, now);
}

double node_engine::impl::link_backoff(unsigned failures) const
{
    const unsigned doublings = std::min(failures > 0 ? failures - 1 : 0u, 16u);
    return std::min(cfg.link_retry_max_s, cfg.link_retry_s * double(1u << doublings));
}

void node_engine::impl::hold_off_retry()
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
        wait = std::uniform_real_distribution<double>(ca.backoff_min_s,
                                                      ca.backoff_max_s)(retry_rng);
        break;
    }
    retry_not_before = std::max(retry_not_before, now + wait);
}

void node_engine::impl::process_cas_events()
{
    for (auto& e : cas.take_events()) {
        peer_state& p = peer(e.peer);
        switch (e.type) {
        case cas_event_type::link_up:
            p.link_up_at = now;
            if (cfg.turned_away_cleared_at_link_up)
                p.turned_away = false;
            p.failed_links = 0;
            p.made_by_us = e.cause == cas_cause::made_by_us;
            p.last_activity = now;
            p.data_seen = false;
            p.consecutive_timeouts = 0;
            end_exchange(p);
            if (cas.long_fsn(e.peer) != p.lfsn)
                set_long_fsn(p, cas.long_fsn(e.peer));
            p.drc->reset(now);
            p.tx.set_segment_size(segment_for(p.drc->tx_mode()));
            p.tx_exp.set_segment_size(segment_for(p.drc->tx_mode()));
            if (!p.resync.synced() && has_arq_work(p))
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
            p.turned_away = false;
            p.serves_us = false;
            p.sends_to_us = false;
            p.resync.on_link_down();
            end_exchange(p);
            if (e.cause != cas_cause::superseded)
                hard.on_link_lost(e.peer, now);
            break;
        }
    }
}

void node_engine::impl::process_hard_link()
{
    for (auto& s : hard.take_spdus())
        control_spdus[s.peer].push_back(
            { std::move(s.pdu),
              now + std::max({ cfg.hard_link.response_timeout,
                               cfg.hard_link.accept_timeout,
                               cfg.hard_link.terminate_timeout }) });
    for (auto& m : hard.take_client_messages())
        actions.to_clients.push_back(std::move(m));
}

void node_engine::impl::process_drc_events(peer_state& p)
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

void node_engine::impl::expire(double t)
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

void node_engine::impl::give_up_verdicts(peer_state& p)
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
    p.early_client_answers.clear();
}

void node_engine::impl::check_response_timeouts()
{
    for (auto& [addr, p] : peers) {
        if (!p->awaiting_response || now < p->response_deadline)
            continue;
        if (cs.carrier()) // someone is still talking: the answer may be in it
            continue;
        end_exchange(*p);
        p->consecutive_timeouts += 1;
        counters.response_timeouts += 1;
        if (p->policy && cfg.rate_policy.unanswered_step_down > 0 && link_up(addr)) {
            p->drc->step_down_unanswered(
                p->policy->more_robust(p->drc->tx_mode(),
                                       cfg.rate_policy.unanswered_step_down),
                now);
            process_drc_events(*p);
        }
        // A first lost answer is repeated at once all the same: the repeat continues the
        // exchange (any_response_owed), which no hold-off delays.
        hold_off_retry();
        if (p->consecutive_timeouts >= cfg.max_response_timeouts && link_up(addr)) {
            // The node stopped answering: give the link up; data stays queued and
            // the link is made again when it answers.
            p->consecutive_timeouts = 0;
            cas.release(addr, physical_link_break_reason::unknown, now);
        }
    }
}

bool node_engine::impl::has_arq_work(const peer_state& p) const
{
    return !p.tx.idle() || !p.tx_exp.idle() || arq_queued_by_peer.count(p.address) ||
           control_spdus.count(p.address);
}

bool node_engine::impl::has_expedited_work(uint32_t addr) const
{
    if (expedited_queued_by_peer.count(addr) || control_spdus.count(addr))
        return true;
    auto it = peers.find(addr);
    return it != peers.end() &&
           (!it->second->tx_exp.idle() || it->second->rx_exp.ack_due());
}

bool node_engine::impl::has_link_work(uint32_t addr) const
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
           p.resync.request_due() || !p.resync.acks_owed().empty();
}

double node_engine::impl::data_hold_until(const peer_state& p) const
{
    if (!cfg.data_with_link_request || p.resync.synced() || p.waiting_since == inf)
        return -inf;
    return p.waiting_since + cfg.link_request_hold_s;
}

void node_engine::impl::manage_links()
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
        live_wanted =
            live_wanted || (!suspect(addr) && cas.state(addr) == cas_link_state::idle &&
                            (it == peers.end() || now >= it->second->link_retry_at));
    }
    // The longest a live peer we have data for has waited for a link.
    double longest_wait = 0;
    // A live peer without a link that we have expedited data for: it never waits
    // behind regular data, so a link carrying none gives way at once.
    bool expedited_waiting = false;
    for (uint32_t addr : wanted) {
        auto it = peers.find(addr);
        if (it != peers.end() && !suspect(addr) &&
            cas.state(addr) == cas_link_state::idle) {
            longest_wait = std::max(longest_wait, now - it->second->waiting_since);
            expedited_waiting = expedited_waiting || has_expedited_work(addr);
        }
    }
    // A peer whose link made way for a waiting one may call again once our request to
    // that one (or another link) holds the slot it freed, or nobody waits any more.
    size_t held_by_others = 0;
    for (auto& [addr, p] : peers)
        held_by_others +=
            cas.state(addr) != cas_link_state::idle && !p->refused_for_waiting;
    const bool slot_retaken =
        held_by_others >= std::max(1u, cfg.cas.max_nonexclusive_links);
    for (auto& [addr, p] : peers)
        if (p->refused_for_waiting && (slot_retaken || !live_wanted)) {
            p->refused_for_waiting = false;
            cas.refuse_requests_until(addr, now);
        }
    // Heard other stations (not only data queued for an absent one, which is what
    // probes are for).
    const bool network = heard_network();
    // Links with nothing left to do make way for a live node that is waiting; and,
    // past cas.yield_link_after_s, so does a link with work, for one that has waited
    // as long (the fairness bound between the peers of one node). A link carrying
    // expedited data is kept until they are through: released, they would wait for
    // the link to be made again.
    size_t busy = 0;
    bool probing = false;
    // A link with work gives way only when it holds the last free slot.
    size_t links_held = 0;
    for (auto& [addr, p] : peers)
        links_held += cas.state(addr) != cas_link_state::idle;
    const bool slots_full = links_held >= link_slots();
    for (auto& [addr, p] : peers) {
        const auto st = cas.state(addr);
        if (st == cas_link_state::idle)
            continue;
        // A request unanswered for a whole response timeout is a probe too; not on a
        // network, where it was most often lost in a collision: a second request
        // beside it could then be answered too, and both peers would answer at once.
        // The sum, not the difference: it is the CAS's own deadline to the last bit,
        // so a step run as of that deadline sees the request unanswered whatever the
        // clock's origin (now - requested_at rounds below the timeout for some times).
        if (st == cas_link_state::requesting &&
            (p->failed_links > 0 ||
             (!network && now >= p->link_requested_at + cfg.cas.response_timeout))) {
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
        } else if (st == cas_link_state::up && !cas.exclusive(addr) && live_wanted &&
                   slots_full && !p->awaiting_response && !has_expedited_work(addr) &&
                   (expedited_waiting ||
                    (now - p->link_up_at >= cfg.cas.yield_link_after_s &&
                     longest_wait >= cfg.cas.yield_link_after_s))) {
            cas.release(addr,
                        physical_link_break_reason::higher_priority_link_request_pending,
                        now);
            p->made_way_at = now;
            counters.links_yielded += 1;
            p->refused_for_waiting = true;
            cas.refuse_requests_until(addr, inf);
        }
    }
    // Live peers in the order they began waiting: a link released to make way for
    // one peer is not taken back by the peer that just released it.
    for (auto& [addr, p] : peers)
        if (!wanted.count(addr) || cas.state(addr) == cas_link_state::up)
            p->waiting_since = inf;
    for (uint32_t addr : wanted)
        if (addr != cfg.address && !is_group(addr) &&
            cas.state(addr) != cas_link_state::up)
            peer(addr).waiting_since = std::min(peer(addr).waiting_since, now);
    std::vector<uint32_t> order(wanted.begin(), wanted.end());
    // Sort key: suspects last, then longest waiting; of peers waiting since the same
    // moment, one that made way then comes after those it made way for.
    const auto key = [&](uint32_t addr) {
        auto it = peers.find(addr);
        if (it == peers.end())
            return std::make_tuple(false, now, false);
        const peer_state& p = *it->second;
        return std::make_tuple(
            p.failed_links > 0, p.waiting_since, p.made_way_at >= p.waiting_since);
    };
    std::stable_sort(order.begin(), order.end(), [&](uint32_t x, uint32_t y) {
        return key(x) < key(y);
    });
    size_t requesting = 0;
    for (auto& [addr, p] : peers)
        requesting += cas.state(addr) == cas_link_state::requesting;
    // On a network, one link request at a time: peers that accept two requests of one
    // burst would both answer it at once. With several link slots, also while data for
    // several peers is all we know of the network.
    const bool one_request = network || (link_slots() > 1 && network_in_use());
    if (one_request && requesting > 0)
        return;
    for (uint32_t addr : order) {
        if (addr == cfg.address || is_group(addr) ||
            cas.state(addr) != cas_link_state::idle)
            continue;
        peer_state& p = peer(addr);
        if (now < p.link_retry_at || now < data_hold_until(p))
            continue;
        bool probe = p.failed_links > 0;
        // A node that has not heard the network keeps one link (link_slots); a peer
        // waiting beside it once that link is up is asked at once as a probe, holding
        // no slot, not after the link yields (cas.yield_link_after_s, as long as an IP
        // datagram lives): an absent peer costs the link no more than a probe, and one
        // that answers makes the network heard, and both links are kept. Not while a
        // request of ours is out: its answer and the probe's would meet.
        if (!probe && busy >= link_slots() && requesting == 0 &&
            link_slots() < cfg.cas.max_nonexclusive_links)
            probe = true;
        if (probe) {
            // On a network a probe waits for the channel's links: one that is answered
            // while another link is made would have two peers answering at once.
            // Serving in turn, a free slot takes a probe as another turn: its burst
            // carries nothing else that asks for an answer (build_transmission).
            const bool turn_free = serves_in_turn() && busy < link_slots();
            if (probing || (network && busy > 0 && !turn_free))
                continue;
            probing = true;
        } else {
            if (busy >= link_slots())
                continue;
            ++busy;
        }
        cas.request_link(addr, false, now, probe);
        ++requesting;
        p.link_requested_at = now;
        // Ask for the window reset in the same burst as the link request when the
        // windows were never agreed: saves a round trip on first contact.
        if (!p.resync.synced())
            start_reset(p);
        if (one_request && link_slots() > 1)
            return;
    }
}

} // namespace dl
} // namespace hfstack
} // namespace gr
