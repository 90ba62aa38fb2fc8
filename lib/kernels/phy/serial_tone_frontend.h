/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

/* Receive front end of the serial-tone modems: input samples (real audio with the
 * signal on a carrier, or complex baseband) at 8000, 9600, 48000 Hz or any other rate
 * to complex baseband at 4 samples per symbol (9600 Hz for 2400 Bd; App D's wider
 * bandwidths: 3200 Hz per kHz, m110d_sample_rate), low-passed to the signal band plus
 * the frequency-offset range.
 *
 * Real audio is mixed down by the carrier (the image at -2 fc is removed by the
 * low-pass); other rates go through liquid-dsp's multi-stage resampler (any ratio: a
 * USRP's 96 or 250 kS/s to 153.6 kHz for 48 kHz); the low-pass (liquid's Kaiser design,
 * cut-off 0.79 of the symbol rate: 1.9 kHz at 2400 Bd; filtered by serial_tone_lowpass,
 * liquid's firfilt's floats at a tenth of its cost) leaves +-0.675 symbol rates of
 * RRC-0.35 signal (1.62 kHz) plus 0.117 (280 Hz) of offset and removes what the
 * equaliser would otherwise have to.
 *
 * Input is processed in fixed blocks of 10 ms (held back until complete), so the output
 * is bit-identical however the input is cut into calls: liquid's SIMD paths round
 * differently at different buffer positions, and at a marginal SNR one rounding can
 * flip a decision downstream. */
#ifndef HFSTACK_KERNELS_PHY_SERIAL_TONE_FRONTEND_H
#define HFSTACK_KERNELS_PHY_SERIAL_TONE_FRONTEND_H

#include <complex>
#include <cstddef>
#include <memory>
#include <vector>

namespace gr {
namespace hfstack {
namespace phy {

struct serial_tone_frontend_config {
    double sample_rate = 9600;
    bool real_input = true;
    double carrier_hz = 1800;  // real input only
    double symbol_rate = 2400; // the output is at 4 samples per symbol
};

class serial_tone_frontend
{
public:
    // Throws std::invalid_argument naming the bad parameter: among them a sample rate
    // that cannot hold the RRC-0.35 signal's band (complex: under 1.35 symbol rates;
    // real: under twice the carrier plus 0.675 symbol rates).
    double output_rate() const { return 4 * d_cfg.symbol_rate; }

    explicit serial_tone_frontend(const serial_tone_frontend_config& config);
    ~serial_tone_frontend();
    serial_tone_frontend(const serial_tone_frontend&) = delete;
    serial_tone_frontend& operator=(const serial_tone_frontend&) = delete;

    // Append the baseband output for n input samples to out.
    void process(const float* in, size_t n, std::vector<std::complex<float>>& out);
    void process(const std::complex<float>* in,
                 size_t n,
                 std::vector<std::complex<float>>& out);

    // Delay from input to output, in output samples.
    double delay_samples() const;
    const serial_tone_frontend_config& config() const { return d_cfg; }

private:
    void run_block(std::vector<std::complex<float>>& out);
    void finish(std::vector<std::complex<float>>& mixed,
                std::vector<std::complex<float>>& out);

    serial_tone_frontend_config d_cfg;
    struct liquid_objects;
    std::unique_ptr<liquid_objects> d_liquid;
    double d_carrier_cycles = 0;
    std::vector<std::complex<float>> d_mixed, d_resampled;
    size_t d_block = 0;           // input samples per block
    std::vector<float> d_real_in; // input waiting for a whole block
    std::vector<std::complex<float>> d_complex_in;
    std::vector<float> d_taps_oldest_first; // the low-pass's, liquid's design
    std::vector<float> d_history;           // the low-pass's input (re, im) held back
};

// The front end's low-pass: out[k] (re, im) = sum over i of taps[i] x[k + i], for k in
// [0, outputs), samples holding outputs + count - 1 complex samples (re, im), oldest
// first. Each sum in tap order, a product rounded before it is added: liquid's
// firfilt_crcf to the bit where liquid runs its portable dot product, at a fraction of
// its cost (eight outputs at a time).
void serial_tone_lowpass(
    const float* taps, size_t count, const float* samples, size_t outputs, float* out);

} // namespace phy
} // namespace hfstack
} // namespace gr

#endif
