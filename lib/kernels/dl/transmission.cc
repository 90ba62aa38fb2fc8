/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "transmission.h"

#include <cmath>

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

size_t dpdus_that_fit(const std::vector<size_t>& encoded_sizes, const phy::waveform_timing& phy,
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

} // namespace dl
} // namespace hfstack
} // namespace gr
