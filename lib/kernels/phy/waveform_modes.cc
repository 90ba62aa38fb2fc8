/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "waveform_modes.h"

#include <cctype>

namespace gr {
namespace hfstack {
namespace phy {

namespace {

constexpr unsigned receivable_bw_khz = 3;

// NAME=VALUE tokens separated by spaces or commas.
std::vector<std::string> tokens_of(const std::string& text)
{
    std::vector<std::string> out;
    std::string token;
    for (char c : text) {
        if (std::isspace(static_cast<unsigned char>(c)) || c == ',') {
            if (!token.empty())
                out.push_back(token);
            token.clear();
        } else {
            token += c;
        }
    }
    if (!token.empty())
        out.push_back(token);
    return out;
}

std::string name_of(const std::string& token) { return token.substr(0, token.find('=')); }

std::string value_of(const std::string& token)
{
    const size_t eq = token.find('=');
    return eq == std::string::npos ? std::string() : token.substr(eq + 1);
}

} // namespace

std::string m110d_interleaver_word(m110d_interleaver il)
{
    switch (il) {
    case m110d_interleaver::ultra_short:
        return "ultra_short";
    case m110d_interleaver::short_:
        return "short";
    case m110d_interleaver::medium:
        return "medium";
    case m110d_interleaver::long_:
        return "long";
    }
    return "short";
}

std::optional<waveform_mode> waveform_mode_by_name(const std::string& name)
{
    waveform_mode m;
    if (auto s = s4539_mode_by_name(name)) {
        m.name = s->name;
        m.user_bps = s->user_bps;
        m.interleaver = s->interleaver;
        m.s4539 = std::move(s);
        return m;
    }
    if (auto d = m110d_mode_by_name(name)) {
        if (d->bw_khz != receivable_bw_khz)
            return std::nullopt;
        m.name = d->name();
        m.user_bps = d->user_bps();
        m.interleaver = m110d_interleaver_word(d->interleaver);
        m.s5069 = d;
        return m;
    }
    return std::nullopt;
}

std::string waveform_mode_problem(const std::string& name)
{
    if (waveform_mode_by_name(name))
        return {};
    if (const auto d = m110d_mode_by_name(name))
        return "STANAG 5069 " + d->name() + " is " + std::to_string(d->bw_khz) +
               " kHz wide; the modem sends and receives the 3 kHz modes only (WN0/3kHz/S "
               ".. "
               "WN13/3kHz/L)";
    // The zero interleaver's own reason; otherwise both families' examples.
    if (!name.empty() && std::toupper(static_cast<unsigned char>(name.back())) == 'Z' &&
        s4539_timing(name))
        return s4539_mode_problem(name);
    return "neither a STANAG 4539 mode of our modem (e.g. 2400S, 600L, 4800U, 3200US, "
           "9600VL, 12800U) "
           "nor a STANAG 5069 one at 3 kHz (WN0-WN13 with interleaver US, S, M or L, "
           "e.g. WN8/3kHz/L; "
           "WN0 has no US)";
}

std::vector<std::string> waveform_mode_names()
{
    std::vector<std::string> names;
    for (const std::string& n : s4539_mode_names())
        if (s4539_mode_by_name(n))
            names.push_back(n);
    for (const m110d_mode& m : m110d_modes_at(receivable_bw_khz))
        names.push_back(m.name());
    return names;
}

std::optional<waveform_timing> waveform_timing_by_name(const std::string& name)
{
    if (auto t = s4539_timing(name))
        return t;
    if (const auto d = m110d_mode_by_name(name))
        return d->timing();
    return std::nullopt;
}

std::vector<std::complex<float>>
waveform_transmit_points(const waveform_mode& mode,
                         const uint8_t* bytes,
                         size_t n,
                         const m110d_transmit_options& s5069)
{
    if (mode.s5069)
        return m110d_transmit_points(*mode.s5069, bytes, n, s5069);
    return s4539_transmit_points(*mode.s4539, bytes, n);
}

std::string parse_m110d_transmit_settings(const std::string& text,
                                          m110d_transmit_options& options)
{
    m110d_transmit_options out = options;
    for (const std::string& token : tokens_of(text)) {
        if (name_of(token) == "constraint_length") {
            const std::string v = value_of(token);
            if (v != "7" && v != "9")
                return "setting constraint_length takes 7 or 9, not \"" + v + "\"";
            out.constraint_length = unsigned(v[0] - '0');
            continue;
        }
        if (name_of(token) == "preamble" || name_of(token) == "frequency_loop" ||
            value_of(token) == "auto")
            return "setting " + token +
                   " is a receiver's (a transmitter sends the readings it is given)";
        const std::string why = m110d_set_reading(out.readings, token);
        if (!why.empty())
            return why + "; or constraint_length=7|9";
    }
    options = out;
    return {};
}

std::string parse_m110d_receive_settings(const std::string& text,
                                         m110d_receiver_config& config)
{
    m110d_readings r = config.readings;
    bool find = config.find_preamble_readings;
    bool follow_rate = config.follow_frequency_rate;
    bool find_scrambler = config.find_scrambler;
    bool find_tail_biting = config.find_tail_biting;
    for (const std::string& token : tokens_of(text)) {
        // scrambler=auto, tail_biting=auto: the receiver tries both readings.
        if ((name_of(token) == "scrambler" || name_of(token) == "tail_biting") &&
            value_of(token) == "auto") {
            (name_of(token) == "scrambler" ? find_scrambler : find_tail_biting) = true;
            continue;
        }
        if (name_of(token) == "preamble") {
            const std::string v = value_of(token);
            if (v != "find" && v != "configured")
                return "setting preamble takes find or configured, not \"" + v + "\"";
            find = v == "find";
            continue;
        }
        if (name_of(token) == "frequency_loop") {
            const std::string v = value_of(token);
            if (v != "first_order" && v != "second_order")
                return "setting frequency_loop takes first_order or second_order, not "
                       "\"" +
                       v + "\"";
            follow_rate = v == "second_order";
            continue;
        }
        if (name_of(token) == "constraint_length")
            return "setting constraint_length is a transmitter's (the receiver reads it "
                   "from the "
                   "preamble's WID)";
        const std::string why = m110d_set_reading(r, token);
        if (!why.empty())
            return why + "; or preamble=find|configured, "
                         "frequency_loop=first_order|second_order, scrambler=auto, "
                         "tail_biting=auto";
        if (name_of(token) == "scrambler")
            find_scrambler = false;
        if (name_of(token) == "tail_biting")
            find_tail_biting = false;
    }
    config.find_scrambler = find_scrambler;
    config.find_tail_biting = find_tail_biting;
    config.readings = r;
    config.find_preamble_readings = find;
    config.follow_frequency_rate = follow_rate;
    return {};
}

} // namespace phy
} // namespace hfstack
} // namespace gr
