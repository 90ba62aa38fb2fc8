/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "modem_curves.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <map>
#include <sstream>
#include <stdexcept>
#include <utility>

namespace gr {
namespace hfstack {
namespace phy {

// Defined in the .cc lib/CMakeLists.txt generates from lib/kernels/sim/modem_curves.csv.
extern const char* const modem_curves_csv;

namespace {

[[noreturn]] void bad_line(size_t line, const std::string& what)
{
    throw std::invalid_argument("modem curves line " + std::to_string(line) + ": " +
                                what);
}

std::vector<std::string> split_fields(const std::string& s, size_t line)
{
    std::vector<std::string> out;
    std::string field;
    bool quoted = false;
    for (size_t i = 0; i < s.size(); ++i) {
        const char c = s[i];
        if (quoted) {
            if (c == '"')
                quoted = false;
            else
                field += c;
        } else if (c == '"') {
            quoted = true;
        } else if (c == ',') {
            out.push_back(field);
            field.clear();
        } else {
            field += c;
        }
    }
    if (quoted)
        bad_line(line, "unterminated quote");
    out.push_back(field);
    return out;
}

// One row of a section, its columns by name.
struct row {
    const std::map<std::string, size_t>* columns;
    const std::vector<std::string>* fields;
    size_t line;

    bool has(const std::string& name) const { return columns->count(name) > 0; }
    const std::string& text(const std::string& name) const
    {
        auto it = columns->find(name);
        if (it == columns->end())
            bad_line(line, "no column " + name);
        return (*fields)[it->second];
    }
    double number(const std::string& name) const
    {
        const std::string& t = text(name);
        if (t == "nan")
            return std::numeric_limits<double>::quiet_NaN();
        if (t == "inf")
            return std::numeric_limits<double>::infinity();
        char* end = nullptr;
        const double v = std::strtod(t.c_str(), &end);
        if (t.empty() || *end != '\0')
            bad_line(line, name + " \"" + t + "\" is no number");
        return v;
    }
    uint64_t count(const std::string& name) const
    {
        const double v = number(name);
        if (!(v >= 0) || v != std::floor(v) || v > 1e18)
            bad_line(line, name + " \"" + text(name) + "\" is no count");
        return uint64_t(v);
    }
};

} // namespace

modem_curve_data parse_modem_curves(const std::string& text)
{
    modem_curve_data d;
    std::istringstream in(text);
    std::string line, section;
    std::map<std::string, size_t> columns;
    bool have_header = false;
    size_t number = 0;
    while (std::getline(in, line)) {
        ++number;
        if (!line.empty() && line.back() == '\r')
            line.pop_back();
        if (line.empty() || line[0] == '#')
            continue;
        if (line.front() == '[' && line.back() == ']') {
            section = line.substr(1, line.size() - 2);
            have_header = false;
            continue;
        }
        const std::vector<std::string> fields = split_fields(line, number);
        if (!have_header) {
            columns.clear();
            for (size_t i = 0; i < fields.size(); ++i)
                columns[fields[i]] = i;
            have_header = true;
            continue;
        }
        if (fields.size() != columns.size())
            bad_line(number,
                     std::to_string(fields.size()) + " fields under a header of " +
                         std::to_string(columns.size()));
        const row r{ &columns, &fields, number };
        if (section == "runs") {
            modem_curve_run x;
            x.run = unsigned(r.count("run"));
            x.commit = r.text("commit");
            x.date = r.text("date");
            x.command = r.text("command");
            d.runs.push_back(x);
        } else if (section == "points") {
            using point = modem_curve_point;
            static const std::pair<const char*, uint64_t point::*> counts[] = {
                { "bits", &point::bits },       { "errors", &point::errors },
                { "bursts", &point::bursts },   { "lost", &point::lost },
                { "rx_bits", &point::rx_bits }, { "rx_errors", &point::rx_errors },
            };
            static const std::pair<const char*, double point::*> numbers[] = {
                { "snr_db", &point::snr_db },
                { "seconds", &point::seconds },
                { "snr_report_db", &point::snr_report_db },
                { "snr_report_sd", &point::snr_report_sd },
            };
            point p;
            p.run = unsigned(r.count("run"));
            p.mode = r.text("mode");
            p.channel = r.text("channel");
            for (const auto& [name, member] : counts)
                p.*member = r.count(name);
            for (const auto& [name, member] : numbers)
                p.*member = r.number(name);
            if (!std::isfinite(p.snr_db) || p.lost > p.bursts || p.rx_errors > p.rx_bits)
                bad_line(number, "inconsistent point");
            d.points.push_back(p);
        } else if (section == "fits") {
            modem_curve_fit f;
            f.mode = r.text("mode");
            f.eesm_beta = r.number("eesm_beta");
            f.fading_loss_db = r.number("fading_loss_db");
            f.beta_rms_log10 = r.number("beta_rms_log10");
            f.beta_points = unsigned(r.count("beta_points"));
            f.detect_snr_db = r.number("detect_snr_db");
            f.detect_width_db = r.number("detect_width_db");
            f.loss_rms = r.number("loss_rms");
            f.loss_points = unsigned(r.count("loss_points"));
            f.rate_snr_db = r.number("rate_snr_db");
            f.source = r.text("source");
            if (r.has("rate_target"))
                d.rate_target = r.text("rate_target");
            if (!(f.eesm_beta > 0) || !std::isfinite(f.eesm_beta) ||
                std::isnan(f.detect_snr_db) || !(f.detect_width_db >= 0) ||
                std::isnan(f.rate_snr_db))
                bad_line(number, "fit of " + f.mode + " needs beta > 0 and SNRs");
            d.fits.push_back(f);
        }
    }
    return d;
}

std::vector<modem_curve_point>
modem_curve_data::points_of(const std::string& mode, const std::string& channel) const
{
    std::vector<modem_curve_point> out;
    for (const auto& p : points)
        if (p.mode == mode && p.channel == channel)
            out.push_back(p);
    std::stable_sort(out.begin(),
                     out.end(),
                     [](const modem_curve_point& a, const modem_curve_point& b) {
                         return a.snr_db < b.snr_db;
                     });
    return out;
}

const modem_curve_fit* modem_curve_data::fit_of(const std::string& mode) const
{
    for (const auto& f : fits)
        if (f.mode == mode)
            return &f;
    return nullptr;
}

std::vector<std::string> modem_curve_data::modes_on(const std::string& channel) const
{
    std::vector<std::string> out;
    for (const auto& p : points)
        if (p.channel == channel &&
            std::find(out.begin(), out.end(), p.mode) == out.end())
            out.push_back(p.mode);
    return out;
}

const std::string& measured_modem_curves_text()
{
    static const std::string text(modem_curves_csv);
    return text;
}

const modem_curve_data& measured_modem_curves()
{
    static const modem_curve_data data = parse_modem_curves(measured_modem_curves_text());
    return data;
}

} // namespace phy
} // namespace hfstack
} // namespace gr
