/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

// The burst's SNR report: the mean over chunks of 64 known symbols of each chunk's SNR
// in dB, so that a stretch at a low SNR counts by its share of the burst, not by where
// it falls; and the same over the burst's last recent_window_s seconds.
#include "phy/burst_snr.h"

#include <gtest/gtest.h>

#include <cmath>

using namespace gr::hfstack::phy;

namespace {
const double to_3khz_db = 10 * std::log10(3000.0 / 2400.0);

// A report fed known symbols at 800 a second (110A 2400 bps: a third of 2400 Bd).
struct timed_report {
    burst_snr report;
    double t = 0;

    void symbols(double error_power, size_t n)
    {
        for (size_t k = 0; k < n; ++k, t += 1.0 / 800.0)
            report.add(error_power, t);
    }
    void chunks(double error_power, size_t n)
    {
        symbols(error_power, n * burst_snr::chunk_symbols);
    }
    void seconds(double error_power, double s)
    {
        symbols(error_power, size_t(s * 800.0));
    }
};
} // namespace

TEST(BurstSnr, ASteadyErrorPowerReadsAsItsSnrIn3kHz)
{
    timed_report r;
    r.chunks(0.01, 5);
    const burst_snr& s = r.report;
    EXPECT_EQ(s.chunks(), 5u);
    EXPECT_NEAR(s.snr_db(), 20.0 - to_3khz_db, 1e-9);
    EXPECT_NEAR(serial_tone_snr_3khz_db(1.0, 0.01), 20.0 - to_3khz_db, 1e-12);
    // QAM: the signal's mean power under the probes' amplitude.
    EXPECT_NEAR(s.snr_db(0.5), 20.0 - 10 * std::log10(2.0) - to_3khz_db, 1e-9);
    // A burst shorter than the window: the recent report is the whole burst's.
    EXPECT_NEAR(s.recent_snr_db(0.5), s.snr_db(0.5), 1e-9);
}

TEST(BurstSnr, AFadeCountsByItsShareOfTheBurstWhereverItFalls)
{
    // Nine chunks at 20 dB and one at 0 dB: 18 dB (in dB, not in power, where the fade
    // alone would give 10 dB), whether the fade comes first or last.
    timed_report last, first;
    last.chunks(0.01, 9);
    last.chunks(1.0, 1);
    first.chunks(1.0, 1);
    first.chunks(0.01, 9);
    EXPECT_NEAR(last.report.snr_db(), 18.0 - to_3khz_db, 1e-9);
    EXPECT_NEAR(first.report.snr_db(), last.report.snr_db(), 1e-9);
}

TEST(BurstSnr, APartialChunkCountsFromHalfAChunk)
{
    timed_report r;
    const burst_snr& s = r.report;
    r.symbols(0.01, burst_snr::chunk_symbols / 2 - 1);
    EXPECT_TRUE(std::isnan(s.snr_db()));
    EXPECT_TRUE(std::isnan(s.recent_snr_db()));
    EXPECT_EQ(s.chunks(), 0u);
    r.symbols(0.01, 1);
    EXPECT_EQ(s.chunks(), 1u);
    EXPECT_NEAR(s.snr_db(), 20.0 - to_3khz_db, 1e-9);
    // A whole chunk at 20 dB, then half a chunk at 10 dB: 15 dB.
    r.symbols(0.01, burst_snr::chunk_symbols / 2);
    r.symbols(0.1, burst_snr::chunk_symbols / 2);
    EXPECT_EQ(s.chunks(), 2u);
    EXPECT_NEAR(s.snr_db(), 15.0 - to_3khz_db, 1e-9);
    EXPECT_NEAR(s.recent_snr_db(), 15.0 - to_3khz_db, 1e-9);
}

TEST(BurstSnr, StartForgetsTheLastBurstAndNoErrorReadsSixtyDb)
{
    timed_report r;
    r.chunks(1.0, 3);
    r.report.start();
    r.t = 0;
    EXPECT_TRUE(std::isnan(r.report.snr_db()));
    EXPECT_TRUE(std::isnan(r.report.recent_snr_db()));
    r.chunks(0.0, 2);
    EXPECT_NEAR(r.report.snr_db(), 60.0 - to_3khz_db, 1e-9);
    EXPECT_NEAR(r.report.recent_snr_db(), 60.0 - to_3khz_db, 1e-9);
}

TEST(BurstSnr, TheRecentReportReadsTheBurstsLastTwentySeconds)
{
    // 100 s at 10 dB, then 40 s at 25 dB: the whole burst reads their time mean, about
    // 14.3 dB; the recent report the 25 dB alone (a rise the link should follow at
    // once), and after another 10 s at 10 dB, half of each.
    timed_report r;
    r.seconds(0.1, 100.0);
    r.seconds(std::pow(10.0, -2.5), 40.0);
    EXPECT_NEAR(r.report.snr_db(), (100.0 * 10 + 40.0 * 25) / 140.0 - to_3khz_db, 0.05);
    EXPECT_NEAR(r.report.recent_snr_db(), 25.0 - to_3khz_db, 1e-9);
    r.seconds(0.1, 10.0);
    EXPECT_NEAR(r.report.recent_snr_db(), 17.5 - to_3khz_db, 0.1);
    EXPECT_NEAR(burst_snr::recent_window_s, 20.0, 0.0);
}
