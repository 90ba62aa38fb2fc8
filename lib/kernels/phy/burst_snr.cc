/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "burst_snr.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace gr {
namespace hfstack {
namespace phy {

namespace {
// Error power below this reads as 60 dB: a clean recording or a noiseless test.
constexpr double least_error_power = 1e-6;

double error_db(double error_power)
{
    return 10.0 * std::log10(std::max(error_power, least_error_power));
}
} // namespace

double serial_tone_snr_3khz_db(double signal_power, double error_power)
{
    // Symbol power over the noise in the 2400 Hz symbol bandwidth, moved to 3 kHz.
    return 10.0 * std::log10(signal_power) - error_db(error_power) -
           10.0 * std::log10(3000.0 / 2400.0);
}

void burst_snr::start() { *this = burst_snr(); }

void burst_snr::add(double error_power, double time_s)
{
    d_last_s = time_s;
    d_chunk_sum += error_power;
    if (++d_chunk_count < chunk_symbols)
        return;
    const double before = d_closed_db_sum.empty() ? 0.0 : d_closed_db_sum.back().second;
    d_closed_db_sum.emplace_back(time_s,
                                 before + error_db(d_chunk_sum / double(d_chunk_count)));
    d_chunk_sum = 0;
    d_chunk_count = 0;
}

size_t burst_snr::chunks() const
{
    return d_closed_db_sum.size() + (2 * d_chunk_count >= chunk_symbols ? 1 : 0);
}

double burst_snr::snr_db_from(size_t first, double signal_power) const
{
    // The closed chunks from `first` by one subtraction of the running sums, and a
    // partial chunk of at least half a chunk's symbols.
    double db_sum = d_closed_db_sum.empty() ? 0.0 : d_closed_db_sum.back().second;
    if (first > 0)
        db_sum -= d_closed_db_sum[first - 1].second;
    size_t n = d_closed_db_sum.size() - first;
    if (2 * d_chunk_count >= chunk_symbols) {
        db_sum += error_db(d_chunk_sum / double(d_chunk_count));
        ++n;
    }
    if (n == 0)
        return std::numeric_limits<double>::quiet_NaN();
    // The mean error power in dB, as one chunk's, through the same conversion.
    return serial_tone_snr_3khz_db(signal_power,
                                   std::pow(10.0, db_sum / double(n) / 10.0));
}

double burst_snr::snr_db(double signal_power) const
{
    return snr_db_from(0, signal_power);
}

double burst_snr::recent_snr_db(double signal_power) const
{
    // The first closed chunk ending inside the window.
    const auto first = std::lower_bound(
        d_closed_db_sum.begin(),
        d_closed_db_sum.end(),
        d_last_s - recent_window_s,
        [](const std::pair<double, double>& chunk, double t) { return chunk.first < t; });
    return snr_db_from(size_t(first - d_closed_db_sum.begin()), signal_power);
}

} // namespace phy
} // namespace hfstack
} // namespace gr
