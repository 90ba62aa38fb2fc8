/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

/* Fading frame-error process for the discrete-event simulator: how bad the decoded bits
 * of each interleaver block are on a Watterson (Rayleigh-fading) HF path.
 *
 * Three parts:
 *   - ber_curve: decoded BER of one modem mode versus SNR (dB in 3 kHz) on AWGN. The
 *     defaults are a generic coded-waterfall shape placed at each mode's AWGN
 *     requirement SNR; they are PLACEHOLDERS until our modem's measured curves replace
 *     them (construct a ber_curve from the measured points).
 *   - fading_snr: the SNR the modem sees, mean_snr * sum_i p_i |g_i(t)|^2 over the
 *     profile's paths (each a chan::tap_gain_process), powers p_i normalised to sum 1.
 *     The path delays are kept for reference but unused: this model ignores frequency
 *     selectivity, because an equalising serial-tone modem collects the power of all
 *     paths within its equaliser span (F.1487 delays are <= 7 ms); what fades is the
 *     total power.
 *   - fading_error_process: per interleaver block, the BER the decoder delivers, from
 *     the block's effective SNR by exponential effective-SNR mapping (EESM):
 *         snr_eff = -beta * ln( mean_k exp(-snr_k / beta) )   (linear SNRs)
 *     over SNR samples snr_k spread across the block. Why: the interleaver spreads a
 *     fade over the whole block, so the decoder sees the block's average reliability,
 *     not the instantaneous SNR; EESM averages the per-symbol Chernoff error exponents
 *     exp(-snr / beta) and maps the result back to the AWGN SNR with the same exponent.
 *     beta sets how much a deep fade weighs: beta -> infinity gives the arithmetic mean
 *     SNR (perfect averaging), beta -> 0 the minimum SNR (no averaging). Limits: beta
 *     really depends on modulation, code rate and block length and should be fitted to
 *     measured fading curves; EESM ignores the code's finite free distance (a fade
 *     longer than the interleaver can still be fatal, which the sampling captures only
 *     through the samples), channel estimation losses at high Doppler, and
 *     correlation between SNR samples. Without interleaving, the block is a short window
 *     and its BER is the mean of the per-sample BERs instead (nothing spreads the fade:
 *     the bits in the fade are bad, the others good).
 */
#ifndef HFSTACK_KERNELS_SIM_FADING_ERRORS_H
#define HFSTACK_KERNELS_SIM_FADING_ERRORS_H

#include "chan/fading_profile.h"
#include "chan/tap_gain_process.h"

#include <cstdint>
#include <deque>
#include <string>
#include <vector>

namespace gr {
namespace hfstack {
namespace sim {

struct ber_point {
    double snr_db; // dB in 3 kHz
    double ber;    // decoded bit error rate, 0 < ber <= 0.5
};

// BER versus SNR on AWGN: log10(BER) interpolated linearly in SNR (dB) between points,
// clamped at the ends (below the first point: the first BER, ~0.5; above the last: the
// last BER, a floor - end a curve with a tiny BER to mean error-free).
class ber_curve
{
public:
    // points: at least 2, SNR finite and strictly increasing, BER in (0, 0.5] and
    // non-increasing. eesm_beta: the EESM beta (linear SNR in 3 kHz) recommended for the
    // mode, > 0 and finite. Throws std::invalid_argument naming the field.
    explicit ber_curve(std::vector<ber_point> points, double eesm_beta = 1.0);

    // Throws std::invalid_argument for a NaN SNR; -inf gives the first BER.
    double ber(double snr_db) const;
    double ber_linear(double snr_linear) const; // snr as a power ratio (>= 0)
    // Lowest SNR (dB) at which the curve reaches `ber` (0 < ber < 0.5); +inf if never.
    double snr_db_for(double ber) const;

    const std::vector<ber_point>& points() const { return d_points; }
    double eesm_beta() const { return d_beta; }

private:
    std::vector<ber_point> d_points;
    std::vector<double> d_log_ber;
    double d_beta;
};

// The default coded-waterfall shape, shifted so that BER = 1e-5 at requirement_snr_db:
//   offset (dB)  -10   -6    -4    -3    -1.75  0     +1.75  +3.5  +5.25
//   BER          0.5   1e-1  2e-2  5e-3  1e-3   1e-5  1e-7   1e-9  1e-11 (floor)
// i.e. about two decades per 1.75 dB around 1e-5 (a rate-1/2 K=7 Viterbi decoder's
// waterfall), flattening to 0.5 about 10 dB below the requirement.
ber_curve coded_waterfall_curve(double requirement_snr_db, double eesm_beta = 1.0);

// Requirement SNR (dB in 3 kHz) for BER 1e-5 of a mode, keyed by user bit rate.
// PLACEHOLDERS until our modem's measured curves replace them; the sources are in
// `source` and in shared/anchors.md section E (project shared directory).
struct mode_requirement {
    unsigned user_bps;
    double awgn_snr_db;  // where the default curve has BER 1e-5
    double poor_snr_db;  // same on 2 paths 2 ms / 1 Hz ("poor"); NaN if not given
    double eesm_beta;    // EESM beta for the mode's constellation (see .cc)
    const char* waveform;
    const char* source;
};
// 75, 150, 300, 600, 1200, 2400 (MIL-STD-188-110A serial tone) and 3200, 4800, 6400,
// 8000, 9600, 12800 (STANAG 4539 / 110C App C high rate), ascending.
const std::vector<mode_requirement>& default_mode_requirements();
// Throws std::invalid_argument naming user_bps for a rate not in the table.
const mode_requirement& default_mode_requirement(unsigned user_bps);
// coded_waterfall_curve(awgn requirement, mode's beta).
ber_curve default_ber_curve(unsigned user_bps);

// The path sets live with the sample-level channel (chan/fading_profile.h). The
// frame-error model keeps each path's delay but does not use it (see above).
using chan::fading_profile;
using chan::fading_profile_by_name;
using chan::fading_profile_names;
using chan::watterson_path;

class fading_snr
{
public:
    // mean_snr_db finite; path powers finite, >= 0, summing to > 0; spreads and shifts
    // as tap_gain_process; delays finite and >= 0. Path i gets its own seed mixed from
    // `seed` and i. Throws std::invalid_argument naming the field.
    fading_snr(double mean_snr_db, fading_profile profile, uint64_t seed);

    // Instantaneous SNR (power ratio) at t; t must not decrease between calls.
    double snr_linear(double t);
    double snr_db(double t);

    bool fading() const { return d_fading; }
    double mean_snr_db() const { return d_mean_db; }
    double mean_snr_linear() const { return d_mean_linear; }
    double max_spread_hz() const { return d_max_spread; }
    const fading_profile& profile() const { return d_profile; } // powers normalised

private:
    double d_mean_db;
    double d_mean_linear;
    fading_profile d_profile;
    std::vector<chan::tap_gain_process> d_gains;
    bool d_fading = false;
    double d_max_spread = 0;
};

struct fading_error_config {
    // Interleaver block duration (s); 0 = not interleaved: windows of
    // uninterleaved_window_s each get the mean of their samples' BERs.
    double interleaver_s = 0;
    // Window when not interleaved (s, > 0): short against a fade at <= 1 Hz spread
    // (fades last a few hundred ms) and a handful of 110A data frames long.
    double uninterleaved_window_s = 0.1;
    // Longest spacing of SNR samples (s, > 0). The spacing used is the smallest of this,
    // block / 8 and 1 / (10 * largest spread).
    double max_sample_step_s = 0.005;
    // EESM beta (linear SNR in 3 kHz); 0 = the curve's eesm_beta().
    double eesm_beta = 0;
};

// Throws std::invalid_argument naming the field for NaN, infinite or negative values
// (and a zero window or step).
void validate(const fading_error_config& c);

struct error_segment {
    double start_s;
    double end_s;
    double ber; // decoded bits on air in [start_s, end_s) are bad with this probability
};

class fading_error_process
{
public:
    fading_error_process(ber_curve curve, fading_snr snr,
                         fading_error_config config = fading_error_config());

    // Segments tiling [t0, t1) exactly (none if t0 == t1), one per block overlapped;
    // blocks are [tx_start + k * block, tx_start + (k + 1) * block), aligned to
    // tx_start (the start of the data part), and a segment's BER is that of its whole
    // block, also when [t0, t1) covers only part of it. Requires finite
    // tx_start <= t0 <= t1. Calls must go forward: a call may not need SNR samples from
    // before the first block of the previous call (re-asking about the same
    // transmission is fine); throws std::invalid_argument naming the field otherwise.
    std::vector<error_segment> segments(double tx_start, double t0, double t1);
    void segments(double tx_start, double t0, double t1, std::vector<error_segment>& out);

    // BER of the block [block_start, block_start + block_s()).
    double block_ber(double block_start);

    double block_s() const { return d_block; }
    double sample_step_s() const { return d_step; }
    double eesm_beta() const { return d_beta; }
    bool interleaved() const { return d_cfg.interleaver_s > 0; }
    const ber_curve& curve() const { return d_curve; }
    fading_snr& snr() { return d_snr; }

private:
    // Drops the SNR samples before grid index `first` (index * d_step seconds); throws if
    // samples before it are needed but already gone.
    void retain_from(int64_t first);
    double compute_block(double block_start, double block_end);

    ber_curve d_curve;
    fading_snr d_snr;
    fading_error_config d_cfg;
    double d_block;
    double d_step;
    double d_beta;
    std::deque<double> d_samples; // linear SNRs at grid indices d_first ...
    int64_t d_first = 0;
};

} // namespace sim
} // namespace hfstack
} // namespace gr

#endif
