/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

/* Hard-link manager: see hard_link.h for the Annex A rules applied. */
#include "hard_link.h"

#include <algorithm>
#include <limits>

namespace gr {
namespace hfstack {
namespace dl {

namespace {

constexpr uint32_t group_flag = 0x10000000u; // bit 28 of sis_address::address

sis_address address_of(uint32_t peer)
{
    sis_address a;
    a.address = peer;
    return a;
}

// A.3.2.2.1: does a request (rank, priority, type, peer) take precedence over `old`?
bool takes_precedence(uint8_t rank,
                      uint8_t priority,
                      hard_link_type type,
                      uint32_t peer,
                      const hard_link_info& old)
{
    if (rank != old.rank)
        return rank > old.rank; // rule 1
    if (priority != old.priority)
        return priority > old.priority; // rule 2
    if (peer != old.peer)
        return false;                         // rule 3: the link processed first wins
    return uint8_t(type) > uint8_t(old.type); // rule 4
}

} // namespace

hard_link_manager::hard_link_manager(hard_link_config config, const sap_table* saps)
    : d_config(config), d_saps(saps)
{
}

uint8_t hard_link_manager::rank_of_sap(uint8_t sap) const
{
    if (d_saps) {
        if (const sap_binding* b = d_saps->by_sap(sap))
            return b->rank;
    }
    return d_config.default_called_rank;
}

bool hard_link_manager::sap_bound(uint8_t sap) const
{
    return !d_saps || d_saps->by_sap(sap) != nullptr;
}

std::optional<uint32_t> hard_link_manager::client_of_sap(uint8_t sap) const
{
    if (d_saps) {
        if (const sap_binding* b = d_saps->by_sap(sap))
            return b->client;
    }
    return std::nullopt;
}

void hard_link_manager::send(uint32_t peer, spdu pdu)
{
    d_spdus.push_back({ peer, std::move(pdu) });
}

void hard_link_manager::tell(uint32_t client,
                             sis_type type,
                             uint8_t reason,
                             const hard_link_info& l)
{
    client_message m = make_client_message(client, type, reason);
    if (type == sis_type::hard_link_established || type == sis_type::hard_link_indication)
        m.primitive.remote_status = 1; // OK (A.2.1.8 (4),(5))
    m.primitive.link_type = l.type;
    m.primitive.link_priority = l.priority;
    m.primitive.remote_sap = l.remote_sap;
    m.primitive.remote = l.remote;
    d_messages.push_back(std::move(m));
}

void hard_link_manager::reject_local(uint32_t client,
                                     const sis_primitive& request,
                                     sis_hard_link_rejected_reason reason)
{
    client_message m =
        make_client_message(client, sis_type::hard_link_rejected, uint8_t(reason));
    m.primitive.link_type = request.link_type;
    m.primitive.link_priority = request.link_priority;
    m.primitive.remote_sap = request.remote_sap;
    m.primitive.remote = request.remote;
    d_messages.push_back(std::move(m));
    ++d_counters.rejected_local;
}

void hard_link_manager::reject_remote(uint32_t peer, hard_link_reject_reason reason)
{
    spdu s;
    s.type = spdu_type::hard_link_establishment_rejected;
    s.reason = uint8_t(reason);
    send(peer, std::move(s));
    ++d_counters.rejected_remote;
}

void hard_link_manager::start_closing(uint8_t reason, bool owner_told, double now)
{
    const hard_link_info& l = *d_link;
    spdu s;
    s.type = spdu_type::hard_link_terminate;
    s.reason = reason;
    send(l.peer, std::move(s));
    closing c;
    c.peer = l.peer;
    c.deadline = now + d_config.terminate_timeout;
    c.link = l;
    c.owner_told = owner_told || !l.client;
    if (l.state == hard_link_state::established)
        ++d_counters.terminated;
    d_closing.push_back(std::move(c));
    d_link.reset();
}

void hard_link_manager::end_current(sis_hard_link_terminated_reason reason)
{
    const hard_link_info& l = *d_link;
    if (l.state == hard_link_state::established) {
        if (l.client)
            tell(*l.client, sis_type::hard_link_terminated, uint8_t(reason), l);
        ++d_counters.terminated;
    }
    d_link.reset();
}

void hard_link_manager::preempt_current(uint32_t new_peer, double now)
{
    hard_link_info& l = *d_link;
    ++d_counters.preempted;
    const auto reason2 =
        uint8_t(hard_link_terminate_reason::higher_priority_link_requested);
    switch (l.state) {
    case hard_link_state::established:
        if (l.client)
            tell(*l.client,
                 sis_type::hard_link_terminated,
                 uint8_t(sis_hard_link_terminated_reason::higher_priority_link_requested),
                 l);
        if (l.peer == new_peer) { // the peer itself replaces the link: nothing to send
            ++d_counters.terminated;
            d_link.reset();
        } else {
            start_closing(reason2, true, now);
        }
        break;
    case hard_link_state::requesting: {
        tell(*l.client,
             sis_type::hard_link_rejected,
             uint8_t(sis_hard_link_rejected_reason::higher_priority_link_exists),
             l);
        ++d_counters.rejected_local;
        // The peer may already hold its end: cancel it (unless it is the new requester).
        if (l.peer == new_peer)
            d_link.reset();
        else
            start_closing(reason2, true, now);
        break;
    }
    case hard_link_state::awaiting_client:
        reject_remote(l.peer, hard_link_reject_reason::higher_priority_link_existing);
        d_link.reset();
        break;
    }
}

void hard_link_manager::on_establish(uint32_t client,
                                     uint8_t client_sap,
                                     const sis_primitive& req,
                                     double now)
{
    ++d_counters.requests_local;
    const uint32_t peer = req.remote.address;
    // A.2.1.6 (3),(7), A.2.2 (3): only values and addresses the standard defines.
    if (uint8_t(req.link_type) > 2 || req.link_priority > 3 || (peer & group_flag) ||
        client_sap > 15 || req.remote_sap > 15) {
        reject_local(client, req, sis_hard_link_rejected_reason(0));
        return;
    }
    const uint8_t rank = rank_of_sap(client_sap);
    if (d_link) {
        if (!takes_precedence(rank, req.link_priority, req.link_type, peer, *d_link)) {
            const hard_link_info& old = *d_link;
            const bool type0_exists = req.link_type == hard_link_type::link_reservation &&
                                      old.peer == peer && old.rank == rank &&
                                      old.priority == req.link_priority;
            reject_local(
                client,
                req,
                type0_exists
                    ? sis_hard_link_rejected_reason::type0_link_exists
                    : sis_hard_link_rejected_reason::higher_priority_link_exists);
            return;
        }
        preempt_current(/*new_peer=*/std::numeric_limits<uint32_t>::max(), now);
    }
    hard_link_info l;
    l.peer = peer;
    l.remote = req.remote;
    l.type = req.link_type;
    l.priority = req.link_priority;
    l.rank = rank;
    l.role = hard_link_role::caller;
    l.state = hard_link_state::requesting;
    l.client = client;
    l.local_sap = client_sap;
    l.remote_sap = req.remote_sap;
    d_link = l;
    d_deadline = now + d_config.response_timeout;

    spdu s;
    s.type = spdu_type::hard_link_establishment_request;
    s.link_type = uint8_t(req.link_type);
    s.link_priority = req.link_priority;
    s.requesting_sap = client_sap;
    // A.3.1.4 (6): REMOTE SAP ID meaningful for type 2 only; 0 otherwise.
    s.remote_sap =
        req.link_type == hard_link_type::full_bandwidth_reservation ? req.remote_sap : 0;
    send(peer, std::move(s));
}

void hard_link_manager::on_terminate(uint32_t client, double now)
{
    if (!d_link || !d_link->client || *d_link->client != client) {
        ++d_counters.ignored; // A.2.1.7 (2): only the link's own client may end it
        return;
    }
    if (d_link->state == hard_link_state::awaiting_client) {
        // Not accepted yet: a terminate from the asked client counts as a refusal.
        reject_remote(d_link->peer, hard_link_reject_reason::remote_node_busy);
        d_link.reset();
        return;
    }
    // A cancelled request was never granted: nothing to report if the peer is silent.
    const bool pending = d_link->state == hard_link_state::requesting;
    start_closing(uint8_t(hard_link_terminate_reason::client_request), pending, now);
}

void hard_link_manager::on_client_gone(uint32_t client, double now)
{
    // Terminations it started no longer need reporting.
    for (auto& c : d_closing)
        if (c.link.client && *c.link.client == client)
            c.owner_told = true;
    if (!d_link || !d_link->client || *d_link->client != client)
        return;
    if (d_link->state == hard_link_state::awaiting_client) {
        reject_remote(d_link->peer, hard_link_reject_reason::destination_sap_not_bound);
        d_link.reset();
        return;
    }
    const auto reason = d_link->role == hard_link_role::called
                            ? hard_link_terminate_reason::destination_sap_unbound
                            : hard_link_terminate_reason::client_request;
    start_closing(uint8_t(reason), true, now);
}

void hard_link_manager::on_client_answer(uint32_t client,
                                         const sis_primitive& answer,
                                         double now)
{
    (void)now;
    if (!d_link || d_link->state != hard_link_state::awaiting_client || !d_link->client ||
        *d_link->client != client) {
        ++d_counters.ignored;
        return;
    }
    if (answer.type == sis_type::hard_link_accept) {
        d_link->state = hard_link_state::established;
        ++d_counters.established;
        spdu s;
        s.type = spdu_type::hard_link_establishment_confirm;
        send(d_link->peer, std::move(s));
    } else if (answer.type == sis_type::hard_link_reject) {
        auto reason = hard_link_reject_reason::remote_node_busy;
        if (answer.reason >= 1 && answer.reason <= 4)
            reason = hard_link_reject_reason(answer.reason);
        reject_remote(d_link->peer, reason);
        d_link.reset();
    } else {
        ++d_counters.ignored;
    }
}

void hard_link_manager::on_spdu(uint32_t peer, const spdu& pdu, double now)
{
    switch (pdu.type) {
    case spdu_type::hard_link_establishment_request: {
        ++d_counters.requests_remote;
        if (pdu.link_type > 2 || pdu.link_priority > 3) {
            ++d_counters.ignored;
            return;
        }
        const auto type = hard_link_type(pdu.link_type);
        const bool type2 = type == hard_link_type::full_bandwidth_reservation;
        // A.3.2.2.2 (18)
        if (type2 && !sap_bound(pdu.remote_sap)) {
            reject_remote(peer, hard_link_reject_reason::destination_sap_not_bound);
            return;
        }
        // A.3.2.2.2 (19)
        const uint8_t rank =
            type2 ? rank_of_sap(pdu.remote_sap) : d_config.default_called_rank;
        if (d_link) {
            const bool same_peer_held =
                d_link->peer == peer && d_link->state != hard_link_state::requesting;
            if (same_peer_held) {
                // The peer keeps one link only: it has given up the old one.
                if (d_link->state == hard_link_state::established && d_link->client)
                    tell(*d_link->client,
                         sis_type::hard_link_terminated,
                         uint8_t(sis_hard_link_terminated_reason::terminated_by_remote),
                         *d_link);
                if (d_link->state == hard_link_state::established)
                    ++d_counters.terminated;
                d_link.reset();
            } else if (!takes_precedence(rank, pdu.link_priority, type, peer, *d_link)) {
                // A.3.2.2.2 (21)
                const bool tie =
                    d_link->rank == rank && d_link->priority == pdu.link_priority;
                reject_remote(
                    peer,
                    tie ? hard_link_reject_reason::remote_node_busy
                        : hard_link_reject_reason::higher_priority_link_existing);
                return;
            } else {
                preempt_current(peer, now);
            }
        }
        hard_link_info l;
        l.peer = peer;
        l.remote = address_of(peer);
        l.type = type;
        l.priority = pdu.link_priority;
        l.rank = rank;
        l.role = hard_link_role::called;
        l.remote_sap = pdu.requesting_sap;
        if (type2) {
            // A.3.2.2.2 (23): ask the client bound to the called SAP.
            l.local_sap = pdu.remote_sap;
            l.client = client_of_sap(pdu.remote_sap);
            if (!l.client) {
                // No table to find the client in: nobody can be asked.
                reject_remote(peer, hard_link_reject_reason::destination_sap_not_bound);
                return;
            }
            l.state = hard_link_state::awaiting_client;
            d_link = l;
            d_deadline = now + d_config.accept_timeout;
            tell(*l.client, sis_type::hard_link_indication, 0, l);
        } else {
            // A.3.2.2.2 (22)
            l.state = hard_link_state::established;
            d_link = l;
            ++d_counters.established;
            spdu s;
            s.type = spdu_type::hard_link_establishment_confirm;
            send(peer, std::move(s));
        }
        return;
    }
    case spdu_type::hard_link_establishment_confirm:
        if (d_link && d_link->peer == peer &&
            d_link->state == hard_link_state::requesting) {
            d_link->state = hard_link_state::established; // A.3.2.2.2 (14)
            ++d_counters.established;
            tell(*d_link->client, sis_type::hard_link_established, 0, *d_link);
        } else {
            // Late or stray: make sure the peer does not keep a link nobody owns.
            ++d_counters.ignored;
            spdu s;
            s.type = spdu_type::hard_link_terminate;
            s.reason = uint8_t(hard_link_terminate_reason::client_request);
            send(peer, std::move(s));
            closing c;
            c.peer = peer;
            c.deadline = now + d_config.terminate_timeout;
            c.link.peer = peer;
            c.owner_told = true;
            d_closing.push_back(std::move(c));
        }
        return;
    case spdu_type::hard_link_establishment_rejected:
        if (d_link && d_link->peer == peer &&
            d_link->state == hard_link_state::requesting) {
            // A.3.2.2.2 (13): the peer's reason, as received.
            tell(*d_link->client, sis_type::hard_link_rejected, pdu.reason, *d_link);
            ++d_counters.rejected_local;
            d_link.reset();
        } else {
            ++d_counters.ignored;
        }
        return;
    case spdu_type::hard_link_terminate: {
        // A.3.2.2.3 (3)
        spdu s;
        s.type = spdu_type::hard_link_terminate_confirm;
        send(peer, std::move(s));
        // Crossing TERMINATEs: ours is answered too.
        for (auto it = d_closing.begin(); it != d_closing.end();) {
            if (it->peer == peer)
                it = d_closing.erase(it);
            else
                ++it;
        }
        if (!d_link || d_link->peer != peer)
            return;
        if (d_link->state == hard_link_state::requesting) {
            tell(*d_link->client,
                 sis_type::hard_link_rejected,
                 pdu.reason ==
                         uint8_t(
                             hard_link_terminate_reason::higher_priority_link_requested)
                     ? uint8_t(sis_hard_link_rejected_reason::higher_priority_link_exists)
                     : uint8_t(sis_hard_link_rejected_reason::remote_busy),
                 *d_link);
            ++d_counters.rejected_local;
            d_link.reset();
            return;
        }
        if (d_link->state == hard_link_state::awaiting_client) {
            d_link.reset(); // the caller gave up before the client answered
            return;
        }
        auto reason = sis_hard_link_terminated_reason::terminated_by_remote;
        if (pdu.reason ==
            uint8_t(hard_link_terminate_reason::higher_priority_link_requested))
            reason = sis_hard_link_terminated_reason::higher_priority_link_requested;
        else if (pdu.reason ==
                 uint8_t(hard_link_terminate_reason::destination_sap_unbound))
            reason = sis_hard_link_terminated_reason::destination_sap_not_bound;
        end_current(reason);
        return;
    }
    case spdu_type::hard_link_terminate_confirm: {
        const auto before = d_closing.size();
        d_closing.erase(std::remove_if(d_closing.begin(),
                                       d_closing.end(),
                                       [&](const closing& c) { return c.peer == peer; }),
                        d_closing.end());
        if (d_closing.size() == before)
            ++d_counters.ignored;
        return;
    }
    default:
        ++d_counters.ignored;
        return;
    }
}

void hard_link_manager::on_link_lost(uint32_t peer, double now)
{
    (void)now;
    // Terminations in progress with that peer end now (A.3.2.2.3 (7),(8)).
    for (auto it = d_closing.begin(); it != d_closing.end();) {
        if (it->peer != peer) {
            ++it;
            continue;
        }
        if (!it->owner_told && it->link.client)
            tell(*it->link.client,
                 sis_type::hard_link_terminated,
                 uint8_t(sis_hard_link_terminated_reason::physical_link_broken),
                 it->link);
        it = d_closing.erase(it);
    }
    if (!d_link || d_link->peer != peer)
        return;
    ++d_counters.links_lost;
    switch (d_link->state) {
    case hard_link_state::requesting:
        tell(*d_link->client,
             sis_type::hard_link_rejected,
             uint8_t(sis_hard_link_rejected_reason::remote_not_responding),
             *d_link);
        ++d_counters.rejected_local;
        d_link.reset();
        break;
    case hard_link_state::awaiting_client:
        d_link.reset();
        break;
    case hard_link_state::established:
        end_current(sis_hard_link_terminated_reason::physical_link_broken);
        break;
    }
}

void hard_link_manager::on_timer(double now)
{
    if (d_link && d_link->state != hard_link_state::established && now >= d_deadline) {
        ++d_counters.timeouts;
        if (d_link->state == hard_link_state::requesting) {
            // A.3.2.2.2 (15)
            tell(*d_link->client,
                 sis_type::hard_link_rejected,
                 uint8_t(sis_hard_link_rejected_reason::remote_not_responding),
                 *d_link);
            ++d_counters.rejected_local;
        } else {
            // A.3.2.2.2 (24): the asked client did not answer in time.
            reject_remote(d_link->peer,
                          hard_link_reject_reason::remote_node_not_responding);
        }
        d_link.reset();
    }
    for (auto it = d_closing.begin(); it != d_closing.end();) {
        if (now < it->deadline) {
            ++it;
            continue;
        }
        ++d_counters.timeouts;
        // A.3.2.2.3 (5)
        if (!it->owner_told && it->link.client)
            tell(*it->link.client,
                 sis_type::hard_link_terminated,
                 uint8_t(sis_hard_link_terminated_reason::remote_not_responding),
                 it->link);
        it = d_closing.erase(it);
    }
}

std::vector<client_message> hard_link_manager::take_client_messages()
{
    std::vector<client_message> out;
    out.swap(d_messages);
    return out;
}

std::vector<hard_link_spdu> hard_link_manager::take_spdus()
{
    std::vector<hard_link_spdu> out;
    out.swap(d_spdus);
    return out;
}

bool hard_link_manager::may_use(uint8_t local_sap,
                                uint32_t destination,
                                uint8_t destination_sap) const
{
    if (!d_link || d_link->state != hard_link_state::established)
        return true;
    const hard_link_info& l = *d_link;
    if (destination != l.peer)
        return false;
    switch (l.type) {
    case hard_link_type::link_reservation:
        return true;
    case hard_link_type::partial_bandwidth_reservation:
        // The owning client is the local one (caller) or the peer's requester (called).
        return l.role == hard_link_role::caller ? local_sap == l.local_sap
                                                : destination_sap == l.remote_sap;
    case hard_link_type::full_bandwidth_reservation:
        return local_sap == l.local_sap && destination_sap == l.remote_sap;
    }
    return false;
}

double hard_link_manager::next_deadline() const
{
    double t = std::numeric_limits<double>::infinity();
    if (d_link && d_link->state != hard_link_state::established)
        t = std::min(t, d_deadline);
    for (const auto& c : d_closing)
        t = std::min(t, c.deadline);
    return t;
}

} // namespace dl
} // namespace hfstack
} // namespace gr
