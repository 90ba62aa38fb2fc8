/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

/* Decoder-aided further passes over an interleaver block, shared by the App C and App D
 * receivers: while a block is received, the equaliser as the block began and every
 * symbol's window, the T/2 timing slip applied before it and (known symbols) what was
 * sent are kept; once the block is decoded and coded again, the block is equalised once
 * more from where it began with the decoder's decisions in place of the equaliser's own:
 * the channel is then tracked, and past symbols cancelled, with far fewer errors, and the
 * new estimates give new LLRs. */
#ifndef HFSTACK_KERNELS_PHY_SERIAL_TONE_BLOCK_PASS_H
#define HFSTACK_KERNELS_PHY_SERIAL_TONE_BLOCK_PASS_H

#include "channel_tracking_equaliser.h"

#include <algorithm>
#include <complex>
#include <cstdint>
#include <memory>
#include <vector>

namespace gr {
namespace hfstack {
namespace phy {

class serial_tone_block_pass
{
public:
    using cd = std::complex<double>;

    // A block begins: the equaliser before its first symbol, the sample grid, and that
    // symbol's number (from the burst's start).
    void begin(const channel_tracking_equaliser& equaliser,
               int64_t timing_shift,
               uint64_t first_symbol)
    {
        d_start.reset(new channel_tracking_equaliser(equaliser));
        d_shift = timing_shift;
        d_first = first_symbol;
        d_symbols.clear();
        d_windows.clear();
        d_offsets.clear();
    }
    // Kept from a begin() until end().
    bool active() const { return bool(d_start); }
    void end() { d_start.reset(); }
    uint64_t first_symbol() const { return d_first; }

    // The block's next symbol: its window and the slip applied before it; a data symbol
    // until known() says otherwise.
    // Windows are kept as one run of samples: each symbol's window is the one before
    // moved on by a symbol (2 T/2 samples) and the slip, so only its new samples are
    // added where the rest matches (checked: a window read partly before the samples
    // kept, zeros there, is kept whole). A 48 kHz long block held a window of 2 x 177
    // samples per symbol, gigabytes.
    void add(const std::vector<cd>& window, int slip)
    {
        const size_t width = window.size();
        const long moved = 2L + slip;
        const size_t previous = d_offsets.empty() ? 0 : d_offsets.back();
        bool overlaps = !d_offsets.empty() && width == d_width && moved >= 0 &&
                        size_t(moved) <= width && previous + width == d_windows.size();
        if (overlaps)
            overlaps = std::equal(window.begin(),
                                  window.end() - moved,
                                  d_windows.begin() + long(previous) + moved);
        d_symbols.push_back({ slip, false, cd() });
        if (overlaps) {
            d_offsets.push_back(previous + size_t(moved));
            d_windows.insert(d_windows.end(), window.end() - moved, window.end());
        } else {
            d_offsets.push_back(d_windows.size());
            d_windows.insert(d_windows.end(), window.begin(), window.end());
        }
        d_width = width;
    }
    // Samples held for the block's windows.
    size_t stored_samples() const { return d_windows.size(); }
    // The symbol added last was known: `sent`.
    void known(cd sent)
    {
        d_symbols.back().known = true;
        d_symbols.back().sent = sent;
    }

    // The block equalised again from its start into `out`. Before each symbol i (0 from
    // the block's first) before(i, equaliser, timing_shift) may adjust the equaliser
    // (e.g. the channel interpolated between probes); a known symbol is decided as sent;
    // data symbol i gives data(i, z, error variance), which returns the point to feed
    // back (the decoder's decision, as good as known).
    template <typename Before, typename Data>
    void replay(channel_tracking_equaliser& out, Before before, Data data) const
    {
        replay(
            out, before, data, [](size_t, const channel_tracking_equaliser&, int64_t) {});
    }
    // As above; after(i, equaliser, timing_shift) follows data symbol i's decision.
    template <typename Before, typename Data, typename After>
    void
    replay(channel_tracking_equaliser& out, Before before, Data data, After after) const
    {
        channel_tracking_equaliser again(*d_start);
        int64_t shift = d_shift;
        for (size_t i = 0; i < d_symbols.size(); ++i) {
            const stored& s = d_symbols[i];
            if (s.slip != 0) {
                again.slip(s.slip);
                shift += 2 * s.slip;
            }
            before(i, again, shift);
            const cd z = again.equalise(&d_windows[d_offsets[i]]);
            if (s.known) {
                again.decide(s.sent, true);
                continue;
            }
            again.decide(data(i, z, std::max(1e-3, again.estimate_variance())), true);
            after(i, again, shift);
        }
        again.take_turn(); // the frequency loop already heard of this block's turn
        out = again;
    }

private:
    struct stored {
        int slip;
        bool known;
        cd sent;
    };
    std::unique_ptr<channel_tracking_equaliser> d_start;
    int64_t d_shift = 0;
    uint64_t d_first = 0;
    size_t d_width = 0;
    std::vector<stored> d_symbols;
    std::vector<cd> d_windows;     // the windows' samples, overlapping windows once
    std::vector<size_t> d_offsets; // symbol i's window: d_windows[d_offsets[i]] on
};

} // namespace phy
} // namespace hfstack
} // namespace gr

#endif
