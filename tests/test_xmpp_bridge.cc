/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

/* The XMPP bridge kernel (net/xmpp_bridge.h) between two servers, a.example and
 * b.example: stanzas from A's server through bridge A, the link's bytes, bridge B, to
 * B's server, with the link policy, the namespace rewrite, address validation, the
 * queue's retries, timeouts and bounces, and B's server going away and coming back. */
#include "net/xmpp_bridge.h"
#include "net/xmpp_slep_link.h"
#include "net/xmpp_splitter.h"

#include <gtest/gtest.h>

#include <stdexcept>

using namespace gr::hfstack::net;

namespace {

xml_element parse(const std::string& text)
{
    xmpp_splitter sp;
    sp.start_implicit(xmpp_ns_component);
    std::vector<xmpp_split_event> out;
    EXPECT_TRUE(sp.feed(reinterpret_cast<const uint8_t*>(text.data()), text.size(), out))
        << sp.error();
    EXPECT_EQ(out.size(), 1u);
    return out.empty() ? xml_element{} : out[0].element;
}

xmpp_bridge_config
config(const std::string& local, const std::string& peer, const std::string& extra = "")
{
    xmpp_bridge_config c;
    set_xmpp_options(c, "local_domains=" + local + ";peer_domains=" + peer + ";" + extra);
    return c;
}

// Two bridges; what A hands the link is given to B as the far splitter would read it.
struct bridge_pair {
    xmpp_bridge a, b;
    double now = 0;
    explicit bridge_pair(const std::string& extra = "")
        : a(config(
              "a.example conference.a.example", "b.example conference.b.example", extra)),
          b(config(
              "b.example conference.b.example", "a.example conference.a.example", extra))
    {
        for (auto d : { "b.example", "conference.b.example" })
            a.set_component_ready(d, true, now);
        for (auto d : { "a.example", "conference.a.example" })
            b.set_component_ready(d, true, now);
    }
    // Carries everything A has for the peer to B; returns what B's server gets.
    std::vector<xmpp_to_component> carry()
    {
        while (auto out = a.next_for_peer(now)) {
            xmpp_splitter sp;
            sp.start_implicit(xmpp_ns_server);
            std::vector<xmpp_split_event> ev;
            EXPECT_TRUE(sp.feed(reinterpret_cast<const uint8_t*>(out->wire.data()),
                                out->wire.size(),
                                ev));
            for (auto& e : ev)
                b.from_peer(std::move(e.element), now);
            a.delivered(out->id, now);
        }
        return b.take_actions().to_component;
    }
};

} // namespace

TEST(XmppBridge, MessagesPresenceIqAndMucCrossWithTheirNamespaceRewritten)
{
    bridge_pair p;
    const std::string msg =
        "<message xmlns='jabber:component:accept' from='alice@a.example/phone' "
        "to='bob@b.example' type='chat' id='m1'><body>Hello</body>"
        "<forwarded xmlns='urn:xmpp:forward:0'><message "
        "xmlns='jabber:client'/></forwarded>"
        "<x xmlns:c='jabber:component:accept'/></message>";
    p.a.from_component("b.example", parse(msg), 0);
    p.a.from_component(
        "conference.b.example",
        parse(
            "<presence from='alice@a.example/phone' to='room@conference.b.example/alice'>"
            "<x xmlns='http://jabber.org/protocol/muc'/></presence>"),
        0);
    p.a.from_component(
        "b.example",
        parse("<iq type='get' id='q1' from='alice@a.example/phone' to='b.example'>"
              "<query xmlns='http://jabber.org/protocol/disco#info'/></iq>"),
        0);
    auto first = p.a.next_for_peer(0);
    ASSERT_TRUE(first);
    // On the link: no top-level xmlns (jabber:server implied), nested declarations
    // rewritten.
    EXPECT_EQ(first->wire.find("<message from="), 0u);
    EXPECT_NE(first->wire.find("xmlns:c='jabber:server'"), std::string::npos);
    EXPECT_NE(first->wire.find("<message xmlns='jabber:client'/>"), std::string::npos);
    p.a.failed(first->id, 0); // sent again after retry_s
    p.now = 60;
    const auto got = p.carry();
    ASSERT_EQ(got.size(), 3u);
    EXPECT_EQ(got[0].component, "a.example");
    EXPECT_EQ(got[0].stanza.attribute_or("to", ""), "bob@b.example");
    EXPECT_EQ(got[0].stanza.child("body")->inner_text(), "Hello");
    EXPECT_NE(serialize(got[0].stanza).find("xmlns:c='jabber:component:accept'"),
              std::string::npos);
    EXPECT_EQ(got[1].stanza.name, "presence");
    EXPECT_EQ(got[2].stanza.name, "iq");
    EXPECT_EQ(p.a.counters().delivered, 3u);
    EXPECT_EQ(p.a.counters().resent, 1u);
    EXPECT_EQ(p.a.queued(), 0u);
    // And back: B's answer reaches A's server through A's component for b.example.
    std::swap(p.a, p.b);
    p.a.from_component(
        "a.example",
        parse("<iq type='result' id='q1' from='b.example' to='alice@a.example/phone'/>"),
        60);
    const auto back = p.carry();
    ASSERT_EQ(back.size(), 1u);
    EXPECT_EQ(back[0].component, "b.example");
}

TEST(XmppBridge, LinkPolicy)
{
    bridge_pair p("presence=strip");
    auto send = [&](const std::string& component, const std::string& s) {
        p.a.from_component(component, parse(s), p.now);
    };
    send("b.example",
         "<message from='alice@a.example' to='bob@b.example'>"
         "<composing xmlns='http://jabber.org/protocol/chatstates'/></message>");
    send("b.example",
         "<message from='alice@a.example' to='bob@b.example'><body>hi</body>"
         "<active xmlns='http://jabber.org/protocol/chatstates'/>"
         "<html xmlns='http://jabber.org/protocol/xhtml-im'><body "
         "xmlns='http://www.w3.org/1999/xhtml'>"
         "<p><b>hi</b></p></body></html></message>");
    send("b.example",
         "<presence from='alice@a.example' to='bob@b.example'><show>away</show>"
         "<c xmlns='http://jabber.org/protocol/caps' hash='sha-1' node='n' ver='v'/>"
         "<x xmlns='vcard-temp:x:update'><photo>abc</photo></x></presence>");
    send("b.example",
         "<iq type='get' id='p1' from='alice@a.example/x' to='b.example'><ping "
         "xmlns='urn:xmpp:ping'/></iq>");
    const auto got = p.carry();
    ASSERT_EQ(got.size(), 2u);
    EXPECT_EQ(
        serialize(got[0].stanza),
        "<message from='alice@a.example' to='bob@b.example'><body>hi</body></message>");
    EXPECT_EQ(serialize(got[1].stanza),
              "<presence from='alice@a.example' "
              "to='bob@b.example'><show>away</show></presence>");
    const auto& c = p.a.counters();
    EXPECT_EQ(c.chat_states_dropped, 1u);
    EXPECT_EQ(c.chat_states_stripped, 1u);
    EXPECT_EQ(c.xhtml_stripped, 1u);
    EXPECT_EQ(c.presence_stripped, 1u);
    EXPECT_EQ(c.pings_refused, 1u);
    // The ping is answered to A's server, not carried.
    const auto local = p.a.take_actions().to_component;
    ASSERT_EQ(local.size(), 1u);
    EXPECT_EQ(serialize(local[0].stanza),
              "<iq from='b.example' to='alice@a.example/x' id='p1' type='error'>"
              "<ping xmlns='urn:xmpp:ping'/><error type='cancel'>"
              "<service-unavailable xmlns='urn:ietf:params:xml:ns:xmpp-stanzas'/>"
              "</error></iq>");
}

TEST(XmppBridge, PresenceThrottleKeepsTheLatestPerPair)
{
    bridge_pair p("presence=throttle;presence_interval_s=300");
    auto presence = [&](const std::string& show) {
        p.a.from_component(
            "b.example",
            parse("<presence from='alice@a.example' to='bob@b.example'><show>" + show +
                  "</show></presence>"),
            p.now);
    };
    presence("away");
    EXPECT_EQ(p.carry().size(), 1u);
    p.now = 10;
    presence("xa");
    presence("dnd"); // replaces xa, still waiting
    EXPECT_TRUE(p.carry().empty());
    EXPECT_EQ(p.a.next_deadline(), 300);
    p.now = 300;
    const auto got = p.carry();
    ASSERT_EQ(got.size(), 1u);
    EXPECT_EQ(got[0].stanza.child("show")->inner_text(), "dnd");
    EXPECT_EQ(p.a.counters().presence_throttled, 1u);
}

TEST(XmppBridge, UndeliverableStanzasAreBouncedNeverLost)
{
    bridge_pair p("queue_timeout_s=600;retry_s=30;max_queue=2");
    p.a.from_component("b.example",
                       parse("<message from='alice@a.example/x' to='bob@b.example' "
                             "id='m1'><body>1</body></message>"),
                       0);
    auto out = p.a.next_for_peer(0);
    ASSERT_TRUE(out);
    p.a.failed(out->id, 0);
    // A later stanza does not overtake the one waiting retry_s.
    p.a.from_component(
        "b.example",
        parse("<message from='alice@a.example/x' to='bob@b.example' id='m2'/>"),
        5);
    EXPECT_FALSE(p.a.next_for_peer(10));
    out = p.a.next_for_peer(30);
    ASSERT_TRUE(out);
    EXPECT_NE(out->wire.find("id='m1'"), std::string::npos);
    p.a.failed(out->id, 30);
    // Queue full: the third stanza bounces at once.
    p.a.from_component(
        "b.example",
        parse("<message from='alice@a.example/x' to='bob@b.example' id='m3'/>"),
        40);
    auto bounced = p.a.take_actions().to_component;
    ASSERT_EQ(bounced.size(), 1u);
    EXPECT_EQ(bounced[0].stanza.attribute_or("id", ""), "m3");
    // The link stays down: m1 and m2 time out and come back to their sender.
    p.a.on_timer(700);
    bounced = p.a.take_actions().to_component;
    ASSERT_EQ(bounced.size(), 2u);
    EXPECT_EQ(serialize(bounced[0].stanza),
              "<message from='bob@b.example' to='alice@a.example/x' id='m1' "
              "type='error'><body>1</body><error type='wait'><remote-server-timeout "
              "xmlns='urn:ietf:params:xml:ns:xmpp-stanzas'/></error></message>");
    EXPECT_EQ(bounced[0].component, "b.example");
    EXPECT_EQ(p.a.counters().timed_out, 2u);
    EXPECT_EQ(p.a.counters().queue_full, 1u);
    EXPECT_EQ(p.a.counters().bounced, 3u);
    EXPECT_EQ(p.a.queued(), 0u);
    // An error stanza is never bounced.
    p.a.from_component(
        "b.example",
        parse("<message type='error' from='alice@a.example' to='bob@b.example'/>"),
        800);
    p.a.on_timer(2000);
    EXPECT_TRUE(p.a.take_actions().to_component.empty());
    EXPECT_EQ(p.a.counters().errors_dropped, 1u);
    // Over the size limit: bounced with not-acceptable.
    p.a.from_component("b.example",
                       parse("<message from='alice@a.example' to='bob@b.example'><body>" +
                             std::string(20000, 'x') + "</body></message>"),
                       2000);
    bounced = p.a.take_actions().to_component;
    ASSERT_EQ(bounced.size(), 1u);
    EXPECT_NE(serialize(bounced[0].stanza).find("<not-acceptable"), std::string::npos);
    EXPECT_EQ(p.a.counters().oversize, 1u);
}

TEST(XmppBridge, AddressesOutsideTheAgreementAreRejectedAndCounted)
{
    bridge_pair p;
    // From the peer: a `from` outside its domains, a `to` outside ours.
    p.b.from_peer(parse("<message from='mallory@evil.example' to='alice@b.example'/>"),
                  0);
    p.b.from_peer(parse("<message from='alice@a.example' to='x@elsewhere.example'/>"), 0);
    p.b.from_peer(parse("<stream:features/>"), 0);
    EXPECT_TRUE(p.b.take_actions().to_component.empty());
    EXPECT_EQ(p.b.counters().rejected_from, 1u);
    EXPECT_EQ(p.b.counters().rejected_to, 1u);
    EXPECT_EQ(p.b.counters().not_stanza, 1u);
    // From our server: a `from` outside our domains, a `to` not of this component.
    p.a.from_component(
        "b.example", parse("<message from='x@b.example' to='bob@b.example'/>"), 0);
    p.a.from_component(
        "b.example",
        parse("<message from='alice@a.example' to='room@conference.b.example'/>"),
        0);
    p.a.from_component(
        "b.example",
        parse(
            "<message xmlns='jabber:client' from='alice@a.example' to='bob@b.example'/>"),
        0);
    EXPECT_FALSE(p.a.next_for_peer(0));
    EXPECT_EQ(p.a.counters().rejected_from, 1u);
    EXPECT_EQ(p.a.counters().rejected_to, 1u);
    EXPECT_EQ(p.a.counters().not_stanza, 1u);
    EXPECT_EQ(jid_domain("Alice@A.Example./phone@x"), "a.example");
}

TEST(XmppBridge, StanzasWaitWhileTheServerIsAway)
{
    bridge_pair p("max_held=2;hold_timeout_s=100");
    p.b.set_component_ready("a.example", false, 0);
    for (int i = 0; i < 3; ++i)
        p.a.from_component(
            "b.example",
            parse("<message from='alice@a.example' to='bob@b.example' id='m" +
                  std::to_string(i) + "'/>"),
            0);
    EXPECT_TRUE(p.carry().empty());
    EXPECT_EQ(p.b.held(), 2u);
    // The oldest went back over HF as a bounce.
    auto back = p.b.next_for_peer(0);
    ASSERT_TRUE(back);
    EXPECT_NE(back->wire.find("id='m0' type='error'"), std::string::npos);
    EXPECT_NE(back->wire.find("remote-server-timeout"), std::string::npos);
    p.b.set_component_ready("a.example", true, 50);
    const auto got = p.b.take_actions().to_component;
    ASSERT_EQ(got.size(), 2u);
    EXPECT_EQ(got[0].stanza.attribute_or("id", ""), "m1");
    EXPECT_EQ(got[1].stanza.attribute_or("id", ""), "m2");
}

TEST(XmppBridge, OptionsByName)
{
    xmpp_bridge_config c;
    set_xmpp_options(c,
                     "local_domains=A.example, "
                     "conference.a.example;presence=throttle;transport=x2x-rcop;"
                     "rcop_application_id=40000;queue_timeout_s=120");
    EXPECT_EQ(get_xmpp_option(c, "local_domains"), "a.example conference.a.example");
    EXPECT_EQ(get_xmpp_option(c, "presence"), "throttle");
    EXPECT_EQ(get_xmpp_option(c, "transport"), "x2x-rcop");
    EXPECT_EQ(c.rcop_application_id, 40000);
    EXPECT_EQ(get_xmpp_option(c, "queue_timeout_s"), "120");
    EXPECT_THROW(set_xmpp_option(c, "presence", "sometimes"), std::invalid_argument);
    EXPECT_THROW(set_xmpp_option(c, "rcop_application_id", "4096"),
                 std::invalid_argument);
    EXPECT_THROW(set_xmpp_option(c, "no_such_option", "1"), std::invalid_argument);
    EXPECT_EQ(get_xmpp_option(c, "rcop_confirmation"), "client");
    set_xmpp_option(c, "rcop_confirmation", "node");
    EXPECT_FALSE(c.rcop_client_confirmation);
    EXPECT_THROW(set_xmpp_option(c, "rcop_confirmation", "far"), std::invalid_argument);
    EXPECT_EQ(get_xmpp_option(c, "slep_confirmation"), "peer");
    EXPECT_TRUE(x2x_slep_link_config_for(c, 1).slep.peer_acks);
    set_xmpp_option(c, "slep_confirmation", "client");
    EXPECT_EQ(get_xmpp_option(c, "slep_confirmation"), "client");
    EXPECT_FALSE(x2x_slep_link_config_for(c, 1).slep.peer_acks);
    EXPECT_EQ(x2x_slep_link_config_for(c, 1).slep.confirmation,
              gr::hfstack::dl::sis_delivery_confirmation::client);
    set_xmpp_option(c, "slep_confirmation", "node");
    EXPECT_FALSE(c.slep_client_confirmation);
    EXPECT_FALSE(c.slep_peer_acks);
    EXPECT_EQ(x2x_slep_link_config_for(c, 1).slep.confirmation,
              gr::hfstack::dl::sis_delivery_confirmation::node);
    EXPECT_THROW(set_xmpp_option(c, "slep_confirmation", "far"), std::invalid_argument);
    EXPECT_EQ(xmpp_options().size(), 22u);
    EXPECT_THROW(xmpp_bridge(config("a.example", "a.example")), std::invalid_argument);
}
