/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

// The measured modem curves: the file's parser, the curves and models built from it,
// and the embedded data's consistency.

#include "dl/rate_policy.h"
#include "phy/modem_curves.h"
#include "sim/fading_errors.h"

#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>
#include <string>

using namespace gr::hfstack;

namespace {

const char* const sample =
    "# a comment\n"
    "[runs]\n"
    "run,commit,date,command\n"
    "1,abc,2026-11-23T22:45Z,\"bench/s4539_curves.py --modes 2400S,1200L\"\n"
    "[points]\n"
    "run,mode,channel,snr_db,seconds,bits,errors,bursts,lost,rx_bits,rx_errors,"
    "snr_report_db,snr_report_sd\n"
    "1,2400S,awgn,8,100,1000,20,10,0,1000,20,7.5,0.4\n"
    "1,2400S,awgn,6,100,1000,200,10,1,900,100,5.5,0.5\n"
    "1,2400S,poor,12,100,1000,300,10,2,800,140,nan,nan\n"
    "[other]\n"
    "x,y\n"
    "1,2\n"
    "[fits]\n"
    "mode,eesm_beta,fading_loss_db,beta_rms_log10,beta_points,detect_snr_db,detect_width_"
    "db,"
    "loss_rms,loss_points,rate_snr_db,rate_target,source\n"
    "2400S,3.2,1.5,0.21,4,-1.5,0.75,0.02,9,17.5,\"FER 0.1 of 4096-bit frames on "
    "moderate\",fitted\n"
    "1200L,2,0,0,0,-3,0,0,0,inf,\"FER 0.1 of 4096-bit frames on "
    "moderate\",fallback:2400S\n";

phy::modem_curve_point point(double snr, uint64_t rx_bits, uint64_t rx_errors)
{
    phy::modem_curve_point p;
    p.mode = "2400S";
    p.channel = "awgn";
    p.snr_db = snr;
    p.bits = p.rx_bits = rx_bits;
    p.errors = p.rx_errors = rx_errors;
    p.bursts = 10;
    return p;
}

} // namespace

TEST(ModemCurves, ParsesSectionsByColumnName)
{
    const phy::modem_curve_data d = phy::parse_modem_curves(sample);
    ASSERT_EQ(d.runs.size(), 1u);
    EXPECT_EQ(d.runs[0].command, "bench/s4539_curves.py --modes 2400S,1200L");
    ASSERT_EQ(d.points.size(), 3u);
    const auto awgn = d.points_of("2400S", "awgn");
    ASSERT_EQ(awgn.size(), 2u);
    EXPECT_EQ(awgn[0].snr_db, 6); // ascending SNR
    EXPECT_EQ(awgn[0].lost, 1u);
    EXPECT_NEAR(awgn[0].rx_ber(), 100.0 / 900.0, 1e-15);
    EXPECT_NEAR(awgn[0].loss_rate(), 0.1, 1e-15);
    EXPECT_TRUE(std::isnan(d.points_of("2400S", "poor")[0].snr_report_db));
    ASSERT_EQ(d.fits.size(), 2u);
    ASSERT_NE(d.fit_of("2400S"), nullptr);
    EXPECT_EQ(d.fit_of("2400S")->eesm_beta, 3.2);
    EXPECT_EQ(d.fit_of("2400S")->detect_snr_db, -1.5);
    EXPECT_EQ(d.fit_of("2400S")->fading_loss_db, 1.5);
    EXPECT_EQ(d.fit_of("2400S")->detect_width_db, 0.75);
    EXPECT_TRUE(std::isinf(d.fit_of("1200L")->rate_snr_db));
    EXPECT_EQ(d.fit_of("1200L")->source, "fallback:2400S");
    EXPECT_EQ(d.fit_of("600S"), nullptr);
    EXPECT_EQ(d.rate_target, "FER 0.1 of 4096-bit frames on moderate");
    EXPECT_EQ(d.modes_on("awgn"), std::vector<std::string>{ "2400S" });
}

TEST(ModemCurves, BadRowsNameTheirLine)
{
    const std::string head =
        "[points]\nrun,mode,channel,snr_db,seconds,bits,errors,bursts,lost,rx_bits,"
        "rx_errors,snr_report_db,snr_report_sd\n";
    auto message = [](const std::string& text) {
        try {
            phy::parse_modem_curves(text);
        } catch (const std::invalid_argument& e) {
            return std::string(e.what());
        }
        return std::string("no throw");
    };
    EXPECT_NE(message(head + "1,2400S,awgn,8,100,1000\n").find("line 3"),
              std::string::npos);
    EXPECT_NE(
        message(head + "1,2400S,awgn,x,100,1000,20,10,0,1000,20,7,0\n").find("snr_db"),
        std::string::npos);
    EXPECT_NE(message(head + "1,2400S,awgn,8,100,1000,20,10,11,1000,20,7,0\n")
                  .find("inconsistent"),
              std::string::npos);
    EXPECT_NE(
        message(head + "1,2400S,awgn,8,100,1000,-2,10,1,1000,20,7,0\n").find("errors"),
        std::string::npos);
    EXPECT_NE(message("[fits]\nmode,eesm_beta\n2400S,1\n").find("no column"),
              std::string::npos);
}

TEST(ModemCurves, CurveFromPointsIsMonotoneAndEndsErrorFree)
{
    // 6 dB 1e-1, 7 dB 1e-2, 7.5 dB 2e-2 (noise: made non-increasing), 8 dB 1e-4 (the
    // last slope, 4 decades per dB, continues), 9 dB none in 1e5 bits (bound 3e-5).
    const sim::ber_curve c = sim::curve_from_points({ point(8, 100000, 10),
                                                      point(6, 1000, 100),
                                                      point(7, 10000, 100),
                                                      point(7.5, 10000, 200),
                                                      point(9, 100000, 0) },
                                                    2.5);
    EXPECT_EQ(c.eesm_beta(), 2.5);
    EXPECT_EQ(c.ber(1.0), 0.5); // 5 dB below the first point
    EXPECT_NEAR(c.ber(6), 0.1, 1e-12);
    EXPECT_NEAR(c.ber(7.5), 1e-2, 1e-12);
    EXPECT_NEAR(c.ber(8), 1e-4, 1e-12);
    EXPECT_NEAR(std::log10(c.ber(8.5)), -6.0, 1e-9);
    EXPECT_EQ(c.points().back().ber, 1e-12);
    double previous = 1;
    for (double s = 0; s < 20; s += 0.05) {
        EXPECT_LE(c.ber(s), previous) << s;
        previous = c.ber(s);
    }
    // A shallow last slope (0.5 decade per dB) gives way to 1 decade per dB, and the tail
    // goes through an error-free point's bound where that line would pass above it.
    const sim::ber_curve d = sim::curve_from_points(
        { point(6, 1000, 100), point(8, 10000, 100), point(9, 1000000, 0) }, 1);
    EXPECT_NEAR(d.ber(8.5), std::sqrt(1e-2 * 3e-6), 1e-12);
    EXPECT_NEAR(d.ber(9), 3e-6, 1e-18);
    EXPECT_NEAR(std::log10(d.ber(10)), std::log10(3e-7), 1e-9);
    EXPECT_EQ(d.points().back().ber, 1e-12);
    const sim::ber_curve e =
        sim::curve_from_points({ point(6, 1000, 100), point(8, 10000, 100) }, 1);
    EXPECT_NEAR(std::log10(e.ber(9)), -3.0, 1e-9);
    EXPECT_THROW(sim::curve_from_points({ point(8, 1000, 0) }, 1), std::invalid_argument);
}

TEST(ModemCurves, RateTableIsALadderKeepingTheInitialMode)
{
    // 600L below 300S's threshold but less robust than 300S: raised to 300S's + 0.5 dB;
    // 1200S above 1200L's: kept (same rate, shorter interleaver); 600S above 1200L's:
    // left out; 2400S never meets the target, 12800U is no Table C-5 mode.
    std::string text =
        "[fits]\nmode,eesm_beta,fading_loss_db,beta_rms_log10,beta_points,"
        "detect_snr_db,detect_width_db,loss_rms,loss_points,rate_snr_db,source\n";
    for (const char* row : { "75L,1,0,0,0,-9,0,0,0,-3,fitted",
                             "300L,1,0,0,0,-9,0,0,0,1,fitted",
                             "600L,1,0,0,0,-9,0,0,0,2,fitted",
                             "300S,1,0,0,0,-9,0,0,0,3,fitted",
                             "1200L,1,0,0,0,-9,0,0,0,5,fitted",
                             "600S,1,0,0,0,-9,0,0,0,6,fitted",
                             "1200S,1,0,0,0,-9,0,0,0,7,fitted",
                             "2400S,1,0,0,0,-9,0,0,0,inf,fitted",
                             "12800U,1,0,0,0,-9,0,0,0,30,fitted" })
        text += std::string(row) + "\n";
    const auto t = dl::rate_table_from(phy::parse_modem_curves(text));
    std::vector<std::string> names;
    for (const auto& e : t)
        names.push_back(dl::to_string(e.mode));
    EXPECT_EQ(
        names,
        (std::vector<std::string>{ "75L", "300L", "300S", "600L", "1200L", "1200S" }));
    EXPECT_EQ(t[3].min_snr_db, 3.5);
    dl::rate_policy_config c;
    c.table = t;
    EXPECT_NO_THROW(dl::rate_policy{ c });
}

// The data compiled in: every measured mode has a model whose curve falls with SNR, a
// positive beta and a finite detection SNR; the rate table is a ladder from the data.
TEST(ModemCurves, EmbeddedDataGivesAModelPerMeasuredMode)
{
    const phy::modem_curve_data& d = phy::measured_modem_curves();
    ASSERT_FALSE(d.runs.empty());
    ASSERT_FALSE(d.points.empty());
    const auto& models = sim::measured_mode_models();
    ASSERT_FALSE(models.empty());
    for (const auto& m : models) {
        EXPECT_GT(m.curve.eesm_beta(), 0) << m.mode;
        EXPECT_TRUE(std::isfinite(m.detect_snr_db)) << m.mode;
        EXPECT_GT(m.bit_rate, 0) << m.mode;
        EXPECT_EQ(m.curve.ber(-100), 0.5) << m.mode;
        EXPECT_LE(m.curve.ber(100), 1e-9) << m.mode;
        EXPECT_TRUE(m.fit.source == "fitted" || m.fit.source.rfind("fallback:", 0) == 0)
            << m.mode;
        // Each model reproduces its own AWGN points where they have errors.
        for (const auto& p : d.points_of(m.mode, "awgn")) {
            if (p.rx_errors > 0 && p.rx_ber() < 0.5) {
                EXPECT_LE(m.curve.ber(p.snr_db), p.rx_ber() * 1.0000001)
                    << m.mode << " " << p.snr_db;
            }
        }
        EXPECT_EQ(&sim::mode_model_by_name(m.mode), &m);
        // The waveform of a measured mode is modelled by that mode.
        EXPECT_EQ(sim::mode_model_for(m.bit_rate, m.block_s).mode, m.mode);
    }
    EXPECT_THROW(sim::mode_model_by_name("2401S"), std::invalid_argument);
    const auto table = dl::default_rate_table();
    ASSERT_FALSE(table.empty());
    for (size_t i = 1; i < table.size(); ++i) {
        EXPECT_GT(table[i].min_snr_db, table[i - 1].min_snr_db);
        EXPECT_TRUE(dl::less_robust(table[i].mode, table[i - 1].mode))
            << dl::to_string(table[i].mode);
    }
    EXPECT_NO_THROW(dl::rate_policy{ dl::rate_policy_config() });
}
