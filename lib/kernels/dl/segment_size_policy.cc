/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "segment_size_policy.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace gr {
namespace hfstack {
namespace dl {

segment_size_policy::segment_size_policy(segment_size_policy_config config)
    : d_cfg(config)
{
    if (d_cfg.min_size == 0 || d_cfg.min_size > d_cfg.max_size || d_cfg.max_size > 1023)
        throw std::invalid_argument(
            "segment_size_policy_config: need 1 <= min_size <= max_size <= 1023");
    if (!(d_cfg.memory_frames >= 1))
        throw std::invalid_argument(
            "segment_size_policy_config: memory_frames must be >= 1");
}

void segment_size_policy::on_outcome(size_t frames, size_t bytes, size_t lost_frames)
{
    if (frames == 0)
        return;
    const double keep = std::pow(1.0 - 1.0 / d_cfg.memory_frames, double(frames));
    d_frames = d_frames * keep + double(frames);
    d_bits = d_bits * keep + 8.0 * double(bytes);
    d_lost = d_lost * keep + double(std::min(lost_frames, frames));
}

double segment_size_policy::bit_error_rate() const
{
    if (!confident())
        return d_cfg.prior_ber;
    if (d_lost <= 0 || d_bits <= 0)
        return 0.0;
    // Every frame lost: the estimate is only a lower bound; cap f so the log stays
    // finite.
    const double f = std::min(d_lost / d_frames, 0.999);
    return -std::log1p(-f) / (d_bits / d_frames);
}

size_t segment_size_policy::segment_size_for(const arq_cycle& cycle, double p) const
{
    const arq_cycle& k = d_cached_cycle;
    if (p == d_cached_ber && cycle.header_bytes == k.header_bytes &&
        cycle.window == k.window && cycle.capacity_bytes == k.capacity_bytes &&
        cycle.fixed_s == k.fixed_s && cycle.bit_rate == k.bit_rate)
        return d_cached_size;
    const double q = -std::log1p(-std::min(p, 0.5)); // per bit, as a rate
    const double h = double(cycle.header_bytes);
    const double fixed_bytes = cycle.fixed_s * cycle.bit_rate / 8.0;
    size_t best = d_cfg.max_size;
    double best_g = -1;
    // g has one maximum; a scan of at most 1023 sizes, once per transmission, is cheap.
    for (size_t s = d_cfg.min_size; s <= d_cfg.max_size; ++s) {
        const double frame = double(s) + h;
        double n = double(cycle.window);
        if (cycle.capacity_bytes)
            n = std::min(n, std::floor(double(cycle.capacity_bytes) / frame));
        if (n < 1)
            break;
        const double g =
            n * double(s) * std::exp(-8.0 * q * frame) / (fixed_bytes + n * frame);
        if (g >= best_g) {
            best_g = g;
            best = s;
        }
    }
    d_cached_ber = p;
    d_cached_cycle = cycle;
    d_cached_size = best;
    return best;
}

} // namespace dl
} // namespace hfstack
} // namespace gr
