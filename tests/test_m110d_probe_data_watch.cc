/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

// The mini-probe watch (App D at 3 kHz): noise alone is never taken for frames; WN1's
// frames (48 data symbols of random BPSK, then the 48-symbol mini-probe) are found at
// their probes' timing whatever the data, with a carrier offset read from their turn.
#include "phy/m110d_probe_data_watch.h"
#include "phy/m110d_waveform.h"

#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <optional>
#include <random>
#include <stdexcept>
#include <vector>

using namespace gr::hfstack::phy;
using cf = std::complex<float>;

namespace {

constexpr unsigned sps = 4;
constexpr double symbol_rate = 2400;
constexpr unsigned data_symbols = 48, probe_symbols = 48;
constexpr unsigned frame_symbols = data_symbols + probe_symbols;

// `lead` samples of noise, then `frames` WN1 frames (each symbol held for its 4
// samples) at snr_db per symbol and offset_hz, in complex white noise of unit power.
std::vector<cf>
frame_samples(size_t lead, size_t frames, double snr_db, double offset_hz, uint32_t seed)
{
    std::mt19937 rng(seed);
    std::normal_distribution<float> noise(0.0f, float(std::sqrt(0.5)));
    const std::vector<cf> probe = m110d_mini_probe(probe_symbols, false, probe_symbols);
    const float amplitude = frames > 0 ? float(std::pow(10.0, snr_db / 20)) : 0.0f;
    std::vector<cf> x(lead + frames * frame_symbols * sps);
    cf symbol;
    for (size_t i = 0; i < x.size(); ++i) {
        x[i] = cf(noise(rng), noise(rng));
        if (i < lead)
            continue;
        const size_t s = (i - lead) / sps;
        const size_t in_frame = s % frame_symbols;
        if ((i - lead) % sps == 0)
            symbol = in_frame < data_symbols ? cf((rng() & 1) ? 1.0f : -1.0f, 0.0f)
                                             : probe[in_frame - data_symbols];
        const double turn = 2 * M_PI * offset_hz * double(i) / (symbol_rate * sps);
        x[i] += amplitude * symbol * cf(float(std::cos(turn)), float(std::sin(turn)));
    }
    return x;
}

std::vector<m110d_probe_data_watch::detection> watched(const std::vector<cf>& x)
{
    m110d_probe_data_watch watch(data_symbols, probe_symbols, sps, symbol_rate, 32, 6.0);
    std::vector<m110d_probe_data_watch::detection> found;
    for (size_t n = 0; n + sps < x.size(); ++n)
        if (const auto d = watch.add(n, x[n + sps] * std::conj(x[n])))
            found.push_back(*d);
    return found;
}

} // namespace

TEST(M110dProbeDataWatch, NoiseAloneIsNotTakenForFrames)
{
    // 120 s of noise: 93 correlations of 384 timings each.
    EXPECT_TRUE(
        watched(frame_samples(size_t(120 * symbol_rate * sps), 0, 0, 0, 5)).empty());
}

TEST(M110dProbeDataWatch, FramesFoundAtTheirProbes)
{
    // 0 dB per symbol, 30 Hz off, the frames 1000 samples into the input.
    const size_t lead = 1000;
    const std::vector<m110d_probe_data_watch::detection> found =
        watched(frame_samples(lead, 200, 0, 30, 6));
    ASSERT_GE(found.size(), 5u);
    for (const auto& d : found) {
        // (Any of the symbol's 4 samples: the symbols are held flat here.)
        const uint64_t probe_offset = uint64_t(data_symbols) * sps;
        EXPECT_LT((d.probe_start - lead - probe_offset) % (frame_symbols * sps), sps);
        // (Coarse: a degree of a symbol's turn is 6.7 Hz.)
        EXPECT_NEAR(d.hz, 30, 15);
        EXPECT_GE(d.z, 6);
    }
}

TEST(M110dProbeDataWatch, BadSettingsRefused)
{
    EXPECT_THROW(m110d_probe_data_watch(48, 48, sps, symbol_rate, 0, 6.0),
                 std::invalid_argument);
    EXPECT_THROW(m110d_probe_data_watch(48, 0, sps, symbol_rate, 32, 6.0),
                 std::invalid_argument);
    EXPECT_THROW(m110d_probe_data_watch(48, 17, sps, symbol_rate, 32, 6.0),
                 std::invalid_argument);
}
