/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "m110d_probe_data_watch.h"

#include "m110d_waveform.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace gr {
namespace hfstack {
namespace phy {

m110d_probe_data_watch::m110d_probe_data_watch(unsigned data_symbols,
                                               unsigned probe_symbols,
                                               unsigned samples_per_symbol,
                                               double symbol_rate,
                                               unsigned frames_summed,
                                               double threshold_z)
    : d_data_symbols(data_symbols),
      d_probe_symbols(probe_symbols),
      d_sps(samples_per_symbol),
      d_symbol_rate(symbol_rate),
      d_frames_summed(frames_summed),
      d_threshold_z(threshold_z),
      d_sum(size_t(data_symbols + probe_symbols) * samples_per_symbol),
      d_energy(samples_per_symbol)
{
    if (frames_summed == 0 || samples_per_symbol == 0 || probe_symbols < 2)
        throw std::invalid_argument("m110d_probe_data_watch: no frames or no probe");
    // (Throws for a length D-XXI lacks.)
    const std::vector<cf> probe = m110d_mini_probe(probe_symbols, false, probe_symbols);
    for (unsigned i = 0; i + 1 < probe_symbols; ++i)
        d_turns.push_back(std::conj(cd(probe[i + 1]) * std::conj(cd(probe[i]))));
}

void m110d_probe_data_watch::restart(uint64_t n)
{
    d_started = true;
    d_origin = n;
    d_index = 0;
    d_frames = 0;
    std::fill(d_sum.begin(), d_sum.end(), cd());
    std::fill(d_energy.begin(), d_energy.end(), 0.0);
}

std::optional<m110d_probe_data_watch::detection>
m110d_probe_data_watch::frame_completed(uint64_t last)
{
    d_index = 0;
    if (++d_frames < d_frames_summed)
        return std::nullopt;
    const std::optional<detection> found = evaluate(last);
    restart(last + 1);
    return found;
}

std::optional<m110d_probe_data_watch::detection>
m110d_probe_data_watch::evaluate(uint64_t last) const
{
    const size_t period = d_sum.size();
    // A timing's correlation takes turns.size() of the frame's symbols' products at its
    // sample of a symbol: in noise its variance is that share of their energy.
    const double share =
        double(d_turns.size()) / double(d_data_symbols + d_probe_symbols);
    double best = 0;
    size_t best_at = 0;
    cd best_sum;
    for (size_t t = 0; t < period; ++t) {
        const double e = d_energy[t % d_sps] * share;
        if (!(e > 0))
            continue;
        cd c;
        for (size_t i = 0; i < d_turns.size(); ++i)
            c += d_sum[(t + i * d_sps) % period] * d_turns[i];
        const double power = std::norm(c) / e;
        if (power > best) {
            best = power;
            best_at = t;
            best_sum = c;
        }
    }
    const double z2 = best - std::log(double(period));
    if (!(z2 >= d_threshold_z * d_threshold_z))
        return std::nullopt;
    detection d;
    d.z = std::sqrt(z2);
    uint64_t start = d_origin + best_at;
    while (start + period <= last)
        start += period;
    d.probe_start = start;
    d.hz = std::arg(best_sum) * d_symbol_rate / (2 * M_PI);
    return d;
}

} // namespace phy
} // namespace hfstack
} // namespace gr
