/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

// Air time of 110A serial-tone transmissions, against values worked out by hand from
// the standard.
#include "phy/m110a_timing.h"

#include <gtest/gtest.h>

using namespace gr::hfstack::phy;

namespace {
m110a_mode mode(unsigned bps, m110a_interleaver il)
{
    auto m = m110a_mode_for(bps, il);
    EXPECT_TRUE(m.has_value()) << bps;
    return *m;
}
} // namespace

TEST(M110aTiming, InterleaverBlocksHoldTheSpecifiedCodedBits)
{
    // m110a.json intl_bits (coded bits per block) = user bits per block x FEC expansion
    // (1/2 code, with x4 repetition at 150 bps and x2 at 300 bps).
    struct expect {
        unsigned bps, expansion, bits_short, bits_long;
    };
    for (auto e : { expect{ 75, 2, 90, 720 },
                    expect{ 150, 8, 720, 5760 },
                    expect{ 300, 4, 720, 5760 },
                    expect{ 600, 2, 720, 5760 },
                    expect{ 1200, 2, 1440, 11520 },
                    expect{ 2400, 2, 2880, 23040 } }) {
        const auto s = mode(e.bps, m110a_interleaver::short_);
        const auto l = mode(e.bps, m110a_interleaver::long_);
        EXPECT_DOUBLE_EQ(s.unit_s(), 0.6) << e.bps;
        EXPECT_DOUBLE_EQ(l.unit_s(), 4.8) << e.bps;
        EXPECT_DOUBLE_EQ(s.unit_bits() * e.expansion, e.bits_short) << e.bps;
        EXPECT_DOUBLE_EQ(l.unit_bits() * e.expansion, e.bits_long) << e.bps;
    }
}

TEST(M110aTiming, KnownAnswers)
{
    // 100 bytes at 2400S: 800 + 32 EOM + 144 flush = 976 bits in one 1440-bit block.
    auto t = m110a_transmission_time(mode(2400, m110a_interleaver::short_), 100);
    EXPECT_DOUBLE_EQ(t.preamble_s, 0.6);
    EXPECT_EQ(t.units, 1u);
    EXPECT_EQ(t.fill_bits, 464u);
    EXPECT_DOUBLE_EQ(t.total_s, 1.2);
    // Long interleaver: 24 preamble segments and a 4.8 s block.
    t = m110a_transmission_time(mode(2400, m110a_interleaver::long_), 100);
    EXPECT_DOUBLE_EQ(t.total_s, 9.6);
    // 1000 bytes at 1200S: 8176 bits in 12 blocks of 720.
    t = m110a_transmission_time(mode(1200, m110a_interleaver::short_), 1000);
    EXPECT_EQ(t.units, 12u);
    EXPECT_NEAR(t.total_s, 7.8, 1e-9);
    // Nothing but EOM and flush at 75S: 176 bits in four 45-bit blocks.
    t = m110a_transmission_time(mode(75, m110a_interleaver::short_), 0);
    EXPECT_EQ(t.units, 4u);
    EXPECT_EQ(t.fill_bits, 4u);
    EXPECT_NEAR(t.total_s, 3.0, 1e-9);
    // Not interleaved: padded to whole frames. 4800U: 96 bits per 20 ms frame.
    t = m110a_transmission_time(mode(4800, m110a_interleaver::zero), 100);
    EXPECT_EQ(t.units, 11u);
    EXPECT_NEAR(t.total_s, 0.6 + 0.22, 1e-9);
    // 1200 bps, zero interleaver: 20 bits per 40-symbol frame.
    t = m110a_transmission_time(mode(1200, m110a_interleaver::zero), 10);
    EXPECT_EQ(t.units, 13u);
    EXPECT_NEAR(t.data_s, 13 * 40 / 2400.0, 1e-12);
}

TEST(M110aTiming, ModesThe110aLacksAreRefused)
{
    EXPECT_FALSE(m110a_mode_for(4800, m110a_interleaver::short_));
    EXPECT_FALSE(m110a_mode_for(3600, m110a_interleaver::short_));
    EXPECT_FALSE(m110a_mode_for(9600, m110a_interleaver::long_));
    EXPECT_EQ(mode(600, m110a_interleaver::long_).name(), "600L");
    // 150 bps carries 2.5 user bits per frame: without interleaving, two frames pad.
    EXPECT_EQ(mode(150, m110a_interleaver::zero).frames_per_block, 2u);
    EXPECT_EQ(mode(1200, m110a_interleaver::zero).frames_per_block, 1u);
    EXPECT_EQ(mode(4800, m110a_interleaver::zero).name(), "4800U");
}

TEST(M110aTiming, AirTimeGrowsWithBytesAndTendsToTheUserRate)
{
    for (unsigned bps : { 75u, 150u, 300u, 600u, 1200u, 2400u }) {
        for (auto il : { m110a_interleaver::zero,
                         m110a_interleaver::short_,
                         m110a_interleaver::long_ }) {
            const auto m = mode(bps, il);
            double previous = 0;
            for (size_t bytes = 0; bytes < 3000; bytes += 37) {
                const auto t = m110a_transmission_time(m, bytes);
                EXPECT_GE(t.total_s, previous);
                EXPECT_LT(t.fill_bits, size_t(m.unit_bits()));
                previous = t.total_s;
            }
            const auto big = m110a_transmission_time(m, 100000);
            EXPECT_NEAR(big.data_s, 800000.0 / bps, m.unit_s() + 176.0 / bps) << m.name();
        }
    }
}

TEST(M110aTiming, AStreamingReceiverKnowsEachBlocksBytesAtItsEnd)
{
    // 1000 bytes at 1200S: twelve 720-bit (90-byte) blocks after a 0.6 s preamble; the
    // first eleven complete 90 bytes each, the twelfth the last 10 and the EOM.
    const auto w = mode(1200, m110a_interleaver::short_).timing();
    const auto pieces = decoding_schedule(w, 1000);
    ASSERT_EQ(pieces.size(), 12u);
    for (size_t i = 0; i + 1 < pieces.size(); ++i) {
        EXPECT_EQ(pieces[i].bytes_end, 90 * (i + 1)) << i;
        EXPECT_NEAR(pieces[i].time_s, 0.6 + 0.6 * double(i + 1), 1e-9) << i;
    }
    EXPECT_EQ(pieces.back().bytes_end, 1000u);
    EXPECT_NEAR(pieces.back().time_s, transmission_time_of(w, 1000).total_s, 1e-12);
    // Bytes that fit before the last block (trailer alone in it): no piece repeats a
    // count.
    const auto short_one = decoding_schedule(w, 90);
    ASSERT_EQ(short_one.size(), 2u);
    EXPECT_EQ(short_one[0].bytes_end, 90u);
    EXPECT_EQ(short_one[1].bytes_end, 90u);
}

TEST(M110aTiming, ReinsertedSectionsDelayTheBlocksAfterThem)
{
    waveform_timing w;
    w.preamble_s = 1;
    w.unit_bits = 80; // 10 bytes a unit
    w.unit_s = 2;
    w.units_per_reinsertion = 2;
    w.reinsertion_s = 0.5;
    const auto pieces = decoding_schedule(w, 40); // 320 bits: four units, then the last
    ASSERT_EQ(pieces.size(), 4u);
    EXPECT_DOUBLE_EQ(pieces[0].time_s, 3.0);
    EXPECT_DOUBLE_EQ(pieces[1].time_s, 5.0);
    EXPECT_DOUBLE_EQ(pieces[2].time_s, 7.5); // after the section re-inserted at 5 s
    EXPECT_EQ(pieces[2].bytes_end, 30u);
    EXPECT_EQ(pieces[3].bytes_end, 40u);
    EXPECT_DOUBLE_EQ(pieces[3].time_s, transmission_time_of(w, 40).total_s);
    // A linear-shape modem hands everything over at the end.
    waveform_timing linear;
    linear.bit_rate = 800;
    ASSERT_EQ(decoding_schedule(linear, 100).size(), 1u);
}
