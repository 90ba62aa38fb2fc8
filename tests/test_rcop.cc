/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

// RCOP / UDOP PDU codec tests (STANAG 5066 Ed.3 Annex F, Figure F-9).
#include "dl/rcop.h"

#include <gtest/gtest.h>

#include <random>

using namespace gr::hfstack::dl;

namespace {

rcop_pdu make(uint8_t conn, uint8_t updu, uint16_t seg, uint16_t app, bytes data)
{
    rcop_pdu p;
    p.header.connection_id = conn;
    p.header.updu_id = updu;
    p.header.segment_number = seg;
    p.header.application_id = app;
    p.data = std::move(data);
    return p;
}

} // namespace

TEST(RcopKnownAnswer, Encode)
{
    // Connection 3, U_PDU 0x42, segment 0x0102, BFTP, data "ab".
    EXPECT_EQ(encode(make(3, 0x42, 0x0102, app_id_bftp, { 'a', 'b' })),
              (bytes{ 0x30, 0x42, 0x01, 0x02, 0x10, 0x02, 0x61, 0x62 }));
    // First segment, connection 0, user-defined app, no data.
    EXPECT_EQ(encode(make(0, 0, 0, 0x8001, {})),
              (bytes{ 0x00, 0x00, 0x00, 0x00, 0x80, 0x01 }));
    EXPECT_EQ(encode(make(15, 255, 0xFFFF, 0xFFFF, { 0 })),
              (bytes{ 0xF0, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x00 }));
}

TEST(RcopKnownAnswer, HeaderOnly)
{
    rcop_header h;
    h.connection_id = 9;
    h.updu_id = 7;
    h.segment_number = 258;
    h.application_id = app_id_frap;
    EXPECT_EQ(encode(h), (bytes{ 0x90, 0x07, 0x01, 0x02, 0x10, 0x0B }));
    EXPECT_EQ(encode(h).size(), rcop_header_size);
}

TEST(RcopKnownAnswer, Decode)
{
    const bytes wire = { 0x30, 0x42, 0x01, 0x02, 0x10, 0x02, 0x61, 0x62 };
    auto d = decode_rcop(wire);
    ASSERT_TRUE(d) << d.reason;
    EXPECT_EQ(d.value.header.connection_id, 3);
    EXPECT_EQ(d.value.header.updu_id, 0x42);
    EXPECT_EQ(d.value.header.segment_number, 0x0102);
    EXPECT_EQ(d.value.header.application_id, app_id_bftp);
    EXPECT_EQ(d.value.data, (bytes{ 'a', 'b' }));

    auto h = decode_rcop_header(wire.data(), wire.size());
    ASSERT_TRUE(h);
    EXPECT_EQ(h.value, d.value.header);
}

TEST(RcopRoundTrip, Fixed)
{
    const rcop_pdu p = make(6, 200, 1000, app_id_tmmhs_tmi4, { 1, 2, 3, 4, 5 });
    auto d = decode_rcop(encode(p));
    ASSERT_TRUE(d);
    EXPECT_EQ(d.value, p);
}

TEST(RcopProperty, RandomValidValuesRoundTrip)
{
    std::mt19937 rng(5066);
    std::uniform_int_distribution<int> nib(0, 15), byte_d(0, 255), u16(0, 65535),
        len_d(0, 100);
    for (int i = 0; i < 5000; ++i) {
        rcop_pdu p = make(uint8_t(nib(rng)),
                          uint8_t(byte_d(rng)),
                          uint16_t(u16(rng)),
                          uint16_t(u16(rng)),
                          {});
        p.data.resize(size_t(len_d(rng)));
        for (auto& b : p.data)
            b = uint8_t(byte_d(rng));
        const bytes wire = encode(p);
        ASSERT_EQ(wire.size(), rcop_header_size + p.data.size());
        ASSERT_EQ(wire[0] & 0x0F, 0) << "reserved nibble must be sent as 0";
        auto d = decode_rcop(wire);
        ASSERT_TRUE(d) << i;
        ASSERT_EQ(d.value, p) << "iteration " << i << " wire " << to_hex(wire);
    }
}

TEST(RcopTolerance, ReservedBitsIgnored)
{
    auto d = decode_rcop(bytes{ 0x3F, 0x01, 0x00, 0x00, 0x10, 0x0C });
    ASSERT_TRUE(d);
    EXPECT_EQ(d.value.header.connection_id, 3);
    EXPECT_EQ(d.value.header.application_id, app_id_frap_v2);
    EXPECT_TRUE(d.value.data.empty());
}

TEST(RcopErrors, Truncated)
{
    EXPECT_EQ(decode_rcop(bytes{}).error, decode_error::truncated);
    EXPECT_EQ(decode_rcop(nullptr, 0).error, decode_error::truncated);
    for (size_t n = 1; n < rcop_header_size; ++n) {
        const bytes b(n, 0x11);
        EXPECT_EQ(decode_rcop(b).error, decode_error::truncated) << n;
        EXPECT_EQ(decode_rcop_header(b.data(), b.size()).error, decode_error::truncated);
    }
}

TEST(RcopErrors, EncodeRejectsConnectionIdAbove15)
{
    EXPECT_THROW(encode(make(16, 0, 0, 0, {})), encode_error);
    rcop_header h;
    h.connection_id = 0xFF;
    try {
        encode(h);
        FAIL() << "no throw";
    } catch (const encode_error& e) {
        EXPECT_NE(std::string(e.what()).find("connection_id"), std::string::npos);
    }
}

TEST(RcopConstants, SapsAndApplicationIds)
{
    EXPECT_EQ(rcop_sap, 6);
    EXPECT_EQ(udop_sap, 7);
    EXPECT_EQ(app_id_bftp, 0x1002);
    EXPECT_EQ(app_id_frap, 0x100B);
    EXPECT_EQ(app_id_frap_v2, 0x100C);
    EXPECT_EQ(app_id_tmmhs_tmi1, 0x2000);
    EXPECT_EQ(app_id_tmmhs_tmi5, 0x2004);
    EXPECT_STREQ(application_name(app_id_bftp), "BFTP (Basic File Transfer Protocol)");
    EXPECT_STREQ(application_name(0x8000), "user-defined");
    EXPECT_STREQ(application_name(0xFFFF), "user-defined");
    EXPECT_STREQ(application_name(0x0000), "unassigned");
    EXPECT_STREQ(application_name(0x7FFF), "unassigned");
}
