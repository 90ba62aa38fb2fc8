/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

/* The node engine's service loop: forgetting idle peers, running every part after an
 * input, the client actions and the next deadline. See node_engine_impl.h. */
#include "node_engine_impl.h"

#include <algorithm>

namespace gr {
namespace hfstack {
namespace dl {

void node_engine::impl::forget_idle_peers()
{
    for (auto it = peers.begin(); it != peers.end();) {
        const peer_state& p = *it->second;
        const bool idle =
            cas.state(p.address) == cas_link_state::idle && !has_link_work(p.address) &&
            p.flights.empty() && p.flights_exp.empty() && p.awaiting_client.empty() &&
            !p.resync.outstanding() && !p.warning_owed &&
            p.drc->state() == drc_state::idle &&
            now - std::max(p.last_exchange, p.link_retry_at) > forget_idle_peer_s;
        it = idle ? peers.erase(it) : std::next(it);
    }
}

void node_engine::impl::service()
{
    if (receiving_until != -inf && now >= receiving_until)
        end_received_burst(); // the modem stopped delivering without ending it
    judge_carrier();
    forget_idle_peers();
    expire(now);
    check_response_timeouts();
    judge_gap_burst_answer();
    repeat_unanswered_ack_turn();
    supervision.on_timer(now);
    drop_disconnected_clients();
    hard.on_timer(now);
    // A hard link keeps its physical link (Annex A.1.1.2).
    if (const auto& h = hard.active(); h && h->state == hard_link_state::established)
        note_activity(h->peer, now);
    break_idle_links();
    // A REQUEST still waiting for the channel is not unanswered yet: its answer is
    // awaited from when it goes on the air (on a busy network that can be long after
    // the link was asked for).
    const auto not_sent_yet = [&](uint32_t addr) {
        cas.request_on_air_until(addr, now);
        auto it = peers.find(addr);
        if (it != peers.end() && cas.state(addr) == cas_link_state::requesting)
            it->second->link_requested_at = now;
    };
    for (auto& o : cas_out)
        if (o.pdu.type == cpdu_type::physical_link_request)
            not_sent_yet(o.peer);
    for (auto& pd : expedited_pending)
        not_sent_yet(pd.frame.destination);
    cas.on_timer(now);
    const uint64_t retries =
        cas.counters().request_retries + cas.counters().break_retries;
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
                                        c.damaged - p->reported_retx,
                                        now,
                                        p->drc->rx_mode());
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

void node_engine::impl::collect_client_actions()
{
    for (auto& f : queue.take_flow_events())
        to_client_flow(f);
    drop_disconnected_clients();
    for (auto& m : hard.take_client_messages())
        actions.to_clients.push_back(std::move(m));
}

void node_engine::impl::drop_disconnected_clients()
{
    auto disconnects = supervision.take_disconnects();
    std::set<uint32_t> unbound_gone;
    for (auto& d : disconnects) {
        if (!saps.by_client(d.client))
            unbound_gone.insert(d.client);
    }
    for (auto& m : supervision.take_messages()) {
        // S_UNBIND_INDICATION only applies to a client holding a SAP.
        if (m.primitive.type == sis_type::unbind_indication &&
            unbound_gone.count(m.client))
            continue;
        actions.to_clients.push_back(std::move(m));
    }
    for (auto& d : disconnects) {
        forget_client(d.client);
        clients.erase(d.client);
        actions.disconnects.push_back(std::move(d));
    }
}

void node_engine::impl::to_client_flow(const flow_event& f)
{
    sis_primitive p;
    p.type = f.flow_on ? sis_type::data_flow_on : sis_type::data_flow_off;
    to_client(f.client, p);
}

void node_engine::impl::compute_deadline()
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
        if (const double hold = data_hold_until(*p);
            hold > now && cas.state(p->address) == cas_link_state::idle)
            d = std::min(d, hold);
    }
    // While the channel is promised to a peer, its response deadline (above) is the
    // next moment to try.
    if (now != stalled_at && wants_to_transmit() && !channel_promised()) {
        if (now < busy_until())
            d = std::min(d, busy_until());
        else {
            double gate = turn_gate();
            if (!answers_at_once())
                gate = std::max(gate, retry_not_before);
            const double cst = cs.transmit_time(now);
            d = std::min(d, std::max(gate, cst));
        }
    }
    // A turn of acknowledgements alone (nothing of ours for the served peer then) is
    // held for its answer (turn_held_until) without a response deadline: when the
    // peer sends nothing by then, the data we hold for others is due then, not at some
    // unrelated timer minutes later. So is a station's data for its one peer handed
    // over during the hold (a spoke's next datagram, queued while it acknowledged the
    // hub). A station serving several peers keeps to its turns: the served peer's new
    // data go at the next event.
    // Such a turn unanswered by then is given again (ack_turn_repeated).
    if (now < turn_held_until &&
        ((now != stalled_at && serving != 0 &&
          (!has_link_work(serving) || cas.up_peers().size() <= 1) &&
          wants_to_transmit()) ||
         (cfg.ack_turn_repeated && ack_turn_held)))
        d = std::min(d, turn_held_until);
    // A call into the turnaround after the burst just heard.
    if (wants_to_transmit() && now < turnaround_call_time() && turnaround_call_wanted())
        d = std::min(d, turnaround_call_time());
    next_deadline_cache = d;
}

} // namespace dl
} // namespace hfstack
} // namespace gr
