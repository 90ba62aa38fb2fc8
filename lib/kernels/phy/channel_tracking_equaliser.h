/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

/* Decision feedback equaliser computed from a tracked channel estimate (the serial-tone
 * receivers' equaliser; fading HF needs it to follow both the channel and the symbol
 * timing without losing itself in deep fades).
 *
 * Model: the received signal at T/2 spacing, as a pair (phase 0, phase 1) per symbol
 * time t, is r_p[t] = sum_m g_p[m] s[t - m] + noise, for m = -precursor .. postcursor.
 * - The channel g is tracked by recursive least squares whose regressor is the symbol
 *   sequence (known symbols, or decisions): unlike an equaliser's input it is white, so
 *   the tracking is well conditioned, and it needs the decisions only, never the
 *   equaliser's taps. Only the taps from the first to the last path (with two symbols
 *   of pulse tail either side) are tracked this way, so it can be fast enough for
 *   fading (a short memory cannot determine many taps); a slow LMS estimate over the
 *   whole span watches for paths appearing elsewhere and, with the long-term energy
 *   profile, selects them. rebase_channel() lets a caller supply the estimate's slow
 *   part (a channel interpolated between known symbols, as the App C receiver does
 *   between its mini-probes), the tracker following the decisions for the rest.
 * - Every `solve_interval` symbols the finite-length MMSE decision feedback equaliser for
 *   the current estimate is solved (feed-forward over the T/2 samples where symbol k's
 *   paths arrive, two symbols before the first and two delay spreads past the last;
 *   feedback cancelling every past symbol), which gives the unbiased symbol estimate
 *   and its error variance: the decoder's LLRs follow the fades. Between solutions the
 *   solution is scaled by the complex gain by which the tracked channel has moved
 *   along the one it was solved for (a single path's fading entirely; solving every
 *   symbol costs several times as much for little more), or (follow_channel) its
 *   feedback and gain are taken through the tracked channel each symbol (paths fading
 *   apart, at the high SNR 64QAM needs). With feedback off it is the linear MMSE
 *   equaliser.
 * - match() queues a window for the tracker without equalising it, and returns the
 *   channel-matched filter's output; energy_profile() gives the long-term path powers
 *   (75 bps Walsh symbols are despread per path from the windows, see m110a_receiver).
 * - The long-term energy profile gives the symbol timing: when it matches the profile
 *   at the start better shifted by T/2 than in place, timing_drift() asks the caller to
 *   move its sample grid by T/2 and slip() re-indexes the estimate to match (fading
 *   moves power between the paths, which keep their places; a clock offset moves them
 *   all; the energy centre followed the fading, and each slip costs a transient).
 * Known symbols have unit energy, unknown ones symbol_power. No clocks or I/O: the
 * caller feeds windows of samples. */
#ifndef HFSTACK_KERNELS_PHY_CHANNEL_TRACKING_EQUALISER_H
#define HFSTACK_KERNELS_PHY_CHANNEL_TRACKING_EQUALISER_H

#include <complex>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <vector>

namespace gr {
namespace hfstack {
namespace phy {

struct channel_tracking_equaliser_config {
    unsigned precursor_symbols = 3;  // channel taps before the reference symbol time
    unsigned postcursor_symbols = 8; // taps after it (the delay spread plus pulse tail)
    double forgetting = 0.97;        // channel tracker (memory ~ 1 / (1 - it) symbols)
    unsigned solve_interval = 24;    // symbols between equaliser solutions
    double decision_weight = 1.0;    // of a decided symbol in the tracker, a known one 1
    bool feedback = true;            // false: linear MMSE equaliser
    // Between solutions: true, the feedback and gain follow the tracked channel (QAM on
    // fading); false, the solution is scaled by one complex gain.
    bool follow_channel = false;
    // Mean power of the unknown symbols on the known symbols' scale (QAM sent at its
    // tables' amplitude beside unit-amplitude probes: 0.58 for 64QAM): the MMSE
    // solution weighs the noise against it, its error variance is in its units, and
    // the whole-span LMS steps by its inverse on decided symbols (as fast as on known).
    double symbol_power = 1.0;
    // The symbol rate over 2400 Bd (the App D receiver at 6-48 kHz: its bandwidth over 3
    // kHz): the whole-span LMS steps on every time_scale-th symbol, the tracked taps are
    // chosen every 240 time_scale symbols and the energy profile remembers 4800
    // time_scale, so they keep their time constants in seconds (fading is as fast in Hz
    // at every bandwidth), at a time_scale-th of the LMS's cost. The forgetting and the
    // solve interval are the caller's to scale (m110d_receiver does). At least 1.
    unsigned time_scale = 1;
    // A large solution's factorisation shared with a second thread (the same taps).
    bool two_threads = false;
};

// The power a tap needs to count as a path, given every tap's: `share` of the
// strongest, and 6x the median (most taps hold no path: the median is the estimate's
// noise floor, which at low SNR reaches `share` of the strongest by itself).
double path_power_threshold(std::vector<double> power, double share);

class channel_tracking_equaliser
{
public:
    using cd = std::complex<double>;

    explicit channel_tracking_equaliser(const channel_tracking_equaliser_config& config);

    // Channel taps per phase (precursor + postcursor + 1).
    unsigned channel_symbols() const { return d_span; }
    unsigned precursor_symbols() const { return d_cfg.precursor_symbols; }
    // T/2 samples of one window: symbol times k - precursor .. k + postcursor, two each.
    size_t window_samples() const { return 2 * size_t(d_span); }

    // Starts from a channel estimate (taps[2 i + p]: tap i, delay i - precursor symbols,
    // phase p), the noise power per sample and the symbols sent before the first one to
    // be equalised (oldest first; missing ones count as zero).
    void
    start(const std::vector<cd>& taps, double noise, const std::vector<cd>& past_symbols);

    // Unbiased estimate of the next symbol from its window.
    cd equalise(const cd* window);
    // The channel-matched filter's output for the next symbol, scaled to unit gain
    // (its error variance: the noise over the channel's energy, interference aside).
    cd match(const cd* window);
    // Queues the next symbol's window for the tracker as equalise() does, keeping the
    // long-term profile, the choice of tracked taps and the turn on equalise()'s
    // schedule, but solves no feed-forward: for a caller that reads its symbols from the
    // windows and taps itself (App D WN0's Walsh symbols; at 48 kHz the solutions were
    // most of its time). equalise() may follow: it solves afresh.
    void track(const cd* window);
    // Error variance of the last estimate (from the equaliser solution: (1 - b) / b
    // with b its bias).
    double estimate_variance() const { return d_estimate_variance; }

    // Commits the symbol the last pending window carried (known, or decided): the
    // feedback history moves on and the channel is updated from the observation whose
    // symbols are now all known. `known` symbols also update the noise estimate.
    // Windows may be equalised ahead of their decisions (feedback off).
    void decide(cd symbol, bool known)
    {
        decide(symbol, known ? 1.0 : d_cfg.decision_weight, known);
    }
    // A decision of the decoder's with its own weight in the tracker (0..1: the
    // probability that it is right, say), counted as known where the weight is 1.
    void decide_weighted(cd symbol, double weight)
    {
        decide(symbol, weight, weight >= 1.0);
    }

    // +1: the channel's paths have moved T/2 later than where they started (the caller
    // should take its samples T/2 later, then call slip(+1)); -1 earlier; else 0.
    // Only between a decide() and the next equalise().
    int timing_drift() const;
    // Mean turn of the channel (radians per symbol) since the last call, measured
    // between equaliser solutions: a residual carrier offset for the caller to remove.
    double take_turn();
    void slip(int direction);

    const std::vector<cd>& taps() const { return d_taps; }
    // The whole-span LMS estimate (the watch for paths not tracked).
    const std::vector<cd>& wide_taps() const { return d_wide; }
    unsigned time_scale() const { return d_cfg.time_scale; }
    // Chooses how the solution follows the channel between solutions
    // (channel_tracking_equaliser_config::follow_channel), e.g. once a mode is known.
    void set_follow_channel(bool on) { d_cfg.follow_channel = on; }
    // Symbols between solutions from the next one on (at least 1).
    void set_solve_interval(unsigned symbols);
    // The unknown symbols' mean power from the next solution on (greater than 0).
    void set_symbol_power(double power);
    // The tracker's forgetting from the next symbol on (in (0, 1]): a longer memory once
    // a mode whose symbols are decided a block of chips at a time is known (App D WN0).
    void set_forgetting(double forgetting);
    double forgetting() const { return d_cfg.forgetting; }
    // Moves the estimate by how much `base` moved since the last call (the first call
    // sets it): a channel interpolated between measurements on known symbols, with the
    // tracker following the decisions for the difference.
    void rebase_channel(const std::vector<cd>& base);
    // A measurement of the channel over some of its taps (as taps(); those not measured
    // zero), e.g. on a probe spanning the whole delay spread: a clear path in it that is
    // not tracked is tracked at once (a path faded out at the start, when it shows).
    void note_measured_channel(const std::vector<cd>& taps,
                               const std::vector<size_t>& measured);
    // The symbol taps (0 .. channel_symbols() - 1) the tracker follows: the paths and
    // their pulse tails.
    const std::vector<size_t>& tracked_symbol_taps() const { return d_tracked; }
    // Long-term mean |tap|^2 per T/2 position (about 2 s at 2400 Bd).
    const std::vector<double>& energy_profile() const { return d_energy_profile; }
    double noise() const { return d_noise; }

private:
    void decide(cd symbol, double weight, bool known);
    // The solution's bookkeeping (turn, profile, tracked taps, the channel solved for),
    // and with `feedforward` the MMSE-DFE itself.
    void solve(bool feedforward = true);
    // sum over taps of conj(solved) * current: how the channel moved since the solution.
    cd projection_on_solved() const;
    void queue_observation(const cd* window);
    void refresh_feedback(); // d_feedback and d_response from the current taps

    channel_tracking_equaliser_config d_cfg;
    unsigned d_span;
    void select_taps();

    std::vector<cd> d_taps;        // 2 * span, zero off the tracked taps
    std::vector<cd> d_wide;        // 2 * span, slow LMS over all taps
    std::vector<cd> d_base;        // the last rebase_channel's base (empty: none yet)
    std::vector<size_t> d_tracked; // symbol taps tracked by RLS
    std::vector<size_t> d_measured_paths; // paths note_measured_channel found untracked
    std::vector<cd> d_inverse;            // tracker's P over the tracked taps
    size_t d_window_first = 0, d_window_end = 0; // feed-forward samples used
    unsigned d_since_select = 0;
    unsigned d_since_wide = 0;   // symbols since the whole-span LMS last stepped
    std::vector<cd> d_gain;      // scratch
    std::vector<cd> d_regressor; // scratch: the tracked taps' symbols of one update
    std::vector<cd> d_history;   // last span symbols, newest last
    // Observations of an equalised, undecided window: the first pair (every symbol in
    // it is known once the window's symbol is) for the whole span, and the pair at the
    // first tracked tap for the tracker (the earliest whose tracked symbols are known:
    // no delay between the newest measurement and the first path).
    struct observation {
        cd wide0, wide1, tracked0, tracked1;
        size_t first_tracked;
    };
    std::deque<observation> d_pending;
    std::vector<cd> d_feedforward;
    std::vector<cd> d_feedback;              // for the symbols 1 .. span - 1 back
    size_t d_feedback_used = 0;              // d_feedback is zero from here on
    std::vector<double> d_energy_profile;    // long-term |g|^2 per T/2 position
    std::vector<double> d_reference_profile; // the profile at the start
    double d_turn = 0; // radians the channel turned over d_turn_symbols
    uint64_t d_turn_symbols = 0;
    double d_noise = 1;
    double d_estimate_variance = 1;
    double d_solved_variance = 1;  // at the last solution
    std::vector<cd> d_solved_taps; // the channel the solution was computed for
    double d_solved_power = 0;
    double d_bias = 1;
    cd d_response = 1; // w^H c_0 for the current channel (the bias, solved)
    unsigned d_since_solve = 0;
    bool d_solved = false;
    bool d_feedforward_solved = false; // the last solve() solved the feed-forward
};

} // namespace phy
} // namespace hfstack
} // namespace gr

#endif
