/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

// Data rate change tests (STANAG 5066 Ed.3 Annex C.5 types 1/2 and C.6.4): the rate
// policy (averaging, dwell, hysteresis, retransmission input), hand-driven handshakes
// with EOW bytes computed through eow_content(), and two nodes back to back through the
// D_PDU codec over a lossy link.
#include "dl/rate_change.h"
#include "phy/snr_report_map.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>

using namespace gr::hfstack::dl;

namespace {

constexpr uint32_t A = 1, B = 2;
const modem_mode m300S{ rate_300, interleaving_short };
const modem_mode m300L{ rate_300, interleaving_long };
const modem_mode m600S{ rate_600, interleaving_short };
const modem_mode m1200S{ rate_1200, interleaving_short };
const modem_mode m1200L{ rate_1200, interleaving_long };
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
        { { rate_75, L }, -3.0 },   { { rate_150, L }, 0.0 },   { { rate_300, L }, 3.0 },
        { { rate_300, S }, 5.0 },   { { rate_600, L }, 6.0 },   { { rate_600, S }, 8.0 },
        { { rate_1200, L }, 9.0 },  { { rate_1200, S }, 11.0 }, { { rate_2400, L }, 14.0 },
        { { rate_2400, S }, 16.0 }, { { rate_3200, L }, 18.0 }, { { rate_4800, L }, 21.0 },
        { { rate_6400, L }, 24.0 }, { { rate_8000, L }, 27.0 }, { { rate_9600, L }, 30.0 },
    };
    c.hysteresis_db = 3.0;       // the figures below assume it
    c.step_down_margin_db = 0.0; // and this
    return c;
}

uint8_t req(uint8_t rate, uint8_t il, uint8_t other)
{
    eow_rate_request r;
    r.data_rate = rate;
    r.interleaving = il;
    r.other = other;
    return eow_content(r);
}
uint8_t resp(uint8_t response, uint8_t reason)
{
    eow_rate_response r;
    r.response = response;
    r.reason = reason;
    return eow_content(r);
}

rate_change_config cfg(uint32_t own, uint32_t peer)
{
    rate_change_config c;
    c.own_address = own;
    c.peer_address = peer;
    c.ack_timeout = 10.0;
    return c;
}

// Through the codec, as on the air.
dpdu wire(const dpdu& d)
{
    bytes b = encode(d);
    auto r = decode_dpdu(b.data(), b.size());
    EXPECT_TRUE(r.ok()) << r.reason;
    return r.value;
}

// Takes `from`'s MANAGEMENT D_PDUs (exactly one expected) and returns it.
dpdu take_one(rate_change& from, double now, modem_mode* mode = nullptr)
{
    auto t = from.take_management(now);
    EXPECT_TRUE(t.has_value());
    if (!t)
        return dpdu();
    EXPECT_EQ(t->dpdus.size(), 1u);
    if (mode)
        *mode = t->mode;
    return wire(t->dpdus.at(0));
}

// A DATA-ONLY D_PDU from `src` to `dst` carrying an EOW.
dpdu data_with_eow(uint32_t src, uint32_t dst, eow_type t, uint8_t content)
{
    dpdu d;
    d.type = dpdu_type::data_only;
    d.source = src;
    d.destination = dst;
    d.eow = t;
    d.eow_content = content;
    d.cpdu_start = d.cpdu_end = true;
    d.segment = { 0x00 };
    return wire(d);
}

bool has_event(const std::vector<drc_event>& ev, drc_event_type t)
{
    return std::any_of(ev.begin(), ev.end(), [&](const drc_event& e) { return e.type == t; });
}

// ===================================================================================
// rate_policy
// ===================================================================================

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
    other_mode.on_snr_report(4.0, modem_mode{ rate_1200, interleaving_long }, 100, 60,
                             burst_frames{ 40, 0 });
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

TEST(RateChange, AutobaudFollowsAnAdvisoryAtOnceWithoutTheProcedure)
{
    auto ca = cfg(A, B), cb = cfg(B, A);
    ca.autobaud = cb.autobaud = true;
    rate_change a(ca), b(cb);
    b.advise_rx(m2400L, 0);
    auto adv = b.take_eow(0);
    ASSERT_TRUE(adv);
    a.on_dpdu(data_with_eow(B, A, adv->first, adv->second), 0);
    EXPECT_EQ(a.tx_mode(), m2400L);
    EXPECT_EQ(a.state(), drc_state::idle);
    EXPECT_FALSE(a.management_pending());
    EXPECT_TRUE(has_event(a.take_events(), drc_event_type::tx_mode_changed));
    // b keeps advising until a burst in the advised mode arrives.
    EXPECT_TRUE(b.take_eow(1));
    b.on_burst_mode(m2400L);
    EXPECT_EQ(b.rx_mode(), m2400L);
    EXPECT_FALSE(b.take_eow(1));
    // Without autobaud the burst's mode changes nothing.
    rate_change c(cfg(A, B));
    c.on_burst_mode(m2400L);
    EXPECT_EQ(c.rx_mode(), initial_drc_mode);
}

TEST(RateChange, UnansweredStepDownIgnoresStaleAdviceUntilAnswered)
{
    auto ca = cfg(A, B);
    ca.autobaud = true;
    rate_change a(ca);
    ASSERT_TRUE(a.request_tx(m2400S, 0));
    EXPECT_EQ(a.tx_mode(), m2400S);
    const modem_mode m600L{ rate_600, interleaving_long };
    EXPECT_FALSE(a.step_down_unanswered(m2400S, 1)); // not more robust
    ASSERT_TRUE(a.step_down_unanswered(m600L, 1));
    EXPECT_EQ(a.tx_mode(), m600L);
    EXPECT_EQ(a.counters().unanswered_step_downs, 1u);
    // The peer's advice for 2400S rests on what it measured before: ignored...
    eow_rate_request r;
    r.data_rate = rate_2400;
    r.interleaving = interleaving_short;
    r.other = 2; // advisory, independent Tx and Rx (Table C-7)
    a.on_dpdu(data_with_eow(B, A, eow_type::drc_request, eow_content(r)), 2);
    EXPECT_EQ(a.tx_mode(), m600L);
    EXPECT_EQ(a.counters().stale_advisories, 1u);
    // ... advice for a more robust mode is not ...
    r.data_rate = rate_300;
    r.interleaving = interleaving_long;
    a.on_dpdu(data_with_eow(B, A, eow_type::drc_request, eow_content(r)), 3);
    EXPECT_EQ(a.tx_mode(), (modem_mode{ rate_300, interleaving_long }));
    // ... and once the peer has answered, any advice is followed.
    a.on_peer_answered();
    r.data_rate = rate_2400;
    r.interleaving = interleaving_short;
    a.on_dpdu(data_with_eow(B, A, eow_type::drc_request, eow_content(r)), 4);
    EXPECT_EQ(a.tx_mode(), m2400S);
    // Without autobaud there is no unanswered step down.
    rate_change c(cfg(A, B));
    EXPECT_FALSE(c.step_down_unanswered(m600L, 0));
}

TEST(RateChange, AdvisoryEowBytes)
{
    rate_change b(cfg(B, A));
    EXPECT_FALSE(b.take_eow(0).has_value()); // nothing advised
    b.advise_rx(m300S, 0);
    EXPECT_FALSE(b.take_eow(0).has_value()); // already the rx mode
    b.advise_rx(m2400L, 0);
    auto e = b.take_eow(0);
    ASSERT_TRUE(e.has_value());
    EXPECT_EQ(e->first, eow_type::drc_request);
    EXPECT_EQ(e->second, req(rate_2400, interleaving_long, 2)); // advisory, independent
    EXPECT_EQ(e->second, 0x5A);                                 // 0101 10 10

    auto cfg_eq = cfg(B, A);
    cfg_eq.tx_equals_rx = true;
    rate_change b2(cfg_eq);
    b2.advise_rx(m1200S, 0);
    EXPECT_EQ(b2.take_eow(0)->second, 0x47); // 0100 01 11: advisory, Tx = Rx
}

TEST(RateChange, AdvisoryRequestAcceptConfirmSwitchesBoth)
{
    rate_change a(cfg(A, B)), b(cfg(B, A));
    double t = 0;
    b.advise_rx(m2400L, t);
    auto adv = b.take_eow(t);
    ASSERT_TRUE(adv);
    a.on_dpdu(data_with_eow(B, A, adv->first, adv->second), t);
    EXPECT_EQ(a.state(), drc_state::master_requesting);
    EXPECT_EQ(a.counters().advisories_followed, 1u);

    modem_mode mode;
    dpdu rq = take_one(a, t, &mode); // [2] DRC_Request in a MANAGEMENT D_PDU
    EXPECT_EQ(rq.type, dpdu_type::management);
    EXPECT_EQ(rq.source, A);
    EXPECT_EQ(rq.destination, B);
    EXPECT_TRUE(rq.valid_message);
    EXPECT_FALSE(rq.management_ack);
    EXPECT_EQ(rq.management_frame_id, 0);
    EXPECT_EQ(rq.eow, eow_type::drc_request);
    EXPECT_EQ(rq.eow_content, req(rate_2400, interleaving_long, 0)); // request, indep.
    EXPECT_EQ(rq.eow_content, 0x58);
    EXPECT_EQ(mode, m300S);
    EXPECT_EQ(a.next_deadline(), t + 10.0);

    t += 3;
    b.on_dpdu(rq, t);
    EXPECT_EQ(b.state(), drc_state::slave_accepted);
    EXPECT_FALSE(b.take_eow(t)); // no advisory while a procedure runs
    dpdu acc = take_one(b, t); // [3] accept, unconditional; ACK flag acks [2]
    EXPECT_TRUE(acc.valid_message);
    EXPECT_TRUE(acc.management_ack);
    EXPECT_EQ(acc.management_frame_id, 0);
    EXPECT_EQ(acc.eow, eow_type::drc_response);
    EXPECT_EQ(acc.eow_content, resp(0, 0));
    EXPECT_EQ(acc.eow_content, 0x00);
    EXPECT_EQ(b.rx_mode(), m300S); // (29): not before the DT_ACK

    t += 3;
    a.on_dpdu(acc, t);
    EXPECT_EQ(a.state(), drc_state::master_confirming);
    EXPECT_EQ(a.tx_mode(), m300S); // the DT_ACK itself still goes out in 300S
    dpdu ack = take_one(a, t, &mode); // [4] DT_ACK
    EXPECT_EQ(mode, m300S);
    EXPECT_FALSE(ack.valid_message);
    EXPECT_TRUE(ack.management_ack);
    EXPECT_EQ(ack.management_frame_id, 0); // ID of the frame acknowledged
    EXPECT_EQ(a.tx_mode(), m2400L);        // (28): switched after the DT_ACK
    EXPECT_EQ(a.rx_mode(), m300S);         // independent modem: Tx only
    auto ea = a.take_events();
    ASSERT_EQ(ea.size(), 1u);
    EXPECT_EQ(ea[0].type, drc_event_type::tx_mode_changed);
    EXPECT_EQ(ea[0].mode, m2400L);

    t += 3;
    b.on_dpdu(ack, t);
    EXPECT_EQ(b.rx_mode(), m2400L);
    EXPECT_EQ(b.tx_mode(), m300S);
    dpdu conf = take_one(b, t); // [5] confirm
    EXPECT_TRUE(conf.valid_message);
    EXPECT_EQ(conf.management_frame_id, 1);
    EXPECT_EQ(conf.eow_content, resp(3, 0));
    EXPECT_EQ(conf.eow_content, 0x60);

    t += 3;
    a.on_dpdu(conf, t);
    EXPECT_EQ(a.state(), drc_state::idle);
    dpdu ack2 = take_one(a, t);
    EXPECT_FALSE(ack2.valid_message);
    EXPECT_TRUE(ack2.management_ack);
    ea = a.take_events();
    ASSERT_EQ(ea.size(), 1u);
    EXPECT_EQ(ea[0].type, drc_event_type::completed);
    EXPECT_EQ(ea[0].role, drc_role::master);

    t += 3;
    b.on_dpdu(ack2, t);
    EXPECT_EQ(b.state(), drc_state::idle);
    auto eb = b.take_events();
    EXPECT_TRUE(has_event(eb, drc_event_type::rx_mode_changed));
    EXPECT_TRUE(has_event(eb, drc_event_type::completed));
    EXPECT_FALSE(b.take_management(t));
    EXPECT_FALSE(b.take_eow(t)); // goal reached: no more advisories
    EXPECT_EQ(a.next_deadline(), std::numeric_limits<double>::infinity());
    EXPECT_EQ(a.counters().completed, 1u);
    EXPECT_EQ(b.counters().completed, 1u);
}

TEST(RateChange, SlaveWithTxEqualsRxAcceptsWithReason1AndBothDirectionsChange)
{
    auto cb = cfg(B, A);
    cb.tx_equals_rx = true;
    rate_change a(cfg(A, B)), b(cb);
    double t = 0;
    ASSERT_TRUE(a.request_tx(m1200L, t));
    b.on_dpdu(take_one(a, t), t);
    dpdu acc = take_one(b, t);
    EXPECT_EQ(acc.eow_content, resp(0, 1));
    EXPECT_EQ(acc.eow_content, 0x01);
    a.on_dpdu(acc, t);
    dpdu ack = take_one(a, t);
    EXPECT_EQ(a.tx_mode(), m1200L);
    EXPECT_EQ(a.rx_mode(), m1200L); // Note 1: applies to Tx and Rx
    b.on_dpdu(ack, t);
    EXPECT_EQ(b.tx_mode(), m1200L);
    EXPECT_EQ(b.rx_mode(), m1200L);
    modem_mode mode;
    dpdu conf = take_one(b, t, &mode);
    EXPECT_EQ(mode, m1200L); // confirm at the new parameters
    a.on_dpdu(conf, t);
    b.on_dpdu(take_one(a, t), t);
    EXPECT_EQ(a.state(), drc_state::idle);
    EXPECT_EQ(b.state(), drc_state::idle);
}

TEST(RateChange, MasterWithTxEqualsRxSendsOther1)
{
    auto ca = cfg(A, B);
    ca.tx_equals_rx = true;
    rate_change a(ca);
    ASSERT_TRUE(a.request_tx(m600S, 0));
    EXPECT_EQ(take_one(a, 0).eow_content, req(rate_600, interleaving_short, 1));
}

TEST(RateChange, RefusalKeepsOldModeAndStopsAskingForThatParameter)
{
    auto cb = cfg(B, A);
    cb.supported.clear();
    for (uint8_t r = rate_75; r <= rate_1200; ++r) {
        cb.supported.insert({ r, interleaving_short });
        cb.supported.insert({ r, interleaving_long });
    }
    rate_change a(cfg(A, B)), b(cb);
    double t = 0;
    ASSERT_TRUE(a.request_tx(m2400S, t));
    b.on_dpdu(take_one(a, t), t);
    dpdu ref = take_one(b, t);
    EXPECT_TRUE(ref.management_ack);
    EXPECT_EQ(ref.eow_content, resp(1, 2)); // not possible to change data rate
    EXPECT_EQ(ref.eow_content, 0x22);
    EXPECT_EQ(b.state(), drc_state::slave_refused);

    a.on_dpdu(ref, t);
    EXPECT_EQ(a.state(), drc_state::master_cancelling);
    dpdu cancel = take_one(a, t);
    EXPECT_TRUE(cancel.valid_message);
    EXPECT_TRUE(cancel.management_ack);
    EXPECT_EQ(cancel.eow_content, resp(2, 0));
    EXPECT_EQ(cancel.eow_content, 0x40);

    b.on_dpdu(cancel, t);
    dpdu ack = take_one(b, t);
    EXPECT_FALSE(ack.valid_message);
    EXPECT_TRUE(ack.management_ack);
    auto eb = b.take_events();
    ASSERT_EQ(eb.size(), 1u);
    EXPECT_EQ(eb[0].type, drc_event_type::failed);
    EXPECT_EQ(eb[0].cause, drc_cause::refused_by_us);
    EXPECT_EQ(eb[0].reason, 2);
    EXPECT_FALSE(eb[0].connection_lost);

    a.on_dpdu(ack, t);
    auto ea = a.take_events();
    ASSERT_EQ(ea.size(), 1u);
    EXPECT_EQ(ea[0].type, drc_event_type::failed);
    EXPECT_EQ(ea[0].cause, drc_cause::refused_by_peer);
    EXPECT_EQ(ea[0].reason, 2);
    for (auto* n : { &a, &b }) {
        EXPECT_EQ(n->state(), drc_state::idle);
        EXPECT_EQ(n->tx_mode(), m300S);
        EXPECT_EQ(n->rx_mode(), m300S);
    }
    // The peer cannot change its data rate: no more requests for another rate.
    EXPECT_FALSE(a.request_tx(m600S, t));
    EXPECT_TRUE(a.request_tx(m300L, t)); // same rate, other interleaver is allowed
}

// The slave's refusal reason for a request (Table C-8, C.6.4.2 (22),(23)).
uint8_t refusal_for(const rate_change_config& cb, const modem_mode& m,
                    std::optional<modem_mode> advised = std::nullopt)
{
    rate_change b(cb);
    if (advised)
        b.advise_rx(*advised, 0);
    dpdu d;
    d.type = dpdu_type::management;
    d.source = A;
    d.destination = B;
    d.valid_message = true;
    d.management_frame_id = 7;
    d.eow = eow_type::drc_request;
    d.eow_content = req(m.data_rate, m.interleaving, 0);
    b.on_dpdu(wire(d), 0);
    auto t = b.take_management(0);
    EXPECT_TRUE(t);
    auto r = eow_as_rate_response(t->dpdus.at(0).eow_content);
    EXPECT_EQ(t->dpdus.at(0).management_frame_id, 0);
    return r.response == 0 ? 0 : r.reason;
}

TEST(RateChange, PeerRequestForUnsupportedModeRefusedWithReason)
{
    auto cb = cfg(B, A);
    cb.supported = { m300S, m600S, m1200S };
    EXPECT_EQ(refusal_for(cb, m600S), 0);
    EXPECT_EQ(refusal_for(cb, m300L), 3);  // 300 bps exists, long interleaving does not
    EXPECT_EQ(refusal_for(cb, m2400S), 2); // short exists, 2400 bps does not
    EXPECT_EQ(refusal_for(cb, m2400L), 4); // neither
    EXPECT_EQ(refusal_for(cb, modem_mode{ 14, interleaving_short }), 4); // reserved rate
    // Local conditions (23): a mode less robust than what we advise and than now.
    auto full = cfg(B, A);
    EXPECT_EQ(refusal_for(full, m2400S, m600S), 5);
    EXPECT_EQ(refusal_for(full, m300L, m600S), 0); // more robust: never reason 5
    full.refuse_less_robust_than_advised = false;
    EXPECT_EQ(refusal_for(full, m2400S, m600S), 0);
}

TEST(RateChange, RefusalForLocalConditionsHoldsOffThatAdvisory)
{
    rate_change a(cfg(A, B));
    a.request_tx(m2400S, 0);
    take_one(a, 0);
    dpdu ref;
    ref.type = dpdu_type::management;
    ref.source = B;
    ref.destination = A;
    ref.valid_message = ref.management_ack = true;
    ref.eow = eow_type::drc_response;
    ref.eow_content = resp(1, 5);
    a.on_dpdu(wire(ref), 1);
    dpdu ack;
    ack.type = dpdu_type::management;
    ack.source = B;
    ack.destination = A;
    ack.management_ack = true;
    take_one(a, 1);
    a.on_dpdu(wire(ack), 2);
    EXPECT_EQ(a.state(), drc_state::idle);
    // Same advisory again within the holdoff: ignored (Note 6); later: followed.
    a.on_dpdu(data_with_eow(B, A, eow_type::drc_request, req(rate_2400, 1, 2)), 10);
    EXPECT_EQ(a.state(), drc_state::idle);
    a.on_dpdu(data_with_eow(B, A, eow_type::drc_request, req(rate_1200, 1, 2)), 11);
    EXPECT_EQ(a.state(), drc_state::master_requesting);
}

TEST(RateChange, LostResponsesRetryWithSameIdThenConnectionLost)
{
    auto ca = cfg(A, B);
    rate_change a(ca);
    double t = 0;
    ASSERT_TRUE(a.request_tx(m1200S, t));
    dpdu first = take_one(a, t);
    for (unsigned i = 0; i < ca.max_retries; ++i) {
        t = a.next_deadline();
        EXPECT_EQ(t, (i + 1) * ca.ack_timeout);
        a.on_timer(t - 0.001);
        EXPECT_FALSE(a.take_management(t)); // not yet
        a.on_timer(t);
        dpdu again = take_one(a, t);
        EXPECT_EQ(again, first); // same frame ID and content (C.3.9 (20))
    }
    EXPECT_EQ(a.counters().retransmissions, ca.max_retries);
    EXPECT_EQ(a.counters().requests_sent, 1u + ca.max_retries);
    t = a.next_deadline();
    a.on_timer(t);
    EXPECT_EQ(a.state(), drc_state::idle);
    auto ev = a.take_events();
    ASSERT_EQ(ev.size(), 1u);
    EXPECT_EQ(ev[0].type, drc_event_type::failed);
    EXPECT_EQ(ev[0].cause, drc_cause::timeout);
    EXPECT_TRUE(ev[0].connection_lost);
    EXPECT_EQ(a.counters().connection_losses, 1u);
    EXPECT_EQ(a.tx_mode(), m300S);
    EXPECT_EQ(a.next_deadline(), std::numeric_limits<double>::infinity());
}

TEST(RateChange, TimeoutAfterSwitchRevertsToInitialMode)
{
    auto ca = cfg(A, B);
    rate_change a(ca), b(cfg(B, A));
    double t = 0;
    a.request_tx(m2400S, t);
    b.on_dpdu(take_one(a, t), t);
    a.on_dpdu(take_one(b, t), t);
    take_one(a, t); // DT_ACK lost; a has switched
    EXPECT_EQ(a.tx_mode(), m2400S);
    a.take_events();
    EXPECT_EQ(a.next_deadline(), (ca.max_retries + 2) * ca.ack_timeout);
    a.on_timer(a.next_deadline());
    auto ev = a.take_events();
    ASSERT_GE(ev.size(), 2u);
    EXPECT_EQ(ev[0].type, drc_event_type::failed);
    EXPECT_TRUE(ev[0].connection_lost);
    EXPECT_TRUE(has_event(ev, drc_event_type::tx_mode_changed));
    EXPECT_EQ(a.tx_mode(), m300S); // a new connection starts at 300S (C.6.4.1)
}

TEST(RateChange, LostDtAckRecoveredByRepeatedAccept)
{
    rate_change a(cfg(A, B)), b(cfg(B, A));
    double t = 0;
    a.request_tx(m600S, t);
    dpdu rq = take_one(a, t);
    b.on_dpdu(rq, t);
    dpdu acc = take_one(b, t);
    b.on_dpdu(rq, t + 1); // a repeated request: answered again, not reprocessed
    EXPECT_EQ(take_one(b, t + 1), acc);
    EXPECT_EQ(b.counters().duplicates_received, 1u);
    EXPECT_EQ(b.counters().requests_received, 1u);

    a.on_dpdu(acc, t + 2);
    take_one(a, t + 2); // DT_ACK lost
    t = b.next_deadline();
    b.on_timer(t);
    dpdu acc2 = take_one(b, t);
    EXPECT_EQ(acc2, acc); // same frame ID
    a.on_dpdu(acc2, t);
    dpdu ack = take_one(a, t); // the repetition gets the DT_ACK again
    EXPECT_TRUE(ack.management_ack);
    EXPECT_FALSE(ack.valid_message);
    b.on_dpdu(ack, t);
    EXPECT_EQ(b.rx_mode(), m600S);
    a.on_dpdu(take_one(b, t), t);
    b.on_dpdu(take_one(a, t), t);
    EXPECT_EQ(a.state(), drc_state::idle);
    EXPECT_EQ(b.state(), drc_state::idle);
    EXPECT_EQ(a.tx_mode(), b.rx_mode());
}

TEST(RateChange, CopiesRepeatEachManagementDpdu)
{
    auto ca = cfg(A, B);
    ca.copies = 3;
    rate_change a(ca);
    a.request_tx(m600S, 0);
    auto tr = a.take_management(0);
    ASSERT_TRUE(tr);
    ASSERT_EQ(tr->dpdus.size(), 3u);
    EXPECT_EQ(tr->dpdus[0], tr->dpdus[2]);
}

TEST(RateChange, CollisionLowerAddressYields)
{
    rate_change a(cfg(A, B)), b(cfg(B, A)); // A = 1 < B = 2
    a.request_tx(m600S, 0);
    b.request_tx(m1200S, 0);
    dpdu ra = take_one(a, 0), rb = take_one(b, 0);
    b.on_dpdu(ra, 1); // higher address ignores
    EXPECT_EQ(b.state(), drc_state::master_requesting);
    EXPECT_FALSE(b.take_management(1));
    a.on_dpdu(rb, 1); // lower address yields and answers
    EXPECT_EQ(a.state(), drc_state::slave_accepted);
    auto ea = a.take_events();
    ASSERT_EQ(ea.size(), 1u);
    EXPECT_EQ(ea[0].cause, drc_cause::collision);
    // Finish B's change; then A's remembered request starts by itself.
    b.on_dpdu(take_one(a, 1), 2);
    a.on_dpdu(take_one(b, 2), 3);
    b.on_dpdu(take_one(a, 3), 4);
    a.on_dpdu(take_one(b, 4), 5);
    EXPECT_EQ(a.state(), drc_state::master_requesting);
    EXPECT_EQ(b.tx_mode(), m1200S);
    EXPECT_EQ(a.rx_mode(), m1200S);
    dpdu again = take_one(a, 5);
    EXPECT_EQ(again.eow_content, req(rate_600, interleaving_short, 0));
}

TEST(RateChange, IgnoresOtherSourcesAndStrayMessages)
{
    rate_change a(cfg(A, B));
    a.on_dpdu(data_with_eow(3, A, eow_type::drc_request, req(rate_600, 1, 2)), 0);
    EXPECT_EQ(a.state(), drc_state::idle);
    // A request (other 0) outside a MANAGEMENT D_PDU is not a procedure.
    a.on_dpdu(data_with_eow(B, A, eow_type::drc_request, req(rate_600, 1, 0)), 0);
    EXPECT_EQ(a.state(), drc_state::idle);
    EXPECT_EQ(a.counters().ignored, 1u);
    // A stray confirm while idle.
    dpdu c;
    c.type = dpdu_type::management;
    c.source = B;
    c.destination = A;
    c.valid_message = true;
    c.eow = eow_type::drc_response;
    c.eow_content = resp(3, 0);
    a.on_dpdu(wire(c), 0);
    EXPECT_EQ(a.state(), drc_state::idle);
    EXPECT_EQ(a.tx_mode(), m300S);
}

// ===================================================================================
// Two nodes back to back through the D_PDU codec, lossy link
// ===================================================================================

struct link_sim {
    rate_change a, b;
    std::mt19937 rng;
    double loss = 0.0;
    bool strict = false; // a burst is only heard in the receiver's rx mode
    struct in_flight {
        double at;
        bool to_b;
        modem_mode mode;
        bytes burst_bytes;
        std::vector<size_t> sizes;
    };
    std::vector<in_flight> air;
    unsigned resets = 0;

    link_sim(const rate_change_config& ca, const rate_change_config& cb, uint32_t seed)
        : a(ca), b(cb), rng(seed)
    {
    }

    void transmit(rate_change& from, bool to_b, double now)
    {
        auto eow = from.take_eow(now);
        auto mg = from.take_management(now);
        std::vector<dpdu> pdus;
        modem_mode mode = from.tx_mode();
        if (mg) {
            pdus = mg->dpdus;
            mode = mg->mode;
        }
        dpdu data; // one DATA-ONLY D_PDU carrying the advisory, if any
        data.type = dpdu_type::data_only;
        data.source = from.config().own_address;
        data.destination = from.config().peer_address;
        data.cpdu_start = data.cpdu_end = true;
        data.segment = { 1, 2, 3 };
        if (eow) {
            data.eow = eow->first;
            data.eow_content = eow->second;
        }
        pdus.push_back(data);
        in_flight f{ now + 2.0, to_b, mode, {}, {} };
        for (auto& d : pdus) {
            bytes e = encode(d);
            f.sizes.push_back(e.size());
            f.burst_bytes.insert(f.burst_bytes.end(), e.begin(), e.end());
        }
        air.push_back(f);
    }

    void deliver(double now)
    {
        std::uniform_real_distribution<double> u(0, 1);
        for (auto it = air.begin(); it != air.end();) {
            if (it->at > now) {
                ++it;
                continue;
            }
            rate_change& to = it->to_b ? b : a;
            bool heard = !strict || to.rx_mode() == it->mode;
            size_t off = 0;
            for (size_t s : it->sizes) {
                if (heard && u(rng) >= loss) {
                    auto r = decode_dpdu(it->burst_bytes.data() + off, s);
                    EXPECT_TRUE(r.ok());
                    to.on_dpdu(r.value, now);
                }
                off += s;
            }
            it = air.erase(it);
        }
    }

    // The engine's part: a connection lost on either side makes CAS drop the link and
    // make it again, after which both ends start over at the initial mode.
    void handle_events(double now)
    {
        bool lost = false;
        for (auto* n : { &a, &b })
            for (const auto& e : n->take_events())
                lost |= e.connection_lost;
        if (lost) {
            ++resets;
            a.reset(now);
            b.reset(now);
            air.clear();
        }
    }

    bool matched() const { return a.tx_mode() == b.rx_mode() && b.tx_mode() == a.rx_mode(); }
};

struct run_result {
    double max_mismatch = 0;
    unsigned completed = 0;
    unsigned resets = 0;
    bool converged = false;
};

run_result run_link(uint32_t seed, bool strict, double loss)
{
    auto ca = cfg(A, B), cb = cfg(B, A);
    ca.ack_timeout = cb.ack_timeout = 12.0;
    link_sim s(ca, cb, seed);
    s.strict = strict;
    const modem_mode wishes_a[] = { m2400L, m600S, m1200L, m300S, m2400S };
    const modem_mode wishes_b[] = { m1200S, m2400L, m300L, m600S, m1200L };
    run_result res;
    double mismatch_since = -1;
    const double phase1 = 4000, phase2 = 5000;
    for (double t = 0; t <= phase2; t += 0.5) {
        s.loss = t < phase1 ? loss : 0.0;
        const size_t k = t < phase1 ? size_t(t / 400) % 5 : 0;
        s.a.advise_rx(wishes_a[k], t); // what A wants B to send at
        s.b.advise_rx(wishes_b[k], t);
        s.deliver(t);
        s.handle_events(t);
        for (auto* n : { &s.a, &s.b })
            if (t >= n->next_deadline())
                n->on_timer(t);
        s.handle_events(t);
        double phase = std::fmod(t, 10.0);
        if (phase == 0.0)
            s.transmit(s.a, true, t);
        else if (phase == 5.0)
            s.transmit(s.b, false, t);
        s.handle_events(t);
        if (!s.matched()) {
            if (mismatch_since < 0)
                mismatch_since = t;
            res.max_mismatch = std::max(res.max_mismatch, t - mismatch_since);
        } else {
            mismatch_since = -1;
        }
    }
    res.completed = unsigned(s.a.counters().completed + s.b.counters().completed);
    res.resets = s.resets;
    std::printf("seed %u strict %d loss %.2f: completed %u, resets %u, longest mismatch "
                "%.1f s\n",
                seed, int(strict), loss, res.completed, s.resets, res.max_mismatch);
    res.converged = s.matched() && s.a.rx_mode() == wishes_a[0] &&
                    s.b.rx_mode() == wishes_b[0] && s.a.state() == drc_state::idle &&
                    s.b.state() == drc_state::idle;
    return res;
}

TEST(RateChangeLink, LossyLinkNeverMismatchedLongAndConverges)
{
    // Retry budget: the master waits (max_retries + 2) * ack_timeout for the confirm,
    // plus one exchange cycle of the simulated half-duplex link.
    const double budget = (3 + 2) * 12.0 + 10.0;
    for (uint32_t seed : { 1u, 2u, 3u }) {
        auto r = run_link(seed, false, 0.3);
        EXPECT_LE(r.max_mismatch, budget) << "seed " << seed;
        EXPECT_GE(r.completed, 10u) << "seed " << seed;
        EXPECT_TRUE(r.converged) << "seed " << seed;
    }
}

TEST(RateChangeLink, StrictModeReceiversStillBoundedAndConverge)
{
    // Receivers that only hear bursts in their current rx mode (no autobaud): a lost
    // DT_ACK strands the slave, the procedure times out and the link starts over.
    const double budget = (3 + 2) * 12.0 + 10.0;
    unsigned resets = 0;
    for (uint32_t seed : { 11u, 12u, 13u }) {
        auto r = run_link(seed, true, 0.2);
        EXPECT_LE(r.max_mismatch, budget) << "seed " << seed;
        EXPECT_TRUE(r.converged) << "seed " << seed;
        resets += r.resets;
    }
    EXPECT_GE(resets, 1u); // the timeout path was exercised
}

TEST(RateChangeLink, CleanLinkConvergesWithoutRetries)
{
    auto r = run_link(99, true, 0.0);
    EXPECT_EQ(r.resets, 0u);
    EXPECT_TRUE(r.converged);
    EXPECT_LE(r.max_mismatch, 10.0); // only between the DT_ACK and its delivery
}

} // namespace
