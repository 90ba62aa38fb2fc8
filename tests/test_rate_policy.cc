/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

// Rate policy tests (which mode a STANAG 5066 link should use): averaging, dwell,
// hysteresis and the retransmission input, on a fixed ladder.

#include "dl/rate_policy.h"
#include "phy/snr_report_map.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>

using namespace gr::hfstack::dl;

namespace {

const modem_mode m300S{ rate_300, interleaving_short };
const modem_mode m300L{ rate_300, interleaving_long };
const modem_mode m600S{ rate_600, interleaving_short };
const modem_mode m1200S{ rate_1200, interleaving_short };
const modem_mode m2400S{ rate_2400, interleaving_short };
const modem_mode m2400L{ rate_2400, interleaving_long };
const modem_mode m4800S{ rate_4800, interleaving_short };

// A fixed ladder for the policy's mechanics (the measured default table has its own
// test in test_modem_curves.cc): most robust first, SNR dB.
//   75L -3   150L 0   300L 3   300S 5   600L 6   600S 8   1200L 9   1200S 11
//   2400L 14 2400S 16 3200L 18 4800L 21 6400L 24 8000L 27 9600L 30
rate_policy_config ladder()
{
    const uint8_t S = interleaving_short, L = interleaving_long;
    rate_policy_config c;
    c.table = {
        { { rate_75, L }, -3.0 },   { { rate_150, L }, 0.0 },
        { { rate_300, L }, 3.0 },   { { rate_300, S }, 5.0 },
        { { rate_600, L }, 6.0 },   { { rate_600, S }, 8.0 },
        { { rate_1200, L }, 9.0 },  { { rate_1200, S }, 11.0 },
        { { rate_2400, L }, 14.0 }, { { rate_2400, S }, 16.0 },
        { { rate_3200, L }, 18.0 }, { { rate_4800, L }, 21.0 },
        { { rate_6400, L }, 24.0 }, { { rate_8000, L }, 27.0 },
        { { rate_9600, L }, 30.0 },
    };
    c.hysteresis_db = 3.0;       // the figures below assume it
    c.step_down_margin_db = 0.0; // and this
    return c;
}

TEST(RatePolicy, RejectsBadTables)
{
    rate_policy_config c;
    c.table = { { m300S, 5 }, { m600S, 5 } };
    EXPECT_THROW(rate_policy{ c }, std::invalid_argument);
    c = ladder();
    c.initial = m4800S; // 4800S is not in the ladder
    EXPECT_THROW(rate_policy{ c }, std::invalid_argument);
    c = rate_policy_config();
    c.slow_time_constant = 0;
    EXPECT_THROW(rate_policy{ c }, std::invalid_argument);
    EXPECT_NO_THROW(rate_policy{ rate_policy_config() });
}

TEST(RatePolicy, DefaultTableIsOrderedAndStartsAtTheInitialMode)
{
    auto t = default_rate_table();
    ASSERT_FALSE(t.empty());
    for (size_t i = 1; i < t.size(); ++i) {
        EXPECT_GT(t[i].min_snr_db, t[i - 1].min_snr_db);
        EXPECT_TRUE(less_robust(t[i].mode, t[i - 1].mode)) << to_string(t[i].mode);
    }
    rate_policy p;
    EXPECT_EQ(p.recommended(), initial_drc_mode);
}

TEST(RatePolicy, StepsUpAfterSustainedHighSnrNotOnOneSpike)
{
    rate_policy p(ladder()); // 300S, next 600L needs 6 + 3 dB
    double t = 0;
    for (; t < 100; t += 1)
        p.on_snr(7.0, t); // above 600L's 6 dB but inside the hysteresis band
    EXPECT_EQ(p.recommended(), m300S);
    p.on_snr(35.0, t); // one spike
    t += 1;
    for (; t < 110; t += 1)
        p.on_snr(7.0, t);
    EXPECT_EQ(p.recommended(), m300S);
    EXPECT_EQ(p.counters().step_ups, 0u);

    // Sustained 10 dB (>= 9): one step after sustain_time, not before.
    double start = t;
    double first_up = -1;
    for (; t < start + 200; t += 1) {
        p.on_snr(10.0, t);
        if (first_up < 0 && p.recommended() != m300S)
            first_up = t;
    }
    ASSERT_GT(first_up, 0);
    // The slow average must first climb to 9 dB, then stay there sustain_time (10 s).
    EXPECT_GE(first_up - start, 10.0);
    EXPECT_LE(first_up - start, 60.0);
    // 10 dB supports 600L (6+3) but not 600S (8+3 = 11): exactly one step up.
    EXPECT_EQ(p.recommended(), (modem_mode{ rate_600, interleaving_long }));
    EXPECT_EQ(p.counters().step_ups, 1u);
}

TEST(RatePolicy, DwellSeparatesConsecutiveStepUps)
{
    auto cfg = ladder();
    cfg.step_up_entries = 1;
    cfg.first_report_decides = false;
    rate_policy p(cfg);
    std::vector<double> ups;
    size_t idx = p.recommended_index();
    for (double t = 0; t < 400; t += 1) {
        p.on_snr(40.0, t);
        if (p.recommended_index() != idx) {
            EXPECT_EQ(p.recommended_index(), idx + 1); // one entry at a time
            idx = p.recommended_index();
            ups.push_back(t);
        }
    }
    ASSERT_GE(ups.size(), 3u);
    for (size_t i = 1; i < ups.size(); ++i)
        EXPECT_GE(ups[i] - ups[i - 1], p.config().min_dwell);
}

TEST(RatePolicy, StepsDownPromptlyOnLowSnr)
{
    rate_policy p(ladder());
    p.set_current(m2400S, 0);
    double t = 0;
    for (; t < 60; t += 1)
        p.on_snr(18.0, t); // 2400S needs 16, 3200L needs 18 + 3: stays
    EXPECT_EQ(p.recommended(), m2400S);
    double drop = t;
    double down_at = -1;
    double at_300L = -1;
    for (; t < drop + 30; t += 1) {
        p.on_snr(4.0, t);
        if (down_at < 0 && p.recommended() != m2400S)
            down_at = t;
        if (at_300L < 0 && p.recommended() == m300L)
            at_300L = t;
    }
    EXPECT_GE(at_300L, 0);
    EXPECT_LE(at_300L - drop, 15.0);
    ASSERT_GE(down_at, 0);
    EXPECT_LE(down_at - drop, 2.0); // within a couple of reports, no dwell
    // Follows the fast average down to the best mode 4 dB supports: 300L (3 dB).
    EXPECT_EQ(p.recommended(), m300L);
    EXPECT_EQ(p.counters().step_ups, 0u);
}

// A report a little below the mode's threshold (within the reports' scatter) does not
// step down; one beyond the margin does, to the least robust entry it clears so.
TEST(RatePolicy, StepDownMarginHoldsOffSmallDips)
{
    rate_policy_config c = ladder();
    c.step_down_margin_db = 2.0;
    rate_policy p(c);
    p.set_current(m2400S, 0); // needs 16
    p.on_snr(17.0, 0);
    p.on_snr(14.5, 100);
    EXPECT_EQ(p.recommended(), m2400S);
    EXPECT_EQ(p.counters().step_downs_snr, 0u);
    p.on_snr(10.0, 200); // 1200S needs 11: 10 clears 11 - 2, not 14 - 2
    EXPECT_EQ(p.recommended(), (modem_mode{ rate_1200, interleaving_short }));
    EXPECT_EQ(p.counters().step_downs_snr, 1u);
    EXPECT_EQ(rate_policy_config().step_down_margin_db, 0.5); // the default
}

// A low report of a burst whose frames arrived in the recommended mode does not step
// down; one whose frames were damaged or unreadable, too few, or in another mode does.
TEST(RatePolicy, AWorkingBurstHoldsOffAnSnrStepDown)
{
    rate_policy_config c = ladder();
    c.correct_snr_reports = false; // the figures as given
    const auto at_2400S = [&] {
        rate_policy p(c);
        p.set_current(m2400S, 0); // needs 16
        p.on_snr(17.0, 0);
        return p;
    };
    auto works = at_2400S();
    works.on_snr_report(4.0, m2400S, 100, 60, burst_frames{ 40, 12 });
    EXPECT_EQ(works.recommended(), m2400S);
    EXPECT_EQ(works.counters().step_downs_held, 1u);
    EXPECT_EQ(works.counters().step_downs_snr, 0u);
    auto damaged = at_2400S();
    damaged.on_snr_report(4.0, m2400S, 100, 60, burst_frames{ 30, 20 });
    EXPECT_EQ(damaged.recommended(), m300L);
    // Good frames before lock was lost, the rest of the burst unreadable: not working.
    auto cut = at_2400S();
    cut.on_snr_report(4.0, m2400S, 100, 60, burst_frames{ 40, 0, 60 });
    EXPECT_EQ(cut.recommended(), m300L);
    auto little_junk = at_2400S();
    little_junk.on_snr_report(4.0, m2400S, 100, 60, burst_frames{ 40, 2, 3 });
    EXPECT_EQ(little_junk.recommended(), m2400S);
    auto few = at_2400S();
    few.on_snr_report(4.0, m2400S, 100, 60, burst_frames{ 7, 0 });
    EXPECT_EQ(few.recommended(), m300L);
    auto other_mode = at_2400S();
    other_mode.on_snr_report(
        4.0, modem_mode{ rate_1200, interleaving_long }, 100, 60, burst_frames{ 40, 0 });
    EXPECT_EQ(other_mode.recommended(), m300L);
    c.burst_works_frames = 0; // off
    auto off = at_2400S();
    off.on_snr_report(4.0, m2400S, 100, 60, burst_frames{ 40, 0 });
    EXPECT_EQ(off.recommended(), m300L);
}

TEST(RatePolicy, RetransmissionRateForcesStepDownAndGatesStepUp)
{
    rate_policy p(ladder());
    p.set_current(m2400S, 0);
    double t = 0;
    for (; t < 30; t += 1)
        p.on_snr(20.0, t);
    EXPECT_EQ(p.recommended(), m2400S);
    p.on_arq_stats(20, 10, t); // 50 % retransmitted
    EXPECT_EQ(p.recommended(), m2400L);
    EXPECT_EQ(p.counters().step_downs_retx, 1u);

    // 20 dB would allow 2400S again (16 + 3), but 15 % retransmissions block it.
    for (; t < 300; t += 1) {
        p.on_snr(20.0, t);
        if (int(t) % 5 == 0)
            p.on_arq_stats(20, 3, t);
    }
    EXPECT_EQ(p.recommended(), m2400L);
    EXPECT_NEAR(p.retransmission_rate(), 0.15, 0.01);

    // Clean traffic: the rate decays below 5 % and the step up follows.
    for (; t < 900 && p.recommended() == m2400L; t += 1) {
        p.on_snr(20.0, t);
        if (int(t) % 5 == 0)
            p.on_arq_stats(20, 0, t);
    }
    EXPECT_EQ(p.recommended(), m2400S);
    EXPECT_EQ(p.counters().step_ups, 1u);
    EXPECT_TRUE(std::isnan(p.retransmission_rate())); // statistics restart per mode
}

TEST(RatePolicy, RetransmissionsStepDownOnlyWhereTheNextModeWouldDeliverMore)
{
    // 3200S above 1200S: with half its frames sent again 3200S still delivers 1600 bit/s
    // against 1200S's 1200 at best, so it stays; past 1 - 1200/3200 = 62.5 % it steps
    // down. Without the goodput rule, 50 % (above retx_step_down 0.3) stepped down.
    const uint8_t S = interleaving_short;
    const modem_mode m3200S{ rate_3200, S };
    rate_policy_config c;
    c.table = { { { rate_300, S }, 5.0 }, { m1200S, 9.0 }, { m3200S, 10.5 } };
    c.step_down_margin_db = 0.0;
    auto at_3200S = [&c, &m3200S] {
        rate_policy p(c);
        p.set_current(m3200S, 0);
        p.on_snr(12.0, 0);
        return p;
    };
    auto half = at_3200S();
    half.on_arq_stats(40, 20, 1, m3200S);
    EXPECT_EQ(half.recommended(), m3200S);
    EXPECT_EQ(half.counters().step_downs_retx, 0u);
    auto most = at_3200S();
    most.on_arq_stats(40, 28, 1, m3200S); // 70 %
    EXPECT_EQ(most.recommended(), m1200S);
    EXPECT_EQ(most.counters().step_downs_retx, 1u);
    // 1200S above 300S: 75 %; at 50 % it stays.
    half.set_current(m1200S, 2);
    half.on_arq_stats(40, 20, 3, m1200S);
    EXPECT_EQ(half.recommended(), m1200S);
    c.retx_step_down_goodput = false;
    auto plain = at_3200S();
    plain.on_arq_stats(40, 20, 1, m3200S);
    EXPECT_EQ(plain.recommended(), m1200S);
}

TEST(RatePolicy, FewSegmentsDoNotTriggerRetransmissionStepDown)
{
    rate_policy p(ladder());
    p.set_current(m1200S, 0);
    p.on_arq_stats(2, 2, 1); // 100 % of 2 segments: below min_segments
    EXPECT_EQ(p.recommended(), m1200S);
}

// Noisy SNR around one threshold: count changes with the defaults and with the
// protections switched off (the latter must flap, proving the count can fail).
unsigned count_changes(const rate_policy_config& c, uint32_t seed)
{
    rate_policy p(c);
    p.set_current(m600S, 0); // 600S needs 8 dB, 1200L 9 dB
    std::mt19937 rng(seed);
    std::normal_distribution<double> noise(0.0, 1.5);
    unsigned changes = 0;
    size_t idx = p.recommended_index();
    for (double t = 0; t < 3000; t += 1) {
        p.on_snr(9.0 + noise(rng), t);
        if (p.recommended_index() != idx) {
            ++changes;
            idx = p.recommended_index();
        }
    }
    return changes;
}

TEST(RatePolicy, HysteresisPreventsFlapping)
{
    rate_policy_config guarded = ladder();
    unsigned with = count_changes(guarded, 12345);
    rate_policy_config bare = ladder();
    bare.hysteresis_db = 0;
    bare.sustain_time = 0;
    bare.min_dwell = 0;
    bare.slow_time_constant = 0.5;
    bare.fast_time_constant = 0.5;
    unsigned without = count_changes(bare, 12345);
    EXPECT_LE(with, 2u);
    EXPECT_GE(without, 100u);
}

// ===================================================================================
// rate_change: handshakes by hand
// ===================================================================================

TEST(RatePolicy, ReportsAreCorrectedThroughTheModesMeasuredMap)
{
    // 9600L's receiver reports a true 19 dB on fading as about 12.6 dB: taken as reported
    // that is below 6400S's threshold (and its step-down margin), corrected it is not.
    const auto* map = gr::hfstack::phy::measured_snr_report_map("9600L");
    ASSERT_NE(map, nullptr);
    const double report = map->report_for(19.0);
    const modem_mode m9600L{ rate_9600, interleaving_long },
        m6400S{ rate_6400, interleaving_short };
    rate_policy_config c;
    c.first_report_decides = false;
    rate_policy corrected(c);
    c.correct_snr_reports = false;
    rate_policy raw(c);
    for (auto* p : { &corrected, &raw })
        p->set_current(m6400S, 0);
    const double used = corrected.on_snr_report(report, m9600L, 1);
    raw.on_snr_report(report, m9600L, 1);
    EXPECT_NEAR(used, 19.0, 1e-9);
    EXPECT_EQ(corrected.counters().snr_reports_corrected, 1u);
    EXPECT_EQ(raw.counters().snr_reports_corrected, 0u);
    EXPECT_EQ(corrected.recommended(), m6400S);
    EXPECT_TRUE(less_robust(m6400S, raw.recommended())) << to_string(raw.recommended());
}

TEST(RatePolicy, FirstReportPicksTheModeAndLaterStepsUpGoAsFarAsTheSnrAllows)
{
    rate_policy p(ladder()); // starts at 300S (5 dB)
    p.on_snr(20.0, 0);       // 2400S needs 16 + 3: at once, no sustain or dwell
    EXPECT_EQ(p.recommended(), m2400S);
    EXPECT_EQ(p.counters().step_ups, 1u);
    p.on_snr(3.5, 100); // a step down as before: 300L (3 dB) is what 3.5 dB allows
    EXPECT_EQ(p.recommended(), (modem_mode{ rate_300, interleaving_long }));
    // Up again after sustain and dwell, several entries at once: 25 dB clears 4800L
    // (21 + 3) but not 6400L (24 + 3).
    double t = 101;
    for (; t < 300 && p.recommended() != (modem_mode{ rate_4800, interleaving_long });
         t += 1)
        p.on_snr(25.0, t);
    EXPECT_EQ(p.recommended(), (modem_mode{ rate_4800, interleaving_long }));
    EXPECT_GE(t, 100 + p.config().min_dwell);
    EXPECT_EQ(p.counters().step_ups, 2u);
    // A first report after set_current() decides again, also downwards.
    p.set_current(m2400S, t);
    p.on_snr(6.5, t + 1);
    EXPECT_EQ(p.recommended(), (modem_mode{ rate_600, interleaving_long }));
    // step_up_entries limits a jump.
    auto c = ladder();
    c.step_up_entries = 2;
    c.first_report_decides = false;
    rate_policy q(c);
    for (double u = 0; u < 100 && q.counters().step_ups == 0; u += 1)
        q.on_snr(40.0, u);
    EXPECT_EQ(q.recommended_index(), 3u + 2u);
}

TEST(RatePolicy, ALongBurstStepsUpOnItsRecentReport)
{
    // A 120 s burst in 1200S (11 dB) whose channel rose to 25 dB for its last 40 s: its
    // whole mean (about 16 dB) clears no more than 2400L (14 + 3); its last 20 s clear
    // 4800L (21 + 3), where the link goes at once (step_up_on_recent, the default).
    // A burst whose last 20 s read 4 dB (the channel fell) while its mean reads 16 dB:
    // by default (step_down_on_recent) the link goes to 300L at once; on the whole mean
    // alone it holds 1200S. Without a recent report (NaN) the whole one is used both
    // ways.
    const modem_mode m4800L{ rate_4800, interleaving_long };
    auto c = ladder();
    c.first_report_decides = false;
    c.correct_snr_reports = false;
    c.use_retransmission_rate = false;
    const rate_policy_config defaults = c;
    rate_policy by_default(c);
    c.step_down_on_recent = false;
    rate_policy up_only(c);
    c.step_up_on_recent = false;
    rate_policy whole(c);
    for (auto* p : { &by_default, &up_only, &whole })
        p->set_current(m1200S, 0);
    for (auto* p : { &by_default, &up_only, &whole })
        EXPECT_NEAR(p->on_snr_report(16.0, m1200S, 120, 120, {}, 25.0), 16.0, 1e-9);
    EXPECT_EQ(by_default.recommended(), m4800L);
    EXPECT_EQ(up_only.recommended(), m4800L);
    EXPECT_EQ(whole.recommended(), m1200S);
    EXPECT_EQ(by_default.counters().step_ups, 1u);

    for (auto* p : { &by_default, &up_only, &whole }) {
        p->set_current(m1200S, 200);
        p->on_snr_report(16.0, m1200S, 320, 120, {}, 4.0);
    }
    EXPECT_EQ(by_default.recommended(), m300L);
    EXPECT_EQ(up_only.recommended(), m1200S);
    EXPECT_EQ(whole.recommended(), m1200S);

    rate_policy none(defaults);
    none.set_current(m1200S, 0);
    none.on_snr_report(4.0, m1200S, 10, 10, {});
    EXPECT_EQ(none.recommended(), m300L);
}

TEST(RatePolicy, DamageFromBeforeARiseDoesNotHoldTheStepUp)
{
    // 2400L at 15 dB with a third of its frames damaged (below the step down, which
    // waits for 1 - 1200/2400); then the channel rises to 20 dB and the frames arrive
    // whole. The step up follows the rise once the slow SNR average and the sustain
    // time allow (43 s), not once the old damage has decayed below 5 % (over 100 s).
    auto c = ladder();
    c.first_report_decides = false;
    c.correct_snr_reports = false;
    rate_policy p(c);
    p.set_current(m2400L, 0);
    double t = 0;
    for (; t < 120; t += 1) {
        p.on_snr(15.0, t);
        if (int(t) % 5 == 0)
            p.on_arq_stats(30, 10, t, m2400L);
    }
    ASSERT_EQ(p.recommended(), m2400L);
    ASSERT_NEAR(p.retransmission_rate(), 1.0 / 3, 0.01);
    const double rise = t;
    for (; t < rise + 200 && p.recommended() == m2400L; t += 1) {
        p.on_snr(20.0, t);
        if (int(t) % 5 == 0)
            p.on_arq_stats(30, 0, t, m2400L);
    }
    EXPECT_EQ(p.recommended(), m2400S);
    EXPECT_LE(t - rise, 60.0);
    // Damage while the SNR is up still holds the step up.
    rate_policy q(c);
    q.set_current(m2400L, 0);
    for (t = 0; t < 300; t += 1) {
        q.on_snr(20.0, t);
        if (int(t) % 5 == 0)
            q.on_arq_stats(20, 3, t, m2400L);
    }
    EXPECT_EQ(q.recommended(), m2400L);
}

TEST(RatePolicy, ArqStatisticsOfAModeAlreadyLeftAreIgnored)
{
    rate_policy p(ladder());
    p.set_current(m2400S, 0);
    p.on_snr(18.0, 0); // stays at 2400S
    ASSERT_EQ(p.recommended(), m2400S);
    // Damaged frames of 2400S: one step down on the retransmission rate.
    p.on_arq_stats(40, 30, 1, m2400S);
    const modem_mode after = p.recommended();
    EXPECT_TRUE(less_robust(m2400S, after));
    // More of the same burst's damaged 2400S frames: nothing new.
    p.on_arq_stats(40, 30, 2, m2400S);
    p.on_arq_stats(40, 30, 3, m2400S);
    EXPECT_EQ(p.recommended(), after);
    EXPECT_EQ(p.counters().step_downs_retx, 1u);
    EXPECT_EQ(p.counters().arq_reports_stale, 2u);
    // The new mode's own damaged frames count.
    p.on_arq_stats(40, 30, 4, after);
    EXPECT_TRUE(less_robust(after, p.recommended()));
    // more_robust(): entries below the given mode's place in the table.
    EXPECT_EQ(p.more_robust(m2400S, 2), (modem_mode{ rate_1200, interleaving_short }));
    EXPECT_EQ(p.more_robust(m2400S, 100), (modem_mode{ rate_75, interleaving_long }));
}

} // namespace
