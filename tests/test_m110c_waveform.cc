/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

// Known answers for the STANAG 4539 high-rate (App C) waveform constants and the
// transmitter's layout, from shared/spec/test_vectors.json (m110c_appc: single
// source, tagged S there).
#include "phy/m110c_transmitter.h"
#include "phy/m110c_waveform.h"
#include "phy/psk_modulator.h"

#include "expect_error.h"
#include "modem_test_support.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <set>
#include <string>
#include <vector>

using namespace gr::hfstack::phy;

namespace {

const std::vector<int> preamble_4800L = {
    1, 5, 1, 3, 6, 1, 3, 1, 1, 6, 3, 7, 7, 3, 5, 4, 3, 6, 6, 4, 5, 4, 0, 2, 2, 2, 6, 0, 7,
    5, 7, 4, 0, 7, 5, 7, 1, 6, 1, 0, 5, 2, 2, 6, 2, 3, 6, 0, 0, 5, 1, 4, 2, 2, 2, 3, 4, 0,
    6, 2, 7, 4, 3, 3, 7, 2, 0, 2, 6, 4, 4, 1, 7, 6, 2, 0, 6, 2, 3, 6, 7, 4, 3, 6, 1, 3, 7,
    4, 6, 5, 7, 2, 0, 1, 1, 1, 4, 4, 0, 0, 5, 7, 7, 4, 7, 3, 5, 4, 1, 6, 5, 6, 6, 4, 6, 3,
    4, 3, 0, 7, 1, 3, 4, 7, 0, 1, 4, 3, 3, 3, 5, 1, 1, 1, 4, 6, 1, 0, 6, 0, 1, 3, 1, 4, 1,
    7, 7, 6, 3, 0, 0, 7, 2, 7, 2, 0, 2, 6, 1, 1, 1, 2, 7, 7, 5, 3, 3, 6, 0, 5, 3, 3, 1, 0,
    7, 1, 1, 0, 3, 0, 4, 0, 7, 3, 0, 0, 0, 0, 0, 2, 4, 6, 0, 4, 0, 4, 0, 6, 4, 2, 0, 0, 0,
    0, 0, 2, 4, 6, 0, 4, 0, 4, 0, 6, 4, 2, 2, 6, 2, 6, 2, 2, 6, 6, 2, 2, 2, 2, 2, 6, 2, 6,
    2, 6, 6, 2, 2, 6, 6, 6, 6, 6, 2, 6, 2, 6, 2, 2, 6, 6, 2, 2, 2, 2, 2, 6, 4, 4, 4, 4, 4,
    6, 0, 2, 4, 0, 4, 0, 4, 2, 0, 6, 4, 4, 4, 4, 4, 6, 0, 2, 4, 0, 4, 0, 4, 2, 0,
};

const std::vector<int> reinserted_4800L = {
    2, 2, 6, 2, 6, 2, 2, 6, 6, 2, 2, 2, 2, 2, 6, 2, 6, 2, 6, 6, 2, 2, 6, 6,
    6, 6, 6, 2, 6, 2, 6, 2, 2, 6, 6, 2, 2, 2, 2, 2, 6, 4, 4, 4, 4, 4, 6, 0,
    2, 4, 0, 4, 0, 4, 2, 0, 6, 4, 4, 4, 4, 4, 6, 0, 2, 4, 0, 4, 0, 4, 2, 0,
};

const std::string probe_signs_4800L =
    "-------++-+-+-++-+-------++-+-+-+-++-------++-+-+-+--+-------++-+-+--+++";

const std::vector<std::vector<int>> scrambler_first_32 = {
    { 1, 0, 0, 1, 4, 0, 3, 0, 1, 7, 4, 2, 5, 1, 4, 5,
      7, 2, 6, 6, 1, 1, 2, 1, 4, 2, 3, 1, 7, 7, 6, 4 },
    { 1, 0, 2, 4,  12, 0,  9,  3, 5, 13, 0,  11, 7, 9, 13, 9,
      8, 2, 4, 13, 2,  15, 11, 9, 4, 10, 13, 15, 4, 6, 5,  6 },
    { 1,  16, 16, 24, 16, 28, 20, 26, 16, 29, 5, 27, 9,  20, 16, 26,
      18, 31, 6,  9,  26, 30, 19, 12, 5,  19, 1, 24, 24, 20, 24, 18 },
    { 1,  8,  4,  3,  57, 20, 13, 44, 23, 54, 9,  10, 20, 11, 63, 38,
      36, 54, 15, 25, 37, 25, 0,  35, 41, 24, 41, 63, 34, 6,  23, 19 },
};

const std::vector<unsigned> load_3200US_first_16 = { 0,   97,  194, 291, 388, 485,
                                                     70,  167, 264, 361, 458, 43,
                                                     140, 237, 334, 431 };

m110c_mode mode(unsigned bps, m110c_interleaver interleaver)
{
    return *m110c_mode_for(bps, interleaver);
}

} // namespace

TEST(M110cWaveform, PreambleAndReinsertedSectionMatchKnownAnswers)
{
    const m110c_mode m = mode(4800, m110c_interleaver::long_);
    const std::vector<uint8_t> p = m110c_preamble(m);
    ASSERT_EQ(p.size(), m110c_preamble_symbols);
    EXPECT_EQ(std::vector<int>(p.begin(), p.end()), preamble_4800L);
    const std::vector<uint8_t> r = m110c_reinserted_section(m);
    ASSERT_EQ(r.size(), m110c_reinserted_symbols);
    EXPECT_EQ(std::vector<int>(r.begin(), r.end()), reinserted_4800L);
    // Every mode's preamble differs from every other's (its D0..D2 name it).
    std::set<std::vector<uint8_t>> seen;
    for (unsigned bps : { 3200u, 4800u, 6400u, 8000u, 9600u })
        for (unsigned i = 0; i < 6; ++i)
            EXPECT_TRUE(
                seen.insert(m110c_preamble(mode(bps, m110c_interleaver(i)))).second);
}

TEST(M110cWaveform, ProbeSignsFollowTheSchedule)
{
    const m110c_mode m = mode(4800, m110c_interleaver::long_);
    std::string signs;
    for (unsigned n = 0; n < 72; ++n)
        signs += m110c_probe_is_minus(m, n) ? '-' : '+';
    EXPECT_EQ(signs, probe_signs_4800L);
    const auto& plus = m110c_probe(false);
    const auto& minus = m110c_probe(true);
    for (unsigned k = 0; k < m110c_probe_symbols; ++k) {
        EXPECT_EQ(plus[k], plus[k % 16]);
        EXPECT_EQ(minus[k], (plus[k] + 4) % 8);
    }
}

TEST(M110cWaveform, ScramblerMatchesKnownAnswersInBothOrientations)
{
    for (unsigned n = 3; n <= 6; ++n) {
        const auto a = m110c_data_scrambler(n);
        EXPECT_EQ(std::vector<int>(a.begin(), a.begin() + 32), scrambler_first_32[n - 3])
            << n << " bits";
        // Orientation B starts alike and parts from the third symbol on.
        const auto b = m110c_data_scrambler(n, m110c_scrambler_orientation::b);
        EXPECT_EQ(a[0], b[0]);
        EXPECT_NE(std::vector<int>(a.begin(), a.end()),
                  std::vector<int>(b.begin(), b.end()));
    }
    // QPSK scrambles like 8PSK.
    EXPECT_EQ(m110c_data_scrambler(2), m110c_data_scrambler(3));
}

TEST(M110cWaveform, InterleaverLoadsAtTheIncrementAndIsAPermutation)
{
    const std::vector<uint32_t> order =
        m110c_fetch_order(mode(3200, m110c_interleaver::ultra_short));
    ASSERT_EQ(order.size(), 512u);
    for (unsigned n = 0; n < load_3200US_first_16.size(); ++n)
        EXPECT_EQ(order[load_3200US_first_16[n]], n);
    for (unsigned bps : { 3200u, 4800u, 6400u, 8000u, 9600u })
        for (unsigned i = 0; i < 6; ++i) {
            const m110c_mode m = mode(bps, m110c_interleaver(i));
            std::vector<uint32_t> o = m110c_fetch_order(m);
            EXPECT_EQ(o.size(), size_t(m.frames_per_block) * 256 * m.bits_per_symbol);
            std::sort(o.begin(), o.end());
            for (size_t k = 0; k < o.size(); ++k)
                ASSERT_EQ(o[k], k) << m.name();
        }
    EXPECT_TRUE(m110c_fetch_order(mode(12800, m110c_interleaver::short_)).empty());
}

TEST(M110cWaveform, CodesNameTheModesAndReservedOnesNone)
{
    for (unsigned bps : { 3200u, 4800u, 6400u, 8000u, 9600u })
        for (unsigned i = 0; i < 6; ++i) {
            const m110c_mode m = mode(bps, m110c_interleaver(i));
            const auto back = m110c_mode_by_code(m110c_rate_code(m),
                                                 m110c_interleaver_code(m.interleaver));
            ASSERT_TRUE(back);
            EXPECT_EQ(back->name(), m.name());
        }
    EXPECT_EQ(m110c_rate_code(mode(12800, m110c_interleaver::short_)), 6u);
    // 12800 bps has no interleaver: it announces S (the recommended reading) or, chosen
    // by its interleaver setting, US; a receiver takes either (and any legal code).
    EXPECT_EQ(m110c_mode_by_name("12800U")->interleaver, m110c_interleaver::short_);
    for (unsigned code : { 1u, 3u }) {
        const auto m = m110c_mode_by_code(6, code);
        ASSERT_TRUE(m);
        EXPECT_EQ(m->name(), "12800U");
        EXPECT_FALSE(m->coded);
    }
    EXPECT_FALSE(m110c_mode_by_code(0, 1));
    EXPECT_FALSE(m110c_mode_by_code(7, 1));
    EXPECT_FALSE(m110c_mode_by_code(1, 0));
    EXPECT_FALSE(m110c_mode_by_code(1, 7));
}

TEST(M110cWaveform, MapsAreTheStandardTables)
{
    // QPSK 00 01 11 10 -> 0 2 4 6; 8PSK is 110A's map with the tribit LSB inverted.
    EXPECT_EQ(m110c_map_bits(0, 2), 0);
    EXPECT_EQ(m110c_map_bits(1, 2), 2);
    EXPECT_EQ(m110c_map_bits(3, 2), 4);
    EXPECT_EQ(m110c_map_bits(2, 2), 6);
    const int psk8[8] = { 1, 0, 2, 3, 6, 7, 5, 4 };
    unsigned tribit_at[8];
    for (unsigned v = 0; v < 8; ++v) {
        EXPECT_EQ(m110c_map_bits(v, 3), psk8[v]);
        tribit_at[m110c_map_bits(v, 3)] = v;
    }
    // A Gray map: neighbours around the circle differ in one bit.
    for (unsigned s = 0; s < 8; ++s)
        EXPECT_EQ(__builtin_popcount(tribit_at[s] ^ tribit_at[(s + 1) % 8]), 1) << s;
    // QAM: the number itself, into peak-1 tables of 16, 32, 64 distinct points.
    for (unsigned n = 4; n <= 6; ++n) {
        const auto& c = m110c_constellation(n);
        ASSERT_EQ(c.size(), size_t(1) << n);
        float peak = 0;
        for (size_t i = 0; i < c.size(); ++i) {
            peak = std::max(peak, std::abs(c[i]));
            for (size_t j = 0; j < i; ++j)
                EXPECT_GT(std::abs(c[i] - c[j]), 0.1f);
        }
        EXPECT_NEAR(peak, 1.0f, 1e-4f);
        EXPECT_EQ(m110c_map_bits(unsigned(c.size()) - 1, n), c.size() - 1);
    }
    EXPECT_THROW(m110c_constellation(7), std::invalid_argument);
}

TEST(M110cWaveform, TailBitingMatchesBothReadingsOfTheExample)
{
    const std::vector<uint8_t> info = { 1, 0, 1, 1, 0, 0, 1, 1, 1, 0, 0, 0, 1, 0, 1, 0 };
    const std::vector<uint8_t> full_register = { 1, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0,
                                                 1, 1, 0, 0, 0, 1, 1, 1, 0, 0, 0,
                                                 0, 0, 1, 1, 1, 1, 0, 1, 1, 0 };
    EXPECT_EQ(m110c_tail_biting_encode(
                  info.data(), info.size(), m110c_tail_biting::from_full_register),
              full_register);
    // The default phase starts a pair later: bit 7's pair first.
    std::vector<uint8_t> bit_7(full_register.begin() + 2, full_register.end());
    bit_7.insert(bit_7.end(), full_register.begin(), full_register.begin() + 2);
    EXPECT_EQ(m110c_tail_biting_encode(info.data(), info.size()), bit_7);
    EXPECT_EQ(m110c_tail_biting_encode(
                  info.data(), info.size(), m110c_tail_biting::from_block_start),
              (std::vector<uint8_t>{ 0, 0, 0, 0, 1, 1, 1, 1, 0, 1, 1, 0, 1, 1, 0, 0,
                                     0, 0, 1, 0, 0, 0, 0, 1, 1, 0, 0, 0, 1, 1, 1, 0 }));
    EXPECT_THROW(m110c_tail_biting_encode(info.data(), 5), std::invalid_argument);
    // Bit 7's pair needs a bit 7.
    EXPECT_THROW(m110c_tail_biting_encode(info.data(), 7), std::invalid_argument);
    EXPECT_NO_THROW(
        m110c_tail_biting_encode(info.data(), 7, m110c_tail_biting::from_full_register));
}

TEST(M110cWaveform, PuncturingKeepsTheKnownPositions)
{
    const std::vector<uint8_t> mother = { 1, 1, 0, 1, 0, 0, 0, 1, 1, 0, 1, 0 };
    std::vector<uint8_t> kept;
    for (size_t i = 0; i < mother.size(); ++i)
        if (m110c_puncture_kept[i % 6])
            kept.push_back(mother[i]);
    EXPECT_EQ(kept, (std::vector<uint8_t>{ 1, 1, 0, 0, 0, 1, 1, 0 }));
}

TEST(M110cTransmitter, LaysOutPreambleFramesProbesAndReinsertion)
{
    // 4800L: two 36-frame blocks make 72 frames, so the section follows the last probe.
    const m110c_mode m = mode(4800, m110c_interleaver::long_);
    std::mt19937 rng(3);
    std::vector<uint8_t> data(5000);
    for (auto& b : data)
        b = uint8_t(rng());
    const auto points = m110c_transmit_points(m, data.data(), data.size());
    const transmission_time t = m110c_transmission_time(m, data.size());
    EXPECT_EQ(t.units, 2u);
    ASSERT_EQ(points.size(), size_t(std::lround(t.total_s * m110c_symbol_rate)));
    const auto& psk8 = m110c_constellation(3);
    const std::vector<uint8_t> preamble = m110c_preamble(m),
                               section = m110c_reinserted_section(m);
    for (size_t k = 0; k < points.size(); ++k) {
        const m110c_symbol_role role = m110c_role_of(k);
        uint8_t known = 0;
        switch (role.kind) {
        case m110c_symbol_kind::preamble:
            known = preamble[role.position];
            break;
        case m110c_symbol_kind::probe:
            known = m110c_probe(
                m110c_probe_is_minus(m, unsigned(role.frame % 72)))[role.position];
            break;
        case m110c_symbol_kind::reinserted:
            known = section[role.position];
            break;
        case m110c_symbol_kind::data:
            // 8PSK data: on the unit circle at a multiple of 45 degrees.
            EXPECT_NEAR(std::abs(points[k]), 1.0f, 1e-5f);
            continue;
        }
        ASSERT_LT(std::abs(points[k] - psk8[known]), 1e-5f) << "symbol " << k;
    }
    EXPECT_EQ(m110c_role_of(points.size() - 1).kind, m110c_symbol_kind::reinserted);
    EXPECT_EQ(m110c_role_of(points.size() - 1).frame, 71u);
}

TEST(M110cTransmitter, QamDataAreTheTablePointsOnTheProbesScale)
{
    // 16/32/64QAM data go out at the printed coordinates (outer points at amplitude 1),
    // beside probes of amplitude 1: no rescaling to unit mean power. Each data symbol is
    // the table point of its channel bits (mapped, scrambled by XOR), exactly.
    const std::vector<uint8_t> data = random_bytes(3000, 4);
    for (unsigned bps : { 6400u, 8000u, 9600u, 12800u }) {
        const m110c_mode m = mode(
            bps, bps == 12800 ? m110c_interleaver::short_ : m110c_interleaver::long_);
        m110c_readings full_register; // the phase m110c_table_points sends
        full_register.tail_biting = m110c_tail_biting::from_full_register;
        const auto points =
            m110c_transmit_points(m, data.data(), data.size(), false, full_register);
        ASSERT_EQ(points, m110c_table_points(m, data)) << m.name();
        double power = 0, peak = 0;
        size_t n = 0;
        for (size_t k = 0; k < points.size(); ++k) {
            if (m110c_role_of(k).kind != m110c_symbol_kind::data) {
                ASSERT_NEAR(std::abs(points[k]), 1.0f, 1e-6f)
                    << m.name() << " symbol " << k;
                continue;
            }
            power += std::norm(points[k]);
            peak = std::max(peak, double(std::abs(points[k])));
            ++n;
        }
        // The data's peak is the probes' amplitude; their mean power the table's.
        EXPECT_NEAR(peak, 1.0, 1e-6) << m.name();
        EXPECT_NEAR(power / double(n), m110c_constellation_power(m.bits_per_symbol), 0.03)
            << m.name();
        EXPECT_EQ(
            points.size(),
            size_t(std::lround(m110c_transmission_time(m, data.size()).total_s * 2400)))
            << m.name();
    }
    // The tables' mean powers (of the probes'), and a frame's with its probe.
    EXPECT_NEAR(m110c_constellation_power(4), 0.7835, 1e-3);
    EXPECT_NEAR(m110c_constellation_power(5), 0.6504, 1e-3);
    EXPECT_NEAR(m110c_constellation_power(6), 0.5815, 1e-3);
    EXPECT_NEAR(m110c_frame_power(mode(9600, m110c_interleaver::short_)),
                (256 * 0.5815 + 31) / 287,
                1e-3);
    EXPECT_NEAR(m110c_frame_power(mode(4800, m110c_interleaver::short_)), 1.0, 1e-6);
}

TEST(M110cTransmitter, ChannelBitsFillWholeBlocksAndCarryTheUserBitsUncodedAt12800)
{
    const std::vector<uint8_t> data = { 0x01, 0x80, 0xff };
    const m110c_mode u = mode(12800, m110c_interleaver::short_);
    const std::vector<uint8_t> bits = m110c_channel_bits(u, data.data(), data.size());
    ASSERT_EQ(bits.size(), 256u * 6);
    // LSB first per byte, then the EOM MSB first, then zeros.
    const std::vector<uint8_t> head = { 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
                                        0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1 };
    EXPECT_EQ(std::vector<uint8_t>(bits.begin(), bits.begin() + 24), head);
    uint32_t eom = 0;
    for (int b = 24; b < 56; ++b)
        eom = (eom << 1) | bits[size_t(b)];
    EXPECT_EQ(eom, 0x4B65A5B2u);
    EXPECT_EQ(std::count(bits.begin() + 56, bits.end(), 1), 0);
    // Coded: whole interleaver blocks.
    for (unsigned i = 0; i < 6; ++i) {
        const m110c_mode m = mode(3200, m110c_interleaver(i));
        EXPECT_EQ(m110c_channel_bits(m, data.data(), data.size()).size() %
                      m110c_interleaver_bits(m),
                  0u);
    }
}

TEST(M110cTransmitter, TheModulatorShapesPointsAsItShapesSymbolNumbers)
{
    psk_modulator_config c;
    c.rms = 0.3;
    const psk_modulator m(c);
    std::mt19937 rng(5);
    std::vector<uint8_t> symbols(500);
    for (auto& s : symbols)
        s = uint8_t(rng() % 8);
    std::vector<std::complex<float>> points;
    for (uint8_t s : symbols)
        points.push_back(m110c_constellation(3)[s]);
    const auto a = m.baseband(symbols), b = m.baseband(points);
    ASSERT_EQ(a.size(), b.size());
    for (size_t n = 0; n < a.size(); ++n)
        ASSERT_LT(std::abs(a[n] - b[n]), 1e-5f);
    EXPECT_EQ(m.audio(symbols), m.audio(points));
    // A 64QAM transmission (peak points at the probes' amplitude) comes out at rms^2
    // times its frames' mean power (0.63 of a PSK transmission's).
    std::vector<uint8_t> data(2000);
    for (auto& x : data)
        x = uint8_t(rng());
    const m110c_mode qam_mode = mode(9600, m110c_interleaver::short_);
    const auto qam =
        m.baseband(m110c_transmit_points(qam_mode, data.data(), data.size()));
    double power = 0;
    for (const auto& x : qam)
        power += std::norm(x);
    EXPECT_NEAR(power / double(qam.size()), 0.09 * m110c_frame_power(qam_mode), 0.004);
}
