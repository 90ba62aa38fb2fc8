/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "serial_tone_channel.h"

#include "cholesky_solver.h"

#include <algorithm>
#include <array>
#include <cmath>

namespace gr {
namespace hfstack {
namespace phy {

namespace {

using cf = std::complex<float>;
using cd = std::complex<double>;

constexpr unsigned sps = 4; // samples per symbol
// Taps from -reach to +reach symbols about the detected timing: the span plus a pulse
// tail, at least 16 (3 kHz's 13 + 3). The search may lock on any path, the others lying
// up to a delay spread either side; a path outside the reach is not fitted and spreads
// over every tap, lifting the floor the paths must clear (5069 at 12 kHz, F.1487 poor,
// paths 19 symbols apart with a reach of 16: no path found, a burst on one tap).
constexpr int least_measure_reach = 16;
constexpr unsigned measure_chunks = 3; // least squares over each, summed in power
// Observations a chunk needs, per tap it measures (fewer chunks on a short run: the
// late start's 103-symbol section holds one).
constexpr double chunk_observations_per_tap = 1.5;
// Diagonal loading of the normal equations, of their mean diagonal: keeps them positive
// definite when the symbols do not determine every tap, at no cost otherwise.
constexpr double normal_loading = 1e-9;
constexpr double path_threshold = 0.05; // tap power, of the strongest, counted as a path
constexpr unsigned tail_symbols = 3;    // pulse tail after the last path
constexpr double two_pi = 6.283185307179586476925286766559;
// Share of the channel's measured turn (Hz) added to the carrier offset every
// timing_check_symbols: a time constant of about 0.4 s.
constexpr double frequency_loop_gain = 0.05;

// Normal equations of a least-squares fit for the taps of both T/2 phases at once: a
// regressor per symbol time, an observation per phase, one matrix for both.
class two_phase_normal_equations
{
public:
    explicit two_phase_normal_equations(size_t n) : d_n(n), d_gram(n * n), d_cross(2 * n)
    {
    }

    // Pulls tap u towards (g0, g1) with `weight` (a prior, as one more observation).
    void add_prior(size_t u, cd g0, cd g1, double weight)
    {
        d_gram[u * d_n + u] += weight;
        d_cross[u] += weight * g0;
        d_cross[d_n + u] += weight * g1;
    }
    void add_observation(unsigned phase, const std::vector<cd>& x, cd r)
    {
        for (size_t i = 0; i < d_n; ++i)
            d_cross[phase * d_n + i] += std::conj(x[i]) * r;
    }
    void add_regressor(const std::vector<cd>& x)
    {
        // conj(x[i]) x[j] written out (as std::complex computes it for finite values,
        // without its NaN checks: n is up to a probe period, 100 and more at 48 kHz).
        for (size_t i = 0; i < d_n; ++i) {
            const double ar = x[i].real(), ai = -x[i].imag();
            cd* row = &d_gram[i * d_n];
            for (size_t j = 0; j < d_n; ++j)
                row[j] += cd(ar * x[j].real() - ai * x[j].imag(),
                             ar * x[j].imag() + ai * x[j].real());
        }
    }
    // The regressors of a run at once, x_t[i] = s[t + reach - i] for t in [from, to):
    // shifted by one, a sum loses its first term and gains one, so each diagonal follows
    // from the first row in O(1) a term, not O(run) (a reach of 88 at 48 kHz: 31,000
    // products a symbol added one by one, most of a false detection's cost).
    void add_shifted_run(const std::vector<cf>& s, size_t from, size_t to, size_t reach)
    {
        for (size_t j = 0; j < d_n; ++j) {
            cd sum;
            for (size_t t = from; t < to; ++t)
                sum += std::conj(cd(s[t + reach])) * cd(s[t + reach - j]);
            d_gram[j] += sum;
        }
        // G[i + 1][j + 1] = G[i][j] + x_{from - 1} term - x_{to - 1} term.
        for (size_t i = 0; i + 1 < d_n; ++i)
            for (size_t j = i; j + 1 < d_n; ++j) {
                const cd first =
                    std::conj(cd(s[from - 1 + reach - i])) * cd(s[from - 1 + reach - j]);
                const cd last =
                    std::conj(cd(s[to - 1 + reach - i])) * cd(s[to - 1 + reach - j]);
                d_gram[(i + 1) * d_n + j + 1] = d_gram[i * d_n + j] + first - last;
            }
        for (size_t i = 1; i < d_n; ++i)
            for (size_t j = 0; j < i; ++j)
                d_gram[i * d_n + j] = std::conj(d_gram[j * d_n + i]);
    }
    // Adds `share` of the mean diagonal to the diagonal.
    void load_diagonal(double share)
    {
        double trace = 0;
        for (size_t i = 0; i < d_n; ++i)
            trace += d_gram[i * d_n + i].real();
        for (size_t i = 0; i < d_n; ++i)
            d_gram[i * d_n + i] += share * trace / double(d_n);
    }
    // The taps of phase 0 and of phase 1.
    std::array<std::vector<cd>, 2> solve(bool two_threads = false)
    {
        const cholesky_solver solver(std::move(d_gram), d_n, two_threads);
        std::array<std::vector<cd>, 2> g{ std::vector<cd>(d_n), std::vector<cd>(d_n) };
        for (unsigned p = 0; p < 2; ++p)
            solver.solve(&d_cross[p * d_n], g[p].data());
        return g;
    }

private:
    size_t d_n;
    std::vector<cd> d_gram, d_cross;
};

// Least squares over symbol times [from, to): r_p[t] = sum_m g_p[m] s[t - m], normal
// equations (X^H X) g_p = X^H r_p, one matrix for both T/2 phases; taps[2 (m + reach)
// + p]. False when samples are missing or the solution is not finite. The reach of 16
// (3 kHz) sums its regressors one by one as it always has (the same values to the bit).
bool measure(const serial_tone_samples& input,
             uint64_t symbol0,
             const std::vector<cf>& known,
             int reach,
             size_t from,
             size_t to,
             std::vector<cd>& taps,
             double& noise_power,
             bool two_threads = false)
{
    const size_t n = size_t(2 * reach + 1);
    two_phase_normal_equations equations(n);
    std::vector<cd> x(n);
    std::vector<cd> observed;
    for (size_t t = from; t < to; ++t) {
        for (size_t i = 0; i < n; ++i)
            x[i] = cd(known[t + size_t(reach) - i]); // tap i: delay i - reach
        for (unsigned p = 0; p < 2; ++p) {
            const uint64_t at_sample = symbol0 + t * sps + 2 * p;
            if (at_sample < input.base() || at_sample >= input.total())
                return false;
            const cd rp = cd(input.derotated(at_sample));
            observed.push_back(rp);
            equations.add_observation(p, x, rp);
        }
        if (reach <= least_measure_reach)
            equations.add_regressor(x);
    }
    if (reach > least_measure_reach)
        equations.add_shifted_run(known, from, to, size_t(reach));
    equations.load_diagonal(normal_loading);
    const std::array<std::vector<cd>, 2> g = equations.solve(two_threads);
    taps.assign(2 * n, cd());
    for (unsigned p = 0; p < 2; ++p)
        for (size_t i = 0; i < n; ++i)
            taps[2 * i + p] = g[p][i];
    for (const cd& v : taps)
        if (!std::isfinite(v.real()) || !std::isfinite(v.imag()))
            return false;
    // Residual power per sample.
    double residual = 0;
    size_t o = 0;
    for (size_t t = from; t < to; ++t)
        for (unsigned p = 0; p < 2; ++p) {
            cd predicted;
            for (size_t i = 0; i < n; ++i)
                predicted += taps[2 * i + p] * cd(known[t + size_t(reach) - i]);
            residual += std::norm(observed[o++] - predicted);
        }
    noise_power =
        std::max(1e-6, residual / double(2 * std::max<size_t>(1, to - from - n)));
    return true;
}

} // namespace

serial_tone_channel_start
start_serial_tone_channel(const serial_tone_samples& input,
                          uint64_t symbol0,
                          const std::vector<cf>& known,
                          unsigned max_delay_spread_symbols,
                          channel_tracking_equaliser_config tracking,
                          cd fallback_gain,
                          double fallback_noise)
{
    // Where the paths are sets the timing (first path) and the equaliser's length
    // (delay spread); the first chunk's estimate starts it.
    const int reach =
        std::max(least_measure_reach, int(max_delay_spread_symbols + tail_symbols));
    const size_t taps_wide = 2 * size_t(2 * reach + 1);
    const size_t span =
        known.size() > 2 * size_t(reach) ? known.size() - 2 * size_t(reach) : 0;
    const size_t chunks = std::clamp<size_t>(
        size_t(double(span) / (chunk_observations_per_tap * (2 * reach + 1))),
        1,
        measure_chunks);
    const size_t chunk = span / chunks;
    std::vector<double> profile(size_t(2 * reach + 1), 0.0);
    std::vector<cd> first_taps;
    double first_noise = 0;
    for (size_t from = reach; chunk > 0 && from + chunk + reach <= known.size();
         from += chunk) {
        std::vector<cd> taps;
        double noise_power = 0;
        if (!measure(input,
                     symbol0,
                     known,
                     reach,
                     from,
                     from + chunk,
                     taps,
                     noise_power,
                     tracking.two_threads))
            continue;
        for (size_t m = 0; m < profile.size(); ++m)
            profile[m] += std::norm(taps[2 * m]) + std::norm(taps[2 * m + 1]);
        if (first_taps.empty()) {
            first_taps = taps;
            first_noise = noise_power;
        }
    }
    int first_path = 0, last_path = 0;
    if (!first_taps.empty()) {
        const double threshold = path_power_threshold(profile, path_threshold);
        first_path = reach;
        last_path = -reach;
        for (int m = -reach; m <= reach; ++m)
            if (profile[size_t(m + reach)] >= threshold) {
                first_path = std::min(first_path, m);
                last_path = std::max(last_path, m);
            }
    } else {
        // Degenerate (cannot happen with a decodable preamble): one path at symbol0.
        first_taps.assign(taps_wide, cd());
        first_taps[2 * size_t(reach)] = fallback_gain;
        first_noise = fallback_noise;
    }
    // A path faded out over the measurement may lie on either side of those seen: the
    // equaliser reaches max_delay_spread_symbols before the first and past the last.
    const int reference = first_path;
    tracking.precursor_symbols = max_delay_spread_symbols + tail_symbols;
    tracking.postcursor_symbols =
        unsigned(std::min(last_path - first_path, int(max_delay_spread_symbols))) +
        max_delay_spread_symbols + tail_symbols;
    if (last_path < first_path) {
        // No tap over the threshold (noise: a false detection). The lines above then
        // wrap (unsigned) to a one-symbol equaliser at the detected timing for the 3 kHz
        // receivers' span of 13 (precursor 16 = reach, the postcursor taking the span
        // back to 1); a longer span wrapped to 2 (span + 3) - 31 symbols, every tap
        // tracked from zero (145 at 48 kHz, the App D receiver's default 85: about a
        // tenth of a second of CPU for each false detection in noise, which at 48 kHz
        // cross the search's threshold about once a second). The one-symbol equaliser
        // at every span, as 13 gave it.
        tracking.precursor_symbols = unsigned(reach);
        tracking.postcursor_symbols =
            0u - unsigned(reach); // with the precursor: 1 (mod 2^32)
    }
    serial_tone_channel_start out;
    out.equaliser.reset(new channel_tracking_equaliser(tracking));
    out.timing_shift = int64_t(reference) * sps;
    channel_tracking_equaliser& equaliser = *out.equaliser;
    std::vector<cd> taps(equaliser.window_samples());
    for (size_t i = 0; i < equaliser.channel_symbols(); ++i) {
        const int m =
            int(i) - int(tracking.precursor_symbols) + reference; // delay from symbol0
        // The taps of the paths found and their pulse tails: the rest of the measurement
        // is noise, which in a fade passes 3 % of the strongest tap and would be tracked
        // (F.1487 poor, 3200L at 13 dB: two first blocks in six channel seeds lost).
        const bool near_path =
            m >= first_path - int(tail_symbols) && m <= last_path + int(tail_symbols);
        if (m >= -reach && m <= reach && near_path) {
            taps[2 * i] = first_taps[2 * size_t(m + reach)];
            taps[2 * i + 1] = first_taps[2 * size_t(m + reach) + 1];
        }
    }
    // Training starts once a whole channel's worth of known symbols lies behind.
    std::vector<cd> past(equaliser.channel_symbols(), cd());
    for (size_t k = 0; k < past.size() && k < known.size(); ++k)
        past[k] = cd(known[k]);
    equaliser.start(taps, first_noise, past);
    return out;
}

void check_tracking_settings(double forgetting,
                             double decision_weight,
                             unsigned solve_interval)
{
    channel_tracking_equaliser_config check;
    check.forgetting = forgetting;
    check.decision_weight = decision_weight;
    check.solve_interval = solve_interval;
    channel_tracking_equaliser{ check };
}

bool serial_tone_window(const serial_tone_samples& input,
                        uint64_t start,
                        uint64_t k,
                        const channel_tracking_equaliser& equaliser,
                        int64_t timing_shift,
                        std::vector<cd>& window,
                        serial_tone_presence& presence)
{
    const int64_t first = int64_t(start) +
                          (int64_t(k) - int64_t(equaliser.precursor_symbols())) * sps +
                          timing_shift;
    const int64_t last = first + int64_t(window.size() / 2 - 1) * sps + 2;
    if (last >= int64_t(input.total()))
        return false;
    double power = 0;
    // T/2 sample q is sample first + 2 q (sps 4): read from the derotated run at once
    // where it is all held (the same values as one by one).
    const serial_tone_samples::cf* run =
        first >= int64_t(input.base()) && !window.empty()
            ? input.derotated_run(uint64_t(first), uint64_t(last))
            : nullptr;
    if (run) {
        for (size_t q = 0; q < window.size(); ++q) {
            window[q] = cd(run[2 * q]);
            power += std::norm(window[q]);
        }
    } else {
        for (size_t q = 0; q < window.size(); ++q) {
            const int64_t i = first + int64_t(q / 2) * sps + 2 * int64_t(q % 2);
            window[q] =
                i >= int64_t(input.base()) ? cd(input.derotated(uint64_t(i))) : cd();
            power += std::norm(window[q]);
        }
    }
    presence.add_window_power(power / double(window.size()));
    return true;
}

bool measure_known_run(const serial_tone_samples& input,
                       uint64_t start,
                       int64_t timing_shift,
                       const channel_tracking_equaliser& equaliser,
                       const std::vector<size_t>& tracked,
                       uint64_t first,
                       const std::vector<cd>& known,
                       double ridge,
                       std::vector<cd>& taps)
{
    const size_t n = tracked.size();
    if (n == 0 || known.empty() || taps.size() != equaliser.window_samples())
        return false;
    // The sample at symbol time t (phase p) sees symbol t + precursor - i through tap i.
    const int64_t precursor = equaliser.precursor_symbols();
    const int64_t lo = int64_t(tracked.front()), hi = int64_t(tracked.back());
    const int64_t t_first = int64_t(first) - precursor + hi;
    const int64_t t_last = int64_t(first) + int64_t(known.size()) - 1 - precursor + lo;
    const int64_t sample_first = int64_t(start) + t_first * sps + timing_shift;
    const int64_t sample_last = int64_t(start) + t_last * sps + timing_shift + 2;
    if (sample_first < int64_t(input.base()) || sample_last >= int64_t(input.total()))
        return false;
    two_phase_normal_equations equations(n);
    for (size_t u = 0; u < n; ++u)
        equations.add_prior(u, taps[2 * tracked[u]], taps[2 * tracked[u] + 1], ridge);
    std::vector<cd> x(n);
    for (int64_t t = t_first; t <= t_last; ++t) {
        for (size_t u = 0; u < n; ++u)
            x[u] = known[size_t(t + precursor - int64_t(tracked[u]) - int64_t(first))];
        for (unsigned p = 0; p < 2; ++p)
            equations.add_observation(
                p,
                x,
                cd(input.derotated(
                    uint64_t(int64_t(start) + t * sps + timing_shift + 2 * p))));
        equations.add_regressor(x);
    }
    const std::array<std::vector<cd>, 2> g = equations.solve();
    std::fill(taps.begin(), taps.end(), cd());
    for (unsigned p = 0; p < 2; ++p)
        for (size_t u = 0; u < n; ++u)
            taps[2 * tracked[u] + p] = g[p][u];
    return true;
}

std::optional<double> known_run_prediction_score(const serial_tone_samples& input,
                                                 uint64_t start,
                                                 int64_t timing_shift,
                                                 size_t precursor_symbols,
                                                 const std::vector<cd>& taps,
                                                 size_t from_q,
                                                 size_t end_q,
                                                 uint64_t first,
                                                 const std::vector<cd>& known)
{
    if (end_q <= from_q || end_q > taps.size() || known.empty())
        return std::nullopt;
    const int64_t precursor = int64_t(precursor_symbols);
    const int64_t lo = int64_t(from_q / 2), hi = int64_t((end_q - 1) / 2);
    const int64_t t_first = int64_t(first) - precursor + hi;
    const int64_t t_last = int64_t(first) + int64_t(known.size()) - 1 - precursor + lo;
    if (t_last < t_first)
        return std::nullopt;
    const int64_t sample_first = int64_t(start) + t_first * sps + timing_shift;
    const int64_t sample_last = int64_t(start) + t_last * sps + timing_shift + 2;
    if (sample_first < int64_t(input.base()) || sample_last >= int64_t(input.total()))
        return std::nullopt;
    cd cross;
    double received = 0, predicted = 0;
    for (int64_t t = t_first; t <= t_last; ++t)
        for (unsigned p = 0; p < 2; ++p) {
            cd prediction;
            for (int64_t i = lo; i <= hi; ++i)
                prediction += taps[size_t(2 * i + p)] *
                              known[size_t(t + precursor - i - int64_t(first))];
            const cd y(input.derotated(
                uint64_t(int64_t(start) + t * sps + timing_shift + 2 * int64_t(p))));
            cross += y * std::conj(prediction);
            received += std::norm(y);
            predicted += std::norm(prediction);
        }
    if (!(received > 0 && predicted > 0))
        return 0.0;
    return std::norm(cross) / (received * predicted) * double(2 * (t_last - t_first + 1));
}

std::vector<cf> symbols_at_offset(const serial_tone_samples& input,
                                  uint64_t start,
                                  unsigned length,
                                  double hz,
                                  double symbol_rate)
{
    const double sample_rate = sps * symbol_rate;
    std::vector<cf> y(length);
    for (unsigned k = 0; k < length; ++k) {
        const double cycles = std::fmod(hz * double(k * sps) / sample_rate, 1.0);
        y[k] = input.at(start + uint64_t(k) * sps) *
               std::polar(1.0f, float(-two_pi * cycles));
    }
    return y;
}

void add_turns(const std::vector<cf>& y,
               const std::vector<cf>& known,
               size_t from,
               size_t to,
               unsigned chunk,
               cd& turn)
{
    cd previous;
    for (size_t c = from; c + chunk <= to; c += chunk) {
        cd sum;
        for (size_t k = c; k < c + chunk; ++k)
            sum += cd(y[k] * std::conj(known[k]));
        if (c > from)
            turn += sum * std::conj(previous);
        previous = sum;
    }
}

double slope_hz(const cd& turn, unsigned chunk, double symbol_rate)
{
    return std::arg(turn) / two_pi * symbol_rate / chunk;
}

namespace {

// follow_serial_tone_channel, first or second order.
int follow_channel(serial_tone_samples& input,
                   channel_tracking_equaliser& equaliser,
                   uint64_t next_sample,
                   int64_t& timing_shift,
                   double& drift_hz,
                   bool second_order,
                   double symbol_rate)
{
    const double turn_hz = equaliser.take_turn() * symbol_rate / two_pi;
    // The gains are per check at 2400 Bd. At a higher symbol rate the checks come more
    // often (every 48 symbols) while a correction still takes effect only after the
    // samples derotated ahead (App D: up to two frames, as many more symbols as the rate
    // is higher): the gains are scaled down so the loop has the same time constant in
    // seconds at every rate (at 48 kHz, 16 times the checks at 1/16 the gain; unscaled
    // the loop rang and diverged within a second of WN12/48kHz/US).
    const double per_check = 2400.0 / symbol_rate;
    if (second_order)
        drift_hz =
            std::clamp(drift_hz + frequency_rate_gain * per_check * per_check * turn_hz,
                       -max_drift_hz * per_check,
                       max_drift_hz * per_check);
    // The new offset takes over after the samples derotated so far (windows still read
    // them).
    const uint64_t from = std::max(next_sample, input.derotated_end());
    const double gain =
        (second_order ? second_order_loop_gain : frequency_loop_gain) * per_check;
    input.change_offset(from, input.offset_hz() + gain * turn_hz + drift_hz);
    const int drift = equaliser.timing_drift();
    if (drift != 0) {
        timing_shift += 2 * drift;
        equaliser.slip(drift);
    }
    return drift;
}

} // namespace

int follow_serial_tone_channel(serial_tone_samples& input,
                               channel_tracking_equaliser& equaliser,
                               uint64_t next_sample,
                               int64_t& timing_shift,
                               double symbol_rate)
{
    double no_drift = 0;
    return follow_channel(
        input, equaliser, next_sample, timing_shift, no_drift, false, symbol_rate);
}

int follow_serial_tone_channel(serial_tone_samples& input,
                               channel_tracking_equaliser& equaliser,
                               uint64_t next_sample,
                               int64_t& timing_shift,
                               double& drift_hz,
                               double symbol_rate)
{
    return follow_channel(
        input, equaliser, next_sample, timing_shift, drift_hz, true, symbol_rate);
}

} // namespace phy
} // namespace hfstack
} // namespace gr
