/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#ifndef INCLUDED_HFSTACK_PHY_FOLDED_PRODUCTS_H
#define INCLUDED_HFSTACK_PHY_FOLDED_PRODUCTS_H

#include <algorithm>
#include <complex>
#include <cstdint>
#include <vector>

namespace gr {
namespace hfstack {
namespace phy {

// What the data watches (m110d_wn0_data_watch, m110d_probe_data_watch) correlate: the
// received samples' products added up modulo a period of samples over a window of
// whole periods, with their energy per sample phase.
class folded_products
{
public:
    using cd = std::complex<double>;

    folded_products(size_t period_samples, unsigned phases, unsigned periods_summed)
        : d_sum(period_samples), d_energy(phases), d_periods_summed(periods_summed)
    {
    }

    // Sample n's product; samples are taken in order (any other n restarts the window
    // there). True where it completes the window: the sums then hold it until
    // restart().
    bool add(uint64_t n, cd x)
    {
        if (!d_started || n != d_next)
            restart(n);
        d_next = n + 1;
        d_sum[d_index] += x;
        d_energy[d_index % d_energy.size()] += std::norm(x);
        if (++d_index < d_sum.size())
            return false;
        d_index = 0;
        return ++d_periods >= d_periods_summed;
    }
    void restart(uint64_t n)
    {
        d_started = true;
        d_origin = n;
        d_next = n;
        d_index = 0;
        d_periods = 0;
        std::fill(d_sum.begin(), d_sum.end(), cd());
        std::fill(d_energy.begin(), d_energy.end(), 0.0);
    }
    void reset() { d_started = false; }

    const std::vector<cd>& sums() const { return d_sum; }
    double energy(size_t phase) const { return d_energy[phase]; }
    size_t period_samples() const { return d_sum.size(); }
    unsigned periods_summed() const { return d_periods_summed; }
    // The latest sample at or before `last` at place t of the period.
    uint64_t latest_at(size_t t, uint64_t last) const
    {
        uint64_t at = d_origin + t;
        while (at + d_sum.size() <= last)
            at += d_sum.size();
        return at;
    }

private:
    std::vector<cd> d_sum;        // the products added up modulo the period
    std::vector<double> d_energy; // their energy per phase
    unsigned d_periods_summed;
    bool d_started = false;
    uint64_t d_origin = 0, d_next = 0;
    size_t d_index = 0;     // the next product's place in the period
    unsigned d_periods = 0; // periods added up since the window began
};

} // namespace phy
} // namespace hfstack
} // namespace gr

#endif
