/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

/* Complex Gaussian tap gain of one Watterson path (ITU-R F.1487 / F.520 model): a
 * zero-mean circular complex Gaussian process of unit mean power whose Doppler power
 * spectrum is Gaussian, S(f) ~ exp(-(f - shift)^2 / (2 sigma^2)), with the quoted
 * "frequency spread" being its two-sigma width: sigma = spread_hz / 2. Its
 * autocorrelation is E[g(t + tau) g*(t)] = exp(-2 pi^2 sigma^2 tau^2) exp(j 2 pi shift
 * tau).
 *
 * How it is made:
 *   - white circular complex Gaussian noise (Box-Muller written here, fed by
 *     std::mt19937_64, so a seed gives the same process with every standard library)
 *     at a low rate fs = samples_per_spread * spread_hz = 16 x spread (32 sigma: the
 *     spectrum is exp(-128) at Nyquist, nothing aliases);
 *   - filtered by a Gaussian FIR whose |H(f)|^2 is that spectrum (time-domain sigma of
 *     1 / (2 sqrt(2) pi sigma), 3.6 samples; truncated at +-4 of them, 31 taps),
 *     normalised to sum h^2 = 1 so the output has unit mean power;
 *   - interpolated between samples by a Catmull-Rom cubic (at 32 samples per sigma the
 *     interpolation error is far below the statistical tolerance of any use);
 *   - rotated by exp(j 2 pi shift t) computed from t itself (exact at any shift).
 *
 * The noise is drawn on the fly: no table, no repeat period. Noise sample n always uses
 * generator outputs 2n and 2n + 1, so a long jump in t discards generator outputs (cheap)
 * instead of filtering them: the value at t depends only on the seed, the time of the
 * first query (the process starts there) and t, not on which times were asked between.
 * Cost: amortised O(1) per query plus O(1) filter work per 1 / fs of elapsed time when
 * queries are dense; O(gap) cheap discards for long gaps.
 *
 * spread_hz == 0 is a static path: the gain is exactly exp(j 2 pi shift t) (1 with no
 * shift). This is the building block of both the frame-level fading error process
 * (sim/fading_errors.h) and a sample-level Watterson channel. */
#ifndef HFSTACK_KERNELS_CHAN_TAP_GAIN_PROCESS_H
#define HFSTACK_KERNELS_CHAN_TAP_GAIN_PROCESS_H

#include <array>
#include <complex>
#include <cstdint>
#include <random>
#include <vector>

namespace gr {
namespace hfstack {
namespace chan {

class tap_gain_process
{
public:
    // Samples of the generated process per Hz of spread (fs = this * spread_hz).
    static constexpr double samples_per_spread = 16.0;

    // spread_hz: two-sigma Doppler spread, >= 0 and finite. shift_hz: Doppler shift,
    // finite (any sign). Throws std::invalid_argument naming the bad parameter.
    tap_gain_process(double spread_hz, double shift_hz, uint64_t seed);

    // The gain at time t (seconds, finite). t must not decrease between calls (equal is
    // fine); throws std::invalid_argument naming "t" otherwise.
    std::complex<double> at(double t);

    // out[k] = scale * at(t0 + k * dt) for k < n, in single precision, and the process
    // ends in the state those calls leave (the shift rotation is advanced by recurrence
    // within a call, so values agree with at() to about 1e-9). t0 as at(); dt finite and
    // > 0. The sample-level channel calls this once per block and path.
    void fill(double t0, double dt, size_t n, float scale, std::complex<float>* out);

    double spread_hz() const { return d_spread_hz; }
    double shift_hz() const { return d_shift_hz; }
    uint64_t seed() const { return d_seed; }
    // Rate of the underlying samples (0 for a static path).
    double sample_rate_hz() const { return d_fs; }
    // Gaussian FIR taps (sum of squares 1); empty for a static path.
    const std::vector<double>& filter_taps() const { return d_taps; }

private:
    void check_time(double t) const;
    // The gain at t before the Doppler shift; t already checked. Starts the process on
    // the first call.
    std::complex<double> unshifted(double t);
    std::complex<double> white_noise();
    // Makes outputs target - 3 .. target available in d_out.
    void advance_to(int64_t target);

    double d_spread_hz;
    double d_shift_hz;
    uint64_t d_seed;
    double d_fs = 0;
    std::vector<double> d_taps;
    std::mt19937_64 d_rng;

    bool d_started = false;
    double d_last_t = 0;
    int64_t d_origin = 0;                      // output 0 lies at time d_origin / fs
    int64_t d_newest = 0;                      // index of the newest noise/output sample
    std::vector<std::complex<double>> d_noise; // ring of the last taps() noise samples
    std::array<std::complex<double>, 4>
        d_out{}; // outputs newest - 3 .. newest, index & 3
};

} // namespace chan
} // namespace hfstack
} // namespace gr

#endif
