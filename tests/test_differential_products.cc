/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "phy/differential_products.h"

#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

using gr::hfstack::phy::magnitude;

namespace {

bool same_float(float a, float b) { return std::memcmp(&a, &b, sizeof a) == 0; }

} // namespace

// The search's |C| is std::abs's float, bit for bit, over values of every scale.
TEST(DifferentialProducts, MagnitudeIsStdAbsToTheBit)
{
    std::mt19937 rng(3);
    std::normal_distribution<float> g(0.0f, 1.0f);
    std::uniform_int_distribution<int> exponent(-140, 120);
    for (int k = 0; k < 200000; ++k) {
        const std::complex<float> z(std::ldexp(g(rng), exponent(rng)),
                                    std::ldexp(g(rng), exponent(rng)));
        ASSERT_TRUE(same_float(magnitude(z), std::abs(z))) << z;
    }
    const float big = std::numeric_limits<float>::max(),
                tiny = std::numeric_limits<float>::denorm_min();
    for (const std::complex<float> z : { std::complex<float>(0, 0),
                                         std::complex<float>(big, big),
                                         std::complex<float>(-big, 1),
                                         std::complex<float>(tiny, -tiny),
                                         std::complex<float>(3, 4) })
        EXPECT_TRUE(same_float(magnitude(z), std::abs(z))) << z;
}
