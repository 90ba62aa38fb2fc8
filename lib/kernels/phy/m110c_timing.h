/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

/* Air time of STANAG 4539 high-rate transmissions (MIL-STD-188-110B/C Appendix C:
 * 3200-9600 bps coded, 12800 bps uncoded) from the waveform's structure: the 287-symbol
 * preamble, frames of 256 data and 31 probe symbols at 2400 Bd, the 72-symbol section
 * re-inserted after every 72 frames, interleaver blocks of 1-72 frames, and the
 * end-of-message sequence.
 *
 * Constants: MIL-STD-188-110C Appendix C (rate and interleaver codes, frame, preamble,
 * FEC, interleaver, EOM). Readings of constants the standard leaves uncertain
 * (docs/modem-design.md, "Readings of the uncertain constants (App C)"):
 *  - EOM: the 110A/App D 32-bit EOM (recommended reading); m110c_eom_bits is the knob.
 *  - No flush bits: the code is tail-biting per interleaver block (App D says so; gr110c
 *    decodes App C blocks the same way).
 *  - Preamble sent once (184 + 103 symbols); whether the 184-symbol part may be repeated
 *    was not established.
 *  - A re-inserted section follows every completed group of 72 frames, also the last
 *    one, so the long-run rate is exact (72 frames = 8.64 s). */
#ifndef HFSTACK_KERNELS_PHY_M110C_TIMING_H
#define HFSTACK_KERNELS_PHY_M110C_TIMING_H

#include "transmission_time.h"

#include <optional>
#include <string>

namespace gr {
namespace hfstack {
namespace phy {

constexpr double m110c_symbol_rate = 2400.0;
constexpr unsigned m110c_preamble_symbols = 184 + 103;
constexpr unsigned m110c_data_symbols = 256;
constexpr unsigned m110c_probe_symbols = 31;
constexpr unsigned m110c_reinsert_period_frames = 72;
constexpr unsigned m110c_reinserted_symbols = 72;
constexpr unsigned m110c_eom_bits = 32;

// Interleaver lengths of Appendix C and their frames per block.
enum class m110c_interleaver {
    ultra_short,
    very_short,
    short_,
    medium,
    long_,
    very_long
};

struct m110c_mode {
    unsigned user_bps = 0; // 3200, 4800, 6400, 8000, 9600 or 12800 (uncoded)
    m110c_interleaver interleaver = m110c_interleaver::short_;
    unsigned bits_per_symbol = 0;  // QPSK 2 .. 64QAM 6
    bool coded = true;             // rate 3/4; 12800 bps is uncoded
    unsigned frames_per_block = 0; // 1, 3, 9, 18, 36, 72 (12800: 1)

    double user_bits_per_frame() const
    {
        return m110c_data_symbols * bits_per_symbol * (coded ? 0.75 : 1.0);
    }
    std::string name() const; // "9600S", "3200US", "12800U"
    waveform_timing timing() const;
};

// nullopt for a rate Appendix C lacks; 12800 bps takes any interleaver argument (it
// has none).
std::optional<m110c_mode> m110c_mode_for(unsigned user_bps,
                                         m110c_interleaver interleaver);

// The mode of a name as m110c_mode::name() gives it ("9600S", "3200us", "12800U"; case
// of the letters ignored); nullopt for anything else.
std::optional<m110c_mode> m110c_mode_by_name(const std::string& name);

transmission_time m110c_transmission_time(const m110c_mode& mode, size_t bytes);

} // namespace phy
} // namespace hfstack
} // namespace gr

#endif
