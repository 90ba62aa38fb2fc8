/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "dl/transmission.h"

#include <gtest/gtest.h>

#include <cmath>

using namespace gr::hfstack;
using namespace gr::hfstack::dl;

TEST(Transmission, AirTimeIsLinearInBytes)
{
    phy::waveform_timing w{ 0.6, 2400.0, 0.2 };
    EXPECT_DOUBLE_EQ(air_time(w, 0), 0.8);
    EXPECT_DOUBLE_EQ(air_time(w, 300), 0.6 + 1.0 + 0.2);
}

TEST(Transmission, EotRoundsUpToHalfSecondsAndSaturates)
{
    EXPECT_EQ(eot_field(0.0), 0);
    EXPECT_EQ(eot_field(-3.0), 0);
    EXPECT_EQ(eot_field(0.01), 1);
    EXPECT_EQ(eot_field(0.5), 1);
    EXPECT_EQ(eot_field(0.51), 2);
    EXPECT_EQ(eot_field(10.0), 20);
    EXPECT_EQ(eot_field(127.5), 255);
    EXPECT_EQ(eot_field(600.0), 255);
}

// 75 bps: a 200-byte D_PDU takes about 22 s (s5066.md); five of them fill 127.5 s.
TEST(Transmission, Five200ByteDpdusAt75Bps)
{
    phy::waveform_timing w{ 4.8, 75.0, 0.0 };
    dpdu d;
    d.type = dpdu_type::data_only;
    d.destination = 1;
    d.source = 2;
    d.segment.resize(200 - encoded_size(d));
    ASSERT_EQ(encoded_size(d), 200u);
    EXPECT_NEAR(200 * 8 / 75.0, 21.3, 0.1);
    std::vector<size_t> sizes(10, 200);
    EXPECT_EQ(dpdus_that_fit(sizes, w), 5u);
    EXPECT_EQ(dpdus_that_fit(sizes, w, 20.0), 0u);
    EXPECT_EQ(dpdus_that_fit({}, w), 0u);
}

TEST(Transmission, StampedEotCountsDownToTheEndOfTheBurst)
{
    phy::waveform_timing w{ 1.0, 1200.0, 0.5 };
    std::vector<dpdu> burst(4);
    for (auto& d : burst) {
        d.type = dpdu_type::data_only;
        d.destination = 1;
        d.source = 2;
        d.segment.resize(300 - encoded_size(d)); // 300 bytes = 2 s each at 1200 bps
    }
    stamp_eot(burst, w);
    // Burst: 1 s preamble, 4 x 2 s, 0.5 s tail = 9.5 s; D_PDU i starts at 1 + 2i.
    EXPECT_EQ(burst[0].eot, 17); // 8.5 s left
    EXPECT_EQ(burst[1].eot, 13); // 6.5 s
    EXPECT_EQ(burst[2].eot, 9);  // 4.5 s
    EXPECT_EQ(burst[3].eot, 5);  // 2.5 s
    // Stamping does not change sizes, so re-stamping is stable.
    auto again = burst;
    stamp_eot(again, w);
    for (size_t i = 0; i < burst.size(); ++i)
        EXPECT_EQ(again[i].eot, burst[i].eot);
}

// A block waveform: the burst lasts whole units, the trailer included.
TEST(Transmission, BlockWaveformPadsToWholeUnits)
{
    phy::waveform_timing w;
    w.preamble_s = 0.6;
    w.unit_bits = 720; // 1200 bps, 0.6 s blocks
    w.unit_s = 0.6;
    w.bit_rate = 1200;
    w.trailer_bits = 176;
    EXPECT_DOUBLE_EQ(air_time(w, 0), 1.2);
    EXPECT_DOUBLE_EQ(air_time(w, 68), 1.2); // 544 + 176 = 720 bits: one block
    EXPECT_DOUBLE_EQ(air_time(w, 69), 1.8); // 728 bits: two
    // 127.5 s: 211 blocks after the preamble, 151920 bits less the trailer.
    EXPECT_EQ(phy::max_bytes_within(w, 127.5), (211u * 720u - 176u) / 8u);
    EXPECT_LE(air_time(w, phy::max_bytes_within(w, 127.5)), 127.5);
    EXPECT_GT(air_time(w, phy::max_bytes_within(w, 127.5) + 1), 127.5);
    EXPECT_EQ(phy::max_bytes_within(w, 0.5), 0u);
}

TEST(Transmission, ReinsertedSectionsCountAgainstTheLimit)
{
    phy::waveform_timing w;
    w.unit_bits = 100;
    w.unit_s = 1.0;
    w.bit_rate = 100;
    w.units_per_reinsertion = 2;
    w.reinsertion_s = 0.5;
    EXPECT_DOUBLE_EQ(air_time(w, 25), 2.5); // 200 bits, 2 units and a section
    EXPECT_DOUBLE_EQ(air_time(w, 26), 3.5);
    EXPECT_EQ(phy::max_bytes_within(w, 4.9), 37u); // 4 units would need 5 s
    EXPECT_EQ(phy::max_bytes_within(w, 5.0), 50u);
}

TEST(Transmission, LinearLimitMatchesTheAirTime)
{
    phy::waveform_timing w{ 0.6, 2400.0, 0.2 };
    const size_t most = phy::max_bytes_within(w, 10.0);
    EXPECT_EQ(most, 2760u); // (10 - 0.8) s x 300 bytes/s
    EXPECT_LE(air_time(w, most), 10.0);
    EXPECT_GT(air_time(w, most + 1), 10.0);
}

// The budget of one transmission (dl::transmission_budget): D_PDUs go in while the
// burst stays within max_s, each stamped with our address; the room left for payload
// is what still fits after the headers.
TEST(Transmission, BudgetTakesDpdusWhileTheBurstFits)
{
    const phy::waveform_timing phy{ 0.6, 1200.0, 0.6 }; // 150 bytes a second, 1.2 s fixed
    transmission_budget b(phy, 3.2, 7);                 // 2 s of bytes: 300
    EXPECT_EQ(b.room(0), 300u);
    EXPECT_EQ(b.room(16), 284u);
    dpdu d;
    d.type = dpdu_type::data_only;
    d.destination = 9;
    d.segment = bytes(100, 0xAA);
    const size_t n = encoded_size(d);
    ASSERT_TRUE(b.add(d));
    ASSERT_TRUE(b.add(d));
    EXPECT_EQ(b.bytes(), 2 * n);
    EXPECT_EQ(b.room(0), 300 - 2 * n);
    EXPECT_FALSE(b.fits(300 - 2 * n + 1));
    EXPECT_FALSE(b.add(d)); // a third would not fit: nothing added
    ASSERT_EQ(b.frames().size(), 2u);
    for (const auto& f : b.frames())
        EXPECT_EQ(f.source, 7u);
    EXPECT_EQ(b.room(1000), 0u);
    EXPECT_THROW(transmission_budget(phy, 0, 7), std::invalid_argument);
    EXPECT_THROW(transmission_budget(phy, std::nan(""), 7), std::invalid_argument);
}
