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
      d_threshold_z(threshold_z),
      d_folded(size_t(data_symbols + probe_symbols) * samples_per_symbol,
               samples_per_symbol,
               frames_summed)
{
    if (frames_summed == 0 || samples_per_symbol == 0 || probe_symbols < 2)
        throw std::invalid_argument("m110d_probe_data_watch: no frames or no probe");
    // (Throws for a length D-XXI lacks.)
    const std::vector<cf> probe = m110d_mini_probe(probe_symbols, false, probe_symbols);
    for (unsigned i = 0; i + 1 < probe_symbols; ++i)
        d_turns.push_back(std::conj(cd(probe[i + 1]) * std::conj(cd(probe[i]))));
}

std::optional<m110d_probe_data_watch::detection>
m110d_probe_data_watch::evaluate(uint64_t last) const
{
    const std::vector<cd>& sum = d_folded.sums();
    const size_t period = sum.size();
    // A timing's correlation takes turns.size() of the frame's symbols' products at its
    // sample of a symbol: in noise its variance is that share of their energy.
    const double share =
        double(d_turns.size()) / double(d_data_symbols + d_probe_symbols);
    double best = 0;
    size_t best_at = 0;
    cd best_sum;
    for (size_t t = 0; t < period; ++t) {
        const double e = d_folded.energy(t % d_sps) * share;
        if (!(e > 0))
            continue;
        cd c;
        for (size_t i = 0; i < d_turns.size(); ++i)
            c += sum[(t + i * d_sps) % period] * d_turns[i];
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
    d.probe_start = d_folded.latest_at(best_at, last);
    d.hz = std::arg(best_sum) * d_symbol_rate / (2 * M_PI);
    return d;
}

} // namespace phy
} // namespace hfstack
} // namespace gr
