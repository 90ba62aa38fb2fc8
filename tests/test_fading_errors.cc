/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "sim/fading_errors.h"

#include "expect_error.h"

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <iostream>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

using namespace gr::hfstack::sim;

namespace {

const double not_a_number = std::numeric_limits<double>::quiet_NaN();
const double inf = std::numeric_limits<double>::infinity();

// A fixed test curve (not a modem's): a coded waterfall with BER 1e-5 at 10 dB, two
// decades per 1.75 dB around it, 0.5 from 0 dB; EESM beta of 8PSK (6.83 / 1.25). The
// process's mechanics are tested against it; the measured curves have their own tests.
const double requirement_db = 10.0;

ber_curve test_curve()
{
    return ber_curve({ { 0.0, 0.5 },
                       { 4.0, 1e-1 },
                       { 6.0, 2e-2 },
                       { 7.0, 5e-3 },
                       { 8.25, 1e-3 },
                       { 10.0, 1e-5 },
                       { 11.75, 1e-7 },
                       { 13.5, 1e-9 },
                       { 15.25, 1e-11 } },
                     5.4627417);
}

fading_error_process make_process(double mean_snr_db,
                                  const std::string& profile,
                                  double interleaver_s,
                                  uint64_t seed)
{
    fading_error_config c;
    c.interleaver_s = interleaver_s;
    return fading_error_process(
        test_curve(), fading_snr(mean_snr_db, fading_profile_by_name(profile), seed), c);
}

struct block_stats {
    size_t blocks = 0;
    size_t bad = 0;      // BER > 1e-3
    double mean_ber = 0; // time-weighted
};

// Transmissions of `tx_s` seconds back to back for `total_s` seconds.
block_stats run_blocks(fading_error_process& p, double total_s, double tx_s)
{
    block_stats s;
    double weighted = 0, time = 0;
    std::vector<error_segment> segs;
    for (double tx = 0; tx < total_s; tx += tx_s) {
        p.segments(tx, tx, tx + tx_s, segs);
        for (const auto& seg : segs) {
            ++s.blocks;
            s.bad += seg.ber > 1e-3;
            weighted += seg.ber * (seg.end_s - seg.start_s);
            time += seg.end_s - seg.start_s;
        }
    }
    s.mean_ber = weighted / time;
    return s;
}

} // namespace

// --- ber_curve
// --------------------------------------------------------------------------

TEST(BerCurve, MonotoneDecreasingAndClamped)
{
    const ber_curve c = test_curve();
    const double first = c.points().front().snr_db, last = c.points().back().snr_db;
    double previous = c.ber(first - 5);
    EXPECT_EQ(previous, 0.5);
    EXPECT_EQ(c.ber(-inf), 0.5);
    for (double s = first - 5; s <= last + 5; s += 0.01) {
        const double b = c.ber(s);
        if (s > first + 0.005 && s < last - 0.005)
            EXPECT_LT(b, previous) << s;
        else
            EXPECT_LE(b, previous) << s;
        previous = b;
    }
    EXPECT_EQ(c.ber(last + 100), c.points().back().ber);
    EXPECT_NEAR(std::log10(c.ber(10 - 1.75) / c.ber(10 + 1.75)), 4.0, 1e-9);
}

TEST(BerCurve, InterpolationIsExactAtPointsAndLogLinearBetween)
{
    const ber_curve c({ { 0, 0.5 }, { 4, 1e-2 }, { 6, 1e-4 }, { 9, 1e-8 } }, 2.0);
    EXPECT_EQ(c.ber(0), 0.5);
    EXPECT_EQ(c.ber(4), 1e-2);
    EXPECT_EQ(c.ber(6), 1e-4);
    EXPECT_EQ(c.ber(9), 1e-8);
    EXPECT_NEAR(std::log10(c.ber(5)), -3.0, 1e-12);
    EXPECT_NEAR(std::log10(c.ber(7.5)), -6.0, 1e-12);
    EXPECT_NEAR(c.ber_linear(std::pow(10.0, 0.5)), c.ber(5), 1e-15);
    EXPECT_EQ(c.ber_linear(0), 0.5);
    EXPECT_NEAR(c.snr_db_for(1e-3), 5.0, 1e-12);
    EXPECT_EQ(c.eesm_beta(), 2.0);
}

TEST(BerCurve, BadPointsThrow)
{
    expect_throws_naming([] { ber_curve({ { 0, 0.5 } }); }, "points");
    expect_throws_naming(
        [] {
            ber_curve({ { 0, 0.5 }, { 0, 1e-3 } });
        },
        "points[1].snr_db");
    expect_throws_naming(
        [] {
            ber_curve({ { 0, 0.5 }, { not_a_number, 1e-3 } });
        },
        "points[1].snr_db");
    expect_throws_naming([] { ber_curve({ { 0, 0.6 }, { 1, 1e-3 } }); }, "points[0].ber");
    expect_throws_naming([] { ber_curve({ { 0, 0.5 }, { 1, 0 } }); }, "points[1].ber");
    expect_throws_naming(
        [] {
            ber_curve({ { 0, 1e-3 }, { 1, 1e-2 } });
        },
        "points[1].ber");
    expect_throws_naming([] { ber_curve({ { 0, 0.5 }, { 1, 1e-3 } }, 0); }, "eesm_beta");
    expect_throws_naming([] { test_curve().ber(not_a_number); }, "snr_db");
}

// --- fading_snr
// -------------------------------------------------------------------------

TEST(FadingSnr, AwgnIsConstant)
{
    fading_snr s(12.0, fading_profile_by_name("awgn"), 3);
    EXPECT_FALSE(s.fading());
    const double expected = std::pow(10.0, 1.2);
    for (double t = 0; t < 100; t += 0.37)
        EXPECT_EQ(s.snr_linear(t), expected);
    EXPECT_NEAR(s.snr_db(200), 12.0, 1e-12);
}

TEST(FadingSnr, ProfilesByName)
{
    for (const auto& name : fading_profile_names())
        EXPECT_NO_THROW(fading_snr(10, fading_profile_by_name(name), 1)) << name;
    const fading_profile poor = fading_profile_by_name("poor");
    ASSERT_EQ(poor.paths.size(), 2u);
    EXPECT_EQ(poor.paths[0].spread_hz, 1.0);
    EXPECT_EQ(poor.paths[1].delay_s, 0.002);
    EXPECT_EQ(fading_profile_by_name("mid_latitude_disturbed").paths[1].spread_hz, 1.0);
    EXPECT_EQ(fading_profile_by_name("flutter").paths[0].spread_hz, 10.0);
    EXPECT_EQ(fading_profile_by_name("high_latitude_disturbed").paths[0].spread_hz, 30.0);
    expect_throws_naming([] { fading_profile_by_name("bad"); }, "profile");

    fading_profile odd{ "odd", { { 3, 1, 0, 0 }, { 1, 0, 5, 0 } } };
    fading_snr s(0, odd, 1);
    EXPECT_DOUBLE_EQ(s.profile().paths[0].power, 0.75);
    EXPECT_DOUBLE_EQ(s.max_spread_hz(), 1.0);
    odd.paths[1].power = -1;
    expect_throws_naming([&] { fading_snr(0, odd, 1); }, "paths[1].power");
    odd.paths[1].power = 1;
    odd.paths[0].spread_hz = not_a_number;
    expect_throws_naming([&] { fading_snr(0, odd, 1); }, "paths[0].spread_hz");
    expect_throws_naming(
        [] { fading_snr(not_a_number, fading_profile_by_name("poor"), 1); },
        "mean_snr_db");
}

// 10000 s of "poor" (2 paths, 1 Hz): each |g|^2 decorrelates within ~0.56 s, so ~35000
// independent path looks; the SNR / mean (variance 1/2) has a standard error of ~0.005:
// +-3 % is ~6 of them. Two equal Rayleigh paths make SNR / mean ~ Gamma(2, 1/2):
// P(< 0.1) = 1 - e^-0.2 (1.2) = 0.0175 (a single path would give 0.095). Fades are
// clustered, so the fraction's standard error is ~10 % of it; +-30 % is ~3 of them.
TEST(FadingSnr, PoorProfileMeanAndDeepFades)
{
    const double mean_db = 15.0, mean = std::pow(10.0, 1.5);
    fading_snr s(mean_db, fading_profile_by_name("poor"), 7);
    double sum = 0;
    size_t deep = 0, n = 0;
    for (double t = 0; t < 10000; t += 0.02, ++n) {
        const double v = s.snr_linear(t);
        sum += v;
        deep += v < mean / 10;
    }
    const double expected_deep = 1 - std::exp(-0.2) * 1.2;
    std::cout << "mean/expected " << sum / n / mean << ", P(10 dB fade) "
              << double(deep) / n << " vs " << expected_deep << "\n";
    EXPECT_NEAR(sum / double(n) / mean, 1.0, 0.03);
    EXPECT_NEAR(double(deep) / double(n), expected_deep, 0.3 * expected_deep);
}

// --- fading_error_process
// ---------------------------------------------------------------

TEST(FadingErrorProcess, AwgnSegmentsCarryTheCurveBerExactly)
{
    for (double interleaver : { 0.0, 0.6, 4.8 }) {
        auto p = make_process(11.3, "awgn", interleaver, 1);
        const auto segs = p.segments(0.0, 0.0, 30.0);
        ASSERT_FALSE(segs.empty());
        for (const auto& s : segs)
            EXPECT_EQ(s.ber, test_curve().ber(11.3));
    }
}

TEST(FadingErrorProcess, SegmentsTileTheSpanOnBlockBoundaries)
{
    for (double interleaver : { 0.0, 0.6, 4.8 }) {
        auto p = make_process(8, "poor", interleaver, 2);
        const double tx = 10.0, t0 = 10.31, t1 = 27.77, block = p.block_s();
        const auto segs = p.segments(tx, t0, t1);
        ASSERT_FALSE(segs.empty());
        EXPECT_EQ(segs.front().start_s, t0);
        EXPECT_EQ(segs.back().end_s, t1);
        for (size_t i = 0; i < segs.size(); ++i) {
            EXPECT_LT(segs[i].start_s, segs[i].end_s);
            EXPECT_GT(segs[i].ber, 0);
            EXPECT_LE(segs[i].ber, 0.5);
            if (i > 0) {
                EXPECT_EQ(segs[i].start_s, segs[i - 1].end_s);
                const double k = (segs[i].start_s - tx) / block;
                EXPECT_NEAR(k, std::round(k), 1e-9) << "boundary off the block grid";
            }
        }
        const size_t expected =
            size_t(std::ceil((t1 - tx) / block - 1e-9) - std::floor((t0 - tx) / block));
        EXPECT_EQ(segs.size(), expected);
        EXPECT_TRUE(p.segments(tx, t1, t1).empty());
    }
}

TEST(FadingErrorProcess, AskingAgainGivesTheSameBlocks)
{
    auto p = make_process(14, "poor", 0.6, 9);
    const auto all = p.segments(0.0, 0.0, 12.0);
    const auto again = p.segments(0.0, 0.0, 12.0);
    ASSERT_EQ(all.size(), again.size());
    for (size_t i = 0; i < all.size(); ++i)
        EXPECT_EQ(all[i].ber, again[i].ber);
    // The part from 3.1 s: its first segment belongs to block [3.0, 3.6).
    const auto tail = p.segments(0.0, 3.1, 12.0);
    ASSERT_EQ(tail.size(), all.size() - 5);
    for (size_t i = 0; i < tail.size(); ++i)
        EXPECT_EQ(tail[i].ber, all[i + 5].ber);
    // A same-seeded process (started at the same time) that skipped blocks 2-4 agrees.
    auto q = make_process(14, "poor", 0.6, 9);
    q.segments(0.0, 0.0, 1.2);
    const auto tail_only = q.segments(0.0, 3.1, 12.0);
    ASSERT_EQ(tail_only.size(), tail.size());
    for (size_t i = 0; i < tail.size(); ++i)
        EXPECT_EQ(tail_only[i].ber, tail[i].ber);
    // Moving on, then going back before the retained history, throws.
    p.segments(20.0, 20.0, 25.0);
    expect_throws_naming([&] { p.segments(0.0, 0.0, 1.0); }, "t0");
}

// At the requirement + 5 dB the AWGN curve gives 1e-11 - 1e-12: no bad block. On "poor",
// a 0.6 s block sees about one fade decorrelation time, so a deep fade ruins it. A 4.8 s
// block averages several fades (diversity): fewer bad blocks at the same mean SNR, also
// at + 2 dB where both interleavers still lose blocks.
TEST(FadingErrorProcess, FadingMakesBadBlocksAndInterleavingReducesThem)
{
    for (double offset : { 2.0, 5.0 }) {
        const double snr = requirement_db + offset;
        auto awgn = make_process(snr, "awgn", 0.6, 4);
        auto short_il = make_process(snr, "poor", 0.6, 4);
        auto long_il = make_process(snr, "poor", 4.8, 4);
        const block_stats a = run_blocks(awgn, 6000, 48);
        const block_stats s = run_blocks(short_il, 6000, 48);
        const block_stats l = run_blocks(long_il, 6000, 48);
        const double fa = double(a.bad) / a.blocks, fs = double(s.bad) / s.blocks,
                     fl = double(l.bad) / l.blocks;
        std::cout << "bad-block fraction at " << snr << " dB: awgn " << fa << " ("
                  << a.blocks << " blocks), poor 0.6 s " << fs << " (" << s.blocks
                  << "), poor 4.8 s " << fl << " (" << l.blocks << "); mean BER "
                  << a.mean_ber << " / " << s.mean_ber << " / " << l.mean_ber << "\n";
        EXPECT_EQ(a.bad, 0u);
        EXPECT_GT(fs, 0.02);
        EXPECT_LT(fl, 0.6 * fs);
        EXPECT_LT(l.mean_ber, s.mean_ber);
    }
}

// Not interleaved: the windows average the per-sample BERs, so the long-run mean BER is
// the curve averaged over the Gamma(2, 1/2) SNR distribution of two equal Rayleigh paths
// (integrated here numerically). Its estimate is dominated by the deepest fades, so the
// tolerance is loose (+-30 %).
TEST(FadingErrorProcess, UninterleavedMeanBerMatchesTheFadingAverage)
{
    const double snr_db = requirement_db + 6;
    const double mean = std::pow(10.0, snr_db / 10);
    auto p = make_process(snr_db, "poor", 0.0, 12);
    EXPECT_NEAR(p.block_s(), 0.1, 1e-15);
    const block_stats st = run_blocks(p, 6000, 30);
    const ber_curve curve = test_curve();
    double expected = 0;
    const double dx = 1e-4;
    for (double x = dx / 2; x < 20; x += dx)
        expected += curve.ber_linear(mean * x) * 4 * x * std::exp(-2 * x) * dx;
    std::cout << "uninterleaved mean BER " << st.mean_ber << " vs " << expected << "\n";
    EXPECT_NEAR(st.mean_ber / expected, 1.0, 0.3);
}

TEST(FadingErrorProcess, BadInputsThrow)
{
    fading_error_config c;
    c.interleaver_s = -1;
    expect_throws_naming([&] { validate(c); }, "interleaver_s");
    c = fading_error_config();
    c.uninterleaved_window_s = 0;
    expect_throws_naming([&] { validate(c); }, "uninterleaved_window_s");
    c = fading_error_config();
    c.max_sample_step_s = not_a_number;
    expect_throws_naming([&] { validate(c); }, "max_sample_step_s");
    c = fading_error_config();
    c.eesm_beta = -2;
    expect_throws_naming(
        [&] {
            fading_error_process(
                test_curve(), fading_snr(10, fading_profile_by_name("poor"), 1), c);
        },
        "eesm_beta");

    auto p = make_process(10, "poor", 0.6, 1);
    expect_throws_naming([&] { p.segments(not_a_number, 0, 1); }, "tx_start");
    expect_throws_naming([&] { p.segments(0, inf, 1); }, "t0");
    expect_throws_naming([&] { p.segments(1, 0.5, 2); }, "t0");
    expect_throws_naming([&] { p.segments(0, 2, 1); }, "t1");
}

TEST(FadingErrorProcess, APreamblesMeanFromTheEarliestSampleKeepsTheDataReachable)
{
    // Two bursts on one path with one start (the emulator hears such announcements):
    // the second's preamble mean starts at earliest_s(), clamped to the samples still
    // kept, and its data at the first one's. earliest_s() back to a grid index rounds up
    // for some starts; the mean must not drop the sample the data then needs.
    int checked = 0;
    for (int k = 0; k < 400; ++k) {
        auto p = make_process(15, "poor", 0.6, 3);
        const double start = 70.5 + 0.37 * k, data = start + 0.6;
        p.segments(data, data, data + 5.0);
        const double from = std::max(start, p.earliest_s());
        ASSERT_NO_THROW(p.mean_snr_linear(from, std::max(from, data)));
        ASSERT_TRUE(p.reaches_back_to(data)) << "start " << start;
        ASSERT_NO_THROW(p.segments(data, data, data + 5.0)) << "start " << start;
        ++checked;
    }
    EXPECT_EQ(checked, 400);
    // What reaches_back_to() promises is what segments() does.
    auto p = make_process(15, "poor", 0.6, 3);
    p.segments(20.0, 20.0, 25.0);
    EXPECT_TRUE(p.reaches_back_to(20.0));
    EXPECT_FALSE(p.reaches_back_to(19.0));
    expect_throws_naming([&] { p.segments(19.0, 19.0, 20.0); }, "t0");
}
