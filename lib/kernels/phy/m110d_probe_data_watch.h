/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#ifndef INCLUDED_HFSTACK_PHY_M110D_PROBE_DATA_WATCH_H
#define INCLUDED_HFSTACK_PHY_M110D_PROBE_DATA_WATCH_H

#include "folded_products.h"

#include <complex>
#include <cstdint>
#include <optional>
#include <vector>

namespace gr {
namespace hfstack {
namespace phy {

// A burst with mini-probes (WN1-WN13) found from its data when its preamble of one
// super-frame was lost whole in a fade. Every frame ends with the same mini-probe, so
// the products x[n + 1 symbol] conj(x[n]) over a probe are the probe's own symbol
// to symbol turns, times the channel's power and the carrier's turn per symbol,
// whatever the channel's phase: folded modulo the frame and correlated with those
// turns, they stand out at the frames' timing. |correlation|^2 over the products'
// energy is exponential with mean 1 in noise at each of the frame's timings (samples).
class m110d_probe_data_watch
{
public:
    using cf = std::complex<float>;
    using cd = std::complex<double>;

    struct detection {
        double z = 0;
        // A sample a mini-probe starts at, the latest at or before the sample that
        // completed the window.
        uint64_t probe_start = 0;
        // The carrier offset the products turn by: coarse (a degree of a symbol's turn
        // is 6.7 Hz at 2400 Bd, about 10 Hz at 0 dB over 32 WN1 frames), and a side lobe
        // a symbol or a Frank row off the probes' timing reads 80 or 480 Hz off.
        double hz = 0;
    };

    // One frame structure (data_symbols then probe_symbols a frame), frames_summed
    // frames a window; threshold_z as the WN0 watch's (z^2 = |correlation|^2 / energy -
    // ln of the timings). Throws std::invalid_argument for a probe length D-XXI lacks
    // or a window of no frames.
    m110d_probe_data_watch(unsigned data_symbols,
                           unsigned probe_symbols,
                           unsigned samples_per_symbol,
                           double symbol_rate,
                           unsigned frames_summed,
                           double threshold_z);

    // The product x[n + samples_per_symbol] conj(x[n]) of sample n; samples are taken
    // in order (any other n restarts the watch there). A detection where the window
    // just completed correlates at threshold_z or more.
    std::optional<detection> add(uint64_t n, cf product)
    {
        if (!d_folded.add(n, cd(product)))
            return std::nullopt;
        const std::optional<detection> found = evaluate(n);
        d_folded.restart(n + 1);
        return found;
    }
    void reset() { d_folded.reset(); }

    unsigned data_symbols() const { return d_data_symbols; }
    unsigned probe_symbols() const { return d_probe_symbols; }
    unsigned frames_summed() const { return d_folded.periods_summed(); }
    // Samples a frame.
    size_t frame_samples() const { return d_folded.period_samples(); }

private:
    std::optional<detection> evaluate(uint64_t last) const;

    unsigned d_data_symbols, d_probe_symbols, d_sps;
    double d_symbol_rate;
    double d_threshold_z;
    folded_products d_folded;
    std::vector<cd> d_turns; // the probe's turns, conjugated
};

} // namespace phy
} // namespace hfstack
} // namespace gr

#endif
