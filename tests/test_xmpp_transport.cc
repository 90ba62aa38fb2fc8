/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

/* The XMPP bridge's two transports (net/xmpp_x2x_slep.h, net/xmpp_x2x_rcop.h): stanzas
 * through each codec and back, delivery by confirmed stream offset, what DEFLATE with
 * a flush per stanza costs for chat (printed), and garbage or truncated bytes from the
 * air counted as errors, never a crash. */
#include "net/xmpp_x2x_rcop.h"
#include "net/xmpp_x2x_slep.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <optional>
#include <random>

using namespace gr::hfstack;
using namespace gr::hfstack::net;

namespace {

std::string chat(int i, bool from_a)
{
    const std::string me = from_a ? "alice@a.example/phone" : "bob@b.example/laptop";
    const std::string you = from_a ? "bob@b.example" : "alice@a.example";
    return "<message from='" + me + "' to='" + you + "' type='chat' id='msg-" +
           std::to_string(1000 + i) + "'><body>Position report " + std::to_string(i) +
           ": all well, next contact at the usual time</body>"
           "<request xmlns='urn:xmpp:receipts'/><markable "
           "xmlns='urn:xmpp:chat-markers:0'/>"
           "<origin-id xmlns='urn:xmpp:sid:0' id='c0ffee-" +
           std::to_string(i) + "'/></message>";
}

std::vector<xml_element> read_all(x2x_slep_reader& r, const bytes& b)
{
    std::vector<xml_element> out;
    EXPECT_TRUE(r.feed(b.data(), b.size(), out)) << r.error();
    return out;
}

} // namespace

TEST(XmppX2xSlep, StanzasCrossAndAreDeliveredByConfirmedOffset)
{
    for (bool compress : { false, true }) {
        x2x_slep_writer w(compress);
        x2x_slep_reader r(compress, 16384);
        bytes stream;
        std::vector<uint64_t> ends;
        for (int i = 0; i < 5; ++i) {
            const auto b = w.write(xmpp_stanza_id(i + 1), chat(i, true));
            stream.insert(stream.end(), b.begin(), b.end());
            ends.push_back(stream.size());
        }
        // Every split point of the stream gives the same stanzas.
        for (size_t cut = 0; cut <= stream.size(); cut += compress ? 1 : 7) {
            x2x_slep_reader rr(compress, 16384);
            auto got = read_all(rr, bytes(stream.begin(), stream.begin() + long(cut)));
            const auto rest =
                read_all(rr, bytes(stream.begin() + long(cut), stream.end()));
            got.insert(got.end(), rest.begin(), rest.end());
            ASSERT_EQ(got.size(), 5u) << "cut at " << cut;
            EXPECT_EQ(serialize(got[4]), chat(4, true));
        }
        const auto got = read_all(r, stream);
        ASSERT_EQ(got.size(), 5u);
        EXPECT_EQ(serialize(got[0]), chat(0, true));
        EXPECT_TRUE(w.confirmed(ends[1] - 1) == std::vector<xmpp_stanza_id>({ 1 }));
        EXPECT_TRUE(w.confirmed(ends[2]) == std::vector<xmpp_stanza_id>({ 2, 3 }));
        EXPECT_TRUE(w.unconfirmed() == std::vector<xmpp_stanza_id>({ 4, 5 }));
        const auto end = w.close();
        std::vector<xml_element> none;
        EXPECT_TRUE(r.feed(end.data(), end.size(), none));
        EXPECT_TRUE(r.closed());
    }
}

TEST(XmppX2xSlep, BytesPerChatStanzaBothWays)
{
    // Twenty chat messages each way on one stream pair, as the link would carry them.
    for (bool from_a : { true, false }) {
        x2x_slep_writer w(true);
        x2x_slep_reader r(true, 16384);
        size_t first_wire = 0;
        for (int i = 0; i < 20; ++i) {
            const auto b = w.write(xmpp_stanza_id(i), chat(i, from_a));
            if (i == 0)
                first_wire = b.size();
            ASSERT_EQ(read_all(r, b).size(), 1u);
        }
        const double plain = double(w.plain_bytes()) / 20,
                     wire = double(w.wire_bytes()) / 20;
        std::printf(
            "x2x-slep %s: %.0f bytes per chat stanza, %.1f on the link with DEFLATE "
            "(first %zu, then %.1f; ratio %.2f)\n",
            from_a ? "A->B" : "B->A",
            plain,
            wire,
            first_wire,
            double(w.wire_bytes() - first_wire) / 19,
            wire / plain);
        EXPECT_LT(wire, plain / 2);
        EXPECT_EQ(r.plain_bytes(), w.plain_bytes());
    }
}

TEST(XmppX2xSlep, HexDumpBodiesCostTheirEntropyAndEachStanzaParsesAtOnce)
{
    // Bodies of random hex digits (the measurements' payload): 4 bits of information a
    // digit. Matching every 3-byte repeat, as zlib usually does, left them at 58 % of
    // their size; the writer's matching leaves them near 51 % (54 % with the markup and
    // each block's code tables).
    // The partial flush: every stanza parses from its own bytes, and a repeated chat
    // stanza costs no 00 00 FF FF marker.
    std::mt19937_64 rng(44);
    static const char digits[] = "0123456789abcdef";
    x2x_slep_writer w(true);
    x2x_slep_reader r(true, 16384);
    size_t body_bytes = 0, wire = 0;
    for (int i = 0; i < 20; ++i) {
        std::string body;
        for (int k = 0; k < 1024; ++k)
            body.push_back(digits[rng() & 15]);
        const std::string stanza = "<message from='alice@a.example/hf' "
                                   "to='bob@b.example' type='chat' id='m" +
                                   std::to_string(i) + "'><body>" + body +
                                   "</body></message>";
        const auto b = w.write(xmpp_stanza_id(i), stanza);
        const auto got = read_all(r, b);
        ASSERT_EQ(got.size(), 1u);
        EXPECT_EQ(got[0].child("body")->inner_text(), body);
        if (i > 0) {
            body_bytes += body.size();
            wire += b.size();
        }
    }
    EXPECT_LT(double(wire) / double(body_bytes), 0.55);
    for (int i = 0; i < 5; ++i) {
        const auto b = w.write(xmpp_stanza_id(100 + i), chat(i, true));
        EXPECT_EQ(read_all(r, b).size(), 1u);
        const bytes marker{ 0x00, 0x00, 0xFF, 0xFF };
        EXPECT_TRUE(b.size() < 4 ||
                    !std::equal(marker.begin(), marker.end(), b.end() - 4));
    }
}

TEST(XmppX2xSlep, AStreamsFirstStanzaDrawsOnThePresetDictionary)
{
    // A presence at log-in, the first stanza of a stream: without a dictionary DEFLATE
    // had nothing to match and it took about 165 bytes.
    const std::string presence =
        "<presence from='alice@a.example/hf' to='bob@b.example'><priority>0</priority>"
        "<c xmlns='http://jabber.org/protocol/caps' hash='sha-1' "
        "node='https://gajim.org' ver='x0k2kW+6nGMQvOVlQWHCUKtlFGI='/></presence>";
    x2x_slep_writer w(true);
    x2x_slep_reader r(true, 16384);
    const auto b = w.write(1, presence);
    const auto got = read_all(r, b);
    ASSERT_EQ(got.size(), 1u);
    EXPECT_EQ(got[0].attribute_or("to", ""), "bob@b.example");
    std::printf("first stanza: %zu bytes serialised, %zu on the link\n",
                presence.size(),
                b.size());
    EXPECT_LT(b.size(), 100u);
    // A reader without the dictionary cannot read it: the dictionary is part of the
    // wire format, and the mismatch is an error, never wrong stanzas.
    inflater plain;
    bytes out;
    const auto used = plain.read(b.data(), b.size(), 65536, out);
    EXPECT_TRUE(!used || std::string(out.begin(), out.end()) != presence);
}

TEST(XmppX2xSlep, GarbageAndTruncatedBytesAreErrorsNeverACrash)
{
    std::mt19937 rng(5066);
    for (bool compress : { false, true }) {
        for (int trial = 0; trial < 200; ++trial) {
            bytes junk(1 + rng() % 300);
            for (auto& b : junk)
                b = uint8_t(rng());
            x2x_slep_reader r(compress, 4096);
            std::vector<xml_element> out;
            if (!r.feed(junk.data(), junk.size(), out)) {
                EXPECT_FALSE(r.error().empty());
                EXPECT_FALSE(r.feed(junk.data(), junk.size(), out)); // broken for good
            }
        }
        // A stanza cut short gives nothing yet and no error.
        x2x_slep_writer w(compress);
        const auto b = w.write(1, chat(1, true));
        x2x_slep_reader r(compress, 4096);
        std::vector<xml_element> out;
        EXPECT_TRUE(r.feed(b.data(), b.size() / 2, out));
        EXPECT_TRUE(out.empty());
    }
    // A DEFLATE bomb is refused by the stanza limit, not held in memory.
    std::string big = "<message><body>" + std::string(1 << 20, 'a') + "</body></message>";
    x2x_slep_writer w(true);
    const auto b = w.write(1, big);
    EXPECT_LT(b.size(), 4096u);
    x2x_slep_reader r(true, 16384);
    std::vector<xml_element> out;
    EXPECT_FALSE(r.feed(b.data(), b.size(), out));
    EXPECT_NE(r.error().find("more than 16384 bytes"), std::string::npos);
}

TEST(XmppX2xRcop, AStanzaPerPduSegmentedBeyondTheMtu)
{
    x2x_rcop_sender s(0, x2x_rcop_application_id, 128);
    x2x_rcop_receiver r(0, x2x_rcop_application_id, 16384);
    for (int i = 0; i < 300; ++i) { // the U_PDU ID wraps at 256
        const std::string stanza = chat(i, true);
        const auto pdus = s.encode(stanza);
        ASSERT_EQ(pdus.size(), (stanza.size() + 121) / 122);
        const auto h = dl::decode_rcop_header(pdus[0].data(), pdus[0].size());
        EXPECT_EQ(h.value.updu_id, uint8_t(i));
        EXPECT_EQ(h.value.application_id, 0x8365);
        EXPECT_EQ(h.value.connection_id, 0);
        for (size_t k = 0; k < pdus.size(); ++k) {
            EXPECT_LE(pdus[k].size(), 128u);
            const auto got = r.on_pdu(pdus[k].data(), pdus[k].size());
            ASSERT_EQ(bool(got), k + 1 == pdus.size());
            if (got) {
                EXPECT_EQ(serialize(*got), stanza);
            }
        }
    }
    EXPECT_EQ(r.counters().stanzas, 300u);
    EXPECT_EQ(r.counters().truncated + r.counters().out_of_order + r.counters().malformed,
              0u);
}

TEST(XmppX2xRcop, BadPdusFromTheAirAreCountedNeverACrash)
{
    x2x_rcop_sender s(0, x2x_rcop_application_id, 64);
    x2x_rcop_receiver r(0, x2x_rcop_application_id, 4096);
    const auto a = s.encode(chat(1, true));
    const auto b = s.encode(chat(2, true));
    // A stanza whose last segments never came, then a whole one.
    r.on_pdu(a[0].data(), a[0].size());
    for (const auto& p : b)
        r.on_pdu(p.data(), p.size());
    EXPECT_EQ(r.counters().truncated, 1u);
    EXPECT_EQ(r.counters().stanzas, 1u);
    // A segment out of sequence, a short PDU, another application, garbage XML.
    r.on_pdu(a[2].data(), a[2].size());
    EXPECT_EQ(r.counters().out_of_order, 1u);
    r.on_pdu(a[0].data(), 3);
    EXPECT_EQ(r.counters().short_pdus, 1u);
    x2x_rcop_sender other(0, 0x9000, 64);
    const auto o = other.encode(chat(3, true));
    EXPECT_FALSE(r.on_pdu(o[0].data(), o[0].size()));
    EXPECT_EQ(r.counters().foreign, 1u);
    x2x_rcop_sender junk(0, x2x_rcop_application_id, 64);
    const auto j = junk.encode("<message></iq>");
    EXPECT_FALSE(r.on_pdu(j[0].data(), j[0].size()));
    const auto two = junk.encode("<iq/><iq/>");
    EXPECT_FALSE(r.on_pdu(two[0].data(), two[0].size()));
    EXPECT_EQ(r.counters().malformed, 2u);
    EXPECT_FALSE(r.last_error().empty());
    std::mt19937 rng(6);
    for (int trial = 0; trial < 2000; ++trial) {
        bytes pdu(rng() % 80);
        for (auto& x : pdu)
            x = uint8_t(rng());
        if (pdu.size() >= 6 && trial % 2) { // mostly ours, so the XML is reached
            pdu[0] = 0;
            pdu[4] = 0x83;
            pdu[5] = 0x65;
            pdu[2] = pdu[3] = 0;
        }
        r.on_pdu(pdu.data(), pdu.size());
    }
    // Still works afterwards.
    std::optional<xml_element> got;
    for (const auto& p : s.encode(chat(9, true)))
        got = r.on_pdu(p.data(), p.size());
    ASSERT_TRUE(got);
    EXPECT_EQ(serialize(*got), chat(9, true));
}

// Stanzas written back to back and flushed once share one DEFLATE block: fewer bytes
// than a flush each, every stanza parses from the burst's bytes, and none is delivered
// before the flush puts its end in the stream.
TEST(XmppX2xSlep, ABurstOfStanzasIsFlushedOnceAndCostsLess)
{
    x2x_slep_writer each(true), burst(true);
    size_t each_bytes = 0;
    bytes wire;
    for (int i = 0; i < 8; ++i) {
        each_bytes += each.write(xmpp_stanza_id(i + 1), chat(i, true)).size();
        const bytes b = burst.write(xmpp_stanza_id(i + 1), chat(i, true), false);
        wire.insert(wire.end(), b.begin(), b.end());
    }
    EXPECT_TRUE(burst.unflushed());
    EXPECT_GT(burst.unflushed_plain_bytes(), 0u);
    EXPECT_EQ(burst.unconfirmed().size(), 8u);
    EXPECT_TRUE(burst.confirmed(wire.size()).empty()); // no stanza's end is out yet
    const bytes rest = burst.flush();
    EXPECT_FALSE(rest.empty());
    wire.insert(wire.end(), rest.begin(), rest.end());
    EXPECT_FALSE(burst.unflushed());
    EXPECT_TRUE(burst.flush().empty());
    EXPECT_EQ(burst.wire_bytes(), wire.size());
    EXPECT_LT(wire.size() + 40, each_bytes) << wire.size() << " vs " << each_bytes;
    x2x_slep_reader r(true, 16384);
    const auto got = read_all(r, wire);
    ASSERT_EQ(got.size(), 8u);
    EXPECT_EQ(got[7].attribute_or("id", ""), "msg-1007");
    EXPECT_EQ(burst.confirmed(wire.size()).size(), 8u);
    // close() ends a burst still open before the stream's end.
    x2x_slep_writer w(true);
    bytes all = w.write(1, chat(1, true), false);
    const bytes end = w.close();
    all.insert(all.end(), end.begin(), end.end());
    EXPECT_EQ(w.wire_bytes(), all.size());
    x2x_slep_reader r2(true, 16384);
    EXPECT_EQ(read_all(r2, all).size(), 1u);
    EXPECT_TRUE(r2.closed());
}
