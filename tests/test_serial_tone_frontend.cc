/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "phy/serial_tone_frontend.h"

#include <gtest/gtest.h>
#include <liquid/liquid.h>

#include <algorithm>
#include <complex>
#include <cstring>
#include <random>
#include <vector>

using namespace gr::hfstack::phy;
using cf = std::complex<float>;

namespace {

// The front end's low-pass as liquid's firfilt runs it, sample by sample.
std::vector<cf> liquid_lowpassed(const std::vector<cf>& in, double symbol_rate)
{
    const float cutoff = float(float(1900.0 / 2400.0 * symbol_rate) / (4 * symbol_rate));
    firfilt_crcf f = firfilt_crcf_create_kaiser(65, cutoff, 70.0f, 0.0f);
    std::vector<cf> out(in.size());
    for (size_t k = 0; k < in.size(); ++k) {
        firfilt_crcf_push(f, in[k]);
        firfilt_crcf_execute(f, &out[k]);
    }
    firfilt_crcf_destroy(f);
    return out;
}

std::vector<cf> noise(size_t n, uint32_t seed)
{
    std::mt19937 rng(seed);
    std::normal_distribution<float> g(0.0f, 1.0f);
    std::vector<cf> x(n);
    for (auto& v : x)
        v = cf(g(rng), g(rng));
    return x;
}

bool same_bits(const std::vector<cf>& a, const std::vector<cf>& b)
{
    return a.size() == b.size() &&
           std::memcmp(a.data(), b.data(), a.size() * sizeof(cf)) == 0;
}

} // namespace

// Complex input at the output rate goes through the low-pass alone: the same floats as
// liquid's firfilt (its portable dot product) gives, however the input is cut into calls.
TEST(SerialToneFrontend, LowpassGivesLiquidsFirfiltToTheBit)
{
    for (const double symbol_rate : { 2400.0, 38400.0 }) {
        serial_tone_frontend_config fc;
        fc.real_input = false;
        fc.symbol_rate = symbol_rate;
        fc.sample_rate = 4 * symbol_rate;
        const std::vector<cf> in = noise(50000, 7);
        const std::vector<cf> expected = liquid_lowpassed(in, symbol_rate);
        for (const size_t call : { size_t(4096), size_t(1), size_t(777) }) {
            serial_tone_frontend front(fc);
            std::vector<cf> out;
            for (size_t k = 0; k < in.size(); k += call)
                front.process(in.data() + k, std::min(call, in.size() - k), out);
            ASSERT_LE(out.size(), expected.size());
            ASSERT_GT(out.size(), expected.size() - size_t(fc.sample_rate / 100));
            EXPECT_TRUE(same_bits(
                out,
                std::vector<cf>(expected.begin(), expected.begin() + long(out.size()))))
                << symbol_rate << " Bd, calls of " << call;
        }
    }
}

TEST(SerialToneFrontend, LowpassSumsEachOutputOverItsOwnSamples)
{
    // An impulse gives the taps back, oldest-first taps reversed in time.
    const std::vector<float> taps = { 0.5f, -0.25f, 2.0f };
    std::vector<float> x(2 * (3 - 1 + 5), 0.0f);
    x[2 * 2] = 1.0f;     // the first output's newest sample
    x[2 * 2 + 1] = 3.0f; // imaginary
    std::vector<float> out(2 * 5, -1.0f);
    serial_tone_lowpass(taps.data(), taps.size(), x.data(), 5, out.data());
    const std::vector<float> expected = { 2.0f, 6.0f, -0.25f, -0.75f, 0.5f,
                                          1.5f, 0.0f, 0.0f,   0.0f,   0.0f };
    EXPECT_EQ(out, expected);
}

// Any number of outputs (a whole number of vector widths or not): liquid's floats.
TEST(SerialToneFrontend, LowpassOfAnyLengthGivesLiquidsFirfilt)
{
    const double symbol_rate = 38400;
    const std::vector<cf> in = noise(200, 11);
    const std::vector<cf> expected = liquid_lowpassed(in, symbol_rate);
    firfilt_crcf f = firfilt_crcf_create_kaiser(
        65, float(float(1900.0 / 2400.0 * symbol_rate) / (4 * symbol_rate)), 70.0f, 0.0f);
    std::vector<float> taps(firfilt_crcf_get_coefficients(f),
                            firfilt_crcf_get_coefficients(f) + 65);
    firfilt_crcf_destroy(f);
    std::reverse(taps.begin(), taps.end());
    for (const size_t outputs : { 1, 7, 8, 15, 16, 23, 31, 40, 100 }) {
        // Outputs 64 .. 64 + outputs - 1: their 64 samples before are the input's.
        std::vector<cf> out(outputs);
        serial_tone_lowpass(taps.data(),
                            taps.size(),
                            reinterpret_cast<const float*>(in.data()),
                            outputs,
                            reinterpret_cast<float*>(out.data()));
        EXPECT_TRUE(same_bits(out,
                              std::vector<cf>(expected.begin() + 64,
                                              expected.begin() + 64 + long(outputs))))
            << outputs << " outputs";
    }
}
