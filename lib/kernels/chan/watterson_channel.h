/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

/* HF channel simulator at sample level: the Watterson model of ITU-R F.1487.
 *
 * Signal path, in this order:
 *   1. real_signal: the real input becomes its analytic signal (Hilbert transform,
 *      liquid-dsp firhilbf); the rest works on complex samples and the output is the
 *      real part. Delays and gains of an analytic signal are the same operation at
 *      audio passband as at baseband, so nothing else changes.
 *   2. sample-rate offset: the receiving clock runs sample_rate_offset_ppm fast, so the
 *      output has (1 + ppm 1e-6) samples per input sample (liquid-dsp resamp_crcf,
 *      present only while the offset is not 0).
 *   3. tapped delay line: path i is the input delayed by delay_s (split into whole
 *      samples and a fraction; the fraction by a 33-tap Kaiser-windowed sinc from
 *      liquid_firdes_kaiser, error below 2e-4 for |f| <= 0.4 fs; whole-sample delays
 *      use no filter at all), times sqrt(power) times the path's complex Gaussian tap
 *      gain (tap_gain_process: Gaussian Doppler spectrum of two-sigma width spread_hz,
 *      shifted by shift_hz, evaluated at every output sample). Powers are normalised to
 *      sum 1, so the mean received power equals the input power.
 *   4. carrier frequency offset frequency_offset_hz (a VOLK rotator, re-anchored from
 *      the exact phase each call).
 *   5. white Gaussian noise: power snr_db below signal_power, measured in a
 *      noise_bandwidth_hz band (3 kHz by default, the STANAG convention): complex noise
 *      variance signal_power fs / (B snr); for real signals signal_power fs / (2 B snr).
 *
 * signal_power is the mean power of the input while a signal is present (E|x|^2, or
 * E x^2 for real input); it is a parameter, not measured, so bursts with silence between
 * them get the same noise throughout, as on the air.
 *
 * Every output sample is delayed by latency_samples() beyond its path delay (the centre
 * of the fractional-delay filter, plus the Hilbert transform and the resampler when
 * present). A seed gives the same output for the same input cut into the same calls;
 * cut differently, outputs agree to float rounding. Runs without clocks or threads. */
#ifndef HFSTACK_KERNELS_CHAN_WATTERSON_CHANNEL_H
#define HFSTACK_KERNELS_CHAN_WATTERSON_CHANNEL_H

#include "chan/fading_profile.h"
#include "chan/gaussian_noise.h"
#include "chan/tap_gain_process.h"

#include <complex>
#include <cstdint>
#include <limits>
#include <memory>
#include <vector>

namespace gr {
namespace hfstack {
namespace chan {

struct watterson_config {
    double sample_rate_hz = 9600;
    bool real_signal = false;          // real audio in and out (else complex baseband)
    std::vector<watterson_path> paths; // empty: one static path of delay 0 (AWGN only)
    double snr_db = std::numeric_limits<double>::infinity(); // +inf: no noise
    double noise_bandwidth_hz = 3000;
    double signal_power = 1;
    double frequency_offset_hz = 0;
    double sample_rate_offset_ppm = 0; // |ppm| <= 10000
    double max_delay_s = 0.02;         // the delay line's length: no path may exceed it
    uint64_t seed = 1;
};

// A configuration with the paths of a named profile (fading_profile_names()).
watterson_config watterson_preset(const std::string& profile,
                                  double sample_rate_hz,
                                  double snr_db,
                                  uint64_t seed = 1);

class watterson_channel
{
public:
    // Throws std::invalid_argument naming the bad parameter; nothing is clamped.
    explicit watterson_channel(const watterson_config& config);
    ~watterson_channel();
    watterson_channel(const watterson_channel&) = delete;
    watterson_channel& operator=(const watterson_channel&) = delete;

    // Complex baseband (real_signal false): appends the output of n input samples to
    // out and returns how many; exactly n while there is no sample-rate offset.
    size_t process(const std::complex<float>* in,
                   size_t n,
                   std::vector<std::complex<float>>& out);
    // Real signals (real_signal true), likewise.
    size_t process(const float* in, size_t n, std::vector<float>& out);

    // Run-time settings, checked like the constructor's. New paths restart the tap
    // gain processes (seeded from the channel seed and a change count) and keep the
    // delay line; a new sample-rate offset keeps the resampler's history. The
    // resampler exists from the first non-zero offset on: switching one on while
    // running starts it empty (a few samples of ramp) and adds its 12 samples to
    // latency_samples().
    void set_paths(const std::vector<watterson_path>& paths);
    void set_snr_db(double snr_db);
    void set_noise_bandwidth_hz(double bandwidth_hz);
    void set_signal_power(double power);
    void set_frequency_offset_hz(double offset_hz);
    void set_sample_rate_offset_ppm(double ppm);

    const watterson_config& config() const { return d_cfg; } // powers as given
    const std::vector<watterson_path>& normalised_paths() const { return d_paths; }

    // Extra delay of every path, in output samples (see the header comment).
    double latency_samples() const;

    struct statistics {
        uint64_t samples = 0;     // output samples
        double signal_energy = 0; // sum of |output before noise|^2
        double noise_energy = 0;  // sum of |noise|^2
    };
    const statistics& stats() const { return d_stats; }
    // Signal power over noise power in noise_bandwidth_hz, from stats(); +inf without
    // noise, NaN before any output.
    double measured_snr_db() const;

private:
    struct path_state;

    static void validate(const watterson_config& c);
    // Applies edit to a copy of the configuration and keeps it only if it validates.
    template <typename Edit>
    void change(Edit edit)
    {
        watterson_config c = d_cfg;
        edit(c);
        validate(c);
        d_cfg = c;
    }
    void build_paths();
    void update_noise_sigma();
    size_t run(const std::complex<float>* in, size_t n); // result in d_y

    watterson_config d_cfg;
    std::vector<watterson_path> d_paths; // normalised
    std::vector<path_state> d_path_states;
    uint64_t d_path_generation = 0;

    // Delay line: d_history whole samples of the past, then the new input.
    size_t d_history = 0;
    std::vector<std::complex<float>> d_line;
    std::vector<std::complex<float>> d_y, d_delayed, d_gain;

    uint64_t d_output_index = 0; // output samples so far: the time base of the taps
    double d_cfo_cycles = 0;     // carrier offset phase at d_output_index, in cycles
    float d_noise_sigma = 0;
    gaussian_noise d_noise;

    struct liquid_objects;
    std::unique_ptr<liquid_objects> d_liquid;
    std::vector<std::complex<float>> d_resampled, d_analytic;

    statistics d_stats;
};

} // namespace chan
} // namespace hfstack
} // namespace gr

#endif
