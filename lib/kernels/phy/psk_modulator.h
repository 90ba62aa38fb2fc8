/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

/* Serial-tone modulator: 8PSK symbol numbers, or constellation points (QAM), at a symbol
 * rate to shaped samples, as complex baseband or as real audio on a carrier.
 *
 * Pulse: root raised cosine (liquid_firdes_rrcos), roll-off 0.35 by default. The 110A
 * spec does not fix the pulse (m110a.json physical.pulse_shape, tagged "?"); RRC 0.35
 * is the recommended common choice; the roll-off is a parameter (the reference core's
 * pulse is narrower than RRC 0.35, see the docs).
 *
 * Any output rate that is a rational multiple L/q of the symbol rate works (8000, 9600,
 * 48000 Hz for 2400 Bd): the pulse is designed at L samples per symbol and only every
 * q-th of those samples is computed. Output power: rms^2 for random symbols, or points
 * of unit mean power (complex: E|x|^2; real: E x^2). A transmission's samples include the
 * pulse tails. */
#ifndef HFSTACK_KERNELS_PHY_PSK_MODULATOR_H
#define HFSTACK_KERNELS_PHY_PSK_MODULATOR_H

#include <complex>
#include <cstdint>
#include <vector>

namespace gr {
namespace hfstack {
namespace phy {

struct psk_modulator_config {
    double symbol_rate = 2400;
    double sample_rate = 9600;
    double carrier_hz = 1800; // real output only
    double rolloff = 0.35;
    unsigned span_symbols = 8; // pulse semi-length
    double rms = 1.0;
};

class psk_modulator
{
public:
    // Throws std::invalid_argument naming the parameter (sample rate not a rational
    // multiple of the symbol rate with a denominator up to 100, roll-off outside (0, 1],
    // carrier outside (0, fs/2), rms not positive).
    explicit psk_modulator(const psk_modulator_config& config);

    std::vector<std::complex<float>> baseband(const std::vector<uint8_t>& symbols) const;
    std::vector<std::complex<float>>
    baseband(const std::vector<std::complex<float>>& points) const;
    // Real audio: Re(baseband * exp(j 2 pi fc t)) * sqrt(2).
    std::vector<float> audio(const std::vector<uint8_t>& symbols) const;
    std::vector<float> audio(const std::vector<std::complex<float>>& points) const;

    // Samples from the start of the output to the centre of symbol 0.
    double delay_samples() const;
    unsigned interpolation() const { return d_up; }
    unsigned decimation() const { return d_down; }
    const psk_modulator_config& config() const { return d_cfg; }

private:
    std::vector<float> to_audio(const std::vector<std::complex<float>>& baseband) const;

    psk_modulator_config d_cfg;
    unsigned d_up = 1, d_down = 1;
    std::vector<float> d_pulse; // at d_up samples per symbol, scaled for unit power
};

} // namespace phy
} // namespace hfstack
} // namespace gr

#endif
