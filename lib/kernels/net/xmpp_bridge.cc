/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "xmpp_bridge.h"

#include "xmpp_splitter.h"

#include <algorithm>
#include <cctype>
#include <limits>
#include <stdexcept>

namespace gr {
namespace hfstack {
namespace net {

namespace {

constexpr const char* ns_chat_states = "http://jabber.org/protocol/chatstates";
constexpr const char* ns_xhtml_im = "http://jabber.org/protocol/xhtml-im";
constexpr const char* ns_ping = "urn:xmpp:ping";
constexpr const char* ns_muc_prefix = "http://jabber.org/protocol/muc";

bool is_stanza(const xml_element& e)
{
    return e.name == "message" || e.name == "presence" || e.name == "iq";
}

bool is_error(const xml_element& e) { return e.attribute_or("type", "") == "error"; }

void rewrite_below(xml_element& e, const std::string& from, const std::string& to)
{
    for (auto& a : e.attributes)
        if ((a.first == "xmlns" || a.first.rfind("xmlns:", 0) == 0) && a.second == from)
            a.second = to;
    for (auto& c : e.children)
        if (!c.is_text())
            rewrite_below(c, from, to);
}

// Removes the children `drop` selects; returns how many.
template <typename Pred>
size_t remove_children(xml_element& e, Pred drop)
{
    const auto before = e.children.size();
    e.children.erase(
        std::remove_if(e.children.begin(),
                       e.children.end(),
                       [&](const xml_element& c) { return !c.is_text() && drop(c); }),
        e.children.end());
    return before - e.children.size();
}

bool has_element_child(const xml_element& e, const std::string& except)
{
    for (const auto& c : e.children)
        if (!c.is_text() && c.name != except)
            return true;
    return false;
}

} // namespace

std::string jid_domain(const std::string& jid)
{
    std::string bare = jid.substr(0, jid.find('/'));
    const auto at = bare.find('@');
    std::string d = at == std::string::npos ? bare : bare.substr(at + 1);
    for (auto& c : d)
        c = char(std::tolower(static_cast<unsigned char>(c)));
    if (!d.empty() && d.back() == '.')
        d.pop_back();
    return d;
}

xml_element make_bounce(const xml_element& original,
                        const std::string& condition,
                        const std::string& type,
                        bool with_payload)
{
    xml_element b = make_element(original.name);
    if (const auto* to = original.attribute("to"))
        b.set_attribute("from", *to);
    if (const auto* from = original.attribute("from"))
        b.set_attribute("to", *from);
    if (const auto* id = original.attribute("id"))
        b.set_attribute("id", *id);
    b.set_attribute("type", "error");
    if (with_payload)
        for (const auto& c : original.children)
            if (!c.is_text() && c.name != "error")
                b.children.push_back(c);
    xml_element err = make_element("error", { { "type", type } });
    err.children.push_back(make_element(condition, { { "xmlns", xmpp_ns_stanzas } }));
    b.children.push_back(std::move(err));
    return b;
}

bool rewrite_stanza_namespace(xml_element& stanza,
                              const std::string& from,
                              const std::string& to)
{
    if (const auto* ns = stanza.attribute("xmlns")) {
        if (*ns != from && *ns != to)
            return false;
        stanza.remove_attribute("xmlns");
    }
    rewrite_below(stanza, from, to);
    return true;
}

xmpp_bridge::xmpp_bridge(xmpp_bridge_config config) : d_cfg(std::move(config))
{
    if (d_cfg.local_domains.empty() || d_cfg.peer_domains.empty())
        throw std::invalid_argument(
            "XMPP bridge: local_domains and peer_domains must be set");
    for (const auto& d : d_cfg.peer_domains)
        if (d_cfg.local_domains.count(d))
            throw std::invalid_argument("XMPP bridge: " + d +
                                        " is both a local and a peer domain");
    if (d_cfg.max_queue == 0 || d_cfg.max_stanza_bytes == 0)
        throw std::invalid_argument(
            "XMPP bridge: max_queue and max_stanza_bytes must be > 0");
}

void xmpp_bridge::notice(const std::string& kind, const std::string& text)
{
    if (d_noticed.insert(kind).second)
        d_actions.notices.push_back(text);
}

void xmpp_bridge::set_component_ready(const std::string& component,
                                      bool ready,
                                      double now)
{
    if (!ready) {
        d_ready.erase(component);
        return;
    }
    d_ready.insert(component);
    std::deque<held_stanza> keep;
    for (auto& h : d_held) {
        if (h.component == component) {
            d_counters.to_component += 1;
            d_actions.to_component.push_back({ h.component, std::move(h.stanza) });
        } else {
            keep.push_back(std::move(h));
        }
    }
    d_held = std::move(keep);
    (void)now;
}

// ---- towards the peer -----------------------------------------------------------------

void xmpp_bridge::from_component(const std::string& component, xml_element s, double now)
{
    d_counters.from_component += 1;
    if (!is_stanza(s) ||
        !rewrite_stanza_namespace(s, xmpp_ns_component, xmpp_ns_server)) {
        d_counters.not_stanza += 1;
        notice("not_stanza",
               "XMPP bridge: dropping <" + s.name + "> from the server (not a stanza)");
        return;
    }
    const std::string from = jid_domain(s.attribute_or("from", ""));
    const std::string to = jid_domain(s.attribute_or("to", ""));
    if (!d_cfg.local_domains.count(from)) {
        d_counters.rejected_from += 1;
        notice("local_from",
               "XMPP bridge: dropping stanzas from " + from + " (not a local domain)");
        return;
    }
    if (to != component || !d_cfg.peer_domains.count(to)) {
        d_counters.rejected_to += 1;
        notice("local_to",
               "XMPP bridge: dropping stanzas to " + to + " on component " + component);
        return;
    }
    if (!apply_policy(s, now))
        return;
    enqueue(std::move(s), now);
}

bool xmpp_bridge::apply_policy(xml_element& s, double now)
{
    if (is_error(s))
        return true;
    if (s.name == "iq" && d_cfg.refuse_pings && s.attribute_or("type", "") == "get" &&
        s.child("ping", ns_ping)) {
        d_counters.pings_refused += 1;
        bounce_local(s, "service-unavailable", "cancel", now);
        return false;
    }
    if (s.name == "message") {
        if (d_cfg.drop_chat_states) {
            const auto n = remove_children(s, [](const xml_element& c) {
                return c.attribute_or("xmlns", "") == ns_chat_states;
            });
            if (n && !has_element_child(s, "thread")) {
                d_counters.chat_states_dropped += 1;
                return false;
            }
            d_counters.chat_states_stripped += n ? 1 : 0;
        }
        if (d_cfg.strip_xhtml) {
            const auto n = remove_children(s, [](const xml_element& c) {
                return c.name == "html" && c.attribute_or("xmlns", "") == ns_xhtml_im;
            });
            d_counters.xhtml_stripped += n ? 1 : 0;
        }
    }
    if (s.name == "presence" && d_cfg.presence == xmpp_presence_policy::strip) {
        const auto n = remove_children(s, [](const xml_element& c) {
            return !(c.name == "show" || c.name == "status" || c.name == "priority" ||
                     (c.name == "x" &&
                      c.attribute_or("xmlns", "").rfind(ns_muc_prefix, 0) == 0));
        });
        d_counters.presence_stripped += n ? 1 : 0;
    }
    return true;
}

void xmpp_bridge::enqueue(xml_element s, double now)
{
    queued_stanza q;
    q.wire = serialize(s);
    if (q.wire.size() > d_cfg.max_stanza_bytes) {
        d_counters.oversize += 1;
        notice("oversize",
               "XMPP bridge: bouncing stanzas over max_stanza_bytes (" +
                   std::to_string(d_cfg.max_stanza_bytes) + ")");
        bounce_local(s, "not-acceptable", "modify", now);
        return;
    }
    q.queued_at = q.not_before = now;
    const bool available_presence = s.name == "presence" && !s.attribute("type");
    const bool unavailable_presence =
        s.name == "presence" && s.attribute_or("type", "") == "unavailable";
    if ((available_presence || unavailable_presence) &&
        d_cfg.presence == xmpp_presence_policy::throttle) {
        const std::string key =
            s.attribute_or("from", "") + "|" + s.attribute_or("to", "");
        // The latest presence of a pair replaces one still waiting.
        for (auto it = d_queue.begin(); it != d_queue.end(); ++it)
            if (it->second.throttle_key == key && !it->second.in_flight) {
                d_counters.presence_throttled += 1;
                d_queue_bytes -= it->second.wire.size();
                d_queue.erase(it);
                break;
            }
        if (available_presence) {
            q.throttle_key = key;
            const auto last = d_presence_sent.find(key);
            if (last != d_presence_sent.end())
                q.not_before = std::max(now, last->second + d_cfg.presence_interval_s);
        }
    }
    if (d_queue.size() >= d_cfg.max_queue ||
        d_queue_bytes + q.wire.size() > d_cfg.max_queue_bytes) {
        d_counters.queue_full += 1;
        notice("queue_full", "XMPP bridge: queue to the peer full, bouncing stanzas");
        bounce_local(s, "remote-server-timeout", "wait", now);
        return;
    }
    q.stanza = std::move(s);
    d_queue_bytes += q.wire.size();
    d_queue.emplace(d_next_id++, std::move(q));
}

std::optional<xmpp_outgoing> xmpp_bridge::next_for_peer(double now)
{
    expire(now);
    for (auto& [id, q] : d_queue) {
        if (q.retrying && q.not_before > now)
            return std::nullopt; // what follows must not overtake it
        if (q.in_flight || q.not_before > now)
            continue; // a throttled presence
        q.in_flight = true;
        q.retrying = false;
        d_counters.sent += 1;
        d_counters.wire_bytes_sent += q.wire.size();
        if (!q.throttle_key.empty())
            d_presence_sent[q.throttle_key] = now;
        return xmpp_outgoing{ id, q.wire };
    }
    return std::nullopt;
}

void xmpp_bridge::delivered(xmpp_stanza_id id, double)
{
    auto it = d_queue.find(id);
    if (it == d_queue.end())
        return;
    d_counters.delivered += 1;
    d_queue_bytes -= it->second.wire.size();
    d_queue.erase(it);
}

void xmpp_bridge::failed(xmpp_stanza_id id, double now)
{
    auto it = d_queue.find(id);
    if (it == d_queue.end() || !it->second.in_flight)
        return;
    d_counters.failures += 1;
    auto& q = it->second;
    q.in_flight = false;
    if (now >= q.queued_at + d_cfg.queue_timeout_s) {
        expire(now);
        return;
    }
    d_counters.resent += 1;
    q.retrying = true;
    q.not_before = now + d_cfg.retry_s;
}

void xmpp_bridge::expire(double now)
{
    for (auto it = d_queue.begin(); it != d_queue.end();) {
        auto& q = it->second;
        if (q.in_flight || now < q.queued_at + d_cfg.queue_timeout_s) {
            ++it;
            continue;
        }
        d_counters.timed_out += 1;
        notice("timed_out",
               "XMPP bridge: stanzas not delivered within queue_timeout_s bounced");
        bounce_local(q.stanza, "remote-server-timeout", "wait", now);
        d_queue_bytes -= q.wire.size();
        it = d_queue.erase(it);
    }
    for (auto it = d_presence_sent.begin(); it != d_presence_sent.end();)
        it = now >= it->second + d_cfg.presence_interval_s ? d_presence_sent.erase(it)
                                                           : std::next(it);
    while (!d_held.empty() && now >= d_held.front().held_at + d_cfg.hold_timeout_s) {
        d_counters.held_bounced += 1;
        bounce_to_peer(d_held.front().stanza, now);
        d_held.pop_front();
    }
}

void xmpp_bridge::bounce_local(const xml_element& server_form,
                               const std::string& condition,
                               const std::string& type,
                               double now)
{
    if (is_error(server_form)) {
        d_counters.errors_dropped += 1;
        notice("error_dropped",
               "XMPP bridge: undeliverable error stanzas dropped (never bounced)");
        return;
    }
    d_counters.bounced += 1;
    deliver_local(make_bounce(server_form, condition, type, true), now);
}

// ---- from the peer --------------------------------------------------------------------

void xmpp_bridge::from_peer(xml_element s, double now)
{
    d_counters.from_peer += 1;
    if (!is_stanza(s) ||
        !rewrite_stanza_namespace(s, xmpp_ns_server, xmpp_ns_component)) {
        d_counters.not_stanza += 1;
        notice("peer_not_stanza",
               "XMPP bridge: dropping <" + s.name + "> from the peer (not a stanza)");
        return;
    }
    const std::string from = jid_domain(s.attribute_or("from", ""));
    const std::string to = jid_domain(s.attribute_or("to", ""));
    if (!d_cfg.peer_domains.count(from)) {
        d_counters.rejected_from += 1;
        notice("peer_from",
               "XMPP bridge: rejecting stanzas from " + from +
                   " (not one of the peer's domains)");
        return;
    }
    if (!d_cfg.local_domains.count(to)) {
        d_counters.rejected_to += 1;
        notice("peer_to", "XMPP bridge: rejecting stanzas from the peer to " + to);
        return;
    }
    deliver_local(std::move(s), now);
}

void xmpp_bridge::deliver_local(xml_element s, double now)
{
    const std::string component = jid_domain(s.attribute_or("from", ""));
    if (d_ready.count(component)) {
        d_counters.to_component += 1;
        d_actions.to_component.push_back({ component, std::move(s) });
        return;
    }
    d_counters.held += 1;
    if (d_held.size() >= d_cfg.max_held) {
        d_counters.held_bounced += 1;
        notice("held_full",
               "XMPP bridge: XMPP server away too long, bouncing stanzas to the peer");
        bounce_to_peer(d_held.front().stanza, now);
        d_held.pop_front();
    }
    d_held.push_back({ component, std::move(s), now });
}

void xmpp_bridge::bounce_to_peer(const xml_element& component_form, double now)
{
    if (is_error(component_form)) {
        d_counters.errors_dropped += 1;
        return;
    }
    d_counters.bounced += 1;
    // Without the payload: the link is slow and the sender has it.
    auto b = make_bounce(component_form, "remote-server-timeout", "wait", false);
    rewrite_stanza_namespace(b, xmpp_ns_component, xmpp_ns_server);
    enqueue(std::move(b), now);
}

void xmpp_bridge::on_timer(double now) { expire(now); }

double xmpp_bridge::next_deadline() const
{
    double t = std::numeric_limits<double>::infinity();
    for (const auto& [id, q] : d_queue) {
        if (q.in_flight)
            continue;
        t = std::min(t, q.queued_at + d_cfg.queue_timeout_s);
        if (q.not_before >
            q.queued_at) // deferred (a retry, a throttled presence): due then
            t = std::min(t, q.not_before);
    }
    if (!d_held.empty())
        t = std::min(t, d_held.front().held_at + d_cfg.hold_timeout_s);
    return t;
}

xmpp_bridge_actions xmpp_bridge::take_actions()
{
    xmpp_bridge_actions out;
    std::swap(out, d_actions);
    return out;
}

} // namespace net
} // namespace hfstack
} // namespace gr
