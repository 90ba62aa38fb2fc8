/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

// Known answers for the 110A waveform constants, from shared/spec/test_vectors.json
// (each confirmed there by decoding the reference recordings or by two sources).
#include "phy/m110a_waveform.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <set>
#include <vector>

using namespace gr::hfstack::phy;

namespace {

const std::vector<int> scrambler_160 = {
    0, 2, 4, 3, 3, 6, 4, 5, 7, 6, 7, 0, 5, 5, 4, 3, 5, 4, 3, 7, 0, 7, 6, 2, 6, 2, 4,
    6, 7, 2, 4, 7, 5, 5, 7, 0, 7, 3, 3, 3, 7, 3, 3, 1, 4, 2, 3, 7, 0, 2, 7, 7, 3, 5,
    1, 0, 1, 4, 0, 5, 0, 0, 0, 0, 7, 5, 1, 4, 5, 4, 2, 0, 6, 1, 4, 7, 5, 0, 1, 0, 3,
    0, 3, 1, 3, 5, 1, 2, 5, 0, 1, 7, 1, 4, 6, 0, 2, 3, 3, 4, 2, 5, 2, 5, 4, 5, 7, 3,
    1, 0, 1, 6, 4, 1, 1, 2, 1, 4, 1, 5, 4, 2, 7, 4, 5, 1, 6, 4, 6, 3, 6, 4, 5, 0, 3,
    6, 4, 0, 1, 6, 3, 3, 5, 7, 0, 5, 7, 7, 2, 5, 2, 7, 7, 4, 7, 5, 5, 0, 5, 6
};

const std::vector<int> segment_2400S_count2 = {
    7, 4, 3, 0, 5, 1, 5, 0, 2, 2, 1, 1, 5, 7, 4, 3, 5, 0, 2, 6, 2, 1, 6, 2, 0, 0, 5, 0, 5,
    2, 6, 6, 7, 0, 3, 4, 5, 5, 5, 4, 2, 6, 1, 5, 5, 3, 4, 7, 5, 4, 2, 2, 2, 5, 6, 6, 0, 4,
    5, 4, 5, 6, 6, 2, 7, 0, 7, 0, 5, 5, 1, 0, 2, 6, 5, 1, 5, 3, 0, 3, 5, 4, 6, 6, 2, 5, 2,
    2, 0, 4, 1, 0, 5, 6, 2, 6, 7, 4, 3, 0, 5, 1, 5, 0, 2, 2, 1, 1, 5, 7, 4, 3, 5, 0, 2, 6,
    2, 1, 6, 2, 0, 0, 5, 0, 5, 2, 6, 6, 7, 0, 3, 4, 5, 5, 5, 4, 2, 6, 1, 5, 5, 3, 4, 7, 5,
    4, 2, 2, 2, 5, 6, 6, 0, 4, 5, 4, 5, 6, 6, 2, 7, 0, 7, 0, 5, 5, 1, 0, 2, 6, 5, 1, 5, 3,
    0, 3, 5, 4, 6, 6, 2, 5, 2, 2, 0, 4, 1, 0, 5, 6, 2, 6, 7, 0, 3, 4, 5, 5, 5, 4, 2, 6, 1,
    5, 5, 3, 4, 7, 5, 4, 2, 2, 2, 5, 6, 6, 0, 4, 5, 4, 5, 6, 6, 2, 7, 4, 7, 4, 5, 1, 1, 4,
    2, 2, 5, 5, 5, 7, 0, 7, 5, 0, 6, 2, 2, 1, 2, 6, 0, 0, 1, 4, 5, 2, 2, 2, 7, 4, 3, 0, 5,
    1, 5, 0, 2, 2, 1, 1, 5, 7, 4, 3, 5, 0, 2, 6, 2, 1, 6, 2, 0, 0, 5, 0, 5, 2, 6, 6, 7, 4,
    7, 4, 1, 5, 5, 0, 2, 2, 5, 5, 1, 3, 4, 3, 5, 0, 6, 2, 6, 5, 6, 2, 0, 0, 1, 4, 1, 6, 6,
    6, 7, 4, 3, 0, 1, 5, 1, 4, 2, 2, 1, 1, 1, 3, 0, 7, 5, 0, 2, 6, 6, 5, 2, 6, 0, 0, 5, 0,
    1, 6, 2, 2, 7, 4, 3, 0, 1, 5, 1, 4, 2, 2, 1, 1, 1, 3, 0, 7, 5, 0, 2, 6, 6, 5, 2, 6, 0,
    0, 5, 0, 1, 6, 2, 2, 7, 4, 3, 0, 1, 5, 1, 4, 2, 2, 1, 1, 1, 3, 0, 7, 5, 0, 2, 6, 6, 5,
    2, 6, 0, 0, 5, 0, 1, 6, 2, 2, 7, 4, 7, 4, 1, 5, 5, 0, 2, 2, 5, 5, 1, 3, 4, 3, 5, 0, 6,
    2, 6, 5, 6, 2, 0, 0, 1, 4, 1, 6, 6, 6, 7, 4, 3, 0, 5, 1, 5, 0, 2, 2, 1, 1, 5, 7, 4, 3,
    5, 0, 2, 6, 2, 1, 6, 2, 0, 0, 5, 0, 5, 2, 6, 6
};

const std::vector<int> segment_75L_count23 = {
    7, 4, 3, 0, 5, 1, 5, 0, 2, 2, 1, 1, 5, 7, 4, 3, 5, 0, 2, 6, 2, 1, 6, 2, 0, 0, 5, 0, 5,
    2, 6, 6, 7, 0, 3, 4, 5, 5, 5, 4, 2, 6, 1, 5, 5, 3, 4, 7, 5, 4, 2, 2, 2, 5, 6, 6, 0, 4,
    5, 4, 5, 6, 6, 2, 7, 0, 7, 0, 5, 5, 1, 0, 2, 6, 5, 1, 5, 3, 0, 3, 5, 4, 6, 6, 2, 5, 2,
    2, 0, 4, 1, 0, 5, 6, 2, 6, 7, 4, 3, 0, 5, 1, 5, 0, 2, 2, 1, 1, 5, 7, 4, 3, 5, 0, 2, 6,
    2, 1, 6, 2, 0, 0, 5, 0, 5, 2, 6, 6, 7, 0, 3, 4, 5, 5, 5, 4, 2, 6, 1, 5, 5, 3, 4, 7, 5,
    4, 2, 2, 2, 5, 6, 6, 0, 4, 5, 4, 5, 6, 6, 2, 7, 0, 7, 0, 5, 5, 1, 0, 2, 6, 5, 1, 5, 3,
    0, 3, 5, 4, 6, 6, 2, 5, 2, 2, 0, 4, 1, 0, 5, 6, 2, 6, 7, 0, 3, 4, 5, 5, 5, 4, 2, 6, 1,
    5, 5, 3, 4, 7, 5, 4, 2, 2, 2, 5, 6, 6, 0, 4, 5, 4, 5, 6, 6, 2, 7, 4, 7, 4, 5, 1, 1, 4,
    2, 2, 5, 5, 5, 7, 0, 7, 5, 0, 6, 2, 2, 1, 2, 6, 0, 0, 1, 4, 5, 2, 2, 2, 7, 4, 3, 0, 5,
    1, 5, 0, 2, 2, 1, 1, 5, 7, 4, 3, 5, 0, 2, 6, 2, 1, 6, 2, 0, 0, 5, 0, 5, 2, 6, 6, 7, 0,
    3, 4, 1, 1, 1, 0, 2, 6, 1, 5, 1, 7, 0, 3, 5, 4, 2, 2, 6, 1, 2, 2, 0, 4, 5, 4, 1, 2, 2,
    6, 7, 0, 3, 4, 1, 1, 1, 0, 2, 6, 1, 5, 1, 7, 0, 3, 5, 4, 2, 2, 6, 1, 2, 2, 0, 4, 5, 4,
    1, 2, 2, 6, 7, 0, 3, 4, 1, 1, 1, 0, 2, 6, 1, 5, 1, 7, 0, 3, 5, 4, 2, 2, 6, 1, 2, 2, 0,
    4, 5, 4, 1, 2, 2, 6, 7, 0, 3, 4, 1, 1, 1, 0, 2, 6, 1, 5, 1, 7, 0, 3, 5, 4, 2, 2, 6, 1,
    2, 2, 0, 4, 5, 4, 1, 2, 2, 6, 7, 0, 7, 0, 1, 1, 5, 4, 2, 6, 5, 1, 1, 7, 4, 7, 5, 4, 6,
    6, 6, 1, 6, 6, 0, 4, 1, 0, 1, 2, 6, 2, 7, 4, 3, 0, 5, 1, 5, 0, 2, 2, 1, 1, 5, 7, 4, 3,
    5, 0, 2, 6, 2, 1, 6, 2, 0, 0, 5, 0, 5, 2, 6, 6
};

const std::vector<int> fetch_75S = { 0,  23, 46, 69, 82, 15, 38, 51, 74, 7,  10, 33, 56,
                                     79, 2,  25, 48, 61, 84, 17, 20, 43, 66, 89, 12, 35,
                                     58, 71, 4,  27, 30, 53, 76, 9,  22, 45, 68, 81, 14,
                                     37, 40, 63, 86, 19, 32, 55, 78, 1,  24, 47, 50, 73,
                                     6,  29, 42, 65, 88, 11, 34, 57, 60, 83, 16, 39, 52,
                                     75, 8,  21, 44, 67, 70, 3,  26, 49, 62, 85, 18, 31,
                                     54, 77, 80, 13, 36, 59, 72, 5,  28, 41, 64, 87 };

} // namespace

TEST(M110aWaveform, DataScramblerRepeatsThe160KnownValues)
{
    const auto& s = m110a_data_scrambler();
    EXPECT_EQ(std::vector<int>(s.begin(), s.end()), scrambler_160);
}

TEST(M110aWaveform, PreambleSegmentsMatchTheKnownAnswers)
{
    const auto a = m110a_preamble_segment(6, 4, 2);
    EXPECT_EQ(std::vector<int>(a.begin(), a.end()), segment_2400S_count2);
    const auto b = m110a_preamble_segment(5, 5, 23);
    EXPECT_EQ(std::vector<int>(b.begin(), b.end()), segment_75L_count23);
}

TEST(M110aWaveform, InterleaverFetchOrdersMatchTheKnownAnswers)
{
    const auto order75 = m110a_fetch_order(*m110a_waveform_by_name("75S"));
    EXPECT_EQ(std::vector<int>(order75.begin(), order75.end()), fetch_75S);
    const std::vector<int> first40_600S = { 0,   49,  98,  147, 196, 205, 254, 303,
                                            352, 361, 410, 459, 508, 557, 566, 615,
                                            664, 713, 2,   51,  100, 149, 198, 207,
                                            256, 305, 354, 363, 412, 461, 510, 559,
                                            568, 617, 666, 715, 4,   53,  102, 151 };
    const auto order600 = m110a_fetch_order(*m110a_waveform_by_name("600S"));
    EXPECT_EQ(std::vector<int>(order600.begin(), order600.begin() + 40), first40_600S);
    // Every interleaved mode's order is a permutation of its block.
    for (const m110a_waveform& m : m110a_waveforms()) {
        if (!m.interleaved())
            continue;
        std::vector<uint32_t> o = m110a_fetch_order(m);
        ASSERT_EQ(o.size(), m.block_bits()) << m.name;
        std::sort(o.begin(), o.end());
        for (uint32_t i = 0; i < o.size(); ++i)
            ASSERT_EQ(o[i], i) << m.name;
    }
}

TEST(M110aWaveform, ProbesAndWalshSymbolsMatchTheKnownAnswers)
{
    const auto& scr = m110a_data_scrambler();
    // 2400S: probe symbols of frame 1 are symbol 0 plus scrambler positions 32..47.
    const std::vector<int> probe0 = { 5, 5, 7, 0, 7, 3, 3, 3, 7, 3, 3, 1, 4, 2, 3, 7 };
    for (unsigned k = 0; k < 16; ++k)
        EXPECT_EQ(scr[32 + k], probe0[k]) << k;
    // Frames 29 and 30 of a block carry D1 = 6 and D2 = 4 as Walsh patterns twice.
    const std::vector<int> d1_probe = { 2, 3, 7, 0, 6, 1, 2, 5, 4, 5, 3, 7, 5, 4, 1, 6 };
    const std::vector<int> d2_probe = { 0, 5, 7, 7, 6, 1, 6, 3, 7, 4, 7, 5, 1, 4, 1, 2 };
    for (unsigned k = 0; k < 16; ++k) {
        EXPECT_EQ((m110a_walsh8[6][k % 8] + scr[(28 * 48 + 32 + k) % 160]) % 8,
                  d1_probe[k])
            << k;
        EXPECT_EQ((m110a_walsh8[4][k % 8] + scr[(29 * 48 + 32 + k) % 160]) % 8,
                  d2_probe[k])
            << k;
    }
    // 75 bps: first Walsh symbol after the preamble carrying dibit 01, normal set; the
    // 45th (last of a short block) carrying dibit 00, exceptional set.
    const std::vector<int> first = { 0, 6, 4, 7, 3, 2, 4, 1, 7, 2, 7, 4, 5, 1, 4, 7,
                                     5, 0, 3, 3, 0, 3, 6, 6, 6, 6, 4, 2, 7, 6, 4, 3 };
    const std::vector<int> last = { 6, 3, 6, 4, 1, 4, 7, 2, 4, 0, 1, 6, 7, 7, 1, 3,
                                    0, 5, 7, 7, 6, 1, 6, 3, 7, 4, 7, 5, 1, 4, 1, 2 };
    const auto normal = m110a_walsh_chips(m110a_walsh_symbol_of_dibit(1), false);
    const auto exceptional = m110a_walsh_chips(m110a_walsh_symbol_of_dibit(0), true);
    for (unsigned k = 0; k < 32; ++k) {
        EXPECT_EQ((normal[k] + scr[k]) % 8, first[k]) << k;
        EXPECT_EQ((exceptional[k] + scr[(44 * 32 + k) % 160]) % 8, last[k]) << k;
    }
}

TEST(M110aWaveform, MapsAreModifiedGrayWithTheFirstBitAsMsb)
{
    // Symbol s carries tribit gray(s) = s ^ (s >> 1).
    for (unsigned s = 0; s < 8; ++s)
        EXPECT_EQ(m110a_map_tribit(s ^ (s >> 1)), s);
    EXPECT_EQ(m110a_map_dibit(0b00), 0);
    EXPECT_EQ(m110a_map_dibit(0b01), 2);
    EXPECT_EQ(m110a_map_dibit(0b11), 4);
    EXPECT_EQ(m110a_map_dibit(0b10), 6);
    EXPECT_EQ(m110a_map_bit(0), 0);
    EXPECT_EQ(m110a_map_bit(1), 4);
    EXPECT_EQ(m110a_walsh_symbol_of_dibit(0b10), 3u);
    EXPECT_EQ(m110a_walsh_symbol_of_dibit(0b11), 2u);
}

TEST(M110aWaveform, ModeTableIsConsistent)
{
    std::set<std::pair<unsigned, unsigned>> codes;
    for (const m110a_waveform& m : m110a_waveforms()) {
        EXPECT_TRUE(codes.insert({ m.d1, m.d2 }).second) << m.name << " repeats a D1/D2";
        EXPECT_EQ(m110a_waveform_by_code(m.d1, m.d2), &m);
        EXPECT_EQ(m110a_waveform_by_name(m.name), &m);
        const double frame_s = (m.unknown_symbols + m.known_symbols) / 2400.0;
        if (m.interleaved()) {
            // A block holds exactly the coded bits of its span: user bits x 2 x repeat.
            const double span_s = m.frames_per_block * frame_s;
            EXPECT_NEAR(
                span_s, m.interleaver == m110a_interleaver::short_ ? 0.6 : 4.8, 1e-9)
                << m.name;
            EXPECT_NEAR(double(m.block_bits()), m.user_bps * span_s * 2 * m.repeat, 1e-6)
                << m.name;
            // and exactly the bits its data symbols carry.
            const double symbols = m.frames_per_block * m.unknown_symbols /
                                   (m.modulation == m110a_modulation::walsh ? 32.0 : 1.0);
            EXPECT_NEAR(double(m.block_bits()), symbols * m.bits_per_symbol, 1e-6)
                << m.name;
        }
    }
    EXPECT_EQ(m110a_waveform_by_name("1200Z"), nullptr);
    EXPECT_EQ(m110a_waveform_by_code(5, 6), nullptr); // reserved
}
