/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

// Air time of STANAG 4539 Appendix C transmissions, against values worked out by hand
// from the standard.
#include "phy/m110c_timing.h"

#include <gtest/gtest.h>

using namespace gr::hfstack::phy;

namespace {
m110c_mode mode(unsigned bps, m110c_interleaver il)
{
    auto m = m110c_mode_for(bps, il);
    EXPECT_TRUE(m.has_value()) << bps;
    return *m;
}
constexpr m110c_interleaver all[] = {
    m110c_interleaver::ultra_short, m110c_interleaver::very_short,
    m110c_interleaver::short_,      m110c_interleaver::medium,
    m110c_interleaver::long_,       m110c_interleaver::very_long
};
} // namespace

TEST(M110cTiming, BlocksMatchTheSpecifiedInterleaverSizes)
{
    // m110c_appc.json interleaver.size_bits (coded bits per block); user bits are 3/4.
    const unsigned rates[] = { 3200, 4800, 6400, 8000, 9600 };
    const unsigned size_us[] = { 512, 768, 1024, 1280, 1536 };
    const unsigned frames[] = { 1, 3, 9, 18, 36, 72 };
    for (unsigned r = 0; r < 5; ++r)
        for (unsigned i = 0; i < 6; ++i) {
            const auto m = mode(rates[r], all[i]);
            EXPECT_EQ(m.frames_per_block, frames[i]);
            EXPECT_DOUBLE_EQ(m.user_bits_per_frame() * m.frames_per_block / 0.75,
                             double(size_us[r]) * frames[i])
                << m.name();
        }
}

TEST(M110cTiming, KnownAnswers)
{
    // 1000 bytes at 9600S: 8000 + 32 EOM bits in one block of 9 x 1152 user bits.
    auto t = m110c_transmission_time(mode(9600, m110c_interleaver::short_), 1000);
    EXPECT_EQ(t.units, 1u);
    EXPECT_EQ(t.fill_bits, 10368u - 8032u);
    EXPECT_NEAR(t.preamble_s, 287 / 2400.0, 1e-12);
    EXPECT_NEAR(t.data_s, 9 * 287 / 2400.0, 1e-12);
    // 100 bytes at 3200US: 832 bits in three one-frame blocks of 384.
    t = m110c_transmission_time(mode(3200, m110c_interleaver::ultra_short), 100);
    EXPECT_EQ(t.units, 3u);
    EXPECT_NEAR(t.data_s, 3 * 287 / 2400.0, 1e-12);
    // A full 72-frame block is followed by the re-inserted section: 8.64 s.
    t = m110c_transmission_time(mode(9600, m110c_interleaver::very_long), 1);
    EXPECT_NEAR(t.data_s, 8.64, 1e-12);
    // 12800 bps: uncoded 64QAM, 1536 bits per frame, no interleaver.
    const auto u = mode(12800, m110c_interleaver::long_);
    EXPECT_EQ(u.name(), "12800U");
    t = m110c_transmission_time(u, 1000);
    EXPECT_EQ(t.units, 6u); // 8032 bits
}

TEST(M110cTiming, LongTransmissionsRunAtTheNominalRate)
{
    for (unsigned bps : { 3200u, 4800u, 6400u, 8000u, 9600u })
        for (auto il : all) {
            const auto m = mode(bps, il);
            const auto t = m110c_transmission_time(m, 1'000'000);
            // Exact rate once whole groups of 72 frames are counted (App C arithmetic).
            EXPECT_NEAR(t.data_s, 8'000'032.0 / bps, 8.64) << m.name();
        }
    EXPECT_FALSE(m110c_mode_for(2400, m110c_interleaver::short_));
    EXPECT_EQ(mode(4800, m110c_interleaver::very_short).name(), "4800VS");
}
