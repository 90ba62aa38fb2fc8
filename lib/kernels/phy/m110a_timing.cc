/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "m110a_timing.h"

#include "m110a_waveform.h"

#include <cmath>

namespace gr {
namespace hfstack {
namespace phy {

unsigned m110a_mode::user_bps() const { return waveform->user_bps; }

double m110a_mode::frame_s() const
{
    return (waveform->unknown_symbols + waveform->known_symbols) / m110a_symbol_rate;
}

std::string m110a_mode::name() const
{
    if (user_bps() == 4800)
        return "4800U";
    const char* il = interleaver == m110a_interleaver::zero     ? "Z"
                     : interleaver == m110a_interleaver::short_ ? "S"
                                                                : "L";
    return std::to_string(user_bps()) + il;
}

std::optional<m110a_mode> m110a_mode_for(unsigned user_bps, m110a_interleaver interleaver)
{
    m110a_mode m;
    m.interleaver = interleaver;
    if (user_bps == 4800) { // uncoded, never interleaved: padded to single frames
        if (interleaver != m110a_interleaver::zero)
            return std::nullopt;
        m.waveform = m110a_waveform_by_name("4800U");
        m.frames_per_block = 1;
        return m;
    }
    // Zero interleave keeps the short mode's frames.
    const m110a_interleaver table_interleaver = interleaver == m110a_interleaver::long_
                                                    ? m110a_interleaver::long_
                                                    : m110a_interleaver::short_;
    for (const m110a_waveform& w : m110a_waveforms()) {
        if (w.user_bps != user_bps || w.interleaver != table_interleaver)
            continue;
        m.waveform = &w;
        if (interleaver == m110a_interleaver::zero) {
            // Not interleaved: padded to the fewest frames holding whole user bits (one
            // frame, except two at 150 bps, where a frame carries 2.5 bits).
            m.frames_per_block = 1;
            while (std::fmod(m.unit_bits(), 1.0) > 1e-9)
                ++m.frames_per_block;
        } else {
            m.frames_per_block = w.frames_per_block;
        }
        return m;
    }
    return std::nullopt;
}

waveform_timing m110a_mode::timing() const
{
    waveform_timing w;
    w.preamble_s = waveform->preamble_segments * m110a_segment_s;
    // A frame of the 75 bps mode carries one user bit; others carry whole numbers too.
    w.unit_bits = size_t(std::lround(unit_bits()));
    w.unit_s = unit_s();
    w.bit_rate = double(w.unit_bits) / w.unit_s;
    w.trailer_bits = m110a_eom_bits + m110a_flush_bits;
    return w;
}

transmission_time m110a_transmission_time(const m110a_mode& mode, size_t bytes)
{
    return transmission_time_of(mode.timing(), bytes);
}

} // namespace phy
} // namespace hfstack
} // namespace gr
