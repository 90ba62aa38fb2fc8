/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#ifndef INCLUDED_HFSTACK_PHY_M110D_WN0_DATA_WATCH_H
#define INCLUDED_HFSTACK_PHY_M110D_WN0_DATA_WATCH_H

#include "folded_products.h"

#include <complex>
#include <cstdint>
#include <optional>
#include <vector>

namespace gr {
namespace hfstack {
namespace phy {

// WN0's data found without its preamble (App D at 3 kHz, a preamble of one super-frame
// in a deep fade). A WN0 Walsh pattern is four chips repeated eight times, so under the
// Trinomial scrambler s chip c + 4 of a symbol is chip c times s[c + 4] conj(s[c]),
// whatever dibit the symbol carries: the products x[c + 4] conj(x[c]) of the received
// chips correlate with that known sequence (2048 chips, the scrambler's period) at the
// data's scrambler phase, and an offset turns them all alike. The products are added up
// modulo the period (per sample: 4 a chip) over two periods, then correlated with the
// sequence by FFT; |correlation|^2 over the products' energy is exponential with mean 1
// in noise at each of the period's 8192 timings.
class m110d_wn0_data_watch
{
public:
    using cf = std::complex<float>;
    using cd = std::complex<double>;

    static constexpr unsigned samples_per_chip = 4;
    // The chips a product spans (a Walsh pattern's length).
    static constexpr unsigned lag_chips = 4;
    static constexpr unsigned lag_samples = lag_chips * samples_per_chip;

    struct detection {
        double z = 0;
        // A sample a scrambler period starts at (chip 0 of the Trinomial), the latest at
        // or before the sample that completed the window.
        uint64_t period_start = 0;
        double hz = 0; // the carrier offset the products turn by
    };

    // z over noise (z^2 = |correlation|^2 / energy - ln 8192) a detection needs.
    m110d_wn0_data_watch(double chip_rate, double threshold_z);

    // The product x[n + lag_samples] conj(x[n]) of sample n; samples are taken in order
    // (any other n restarts the watch there). A detection where the two periods just
    // completed (every second period) correlate at threshold_z or more.
    std::optional<detection> add(uint64_t n, cf product)
    {
        // Two periods added up, then correlated, then a fresh start.
        if (!d_folded.add(n, cd(product)))
            return std::nullopt;
        const std::optional<detection> found = evaluate(n);
        d_folded.restart(n + 1);
        return found;
    }
    void reset() { d_folded.reset(); }

    // The number of samples in a scrambler period.
    static constexpr unsigned period_samples = 2048 * samples_per_chip;
    static constexpr unsigned periods_summed = 2;

private:
    std::optional<detection> evaluate(uint64_t last);

    double d_chip_rate;
    double d_threshold_z;
    folded_products d_folded;
    std::vector<cd> d_reference_spectrum; // conj(FFT of the known products)
    std::vector<cd> d_twiddle, d_work;
};

} // namespace phy
} // namespace hfstack
} // namespace gr

#endif
