/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "dl/crc.h"

#include <gtest/gtest.h>

#include <cstring>

using namespace gr::hfstack::dl;

namespace {
const uint8_t check_string[] = { '1', '2', '3', '4', '5', '6', '7', '8', '9' };
const uint8_t warning_header[] = { 0xF0, 0x00, 0x00, 0x47, 0x05, 0x64, 0x02 };
} // namespace

// Check values of STANAG 5066 Annex C.
TEST(Crc16, CheckValue) { EXPECT_EQ(crc16_s5066(check_string, 9), 0x7D01); }
TEST(Crc32, CheckValue) { EXPECT_EQ(crc32_s5066(check_string, 9), 0x6738A384u); }
TEST(Crc16, WarningHeaderVector) { EXPECT_EQ(crc16_s5066(warning_header, 7), 0x1E5F); }
TEST(Crc32, WarningHeaderVector)
{
    EXPECT_EQ(crc32_s5066(warning_header, 7), 0xF4178F95u);
}

TEST(Crc16, TransmittedLsbFirst)
{
    std::vector<uint8_t> out;
    put_crc16_le(out, 0x1E5F);
    EXPECT_EQ(out, (std::vector<uint8_t>{ 0x5F, 0x1E }));
    EXPECT_EQ(get_crc16_le(out.data()), 0x1E5F);
}

TEST(Crc32, TransmittedLsbFirst)
{
    std::vector<uint8_t> out;
    put_crc32_le(out, 0xF4178F95u);
    EXPECT_EQ(out, (std::vector<uint8_t>{ 0x95, 0x8F, 0x17, 0xF4 }));
    EXPECT_EQ(get_crc32_le(out.data()), 0xF4178F95u);
}

// The sliced CRC-32 must equal the bitwise definition for every length and split.
TEST(Crc32, SlicedEqualsBitwiseAndIsIncremental)
{
    auto bitwise = [](const uint8_t* p, size_t n) {
        uint32_t c = 0;
        for (size_t i = 0; i < n; ++i) {
            c ^= p[i];
            for (int b = 0; b < 8; ++b)
                c = (c & 1) ? (c >> 1) ^ 0xF3A4E550u : c >> 1;
        }
        return c;
    };
    std::vector<uint8_t> data(257);
    for (size_t i = 0; i < data.size(); ++i)
        data[i] = uint8_t(i * 37 + 11);
    for (size_t n = 0; n <= data.size(); ++n) {
        ASSERT_EQ(crc32_s5066(data.data(), n), bitwise(data.data(), n)) << n;
        const size_t half = n / 3;
        ASSERT_EQ(
            crc32_s5066(data.data() + half, n - half, crc32_s5066(data.data(), half)),
            bitwise(data.data(), n));
    }
}

TEST(Crc16, DetectsEverySingleBitError)
{
    std::vector<uint8_t> data(warning_header, warning_header + 7);
    const uint16_t good = crc16_s5066(data.data(), data.size());
    for (size_t bit = 0; bit < data.size() * 8; ++bit) {
        data[bit / 8] ^= uint8_t(1 << (bit % 8));
        EXPECT_NE(crc16_s5066(data.data(), data.size()), good) << bit;
        data[bit / 8] ^= uint8_t(1 << (bit % 8));
    }
}
