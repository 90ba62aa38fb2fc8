/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "ip_host.h"

#include <cmath>
#include <memory>
#include <stdexcept>

namespace gr {
namespace hfstack {
namespace traffic {

using net::bytes;

namespace {

constexpr uint16_t dns_port = 53;
constexpr uint16_t client_port = 40053;
constexpr uint16_t ping_identifier = 0x5066;
constexpr size_t ping_data = 56;    // Linux ping's default
constexpr size_t dns_question = 33; // header, an 11-character name, type and class
constexpr size_t dns_answer = 49;   // the question and one A record

bytes filled(size_t n, uint16_t seq)
{
    bytes b(n);
    for (size_t i = 0; i < n; ++i)
        b[i] = uint8_t(i + seq);
    if (n >= 2) { // the sequence number, so the answer names its question
        b[0] = uint8_t(seq >> 8);
        b[1] = uint8_t(seq);
    }
    return b;
}

uint16_t get16(const bytes& d, size_t at) { return uint16_t(d[at] << 8 | d[at + 1]); }

} // namespace

ip_host::ip_host(ip_host_config config) : d_cfg(std::move(config)), d_client(d_cfg.client)
{
    if (d_cfg.own.version != 4 || d_cfg.own.is_unspecified())
        throw std::invalid_argument("ip_host: own must be an IPv4 host address");
    if (d_cfg.target && d_cfg.target->version != 4)
        throw std::invalid_argument("ip_host: the target must be an IPv4 address");
    if (!(d_cfg.gap_s >= 0) || !(d_cfg.timeout_s > 0) || !(d_cfg.start_s >= 0))
        throw std::invalid_argument("ip_host: gap_s, start_s >= 0 and timeout_s > 0");
}

void ip_host::start(double now)
{
    d_client.start(now);
    collect(now);
}

void ip_host::collect(double now)
{
    // The client's actions: datagrams for the host go through its stack (whose answers
    // go back into the client); primitives go to the node.
    for (int round = 0; round < 8; ++round) {
        auto a = d_client.take_actions();
        for (auto& p : a.to_sis)
            d_out.push_back(std::move(p));
        if (a.to_tun.empty())
            break;
        for (auto& d : a.to_tun)
            receive(d, now);
    }
    if (!d_started && d_client.bound()) {
        d_started = true;
        if (d_cfg.target && d_cfg.requests > 0)
            d_next_request = now + d_cfg.start_s;
    }
}

void ip_host::send_request(double now)
{
    ++d_sequence;
    bytes datagram;
    if (d_cfg.kind == ip_request_kind::ping)
        datagram = net::make_icmp_echo(d_cfg.own,
                                       *d_cfg.target,
                                       true,
                                       ping_identifier,
                                       d_sequence,
                                       filled(ping_data, d_sequence));
    else
        datagram = net::make_udp(d_cfg.own,
                                 *d_cfg.target,
                                 client_port,
                                 dns_port,
                                 filled(dns_question, d_sequence));
    d_request_sent = now;
    d_next_request = std::numeric_limits<double>::infinity();
    d_client.on_datagram(std::move(datagram), now);
}

void ip_host::receive(const bytes& datagram, double now)
{
    const auto parsed = net::parse_ip(datagram);
    if (!parsed || parsed.value.version != 4 || parsed.value.destination != d_cfg.own)
        return; // ICMP errors from the client, strays: not the host's business
    const auto& h = parsed.value;
    const size_t at = h.payload_offset;
    if (h.protocol == net::ip_proto::icmp && h.icmp_type) {
        if (*h.icmp_type == 8 && datagram.size() >= at + 8) { // answer an echo request
            const bytes data(datagram.begin() + long(at + 8), datagram.end());
            d_client.on_datagram(net::make_icmp_echo(d_cfg.own,
                                                     h.source,
                                                     false,
                                                     get16(datagram, at + 4),
                                                     get16(datagram, at + 6),
                                                     data),
                                 now);
            ++d_report.answered;
        } else if (*h.icmp_type == 0 && datagram.size() >= at + 8 &&
                   get16(datagram, at + 4) == ping_identifier &&
                   get16(datagram, at + 6) == d_sequence && !std::isnan(d_request_sent)) {
            d_report.round_trips_s.push_back(now - d_request_sent);
            d_request_sent = std::numeric_limits<double>::quiet_NaN();
            d_next_request = now + d_cfg.gap_s;
        }
    } else if (h.protocol == net::ip_proto::udp && h.destination_port && h.source_port) {
        if (*h.destination_port == dns_port && datagram.size() >= at + 10) {
            const uint16_t seq = get16(datagram, at + 8);
            d_client.on_datagram(net::make_udp(d_cfg.own,
                                               h.source,
                                               dns_port,
                                               *h.source_port,
                                               filled(dns_answer, seq)),
                                 now);
            ++d_report.answered;
        } else if (*h.source_port == dns_port && *h.destination_port == client_port &&
                   datagram.size() >= at + 10 && get16(datagram, at + 8) == d_sequence &&
                   !std::isnan(d_request_sent)) {
            d_report.round_trips_s.push_back(now - d_request_sent);
            d_request_sent = std::numeric_limits<double>::quiet_NaN();
            d_next_request = now + d_cfg.gap_s;
        }
    }
}

void ip_host::on_primitive(const dl::sis_primitive& p, double now)
{
    d_client.on_sis(p, now);
    collect(now);
}

void ip_host::on_timer(double now)
{
    d_client.on_timer(now);
    if (!std::isnan(d_request_sent) && now >= d_request_sent + d_cfg.timeout_s) {
        d_report.round_trips_s.push_back(std::numeric_limits<double>::quiet_NaN());
        d_request_sent = std::numeric_limits<double>::quiet_NaN();
        d_next_request = now + d_cfg.gap_s;
    }
    if (now >= d_next_request && d_report.round_trips_s.size() < d_cfg.requests)
        send_request(now);
    if (d_report.round_trips_s.size() >= d_cfg.requests)
        d_next_request = std::numeric_limits<double>::infinity();
    collect(now);
}

double ip_host::next_deadline() const
{
    double d = std::min(d_client.next_deadline(), d_next_request);
    if (!std::isnan(d_request_sent))
        d = std::min(d, d_request_sent + d_cfg.timeout_s);
    return d;
}

std::vector<dl::sis_primitive> ip_host::take_outgoing()
{
    std::vector<dl::sis_primitive> out;
    out.swap(d_out);
    return out;
}

bool ip_host::done() const
{
    return !d_cfg.target || d_report.round_trips_s.size() >= d_cfg.requests;
}

ip_exchange_result run_ip_exchange(sim::scenario_config base,
                                   ip_request_kind kind,
                                   unsigned requests,
                                   double gap_s)
{
    base.test = sim::test_kind::none;
    std::vector<std::shared_ptr<ip_host>> hosts(2);
    base.applications = [&](size_t node) {
        ip_host_config h;
        const bool asker = node == 0;
        net::set_ip_client_options(
            h.client, asker ? "routes=10.77.0.2=0.0.0.2" : "routes=10.77.0.1=0.0.0.1");
        h.own = *net::parse_ip_address(asker ? "10.77.0.1" : "10.77.0.2");
        if (asker) {
            h.target = *net::parse_ip_address("10.77.0.2");
            h.requests = requests;
            h.kind = kind;
            h.gap_s = gap_s;
        }
        hosts[node] = std::make_shared<ip_host>(h);
        std::vector<std::unique_ptr<sis_application>> out;
        out.push_back(std::make_unique<lent_application<ip_host>>(hosts[node]));
        return out;
    };
    const auto r = sim::run_scenario(base);
    return { hosts[0]->report().round_trips_s, hosts[1]->report().answered, r.completed };
}

} // namespace traffic
} // namespace hfstack
} // namespace gr
