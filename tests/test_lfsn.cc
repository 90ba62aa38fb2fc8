/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

/* S5066-EP5 large windows: Long Frame Sequence Numbers in the D_PDU codec, their
 * negotiation in CAS-1 and the ARQ with windows above 128 (docs/wire-formats.md). */

#include "dl/arq.h"
#include "dl/cas.h"
#include "dl/cpdu.h"
#include "dl/crc.h"
#include "dl/deframer.h"
#include "dl/dpdu.h"
#include "hex_support.h"

#include <gtest/gtest.h>

#include <random>

using namespace gr::hfstack::dl;

namespace {

// An LFSN D_PDU of `type` from node 2 to node 1 (1-byte address field).
dpdu long_dpdu(dpdu_type type)
{
    dpdu d;
    d.type = type;
    d.long_fsn = true;
    d.destination = 1;
    d.source = 2;
    d.address_size = 1;
    return d;
}

void expect_round_trip(const dpdu& d)
{
    const bytes w = encode(d);
    auto r = decode_dpdu(w.data(), w.size(), d.long_fsn);
    ASSERT_TRUE(r.ok()) << r.reason;
    EXPECT_EQ(r.value, d);
}

bytes with_crc16(bytes b)
{
    const uint16_t c = crc16_s5066(b.data() + 2, b.size() - 2);
    b.push_back(uint8_t(c));
    b.push_back(uint8_t(c >> 8));
    return b;
}

const long_fsn_fn all_long = [](uint32_t, uint32_t) { return true; };

} // namespace

// DATA-ONLY: the TX FSN takes two bytes, most significant first; header size 10.
TEST(Lfsn, DataOnlyKnownAnswer)
{
    dpdu d = long_dpdu(dpdu_type::data_only);
    d.eot = 10;
    d.cpdu_start = d.cpdu_end = d.deliver_in_order = true;
    d.tx_sequence = 0x1234;
    d.segment = { 'a', 'b', 'c' };
    const bytes w = encode(d);
    const bytes head = with_crc16(hex("90 EB 00 00 0A 2A 12 E0 03 12 34"));
    ASSERT_EQ(w.size(), head.size() + 3 + 4);
    EXPECT_EQ(bytes(w.begin(), w.begin() + head.size()), head);
    EXPECT_EQ(get_crc32_le(w.data() + 16), crc32_s5066(d.segment.data(), 3));
    expect_round_trip(d);
    // Without LFSN the same bytes are not a DATA-ONLY D_PDU (header size 10).
    EXPECT_FALSE(decode_dpdu(w.data(), w.size()).ok());
}

// ACK-ONLY: two-byte RX LWE then the bitmap; header size 4 + 2 + n + 2.
TEST(Lfsn, AckOnlyKnownAnswer)
{
    dpdu d = long_dpdu(dpdu_type::ack_only);
    d.rx_lwe = 0x0102;
    d.selective_acks = { 0x05 };
    const bytes want = with_crc16(hex("90 EB 10 00 00 29 12 01 02 05"));
    EXPECT_EQ(encode(d), want);
    expect_round_trip(d);
    // The header size cannot tell the forms apart: read as Edition 3 it is an ack
    // of RX LWE 1 with two bitmap bytes. The link's negotiated state decides.
    auto e3 = decode_dpdu(want.data(), want.size());
    ASSERT_TRUE(e3.ok());
    EXPECT_EQ(e3.value.rx_lwe, 1);
    EXPECT_EQ(e3.value.selective_acks, (bytes{ 0x02, 0x05 }));
}

// DATA-ACK: TX FSN and RX LWE both two bytes; RESET/WIN-RESYNC: NEW RX LWE two bytes.
TEST(Lfsn, DataAckAndResetKnownAnswers)
{
    dpdu d = long_dpdu(dpdu_type::data_ack);
    d.cpdu_start = true;
    d.tx_sequence = 0xFFFF;
    d.rx_lwe = 0x8000;
    d.selective_acks = { 0xFF, 0x01 };
    d.segment = { 0x42 };
    const bytes w = encode(d);
    EXPECT_EQ(bytes(w.begin(), w.begin() + 17),
              with_crc16(hex("90 EB 20 00 00 2E 12 80 01 FF FF 80 00 FF 01")));
    expect_round_trip(d);

    dpdu reset = long_dpdu(dpdu_type::reset_win_resync);
    reset.reset_rx_win_command = true;
    reset.new_rx_lwe = 0xABCD;
    reset.reset_frame_id = 7;
    const bytes rw = with_crc16(hex("90 EB 30 00 00 2A 12 02 AB CD 07"));
    EXPECT_EQ(encode(reset), rw);
    expect_round_trip(reset);
}

TEST(Lfsn, ExpeditedTypesRoundTrip)
{
    dpdu d = long_dpdu(dpdu_type::expedited_data_only);
    d.cpdu_end = true;
    d.cpdu_id = 9;
    d.tx_sequence = 300;
    d.segment = { 1, 2, 3 };
    expect_round_trip(d);

    dpdu a = long_dpdu(dpdu_type::expedited_ack_only);
    a.rx_lwe = 40000;
    a.selective_acks.assign(max_selective_acks_lfsn, 0xA5);
    EXPECT_EQ(encode(a)[5] & 0x1F,
              27); // 4 + 2 (RX LWE) + 19 + 2: a DATA-ACK's reaches 31
    expect_round_trip(a);
}

TEST(Lfsn, EncodeRefusesWhatDoesNotFit)
{
    dpdu d;
    d.type = dpdu_type::data_only;
    d.tx_sequence = 256; // Edition 3 FSNs are one byte
    EXPECT_THROW(encode(d), encode_error);
    d.long_fsn = true;
    EXPECT_NO_THROW(encode(d));
    dpdu a;
    a.type = dpdu_type::data_ack;
    a.long_fsn = true;
    a.selective_acks.assign(max_selective_acks_lfsn + 1, 0);
    EXPECT_THROW(encode(a), encode_error);
    a.selective_acks.assign(max_selective_acks_lfsn, 0);
    EXPECT_EQ(header_size_field(a), 31u);
}

// Random D_PDUs of every FSN-carrying type round-trip in both forms, and the
// deframer, told which sources use LFSN, finds them mixed in one burst.
TEST(Lfsn, RandomRoundTripAndMixedDeframing)
{
    std::mt19937 rng(5066);
    const dpdu_type types[] = { dpdu_type::data_only,
                                dpdu_type::ack_only,
                                dpdu_type::data_ack,
                                dpdu_type::reset_win_resync,
                                dpdu_type::expedited_data_only,
                                dpdu_type::expedited_ack_only };
    bytes stream;
    std::vector<dpdu> sent;
    for (int i = 0; i < 600; ++i) {
        dpdu d;
        d.type = types[rng() % 6];
        d.long_fsn = rng() & 1;
        d.source = d.long_fsn ? 7 : 8; // node 7 negotiated LFSN, node 8 did not
        d.destination = 1;
        d.address_size = 1;
        const unsigned mod = d.long_fsn ? 65536 : 256;
        d.tx_sequence = uint16_t(rng() % mod);
        d.rx_lwe = uint16_t(rng() % mod);
        d.new_rx_lwe = uint16_t(rng() % mod);
        d.reset_frame_id = uint8_t(rng());
        if (d.type == dpdu_type::reset_win_resync) {
            d.reset_rx_win_command = true;
        } else if (d.type == dpdu_type::ack_only ||
                   d.type == dpdu_type::expedited_ack_only ||
                   d.type == dpdu_type::data_ack) {
            d.selective_acks.resize(
                rng() %
                ((d.long_fsn ? max_selective_acks_lfsn : max_selective_acks) + 1));
            for (auto& b : d.selective_acks)
                b = uint8_t(rng());
        }
        if (carries_segment(d.type)) {
            d.segment.resize(rng() % 40);
            for (auto& b : d.segment)
                b = uint8_t(rng());
            d.cpdu_start = rng() & 1;
        }
        if (d.type == dpdu_type::expedited_data_only)
            d.cpdu_id = uint16_t(rng() % 16);
        if (d.type != dpdu_type::data_only && d.type != dpdu_type::data_ack &&
            d.type != dpdu_type::expedited_data_only)
            d.tx_sequence = 0;
        if (d.type != dpdu_type::ack_only && d.type != dpdu_type::data_ack &&
            d.type != dpdu_type::expedited_ack_only)
            d.rx_lwe = 0;
        if (d.type != dpdu_type::reset_win_resync) {
            d.new_rx_lwe = 0;
            d.reset_frame_id = 0;
        }
        const bytes w = encode(d);
        auto r = decode_dpdu(w.data(), w.size(), d.long_fsn);
        ASSERT_TRUE(r.ok()) << r.reason;
        ASSERT_EQ(r.value, d) << "D_PDU " << i;
        encode_into(d, stream);
        sent.push_back(d);
    }
    dpdu_deframer df;
    df.set_long_fsn([](uint32_t source, uint32_t) { return source == 7; });
    std::vector<received_dpdu> got;
    for (size_t at = 0; at < stream.size(); at += 97)
        df.push(stream.data() + at, std::min<size_t>(97, stream.size() - at), got);
    ASSERT_EQ(got.size(), sent.size());
    for (size_t i = 0; i < sent.size(); ++i)
        EXPECT_EQ(got[i].frame, sent[i]) << i;
    EXPECT_EQ(df.counters().junk_bytes, 0u);
}

// CAS-1: the LFSN bits, and an Edition 3 C_PDU unchanged.
TEST(Lfsn, CpduBits)
{
    cpdu req;
    req.type = cpdu_type::physical_link_request;
    EXPECT_EQ(encode(req), hex("10"));
    req.lfsn = true;
    EXPECT_EQ(encode(req), hex("12"));
    req.exclusive_link = true;
    EXPECT_EQ(encode(req), hex("13"));
    auto r = decode_cpdu(hex("13"));
    ASSERT_TRUE(r.ok());
    EXPECT_TRUE(r.value.lfsn);
    EXPECT_TRUE(r.value.exclusive_link);
    cpdu acc;
    acc.type = cpdu_type::physical_link_accepted;
    EXPECT_EQ(encode(acc), hex("20"));
    acc.lfsn = true;
    EXPECT_EQ(encode(acc), hex("21"));
    EXPECT_TRUE(decode_cpdu(hex("21")).value.lfsn);
    EXPECT_FALSE(decode_cpdu(hex("20")).value.lfsn);
}

namespace {

cas_config cas_cfg(uint32_t addr, bool large)
{
    cas_config c;
    c.own_address = addr;
    c.large_windows = large;
    return c;
}

// Runs the CAS exchange between a (caller) and b until both are quiet.
void exchange(cas_link_manager& a, uint32_t aa, cas_link_manager& b, uint32_t ba)
{
    for (int i = 0; i < 10; ++i) {
        bool any = false;
        for (auto& o : a.take_outgoing()) {
            b.on_cpdu(aa, decode_cpdu(encode(o.pdu)).value, 1.0);
            any = true;
        }
        for (auto& o : b.take_outgoing()) {
            a.on_cpdu(ba, decode_cpdu(encode(o.pdu)).value, 1.0);
            any = true;
        }
        if (!any)
            return;
    }
}

} // namespace

TEST(Lfsn, NegotiationNeedsBothEnds)
{
    for (int caller_large = 0; caller_large < 2; ++caller_large) {
        for (int called_large = 0; called_large < 2; ++called_large) {
            cas_link_manager a(cas_cfg(1, caller_large)), b(cas_cfg(2, called_large));
            a.request_link(2, false, 0.0);
            // What goes on the air: the request's bit follows the caller's option.
            auto out = a.take_outgoing();
            ASSERT_EQ(out.size(), 1u);
            EXPECT_EQ(encode(out[0].pdu), caller_large ? hex("12") : hex("10"));
            b.on_cpdu(1, decode_cpdu(encode(out[0].pdu)).value, 0.5);
            auto back = b.take_outgoing();
            ASSERT_EQ(back.size(), 1u);
            const bool both = caller_large && called_large;
            EXPECT_EQ(encode(back[0].pdu), both ? hex("21") : hex("20"));
            a.on_cpdu(2, decode_cpdu(encode(back[0].pdu)).value, 1.0);
            ASSERT_EQ(a.state(2), cas_link_state::up);
            ASSERT_EQ(b.state(1), cas_link_state::up);
            EXPECT_EQ(a.long_fsn(2), both) << caller_large << called_large;
            EXPECT_EQ(b.long_fsn(1), both) << caller_large << called_large;
        }
    }
}

TEST(Lfsn, NegotiationInARequestCollision)
{
    cas_link_manager a(cas_cfg(1, true)), b(cas_cfg(2, true));
    a.request_link(2, false, 0.0);
    b.request_link(1, false, 0.0);
    exchange(a, 1, b, 2);
    EXPECT_EQ(a.state(2), cas_link_state::up);
    EXPECT_EQ(b.state(1), cas_link_state::up);
    EXPECT_TRUE(a.long_fsn(2));
    EXPECT_TRUE(b.long_fsn(1));
}

namespace {

arq_config lfsn_cfg(size_t window, size_t seg)
{
    arq_config c;
    c.window = window;
    c.segment_size = seg;
    c.long_fsn = true;
    return c;
}

} // namespace

TEST(Lfsn, ArqWindowRange)
{
    EXPECT_THROW(arq_sender(arq_config{ 129, 100, false }), std::invalid_argument);
    EXPECT_NO_THROW(arq_sender(lfsn_cfg(32768, 100)));
    EXPECT_THROW(arq_sender(lfsn_cfg(32769, 100)), std::invalid_argument);
}

// A window of 2000 frames in one transmission, sequence numbers wrapping past 65535,
// with frames lost at random: everything arrives once, in order.
TEST(Lfsn, ArqLargeWindowWrapsWithLosses)
{
    const size_t window = 2000;
    arq_sender s(lfsn_cfg(window, 10));
    arq_receiver r(false, true);
    s.reset(65000);
    r.reset(65000);
    std::mt19937 rng(24);
    std::vector<bytes> sent;
    for (int i = 0; i < 1500; ++i) {
        bytes c(5 + rng() % 60);
        for (auto& b : c)
            b = uint8_t(rng());
        sent.push_back(c);
        s.enqueue(c, true);
    }
    std::vector<bytes> got;
    size_t max_tx = 0, wrapped = 0;
    int rounds = 0;
    while (!s.idle() && rounds++ < 200) {
        auto tx = s.next_transmission(100000, 1u << 30);
        max_tx = std::max(max_tx, tx.size());
        for (auto& d : tx) {
            EXPECT_TRUE(d.long_fsn);
            wrapped += d.tx_sequence < 1000;
            if (rng() % 100 < 5)
                continue; // lost
            bytes w = encode(d);
            auto dec = decode_dpdu(w.data(), w.size(), true);
            ASSERT_TRUE(dec.ok());
            r.on_data(dec.value, true);
        }
        arq_ack a = r.ack();
        EXPECT_LE(a.selective_acks.size(), max_selective_acks_lfsn);
        dpdu ad = make_ack_only(a);
        bytes aw = encode(ad);
        auto adec = decode_dpdu(aw.data(), aw.size(), true);
        ASSERT_TRUE(adec.ok());
        s.on_ack(ack_of(adec.value));
        for (auto& b : r.take_delivered())
            got.push_back(b);
    }
    EXPECT_TRUE(s.idle());
    EXPECT_EQ(got, sent);
    EXPECT_EQ(max_tx, window); // the first transmission fills the whole window
    EXPECT_GT(wrapped, 0u);
    EXPECT_EQ(s.tx_lwe(), r.rx_lwe());
    EXPECT_EQ(r.counters().out_of_window, 0u);
}

// The bitmap ends before RX UWE when the window is large: frames past it are
// undecided (neither confirmed nor sent again) until a later ack covers them.
TEST(Lfsn, TruncatedBitmapLeavesLaterFramesUndecided)
{
    arq_sender s(lfsn_cfg(1000, 1));
    arq_receiver r(false, true);
    for (int i = 0; i < 400; ++i)
        s.enqueue(bytes{ uint8_t(i) }, false);
    auto tx = s.next_transmission(1000, 1u << 20);
    ASSERT_EQ(tx.size(), 400u);
    for (size_t i = 1; i < tx.size(); ++i) // FSN 0 lost
        r.on_data(tx[i], true);
    arq_ack a = r.ack();
    EXPECT_EQ(a.rx_lwe, 0);
    ASSERT_EQ(a.selective_acks.size(), max_selective_acks_lfsn);
    s.on_ack(a);
    EXPECT_EQ(s.counters().ack_bits_ignored, 0u);
    auto again = s.next_transmission(1000, 1u << 20);
    ASSERT_EQ(again.size(), 1u); // only FSN 0: the others were acked or undecided
    EXPECT_EQ(again[0].tx_sequence, 0);
    r.on_data(again[0], true);
    s.on_ack(r.ack());
    EXPECT_TRUE(s.idle());
    EXPECT_EQ(r.take_delivered().size(), 400u);
}

// An Edition 3 receiver ignores LFSN data and the other way round.
TEST(Lfsn, ReceiverIgnoresTheOtherForm)
{
    arq_receiver e3, ep5(false, true);
    dpdu d;
    d.type = dpdu_type::data_only;
    d.cpdu_start = d.cpdu_end = true;
    d.segment = { 1 };
    d.long_fsn = true;
    EXPECT_FALSE(e3.on_data(d, true));
    EXPECT_TRUE(ep5.on_data(d, true));
    d.long_fsn = false;
    EXPECT_FALSE(ep5.on_data(d, true));
    EXPECT_TRUE(e3.on_data(d, true));
}
