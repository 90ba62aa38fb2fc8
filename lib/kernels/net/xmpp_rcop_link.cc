/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "xmpp_rcop_link.h"

#include <algorithm>
#include <stdexcept>

namespace gr {
namespace hfstack {
namespace net {

namespace {

uint32_t node_of(const dl::sis_address& a) { return a.address & 0x1FFFFFFF; }

uint64_t errors(const x2x_rcop_counters& c)
{
    return c.truncated + c.out_of_order + c.foreign + c.short_pdus + c.malformed;
}

} // namespace

x2x_rcop_link_config x2x_rcop_link_config_for(const xmpp_bridge_config& c)
{
    x2x_rcop_link_config l;
    l.sap = c.sap;
    l.connection_id = c.rcop_connection_id;
    l.application_id = c.rcop_application_id;
    l.max_stanza_bytes = c.max_stanza_bytes;
    l.confirmation = c.rcop_client_confirmation ? dl::sis_delivery_confirmation::client
                                                : dl::sis_delivery_confirmation::node;
    return l;
}

x2x_rcop_link::x2x_rcop_link(x2x_rcop_link_config config) : d_cfg(config)
{
    if (d_cfg.sap > 15 || d_cfg.connection_id > 15)
        throw std::invalid_argument("x2x-rcop: sap and connection ID must be 0..15");
    if (d_cfg.max_outstanding == 0 || d_cfg.max_outstanding > 128)
        throw std::invalid_argument("x2x-rcop: max_outstanding must be 1..128");
}

void x2x_rcop_link::notice(const std::string& kind, const std::string& text)
{
    if (d_noticed.insert(kind).second)
        d_actions.notices.push_back(text);
}

void x2x_rcop_link::start(double)
{
    d_actions.to_sis.push_back(
        dl::arq_bind_request(d_cfg.sap, d_cfg.rank, d_cfg.confirmation, true));
}

void x2x_rcop_link::fail_all()
{
    for (const auto& w : d_awaiting)
        d_actions.events.push_back(
            { x2x_rcop_event::kind::failed, w.node, w.id, {}, "" });
    d_awaiting.clear();
}

void x2x_rcop_link::on_disconnected(double)
{
    const bool was = d_bound;
    d_bound = false;
    fail_all(); // their fate is unknown: the bridge sends them again
    if (was)
        d_actions.events.push_back(
            { x2x_rcop_event::kind::unbound, 0, 0, {}, "disconnected" });
}

bool x2x_rcop_link::can_send(uint32_t node) const
{
    if (!d_bound || !d_flow_on)
        return false;
    const auto n = std::count_if(d_awaiting.begin(),
                                 d_awaiting.end(),
                                 [&](const awaiting& w) { return w.node == node; });
    return size_t(n) < d_cfg.max_outstanding;
}

bool x2x_rcop_link::send(uint32_t node,
                         xmpp_stanza_id id,
                         const std::string& wire,
                         double)
{
    if (!can_send(node))
        return false;
    auto it = d_senders.find(node);
    if (it == d_senders.end())
        it = d_senders
                 .emplace(
                     node,
                     x2x_rcop_sender(d_cfg.connection_id, d_cfg.application_id, d_mtu))
                 .first;
    const auto pdus = it->second.encode(wire);
    d_awaiting.push_back({ node, id, it->second.last_updu_id(), uint16_t(pdus.size()) });
    for (const auto& pdu : pdus) {
        dl::sis_primitive r;
        r.type = dl::sis_type::unidata_request;
        r.priority = d_cfg.priority;
        r.destination_sap = d_cfg.sap;
        r.destination = dl::sis_address{ node, 7 };
        r.service_type.tx_mode = dl::sis_tx_mode::arq;
        r.service_type.delivery_confirmation = d_cfg.confirmation;
        r.service_type.delivery_order = dl::sis_delivery_order::in_order;
        r.ttl = 0;
        r.payload = pdu;
        d_actions.to_sis.push_back(std::move(r));
    }
    return true;
}

void x2x_rcop_link::on_confirm(const dl::sis_primitive& p, bool delivered)
{
    const auto h = dl::decode_rcop_header(p.payload.data(), p.payload.size());
    const uint32_t node = node_of(p.destination);
    auto it = d_awaiting.end();
    if (h && h.value.connection_id == d_cfg.connection_id &&
        h.value.application_id == d_cfg.application_id)
        it = std::find_if(d_awaiting.begin(), d_awaiting.end(), [&](const awaiting& w) {
            return w.node == node && w.updu_id == h.value.updu_id &&
                   h.value.segment_number < w.segments;
        });
    if (it == d_awaiting.end()) {
        d_stale += 1; // a stanza already failed, or not ours
        return;
    }
    if (!delivered) {
        notice("rejected_" + std::to_string(p.reason),
               "the node rejected x2x-rcop PDUs to " + dl::address_to_string(node) +
                   " (reason " + std::to_string(p.reason) +
                   "); the bridge sends those stanzas again");
        d_actions.events.push_back(
            { x2x_rcop_event::kind::failed, node, it->id, {}, "" });
        d_awaiting.erase(it);
        return;
    }
    if (++it->confirmed < it->segments)
        return;
    d_actions.events.push_back({ x2x_rcop_event::kind::delivered, node, it->id, {}, "" });
    d_awaiting.erase(it);
}

void x2x_rcop_link::on_sis(const dl::sis_primitive& p, double now)
{
    using T = dl::sis_type;
    switch (p.type) {
    case T::bind_accepted:
        d_bound = true;
        d_flow_on = true;
        if (p.mtu >= 64)
            d_mtu = std::min<size_t>(p.mtu, 2048);
        d_senders.clear(); // cut for the new MTU
        d_actions.events.push_back({ x2x_rcop_event::kind::bound, 0, 0, {}, "" });
        break;
    case T::bind_rejected:
        d_actions.events.push_back(
            { x2x_rcop_event::kind::unbound,
              0,
              0,
              {},
              "bind refused (reason " + std::to_string(p.reason) + ")" });
        notice("bind_rejected", "the node refused SAP " + std::to_string(d_cfg.sap));
        break;
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
        on_confirm(p, true);
        break;
    case T::unidata_request_rejected:
        on_confirm(p, false);
        break;
    case T::unidata_indication: {
        const uint32_t node = node_of(p.source);
        auto it = d_receivers.find(node);
        if (it == d_receivers.end())
            it = d_receivers
                     .emplace(node,
                              x2x_rcop_receiver(d_cfg.connection_id,
                                                d_cfg.application_id,
                                                d_cfg.max_stanza_bytes))
                     .first;
        const uint64_t before = errors(it->second.counters());
        auto s = it->second.on_pdu(p.payload.data(), p.payload.size());
        if (s)
            d_actions.events.push_back(
                { x2x_rcop_event::kind::stanza, node, 0, std::move(*s), "" });
        if (errors(it->second.counters()) > before)
            notice("bad_pdu",
                   it->second.last_error() + " (dropped and counted from now on)");
        break;
    }
    default:
        break;
    }
}

x2x_rcop_actions x2x_rcop_link::take_actions()
{
    x2x_rcop_actions out;
    std::swap(out, d_actions);
    return out;
}

x2x_rcop_counters x2x_rcop_link::receive_counters() const
{
    x2x_rcop_counters sum;
    for (const auto& [node, r] : d_receivers) {
        const auto& c = r.counters();
        sum.pdus += c.pdus;
        sum.stanzas += c.stanzas;
        sum.truncated += c.truncated;
        sum.out_of_order += c.out_of_order;
        sum.foreign += c.foreign;
        sum.short_pdus += c.short_pdus;
        sum.malformed += c.malformed;
    }
    return sum;
}

} // namespace net
} // namespace hfstack
} // namespace gr
