/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

/* Air time of MIL-STD-188-110A/B serial-tone transmissions (the 75-2400 bps part of
 * STANAG 4539, plus 4800 bps uncoded), from the waveform's own structure: preamble
 * segments, frames of unknown (data) and known (probe) symbols at 2400 Bd, interleaver
 * blocks, and the end-of-message sequence with the coder flush.
 *
 * Constants: MIL-STD-188-110A/B (preamble, modes, interleaver, EOM and flush), all
 * verified against it except the length of the flush, see below. This
 * file is the one place the modems and the node's air-time model take them from. */
#ifndef HFSTACK_KERNELS_PHY_M110A_TIMING_H
#define HFSTACK_KERNELS_PHY_M110A_TIMING_H

#include "transmission_time.h"

#include <cstddef>
#include <optional>
#include <string>

namespace gr {
namespace hfstack {
namespace phy {

enum class m110a_interleaver { zero, short_, long_ };

constexpr double m110a_symbol_rate = 2400.0; // Bd
constexpr double m110a_segment_s = 0.2;      // one preamble segment (480 symbols)
constexpr unsigned m110a_eom_bits = 32;      // 0x4B65A5B2
// Zero bits sent after the EOM to flush the coder, before the fill to the end of the
// interleaver block. m110a.json: 144 from two implementations (kg7hf, modemctl); the
// recordings cannot tell flush from fill. Counted in user bits, before the FEC.
constexpr unsigned m110a_flush_bits = 144;

struct m110a_waveform;

// A mode's air-time shape: the 110A mode whose frames it sends (m110a_waveform.h; zero
// interleave sends the short mode's frames, not interleaved) and how many frames a unit
// it is padded to holds.
struct m110a_mode {
    const m110a_waveform* waveform = nullptr;
    m110a_interleaver interleaver = m110a_interleaver::short_;
    unsigned frames_per_block = 0; // frames per interleaver block (when not interleaved:
                                   // the fewest frames holding whole user bits)

    unsigned user_bps() const; // 75 .. 2400, or 4800 (uncoded)
    double frame_s() const;
    // Unit the transmission is padded to: one interleaver block, or the frames above
    // when the data is not interleaved (zero interleaver, 4800 bps uncoded).
    double unit_s() const { return frames_per_block * frame_s(); }
    // User bits carried by one unit.
    double unit_bits() const { return user_bps() * unit_s(); }
    std::string name() const; // "2400S", "600L", "1200Z", "4800U"
    waveform_timing timing() const;
};

// The mode for a user rate and interleaver; nullopt for combinations 110A lacks
// (4800 bps exists uncoded only, with no interleaver).
std::optional<m110a_mode> m110a_mode_for(unsigned user_bps,
                                         m110a_interleaver interleaver);

// Air time of one transmission carrying `bytes` user bytes.
transmission_time m110a_transmission_time(const m110a_mode& mode, size_t bytes);

} // namespace phy
} // namespace hfstack
} // namespace gr

#endif
