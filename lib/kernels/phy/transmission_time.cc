/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "transmission_time.h"

#include <algorithm>
#include <cmath>

namespace gr {
namespace hfstack {
namespace phy {

namespace {

double units_duration(const waveform_timing& w, size_t units)
{
    const size_t reinsertions =
        w.units_per_reinsertion ? units / w.units_per_reinsertion : 0;
    return double(units) * w.unit_s + double(reinsertions) * w.reinsertion_s;
}

} // namespace

transmission_time transmission_time_of(const waveform_timing& w, size_t bytes)
{
    transmission_time t;
    t.preamble_s = w.preamble_s;
    if (!w.whole_units()) {
        t.data_s = double(bytes) * 8.0 / w.bit_rate + w.tail_s;
    } else {
        const size_t bits = 8 * bytes + w.trailer_bits;
        t.units = (bits + w.unit_bits - 1) / w.unit_bits;
        t.fill_bits = t.units * w.unit_bits - bits;
        t.data_s = units_duration(w, t.units);
    }
    t.total_s = t.preamble_s + t.data_s;
    return t;
}

size_t max_bytes_within(const waveform_timing& w, double max_seconds)
{
    const double for_data = max_seconds - w.preamble_s;
    if (!w.whole_units()) {
        const double bits = (for_data - w.tail_s) * w.bit_rate;
        return bits >= 0 ? size_t(std::floor(bits / 8.0 + 1e-9)) : 0;
    }
    if (for_data < 0)
        return 0;
    // Whole units that fit, counting the re-inserted sections they bring along.
    size_t units = size_t(std::floor(for_data / w.unit_s + 1e-9));
    while (units > 0 && units_duration(w, units) > for_data + 1e-9)
        --units;
    const size_t bits = units * w.unit_bits;
    return bits > w.trailer_bits ? (bits - w.trailer_bits) / 8 : 0;
}

std::vector<decoded_piece> decoding_schedule(const waveform_timing& w, size_t bytes)
{
    const transmission_time t = transmission_time_of(w, bytes);
    std::vector<decoded_piece> pieces;
    if (w.whole_units()) {
        size_t known = 0;
        for (size_t i = 0; i + 1 < t.units; ++i) {
            const size_t end = std::min(bytes, (i + 1) * w.unit_bits / 8);
            if (end == known)
                continue;
            known = end;
            // Unit i ends after i + 1 units and the sections re-inserted between them.
            const size_t reinsertions =
                w.units_per_reinsertion ? i / w.units_per_reinsertion : 0;
            pieces.push_back(decoded_piece{ end,
                                            w.preamble_s + double(i + 1) * w.unit_s +
                                                double(reinsertions) * w.reinsertion_s });
        }
    }
    pieces.push_back(decoded_piece{ bytes, t.total_s });
    return pieces;
}

} // namespace phy
} // namespace hfstack
} // namespace gr
