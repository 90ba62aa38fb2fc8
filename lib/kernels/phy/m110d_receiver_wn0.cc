/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

// WN0: its Walsh symbols read chip by chip or whole, and the block read again on the
// channel its decoded symbols measure (the App D receiver's state:
// m110d_receiver_state.h).

#include "m110d_receiver_state.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <iterator>
#include <limits>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>

namespace gr {
namespace hfstack {
namespace phy {

using namespace m110d_rx;

namespace {

// WN0's decoder-aided pass: Walsh symbols either side whose decoded chips measure the
// channel a symbol is read again on.
constexpr size_t wn0_pass_reach = 3;

// WN0: log-likelihoods (up to a common term) of the four dibits a Walsh symbol may
// carry, from its 32 chips' equaliser windows at the T/2 positions `positions` (`count`
// of them, ascending; chip j's sample at positions[k] is windows[j * count + k]),
// `chips[j]` the Trinomial points under its chips, `taps` the tracked channel (as the
// equaliser's taps(), zero where no path is tracked), `noise` per T/2 sample and
// `tap_error` the variance of each tap's error (per position).
// Despread on every tracked T/2 position q: y_q(d) = sum_j conj(c_d[j]) w_j[q], c_d the
// dibit's chips, about 32 g_q + noise of variance 32 N0 under the dibit sent and noise
// alone under the others (the patterns are orthogonal). With the channel known to within
// tap_error (g_q ~ CN(g^_q, e)), the log-likelihood ratio of d against the others is, per
// position, |y|^2 (1 / (32 N0) - 1 / v) + 2 Re(conj(32 g^_q) y) / v, v = 32^2 e + 32 N0:
// coherent where the estimate is good, energy-combining (the 110A 75 bps receiver's
// metric) where it is not.
std::array<double, 4> wn0_symbol_metrics(const cd* windows,
                                         const size_t* positions,
                                         size_t count,
                                         const cf* chips,
                                         const std::vector<cd>& taps,
                                         double noise,
                                         const std::vector<double>& tap_error)
{
    constexpr double n = m110d_walsh_data_chips;
    const double despread_noise = n * std::max(noise, 1e-12);
    std::array<double, 4> metric{};
    for (size_t k = 0; k < count; ++k) {
        const size_t q = positions[k];
        if (q >= taps.size() || taps[q] == cd())
            continue;
        // The Walsh patterns repeat every 4 chips: despread per chip position mod 4.
        cd by_position[4];
        for (unsigned j = 0; j < m110d_walsh_data_chips; ++j)
            by_position[j % 4] += std::conj(cd(chips[j])) * windows[j * count + k];
        const double v = n * n * tap_error[q] + despread_noise;
        const double energy_weight = 1.0 / despread_noise - 1.0 / v;
        const cd coherent = std::conj(n * taps[q]) * (2.0 / v);
        for (unsigned d = 0; d < 4; ++d) {
            cd y;
            for (unsigned r = 0; r < 4; ++r)
                y += m110d_walsh_chip(d, r) ? -by_position[r] : by_position[r];
            metric[d] += energy_weight * std::norm(y) + (coherent * y).real();
        }
    }
    return metric;
}

} // namespace

void m110d_receiver::state::wn0_symbol_read(const float* llr, const cf* y, size_t first)
{
    block_llr.insert(block_llr.end(), llr, llr + 2);
    // How decisively the symbol read: the chosen pattern's correlation.
    const auto& trinomial = m110d_trinomial_sequence();
    const unsigned dibit = unsigned(llr[0] < 0) << 1 | unsigned(llr[1] < 0);
    cd c;
    double energy = 0;
    for (unsigned j = 0; j < m110d_walsh_data_chips; ++j) {
        const unsigned chip = m110d_wn0_walsh_chip(dibit, j) +
                              trinomial[(first + j) % m110d_trinomial_period];
        c += cd(y[j]) * std::conj(cd(psk8(chip)));
        energy += std::norm(y[j]);
    }
    walsh_match +=
        energy > 0 ? c.real() / std::sqrt(m110d_walsh_data_chips * energy) : 0.0;
}

bool m110d_receiver::state::wn0_chip_decided(cd z, const m110d_symbol_role& role)
{
    // Chip `position` of Walsh symbol `frame`: its Trinomial point or the opposite.
    const size_t in_block = size_t(role.frame % mode->frames_per_block);
    const auto& trinomial = m110d_trinomial_sequence();
    const size_t first = in_block * m110d_walsh_data_chips;
    const cd base(psk8(trinomial[(first + role.position) % m110d_trinomial_period]));
    commit(z, antipodal_decision(z, base), false);
    if (symbol_tap) {
        symbol_tap->push_back(cf(z * std::conj(base)));
        ++tapped;
        ++held_symbols;
    }
    wn0_chips.push_back(cf(z));
    if (wn0_chips.size() < m110d_walsh_data_chips)
        return false;
    float llr[2];
    m110d_wn0_demap(
        wn0_chips.data(), in_block, std::max(1e-3, equaliser->estimate_variance()), llr);
    wn0_symbol_read(llr, wn0_chips.data(), first);
    wn0_chips.clear();
    return in_block + 1 == mode->frames_per_block;
}

bool m110d_receiver::state::wn0_chip(const m110d_symbol_role& role)
{
    // The chips wait for their Walsh symbol's decision before the channel learns them:
    // decided one by one at WN0's rows (-6 dB per chip) a quarter of them were wrong,
    // and the tracker followed those.
    walsh_windows.insert(walsh_windows.end(), window.begin(), window.end());
    const size_t width = window.size();
    if (walsh_windows.size() < m110d_walsh_data_chips * width)
        return false;
    const size_t in_block = size_t(role.frame % mode->frames_per_block);
    const auto& trinomial = m110d_trinomial_sequence();
    const size_t first = in_block * m110d_walsh_data_chips;
    cf base[m110d_walsh_data_chips];
    for (unsigned j = 0; j < m110d_walsh_data_chips; ++j)
        base[j] = psk8(trinomial[(first + j) % m110d_trinomial_period]);
    // The channel as tracked up to the symbol before; its taps' error variance about
    // the RLS's (1 - forgetting) of the noise, and a share of their own power for the
    // fading since (and a path the tracker lags).
    const std::vector<cd>& taps = equaliser->taps();
    const double noise = equaliser->noise();
    const double error = noise * (1.0 - equaliser->forgetting());
    double tap_energy = 0;
    for (const cd& g : taps)
        tap_energy += std::norm(g);
    const std::vector<double> errors(
        taps.size(), error + cfg.wn0_tap_drift * tap_energy / double(taps.size()));
    // Only the tracked positions count (the others' taps are zero): the symbol's windows
    // there, kept for the decoder-aided pass too (every position's were gigabytes a
    // block at 48 kHz).
    walsh_positions.clear();
    for (size_t q = 0; q < width && q < taps.size(); ++q)
        if (taps[q] != cd())
            walsh_positions.push_back(q);
    const size_t count = walsh_positions.size();
    walsh_tracked.resize(m110d_walsh_data_chips * count);
    for (unsigned j = 0; j < m110d_walsh_data_chips; ++j)
        for (size_t k = 0; k < count; ++k)
            walsh_tracked[j * count + k] = walsh_windows[j * width + walsh_positions[k]];
    const std::array<double, 4> metric = wn0_symbol_metrics(
        walsh_tracked.data(), walsh_positions.data(), count, base, taps, noise, errors);
    float llr[2];
    llr[0] = float(std::max(metric[0], metric[1]) - std::max(metric[2], metric[3]));
    llr[1] = float(std::max(metric[0], metric[2]) - std::max(metric[1], metric[3]));
    // The chips matched to the channel (for the symbol tap and how decisively it read).
    cf y[m110d_walsh_data_chips];
    for (unsigned j = 0; j < m110d_walsh_data_chips; ++j) {
        cd m;
        for (size_t k = 0; k < count; ++k)
            m += std::conj(taps[walsh_positions[k]]) * walsh_tracked[j * count + k];
        y[j] = cf(tap_energy > 0 ? m / tap_energy : cd());
        if (symbol_tap) {
            symbol_tap->push_back(y[j] * std::conj(base[j]));
            ++tapped;
            ++held_symbols;
        }
    }
    wn0_symbol_read(llr, y, first);
    // The chosen pattern's chips are known symbols from now on; decided ones (the
    // decision weight) where another pattern came close.
    const unsigned dibit = unsigned(llr[0] < 0) << 1 | unsigned(llr[1] < 0);
    double runner_up = -std::numeric_limits<double>::infinity();
    for (unsigned d = 0; d < 4; ++d)
        if (d != dibit)
            runner_up = std::max(runner_up, metric[d]);
    const bool sure = metric[dibit] - runner_up >= cfg.wn0_sure_margin;
    for (unsigned j = 0; j < m110d_walsh_data_chips; ++j)
        equaliser->decide(cd(psk8(m110d_wn0_walsh_chip(dibit, j) +
                                  trinomial[(first + j) % m110d_trinomial_period])),
                          sure);
    if (cfg.wn0_decoder_pass) {
        wn0_block_first.push_back(wn0_block_positions.size());
        wn0_block_positions.insert(
            wn0_block_positions.end(), walsh_positions.begin(), walsh_positions.end());
        wn0_block_windows.insert(
            wn0_block_windows.end(), walsh_tracked.begin(), walsh_tracked.end());
        wn0_block_shift.push_back(timing_shift);
    }
    walsh_windows.clear();
    return in_block + 1 == mode->frames_per_block;
}

void m110d_receiver::state::wn0_decoder_pass()
{
    const size_t width = window.size();
    const size_t symbols = wn0_block_shift.size();
    if (symbols * 2 == block_llr.size() && wn0_block_first.size() == symbols &&
        wn0_block_windows.size() == m110d_walsh_data_chips * wn0_block_positions.size())
        wn0_read_block_again(width);
    wn0_block_windows.clear();
    wn0_block_positions.clear();
    wn0_block_first.clear();
    wn0_block_shift.clear();
}

void m110d_receiver::state::wn0_read_block_again(size_t width)
{
    const size_t symbols = wn0_block_shift.size();
    // Symbol s's tracked positions are wn0_block_positions[first(s) .. first(s + 1)),
    // its chip j's windows there wn0_block_windows[32 first(s) + j count(s) + k].
    const auto first = [&](size_t s) { return wn0_block_first[s]; };
    const auto count = [&](size_t s) {
        return (s + 1 < symbols ? wn0_block_first[s + 1] : wn0_block_positions.size()) -
               wn0_block_first[s];
    };
    // The block decoded as it stands, coded again: each Walsh symbol's pattern.
    const std::vector<uint8_t> channel = block_coded_again();
    const auto& trinomial = m110d_trinomial_sequence();
    const auto chip_point = [&](size_t s, unsigned j, unsigned dibit) {
        return cd(
            psk8(m110d_wn0_walsh_chip(dibit, j) +
                 trinomial[(s * m110d_walsh_data_chips + j) % m110d_trinomial_period]));
    };
    // Per symbol and tracked T/2 position, the decoded chips' despread sum (32 g_q and
    // noise).
    std::vector<cd> despread(wn0_block_positions.size());
    for (size_t s = 0; s < symbols; ++s) {
        const unsigned dibit = unsigned(channel[2 * s]) << 1 | channel[2 * s + 1];
        const size_t n = count(s);
        cd* sum = &despread[first(s)];
        const cd* w = &wn0_block_windows[m110d_walsh_data_chips * first(s)];
        for (unsigned j = 0; j < m110d_walsh_data_chips; ++j) {
            const cd c = std::conj(chip_point(s, j, dibit));
            for (size_t k = 0; k < n; ++k)
                sum[k] += c * w[j * n + k];
        }
    }
    // Each symbol read again on the channel measured over the symbols either side of it
    // on the same sample grid (not itself: its own pattern would be favoured), up to
    // wn0_pass_reach each way, on the positions the tracker follows now (the paths and
    // their pulse tails: the others' measurements are noise, which the coherent sum
    // would add up) where those symbols' windows were kept.
    const double noise = std::max(equaliser->noise(), 1e-12);
    const std::vector<cd>& tracked = equaliser->taps();
    std::vector<cd> taps(width);
    std::vector<unsigned> measured(width);
    std::vector<double> errors(width);
    cf base[m110d_walsh_data_chips];
    for (size_t s = 0; s < symbols; ++s) {
        std::fill(taps.begin(), taps.end(), cd());
        std::fill(measured.begin(), measured.end(), 0u);
        unsigned used = 0;
        for (size_t t = s >= wn0_pass_reach ? s - wn0_pass_reach : 0;
             t <= s + wn0_pass_reach && t < symbols;
             ++t) {
            if (t == s || wn0_block_shift[t] != wn0_block_shift[s])
                continue;
            const size_t* at = &wn0_block_positions[first(t)];
            for (size_t k = 0; k < count(t); ++k) {
                taps[at[k]] += despread[first(t) + k];
                ++measured[at[k]];
            }
            ++used;
        }
        if (used == 0)
            continue;
        const size_t* at = &wn0_block_positions[first(s)];
        for (size_t k = 0; k < count(s); ++k) {
            const size_t q = at[k];
            const double chips = double(measured[q]) * m110d_walsh_data_chips;
            const bool follows = q < tracked.size() && tracked[q] != cd() && chips > 0;
            taps[q] = follows ? taps[q] / chips : cd();
            errors[q] =
                follows ? noise / chips + cfg.wn0_tap_drift * std::norm(taps[q]) : 0.0;
        }
        for (unsigned j = 0; j < m110d_walsh_data_chips; ++j)
            base[j] = cf(chip_point(s, j, 0)); // dibit 0's pattern adds nothing
        // Only s's own positions are read (taps elsewhere are not looked at).
        const std::array<double, 4> metric =
            wn0_symbol_metrics(&wn0_block_windows[m110d_walsh_data_chips * first(s)],
                               at,
                               count(s),
                               base,
                               taps,
                               noise,
                               errors);
        block_llr[2 * s] =
            float(std::max(metric[0], metric[1]) - std::max(metric[2], metric[3]));
        block_llr[2 * s + 1] =
            float(std::max(metric[0], metric[2]) - std::max(metric[1], metric[3]));
    }
}

} // namespace phy
} // namespace hfstack
} // namespace gr
