/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "transmission.h"

#include <cmath>
#include <stdexcept>

namespace gr {
namespace hfstack {
namespace dl {

double air_time(const phy::waveform_timing& phy, size_t bytes)
{
    return phy::transmission_time_of(phy, bytes).total_s;
}

uint8_t eot_field(double seconds_left)
{
    if (!(seconds_left > 0))
        return 0;
    // A tiny epsilon keeps exact half-second multiples from rounding up one step
    // through floating-point noise.
    const double half_seconds = std::ceil(seconds_left * 2.0 - 1e-9);
    return half_seconds >= 255.0 ? 255 : uint8_t(half_seconds);
}

void stamp_eot(std::vector<dpdu>& burst, const phy::waveform_timing& phy)
{
    size_t total = 0;
    std::vector<size_t> sizes;
    sizes.reserve(burst.size());
    for (const auto& d : burst) {
        sizes.push_back(encoded_size(d));
        total += sizes.back();
    }
    const double end = air_time(phy, total);
    size_t before = 0;
    for (size_t i = 0; i < burst.size(); ++i) {
        const double start = phy.preamble_s + double(before) * 8.0 / phy.bit_rate;
        burst[i].eot = eot_field(end - start);
        before += sizes[i];
    }
}

size_t dpdus_that_fit(const std::vector<size_t>& encoded_sizes,
                      const phy::waveform_timing& phy,
                      double max_seconds)
{
    size_t bytes = 0, n = 0;
    for (size_t size : encoded_sizes) {
        if (air_time(phy, bytes + size) > max_seconds)
            break;
        bytes += size;
        ++n;
    }
    return n;
}

transmission_budget::transmission_budget(const phy::waveform_timing& phy,
                                         double max_s,
                                         uint32_t source)
    : d_phy(phy), d_max_s(max_s), d_source(source)
{
    if (!(max_s > 0) || !std::isfinite(max_s))
        throw std::invalid_argument(
            "transmission_budget: max_s must be a positive number of seconds");
}

bool transmission_budget::fits(size_t more) const
{
    return air_time(d_phy, d_bytes + more) <= d_max_s;
}

bool transmission_budget::add(dpdu d)
{
    d.source = d_source;
    const size_t n = encoded_size(d);
    if (!fits(n))
        return false;
    d_bytes += n;
    d_frames.push_back(std::move(d));
    return true;
}

size_t transmission_budget::room(size_t overhead) const
{
    const size_t most = phy::max_bytes_within(d_phy, d_max_s);
    const size_t left = most > d_bytes ? most - d_bytes : 0;
    return left > overhead ? left - overhead : 0;
}

} // namespace dl
} // namespace hfstack
} // namespace gr
