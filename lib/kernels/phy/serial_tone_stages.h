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

} // namespace phy
} // namespace hfstack
} // namespace gr

#endif
