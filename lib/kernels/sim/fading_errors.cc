/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "fading_errors.h"

#include "phy/waveform_modes.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>
#include <stdexcept>
#include <utility>

namespace gr {
namespace hfstack {
namespace sim {

namespace {

[[noreturn]] void bad(const std::string& field, const std::string& what, double value)
{
    std::ostringstream os;
    os << field << " " << what << ", got " << value;
    throw std::invalid_argument(os.str());
}

void check_finite(const std::string& field, double v)
{
    if (!std::isfinite(v))
        bad(field, "must be finite", v);
}

void check_non_negative(const std::string& field, double v)
{
    if (!(v >= 0) || !std::isfinite(v))
        bad(field, "must be finite and >= 0", v);
}

void check_positive(const std::string& field, double v)
{
    if (!(v > 0) || !std::isfinite(v))
        bad(field, "must be finite and > 0", v);
}

} // namespace

// ---------------------------------------------------------------------------------------
// ber_curve

ber_curve::ber_curve(std::vector<ber_point> points, double eesm_beta)
    : d_points(std::move(points)), d_beta(eesm_beta)
{
    if (d_points.size() < 2)
        bad("ber_curve.points", "needs at least 2 points", double(d_points.size()));
    check_positive("ber_curve.eesm_beta", eesm_beta);
    for (size_t i = 0; i < d_points.size(); ++i) {
        const std::string field = "ber_curve.points[" + std::to_string(i) + "]";
        const ber_point& p = d_points[i];
        check_finite(field + ".snr_db", p.snr_db);
        if (!(p.ber > 0 && p.ber <= 0.5))
            bad(field + ".ber", "must lie in (0, 0.5]", p.ber);
        if (i > 0 && !(p.snr_db > d_points[i - 1].snr_db))
            bad(field + ".snr_db", "must be above the previous point's", p.snr_db);
        if (i > 0 && p.ber > d_points[i - 1].ber)
            bad(field + ".ber", "must not exceed the previous point's", p.ber);
        d_log_ber.push_back(std::log10(p.ber));
    }
}

double ber_curve::ber(double snr_db) const
{
    if (std::isnan(snr_db))
        bad("ber_curve: snr_db", "must not be NaN", snr_db);
    if (snr_db <= d_points.front().snr_db)
        return d_points.front().ber;
    if (snr_db >= d_points.back().snr_db)
        return d_points.back().ber;
    // First point above snr_db; its predecessor is at or below.
    const auto above = std::upper_bound(
        d_points.begin(), d_points.end(), snr_db, [](double s, const ber_point& p) {
            return s < p.snr_db;
        });
    const size_t hi = size_t(above - d_points.begin());
    const size_t lo = hi - 1;
    if (snr_db == d_points[lo].snr_db)
        return d_points[lo].ber; // exact at the points, no pow/log10 round trip
    const double w =
        (snr_db - d_points[lo].snr_db) / (d_points[hi].snr_db - d_points[lo].snr_db);
    return std::pow(10.0, d_log_ber[lo] + w * (d_log_ber[hi] - d_log_ber[lo]));
}

double ber_curve::ber_linear(double snr_linear) const
{
    if (!(snr_linear >= 0))
        bad("ber_curve: snr_linear", "must be >= 0", snr_linear);
    return ber(10.0 * std::log10(snr_linear)); // 0 -> -inf -> first point
}

double ber_curve::snr_db_for(double target) const
{
    if (!(target > 0 && target < 0.5))
        bad("ber_curve: ber", "must lie in (0, 0.5)", target);
    if (target >= d_points.front().ber)
        return d_points.front().snr_db;
    const double log_target = std::log10(target);
    for (size_t i = 1; i < d_points.size(); ++i) {
        if (d_points[i].ber <= target) {
            const double a = d_log_ber[i - 1], b = d_log_ber[i];
            if (a == b)
                return d_points[i - 1].snr_db;
            const double w = (log_target - a) / (b - a);
            return d_points[i - 1].snr_db +
                   w * (d_points[i].snr_db - d_points[i - 1].snr_db);
        }
    }
    return std::numeric_limits<double>::infinity();
}

double eesm_effective_snr(const double* snr, size_t n, double beta)
{
    if (n == 0)
        bad("eesm_effective_snr: n", "must be > 0", 0);
    const double lowest = *std::min_element(snr, snr + n);
    double sum = 0;
    for (size_t k = 0; k < n; ++k)
        sum += std::exp(-(snr[k] - lowest) / beta);
    return lowest - beta * std::log(sum / double(n));
}

ber_curve curve_from_points(const std::vector<phy::modem_curve_point>& awgn,
                            double eesm_beta)
{
    constexpr double floor_ber = 1e-12;
    std::vector<phy::modem_curve_point> sorted = awgn;
    std::stable_sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) {
        return a.snr_db < b.snr_db;
    });
    std::vector<ber_point> points;
    std::vector<std::pair<double, double>> bounds; // error-free points: (SNR, 95 % bound)
    for (const auto& p : sorted) {
        if (p.rx_bits == 0)
            continue;
        if (p.rx_errors == 0) {
            bounds.push_back({ p.snr_db, 3.0 / double(p.rx_bits) });
            continue;
        }
        if (!points.empty() && !(p.snr_db > points.back().snr_db))
            continue; // a repeated SNR: the first run's point
        double ber = std::min(0.5, p.rx_ber());
        if (!points.empty())
            ber = std::min(ber, points.back().ber);
        points.push_back({ p.snr_db, ber });
    }
    if (points.empty())
        bad("curve_from_points: points",
            "need one with errors, have",
            double(awgn.size()));
    if (points.front().ber < 0.5)
        points.insert(points.begin(), { points.front().snr_db - 5.0, 0.5 });
    // The tail: from the last point with errors, at least 1 decade per dB.
    double slope = 1.0; // decades per dB
    if (points.size() >= 2) {
        const ber_point& a = points[points.size() - 2];
        const ber_point& b = points.back();
        slope = std::max(slope,
                         (std::log10(a.ber) - std::log10(b.ber)) / (b.snr_db - a.snr_db));
    }
    while (points.back().ber > floor_ber) {
        const ber_point last = points.back();
        double next_snr =
            last.snr_db + (std::log10(last.ber) - std::log10(floor_ber)) / slope;
        double next_ber = floor_ber;
        // An error-free point the line would pass above: go through its bound instead.
        for (const auto& [snr, bound] : bounds) {
            if (snr <= last.snr_db || snr >= next_snr)
                continue;
            const double on_line = std::log10(last.ber) - slope * (snr - last.snr_db);
            if (on_line > std::log10(bound) && bound < last.ber) {
                next_snr = snr;
                next_ber = bound;
                break;
            }
        }
        points.push_back({ next_snr, next_ber });
    }
    return ber_curve(std::move(points), eesm_beta);
}

namespace {

std::vector<mode_model> build_mode_models()
{
    const phy::modem_curve_data& data = phy::measured_modem_curves();
    std::vector<mode_model> out;
    for (const std::string& mode : data.modes_on("awgn")) {
        const phy::modem_curve_fit* fit = data.fit_of(mode);
        const auto timing = phy::waveform_timing_by_name(mode);
        if (!fit || !timing)
            continue;
        mode_model m{ mode,
                      curve_from_points(data.points_of(mode, "awgn"), fit->eesm_beta),
                      fit->detect_snr_db,
                      fit->detect_width_db,
                      fit->fading_loss_db,
                      timing->bit_rate,
                      timing->whole_units() ? timing->unit_s : 0.0,
                      timing->preamble_s,
                      *fit };
        out.push_back(std::move(m));
    }
    return out;
}

} // namespace

const std::vector<mode_model>& measured_mode_models()
{
    static const std::vector<mode_model> models = build_mode_models();
    return models;
}

const mode_model& mode_model_for(double bit_rate, double block_s)
{
    if (!(bit_rate > 0) || !std::isfinite(bit_rate))
        bad("mode_model_for: bit_rate", "must be finite and > 0", bit_rate);
    const auto& models = measured_mode_models();
    if (models.empty())
        throw std::logic_error("mode_model_for: the embedded modem curves hold no mode");
    auto distance = [&](const mode_model& m) {
        const double rate = std::fabs(std::log(m.bit_rate / bit_rate));
        const double block =
            std::fabs(std::log(std::max(m.block_s, 0.01) / std::max(block_s, 0.01)));
        return std::make_pair(rate, block);
    };
    const mode_model* best = &models.front();
    for (const auto& m : models)
        if (distance(m) < distance(*best))
            best = &m;
    return *best;
}

double
preamble_miss_probability(double snr_db, double detect_snr_db, double detect_width_db)
{
    if (std::isnan(snr_db))
        bad("preamble_miss_probability: snr_db", "must not be NaN", snr_db);
    if (!(detect_width_db > 0))
        return snr_db < detect_snr_db ? 1.0 : 0.0;
    return 1.0 / (1.0 + std::exp((snr_db - detect_snr_db) / detect_width_db));
}

const mode_model& mode_model_by_name(const std::string& mode)
{
    for (const auto& m : measured_mode_models())
        if (m.mode == mode)
            return m;
    throw std::invalid_argument("mode " + mode + " has no measured curve");
}

// ---------------------------------------------------------------------------------------
// fading_snr

fading_snr::fading_snr(double mean_snr_db, fading_profile profile, uint64_t seed)
    : d_mean_db(mean_snr_db), d_profile(std::move(profile))
{
    check_finite("mean_snr_db", mean_snr_db);
    d_mean_linear = std::pow(10.0, mean_snr_db / 10.0);
    d_profile.paths = chan::normalised_paths(d_profile.paths, "profile.paths");
    for (size_t i = 0; i < d_profile.paths.size(); ++i) {
        const watterson_path& p = d_profile.paths[i];
        d_gains.emplace_back(p.spread_hz, p.shift_hz, chan::path_seed(seed, i));
        if (p.power > 0 && p.spread_hz > 0)
            d_fading = true;
        d_max_spread = std::max(d_max_spread, p.spread_hz);
    }
}

double fading_snr::snr_linear(double t)
{
    if (!std::isfinite(t))
        bad("t", "must be finite", t);
    if (!d_fading)
        return mean_snr_linear_at(t); // static paths: |g|^2 = 1, the powers sum to 1
    double sum = 0;
    for (size_t i = 0; i < d_gains.size(); ++i)
        sum += d_profile.paths[i].power * std::norm(d_gains[i].at(t));
    return mean_snr_linear_at(t) * sum;
}

void fading_snr::set_steps(std::vector<std::pair<double, double>> steps)
{
    for (size_t i = 0; i < steps.size(); ++i) {
        check_finite("steps.t_s", steps[i].first);
        check_finite("steps.snr_db", steps[i].second);
        if (i > 0 && !(steps[i].first > steps[i - 1].first))
            bad("steps.t_s", "must be strictly ascending", steps[i].first);
    }
    d_steps = std::move(steps);
}

double stepped_mean_db(double before_db,
                       const std::vector<std::pair<double, double>>& steps_db,
                       double t0,
                       double t1)
{
    auto at = [&](double t) {
        double value = before_db;
        for (const auto& [from, db] : steps_db)
            if (t >= from)
                value = db;
        return value;
    };
    double power = 0, from = t0;
    for (const auto& step : steps_db) {
        if (step.first <= from)
            continue;
        if (!(step.first < t1))
            break;
        power += (step.first - from) * std::pow(10.0, at(from) / 10.0);
        from = step.first;
    }
    if (from == t0) // no step inside: exactly the value in force
        return at(t0);
    power += (t1 - from) * std::pow(10.0, at(from) / 10.0);
    return 10.0 * std::log10(power / (t1 - t0));
}

double fading_snr::mean_snr_linear_at(double t) const
{
    return std::pow(10.0, mean_snr_db_over(t, t) / 10.0);
}

double fading_snr::mean_snr_db_over(double t0, double t1) const
{
    return stepped_mean_db(d_mean_db, d_steps, t0, t1);
}

double fading_snr::snr_db(double t) { return 10.0 * std::log10(snr_linear(t)); }

// ---------------------------------------------------------------------------------------
// fading_error_process

void validate(const fading_error_config& c)
{
    check_non_negative("fading_error_config.interleaver_s", c.interleaver_s);
    check_positive("fading_error_config.uninterleaved_window_s",
                   c.uninterleaved_window_s);
    check_positive("fading_error_config.max_sample_step_s", c.max_sample_step_s);
    check_non_negative("fading_error_config.eesm_beta", c.eesm_beta);
    check_non_negative("fading_error_config.fading_loss_db", c.fading_loss_db);
}

fading_error_process::fading_error_process(ber_curve curve,
                                           fading_snr snr,
                                           fading_error_config config)
    : d_curve(std::move(curve)), d_snr(std::move(snr)), d_cfg(config)
{
    validate(d_cfg);
    d_block =
        d_cfg.interleaver_s > 0 ? d_cfg.interleaver_s : d_cfg.uninterleaved_window_s;
    d_beta = d_cfg.eesm_beta > 0 ? d_cfg.eesm_beta : d_curve.eesm_beta();
    d_loss = std::pow(10.0, -d_cfg.fading_loss_db / 10.0);
    // At least 8 samples per block and 10 per 1 / spread (a fade lasts a few tenths of
    // 1 / spread), and no sparser than max_sample_step_s.
    d_step = std::min(d_cfg.max_sample_step_s, d_block / 8.0);
    if (d_snr.max_spread_hz() > 0)
        d_step = std::min(d_step, 1.0 / (10.0 * d_snr.max_spread_hz()));
}

void fading_error_process::retain_from(int64_t first, bool keep_older)
{
    // Samples live on the global grid index * d_step, so a block's samples do not depend
    // on which calls asked for them. Those before `first` are dropped.
    if (d_samples.empty() || first >= d_first + int64_t(d_samples.size())) {
        d_samples.clear();
        d_first = first;
    } else if (first < d_first) {
        bad("t0",
            "needs fading samples from before the previous call's first block (at " +
                std::to_string(double(d_first) * d_step) + " s)",
            double(first) * d_step);
    } else if (!keep_older) {
        while (d_first < first) {
            d_samples.pop_front();
            ++d_first;
        }
    }
}

namespace {

int64_t first_grid_index(double t, double step) { return int64_t(std::ceil(t / step)); }

} // namespace

double fading_error_process::compute_block(double block_start, double block_end)
{
    if (!d_snr.fading())
        return d_curve.ber(d_snr.mean_snr_db_over(block_start, block_end));
    // Grid samples in [block_start, block_end): at least 8 since d_step <= block / 8.
    const int64_t first = first_grid_index(block_start, d_step);
    const int64_t last = std::max(first + 1, first_grid_index(block_end, d_step));
    if (d_samples.empty())
        retain_from(first);
    while (d_first + int64_t(d_samples.size()) < last)
        d_samples.push_back(
            d_snr.snr_linear(double(d_first + int64_t(d_samples.size())) * d_step));
    const auto begin = d_samples.begin() + (first - d_first);
    const auto end = d_samples.begin() + (last - d_first);
    const double n = double(last - first);
    if (!interleaved()) {
        double sum = 0;
        for (auto it = begin; it != end; ++it)
            sum += d_curve.ber_linear(*it * d_loss);
        return sum / n;
    }
    d_scratch.assign(begin, end);
    const double effective =
        eesm_effective_snr(d_scratch.data(), d_scratch.size(), d_beta);
    return d_curve.ber_linear(std::max(effective, 0.0) * d_loss);
}

double fading_error_process::earliest_s() const
{
    if (d_samples.empty())
        return -std::numeric_limits<double>::infinity();
    return double(d_first) * d_step;
}

bool fading_error_process::reaches_back_to(double t) const
{
    return d_samples.empty() || !(first_grid_index(t, d_step) < d_first);
}

double fading_error_process::mean_snr_linear(double t0, double t1)
{
    check_finite("t0", t0);
    check_finite("t1", t1);
    if (!(t1 >= t0))
        bad("t1", "must not precede t0 (" + std::to_string(t0) + ")", t1);
    if (!d_snr.fading())
        return std::pow(10.0, d_snr.mean_snr_db_over(t0, t1) / 10.0);
    const int64_t first = first_grid_index(t0, d_step);
    const int64_t last = std::max(first + 1, first_grid_index(t1, d_step));
    // Drops nothing: a preamble's mean (asked before its burst's segments) may start a
    // sample later than the data of a burst on the air with it still needs, since
    // earliest_s() -> grid index rounds up when it does not round exactly.
    retain_from(first, /*keep_older=*/true);
    while (d_first + int64_t(d_samples.size()) < last)
        d_samples.push_back(
            d_snr.snr_linear(double(d_first + int64_t(d_samples.size())) * d_step));
    double sum = 0;
    for (int64_t k = first; k < last; ++k)
        sum += d_samples[size_t(k - d_first)];
    return sum / double(last - first);
}

double fading_error_process::block_ber(double block_start)
{
    check_finite("block_start", block_start);
    if (d_snr.fading())
        retain_from(first_grid_index(block_start, d_step));
    return compute_block(block_start, block_start + d_block);
}

std::vector<error_segment>
fading_error_process::segments(double tx_start, double t0, double t1)
{
    std::vector<error_segment> out;
    segments(tx_start, t0, t1, out);
    return out;
}

void fading_error_process::segments(double tx_start,
                                    double t0,
                                    double t1,
                                    std::vector<error_segment>& out)
{
    out.clear();
    check_finite("tx_start", tx_start);
    check_finite("t0", t0);
    check_finite("t1", t1);
    if (!(t0 >= tx_start))
        bad("t0", "must not precede tx_start (" + std::to_string(tx_start) + ")", t0);
    if (!(t1 >= t0))
        bad("t1", "must not precede t0 (" + std::to_string(t0) + ")", t1);
    if (t1 == t0)
        return;

    auto block_start = [&](int64_t k) { return tx_start + double(k) * d_block; };
    int64_t k = int64_t(std::floor((t0 - tx_start) / d_block));
    while (block_start(k + 1) <= t0) // rounding guards: block k must contain t0
        ++k;
    while (k > 0 && block_start(k) > t0)
        --k;
    if (d_snr.fading())
        retain_from(first_grid_index(block_start(k), d_step));
    double s = t0;
    while (s < t1) {
        const double end = std::min(block_start(k + 1), t1);
        if (end > s) {
            out.push_back({ s, end, compute_block(block_start(k), block_start(k + 1)) });
            s = end;
        }
        ++k;
    }
}

} // namespace sim
} // namespace hfstack
} // namespace gr
