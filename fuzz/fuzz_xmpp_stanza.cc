/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

/* libFuzzer target: the XMPP stanza splitter (net/xmpp_splitter.h) and what consumes
 * its stanzas. The first input byte sets the piece size the rest is fed in (the same
 * stream cut differently must give the same stanzas); the rest is an XMPP stream, given
 * to the splitter, to a component session (and to one that keeps what it writes until
 * the server confirms it, its connection dropped halfway), and, DEFLATEd or not by the
 * first byte's top bit, to an x2x-slep reader. Each stanza goes through a bridge from
 * both sides. Checks the contracts: nothing throws, every stanza serializes to XML that
 * parses back to the same serialization, no stanza exceeds the limit, the pieces do not
 * change the stanzas, what the bridge hands the link is a stanza within
 * max_stanza_bytes, and the keeping session holds no more than its bound. */
#include "fuzz_support.h"
#include "net/xmpp_bridge.h"
#include "net/xmpp_component.h"
#include "net/xmpp_x2x_slep.h"

using namespace gr::hfstack::net;

namespace {

constexpr size_t max_stanza = 2048;

std::vector<xmpp_split_event>
split(const uint8_t* data, size_t size, size_t piece, std::string& error)
{
    xmpp_splitter sp(max_stanza);
    std::vector<xmpp_split_event> out;
    for (size_t at = 0; at < size; at += piece)
        if (!sp.feed(data + at, std::min(piece, size - at), out))
            break;
    error = sp.error();
    return out;
}

void check_round_trip(const xml_element& e)
{
    const std::string text = serialize(e);
    xmpp_splitter sp(1 << 20, 64);
    sp.start_implicit(xmpp_ns_server);
    std::vector<xmpp_split_event> again;
    check(sp.feed(reinterpret_cast<const uint8_t*>(text.data()), text.size(), again));
    check(again.size() == 1 && serialize(again[0].element) == text);
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
    if (size < 1)
        return 0;
    const size_t piece = 1 + (data[0] & 0x3F);
    const bool deflated = data[0] & 0x80;
    ++data;
    --size;

    std::string error_whole, error_pieces;
    const auto whole = split(data, size, size + 1, error_whole);
    const auto pieces = split(data, size, piece, error_pieces);
    // Where either ends in an error (the size bound is checked at piece boundaries too,
    // so it can strike earlier in pieces), what both gave up to there agrees.
    for (size_t i = 0; i < std::min(whole.size(), pieces.size()); ++i)
        check(serialize(whole[i].element) == serialize(pieces[i].element));
    if (error_whole.empty() && error_pieces.empty())
        check(whole.size() == pieces.size());

    xmpp_bridge_config cfg;
    set_xmpp_options(
        cfg,
        "local_domains=a.example;peer_domains=b.example conference.b.example;"
        "presence=throttle;max_stanza_bytes=1024;max_queue=8");
    xmpp_bridge bridge(cfg);
    bridge.set_component_ready("b.example", true, 0);
    double now = 0;
    for (const auto& e : pieces) {
        if (e.what != xmpp_split_event::kind::stanza)
            continue;
        check(e.wire_bytes <= max_stanza);
        check_round_trip(e.element);
        now += 1;
        bridge.from_component("b.example", e.element, now);
        bridge.from_peer(e.element, now);
        while (auto out = bridge.next_for_peer(now)) {
            check(out->wire.size() <= cfg.max_stanza_bytes ||
                  out->wire.find("type='error'") != std::string::npos);
            xmpp_splitter sp(1 << 20, 64);
            sp.start_implicit(xmpp_ns_server);
            std::vector<xmpp_split_event> again;
            check(sp.feed(reinterpret_cast<const uint8_t*>(out->wire.data()),
                          out->wire.size(),
                          again));
            check(again.size() == 1);
            if (out->id % 2)
                bridge.failed(out->id, now);
            else
                bridge.delivered(out->id, now);
        }
        bridge.on_timer(now += 100);
    }
    bridge.take_actions();

    // The same bytes as the server's side of a component session.
    xmpp_component_stream component("b.example", "secret", max_stanza);
    component.start();
    for (size_t at = 0; at < size; at += piece)
        component.on_bytes(data + at, std::min(piece, size - at));
    component.take_actions();

    // Again keeping what it writes until the server confirms it: a stanza written at
    // each piece once the session is ready, the confirming IQs among the input, and
    // the connection dropped and made again halfway.
    xmpp_component_stream keeping("b.example", "secret", max_stanza, true, 8);
    keeping.start();
    bool dropped = false;
    for (size_t at = 0; at < size; at += piece) {
        if (keeping.ready())
            keeping.send(make_element("message", { { "id", std::to_string(at) } }));
        keeping.on_bytes(data + at, std::min(piece, size - at));
        keeping.take_actions();
        if (!dropped && at >= size / 2) {
            dropped = true;
            keeping.on_disconnected();
            keeping.start();
            keeping.on_bytes(data, std::min(piece, size));
            keeping.take_actions();
        }
    }
    if (keeping.unconfirmed() > 8)
        __builtin_trap(); // the bound must hold

    // And as an x2x-slep byte stream from the air.
    x2x_slep_reader reader(deflated, max_stanza);
    std::vector<xml_element> stanzas;
    for (size_t at = 0; at < size; at += piece)
        if (!reader.feed(data + at, std::min(piece, size - at), stanzas))
            break;
    for (const auto& s : stanzas)
        check_round_trip(s);
    return 0;
}
