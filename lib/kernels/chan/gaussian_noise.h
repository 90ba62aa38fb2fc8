/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

/* White Gaussian noise for the sample-level channel, fast and seedable.
 *
 * Box-Muller, vectorised with VOLK: one 64-bit std::mt19937_64 output per sample gives
 * u1 in (0, 1] (upper 32 bits) and the phase (lower 32 bits); r = sqrt(-ln u1) and the
 * complex sample r e^{j phase} is circular Gaussian with E|z|^2 = 1. A real sample is
 * sqrt(2) r cos(phase), with E x^2 = 1. The 32-bit u1 bounds the tail at 6.7 sigma
 * (probability 3e-11 beyond), far below any BER measured here.
 *
 * Samples are made in fixed blocks of 4096 and handed out from there, so sample k of the
 * stream is bit-identical however the calls are cut (VOLK's SIMD and generic code paths
 * differ by ~1e-5 in log2, which near r = 0 would otherwise show). */
#ifndef HFSTACK_KERNELS_CHAN_GAUSSIAN_NOISE_H
#define HFSTACK_KERNELS_CHAN_GAUSSIAN_NOISE_H

#include <complex>
#include <cstdint>
#include <random>
#include <vector>

namespace gr {
namespace hfstack {
namespace chan {

class gaussian_noise
{
public:
    explicit gaussian_noise(uint64_t seed);

    // out[k] += sigma * z_k, z_k circular complex Gaussian with E|z|^2 = 1.
    void add_complex(std::complex<float>* out, size_t n, float sigma);
    // out[k] += sigma * x_k, x_k real Gaussian with E x^2 = 1.
    void add_real(float* out, size_t n, float sigma);

private:
    // Refills d_radius (sqrt(-ln u1)), d_cos and d_sin with the next block.
    void draw();

    std::mt19937_64 d_rng;
    std::vector<float> d_radius, d_phase, d_cos, d_sin;
    size_t d_next; // first unused sample of the block
};

} // namespace chan
} // namespace hfstack
} // namespace gr

#endif
