/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "waveform_modes.h"

#include <algorithm>
#include <cctype>
#include <sstream>

namespace gr {
namespace hfstack {
namespace phy {

namespace {

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
    // The zero interleaver's own reason; otherwise both families' examples.
    if (!name.empty() && std::toupper(static_cast<unsigned char>(name.back())) == 'Z' &&
        s4539_timing(name))
        return s4539_mode_problem(name);
    return "neither a STANAG 4539 mode of our modem (e.g. 2400S, 600L, 4800U, 3200US, "
           "9600VL, 12800U) "
           "nor a STANAG 5069 one (WN<n>/<bandwidth>kHz/<US|S|M|L>: bandwidths 3, 6, "
           "..., 24, 30, 36, 42, 48; WN0-WN12, WN13 at 3 kHz only, no WN4 at 9 or 18 "
           "kHz, WN0 has no US; e.g. WN8/3kHz/L, WN12/48kHz/US)";
}

std::vector<std::string> waveform_mode_names()
{
    std::vector<std::string> names;
    for (const std::string& n : s4539_mode_names())
        if (s4539_mode_by_name(n))
            names.push_back(n);
    for (const std::string& n : m110d_mode_names())
        names.push_back(n);
    return names;
}

unsigned waveform_bandwidth_khz(const waveform_mode& mode)
{
    return mode.s5069 ? mode.s5069->bw_khz : 3;
}

double waveform_symbol_rate(const waveform_mode& mode)
{
    return mode.s5069 ? mode.s5069->symbol_rate() : 2400.0;
}

double waveform_carrier_hz(const waveform_mode& mode)
{
    return mode.s5069 ? m110d_modulator_config(*mode.s5069).carrier_hz : 1800.0;
}

std::string waveform_sample_rate_problem(const waveform_mode& mode,
                                         double sample_rate,
                                         bool complex_samples,
                                         double rolloff)
{
    const double symbol_rate = waveform_symbol_rate(mode);
    const double carrier = waveform_carrier_hz(mode);
    const double least = complex_samples ? (1 + rolloff) * symbol_rate
                                         : 2 * carrier + (1 + rolloff) * symbol_rate;
    std::ostringstream os;
    // Real samples: the band on the sub-carrier must stay above 0 Hz (App D's, 300 Hz +
    // BW / 2, leaves room for 1.25 symbol rates: RRC 0.35 up to 6 kHz, 0.25 at every
    // bandwidth).
    if (!complex_samples && carrier < 0.5 * (1 + rolloff) * symbol_rate) {
        os << mode.name << " (" << waveform_bandwidth_khz(mode) << " kHz, " << symbol_rate
           << " Bd on " << carrier << " Hz) reaches below 0 Hz with roll-off " << rolloff
           << ": real samples cannot carry it (complex ones can, or a roll-off of 0.25 "
              "or less)";
        return os.str();
    }
    if (sample_rate >= least)
        return {};
    os << mode.name << " (" << waveform_bandwidth_khz(mode) << " kHz, " << symbol_rate
       << " Bd";
    if (!complex_samples)
        os << " on " << carrier << " Hz";
    os << ") needs " << (complex_samples ? "complex samples at " : "real samples at ")
       << least << " Hz or more, not " << sample_rate << " Hz";
    if (mode.s5069)
        os << " (the modem's own rate for it: " << m110d_sample_rate(mode.s5069->bw_khz)
           << " Hz complex)";
    return os.str();
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
    // App C shares App D's scrambler and tail-biting code, and takes their readings.
    m110c_readings readings;
    readings.scrambler = s5069.readings.scrambler;
    readings.tail_biting = s5069.readings.tail_biting;
    return s4539_transmit_points(*mode.s4539, bytes, n, readings);
}

std::string parse_m110d_transmit_settings(const std::string& text,
                                          m110d_transmit_options& options)
{
    m110d_transmit_options out = options;
    // A whole number from lo to hi, or nullopt.
    const auto number =
        [](const std::string& v, unsigned lo, unsigned hi) -> std::optional<unsigned> {
        if (v.empty() || v.size() > 3 || !std::all_of(v.begin(), v.end(), [](char c) {
                return std::isdigit(static_cast<unsigned char>(c));
            }))
            return std::nullopt;
        const unsigned n = unsigned(std::stoul(v));
        return n >= lo && n <= hi ? std::optional<unsigned>(n) : std::nullopt;
    };
    for (const std::string& token : tokens_of(text)) {
        if (name_of(token) == "superframes") {
            const auto n = number(value_of(token), 1, m110d_max_superframes);
            if (!n)
                return "setting superframes (the preamble's M) takes 1 to 32, not \"" +
                       value_of(token) + "\"";
            out.timing.preamble.superframes = *n;
            continue;
        }
        if (name_of(token) == "tlc_blocks") {
            const auto n = number(value_of(token), 0, 255);
            if (!n)
                return "setting tlc_blocks (the preamble's N) takes 0 to 255, not \"" +
                       value_of(token) + "\"";
            out.timing.preamble.tlc_blocks = *n;
            continue;
        }
        if (name_of(token) == "eot") {
            const std::string v = value_of(token);
            if (v != "on" && v != "off")
                return "setting eot (the final mini-probe extended) takes on or off, not "
                       "\"" +
                       v + "\"";
            out.timing.eot_extension = v == "on";
            continue;
        }
        if (name_of(token) == "constraint_length") {
            const std::string v = value_of(token);
            if (v != "7" && v != "9")
                return "setting constraint_length takes 7 or 9, not \"" + v + "\"";
            out.constraint_length = unsigned(v[0] - '0');
            continue;
        }
        if (name_of(token) == "preamble" || name_of(token) == "frequency_loop" ||
            name_of(token) == "bandwidth_khz" || name_of(token) == "k7_newest_bit" ||
            value_of(token) == "auto")
            return "setting " + token +
                   " is a receiver's (a transmitter sends the readings it is given)";
        const std::string why = m110d_set_reading(out.readings, token);
        if (!why.empty())
            return why + "; or constraint_length=7|9, superframes=1..32, "
                         "tlc_blocks=0..255, eot=on|off";
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
    bool k7_newest_lsb = config.k7_newest_bit_lsb;
    unsigned bandwidth_khz = config.bandwidth_khz;
    for (const std::string& token : tokens_of(text)) {
        if (name_of(token) == "bandwidth_khz") {
            const std::string v = value_of(token);
            const bool digits = !v.empty() && v.size() <= 3 &&
                                std::all_of(v.begin(), v.end(), [](char c) {
                                    return std::isdigit(static_cast<unsigned char>(c));
                                });
            if (!digits || m110d_modes_at(unsigned(std::stoul(v))).empty())
                return "setting bandwidth_khz takes 3, 6, 9, 12, 15, 18, 21, 24, 30, 36, "
                       "42 or 48, not \"" +
                       v + "\"";
            bandwidth_khz = unsigned(std::stoul(v));
            continue;
        }
        // scrambler=auto, tail_biting=auto: the receiver tries both readings.
        if ((name_of(token) == "scrambler" || name_of(token) == "tail_biting") &&
            value_of(token) == "auto") {
            (name_of(token) == "scrambler" ? find_scrambler : find_tail_biting) = true;
            continue;
        }
        // The K = 7 code's bit order, a receiver's reading only (never tried unasked).
        if (name_of(token) == "k7_newest_bit") {
            const std::string v = value_of(token);
            if (v != "msb" && v != "lsb")
                return "setting k7_newest_bit takes msb or lsb, not \"" + v + "\"";
            k7_newest_lsb = v == "lsb";
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
                         "tail_biting=auto, k7_newest_bit=msb|lsb, bandwidth_khz=3..48";
        // A reading named is forced: the receiver no longer finds it.
        if (name_of(token) == "scrambler")
            find_scrambler = false;
        if (name_of(token) == "tail_biting")
            find_tail_biting = false;
        if (name_of(token) == "pn_alignment" || name_of(token) == "wid_parity")
            find = false;
    }
    config.find_scrambler = find_scrambler;
    config.find_tail_biting = find_tail_biting;
    config.k7_newest_bit_lsb = k7_newest_lsb;
    config.readings = r;
    config.find_preamble_readings = find;
    config.follow_frequency_rate = follow_rate;
    config.bandwidth_khz = bandwidth_khz;
    return {};
}

} // namespace phy
} // namespace hfstack
} // namespace gr
