/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "address_scope.h"
#include "dl/dpdu.h"      // group_address_flag
#include "option_table.h" // number_text
#include "pep.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <stdexcept>

namespace gr {
namespace hfstack {
namespace net {

namespace {

constexpr size_t status_length = 2; // version, status

} // namespace

pep::pep(pep_config config) : d_cfg(std::move(config)), d_slep(d_cfg.slep)
{
    d_slep.listen(pep_slep_address);
}

void pep::start(double now)
{
    d_now = now;
    d_sis_up = true;
    d_rebind_at = -1;
    d_slep.start(now);
    collect(now);
}

void pep::on_disconnected(double now)
{
    d_now = now;
    d_sis_up = false; // the driver binds again when it has a SIS connection
    d_rebind_at = -1;
    d_slep.on_disconnected(now);
    collect(now);
}

void pep::set_local_addresses(std::vector<ip_address> addresses)
{
    d_local_addresses = std::move(addresses);
}

void pep::notice_once(const std::string& key, const std::string& text)
{
    // Bounded: a station trying many sources cannot grow this without end.
    constexpr size_t max_keys = 1024;
    if (d_noticed.size() > max_keys || !d_noticed.insert(key).second)
        return;
    d_actions.notices.push_back(d_noticed.size() > max_keys
                                    ? "more refusals than " + std::to_string(max_keys) +
                                          " sources: counted, no longer logged"
                                    : text + " (logged once per source)");
}

bool pep::peer_allowed(uint32_t node) const
{
    if (d_cfg.allow_any_peer)
        return true;
    if (!d_cfg.allow_peers.empty())
        return d_cfg.allow_peers.count(node) > 0;
    const auto& e = d_cfg.peers.entries();
    return std::any_of(
        e.begin(), e.end(), [&](const ip_route& r) { return r.node == node; });
}

bool pep::destination_allowed(const pep_request& r) const
{
    // Reserved addresses and this host's own: only a rule that covers no more than
    // their block names them (0.0.0.0/0 does not open loopback).
    unsigned need = 0;
    bool special = false;
    if (const auto block = reserved_block(r.destination)) {
        special = true;
        need = block->length;
    } else if (std::find(d_local_addresses.begin(),
                         d_local_addresses.end(),
                         r.destination) != d_local_addresses.end()) {
        special = true;
        need = r.destination.version == 4 ? 32 : 128;
    }
    for (const auto& rule : d_cfg.allow_destinations)
        if (rule.allows(r) && (!special || rule.prefix.length >= need))
            return true;
    return !special && d_cfg.allow_destinations.empty();
}

bool pep::make_room(pep_connection except, double now)
{
    const size_t cap = connection_limit();
    size_t count = d_conns.size() - d_conns.count(except);
    while (count >= cap) {
        auto victim = d_conns.end();
        for (auto it = d_conns.begin(); it != d_conns.end(); ++it)
            if (it->first != except &&
                it->second.last_activity + d_cfg.evict_idle_s <= now &&
                (victim == d_conns.end() ||
                 it->second.last_activity < victim->second.last_activity))
                victim = it;
        if (victim == d_conns.end())
            return false;
        d_counters.evicted += 1;
        notice_once("evict",
                    "at " + std::to_string(cap) +
                        " connections: resetting the longest idle to make room");
        drop(victim->first, true, true, now);
        count -= 1;
    }
    return true;
}

void pep::on_sis(const dl::sis_primitive& p, double now)
{
    d_now = now;
    d_slep.on_sis(p, now);
    collect(now);
}

pep_actions pep::take_actions()
{
    pep_actions a;
    std::swap(a, d_actions);
    return a;
}

void pep::tcp_action(pep_action::kind k, pep_connection c, pep_status st)
{
    pep_action a;
    a.what = k;
    a.connection = c;
    a.status = st;
    d_actions.tcp.push_back(a);
}

bool pep::port_allowed(uint16_t port) const
{
    return !d_cfg.deny_ports.count(port) &&
           (d_cfg.allow_ports.empty() || d_cfg.allow_ports.count(port));
}

size_t pep::connections_to_port(uint16_t port) const
{
    return size_t(std::count_if(d_conns.begin(), d_conns.end(), [&](const auto& kv) {
        return kv.second.stats.destination.port == port;
    }));
}

pep_connection pep::accept(const pep_request& destination, double now)
{
    d_now = now;
    const pep_connection id = d_next++;
    d_counters.accepted += 1;
    const auto refuse = [&](pep_status why) {
        d_counters.refused_locally += 1;
        tcp_action(pep_action::kind::failed, id, why);
        tcp_action(pep_action::kind::closed, id);
        return id;
    };
    if (!port_allowed(destination.port))
        return refuse(pep_status::forbidden);
    const auto limit = d_cfg.port_limits.find(destination.port);
    if ((limit != d_cfg.port_limits.end() &&
         connections_to_port(destination.port) >= limit->second) ||
        !make_room(id, now))
        return refuse(pep_status::busy);
    const uint32_t peer = peer_for(destination);
    if (!peer) {
        if (!destination.name.empty())
            notice_once("name_peer",
                        "refused a connection to " + destination.name +
                            ": a host name needs name_peer when peers names several "
                            "proxies");
        return refuse(pep_status::no_peer);
    }
    auto& c = d_conns[id];
    c.stats.near = true;
    c.stats.destination = destination;
    c.stats.peer_node = peer;
    c.stats.opened = now;
    c.open_at = now + d_cfg.open_wait_s;
    c.last_activity = now;
    if (d_cfg.open_wait_s <= 0)
        open_stream(id, c, now);
    collect(now);
    return id;
}

uint32_t pep::peer_for(const pep_request& r) const
{
    if (r.name.empty()) {
        const ip_route* route = d_cfg.peers.lookup(r.destination);
        return route && !(route->node & dl::group_address_flag) ? route->node : 0;
    }
    if (!valid_host_name(r.name))
        return 0;
    if (d_cfg.name_peer)
        return d_cfg.name_peer;
    uint32_t only = 0;
    for (const auto& e : d_cfg.peers.entries()) {
        if (e.node & dl::group_address_flag)
            continue;
        if (only && e.node != only)
            return 0;
        only = e.node;
    }
    return only;
}

void pep::open_stream(pep_connection id, connection& c, double now)
{
    bytes first = encode(c.stats.destination);
    first.insert(first.end(), c.pending.begin(), c.pending.end());
    c.pending.clear();
    c.pending.shrink_to_fit();
    const auto prio = d_cfg.port_priority.find(c.stats.destination.port);
    try {
        c.stream = d_slep.open(c.stats.peer_node,
                               pep_slep_address,
                               pep_slep_address,
                               first,
                               d_cfg.compress,
                               c.tcp_eof,
                               now,
                               prio == d_cfg.port_priority.end()
                                   ? std::nullopt
                                   : std::optional<uint8_t>(prio->second),
                               proxy_priority(c.stats.destination.port));
    } catch (const std::invalid_argument&) {
        fail(id, pep_status::busy, now);
        return;
    }
    c.stream_open = true;
    d_by_stream[c.stream] = id;
    d_counters.opened += 1;
}

void pep::fail(pep_connection id, pep_status why, double now)
{
    auto it = d_conns.find(id);
    if (it == d_conns.end())
        return;
    d_counters.failed += 1;
    tcp_action(pep_action::kind::failed, id, why);
    drop(id, true, false, now);
}

void pep::drop(pep_connection id, bool reset_stream, bool reset_tcp, double now)
{
    auto it = d_conns.find(id);
    if (it == d_conns.end())
        return;
    if (it->second.stream_open) {
        d_by_stream.erase(it->second.stream);
        if (reset_stream && d_slep.exists(it->second.stream))
            d_slep.reset(it->second.stream, now);
    }
    if (!it->second.tcp_closed) {
        if (reset_tcp)
            tcp_action(pep_action::kind::reset, id);
        tcp_action(pep_action::kind::closed, id);
    }
    d_counters.closed += 1;
    d_conns.erase(it);
}

size_t pep::tcp_space(pep_connection id) const
{
    auto it = d_conns.find(id);
    if (it == d_conns.end() || it->second.tcp_eof)
        return 0;
    const auto& c = it->second;
    if (c.stats.near && !c.stream_open) {
        // The OPEN carries the request header too: all of it must fit the send buffer.
        const size_t cap = d_cfg.slep.send_buffer - encode(c.stats.destination).size();
        return c.pending.size() >= cap ? 0 : cap - c.pending.size();
    }
    if (!c.stats.near && !c.status_sent)
        return 0; // the destination is not connected yet
    const auto info = d_slep.info(c.stream);
    return info ? info->send_space : 0;
}

size_t pep::from_tcp(pep_connection id, const uint8_t* data, size_t size, double now)
{
    d_now = now;
    auto it = d_conns.find(id);
    if (it == d_conns.end() || it->second.tcp_eof)
        return 0;
    auto& c = it->second;
    size_t n = 0;
    if (c.stats.near && !c.stream_open) {
        n = std::min(size, tcp_space(id));
        c.pending.insert(c.pending.end(), data, data + n);
        // The first bytes are what the open waited for: it goes now, so that it catches
        // the node's next transmission (the rest follows in DATA at once).
        if (!c.pending.empty())
            open_stream(id, c, now);
    } else if (c.stream_open && (c.stats.near || c.status_sent)) {
        n = d_slep.write(c.stream, data, size, now);
    }
    if (n < size)
        c.resume_wanted = true;
    if (n > 0) {
        c.last_activity = now;
        (c.stats.near ? c.stats.bytes_up : c.stats.bytes_down) += n;
        (c.stats.near ? d_counters.bytes_up : d_counters.bytes_down) += n;
    }
    collect(now);
    return n;
}

void pep::tcp_finished(pep_connection id, double now)
{
    d_now = now;
    auto it = d_conns.find(id);
    if (it == d_conns.end() || it->second.tcp_eof)
        return;
    auto& c = it->second;
    c.tcp_eof = true;
    c.last_activity = now;
    if (c.stats.near && !c.stream_open)
        open_stream(id, c, now); // the whole request, with its end
    else if (c.stream_open)
        d_slep.finish(c.stream, now);
    collect(now);
}

void pep::tcp_reset(pep_connection id, double now)
{
    d_now = now;
    if (!d_conns.count(id))
        return;
    d_counters.resets_from_tcp += 1;
    drop(id, true, false, now);
    collect(now);
}

bytes pep::take_tcp_data(pep_connection id, size_t max, double now)
{
    d_now = now;
    auto it = d_conns.find(id);
    bytes out;
    if (it == d_conns.end() || !it->second.header_done || !it->second.stream_open)
        return out;
    auto& c = it->second;
    if (!c.stats.near && !c.status_sent)
        return out; // the destination is not connected yet
    const size_t want = std::min(max, d_cfg.read_chunk);
    const size_t from_header = std::min(want, c.header.size());
    out.assign(c.header.begin(),
               c.header.begin() + long(from_header)); // bytes read past the header
    c.header.erase(c.header.begin(), c.header.begin() + long(from_header));
    if (out.size() < want && d_slep.exists(c.stream)) {
        bytes more = d_slep.read(c.stream, want - out.size(), now);
        out.insert(out.end(), more.begin(), more.end());
    }
    if (!out.empty()) {
        c.last_activity = now;
        (c.stats.near ? c.stats.bytes_down : c.stats.bytes_up) += out.size();
        (c.stats.near ? d_counters.bytes_down : d_counters.bytes_up) += out.size();
    }
    if (c.header.empty() && d_slep.exists(c.stream) && d_slep.eof(c.stream) &&
        !c.finish_sent) {
        c.finish_sent = true;
        tcp_action(pep_action::kind::finish, id);
    }
    collect(now);
    return out;
}

void pep::refuse_destination(pep_connection id, connection& c, double now)
{
    d_counters.destinations_refused += 1;
    const auto& r = c.stats.destination;
    const std::string from = dl::address_to_string(c.stats.peer_node);
    const std::string to = r.name.empty()
                               ? to_string(r.destination)
                               : r.name + " (" + to_string(r.destination) + ")";
    notice_once("destination " + from,
                "refused node " + from + "'s stream to " + to + " port " +
                    std::to_string(r.port) +
                    ": not an allowed destination (allow_destinations)");
    far_status(id, c, pep_status::forbidden, now);
}

void pep::resolved(pep_connection id,
                   const std::vector<ip_address>& addresses,
                   double now)
{
    d_now = now;
    auto it = d_conns.find(id);
    if (it == d_conns.end() || it->second.stats.near || it->second.status_sent ||
        !it->second.resolving)
        return; // not waiting for a name (timed out meanwhile, or asked twice)
    auto& c = it->second;
    c.resolving = false;
    if (addresses.empty()) {
        d_counters.resolve_failures += 1;
        connect_failed(id, pep_status::unreachable, now);
        return;
    }
    // The first address policy allows: a name must not open what its address may not.
    for (const auto& address : addresses) {
        pep_request r = c.stats.destination;
        r.destination = address;
        if (destination_allowed(r)) {
            c.stats.destination = r;
            d_counters.connects += 1;
            pep_action a;
            a.what = pep_action::kind::connect;
            a.connection = id;
            a.destination = r;
            d_actions.tcp.push_back(a);
            collect(now);
            return;
        }
    }
    c.stats.destination.destination = addresses.front();
    refuse_destination(id, c, now);
    collect(now);
}

void pep::connected(pep_connection id, double now)
{
    d_now = now;
    auto it = d_conns.find(id);
    if (it == d_conns.end() || it->second.stats.near || it->second.status_sent)
        return;
    far_status(id, it->second, pep_status::connected, now);
    collect(now);
}

void pep::connect_failed(pep_connection id, pep_status why, double now)
{
    d_now = now;
    auto it = d_conns.find(id);
    if (it == d_conns.end() || it->second.stats.near || it->second.status_sent)
        return;
    d_counters.connect_failures += 1;
    far_status(id,
               it->second,
               why == pep_status::connected ? pep_status::unreachable : why,
               now);
    collect(now);
}

void pep::far_status(pep_connection id, connection& c, pep_status st, double now)
{
    const bytes status = { pep_protocol_version, uint8_t(st) };
    d_slep.write(c.stream, status.data(), status.size(), now);
    c.status_sent = true;
    c.connect_deadline = -1;
    c.stats.status = st;
    if (st == pep_status::connected) {
        c.stats.established = now;
        d_counters.connected += 1;
        tcp_action(pep_action::kind::resume, id);
        const auto info = d_slep.info(c.stream);
        if (!c.header.empty() || (info && info->readable > 0))
            tcp_action(pep_action::kind::data, id);
    } else {
        // The near proxy resets the stream when it reads this; until then it stays open,
        // but the driver is done with the connection.
        d_slep.finish(c.stream, now);
        tcp_action(pep_action::kind::closed, id);
        c.tcp_closed = true;
        c.stats.established = -1;
    }
}

void pep::on_incoming(slep_stream s, uint32_t node, double now)
{
    if (!peer_allowed(node)) {
        d_counters.peers_refused += 1;
        notice_once("peer " + dl::address_to_string(node),
                    "refused a stream from node " + dl::address_to_string(node) +
                        ": not an allowed peer (allow_peers)");
        d_slep.reset(s, now);
        return;
    }
    const pep_connection id = d_next++;
    auto& c = d_conns[id];
    c.stats.near = false;
    c.stats.peer_node = node;
    c.stats.opened = now;
    c.stream = s;
    c.stream_open = true;
    c.last_activity = now;
    d_by_stream[s] = id;
    d_counters.incoming += 1;
}

// Reads what a readable stream brought: the header first (status or request), then
// tells the driver data waits.
void pep::service(pep_connection id, double now)
{
    auto it = d_conns.find(id);
    if (it == d_conns.end())
        return;
    auto& c = it->second;
    if (!c.header_done) {
        if (c.stats.near) {
            bytes b = d_slep.read(c.stream, status_length - c.header.size(), now);
            c.header.insert(c.header.end(), b.begin(), b.end());
            if (c.header.size() < status_length) {
                if (d_slep.eof(c.stream))
                    fail(id, pep_status::bad_request, now);
                return;
            }
            const uint8_t st = c.header[1];
            c.header.clear();
            if (st != uint8_t(pep_status::connected)) {
                fail(id,
                     st <= uint8_t(pep_status::no_peer) ? pep_status(st)
                                                        : pep_status::bad_request,
                     now);
                return;
            }
            c.header_done = true;
            c.stats.established = now;
            d_counters.connected += 1;
            d_counters.connect_seconds += now - c.stats.opened;
            tcp_action(pep_action::kind::connected, id);
        } else {
            bytes b = d_slep.read(c.stream, pep_max_request - c.header.size(), now);
            c.header.insert(c.header.end(), b.begin(), b.end());
            const auto parsed = parse_pep_request(c.header);
            if (parsed.what == pep_request_parse::state::need_more) {
                if (d_slep.eof(c.stream) || c.header.size() >= pep_max_request)
                    far_status(id, c, pep_status::bad_request, now);
                return;
            }
            if (parsed.what == pep_request_parse::state::bad) {
                c.header.clear();
                far_status(id, c, pep_status::bad_request, now);
                return;
            }
            c.header.erase(c.header.begin(), c.header.begin() + long(parsed.length));
            c.header_done = true;
            c.stats.destination = parsed.request;
            d_slep.set_send_priority(c.stream, proxy_priority(parsed.request.port));
            const auto limit = d_cfg.port_limits.find(parsed.request.port);
            if (!port_allowed(parsed.request.port)) {
                far_status(id, c, pep_status::forbidden, now);
                return;
            }
            // A name's addresses are checked once resolved().
            if (parsed.request.name.empty() && !destination_allowed(parsed.request)) {
                refuse_destination(id, c, now);
                return;
            }
            if ((limit != d_cfg.port_limits.end() &&
                 connections_to_port(parsed.request.port) > limit->second) ||
                !make_room(id, now)) {
                far_status(id, c, pep_status::busy, now);
                return;
            }
            // One deadline for the lookup and the connect together.
            c.connect_deadline = now + d_cfg.connect_timeout_s;
            pep_action a;
            a.connection = id;
            a.destination = parsed.request;
            if (parsed.request.name.empty()) {
                d_counters.connects += 1;
                a.what = pep_action::kind::connect;
            } else {
                d_counters.resolves += 1;
                c.resolving = true;
                a.what = pep_action::kind::resolve;
            }
            d_actions.tcp.push_back(a);
            return;
        }
    }
    if (!c.stats.near && !c.status_sent)
        return;
    const auto info = d_slep.info(c.stream);
    if (!c.header.empty() || (info && info->readable > 0))
        tcp_action(pep_action::kind::data, id);
    else if (d_slep.eof(c.stream) && !c.finish_sent) {
        c.finish_sent = true;
        tcp_action(pep_action::kind::finish, id);
    }
}

void pep::collect(double now)
{
    for (int round = 0; round < 64; ++round) {
        auto a = d_slep.take_actions();
        for (auto& p : a.to_sis)
            d_actions.to_sis.push_back(std::move(p));
        for (auto& n : a.notices)
            d_actions.notices.push_back(std::move(n));
        if (a.events.empty())
            return;
        for (const auto& e : a.events) {
            using K = slep_event::kind;
            const auto by = d_by_stream.find(e.stream);
            const bool known = by != d_by_stream.end();
            switch (e.what) {
            case K::datagram:
                if (peer_allowed(e.node)) {
                    d_actions.datagrams.push_back({ e.node, e.to, e.from, e.data });
                } else {
                    d_counters.peers_refused += 1;
                    notice_once("peer " + dl::address_to_string(e.node),
                                "dropped a datagram from node " +
                                    dl::address_to_string(e.node) +
                                    ": not an allowed peer (allow_peers)");
                }
                break;
            case K::bound:
                // Counted here, not at each attempt: the SAP may come back through the
                // driver's own reconnection as well as through this kernel's timer.
                if (d_rebind_wait > 0) {
                    d_counters.rebinds += 1;
                    d_actions.notices.push_back(
                        "bound SAP " + std::to_string(d_cfg.slep.sap) + " again");
                }
                d_rebind_wait = 0;
                break;
            case K::unbound:
                if (d_sis_up) {
                    // The node dropped the SAP (another client took it, or refused the
                    // bind) while the SIS connection stayed: bind again, backing off.
                    constexpr double first_s = 5, most_s = 300;
                    d_rebind_wait =
                        d_rebind_wait > 0 ? std::min(2 * d_rebind_wait, most_s) : first_s;
                    d_rebind_at = now + d_rebind_wait;
                    d_actions.notices.push_back(
                        "the node dropped SAP " + std::to_string(d_cfg.slep.sap) +
                        (e.text.empty() ? "" : " (" + e.text + ")") +
                        ": binding again in " + number_text(d_rebind_wait) + " s");
                }
                break;
            case K::incoming:
                if (e.to == pep_slep_address)
                    on_incoming(e.stream, e.node, now);
                else
                    d_slep.reset(e.stream, now);
                break;
            case K::readable:
                if (known)
                    service(by->second, now);
                break;
            case K::writable:
                if (known) {
                    auto c = d_conns.find(by->second);
                    if (c != d_conns.end() && c->second.resume_wanted) {
                        c->second.resume_wanted = false;
                        tcp_action(pep_action::kind::resume, by->second);
                    }
                }
                break;
            case K::closed:
                if (known) {
                    const pep_connection id = by->second;
                    d_by_stream.erase(by);
                    auto c = d_conns.find(id);
                    if (c == d_conns.end())
                        break;
                    if (!c->second.finish_sent && !c->second.tcp_closed)
                        tcp_action(pep_action::kind::finish, id);
                    if (!c->second.tcp_closed)
                        tcp_action(pep_action::kind::closed, id);
                    d_counters.closed += 1;
                    d_conns.erase(c);
                }
                break;
            case K::reset:
                if (known) {
                    const pep_connection id = by->second;
                    d_by_stream.erase(by);
                    auto found = d_conns.find(id);
                    if (found == d_conns.end())
                        break;
                    auto& c = found->second;
                    c.stream_open = false;
                    d_counters.resets_from_peer += 1;
                    if (c.stats.near && !c.header_done) {
                        // The far proxy never answered the open (SAP not bound, timed
                        // out).
                        d_counters.failed += 1;
                        tcp_action(pep_action::kind::failed,
                                   id,
                                   e.reason == slep_reset_reason::refused
                                       ? pep_status::no_peer
                                       : pep_status::unreachable);
                        tcp_action(pep_action::kind::closed, id);
                        d_counters.closed += 1;
                        d_conns.erase(id);
                    } else {
                        drop(id, false, true, now);
                    }
                }
                break;
            default:
                break;
            }
        }
    }
}

void pep::on_timer(double now)
{
    d_now = now;
    std::vector<pep_connection> to_open, timed_out, idle;
    for (auto& [id, c] : d_conns) {
        if (c.stats.near && !c.stream_open && c.open_at <= now)
            to_open.push_back(id);
        if (!c.stats.near && c.connect_deadline >= 0 && c.connect_deadline <= now &&
            !c.status_sent)
            timed_out.push_back(id);
        if (c.last_activity + d_cfg.idle_timeout_s <= now)
            idle.push_back(id);
    }
    for (auto id : to_open)
        if (d_conns.count(id))
            open_stream(id, d_conns[id], now);
    for (auto id : timed_out)
        if (d_conns.count(id)) {
            tcp_action(pep_action::kind::reset, id); // abandon the driver's connect
            connect_failed(id, pep_status::timed_out, now);
        }
    for (auto id : idle)
        if (d_conns.count(id)) {
            d_counters.idle_timeouts += 1;
            drop(id, true, true, now);
        }
    if (d_rebind_at >= 0 && d_rebind_at <= now && d_sis_up) {
        d_rebind_at = -1;
        d_actions.notices.push_back("binding SAP " + std::to_string(d_cfg.slep.sap) +
                                    " again");
        d_slep.start(now);
    }
    d_slep.on_timer(now);
    collect(now);
}

double pep::next_deadline() const
{
    double t = d_slep.next_deadline();
    if (d_rebind_at >= 0)
        t = std::min(t, d_rebind_at);
    for (const auto& [id, c] : d_conns) {
        if (c.stats.near && !c.stream_open)
            t = std::min(t, c.open_at);
        if (c.connect_deadline >= 0)
            t = std::min(t, c.connect_deadline);
        t = std::min(t, c.last_activity + d_cfg.idle_timeout_s);
    }
    return t;
}

void pep::listen_datagrams(uint8_t address)
{
    if (address != pep_slep_address)
        d_slep.listen(address);
}

void pep::send_datagram(
    uint32_t node, uint8_t to, uint8_t from, const bytes& data, double now)
{
    d_now = now;
    d_slep.send_reliable(node, to, from, data, false, now);
    collect(now);
}

uint8_t pep::proxy_priority(uint16_t port) const
{
    const auto it = d_cfg.port_proxy_priority.find(port);
    return it == d_cfg.port_proxy_priority.end() ? 0 : it->second;
}

std::optional<pep_connection_stats> pep::stats(pep_connection id) const
{
    auto it = d_conns.find(id);
    if (it == d_conns.end())
        return std::nullopt;
    const auto& c = it->second;
    pep_connection_stats out = c.stats;
    out.queued = c.pending.size();
    if (const auto info = c.stream_open ? d_slep.info(c.stream) : std::nullopt) {
        out.plain_sent = info->bytes_written;
        out.plain_received = info->bytes_read;
        out.wire_sent = info->wire_written;
        out.wire_received = info->wire_read;
        out.queued += info->unconfirmed;
    }
    return out;
}

} // namespace net
} // namespace hfstack
} // namespace gr
