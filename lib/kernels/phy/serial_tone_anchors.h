/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

/* The channel between mini-probes, shared by the App C and App D receivers: decisions
 * alone lose whole frames of QAM on fading (one decision error fed to the tracker, and
 * one probe per frame cannot pull the estimate back). Each probe around a data frame is
 * measured by least squares (an anchor): first the whole delay spread the probe's cyclic
 * base determines, for the equaliser to pick up paths it does not track yet, then its
 * tracked taps. The channel under each symbol is the Lagrange interpolation (in time)
 * through up to two anchors before it and two after; the tracker follows the decisions
 * only for the difference (rebase_channel). Also the LLR weight for decisions that err
 * more than the equaliser's variance says. */
#ifndef HFSTACK_KERNELS_PHY_SERIAL_TONE_ANCHORS_H
#define HFSTACK_KERNELS_PHY_SERIAL_TONE_ANCHORS_H

#include "channel_tracking_equaliser.h"
#include "serial_tone_demapper.h"
#include "serial_tone_samples.h"

#include <complex>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

namespace gr {
namespace hfstack {
namespace phy {

// The middle of the channel's paths, where a probe's whole-spread measurement is
// centred: the symbol taps holding a path in the long-term energy profile (3 % of its
// strongest, 6x its median), or tracked and holding 3 % of the strongest tracked tap's
// power now (a path tracked since a probe found it, before the profile has it).
size_t serial_tone_paths_centre(const channel_tracking_equaliser& equaliser);

// The factor a segment's LLRs take when its decisions' squared error exceeds the
// equaliser's variance (errors fed back, a channel the estimate lags): the ratio's
// inverse, else 1. A frame gone wrong becomes an erasure instead of confident errors.
inline float serial_tone_llr_scale(double decision_error, double variance)
{
    return decision_error > variance ? float(variance / decision_error) : 1.0f;
}

class serial_tone_probe_anchors
{
public:
    using cd = std::complex<double>;
    struct anchor {
        uint64_t first;       // burst symbol (from start) of the probe's first symbol
        int64_t timing_shift; // the sample grid it was measured on
        std::vector<cd> taps; // as the equaliser's
        // taps[q] is zero outside [nonzero_from, nonzero_end) (the span is mostly
        // empty at wide bandwidths: the interpolation skips it).
        size_t nonzero_from = 0, nonzero_end = 0;
        // The probe's samples against the anchor before it (known_run_prediction_score:
        // exponential of mean 1 on noise alone); nullopt for the first anchor, or one
        // measured on another sample grid than the anchor before.
        std::optional<double> prediction_score;
    };

    // probe_symbols: a probe's length (its centre is where its anchor sits in time);
    // probe_period: its cyclic base's length, the symbol taps one probe determines.
    void set_probe(unsigned probe_symbols, size_t probe_period)
    {
        d_probe_symbols = probe_symbols;
        d_probe_period = probe_period;
    }
    // The whole spread measured on every `probes`-th probe only (at least 1; the others
    // measure the tracked taps alone): m110d_receiver's time_scale, so that a wide
    // bandwidth's many probes a second look for new paths as often in time as 3 kHz's
    // (the whole spread's least squares, a probe period of taps, was a sixth of the 48
    // kHz receiver's time).
    void set_whole_spread_interval(unsigned probes)
    {
        d_whole_interval = probes > 0 ? probes : 1;
    }
    bool has(uint64_t first) const;
    // The prediction score of the anchor measured on the probe from `first` (nullopt:
    // none, or no longer kept).
    std::optional<double> prediction_score(uint64_t first) const;
    bool empty() const { return d_anchors.empty(); }
    const anchor& last() const { return d_anchors.back(); }
    // The probe `known` sent as burst symbol `first` on (samples as serial_tone_window
    // takes them): the whole spread around the paths measured and noted by the
    // equaliser (note_measured_channel), then its tracked taps within it measured,
    // the tracker's estimate as a prior weighted like one observation at the noise
    // level; the anchor added. False while samples are missing.
    bool measure(const serial_tone_samples& input,
                 uint64_t start,
                 int64_t timing_shift,
                 channel_tracking_equaliser& equaliser,
                 uint64_t first,
                 const std::vector<cd>& known);
    // Keeps the last `kept` anchors (4: the most one symbol's interpolation uses).
    void keep_last(size_t kept = 4);
    void clear()
    {
        d_anchors.clear();
        d_since_whole = 0;
    }
    // The channel under burst symbol s on sample grid `shift` (each anchor moved onto
    // it: a T/2 slip shifts the taps by one), window_samples taps. Needs an anchor.
    const std::vector<cd>& channel_at(uint64_t s, int64_t shift, size_t window_samples);
    // The equaliser's channel based on channel_at (nothing while there is no anchor).
    void rebase(channel_tracking_equaliser& equaliser, uint64_t s, int64_t shift)
    {
        if (!d_anchors.empty())
            equaliser.rebase_channel(channel_at(s, shift, equaliser.window_samples()));
    }

private:
    unsigned d_probe_symbols = 31;
    size_t d_probe_period = 16;
    unsigned d_whole_interval = 1;
    unsigned d_since_whole = 0;    // probes measured since the last whole-spread one
    std::vector<anchor> d_anchors; // oldest first
    std::vector<cd> d_interpolated;
    size_t d_written_from = 0, d_written_end = 0; // d_interpolated is zero outside
};

// A data frame equalised again, last symbol first, by the MMSE-DFE of the time-reversed
// channel (the App C receiver's backward frames, shared with App D): it starts from the
// known probe after the frame and its decision errors run toward the frame's start,
// where the forward ones run toward its end (a QAM decision error in a fade feeds back
// and the frame's rest goes wrong). Each segment of `segment_symbols` (the last may be
// shorter) takes the backward LLRs where the backward decisions erred less than
// forward_error[segment] says, scaled by serial_tone_llr_scale.
struct serial_tone_backward_frame {
    const serial_tone_samples* input;
    uint64_t start;        // burst symbol 0's sample
    int64_t timing_shift;  // the sample grid the frame was equalised on
    uint64_t first;        // burst symbol of the frame's first data symbol
    unsigned data_symbols; // in the frame
    std::vector<std::complex<double>> probe_after; // known symbols after it, as sent
    double noise;                                  // the forward equaliser's
    const serial_tone_demapper* demapper;
    unsigned segment_symbols;
    const std::vector<double>* forward_error; // per segment
    float* llr;            // the frame's LLRs, data_symbols x bits per symbol
    const uint8_t* labels; // the frame's channel bits as decoded, or nullptr (decisions)
};
// forward: the forward equaliser (its span, precursor and window); settings: forgetting,
// decision weight, solve interval, follow_channel and symbol_power for the reversed one.
void serial_tone_equalise_frame_backward(
    const serial_tone_backward_frame& frame,
    const channel_tracking_equaliser& forward,
    const channel_tracking_equaliser_config& settings,
    serial_tone_probe_anchors& anchors);

} // namespace phy
} // namespace hfstack
} // namespace gr

#endif
