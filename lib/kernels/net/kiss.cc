/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "kiss.h"

#include "dl/dpdu.h"

#include <cmath>
#include <stdexcept>

namespace gr {
namespace hfstack {
namespace net {

void kiss_decoder::end_frame(std::vector<kiss_frame>& out)
{
    if (d_bad)
        d_counters.bad_escapes += 1;
    else if (d_oversize)
        d_counters.oversize += 1;
    else if (!d_buf.empty() && !d_escape) {
        kiss_frame f;
        const uint8_t type = d_buf[0];
        f.port = type == kiss_return_command ? 0 : type >> 4;
        f.command = type == kiss_return_command ? type : type & 0x0F;
        f.data.assign(d_buf.begin() + 1, d_buf.end());
        d_counters.frames += 1;
        out.push_back(std::move(f));
    } else if (d_escape)
        d_counters.bad_escapes += 1; // FESC right before the closing FEND
    d_buf.clear();
    d_escape = d_bad = d_oversize = false;
}

void kiss_decoder::feed(const uint8_t* data, size_t size, std::vector<kiss_frame>& out)
{
    for (size_t i = 0; i < size; ++i) {
        const uint8_t b = data[i];
        if (b == kiss_fend) {
            if (d_synced)
                end_frame(out);
            d_synced = true;
            continue;
        }
        if (!d_synced) {
            d_counters.garbage_bytes += 1;
            continue;
        }
        if (d_bad || d_oversize)
            continue; // dropped up to the next FEND
        uint8_t value = b;
        if (d_escape) {
            d_escape = false;
            if (b == kiss_tfend)
                value = kiss_fend;
            else if (b == kiss_tfesc)
                value = kiss_fesc;
            else {
                d_bad = true;
                continue;
            }
        } else if (b == kiss_fesc) {
            d_escape = true;
            continue;
        }
        if (d_buf.size() >= d_max) {
            d_oversize = true;
            d_buf.clear();
            continue;
        }
        d_buf.push_back(value);
    }
}

bytes kiss_encode(uint8_t port, uint8_t command, const uint8_t* data, size_t size)
{
    bytes out;
    out.reserve(size + size / 16 + 4);
    out.push_back(kiss_fend);
    const uint8_t type = command == kiss_return_command
                             ? command
                             : uint8_t((port & 0x0F) << 4 | (command & 0x0F));
    auto put = [&out](uint8_t b) {
        if (b == kiss_fend) {
            out.push_back(kiss_fesc);
            out.push_back(kiss_tfend);
        } else if (b == kiss_fesc) {
            out.push_back(kiss_fesc);
            out.push_back(kiss_tfesc);
        } else
            out.push_back(b);
    };
    put(type);
    for (size_t i = 0; i < size; ++i)
        put(data[i]);
    out.push_back(kiss_fend);
    return out;
}

kiss_gateway::kiss_gateway(kiss_gateway_config config) : d_cfg(std::move(config))
{
    if (d_cfg.routes.empty())
        throw std::invalid_argument("KISS: at least one port route is needed");
    std::set<uint8_t> ports;
    for (const auto& r : d_cfg.routes) {
        if (r.port > 15)
            throw std::invalid_argument("KISS: port " + std::to_string(r.port) +
                                        " above 15");
        if (r.sap > 15)
            throw std::invalid_argument("KISS: SAP " + std::to_string(r.sap) +
                                        " above 15");
        if (r.priority > 15)
            throw std::invalid_argument("KISS: priority above 15");
        if (r.destination > dl::broadcast_address)
            throw std::invalid_argument("KISS: destination is not a 5066 address");
        if (!ports.insert(r.port).second)
            throw std::invalid_argument("KISS: port " + std::to_string(r.port) +
                                        " routed twice");
        if (d_saps.count(r.sap))
            throw std::invalid_argument("KISS: SAP " + std::to_string(r.sap) +
                                        " serves two ports (one SAP per port)");
        d_saps[r.sap].route = &r;
    }
    if (d_cfg.max_frame == 0 || d_cfg.max_queued == 0)
        throw std::invalid_argument("KISS: max_frame and max_queued must be positive");
}

std::vector<uint8_t> kiss_gateway::saps() const
{
    std::vector<uint8_t> out;
    for (const auto& [sap, s] : d_saps)
        out.push_back(sap);
    return out;
}

bool kiss_gateway::bound(uint8_t sap) const
{
    const auto it = d_saps.find(sap);
    return it != d_saps.end() && it->second.bound;
}

void kiss_gateway::notice(const std::string& kind, const std::string& text)
{
    if (d_noticed.insert(kind).second)
        d_actions.notices.push_back(text);
}

void kiss_gateway::start(uint8_t sap)
{
    auto it = d_saps.find(sap);
    if (it == d_saps.end())
        return;
    const kiss_route& r = *it->second.route;
    dl::sis_primitive b;
    b.type = dl::sis_type::bind_request;
    b.sap = sap;
    b.rank = d_cfg.rank;
    const bool arq = r.arq && !(r.destination & dl::group_address_flag);
    b.service_type.tx_mode = arq ? dl::sis_tx_mode::arq : dl::sis_tx_mode::non_arq;
    b.service_type.delivery_order = dl::sis_delivery_order::in_order;
    b.service_type.min_retransmissions = arq ? 0 : r.repeats;
    it->second.bound = false;
    it->second.flow_on = true;
    d_actions.to_sis.emplace_back(sap, b);
}

void kiss_gateway::on_disconnected(uint8_t sap)
{
    auto it = d_saps.find(sap);
    if (it != d_saps.end())
        it->second.bound = false; // queued frames wait for the next bind
}

void kiss_gateway::send(sap_state& s)
{
    const kiss_route& r = *s.route;
    while (s.bound && s.flow_on && !s.queue.empty()) {
        dl::sis_primitive p;
        p.type = dl::sis_type::unidata_request;
        p.priority = r.priority;
        p.destination_sap = r.sap;
        p.destination = dl::sis_address{ r.destination, 7 };
        auto& st = p.service_type;
        if (r.arq && !(r.destination & dl::group_address_flag)) {
            st.tx_mode = dl::sis_tx_mode::arq;
            st.delivery_confirmation = dl::sis_delivery_confirmation::none;
            st.delivery_order = dl::sis_delivery_order::in_order;
        } else {
            st.tx_mode = dl::sis_tx_mode::non_arq;
            st.delivery_confirmation = dl::sis_delivery_confirmation::none;
            st.delivery_order = dl::sis_delivery_order::as_they_arrive;
            st.min_retransmissions = r.repeats;
        }
        // SIS TTL in 2 s units, at least one unit when set.
        p.ttl = r.ttl_s > 0
                    ? uint32_t(std::min(std::ceil(r.ttl_s / 2.0), double(0xFFFFF)))
                    : 0;
        p.payload = std::move(s.queue.front());
        s.queue.pop_front();
        d_counters.updus_sent += 1;
        d_actions.to_sis.emplace_back(r.sap, std::move(p));
    }
}

void kiss_gateway::on_sis(uint8_t sap, const dl::sis_primitive& p)
{
    auto it = d_saps.find(sap);
    if (it == d_saps.end())
        return;
    sap_state& s = it->second;
    using T = dl::sis_type;
    switch (p.type) {
    case T::bind_accepted:
        s.bound = true;
        s.flow_on = true;
        s.mtu = p.mtu;
        send(s);
        break;
    case T::bind_rejected:
        s.bound = false;
        notice("bind_rejected_" + std::to_string(sap),
               "the node refused to bind SAP " + std::to_string(sap) + " (reason " +
                   std::to_string(p.reason) + ")");
        break;
    case T::unbind_indication:
        s.bound = false;
        notice("unbound_" + std::to_string(sap),
               "the node unbound SAP " + std::to_string(sap) + " (reason " +
                   std::to_string(p.reason) + ")");
        break;
    case T::data_flow_on:
        s.flow_on = true;
        send(s);
        break;
    case T::data_flow_off:
        s.flow_on = false;
        break;
    case T::unidata_indication:
    case T::expedited_unidata_indication: {
        d_counters.updus_received += 1;
        d_counters.bytes_received += p.payload.size();
        const bytes frame = kiss_encode(s.route->port, p.payload);
        d_actions.to_clients.insert(
            d_actions.to_clients.end(), frame.begin(), frame.end());
        d_counters.frames_to_clients += 1;
        break;
    }
    case T::unidata_request_confirm:
    case T::expedited_unidata_request_confirm:
        d_counters.confirmed += 1;
        break;
    case T::unidata_request_rejected:
    case T::expedited_unidata_request_rejected:
        d_counters.rejected += 1;
        notice("rejected",
               "the node rejected a frame's U_PDU (reason " + std::to_string(p.reason) +
                   "; counted from now on)");
        break;
    default:
        break;
    }
}

void kiss_gateway::on_frame(const kiss_frame& f)
{
    if (f.command != kiss_data_command) {
        d_counters.commands_ignored += 1;
        return;
    }
    d_counters.frames_from_clients += 1;
    d_counters.bytes_from_clients += f.data.size();
    const kiss_route* route = nullptr;
    for (const auto& r : d_cfg.routes)
        if (r.port == f.port)
            route = &r;
    if (!route) {
        d_counters.unknown_port += 1;
        notice("unknown_port",
               "a frame for KISS port " + std::to_string(f.port) +
                   ", which no route names, dropped (counted from now on)");
        return;
    }
    if (f.data.empty())
        return;
    sap_state& s = d_saps[route->sap];
    if (f.data.size() > d_cfg.max_frame || (s.mtu && f.data.size() > s.mtu)) {
        d_counters.too_large += 1;
        notice("too_large",
               "a KISS frame of " + std::to_string(f.data.size()) +
                   " bytes exceeds the U_PDU limit, dropped (counted)");
        return;
    }
    if (s.queue.size() >= d_cfg.max_queued) {
        d_counters.queue_full += 1;
        notice("queue_full", "the node is not taking frames: excess dropped (counted)");
        return;
    }
    s.queue.push_back(f.data);
    send(s);
}

void kiss_gateway::on_client_bytes(int client, const uint8_t* data, size_t size)
{
    auto it = d_clients.find(client);
    if (it == d_clients.end())
        // The decoder's limit counts the type byte.
        it = d_clients.emplace(client, kiss_decoder(d_cfg.max_frame + 1)).first;
    auto& dec = it->second;
    const kiss_decoder_counters before = dec.counters();
    std::vector<kiss_frame> frames;
    dec.feed(data, size, frames);
    const auto& after = dec.counters();
    d_counters.garbage_bytes += after.garbage_bytes - before.garbage_bytes;
    d_counters.bad_escapes += after.bad_escapes - before.bad_escapes;
    d_counters.oversize += after.oversize - before.oversize;
    for (const auto& f : frames)
        on_frame(f);
}

void kiss_gateway::on_client_closed(int client) { d_clients.erase(client); }

kiss_gateway_actions kiss_gateway::take_actions()
{
    kiss_gateway_actions out;
    std::swap(out, d_actions);
    return out;
}

} // namespace net
} // namespace hfstack
} // namespace gr
