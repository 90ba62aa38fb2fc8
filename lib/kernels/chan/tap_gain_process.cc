/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "tap_gain_process.h"

#include <algorithm>
#include <cmath>
#include <sstream>
#include <stdexcept>
#include <string>

namespace gr {
namespace hfstack {
namespace chan {

namespace {

constexpr double two_pi = 6.283185307179586476925286766559;

[[noreturn]] void bad(const char* parameter, const std::string& what, double value)
{
    std::ostringstream os;
    os << "tap_gain_process: " << parameter << " " << what << ", got " << value;
    throw std::invalid_argument(os.str());
}

// Gaussian FIR with |H(f)|^2 = exp(-f^2 / (2 sigma^2)) at sample rate fs: impulse
// response exp(-t^2 / (2 sigma_t^2)) with sigma_t = 1 / (2 sqrt(2) pi sigma), cut at +-4
// sigma_t (the rest holds ~1e-7 of the energy), scaled to unit energy.
std::vector<double> gaussian_taps(double sigma_hz, double fs)
{
    const double sigma_samples = fs / (std::sqrt(2.0) * two_pi * sigma_hz);
    const int half = int(std::ceil(4.0 * sigma_samples));
    std::vector<double> taps(size_t(2 * half + 1));
    double energy = 0;
    for (int k = -half; k <= half; ++k) {
        const double x = double(k) / sigma_samples;
        const double h = std::exp(-0.5 * x * x);
        taps[size_t(k + half)] = h;
        energy += h * h;
    }
    const double scale = 1.0 / std::sqrt(energy);
    for (double& h : taps)
        h *= scale;
    return taps;
}

} // namespace

tap_gain_process::tap_gain_process(double spread_hz, double shift_hz, uint64_t seed)
    : d_spread_hz(spread_hz), d_shift_hz(shift_hz), d_seed(seed), d_rng(seed)
{
    if (!(spread_hz >= 0) || !std::isfinite(spread_hz))
        bad("spread_hz", "must be finite and >= 0", spread_hz);
    if (!std::isfinite(shift_hz))
        bad("shift_hz", "must be finite", shift_hz);
    if (spread_hz > 0) {
        d_fs = samples_per_spread * spread_hz;
        d_taps = gaussian_taps(spread_hz / 2.0, d_fs);
        d_noise.assign(d_taps.size(), std::complex<double>());
    }
}

std::complex<double> tap_gain_process::white_noise()
{
    // Box-Muller with both uniforms from 53 random bits: u1 in (0, 1], u2 in [0, 1).
    // -ln(u1) is exponential with mean 1 = E|w|^2, so each component has variance 1/2.
    const double u1 = 1.0 - double(d_rng() >> 11) * (1.0 / 9007199254740992.0);
    const double u2 = double(d_rng() >> 11) * (1.0 / 9007199254740992.0);
    const double r = std::sqrt(-std::log(u1));
    const double phase = two_pi * u2;
    return { r * std::cos(phase), r * std::sin(phase) };
}

void tap_gain_process::advance_to(int64_t target)
{
    if (target <= d_newest)
        return;
    const int64_t length = int64_t(d_taps.size());
    // Only outputs target - 3 .. target are needed, and they only need the last
    // length + 3 noise samples: skip the noise before them. Each noise sample takes two
    // generator outputs, so discarding keeps the noise sequence (and the process)
    // identical to generating everything.
    const int64_t gap = target - d_newest;
    if (gap > length + 3) {
        const int64_t skip = gap - (length + 3);
        d_rng.discard(2 * uint64_t(skip));
        d_newest += skip;
    }
    while (d_newest < target) {
        ++d_newest;
        const int64_t slot = ((d_newest % length) + length) % length;
        d_noise[size_t(slot)] = white_noise();
        if (d_newest >= target - 3) {
            // Output n = sum_j h[j] w[n - j]: tap j reads the slot j places back.
            std::complex<double> acc;
            int64_t s = slot;
            for (int64_t j = 0; j < length; ++j) {
                acc += d_taps[size_t(j)] * d_noise[size_t(s)];
                s = (s == 0) ? length - 1 : s - 1;
            }
            d_out[size_t(d_newest & 3)] = acc;
        }
    }
}

void tap_gain_process::check_time(double t) const
{
    if (!std::isfinite(t))
        bad("t", "must be finite", t);
    if (d_started && t < d_last_t) {
        std::ostringstream os;
        os << "must not decrease between calls (previous " << d_last_t << ")";
        bad("t", os.str(), t);
    }
}

std::complex<double> tap_gain_process::unshifted(double t)
{
    if (d_fs == 0) {
        d_started = true;
        d_last_t = t;
        return { 1.0, 0.0 };
    }
    const double u = t * d_fs;
    if (!d_started) {
        // Output 0 lies one sample before the first query, so a cubic always has the
        // sample it needs on the left. Noise "before" output 0 starts the filter: the
        // newest noise index is set so that the first advance fills the whole line.
        d_origin = int64_t(std::floor(u)) - 1;
        d_newest = -int64_t(d_taps.size());
        d_started = true;
    }
    d_last_t = t;

    const double x = u - double(d_origin);
    const int64_t i = int64_t(std::floor(x)); // >= 1
    const double f = x - double(i);
    advance_to(i + 2);

    const std::complex<double>& p0 = d_out[size_t((i - 1) & 3)];
    const std::complex<double>& p1 = d_out[size_t(i & 3)];
    const std::complex<double>& p2 = d_out[size_t((i + 1) & 3)];
    const std::complex<double>& p3 = d_out[size_t((i + 2) & 3)];
    // Catmull-Rom: passes through the samples with a continuous derivative.
    return p1 + 0.5 * f *
                    ((p2 - p0) + f * ((2.0 * p0 - 5.0 * p1 + 4.0 * p2 - p3) +
                                      f * (3.0 * (p1 - p2) + p3 - p0)));
}

std::complex<double> tap_gain_process::at(double t)
{
    check_time(t);
    const std::complex<double> g = unshifted(t);
    if (d_shift_hz == 0)
        return g;
    return g * std::polar(1.0, two_pi * std::fmod(d_shift_hz * t, 1.0));
}

void tap_gain_process::fill(
    double t0, double dt, size_t n, float scale, std::complex<float>* out)
{
    check_time(t0);
    if (!(dt > 0) || !std::isfinite(dt))
        bad("dt", "must be finite and > 0", dt);
    if (n == 0)
        return;
    std::complex<double> rotation(1.0, 0.0);
    std::complex<double> step(1.0, 0.0);
    if (d_shift_hz != 0) {
        rotation = std::polar(1.0, two_pi * std::fmod(d_shift_hz * t0, 1.0));
        step = std::polar(1.0, two_pi * std::fmod(d_shift_hz * dt, 1.0));
    }
    if (d_fs == 0 && d_shift_hz == 0) {
        std::fill(out, out + n, std::complex<float>(scale, 0.0f));
        d_started = true;
        d_last_t = t0 + double(n - 1) * dt;
        return;
    }
    for (size_t k = 0; k < n; ++k) {
        const std::complex<double> g = unshifted(t0 + double(k) * dt) * rotation;
        out[k] = std::complex<float>(float(scale * g.real()), float(scale * g.imag()));
        rotation *= step;
    }
}

} // namespace chan
} // namespace hfstack
} // namespace gr
