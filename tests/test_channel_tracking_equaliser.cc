/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

// Channel-tracking MMSE decision feedback equaliser: converges on a static two-path
// channel from a rough start, follows a channel that rotates between solutions (and,
// with follow_channel, paths that turn apart), keeps its own decision errors from
// spreading when a later path is the stronger, and refuses misuse.
#include "phy/channel_tracking_equaliser.h"
#include "phy/serial_tone_block_pass.h"

#include "expect_error.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <utility>
#include <vector>

using namespace gr::hfstack::phy;
using cd = std::complex<double>;

namespace {

constexpr double pi = 3.14159265358979323846;

// Received T/2 pairs r_p[t] = sum_m g_p[m] s[t - m] + noise for a channel that may
// change with t (taps(t)), taps indexed as the equaliser's: 2 (m + precursor) + p.
struct received_link {
    unsigned precursor, span;
    std::vector<cd> symbols;
    std::vector<cd> received; // 2 per symbol time

    template <typename Taps>
    received_link(unsigned pre,
                  unsigned post,
                  size_t n,
                  double noise_power,
                  Taps taps,
                  uint32_t seed)
        : precursor(pre), span(pre + post + 1), symbols(n), received(2 * n)
    {
        std::mt19937 rng(seed);
        std::normal_distribution<double> gauss(0.0, std::sqrt(noise_power / 2));
        for (auto& s : symbols)
            s = std::polar(1.0, 2 * pi / 8 * double(rng() % 8));
        for (size_t t = 0; t < n; ++t) {
            const std::vector<cd> g = taps(t);
            for (unsigned p = 0; p < 2; ++p) {
                cd r(gauss(rng), gauss(rng));
                for (unsigned i = 0; i < span; ++i) {
                    const long m = long(i) - long(precursor);
                    if (long(t) - m >= 0 && long(t) - m < long(n))
                        r += g[2 * i + p] * symbols[size_t(long(t) - m)];
                }
                received[2 * t + p] = r;
            }
        }
    }
    // Samples of symbol k's window: symbol times k - precursor .. k + postcursor.
    std::vector<cd> window(size_t k) const
    {
        std::vector<cd> w(2 * span);
        for (unsigned i = 0; i < span; ++i) {
            const long t = long(k) - long(precursor) + long(i);
            if (t >= 0 && size_t(t) < symbols.size()) {
                w[2 * i] = received[2 * size_t(t)];
                w[2 * i + 1] = received[2 * size_t(t) + 1];
            }
        }
        return w;
    }
};

// precursor 3: a path at the reference (tap 3) and an echo 5 symbols later, each with
// a T/2 pulse sample between symbol times either side.
std::vector<cd>
two_path_channel(cd first = 1.0, cd echo = cd(0, 0.7), unsigned postcursor = 8)
{
    std::vector<cd> g(2 * (3 + postcursor + 1));
    for (auto [tap, gain] : { std::pair<size_t, cd>{ 3, first }, { 8, echo } }) {
        g[2 * tap] = gain;
        g[2 * tap + 1] = 0.45 * gain;
        g[2 * tap - 1] = 0.45 * gain;
    }
    return g;
}

// An equaliser configuration spanning the link's channel.
channel_tracking_equaliser_config geometry_of(const received_link& l)
{
    channel_tracking_equaliser_config c;
    c.precursor_symbols = l.precursor;
    c.postcursor_symbols = l.span - l.precursor - 1;
    return c;
}

// Starts eq from `taps` and `noise` with the link's first symbols as its past; returns
// the first symbol to equalise.
size_t start_on(channel_tracking_equaliser& eq,
                const received_link& l,
                const std::vector<cd>& taps,
                double noise)
{
    const size_t first = eq.channel_symbols();
    eq.start(
        taps, noise, std::vector<cd>(l.symbols.begin(), l.symbols.begin() + long(first)));
    return first;
}

// Runs the equaliser over symbols [first, n) deciding the true symbols (all known);
// returns the mean |estimate - symbol|^2 over [measure_from, n).
double run(channel_tracking_equaliser& eq,
           const received_link& l,
           size_t first,
           size_t measure_from)
{
    double error = 0;
    size_t counted = 0;
    for (size_t k = first; k < l.symbols.size(); ++k) {
        const std::vector<cd> w = l.window(k);
        const cd z = eq.equalise(w.data());
        if (k >= measure_from) {
            error += std::norm(z - l.symbols[k]);
            ++counted;
        }
        eq.decide(l.symbols[k], true);
    }
    return error / double(counted);
}

} // namespace

TEST(ChannelTrackingEqualiser, ConvergesOnAStaticTwoPathChannel)
{
    const std::vector<cd> truth = two_path_channel();
    const double noise = 1e-3; // 30 dB below the first path
    received_link l(
        3, 8, 4000, noise, [&](size_t) { return truth; }, 7);
    channel_tracking_equaliser_config c = geometry_of(l);
    channel_tracking_equaliser eq(c);
    // A rough start: the right paths, gains 30 % off and rotated.
    std::vector<cd> start = truth;
    for (auto& g : start)
        g *= std::polar(0.7, 0.4);
    const size_t first = start_on(eq, l, start, 0.1);
    const double error = run(eq, l, first, 2000);
    double tap_error = 0, tap_power = 0;
    for (size_t q = 0; q < truth.size(); ++q) {
        tap_error += std::norm(eq.taps()[q] - truth[q]);
        tap_power += std::norm(truth[q]);
    }
    EXPECT_LT(tap_error / tap_power, 0.01);
    // Intersymbol interference of an equal-order echo removed down to near the noise.
    EXPECT_LT(error, 0.01);
    EXPECT_GT(eq.noise(), noise / 3);
    EXPECT_LT(eq.noise(), noise * 3);
    // The solution's own error variance agrees with the measured one within a factor 3.
    EXPECT_LT(eq.estimate_variance(), 3 * error);
    EXPECT_GT(eq.estimate_variance(), error / 3);
}

TEST(ChannelTrackingEqualiser, FollowsAChannelRotatingBetweenSolutions)
{
    // One path turning at 2 Hz (2400 Bd), solved only every 240 symbols: the output
    // stays right only if it follows the tracked channel in between (over 240 symbols
    // the channel turns 1.26 rad).
    std::vector<cd> still(2 * 12);
    still[2 * 3] = 1.0;
    still[2 * 3 + 1] = 0.45;
    still[2 * 2 + 1] = 0.45;
    const double turn = 2 * pi * 2.0 / 2400.0;
    received_link l(
        3,
        8,
        6000,
        1e-3,
        [&](size_t t) {
            std::vector<cd> g = still;
            for (auto& v : g)
                v *= std::polar(1.0, turn * double(t));
            return g;
        },
        11);
    channel_tracking_equaliser_config c = geometry_of(l);
    c.forgetting = 0.95;
    c.solve_interval = 240;
    channel_tracking_equaliser eq(c);
    const size_t first = start_on(eq, l, still, 1e-3);
    EXPECT_LT(run(eq, l, first, 1000), 0.05);
    // Its turn, as measured between solutions, is the channel's.
    EXPECT_NEAR(eq.take_turn(), turn, 0.1 * turn);
    EXPECT_EQ(eq.take_turn(), 0.0); // nothing since
}

TEST(ChannelTrackingEqualiser, ALaterStrongerPathDoesNotSpreadDecisionErrors)
{
    // The echo 5 symbols after the reference path is 6 dB stronger (F.1487 poor when the
    // first path fades), 8PSK at about 15 dB, the equaliser deciding for itself: a
    // feed-forward reaching two delay spreads past the echo leaves little to the
    // feedback, and an error stays one error (measured: 8 wrong in 2976; reaching two
    // symbols past the echo, errors fed back made 2207).
    const std::vector<cd> truth = two_path_channel(0.5, cd(0, 1.0), 20);
    received_link l(
        3, 20, 3000, 3e-2, [&](size_t) { return truth; }, 13);
    channel_tracking_equaliser_config c = geometry_of(l);
    channel_tracking_equaliser eq(c);
    const size_t first = start_on(eq, l, truth, 3e-2);
    size_t wrong = 0;
    for (size_t k = first; k < l.symbols.size(); ++k) {
        const std::vector<cd> w = l.window(k);
        const cd z = eq.equalise(w.data());
        const cd decided =
            std::polar(1.0, 2 * pi / 8 * std::round(std::arg(z) / (2 * pi / 8)));
        wrong += std::norm(decided - l.symbols[k]) > 1e-6;
        eq.decide(decided, false);
    }
    EXPECT_LT(wrong, 30u);
}

TEST(ChannelTrackingEqualiser, APathMissingAtTheStartIsTrackedOnceItShows)
{
    // The start measured one path; an echo 14 dB down 5 symbols later (faded out then)
    // is there from the first symbol on. It is tracked at the next choice of taps, not
    // when the 2 s energy profile has caught up (at 40 dB SNR, -14 dB of untracked echo
    // would be the error).
    const std::vector<cd> truth = two_path_channel(1.0, cd(0, 0.2));
    const std::vector<cd> measured = two_path_channel(1.0, 0.0);
    received_link l(
        3, 8, 1500, 1e-4, [&](size_t) { return truth; }, 19);
    channel_tracking_equaliser_config c = geometry_of(l);
    channel_tracking_equaliser eq(c);
    const size_t first = start_on(eq, l, measured, 1e-4);
    EXPECT_LT(run(eq, l, first, 600), 1e-3);
    EXPECT_EQ(eq.tracked_symbol_taps().back(), 10u); // the echo's tap and its pulse tail
}

TEST(ChannelTrackingEqualiser, TimeScaleKeepsTheWatchInSeconds)
{
    // time_scale 4 (a symbol rate 4x 2400 Bd): the whole-span LMS steps on every 4th
    // symbol only, and the taps are chosen every 960 symbols, not 240: the echo missing
    // at the start (as above) is not tracked after 900 symbols, and is after 2400.
    const std::vector<cd> truth = two_path_channel(1.0, cd(0, 0.2));
    const std::vector<cd> measured = two_path_channel(1.0, 0.0);
    received_link l(
        3, 8, 2400, 1e-4, [&](size_t) { return truth; }, 19);
    channel_tracking_equaliser_config c = geometry_of(l);
    c.time_scale = 4;
    channel_tracking_equaliser eq(c);
    EXPECT_EQ(eq.time_scale(), 4u);
    size_t k = start_on(eq, l, measured, 1e-4);
    size_t changed = 0, steps = 0;
    for (; k < 900; ++k, ++steps) {
        const std::vector<cd> before = eq.wide_taps();
        const std::vector<cd> w = l.window(k);
        eq.equalise(w.data());
        eq.decide(l.symbols[k], true);
        changed += eq.wide_taps() != before;
        // The first step is on the 4th symbol after the start.
        EXPECT_EQ(eq.wide_taps() != before, steps % 4 == 3) << "symbol " << k;
    }
    EXPECT_EQ(changed, steps / 4);
    EXPECT_EQ(eq.tracked_symbol_taps().back(), 5u);
    for (; k < l.symbols.size(); ++k) {
        const std::vector<cd> w = l.window(k);
        eq.equalise(w.data());
        eq.decide(l.symbols[k], true);
    }
    EXPECT_EQ(eq.tracked_symbol_taps().back(), 10u);
    // time_scale 1: every symbol, the echo tracked within 900 symbols.
    channel_tracking_equaliser every(geometry_of(l));
    const size_t first = start_on(every, l, measured, 1e-4);
    const std::vector<cd> before = every.wide_taps();
    const std::vector<cd> w = l.window(first);
    every.equalise(w.data());
    every.decide(l.symbols[first], true);
    EXPECT_NE(every.wide_taps(), before);
    for (k = first + 1; k < 900; ++k) {
        const std::vector<cd> w2 = l.window(k);
        every.equalise(w2.data());
        every.decide(l.symbols[k], true);
    }
    EXPECT_EQ(every.tracked_symbol_taps().back(), 10u);
}

TEST(ChannelTrackingEqualiser, TheWatchNoiseStaysPutOverALongSpan)
{
    // The whole-span LMS over a span longer than 3 kHz's longest (47 symbol taps) steps
    // the less the longer the span: its noise summed over the taps holding no path
    // (what may cross the path threshold somewhere) is about a 47-tap span's, not the
    // span's share more (0.005 over 104 taps: about 2.6 times; at 24 kHz WN0 tracked
    // such noise and read bits wrong).
    const auto watch_noise = [](unsigned postcursor) {
        const std::vector<cd> truth = two_path_channel(1.0, 0.0, postcursor);
        received_link l(
            3, postcursor, 6000, 0.3, [&](size_t) { return truth; }, 31);
        channel_tracking_equaliser eq(geometry_of(l));
        size_t k = start_on(eq, l, truth, 0.3);
        double noise = 0;
        size_t counted = 0;
        for (; k < l.symbols.size(); ++k) {
            const std::vector<cd> w = l.window(k);
            eq.equalise(w.data());
            eq.decide(l.symbols[k], true);
            if (k >= 2000 && k % 10 == 0) {
                for (size_t q = 2 * 6; q < eq.wide_taps().size(); ++q) // past the path
                    noise += std::norm(eq.wide_taps()[q]);
                ++counted;
            }
        }
        return noise / double(counted);
    };
    const double short_span = watch_noise(43); // 47 taps
    const double long_span = watch_noise(100); // 104 taps
    EXPECT_LT(long_span, 1.5 * short_span) << short_span << " " << long_span;
    EXPECT_GT(long_span, 0.5 * short_span) << short_span << " " << long_span;
}

TEST(ChannelTrackingEqualiser, ABlockPassKeepsOverlappingWindowsOnce)
{
    // A block's windows, each the one before moved on by a symbol (one moved by a T/2
    // slip more, one that matches nothing): the pass keeps the new samples only where
    // the rest matches, and equalises exactly as from the windows themselves.
    const std::vector<cd> truth = two_path_channel();
    received_link l(
        3, 8, 400, 1e-3, [&](size_t) { return truth; }, 5);
    channel_tracking_equaliser eq(geometry_of(l));
    const size_t first = start_on(eq, l, truth, 1e-3);
    const size_t width = eq.window_samples();
    // Symbol k's window from T/2 sample 2 (k - precursor) + extra on.
    const auto window_at = [&](size_t k, long extra) {
        std::vector<cd> w(width);
        for (size_t q = 0; q < width; ++q) {
            const long i = 2 * (long(k) - long(l.precursor)) + extra + long(q);
            w[q] = i >= 0 && size_t(i) < l.received.size() ? l.received[size_t(i)] : cd();
        }
        return w;
    };
    serial_tone_block_pass pass;
    pass.begin(eq, 0, first);
    channel_tracking_equaliser reference(eq);
    std::vector<cd> expected;
    long extra = 0;
    const size_t n = 300;
    for (size_t i = 0; i < n; ++i) {
        const size_t k = first + i;
        int slip = 0;
        if (i == 100) { // a slip: samples from one T/2 later on
            slip = 1;
            ++extra;
            reference.slip(1);
        }
        std::vector<cd> w = window_at(k, extra);
        if (i == 200)
            w[width / 2] += 0.5; // matches neither neighbour
        pass.add(w, slip);
        expected.push_back(reference.equalise(w.data()));
        reference.decide(l.symbols[k], true);
    }
    // Whole windows: the first, symbol 200's and 201's (after the odd one); two new
    // samples a symbol otherwise, three at the slip.
    EXPECT_EQ(pass.stored_samples(), 3 * width + 2 * (n - 3) + 1);
    channel_tracking_equaliser out(eq);
    std::vector<cd> replayed;
    pass.replay(
        out,
        [](size_t, channel_tracking_equaliser&, int64_t) {},
        [&](size_t i, cd z, double) {
            replayed.push_back(z);
            return l.symbols[first + i];
        });
    ASSERT_EQ(replayed.size(), expected.size());
    for (size_t i = 0; i < n; ++i)
        EXPECT_EQ(replayed[i], expected[i]) << "symbol " << i;
    EXPECT_EQ(out.taps(), reference.taps());
}

TEST(ChannelTrackingEqualiser, AMeasuredPathIsTrackedAtOnce)
{
    // One path tracked; a measurement (a probe's, say) over taps 1..10 shows an echo at
    // tap 8 a quarter as strong, and some noise: the echo and its pulse tail are tracked
    // from then on, before any symbol.
    channel_tracking_equaliser_config c;
    c.precursor_symbols = 3;
    c.postcursor_symbols = 8;
    channel_tracking_equaliser eq(c);
    eq.start(two_path_channel(1.0, 0.0), 1e-3, {});
    ASSERT_EQ(eq.tracked_symbol_taps().back(), 5u);
    std::vector<cd> measured = two_path_channel(1.0, cd(0, 0.5));
    std::mt19937 rng(23);
    std::normal_distribution<double> gauss(0.0, 0.01);
    std::vector<size_t> taps;
    for (size_t i = 1; i <= 10; ++i) {
        taps.push_back(i);
        for (unsigned p = 0; p < 2; ++p)
            measured[2 * i + p] += cd(gauss(rng), gauss(rng));
    }
    eq.note_measured_channel(measured, taps);
    EXPECT_EQ(eq.tracked_symbol_taps().back(), 10u);
    // A measurement showing nothing new changes nothing.
    const std::vector<size_t> before = eq.tracked_symbol_taps();
    eq.note_measured_channel(two_path_channel(1.0, 0.0), taps);
    EXPECT_EQ(eq.tracked_symbol_taps(), before);
}

TEST(ChannelTrackingEqualiser, FollowChannelFollowsPathsFadingApart)
{
    // Two paths turning opposite ways at 1 Hz between solutions 240 symbols apart: one
    // complex gain cannot follow them; feedback and gain taken through the tracked
    // channel can.
    const std::vector<cd> still = two_path_channel();
    const double turn = 2 * pi * 1.0 / 2400.0;
    received_link l(
        3,
        8,
        6000,
        1e-4,
        [&](size_t t) {
            std::vector<cd> g = still;
            for (size_t q = 0; q < g.size(); ++q)
                g[q] *= std::polar(1.0, (q / 2 < 6 ? 1.0 : -1.0) * turn * double(t));
            return g;
        },
        17);
    double error[2];
    for (bool follow : { false, true }) {
        channel_tracking_equaliser_config c = geometry_of(l);
        c.forgetting = 0.95;
        c.solve_interval = 240;
        c.follow_channel = follow;
        channel_tracking_equaliser eq(c);
        const size_t first = start_on(eq, l, still, 1e-4);
        error[follow] = run(eq, l, first, 1000);
    }
    EXPECT_LT(error[1], 0.01);
    EXPECT_LT(3 * error[1], error[0]);
}

// Runs n symbols of a channel, asking for the timing after each decision; returns the
// first non-zero answer (0 if none).
int first_timing_drift(channel_tracking_equaliser& eq, const received_link& l)
{
    for (size_t k = eq.channel_symbols(); k < l.symbols.size(); ++k) {
        const std::vector<cd> w = l.window(k);
        eq.equalise(w.data());
        eq.decide(l.symbols[k], true);
        if (const int drift = eq.timing_drift())
            return drift;
    }
    return 0;
}

TEST(ChannelTrackingEqualiser, TimingFollowsThePathsNotTheirPowers)
{
    channel_tracking_equaliser_config c;
    c.precursor_symbols = 3;
    c.postcursor_symbols = 8;
    const std::vector<cd> start = two_path_channel();
    // Power moves from the first path to the second (5 symbols later): the energy
    // centre moves 4 symbols, the paths stay where they are.
    const auto fading = [&](size_t t) {
        const double x = std::min(1.0, double(t) / 6000.0);
        std::vector<cd> g = start;
        for (size_t q = 0; q < g.size(); ++q)
            g[q] *= q < 2 * 6 ? std::sqrt(1.0 - 0.95 * x) : std::sqrt(0.1 + 2.0 * x);
        return g;
    };
    received_link moving_power(3, 8, 12000, 1e-3, fading, 13);
    channel_tracking_equaliser still(c);
    still.start(
        start,
        1e-3,
        std::vector<cd>(moving_power.symbols.begin(), moving_power.symbols.begin() + 12));
    EXPECT_EQ(first_timing_drift(still, moving_power), 0);
    // The same channel a T/2 position later (a clock offset's drift) asks for +1.
    std::vector<cd> later(start.size());
    for (size_t q = 0; q + 1 < start.size(); ++q)
        later[q + 1] = start[q];
    received_link moved(
        3, 8, 12000, 1e-3, [&](size_t) { return later; }, 17);
    channel_tracking_equaliser drifting(c);
    drifting.start(
        start, 1e-3, std::vector<cd>(moved.symbols.begin(), moved.symbols.begin() + 12));
    EXPECT_EQ(first_timing_drift(drifting, moved), 1);
}

TEST(ChannelTrackingEqualiser, TrackingWithoutSolvingFollowsTheChannelAsEqualisingDoes)
{
    // track() keeps everything but the feed-forward on equalise()'s schedule: an echo
    // missing at the start (a new choice of taps), a channel turning (the turn measured
    // between solutions) and power moving between the paths (the long-term profile).
    const double turn = 2 * pi * 1.0 / 2400.0;
    const auto channel = [&](size_t t) {
        const double x = std::min(1.0, double(t) / 3000.0);
        std::vector<cd> g = two_path_channel(1.0, cd(0, 0.2 + 0.6 * x));
        for (auto& v : g)
            v *= std::polar(1.0, turn * double(t));
        return g;
    };
    received_link l(3, 8, 3600, 1e-3, channel, 23);
    channel_tracking_equaliser_config c = geometry_of(l);
    c.solve_interval = 48;
    channel_tracking_equaliser solving(c), tracking(c);
    const std::vector<cd> measured = two_path_channel(1.0, 0.0);
    size_t k = start_on(solving, l, measured, 1e-3);
    start_on(tracking, l, measured, 1e-3);
    double solving_turn = 0;
    for (; k < 3000; ++k) {
        const std::vector<cd> w = l.window(k);
        solving.equalise(w.data());
        tracking.track(w.data());
        solving.decide(l.symbols[k], k % 3 == 0);
        tracking.decide(l.symbols[k], k % 3 == 0);
        if (k % 500 == 0) {
            solving_turn = solving.take_turn();
            ASSERT_EQ(tracking.take_turn(), solving_turn) << "symbol " << k;
        }
        ASSERT_EQ(tracking.taps(), solving.taps()) << "symbol " << k;
    }
    EXPECT_NEAR(solving_turn, turn, 0.2 * turn);
    EXPECT_EQ(tracking.energy_profile(), solving.energy_profile());
    EXPECT_EQ(tracking.tracked_symbol_taps(), solving.tracked_symbol_taps());
    EXPECT_EQ(tracking.tracked_symbol_taps().back(), 10u); // the echo tracked
    EXPECT_EQ(tracking.noise(), solving.noise());
    // equalise() after track() solves first: its estimates are the symbols sent.
    double error = 0;
    for (; k < l.symbols.size(); ++k) {
        const std::vector<cd> w = l.window(k);
        error += std::norm(tracking.equalise(w.data()) - l.symbols[k]);
        tracking.decide(l.symbols[k], true);
    }
    EXPECT_LT(error / 600, 0.02);
}

TEST(ChannelTrackingEqualiser, RefusesMisuse)
{
    channel_tracking_equaliser_config c;
    c.forgetting = 0;
    expect_throws_naming([&] { channel_tracking_equaliser eq(c); }, "forgetting");
    c.forgetting = 0.97;
    c.solve_interval = 0;
    expect_throws_naming([&] { channel_tracking_equaliser eq(c); }, "solve_interval");
    c.solve_interval = 24;
    c.time_scale = 0;
    expect_throws_naming([&] { channel_tracking_equaliser eq(c); }, "time_scale");
    c.time_scale = 1;
    c.decision_weight = 0;
    expect_throws_naming([&] { channel_tracking_equaliser eq(c); }, "decision_weight");
    c.decision_weight = 0.5;
    channel_tracking_equaliser eq(c);
    expect_throws_naming([&] { eq.start(std::vector<cd>(3), 1.0, {}); }, "taps");
    EXPECT_THROW(eq.decide(1.0, true), std::logic_error); // no window pending
}
