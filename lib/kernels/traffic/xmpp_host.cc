/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "xmpp_host.h"

#include <algorithm>
#include <cmath>
#include <random>
#include <stdexcept>

namespace gr {
namespace hfstack {
namespace traffic {

namespace {

constexpr const char* ns_chat_states = "http://jabber.org/protocol/chatstates";
constexpr const char* ns_caps = "http://jabber.org/protocol/caps";
std::string hex_dump(size_t characters, std::mt19937_64& rng)
{
    static const char digits[] = "0123456789abcdef";
    std::string s;
    s.reserve(characters);
    while (s.size() < characters) {
        const auto b = uint8_t(rng());
        s.push_back(digits[b >> 4]);
        if (s.size() < characters)
            s.push_back(digits[b & 15]);
    }
    return s;
}

// A message id as real clients make it (slixmpp: a random UUID's 32 hex digits). Its
// 16 random bytes cross the link with every message and no compression removes them:
// at 75 bps that is about 2 s of air per message.
std::string client_stanza_id(std::mt19937_64& rng) { return hex_dump(32, rng); }

} // namespace

xmpp_host::xmpp_host(xmpp_host_config config)
    : d_cfg(std::move(config)), d_bridge(d_cfg.bridge)
{
    if (d_cfg.bridge.transport == net::xmpp_transport::x2x_slep)
        d_slep = std::make_unique<net::x2x_slep_link>(
            net::x2x_slep_link_config_for(d_cfg.bridge, d_cfg.incarnation));
    else
        d_rcop = std::make_unique<net::x2x_rcop_link>(
            net::x2x_rcop_link_config_for(d_cfg.bridge));
    d_rng.seed(d_cfg.seed * 2 + (d_cfg.initiator ? 0 : 1));
    d_id_rng.seed(~(d_cfg.seed * 2 + (d_cfg.initiator ? 0 : 1)));
}

bool xmpp_host::bound() const { return d_slep ? d_slep->bound() : d_rcop->bound(); }

void xmpp_host::start(double now)
{
    // The component streams are up from the start: the server is beside us.
    for (const auto& d : d_cfg.bridge.peer_domains)
        d_bridge.set_component_ready(d, true, now);
    if (d_slep)
        d_slep->start(now);
    else
        d_rcop->start(now);
    collect(now);
}

void xmpp_host::on_primitive(const dl::sis_primitive& p, double now)
{
    if (d_slep)
        d_slep->on_sis(p, now);
    else
        d_rcop->on_sis(p, now);
    collect(now);
}

void xmpp_host::on_timer(double now)
{
    if (d_slep && now >= d_slep->next_deadline())
        d_slep->on_timer(now);
    if (now >= d_bridge.next_deadline())
        d_bridge.on_timer(now);
    while (!d_answers.empty() && d_answers.front().at <= now) {
        const auto to = d_answers.front().to;
        d_answers.pop_front();
        send_message(to, now);
    }
    if (d_cfg.initiator && d_cfg.test == xmpp_test::ping_pong && now >= d_next_message &&
        d_sent < d_cfg.messages) {
        d_next_message = std::numeric_limits<double>::infinity();
        send_message(d_cfg.peer_user, now);
        d_waiting_since = now;
    }
    collect(now);
}

double xmpp_host::next_deadline() const
{
    double t = std::min(d_bridge.next_deadline(), d_next_message);
    if (d_slep)
        t = std::min(t, d_slep->next_deadline());
    if (!d_answers.empty())
        t = std::min(t, d_answers.front().at);
    return t;
}

std::vector<dl::sis_primitive> xmpp_host::take_outgoing()
{
    std::vector<dl::sis_primitive> out;
    std::swap(out, d_out);
    return out;
}

bool xmpp_host::done() const
{
    if (!d_cfg.initiator)
        return true; // the initiator's test decides
    if (d_cfg.test == xmpp_test::ping_pong)
        return d_report.round_trips.size() >= d_cfg.messages;
    return d_sent >= d_cfg.messages && d_bridge.queued() == 0;
}

xmpp_host_report xmpp_host::report() const
{
    auto r = d_report;
    r.bridge = d_bridge.counters();
    if (d_slep) {
        const auto& c = d_slep->counters();
        r.plain_sent = c.plain_sent;
        r.wire_sent = c.wire_sent;
        r.plain_received = c.plain_received;
        r.wire_received = c.wire_received;
    } else {
        // x2x-rcop carries the stanza bytes as they are.
        r.plain_sent = r.wire_sent = r.bridge.wire_bytes_sent;
    }
    return r;
}

void xmpp_host::send_message(const std::string& to, double now)
{
    auto m = net::make_element("message",
                               { { "from", d_cfg.user + "/hf" },
                                 { "to", to },
                                 { "type", "chat" },
                                 { "id", client_stanza_id(d_id_rng) } });
    auto body = net::make_element("body");
    // A new dump each time: DEFLATE's history must not find the body there already.
    body.children.push_back(net::make_text(hex_dump(d_cfg.payload_bytes, d_rng)));
    m.children.push_back(std::move(body));
    m.children.push_back(net::make_element("active", { { "xmlns", ns_chat_states } }));
    if (std::isnan(d_report.first_sent_at))
        d_report.first_sent_at = now;
    d_sent += 1;
    const auto domain = net::jid_domain(to);
    d_bridge.from_component(domain, std::move(m), now);
}

void xmpp_host::send_presence(double now)
{
    auto p = net::make_element(
        "presence", { { "from", d_cfg.user + "/hf" }, { "to", d_cfg.peer_user } });
    auto priority = net::make_element("priority");
    priority.children.push_back(net::make_text("0"));
    p.children.push_back(std::move(priority));
    // What a desktop client announces (XEP-0115): the policy decides what crosses.
    p.children.push_back(
        net::make_element("c",
                          { { "xmlns", ns_caps },
                            { "hash", "sha-1" },
                            { "node", "https://gajim.org" },
                            { "ver", "x0k2kW+6nGMQvOVlQWHCUKtlFGI=" } }));
    d_bridge.from_component(net::jid_domain(d_cfg.peer_user), std::move(p), now);
}

void xmpp_host::begin(double now)
{
    d_begun = true;
    if (!d_cfg.initiator)
        return; // its presence answers the initiator's
    if (d_cfg.presence)
        send_presence(now);
    if (d_cfg.test == xmpp_test::ping_pong) {
        d_next_message = now;
        return;
    }
    while (d_sent < d_cfg.messages && d_bridge.queued() < d_cfg.queue_depth)
        send_message(d_cfg.peer_user, now);
}

void xmpp_host::to_server(const net::xml_element& s, double now)
{
    if (s.name == "presence") {
        d_report.presences_received += 1;
        // The first presence from the peer user is answered with ours, as a server
        // answers the probe that comes with a contact's first presence (RFC 6121 4.3).
        if (!d_cfg.initiator && d_cfg.presence && d_report.presences_received == 1)
            send_presence(now);
        return;
    }
    if (s.name != "message")
        return;
    if (s.attribute_or("type", "") == "error") {
        d_report.errors_received += 1;
        if (d_cfg.initiator && d_cfg.test == xmpp_test::ping_pong &&
            !std::isnan(d_waiting_since)) {
            d_report.round_trips.push_back(std::numeric_limits<double>::quiet_NaN());
            d_waiting_since = std::numeric_limits<double>::quiet_NaN();
            d_next_message = now + d_cfg.gap_s;
        }
        return;
    }
    const auto* body = s.child("body");
    if (!body)
        return; // a chat state alone
    const auto text = body->inner_text();
    d_report.received.emplace_back(now, text.size());
    if (d_cfg.initiator) {
        if (d_cfg.test == xmpp_test::ping_pong && !std::isnan(d_waiting_since)) {
            d_report.round_trips.push_back(now - d_waiting_since);
            d_waiting_since = std::numeric_limits<double>::quiet_NaN();
            d_next_message = now + d_cfg.gap_s;
        }
        return;
    }
    if (d_cfg.test != xmpp_test::ping_pong)
        return;
    const auto from = s.attribute_or("from", "");
    if (d_cfg.typing_delay_s > 0) {
        // The client tells the other side its user is typing (XEP-0085).
        auto composing = net::make_element(
            "message",
            { { "from", d_cfg.user + "/hf" }, { "to", from }, { "type", "chat" } });
        composing.children.push_back(
            net::make_element("composing", { { "xmlns", ns_chat_states } }));
        d_bridge.from_component(net::jid_domain(from), std::move(composing), now);
    }
    d_answers.push_back({ now + d_cfg.typing_delay_s, from });
}

template <typename Link>
bool xmpp_host::absorb(Link& link, double now)
{
    auto a = link.take_actions();
    for (auto& p : a.to_sis)
        d_out.push_back(std::move(p));
    bool busy = false;
    for (auto& e : a.events) {
        using K = decltype(e.what);
        busy = true;
        if (e.what == K::bound) {
            if (!d_begun)
                begin(now);
        } else if (e.what == K::delivered) {
            d_bridge.delivered(e.id, now);
        } else if (e.what == K::failed) {
            d_bridge.failed(e.id, now);
        } else if (e.what == K::stanza && e.node == d_cfg.peer_node) {
            d_bridge.from_peer(std::move(e.stanza), now);
        }
    }
    return busy;
}

template <typename Link>
bool xmpp_host::feed(Link& link, double now)
{
    bool busy = false;
    while (link.can_send(d_cfg.peer_node)) {
        auto item = d_bridge.next_for_peer(now);
        if (!item)
            break;
        busy = true;
        link.send(d_cfg.peer_node, item->id, item->wire, now);
    }
    return busy;
}

// What the bridge application's event loop does, with the sockets taken away.
void xmpp_host::collect(double now)
{
    for (int round = 0; round < 1000; ++round) {
        bool busy = d_slep ? absorb(*d_slep, now) : absorb(*d_rcop, now);
        busy = (d_slep ? feed(*d_slep, now) : feed(*d_rcop, now)) || busy;
        auto a = d_bridge.take_actions();
        for (const auto& t : a.to_component) {
            busy = true;
            to_server(t.stanza, now);
        }
        if (d_begun && d_cfg.initiator && d_cfg.test == xmpp_test::one_way) {
            while (d_sent < d_cfg.messages && d_bridge.queued() < d_cfg.queue_depth) {
                busy = true;
                send_message(d_cfg.peer_user, now);
            }
        }
        if (!busy)
            return;
    }
}

xmpp_run_result run_xmpp_exchange(sim::scenario_config base, xmpp_host_config host)
{
    base.test = sim::test_kind::none;
    // The quiet test clients stay off the bridges' SAP.
    base.client.sap = base.client.peer_sap = 14;
    const char* domains[] = { "a.example", "b.example" };
    const char* users[] = { "alice@a.example", "bob@b.example" };
    std::vector<std::shared_ptr<xmpp_host>> hosts(2);
    base.applications = [&](size_t node) {
        std::vector<std::unique_ptr<sis_application>> out;
        if (node > 1)
            return out;
        auto h = host;
        h.initiator = node == 0;
        h.bridge.local_domains = { domains[node] };
        h.bridge.peer_domains = { domains[1 - node] };
        h.user = users[node];
        h.peer_user = users[1 - node];
        h.peer_node = uint32_t(2 - node); // addresses are index + 1
        h.incarnation = uint32_t(node + 1);
        hosts[node] = std::make_shared<xmpp_host>(h);
        out.push_back(std::make_unique<lent_application<xmpp_host>>(hosts[node]));
        return out;
    };
    auto r = sim::run_scenario(base);
    return { hosts[0]->report(), hosts[1]->report(), std::move(r) };
}

} // namespace traffic
} // namespace hfstack
} // namespace gr
