/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

/* Two XMPP bridges on nodes 1 and 2 joined by x2x-slep (net/xmpp_slep_link.h) over a
 * simulated STANAG 5066 path that rejects U_PDUs at random (sis_path_support.h): chat
 * both ways arrives once and in order, delivery is reported per stanza, the bytes per
 * stanza on the link are printed, and a peer stream of garbage is reset and counted. */
#include "net/xmpp_slep_link.h"
#include "net/xmpp_splitter.h"
#include "sis_path_support.h"

#include <gtest/gtest.h>

#include <cstdio>

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

std::string chat(int i, const std::string& from, const std::string& to)
{
    return "<message from='" + from + "' to='" + to + "' type='chat' id='msg-" +
           std::to_string(i) + "'><body>Position report " + std::to_string(i) +
           ": all well, next contact at the usual time</body><request "
           "xmlns='urn:xmpp:receipts'/>"
           "<active xmlns='http://jabber.org/protocol/chatstates'/></message>";
}

struct slep_link_pair : sis_path<x2x_slep_link> {
    std::unique_ptr<xmpp_bridge> bridge_a, bridge_b;
    std::vector<xmpp_to_component> at_a, at_b;

    explicit slep_link_pair(bool peer_acks = false)
    {
        xmpp_bridge_config ca, cb;
        set_xmpp_options(ca, "local_domains=a.example;peer_domains=b.example");
        set_xmpp_options(cb, "local_domains=b.example;peer_domains=a.example");
        bridge_a = std::make_unique<xmpp_bridge>(ca);
        bridge_b = std::make_unique<xmpp_bridge>(cb);
        bridge_a->set_component_ready("b.example", true, 0);
        bridge_b->set_component_ready("a.example", true, 0);
        x2x_slep_link_config la, lb;
        la.slep.incarnation = 1;
        lb.slep.incarnation = 1000;
        la.slep.keepalive_s = lb.slep.keepalive_s = 0;
        la.slep.peer_acks = lb.slep.peer_acks = peer_acks;
        a = std::make_unique<x2x_slep_link>(la);
        b = std::make_unique<x2x_slep_link>(lb);
        keep = [this](x2x_slep_link& link, x2x_slep_link_actions& act) {
            auto& mine = &link == a.get() ? *bridge_a : *bridge_b;
            for (auto& e : act.events) {
                if (e.what == x2x_slep_link_event::kind::delivered)
                    mine.delivered(e.id, now);
                else if (e.what == x2x_slep_link_event::kind::failed)
                    mine.failed(e.id, now);
                else if (e.what == x2x_slep_link_event::kind::stanza)
                    mine.from_peer(std::move(e.stanza), now);
            }
        };
        bind_both();
    }

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
            settle(now + 5);
            for (auto& t : bridge_a->take_actions().to_component)
                at_a.push_back(std::move(t));
            for (auto& t : bridge_b->take_actions().to_component)
                at_b.push_back(std::move(t));
            now += 5;
            bridge_a->on_timer(now);
            bridge_b->on_timer(now);
        }
    }
};

} // namespace

TEST(XmppSlepLink, ChatBothWaysArrivesOnceInOrder)
{
    slep_link_pair p;
    p.p_rejected = 0.2;
    for (int i = 0; i < 40; ++i) {
        p.bridge_a->from_component(
            "b.example", parse(chat(i, "alice@a.example/x", "bob@b.example")), p.now);
        p.bridge_b->from_component(
            "a.example", parse(chat(i, "bob@b.example/y", "alice@a.example")), p.now);
    }
    p.run(600);
    for (auto* got : { &p.at_a, &p.at_b }) {
        ASSERT_EQ(got->size(), 40u);
        for (int i = 0; i < 40; ++i)
            EXPECT_EQ((*got)[size_t(i)].stanza.attribute_or("id", ""),
                      "msg-" + std::to_string(i));
    }
    EXPECT_EQ(p.bridge_a->counters().delivered, 40u);
    EXPECT_EQ(p.bridge_b->counters().delivered, 40u);
    EXPECT_EQ(p.bridge_a->queued(), 0u);
    for (auto* link : { p.a.get(), p.b.get() }) {
        const auto& c = link->counters();
        std::printf(
            "x2x-slep link %s: %.1f stanza bytes, %.1f after DEFLATE per stanza sent; "
            "%.1f / %.1f per stanza received\n",
            link == p.a.get() ? "A->B" : "B->A",
            double(c.plain_sent) / double(c.stanzas_sent),
            double(c.wire_sent) / double(c.stanzas_sent),
            double(c.plain_received) / double(c.stanzas_received),
            double(c.wire_received) / double(c.stanzas_received));
        EXPECT_EQ(c.streams_opened, 1u);
        EXPECT_LT(c.wire_sent * 3, c.plain_sent);
    }
}

TEST(XmppSlepLink, AStreamOfGarbageIsResetAndCounted)
{
    slep_link_pair p;
    slep_pdu open;
    open.type = slep_type::open;
    open.stream = 77;
    open.incarnation = 1; // node 1's, so its real streams stay welcome
    open.limit = 262144;
    open.to = open.from = 6;
    open.data = { 0x12, 0x34, 0x56, 0x78, 0x9a, 0xbc, 0xde, 0xf0 };
    dl::sis_primitive ind;
    ind.type = dl::sis_type::unidata_indication;
    ind.destination_sap = 13;
    ind.source = dl::sis_address{ 1, 7 };
    ind.payload = encode(open);
    p.b->on_sis(ind, 0);
    EXPECT_EQ(p.b->counters().bad_streams, 1u);
    const auto act = p.b->take_actions();
    EXPECT_FALSE(act.notices.empty());
    // The bridges still talk.
    p.bridge_a->from_component(
        "b.example", parse(chat(1, "alice@a.example", "bob@b.example")), 0);
    p.run(60);
    EXPECT_EQ(p.at_b.size(), 1u);
}

// What the bridge hands the link in one go leaves as one SLEP PDU (one DEFLATE flush);
// with peer_acks (the bridge's default) the far SLEP's ACK confirms it, and the chat
// still arrives whole, once and in order when the node loses PDUs.
TEST(XmppSlepLink, ABurstLeavesAsOnePduAndPeerAcksConfirmIt)
{
    for (bool peer_acks : { false, true }) {
        slep_link_pair p(peer_acks);
        for (int burst = 0; burst < 2; ++burst) {
            for (int i = 0; i < 5; ++i)
                p.bridge_a->from_component(
                    "b.example",
                    parse(chat(5 * burst + i, "alice@a.example/x", "bob@b.example")),
                    p.now);
            p.run(p.now + 600);
        }
        ASSERT_EQ(p.at_b.size(), 10u);
        EXPECT_EQ(p.at_b[9].stanza.attribute_or("id", ""), "msg-9");
        EXPECT_EQ(p.bridge_a->counters().delivered, 10u);
        const auto& got = p.b->transport().counters().pdus_received;
        EXPECT_EQ(got[size_t(slep_type::open)], 1u);
        EXPECT_EQ(got[size_t(slep_type::data)], 1u);
        const auto& acks = p.b->transport().counters().pdus_sent;
        EXPECT_EQ(acks[size_t(slep_type::ack)], peer_acks ? 1u : 0u);
    }
    slep_link_pair lossy(true);
    lossy.p_rejected = 0.2;
    for (int i = 0; i < 40; ++i) {
        lossy.bridge_a->from_component(
            "b.example", parse(chat(i, "alice@a.example/x", "bob@b.example")), lossy.now);
        lossy.bridge_b->from_component(
            "a.example", parse(chat(i, "bob@b.example/y", "alice@a.example")), lossy.now);
        lossy.run(lossy.now + 30);
    }
    lossy.run(lossy.now + 3600);
    for (auto* got : { &lossy.at_a, &lossy.at_b }) {
        ASSERT_EQ(got->size(), 40u);
        for (int i = 0; i < 40; ++i)
            EXPECT_EQ((*got)[size_t(i)].stanza.attribute_or("id", ""),
                      "msg-" + std::to_string(i));
    }
    EXPECT_EQ(lossy.bridge_a->counters().delivered, 40u);
    EXPECT_EQ(lossy.bridge_b->counters().delivered, 40u);
}
