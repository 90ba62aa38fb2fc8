/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "m110c_timing.h"

#include <cctype>
#include <cmath>

namespace gr {
namespace hfstack {
namespace phy {

namespace {
// m110c_appc.json interleaver_code.frames_per_block, in enum order.
constexpr unsigned frames_per_block[] = { 1, 3, 9, 18, 36, 72 };
const char* const interleaver_names[] = { "US", "VS", "S", "M", "L", "VL" };
} // namespace

std::string m110c_mode::name() const
{
    if (!coded)
        return std::to_string(user_bps) + "U";
    return std::to_string(user_bps) + interleaver_names[unsigned(interleaver)];
}

std::optional<m110c_mode> m110c_mode_for(unsigned user_bps, m110c_interleaver interleaver)
{
    m110c_mode m;
    m.user_bps = user_bps;
    m.interleaver = interleaver;
    m.frames_per_block = frames_per_block[unsigned(interleaver)];
    switch (user_bps) { // m110c_appc.json rate_code
    case 3200:
        m.bits_per_symbol = 2;
        break;
    case 4800:
        m.bits_per_symbol = 3;
        break;
    case 6400:
        m.bits_per_symbol = 4;
        break;
    case 8000:
        m.bits_per_symbol = 5;
        break;
    case 9600:
        m.bits_per_symbol = 6;
        break;
    case 12800:
        m.bits_per_symbol = 6;
        m.coded = false;
        m.frames_per_block = 1;
        break;
    default:
        return std::nullopt;
    }
    return m;
}

waveform_timing m110c_mode::timing() const
{
    waveform_timing w;
    w.preamble_s = m110c_preamble_symbols / m110c_symbol_rate;
    w.unit_bits = size_t(std::lround(user_bits_per_frame())) * frames_per_block;
    w.unit_s =
        frames_per_block * (m110c_data_symbols + m110c_probe_symbols) / m110c_symbol_rate;
    w.bit_rate = double(w.unit_bits) / w.unit_s;
    w.trailer_bits = m110c_eom_bits;
    // Every interleaver length divides the 72-frame re-insertion period.
    w.units_per_reinsertion = m110c_reinsert_period_frames / frames_per_block;
    w.reinsertion_s = m110c_reinserted_symbols / m110c_symbol_rate;
    return w;
}

std::optional<m110c_mode> m110c_mode_by_name(const std::string& name)
{
    size_t digits = 0;
    while (digits < name.size() && std::isdigit(static_cast<unsigned char>(name[digits])))
        ++digits;
    if (digits == 0 || digits > 5)
        return std::nullopt;
    const unsigned bps = unsigned(std::stoul(name.substr(0, digits)));
    std::string letters;
    for (char c : name.substr(digits))
        letters += char(std::toupper(static_cast<unsigned char>(c)));
    if (letters == "U")
        return bps == 12800 ? m110c_mode_for(12800, m110c_interleaver::short_)
                            : std::nullopt;
    for (unsigned i = 0; i < 6; ++i)
        if (letters == interleaver_names[i])
            if (auto m = m110c_mode_for(bps, m110c_interleaver(i)); m && m->coded)
                return m;
    return std::nullopt;
}

transmission_time m110c_transmission_time(const m110c_mode& mode, size_t bytes)
{
    return transmission_time_of(mode.timing(), bytes);
}

} // namespace phy
} // namespace hfstack
} // namespace gr
