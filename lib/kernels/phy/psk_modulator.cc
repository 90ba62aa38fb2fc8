/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "psk_modulator.h"

#include <liquid/liquid.h>

#include <cmath>
#include <numeric>
#include <sstream>
#include <stdexcept>

namespace gr {
namespace hfstack {
namespace phy {

namespace {

constexpr double two_pi = 6.283185307179586476925286766559;

[[noreturn]] void bad(const char* parameter, const std::string& what, double value)
{
    std::ostringstream os;
    os << "psk_modulator: " << parameter << " " << what << ", got " << value;
    throw std::invalid_argument(os.str());
}

} // namespace

psk_modulator::psk_modulator(const psk_modulator_config& config) : d_cfg(config)
{
    if (!(d_cfg.symbol_rate > 0) || !std::isfinite(d_cfg.symbol_rate))
        bad("symbol_rate", "must be finite and > 0", d_cfg.symbol_rate);
    if (!(d_cfg.sample_rate >= d_cfg.symbol_rate) || !std::isfinite(d_cfg.sample_rate))
        bad("sample_rate",
            "must be finite and at least the symbol rate",
            d_cfg.sample_rate);
    // sample_rate / symbol_rate = up / down with down <= 100.
    bool found = false;
    for (unsigned down = 1; down <= 100 && !found; ++down) {
        const double up = d_cfg.sample_rate * down / d_cfg.symbol_rate;
        if (std::abs(up - std::round(up)) < 1e-9 && std::round(up) <= 4096) {
            d_up = unsigned(std::round(up));
            d_down = down;
            found = true;
        }
    }
    if (!found)
        bad("sample_rate",
            "must be a simple rational multiple of the symbol rate",
            d_cfg.sample_rate);
    if (!(d_cfg.rolloff > 0 && d_cfg.rolloff <= 1))
        bad("rolloff", "must be in (0, 1]", d_cfg.rolloff);
    if (!(d_cfg.span_symbols >= 1 && d_cfg.span_symbols <= 64))
        bad("span_symbols", "must be in [1, 64]", d_cfg.span_symbols);
    if (!(d_cfg.rms > 0) || !std::isfinite(d_cfg.rms))
        bad("rms", "must be finite and > 0", d_cfg.rms);
    if (!(d_cfg.carrier_hz > 0 && d_cfg.carrier_hz < d_cfg.sample_rate / 2))
        bad("carrier_hz", "must be in (0, sample_rate / 2)", d_cfg.carrier_hz);

    d_pulse.resize(2 * size_t(d_up) * d_cfg.span_symbols + 1);
    liquid_firdes_rrcos(
        d_up, d_cfg.span_symbols, float(d_cfg.rolloff), 0.0f, d_pulse.data());
    // Unit output power for independent unit-power symbols: sum h^2 = up.
    const double energy =
        std::inner_product(d_pulse.begin(), d_pulse.end(), d_pulse.begin(), 0.0);
    const float scale = float(std::sqrt(double(d_up) / energy));
    for (float& h : d_pulse)
        h *= scale;
}

double psk_modulator::delay_samples() const
{
    return double(d_up) * d_cfg.span_symbols / double(d_down);
}

std::vector<std::complex<float>>
psk_modulator::baseband(const std::vector<uint8_t>& symbols) const
{
    std::vector<std::complex<float>> points(symbols.size());
    for (size_t j = 0; j < symbols.size(); ++j)
        points[j] = std::polar(1.0f, float(two_pi / 8 * (symbols[j] & 7)));
    return baseband(points);
}

std::vector<std::complex<float>>
psk_modulator::baseband(const std::vector<std::complex<float>>& points) const
{
    // High-rate index of output n is n * down; symbol j sits at j * up; the pulse spans
    // [j * up, j * up + 2 * up * span].
    const size_t length =
        points.empty() ? 0 : (points.size() - 1) * d_up + d_pulse.size();
    const size_t outputs = (length + d_down - 1) / d_down;
    std::vector<std::complex<float>> out(outputs);
    const long taps = long(d_pulse.size());
    const float rms = float(d_cfg.rms);
    for (size_t n = 0; n < outputs; ++n) {
        const long t = long(n * d_down);
        // Symbols with 0 <= t - j * up < taps.
        long j_last = t / long(d_up);
        long j_first = (t - taps + long(d_up)) / long(d_up);
        if (j_first < 0)
            j_first = 0;
        if (j_last >= long(points.size()))
            j_last = long(points.size()) - 1;
        std::complex<float> acc;
        for (long j = j_first; j <= j_last; ++j) {
            const long tap = t - j * long(d_up);
            if (tap >= 0 && tap < taps)
                acc += points[size_t(j)] * d_pulse[size_t(tap)];
        }
        out[n] = acc * rms;
    }
    return out;
}

std::vector<float> psk_modulator::audio(const std::vector<uint8_t>& symbols) const
{
    return to_audio(baseband(symbols));
}

std::vector<float>
psk_modulator::audio(const std::vector<std::complex<float>>& points) const
{
    return to_audio(baseband(points));
}

std::vector<float>
psk_modulator::to_audio(const std::vector<std::complex<float>>& bb) const
{
    std::vector<float> out(bb.size());
    const double step = d_cfg.carrier_hz / d_cfg.sample_rate;
    const std::complex<double> rotation = std::polar(1.0, two_pi * step);
    std::complex<double> carrier;
    for (size_t n = 0; n < bb.size(); ++n) {
        // Re-anchored from the exact phase now and then, advanced by rotation between.
        if (n % 1024 == 0)
            carrier =
                std::polar(std::sqrt(2.0), two_pi * std::fmod(step * double(n), 1.0));
        out[n] = float(bb[n].real() * carrier.real() - bb[n].imag() * carrier.imag());
        carrier *= rotation;
    }
    return out;
}

} // namespace phy
} // namespace hfstack
} // namespace gr
