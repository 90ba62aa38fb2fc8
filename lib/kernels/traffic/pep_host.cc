/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "pep_host.h"

#include <algorithm>
#include <memory>
#include <random>
#include <stdexcept>
#include <string>

namespace gr {
namespace hfstack {
namespace traffic {

namespace {

constexpr size_t size_header = 16; // the transfer's length, in ASCII, padded with blanks
const dl::bytes confirmation = { 'O', 'K' };

dl::bytes transfer_data(size_t n, pep_payload kind, const dl::bytes& text)
{
    dl::bytes b(size_header, ' ');
    const std::string len = std::to_string(n) + "\n";
    std::copy(len.begin(), len.end(), b.begin());
    if (kind == pep_payload::text) {
        if (text.empty())
            throw std::invalid_argument("a text payload needs a text to repeat");
        for (size_t i = 0; i < n; ++i)
            b.push_back(text[i % text.size()]);
    } else {
        std::mt19937 rng(5066); // seeded: every run sends the same bytes
        for (size_t i = 0; i < n; ++i)
            b.push_back(uint8_t(rng()));
    }
    return b;
}

} // namespace

pep_host::pep_host(pep_host_config config) : d_cfg(std::move(config)), d_pep(d_cfg.pep)
{
    if (d_cfg.client)
        d_data = transfer_data(d_cfg.transfer_bytes, d_cfg.payload, d_cfg.text);
}

void pep_host::start(double now)
{
    d_pep.start(now);
    collect(now);
}

void pep_host::on_primitive(const dl::sis_primitive& p, double now)
{
    d_pep.on_sis(p, now);
    if (d_cfg.client && d_report.transfers.empty() && d_conn == 0 &&
        d_pep.transport().bound() &&
        d_next_transfer == std::numeric_limits<double>::infinity())
        d_next_transfer = now; // bound: the first transfer starts
    collect(now);
}

void pep_host::on_timer(double now)
{
    if (d_cfg.client && d_conn == 0 && now >= d_next_transfer &&
        d_report.transfers.size() < d_cfg.transfers) {
        d_next_transfer = std::numeric_limits<double>::infinity();
        d_conn = d_pep.accept(d_cfg.server, now);
        d_sent = 0;
        d_confirmation.clear();
        d_report.transfers.push_back({ now, 0, false });
    }
    if (now >= d_pep.next_deadline())
        d_pep.on_timer(now);
    collect(now);
}

double pep_host::next_deadline() const
{
    return std::min(d_pep.next_deadline(), d_next_transfer);
}

std::vector<dl::sis_primitive> pep_host::take_outgoing()
{
    std::vector<dl::sis_primitive> out;
    std::swap(out, d_out);
    return out;
}

bool pep_host::done() const
{
    // The server has nothing of its own to finish: the client's transfers decide.
    return !d_cfg.client || (d_report.transfers.size() >= d_cfg.transfers && d_conn == 0);
}

// The sockets: write what the proxy has room for, read what it has.
void pep_host::pump(double now)
{
    if (d_cfg.client && d_conn != 0) {
        while (d_sent < d_data.size()) {
            const size_t room = d_pep.tcp_space(d_conn);
            if (room == 0)
                break;
            const size_t n = d_pep.from_tcp(d_conn,
                                            d_data.data() + d_sent,
                                            std::min(room, d_data.size() - d_sent),
                                            now);
            if (n == 0)
                break;
            d_sent += n;
        }
    }
}

void pep_host::collect(double now)
{
    for (int round = 0; round < 64; ++round) {
        pump(now);
        auto a = d_pep.take_actions();
        for (auto& p : a.to_sis)
            d_out.push_back(std::move(p));
        if (a.tcp.empty())
            return;
        for (const auto& t : a.tcp) {
            using K = net::pep_action::kind;
            if (d_cfg.client) {
                if (t.connection != d_conn)
                    continue;
                if (t.what == K::data) {
                    const auto got = d_pep.take_tcp_data(d_conn, 64, now);
                    d_confirmation.insert(d_confirmation.end(), got.begin(), got.end());
                    if (d_confirmation == confirmation &&
                        !d_report.transfers.back().confirmed) {
                        auto& r = d_report.transfers.back();
                        r.confirmed = true;
                        r.total_s = now - r.started;
                        d_pep.tcp_finished(d_conn, now); // close
                    }
                } else if (t.what == K::failed || t.what == K::reset ||
                           t.what == K::closed) {
                    d_conn = 0;
                    if (d_report.transfers.size() < d_cfg.transfers)
                        d_next_transfer = now + d_cfg.gap_s;
                }
            } else {
                auto& s = d_served[t.connection];
                if (t.what == K::connect) {
                    d_pep.connected(t.connection, now); // the server answers at once
                    d_report.served += 1;
                } else if (t.what == K::data) {
                    for (auto got = d_pep.take_tcp_data(t.connection, 65536, now);
                         !got.empty();
                         got = d_pep.take_tcp_data(t.connection, 65536, now)) {
                        for (uint8_t b : got) {
                            if (s.header.size() < size_header)
                                s.header.push_back(b);
                            else
                                s.got += 1;
                        }
                        if (s.header.size() == size_header && s.want == 0)
                            s.want =
                                std::stoul(std::string(s.header.begin(), s.header.end()));
                    }
                    if (!s.confirmed && s.header.size() == size_header &&
                        s.got >= s.want) {
                        s.confirmed = true;
                        d_pep.from_tcp(
                            t.connection, confirmation.data(), confirmation.size(), now);
                        d_pep.tcp_finished(t.connection, now);
                    }
                } else if (t.what == K::closed || t.what == K::reset) {
                    d_served.erase(t.connection);
                }
            }
        }
    }
}

pep_run_result run_pep_transfers(sim::scenario_config base,
                                 size_t bytes,
                                 unsigned transfers,
                                 pep_payload payload,
                                 bool compress,
                                 const dl::bytes& text,
                                 const std::string& pep_options)
{
    if (payload == pep_payload::text && text.empty())
        throw std::invalid_argument("a text payload needs a text to repeat");
    base.test = sim::test_kind::none;
    // The quiet test clients stay off SLEP's SAP (13).
    base.client.sap = base.client.peer_sap = 14;
    std::vector<std::shared_ptr<pep_host>> hosts(2);
    base.applications = [&](size_t node) {
        pep_host_config h;
        h.client = node == 0;
        if (!pep_options.empty())
            net::set_pep_options(h.pep, pep_options);
        if (h.client) {
            net::set_pep_options(h.pep, "peers=default=0.0.0.2");
            h.pep.compress = compress;
            h.server = { *net::parse_ip_address("10.78.0.2"), 7100 };
            h.transfer_bytes = bytes;
            h.transfers = transfers;
            h.payload = payload;
            h.text = text;
        } else {
            net::set_pep_options(h.pep, "allow_peers=0.0.0.1"); // the client's proxy
        }
        h.pep.slep.incarnation = uint32_t(node + 1);
        hosts[node] = std::make_shared<pep_host>(h);
        std::vector<std::unique_ptr<sis_application>> out;
        out.push_back(std::make_unique<lent_application<pep_host>>(hosts[node]));
        return out;
    };
    auto r = sim::run_scenario(base);
    return { hosts[0]->report(), std::move(r.transmissions) };
}

} // namespace traffic
} // namespace hfstack
} // namespace gr
