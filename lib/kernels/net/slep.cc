/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

// A SLEP endpoint's own side: its streams and datagrams, what it sends and when, and
// its timers (what arrives from the node is slep_receive.cc).

#include "slep.h"

#include <algorithm>
#include <bitset>
#include <cmath>
#include <stdexcept>

namespace gr {
namespace hfstack {
namespace net {

slep::slep(slep_config config) : d_cfg(config)
{
    if (d_cfg.sap > 15)
        throw std::invalid_argument("slep: sap must be 0..15");
    if (d_cfg.incarnation == 0)
        throw std::invalid_argument("slep: incarnation must be nonzero");
    if (d_cfg.window < slep_initial_window)
        throw std::invalid_argument("slep: window must be at least " +
                                    std::to_string(slep_initial_window));
    if (d_cfg.send_buffer < 1024 || d_cfg.max_outstanding_bytes == 0)
        throw std::invalid_argument("slep: send_buffer must be at least 1024 and "
                                    "max_outstanding_bytes > 0");
    if (!(d_cfg.coalesce_s >= 0 && d_cfg.coalesce_s <= 10))
        throw std::invalid_argument("slep: coalesce_s must be 0..10 s");
    if (d_cfg.stream_updu_bytes < 128)
        throw std::invalid_argument("slep: stream_updu_bytes must be at least 128");
    if (d_cfg.confirmation == dl::sis_delivery_confirmation::none)
        throw std::invalid_argument("slep: confirmation must be client or node");
    if (!(d_cfg.ack_delay_s >= 0 && d_cfg.ack_delay_s <= 10) ||
        !(d_cfg.ack_timeout_s > 0))
        throw std::invalid_argument(
            "slep: ack_delay_s must be 0..10 s, ack_timeout_s > 0");
    if (!(d_cfg.keepalive_s >= 0) || !(d_cfg.early_data_s >= 0))
        throw std::invalid_argument("slep: keepalive_s and early_data_s must be >= 0");
    // Stream numbers from the incarnation: a restarted instance's numbers do not meet
    // those its former self may still have in flight.
    d_next_number = d_cfg.incarnation << 16;
}

void slep::start(double now)
{
    d_now = now;
    d_actions.to_sis.push_back(dl::arq_bind_request(
        d_cfg.sap, d_cfg.rank, dl::sis_delivery_confirmation::client, d_cfg.in_order));
}

void slep::on_disconnected(double now)
{
    d_now = now;
    const bool was = d_bound;
    d_bound = false;
    // What the node held is of unknown fate: sent again later (offsets and ids absorb
    // any duplicate).
    for (auto& o : d_outstanding) {
        if (o.role == pdu_role::segment) {
            if (auto* s = find(o.stream)) {
                auto it = s->segments.find(o.offset);
                if (it != s->segments.end()) {
                    it->second.outstanding = false;
                    it->second.resend_at = now;
                }
            }
        } else if (o.role == pdu_role::reliable) {
            auto it = d_reliable.find(o.id);
            if (it != d_reliable.end()) {
                it->second.outstanding = false;
                it->second.resend_at = now;
            }
        } else if (o.role == pdu_role::window) {
            if (auto* s = find(o.stream))
                s->window_due = true;
        } else if (o.role == pdu_role::empty_open) {
            if (auto* s = find(o.stream))
                s->open_resend_at = now;
        }
    }
    for (auto& r : d_resets)
        if (r.resend_at < 0)
            r.resend_at = now;
    d_outstanding.clear();
    d_outstanding_bytes = 0;
    if (was)
        event({ slep_event::kind::unbound });
}

void slep::notice(const std::string& kind, const std::string& text)
{
    if (d_noticed.insert(kind).second)
        d_actions.notices.push_back(text);
}

void slep::drop_malformed(const std::string& why)
{
    d_counters.malformed += 1;
    notice("malformed",
           "dropping malformed SLEP PDUs: " + why + " (counted from now on)");
}

slep::stream_state* slep::find(slep_stream key)
{
    auto it = d_streams.find(key);
    return it == d_streams.end() ? nullptr : &it->second;
}

const slep::stream_state* slep::find(slep_stream key) const
{
    auto it = d_streams.find(key);
    return it == d_streams.end() ? nullptr : &it->second;
}

size_t slep::max_segment(slep_type t) const
{
    return std::min(d_mtu, d_cfg.stream_updu_bytes) - slep_header_size(t);
}

bool slep::room() const
{
    return d_bound && d_flow_on && d_outstanding_bytes < d_cfg.max_outstanding_bytes;
}

void slep::listen(uint8_t address) { d_listening.insert(address); }
void slep::unlisten(uint8_t address) { d_listening.erase(address); }

void slep::submit(uint32_t node,
                  const slep_pdu& pdu,
                  bool arq,
                  bool confirm,
                  bool in_order,
                  uint8_t priority,
                  pdu_role role,
                  slep_stream key,
                  uint32_t offset,
                  uint16_t id,
                  bool node_confirmation)
{
    dl::sis_primitive r;
    r.type = dl::sis_type::unidata_request;
    r.priority = priority;
    r.destination_sap = d_cfg.sap;
    r.destination = dl::sis_address{ node, 7 };
    auto& st = r.service_type;
    st.tx_mode = arq ? dl::sis_tx_mode::arq : dl::sis_tx_mode::non_arq;
    st.delivery_confirmation = !confirm            ? dl::sis_delivery_confirmation::none
                               : node_confirmation ? dl::sis_delivery_confirmation::node
                                                   : d_cfg.confirmation;
    st.delivery_order = in_order ? dl::sis_delivery_order::in_order
                                 : dl::sis_delivery_order::as_they_arrive;
    r.ttl = 0; // SLEP sends again itself after a rejection
    r.payload = encode(pdu);
    if (confirm) {
        const size_t h = std::min(r.payload.size(), slep_header_size(pdu.type));
        d_outstanding.push_back({ node,
                                  bytes(r.payload.begin(), r.payload.begin() + long(h)),
                                  role,
                                  key,
                                  offset,
                                  id,
                                  r.payload.size() });
        d_outstanding_bytes += r.payload.size();
    }
    d_counters.pdus_sent[size_t(pdu.type)] += 1;
    if (role == pdu_role::segment || role == pdu_role::empty_open ||
        role == pdu_role::window)
        if (auto peer = d_peers.find(node); peer != d_peers.end())
            peer->second.answered = true;
    d_counters.bytes_sent += r.payload.size();
    d_actions.to_sis.push_back(std::move(r));
}

// ---- datagrams ------------------------------------------------------------------------

void slep::send_datagram(uint32_t node,
                         uint8_t to,
                         uint8_t from,
                         const bytes& data,
                         bool compress,
                         bool arq,
                         double now)
{
    d_now = now;
    slep_pdu p;
    p.type = slep_type::datagram;
    p.to = to;
    p.from = from;
    p.data = compress ? deflate_once(data) : data;
    if (compress)
        p.flags |= slep_flag::compressed;
    if (slep_common_header + p.data.size() > d_mtu)
        throw std::invalid_argument("slep: datagram of " + std::to_string(data.size()) +
                                    " bytes does not fit the MTU of " +
                                    std::to_string(d_mtu));
    if (d_bound && d_flow_on)
        submit(node, p, arq, false, false, d_cfg.priority, pdu_role::other, 0, 0, 0);
    else
        notice("datagram_unbound",
               "unreliable datagrams dropped while not bound or flow off");
}

uint16_t slep::send_reliable(
    uint32_t node, uint8_t to, uint8_t from, const bytes& data, bool compress, double now)
{
    d_now = now;
    slep_pdu p;
    p.type = slep_type::reliable;
    p.to = to;
    p.from = from;
    p.id = d_next_id++;
    if (d_next_id == 0)
        d_next_id = 1;
    p.data = compress ? deflate_once(data) : data;
    if (compress)
        p.flags |= slep_flag::compressed;
    if (slep_header_size(p.type) + p.data.size() > d_mtu)
        throw std::invalid_argument("slep: datagram of " + std::to_string(data.size()) +
                                    " bytes does not fit the MTU of " +
                                    std::to_string(d_mtu));
    d_reliable[p.id] = reliable_out{ node, encode(p), now, now, false };
    pump(now);
    return p.id;
}

// ---- streams ----------------------------------------------------------------------

slep_stream slep::open(uint32_t node,
                       uint8_t to,
                       uint8_t from,
                       const bytes& data,
                       bool compress,
                       bool fin,
                       double now,
                       std::optional<uint8_t> priority,
                       uint8_t send_priority)
{
    d_now = now;
    if (d_streams.size() >= d_cfg.max_streams)
        throw std::invalid_argument("slep: " + std::to_string(d_cfg.max_streams) +
                                    " streams open already");
    slep_stream key;
    do {
        key = make_slep_stream(node, true, d_next_number++);
    } while (d_streams.count(key) || d_time_wait.count(key));
    auto& s = d_streams[key];
    s.node = node & 0x1FFFFFFF;
    s.number = uint32_t(key);
    s.opened_here = true;
    s.compressed = compress;
    s.local = from;
    s.remote = to;
    s.priority = priority.value_or(d_cfg.priority);
    s.send_priority = send_priority;
    s.granted = d_cfg.window; // OPEN grants our whole window at once
    s.last_progress = now;
    d_counters.streams_opened += 1;
    write(key, data.data(), data.size(), now);
    if (fin)
        finish(key, now);
    pump(now);
    return key;
}

size_t slep::write(slep_stream key, const uint8_t* data, size_t size, double now)
{
    d_now = now;
    auto* s = find(key);
    if (!s || s->fin_written)
        return 0;
    const size_t held = s->send_buf.size(); // unsent and unconfirmed
    const size_t space = held >= d_cfg.send_buffer ? 0 : d_cfg.send_buffer - held;
    const size_t n = std::min(size, space);
    if (n < size)
        s->writable_wanted = true;
    if (n == 0)
        return 0;
    const size_t before = s->send_buf.size();
    if (!unsent(*s))
        s->unsent_since = now;
    if (s->compressed)
        s->tx_z.write(data, n, s->send_buf);
    else
        s->send_buf.insert(s->send_buf.end(), data, data + n);
    s->bytes_written += n;
    d_counters.plain_written += n;
    count_wire_written(*s, s->send_buf.size() - before);
    pump(now);
    return n;
}

void slep::finish(slep_stream key, double now)
{
    d_now = now;
    auto* s = find(key);
    if (!s || s->fin_written)
        return;
    if (s->compressed)
        flush_deflater(*s);
    s->fin_written = true;
    pump(now);
}

bytes slep::read(slep_stream key, size_t max, double now)
{
    d_now = now;
    auto* s = find(key);
    bytes out;
    if (!s || max == 0)
        return out;
    if (!s->compressed) {
        const size_t n = std::min(max, s->recv_buf.size());
        out.assign(s->recv_buf.begin(), s->recv_buf.begin() + long(n));
        s->recv_buf.erase(s->recv_buf.begin(), s->recv_buf.begin() + long(n));
        s->recv_base += uint32_t(n);
        s->wire_read += n;
    } else {
        if (s->plain.size() < max && (!s->recv_buf.empty() || s->rx_z.holds_output())) {
            const auto used = s->rx_z.read(
                s->recv_buf.data(), s->recv_buf.size(), max - s->plain.size(), s->plain);
            if (!used) {
                end_stream(key, slep_reset_reason::protocol_error, true, now);
                pump(now);
                return out;
            }
            s->recv_buf.erase(s->recv_buf.begin(), s->recv_buf.begin() + long(*used));
            s->recv_base += uint32_t(*used);
            s->wire_read += *used;
        }
        const size_t n = std::min(max, s->plain.size());
        out.assign(s->plain.begin(), s->plain.begin() + long(n));
        s->plain.erase(s->plain.begin(), s->plain.begin() + long(n));
    }
    s->bytes_read += out.size();
    // Credit: the window beyond what the reader consumed, advertised once half of it
    // has been freed (each WINDOW costs air time).
    const uint32_t limit = s->recv_base + d_cfg.window;
    if (uint32_t(limit - s->granted) >= d_cfg.window / 2 &&
        serial_less(s->granted, limit)) {
        s->granted = limit;
        s->window_due = true;
    }
    check_closed(key, *s);
    pump(now);
    return out;
}

bool slep::eof(slep_stream key) const
{
    const auto* s = find(key);
    return s && s->fin_offset && s->recv_next() == *s->fin_offset &&
           s->recv_buf.empty() && s->plain.empty() && !s->rx_z.holds_output();
}

bool slep::exists(slep_stream key) const { return find(key) != nullptr; }

void slep::set_send_priority(slep_stream key, uint8_t send_priority)
{
    if (auto* s = find(key))
        s->send_priority = send_priority;
}

std::optional<slep_stream_info> slep::info(slep_stream key) const
{
    const auto* s = find(key);
    if (!s)
        return std::nullopt;
    slep_stream_info i;
    i.node = s->node;
    i.local = s->local;
    i.remote = s->remote;
    i.opened_here = s->opened_here;
    i.compressed = s->compressed;
    // Output zlib still holds counts as one byte at least: a read brings it out.
    i.readable = s->recv_buf.size() + s->plain.size() + (s->rx_z.holds_output() ? 1 : 0);
    i.send_space = s->fin_written || s->send_buf.size() >= d_cfg.send_buffer
                       ? 0
                       : d_cfg.send_buffer - s->send_buf.size();
    i.unconfirmed = s->send_buf.size();
    i.peer_heard = heard_from(s->node);
    i.finished_writing = s->fin_written;
    i.peer_finished = s->fin_offset.has_value();
    i.bytes_written = s->bytes_written;
    i.bytes_read = s->bytes_read;
    i.wire_written = s->wire_written;
    i.wire_read = s->wire_read;
    return i;
}

void slep::reset(slep_stream key, double now)
{
    d_now = now;
    end_stream(key, slep_reset_reason::aborted, true, now);
    pump(now);
}

void slep::send_reset(uint32_t node,
                      uint32_t number,
                      bool we_opened,
                      uint8_t to,
                      uint8_t from,
                      slep_reset_reason why,
                      double now)
{
    slep_pdu p;
    p.type = slep_type::reset;
    p.flags = we_opened ? 0 : slep_flag::responder;
    p.to = to;
    p.from = from;
    p.stream = number;
    p.reason = uint8_t(why);
    d_resets.push_back({ node, p, 0, now });
}

void slep::end_stream(slep_stream key, slep_reset_reason why, bool tell_peer, double now)
{
    auto it = d_streams.find(key);
    if (it == d_streams.end())
        return;
    const auto& s = it->second;
    if (tell_peer)
        send_reset(s.node, s.number, s.opened_here, s.remote, s.local, why, now);
    slep_event e{ slep_event::kind::reset };
    e.stream = key;
    e.node = s.node;
    e.reason = why;
    event(std::move(e));
    d_counters.streams_reset += 1;
    d_streams.erase(it);
    d_time_wait[key] = now + d_cfg.time_wait_s;
}

void slep::check_closed(slep_stream key, stream_state& s)
{
    const bool sent_all = s.fin_written && s.fin_confirmed && s.send_buf.empty();
    const bool got_all = s.fin_offset && s.recv_next() == *s.fin_offset &&
                         s.recv_buf.empty() && s.plain.empty() && !s.rx_z.holds_output();
    if (!sent_all || !got_all)
        return;
    slep_event e{ slep_event::kind::closed };
    e.stream = key;
    e.node = s.node;
    event(std::move(e));
    d_counters.streams_closed += 1;
    d_time_wait[key] = d_now + d_cfg.time_wait_s;
    d_streams.erase(key);
}

void slep::send_segment(slep_stream key, stream_state& s, segment& seg)
{
    slep_pdu p;
    p.type = seg.is_open ? slep_type::open : slep_type::data;
    p.to = s.remote;
    p.from = s.local;
    p.stream = s.number;
    if (seg.is_open) {
        p.incarnation = d_cfg.incarnation;
        p.limit = s.granted;
        p.flags =
            (s.compressed ? slep_flag::compressed : 0) | (seg.fin ? slep_flag::fin : 0);
    } else {
        p.offset = seg.offset;
        p.flags =
            (s.opened_here ? 0 : slep_flag::responder) | (seg.fin ? slep_flag::fin : 0);
    }
    const bool by_node = wants_node_confirmation(seg);
    if (by_node) {
        // A PDU sent again asks for the ACK too: the one asked for before never came.
        if (seg.resend_at >= 0)
            seg.ask_ack = true;
        if (seg.ask_ack)
            p.flags |= slep_flag::ack_requested;
        // An ACK owed to the same node rides on this DATA instead of a PDU of its own.
        for (auto it = d_acks.begin(); it != d_acks.end(); ++it) {
            if (it->second.node != s.node || it->second.opened_here)
                continue;
            p.type = slep_type::data_ack;
            p.ack_stream = it->second.number;
            p.ack_offset = owed_offset(it->first, it->second);
            d_acks.erase(it);
            break;
        }
    }
    const size_t at = size_t(seg.offset - s.send_base);
    p.data.assign(s.send_buf.begin() + long(at),
                  s.send_buf.begin() + long(at + seg.length));
    if (seg.resend_at >= 0)
        d_counters.retransmissions += 1;
    seg.outstanding = true;
    seg.reached = false;
    seg.resend_at = -1;
    submit(s.node,
           p,
           true,
           true,
           d_cfg.in_order,
           s.priority,
           pdu_role::segment,
           key,
           seg.offset,
           0,
           by_node);
}

bool slep::wants_node_confirmation(const segment& seg) const
{
    // A stream's OPEN and its end keep the far node's confirmation: a stream to a node
    // with no SLEP bound is refused at once, and the end is confirmed as such.
    return d_cfg.peer_acks && !seg.is_open && !seg.fin;
}

void slep::owe_ack(slep_stream key, uint32_t offset, double at)
{
    auto it = d_acks.find(key);
    if (it != d_acks.end()) {
        it->second.offset = offset;
        it->second.at = std::min(it->second.at, at);
        return;
    }
    ack_owed a;
    a.node = slep_stream_node(key);
    a.number = uint32_t(key);
    a.opened_here = (key >> 32 & 1) != 0;
    a.offset = offset;
    a.at = at;
    if (const auto* s = find(key)) {
        a.to = s->remote;
        a.from = s->local;
    }
    d_acks[key] = a;
}

uint32_t slep::owed_offset(slep_stream key, const ack_owed& a) const
{
    const auto* s = find(key);
    return s ? s->recv_next() : a.offset;
}

// An OPEN with no data yet: not a segment (data written later starts at offset 0 too).
void slep::send_empty_open(slep_stream key, stream_state& s)
{
    slep_pdu p;
    p.type = slep_type::open;
    p.to = s.remote;
    p.from = s.local;
    p.stream = s.number;
    p.incarnation = d_cfg.incarnation;
    p.limit = s.granted;
    p.flags = s.compressed ? slep_flag::compressed : 0;
    if (s.open_resend_at >= 0)
        d_counters.retransmissions += 1;
    s.open_resend_at = -1;
    s.open_sent = true;
    submit(s.node,
           p,
           true,
           true,
           d_cfg.in_order,
           s.priority,
           pdu_role::empty_open,
           key,
           0,
           0);
}

bool slep::unsent(const stream_state& s) const
{
    return s.send_end() != s.send_next || (s.compressed && s.tx_z.pending());
}

double slep::coalesce_until(const stream_state& s) const
{
    return s.unsent_since + d_cfg.coalesce_s;
}

bool slep::coalescing(const stream_state& s, double now) const
{
    if (d_cfg.coalesce_s <= 0 || s.fin_written || (s.opened_here && !s.open_sent) ||
        !unsent(s) || now >= coalesce_until(s))
        return false;
    return s.send_end() - s.send_next < max_segment(slep_type::data);
}

bool slep::awaiting_confirmation(const stream_state& s) const
{
    return !s.segments.empty() || (s.opened_here && s.open_sent && !s.open_confirmed);
}

void slep::pump(double now)
{
    d_now = now;
    // Resets first: they free the far end's resources.
    for (auto it = d_resets.begin(); it != d_resets.end() && room();) {
        if (it->resend_at > now || it->resend_at < 0) {
            ++it;
            continue;
        }
        it->resend_at = -1; // in flight
        it->tries += 1;
        // The stream number stands in the offset field of its outstanding record.
        submit(it->node,
               it->pdu,
               true,
               true,
               false,
               0,
               pdu_role::reset,
               0,
               it->pdu.stream,
               0);
        ++it;
    }
    for (auto& [id, r] : d_reliable) {
        if (!room())
            break;
        if (r.outstanding || r.resend_at < 0 || r.resend_at > now)
            continue;
        if (r.resend_at != r.first_sent)
            d_counters.retransmissions += 1;
        r.outstanding = true;
        auto decoded = decode_slep(r.pdu);
        submit(r.node,
               decoded.value,
               true,
               true,
               false,
               d_cfg.priority,
               pdu_role::reliable,
               0,
               0,
               id);
    }
    if (!d_streams.empty()) {
        // The highest send priority first; within one, round robin, one segment per
        // stream per pass, so one bulk stream does not hold the others' requests behind
        // it.
        std::bitset<256>
            levels; // the send priorities in use, without allocating per pump
        for (const auto& entry : d_streams)
            levels.set(entry.second.send_priority);
        for (int level = 255; level >= 0 && room(); --level)
            if (levels.test(size_t(level)))
                pump_streams(uint8_t(level), now);
    }
    // ACKs that found no DATA to ride on within ack_delay_s.
    for (auto it = d_acks.begin(); it != d_acks.end() && room();) {
        if (it->second.at > now) {
            ++it;
            continue;
        }
        slep_pdu a;
        a.type = slep_type::ack;
        a.flags = it->second.opened_here ? 0 : slep_flag::responder;
        a.to = it->second.to;
        a.from = it->second.from;
        a.stream = it->second.number;
        a.offset = owed_offset(it->first, it->second);
        submit(it->second.node,
               a,
               true,
               true,
               false,
               d_cfg.priority,
               pdu_role::ack,
               it->first,
               a.offset,
               0,
               true);
        it = d_acks.erase(it);
    }
    // HELLOs last: behind the stream data they may share a transmission with.
    for (auto& [node, peer] : d_peers) {
        if (!room())
            break;
        if (!peer.hello_due || now < peer.hello_sent_at + d_cfg.retry_s ||
            (!peer.answered && now < peer.hello_not_before))
            continue;
        slep_pdu h;
        h.type = slep_type::hello;
        h.incarnation = d_cfg.incarnation;
        h.seen = peer.incarnation.value_or(0);
        peer.hello_due = false;
        peer.hello_sent_at = now;
        submit(node, h, true, true, false, 0, pdu_role::other, 0, 0, 0);
    }
}

void slep::count_wire_written(stream_state& s, size_t bytes)
{
    d_counters.wire_written += bytes;
    s.wire_written += bytes;
}

void slep::flush_deflater(stream_state& s)
{
    const size_t before = s.send_buf.size();
    s.tx_z.flush(s.send_buf);
    count_wire_written(s, s.send_buf.size() - before);
}

void slep::pump_streams(uint8_t level, double now)
{
    bool progress = true;
    while (progress && room()) {
        progress = false;
        auto it = d_streams.upper_bound(d_round_robin);
        for (size_t visited = 0; visited < d_streams.size() && room(); ++visited) {
            if (it == d_streams.end())
                it = d_streams.begin();
            const slep_stream key = it->first;
            auto& s = it->second;
            ++it;
            if (s.send_priority != level)
                continue;
            d_round_robin = key;
            // give_up_s counts from here when the stream starts waiting again after
            // an idle time (not from its last confirmation, maybe long before).
            const bool was_waiting = awaiting_confirmation(s);
            const bool holding = coalescing(s, now);
            if (s.compressed && s.tx_z.pending() && !s.fin_written && !holding)
                flush_deflater(s);
            if (s.window_due) {
                slep_pdu w;
                w.type = slep_type::window;
                w.flags = s.opened_here ? 0 : slep_flag::responder;
                w.to = s.remote;
                w.from = s.local;
                w.stream = s.number;
                w.limit = s.granted;
                s.window_due = false;
                submit(s.node,
                       w,
                       true,
                       true,
                       false,
                       s.priority,
                       pdu_role::window,
                       key,
                       0,
                       0);
                progress = true;
                continue;
            }
            bool sent = false;
            if (s.open_resend_at >= 0 && s.open_resend_at <= now && !s.open_confirmed) {
                send_empty_open(key, s);
                sent = true;
            }
            for (auto& [offset, seg] : s.segments) {
                if (sent)
                    break;
                if (!seg.outstanding && !seg.confirmed && seg.resend_at >= 0 &&
                    seg.resend_at <= now) {
                    send_segment(key, s, seg);
                    sent = true;
                }
            }
            if (!sent && !holding) {
                const uint32_t end = s.send_end();
                const bool opening = s.opened_here && !s.open_sent;
                const bool fin_due = s.fin_written && !s.fin_sent;
                const uint32_t available = end - s.send_next;
                const uint32_t allowed = serial_less(s.send_next, s.send_limit)
                                             ? s.send_limit - s.send_next
                                             : 0;
                const slep_type type = opening ? slep_type::open : slep_type::data;
                const uint32_t length = std::min<uint32_t>(
                    { available, allowed, uint32_t(max_segment(type)) });
                const bool fin = s.fin_written && s.send_next + length == end;
                if (opening && length == 0 && !fin) {
                    send_empty_open(key, s);
                    sent = true;
                } else if (length > 0 || opening || (fin_due && fin)) {
                    segment seg;
                    seg.offset = s.send_next;
                    seg.length = length;
                    seg.fin = fin;
                    seg.is_open = opening;
                    // The burst's last PDU (nothing more written yet) asks for the ACK.
                    seg.ask_ack =
                        (s.send_next + length == end &&
                         !(s.compressed && s.tx_z.pending())) ||
                        s.send_next + length - s.ack_asked_at >= d_cfg.ack_every_bytes;
                    if (seg.ask_ack)
                        s.ack_asked_at = s.send_next + length;
                    auto& stored = s.segments[seg.offset] = seg;
                    send_segment(key, s, stored);
                    s.send_next += length;
                    s.open_sent = true;
                    if (fin)
                        s.fin_sent = true;
                    sent = true;
                }
            }
            if (sent && !was_waiting)
                s.last_progress = now;
            progress = progress || sent;
        }
    }
}

void slep::on_timer(double now)
{
    d_now = now;
    std::vector<slep_stream> stuck;
    std::set<uint32_t> nodes; // peers we share streams with
    for (auto& [key, s] : d_streams) {
        nodes.insert(s.node);
        if (awaiting_confirmation(s) && now - s.last_progress >= d_cfg.give_up_s)
            stuck.push_back(key);
        // Waiting for credit is waiting on the peer too: without a word from it for
        // give_up_s (a live HELLO-speaking peer answers keepalives), it is gone.
        else if (window_stalled(s) &&
                 now - std::max(s.last_progress, heard_from(s.node)) >= d_cfg.give_up_s)
            stuck.push_back(key);
    }
    for (auto key : stuck)
        end_stream(key, slep_reset_reason::timed_out, true, now);
    // Reached the far node, never ACKed: no SLEP was bound there then; send again.
    for (auto& [key, s] : d_streams)
        for (auto& [offset, seg] : s.segments)
            if (seg.reached && !seg.confirmed && seg.ack_wait_until <= now) {
                seg.reached = false;
                seg.resend_at = now;
            }
    for (auto it = d_reliable.begin(); it != d_reliable.end();) {
        if (now - it->second.first_sent >= d_cfg.give_up_s) {
            slep_event e{ slep_event::kind::datagram_failed };
            e.id = it->first;
            e.node = it->second.node;
            event(std::move(e));
            it = d_reliable.erase(it);
        } else {
            ++it;
        }
    }
    for (auto it = d_early.begin(); it != d_early.end();) {
        const auto& v = it->second;
        if (v.empty() || v.front().second > now) {
            ++it;
            continue;
        }
        // Its OPEN never came: a stream this side does not have (lost in a restart).
        const slep_pdu& p = v.front().first;
        send_reset(slep_stream_node(it->first),
                   p.stream,
                   false,
                   p.from,
                   p.to,
                   slep_reset_reason::unknown_stream,
                   now);
        d_time_wait[it->first] = now + d_cfg.time_wait_s;
        it = d_early.erase(it);
    }
    if (d_cfg.keepalive_s > 0)
        for (auto node : nodes) {
            auto& peer = d_peers[node];
            if (peer.speaks_hello &&
                now >= std::max(peer.last_heard, peer.hello_sent_at) + d_cfg.keepalive_s)
                peer.hello_due = true;
        }
    for (auto it = d_time_wait.begin(); it != d_time_wait.end();)
        it = it->second <= now ? d_time_wait.erase(it) : std::next(it);
    pump(now);
}

double slep::next_deadline() const
{
    double t = std::numeric_limits<double>::infinity();
    const auto consider = [&](double at) {
        if (at > d_now)
            t = std::min(t, at);
    };
    for (const auto& [key, s] : d_streams) {
        for (const auto& [offset, seg] : s.segments)
            if (seg.resend_at >= 0)
                consider(seg.resend_at);
        if (s.open_resend_at >= 0)
            consider(s.open_resend_at);
        if (coalescing(s, d_now))
            consider(coalesce_until(s));
        for (const auto& [offset, seg] : s.segments)
            if (seg.reached && !seg.confirmed)
                consider(seg.ack_wait_until);
        if (awaiting_confirmation(s))
            consider(s.last_progress + d_cfg.give_up_s);
        else if (window_stalled(s))
            consider(std::max(s.last_progress, heard_from(s.node)) + d_cfg.give_up_s);
    }
    for (const auto& [id, r] : d_reliable) {
        if (!r.outstanding && r.resend_at >= 0)
            consider(r.resend_at);
        consider(r.first_sent + d_cfg.give_up_s);
    }
    for (const auto& r : d_resets)
        if (r.resend_at >= 0)
            consider(r.resend_at);
    for (const auto& [key, a] : d_acks)
        consider(a.at);
    for (const auto& [key, v] : d_early)
        if (!v.empty())
            consider(v.front().second);
    for (const auto& [node, peer] : d_peers) {
        if (peer.hello_due)
            consider(std::max(peer.hello_sent_at + d_cfg.retry_s,
                              peer.answered ? -1.0 : peer.hello_not_before));
        if (d_cfg.keepalive_s > 0 && peer.speaks_hello)
            consider(std::max(peer.last_heard, peer.hello_sent_at) + d_cfg.keepalive_s);
    }
    return t;
}

slep_actions slep::take_actions()
{
    slep_actions a;
    std::swap(a, d_actions);
    return a;
}

} // namespace net
} // namespace hfstack
} // namespace gr
