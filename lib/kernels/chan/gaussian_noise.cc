/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "gaussian_noise.h"

#include <volk/volk.h>

#include <algorithm>
#include <cmath>

namespace gr {
namespace hfstack {
namespace chan {

namespace {

constexpr float two_pi_f = 6.28318530717958647692f;
constexpr float ln2_f = 0.69314718055994530942f;
constexpr size_t block = 4096;

} // namespace

gaussian_noise::gaussian_noise(uint64_t seed)
    : d_rng(seed),
      d_radius(block),
      d_phase(block),
      d_cos(block),
      d_sin(block),
      d_next(block)
{
}

void gaussian_noise::draw()
{
    for (size_t k = 0; k < block; ++k) {
        const uint64_t r = d_rng();
        // u1 = (hi + 1) / 2^32 in (0, 1]; phase in [-pi, pi) keeps sin/cos accurate.
        d_radius[k] = float(double((r >> 32) + 1) * (1.0 / 4294967296.0));
        d_phase[k] = two_pi_f * (float(uint32_t(r)) * (1.0f / 4294967296.0f) - 0.5f);
    }
    volk_32f_log2_32f(d_radius.data(), d_radius.data(), unsigned(block));
    volk_32f_s32f_multiply_32f(d_radius.data(), d_radius.data(), -ln2_f, unsigned(block));
    // -ln(1) can come out as a tiny negative number: clamp before the square root.
    for (float& r : d_radius)
        r = std::max(r, 0.0f);
    volk_32f_sqrt_32f(d_radius.data(), d_radius.data(), unsigned(block));
    volk_32f_cos_32f(d_cos.data(), d_phase.data(), unsigned(block));
    volk_32f_sin_32f(d_sin.data(), d_phase.data(), unsigned(block));
    d_next = 0;
}

void gaussian_noise::add_complex(std::complex<float>* out, size_t n, float sigma)
{
    while (n > 0) {
        if (d_next == block)
            draw();
        const size_t m = std::min(n, block - d_next);
        for (size_t k = 0; k < m; ++k) {
            const float r = sigma * d_radius[d_next + k];
            out[k] += std::complex<float>(r * d_cos[d_next + k], r * d_sin[d_next + k]);
        }
        d_next += m;
        out += m;
        n -= m;
    }
}

void gaussian_noise::add_real(float* out, size_t n, float sigma)
{
    const float scale = sigma * std::sqrt(2.0f);
    while (n > 0) {
        if (d_next == block)
            draw();
        const size_t m = std::min(n, block - d_next);
        for (size_t k = 0; k < m; ++k)
            out[k] += scale * d_radius[d_next + k] * d_cos[d_next + k];
        d_next += m;
        out += m;
        n -= m;
    }
}

} // namespace chan
} // namespace hfstack
} // namespace gr
