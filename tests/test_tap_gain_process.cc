/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "chan/tap_gain_process.h"

#include "expect_error.h"

#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <functional>
#include <iostream>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

using gr::hfstack::chan::tap_gain_process;

namespace {

constexpr double pi = 3.14159265358979323846;

std::vector<std::complex<double>>
run(double spread, double shift, uint64_t seed, double step, size_t n)
{
    tap_gain_process g(spread, shift, seed);
    std::vector<std::complex<double>> out(n);
    for (size_t i = 0; i < n; ++i)
        out[i] = g.at(double(i) * step);
    return out;
}

// Estimate of E[g(t + lag * step) g*(t)].
std::complex<double> autocorrelation(const std::vector<std::complex<double>>& g,
                                     size_t lag)
{
    std::complex<double> acc;
    for (size_t i = 0; i + lag < g.size(); ++i)
        acc += g[i + lag] * std::conj(g[i]);
    return acc / double(g.size() - lag);
}

} // namespace

// 2000 s of a 10 Hz spread: |g|^2 decorrelates within integral exp(-4 pi^2 sigma^2 tau^2)
// d tau = 1 / (2 sqrt(pi) sigma) = 56 ms, so ~35000 independent looks and a standard
// error of the mean power (variance 1) of ~0.005: +-0.03 is ~6 standard errors. The
// Rayleigh CDF points have standard errors below 0.003; +-0.015 is > 5 of them.
TEST(TapGainProcess, UnitMeanPowerAndRayleighEnvelope)
{
    const auto g = run(10.0, 0.0, 11, 0.01, 200000);
    double power = 0;
    const double xs[] = { 0.1, 0.5, 1.0, 2.0 };
    size_t below[4] = {};
    for (const auto& v : g) {
        const double p = std::norm(v);
        power += p;
        for (int k = 0; k < 4; ++k)
            below[k] += p < xs[k];
    }
    power /= double(g.size());
    std::cout << "mean power " << power << "\n";
    EXPECT_NEAR(power, 1.0, 0.03);
    for (int k = 0; k < 4; ++k) {
        const double measured = double(below[k]) / double(g.size());
        std::cout << "P(|g|^2 < " << xs[k] << ") " << measured << " vs "
                  << 1 - std::exp(-xs[k]) << "\n";
        EXPECT_NEAR(measured, 1.0 - std::exp(-xs[k]), 0.015) << "x = " << xs[k];
    }
}

// Spread 2 Hz (sigma 1 Hz): R(tau) = exp(-2 pi^2 tau^2). 4000 s at 10 ms; an estimate
// of R averages ~4000 s / 0.28 s = 14000 independent looks, standard error ~0.009:
// +-0.04 is > 4 of them.
TEST(TapGainProcess, AutocorrelationIsGaussianWithTwoSigmaSpread)
{
    const double spread = 2.0, sigma = spread / 2, step = 0.01;
    const auto g = run(spread, 0.0, 5, step, 400000);
    for (size_t lag : { 5u, 10u, 15u, 25u, 35u }) {
        const double tau = double(lag) * step;
        const std::complex<double> r = autocorrelation(g, lag);
        const double expected = std::exp(-2 * pi * pi * sigma * sigma * tau * tau);
        std::cout << "R(" << tau << ") " << r << " vs " << expected << "\n";
        EXPECT_NEAR(r.real(), expected, 0.04) << "tau = " << tau;
        EXPECT_NEAR(r.imag(), 0.0, 0.04) << "tau = " << tau;
    }
}

// The phase of R(tau) is 2 pi shift tau: its estimate has a standard error of ~0.01 rad
// here (as above, |R| ~ 0.9), i.e. ~0.03 Hz at tau = 50 ms; +-0.1 Hz is > 3 of them.
TEST(TapGainProcess, DopplerShiftRotatesPhaseAtTheShift)
{
    const double step = 0.01;
    for (double shift : { 3.0, -7.5 }) {
        const auto g = run(1.0, shift, 21, step, 300000);
        for (size_t lag : { 2u, 5u }) {
            const double tau = double(lag) * step;
            const std::complex<double> r = autocorrelation(g, lag);
            const double measured = std::arg(r) / (2 * pi * tau);
            std::cout << "shift " << shift << " tau " << tau << ": " << measured
                      << " Hz, |R| " << std::abs(r) << "\n";
            EXPECT_NEAR(measured, shift, 0.1) << "tau = " << tau;
            // The magnitude keeps the unshifted Gaussian correlation (sigma 0.5 Hz).
            EXPECT_NEAR(std::abs(r), std::exp(-2 * pi * pi * 0.25 * tau * tau), 0.04);
        }
    }
}

TEST(TapGainProcess, SeedDeterminesTheProcessAndQueryPatternDoesNot)
{
    const auto a = run(1.0, 0.5, 42, 0.01, 10000);
    const auto b = run(1.0, 0.5, 42, 0.01, 10000);
    const auto c = run(1.0, 0.5, 43, 0.01, 10000);
    EXPECT_EQ(a, b);
    size_t different = 0;
    for (size_t i = 0; i < a.size(); ++i)
        different += a[i] != c[i];
    EXPECT_EQ(different, a.size());

    // Sparse queries across long gaps give the same values as dense ones.
    tap_gain_process sparse(1.0, 0.5, 42);
    for (size_t i : { 0u, 1u, 2u, 500u, 501u, 3777u, 9999u })
        EXPECT_EQ(sparse.at(double(i) * 0.01), a[i]) << "i = " << i;
}

TEST(TapGainProcess, ZeroSpreadIsAStaticPath)
{
    tap_gain_process still(0.0, 0.0, 1);
    for (double t : { -3.0, 0.0, 0.1, 1e6 })
        EXPECT_EQ(still.at(t), std::complex<double>(1.0, 0.0));
    EXPECT_TRUE(still.filter_taps().empty());

    tap_gain_process shifted(0.0, 2.0, 1);
    const std::complex<double> g = shifted.at(0.125); // a quarter turn
    EXPECT_NEAR(std::abs(g), 1.0, 1e-15);
    EXPECT_NEAR(std::arg(g), pi / 2, 1e-12);
}

TEST(TapGainProcess, FilterAndRateFollowTheSpread)
{
    tap_gain_process g(4.0, 0.0, 1);
    EXPECT_DOUBLE_EQ(g.sample_rate_hz(), 64.0);
    double energy = 0;
    for (double h : g.filter_taps())
        energy += h * h;
    EXPECT_NEAR(energy, 1.0, 1e-12);
    EXPECT_EQ(g.filter_taps().size() % 2, 1u);
}

TEST(TapGainProcess, BadParametersThrow)
{
    const double nan = std::numeric_limits<double>::quiet_NaN();
    const double inf = std::numeric_limits<double>::infinity();
    expect_throws_naming([&] { tap_gain_process(-1.0, 0.0, 1); }, "spread_hz");
    expect_throws_naming([&] { tap_gain_process(nan, 0.0, 1); }, "spread_hz");
    expect_throws_naming([&] { tap_gain_process(inf, 0.0, 1); }, "spread_hz");
    expect_throws_naming([&] { tap_gain_process(1.0, nan, 1); }, "shift_hz");
    expect_throws_naming([&] { tap_gain_process(0.0, inf, 1); }, "shift_hz");
    tap_gain_process g(1.0, 0.0, 1);
    expect_throws_naming([&] { g.at(nan); }, "t");
    expect_throws_naming([&] { g.at(inf); }, "t");
    g.at(5.0);
    g.at(5.0); // equal is fine
    expect_throws_naming([&] { g.at(4.9); }, "t");
}

TEST(TapGainProcess, FillGivesWhatAtGives)
{
    for (double shift : { 0.0, 3.7 }) {
        tap_gain_process a(2.0, shift, 11), b(2.0, shift, 11);
        const double dt = 1.0 / 800.0;
        std::vector<std::complex<float>> filled(3000);
        // Two calls, the second after a gap, as the channel makes them.
        b.fill(0.25, dt, 1000, 0.5f, filled.data());
        b.fill(0.25 + 1500 * dt, dt, 2000, 0.5f, filled.data() + 1000);
        double worst = 0;
        for (size_t k = 0; k < 3000; ++k) {
            const double t = 0.25 + double(k < 1000 ? k : k + 500) * dt;
            const std::complex<double> expected = 0.5 * a.at(t);
            worst = std::max(worst, std::abs(std::complex<double>(filled[k]) - expected));
        }
        EXPECT_LT(worst, 1e-6) << "shift " << shift;
        // Both end in the same state: the next values agree too.
        std::complex<float> next;
        b.fill(10.0, dt, 1, 1.0f, &next);
        EXPECT_LT(std::abs(std::complex<double>(next) - a.at(10.0)), 1e-6);
    }
    tap_gain_process g(1.0, 0.0, 1);
    std::complex<float> out;
    expect_throws_naming([&] { g.fill(0.0, 0.0, 1, 1.0f, &out); }, "dt");
    g.fill(5.0, 0.1, 1, 1.0f, &out);
    expect_throws_naming([&] { g.fill(4.0, 0.1, 1, 1.0f, &out); }, "t");
}
