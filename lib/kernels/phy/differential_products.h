/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

/* The products p(i) = x(i) x*(i - 1 symbol) of a serial-tone input for a differential
 * correlation against a known symbol sequence (blind to the carrier offset: its
 * rotation per symbol only turns the sum). Kept by polyphase (i mod samples per
 * symbol), so that the terms p(n + k sps), k = 0 .. terms - 1, lie side by side for
 * VOLK's dot product, with running sums of |p|^2 for the correlation's energy. A search
 * moves forward; going back, or far ahead, starts the products afresh. */
#ifndef HFSTACK_KERNELS_PHY_DIFFERENTIAL_PRODUCTS_H
#define HFSTACK_KERNELS_PHY_DIFFERENTIAL_PRODUCTS_H

#include "serial_tone_samples.h"

#include <volk/volk_alloc.hh>

#include <array>
#include <complex>
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

namespace gr {
namespace hfstack {
namespace phy {

class differential_products
{
public:
    static constexpr unsigned sps = 4;
    // terms: products per correlation; history: symbols kept behind the newest start.
    differential_products(size_t terms, size_t history)
        : d_terms(terms), d_history(history)
    {
    }

    // p(i), p(i + sps), ..., p(i + (terms - 1) sps); the input must hold them (samples
    // before base() + sps give 0).
    const std::complex<float>* at(const serial_tone_samples& input, uint64_t i);
    // Sum of |p|^2 over the terms of the last at(i) (same i).
    double energy(uint64_t i) const;
    // The terms at(i) gave, where a later at() of the same polyphase made them held
    // (nothing moved or started afresh since).
    const std::complex<float>* held(uint64_t i) const
    {
        return d_products[i % sps].data() + (i / sps - d_from);
    }
    size_t history() const { return d_history; }

private:
    size_t d_terms, d_history;
    std::array<volk::vector<std::complex<float>>, sps> d_products;
    std::array<std::vector<double>, sps> d_energy; // running sums of |p|^2, from 0
    uint64_t d_from = 0; // symbol index (i / sps) of d_products[.][0]
};

// The peak of a serial-tone preamble search: of the correlations over the threshold,
// the largest, taken once `window` samples have passed it without a larger one. Its
// sum's angle is the carrier's turn per symbol.
struct correlation_peak {
    bool open = false;
    double z = 0;
    uint64_t at = 0;
    std::complex<double> sum;

    // The correlation z (sum) at sample n: true when it is over the threshold and the
    // peak so far (then kept).
    bool offer(double z_n, uint64_t n, std::complex<double> sum_n, double threshold)
    {
        if (z_n < threshold || (open && z_n <= z))
            return false;
        open = true;
        z = z_n;
        at = n;
        sum = sum_n;
        return true;
    }
    // At sample n: true when an open peak is `window` samples behind (it closes; at and
    // offset_hz() give it).
    bool taken(uint64_t n, uint64_t window)
    {
        if (!open || n < at + window)
            return false;
        open = false;
        return true;
    }
    // At `symbol_rate` Bd (2400 for 3 kHz; App D's wider bandwidths pass theirs).
    double offset_hz(double symbol_rate = 2400.0) const
    {
        return std::arg(sum) / 6.283185307179586476925286766559 * symbol_rate;
    }
};

// |z| as glibc's hypotf (std::abs of a complex float) computes it, the squares and their
// sum in double and its root rounded to float: the same floats, without a call per
// candidate in the search.
float magnitude(std::complex<float> z);

// A differential correlation against a known symbol sequence, as a z-score against the
// noise: z = |C| / sqrt(sum |p|^2), C = sum over k of p(n + (k + 1) sps) conj(rotation
// k), rotation k = known[k + 1] conj(known[k]). C's angle is the carrier's turn per
// symbol. C is a dot product of the sequence's length at every sample, or with `fft`
// computed for up to 8 x its length of samples at once (per polyphase, overlap-save: a
// forward and an inverse FFT of the products and the rotations' transform, liquid-dsp's
// FFT), then taken from there: the search of a long sequence (App D's 2560 chips at 48
// kHz) at every sample costs tens of operations a sample rather than thousands. A z from
// the FFT at `exact_from` or over (and with a sum it cannot tell from rounding, where the
// products' energy is tiny against the block's) is computed again by the dot product,
// so a decision at a threshold above exact_from sees the same C as without the FFT.
class differential_correlator
{
public:
    differential_correlator(const std::vector<std::complex<float>>& known,
                            size_t history,
                            bool fft = false,
                            double exact_from = 0);
    ~differential_correlator();
    differential_correlator(differential_correlator&&) noexcept;
    differential_correlator& operator=(differential_correlator&&) noexcept;
    // The z-score of the sequence starting at sample n, and C in `sum`; the input must
    // hold samples up to n + known.size() * sps.
    double z_at(const serial_tone_samples& input, uint64_t n, std::complex<float>& sum);
    // z_at(n) for n = first .. first + count - 1 in that order, each z and sum handed to
    // put(index in the run, z, sum): the same values. With two_threads (and the FFT) the
    // polyphases 2 and 3 on another thread, put called after, in order, on this one.
    void z_run(const serial_tone_samples& input,
               uint64_t first,
               size_t count,
               const std::function<void(size_t, double, std::complex<float>)>& put,
               bool two_threads);
    size_t symbols() const { return d_conj_rotations.size() + 1; }
    bool uses_fft() const { return d_fft != nullptr; }

private:
    struct fft_state;
    // z_at's arithmetic on the terms p (held), the FFT's blocks built in the buffers of
    // `lane` (0 or 1: one per thread).
    double z_of(const serial_tone_samples& input,
                uint64_t n,
                const std::complex<float>* p,
                unsigned lane,
                std::complex<float>& sum);
    volk::vector<std::complex<float>> d_conj_rotations;
    differential_products d_products;
    std::unique_ptr<fft_state> d_fft;
    double d_exact_from = 0;
};

} // namespace phy
} // namespace hfstack
} // namespace gr

#endif
