/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "xmpp_component.h"

#include "sha1.h"

#include <algorithm>
#include <cctype>

namespace gr {
namespace hfstack {
namespace net {

std::string component_handshake(const std::string& stream_id, const std::string& secret)
{
    return sha1_hex(stream_id + secret);
}

bool verify_component_handshake(const std::string& stream_id,
                                const std::string& secret,
                                const std::string& offered)
{
    const auto b = offered.find_first_not_of(" \t\r\n");
    if (b == std::string::npos)
        return false;
    std::string hex = offered.substr(b, offered.find_last_not_of(" \t\r\n") - b + 1);
    for (auto& c : hex)
        c = char(std::tolower(static_cast<unsigned char>(c)));
    return hex == component_handshake(stream_id, secret);
}

namespace {
const std::string marker_prefix = "hfstack-written-";
} // namespace

xmpp_component_stream::xmpp_component_stream(std::string domain,
                                             std::string secret,
                                             size_t max_stanza_bytes,
                                             bool confirm_written,
                                             size_t max_unconfirmed)
    : d_domain(std::move(domain)),
      d_secret(std::move(secret)),
      d_max(max_stanza_bytes),
      d_confirm(confirm_written),
      d_max_unconfirmed(std::max<size_t>(1, max_unconfirmed))
{
}

void xmpp_component_stream::start()
{
    d_splitter.emplace(d_max);
    d_stream_id.clear();
    d_state = state::awaiting_header;
    d_actions.to_server += std::string("<?xml version='1.0'?><stream:stream xmlns='") +
                           xmpp_ns_component + "' xmlns:stream='" + xmpp_ns_streams +
                           "' to='" + xml_escape(d_domain, true) + "'>";
}

void xmpp_component_stream::on_disconnected()
{
    d_splitter.reset();
    d_state = state::idle;
    d_marker = 0; // lost with the connection: what it covered is written again
    d_marked = 0;
}

bool xmpp_component_stream::is_marker(const xml_element& el) const
{
    if (d_marker == 0 || el.name != "iq")
        return false;
    return el.attribute_or("id", "") == marker_prefix + std::to_string(d_marker);
}

void xmpp_component_stream::fail(const std::string& why)
{
    if (d_state == state::over || d_state == state::idle)
        return;
    d_state = state::over;
    d_actions.events.push_back({ xmpp_component_event::kind::error, {}, why });
}

void xmpp_component_stream::on_bytes(const uint8_t* data, size_t size)
{
    if (!d_splitter || d_state == state::over)
        return;
    std::vector<xmpp_split_event> got;
    const bool ok = d_splitter->feed(data, size, got);
    for (auto& e : got) {
        if (d_state == state::over)
            break;
        on_element(e);
    }
    if (!ok)
        fail("XMPP server stream: " + d_splitter->error());
}

void xmpp_component_stream::on_element(xmpp_split_event& e)
{
    using kind = xmpp_split_event::kind;
    if (e.what == kind::stream_close) {
        d_state = state::over;
        d_actions.events.push_back({ xmpp_component_event::kind::closed, {}, "" });
        return;
    }
    if (e.what == kind::stream_open) {
        if (e.element.attribute_or("xmlns", "") != xmpp_ns_component)
            return fail("the XMPP server opened its stream in namespace \"" +
                        e.element.attribute_or("xmlns", "") + "\", not " +
                        xmpp_ns_component);
        d_stream_id = e.element.attribute_or("id", "");
        if (d_stream_id.empty())
            return fail("the XMPP server's stream header has no id");
        d_state = state::awaiting_handshake;
        d_actions.to_server +=
            "<handshake>" + component_handshake(d_stream_id, d_secret) + "</handshake>";
        return;
    }
    const auto& el = e.element;
    if (el.name == "stream:error") {
        std::string condition;
        for (const auto& c : el.children)
            if (!c.is_text() && c.name != "text") {
                condition = c.name;
                break;
            }
        return fail("the XMPP server ended the stream: " +
                    (condition.empty() ? "stream error" : condition));
    }
    if (d_state == state::awaiting_handshake) {
        if (el.name != "handshake")
            return fail("<" + el.name +
                        "> from the XMPP server before it accepted the handshake");
        d_state = state::ready;
        // What the last session wrote without confirmation goes first, in order.
        for (const auto& text : d_unconfirmed)
            d_actions.to_server += text;
        d_rewritten += d_unconfirmed.size();
        d_actions.events.push_back({ xmpp_component_event::kind::ready, {}, "" });
        return;
    }
    if (d_state != state::ready)
        return fail("<" + el.name + "> from the XMPP server before its stream header");
    if (is_marker(el)) {
        // Our own IQ back (or the server's error for it): everything before it is taken.
        d_unconfirmed.erase(d_unconfirmed.begin(), d_unconfirmed.begin() + d_marked);
        d_marker = 0;
        d_marked = 0;
        return;
    }
    d_in += 1;
    d_actions.events.push_back(
        { xmpp_component_event::kind::stanza, std::move(e.element), "" });
}

bool xmpp_component_stream::send(const xml_element& stanza)
{
    if (d_state != state::ready)
        return false;
    auto text = serialize(stanza);
    d_actions.to_server += text;
    d_out += 1;
    if (d_confirm) {
        if (d_unconfirmed.size() >= d_max_unconfirmed) {
            d_unconfirmed.pop_front();
            d_given_up += 1;
            if (d_marked > 0)
                d_marked -= 1;
        }
        d_unconfirmed.push_back(std::move(text));
    }
    return true;
}

void xmpp_component_stream::close()
{
    if (d_state != state::idle && d_state != state::over)
        d_actions.to_server += "</stream:stream>";
    d_state = state::over;
}

xmpp_component_actions xmpp_component_stream::take_actions()
{
    if (d_confirm && d_state == state::ready && d_marker == 0 && !d_unconfirmed.empty()) {
        d_marker = d_next_marker++;
        d_marked = d_unconfirmed.size();
        const auto self = xml_escape(d_domain, true);
        d_actions.to_server += "<iq type='get' id='" + marker_prefix +
                               std::to_string(d_marker) + "' from='" + self + "' to='" +
                               self + "'><ping xmlns='urn:xmpp:ping'/></iq>";
    }
    xmpp_component_actions out;
    std::swap(out, d_actions);
    return out;
}

} // namespace net
} // namespace hfstack
} // namespace gr
