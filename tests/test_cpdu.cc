/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

// C_PDU codec tests (STANAG 5066 Ed.3 Annex B). Expected bytes are written by hand
// from the bit maps of Figures B-1 to B-6: TYPE in bits 7..4 of byte 0; LINK in bit 0
// of a PHYSICAL LINK REQUEST; REASON in bits 3..0 of REJECTED / BREAK.
#include "dl/cpdu.h"
#include "dl/spdu.h"

#include <gtest/gtest.h>

#include <random>

using namespace gr::hfstack::dl;

namespace {

cpdu make(cpdu_type t, bool exclusive = false, uint8_t reason = 0, bytes s = {})
{
    cpdu c;
    c.type = t;
    c.exclusive_link = exclusive;
    c.reason = reason;
    c.spdu = std::move(s);
    return c;
}

decoded<cpdu> dec(const bytes& b) { return decode_cpdu(b); }

} // namespace

// ---- known answers --------------------------------------------------------------

TEST(CpduKnownAnswer, DataCarriesSpduAfterZeroByte)
{
    // S_PDU DATA priority 5, SAP 9 -> 9, no TTD, U_PDU "hi".
    const bytes s = { 0x05, 0x99, 0x00, 'h', 'i' };
    EXPECT_EQ(encode(make(cpdu_type::data, false, 0, s)),
              (bytes{ 0x00, 0x05, 0x99, 0x00, 0x68, 0x69 }));
}

TEST(CpduKnownAnswer, PhysicalLinkRequestNonExclusive)
{
    EXPECT_EQ(encode(make(cpdu_type::physical_link_request, false)), (bytes{ 0x10 }));
}

TEST(CpduKnownAnswer, PhysicalLinkRequestExclusive)
{
    EXPECT_EQ(encode(make(cpdu_type::physical_link_request, true)), (bytes{ 0x11 }));
}

TEST(CpduKnownAnswer, PhysicalLinkAccepted)
{
    EXPECT_EQ(encode(make(cpdu_type::physical_link_accepted)), (bytes{ 0x20 }));
}

TEST(CpduKnownAnswer, PhysicalLinkRejectedEveryReason)
{
    EXPECT_EQ(encode(make(cpdu_type::physical_link_rejected, false, 0)), (bytes{ 0x30 }));
    EXPECT_EQ(encode(make(cpdu_type::physical_link_rejected, false, 1)), (bytes{ 0x31 }));
    EXPECT_EQ(encode(make(cpdu_type::physical_link_rejected, false, 2)), (bytes{ 0x32 }));
    EXPECT_EQ(encode(make(cpdu_type::physical_link_rejected, false, 3)), (bytes{ 0x33 }));
}

TEST(CpduKnownAnswer, PhysicalLinkBreakEveryReason)
{
    EXPECT_EQ(encode(make(cpdu_type::physical_link_break, false, 0)), (bytes{ 0x40 }));
    EXPECT_EQ(encode(make(cpdu_type::physical_link_break, false, 1)), (bytes{ 0x41 }));
    EXPECT_EQ(encode(make(cpdu_type::physical_link_break, false, 2)), (bytes{ 0x42 }));
    EXPECT_EQ(encode(make(cpdu_type::physical_link_break, false, 3)), (bytes{ 0x43 }));
    EXPECT_EQ(encode(make(cpdu_type::physical_link_break, false, 4)), (bytes{ 0x44 }));
}

TEST(CpduKnownAnswer, PhysicalLinkBreakConfirm)
{
    EXPECT_EQ(encode(make(cpdu_type::physical_link_break_confirm)), (bytes{ 0x50 }));
}

TEST(CpduKnownAnswer, DecodeEachType)
{
    auto d = dec({ 0x00, 0x19, 0x99, 0x41 });
    ASSERT_TRUE(d) << d.reason;
    EXPECT_EQ(d.value.type, cpdu_type::data);
    EXPECT_EQ(d.value.spdu, (bytes{ 0x19, 0x99, 0x41 }));

    d = dec({ 0x11 });
    ASSERT_TRUE(d);
    EXPECT_EQ(d.value.type, cpdu_type::physical_link_request);
    EXPECT_TRUE(d.value.exclusive_link);

    d = dec({ 0x10 });
    ASSERT_TRUE(d);
    EXPECT_FALSE(d.value.exclusive_link);

    d = dec({ 0x20 });
    ASSERT_TRUE(d);
    EXPECT_EQ(d.value.type, cpdu_type::physical_link_accepted);

    d = dec({ 0x31 });
    ASSERT_TRUE(d);
    EXPECT_EQ(d.value.type, cpdu_type::physical_link_rejected);
    EXPECT_EQ(d.value.reason, uint8_t(physical_link_reject_reason::broadcast_only_node));

    d = dec({ 0x44 });
    ASSERT_TRUE(d);
    EXPECT_EQ(d.value.type, cpdu_type::physical_link_break);
    EXPECT_EQ(d.value.reason, uint8_t(physical_link_break_reason::no_more_data));

    d = dec({ 0x50 });
    ASSERT_TRUE(d);
    EXPECT_EQ(d.value.type, cpdu_type::physical_link_break_confirm);
}

TEST(CpduKnownAnswer, HeaderSizeIsOneByte)
{
    EXPECT_EQ(cpdu_header_size, 1u);
    const bytes s = { 0x05, 0x99, 0x00 };
    EXPECT_EQ(encode(make(cpdu_type::data, false, 0, s)).size(), s.size() + 1);
}

// ---- round trip -----------------------------------------------------------------

TEST(CpduRoundTrip, EveryType)
{
    const std::vector<cpdu> all = {
        make(cpdu_type::data, false, 0, { 0x05, 0x99, 0x00, 1, 2, 3 }),
        make(cpdu_type::physical_link_request, false),
        make(cpdu_type::physical_link_request, true),
        make(cpdu_type::physical_link_accepted),
        make(cpdu_type::physical_link_rejected, false, 2),
        make(cpdu_type::physical_link_break, false, 3),
        make(cpdu_type::physical_link_break_confirm),
    };
    for (const auto& c : all) {
        auto d = decode_cpdu(encode(c));
        ASSERT_TRUE(d) << to_string(c.type) << ": " << d.reason;
        EXPECT_EQ(d.value, c) << to_string(c.type);
    }
}

TEST(CpduRoundTrip, SpduInsideCpdu)
{
    spdu s;
    s.type = spdu_type::data;
    s.priority = 3;
    s.source_sap = 9;
    s.destination_sap = 9;
    s.updu = { 0x45, 0x00, 0x00, 0x14 };
    auto c = decode_cpdu(encode(make(cpdu_type::data, false, 0, encode(s))));
    ASSERT_TRUE(c);
    auto back = decode_spdu(c.value.spdu);
    ASSERT_TRUE(back) << back.reason;
    EXPECT_EQ(back.value, s);
}

TEST(CpduProperty, RandomValidValuesRoundTrip)
{
    std::mt19937 rng(5066);
    std::uniform_int_distribution<int> type_d(0, 5), byte_d(0, 255), len_d(1, 300);
    for (int i = 0; i < 5000; ++i) {
        cpdu c;
        c.type = cpdu_type(type_d(rng));
        switch (c.type) {
        case cpdu_type::data:
            c.spdu.resize(size_t(len_d(rng)));
            for (auto& b : c.spdu)
                b = uint8_t(byte_d(rng));
            break;
        case cpdu_type::physical_link_request:
            c.exclusive_link = byte_d(rng) & 1;
            break;
        case cpdu_type::physical_link_rejected:
            c.reason = uint8_t(byte_d(rng) % 4);
            break;
        case cpdu_type::physical_link_break:
            c.reason = uint8_t(byte_d(rng) % 5);
            break;
        default:
            break;
        }
        const bytes wire = encode(c);
        auto d = decode_cpdu(wire);
        ASSERT_TRUE(d) << "iteration " << i << ": " << d.reason;
        ASSERT_EQ(d.value, c) << "iteration " << i << " wire " << to_hex(wire);
    }
}

TEST(CpduProperty, RandomBytesNeverThrowAndReencodeStably)
{
    std::mt19937 rng(1234);
    std::uniform_int_distribution<int> byte_d(0, 255), len_d(0, 8);
    int ok = 0;
    for (int i = 0; i < 20000; ++i) {
        bytes b(size_t(len_d(rng)));
        for (auto& x : b)
            x = uint8_t(byte_d(rng));
        decoded<cpdu> d;
        ASSERT_NO_THROW(d = decode_cpdu(b));
        if (!d)
            continue;
        ++ok;
        if (d.value.reason != 0 && !cpdu_reason_defined(d.value.type, d.value.reason)) {
            // Tolerated on input, never produced.
            EXPECT_THROW(encode(d.value), encode_error) << to_hex(b);
            continue;
        }
        bytes again;
        ASSERT_NO_THROW(again = encode(d.value)) << to_hex(b);
        auto d2 = decode_cpdu(again);
        ASSERT_TRUE(d2);
        ASSERT_EQ(d2.value, d.value) << to_hex(b);
    }
    EXPECT_GT(ok, 1000);
}

// ---- tolerated input ------------------------------------------------------------

TEST(CpduTolerance, NotUsedBitsAreIgnored)
{
    auto d = dec({ 0x0F, 0x70 }); // DATA with low nibble set
    ASSERT_TRUE(d);
    EXPECT_EQ(d.value.type, cpdu_type::data);
    EXPECT_EQ(d.value.spdu, (bytes{ 0x70 }));

    d = dec({ 0x1E }); // REQUEST, reserved bits 3..1 set, LINK = 0
    ASSERT_TRUE(d);
    EXPECT_FALSE(d.value.exclusive_link);
    d = dec({ 0x1F });
    ASSERT_TRUE(d);
    EXPECT_TRUE(d.value.exclusive_link);

    d = dec({ 0x2F });
    ASSERT_TRUE(d);
    EXPECT_EQ(d.value.type, cpdu_type::physical_link_accepted);
    d = dec({ 0x5A });
    ASSERT_TRUE(d);
    EXPECT_EQ(d.value.type, cpdu_type::physical_link_break_confirm);
}

TEST(CpduTolerance, TrailingBytesAfterControlCpduIgnored)
{
    auto d = dec({ 0x20, 0xAA, 0xBB });
    ASSERT_TRUE(d);
    EXPECT_EQ(d.value, make(cpdu_type::physical_link_accepted));
    d = dec({ 0x43, 0x00 });
    ASSERT_TRUE(d);
    EXPECT_EQ(d.value.reason, 3);
}

TEST(CpduTolerance, EncodeIgnoresFieldsOfOtherTypes)
{
    EXPECT_EQ(encode(make(cpdu_type::physical_link_accepted, true, 3, { 1, 2 })),
              (bytes{ 0x20 }));
    EXPECT_EQ(encode(make(cpdu_type::physical_link_request, true, 3, { 1 })),
              (bytes{ 0x11 }));
    EXPECT_EQ(encode(make(cpdu_type::data, true, 3, { 0x70 })), (bytes{ 0x00, 0x70 }));
}

// ---- errors ---------------------------------------------------------------------

TEST(CpduErrors, EmptyInput)
{
    auto d = dec({});
    EXPECT_FALSE(d);
    EXPECT_EQ(d.error, decode_error::truncated);
    EXPECT_FALSE(decode_cpdu(nullptr, 0));
}

TEST(CpduErrors, DataWithoutSpdu)
{
    auto d = dec({ 0x00 });
    EXPECT_EQ(d.error, decode_error::truncated);
}

TEST(CpduErrors, UnknownTypes)
{
    for (int t = 6; t < 16; ++t) {
        auto d = dec({ uint8_t(t << 4), 0x00 });
        EXPECT_EQ(d.error, decode_error::unknown_type) << t;
        EXPECT_FALSE(d.reason.empty());
    }
}

// Undefined reasons from a peer are kept raw (a BREAK must still be confirmed) and
// flagged by cpdu_reason_defined(); encode() refuses them (EncodeRejectsBadFields).
TEST(CpduTolerance, UndefinedReasonsAreKeptRaw)
{
    for (int r = 4; r < 16; ++r) {
        auto d = dec({ uint8_t(0x30 | r) });
        ASSERT_TRUE(d.ok()) << r;
        EXPECT_EQ(d.value.reason, r);
        EXPECT_FALSE(cpdu_reason_defined(d.value.type, d.value.reason));
    }
    for (int r = 5; r < 16; ++r) {
        auto d = dec({ uint8_t(0x40 | r) });
        ASSERT_TRUE(d.ok()) << r;
        EXPECT_EQ(d.value.type, cpdu_type::physical_link_break);
        EXPECT_EQ(d.value.reason, r);
        EXPECT_FALSE(cpdu_reason_defined(d.value.type, d.value.reason));
    }
    EXPECT_TRUE(cpdu_reason_defined(cpdu_type::physical_link_break, 4));
}

TEST(CpduErrors, EncodeRejectsBadFields)
{
    EXPECT_THROW(encode(make(cpdu_type::physical_link_rejected, false, 4)), encode_error);
    EXPECT_THROW(encode(make(cpdu_type::physical_link_rejected, false, 16)),
                 encode_error);
    EXPECT_THROW(encode(make(cpdu_type::physical_link_break, false, 5)), encode_error);
    EXPECT_THROW(encode(make(cpdu_type::physical_link_break, false, 200)), encode_error);
    EXPECT_THROW(encode(make(cpdu_type::data)), encode_error); // no S_PDU
    EXPECT_THROW(encode(make(cpdu_type(6))), encode_error);
    try {
        encode(make(cpdu_type::physical_link_break, false, 9));
        FAIL() << "no throw";
    } catch (const encode_error& e) {
        EXPECT_NE(std::string(e.what()).find("reason"), std::string::npos) << e.what();
    }
}

TEST(CpduStrings, Names)
{
    EXPECT_STREQ(to_string(cpdu_type::data), "DATA");
    EXPECT_STREQ(to_string(cpdu_type::physical_link_break_confirm),
                 "PHYSICAL_LINK_BREAK_CONFIRM");
    EXPECT_STREQ(to_string(cpdu_type(9)), "undefined");
    EXPECT_STREQ(to_string(physical_link_reject_reason::supporting_exclusive_link),
                 "supporting exclusive link");
    EXPECT_STREQ(to_string(physical_link_break_reason::no_more_data), "no more data");
    EXPECT_TRUE(cpdu_reason_defined(cpdu_type::physical_link_break, 4));
    EXPECT_FALSE(cpdu_reason_defined(cpdu_type::physical_link_rejected, 4));
    EXPECT_FALSE(cpdu_reason_defined(cpdu_type::physical_link_accepted, 0));
}
