/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "differential_products.h"

#include <volk/volk.h>

#include <algorithm>
#include <cmath>

namespace gr {
namespace hfstack {
namespace phy {

const std::complex<float>* differential_products::at(const serial_tone_samples& input, uint64_t i)
{
    const uint64_t first = i / sps;
    if (d_energy[0].empty() || first < d_from || first > d_from + 2 * d_history) {
        for (unsigned ph = 0; ph < sps; ++ph) {
            d_products[ph].clear();
            d_energy[ph].assign(1, 0.0);
        }
        d_from = first;
    } else if (first > d_from + d_history) {
        const size_t drop = size_t(first - d_from - d_history / 2);
        for (unsigned ph = 0; ph < sps; ++ph) {
            d_products[ph].erase(d_products[ph].begin(),
                                 d_products[ph].begin() + long(std::min(drop, d_products[ph].size())));
            auto& run = d_energy[ph];
            run.erase(run.begin(), run.begin() + long(std::min(drop, run.size() - 1)));
        }
        d_from += drop;
    }
    const unsigned ph = unsigned(i % sps);
    const size_t need = size_t(first - d_from) + d_terms;
    auto& run = d_energy[ph];
    while (d_products[ph].size() < need) {
        const uint64_t at_i = (d_from + d_products[ph].size()) * sps + ph;
        const std::complex<float> v =
            at_i >= input.base() + sps ? input.at(at_i) * std::conj(input.at(at_i - sps)) : std::complex<float>();
        d_products[ph].push_back(v);
        run.push_back(run.back() + double(std::norm(v)));
    }
    return d_products[ph].data() + (first - d_from);
}

double differential_products::energy(uint64_t i) const
{
    const auto& run = d_energy[i % sps];
    const size_t m = size_t(i / sps - d_from);
    return run[m + d_terms] - run[m];
}

differential_correlator::differential_correlator(const std::vector<std::complex<float>>& known, size_t history)
    : d_products(known.size() > 1 ? known.size() - 1 : 1, history)
{
    for (size_t k = 1; k < known.size(); ++k)
        d_conj_rotations.push_back(std::conj(known[k] * std::conj(known[k - 1])));
}

double differential_correlator::z_at(const serial_tone_samples& input, uint64_t n, std::complex<float>& sum)
{
    const std::complex<float>* p = d_products.at(input, n + differential_products::sps);
    volk_32fc_x2_dot_prod_32fc(&sum, p, d_conj_rotations.data(), unsigned(d_conj_rotations.size()));
    const double e = d_products.energy(n + differential_products::sps);
    return e > 0 ? std::abs(sum) / std::sqrt(e) : 0.0;
}

} // namespace phy
} // namespace hfstack
} // namespace gr
