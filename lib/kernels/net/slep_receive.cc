/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

// What a SLEP endpoint takes from the node: confirmations of what it sent, and the
// PDUs that arrive (OPEN, DATA, WINDOW, RESET, HELLO, datagrams) with their streams'
// reassembly (the sending side is slep.cc).

#include "slep.h"

#include <algorithm>
#include <bitset>
#include <cmath>
#include <stdexcept>

namespace gr {
namespace hfstack {
namespace net {

namespace {

constexpr size_t seen_ids_per_sender = 1024; // reliable datagram ids remembered
constexpr unsigned reset_tries = 3;
constexpr size_t max_datagram_plain =
    65536; // a compressed datagram inflates to at most this

uint32_t node_of(const dl::sis_address& a) { return a.address & 0x1FFFFFFF; }

} // namespace

void slep::on_sis(const dl::sis_primitive& p, double now)
{
    d_now = now;
    using T = dl::sis_type;
    switch (p.type) {
    case T::bind_accepted:
        d_bound = true;
        d_flow_on = true;
        if (p.mtu >= 64)
            d_mtu = std::min<size_t>(p.mtu, 4096);
        event({ slep_event::kind::bound });
        break;
    case T::bind_rejected: {
        slep_event e{ slep_event::kind::unbound };
        e.text = "bind refused (reason " + std::to_string(p.reason) + ")";
        event(std::move(e));
        notice("bind_rejected",
               "the node refused SAP " + std::to_string(d_cfg.sap) + ": " + e.text);
        break;
    }
    case T::unbind_indication:
        on_disconnected(now);
        break;
    case T::data_flow_on:
        d_flow_on = true;
        break;
    case T::data_flow_off:
        d_flow_on = false;
        break;
    case T::keep_alive: {
        dl::sis_primitive k;
        k.type = T::keep_alive;
        d_actions.to_sis.push_back(k);
        break;
    }
    case T::unidata_request_confirm:
    case T::expedited_unidata_request_confirm:
        on_confirm(p, true, now);
        break;
    case T::unidata_request_rejected:
    case T::expedited_unidata_request_rejected:
        on_confirm(p, false, now);
        break;
    case T::unidata_indication:
    case T::expedited_unidata_indication:
        on_indication(p, now);
        break;
    default:
        break;
    }
    pump(now);
}

void slep::on_confirm(const dl::sis_primitive& p, bool delivered, double now)
{
    const uint32_t node = node_of(p.destination);
    auto it = std::find_if(
        d_outstanding.begin(), d_outstanding.end(), [&](const outstanding& o) {
            const size_t n = std::min(o.header.size(), p.payload.size());
            return o.node == node && n > 0 &&
                   std::equal(
                       o.header.begin(), o.header.begin() + long(n), p.payload.begin());
        });
    if (it == d_outstanding.end()) {
        d_counters.stale += 1;
        return;
    }
    const outstanding o = *it;
    d_outstanding.erase(it);
    if (delivered)
        d_peers[node].last_heard = now;
    d_outstanding_bytes -= std::min(d_outstanding_bytes, o.size);
    if (!delivered) {
        d_counters.rejections += 1;
        notice("rejected_" + std::to_string(p.reason),
               "the node rejected SLEP PDUs to " + dl::address_to_string(node) +
                   " (reason " + std::to_string(p.reason) + "); sending them again in " +
                   std::to_string(int(d_cfg.retry_s)) + " s (logged once)");
    }
    using R = dl::sis_unidata_rejected_reason;
    switch (o.role) {
    case pdu_role::segment: {
        auto* s = find(o.stream);
        if (!s)
            return;
        auto seg = s->segments.find(o.offset);
        if (seg == s->segments.end())
            return;
        seg->second.outstanding = false;
        if (!delivered) {
            const bool opening = seg->second.is_open && !s->open_confirmed;
            if (opening && p.reason == uint8_t(R::destination_sap_not_bound)) {
                end_stream(o.stream, slep_reset_reason::refused, false, now);
                return;
            }
            if (p.reason == uint8_t(R::updu_larger_than_mtu)) {
                end_stream(o.stream, slep_reset_reason::protocol_error, true, now);
                return;
            }
            seg->second.resend_at = now + d_cfg.retry_s;
            return;
        }
        if (wants_node_confirmation(seg->second)) {
            // At the far node; the far SLEP's ACK confirms it (or it goes again). The
            // ACK comes once the burst's last PDU is there: while the node delivers the
            // stream's PDUs, the earlier ones wait for it.
            seg->second.reached = true;
            // The node taking a burst's earlier PDUs is progress; one that asked for an
            // ACK is not until the ACK comes (a far node with no SLEP bound confirms
            // every PDU sent again: the stream still gives up after give_up_s).
            if (!seg->second.ask_ack)
                s->last_progress = now;
            for (auto& [at, waiting] : s->segments)
                if (waiting.reached && !waiting.confirmed)
                    waiting.ack_wait_until = now + d_cfg.ack_timeout_s;
            return;
        }
        seg->second.confirmed = true;
        s->last_progress = now;
        if (seg->second.is_open)
            s->open_confirmed = true;
        release_confirmed(o.stream, *s);
        return;
    }
    case pdu_role::empty_open: {
        auto* s = find(o.stream);
        if (!s)
            return;
        if (delivered) {
            s->open_confirmed = true;
            s->last_progress = now;
        } else if (p.reason == uint8_t(R::destination_sap_not_bound)) {
            end_stream(o.stream, slep_reset_reason::refused, false, now);
        } else if (!s->open_confirmed) {
            s->open_resend_at = now + d_cfg.retry_s;
        }
        return;
    }
    case pdu_role::reliable: {
        auto r = d_reliable.find(o.id);
        if (r == d_reliable.end())
            return;
        r->second.outstanding = false;
        if (delivered) {
            slep_event e{ slep_event::kind::datagram_delivered };
            e.id = o.id;
            e.node = node;
            event(std::move(e));
            d_reliable.erase(r);
        } else {
            r->second.resend_at = now + d_cfg.retry_s;
        }
        return;
    }
    case pdu_role::window:
        if (!delivered)
            if (auto* s = find(o.stream))
                s->window_due = true; // the latest limit goes with the next pump
        return;
    case pdu_role::reset:
        if (!delivered) {
            for (auto& r : d_resets)
                if (r.node == o.node && r.pdu.stream == o.offset && r.resend_at < 0 &&
                    r.tries < reset_tries) {
                    r.resend_at = now + d_cfg.retry_s;
                    return;
                }
        }
        d_resets.erase(std::remove_if(d_resets.begin(),
                                      d_resets.end(),
                                      [&](const reset_out& r) {
                                          return r.node == o.node &&
                                                 r.pdu.stream == o.offset &&
                                                 r.resend_at < 0;
                                      }),
                       d_resets.end());
        return;
    case pdu_role::ack:
        if (!delivered)
            owe_ack(o.stream, o.offset, now + d_cfg.retry_s);
        return;
    case pdu_role::other:
        return;
    }
}

void slep::release_confirmed(slep_stream key, stream_state& s)
{
    const size_t before = s.send_buf.size();
    while (!s.segments.empty() && s.segments.begin()->second.confirmed &&
           s.segments.begin()->first == s.send_base) {
        const auto& done = s.segments.begin()->second;
        s.send_buf.erase(s.send_buf.begin(), s.send_buf.begin() + long(done.length));
        s.send_base += done.length;
        if (done.fin)
            s.fin_confirmed = true;
        s.segments.erase(s.segments.begin());
    }
    if (s.send_buf.size() < before && s.writable_wanted && !s.fin_written) {
        s.writable_wanted = false;
        slep_event e{ slep_event::kind::writable };
        e.stream = key;
        e.node = s.node;
        event(std::move(e));
    }
    check_closed(key, s);
}

void slep::on_ack(
    uint32_t node, bool we_opened, uint32_t number, uint32_t offset, double now)
{
    const auto key = make_slep_stream(node, we_opened, number);
    auto* s = find(key);
    if (!s) {
        d_counters.stale += 1; // the stream ended meanwhile
        return;
    }
    if (serial_less(s->send_next, offset)) {
        drop_malformed("ACK beyond what was sent");
        return;
    }
    bool progress = false;
    for (auto& [at, seg] : s->segments) {
        if (seg.confirmed || serial_less(offset, at + seg.length))
            continue;
        // Only what was sent ACK-wise: an OPEN or FIN waits for its node's confirmation.
        if (!wants_node_confirmation(seg) && !seg.is_open)
            continue;
        seg.confirmed = true;
        if (seg.is_open)
            s->open_confirmed = true;
        progress = true;
    }
    if (!progress)
        return;
    s->last_progress = now;
    release_confirmed(key, *s);
}

void slep::on_indication(const dl::sis_primitive& p, double now)
{
    if (p.destination_sap != d_cfg.sap)
        return;
    const uint32_t node = node_of(p.source);
    d_counters.bytes_received += p.payload.size();
    if (!p.errored_blocks.empty() || !p.non_received_blocks.empty()) {
        drop_malformed("delivered with errors");
        return;
    }
    auto decoded = decode_slep(p.payload);
    if (!decoded) {
        drop_malformed(decoded.reason);
        return;
    }
    auto& pdu = decoded.value;
    d_counters.pdus_received[size_t(pdu.type)] += 1;
    d_peers[node].last_heard = now;
    switch (pdu.type) {
    case slep_type::datagram:
    case slep_type::reliable: {
        if (pdu.type == slep_type::reliable) {
            auto& seen = d_seen_ids[{ node, pdu.from }];
            if (std::find(seen.begin(), seen.end(), pdu.id) != seen.end()) {
                d_counters.duplicates += 1;
                return;
            }
            seen.push_back(pdu.id);
            if (seen.size() > seen_ids_per_sender)
                seen.pop_front();
        }
        if (!d_listening.count(pdu.to)) {
            d_counters.refused += 1;
            return;
        }
        slep_event e{ slep_event::kind::datagram };
        if (pdu.has(slep_flag::compressed)) {
            auto plain = inflate_once(pdu.data, max_datagram_plain);
            if (!plain) {
                drop_malformed("datagram with bad DEFLATE data");
                return;
            }
            e.data = std::move(*plain);
        } else {
            e.data = std::move(pdu.data);
        }
        e.node = node;
        e.to = pdu.to;
        e.from = pdu.from;
        e.reliable = pdu.type == slep_type::reliable;
        e.id = pdu.id;
        event(std::move(e));
        return;
    }
    case slep_type::open:
        on_open(node, pdu, now);
        return;
    case slep_type::data:
        on_data(node, pdu, now);
        return;
    case slep_type::window: {
        // R set: the sender accepted the stream, so we opened it.
        const bool we_opened = pdu.has(slep_flag::responder);
        const auto key = make_slep_stream(node, we_opened, pdu.stream);
        if (auto* s = find(key)) {
            if (serial_less(s->send_limit, pdu.limit)) {
                s->send_limit = pdu.limit;
                s->last_progress = now;
            }
        } else if (!d_time_wait.count(key)) {
            // A WINDOW never precedes its OPEN (it answers our data): this side lost the
            // stream, or never had it.
            send_reset(node,
                       pdu.stream,
                       we_opened,
                       pdu.from,
                       pdu.to,
                       slep_reset_reason::unknown_stream,
                       now);
            want_hello(node);
        }
        return;
    }
    case slep_type::reset: {
        const auto key =
            make_slep_stream(node, pdu.has(slep_flag::responder), pdu.stream);
        const uint8_t reason = pdu.reason <= uint8_t(slep_reset_reason::no_resources)
                                   ? pdu.reason
                                   : uint8_t(slep_reset_reason::aborted);
        end_stream(key, slep_reset_reason(reason), false, now);
        return;
    }
    case slep_type::hello:
        on_hello(node, pdu, now);
        return;
    case slep_type::ack:
        // R set: the sender accepted the stream, so we opened it.
        on_ack(node, pdu.has(slep_flag::responder), pdu.stream, pdu.offset, now);
        return;
    case slep_type::data_ack:
        on_data(node, pdu, now);
        on_ack(node, true, pdu.ack_stream, pdu.ack_offset, now);
        return;
    }
}

void slep::on_open(uint32_t node, const slep_pdu& p, double now)
{
    auto& peer = d_peers[node];
    if (peer.incarnation != p.incarnation) {
        if (peer.incarnation) {
            if (serial_less(p.incarnation, *peer.incarnation)) {
                d_counters.stale += 1; // a late OPEN of the peer's former self
                return;
            }
            // The peer started anew: what it had is gone, on both sides.
            peer_restarted(node, now);
        }
        peer.incarnation = p.incarnation;
        // So the peer learns ours: behind our answer to this OPEN, which it waits for.
        want_hello(node);
        peer.answered = false;
        peer.hello_not_before = now + d_cfg.retry_s;
    }
    const auto key = make_slep_stream(node, false, p.stream);
    const bool ack = p.has(slep_flag::ack_requested);
    const uint32_t end = uint32_t(p.data.size());
    if (auto* s = find(key)) { // the OPEN again (its confirmation was lost)
        accept_bytes(key, *s, 0, p.data, p.has(slep_flag::fin), now);
        if (ack)
            owe_ack(key, end, now + d_cfg.ack_delay_s);
        return;
    }
    if (d_time_wait.count(key)) {
        d_counters.duplicates += 1;
        if (ack) // it ended cleanly: everything it sent arrived
            owe_ack(key, end, now + d_cfg.ack_delay_s);
        return;
    }
    if (!d_listening.count(p.to)) {
        d_counters.refused += 1;
        send_reset(node, p.stream, false, p.from, p.to, slep_reset_reason::refused, now);
        return;
    }
    if (d_streams.size() >= d_cfg.max_streams) {
        send_reset(
            node, p.stream, false, p.from, p.to, slep_reset_reason::no_resources, now);
        notice("max_streams",
               "refusing streams: " + std::to_string(d_cfg.max_streams) + " open");
        return;
    }
    auto& s = d_streams[key];
    s.node = node;
    s.number = p.stream;
    s.opened_here = false;
    s.compressed = p.has(slep_flag::compressed);
    s.local = p.to;
    s.remote = p.from;
    s.priority = d_cfg.priority;
    s.send_limit = p.limit;
    s.granted = slep_initial_window;
    if (d_cfg.window > slep_initial_window) {
        s.granted = d_cfg.window;
        s.window_due = true;
    }
    s.last_progress = now;
    d_counters.streams_accepted += 1;
    slep_event e{ slep_event::kind::incoming };
    e.stream = key;
    e.node = node;
    e.to = p.to;
    e.from = p.from;
    event(std::move(e));
    accept_bytes(key, s, 0, p.data, p.has(slep_flag::fin), now);
    if (ack)
        owe_ack(key, end, now + d_cfg.ack_delay_s);
    auto early = d_early.find(key);
    if (early != d_early.end()) {
        auto waiting = std::move(early->second);
        d_early.erase(early);
        for (auto& [pdu, expiry] : waiting)
            on_data(node, pdu, now);
    }
}

void slep::on_data(uint32_t node, const slep_pdu& p, double now)
{
    const bool we_opened = p.has(slep_flag::responder);
    const auto key = make_slep_stream(node, we_opened, p.stream);
    const bool ack = p.has(slep_flag::ack_requested);
    const uint32_t end = p.offset + uint32_t(p.data.size());
    auto* s = find(key);
    if (!s) {
        if (d_time_wait.count(key)) {
            d_counters.duplicates += 1;
            if (ack) // it ended cleanly: everything it sent arrived
                owe_ack(key, end, now + d_cfg.ack_delay_s);
            return;
        }
        // Tell the peer who we are: if this side restarted, that ends its streams at
        // once.
        want_hello(node);
        if (!we_opened) {
            // DATA overtook its OPEN (delivered out of order, or a resent OPEN after a
            // link break): kept, within one window, until early_data_s after the first
            // such PDU; then refused (the stream is one this side lost in a restart).
            auto& waiting = d_early[key];
            size_t held = 0;
            for (const auto& w : waiting)
                held += w.first.data.size();
            if (held + p.data.size() <= slep_initial_window)
                waiting.push_back({ p,
                                    waiting.empty() ? now + d_cfg.early_data_s
                                                    : waiting.front().second });
            return;
        }
        send_reset(
            node, p.stream, true, p.from, p.to, slep_reset_reason::unknown_stream, now);
        return;
    }
    accept_bytes(key, *s, p.offset, p.data, p.has(slep_flag::fin), now);
    if (ack)
        owe_ack(key, end, now + d_cfg.ack_delay_s);
}

void slep::on_hello(uint32_t node, const slep_pdu& p, double now)
{
    auto& peer = d_peers[node];
    const bool first = !peer.speaks_hello;
    peer.speaks_hello = true;
    if (peer.incarnation && *peer.incarnation != p.incarnation) {
        if (serial_less(p.incarnation, *peer.incarnation)) {
            d_counters.stale += 1; // a late HELLO of the peer's former self
            return;
        }
        peer_restarted(node, now);
    }
    peer.incarnation = p.incarnation;
    // Answer a peer that does not know our incarnation (it restarted, or never heard
    // from us: a restarted peer learns this way that we still hold its former self's
    // streams), or that speaks HELLO for the first time and has not heard one from us
    // (so keepalives run both ways). Not knowing us is no proof of a restart: a HELLO
    // sent before our first OPEN reached it says the same.
    if (p.seen != d_cfg.incarnation || (first && peer.hello_sent_at < -1e299))
        want_hello(node);
}

void slep::peer_restarted(uint32_t node, double now)
{
    std::vector<slep_stream> old;
    for (const auto& [key, s] : d_streams)
        if (s.node == node)
            old.push_back(key);
    d_counters.peer_restarts += 1;
    notice("peer_restart",
           "node " + dl::address_to_string(node) +
               " restarted its SLEP: its streams are reset (logged once)");
    for (auto key : old)
        end_stream(key, slep_reset_reason::peer_restarted, false, now);
    for (auto it = d_early.begin(); it != d_early.end();)
        it = slep_stream_node(it->first) == node ? d_early.erase(it) : std::next(it);
}

void slep::want_hello(uint32_t node) { d_peers[node].hello_due = true; }

bool slep::window_stalled(const stream_state& s) const
{
    return unsent(s) && !serial_less(s.send_next, s.send_limit);
}

double slep::heard_from(uint32_t node) const
{
    const auto it = d_peers.find(node);
    return it == d_peers.end() ? -1 : it->second.last_heard;
}

void slep::accept_bytes(slep_stream key,
                        stream_state& s,
                        uint32_t offset,
                        const bytes& data,
                        bool fin,
                        double now)
{
    const uint32_t end = offset + uint32_t(data.size());
    if (serial_less(s.granted, end) ||
        (s.fin_offset && serial_less(*s.fin_offset, end)) ||
        (fin && s.fin_offset && *s.fin_offset != end)) {
        notice("protocol_error",
               "a peer sent stream data beyond its window or end: stream reset");
        end_stream(key, slep_reset_reason::protocol_error, true, now);
        return;
    }
    if (fin)
        s.fin_offset = end;
    const uint32_t before = s.recv_next();
    const auto append = [&](uint32_t at, const bytes& d) {
        const uint32_t next = s.recv_next();
        if (serial_less(next, at))
            return false;
        const size_t skip = size_t(next - at);
        if (skip < d.size())
            s.recv_buf.insert(s.recv_buf.end(), d.begin() + long(skip), d.end());
        return true;
    };
    if (!append(offset, data)) {
        auto& slot = s.out_of_order[offset];
        if (slot.size() < data.size())
            slot = data;
    } else if (data.size() > 0 && !serial_less(before, end)) {
        d_counters.duplicates += 1;
    }
    for (auto it = s.out_of_order.begin(); it != s.out_of_order.end();) {
        if (append(it->first, it->second))
            it = s.out_of_order.erase(it);
        else
            ++it;
    }
    s.last_progress = now;
    if (s.recv_next() != before || fin) {
        slep_event e{ slep_event::kind::readable };
        e.stream = key;
        e.node = s.node;
        event(std::move(e));
    }
    check_closed(key, s);
}

} // namespace net
} // namespace hfstack
} // namespace gr
