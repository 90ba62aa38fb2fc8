/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "channel_tracking_equaliser.h"

#include "cholesky_solver.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace gr {
namespace hfstack {
namespace phy {

namespace {

constexpr double noise_smoothing = 1.0 / 64;    // per known symbol
constexpr double profile_time_symbols = 4800.0; // energy profile memory (2 s at 2400 Bd)
// A slip when the profile matches the one at the start better shifted by a position
// than in place, by this factor (hysteresis: a path halfway between positions).
constexpr double drift_preference = 1.2;
constexpr double min_bias = 1e-6;
// Symbol taps whose long-term energy is at least this share of the strongest's are
// paths (tracked with tracked_margin taps either side); weaker taps are mostly noise
// in any estimate.
constexpr double significant_tap = 0.03;
constexpr double path_over_floor = 6.0; // a path's power over the median tap's
// A tap of a measurement on known symbols this share of its strongest is a path.
constexpr double measured_path = 0.1;
constexpr double wide_step = 0.005; // LMS step of the whole-span estimate
// Symbol taps of the 3 kHz receivers' longest span: 16 + 29 + 1 (13 symbols of delay
// spread; precursor 16, postcursor up to 29), and the backward frames' one more.
constexpr size_t longest_3khz_span = 47;
constexpr unsigned select_interval = 240;  // symbols between choices of tracked taps
constexpr unsigned feedforward_margin = 2; // symbols either side of the tracked taps
// Symbol taps tracked either side of the significant ones: the pulse tails of paths
// between symbol times (at -15 dB they still limit the SINR at high SNR).
constexpr size_t tracked_margin = 2;

// Sum over q of profile[q + shift] reference[q].
double overlap(const std::vector<double>& profile,
               const std::vector<double>& reference,
               int shift)
{
    double sum = 0;
    for (size_t q = 0; q < reference.size(); ++q) {
        const long from = long(q) + shift;
        if (from >= 0 && from < long(profile.size()))
            sum += profile[size_t(from)] * reference[q];
    }
    return sum;
}

} // namespace

double path_power_threshold(std::vector<double> power, double share)
{
    if (power.empty())
        return 0;
    const double strongest = *std::max_element(power.begin(), power.end());
    std::nth_element(power.begin(), power.begin() + long(power.size() / 2), power.end());
    return std::max(share * strongest, path_over_floor * power[power.size() / 2]);
}

channel_tracking_equaliser::channel_tracking_equaliser(
    const channel_tracking_equaliser_config& config)
    : d_cfg(config), d_span(config.precursor_symbols + config.postcursor_symbols + 1)
{
    if (!(config.forgetting > 0 && config.forgetting <= 1))
        throw std::invalid_argument(
            "channel_tracking_equaliser: forgetting must be in (0, 1]");
    if (!(config.decision_weight > 0 && config.decision_weight <= 1))
        throw std::invalid_argument(
            "channel_tracking_equaliser: decision_weight must be in (0, 1]");
    if (config.solve_interval == 0)
        throw std::invalid_argument(
            "channel_tracking_equaliser: solve_interval must be at least 1");
    if (!(config.symbol_power > 0))
        throw std::invalid_argument(
            "channel_tracking_equaliser: symbol_power must be positive");
    if (config.time_scale == 0)
        throw std::invalid_argument(
            "channel_tracking_equaliser: time_scale must be at least 1");
    start(std::vector<cd>(window_samples()), 1.0, {});
}

void channel_tracking_equaliser::start(const std::vector<cd>& taps,
                                       double noise,
                                       const std::vector<cd>& past_symbols)
{
    if (taps.size() != window_samples())
        throw std::invalid_argument(
            "channel_tracking_equaliser: start needs 2 * channel_symbols() taps");
    d_taps = taps;
    d_wide = taps;
    d_base.clear();
    d_noise = std::max(noise, 1e-9);
    d_history.assign(d_span, cd());
    const size_t n = std::min(past_symbols.size(), size_t(d_span));
    std::copy(
        past_symbols.end() - long(n), past_symbols.end(), d_history.end() - long(n));
    d_pending.clear();
    d_energy_profile.assign(window_samples(), 0.0);
    for (size_t q = 0; q < d_taps.size(); ++q)
        d_energy_profile[q] = std::norm(d_taps[q]);
    d_reference_profile = d_energy_profile;
    select_taps();
    d_solved = false;
    d_since_solve = 0;
    d_turn = 0;
    d_turn_symbols = 0;
    d_since_wide = 0;
}

void channel_tracking_equaliser::select_taps()
{
    std::vector<double> power(d_span), now(d_span);
    for (size_t i = 0; i < d_span; ++i) {
        power[i] = d_energy_profile[2 * i] + d_energy_profile[2 * i + 1];
        now[i] = std::norm(d_wide[2 * i]) + std::norm(d_wide[2 * i + 1]);
    }
    const double strongest = *std::max_element(power.begin(), power.end());
    const double now_threshold = path_power_threshold(now, significant_tap);
    // Every tap within tracked_margin of a significant one: the paths with their pulse
    // tails, and not the empty taps between echoes far apart (each tracked tap costs
    // estimation noise). Significant: in the long-term profile, or in the whole-span
    // estimate now, clear of its noise (a path faded out while the burst started is
    // tracked as soon as it shows, not when the 2 s profile has caught up with it).
    std::vector<bool> near(d_span, false);
    for (size_t i = 0; i < d_span; ++i)
        if (power[i] >= significant_tap * strongest || now[i] >= now_threshold ||
            std::find(d_measured_paths.begin(), d_measured_paths.end(), i) !=
                d_measured_paths.end())
            for (size_t j = i > tracked_margin ? i - tracked_margin : 0;
                 j <= std::min<size_t>(d_span - 1, i + tracked_margin);
                 ++j)
                near[j] = true;
    std::vector<size_t> tracked;
    for (size_t i = 0; i < d_span; ++i)
        if (near[i])
            tracked.push_back(i);
    d_since_select = 0;
    d_measured_paths.clear(); // from now on in the profile's hands
    if (tracked == d_tracked && !d_inverse.empty())
        return;
    // Newly tracked taps start from the wide estimate; the others are dropped.
    std::vector<cd> taps(d_taps.size());
    for (size_t i : tracked) {
        const bool known = d_taps[2 * i] != cd() || d_taps[2 * i + 1] != cd();
        for (unsigned p = 0; p < 2; ++p)
            taps[2 * i + p] = known ? d_taps[2 * i + p] : d_wide[2 * i + p];
    }
    d_taps.swap(taps);
    d_tracked = tracked;
    // A start from a good estimate: P near its steady state (1 - lambda) I.
    const size_t n = d_tracked.size();
    d_inverse.assign(n * n, cd());
    for (size_t i = 0; i < n; ++i)
        d_inverse[i * n + i] = std::max(1.0 - d_cfg.forgetting, 1e-4);
    d_gain.assign(n, cd());
    d_regressor.assign(n, cd());
    // Feed-forward over the samples where symbol k's tracked taps arrive (window
    // position = tap index), a margin either side.
    const size_t lo = d_tracked.empty() ? 0 : d_tracked.front();
    const size_t hi = d_tracked.empty() ? d_span - 1 : d_tracked.back();
    // After the last path, two delay spreads more: when a later path is the stronger, a
    // feed-forward ending near it leaves the echo to the feedback, and every decision
    // error fed back makes more (8PSK, echo 6 dB stronger, about 15 dB: 2207 symbols of
    // 2976 wrong, against 8; F.1487 poor, 9600L at 32 dB, one pass: 9.0e-2 against
    // 4.2e-3).
    const size_t spread = hi - lo > 2 * tracked_margin ? hi - lo - 2 * tracked_margin : 0;
    d_window_first = 2 * (lo > feedforward_margin ? lo - feedforward_margin : 0);
    d_window_end = 2 * std::min<size_t>(d_span, hi + feedforward_margin + 2 * spread + 1);
    d_solved = false;
}

void channel_tracking_equaliser::solve(bool feedforward)
{
    const size_t nf = window_samples();
    // How far the channel turned since the last solution (a residual carrier offset
    // turns every path alike).
    if (d_solved && d_since_solve > 0 && d_solved_power > 0) {
        d_turn += std::arg(projection_on_solved());
        d_turn_symbols += d_since_solve;
    }
    // Long-term energy profile (from the whole-span estimate): the timing, and which
    // taps are tracked.
    const double a_profile =
        double(d_cfg.solve_interval) / (profile_time_symbols * d_cfg.time_scale);
    for (size_t q = 0; q < nf; ++q)
        d_energy_profile[q] += a_profile * (std::norm(d_wide[q]) - d_energy_profile[q]);
    if (d_since_select >= select_interval * d_cfg.time_scale)
        select_taps();
    d_solved_taps = d_taps;
    d_solved_power = 0;
    for (const cd& g : d_taps)
        d_solved_power += std::norm(g);
    d_solved = true;
    d_since_solve = 0;
    d_feedforward_solved = feedforward;
    if (!feedforward)
        return;
    // Feed-forward over window samples [first, end); column of symbol k + j there:
    // c_j[a] = taps[a - 2 j] (zero outside).
    const size_t first = d_window_first, n = d_window_end - d_window_first;
    std::vector<size_t> nonzero;
    for (size_t q = 0; q < nf; ++q)
        if (d_taps[q] != cd())
            nonzero.push_back(q);
    const long reach = long(d_span) - 1;
    const long first_unknown = d_cfg.feedback ? 0 : -reach;
    // R = sigma^2 / P I + sum over unknown symbols of c_j c_j^H, from the nonzero taps
    // (P the unknown symbols' power).
    std::vector<cd> r(n * n);
    for (size_t a = 0; a < n; ++a)
        r[a * n + a] = d_noise / d_cfg.symbol_power;
    // Only the symbols j whose columns reach the window (the same terms, in the same
    // order, as over every j of the span: a long span at a wide bandwidth has most of its
    // j outside), the products written out (no NaN checks: the taps are finite).
    long j_from = reach + 1, j_to = first_unknown - 1;
    for (size_t q : nonzero) {
        // 0 <= q + 2 j - first < n
        j_from =
            std::min(j_from, (long(first) - long(q) + 1 + 2 * long(n)) / 2 - long(n));
        j_to = std::max(
            j_to, (long(first) + long(n) - 1 - long(q) + 2 * long(n)) / 2 - long(n));
    }
    j_from = std::max(j_from, first_unknown);
    j_to = std::min(j_to, reach);
    for (long j = j_from; j <= j_to; ++j)
        for (size_t qa : nonzero) {
            const long a = long(qa) + 2 * j - long(first);
            if (a < 0 || a >= long(n))
                continue;
            const double ar = d_taps[qa].real(), ai = d_taps[qa].imag();
            cd* row = &r[size_t(a) * n];
            for (size_t qb : nonzero) {
                const long b = long(qb) + 2 * j - long(first);
                if (b >= 0 && b < long(n)) {
                    // d_taps[qa] * conj(d_taps[qb])
                    const double br = d_taps[qb].real(), bi = -d_taps[qb].imag();
                    row[b] += cd(ar * br - ai * bi, ar * bi + ai * br);
                }
            }
        }
    // R w = c_0.
    d_feedforward.assign(n, cd());
    cholesky_solver(std::move(r), n, d_cfg.two_threads)
        .solve(&d_taps[first], d_feedforward.data());
    double bias = 0;
    for (size_t a = 0; a < n; ++a)
        bias += (std::conj(d_taps[first + a]) * d_feedforward[a]).real();
    d_bias = std::clamp(bias, min_bias, 1.0 - min_bias);
    d_solved_variance = d_cfg.symbol_power * (1.0 - d_bias) / d_bias;
    d_estimate_variance = d_solved_variance;
    // Feedback cancels symbol k - j: b_j = w^H c_{-j}.
    d_feedback.assign(size_t(reach), cd());
    d_feedback_used = 0;
    refresh_feedback();
    d_response = d_bias;
}

channel_tracking_equaliser::cd channel_tracking_equaliser::projection_on_solved() const
{
    cd projection;
    for (size_t q = 0; q < d_taps.size(); ++q)
        projection += std::conj(d_solved_taps[q]) * d_taps[q];
    return projection;
}

channel_tracking_equaliser::cd channel_tracking_equaliser::equalise(const cd* window)
{
    if (!d_solved || !d_feedforward_solved || d_since_solve >= d_cfg.solve_interval)
        solve();
    ++d_since_solve;
    queue_observation(window);
    // Between solutions the feed-forward stays as solved. The channel mostly changes by a
    // common complex gain (all of it for a single path): the solution is scaled by the
    // tracked channel's projection on the one it was solved for. Or (follow_channel)
    // the feedback and the gain follow the tracked channel through the feed-forward:
    // what it passes of each past symbol and of this one (two paths fading apart leave
    // ISI a common gain cannot follow; at low SNR the projection's average is the
    // steadier).
    cd gain = 1.0;
    if (d_cfg.follow_channel) {
        if (d_since_solve > 1)
            refresh_feedback();
        gain = d_response / d_bias;
    } else if (d_solved_power > 0) {
        gain = projection_on_solved() / d_solved_power;
    }
    if (std::norm(gain) < min_bias)
        gain = std::sqrt(min_bias);
    d_estimate_variance = d_solved_variance / std::norm(gain);
    cd z;
    for (size_t a = 0; a < d_feedforward.size(); ++a)
        z += std::conj(d_feedforward[a]) * window[d_window_first + a];
    if (d_cfg.feedback) {
        // Only the symbols whose feedback can be nonzero (those whose taps reach the
        // feed-forward window: a long span at a wide bandwidth has most outside), the
        // products written out (the same sums: the terms left out are zero).
        cd past;
        for (size_t j = 1; j <= d_feedback_used; ++j) {
            const cd& b = d_feedback[j - 1];
            const cd& s = d_history[d_span - j];
            past += cd(b.real() * s.real() - b.imag() * s.imag(),
                       b.real() * s.imag() + b.imag() * s.real());
        }
        z -= d_cfg.follow_channel ? past : gain * past;
    }
    return z / (gain * d_bias);
}

void channel_tracking_equaliser::refresh_feedback()
{
    // b_j = w^H c_{-j}: window sample a sees tap a + 2 j of past symbol k - j.
    const size_t first = d_window_first, end = d_window_end;
    // d_feedback is zero from d_feedback_used on (cleared only up to there).
    std::fill(d_feedback.begin(), d_feedback.begin() + long(d_feedback_used), cd());
    size_t used = 0;
    d_response = 0;
    // conj(f) g written out (as std::complex computes it for finite values, without its
    // NaN checks).
    const auto conj_times = [](const cd& f, const cd& g) {
        return cd(f.real() * g.real() - (-f.imag()) * g.imag(),
                  f.real() * g.imag() + (-f.imag()) * g.real());
    };
    // Taps before the window reach neither the response nor the feedback.
    for (size_t q = first; q < d_taps.size(); ++q) {
        if (d_taps[q] == cd())
            continue;
        if (q < end)
            d_response += conj_times(d_feedforward[q - first], d_taps[q]);
        if (!d_cfg.feedback)
            continue;
        for (size_t j = 1; 2 * j <= q && j < d_span; ++j) {
            const size_t a = q - 2 * j;
            if (a < first)
                break;
            if (a < end) {
                d_feedback[j - 1] += conj_times(d_feedforward[a - first], d_taps[q]);
                used = std::max(used, j);
            }
        }
    }
    d_feedback_used = used;
}

void channel_tracking_equaliser::track(const cd* window)
{
    if (!d_solved || d_since_solve >= d_cfg.solve_interval)
        solve(false);
    ++d_since_solve;
    queue_observation(window);
}

void channel_tracking_equaliser::queue_observation(const cd* window)
{
    const size_t lo = d_tracked.empty() ? 0 : d_tracked.front();
    d_pending.push_back({ window[0], window[1], window[2 * lo], window[2 * lo + 1], lo });
}

channel_tracking_equaliser::cd channel_tracking_equaliser::match(const cd* window)
{
    queue_observation(window);
    cd y;
    double energy = 0;
    for (size_t q = 0; q < d_taps.size(); ++q) {
        y += std::conj(d_taps[q]) * window[q];
        energy += std::norm(d_taps[q]);
    }
    energy = std::max(energy, min_bias);
    d_estimate_variance = d_noise / energy;
    return y / energy;
}

void channel_tracking_equaliser::decide(cd symbol, double weight, bool known)
{
    if (d_pending.empty())
        throw std::logic_error(
            "channel_tracking_equaliser: decide without a pending window");
    const observation seen = d_pending.front();
    d_pending.pop_front();
    // One symbol on (a memmove: std::rotate's element swaps were most of decide() at a
    // 177-symbol span).
    std::move(d_history.begin() + 1, d_history.end(), d_history.begin());
    d_history.back() = symbol;
    // Regressor: tap i sees symbol k - i (the observation is at symbol time k -
    // precursor).
    const auto regressor = [&](size_t i) { return d_history[d_span - 1 - i]; };
    // Whole span, LMS: slow, for the profile. Its step is per unit of symbol power: a
    // decided QAM symbol (mean power symbol_power) moves it as fast as a known one.
    // Over a span longer than the 3 kHz receivers' longest (47 symbol taps: 13 symbols
    // of delay spread) the step shrinks with the span, keeping the LMS's misadjustment
    // (step x span) and so its noise per tap: at 0.005 over 101 taps (24 kHz) noise taps
    // crossed the path threshold (WN0/24kHz/L at -7 dB: 57 of 6000 bits wrong).
    double step = known ? wide_step : wide_step / d_cfg.symbol_power;
    if (d_span > longest_3khz_span)
        step *= double(longest_3khz_span) / double(d_span);
    // The products written out (as std::complex computes them for finite values, without
    // its NaN checks: the whole span is long at wide bandwidths).
    const auto times = [](const cd& a, const cd& b) {
        return cd(a.real() * b.real() - a.imag() * b.imag(),
                  a.real() * b.imag() + a.imag() * b.real());
    };
    // Every time_scale-th symbol only: the same steps per second at every symbol rate.
    if (++d_since_wide >= d_cfg.time_scale) {
        d_since_wide = 0;
        cd w0 = seen.wide0, w1 = seen.wide1;
        for (size_t i = 0; i < d_span; ++i) {
            w0 -= times(d_wide[2 * i], regressor(i));
            w1 -= times(d_wide[2 * i + 1], regressor(i));
        }
        for (size_t i = 0; i < d_span; ++i) {
            const cd r = regressor(i);
            const cd x(r.real() * step, -r.imag() * step); // conj(r) * step
            d_wide[2 * i] = d_wide[2 * i] + times(w0, x);
            d_wide[2 * i + 1] = d_wide[2 * i + 1] + times(w1, x);
        }
    }
    // Tracked taps, RLS for r = v^H g with v = conj(x): k = P v / (lambda + v^H P v),
    // g += k e, P = (P - k (P v)^H) / lambda (kept Hermitian).
    const size_t n = d_tracked.size();
    const double lambda = d_cfg.forgetting;
    // Observed at the first tracked tap's time: tap i sees symbol k - (i - first).
    const auto tracked_regressor = [&](size_t i) {
        return i >= seen.first_tracked ? regressor(i - seen.first_tracked) : cd();
    };
    // Weighted RLS (cost sum lambda^age weight |e|^2): decisions count less than known
    // symbols, so the probes pull a tracker that followed wrong decisions back.
    weight = std::max(weight, 1e-6);
    for (size_t u = 0; u < n; ++u)
        d_regressor[u] = tracked_regressor(d_tracked[u]);
    cd e0 = seen.tracked0, e1 = seen.tracked1;
    double denom = lambda / weight;
    for (size_t u = 0; u < n; ++u) {
        const size_t i = d_tracked[u];
        e0 -= d_taps[2 * i] * d_regressor[u];
        e1 -= d_taps[2 * i + 1] * d_regressor[u];
        cd acc;
        for (size_t v = 0; v < n; ++v)
            acc += d_inverse[u * n + v] * std::conj(d_regressor[v]);
        d_gain[u] = acc;
        denom += (d_regressor[u] * acc).real();
    }
    for (size_t u = 0; u < n; ++u) {
        const size_t i = d_tracked[u];
        const cd k = d_gain[u] / denom;
        d_taps[2 * i] += k * e0;
        d_taps[2 * i + 1] += k * e1;
    }
    for (size_t u = 0; u < n; ++u) {
        const cd ku = d_gain[u] / denom;
        for (size_t v = u; v < n; ++v) {
            const cd value = (d_inverse[u * n + v] - ku * std::conj(d_gain[v])) / lambda;
            d_inverse[u * n + v] = value;
            d_inverse[v * n + u] = std::conj(value);
        }
        d_inverse[u * n + u] = cd(d_inverse[u * n + u].real(), 0.0);
    }
    if (known)
        d_noise += noise_smoothing * (0.5 * (std::norm(e0) + std::norm(e1)) - d_noise);
    ++d_since_select;
}

void channel_tracking_equaliser::note_measured_channel(
    const std::vector<cd>& taps, const std::vector<size_t>& measured)
{
    if (taps.size() != d_wide.size())
        throw std::invalid_argument("channel_tracking_equaliser: note_measured_channel "
                                    "needs 2 * channel_symbols() taps");
    // A clear path in the measurement (a tenth of its strongest, 6x its median) that is
    // not tracked yet is tracked from now on; the rest of the choice stays with the
    // profile (a measurement on a short run is noisy, and each new choice restarts the
    // tracker).
    std::vector<double> power;
    for (size_t i : measured)
        power.push_back(i < d_span ? std::norm(taps[2 * i]) + std::norm(taps[2 * i + 1])
                                   : 0.0);
    if (power.empty() || !d_pending.empty())
        return;
    const double threshold = path_power_threshold(power, measured_path);
    bool added = false;
    for (size_t u = 0; u < measured.size(); ++u)
        if (power[u] >= threshold &&
            std::find(d_tracked.begin(), d_tracked.end(), measured[u]) ==
                d_tracked.end()) {
            d_measured_paths.push_back(measured[u]);
            added = true;
        }
    if (added)
        select_taps();
}

void channel_tracking_equaliser::set_solve_interval(unsigned symbols)
{
    if (symbols == 0)
        throw std::invalid_argument(
            "channel_tracking_equaliser: solve_interval must be at least 1");
    d_cfg.solve_interval = symbols;
}

void channel_tracking_equaliser::set_symbol_power(double power)
{
    if (!(power > 0))
        throw std::invalid_argument(
            "channel_tracking_equaliser: symbol_power must be positive");
    d_cfg.symbol_power = power;
}

void channel_tracking_equaliser::set_forgetting(double forgetting)
{
    if (!(forgetting > 0 && forgetting <= 1))
        throw std::invalid_argument(
            "channel_tracking_equaliser: forgetting must be in (0, 1]");
    d_cfg.forgetting = forgetting;
}

void channel_tracking_equaliser::rebase_channel(const std::vector<cd>& base)
{
    if (base.size() != d_taps.size())
        throw std::invalid_argument("channel_tracking_equaliser: rebase_channel needs 2 "
                                    "* channel_symbols() taps");
    if (d_base.size() != base.size()) {
        d_taps = base;
    } else {
        for (size_t q = 0; q < d_taps.size(); ++q)
            d_taps[q] += base[q] - d_base[q];
    }
    d_base = base;
}

double channel_tracking_equaliser::take_turn()
{
    const double per_symbol = d_turn_symbols ? d_turn / double(d_turn_symbols) : 0.0;
    d_turn = 0;
    d_turn_symbols = 0;
    return per_symbol;
}

int channel_tracking_equaliser::timing_drift() const
{
    // The paths keep their places while fading moves power between them; a clock
    // offset moves them all: compare the profile's shape with the one at the start.
    const double in_place = overlap(d_energy_profile, d_reference_profile, 0);
    if (overlap(d_energy_profile, d_reference_profile, 1) > drift_preference * in_place)
        return 1;
    if (overlap(d_energy_profile, d_reference_profile, -1) > drift_preference * in_place)
        return -1;
    return 0;
}

void channel_tracking_equaliser::slip(int direction)
{
    if (direction == 0)
        return;
    if (!d_pending.empty())
        throw std::logic_error("channel_tracking_equaliser: slip with windows pending");
    // Samples taken T/2 later: position q of the new grid is q + 1 of the old.
    const size_t nf = window_samples();
    const auto shifted = [&](auto& v) {
        auto moved = v;
        for (size_t q = 0; q < nf; ++q) {
            const long from = long(q) + direction;
            moved[q] =
                from >= 0 && from < long(nf) ? v[size_t(from)] : decltype(v[0] * 1.0)();
        }
        v.swap(moved);
    };
    shifted(d_taps);
    shifted(d_wide);
    if (!d_base.empty())
        shifted(d_base);
    shifted(d_energy_profile);
    // The phases swapped roles: the tracked taps are chosen again (P restarts).
    d_tracked.clear();
    d_inverse.clear();
    select_taps();
}

} // namespace phy
} // namespace hfstack
} // namespace gr
