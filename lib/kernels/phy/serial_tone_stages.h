/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

/* The serial-tone receivers' stages, shared by the 110A and App C receivers: a search
 * for a burst's start, its preamble read, then data (with a watch for a new preamble
 * cutting in), run on the samples already in until none makes progress; then the input
 * behind what any stage may still read is let go. No clocks or I/O. */
#ifndef HFSTACK_KERNELS_PHY_SERIAL_TONE_STAGES_H
#define HFSTACK_KERNELS_PHY_SERIAL_TONE_STAGES_H

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace gr {
namespace hfstack {
namespace phy {

enum class serial_tone_stage { search, preamble, data };

// State needs: stage, start, found_at, search(), preamble(), data(done), watch(done),
// trim().
template <typename State, typename Burst>
void run_serial_tone_stages(State& d, std::vector<Burst>& done)
{
    for (;;) {
        bool progressed = false;
        switch (d.stage) {
        case serial_tone_stage::search:
            if (d.search()) {
                d.start = d.found_at;
                d.stage = serial_tone_stage::preamble;
                progressed = true;
            }
            break;
        case serial_tone_stage::preamble:
            progressed = d.preamble();
            break;
        case serial_tone_stage::data:
            progressed = d.data(done) || d.watch(done);
            break;
        }
        if (!progressed)
            break;
    }
    d.trim();
}

// A display's symbol tap (tap_symbols()): the `held` last symbols, whose blocks were
// not judged part of a burst, are taken out of it.
template <typename Symbol>
void drop_held_symbols(std::vector<Symbol>* tap, size_t& held)
{
    if (tap)
        tap->resize(tap->size() - std::min(held, tap->size()));
    held = 0;
}

// At the end of a data block with probes: whether the presence test now judges the
// signal lost (the caller ends the burst); a block whose probes matched is the burst's,
// and its tapped symbols stop being held.
template <typename Presence>
bool block_ends_burst(Presence& presence, size_t& held)
{
    const bool matched = presence.probes_match();
    if (presence.block_says_lost(matched))
        return true;
    if (matched)
        held = 0;
    return false;
}

// The search starts again from sample `from` (no earlier than the input held allows
// its correlation: one symbol in), any peak it had open forgotten. State needs stage,
// candidate, input, peak (correlation_peak).
template <typename State>
void restart_serial_tone_search(State& d, uint64_t from, unsigned samples_per_symbol)
{
    d.stage = serial_tone_stage::search;
    d.candidate = std::max<uint64_t>(from, d.input.base() + samples_per_symbol);
    d.peak.open = false;
}

// The data stage's watch for a new preamble past the burst's own (from sample
// data_start on): when `search()` finds one, the burst in progress ends (end_burst(false,
// done)) and the new one's preamble stage begins at found_at. State needs candidate,
// stage, start, found_at, found_hz, restart_search(from), end_burst(eom, done).
template <typename State, typename Burst, typename Search>
bool watch_for_new_preamble(State& d,
                            uint64_t data_start,
                            std::vector<Burst>& done,
                            Search search)
{
    if (d.candidate < data_start) {
        d.restart_search(data_start);
        d.stage = serial_tone_stage::data;
    }
    if (!search())
        return false;
    const uint64_t next = d.found_at;
    const double hz = d.found_hz;
    d.end_burst(false, done);
    d.found_at = next;
    d.found_hz = hz;
    d.start = next;
    d.stage = serial_tone_stage::preamble;
    return true;
}

} // namespace phy
} // namespace hfstack
} // namespace gr

#endif
