/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

// What our receivers report as SNR against the truth, from the measured curves: the
// map's construction, its inverse, and the embedded data's maps.

#include "phy/snr_report_map.h"

#include "expect_error.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>

using namespace gr::hfstack::phy;

namespace {

modem_curve_point reported(const std::string& mode,
                           const std::string& channel,
                           double snr,
                           double report,
                           double sd = 3.0)
{
    modem_curve_point p;
    p.mode = mode;
    p.channel = channel;
    p.snr_db = snr;
    p.seconds = 240;
    p.bursts = 20; // 12 s bursts
    p.snr_report_db = report;
    p.snr_report_sd = sd;
    return p;
}

} // namespace

TEST(SnrReportMap, PoolsTheFadingChannelsAndIsMadeMonotone)
{
    modem_curve_data d;
    d.points = {
        reported("2400S", "poor", 10, 6),
        reported("2400S", "moderate", 10, 8),
        reported("2400S", "poor", 12, 9),
        reported("2400S", "moderate", 12, 9),
        // a dip: 14 dB reported below 12 dB's mean is pooled with it
        reported("2400S", "poor", 14, 8.5),
        reported("2400S", "moderate", 14, 8.5),
        reported("2400S", "poor", 16, 13, 5),
        reported("2400S", "moderate", 16, NAN, NAN),
        reported("2400S", "awgn", 10, 9.5),
        reported("2400S", "awgn", 12, 11.5),
    };
    const auto m = snr_report_map_from(d, "2400S");
    ASSERT_TRUE(m);
    EXPECT_EQ(m->channels(), "poor+moderate");
    ASSERT_EQ(m->true_db().size(), 3u);
    EXPECT_DOUBLE_EQ(m->true_db()[0], 10);
    EXPECT_DOUBLE_EQ(m->report_db()[0], 7);
    EXPECT_DOUBLE_EQ(m->true_db()[1], 13); // 12 and 14 pooled
    EXPECT_DOUBLE_EQ(m->report_db()[1], 8.75);
    EXPECT_DOUBLE_EQ(m->true_db()[2], 16);
    EXPECT_DOUBLE_EQ(m->report_db()[2], 13);
    // Between points linear, beyond them slope 1; the inverse undoes it.
    EXPECT_DOUBLE_EQ(m->report_for(11.5), 7.875);
    EXPECT_DOUBLE_EQ(m->report_for(4), 1);
    EXPECT_DOUBLE_EQ(m->report_for(20), 17);
    for (double x : { 0.0, 10.0, 11.0, 14.5, 16.0, 30.0 })
        EXPECT_NEAR(m->true_snr_for(m->report_for(x)), x, 1e-12);
    EXPECT_TRUE(std::isnan(m->true_snr_for(NAN)));
    // Spread: the mean over the points reporting one (six of 3 dB, one of 5 dB), on 12 s
    // bursts, less on longer ones, never more on shorter.
    EXPECT_NEAR(m->report_burst_s(), 12, 1e-12);
    EXPECT_NEAR(m->report_sd_db(), (3.0 * 6 + 5.0) / 7, 1e-12);
    EXPECT_DOUBLE_EQ(m->report_sd_db(1), m->report_sd_db());
    EXPECT_NEAR(m->report_sd_db(48), m->report_sd_db() / 2, 1e-12);
    // One channel alone, and the AWGN fallback.
    const auto awgn = snr_report_map_on(d, "2400S", "awgn");
    ASSERT_TRUE(awgn);
    EXPECT_DOUBLE_EQ(awgn->true_snr_for(10.5), 11);
    modem_curve_data only_awgn;
    only_awgn.points = { reported("600L", "awgn", 0, 1),
                         reported("600L", "awgn", 3, 3),
                         reported("600L", "poor", 5, 2) };
    const auto fallback = snr_report_map_from(only_awgn, "600L");
    ASSERT_TRUE(fallback);
    EXPECT_EQ(fallback->channels(), "awgn");
    EXPECT_FALSE(snr_report_map_from(only_awgn, "1200S"));
    // Reports that never rise give no map.
    modem_curve_data flat;
    flat.points = { reported("75S", "poor", 0, 2), reported("75S", "poor", 5, 2) };
    EXPECT_FALSE(snr_report_map_from(flat, "75S"));
}

TEST(SnrReportMap, RefusesBadPoints)
{
    expect_throws_naming([] { snr_report_map({ 1 }, { 1 }, 1, 10, ""); }, "true_db");
    expect_throws_naming([] { snr_report_map({ 1, 2 }, { 1 }, 1, 10, ""); }, "report_db");
    expect_throws_naming(
        [] {
            snr_report_map({ 2, 1 }, { 1, 2 }, 1, 10, "");
        },
        "true_db");
    expect_throws_naming(
        [] {
            snr_report_map({ 1, 2 }, { 2, 2 }, 1, 10, "");
        },
        "report_db");
    expect_throws_naming(
        [] {
            snr_report_map({ 1, NAN }, { 1, 2 }, 1, 10, "");
        },
        "true_db");
    expect_throws_naming(
        [] {
            snr_report_map({ 1, 2 }, { 1, 2 }, -1, 10, "");
        },
        "report_sd_db");
    expect_throws_naming(
        [] {
            snr_report_map({ 1, 2 }, { 1, 2 }, 1, 0, "");
        },
        "report_burst_s");
}

TEST(SnrReportMap, EveryMeasuredModeHasOneFromTheEmbeddedData)
{
    const auto& data = measured_modem_curves();
    for (const auto& f : data.fits) {
        if (f.source != "fitted")
            continue;
        const snr_report_map* m = measured_snr_report_map(f.mode);
        ASSERT_NE(m, nullptr) << f.mode;
        EXPECT_EQ(m->channels(), "poor+moderate") << f.mode;
        // Our receivers report low on fading at the mode's rate threshold, never wildly
        // high.
        const double at = f.rate_snr_db;
        EXPECT_LT(m->report_for(at), at + 1.0) << f.mode;
        EXPECT_NEAR(m->true_snr_for(m->report_for(at)), at, 1e-9) << f.mode;
    }
    EXPECT_EQ(measured_snr_report_map("no such mode"), nullptr);
    // The App C modes' estimate counts wrong decisions as noise: 9600L on poor at 23 dB
    // reports about 15 dB (the burst's mean, phy/burst_snr.h; the look at a burst's end
    // that came before read 8 dB, scattering by 11 dB).
    const auto poor9600 = snr_report_map_on(data, "9600L", "poor");
    ASSERT_TRUE(poor9600);
    EXPECT_LT(poor9600->report_for(23), 23 - 5);
}
