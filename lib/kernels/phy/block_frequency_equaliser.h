/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

/* Block frequency-domain equalisation for serial-tone frames whose known probes repeat
 * (STANAG 5069's mini-probes): a frame's U data symbols and the K probe symbols after
 * them form one block of N = U + K, and the probe before the frame, known too, plays the
 * block's cyclic prefix. Where the two probes differ (110D's boundary probes), the
 * difference their channel passes into the block's first samples is taken out first,
 * so the block is exactly a circular convolution as long as the channel is shorter than
 * the probe. One FFT each way per block then equalises any channel that fits, at a cost
 * that does not grow with its length (the MMSE-DFE's solve grows with the cube of its
 * span).
 *
 * The receiver's samples are at T/2: observation y_p[t] (phase p = 0, 1) at symbol time
 * t sees sum over paths g_p[d] s[t - d], delays d in symbols, negative ones allowed (a
 * pulse's precursor, a path before the timing's reference).
 *
 * - probe_channel_estimator: a probe made cyclically from a base of L symbols measures
 *   the channel in the frequency domain: its last L symbols' observations (taken
 *   `precursor` symbols early) are the base's circular convolution with the channel, so
 *   each bin's channel is the received bin over the base's (every D-XXI base has no
 *   spectral zero), every delay from -precursor to K - L - precursor at once.
 * - block_frequency_equaliser: the linear MMSE equaliser of a block (fractionally
 *   spaced: both phases' bins combined), its unbiased estimates and their error
 *   variance; then, given decisions for the whole block (a decoder's, coded again), the
 *   estimates with the intersymbol interference of the decided symbols cancelled
 *   (each symbol's own contribution kept), for decoder-aided passes.
 * No clocks or I/O; FFTW plans are made under one lock (fftw_planning_lock). */
#ifndef HFSTACK_KERNELS_PHY_BLOCK_FREQUENCY_EQUALISER_H
#define HFSTACK_KERNELS_PHY_BLOCK_FREQUENCY_EQUALISER_H

#include <complex>
#include <cstddef>
#include <memory>
#include <mutex>
#include <vector>

namespace gr {
namespace hfstack {
namespace phy {

// FFTW's planner is not reentrant: every plan of the kernels is made and destroyed
// under this lock.
std::mutex& fftw_planning_lock();

// One FFT size's forward and backward plans on one pair of aligned buffers (FFTW,
// single precision, FFTW_ESTIMATE: the same plan, and results, on every run).
class fft_pair
{
public:
    using cf = std::complex<float>;
    explicit fft_pair(size_t n);
    ~fft_pair();
    fft_pair(const fft_pair&) = delete;
    fft_pair& operator=(const fft_pair&) = delete;
    size_t size() const { return d_n; }
    cf* time() { return d_time; }
    cf* frequency() { return d_frequency; }
    void forward();  // time -> frequency, unnormalised
    void backward(); // frequency -> time, unnormalised (n times the inverse)

private:
    size_t d_n;
    cf* d_time;
    cf* d_frequency;
    void* d_forward;
    void* d_backward;
};

// A channel path (delay in symbols, possibly negative) at both T/2 phases.
struct channel_path {
    int delay;
    std::complex<double> g0, g1;
};

class probe_channel_estimator
{
public:
    using cd = std::complex<double>;
    // reference: the L symbols the observation window sees circularly (the probe from
    // index K - L - precursor on, one period of its cyclic base).
    explicit probe_channel_estimator(const std::vector<std::complex<float>>& reference);
    size_t length() const { return d_reference.size(); }
    // y0, y1: L observations each. g0, g1: L taps each, tap d mod L for delay d.
    void estimate(const cd* y0, const cd* y1, std::vector<cd>& g0, std::vector<cd>& g1);
    // The noise power of one estimated tap per unit of noise power per sample.
    double tap_noise_gain() const { return d_tap_noise_gain; }
    // The reference's spectrum (unnormalised FFT), for predicting observations.
    const std::vector<cd>& reference_spectrum() const { return d_spectrum; }

private:
    std::vector<std::complex<float>> d_reference;
    std::vector<cd> d_spectrum;
    std::vector<cd> d_inverse; // 1 / spectrum
    double d_tap_noise_gain = 0;
    std::unique_ptr<fft_pair> d_fft;
};

class block_frequency_equaliser
{
public:
    using cd = std::complex<double>;
    using cf = std::complex<float>;
    // One block's spectra, kept for decoder-aided passes.
    struct block {
        std::vector<cf> y0, y1, g0, g1; // N bins each
        double noise = 1;               // per T/2 sample
    };

    explicit block_frequency_equaliser(size_t block_symbols);
    size_t block_symbols() const { return d_n; }

    // The block's observations y0[i], y1[i] at symbol times t = i - precursor (i = 0 ..
    // N - 1; `precursor` at least the largest negative delay), the channel's paths
    // (delays within [-precursor, K - precursor]), the probe before the block and the
    // one ending it (K symbols each, as sent) and the noise per T/2 sample; unknown
    // symbols' mean power symbol_power. Writes z (N unbiased estimates, the block's
    // symbols 0 .. N - 1) and returns their error variance; `kept` takes the spectra.
    double equalise(const cd* y0,
                    const cd* y1,
                    int precursor,
                    const std::vector<channel_path>& paths,
                    const std::vector<cf>& probe_before,
                    const std::vector<cf>& probe_after,
                    double noise,
                    double symbol_power,
                    cd* z,
                    block* kept = nullptr);
    // With every symbol of the block decided (`decisions`, N), each estimate again with
    // the other symbols' interference cancelled: z[t] = d[t] plus the channel-matched
    // residual; returns the error variance (the noise over the channel's energy).
    double cancel(const block& kept, const cd* decisions, cd* z);
    // Between the two: the iterative block DFE's step for decisions whose correlation
    // with the symbols sent is `rho` (0: equalise()'s linear MMSE; 1: cancel()): the
    // feed-forward weighs the noise against the interference the decisions leave,
    // (1 - rho^2) of it, and rho of the decided symbols' interference is cancelled
    // (each estimate's own decision left out). Returns the error variance the model
    // gives (noise and the decisions' residual interference).
    double iterate(
        const block& kept, const cd* decisions, double rho, double symbol_power, cd* z);

private:
    size_t d_n;
    fft_pair d_fft;
    std::vector<cf> d_spectrum; // scratch
};

} // namespace phy
} // namespace hfstack
} // namespace gr

#endif
