/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "sim/channel_model.h"

#include "expect_error.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

using namespace gr::hfstack::sim;

namespace {

std::vector<uint8_t> pattern(size_t n, uint8_t seed = 0x5a)
{
    std::vector<uint8_t> b(n);
    for (size_t i = 0; i < n; ++i)
        b[i] = uint8_t(seed + 13 * i);
    return b;
}

// Positions (bit index, MSB first) where a and b differ.
std::vector<uint64_t> diff_bits(const std::vector<uint8_t>& a,
                                const std::vector<uint8_t>& b)
{
    std::vector<uint64_t> out;
    for (size_t i = 0; i < a.size(); ++i) {
        uint8_t x = a[i] ^ b[i];
        for (int j = 0; j < 8; ++j)
            if (x & (0x80 >> j))
                out.push_back(uint64_t(i) * 8 + uint64_t(j));
    }
    return out;
}

void expect_throws_naming(const channel_config& c, const std::string& field)
{
    ::expect_throws_naming([&] { channel_model m(c); }, field);
}

// Measured BER over about `bits` bits sent in bursts of 1000 bytes, back to back.
double measure_ber(double ber, uint64_t bits, uint64_t seed)
{
    channel_config c;
    c.ber = ber;
    c.seed = seed;
    channel_model m(c);
    const size_t burst_bytes = 1000;
    const auto clean = pattern(burst_bytes);
    uint64_t errors = 0, sent = 0;
    double t = 0;
    while (sent < bits) {
        auto b = clean;
        const size_t n = m.corrupt(b, t, 0.6, 2400);
        EXPECT_EQ(n, diff_bits(clean, b).size());
        errors += n;
        sent += burst_bytes * 8;
        t += 0.6 + burst_bytes * 8 / 2400.0 + 1.0;
    }
    EXPECT_EQ(m.counters().bits, sent);
    EXPECT_EQ(m.counters().bit_errors, errors);
    return double(errors) / double(sent);
}

} // namespace

TEST(ChannelModel, ClearChannelChangesNothing)
{
    channel_model m;
    EXPECT_TRUE(m.clear());
    const auto clean = pattern(5000);
    auto b = clean;
    for (int i = 0; i < 100; ++i)
        EXPECT_EQ(m.corrupt(b, i * 30.0, 0.6, 2400), 0u);
    EXPECT_EQ(b, clean);
    EXPECT_FALSE(m.in_outage(0, 1e6));
    EXPECT_EQ(m.counters().bursts, 100u);
    EXPECT_EQ(m.counters().bits, 100u * 5000 * 8);
    EXPECT_EQ(m.counters().bit_errors, 0u);
}

TEST(ChannelModel, ZeroLengthInput)
{
    channel_config c;
    c.ber = 0.5;
    c.fade_period_s = 1;
    c.fade_duration_s = 1;
    c.burst_rate_per_s = 100;
    channel_model m(c);
    std::vector<uint8_t> empty;
    EXPECT_EQ(m.corrupt(empty, 0.0, 0.0, 2400), 0u);
    EXPECT_EQ(m.corrupt(nullptr, 0, 5.0, 0.6, 75), 0u);
    EXPECT_TRUE(empty.empty());
    EXPECT_EQ(m.counters().bursts, 2u);
    EXPECT_EQ(m.counters().bits, 0u);
}

TEST(ChannelModel, Ber1e4)
{
    const double measured = measure_ber(1e-4, 10'000'000, 7);
    // 1000 expected errors, standard deviation about 32: +-15 % is about 5 sigma.
    EXPECT_NEAR(measured, 1e-4, 0.15e-4);
}

TEST(ChannelModel, Ber1e3)
{
    const double measured = measure_ber(1e-3, 10'000'000, 11);
    // 10000 expected errors, standard deviation 100: +-5 % is 5 sigma.
    EXPECT_NEAR(measured, 1e-3, 0.05e-3);
}

TEST(ChannelModel, BerOneFlipsEveryBit)
{
    channel_config c;
    c.ber = 1.0;
    channel_model m(c);
    auto b = pattern(100);
    const auto clean = b;
    EXPECT_EQ(m.corrupt(b, 0, 0, 1200), 800u);
    for (size_t i = 0; i < b.size(); ++i)
        EXPECT_EQ(uint8_t(~clean[i]), b[i]);
}

TEST(ChannelModel, SameSeedSameErrorsDifferentSeedDifferent)
{
    channel_config c;
    c.ber = 1e-3;
    c.burst_rate_per_s = 0.5;
    c.fade_period_s = 20;
    c.fade_duration_s = 1;
    c.seed = 42;
    channel_model a(c), b(c);
    c.seed = 43;
    channel_model other(c);
    const auto clean = pattern(3000);
    bool any_difference = false;
    for (int i = 0; i < 20; ++i) {
        auto x = clean, y = clean, z = clean;
        const double t = i * 15.0;
        EXPECT_EQ(a.corrupt(x, t, 0.6, 2400), b.corrupt(y, t, 0.6, 2400));
        other.corrupt(z, t, 0.6, 2400);
        EXPECT_EQ(x, y);
        if (x != z)
            any_difference = true;
    }
    EXPECT_TRUE(any_difference);
    EXPECT_EQ(a.counters().bit_errors, b.counters().bit_errors);
    EXPECT_GT(a.counters().bit_errors, 0u);
}

TEST(ChannelModel, OutageWindows)
{
    channel_config c;
    c.outage_period_s = 100;
    c.outage_duration_s = 10;
    c.outage_offset_s = 5; // outages [5, 15), [105, 115), [205, 215), ...
    channel_model m(c);
    EXPECT_FALSE(m.clear());

    // Before the first outage (nothing before the offset).
    EXPECT_FALSE(m.in_outage(0, 4.9));
    EXPECT_FALSE(m.in_outage(-100, -80)); // would be a window if it repeated backwards
    // Edges: touching is no overlap, any overlap counts.
    EXPECT_FALSE(m.in_outage(0, 5));
    EXPECT_TRUE(m.in_outage(0, 5.001));
    EXPECT_FALSE(m.in_outage(15, 20));
    EXPECT_TRUE(m.in_outage(14.999, 20));
    EXPECT_TRUE(m.in_outage(7, 8));  // inside
    EXPECT_TRUE(m.in_outage(0, 50)); // covers the window
    EXPECT_FALSE(m.in_outage(16, 104));
    // Instants.
    EXPECT_TRUE(m.in_outage(5, 5));
    EXPECT_FALSE(m.in_outage(15, 15));
    // Repetition with the period.
    EXPECT_TRUE(m.in_outage(104, 106));
    EXPECT_TRUE(m.in_outage(110, 111));
    EXPECT_FALSE(m.in_outage(115, 204.5));
    EXPECT_TRUE(m.in_outage(1000 * 100 + 6, 1000 * 100 + 7));
    EXPECT_FALSE(m.in_outage(1000 * 100 + 16, 1000 * 100 + 17));
    // Long interval spanning many periods.
    EXPECT_TRUE(m.in_outage(16, 1e6));
    // Reversed arguments.
    EXPECT_TRUE(m.in_outage(8, 7));

    // Counting.
    EXPECT_TRUE(m.drop_in_outage(7, 8));
    EXPECT_FALSE(m.drop_in_outage(20, 30));
    EXPECT_EQ(m.counters().lost_bursts, 1u);

    // Outages alone never flip a bit.
    const auto clean = pattern(2000);
    auto b = clean;
    EXPECT_EQ(m.corrupt(b, 6, 0.6, 2400), 0u);
    EXPECT_EQ(b, clean);

    // Duration 0 or period 0 disables.
    channel_config off = c;
    off.outage_duration_s = 0;
    EXPECT_FALSE(channel_model(off).in_outage(0, 1e6));
    off = c;
    off.outage_period_s = 0;
    EXPECT_FALSE(channel_model(off).in_outage(0, 1e6));
    // Duration == period: always in outage from the offset on.
    off = c;
    off.outage_duration_s = 100;
    EXPECT_TRUE(channel_model(off).in_outage(500, 500.1));
    EXPECT_FALSE(channel_model(off).in_outage(0, 4));
}

TEST(ChannelModel, FadesOnlyInsideWindows)
{
    channel_config c;
    c.fade_period_s = 10;
    c.fade_duration_s = 2;
    c.fade_offset_s = 3; // fades [3, 5), [13, 15), ...
    c.fade_ber = 0.5;
    c.seed = 3;
    channel_model m(c);
    const double rate = 1200, preamble = 0.6;
    size_t total = 0;
    for (int i = 0; i < 10; ++i) {
        const double start = i * 37.3;
        const auto clean = pattern(6000); // 40 s at 1200 bps: several windows
        auto b = clean;
        const size_t n = m.corrupt(b, start, preamble, rate);
        const auto bad = diff_bits(clean, b);
        ASSERT_EQ(n, bad.size());
        total += n;
        for (uint64_t k : bad) {
            const double t = start + preamble + double(k) / rate;
            const double phase = std::fmod(t - 3.0, 10.0);
            EXPECT_TRUE(t >= 3.0 && phase >= 0 && phase < 2.0 + 1e-9)
                << "bit " << k << " at " << t;
        }
        // Every fade window inside the burst is hit about half the time.
        const double in_fade_bits = 0.2 * 6000 * 8; // roughly 2 s of every 10
        EXPECT_GT(double(n), 0.25 * in_fade_bits);
        EXPECT_LT(double(n), 0.75 * in_fade_bits);
    }
    EXPECT_EQ(m.counters().bit_errors, total);

    // fade_ber 1: exactly the bits inside windows.
    c.fade_ber = 1.0;
    channel_model all(c);
    const auto clean = pattern(1200); // 8 s at 1200 bps, from 0.6 s to 8.6 s
    auto b = clean;
    all.corrupt(b, 0.0, 0.6, rate);
    const auto bad = diff_bits(clean, b);
    ASSERT_FALSE(bad.empty());
    // Bit k at 0.6 + k/1200 in [3, 5) <=> k in [2880, 5280).
    EXPECT_EQ(bad.front(), 2880u);
    EXPECT_EQ(bad.back(), 5279u);
    EXPECT_EQ(bad.size(), 5280u - 2880u);
}

TEST(ChannelModel, BurstErrorsAreLocal)
{
    channel_config c;
    c.burst_rate_per_s = 0.05;
    c.burst_length_bits = 64;
    c.burst_ber = 1.0;
    c.seed = 9;
    channel_model m(c);
    const auto clean = pattern(1500); // 5 s at 2400 bps
    size_t clusters = 0, full_clusters = 0, long_clusters = 0, errors = 0;
    const int transmissions = 2000;
    for (int i = 0; i < transmissions; ++i) {
        auto b = clean;
        m.corrupt(b, i * 10.0, 0.0, 2400);
        const auto bad = diff_bits(clean, b);
        errors += bad.size();
        // Split into runs of consecutive bits.
        size_t i0 = 0;
        while (i0 < bad.size()) {
            size_t i1 = i0 + 1;
            while (i1 < bad.size() && bad[i1] == bad[i1 - 1] + 1)
                ++i1;
            const size_t len = i1 - i0;
            ++clusters;
            if (len == 64)
                ++full_clusters;
            if (len > 64)
                ++long_clusters; // two overlapping bursts: rare
            EXPECT_LE(len, 128u);
            i0 = i1;
        }
    }
    // 0.05 bursts/s * 5 s * 2000 = 500 bursts expected (sd about 22).
    EXPECT_GT(clusters, 400u);
    EXPECT_LT(clusters, 600u);
    // Only bursts clipped by the end of a transmission are shorter.
    EXPECT_GT(full_clusters, clusters * 9 / 10);
    EXPECT_LE(long_clusters, 5u);
    EXPECT_EQ(m.counters().bit_errors, errors);

    // With burst_ber 0.5 the errors still stay within one burst length.
    c.burst_ber = 0.5;
    c.burst_rate_per_s = 0.02;
    c.seed = 10;
    channel_model half(c);
    size_t with_errors = 0, spread_ok = 0;
    for (int i = 0; i < 5000; ++i) {
        auto b = clean;
        half.corrupt(b, i * 10.0, 0.0, 2400);
        const auto bad = diff_bits(clean, b);
        if (bad.empty())
            continue;
        ++with_errors;
        if (bad.back() - bad.front() < 64)
            ++spread_ok;
    }
    // 0.1 bursts per transmission: about 476 transmissions with errors, of which
    // about 5 % hold two bursts.
    EXPECT_GT(with_errors, 380u);
    EXPECT_GT(spread_ok, with_errors * 9 / 10);
}

TEST(ChannelModel, CombinedModelsFlipEachBitOnce)
{
    channel_config c;
    c.ber = 0.3;
    c.fade_period_s = 1;
    c.fade_duration_s = 1; // always fading
    c.fade_ber = 0.5;
    channel_model m(c);
    const auto clean = pattern(10000);
    auto b = clean;
    const size_t n = m.corrupt(b, 0, 0, 9600);
    EXPECT_EQ(n, diff_bits(clean, b).size());
    // Union of bad bits: 1 - 0.7 * 0.5 = 0.65.
    EXPECT_NEAR(double(n) / 80000.0, 0.65, 0.02);
}

TEST(ChannelModel, BadConfigThrowsNamingField)
{
    channel_config c;
    c.ber = -0.1;
    expect_throws_naming(c, "ber");
    c = {};
    c.ber = 1.5;
    expect_throws_naming(c, "ber");
    c = {};
    c.ber = std::nan("");
    expect_throws_naming(c, "ber");
    c = {};
    c.burst_ber = 2;
    expect_throws_naming(c, "burst_ber");
    c = {};
    c.fade_ber = -1;
    expect_throws_naming(c, "fade_ber");
    c = {};
    c.burst_rate_per_s = -1;
    expect_throws_naming(c, "burst_rate_per_s");
    c = {};
    c.fade_period_s = 10;
    c.fade_duration_s = 11;
    expect_throws_naming(c, "fade_duration_s");
    c = {};
    c.outage_period_s = 10;
    c.outage_duration_s = 10.5;
    expect_throws_naming(c, "outage_duration_s");
    c = {};
    c.outage_period_s = -5;
    expect_throws_naming(c, "outage_period_s");
    c = {};
    c.propagation_s = -0.01;
    expect_throws_naming(c, "propagation_s");
    c = {};
    c.fade_offset_s = INFINITY;
    expect_throws_naming(c, "fade_offset_s");
    c = {};
    c.snr_steps = { { 10, 12 } }; // steps need a mean SNR before them
    expect_throws_naming(c, "snr_db");
    c.snr_db = 20;
    c.snr_steps = { { 10, 12 }, { 10, 15 } };
    expect_throws_naming(c, "snr_steps.t_s");
    c.snr_steps = { { 10, NAN } };
    expect_throws_naming(c, "snr_steps.snr_db");

    channel_model m;
    std::vector<uint8_t> b(10);
    EXPECT_THROW(m.corrupt(b, 0, 0, 0), std::invalid_argument);
    EXPECT_THROW(m.corrupt(b, 0, 0, -2400), std::invalid_argument);
}

// Fading: the profile's SNR process and the mode's measured BER curve decide the errors
// of each interleaver block. 2400 bps, 0.6 s blocks (2400S), 1000 bursts of 36,000 bits
// (15 s each).
namespace {
uint64_t fading_errors(const std::string& profile, double snr_db, uint64_t seed)
{
    channel_config c;
    c.fading_profile = profile;
    c.snr_db = snr_db;
    c.seed = seed;
    channel_model m(c);
    std::vector<uint8_t> burst(4500);
    uint64_t errors = 0;
    for (int i = 0; i < 1000; ++i)
        errors += m.corrupt(burst, 20.0 * i, 0.6, 2400.0, 0.6);
    return errors;
}
} // namespace

TEST(ChannelModel, FadingFollowsTheBerCurveAndTheProfile)
{
    const mode_model& mode = mode_model_for(2400.0, 0.6);
    ASSERT_EQ(mode.mode, "2400S");
    // Where the measured curve has BER 1e-5 on AWGN: about 360 errors in 3.6e7 bits;
    // where it has 1e-7, hardly any.
    const double at_1e5 = mode.curve.snr_db_for(1e-5);
    const uint64_t awgn = fading_errors("awgn", at_1e5, 1);
    EXPECT_GT(awgn, 250u);
    EXPECT_LT(awgn, 480u);
    EXPECT_LT(fading_errors("awgn", mode.curve.snr_db_for(1e-7), 1), 20u);
    // The same mean SNR on the 2 ms / 1 Hz "poor" channel: fades make many more.
    const uint64_t poor = fading_errors("poor", at_1e5, 1);
    EXPECT_GT(poor, 10 * awgn);
    // A seed gives the same errors.
    EXPECT_EQ(fading_errors("poor", at_1e5, 1), poor);
    EXPECT_NE(fading_errors("poor", at_1e5, 2), poor);
}

// receive(): a preamble whose mean SNR is below the mode's measured detection SNR is
// missed whole (bytes untouched, counted); otherwise the burst gets corrupt()'s errors.
namespace {
struct receptions {
    unsigned missed = 0;
    uint64_t flipped = 0;
    uint64_t counted = 0;
};

receptions receive_bursts(const std::string& profile, double snr_db, unsigned bursts)
{
    channel_config c;
    c.fading_profile = profile;
    c.snr_db = snr_db;
    c.seed = 7;
    channel_model m(c);
    receptions r;
    for (unsigned i = 0; i < bursts; ++i) {
        std::vector<uint8_t> burst(600, 0);
        const reception_errors e =
            m.receive(burst.data(), burst.size(), 5.0 * i, 0.6, 2400.0, 0.6);
        r.missed += e.preamble_missed;
        r.flipped += e.bits_flipped;
        if (e.preamble_missed) {
            EXPECT_EQ(burst, std::vector<uint8_t>(600, 0));
        }
    }
    r.counted = m.counters().missed_preambles;
    return r;
}
} // namespace

TEST(ChannelModel, ReceiveMissesPreamblesBelowTheDetectionSnr)
{
    const mode_model& mode = mode_model_for(2400.0, 0.6);
    const double detect = mode.detect_snr_db, width = mode.detect_width_db;
    // Far below the detection SNR every burst is missed, far above none.
    const receptions below = receive_bursts("awgn", detect - 10 * width - 0.5, 50);
    EXPECT_EQ(below.missed, 50u);
    EXPECT_EQ(below.counted, 50u);
    EXPECT_EQ(below.flipped, 0u);
    const receptions above = receive_bursts("awgn", detect + 10 * width + 0.5, 50);
    EXPECT_EQ(above.missed, 0u);
    // At it, about half (a step model: none, the SNR is not below it).
    const receptions at = receive_bursts("awgn", detect, 400);
    if (width > 0) {
        EXPECT_GT(at.missed, 140u);
        EXPECT_LT(at.missed, 260u);
    } else {
        EXPECT_EQ(at.missed, 0u);
    }
    EXPECT_EQ(preamble_miss_probability(detect, detect, 1.0), 0.5);
    EXPECT_NEAR(preamble_miss_probability(detect - 1, detect, 1.0),
                1 / (1 + std::exp(-1.0)),
                1e-15);
    EXPECT_EQ(preamble_miss_probability(detect - 0.01, detect, 0.0), 1.0);
    EXPECT_EQ(preamble_miss_probability(detect, detect, 0.0), 0.0);
    // On "poor" 6 dB above it, the fades take some preambles, not most.
    const receptions poor = receive_bursts("poor", detect + 6 * (1 + width), 2000);
    EXPECT_GT(poor.missed, 0u);
    EXPECT_LT(poor.missed, 500u);
    EXPECT_EQ(poor.counted, poor.missed);
    // No fading model: nothing is missed.
    channel_model clear;
    std::vector<uint8_t> burst(10);
    EXPECT_FALSE(
        clear.receive(burst.data(), burst.size(), 0, 0.6, 2400.0, 0.6).preamble_missed);
}

TEST(ChannelModel, FadingNeedsAKnownProfileAndAnSnr)
{
    channel_config c;
    c.fading_profile = "poor";
    expect_throws_naming(c, "snr_db"); // NaN by default
    c.fading_profile = "stormy";
    c.snr_db = 10;
    expect_throws_naming(c, "profile");
}

// The mean SNR steps, the fading process follows them at once, and what the modem reports
// is our receivers' measured report.
TEST(ChannelModel, SnrStepsChangeTheMeanAndTheErrors)
{
    channel_config c;
    c.snr_db = 25;
    c.fading_profile = "poor";
    c.snr_steps = { { 100, 5 }, { 200, 25 } };
    channel_model m(c);
    EXPECT_EQ(m.mean_snr_db(0), 25);
    EXPECT_EQ(m.mean_snr_db(100), 5);
    EXPECT_EQ(m.mean_snr_db(199.9), 5);
    EXPECT_EQ(m.mean_snr_db(250), 25);
    // 2400S bursts of 5 s (600 bytes) every 10 s: few errors at 25 dB, many bits wrong or
    // bursts missed at 5 dB (a decoded BER of several per cent).
    size_t errors[3] = { 0, 0, 0 }, missed[3] = { 0, 0, 0 };
    for (double t = 0; t < 300; t += 10) {
        std::vector<uint8_t> burst(600, 0);
        const auto r = m.receive(burst.data(), burst.size(), t, 0.6, 2400, 0.6);
        const size_t seg = size_t(t / 100);
        errors[seg] += r.bits_flipped;
        missed[seg] += r.preamble_missed;
    }
    EXPECT_LT(errors[0] + errors[2], 200u);
    EXPECT_GT(errors[1] + missed[1] * 4800, 2000u); // of 48000 bits
}

// A step inside a burst: the errors change where it falls, and the report (unmodelled)
// is of the burst's power-weighted mean.
TEST(ChannelModel, SnrStepInsideABurstActsWhereItFalls)
{
    channel_config c;
    c.snr_db = 30;
    c.fading_profile = "poor";
    c.seed = 3;
    c.model_snr_report = false;
    c.snr_steps = { { 5.6, 0 } };
    channel_model m(c);
    // One 2400S burst of 10 s (3000 bytes), its bits on air from 0.6 s: 5 s at 30 dB,
    // then 5 s at 0 dB.
    std::vector<uint8_t> burst(3000, 0);
    const auto r = m.receive(burst.data(), burst.size(), 0, 0.6, 2400, 0.6);
    ASSERT_FALSE(r.preamble_missed);
    size_t before = 0, after = 0;
    for (size_t i = 0; i < burst.size(); ++i)
        (i < burst.size() / 2 ? before : after) += size_t(__builtin_popcount(burst[i]));
    EXPECT_LT(before, 50u);
    EXPECT_GT(after, 600u); // of 12000 bits: a decoded BER of several per cent at 0 dB
    // The report is the receivers' mean over the burst in dB (phy/burst_snr.h): 15 dB,
    // not the power mean (27 dB), which the 30 dB half would rule.
    EXPECT_NEAR(m.reported_snr_db("2400S", 0.6, 10.0), 15.0, 1e-9);
    EXPECT_EQ(m.reported_snr_db("2400S", 0.6, 0.0), 30); // an empty span: the mean at t
}

TEST(ChannelModel, AReportAcrossAStepIsTheTimeMeanOfTheLevelsReports)
{
    // A 10 s 8000S burst from 395 s on poor, the SNR stepping 25 -> 12 dB at 400 s: half
    // of it at each level, so the reports average the map at 25 and at 12 dB.
    channel_config c;
    c.snr_db = 25;
    c.fading_profile = "poor";
    c.seed = 4;
    c.snr_steps = { { 400, 12 } };
    auto map = gr::hfstack::phy::snr_report_map_on(
        gr::hfstack::phy::measured_modem_curves(), "8000S", "poor");
    ASSERT_TRUE(map);
    channel_model m(c);
    double sum = 0;
    const int n = 2000;
    for (int i = 0; i < n; ++i)
        sum += m.reported_snr_db("8000S", 395, 10.0);
    EXPECT_NEAR(sum / n, (map->report_for(25) + map->report_for(12)) / 2, 0.5);
    // Wholly before or after the step: that level's report.
    double before = 0, after = 0;
    for (int i = 0; i < n; ++i) {
        before += m.reported_snr_db("8000S", 380, 10.0);
        after += m.reported_snr_db("8000S", 400, 10.0);
    }
    EXPECT_NEAR(before / n, map->report_for(25), 0.5);
    EXPECT_NEAR(after / n, map->report_for(12), 0.5);
}

TEST(ChannelModel, ReportedSnrIsTheReceiversMeasuredReport)
{
    channel_config c;
    c.snr_db = 23;
    c.fading_profile = "poor";
    c.seed = 7;
    // 9600L reports far below the truth on poor (phy/snr_report_map.h).
    auto map = gr::hfstack::phy::snr_report_map_on(
        gr::hfstack::phy::measured_modem_curves(), "9600L", "poor");
    ASSERT_TRUE(map);
    channel_model m(c);
    double sum = 0, sq = 0;
    const int n = 2000;
    for (int i = 0; i < n; ++i) {
        const double r = m.reported_snr_db("9600L", 0, 10.0);
        sum += r;
        sq += r * r;
    }
    const double mean = sum / n, sd = std::sqrt(sq / n - mean * mean);
    EXPECT_NEAR(mean, map->report_for(23), 0.4);
    EXPECT_LT(mean, 23 - 5);
    EXPECT_NEAR(sd, map->report_sd_db(10.0), 0.4);
    // Longer bursts report with less spread.
    double sq100 = 0, sum100 = 0;
    for (int i = 0; i < n; ++i) {
        const double r = m.reported_snr_db("9600L", 0, 100.0);
        sum100 += r;
        sq100 += r * r;
    }
    const double sd100 = std::sqrt(sq100 / n - (sum100 / n) * (sum100 / n));
    EXPECT_LT(sd100, sd * 0.6);
    // Modelling the report draws nothing from the errors' random stream.
    channel_model quiet(c), busy(c);
    for (int k = 0; k < 20; ++k) {
        std::vector<uint8_t> x(3000, 0), y(3000, 0);
        busy.reported_snr_db("9600L", k * 10.0, 5.0);
        const auto rx = quiet.receive(x.data(), x.size(), k * 10.0, 0.6, 9600, 0.6);
        const auto ry = busy.receive(y.data(), y.size(), k * 10.0, 0.6, 9600, 0.6);
        EXPECT_EQ(rx.preamble_missed, ry.preamble_missed);
        EXPECT_EQ(x, y);
    }
    // Off, or without fading: the mean itself.
    c.model_snr_report = false;
    EXPECT_EQ(channel_model(c).reported_snr_db("9600L", 0, 10.0), 23);
    channel_config plain;
    plain.snr_db = 17;
    EXPECT_EQ(channel_model(plain).reported_snr_db("9600L", 0, 10.0), 17);
    EXPECT_TRUE(std::isnan(channel_model().reported_snr_db("9600L", 0, 10.0)));
}

TEST(ChannelModel, FadingPathTakesBurstsOverlappingFromBeforeThePreviousOnesData)
{
    // One path, one mode's process: a burst with a 4.8 s preamble, then one starting a
    // second later with a 0.6 s preamble (its data starts 3.2 s before the first one's,
    // whose samples the process already dropped), then two with one start. No single
    // transmitter sends these; the emulator hears them and must not fail.
    channel_config c;
    c.fading_profile = "poor";
    c.snr_db = 15;
    channel_model m(c);
    std::vector<uint8_t> burst(1000);
    EXPECT_NO_THROW(m.receive(burst.data(), burst.size(), 100.0, 4.8, 300.0, 0.6));
    EXPECT_NO_THROW(m.receive(burst.data(), burst.size(), 101.0, 0.6, 300.0, 0.6));
    for (int k = 0; k < 200; ++k) {
        const double start = 200.0 + 0.37 * k;
        EXPECT_NO_THROW(m.receive(burst.data(), burst.size(), start, 0.6, 300.0, 0.6));
        EXPECT_NO_THROW(m.receive(burst.data(), burst.size(), start, 0.6, 300.0, 0.6))
            << "start " << start;
    }
    EXPECT_EQ(m.counters().bursts + m.counters().missed_preambles, 402u);
}
