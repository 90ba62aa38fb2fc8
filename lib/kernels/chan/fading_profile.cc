/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "fading_profile.h"

#include <cmath>
#include <sstream>
#include <stdexcept>

namespace gr {
namespace hfstack {
namespace chan {

namespace {

struct named_condition {
    const char* name;
    double delay_ms;
    double spread_hz;
};

// shared/spec/channel.json: F.1487 Annex 3 rows and the F.520 names.
const named_condition conditions[] = {
    { "low_latitude_quiet", 0.5, 0.5 },
    { "low_latitude_moderate", 2, 1.5 },
    { "low_latitude_disturbed", 6, 10 },
    { "mid_latitude_quiet", 0.5, 0.1 },
    { "mid_latitude_moderate", 1, 0.5 },
    { "mid_latitude_disturbed", 2, 1 },
    { "mid_latitude_disturbed_nvis", 7, 1 },
    { "high_latitude_quiet", 1, 0.5 },
    { "high_latitude_moderate", 3, 10 },
    { "high_latitude_disturbed", 7, 30 },
    { "good", 0.5, 0.1 },
    { "moderate", 1, 0.5 },
    { "poor", 2, 1 },
    { "flutter", 0.5, 10 },
};

[[noreturn]] void bad(const std::string& field, const std::string& what, double value)
{
    std::ostringstream os;
    os << field << " " << what << ", got " << value;
    throw std::invalid_argument(os.str());
}

void check_non_negative(const std::string& field, double v)
{
    if (!(v >= 0) || !std::isfinite(v))
        bad(field, "must be finite and >= 0", v);
}

} // namespace

fading_profile fading_profile_by_name(const std::string& name)
{
    fading_profile p;
    p.name = name;
    if (name == "awgn")
        return p;
    for (const auto& c : conditions) {
        if (name == c.name) {
            // Two independent equal-power Rayleigh paths, the second delayed.
            p.paths.push_back({ 0.5, c.spread_hz, 0.0, 0.0 });
            p.paths.push_back({ 0.5, c.spread_hz, 0.0, c.delay_ms * 1e-3 });
            return p;
        }
    }
    throw std::invalid_argument("profile \"" + name + "\" is unknown");
}

std::vector<std::string> fading_profile_names()
{
    std::vector<std::string> names{ "awgn" };
    for (const auto& c : conditions)
        names.push_back(c.name);
    return names;
}

std::vector<watterson_path> normalised_paths(const std::vector<watterson_path>& paths,
                                             const std::string& field)
{
    double total = 0;
    for (size_t i = 0; i < paths.size(); ++i) {
        const std::string name = field + "[" + std::to_string(i) + "]";
        const watterson_path& p = paths[i];
        check_non_negative(name + ".power", p.power);
        check_non_negative(name + ".spread_hz", p.spread_hz);
        if (!std::isfinite(p.shift_hz))
            bad(name + ".shift_hz", "must be finite", p.shift_hz);
        check_non_negative(name + ".delay_s", p.delay_s);
        total += p.power;
    }
    if (!paths.empty() && !(total > 0))
        bad(field, "need a total power > 0", total);
    std::vector<watterson_path> out = paths;
    for (watterson_path& p : out)
        p.power /= total;
    return out;
}

uint64_t path_seed(uint64_t seed, uint64_t index)
{
    uint64_t z = seed + 0x9E3779B97F4A7C15ull * (index + 1);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

} // namespace chan
} // namespace hfstack
} // namespace gr
