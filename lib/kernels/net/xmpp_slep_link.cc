/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "xmpp_slep_link.h"

namespace gr {
namespace hfstack {
namespace net {

x2x_slep_link_config x2x_slep_link_config_for(const xmpp_bridge_config& c,
                                              uint32_t incarnation)
{
    x2x_slep_link_config l;
    l.slep.sap = c.sap;
    l.slep.incarnation = incarnation ? incarnation : 1;
    l.slep.confirmation = c.slep_client_confirmation
                              ? dl::sis_delivery_confirmation::client
                              : dl::sis_delivery_confirmation::node;
    l.slep.peer_acks = c.slep_peer_acks;

    l.address = c.slep_address;
    l.compress = c.compress;
    l.max_stanza_bytes = c.max_stanza_bytes;
    return l;
}

x2x_slep_link::x2x_slep_link(x2x_slep_link_config config)
    : d_cfg(std::move(config)), d_slep(d_cfg.slep)
{
    d_slep.listen(d_cfg.address);
}

void x2x_slep_link::notice(const std::string& kind, const std::string& text)
{
    if (d_noticed.insert(kind).second)
        d_actions.notices.push_back(text);
}

void x2x_slep_link::start(double now)
{
    d_now = now;
    d_slep.start(now);
    absorb(now);
}

void x2x_slep_link::on_disconnected(double now)
{
    d_now = now;
    end_bursts(now);
    d_slep.on_disconnected(now); // SLEP keeps the streams and sends again once rebound
    absorb(now);
}

void x2x_slep_link::on_sis(const dl::sis_primitive& p, double now)
{
    d_now = now;
    end_bursts(now);
    d_slep.on_sis(p, now);
    absorb(now);
}

void x2x_slep_link::on_timer(double now)
{
    d_now = now;
    end_bursts(now);
    d_slep.on_timer(now);
    absorb(now);
}

bool x2x_slep_link::can_send(uint32_t node) const
{
    if (!d_slep.bound())
        return false;
    const auto it = d_out.find(node);
    if (it == d_out.end())
        return true;
    const auto& o = it->second;
    size_t space = d_cfg.slep.send_buffer; // a stream not yet opened
    if (o.opened) {
        const auto info = d_slep.info(o.stream);
        if (!info)
            return true; // a new stream
        space = info->send_space;
    }
    // A stanza's bytes go in whole, with the burst's before it: room for them and a
    // large stanza (DEFLATE only shrinks them, but for 5 bytes per stored block).
    const size_t burst = o.unsent.size() + size_t(o.writer.unflushed_plain_bytes());
    const size_t need = burst + d_cfg.max_stanza_bytes;
    return space >= need + need / 1024 + 64;
}

bool x2x_slep_link::send(uint32_t node,
                         xmpp_stanza_id id,
                         const std::string& wire,
                         double now)
{
    d_now = now;
    if (!can_send(node))
        return false;
    auto it = d_out.find(node);
    if (it != d_out.end() && it->second.opened && !d_slep.exists(it->second.stream)) {
        fail_stream(node);
        it = d_out.end();
    }
    if (it == d_out.end())
        it = d_out.emplace(node, outgoing{ x2x_slep_writer(d_cfg.compress) }).first;
    auto& o = it->second;
    const bytes b = o.writer.write(id, wire, false);
    o.unsent.insert(o.unsent.end(), b.begin(), b.end());
    d_counters.stanzas_sent += 1;
    d_counters.plain_sent += wire.size();
    return true;
}

void x2x_slep_link::end_bursts(double now)
{
    for (auto& [node, o] : d_out) {
        if (!o.writer.unflushed() && o.unsent.empty())
            continue;
        const bytes rest = o.writer.flush();
        o.unsent.insert(o.unsent.end(), rest.begin(), rest.end());
        d_counters.wire_sent += o.unsent.size();
        if (!o.opened) {
            o.stream = d_slep.open(
                node, d_cfg.address, d_cfg.address, o.unsent, false, false, now);
            o.opened = true;
            d_counters.streams_opened += 1;
        } else {
            // Fits: can_send counted the burst.
            d_slep.write(o.stream, o.unsent.data(), o.unsent.size(), now);
        }
        o.unsent.clear();
    }
}

void x2x_slep_link::fail_stream(uint32_t node)
{
    auto it = d_out.find(node);
    if (it == d_out.end())
        return;
    for (auto id : it->second.writer.unconfirmed())
        d_actions.events.push_back(
            { x2x_slep_link_event::kind::failed, node, id, {}, "" });
    d_counters.streams_failed += 1;
    d_out.erase(it);
}

void x2x_slep_link::check_delivered()
{
    for (auto& [node, o] : d_out) {
        if (!o.opened)
            continue;
        const auto info = d_slep.info(o.stream);
        if (!info)
            continue;
        const uint64_t confirmed = info->bytes_written - info->unconfirmed;
        for (auto id : o.writer.confirmed(confirmed))
            d_actions.events.push_back(
                { x2x_slep_link_event::kind::delivered, node, id, {}, "" });
    }
}

void x2x_slep_link::drain(slep_stream s, double now)
{
    auto it = d_in.find(s);
    if (it == d_in.end())
        return;
    std::vector<xml_element> stanzas;
    const uint64_t plain_before = it->second.plain_bytes();
    bool ok = true;
    for (bytes chunk = d_slep.read(s, 16384, now); ok && !chunk.empty();
         chunk = d_slep.read(s, 16384, now)) {
        d_counters.wire_received += chunk.size();
        ok = it->second.feed(chunk.data(), chunk.size(), stanzas);
    }
    d_counters.plain_received += it->second.plain_bytes() - plain_before;
    const uint32_t node = slep_stream_node(s);
    for (auto& st : stanzas) {
        d_counters.stanzas_received += 1;
        d_actions.events.push_back(
            { x2x_slep_link_event::kind::stanza, node, 0, std::move(st), "" });
    }
    if (!ok) {
        d_counters.bad_streams += 1;
        notice("bad_stream",
               it->second.error() + " from " + dl::address_to_string(node) +
                   ": stream reset (counted from now on)");
        d_in.erase(it);
        d_slep.reset(s, now);
    }
}

void x2x_slep_link::absorb(double now)
{
    for (int round = 0; round < 4; ++round) { // reading may produce more SLEP actions
        auto a = d_slep.take_actions();
        for (auto& p : a.to_sis)
            d_actions.to_sis.push_back(std::move(p));
        for (auto& n : a.notices)
            d_actions.notices.push_back(std::move(n));
        if (a.events.empty())
            break;
        for (auto& e : a.events) {
            using K = slep_event::kind;
            switch (e.what) {
            case K::bound:
                d_actions.events.push_back(
                    { x2x_slep_link_event::kind::bound, 0, 0, {}, "" });
                break;
            case K::unbound:
                d_actions.events.push_back(
                    { x2x_slep_link_event::kind::unbound, 0, 0, {}, e.text });
                break;
            case K::incoming:
                d_in.emplace(e.stream,
                             x2x_slep_reader(d_cfg.compress, d_cfg.max_stanza_bytes));
                drain(e.stream, now);
                break;
            case K::readable:
                drain(e.stream, now);
                break;
            case K::closed:
            case K::reset: {
                d_in.erase(e.stream);
                const uint32_t node = slep_stream_node(e.stream);
                const auto out = d_out.find(node);
                if (out != d_out.end() && out->second.opened &&
                    out->second.stream == e.stream) {
                    check_delivered();
                    fail_stream(node);
                }
                break;
            }
            default:
                break;
            }
        }
    }
    check_delivered();
}

x2x_slep_link_actions x2x_slep_link::take_actions()
{
    end_bursts(d_now);
    absorb(d_now);
    x2x_slep_link_actions out;
    std::swap(out, d_actions);
    return out;
}

} // namespace net
} // namespace hfstack
} // namespace gr
