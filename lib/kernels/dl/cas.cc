/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

/* CAS-1 link manager: STANAG 5066 Edition 3 Annex B.3.2. See cas.h for the rules. */
#include "cas.h"

#include <stdexcept>

namespace gr {
namespace hfstack {
namespace dl {

cas_link_manager::cas_link_manager(const cas_config& cfg) : d_cfg(cfg)
{
    if (!(cfg.response_timeout > 0.0) || !(cfg.break_timeout > 0.0))
        throw std::invalid_argument(
            "cas_config: response_timeout and break_timeout must be > 0");
    if (!(cfg.idle_timeout > 0.0) || !(cfg.first_data_timeout > 0.0))
        throw std::invalid_argument("cas_config: idle_timeout and first_data_timeout "
                                    "must be > 0 (+inf disables)");
}

void cas_link_manager::send(uint32_t peer, cpdu_type t, bool exclusive, uint8_t reason)
{
    cas_outgoing o;
    o.peer = peer;
    o.pdu.type = t;
    o.pdu.exclusive_link = exclusive;
    o.pdu.reason = reason;
    // S5066-EP5: every REQUEST advertises LFSN when we support it; an ACCEPTED says
    // whether the link it makes uses it (both ends support it).
    if (t == cpdu_type::physical_link_request) {
        o.pdu.lfsn = d_cfg.large_windows;
    } else if (t == cpdu_type::physical_link_accepted) {
        auto it = d_links.find(peer);
        o.pdu.lfsn = it != d_links.end() && it->second.lfsn;
    }
    switch (t) {
    case cpdu_type::physical_link_request:
        d_counters.requests_sent++;
        break;
    case cpdu_type::physical_link_accepted:
        d_counters.accepted_sent++;
        break;
    case cpdu_type::physical_link_rejected:
        d_counters.rejected_sent++;
        break;
    case cpdu_type::physical_link_break:
        d_counters.breaks_sent++;
        break;
    case cpdu_type::physical_link_break_confirm:
        d_counters.confirms_sent++;
        break;
    default:
        break;
    }
    d_out.push_back(std::move(o));
}

void cas_link_manager::emit(
    cas_event_type t, uint32_t peer, cas_cause c, bool exclusive, uint8_t reason)
{
    cas_event e;
    e.type = t;
    e.peer = peer;
    e.cause = c;
    e.exclusive = exclusive;
    e.reason = reason;
    switch (t) {
    case cas_event_type::link_up:
        d_counters.link_setups++;
        break;
    case cas_event_type::link_failed:
        d_counters.link_failures++;
        break;
    case cas_event_type::link_down:
        d_counters.links_down++;
        break;
    }
    d_events.push_back(e);
}

std::optional<uint8_t> cas_link_manager::refusal(uint32_t peer, bool exclusive) const
{
    using r = physical_link_reject_reason;
    if (d_cfg.broadcast_only)
        return uint8_t(r::broadcast_only_node);
    if (exclusive && !d_cfg.exclusive_links_supported)
        return uint8_t(r::unknown);

    unsigned excl_up = 0, excl_req = 0, nonexcl_up = 0, nonexcl_req = 0;
    for (const auto& kv : d_links) {
        if (kv.first == peer)
            continue;
        const link& l = kv.second;
        if (l.st == cas_link_state::up)
            (l.exclusive ? excl_up : nonexcl_up)++;
        else if (l.st == cas_link_state::requesting && !l.probe)
            (l.exclusive ? excl_req : nonexcl_req)++;
    }
    if (exclusive) {
        // B.2 (7), B.3 (5), step 2 (9),(10): at most two exclusive links.
        if (excl_up + excl_req >= 2)
            return uint8_t(r::supporting_exclusive_link);
        return std::nullopt;
    }
    // B.3 (4), step 2 (6),(7).
    if (excl_up + excl_req > 0)
        return uint8_t(r::supporting_exclusive_link);
    if (nonexcl_up >= d_cfg.max_nonexclusive_links)
        return uint8_t(r::unknown);
    if (nonexcl_up + nonexcl_req >= d_cfg.max_nonexclusive_links)
        return uint8_t(r::higher_priority_link_request_pending);
    return std::nullopt;
}

void cas_link_manager::start_request(uint32_t peer, link& l, bool exclusive, double now)
{
    l.st = cas_link_state::requesting;
    l.exclusive = exclusive;
    l.probe = false;
    l.attempts = 1;
    l.deadline = now + d_cfg.response_timeout;
    l.pending_request = false;
    send(peer, cpdu_type::physical_link_request, exclusive);
}

void cas_link_manager::make_up(
    uint32_t peer, link& l, bool exclusive, bool by_us, double now)
{
    l.st = cas_link_state::up;
    l.exclusive = exclusive;
    l.probe = false;
    l.attempts = 0;
    l.pending_request = false;
    l.made_seq = ++d_seq;
    l.made_at = now;
    l.deadline = now + (by_us ? d_cfg.idle_timeout : d_cfg.first_data_timeout);
    emit(cas_event_type::link_up,
         peer,
         by_us ? cas_cause::made_by_us : cas_cause::made_by_peer,
         exclusive,
         0);
    if (by_us && exclusive) {
        // B.3.2.1 step 3 (19): the caller of an exclusive link breaks its nonexclusive
        // links.
        for (auto& kv : d_links) {
            if (kv.first != peer && kv.second.st == cas_link_state::up &&
                !kv.second.exclusive)
                start_break(kv.first,
                            kv.second,
                            uint8_t(physical_link_break_reason::unknown),
                            now);
        }
    }
}

void cas_link_manager::start_break(uint32_t peer, link& l, uint8_t reason, double now)
{
    l.st = cas_link_state::breaking;
    l.attempts = 1;
    l.break_reason = reason;
    l.cancelling = false;
    l.deadline = now + d_cfg.break_timeout;
    send(peer, cpdu_type::physical_link_break, false, reason);
}

void cas_link_manager::finish_break(uint32_t peer, link& l, cas_cause cause, double now)
{
    const bool excl = l.exclusive;
    const uint8_t reason = l.break_reason;
    const bool pending = l.pending_request;
    const bool pending_excl = l.pending_exclusive;
    const bool cancelling = l.cancelling;
    l.st = cas_link_state::idle;
    l.attempts = 0;
    l.deadline = inf;
    l.pending_request = false;
    l.cancelling = false;
    if (!cancelling) // a cancelled request already had its link_failed
        emit(cas_event_type::link_down, peer, cause, excl, reason);
    if (pending) {
        if (auto why = refusal(peer, pending_excl))
            emit(cas_event_type::link_failed,
                 peer,
                 cas_cause::local_refusal,
                 pending_excl,
                 *why);
        else
            start_request(peer, l, pending_excl, now);
    }
}

void cas_link_manager::forget_if_idle(uint32_t peer)
{
    auto it = d_links.find(peer);
    if (it != d_links.end() && it->second.st == cas_link_state::idle &&
        !it->second.pending_request)
        d_links.erase(it);
}

void cas_link_manager::mark_probe(uint32_t peer)
{
    auto it = d_links.find(peer);
    if (it != d_links.end() && it->second.st == cas_link_state::requesting)
        it->second.probe = true;
}

void cas_link_manager::request_on_air_until(uint32_t peer, double until)
{
    auto it = d_links.find(peer);
    if (it != d_links.end() && it->second.st == cas_link_state::requesting)
        it->second.deadline =
            std::max(it->second.deadline, until + d_cfg.response_timeout);
}

void cas_link_manager::request_link(uint32_t peer, bool exclusive, double now, bool probe)
{
    if (peer == d_cfg.own_address)
        throw std::invalid_argument("cas_link_manager::request_link: peer is this node");
    auto it = d_links.find(peer);
    if (it != d_links.end()) {
        link& l = it->second;
        switch (l.st) {
        case cas_link_state::up:
        case cas_link_state::requesting:
            return;
        case cas_link_state::breaking:
            l.pending_request = true;
            l.pending_exclusive = exclusive;
            return;
        case cas_link_state::idle:
            break;
        }
    }
    if (auto why = refusal(peer, exclusive)) {
        emit(
            cas_event_type::link_failed, peer, cas_cause::local_refusal, exclusive, *why);
        forget_if_idle(peer);
        return;
    }
    start_request(peer, d_links[peer], exclusive, now);
    d_links[peer].probe = probe;
}

void cas_link_manager::release(uint32_t peer,
                               physical_link_break_reason reason,
                               double now)
{
    if (!cpdu_reason_defined(cpdu_type::physical_link_break, uint8_t(reason)))
        throw std::invalid_argument("cas_link_manager::release: undefined break reason");
    auto it = d_links.find(peer);
    if (it == d_links.end())
        return;
    link& l = it->second;
    switch (l.st) {
    case cas_link_state::up:
        start_break(peer, l, uint8_t(reason), now);
        break;
    case cas_link_state::requesting:
        // The peer may already have accepted (its ACCEPTED still on the way): send one
        // BREAK for that link, then stay out of linking with this peer for one
        // break_timeout, ignoring CONFIRMs (which name no BREAK and may be stale),
        // ACCEPTEDs and refusing REQUESTs. By then every copy of the old REQUEST and
        // every answer to it has arrived, so none can be mistaken for part of a later
        // exchange with another link type.
        emit(cas_event_type::link_failed, peer, cas_cause::cancelled, l.exclusive, 0);
        start_break(peer, l, uint8_t(reason), now);
        l.cancelling = true;
        break;
    case cas_link_state::breaking:
        l.pending_request = false;
        break;
    case cas_link_state::idle:
        break;
    }
    forget_if_idle(peer);
}

void cas_link_manager::on_data_activity(uint32_t peer, double now)
{
    auto it = d_links.find(peer);
    if (it != d_links.end() && it->second.st == cas_link_state::up)
        it->second.deadline = now + d_cfg.idle_timeout;
}

void cas_link_manager::handle_request(uint32_t peer,
                                      bool exclusive,
                                      bool lfsn,
                                      double now)
{
    link& l = d_links[peer];
    if (l.st != cas_link_state::up)
        l.lfsn = d_cfg.large_windows && lfsn; // what an ACCEPTED we send now will say
    if (l.st == cas_link_state::up) {
        if (exclusive == l.exclusive) {
            // B.3.2.1 step 2 (15): our ACCEPTED may have been lost.
            send(peer, cpdu_type::physical_link_accepted);
            return;
        }
        if (l.exclusive) {
            // Nonexclusive request while we support an exclusive link (step 2 (6)) - with
            // this very peer: most likely a stale request it made before it accepted
            // ours.
            send(peer,
                 cpdu_type::physical_link_rejected,
                 false,
                 uint8_t(physical_link_reject_reason::supporting_exclusive_link));
            return;
        }
        // Exclusive request on a nonexclusive link: the peer wants the other link type
        // (it dropped ours, or its higher layer needs a hard link). Ours ends; decide
        // anew.
        l.st = cas_link_state::idle;
        l.deadline = inf;
        emit(cas_event_type::link_down, peer, cas_cause::superseded, l.exclusive, 0);
        l.lfsn = d_cfg.large_windows && lfsn;
    }
    if (l.st == cas_link_state::breaking) {
        // Our BREAK may still be on its way and would end any link made now, so we
        // refuse until the break completes; the peer asks again later.
        send(peer,
             cpdu_type::physical_link_rejected,
             false,
             uint8_t(physical_link_reject_reason::unknown));
        return;
    }
    if (l.st == cas_link_state::requesting) {
        // Request collision. Same link type: both sides accept and the link is made.
        // Different types: the exclusive request wins; its sender rejects the
        // nonexclusive one (step 2 (6): it is supporting an exclusive link), the other
        // side accepts the exclusive one and abandons its own.
        if (l.exclusive && !exclusive) {
            send(peer,
                 cpdu_type::physical_link_rejected,
                 false,
                 uint8_t(physical_link_reject_reason::supporting_exclusive_link));
            return;
        }
        if (auto why = refusal(peer, exclusive)) {
            send(peer, cpdu_type::physical_link_rejected, false, *why);
            return;
        }
        send(peer, cpdu_type::physical_link_accepted);
        make_up(peer, l, exclusive, false, now);
        return;
    }
    // idle
    if (auto it = d_refuse_until.find(peer); it != d_refuse_until.end()) {
        if (now < it->second) {
            send(peer,
                 cpdu_type::physical_link_rejected,
                 false,
                 uint8_t(
                     physical_link_reject_reason::higher_priority_link_request_pending));
            forget_if_idle(peer);
            return;
        }
        d_refuse_until.erase(it);
    }
    if (!exclusive &&
        refusal(peer, exclusive) == uint8_t(physical_link_reject_reason::unknown))
        yield_oldest_link(peer, now);
    if (auto why = refusal(peer, exclusive)) {
        send(peer, cpdu_type::physical_link_rejected, false, *why);
        forget_if_idle(peer);
        return;
    }
    send(peer, cpdu_type::physical_link_accepted);
    make_up(peer, l, exclusive, false, now);
}

void cas_link_manager::refuse_requests_until(uint32_t peer, double until)
{
    d_refuse_until[peer] = until;
}

void cas_link_manager::yield_oldest_link(uint32_t for_peer, double now)
{
    link* oldest = nullptr;
    uint32_t oldest_peer = 0;
    for (auto& [addr, l] : d_links)
        if (addr != for_peer && l.st == cas_link_state::up && !l.exclusive &&
            now - l.made_at >= d_cfg.yield_link_after_s &&
            (!oldest || l.made_seq < oldest->made_seq)) {
            oldest = &l;
            oldest_peer = addr;
        }
    if (!oldest)
        return;
    d_counters.links_yielded++;
    start_break(oldest_peer,
                *oldest,
                uint8_t(physical_link_break_reason::higher_priority_link_request_pending),
                now);
}

void cas_link_manager::on_cpdu(uint32_t peer, const cpdu& c, double now)
{
    if (peer == d_cfg.own_address) { // our own transmission heard back
        d_counters.ignored++;
        return;
    }
    switch (c.type) {
    case cpdu_type::data:
        on_data_activity(peer, now);
        return;
    case cpdu_type::physical_link_request:
        d_counters.requests_received++;
        handle_request(peer, c.exclusive_link, c.lfsn, now);
        return;
    default:
        break;
    }

    auto it = d_links.find(peer);
    const cas_link_state st = it == d_links.end() ? cas_link_state::idle : it->second.st;

    switch (c.type) {
    case cpdu_type::physical_link_accepted:
        d_counters.accepted_received++;
        if (st == cas_link_state::requesting) {
            it->second.lfsn = d_cfg.large_windows && c.lfsn;
            make_up(peer, it->second, it->second.exclusive, true, now);
        } else if (st == cas_link_state::idle) {
            // Late answer to a request we gave up or cancelled: the peer now believes a
            // link exists that we do not have. One BREAK, no state.
            d_counters.ignored++;
            send(peer,
                 cpdu_type::physical_link_break,
                 false,
                 uint8_t(physical_link_break_reason::unknown));
        } else {
            d_counters.ignored++; // duplicate ACCEPTED while up, or while breaking
        }
        break;
    case cpdu_type::physical_link_rejected:
        d_counters.rejected_received++;
        if (st == cas_link_state::requesting) {
            link& l = it->second;
            emit(cas_event_type::link_failed,
                 peer,
                 cas_cause::rejected,
                 l.exclusive,
                 c.reason);
            l.st = cas_link_state::idle;
            l.deadline = inf;
            forget_if_idle(peer);
        } else {
            d_counters.ignored++;
        }
        break;
    case cpdu_type::physical_link_break:
        // B.3.1.5 (5), B.3.2.2 (4): declare broken and confirm, whatever our state.
        d_counters.breaks_received++;
        send(peer, cpdu_type::physical_link_break_confirm);
        if (st == cas_link_state::breaking && it->second.cancelling) {
            // The peer had taken our cancelled request; its link is gone now. We stay
            // quiet until our own wait ends (see release()).
        } else if (st == cas_link_state::up || st == cas_link_state::breaking) {
            link& l = it->second;
            l.break_reason = c.reason;
            finish_break(peer, l, cas_cause::peer_break, now);
            forget_if_idle(peer);
        }
        // requesting: a stale link on the peer's side is gone; our request stands.
        break;
    case cpdu_type::physical_link_break_confirm:
        d_counters.confirms_received++;
        if (st == cas_link_state::breaking && !it->second.cancelling) {
            finish_break(peer, it->second, cas_cause::confirmed, now);
            forget_if_idle(peer);
        } else {
            d_counters.ignored++;
        }
        break;
    default:
        d_counters.ignored++;
        break;
    }
}

void cas_link_manager::on_timer(double now)
{
    std::vector<uint32_t> due;
    for (const auto& kv : d_links)
        if (kv.second.deadline <= now)
            due.push_back(kv.first);
    for (uint32_t peer : due) {
        auto it = d_links.find(peer);
        if (it == d_links.end() || it->second.deadline > now)
            continue;
        link& l = it->second;
        switch (l.st) {
        case cas_link_state::requesting:
            if (l.attempts < 1 + d_cfg.request_retries) {
                l.attempts++;
                l.deadline = now + d_cfg.response_timeout;
                d_counters.request_retries++;
                send(peer, cpdu_type::physical_link_request, l.exclusive);
            } else {
                emit(cas_event_type::link_failed,
                     peer,
                     cas_cause::no_response,
                     l.exclusive,
                     0);
                l.st = cas_link_state::idle;
                l.deadline = inf;
            }
            break;
        case cas_link_state::up:
            d_counters.idle_timeouts++;
            start_break(peer, l, uint8_t(physical_link_break_reason::no_more_data), now);
            break;
        case cas_link_state::breaking:
            if (l.cancelling) {
                finish_break(peer, l, cas_cause::confirmed, now); // no event
            } else if (l.attempts < 1 + d_cfg.break_retries) {
                l.attempts++;
                l.deadline = now + d_cfg.break_timeout;
                d_counters.break_retries++;
                send(peer, cpdu_type::physical_link_break, false, l.break_reason);
            } else {
                finish_break(peer, l, cas_cause::unconfirmed, now);
            }
            break;
        case cas_link_state::idle:
            l.deadline = inf;
            break;
        }
        forget_if_idle(peer);
    }
}

std::vector<cas_outgoing> cas_link_manager::take_outgoing()
{
    std::vector<cas_outgoing> v;
    v.swap(d_out);
    return v;
}

std::vector<cas_event> cas_link_manager::take_events()
{
    std::vector<cas_event> v;
    v.swap(d_events);
    return v;
}

cas_link_state cas_link_manager::state(uint32_t peer) const
{
    auto it = d_links.find(peer);
    return it == d_links.end() ? cas_link_state::idle : it->second.st;
}

bool cas_link_manager::long_fsn(uint32_t peer) const
{
    auto it = d_links.find(peer);
    return it != d_links.end() && it->second.st == cas_link_state::up && it->second.lfsn;
}

bool cas_link_manager::probing(uint32_t peer) const
{
    auto it = d_links.find(peer);
    return it != d_links.end() && it->second.st == cas_link_state::requesting &&
           it->second.probe;
}

bool cas_link_manager::exclusive(uint32_t peer) const
{
    auto it = d_links.find(peer);
    return it != d_links.end() && it->second.st != cas_link_state::idle &&
           it->second.exclusive;
}

std::optional<uint32_t> cas_link_manager::active_peer() const
{
    std::optional<uint32_t> best;
    uint64_t best_seq = 0;
    for (const auto& kv : d_links) {
        if (kv.second.st != cas_link_state::up)
            continue;
        if (!best || kv.second.made_seq < best_seq) {
            best = kv.first;
            best_seq = kv.second.made_seq;
        }
    }
    return best;
}

std::vector<uint32_t> cas_link_manager::up_peers() const
{
    std::vector<uint32_t> v;
    for (const auto& kv : d_links)
        if (kv.second.st == cas_link_state::up)
            v.push_back(kv.first);
    return v;
}

double cas_link_manager::next_deadline() const
{
    double d = inf;
    for (const auto& kv : d_links)
        if (kv.second.deadline < d)
            d = kv.second.deadline;
    return d;
}

const char* to_string(cas_link_state s)
{
    switch (s) {
    case cas_link_state::idle:
        return "idle";
    case cas_link_state::requesting:
        return "requesting";
    case cas_link_state::up:
        return "up";
    case cas_link_state::breaking:
        return "breaking";
    }
    return "?";
}

const char* to_string(cas_event_type t)
{
    switch (t) {
    case cas_event_type::link_up:
        return "link_up";
    case cas_event_type::link_failed:
        return "link_failed";
    case cas_event_type::link_down:
        return "link_down";
    }
    return "?";
}

const char* to_string(cas_cause c)
{
    switch (c) {
    case cas_cause::made_by_us:
        return "made_by_us";
    case cas_cause::made_by_peer:
        return "made_by_peer";
    case cas_cause::rejected:
        return "rejected";
    case cas_cause::no_response:
        return "no_response";
    case cas_cause::local_refusal:
        return "local_refusal";
    case cas_cause::cancelled:
        return "cancelled";
    case cas_cause::peer_break:
        return "peer_break";
    case cas_cause::confirmed:
        return "confirmed";
    case cas_cause::unconfirmed:
        return "unconfirmed";
    case cas_cause::superseded:
        return "superseded";
    }
    return "?";
}

} // namespace dl
} // namespace hfstack
} // namespace gr
