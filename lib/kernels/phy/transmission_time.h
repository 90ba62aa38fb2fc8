/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

/* How long one modem transmission lasts: the shape of a waveform's transmissions
 * (waveform_timing) and the air time of one carrying a given number of user bytes
 * (transmission_time). The waveform models (m110a_timing.h, m110c_timing.h) describe
 * each mode by a waveform_timing; the node's transmission planner and the simulator use
 * the same description, so a planned burst lasts exactly what the modem sends. */
#ifndef HFSTACK_KERNELS_PHY_TRANSMISSION_TIME_H
#define HFSTACK_KERNELS_PHY_TRANSMISSION_TIME_H

#include <cstddef>
#include <vector>

namespace gr {
namespace hfstack {
namespace phy {

struct transmission_time {
    double preamble_s = 0;
    double data_s = 0; // user bytes, end of message, flush and fill, in whole units
    double total_s = 0;
    size_t units = 0;     // interleaver blocks (or frames, when not interleaved) sent
    size_t fill_bits = 0; // zero bits padding the last unit
};

// Two shapes. Block waveforms (unit_bits > 0): preamble, then the user bits followed by
// trailer_bits (end of message, coder flush) padded with zeros to whole units of
// unit_bits user bits lasting unit_s each, plus reinsertion_s after every
// units_per_reinsertion units (a re-inserted preamble; 0 = none). Linear (unit_bits 0):
// preamble, bytes at bit_rate, then tail_s; for modems described by figures only.
struct waveform_timing {
    double preamble_s = 0;
    double bit_rate = 2400; // user bits per second; block waveforms: unit_bits / unit_s
    double tail_s = 0;      // linear shape only
    size_t unit_bits = 0;
    double unit_s = 0;
    unsigned trailer_bits = 0;
    unsigned units_per_reinsertion = 0;
    double reinsertion_s = 0;

    bool whole_units() const { return unit_bits > 0; }
};

transmission_time transmission_time_of(const waveform_timing& w, size_t bytes);

// The most user bytes one transmission of at most max_seconds can carry (0 if even an
// empty one is longer).
size_t max_bytes_within(const waveform_timing& w, double max_seconds);

// What a receiver can hand on before a transmission ends: a streaming modem decodes
// each interleaver block (unit) as it arrives, so the user bytes a unit completes are
// known at that unit's end. One piece per unit that completes bytes, then a last one at
// total_s covering the rest (the end of message, found after the last unit). Times are
// from the start of the transmission, decoding latency not included. Linear shape: the
// last piece alone.
struct decoded_piece {
    size_t bytes_end = 0; // user bytes known by the end of this piece
    double time_s = 0;
};
std::vector<decoded_piece> decoding_schedule(const waveform_timing& w, size_t bytes);

} // namespace phy
} // namespace hfstack
} // namespace gr

#endif
