/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "snr_report_map.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <stdexcept>
#include <utility>

namespace gr {
namespace hfstack {
namespace phy {

namespace {

[[noreturn]] void bad(const std::string& field, const std::string& what)
{
    throw std::invalid_argument("snr_report_map: " + field + " " + what);
}

void check_increasing(const std::vector<double>& v, const char* field)
{
    for (size_t i = 0; i < v.size(); ++i) {
        if (!std::isfinite(v[i]))
            bad(field, "must be finite");
        if (i > 0 && !(v[i] > v[i - 1]))
            bad(field, "must be strictly increasing");
    }
}

// Piecewise linear through (x, y), slope 1 beyond the ends.
double through(const std::vector<double>& x, const std::vector<double>& y, double v)
{
    if (std::isnan(v))
        return v;
    if (v <= x.front())
        return y.front() + (v - x.front());
    if (v >= x.back())
        return y.back() + (v - x.back());
    const size_t hi = size_t(std::upper_bound(x.begin(), x.end(), v) - x.begin());
    const size_t lo = hi - 1;
    const double w = (v - x[lo]) / (x[hi] - x[lo]);
    return y[lo] + w * (y[hi] - y[lo]);
}

struct block {
    double true_sum, report_sum, weight;
    double report() const { return report_sum / weight; }
};

// Mean report per true SNR over `channels`, made non-decreasing by pooling adjacent
// violators, each pooled run one point at its mean true SNR.
std::optional<snr_report_map> build(const modem_curve_data& data,
                                    const std::string& mode,
                                    const std::vector<std::string>& channels,
                                    const std::string& label)
{
    std::map<double, std::pair<double, double>> by_snr; // true -> (report sum, count)
    double sd_sum = 0, burst_s_sum = 0;
    size_t sd_count = 0;
    for (const auto& channel : channels)
        for (const auto& p : data.points_of(mode, channel)) {
            if (!std::isfinite(p.snr_report_db) || !std::isfinite(p.snr_db))
                continue;
            auto& s = by_snr[p.snr_db];
            s.first += p.snr_report_db;
            s.second += 1;
            if (std::isfinite(p.snr_report_sd) && p.bursts > 0 && p.seconds > 0) {
                sd_sum += p.snr_report_sd;
                burst_s_sum += p.seconds / double(p.bursts);
                ++sd_count;
            }
        }
    std::vector<block> blocks;
    for (const auto& [snr, s] : by_snr) {
        blocks.push_back({ snr * s.second, s.first, s.second });
        while (blocks.size() >= 2 &&
               !(blocks.back().report() > blocks[blocks.size() - 2].report())) {
            const block last = blocks.back();
            blocks.pop_back();
            blocks.back().true_sum += last.true_sum;
            blocks.back().report_sum += last.report_sum;
            blocks.back().weight += last.weight;
        }
    }
    if (blocks.size() < 2)
        return std::nullopt;
    std::vector<double> true_db, report_db;
    for (const auto& b : blocks) {
        true_db.push_back(b.true_sum / b.weight);
        report_db.push_back(b.report());
    }
    return snr_report_map(std::move(true_db),
                          std::move(report_db),
                          sd_count ? sd_sum / double(sd_count) : 0.0,
                          sd_count ? burst_s_sum / double(sd_count) : 1.0,
                          label);
}

} // namespace

snr_report_map::snr_report_map(std::vector<double> true_db,
                               std::vector<double> report_db,
                               double report_sd_db,
                               double report_burst_s,
                               std::string channels)
    : d_true(std::move(true_db)),
      d_report(std::move(report_db)),
      d_sd(report_sd_db),
      d_burst_s(report_burst_s),
      d_channels(std::move(channels))
{
    if (d_true.size() < 2)
        bad("true_db", "needs at least 2 points");
    if (d_report.size() != d_true.size())
        bad("report_db", "must have as many points as true_db");
    check_increasing(d_true, "true_db");
    check_increasing(d_report, "report_db");
    if (!(d_sd >= 0) || !std::isfinite(d_sd))
        bad("report_sd_db", "must be finite and >= 0");
    if (!(d_burst_s > 0) || !std::isfinite(d_burst_s))
        bad("report_burst_s", "must be finite and > 0");
}

double snr_report_map::report_sd_db(double burst_s) const
{
    if (!(burst_s > d_burst_s))
        return d_sd;
    return d_sd * std::sqrt(d_burst_s / burst_s);
}

double snr_report_map::report_for(double true_snr_db) const
{
    return through(d_true, d_report, true_snr_db);
}

double snr_report_map::true_snr_for(double report_db) const
{
    return through(d_report, d_true, report_db);
}

std::optional<snr_report_map> snr_report_map_from(const modem_curve_data& data,
                                                  const std::string& mode)
{
    if (auto m = build(data, mode, { "poor", "moderate" }, "poor+moderate"))
        return m;
    return build(data, mode, { "awgn" }, "awgn");
}

std::optional<snr_report_map> snr_report_map_on(const modem_curve_data& data,
                                                const std::string& mode,
                                                const std::string& channel)
{
    return build(data, mode, { channel }, channel);
}

const snr_report_map* measured_snr_report_map(const std::string& mode)
{
    static const std::map<std::string, snr_report_map> maps = [] {
        std::map<std::string, snr_report_map> m;
        const auto& data = measured_modem_curves();
        for (const auto& channel : { "awgn", "poor", "moderate" })
            for (const auto& name : data.modes_on(channel))
                if (!m.count(name))
                    if (auto map = snr_report_map_from(data, name))
                        m.emplace(name, std::move(*map));
        return m;
    }();
    const auto it = maps.find(mode);
    return it == maps.end() ? nullptr : &it->second;
}

} // namespace phy
} // namespace hfstack
} // namespace gr
