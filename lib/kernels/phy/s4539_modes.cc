/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "s4539_modes.h"

#include "m110a_timing.h"
#include "m110a_transmitter.h"
#include "m110c_timing.h"
#include "m110c_transmitter.h"

#include <cctype>
#include <string>

namespace gr {
namespace hfstack {
namespace phy {

namespace {

constexpr unsigned serial_rates[] = { 75, 150, 300, 600, 1200, 2400 };
constexpr unsigned high_rates[] = { 3200, 4800, 6400, 8000, 9600 };
const char* const serial_letters[] = { "Z", "S", "L" };
const char* const high_letters[] = { "US", "VS", "S", "M", "L", "VL" };

// Interleaver names in m110c_interleaver order, then "none".
const std::vector<std::string> interleaver_names = {
    "ultra_short", "very_short", "short", "medium", "long", "very_long", "none"
};

} // namespace

std::optional<s4539_mode> s4539_mode_for(unsigned user_bps,
                                         const std::string& interleaver)
{
    s4539_mode m;
    m.user_bps = user_bps;
    m.interleaver = interleaver;
    if (user_bps <= 2400 || (user_bps == 4800 && interleaver == "none")) {
        const m110a_interleaver il = interleaver == "short"  ? m110a_interleaver::short_
                                     : interleaver == "long" ? m110a_interleaver::long_
                                                             : m110a_interleaver::zero;
        if (interleaver != "short" && interleaver != "long" &&
            !(user_bps == 4800 && interleaver == "none"))
            return std::nullopt;
        for (const m110a_waveform& w : m110a_waveforms())
            if (w.user_bps == user_bps && w.interleaver == il) {
                m.serial = &w;
                m.name = w.name;
                return m;
            }
        return std::nullopt;
    }
    if (user_bps == 12800) {
        if (interleaver != "none")
            return std::nullopt;
        m.high = m110c_mode_for(12800, m110c_interleaver::short_);
    } else {
        for (unsigned i = 0; i < 6; ++i)
            if (interleaver == interleaver_names[i])
                m.high = m110c_mode_for(user_bps, m110c_interleaver(i));
        if (!m.high || !m.high->coded)
            return std::nullopt;
    }
    m.name = m.high->name();
    return m;
}

std::optional<s4539_mode> s4539_mode_by_name(const std::string& name)
{
    if (const m110a_waveform* w = m110a_waveform_by_name(name))
        return s4539_mode_for(w->user_bps,
                              w->interleaver == m110a_interleaver::short_  ? "short"
                              : w->interleaver == m110a_interleaver::long_ ? "long"
                                                                           : "none");
    if (const auto high = m110c_mode_by_name(name))
        return s4539_mode_for(high->user_bps,
                              high->coded ? interleaver_names[unsigned(high->interleaver)]
                                          : "none");
    return std::nullopt;
}

std::vector<std::complex<float>> s4539_transmit_points(const s4539_mode& mode,
                                                       const uint8_t* bytes,
                                                       size_t n,
                                                       const m110c_readings& readings)
{
    if (mode.high)
        return m110c_transmit_points(*mode.high, bytes, n, false, readings);
    const std::vector<uint8_t> symbols = m110a_transmit_symbols(*mode.serial, bytes, n);
    const auto& psk8 = m110c_constellation(3);
    std::vector<std::complex<float>> points(symbols.size());
    for (size_t k = 0; k < symbols.size(); ++k)
        points[k] = psk8[symbols[k] & 7];
    return points;
}

std::optional<waveform_timing> s4539_timing(const std::string& mode_name)
{
    size_t digits = 0;
    while (digits < mode_name.size() &&
           std::isdigit(static_cast<unsigned char>(mode_name[digits])))
        ++digits;
    if (digits == 0 || digits > 5)
        return std::nullopt;
    const unsigned bps = unsigned(std::stoul(mode_name.substr(0, digits)));
    std::string letters;
    for (char c : mode_name.substr(digits))
        letters += char(std::toupper(static_cast<unsigned char>(c)));

    if (letters == "U" && bps == 4800)
        return m110a_mode_for(4800, m110a_interleaver::zero)->timing();
    if (bps <= 2400) {
        for (unsigned i = 0; i < 3; ++i)
            if (letters == serial_letters[i])
                if (auto m = m110a_mode_for(bps, m110a_interleaver(i)))
                    return m->timing();
        return std::nullopt;
    }
    if (auto m = m110c_mode_by_name(mode_name))
        return m->timing();
    return std::nullopt;
}

std::string s4539_mode_problem(const std::string& name)
{
    if (s4539_mode_by_name(name))
        return {};
    if (!name.empty() && std::toupper(static_cast<unsigned char>(name.back())) == 'Z' &&
        s4539_timing(name))
        return "the zero interleaver (Z) is not implemented in our modem; use S or L";
    return "not a STANAG 4539 mode of our modem, e.g. 2400S, 600L, 4800U, 3200US, "
           "9600VS, 9600M, "
           "9600VL, 12800U (hfstack-modem --list-modes lists them)";
}

std::vector<std::string> s4539_mode_names()
{
    std::vector<std::string> names;
    for (unsigned bps : serial_rates)
        for (const char* l : serial_letters)
            names.push_back(std::to_string(bps) + l);
    for (unsigned bps : high_rates) {
        if (bps == 4800)
            names.push_back("4800U");
        for (const char* l : high_letters)
            names.push_back(std::to_string(bps) + l);
    }
    names.push_back("12800U");
    return names;
}

} // namespace phy
} // namespace hfstack
} // namespace gr
