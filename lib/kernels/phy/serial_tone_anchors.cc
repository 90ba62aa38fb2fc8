/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "serial_tone_anchors.h"

#include "serial_tone_channel.h"

#include <algorithm>

namespace gr {
namespace hfstack {
namespace phy {

size_t serial_tone_paths_centre(const channel_tracking_equaliser& eq)
{
    // Not the middle of the tracked taps: a noise tap of the lagging whole-span estimate
    // may be tracked far from the paths (as the channel rises out of a fade), and that
    // moved the 16 off the strongest path, whose alias 16 taps away was then tracked as
    // a path beside it (App C, F.1487 poor, 9600L at 30 dB, channel seed 8: a block
    // lost).
    constexpr double path_share = 0.03;
    const size_t n = eq.channel_symbols();
    const std::vector<double>& profile = eq.energy_profile();
    const std::vector<std::complex<double>>& taps = eq.taps();
    std::vector<double> long_term(n), now(n, 0.0);
    for (size_t i = 0; i < n; ++i)
        long_term[i] = profile[2 * i] + profile[2 * i + 1];
    for (size_t i : eq.tracked_symbol_taps())
        now[i] = std::norm(taps[2 * i]) + std::norm(taps[2 * i + 1]);
    const double long_term_threshold = path_power_threshold(long_term, path_share);
    const double now_threshold = path_share * *std::max_element(now.begin(), now.end());
    size_t first = n, last = 0;
    for (size_t i = 0; i < n; ++i)
        if ((long_term[i] > 0 && long_term[i] >= long_term_threshold) ||
            (now[i] > 0 && now[i] >= now_threshold)) {
            first = std::min(first, i);
            last = i;
        }
    return first < n ? (first + last) / 2 : n / 2;
}

bool serial_tone_probe_anchors::has(uint64_t first) const
{
    for (const anchor& a : d_anchors)
        if (a.first == first)
            return true;
    return false;
}

bool serial_tone_probe_anchors::measure(const serial_tone_samples& input,
                                        uint64_t start,
                                        int64_t timing_shift,
                                        channel_tracking_equaliser& equaliser,
                                        uint64_t first,
                                        const std::vector<cd>& known)
{
    const double ridge = std::max(1e-6, equaliser.noise());
    // Centred on the paths: a path outside the probe_period measured shows as its alias
    // that far away, so a path earlier than the first tracked one, measured from that
    // one on, came out as a phantom path late in the span (tracked, it took a share of
    // the real one's power in every anchor, the two being one to a probe).
    const size_t channel = equaliser.channel_symbols();
    const size_t centre = serial_tone_paths_centre(equaliser);
    const size_t half = d_probe_period / 2;
    const size_t from = std::min(centre > half ? centre - half : 0,
                                 channel > d_probe_period ? channel - d_probe_period : 0);
    std::vector<size_t> span;
    for (size_t i = from; i < std::min(from + d_probe_period, channel); ++i)
        span.push_back(i);
    if (d_since_whole + 1 >= d_whole_interval) {
        std::vector<cd> whole = equaliser.taps();
        if (!measure_known_run(
                input, start, timing_shift, equaliser, span, first, known, ridge, whole))
            return false;
        equaliser.note_measured_channel(whole, span);
        d_since_whole = 0;
    } else {
        ++d_since_whole;
    }
    // The anchor: the tracked taps within the span. A tracked tap outside it is, on a
    // probe, the alias of one inside (only the prior shared the power between the two)
    // and leaves fewer observations than taps; the tracker alone follows it.
    std::vector<size_t> anchored;
    for (size_t i : equaliser.tracked_symbol_taps())
        if (i >= span.front() && i <= span.back())
            anchored.push_back(i);
    if (anchored.empty())
        anchored = equaliser.tracked_symbol_taps();
    std::vector<cd> taps = equaliser.taps();
    if (!measure_known_run(
            input, start, timing_shift, equaliser, anchored, first, known, ridge, taps))
        return false;
    size_t from_q = 0, end_q = 0;
    for (size_t q = 0; q < taps.size(); ++q)
        if (taps[q] != cd()) {
            from_q = end_q == 0 ? q : from_q;
            end_q = q + 1;
        }
    // Scored before the new anchor joins: nothing of this probe is in the one before.
    std::optional<double> score;
    if (!d_anchors.empty() && d_anchors.back().timing_shift == timing_shift) {
        const anchor& before = d_anchors.back();
        score = known_run_prediction_score(input,
                                           start,
                                           timing_shift,
                                           equaliser.precursor_symbols(),
                                           before.taps,
                                           before.nonzero_from,
                                           before.nonzero_end,
                                           first,
                                           known);
    }
    d_anchors.push_back({ first, timing_shift, std::move(taps), from_q, end_q, score });
    return true;
}

std::optional<double> serial_tone_probe_anchors::prediction_score(uint64_t first) const
{
    for (const anchor& a : d_anchors)
        if (a.first == first)
            return a.prediction_score;
    return std::nullopt;
}

void serial_tone_probe_anchors::keep_last(size_t kept)
{
    if (d_anchors.size() > kept)
        d_anchors.erase(d_anchors.begin(), d_anchors.end() - long(kept));
}

const std::vector<std::complex<double>>&
serial_tone_probe_anchors::channel_at(uint64_t s, int64_t shift, size_t window_samples)
{
    // Lagrange through up to two anchors after s and two before it.
    const double half_probe = 0.5 * (double(d_probe_symbols) - 1);
    const auto centre = [&](const anchor& a) { return double(a.first) + half_probe; };
    const double t = double(s);
    size_t after = 0; // the first anchor after s
    while (after + 1 < d_anchors.size() && centre(d_anchors[after]) <= t)
        ++after;
    const size_t last = std::min(after + 1, d_anchors.size() - 1);
    const size_t first = after >= 2 ? after - 2 : 0;
    // Zero where the last call wrote (the rest is zero still).
    if (d_interpolated.size() != window_samples)
        d_interpolated.assign(window_samples, cd());
    else
        std::fill(d_interpolated.begin() + long(d_written_from),
                  d_interpolated.begin() + long(d_written_end),
                  cd());
    d_written_from = window_samples;
    d_written_end = 0;
    for (size_t a = first; a <= last; ++a) {
        double weight = 1;
        for (size_t b = first; b <= last; ++b)
            if (b != a)
                weight *= (t - centre(d_anchors[b])) /
                          (centre(d_anchors[a]) - centre(d_anchors[b]));
        const long moved = long((shift - d_anchors[a].timing_shift) / 2);
        const std::vector<cd>& taps = d_anchors[a].taps;
        // q + moved within the window and the anchor's nonzero taps (zeros added
        // would leave the same values).
        const long ws = long(window_samples);
        const long from =
            std::max({ 0L, -moved, long(d_anchors[a].nonzero_from) - moved });
        const long end =
            std::min({ ws, ws - moved, long(d_anchors[a].nonzero_end) - moved });
        for (long q = from; q < end; ++q)
            d_interpolated[size_t(q)] += weight * taps[size_t(q + moved)];
        if (from < end) {
            d_written_from = std::min(d_written_from, size_t(from));
            d_written_end = std::max(d_written_end, size_t(end));
        }
    }
    return d_interpolated;
}

void serial_tone_equalise_frame_backward(
    const serial_tone_backward_frame& frame,
    const channel_tracking_equaliser& forward,
    const channel_tracking_equaliser_config& settings,
    serial_tone_probe_anchors& anchors)
{
    using cd = std::complex<double>;
    // Reversed, the sample at T/2 index n is at -n: tap q of the channel becomes tap
    // 2 span - q of an equaliser with the precursor and postcursor swapped (one more
    // precursor symbol for the odd phase).
    const size_t span = forward.channel_symbols();
    const size_t pre = forward.precursor_symbols();
    channel_tracking_equaliser_config reversed_config = settings;
    reversed_config.precursor_symbols = unsigned(span - pre);
    reversed_config.postcursor_symbols = unsigned(pre);
    channel_tracking_equaliser reversed(reversed_config);
    const size_t nr = reversed.window_samples(); // 2 span + 2
    std::vector<cd> taps(nr);
    const auto reverse_channel = [&](uint64_t s) {
        const std::vector<cd>& g =
            anchors.channel_at(s, frame.timing_shift, forward.window_samples());
        std::fill(taps.begin(), taps.end(), cd());
        for (size_t q = 0; q < g.size(); ++q)
            taps[2 * span - q] = g[q];
    };
    const uint64_t last = frame.first + frame.data_symbols - 1;
    // Its past: the probe after the frame, nearest last.
    const std::vector<cd> past(frame.probe_after.rbegin(), frame.probe_after.rend());
    reverse_channel(last);
    reversed.start(taps, frame.noise, past);
    const serial_tone_demapper& demapper = *frame.demapper;
    const unsigned nb = demapper.bits_per_symbol();
    std::vector<float> llr(size_t(frame.data_symbols) * nb);
    const std::vector<double>& forward_error = *frame.forward_error;
    std::vector<double> error(forward_error.size()), variance(forward_error.size());
    std::vector<cd> window(nr);
    const serial_tone_samples& input = *frame.input;
    // Reversed symbol -s: window position q holds T/2 index 2 (s + reversed precursor) -
    // q.
    const int64_t reach = int64_t(span - pre);
    for (uint64_t s = last + 1; s-- > frame.first;) {
        // Window position q is sample top - 2 q: read from the derotated run at once
        // where the whole window is held (the same values as one by one).
        const int64_t top =
            int64_t(frame.start) + frame.timing_shift + 4 * (int64_t(s) + reach);
        const int64_t bottom = top - 2 * int64_t(nr - 1);
        const std::complex<float>* run =
            nr > 0 && bottom >= int64_t(input.base()) && top < int64_t(input.total())
                ? input.derotated_run(uint64_t(bottom), uint64_t(top))
                : nullptr;
        if (run) {
            for (size_t q = 0; q < nr; ++q)
                window[q] = cd(run[size_t(top - bottom) - 2 * q]);
        } else {
            for (size_t q = 0; q < nr; ++q) {
                const int64_t i = int64_t(frame.start) + frame.timing_shift +
                                  2 * (2 * (int64_t(s) + reach) - int64_t(q));
                window[q] = i >= int64_t(input.base()) && i < int64_t(input.total())
                                ? cd(input.derotated(uint64_t(i)))
                                : cd();
            }
        }
        reverse_channel(s);
        reversed.rebase_channel(taps);
        const cd z = reversed.equalise(window.data());
        const unsigned position = unsigned(s - frame.first);
        const double v = std::max(1e-3, reversed.estimate_variance());
        cd decision = demapper.demap(z, position, v, &llr[size_t(position) * nb]);
        if (frame.labels) {
            unsigned label = 0;
            for (unsigned b = 0; b < nb; ++b)
                label = (label << 1) | frame.labels[size_t(position) * nb + b];
            decision = demapper.point_of(label, position);
        }
        reversed.decide(decision, frame.labels != nullptr);
        error[position / frame.segment_symbols] += std::norm(z - decision);
        variance[position / frame.segment_symbols] += v;
    }
    const size_t segment_bits = size_t(frame.segment_symbols) * nb;
    for (size_t g = 0; g < error.size(); ++g) {
        if (error[g] >= forward_error[g])
            continue;
        const float scale = serial_tone_llr_scale(error[g], variance[g]);
        const size_t end = std::min(llr.size(), (g + 1) * segment_bits);
        for (size_t b = g * segment_bits; b < end; ++b)
            frame.llr[b] = llr[b] * scale;
    }
}

} // namespace phy
} // namespace hfstack
} // namespace gr
