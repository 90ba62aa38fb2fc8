/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "wideband_modes.h"

#include "node_engine.h"
#include "phy/waveform_modes.h"

#include <stdexcept>

namespace gr {
namespace hfstack {
namespace dl {

namespace {

std::optional<phy::m110d_interleaver> interleaver_of(uint8_t code)
{
    switch (code) {
    case interleaving_none:
        return phy::m110d_interleaver::ultra_short;
    case interleaving_short:
        return phy::m110d_interleaver::short_;
    case interleaving_long:
        return phy::m110d_interleaver::long_;
    case interleaving_medium:
        return phy::m110d_interleaver::medium;
    default:
        return std::nullopt;
    }
}

uint8_t code_of(phy::m110d_interleaver il)
{
    switch (il) {
    case phy::m110d_interleaver::ultra_short:
        return interleaving_none;
    case phy::m110d_interleaver::short_:
        return interleaving_short;
    case phy::m110d_interleaver::medium:
        return interleaving_medium;
    case phy::m110d_interleaver::long_:
        break;
    }
    return interleaving_long;
}

// 110D Table D-LXIV, AWGN column (dB), WN0..WN13.
constexpr double d_lxiv_awgn_db[14] = {
    -6, -3, 0, 3, 5, 6, 9, 13, 16, 19, 21, 24, 30, 6
};

} // namespace

std::optional<phy::m110d_mode> s5069_mode_of(unsigned bw_khz, const modem_mode& m)
{
    const auto il = interleaver_of(m.interleaving);
    if (!il || m.data_rate > 11)
        return std::nullopt;
    return phy::m110d_mode_for(bw_khz, unsigned(m.data_rate) + 1, *il);
}

std::optional<modem_mode> s5069_node_mode(const phy::m110d_mode& m)
{
    if (m.wn < 1 || m.wn > 12)
        return std::nullopt;
    return modem_mode{ uint8_t(m.wn - 1), code_of(m.interleaver) };
}

node_waveform node_waveform_by_name(const std::string& name)
{
    if (const auto w = phy::waveform_mode_by_name(name); w && w->s5069) {
        const phy::m110d_mode* m = &*w->s5069;
        const auto mode = s5069_node_mode(*m);
        if (!mode)
            throw std::invalid_argument(
                m->name() + ": the node carries STANAG 5069 WN1-WN12 (WN0's Walsh " +
                "modulation and WN13 have no place in its mode ladder)");
        return { m->bw_khz, *mode };
    }
    try {
        return { 0, node_mode_by_name(name) };
    } catch (const std::invalid_argument& e) {
        // A name in the 5069 style that is no mode: the modem's own reason.
        if (name.size() > 1 && (name[0] == 'W' || name[0] == 'w'))
            throw std::invalid_argument(phy::waveform_mode_problem(name));
        throw;
    }
}

std::string waveform_name(unsigned s5069_bandwidth_khz, const modem_mode& m)
{
    if (s5069_bandwidth_khz == 0)
        return to_string(m);
    if (const auto w = s5069_mode_of(s5069_bandwidth_khz, m))
        return w->name();
    return "code " + std::to_string(unsigned(m.data_rate)) + "/" +
           std::to_string(unsigned(m.interleaving)) + " (no mode at " +
           std::to_string(s5069_bandwidth_khz) + " kHz)";
}

phy::waveform_timing waveform_timing_of(unsigned s5069_bandwidth_khz, const modem_mode& m)
{
    if (s5069_bandwidth_khz == 0)
        return default_waveform_timing(m);
    const auto w = s5069_mode_of(s5069_bandwidth_khz, m);
    if (!w)
        throw std::invalid_argument("no STANAG 5069 mode at " +
                                    std::to_string(s5069_bandwidth_khz) + " kHz for " +
                                    waveform_name(s5069_bandwidth_khz, m));
    return w->timing();
}

double s5069_required_snr_db(unsigned wn)
{
    if (wn > 13)
        throw std::invalid_argument("s5069_required_snr_db: WN" + std::to_string(wn) +
                                    " does not exist");
    return d_lxiv_awgn_db[wn];
}

std::vector<rate_policy_entry> s5069_rate_table(unsigned bw_khz,
                                                phy::m110d_interleaver il)
{
    if (il == phy::m110d_interleaver::medium)
        throw std::invalid_argument(
            "STANAG 5069 rate adaptation runs with the US, S or L "
            "interleaver (Table C-6 has no code for M)");
    std::vector<rate_policy_entry> table;
    for (unsigned wn = 1; wn <= 12; ++wn)
        if (const auto m = phy::m110d_mode_for(bw_khz, wn, il))
            table.push_back({ *s5069_node_mode(*m), s5069_required_snr_db(wn) });
    if (table.empty())
        throw std::invalid_argument("no STANAG 5069 modes at " + std::to_string(bw_khz) +
                                    " kHz");
    return table;
}

std::set<modem_mode> s5069_supported_modes(unsigned bw_khz, phy::m110d_interleaver il)
{
    std::set<modem_mode> out;
    for (const auto& e : s5069_rate_table(bw_khz, il))
        out.insert(e.mode);
    return out;
}

} // namespace dl
} // namespace hfstack
} // namespace gr
