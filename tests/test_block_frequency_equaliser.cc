/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

// Block frequency-domain equalisation with 110D's mini-probes as the cyclic prefix:
// the probe measures a long channel exactly (every delay its cyclic base reaches), the
// block's symbols come back through a channel as long as the probe with the probes
// before and after differing (a boundary probe), decided symbols' interference cancels,
// and the reported error variance is the one measured in noise.
#include "phy/block_frequency_equaliser.h"
#include "phy/m110d_waveform.h"

#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <random>
#include <vector>

using namespace gr::hfstack::phy;
using cd = std::complex<double>;
using cf = std::complex<float>;

namespace {

// A 48 kHz WN6 frame: 2560 data symbols, a 512-symbol probe (two periods of the
// 256-symbol Frank base).
constexpr unsigned data_symbols = 2560, probe_symbols = 512;
constexpr unsigned block_symbols = data_symbols + probe_symbols;

const std::vector<channel_path> long_channel = {
    { -2, cd(0.1, -0.05), cd(0.05, 0.02) },
    { 0, cd(0.8, 0.3), cd(0.4, -0.2) },
    { 1, cd(-0.2, 0.1), cd(0.1, 0.1) },
    { 154, cd(-0.5, 0.4), cd(0.3, 0.3) }, // 4 ms at 38400 Bd
    { 240, cd(0.2, -0.6), cd(-0.1, 0.2) },
};

// y_p[t] for t = from .. from + count - 1, symbols `s` with s[0] at symbol time `zero`.
void observe(const std::vector<cd>& s,
             long zero,
             long from,
             size_t count,
             const std::vector<channel_path>& paths,
             std::vector<cd>& y0,
             std::vector<cd>& y1)
{
    y0.assign(count, cd());
    y1.assign(count, cd());
    for (size_t i = 0; i < count; ++i)
        for (const channel_path& p : paths) {
            const long j = from + long(i) - p.delay + zero;
            ASSERT_GE(j, 0);
            ASSERT_LT(j, long(s.size()));
            y0[i] += p.g0 * s[size_t(j)];
            y1[i] += p.g1 * s[size_t(j)];
        }
}

std::vector<cd> psk_symbols(size_t n, std::mt19937& rng)
{
    std::uniform_int_distribution<int> pick(0, 7);
    std::vector<cd> s;
    for (size_t i = 0; i < n; ++i)
        s.push_back(std::polar(1.0, M_PI / 4 * pick(rng)));
    return s;
}

struct frame {
    std::vector<cf> before, after;
    std::vector<cd> block; // data then the probe after
    std::vector<cd> all;   // the probe before, then the block
};

frame make_frame(std::mt19937& rng, bool boundary_before)
{
    frame f;
    f.before = m110d_mini_probe(probe_symbols, boundary_before, probe_symbols);
    f.after = m110d_mini_probe(probe_symbols, false, probe_symbols);
    f.block = psk_symbols(data_symbols, rng);
    for (cf c : f.after)
        f.block.push_back(cd(c));
    for (cf c : f.before)
        f.all.push_back(cd(c));
    f.all.insert(f.all.end(), f.block.begin(), f.block.end());
    return f;
}

} // namespace

TEST(BlockFrequencyEqualiser, ProbeMeasuresEveryDelayItsBaseReaches)
{
    // The probe after a frame, its last 256 symbols' observations taken 8 symbols early:
    // delays -8 .. 248 are all measured, exactly without noise.
    std::mt19937 rng(1);
    const frame f = make_frame(rng, false);
    const long precursor = 8, base = 256;
    std::vector<cf> reference(f.after.begin() + (probe_symbols - base - precursor),
                              f.after.begin() + (probe_symbols - precursor));
    probe_channel_estimator estimator(reference);
    EXPECT_NEAR(estimator.tap_noise_gain(), 1.0 / base, 1e-6); // a Frank base is flat
    std::vector<cd> y0, y1;
    // The block's probe starts at symbol time data_symbols (f.all's zero is the probe
    // before's first symbol, at time -probe_symbols).
    observe(f.all,
            probe_symbols,
            data_symbols + probe_symbols - base - precursor,
            base,
            long_channel,
            y0,
            y1);
    std::vector<cd> g0, g1;
    estimator.estimate(y0.data(), y1.data(), g0, g1);
    ASSERT_EQ(g0.size(), size_t(base));
    std::vector<cd> want0(base), want1(base);
    for (const channel_path& p : long_channel) {
        want0[size_t((p.delay + base) % base)] = p.g0;
        want1[size_t((p.delay + base) % base)] = p.g1;
    }
    for (long d = 0; d < base; ++d) {
        EXPECT_LT(std::abs(g0[size_t(d)] - want0[size_t(d)]), 1e-4) << d;
        EXPECT_LT(std::abs(g1[size_t(d)] - want1[size_t(d)]), 1e-4) << d;
    }
}

TEST(BlockFrequencyEqualiser, LongChannelWithABoundaryProbeBefore)
{
    std::mt19937 rng(2);
    for (bool boundary : { false, true }) {
        const frame f = make_frame(rng, boundary);
        const int precursor = 3;
        std::vector<cd> y0, y1;
        observe(f.all, probe_symbols, -precursor, block_symbols, long_channel, y0, y1);
        block_frequency_equaliser fde(block_symbols);
        std::vector<cd> z(block_symbols);
        const double variance = fde.equalise(y0.data(),
                                             y1.data(),
                                             precursor,
                                             long_channel,
                                             f.before,
                                             f.after,
                                             1e-9,
                                             1.0,
                                             z.data());
        EXPECT_LE(variance, 1e-5);
        double worst = 0;
        for (size_t i = 0; i < block_symbols; ++i)
            worst = std::max(worst, std::abs(z[i] - f.block[i]));
        EXPECT_LT(worst, 1e-3) << "boundary " << boundary;
    }
}

TEST(BlockFrequencyEqualiser, DecisionsCancelTheirInterference)
{
    std::mt19937 rng(3);
    const frame f = make_frame(rng, true);
    std::vector<cd> y0, y1;
    observe(f.all, probe_symbols, -3, block_symbols, long_channel, y0, y1);
    std::normal_distribution<double> gauss(0.0, std::sqrt(0.01 / 2));
    for (size_t i = 0; i < block_symbols; ++i) {
        y0[i] += cd(gauss(rng), gauss(rng));
        y1[i] += cd(gauss(rng), gauss(rng));
    }
    block_frequency_equaliser fde(block_symbols);
    block_frequency_equaliser::block kept;
    std::vector<cd> z(block_symbols);
    const double linear = fde.equalise(y0.data(),
                                       y1.data(),
                                       3,
                                       long_channel,
                                       f.before,
                                       f.after,
                                       0.01,
                                       1.0,
                                       z.data(),
                                       &kept);
    // Decisions all right: each estimate at the matched filter's variance (below the
    // linear equaliser's), as reported.
    std::vector<cd> again(block_symbols);
    const double cancelled = fde.cancel(kept, f.block.data(), again.data());
    EXPECT_LT(cancelled, linear);
    double error = 0;
    for (size_t i = 0; i < block_symbols; ++i)
        error += std::norm(again[i] - f.block[i]);
    error /= block_symbols;
    EXPECT_NEAR(error, cancelled, 0.2 * cancelled);
    // A few wrong: each of them is still estimated as the symbol sent.
    std::vector<cd> decided = f.block;
    for (size_t i : { 10u, 11u, 700u })
        decided[i] = -decided[i];
    fde.cancel(kept, decided.data(), again.data());
    for (size_t i : { 10u, 11u, 700u })
        EXPECT_LT(std::abs(again[i] - f.block[i]), 0.5) << i;
}

TEST(BlockFrequencyEqualiser, ReportedVarianceIsTheMeasuredOne)
{
    std::mt19937 rng(4);
    const frame f = make_frame(rng, false);
    std::vector<cd> y0, y1;
    observe(f.all, probe_symbols, -3, block_symbols, long_channel, y0, y1);
    const double noise = 0.05;
    std::normal_distribution<double> gauss(0.0, std::sqrt(noise / 2));
    for (size_t i = 0; i < block_symbols; ++i) {
        y0[i] += cd(gauss(rng), gauss(rng));
        y1[i] += cd(gauss(rng), gauss(rng));
    }
    block_frequency_equaliser fde(block_symbols);
    std::vector<cd> z(block_symbols);
    const double variance = fde.equalise(
        y0.data(), y1.data(), 3, long_channel, f.before, f.after, noise, 1.0, z.data());
    double error = 0;
    for (size_t i = 0; i < block_symbols; ++i)
        error += std::norm(z[i] - f.block[i]);
    error /= block_symbols;
    EXPECT_NEAR(error, variance, 0.2 * variance);
}

TEST(BlockFrequencyEqualiser, RefusesAPathBeyondTheProbe)
{
    std::mt19937 rng(5);
    const frame f = make_frame(rng, false);
    std::vector<cd> y(block_symbols), z(block_symbols);
    block_frequency_equaliser fde(block_symbols);
    const std::vector<channel_path> too_long = { { int(probe_symbols), 1.0, 1.0 } };
    EXPECT_THROW(
        fde.equalise(y.data(), y.data(), 3, too_long, f.before, f.after, 1, 1, z.data()),
        std::invalid_argument);
}
