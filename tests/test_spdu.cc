/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

// S_PDU codec tests (STANAG 5066 Ed.3 Annex A, A.3.1). Expected bytes are written by
// hand from Figures.
#include "dl/spdu.h"

#include <gtest/gtest.h>

#include <random>

using namespace gr::hfstack::dl;

namespace {

spdu data_spdu(uint8_t prio, uint8_t src, uint8_t dst, bytes u)
{
    spdu s;
    s.type = spdu_type::data;
    s.priority = prio;
    s.source_sap = src;
    s.destination_sap = dst;
    s.updu = std::move(u);
    return s;
}

spdu of_type(spdu_type t, uint8_t reason = 0)
{
    spdu s;
    s.type = t;
    s.reason = reason;
    return s;
}

spdu hl_request(uint8_t type, uint8_t prio, uint8_t req, uint8_t remote)
{
    spdu s;
    s.type = spdu_type::hard_link_establishment_request;
    s.link_type = type;
    s.link_priority = prio;
    s.requesting_sap = req;
    s.remote_sap = remote;
    return s;
}

decoded<spdu> dec(const bytes& b) { return decode_spdu(b); }

} // namespace

// ---- known answers: encode ------------------------------------------------------

TEST(SpduKnownAnswer, DataNoTtd)
{
    // Priority 5, SAP 9 -> SAP 9, no confirm, no TTD, U_PDU "hi".
    EXPECT_EQ(encode(data_spdu(5, 9, 9, { 'h', 'i' })),
              (bytes{ 0x05, 0x99, 0x00, 0x68, 0x69 }));
}

TEST(SpduKnownAnswer, DataWithTtdAndClientConfirm)
{
    // Priority 15, SAP 6 -> SAP 7, client confirm, TTD day-of-year 365 (mod 16 = 13)
    // at 12:34:56 GMT = 45296 s -> 22648 = 0x5878 in 2 s units.
    spdu s = data_spdu(15, 6, 7, { 'x' });
    s.client_delivery_confirm_required = true;
    s.ttd_valid = true;
    s.ttd_julian_day = 365 % 16;
    s.ttd_gmt_2s = 45296 / 2;
    EXPECT_EQ(encode(s), (bytes{ 0x0F, 0x67, 0xCD, 0x58, 0x78, 0x78 }));
    EXPECT_EQ(spdu_header_size(s), 5u);
}

TEST(SpduKnownAnswer, DataTtdBounds)
{
    spdu s = data_spdu(0, 1, 2, {});
    s.ttd_valid = true;
    EXPECT_EQ(encode(s), (bytes{ 0x00, 0x12, 0x40, 0x00, 0x00 }));
    s.ttd_julian_day = 15;
    s.ttd_gmt_2s = 43199; // 23:59:58
    EXPECT_EQ(encode(s), (bytes{ 0x00, 0x12, 0x4F, 0xA8, 0xBF }));
}

TEST(SpduKnownAnswer, ConfirmOnlyNoTtd)
{
    spdu s = data_spdu(2, 12, 3, { 0xAB });
    s.client_delivery_confirm_required = true;
    EXPECT_EQ(encode(s), (bytes{ 0x02, 0xC3, 0x80, 0xAB }));
}

TEST(SpduKnownAnswer, DataDeliveryConfirm)
{
    spdu s;
    s.type = spdu_type::data_delivery_confirm;
    s.source_sap = 9;
    s.destination_sap = 9;
    s.updu = { 'h', 'i' };
    // Byte 0 low nibble is not used (Fig. A-33): 0x10, not 0x19.
    EXPECT_EQ(encode(s), (bytes{ 0x10, 0x99, 0x68, 0x69 }));
}

TEST(SpduKnownAnswer, DataDeliveryFail)
{
    spdu s;
    s.type = spdu_type::data_delivery_fail;
    s.reason = uint8_t(data_delivery_fail_reason::destination_sap_not_bound);
    s.source_sap = 2;
    s.destination_sap = 3;
    EXPECT_EQ(encode(s), (bytes{ 0x21, 0x23 }));
    s.updu = { 0x01, 0x02 };
    EXPECT_EQ(encode(s), (bytes{ 0x21, 0x23, 0x01, 0x02 }));
}

TEST(SpduKnownAnswer, HardLinkEstablishmentRequest)
{
    // Link type 2 (bits 3..2), priority 3 (bits 1..0), SAP 5 requesting, SAP 12 remote.
    EXPECT_EQ(encode(hl_request(2, 3, 5, 12)), (bytes{ 0x3B, 0x5C }));
    EXPECT_EQ(encode(hl_request(0, 1, 9, 0)), (bytes{ 0x31, 0x90 }));
    EXPECT_EQ(encode(hl_request(1, 2, 15, 15)), (bytes{ 0x36, 0xFF }));
}

TEST(SpduKnownAnswer, OneByteTypes)
{
    EXPECT_EQ(encode(of_type(spdu_type::hard_link_establishment_confirm)),
              (bytes{ 0x40 }));
    EXPECT_EQ(encode(of_type(spdu_type::hard_link_establishment_rejected, 2)),
              (bytes{ 0x52 }));
    EXPECT_EQ(encode(of_type(spdu_type::hard_link_establishment_rejected, 4)),
              (bytes{ 0x54 }));
    EXPECT_EQ(encode(of_type(spdu_type::hard_link_terminate, 1)), (bytes{ 0x61 }));
    EXPECT_EQ(encode(of_type(spdu_type::hard_link_terminate, 4)), (bytes{ 0x64 }));
    EXPECT_EQ(encode(of_type(spdu_type::hard_link_terminate_confirm)), (bytes{ 0x70 }));
}

// ---- known answers: decode ------------------------------------------------------

TEST(SpduKnownAnswer, DecodeData)
{
    auto d = dec({ 0x0F, 0x67, 0xCD, 0x58, 0x78, 0x78 });
    ASSERT_TRUE(d) << d.reason;
    EXPECT_EQ(d.value.type, spdu_type::data);
    EXPECT_EQ(d.value.priority, 15);
    EXPECT_EQ(d.value.source_sap, 6);
    EXPECT_EQ(d.value.destination_sap, 7);
    EXPECT_TRUE(d.value.client_delivery_confirm_required);
    EXPECT_TRUE(d.value.ttd_valid);
    EXPECT_EQ(d.value.ttd_julian_day, 13);
    EXPECT_EQ(d.value.ttd_gmt_2s, 22648);
    EXPECT_EQ(d.value.updu, (bytes{ 0x78 }));

    d = dec({ 0x05, 0x99, 0x00 }); // empty U_PDU
    ASSERT_TRUE(d);
    EXPECT_FALSE(d.value.ttd_valid);
    EXPECT_TRUE(d.value.updu.empty());
}

TEST(SpduKnownAnswer, DecodeOthers)
{
    auto d = dec({ 0x10, 0x99, 0x68, 0x69 });
    ASSERT_TRUE(d);
    EXPECT_EQ(d.value.type, spdu_type::data_delivery_confirm);
    EXPECT_EQ(d.value.source_sap, 9);
    EXPECT_EQ(d.value.destination_sap, 9);
    EXPECT_EQ(d.value.updu, (bytes{ 'h', 'i' }));

    d = dec({ 0x21, 0x23 });
    ASSERT_TRUE(d);
    EXPECT_EQ(d.value.type, spdu_type::data_delivery_fail);
    EXPECT_EQ(d.value.reason, 1);
    EXPECT_EQ(d.value.source_sap, 2);
    EXPECT_EQ(d.value.destination_sap, 3);
    EXPECT_TRUE(d.value.updu.empty());

    d = dec({ 0x3B, 0x5C });
    ASSERT_TRUE(d);
    EXPECT_EQ(d.value, hl_request(2, 3, 5, 12));

    d = dec({ 0x40 });
    ASSERT_TRUE(d);
    EXPECT_EQ(d.value.type, spdu_type::hard_link_establishment_confirm);
    d = dec({ 0x53 });
    ASSERT_TRUE(d);
    EXPECT_EQ(d.value.reason,
              uint8_t(hard_link_reject_reason::remote_node_not_responding));
    d = dec({ 0x62 });
    ASSERT_TRUE(d);
    EXPECT_EQ(d.value.reason,
              uint8_t(hard_link_terminate_reason::higher_priority_link_requested));
    d = dec({ 0x70 });
    ASSERT_TRUE(d);
    EXPECT_EQ(d.value.type, spdu_type::hard_link_terminate_confirm);
}

TEST(SpduKnownAnswer, HeaderSizes)
{
    spdu s = data_spdu(0, 0, 0, { 1, 2, 3 });
    EXPECT_EQ(spdu_header_size(s), 3u);
    EXPECT_EQ(encode(s).size(), 3u + 3u);
    s.ttd_valid = true;
    EXPECT_EQ(spdu_header_size(s), 5u);
    EXPECT_EQ(encode(s).size(), 5u + 3u);
    EXPECT_EQ(spdu_header_size(of_type(spdu_type::data_delivery_confirm)), 2u);
    EXPECT_EQ(spdu_header_size(of_type(spdu_type::data_delivery_fail, 1)), 2u);
    EXPECT_EQ(spdu_header_size(hl_request(0, 0, 0, 0)), 2u);
    for (auto t : { spdu_type::hard_link_establishment_confirm,
                    spdu_type::hard_link_establishment_rejected,
                    spdu_type::hard_link_terminate,
                    spdu_type::hard_link_terminate_confirm })
        EXPECT_EQ(spdu_header_size(of_type(t, 1)), 1u) << to_string(t);
}

// ---- round trip -----------------------------------------------------------------

TEST(SpduRoundTrip, EveryType)
{
    spdu ttd = data_spdu(7, 3, 4, { 9, 8, 7 });
    ttd.ttd_valid = true;
    ttd.ttd_julian_day = 4;
    ttd.ttd_gmt_2s = 1000;
    ttd.client_delivery_confirm_required = true;
    spdu ddc = of_type(spdu_type::data_delivery_confirm);
    ddc.source_sap = 1;
    ddc.destination_sap = 14;
    ddc.updu = { 0xFF };
    spdu ddf = of_type(spdu_type::data_delivery_fail, 1);
    ddf.source_sap = 15;
    ddf.destination_sap = 0;
    ddf.updu = { 1, 2 };
    const std::vector<spdu> all = {
        data_spdu(5, 9, 9, { 'h', 'i' }),
        ttd,
        ddc,
        ddf,
        hl_request(1, 2, 6, 7),
        of_type(spdu_type::hard_link_establishment_confirm),
        of_type(spdu_type::hard_link_establishment_rejected, 1),
        of_type(spdu_type::hard_link_terminate, 4),
        of_type(spdu_type::hard_link_terminate_confirm),
    };
    for (const auto& s : all) {
        auto d = decode_spdu(encode(s));
        ASSERT_TRUE(d) << to_string(s.type) << ": " << d.reason;
        EXPECT_EQ(d.value, s) << to_string(s.type);
    }
}

namespace {

spdu random_valid_spdu(std::mt19937& rng)
{
    std::uniform_int_distribution<int> type_d(0, 7), nib(0, 15), bit(0, 1),
        byte_d(0, 255), len_d(0, 64), gmt_d(0, ttd_gmt_2s_limit - 1);
    spdu s;
    s.type = spdu_type(type_d(rng));
    auto fill_updu = [&] {
        s.updu.resize(size_t(len_d(rng)));
        for (auto& b : s.updu)
            b = uint8_t(byte_d(rng));
    };
    switch (s.type) {
    case spdu_type::data:
        s.priority = uint8_t(nib(rng));
        s.source_sap = uint8_t(nib(rng));
        s.destination_sap = uint8_t(nib(rng));
        s.client_delivery_confirm_required = bit(rng);
        s.ttd_valid = bit(rng);
        if (s.ttd_valid) {
            s.ttd_julian_day = uint8_t(nib(rng));
            s.ttd_gmt_2s = uint16_t(gmt_d(rng));
        }
        fill_updu();
        break;
    case spdu_type::data_delivery_confirm:
    case spdu_type::data_delivery_fail:
        s.source_sap = uint8_t(nib(rng));
        s.destination_sap = uint8_t(nib(rng));
        if (s.type == spdu_type::data_delivery_fail)
            s.reason = uint8_t(bit(rng));
        fill_updu();
        break;
    case spdu_type::hard_link_establishment_request:
        s.link_type = uint8_t(nib(rng) % 3);
        s.link_priority = uint8_t(nib(rng) % 4);
        s.requesting_sap = uint8_t(nib(rng));
        s.remote_sap = uint8_t(nib(rng));
        break;
    case spdu_type::hard_link_establishment_rejected:
        s.reason = uint8_t(nib(rng) % 5);
        break;
    case spdu_type::hard_link_terminate: {
        static const uint8_t ok[] = { 0, 1, 2, 4 };
        s.reason = ok[nib(rng) % 4];
        break;
    }
    default:
        break;
    }
    return s;
}

} // namespace

TEST(SpduProperty, RandomValidValuesRoundTrip)
{
    std::mt19937 rng(5066);
    for (int i = 0; i < 10000; ++i) {
        const spdu s = random_valid_spdu(rng);
        const bytes wire = encode(s);
        ASSERT_EQ(wire.size(), spdu_header_size(s) + s.updu.size()) << i;
        auto d = decode_spdu(wire);
        ASSERT_TRUE(d) << "iteration " << i << ": " << d.reason;
        ASSERT_EQ(d.value, s) << "iteration " << i << " wire " << to_hex(wire);
    }
}

TEST(SpduProperty, RandomBytesNeverThrowAndReencodeStably)
{
    std::mt19937 rng(4321);
    std::uniform_int_distribution<int> byte_d(0, 255), len_d(0, 8);
    int ok = 0;
    for (int i = 0; i < 20000; ++i) {
        bytes b(size_t(len_d(rng)));
        for (auto& x : b)
            x = uint8_t(byte_d(rng));
        decoded<spdu> d;
        ASSERT_NO_THROW(d = decode_spdu(b));
        if (!d) {
            EXPECT_NE(d.error, decode_error::none);
            EXPECT_FALSE(d.reason.empty());
            continue;
        }
        ++ok;
        if (d.value.reason != 0 && !spdu_reason_defined(d.value.type, d.value.reason)) {
            // Tolerated on input, never produced.
            EXPECT_THROW(encode(d.value), encode_error) << to_hex(b);
            continue;
        }
        bytes again;
        ASSERT_NO_THROW(again = encode(d.value)) << to_hex(b);
        ASSERT_LE(again.size(), b.size()) << to_hex(b);
        auto d2 = decode_spdu(again);
        ASSERT_TRUE(d2);
        ASSERT_EQ(d2.value, d.value) << to_hex(b);
    }
    EXPECT_GT(ok, 1000);
}

// ---- tolerated input ------------------------------------------------------------

TEST(SpduTolerance, NotUsedBitsIgnored)
{
    // DATA byte 2 bits 5..4 set, no TTD, Julian nibble set ("don't care").
    auto d = dec({ 0x05, 0x99, 0x3F, 0x41 });
    ASSERT_TRUE(d);
    EXPECT_FALSE(d.value.ttd_valid);
    EXPECT_FALSE(d.value.client_delivery_confirm_required);
    EXPECT_EQ(d.value.ttd_julian_day, 0);
    EXPECT_EQ(d.value.updu, (bytes{ 0x41 }));

    // DATA DELIVERY CONFIRM low nibble of byte 0 is not used.
    d = dec({ 0x1A, 0x99 });
    ASSERT_TRUE(d);
    EXPECT_EQ(d.value, [] {
        spdu s;
        s.type = spdu_type::data_delivery_confirm;
        s.source_sap = 9;
        s.destination_sap = 9;
        return s;
    }());

    d = dec({ 0x4F });
    ASSERT_TRUE(d);
    EXPECT_EQ(d.value, of_type(spdu_type::hard_link_establishment_confirm));
    d = dec({ 0x7C });
    ASSERT_TRUE(d);
    EXPECT_EQ(d.value, of_type(spdu_type::hard_link_terminate_confirm));
}

TEST(SpduTolerance, TrailingBytesAfterFixedSizeTypesIgnored)
{
    auto d = dec({ 0x3B, 0x5C, 0xEE });
    ASSERT_TRUE(d);
    EXPECT_EQ(d.value, hl_request(2, 3, 5, 12));
    d = dec({ 0x61, 0x00 });
    ASSERT_TRUE(d);
    EXPECT_EQ(d.value, of_type(spdu_type::hard_link_terminate, 1));
}

TEST(SpduTolerance, EncodeIgnoresTtdFieldsWhenNotValid)
{
    spdu s = data_spdu(5, 9, 9, { 'h', 'i' });
    s.ttd_julian_day = 99; // out of range, but not used
    s.ttd_gmt_2s = 60000;  // likewise
    EXPECT_EQ(encode(s), (bytes{ 0x05, 0x99, 0x00, 0x68, 0x69 }));
}

TEST(SpduTolerance, EncodeIgnoresFieldsOfOtherTypes)
{
    spdu s = of_type(spdu_type::hard_link_terminate_confirm);
    s.priority = 3;
    s.reason = 9;
    s.updu = { 1, 2, 3 };
    EXPECT_EQ(encode(s), (bytes{ 0x70 }));
    spdu r = hl_request(0, 0, 1, 2);
    r.updu = { 5 };
    EXPECT_EQ(encode(r), (bytes{ 0x30, 0x12 }));
}

// ---- errors ---------------------------------------------------------------------

TEST(SpduErrors, EmptyInput)
{
    EXPECT_EQ(dec({}).error, decode_error::truncated);
    EXPECT_EQ(decode_spdu(nullptr, 0).error, decode_error::truncated);
}

TEST(SpduErrors, TruncatedPci)
{
    EXPECT_EQ(dec({ 0x05 }).error, decode_error::truncated);
    EXPECT_EQ(dec({ 0x05, 0x99 }).error, decode_error::truncated);
    EXPECT_EQ(dec({ 0x10 }).error, decode_error::truncated);
    EXPECT_EQ(dec({ 0x21 }).error, decode_error::truncated);
    EXPECT_EQ(dec({ 0x3B }).error, decode_error::truncated);
}

TEST(SpduErrors, TruncatedTtd)
{
    EXPECT_EQ(dec({ 0x05, 0x99, 0x40 }).error, decode_error::truncated);
    auto d = dec({ 0x05, 0x99, 0xC3, 0x12 });
    EXPECT_EQ(d.error, decode_error::truncated);
    EXPECT_NE(d.reason.find("TTD"), std::string::npos) << d.reason;
}

TEST(SpduErrors, TtdPastMidnight)
{
    EXPECT_EQ(dec({ 0x05, 0x99, 0x40, 0xA8, 0xC0 }).error,
              decode_error::bad_field); // 43200
    EXPECT_EQ(dec({ 0x05, 0x99, 0x40, 0xFF, 0xFF }).error, decode_error::bad_field);
    EXPECT_TRUE(dec({ 0x05, 0x99, 0x40, 0xA8, 0xBF })); // 43199
}

TEST(SpduErrors, UnknownTypes)
{
    for (int t = 8; t < 16; ++t)
        EXPECT_EQ(dec({ uint8_t(t << 4), 0x99, 0x00 }).error, decode_error::unknown_type)
            << t;
}

TEST(SpduErrors, LinkTypeThree)
{
    EXPECT_EQ(dec({ 0x3C, 0x55 }).error, decode_error::bad_field);
    EXPECT_EQ(dec({ 0x3F, 0x55 }).error, decode_error::bad_field);
}

// Reserved reasons from a peer are kept raw (the link must still be torn down and
// confirmed) and flagged by spdu_reason_defined(); encode() refuses them.
TEST(SpduTolerance, ReservedReasonsAreKeptRaw)
{
    auto kept = [](std::initializer_list<uint8_t> b, int r) {
        auto d = dec(b);
        ASSERT_TRUE(d.ok()) << r;
        EXPECT_EQ(d.value.reason, r);
        EXPECT_FALSE(spdu_reason_defined(d.value.type, d.value.reason)) << r;
    };
    for (int r = 2; r < 16; ++r)
        kept({ uint8_t(0x20 | r), 0x99 }, r);
    for (int r = 5; r < 16; ++r)
        kept({ uint8_t(0x50 | r) }, r);
    kept({ 0x63 }, 3);
    for (int r = 5; r < 16; ++r)
        kept({ uint8_t(0x60 | r) }, r);
    // 0 ("unassigned") is accepted everywhere.
    EXPECT_TRUE(dec({ 0x20, 0x99 }));
    EXPECT_TRUE(dec({ 0x50 }));
    EXPECT_TRUE(dec({ 0x60 }));
}

TEST(SpduErrors, EncodeRejectsOutOfRangeFields)
{
    auto expect_throw_naming = [](const spdu& s, const char* field) {
        try {
            encode(s);
            ADD_FAILURE() << "no throw for " << field;
        } catch (const encode_error& e) {
            EXPECT_NE(std::string(e.what()).find(field), std::string::npos) << e.what();
        }
    };
    expect_throw_naming(data_spdu(16, 0, 0, {}), "priority");
    expect_throw_naming(data_spdu(0, 16, 0, {}), "source_sap");
    expect_throw_naming(data_spdu(0, 0, 16, {}), "destination_sap");
    spdu t = data_spdu(0, 0, 0, {});
    t.ttd_valid = true;
    t.ttd_julian_day = 16;
    expect_throw_naming(t, "ttd_julian_day");
    t.ttd_julian_day = 0;
    t.ttd_gmt_2s = ttd_gmt_2s_limit;
    expect_throw_naming(t, "ttd_gmt_2s");
    expect_throw_naming(hl_request(3, 0, 0, 0), "link_type");
    expect_throw_naming(hl_request(0, 4, 0, 0), "link_priority");
    expect_throw_naming(hl_request(0, 0, 16, 0), "requesting_sap");
    expect_throw_naming(hl_request(0, 0, 0, 16), "remote_sap");
    spdu ddc = of_type(spdu_type::data_delivery_confirm);
    ddc.destination_sap = 20;
    expect_throw_naming(ddc, "destination_sap");
    expect_throw_naming(of_type(spdu_type::data_delivery_fail, 2), "reason");
    expect_throw_naming(of_type(spdu_type::hard_link_establishment_rejected, 5),
                        "reason");
    expect_throw_naming(of_type(spdu_type::hard_link_establishment_rejected, 16),
                        "reason");
    expect_throw_naming(of_type(spdu_type::hard_link_terminate, 3), "reason");
    expect_throw_naming(of_type(spdu_type::hard_link_terminate, 15), "reason");
    expect_throw_naming(of_type(spdu_type(8)), "type");
}

TEST(SpduStrings, Names)
{
    EXPECT_STREQ(to_string(spdu_type::data), "DATA");
    EXPECT_STREQ(to_string(spdu_type::hard_link_terminate_confirm),
                 "HARD_LINK_TERMINATE_CONFIRM");
    EXPECT_STREQ(to_string(spdu_type(12)), "undefined");
    EXPECT_STREQ(to_string(data_delivery_fail_reason::destination_sap_not_bound),
                 "destination SAP ID not bound");
    EXPECT_STREQ(to_string(hard_link_reject_reason::remote_node_busy),
                 "remote node busy");
    EXPECT_STREQ(to_string(hard_link_terminate_reason::client_request), "client request");
    EXPECT_STREQ(to_string(hard_link_terminate_reason(3)), "reserved");
    EXPECT_STREQ(to_string(hard_link_type::full_bandwidth_reservation),
                 "type 2 (full-bandwidth reservation)");
}
