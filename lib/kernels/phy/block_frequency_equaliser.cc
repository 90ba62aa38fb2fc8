/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "block_frequency_equaliser.h"

#include <fftw3.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace gr {
namespace hfstack {
namespace phy {

namespace {
// The bias of an estimate under which the block is taken as carrying nothing (its
// variance then says so).
constexpr double least_bias = 1e-6;
} // namespace

std::mutex& fftw_planning_lock()
{
    static std::mutex m;
    return m;
}

fft_pair::fft_pair(size_t n) : d_n(n)
{
    if (n == 0)
        throw std::invalid_argument("fft_pair: size 0");
    d_time = reinterpret_cast<cf*>(fftwf_malloc(sizeof(cf) * n));
    d_frequency = reinterpret_cast<cf*>(fftwf_malloc(sizeof(cf) * n));
    std::fill(d_time, d_time + n, cf());
    std::fill(d_frequency, d_frequency + n, cf());
    auto* t = reinterpret_cast<fftwf_complex*>(d_time);
    auto* f = reinterpret_cast<fftwf_complex*>(d_frequency);
    const std::lock_guard<std::mutex> lock(fftw_planning_lock());
    d_forward = fftwf_plan_dft_1d(int(n), t, f, FFTW_FORWARD, FFTW_ESTIMATE);
    d_backward = fftwf_plan_dft_1d(int(n), f, t, FFTW_BACKWARD, FFTW_ESTIMATE);
}

fft_pair::~fft_pair()
{
    {
        const std::lock_guard<std::mutex> lock(fftw_planning_lock());
        fftwf_destroy_plan(static_cast<fftwf_plan>(d_forward));
        fftwf_destroy_plan(static_cast<fftwf_plan>(d_backward));
    }
    fftwf_free(d_time);
    fftwf_free(d_frequency);
}

void fft_pair::forward() { fftwf_execute(static_cast<fftwf_plan>(d_forward)); }
void fft_pair::backward() { fftwf_execute(static_cast<fftwf_plan>(d_backward)); }

probe_channel_estimator::probe_channel_estimator(
    const std::vector<std::complex<float>>& reference)
    : d_reference(reference)
{
    const size_t l = reference.size();
    if (l == 0)
        throw std::invalid_argument("probe_channel_estimator: empty reference");
    d_fft.reset(new fft_pair(l));
    std::copy(reference.begin(), reference.end(), d_fft->time());
    d_fft->forward();
    d_spectrum.resize(l);
    d_inverse.resize(l);
    double sum = 0;
    for (size_t f = 0; f < l; ++f) {
        d_spectrum[f] = cd(d_fft->frequency()[f]);
        // A reference with a spectral zero measures nothing there (no D-XXI base has
        // one; a tiny floor keeps a degenerate one finite).
        const double power = std::max(std::norm(d_spectrum[f]), 1e-9 * double(l));
        d_inverse[f] = std::conj(d_spectrum[f]) / power;
        sum += 1.0 / power;
    }
    d_tap_noise_gain = sum / double(l);
}

void probe_channel_estimator::estimate(const cd* y0,
                                       const cd* y1,
                                       std::vector<cd>& g0,
                                       std::vector<cd>& g1)
{
    using cf = std::complex<float>;
    const size_t l = length();
    for (int p = 0; p < 2; ++p) {
        const cd* y = p == 0 ? y0 : y1;
        std::vector<cd>& g = p == 0 ? g0 : g1;
        for (size_t i = 0; i < l; ++i)
            d_fft->time()[i] = cf(y[i]);
        d_fft->forward();
        for (size_t f = 0; f < l; ++f)
            d_fft->frequency()[f] = cf(cd(d_fft->frequency()[f]) * d_inverse[f]);
        d_fft->backward();
        g.resize(l);
        for (size_t i = 0; i < l; ++i)
            g[i] = cd(d_fft->time()[i]) / double(l);
    }
}

block_frequency_equaliser::block_frequency_equaliser(size_t block_symbols)
    : d_n(block_symbols), d_fft(block_symbols), d_spectrum(block_symbols)
{
}

double block_frequency_equaliser::equalise(const cd* y0,
                                           const cd* y1,
                                           int precursor,
                                           const std::vector<channel_path>& paths,
                                           const std::vector<cf>& probe_before,
                                           const std::vector<cf>& probe_after,
                                           double noise,
                                           double symbol_power,
                                           cd* z,
                                           block* kept)
{
    const long n = long(d_n);
    const long k = long(probe_after.size());
    if (probe_before.size() != probe_after.size() || k == 0 || k >= n)
        throw std::invalid_argument("block_frequency_equaliser: probes of another size");
    for (const channel_path& path : paths)
        if (path.delay < -precursor || path.delay > k - precursor)
            throw std::invalid_argument(
                "block_frequency_equaliser: a path outside the probe's reach");
    block local;
    block& b = kept ? *kept : local;
    b.noise = noise;
    // The observations placed circularly (symbol time t at t mod N), less what the probe
    // before passed into them beyond what the block's own probe would have (zero where
    // the two are the same).
    std::vector<cd> difference(static_cast<size_t>(k));
    bool probes_differ = false;
    for (long j = 0; j < k; ++j) {
        difference[size_t(j)] = cd(probe_before[size_t(j)]) - cd(probe_after[size_t(j)]);
        probes_differ = probes_differ || difference[size_t(j)] != cd();
    }
    for (int p = 0; p < 2; ++p) {
        const cd* y = p == 0 ? y0 : y1;
        for (long i = 0; i < n; ++i) {
            const long t = i - precursor;
            cd value = y[i];
            if (probes_differ)
                for (const channel_path& path : paths) {
                    const long tau = t - path.delay; // symbol the path brings in
                    if (tau < 0 && tau >= -k)
                        value -=
                            (p == 0 ? path.g0 : path.g1) * difference[size_t(k + tau)];
                }
            d_fft.time()[(t + n) % n] = cf(value);
        }
        d_fft.forward();
        (p == 0 ? b.y0 : b.y1).assign(d_fft.frequency(), d_fft.frequency() + n);
        std::fill(d_fft.time(), d_fft.time() + n, cf());
        for (const channel_path& path : paths)
            d_fft.time()[(path.delay + n) % n] += cf(p == 0 ? path.g0 : path.g1);
        d_fft.forward();
        (p == 0 ? b.g0 : b.g1).assign(d_fft.frequency(), d_fft.frequency() + n);
    }
    // X(f) = (G0* Y0 + G1* Y1) / (|G0|^2 + |G1|^2 + noise / power); its mean gain over
    // the bins is the estimate's bias.
    const double ridge = noise / symbol_power;
    double bias = 0;
    for (long f = 0; f < n; ++f) {
        const cd g0(b.g0[size_t(f)]), g1(b.g1[size_t(f)]);
        const double s = std::norm(g0) + std::norm(g1);
        const cd x =
            (std::conj(g0) * cd(b.y0[size_t(f)]) + std::conj(g1) * cd(b.y1[size_t(f)])) /
            (s + ridge);
        d_fft.frequency()[f] = cf(x);
        bias += s / (s + ridge);
    }
    bias = std::clamp(bias / double(n), least_bias, 1.0 - least_bias);
    d_fft.backward();
    for (long i = 0; i < n; ++i)
        z[i] = cd(d_fft.time()[i]) / (double(n) * bias);
    return symbol_power * (1.0 - bias) / bias;
}

double block_frequency_equaliser::cancel(const block& kept, const cd* decisions, cd* z)
{
    const size_t n = d_n;
    if (kept.y0.size() != n)
        throw std::invalid_argument("block_frequency_equaliser: a block of another size");
    for (size_t i = 0; i < n; ++i)
        d_fft.time()[i] = cf(decisions[i]);
    d_fft.forward();
    double energy = 0;
    for (size_t f = 0; f < n; ++f) {
        const cd g0(kept.g0[f]), g1(kept.g1[f]), d(d_fft.frequency()[f]);
        const cd r0 = cd(kept.y0[f]) - g0 * d, r1 = cd(kept.y1[f]) - g1 * d;
        d_fft.frequency()[f] = cf(std::conj(g0) * r0 + std::conj(g1) * r1);
        energy += std::norm(g0) + std::norm(g1);
    }
    energy = std::max(energy / double(n), least_bias);
    d_fft.backward();
    for (size_t i = 0; i < n; ++i)
        z[i] = decisions[i] + cd(d_fft.time()[i]) / (double(n) * energy);
    return kept.noise / energy;
}

double block_frequency_equaliser::iterate(
    const block& kept, const cd* decisions, double rho, double symbol_power, cd* z)
{
    const size_t n = d_n;
    if (kept.y0.size() != n)
        throw std::invalid_argument("block_frequency_equaliser: a block of another size");
    rho = std::clamp(rho, 0.0, 1.0);
    const double ridge = kept.noise / symbol_power, open = 1.0 - rho * rho;
    // F_p = G_p* / (ridge + (1 - rho^2) S), A = sum F_p G_p, gamma its mean:
    // u = F Y - rho (A - gamma) D, z = u / gamma.
    for (size_t i = 0; i < n; ++i)
        d_fft.time()[i] = cf(decisions[i]);
    d_fft.forward();
    double gamma = 0;
    d_spectrum.assign(n, cf());
    std::vector<double> a(n), s(n);
    for (size_t f = 0; f < n; ++f) {
        const cd g0(kept.g0[f]), g1(kept.g1[f]);
        s[f] = std::norm(g0) + std::norm(g1);
        a[f] = s[f] / (ridge + open * s[f]);
        gamma += a[f];
    }
    gamma = std::max(gamma / double(n), least_bias);
    double noise_part = 0, interference_part = 0;
    for (size_t f = 0; f < n; ++f) {
        const cd g0(kept.g0[f]), g1(kept.g1[f]);
        const double denominator = ridge + open * s[f];
        const cd u = (std::conj(g0) * cd(kept.y0[f]) + std::conj(g1) * cd(kept.y1[f])) /
                         denominator -
                     rho * (a[f] - gamma) * cd(d_fft.frequency()[f]);
        d_fft.frequency()[f] = cf(u);
        noise_part += kept.noise * s[f] / (denominator * denominator);
        interference_part += (a[f] - gamma) * (a[f] - gamma);
    }
    d_fft.backward();
    for (size_t i = 0; i < n; ++i)
        z[i] = cd(d_fft.time()[i]) / (double(n) * gamma);
    return (noise_part + symbol_power * open * interference_part) /
           (double(n) * gamma * gamma);
}

} // namespace phy
} // namespace hfstack
} // namespace gr
