/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "test_client.h"

#include "dl/rcop.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace gr {
namespace hfstack {
namespace traffic {

namespace {

constexpr size_t payload_header_size = 8;
constexpr double inf = std::numeric_limits<double>::infinity();

uint8_t pattern(uint32_t seq, size_t i) { return uint8_t(seq * 131u + i * 7u); }

void check_time(const char* name, double v)
{
    if (!(v >= 0) || !std::isfinite(v))
        throw std::invalid_argument(std::string("client_config.") + name +
                                    " must be finite and >= 0");
}

} // namespace

void validate(const client_config& c)
{
    if (c.sap > 15)
        throw std::invalid_argument("client_config.sap must be 0..15");
    if (c.peer_sap > 15)
        throw std::invalid_argument("client_config.peer_sap must be 0..15");
    if (c.priority > 15)
        throw std::invalid_argument("client_config.priority must be 0..15");
    if (c.ttl >= (1u << 20))
        throw std::invalid_argument("client_config.ttl must fit 20 bits");
    const size_t least = (c.framing == encapsulation::rcop ? dl::rcop_header_size : 0) +
                         payload_header_size;
    if (c.pings && c.ping_bytes < least)
        throw std::invalid_argument("client_config.ping_bytes must be at least " +
                                    std::to_string(least));
    if (c.send_bytes && c.updu_size < least)
        throw std::invalid_argument("client_config.updu_size must be at least " +
                                    std::to_string(least));
    if (c.updu_size > 65535 || c.ping_bytes > 65535)
        throw std::invalid_argument(
            "client_config.updu_size and ping_bytes must be at most 65535");
    if (c.confirm && !c.arq)
        throw std::invalid_argument(
            "client_config.confirm needs arq (non-ARQ has no confirm)");
    if (c.send_bytes && c.confirm && c.window == 0)
        throw std::invalid_argument("client_config.window must be at least 1");
    check_time("ping_interval_s", c.ping_interval_s);
    check_time("ping_gap_s", c.ping_gap_s);
    check_time("ping_timeout_s", c.ping_timeout_s);
    check_time("ping_start_s", c.ping_start_s);
    check_time("echo_delay_s", c.echo_delay_s);
    if (c.pings && c.ping_timeout_s == 0)
        throw std::invalid_argument("client_config.ping_timeout_s must be > 0");
}

test_client::test_client(client_config config) : d_cfg(config), d_held(config.hold_sender)
{
    validate(d_cfg);
}

void test_client::release_sender(double now)
{
    if (!d_held)
        return;
    d_held = false;
    pump(now);
}

size_t test_client::framing_size() const
{
    return d_cfg.framing == encapsulation::rcop ? dl::rcop_header_size : 0;
}

size_t test_client::min_updu_size() const { return framing_size() + payload_header_size; }

size_t test_client::payload_size(size_t updu_size) const
{
    return updu_size > framing_size() ? updu_size - framing_size() : 0;
}

void test_client::start(double)
{
    dl::sis_primitive b;
    b.type = dl::sis_type::bind_request;
    b.sap = d_cfg.sap;
    b.service_type.tx_mode = d_cfg.arq ? dl::sis_tx_mode::arq : dl::sis_tx_mode::non_arq;
    b.service_type.delivery_confirmation = d_cfg.confirm
                                               ? dl::sis_delivery_confirmation::node
                                               : dl::sis_delivery_confirmation::none;
    d_out.push_back(b);
}

dl::sis_primitive test_client::unidata(
    kind k, uint32_t seq, size_t updu_size, uint32_t to, uint8_t to_sap) const
{
    dl::sis_primitive u;
    u.type = d_cfg.expedited ? dl::sis_type::expedited_unidata_request
                             : dl::sis_type::unidata_request;
    u.priority = d_cfg.priority;
    u.destination = dl::sis_address{ to, 7 };
    u.destination_sap = to_sap;
    u.ttl = d_cfg.ttl;
    u.service_type.tx_mode = d_cfg.arq ? dl::sis_tx_mode::arq : dl::sis_tx_mode::non_arq;
    if (d_cfg.confirm && k == data)
        u.service_type.delivery_confirmation = dl::sis_delivery_confirmation::node;

    dl::bytes payload(payload_size(updu_size));
    payload[0] = 'H';
    payload[1] = 'F';
    payload[2] = k;
    payload[3] = d_cfg.flow;
    for (int b = 0; b < 4; ++b)
        payload[4 + b] = uint8_t(seq >> (24 - 8 * b));
    for (size_t i = payload_header_size; i < payload.size(); ++i)
        payload[i] = pattern(seq, i);
    if (d_cfg.framing == encapsulation::rcop) {
        dl::rcop_pdu r;
        r.header.connection_id = uint8_t(d_cfg.flow & 0x0F);
        r.header.updu_id = d_rcop_updu_id;
        r.header.application_id = d_cfg.application_id;
        r.data = std::move(payload);
        u.payload = dl::encode(r);
    } else {
        u.payload = std::move(payload);
    }
    return u;
}

void test_client::send_ping(double now)
{
    const uint32_t seq = uint32_t(d_report.pings.size());
    d_out.push_back(unidata(ping, seq, d_cfg.ping_bytes, d_cfg.peer, d_cfg.peer_sap));
    ++d_rcop_updu_id;
    d_report.pings.push_back(ping_record{ now });
    if (d_cfg.ping_interval_s > 0) {
        const bool last = d_report.pings.size() == d_cfg.pings;
        d_next_ping = last ? inf : now + d_cfg.ping_interval_s;
        if (last) // stragglers get ping_timeout_s
            d_ping_deadline = now + d_cfg.ping_timeout_s;
    } else {
        d_next_ping = inf;
        d_ping_outstanding = true;
        d_ping_deadline = now + d_cfg.ping_timeout_s;
    }
}

void test_client::pump(double now)
{
    if (!d_report.bound || d_held || (d_cfg.send_after_pings && !pings_done()))
        return;
    // At most `window` U_PDUs per call: the node's DATA_FLOW_OFF can only come once it
    // has them, so the rest follows from on_timer (next_deadline() is then now).
    d_more_at = std::numeric_limits<double>::infinity();
    for (unsigned batch = 0;
         d_cfg.send_bytes && d_report.bytes_sent < d_cfg.send_bytes && !d_flow_off &&
         (!d_cfg.confirm || d_unconfirmed < d_cfg.window);
         ++batch) {
        if (batch == d_cfg.window) {
            d_more_at = now;
            break;
        }
        const size_t size = size_t(
            std::min<uint64_t>(d_cfg.updu_size, d_cfg.send_bytes - d_report.bytes_sent));
        d_out.push_back(unidata(data,
                                d_data_seq++,
                                std::max(size, min_updu_size()),
                                d_cfg.peer,
                                d_cfg.peer_sap));
        ++d_rcop_updu_id;
        ++d_report.updus_sent;
        d_report.bytes_sent += d_out.back().payload.size();
        if (std::isnan(d_report.first_send_at))
            d_report.first_send_at = now;
        if (d_cfg.confirm)
            ++d_unconfirmed;
    }
}

void test_client::on_unidata(const dl::sis_primitive& p, double now)
{
    const size_t updu_size = p.payload.size();
    if (updu_size < min_updu_size()) {
        ++d_report.foreign;
        return;
    }
    const uint8_t* body = p.payload.data() + framing_size();
    const size_t size = updu_size - framing_size();
    if (body[0] != 'H' || body[1] != 'F') {
        ++d_report.foreign;
        return;
    }
    const uint8_t k = body[2], flow = body[3];
    const uint32_t seq = (uint32_t(body[4]) << 24) | (uint32_t(body[5]) << 16) |
                         (uint32_t(body[6]) << 8) | body[7];
    for (size_t i = payload_header_size; i < size; ++i)
        if (body[i] != pattern(seq, i)) {
            ++d_report.corrupt;
            return;
        }

    switch (k) {
    case data: {
        ++d_report.updus_received;
        d_report.bytes_received += updu_size;
        auto& series = d_report.received_by_flow[flow];
        series.emplace_back(now, (series.empty() ? 0 : series.back().second) + updu_size);
        uint64_t& next = d_report.next_seq_by_flow[flow];
        if (seq == next) {
            ++next;
        } else if (seq > next) {
            ++d_report.out_of_order; // some are missing (non-ARQ) or come later
            next = uint64_t(seq) + 1;
        } else {
            ++d_report.duplicates; // or a late one: ARQ in order never gets here
        }
        return;
    }
    case ping:
        if (d_cfg.echo) {
            dl::sis_primitive reply;
            reply.type = d_cfg.expedited ? dl::sis_type::expedited_unidata_request
                                         : dl::sis_type::unidata_request;
            reply.destination = p.source;
            reply.destination_sap = p.source_sap;
            reply.priority = d_cfg.priority;
            reply.ttl = d_cfg.ttl;
            reply.service_type.tx_mode =
                d_cfg.arq ? dl::sis_tx_mode::arq : dl::sis_tx_mode::non_arq;
            reply.payload = p.payload;
            reply.payload[framing_size() + 2] = answer;
            d_echo_due.emplace(now + d_cfg.echo_delay_s, std::move(reply));
            if (d_cfg.echo_delay_s == 0)
                on_timer(now);
        }
        return;
    case answer:
        if (seq < d_report.pings.size() && std::isnan(d_report.pings[seq].rtt_s)) {
            d_report.pings[seq].rtt_s = now - d_report.pings[seq].sent_at;
            ++d_pings_answered;
            if (d_cfg.ping_interval_s == 0 && seq + 1 == d_report.pings.size()) {
                d_ping_outstanding = false;
                d_ping_deadline = inf;
                if (d_report.pings.size() < d_cfg.pings)
                    d_next_ping = now + d_cfg.ping_gap_s;
                if (d_next_ping <= now)
                    send_ping(now);
            }
            pump(now);
        }
        return;
    default:
        ++d_report.foreign;
    }
}

void test_client::on_primitive(const dl::sis_primitive& p, double now)
{
    using dl::sis_type;
    switch (p.type) {
    case sis_type::bind_accepted:
        if (d_report.bound)
            return;
        d_report.bound = true;
        d_report.bound_at = now;
        if (d_cfg.pings)
            d_next_ping = now + d_cfg.ping_start_s;
        if (d_next_ping <= now)
            send_ping(now);
        pump(now);
        return;
    case sis_type::bind_rejected:
        d_report.error = "bind rejected (reason " + std::to_string(p.reason) + ")";
        return;
    case sis_type::unbind_indication:
        d_report.bound = false;
        d_report.error = "unbound by the node (reason " + std::to_string(p.reason) + ")";
        d_next_ping = d_ping_deadline = inf;
        return;
    case sis_type::keep_alive:
        d_out.push_back(p);
        return;
    case sis_type::data_flow_off:
        d_flow_off = true;
        ++d_report.flow_off;
        return;
    case sis_type::data_flow_on:
        d_flow_off = false;
        pump(now);
        return;
    case sis_type::unidata_request_confirm:
    case sis_type::expedited_unidata_request_confirm:
        ++d_report.updus_confirmed;
        d_report.bytes_confirmed += p.payload.size(); // may be a prefix: counted as sent
        if (d_unconfirmed)
            --d_unconfirmed;
        pump(now);
        return;
    case sis_type::unidata_request_rejected:
    case sis_type::expedited_unidata_request_rejected:
        ++d_report.updus_rejected;
        ++d_report.rejections[p.reason];
        if (d_cfg.confirm && d_unconfirmed)
            --d_unconfirmed;
        pump(now);
        return;
    case sis_type::unidata_indication:
    case sis_type::expedited_unidata_indication:
        on_unidata(p, now);
        return;
    default:
        return; // hard links, subnet availability, management: not ours
    }
}

void test_client::on_timer(double now)
{
    if (now >= d_more_at)
        pump(now);
    while (!d_echo_due.empty() && d_echo_due.begin()->first <= now) {
        d_out.push_back(std::move(d_echo_due.begin()->second));
        d_echo_due.erase(d_echo_due.begin());
    }
    if (now >= d_ping_deadline) { // unanswered: carry on, or give up on the stragglers
        d_ping_deadline = inf;
        if (d_ping_outstanding) {
            d_ping_outstanding = false;
            if (d_report.pings.size() < d_cfg.pings)
                d_next_ping = now + d_cfg.ping_gap_s;
        } else {
            d_pings_given_up = true;
        }
        pump(now);
    }
    if (d_report.bound && now >= d_next_ping && d_report.pings.size() < d_cfg.pings)
        send_ping(now);
}

double test_client::next_deadline() const
{
    double t = std::min({ d_next_ping, d_ping_deadline, d_flow_off ? inf : d_more_at });
    if (!d_echo_due.empty())
        t = std::min(t, d_echo_due.begin()->first);
    return t;
}

std::vector<dl::sis_primitive> test_client::take_outgoing()
{
    std::vector<dl::sis_primitive> out;
    out.swap(d_out);
    return out;
}

bool test_client::pings_done() const
{
    return d_report.pings.size() >= d_cfg.pings && !d_ping_outstanding &&
           (d_cfg.ping_interval_s == 0 || d_pings_given_up ||
            d_pings_answered == d_report.pings.size());
}

bool test_client::done() const
{
    if (!d_report.error.empty())
        return true;
    const bool sent =
        d_report.bytes_sent >= d_cfg.send_bytes && (!d_cfg.confirm || d_unconfirmed == 0);
    return sent && pings_done();
}

} // namespace traffic
} // namespace hfstack
} // namespace gr
