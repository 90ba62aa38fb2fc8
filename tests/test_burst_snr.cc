/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

// The burst's SNR report: the mean over chunks of 64 known symbols of each chunk's SNR
// in dB, so that a stretch at a low SNR counts by its share of the burst, not by where
// it falls.
#include "phy/burst_snr.h"

#include <gtest/gtest.h>

#include <cmath>

using namespace gr::hfstack::phy;

namespace {
const double to_3khz_db = 10 * std::log10(3000.0 / 2400.0);

void add_chunks(burst_snr& s, double error_power, size_t chunks)
{
    for (size_t k = 0; k < chunks * burst_snr::chunk_symbols; ++k)
        s.add(error_power);
}
} // namespace

TEST(BurstSnr, ASteadyErrorPowerReadsAsItsSnrIn3kHz)
{
    burst_snr s;
    add_chunks(s, 0.01, 5);
    EXPECT_EQ(s.chunks(), 5u);
    EXPECT_NEAR(s.snr_db(), 20.0 - to_3khz_db, 1e-9);
    EXPECT_NEAR(serial_tone_snr_3khz_db(1.0, 0.01), 20.0 - to_3khz_db, 1e-12);
    // QAM: the signal's mean power under the probes' amplitude.
    EXPECT_NEAR(s.snr_db(0.5), 20.0 - 10 * std::log10(2.0) - to_3khz_db, 1e-9);
}

TEST(BurstSnr, AFadeCountsByItsShareOfTheBurstWhereverItFalls)
{
    // Nine chunks at 20 dB and one at 0 dB: 18 dB (in dB, not in power, where the fade
    // alone would give 10 dB), whether the fade comes first or last.
    burst_snr last, first;
    add_chunks(last, 0.01, 9);
    add_chunks(last, 1.0, 1);
    add_chunks(first, 1.0, 1);
    add_chunks(first, 0.01, 9);
    EXPECT_NEAR(last.snr_db(), 18.0 - to_3khz_db, 1e-9);
    EXPECT_NEAR(first.snr_db(), last.snr_db(), 1e-9);
}

TEST(BurstSnr, APartialChunkCountsFromHalfAChunk)
{
    burst_snr s;
    for (size_t k = 0; k + 1 < burst_snr::chunk_symbols / 2; ++k)
        s.add(0.01);
    EXPECT_TRUE(std::isnan(s.snr_db()));
    EXPECT_EQ(s.chunks(), 0u);
    s.add(0.01);
    EXPECT_EQ(s.chunks(), 1u);
    EXPECT_NEAR(s.snr_db(), 20.0 - to_3khz_db, 1e-9);
    // A whole chunk at 20 dB, then half a chunk at 10 dB: 15 dB.
    for (size_t k = 0; k < burst_snr::chunk_symbols / 2; ++k)
        s.add(0.01);
    for (size_t k = 0; k < burst_snr::chunk_symbols / 2; ++k)
        s.add(0.1);
    EXPECT_EQ(s.chunks(), 2u);
    EXPECT_NEAR(s.snr_db(), 15.0 - to_3khz_db, 1e-9);
}

TEST(BurstSnr, StartForgetsTheLastBurstAndNoErrorReadsSixtyDb)
{
    burst_snr s;
    add_chunks(s, 1.0, 3);
    s.start();
    EXPECT_TRUE(std::isnan(s.snr_db()));
    add_chunks(s, 0.0, 2);
    EXPECT_NEAR(s.snr_db(), 60.0 - to_3khz_db, 1e-9);
}
