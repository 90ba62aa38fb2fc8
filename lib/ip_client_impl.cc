/* -*- c++ -*- */
/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "fault_guard.h"
#include "ip_client_impl.h"

#include <gnuradio/hfstack/metadata.h>
#include <gnuradio/io_signature.h>

#include <cmath>
#include <limits>
#include <sstream>
#include <stdexcept>

namespace gr {
namespace hfstack {

namespace {

const pmt::pmt_t port_ip_in = pmt::mp("ip_in");
const pmt::pmt_t port_ip_out = pmt::mp("ip_out");
const pmt::pmt_t port_sis_in = pmt::mp("sis_in");
const pmt::pmt_t port_sis_out = pmt::mp("sis_out");
const pmt::pmt_t port_stats = pmt::mp("stats");

constexpr double inf = std::numeric_limits<double>::infinity();
// After the node dropped this client: wait before binding again, so a client the node
// keeps refusing does not spin.
constexpr double reconnect_delay_s = 10.0;

std::string symbol_or_empty(const pmt::pmt_t& dict, const pmt::pmt_t& key)
{
    const pmt::pmt_t v = pmt::dict_ref(dict, key, pmt::PMT_NIL);
    return pmt::is_symbol(v) ? pmt::symbol_to_string(v) : std::string();
}

// (name, value) of every counter; per peer "peer.a.b.c.d.name".
std::vector<std::pair<std::string, double>> counter_list(const net::ip_client& k)
{
    const auto& c = k.counters();
    std::vector<std::pair<std::string, double>> out = {
        { "datagrams_from_tun", double(c.datagrams_from_tun) },
        { "bytes_from_tun", double(c.bytes_from_tun) },
        { "datagrams_to_tun", double(c.datagrams_to_tun) },
        { "bytes_to_tun", double(c.bytes_to_tun) },
        { "updus_sent", double(c.updus_sent) },
        { "updus_received", double(c.updus_received) },
        { "icmp_sent", double(c.icmp_sent) },
        { "fragments_sent", double(c.fragments_sent) },
        { "compact_sent", double(c.compact_sent) },
        { "compact_received", double(c.compact_received) },
        { "bound", k.bound() ? 1.0 : 0.0 },
        { "mtu", double(k.mtu()) },
    };
    for (size_t i = 0; i < c.drops.size(); ++i)
        out.push_back({ std::string("drop.") + net::to_string(net::ip_drop(i)),
                        double(c.drops[i]) });
    for (size_t i = 0; i < c.filter_matches.size(); ++i)
        out.push_back(
            { "filter." + k.filter_rules()[i].name, double(c.filter_matches[i]) });
    for (const auto& [peer, p] : c.peers) {
        const std::string pre = "peer." + dl::address_to_string(peer) + ".";
        out.push_back({ pre + "datagrams_out", double(p.datagrams_out) });
        out.push_back({ pre + "bytes_out", double(p.bytes_out) });
        out.push_back({ pre + "datagrams_in", double(p.datagrams_in) });
        out.push_back({ pre + "bytes_in", double(p.bytes_in) });
        out.push_back({ pre + "confirmed", double(p.confirmed) });
        out.push_back({ pre + "rejected", double(p.rejected) });
        out.push_back({ pre + "discarded", double(p.discarded) });
        out.push_back({ pre + "queued_datagrams", double(p.queued_datagrams) });
        out.push_back({ pre + "queued_bytes", double(p.queued_bytes) });
        out.push_back({ pre + "oldest_queued_s", p.oldest_queued_s });
    }
    return out;
}

} // namespace

ip_client::sptr
ip_client::make(const std::string& options, int client_id, double stats_interval)
{
    return gnuradio::make_block_sptr<ip_client_impl>(options, client_id, stats_interval);
}

std::string ip_client_option_help()
{
    std::ostringstream o;
    for (auto& opt : net::ip_client_options())
        o << opt.name << " (default "
          << (opt.default_value.empty() ? "none" : opt.default_value) << "): " << opt.help
          << "\n";
    return o.str();
}

ip_client_impl::ip_client_impl(const std::string& options,
                               int client_id,
                               double stats_interval)
    : gr::block(
          "ip_client", gr::io_signature::make(0, 0, 0), gr::io_signature::make(0, 0, 0)),
      d_client_id(client_id),
      d_stats_interval(stats_interval),
      d_reconnect_at(inf)
{
    if (client_id <= 0)
        throw std::invalid_argument("ip_client: client_id must be positive");
    if (!(stats_interval >= 0))
        throw std::invalid_argument("ip_client: stats_interval must be >= 0");
    net::ip_client_config config;
    net::set_ip_client_options(config, options); // bad options fail here, named
    d_kernel = std::make_unique<net::ip_client>(config);

    message_port_register_in(port_ip_in);
    message_port_register_in(port_sis_in);
    message_port_register_out(port_ip_out);
    message_port_register_out(port_sis_out);
    message_port_register_out(port_stats);
    set_msg_handler(port_ip_in, [this](const pmt::pmt_t& m) { handle_ip(m); });
    set_msg_handler(port_sis_in, [this](const pmt::pmt_t& m) { handle_sis(m); });
}

ip_client_impl::~ip_client_impl() { d_timer.stop(); }

bool ip_client_impl::start()
{
    std::lock_guard<std::mutex> lock(d_mutex);
    d_next_stats = d_stats_interval > 0 ? now() + d_stats_interval : inf;
    // The thread's first step waits for this lock: the bind goes first.
    if (d_timer.start([this](double t) { return on_timer(t); }))
        connect();
    return block::start();
}

bool ip_client_impl::stop()
{
    if (!d_timer.stop())
        return block::stop();
    std::lock_guard<std::mutex> lock(d_mutex);
    post_stats();
    return block::stop();
}

void ip_client_impl::connect()
{
    pmt::pmt_t meta = pmt::make_dict();
    meta = pmt::dict_add(meta, metadata::client_id(), pmt::from_long(d_client_id));
    meta = pmt::dict_add(meta, metadata::client_event(), pmt::mp("connected"));
    message_port_pub(port_sis_out, pmt::cons(meta, pmt::make_u8vector(0, 0)));
    d_reconnect_at = inf;
    d_kernel->start(now());
    dispatch();
}

double ip_client_impl::on_timer(double t)
{
    if (t >= d_kernel->next_deadline())
        d_faults(d_logger, "timer", [&] {
            d_kernel->on_timer(t);
            dispatch();
        });
    if (t >= d_reconnect_at)
        d_faults(d_logger, "reconnect", [&] { connect(); });
    if (t >= d_next_stats) {
        post_stats();
        d_next_stats = t + d_stats_interval;
    }
    return std::min({ d_kernel->next_deadline(), d_next_stats, d_reconnect_at });
}

void ip_client_impl::handle_ip(const pmt::pmt_t& msg)
{
    // A PDU, or a bare u8vector (as some TUN sources emit).
    const pmt::pmt_t data = pmt::is_pair(msg) ? pmt::cdr(msg) : msg;
    if (!pmt::is_u8vector(data)) {
        d_logger->warn("ip_in: message is not a datagram (u8vector), dropped");
        return;
    }
    size_t n = 0;
    const uint8_t* p = pmt::u8vector_elements(data, n);
    std::lock_guard<std::mutex> lock(d_mutex);
    d_faults(d_logger, "ip_in", [&] {
        d_kernel->on_datagram(dl::bytes(p, p + n), now());
        dispatch();
    });
}

void ip_client_impl::handle_sis(const pmt::pmt_t& msg)
{
    if (!pmt::is_pair(msg) || !pmt::is_dict(pmt::car(msg)))
        return;
    const pmt::pmt_t meta = pmt::car(msg);
    const pmt::pmt_t id = pmt::dict_ref(meta, metadata::client_id(), pmt::PMT_NIL);
    if (!pmt::is_integer(id) || pmt::to_long(id) != d_client_id)
        return; // another client's
    std::lock_guard<std::mutex> lock(d_mutex);
    d_faults(d_logger, "sis_in", [&] {
        const std::string event = symbol_or_empty(meta, metadata::client_event());
        if (event == "connected") { // a transport (sis_tcp_link) reached the server
            d_reconnect_at = inf;
            d_kernel->start(now());
        } else if (event == "disconnect") {
            d_logger->warn("the node dropped the IP client ({}); binding again in {} s",
                           symbol_or_empty(meta, metadata::reason()),
                           reconnect_delay_s);
            d_kernel->on_disconnected(now());
            d_reconnect_at = now() + reconnect_delay_s;
        } else if (pmt::is_u8vector(pmt::cdr(msg))) {
            size_t n = 0;
            const uint8_t* p = pmt::u8vector_elements(pmt::cdr(msg), n);
            const auto sis = dl::decode_sis(p, n);
            if (sis)
                d_kernel->on_sis(sis.value, now());
            else
                d_logger->warn("sis_in: undecodable frame from the node: {}", sis.reason);
        }
        dispatch();
    });
}

void ip_client_impl::dispatch()
{
    auto a = d_kernel->take_actions();
    // Several clients in one process (a testbed's two stations) log apart by their
    // alias (set_block_alias, e.g. the TUN device's name).
    const std::string who = alias_set() ? alias() + ": " : std::string();
    for (const auto& notice : a.notices)
        d_logger->info("{}{}", who, notice);
    for (auto& p : a.to_sis) {
        dl::bytes frame;
        try {
            frame = dl::encode(p);
        } catch (const dl::encode_error& e) {
            d_logger->error("{} not sent: {}", dl::to_string(p.type), e.what());
            continue;
        }
        pmt::pmt_t meta = pmt::make_dict();
        meta = pmt::dict_add(meta, metadata::client_id(), pmt::from_long(d_client_id));
        meta = pmt::dict_add(meta, metadata::from_client(), pmt::PMT_T);
        message_port_pub(port_sis_out,
                         pmt::cons(meta, pmt::init_u8vector(frame.size(), frame)));
    }
    for (auto& d : a.to_tun)
        message_port_pub(port_ip_out,
                         pmt::cons(pmt::make_dict(), pmt::init_u8vector(d.size(), d)));
    d_timer.wake();
}

void ip_client_impl::post_stats()
{
    pmt::pmt_t dict = pmt::make_dict();
    for (auto& [name, value] : counter_list(*d_kernel))
        dict = pmt::dict_add(dict, pmt::mp(name), pmt::from_double(value));
    message_port_pub(port_stats, dict);
}

std::string ip_client_impl::option(const std::string& name) const
{
    std::lock_guard<std::mutex> lock(d_mutex);
    return net::get_ip_client_option(d_kernel->config(), name);
}

std::map<std::string, double> ip_client_impl::counters() const
{
    std::lock_guard<std::mutex> lock(d_mutex);
    std::map<std::string, double> out;
    for (auto& [name, value] : counter_list(*d_kernel))
        out[name] = double(value);
    out["internal_errors"] = double(d_faults.count());
    return out;
}

bool ip_client_impl::bound() const
{
    std::lock_guard<std::mutex> lock(d_mutex);
    return d_kernel->bound();
}

} // namespace hfstack
} // namespace gr
