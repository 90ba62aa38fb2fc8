/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "helper_threads.h"
#include "serial_tone_samples.h"

#include <algorithm>
#include <cmath>

namespace gr {
namespace hfstack {
namespace phy {

namespace {
constexpr double two_pi = 6.283185307179586476925286766559;
} // namespace

void serial_tone_samples::release_before(uint64_t keep)
{
    if (keep <= d_base + 65536)
        return;
    d_buf.erase(d_buf.begin(), d_buf.begin() + long(keep - d_base));
    d_base = keep;
    if (d_cache_from < d_base) {
        const size_t drop =
            size_t(std::min<uint64_t>(d_base - d_cache_from, d_cache.size()));
        d_cache.erase(d_cache.begin(), d_cache.begin() + long(drop));
        d_cache_from += drop;
    }
}

void serial_tone_samples::start_derotation(uint64_t from, double hz)
{
    d_offset_hz = hz;
    d_phase_cycles = 0;
    d_phase_from = from;
    d_cache.clear();
    d_cache_from = from;
}

void serial_tone_samples::change_offset(uint64_t from, double hz)
{
    d_phase_cycles =
        std::fmod(d_phase_cycles +
                      d_offset_hz * double(int64_t(from - d_phase_from)) / d_sample_rate,
                  1.0);
    d_phase_from = from;
    d_offset_hz = hz;
}

void serial_tone_samples::derotate_through(uint64_t to, bool two_threads)
{
    // Fewer than this are not worth a thread.
    constexpr size_t least_split = 2048;
    const uint64_t end = d_cache_from + d_cache.size();
    if (to < end)
        return;
    const size_t from = d_cache.size(), count = size_t(to + 1 - end);
    d_cache.resize(from + count);
    const auto fill = [this, from](size_t a, size_t b) {
        for (size_t k = a; k < b; ++k)
            d_cache[from + k] = derotate(d_cache_from + from + k);
    };
    if (!two_threads || count < least_split) {
        fill(0, count);
        return;
    }
    run_beside([&] { fill(count / 2, count); }, [&] { fill(0, count / 2); });
}

serial_tone_samples::cf serial_tone_samples::derotate(uint64_t i) const
{
    const double cycles = std::fmod(
        d_phase_cycles + d_offset_hz * double(int64_t(i - d_phase_from)) / d_sample_rate,
        1.0);
    return at(i) * std::polar(1.0f, float(-two_pi * cycles));
}

} // namespace phy
} // namespace hfstack
} // namespace gr
