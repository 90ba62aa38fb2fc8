/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

/* Two XMPP bridges on nodes 1 and 2 joined by x2x-rcop (net/xmpp_rcop_link.h) over a
 * simulated STANAG 5066 path that rejects U_PDUs at random (sis_path_support.h): every
 * stanza arrives once, a long one in segments, whatever the node rejects is sent again
 * whole, and garbage from the air is counted, not delivered. */
#include "net/xmpp_rcop_link.h"
#include "net/xmpp_splitter.h"
#include "sis_path_support.h"

#include <gtest/gtest.h>

#include <map>

using namespace gr::hfstack;
using namespace gr::hfstack::net;

namespace {

xml_element parse(const std::string& text)
{
    xmpp_splitter sp;
    sp.start_implicit(xmpp_ns_component);
    std::vector<xmpp_split_event> out;
    EXPECT_TRUE(sp.feed(reinterpret_cast<const uint8_t*>(text.data()), text.size(), out));
    return out.at(0).element;
}

struct rcop_pair : sis_path<x2x_rcop_link> {
    std::unique_ptr<xmpp_bridge> bridge_a, bridge_b;
    std::vector<xmpp_to_component> at_b;

    rcop_pair()
    {
        xmpp_bridge_config ca, cb;
        set_xmpp_options(
            ca, "local_domains=a.example;peer_domains=b.example;transport=x2x-rcop");
        set_xmpp_options(
            cb, "local_domains=b.example;peer_domains=a.example;transport=x2x-rcop");
        bridge_a = std::make_unique<xmpp_bridge>(ca);
        bridge_b = std::make_unique<xmpp_bridge>(cb);
        bridge_a->set_component_ready("b.example", true, 0);
        bridge_b->set_component_ready("a.example", true, 0);
        a = std::make_unique<x2x_rcop_link>(x2x_rcop_link_config{});
        b = std::make_unique<x2x_rcop_link>(x2x_rcop_link_config{});
        keep = [this](x2x_rcop_link& link, x2x_rcop_actions& act) {
            auto& mine = &link == a.get() ? *bridge_a : *bridge_b;
            for (auto& e : act.events) {
                if (e.what == x2x_rcop_event::kind::delivered)
                    mine.delivered(e.id, now);
                else if (e.what == x2x_rcop_event::kind::failed)
                    mine.failed(e.id, now);
                else if (e.what == x2x_rcop_event::kind::stanza)
                    mine.from_peer(std::move(e.stanza), now);
            }
        };
        bind_both();
    }

    // Bridges hand their links what they may send; the path carries it; time moves on.
    void run(double until)
    {
        while (now < until) {
            for (auto [bridge, link, peer] :
                 { std::make_tuple(bridge_a.get(), a.get(), 2u),
                   std::make_tuple(bridge_b.get(), b.get(), 1u) })
                while (link->can_send(peer)) {
                    auto out = bridge->next_for_peer(now);
                    if (!out)
                        break;
                    link->send(peer, out->id, out->wire, now);
                }
            settle(now);
            for (auto& t : bridge_b->take_actions().to_component)
                at_b.push_back(std::move(t));
            now += 10;
            bridge_a->on_timer(now);
            bridge_b->on_timer(now);
        }
    }
};

} // namespace

TEST(XmppRcopLink, EveryStanzaArrivesOnceDespiteRejections)
{
    rcop_pair p;
    p.p_rejected = 0.3;
    for (int i = 0; i < 30; ++i) {
        const std::string body =
            i == 7 ? std::string(5000, 'y') : "message " + std::to_string(i);
        p.bridge_a->from_component(
            "b.example",
            parse("<message from='alice@a.example' to='bob@b.example' id='m" +
                  std::to_string(i) + "'><body>" + body + "</body></message>"),
            0);
    }
    p.run(1200);
    std::map<std::string, int> seen;
    for (const auto& t : p.at_b) {
        EXPECT_EQ(t.component, "a.example");
        seen[t.stanza.attribute_or("id", "")] += 1;
    }
    EXPECT_EQ(seen.size(), 30u);
    for (const auto& [id, n] : seen)
        EXPECT_EQ(n, 1) << id;
    EXPECT_EQ(p.bridge_a->counters().delivered, 30u);
    EXPECT_GT(p.bridge_a->counters().resent, 0u);
    EXPECT_EQ(p.bridge_a->queued(), 0u);
    EXPECT_EQ(p.b->receive_counters().stanzas, 30u);
}

TEST(XmppRcopLink, GarbageFromTheAirIsCountedAndTheLinkGoesOn)
{
    rcop_pair p;
    dl::sis_primitive ind;
    ind.type = dl::sis_type::unidata_indication;
    ind.destination_sap = dl::rcop_sap;
    ind.source = dl::sis_address{ 1, 7 };
    for (const auto& junk : { dl::bytes{ 1, 2 },
                              dl::bytes{ 0, 9, 0, 0, 0x83, 0x65, '<', '<' },
                              dl::bytes{ 0, 9, 0, 5, 0x83, 0x65, 'x' },
                              dl::bytes{ 0, 9, 0, 0, 0x12, 0x34 } }) {
        ind.payload = junk;
        p.b->on_sis(ind, 0);
    }
    const auto act = p.b->take_actions();
    EXPECT_EQ(act.notices.size(), 1u);
    const auto c = p.b->receive_counters();
    EXPECT_EQ(c.short_pdus + c.malformed + c.out_of_order + c.foreign, 4u);
    // Then a good stanza still gets through.
    p.bridge_a->from_component(
        "b.example", parse("<message from='alice@a.example' to='bob@b.example'/>"), 0);
    p.run(20);
    EXPECT_EQ(p.at_b.size(), 1u);
    // The node going away fails what it held; it is sent again after the rebind.
    p.bridge_a->from_component(
        "b.example",
        parse("<message from='alice@a.example' to='bob@b.example' id='x'/>"),
        20);
    auto out = p.bridge_a->next_for_peer(20);
    ASSERT_TRUE(out);
    ASSERT_TRUE(p.a->send(2, out->id, out->wire, 20));
    p.a->take_actions(); // the node never got it
    p.a->on_disconnected(20);
    auto lost = p.a->take_actions();
    ASSERT_EQ(lost.events.size(), 2u);
    EXPECT_EQ(lost.events[0].what, x2x_rcop_event::kind::failed);
    p.bridge_a->failed(lost.events[0].id, 20);
    p.bind(*p.a);
    p.run(200);
    ASSERT_EQ(p.at_b.size(), 2u);
    EXPECT_EQ(p.at_b[1].stanza.attribute_or("id", ""), "x");
}
