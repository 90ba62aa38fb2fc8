/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

// The WN0 data watch (App D at 3 kHz): noise alone is never taken for WN0 data; WN0
// Walsh symbols under the Trinomial scrambler are found at their scrambler period's
// start whatever dibits they carry, with a carrier offset read from their turn.
#include "phy/m110d_waveform.h"
#include "phy/m110d_wn0_data_watch.h"

#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <optional>
#include <random>
#include <vector>

using namespace gr::hfstack::phy;
using cf = std::complex<float>;

namespace {

constexpr unsigned sps = m110d_wn0_data_watch::samples_per_chip;
constexpr double chip_rate = 2400;

// `lead` samples of noise, then WN0 chips of random dibits (each chip held for its 4
// samples) under the scrambler from its start, at snr_db per chip and offset_hz, in
// complex white noise of unit power.
std::vector<cf>
wn0_samples(size_t lead, size_t chips, double snr_db, double offset_hz, uint32_t seed)
{
    std::mt19937 rng(seed);
    std::normal_distribution<float> noise(0.0f, float(std::sqrt(0.5)));
    const auto& psk8 = m110d_constellation(3);
    const auto& trinomial = m110d_trinomial_sequence();
    const float amplitude = chips > 0 ? float(std::pow(10.0, snr_db / 20)) : 0.0f;
    std::vector<cf> x(lead + chips * sps);
    unsigned dibit = 0;
    for (size_t i = 0; i < x.size(); ++i) {
        x[i] = cf(noise(rng), noise(rng));
        if (i < lead)
            continue;
        const size_t c = (i - lead) / sps;
        if (c % m110d_walsh_data_chips == 0 && (i - lead) % sps == 0)
            dibit = unsigned(rng() & 3);
        const unsigned j = unsigned(c % m110d_walsh_data_chips);
        const cf chip = psk8[(m110d_wn0_walsh_chip(dibit, j) +
                              trinomial[c % m110d_trinomial_period]) %
                             8];
        const double turn = 2 * M_PI * offset_hz * double(i) / (chip_rate * sps);
        x[i] += amplitude * chip * cf(float(std::cos(turn)), float(std::sin(turn)));
    }
    return x;
}

std::vector<m110d_wn0_data_watch::detection> watched(const std::vector<cf>& x)
{
    m110d_wn0_data_watch watch(chip_rate, 6.0);
    std::vector<m110d_wn0_data_watch::detection> found;
    constexpr unsigned lag = m110d_wn0_data_watch::lag_samples;
    for (size_t n = 0; n + lag < x.size(); ++n)
        if (const auto d = watch.add(n, x[n + lag] * std::conj(x[n])))
            found.push_back(*d);
    return found;
}

} // namespace

TEST(M110dWn0DataWatch, NoiseAloneIsNotTakenForData)
{
    // 120 s of noise: 140 correlations of 8192 timings each.
    EXPECT_TRUE(watched(wn0_samples(size_t(120 * chip_rate * sps), 0, 0, 0, 5)).empty());
}

TEST(M110dWn0DataWatch, WalshSymbolsFoundAtTheirScramblerPeriod)
{
    // -3 dB per chip (WN0's D-LXIV AWGN row is about -5 dB a chip: the watch needs two
    // periods there), 30 Hz off, the data 1000 samples into the input.
    const size_t lead = 1000;
    const std::vector<m110d_wn0_data_watch::detection> found =
        watched(wn0_samples(lead, 6 * 2048, -3, 30, 6));
    ASSERT_FALSE(found.empty());
    for (const auto& d : found) {
        // (Any of the chip's 4 samples: the chips are held flat here.)
        EXPECT_LT((d.period_start - lead) % m110d_wn0_data_watch::period_samples, sps);
        EXPECT_NEAR(d.hz, 30, 3);
        EXPECT_GE(d.z, 6);
    }
}
