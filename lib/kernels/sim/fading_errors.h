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
 *     modes' curves are OUR MODEMS' MEASUREMENTS (phy/modem_curves.h, embedded from
 *     lib/kernels/sim/modem_curves.csv): mode_model below builds each from the mode's
 *     AWGN points, with the EESM beta and the preamble detection SNR fitted to its
 *     fading points.
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
 *     SNR (perfect averaging), beta -> 0 the minimum SNR (no averaging). beta depends on
 *     modulation, code rate and block length: it is fitted per mode (and so per
 *     interleaver) to our modem's fading measurements (bench/bench_curve_fit). EESM
 * ignores the code's finite free distance (a fade longer than the interleaver can still
 * be fatal, which the sampling captures only through the samples), channel estimation
 * losses at high Doppler, and correlation between SNR samples. Without interleaving, the
 * block is a short window and its BER is the mean of the per-sample BERs instead (nothing
 * spreads the fade: the bits in the fade are bad, the others good).
 *   - preamble loss: a burst whose preamble's mean SNR (linear, over the preamble's
 *     duration) is x dB is missed whole with probability
 *     1 / (1 + exp((x - detect_snr_db) / detect_width_db)) (a step at detect_snr_db for
 *     width 0), as our receivers miss a preamble in a fade or in noise (the bench counts
 *     such bursts as lost). Two fitted numbers per mode: the measured loss rates on
 *     fading channels come from where the fades fall, which the SNR process reproduces,
 *     those on AWGN from the detector's own spread.
 */
#ifndef HFSTACK_KERNELS_SIM_FADING_ERRORS_H
#define HFSTACK_KERNELS_SIM_FADING_ERRORS_H

#include "chan/fading_profile.h"
#include "chan/tap_gain_process.h"
#include "phy/modem_curves.h"

#include <cstdint>
#include <deque>
#include <string>
#include <utility>
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

// EESM (see above): -beta * ln(mean_k exp(-snr_k / beta)) over n > 0 linear SNRs,
// computed relative to the smallest so no exponential underflows.
double eesm_effective_snr(const double* snr, size_t n, double beta);

// A measured AWGN curve: the received bursts' BER (rx_errors / rx_bits) of the points,
// ascending SNR, made non-increasing (a point above the lowest BER so far takes that
// BER). Points without a received burst are skipped; points without errors bound the
// tail: after the last point with errors the curve falls at the steeper of its last
// measured slope and 1 decade per dB (a coded waterfall falls faster, not slower), and
// more steeply where needed to pass under each error-free point's 95 % bound (3 /
// rx_bits), down to a floor of 1e-12 (error-free). A point at BER 0.5 is put 5 dB below
// the first one. Throws std::invalid_argument naming "points" when no point has errors.
ber_curve curve_from_points(const std::vector<phy::modem_curve_point>& awgn,
                            double eesm_beta);

// One mode of our modems as the simulator models it: the AWGN curve of its points with
// the fitted EESM beta and fading loss, the fitted preamble detection SNR, and its
// timing.
struct mode_model {
    std::string mode; // "2400S", "9600L", "12800U", ...
    ber_curve curve;
    double detect_snr_db;   // preamble missed below about this mean SNR (dB)
    double detect_width_db; // the logistic's width (dB; 0: a step)
    double fading_loss_db;  // fading_error_config::fading_loss_db
    double bit_rate;        // user bits per second
    double block_s;         // interleaver block (0: none)
    double preamble_s;
    phy::modem_curve_fit fit; // as in the data (source "fitted" or "fallback:MODE")
};

// Every mode with AWGN points and a fit in the embedded data, in the file's order.
const std::vector<mode_model>& measured_mode_models();
// The measured mode a waveform is modelled by: the nearest user bit rate (in ratio), then
// the nearest interleaver block (in ratio; none counts as 10 ms). A waveform of a mode
// not measured (an App C US/VS/M/VL interleaver, a 5069 mode) falls back so onto a
// measured one; mode_model_for(...).mode names which.
const mode_model& mode_model_for(double bit_rate, double block_s);
// Probability that a receiver misses a preamble of mean SNR snr_db (dB; -inf gives 1):
// the logistic above, of a mode_model's detect_snr_db and detect_width_db.
double
preamble_miss_probability(double snr_db, double detect_snr_db, double detect_width_db);
// By name; throws std::invalid_argument naming "mode" when it is not measured.
const mode_model& mode_model_by_name(const std::string& mode);

// The path sets live with the sample-level channel (chan/fading_profile.h). The
// frame-error model keeps each path's delay but does not use it (see above).
using chan::fading_profile;
using chan::fading_profile_by_name;
using chan::fading_profile_names;
using chan::watterson_path;

// The mean SNR (dB) over [t0, t1) of a path whose mean is before_db until the first
// step and each step's from its time on (steps: (time s, dB), ascending): the power
// average over the steps the span crosses, else exactly the value in force at t0.
double stepped_mean_db(double before_db,
                       const std::vector<std::pair<double, double>>& steps_db,
                       double t0,
                       double t1);

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

    // Steps of the mean: from each (time s, SNR dB) on, strictly ascending in time and
    // finite (throws std::invalid_argument naming the field), the mean is the step's
    // instead of the constructor's; the fading itself goes on. Empty: none.
    void set_steps(std::vector<std::pair<double, double>> steps);
    // The mean (power ratio) in force at t.
    double mean_snr_linear_at(double t) const;
    // The mean (dB) over [t0, t1), as stepped_mean_db.
    double mean_snr_db_over(double t0, double t1) const;

    bool fading() const { return d_fading; }
    double mean_snr_db() const { return d_mean_db; }
    double mean_snr_linear() const { return d_mean_linear; }
    double max_spread_hz() const { return d_max_spread; }
    const fading_profile& profile() const { return d_profile; } // powers normalised

private:
    double d_mean_db;
    double d_mean_linear;
    std::vector<std::pair<double, double>> d_steps; // (time s, dB)
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
    // Implementation loss on fading (dB, >= 0): on a fading path each block's effective
    // SNR (each sample's, without interleaving) is lowered by this before the AWGN curve
    // is read: the receiver's channel estimation and tracking cost in fades, which an
    // AWGN curve does not hold. Fitted per mode with the beta. Not applied without
    // fading.
    double fading_loss_db = 0;
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
    fading_error_process(ber_curve curve,
                         fading_snr snr,
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
    // Mean linear SNR over [t0, t1) (t0 <= t1 finite; at least one sample, on the same
    // grid as the blocks'); the same forward-only rule as segments(): call it for a
    // burst's preamble before its segments(). It drops no sample still kept (a span past
    // them all starts afresh), so the next segments() may start where the last one did.
    double mean_snr_linear(double t0, double t1);
    // The earliest time a call may still ask about (-inf before the first).
    double earliest_s() const;
    // True when a call may still ask about t: its SNR samples were not dropped (the exact
    // test segments() and mean_snr_linear() apply, on the sample grid).
    bool reaches_back_to(double t) const;

    double block_s() const { return d_block; }
    double sample_step_s() const { return d_step; }
    double eesm_beta() const { return d_beta; }
    bool interleaved() const { return d_cfg.interleaver_s > 0; }
    const ber_curve& curve() const { return d_curve; }
    fading_snr& snr() { return d_snr; }

private:
    // Makes grid index `first` (index * d_step seconds) the earliest sample kept: drops
    // those before it (unless keep_older), or all when it lies past them; throws if
    // samples before it are needed but already gone.
    void retain_from(int64_t first, bool keep_older = false);
    double compute_block(double block_start, double block_end);

    ber_curve d_curve;
    fading_snr d_snr;
    fading_error_config d_cfg;
    double d_block;
    double d_step;
    double d_beta;
    double d_loss;                // 10^(-fading_loss_db / 10)
    std::deque<double> d_samples; // linear SNRs at grid indices d_first ...
    int64_t d_first = 0;
    std::vector<double> d_scratch; // one block's samples, for EESM
};

} // namespace sim
} // namespace hfstack
} // namespace gr

#endif
