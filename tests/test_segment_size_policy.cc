/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

// ARQ segment size from measured losses (dl/segment_size_policy.h): the estimate of the
// bit error rate, the analytic optimum, the window-limited case, fading memory.
#include "dl/segment_size_policy.h"

#include <gtest/gtest.h>

#include <cmath>

using namespace gr::hfstack::dl;

namespace {

// Outcomes of `frames` D_PDUs of frame_bytes each with the loss a BER of p gives.
void feed(segment_size_policy& s, double p, size_t frame_bytes, size_t frames)
{
    const double loss = 1.0 - std::pow(1.0 - p, 8.0 * double(frame_bytes));
    s.on_outcome(
        frames, frames * frame_bytes, size_t(std::lround(loss * double(frames))));
}

arq_cycle unlimited(size_t header = 16)
{
    arq_cycle c;
    c.header_bytes = header;
    c.window = 1u << 30; // never binds
    c.fixed_s = 0;
    return c;
}

// s* = (sqrt(h^2 + h / (2 q)) - h) / 2 with q = -ln(1 - p).
double optimum(double p, double h)
{
    const double q = -std::log1p(-p);
    return (std::sqrt(h * h + h / (2 * q)) - h) / 2;
}

} // namespace

TEST(SegmentSizePolicy, PriorUntilConfidentThenTheMeasuredRate)
{
    segment_size_policy s;
    EXPECT_FALSE(s.confident());
    EXPECT_DOUBLE_EQ(s.bit_error_rate(), s.config().prior_ber);
    feed(s, 0.0, 1039, 4);
    EXPECT_FALSE(s.confident()); // 4 < 8 frames
    feed(s, 0.0, 1039, 10);
    EXPECT_TRUE(s.confident());
    EXPECT_EQ(s.bit_error_rate(), 0.0);
    EXPECT_EQ(s.segment_size(unlimited()), 1023u); // clean: the largest
}

TEST(SegmentSizePolicy, EstimateAndOptimumMatchTheAnalyticValues)
{
    for (double p : { 1e-5, 1e-4, 1e-3 }) {
        segment_size_policy s;
        // Many frames, so the rounding of lost frames is negligible; short ones at 1e-3,
        // where almost every 1039-byte frame would be lost (f is capped at 0.999).
        feed(s, p, p < 1e-3 ? 1039 : 300, 20000);
        EXPECT_NEAR(s.bit_error_rate(), p, 0.01 * p) << p;
        const double best = optimum(s.bit_error_rate(), 16);
        EXPECT_NEAR(double(s.segment_size(unlimited())), best, 1.0) << p;
    }
    EXPECT_NEAR(optimum(1e-5, 16), 439, 1);
    EXPECT_NEAR(optimum(1e-4, 16), 134, 1);
}

// When 128 frames make a short transmission, the cycle's fixed time favours longer
// segments than the unlimited optimum.
TEST(SegmentSizePolicy, ABindingWindowLengthensSegments)
{
    segment_size_policy s;
    feed(s, 1e-4, 300, 5000);
    arq_cycle c = unlimited();
    const size_t free_size = s.segment_size(c);
    c.window = 128;
    c.fixed_s = 3.5;
    c.bit_rate = 9600;
    c.capacity_bytes = 153000;
    EXPECT_GT(s.segment_size(c), free_size + 20);
    // A transmission too small for more than a few frames: they grow to fill it.
    c.window = 128;
    c.capacity_bytes = 600;
    c.fixed_s = 0;
    EXPECT_LE(s.segment_size(c), 600u - 16u);
}

TEST(SegmentSizePolicy, OldLossesFade)
{
    segment_size_policy s; // memory 200 frames
    feed(s, 1e-4, 500, 400);
    const double noisy = s.bit_error_rate();
    feed(s, 0.0, 500, 2000); // ten memories of a clean link
    EXPECT_LT(s.bit_error_rate(), noisy / 1000);
    EXPECT_EQ(s.segment_size(unlimited()), 1023u);
}

TEST(SegmentSizePolicy, AllFramesLostStillGivesAFiniteSmallSegment)
{
    segment_size_policy s;
    s.on_outcome(50, 50 * 1039, 50);
    EXPECT_TRUE(std::isfinite(s.bit_error_rate()));
    EXPECT_GT(s.bit_error_rate(), 5e-4); // at least ln(1000) / 8312 bits
    EXPECT_LT(s.segment_size(unlimited()), 64u);
}

TEST(SegmentSizePolicy, BadConfigurationIsRefused)
{
    segment_size_policy_config c;
    c.min_size = 0;
    EXPECT_THROW(segment_size_policy{ c }, std::invalid_argument);
    c = {};
    c.min_size = 600;
    c.max_size = 500;
    EXPECT_THROW(segment_size_policy{ c }, std::invalid_argument);
    c = {};
    c.max_size = 1024;
    EXPECT_THROW(segment_size_policy{ c }, std::invalid_argument);
    c = {};
    c.memory_frames = 0.5;
    EXPECT_THROW(segment_size_policy{ c }, std::invalid_argument);
}
