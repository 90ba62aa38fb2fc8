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

void burst_snr::add(double error_power)
{
    d_chunk_sum += error_power;
    if (++d_chunk_count < chunk_symbols)
        return;
    d_db_sum += error_db(d_chunk_sum / double(d_chunk_count));
    ++d_closed;
    d_chunk_sum = 0;
    d_chunk_count = 0;
}

size_t burst_snr::chunks() const
{
    return d_closed + (2 * d_chunk_count >= chunk_symbols ? 1 : 0);
}

double burst_snr::snr_db(double signal_power) const
{
    double db_sum = d_db_sum;
    size_t n = d_closed;
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

} // namespace phy
} // namespace hfstack
} // namespace gr
