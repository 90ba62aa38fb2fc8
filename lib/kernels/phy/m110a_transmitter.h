/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

/* MIL-STD-188-110A/B serial-tone transmitter, bits to channel symbols.
 *
 * One transmission: the preamble (3 or 24 segments counting down), then interleaver
 * blocks of frames (U data symbols + K probe symbols; 75 bps: 32-chip Walsh symbols,
 * no probes). User bits go out in order, followed by the EOM 0x4B65A5B2 (MSB first) and
 * 144 zero bits that flush the coder, then zero bits to the end of the interleaver block
 * (m110a.json eom_and_flush). Bits pass the K=7 code, repetition (150 and 300 bps),
 * the block interleaver and the modified-Gray map; the data scrambler then adds to
 * every data and probe symbol (every chip at 75 bps), restarting after the preamble.
 * Probes are symbol 0, except in the last two frames of each block, which carry D1 and
 * then D2 as an 8-chip Walsh pattern sent twice.
 *
 * Byte order: each user byte goes out least significant bit first by default, as the
 * reference recordings do (an asynchronous-style convention; the standard itself
 * defines a bit stream); msb_first is the alternative. */
#ifndef HFSTACK_KERNELS_PHY_M110A_TRANSMITTER_H
#define HFSTACK_KERNELS_PHY_M110A_TRANSMITTER_H

#include "m110a_waveform.h"

#include <cstddef>
#include <cstdint>
#include <vector>

namespace gr {
namespace hfstack {
namespace phy {

// User bits of a message: the bytes (LSB first unless msb_first), the EOM and the flush.
std::vector<uint8_t>
m110a_message_bits(const uint8_t* bytes, size_t n, bool msb_first = false);

// Where 4800 bps uncoded (not interleaved) ends: its fill after the EOM and flush
// (m110a.json leaves it open; docs/modem-design.md, readings).
enum class m110a_4800u_fill {
    whole_frames, // to the end of the frame (recommended; the air-time model's count)
    probe_cycle,  // to the end of the 30-frame cycle, whose last two probes carry D1/D2
};

// The channel symbols (0..7, 2400 per second) of one transmission of `n` bytes.
std::vector<uint8_t>
m110a_transmit_symbols(const m110a_waveform& mode,
                       const uint8_t* bytes,
                       size_t n,
                       bool msb_first = false,
                       m110a_4800u_fill fill = m110a_4800u_fill::whole_frames);

// Where symbol k after the preamble sits: a data symbol (or Walsh chip) or a probe
// symbol, and what the probe carries before scrambling. Shared with the receiver.
struct m110a_symbol_role {
    bool probe;
    uint8_t known; // probe symbol before scrambling (0 unless in a D1/D2 frame)
};
m110a_symbol_role m110a_role_of(const m110a_waveform& mode, size_t k);

} // namespace phy
} // namespace hfstack
} // namespace gr

#endif
