/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "block_frequency_equaliser.h"
#include "differential_products.h"
#include "helper_threads.h"

#include <fftw3.h>
#include <volk/volk.h>

#include <algorithm>
#include <cmath>
#include <mutex>
#include <utility>
#include <vector>

namespace gr {
namespace hfstack {
namespace phy {

const std::complex<float>* differential_products::at(const serial_tone_samples& input,
                                                     uint64_t i)
{
    const uint64_t first = i / sps;
    if (d_energy[0].empty() || first < d_from || first > d_from + 2 * d_history) {
        for (unsigned ph = 0; ph < sps; ++ph) {
            d_products[ph].clear();
            d_energy[ph].assign(1, 0.0);
        }
        d_from = first;
    } else if (first > d_from + d_history) {
        const size_t drop = size_t(first - d_from - d_history / 2);
        for (unsigned ph = 0; ph < sps; ++ph) {
            d_products[ph].erase(d_products[ph].begin(),
                                 d_products[ph].begin() +
                                     long(std::min(drop, d_products[ph].size())));
            auto& run = d_energy[ph];
            run.erase(run.begin(), run.begin() + long(std::min(drop, run.size() - 1)));
        }
        d_from += drop;
    }
    const unsigned ph = unsigned(i % sps);
    const size_t need = size_t(first - d_from) + d_terms;
    auto& run = d_energy[ph];
    while (d_products[ph].size() < need) {
        const uint64_t at_i = (d_from + d_products[ph].size()) * sps + ph;
        const std::complex<float> v =
            at_i >= input.base() + sps ? input.at(at_i) * std::conj(input.at(at_i - sps))
                                       : std::complex<float>();
        d_products[ph].push_back(v);
        run.push_back(run.back() + double(std::norm(v)));
    }
    return d_products[ph].data() + (first - d_from);
}

double differential_products::energy(uint64_t i) const
{
    const auto& run = d_energy[i % sps];
    const size_t m = size_t(i / sps - d_from);
    return run[m + d_terms] - run[m];
}

namespace {
// The FFT block's rounding, relative to the products' and rotations' norms (float, a few
// times eps and log2 of the size), and the error in z under which the FFT's sum is kept.
constexpr double fft_rounding = 1e-6;
constexpr double fft_z_error = 0.01;
// The smallest block of sums worth an FFT (fewer: dot products).
constexpr size_t fft_least_block = 16;
} // namespace

// Per polyphase (i mod sps), the sums C for symbols from[ph] .. from[ph] + out[ph].size()
// - 1 (the index of the first product, i / sps), computed together; plans for every
// power of two from the sequence's length (plus 256) to 8 times it, on one pair of
// buffers (FFTW, single precision, FFTW_ESTIMATE).
struct differential_correlator::fft_state {
    size_t terms;
    std::vector<size_t> sizes;
    std::vector<fftwf_plan> forward, inverse;
    std::vector<volk::vector<std::complex<float>>> kernels; // conj(FFT(conj(rot))) / n
    // Per lane (one per thread scoring polyphases side by side), the buffers the plans
    // run on (lane 1's made when first needed, aligned as lane 0's).
    std::array<volk::vector<std::complex<float>>, 2> time, frequency;
    std::array<std::vector<std::complex<float>>, differential_products::sps> out;
    std::array<uint64_t, differential_products::sps> from{};
    // (fft_rounding x the block's norm)^2: a sum's error bound, squared, under the FFT.
    std::array<double, differential_products::sps> error2{};

    explicit fft_state(const volk::vector<std::complex<float>>& conj_rotations)
        : terms(conj_rotations.size())
    {
        size_t n = 1;
        while (n < terms + 256)
            n <<= 1;
        for (; n <= 8 * terms || sizes.empty(); n <<= 1)
            sizes.push_back(n);
        volk::vector<std::complex<float>>& time = this->time[0];
        volk::vector<std::complex<float>>& frequency = this->frequency[0];
        time.assign(sizes.back(), std::complex<float>());
        frequency.assign(sizes.back(), std::complex<float>());
        auto* t = reinterpret_cast<fftwf_complex*>(time.data());
        auto* f = reinterpret_cast<fftwf_complex*>(frequency.data());
        const std::lock_guard<std::mutex> lock(fftw_planning_lock());
        for (size_t m : sizes) {
            forward.push_back(
                fftwf_plan_dft_1d(int(m), t, f, FFTW_FORWARD, FFTW_ESTIMATE));
            inverse.push_back(
                fftwf_plan_dft_1d(int(m), f, t, FFTW_BACKWARD, FFTW_ESTIMATE));
            // The correlation sum_k p(s + k) rot*(k) is the inverse transform of P
            // conj(G), g = rot* (the conjugate rotations conjugated again).
            std::fill(time.begin(), time.end(), std::complex<float>());
            for (size_t k = 0; k < terms; ++k)
                time[k] = std::conj(conj_rotations[k]);
            fftwf_execute(forward.back());
            volk::vector<std::complex<float>> kernel(m);
            for (size_t k = 0; k < m; ++k)
                kernel[k] = std::conj(frequency[k]) / float(m);
            kernels.push_back(std::move(kernel));
        }
    }
    ~fft_state()
    {
        const std::lock_guard<std::mutex> lock(fftw_planning_lock());
        for (fftwf_plan p : forward)
            fftwf_destroy_plan(p);
        for (fftwf_plan p : inverse)
            fftwf_destroy_plan(p);
    }
    fft_state(const fft_state&) = delete;
    fft_state& operator=(const fft_state&) = delete;

    // The sum for products from symbol `first` of polyphase ph: from the block holding
    // it, or a new block from `first` over the products the input holds; false when it
    // holds too few for a block. A new block is built in `lane`'s buffers.
    bool sum(const serial_tone_samples& input,
             uint64_t first,
             unsigned ph,
             unsigned lane,
             std::complex<float>& c,
             double& err2)
    {
        auto& o = out[ph];
        if (first >= from[ph] && first < from[ph] + o.size()) {
            c = o[size_t(first - from[ph])];
            err2 = error2[ph];
            return true;
        }
        constexpr unsigned sps = differential_products::sps;
        const uint64_t total = input.total();
        if (total <= ph)
            return false;
        const uint64_t last = (total - 1 - ph) / sps; // the last product held
        if (last + 1 < first + terms + fft_least_block - 1)
            return false;
        const size_t avail = size_t(last + 2 - first - terms); // sums it can give
        size_t which = 0;
        while (which + 1 < sizes.size() && sizes[which] - terms + 1 < avail)
            ++which;
        const size_t m = sizes[which];
        volk::vector<std::complex<float>>& time = this->time[lane];
        volk::vector<std::complex<float>>& frequency = this->frequency[lane];
        auto* t = reinterpret_cast<fftwf_complex*>(time.data());
        auto* f = reinterpret_cast<fftwf_complex*>(frequency.data());
        const size_t block = std::min(avail, m - terms + 1);
        const size_t used = block + terms - 1;
        double energy = 0;
        for (size_t k = 0; k < used; ++k) {
            const uint64_t i = (first + k) * sps + ph;
            const std::complex<float> v = i >= input.base() + sps
                                              ? input.at(i) * std::conj(input.at(i - sps))
                                              : std::complex<float>();
            time[k] = v;
            energy += double(std::norm(v));
        }
        std::fill(
            time.begin() + long(used), time.begin() + long(m), std::complex<float>());
        // (New-array execution: the same arithmetic on buffers aligned as the plan's.)
        fftwf_execute_dft(forward[which], t, f);
        volk_32fc_x2_multiply_32fc(
            frequency.data(), frequency.data(), kernels[which].data(), unsigned(m));
        fftwf_execute_dft(inverse[which], f, t);
        o.assign(time.begin(), time.begin() + long(block));
        from[ph] = first;
        error2[ph] = fft_rounding * fft_rounding * energy * double(terms);
        c = o[0];
        err2 = error2[ph];
        return true;
    }
};

differential_correlator::differential_correlator(
    const std::vector<std::complex<float>>& known,
    size_t history,
    bool fft,
    double exact_from)
    : d_products(known.size() > 1 ? known.size() - 1 : 1, history),
      d_exact_from(exact_from)
{
    for (size_t k = 1; k < known.size(); ++k)
        d_conj_rotations.push_back(std::conj(known[k] * std::conj(known[k - 1])));
    if (fft && !d_conj_rotations.empty())
        d_fft.reset(new fft_state(d_conj_rotations));
}

differential_correlator::~differential_correlator() = default;
differential_correlator::differential_correlator(differential_correlator&&) noexcept =
    default;
differential_correlator&
differential_correlator::operator=(differential_correlator&&) noexcept = default;

double differential_correlator::z_at(const serial_tone_samples& input,
                                     uint64_t n,
                                     std::complex<float>& sum)
{
    const std::complex<float>* p = d_products.at(input, n + differential_products::sps);
    return z_of(input, n, p, 0, sum);
}

float magnitude(std::complex<float> sum)
{
    const double re = sum.real(), im = sum.imag();
    return float(std::sqrt(re * re + im * im));
}

double differential_correlator::z_of(const serial_tone_samples& input,
                                     uint64_t n,
                                     const std::complex<float>* p,
                                     unsigned lane,
                                     std::complex<float>& sum)
{
    const double e = d_products.energy(n + differential_products::sps);
    if (d_fft) {
        if (!(e > 0)) {
            sum = std::complex<float>();
            return 0.0;
        }
        const uint64_t i = n + differential_products::sps;
        double err2 = 0;
        if (d_fft->sum(input,
                       i / differential_products::sps,
                       unsigned(i % differential_products::sps),
                       lane,
                       sum,
                       err2) &&
            err2 <= fft_z_error * fft_z_error * e) {
            const double z = magnitude(sum) / std::sqrt(e);
            if (z < d_exact_from)
                return z;
        }
    }
    volk_32fc_x2_dot_prod_32fc(
        &sum, p, d_conj_rotations.data(), unsigned(d_conj_rotations.size()));
    return e > 0 ? magnitude(sum) / std::sqrt(e) : 0.0;
}

void differential_correlator::z_run(
    const serial_tone_samples& input,
    uint64_t first,
    size_t count,
    const std::function<void(size_t, double, std::complex<float>)>& put,
    bool two_threads)
{
    constexpr unsigned sps = differential_products::sps;
    std::complex<float> sum;
    // One at a time where the run is short, or long enough for the products' window to
    // move under it (the calls in order would move it part way).
    if (!two_threads || !d_fft || count < 8 * sps ||
        count / sps + 2 > d_products.history() / 2) {
        for (size_t k = 0; k < count; ++k) {
            const double z = z_at(input, first + k, sum);
            put(k, z, sum);
        }
        return;
    }
    // The first call as in order (the products may start afresh there), then each
    // polyphase's last: the window moves (once at most, the run being under half the
    // history) and holds every product the run reads, with the values the calls in
    // order would have pushed; nothing of them changes after.
    put(0, z_at(input, first, sum), sum);
    for (size_t k = count - sps; k < count; ++k)
        d_products.at(input, first + k + sps);
    if (d_fft->time[1].size() != d_fft->time[0].size()) {
        d_fft->time[1].assign(d_fft->time[0].size(), std::complex<float>());
        d_fft->frequency[1].assign(d_fft->frequency[0].size(), std::complex<float>());
    }
    // Each polyphase's calls in order on one lane (its FFT blocks, the only state that
    // changes, are its own), each lane's results kept apart and handed to `put` after,
    // in order (the lanes' neighbouring results written side by side by both threads
    // shared cache lines: a third of the search's time went on them).
    const auto lane_of = [&](size_t k) {
        return unsigned(((first + k + sps) % sps) / 2);
    };
    std::vector<std::pair<double, std::complex<float>>> results[2];
    const auto lane_run = [&](unsigned lane) {
        std::complex<float> s;
        results[lane].reserve(count / 2 + sps);
        for (size_t k = 1; k < count; ++k) {
            if (lane_of(k) != lane)
                continue;
            const uint64_t n = first + k;
            const double z = z_of(input, n, d_products.held(n + sps), lane, s);
            results[lane].emplace_back(z, s);
        }
    };
    run_beside([&] { lane_run(1u); }, [&] { lane_run(0u); });
    size_t taken[2] = { 0, 0 };
    for (size_t k = 1; k < count; ++k) {
        const unsigned lane = lane_of(k);
        const auto& r = results[lane][taken[lane]++];
        put(k, r.first, r.second);
    }
}

} // namespace phy
} // namespace hfstack
} // namespace gr
