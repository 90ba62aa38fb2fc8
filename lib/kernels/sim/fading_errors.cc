/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "fading_errors.h"

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

// EESM betas in linear SNR measured in 3 kHz. For a constellation with minimum distance
// d and mean symbol energy Es, the pairwise (Chernoff) error exponent is
// exp(-d^2 / (4 N0)) = exp(-(Es/N0) / beta_sym) with beta_sym = 4 Es / d^2: BPSK 1,
// QPSK 2, 8PSK 1 / sin^2(pi/8) = 6.83, 16QAM 10, 32QAM (cross) 20, 64QAM 42. The serial
// tone is 2400 Bd in 3 kHz, so Es/N0 = 1.25 SNR_3k and beta_3k = beta_sym / 1.25.
// Placeholders: the code rate, the known (probe) symbols and the block length change the
// best fit, which measured fading curves will give.
constexpr double beta_bpsk = 1.0 / 1.25;
constexpr double beta_qpsk = 2.0 / 1.25;
constexpr double beta_8psk = 6.8284271247 / 1.25;
constexpr double beta_16qam = 10.0 / 1.25;
constexpr double beta_32qam = 20.0 / 1.25;
constexpr double beta_64qam = 42.0 / 1.25;

constexpr double nan = std::numeric_limits<double>::quiet_NaN();

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
        d_points.begin(), d_points.end(), snr_db,
        [](double s, const ber_point& p) { return s < p.snr_db; });
    const size_t hi = size_t(above - d_points.begin());
    const size_t lo = hi - 1;
    if (snr_db == d_points[lo].snr_db)
        return d_points[lo].ber; // exact at the points, no pow/log10 round trip
    const double w = (snr_db - d_points[lo].snr_db) / (d_points[hi].snr_db - d_points[lo].snr_db);
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
            return d_points[i - 1].snr_db + w * (d_points[i].snr_db - d_points[i - 1].snr_db);
        }
    }
    return std::numeric_limits<double>::infinity();
}

ber_curve coded_waterfall_curve(double requirement_snr_db, double eesm_beta)
{
    check_finite("requirement_snr_db", requirement_snr_db);
    // (dB relative to the requirement, BER); see the header.
    static const ber_point shape[] = {
        { -10.0, 0.5 }, { -6.0, 1e-1 }, { -4.0, 2e-2 }, { -3.0, 5e-3 },  { -1.75, 1e-3 },
        { 0.0, 1e-5 },  { 1.75, 1e-7 }, { 3.5, 1e-9 },  { 5.25, 1e-11 },
    };
    std::vector<ber_point> points;
    for (const ber_point& p : shape)
        points.push_back({ requirement_snr_db + p.snr_db, p.ber });
    return ber_curve(std::move(points), eesm_beta);
}

const std::vector<mode_requirement>& default_mode_requirements()
{
    // PLACEHOLDERS until our modem's measured curves replace them. Sources: anchors.md E.
    static const std::vector<mode_requirement> table = {
        { 75, -6.0, nan, beta_bpsk, "110A serial tone, Walsh",
          "estimate: 110D WN0 AWGN (75 bps -6 dB); 110A gives only 2 dB on 5 ms/5 Hz" },
        { 150, -3.0, nan, beta_bpsk, "110A serial tone, BPSK",
          "estimate: 110D WN1 AWGN (-3 dB); 110A gives only 5 dB on 5 ms/5 Hz" },
        { 300, 0.0, nan, beta_bpsk, "110A serial tone, BPSK",
          "estimate: 110D WN2 AWGN (0 dB); 110A gives only 7 dB on 5 ms/5 Hz" },
        { 600, 3.0, 7.0, beta_bpsk, "110A serial tone, BPSK",
          "estimate: 110A poor 7 dB minus the 110D WN3 AWGN-to-poor gap (7 - 3 = 4 dB)" },
        { 1200, 6.0, 11.0, beta_qpsk, "110A serial tone, QPSK",
          "estimate: 110A poor 11 dB minus the 110D WN4 AWGN-to-poor gap (10 - 5 = 5 dB)" },
        { 2400, 10.0, 18.0, beta_8psk, "110A serial tone, 8PSK",
          "110A 2400 bps: 10 dB AWGN, 18 dB poor (commonly quoted, to be confirmed)" },
        { 3200, 9.0, 14.0, beta_qpsk, "4539 / 110C App C, QPSK", "110D WN6: 9 / 14 dB" },
        { 4800, 13.0, 19.0, beta_8psk, "4539 / 110C App C, 8PSK", "110D WN7: 13 / 19 dB" },
        { 6400, 16.0, 23.0, beta_16qam, "4539 / 110C App C, 16QAM", "110D WN8: 16 / 23 dB" },
        { 8000, 19.0, 27.0, beta_32qam, "4539 / 110C App C, 32QAM", "110D WN9: 19 / 27 dB" },
        { 9600, 21.0, 31.0, beta_64qam, "4539 / 110C App C, 64QAM", "110D WN10: 21 / 31 dB" },
        { 12800, 25.2, nan, beta_64qam, "4539 / 110C App C, 64QAM",
          "estimate: linear in rate between 110D WN11 12000 bps 24 dB and WN12 16000 30 dB" },
    };
    return table;
}

const mode_requirement& default_mode_requirement(unsigned user_bps)
{
    for (const auto& m : default_mode_requirements())
        if (m.user_bps == user_bps)
            return m;
    bad("user_bps", "has no default requirement (75..2400 serial tone, 3200..12800 high rate)",
        double(user_bps));
}

ber_curve default_ber_curve(unsigned user_bps)
{
    const mode_requirement& m = default_mode_requirement(user_bps);
    return coded_waterfall_curve(m.awgn_snr_db, m.eesm_beta);
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
        return d_mean_linear; // static paths: |g|^2 = 1, the powers sum to 1
    double sum = 0;
    for (size_t i = 0; i < d_gains.size(); ++i)
        sum += d_profile.paths[i].power * std::norm(d_gains[i].at(t));
    return d_mean_linear * sum;
}

double fading_snr::snr_db(double t) { return 10.0 * std::log10(snr_linear(t)); }

// ---------------------------------------------------------------------------------------
// fading_error_process

void validate(const fading_error_config& c)
{
    check_non_negative("fading_error_config.interleaver_s", c.interleaver_s);
    check_positive("fading_error_config.uninterleaved_window_s", c.uninterleaved_window_s);
    check_positive("fading_error_config.max_sample_step_s", c.max_sample_step_s);
    check_non_negative("fading_error_config.eesm_beta", c.eesm_beta);
}

fading_error_process::fading_error_process(ber_curve curve, fading_snr snr,
                                           fading_error_config config)
    : d_curve(std::move(curve)), d_snr(std::move(snr)), d_cfg(config)
{
    validate(d_cfg);
    d_block = d_cfg.interleaver_s > 0 ? d_cfg.interleaver_s : d_cfg.uninterleaved_window_s;
    d_beta = d_cfg.eesm_beta > 0 ? d_cfg.eesm_beta : d_curve.eesm_beta();
    // At least 8 samples per block and 10 per 1 / spread (a fade lasts a few tenths of
    // 1 / spread), and no sparser than max_sample_step_s.
    d_step = std::min(d_cfg.max_sample_step_s, d_block / 8.0);
    if (d_snr.max_spread_hz() > 0)
        d_step = std::min(d_step, 1.0 / (10.0 * d_snr.max_spread_hz()));
}

void fading_error_process::retain_from(int64_t first)
{
    // Samples live on the global grid index * d_step, so a block's samples do not depend
    // on which calls asked for them. Those before `first` are dropped.
    if (d_samples.empty() || first >= d_first + int64_t(d_samples.size())) {
        d_samples.clear();
        d_first = first;
    } else if (first < d_first) {
        bad("t0", "needs fading samples from before the previous call's first block (at " +
                      std::to_string(double(d_first) * d_step) + " s)",
            double(first) * d_step);
    } else {
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
        return d_curve.ber(d_snr.mean_snr_db());
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
            sum += d_curve.ber_linear(*it);
        return sum / n;
    }
    // EESM, shifted by the smallest SNR so no exponential underflows.
    const double lowest = *std::min_element(begin, end);
    double sum = 0;
    for (auto it = begin; it != end; ++it)
        sum += std::exp(-(*it - lowest) / d_beta);
    const double effective = lowest - d_beta * std::log(sum / n);
    return d_curve.ber_linear(std::max(effective, 0.0));
}

double fading_error_process::block_ber(double block_start)
{
    check_finite("block_start", block_start);
    if (d_snr.fading())
        retain_from(first_grid_index(block_start, d_step));
    return compute_block(block_start, block_start + d_block);
}

std::vector<error_segment> fading_error_process::segments(double tx_start, double t0, double t1)
{
    std::vector<error_segment> out;
    segments(tx_start, t0, t1, out);
    return out;
}

void fading_error_process::segments(double tx_start, double t0, double t1,
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
