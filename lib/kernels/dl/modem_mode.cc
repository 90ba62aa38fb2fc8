/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "modem_mode.h"

#include <stdexcept>

namespace gr {
namespace hfstack {
namespace dl {

namespace {

constexpr unsigned rate_table_bps[12] = { 75,   150,  300,  600,  1200, 2400,
                                          3200, 3600, 4800, 6400, 8000, 9600 };

// Robustness rank of an interleaver: longer is more robust (App C's lengths in order
// around Table C-6's short and long).
int interleaver_rank(uint8_t il)
{
    static const int rank[8] = { 0, 3, 5, 0, 1, 2, 4, 6 }; // none US VS S M L VL
    return rank[il & 7];
}

// Mode-name letters and the modem's interleaver names by interleaving code (3 is
// reserved in Table C-6).
const char* const interleaver_letters[8] = { "U", "S", "L", "?", "US", "VS", "M", "VL" };
const char* const interleaver_names[8] = { "none",   "short",       "long",
                                           "",       "ultra_short", "very_short",
                                           "medium", "very_long" };

} // namespace

unsigned data_rate_bps(uint8_t code)
{
    return code < 12 ? rate_table_bps[code] : code == rate_12800 ? 12800 : 0;
}

uint8_t data_rate_code(unsigned bps)
{
    for (uint8_t i = 0; i < 12; ++i)
        if (rate_table_bps[i] == bps)
            return i;
    if (bps == 12800)
        return rate_12800;
    throw std::invalid_argument(
        "data rate " + std::to_string(bps) +
        " bps is not in STANAG 5066 Table C-5 (nor App C's 12800)");
}

bool is_valid_mode(const modem_mode& m) { return m.data_rate < 12 && m.interleaving < 3; }

bool less_robust(const modem_mode& a, const modem_mode& b)
{
    if (a.data_rate != b.data_rate)
        return a.data_rate > b.data_rate;
    return interleaver_rank(a.interleaving) < interleaver_rank(b.interleaving);
}

std::string to_string(const modem_mode& m)
{
    // As the modem names the modes: no interleaving is the uncoded 4800U, or the zero
    // interleaver (Z) below 4800 bps.
    const unsigned bps = data_rate_bps(m.data_rate);
    const char* letter = m.interleaving == interleaving_none && bps < 4800
                             ? "Z"
                             : interleaver_letters[m.interleaving & 7];
    return std::to_string(bps) + letter;
}

const char* interleaver_name(uint8_t code)
{
    return code < 8 ? interleaver_names[code] : "";
}

std::optional<uint8_t> interleaving_code(const std::string& name)
{
    for (uint8_t code = 0; code < 8; ++code)
        if (!name.empty() && name == interleaver_names[code])
            return code;
    return std::nullopt;
}

std::set<modem_mode> default_supported_modes()
{
    std::set<modem_mode> s;
    for (uint8_t r = rate_75; r <= rate_9600; ++r) {
        if (r == rate_3600)
            continue;
        s.insert({ r, interleaving_short });
        s.insert({ r, interleaving_long });
    }
    return s;
}

} // namespace dl
} // namespace hfstack
} // namespace gr
