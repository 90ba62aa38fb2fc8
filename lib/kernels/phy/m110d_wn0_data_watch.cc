/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "m110d_wn0_data_watch.h"

#include "m110d_waveform.h"

#include <algorithm>
#include <cmath>
#include <utility>

namespace gr {
namespace hfstack {
namespace phy {

namespace {

using cd = std::complex<double>;

// In-place radix-2 FFT of n = period_samples points with its twiddles given
// (twiddle[k] = e^(-2 pi i k / n), k < n / 2); inverse without the 1/n.
void fft(std::vector<cd>& a, const std::vector<cd>& twiddle, bool inverse)
{
    const size_t n = a.size();
    for (size_t i = 1, j = 0; i < n; ++i) {
        size_t bit = n >> 1;
        for (; j & bit; bit >>= 1)
            j ^= bit;
        j ^= bit;
        if (i < j)
            std::swap(a[i], a[j]);
    }
    for (size_t len = 2; len <= n; len <<= 1) {
        const size_t half = len / 2, stride = n / len;
        for (size_t i = 0; i < n; i += len)
            for (size_t k = 0; k < half; ++k) {
                const cd w =
                    inverse ? std::conj(twiddle[k * stride]) : twiddle[k * stride];
                const cd u = a[i + k], v = a[i + k + half] * w;
                a[i + k] = u + v;
                a[i + k + half] = u - v;
            }
    }
}

// The products a Walsh symbol's chips keep within it: 28 of its 32 (the last four's
// partners lie in the next symbol, under another pattern).
constexpr unsigned walsh_chips = 32;
constexpr double kept_share = double(walsh_chips - 4) / walsh_chips;

} // namespace

m110d_wn0_data_watch::m110d_wn0_data_watch(double chip_rate, double threshold_z)
    : d_chip_rate(chip_rate),
      d_threshold_z(threshold_z),
      d_folded(period_samples, samples_per_chip, periods_summed),
      d_reference_spectrum(period_samples),
      d_twiddle(period_samples / 2),
      d_work(period_samples)
{
    for (size_t k = 0; k < d_twiddle.size(); ++k) {
        const double angle = -2 * M_PI * double(k) / double(period_samples);
        d_twiddle[k] = cd(std::cos(angle), std::sin(angle));
    }
    const auto& trinomial = m110d_trinomial_sequence();
    const auto& points = m110d_constellation(3);
    std::vector<cd> reference(period_samples);
    for (unsigned c = 0; c < m110d_trinomial_period; ++c) {
        if (c % walsh_chips >= walsh_chips - lag_chips)
            continue;
        const cd later(points[trinomial[(c + lag_chips) % m110d_trinomial_period]]);
        const cd first(points[trinomial[c]]);
        reference[size_t(c) * samples_per_chip] = later * std::conj(first);
    }
    fft(reference, d_twiddle, false);
    for (size_t i = 0; i < reference.size(); ++i)
        d_reference_spectrum[i] = std::conj(reference[i]);
}

std::optional<m110d_wn0_data_watch::detection>
m110d_wn0_data_watch::evaluate(uint64_t last)
{
    std::vector<cd>& folded = d_work;
    folded = d_folded.sums();
    fft(folded, d_twiddle, false);
    for (size_t i = 0; i < folded.size(); ++i)
        folded[i] *= d_reference_spectrum[i];
    fft(folded, d_twiddle, true);
    // folded[t] is now period_samples times sum_r D[t + r] conj(Q[r]).
    double best = 0;
    size_t best_at = 0;
    for (size_t t = 0; t < folded.size(); ++t) {
        const double e = d_folded.energy(t % samples_per_chip) * kept_share;
        if (!(e > 0))
            continue;
        const double power =
            std::norm(folded[t]) / (double(period_samples) * double(period_samples) * e);
        if (power > best) {
            best = power;
            best_at = t;
        }
    }
    const double z2 = best - std::log(double(period_samples));
    if (!(z2 >= d_threshold_z * d_threshold_z))
        return std::nullopt;
    detection d;
    d.z = std::sqrt(z2);
    d.period_start = d_folded.latest_at(best_at, last);
    d.hz = std::arg(folded[best_at]) * d_chip_rate / (2 * M_PI * lag_chips);
    return d;
}

} // namespace phy
} // namespace hfstack
} // namespace gr
