/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

// The start of a serial-tone burst's equalisation: the channel measured on a short run
// of known symbols (the 103-symbol section a late App C start has) finds both paths of
// a two-path channel; a probe's least squares recovers the tracked taps.
#include "phy/serial_tone_channel.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <random>
#include <vector>

using namespace gr::hfstack::phy;
using cd = std::complex<double>;
using cf = std::complex<float>;

namespace {

constexpr double pi = 3.14159265358979323846;
constexpr unsigned sps = 4;

// Path gains per delay (symbols) and T/2 phase: a path at 0 and one 5 symbols later,
// each with its pulse's sample between symbol times.
cd channel(int delay, unsigned phase)
{
    if (delay == 0)
        return phase == 0 ? cd(1.0) : cd(0.45);
    if (delay == -1 && phase == 1)
        return 0.45;
    if (delay == 5)
        return phase == 0 ? cd(0, 0.7) : cd(0, 0.3);
    if (delay == 4 && phase == 1)
        return cd(0, 0.3);
    return 0.0;
}

// Samples at 4 per symbol of `symbols` through the channel (phase p at sample 4 t + 2 p),
// with noise; symbol t starts at sample 4 t.
serial_tone_samples
received(const std::vector<cd>& symbols, double noise_power, uint32_t seed)
{
    std::mt19937 rng(seed);
    std::normal_distribution<double> gauss(0.0, std::sqrt(noise_power / 2));
    std::vector<cf> x(sps * symbols.size());
    for (size_t t = 0; t < symbols.size(); ++t)
        for (unsigned p = 0; p < 2; ++p) {
            cd r(gauss(rng), gauss(rng));
            for (int m = -1; m <= 5; ++m)
                if (long(t) - m >= 0 && long(t) - m < long(symbols.size()))
                    r += channel(m, p) * symbols[size_t(long(t) - m)];
            x[sps * t + 2 * p] = cf(r);
        }
    serial_tone_samples input(9600.0);
    input.append(x.data(), x.size());
    input.start_derotation(0, 0.0);
    return input;
}

std::vector<cd> random_psk8(size_t n, uint32_t seed)
{
    std::mt19937 rng(seed);
    std::vector<cd> s(n);
    for (auto& v : s)
        v = std::polar(1.0, 2 * pi / 8 * double(rng() % 8));
    return s;
}

// The channel measured on the first n_known symbols.
serial_tone_channel_start
started(const serial_tone_samples& input, const std::vector<cd>& symbols, size_t n_known)
{
    const std::vector<cf> known(symbols.begin(), symbols.begin() + long(n_known));
    return start_serial_tone_channel(
        input, 0, known, 13, channel_tracking_equaliser_config{}, 1.0, 1e-3);
}

} // namespace

TEST(SerialToneChannel, AShortKnownRunFindsBothPaths)
{
    // 103 known symbols, then data: fewer observations per chunk than the 33 taps the
    // measurement spans, had three chunks been taken (they were, and every one failed:
    // the start assumed one path).
    const std::vector<cd> symbols = random_psk8(400, 21);
    const serial_tone_samples input = received(symbols, 1e-3, 22);
    const serial_tone_channel_start start = started(input, symbols, 103);
    // The timing is placed at the first tap over the threshold: the first path's pulse
    // half a symbol early.
    EXPECT_EQ(start.timing_shift, -int64_t(sps));
    const std::vector<cd>& taps = start.equaliser->taps();
    const size_t at_path = start.equaliser->precursor_symbols() + 1; // delay 0
    for (int m : { 0, 5 })
        for (unsigned p = 0; p < 2; ++p)
            EXPECT_LT(std::abs(taps[2 * (at_path + size_t(m)) + p] - channel(m, p)), 0.05)
                << m << " " << p;
}

TEST(SerialToneChannel, AProbeMeasuresTheTrackedTaps)
{
    const std::vector<cd> symbols = random_psk8(600, 23);
    const serial_tone_samples input = received(symbols, 1e-3, 24);
    const serial_tone_channel_start start = started(input, symbols, 287);
    channel_tracking_equaliser& eq = *start.equaliser;
    // 31 known symbols at 400 (as a mini-probe), from a prior of nothing.
    const std::vector<cd> probe(symbols.begin() + 400, symbols.begin() + 431);
    std::vector<cd> taps(eq.window_samples());
    ASSERT_TRUE(measure_known_run(input,
                                  0,
                                  start.timing_shift,
                                  eq,
                                  eq.tracked_symbol_taps(),
                                  400,
                                  probe,
                                  1e-3,
                                  taps));
    const size_t at_path = eq.precursor_symbols() + 1; // delay 0 (timing as above)
    for (int m = -1; m <= 5; ++m)
        for (unsigned p = 0; p < 2; ++p)
            EXPECT_LT(std::abs(taps[2 * size_t(long(at_path) + m) + p] - channel(m, p)),
                      0.05)
                << m << " " << p;
    // Samples not in yet: no estimate.
    EXPECT_FALSE(measure_known_run(input,
                                   0,
                                   start.timing_shift,
                                   eq,
                                   eq.tracked_symbol_taps(),
                                   590,
                                   probe,
                                   1e-3,
                                   taps));
}

TEST(SerialToneChannel, AProbeIsScoredAgainstTheChannelMeasuredBeforeIt)
{
    // At 10 dB, the channel measured on one 31-symbol probe predicts the next, 287
    // symbols on, well; in noise alone its score is an exponential deviate of mean 1.
    const std::vector<cd> symbols = random_psk8(2000, 27);
    const serial_tone_samples input = received(symbols, 0.1, 28);
    const serial_tone_channel_start start = started(input, symbols, 287);
    channel_tracking_equaliser& eq = *start.equaliser;
    std::vector<cd> taps(eq.window_samples());
    const auto probe_at = [&](size_t first) {
        return std::vector<cd>(symbols.begin() + long(first),
                               symbols.begin() + long(first) + 31);
    };
    ASSERT_TRUE(measure_known_run(input,
                                  0,
                                  start.timing_shift,
                                  eq,
                                  eq.tracked_symbol_taps(),
                                  400,
                                  probe_at(400),
                                  0.1,
                                  taps));
    size_t from_q = taps.size(), end_q = 0;
    for (size_t q = 0; q < taps.size(); ++q)
        if (taps[q] != cd()) {
            from_q = std::min(from_q, q);
            end_q = q + 1;
        }
    const auto score = [&](const serial_tone_samples& samples, size_t first) {
        return known_run_prediction_score(samples,
                                          0,
                                          start.timing_shift,
                                          eq.precursor_symbols(),
                                          taps,
                                          from_q,
                                          end_q,
                                          first,
                                          probe_at(first));
    };
    ASSERT_TRUE(score(input, 687).has_value());
    EXPECT_GT(*score(input, 687), 20.0);
    const serial_tone_samples noise = received(std::vector<cd>(symbols.size()), 0.1, 29);
    double sum = 0;
    for (size_t r = 0; r < 40; ++r)
        sum += score(noise, 100 + 40 * r).value_or(100.0);
    EXPECT_GT(sum / 40, 0.6);
    EXPECT_LT(sum / 40, 1.6);
    // A probe whose samples are not all in yet (they end at symbol 1975): no score.
    const serial_tone_samples partial =
        received(std::vector<cd>(symbols.begin(), symbols.begin() + 1975), 0.1, 28);
    EXPECT_FALSE(score(partial, 1960).has_value());
    EXPECT_TRUE(score(input, 1960).has_value());
}

TEST(SerialToneChannel, NoiseBesideThePathsIsNotTrackedFromTheStart)
{
    // 103 known symbols at about 3 dB: the measurement's taps far from the paths are
    // noise, many over 3 % of the strongest; started with them, the equaliser tracked 35
    // taps, mostly noise (App C bursts whose preamble came in a fade lost their first
    // block). Only taps within the pulse tail of the paths found start non-zero.
    const std::vector<cd> symbols = random_psk8(400, 25);
    const serial_tone_samples input = received(symbols, 1.0, 26);

    const serial_tone_channel_start start = started(input, symbols, 103);
    const std::vector<cd>& taps = start.equaliser->taps();
    const size_t at_path = start.equaliser->precursor_symbols() + 1; // delay 0
    for (size_t i = 0; i < start.equaliser->channel_symbols(); ++i) {
        if (i + 4 < at_path || i > at_path + 5 + 3) {
            EXPECT_EQ(std::norm(taps[2 * i]) + std::norm(taps[2 * i + 1]), 0.0) << i;
        }
    }
    EXPECT_LE(start.equaliser->tracked_symbol_taps().size(), 17u);
}
