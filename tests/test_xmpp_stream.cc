/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

/* The XMPP bridge's stream side: SHA-1 and the XEP-0114 handshake against known
 * answers (sha1sum), the splitter on a stream cut at every byte boundary, what it must
 * refuse (malformed XML, a DTD, an oversized or too deep stanza), and the component
 * session against a scripted server. */
#include "net/sha1.h"
#include "net/xmpp_component.h"

#include <gtest/gtest.h>

using namespace gr::hfstack::net;

namespace {

const std::string chat_stream =
    "<?xml version='1.0'?><stream:stream xmlns='jabber:component:accept' "
    "xmlns:stream='http://etherx.jabber.org/streams' from='b.example' id='3BF96D32'>"
    "<handshake/>"
    "<message from='alice@a.example/phone' to='bob@b.example' type='chat' id='m1'>"
    "<body>Hello &amp; good &lt;morning&gt; \xc3\xa9t\xc3\xa9</body></message> \n"
    "<presence from='alice@a.example/phone' to='room@conference.b.example/alice'>"
    "<x xmlns='http://jabber.org/protocol/muc'/></presence>"
    "<iq type='get' id='q1' from='alice@a.example/phone' to='b.example'>"
    "<query xmlns='http://jabber.org/protocol/disco#info'/></iq>"
    "</stream:stream>";

std::vector<xmpp_split_event> split(const std::string& s, size_t cut, xmpp_splitter& sp)
{
    std::vector<xmpp_split_event> out;
    const auto* p = reinterpret_cast<const uint8_t*>(s.data());
    EXPECT_TRUE(sp.feed(p, cut, out)) << sp.error();
    EXPECT_TRUE(sp.feed(p + cut, s.size() - cut, out)) << sp.error();
    return out;
}

std::string split_error(const std::string& s, size_t max = 65536)
{
    xmpp_splitter sp(max);
    std::vector<xmpp_split_event> out;
    EXPECT_FALSE(sp.feed(reinterpret_cast<const uint8_t*>(s.data()), s.size(), out));
    EXPECT_TRUE(sp.failed());
    return sp.error();
}

const std::string header = "<stream:stream xmlns='jabber:component:accept' "
                           "xmlns:stream='http://etherx.jabber.org/streams' id='x'>";

} // namespace

TEST(XmppSha1, KnownAnswers)
{
    // printf %s "" | sha1sum, and so on.
    EXPECT_EQ(sha1_hex(""), "da39a3ee5e6b4b0d3255bfef95601890afd80709");
    EXPECT_EQ(sha1_hex("abc"), "a9993e364706816aba3e25717850c26c9cd0d89d");
    EXPECT_EQ(sha1_hex(std::string(1000, 'a')),
              "291e9a6c66994949b57ba5e650361e98fc36b1ba");
}

TEST(XmppComponent, HandshakeIsSha1OfStreamIdAndSecret)
{
    // printf %s "3BF96D32" "s3cr3t" | sha1sum
    EXPECT_EQ(component_handshake("3BF96D32", "s3cr3t"),
              "ba33290100f616a33656a931798d6c9011cfa840");
    EXPECT_TRUE(verify_component_handshake(
        "3BF96D32", "s3cr3t", " BA33290100F616A33656A931798D6C9011CFA840\n"));
    EXPECT_FALSE(verify_component_handshake(
        "3BF96D32", "secret", "ba33290100f616a33656a931798d6c9011cfa840"));
    EXPECT_FALSE(verify_component_handshake("3BF96D32", "s3cr3t", ""));
}

TEST(XmppSplitter, EverySplitPointGivesTheSameStanzas)
{
    xmpp_splitter whole;
    const auto ref = split(chat_stream, chat_stream.size(), whole);
    ASSERT_EQ(ref.size(), 6u); // header, handshake, message, presence, iq, close
    EXPECT_EQ(ref[0].what, xmpp_split_event::kind::stream_open);
    EXPECT_EQ(ref[0].element.attribute_or("id", ""), "3BF96D32");
    EXPECT_EQ(ref[2].element.name, "message");
    EXPECT_EQ(ref[2].element.child("body")->inner_text(),
              "Hello & good <morning> \xc3\xa9t\xc3\xa9");
    EXPECT_EQ(ref[5].what, xmpp_split_event::kind::stream_close);
    EXPECT_TRUE(whole.closed());
    for (size_t cut = 0; cut <= chat_stream.size(); ++cut) {
        xmpp_splitter sp;
        const auto got = split(chat_stream, cut, sp);
        ASSERT_EQ(got.size(), ref.size()) << "cut at " << cut;
        for (size_t i = 0; i < got.size(); ++i) {
            EXPECT_EQ(got[i].what, ref[i].what);
            EXPECT_EQ(serialize(got[i].element), serialize(ref[i].element))
                << "cut at " << cut;
        }
    }
    // Byte by byte too.
    xmpp_splitter sp;
    std::vector<xmpp_split_event> got;
    for (char c : chat_stream)
        ASSERT_TRUE(sp.feed(reinterpret_cast<const uint8_t*>(&c), 1, got));
    EXPECT_EQ(got.size(), ref.size());
}

TEST(XmppSplitter, SerializeRoundTripsAndCountsWireBytes)
{
    const std::string m =
        "<message to='b@b.example' from='a@a.example'><body>x'y\"z</body><e/></message>";
    xmpp_splitter sp;
    sp.start_implicit(xmpp_ns_server);
    std::vector<xmpp_split_event> out;
    ASSERT_TRUE(sp.feed(reinterpret_cast<const uint8_t*>(m.data()), m.size(), out));
    ASSERT_EQ(out.size(), 1u); // no stream_open event for the implicit header
    EXPECT_EQ(out[0].wire_bytes, m.size());
    EXPECT_EQ(serialize(out[0].element), m);
}

TEST(XmppSplitter, RefusesWhatXmppForbids)
{
    EXPECT_NE(split_error(header + "<message><body>x</message>").find("malformed XML"),
              std::string::npos);
    EXPECT_NE(split_error("<!DOCTYPE x [<!ENTITY a 'aaaa'>]>" + header).find("DTD"),
              std::string::npos);
    EXPECT_NE(split_error(header + "<?pi x?>").find("processing instruction"),
              std::string::npos);
    EXPECT_NE(split_error(header + "hello").find("text between stanzas"),
              std::string::npos);
    EXPECT_NE(split_error("<html>").find("not <stream:stream>"), std::string::npos);
    EXPECT_NE(split_error(header + "<message><body>" + std::string(3000, 'x') +
                              "</body></message>",
                          1024)
                  .find("more than 1024 bytes"),
              std::string::npos);
    // A start tag that never ends is bounded too.
    EXPECT_NE(split_error(header + "<message to='" + std::string(10000, 'x'), 1024)
                  .find("more than"),
              std::string::npos);
    std::string deep = header;
    for (int i = 0; i < 100; ++i)
        deep += "<a>";
    EXPECT_NE(split_error(deep).find("nested"), std::string::npos);
    // After an error, nothing more.
    xmpp_splitter sp;
    std::vector<xmpp_split_event> out;
    const std::string bad = header + "<a></b>";
    EXPECT_FALSE(sp.feed(reinterpret_cast<const uint8_t*>(bad.data()), bad.size(), out));
    EXPECT_FALSE(
        sp.feed(reinterpret_cast<const uint8_t*>(header.data()), header.size(), out));
}

TEST(XmppComponent, SessionWithAScriptedServer)
{
    xmpp_component_stream c("b.example", "s3cr3t");
    c.start();
    auto a = c.take_actions();
    EXPECT_NE(a.to_server.find("xmlns='jabber:component:accept'"), std::string::npos);
    EXPECT_NE(a.to_server.find("to='b.example'"), std::string::npos);
    const std::string reply =
        "<?xml version='1.0'?><stream:stream "
        "xmlns:stream='http://etherx.jabber.org/streams' "
        "xmlns='jabber:component:accept' from='b.example' id='3BF96D32'>";
    c.on_bytes(reinterpret_cast<const uint8_t*>(reply.data()), reply.size());
    a = c.take_actions();
    EXPECT_EQ(a.to_server,
              "<handshake>ba33290100f616a33656a931798d6c9011cfa840</handshake>");
    EXPECT_FALSE(c.ready());
    EXPECT_FALSE(c.send(make_element("message")));
    const std::string ok = "<handshake/><message from='alice@a.example' "
                           "to='bob@b.example'><body>hi</body></message>";
    c.on_bytes(reinterpret_cast<const uint8_t*>(ok.data()), ok.size());
    a = c.take_actions();
    ASSERT_EQ(a.events.size(), 2u);
    EXPECT_EQ(a.events[0].what, xmpp_component_event::kind::ready);
    EXPECT_EQ(a.events[1].what, xmpp_component_event::kind::stanza);
    EXPECT_EQ(a.events[1].stanza.attribute_or("to", ""), "bob@b.example");
    EXPECT_TRUE(c.send(make_element("presence", { { "from", "bob@b.example" } })));
    EXPECT_EQ(c.take_actions().to_server, "<presence from='bob@b.example'/>");

    // Malformed XML ends the session with an error; a new connection starts again.
    const std::string junk = "<message><</message>";
    c.on_bytes(reinterpret_cast<const uint8_t*>(junk.data()), junk.size());
    a = c.take_actions();
    ASSERT_EQ(a.events.size(), 1u);
    EXPECT_EQ(a.events[0].what, xmpp_component_event::kind::error);
    EXPECT_NE(a.events[0].text.find("malformed XML"), std::string::npos);
    c.on_disconnected();
    c.start();
    c.on_bytes(reinterpret_cast<const uint8_t*>(reply.data()), reply.size());
    const std::string refused =
        "<stream:error><not-authorized xmlns='urn:ietf:params:xml:ns:xmpp-streams'/>"
        "</stream:error></stream:stream>";
    c.on_bytes(reinterpret_cast<const uint8_t*>(refused.data()), refused.size());
    a = c.take_actions();
    ASSERT_FALSE(a.events.empty());
    EXPECT_EQ(a.events.back().what, xmpp_component_event::kind::error);
    EXPECT_NE(a.events.back().text.find("not-authorized"), std::string::npos);
}

TEST(XmppComponent, WrittenStanzasSurviveAReconnectUntilTheServerTookThem)
{
    xmpp_component_stream c("b.example", "s3cr3t", 65536, true);
    const std::string reply =
        "<?xml version='1.0'?><stream:stream "
        "xmlns:stream='http://etherx.jabber.org/streams' "
        "xmlns='jabber:component:accept' from='b.example' id='3BF96D32'><handshake/>";
    auto feed = [&](const std::string& s) {
        c.on_bytes(reinterpret_cast<const uint8_t*>(s.data()), s.size());
    };
    c.start();
    feed(reply);
    c.take_actions();
    ASSERT_TRUE(c.ready());
    EXPECT_TRUE(c.send(make_element("message", { { "id", "one" } })));
    EXPECT_TRUE(c.send(make_element("message", { { "id", "two" } })));
    auto a = c.take_actions();
    EXPECT_EQ(a.to_server,
              "<message id='one'/><message id='two'/><iq type='get' "
              "id='hfstack-written-1' from='b.example' to='b.example'><ping "
              "xmlns='urn:xmpp:ping'/></iq>");
    EXPECT_EQ(c.unconfirmed(), 2u);
    // A third while the marker is out: it waits for the next marker.
    EXPECT_TRUE(c.send(make_element("message", { { "id", "three" } })));
    EXPECT_EQ(c.take_actions().to_server, "<message id='three'/>");
    // The server routes our IQ back: the first two are taken; the third gets a marker.
    feed("<iq type='get' id='hfstack-written-1' from='b.example' to='b.example'><ping "
         "xmlns='urn:xmpp:ping'/></iq>");
    a = c.take_actions();
    EXPECT_TRUE(a.events.empty()); // the marker is no stanza for the bridge
    EXPECT_EQ(c.unconfirmed(), 1u);
    EXPECT_NE(a.to_server.find("id='hfstack-written-2'"), std::string::npos);
    // The connection drops before the marker comes back: the third is written again,
    // first, once the next session is ready.
    c.on_disconnected();
    EXPECT_FALSE(c.send(make_element("message", { { "id", "four" } })));
    c.start();
    c.take_actions();
    feed(reply);
    a = c.take_actions();
    ASSERT_EQ(a.events.size(), 1u);
    EXPECT_EQ(a.events[0].what, xmpp_component_event::kind::ready);
    const auto handshake_end = a.to_server.find("</handshake>");
    ASSERT_NE(handshake_end, std::string::npos);
    EXPECT_EQ(a.to_server.substr(handshake_end + 12),
              "<message id='three'/><iq type='get' id='hfstack-written-3' "
              "from='b.example' to='b.example'><ping xmlns='urn:xmpp:ping'/></iq>");
    EXPECT_EQ(c.rewritten(), 1u);
    // An error answer to the marker confirms as well (the server took what came before).
    feed("<iq type='error' id='hfstack-written-3' from='b.example' to='b.example'/>");
    EXPECT_TRUE(c.take_actions().events.empty());
    EXPECT_EQ(c.unconfirmed(), 0u);
}

TEST(XmppComponent, UnconfirmedStanzasAreBounded)
{
    xmpp_component_stream c("b.example", "s3cr3t", 65536, true, 2);
    const std::string reply =
        "<stream:stream xmlns:stream='http://etherx.jabber.org/streams' "
        "xmlns='jabber:component:accept' from='b.example' id='X'><handshake/>";
    c.start();
    c.on_bytes(reinterpret_cast<const uint8_t*>(reply.data()), reply.size());
    for (int i = 0; i < 5; ++i)
        c.send(make_element("message", { { "id", std::to_string(i) } }));
    EXPECT_EQ(c.unconfirmed(), 2u);
    EXPECT_EQ(c.given_up(), 3u);
}
