/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

/* MIL-STD-188-110A/B serial-tone waveform definitions (the 75-2400 bps part of
 * STANAG 4539 and 4800 bps uncoded): the mode table and every wire constant the modem
 * needs, all verified against the standard unless noted here;
 * m110a_timing takes its frame layout from this table, so the modem and the node's
 * air-time model cannot disagree.
 *
 * Symbols are 8PSK symbol numbers 0..7 (symbol s at phase s * 45 degrees); BPSK uses
 * {0, 4}, QPSK {0, 2, 4, 6}; every scrambling is addition mod 8. */
#ifndef HFSTACK_KERNELS_PHY_M110A_WAVEFORM_H
#define HFSTACK_KERNELS_PHY_M110A_WAVEFORM_H

#include "m110a_timing.h"

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace gr {
namespace hfstack {
namespace phy {

enum class m110a_modulation { walsh, bpsk, qpsk, psk8 };

constexpr double m110a_carrier_hz = 1800.0;
constexpr unsigned m110a_segment_symbols = 480; // one preamble segment (0.2 s)
constexpr uint32_t m110a_eom = 0x4B65A5B2;      // sent MSB first after the user bits

// One 110A mode: how bits become symbols.
struct m110a_waveform {
    const char* name; // "75S", "2400L", "4800U"
    unsigned user_bps;
    m110a_interleaver interleaver;
    m110a_modulation modulation;
    unsigned bits_per_symbol;   // 2 per 32-chip Walsh symbol for 75 bps
    bool coded;                 // K=7 rate 1/2 (all but 4800U)
    unsigned repeat;            // times each (T1, T2) pair is sent: 4 at 150, 2 at 300
    unsigned d1, d2;            // preamble mode code
    unsigned preamble_segments; // 3 or 24
    unsigned unknown_symbols;   // data symbols per frame (75 bps: 32 chips)
    unsigned known_symbols;     // probe symbols per frame (0 at 75 bps)
    unsigned frames_per_block;  // frames per interleaver block (4800U: probe cycle)
    unsigned rows, cols;        // interleaver matrix (0 when not interleaved)
    unsigned row_inc, col_dec;  // load row step, fetch column step

    unsigned block_bits() const { return rows * cols; }
    bool interleaved() const { return rows != 0; }
};

// The 110A modes: 75, 150, 300, 600, 1200, 2400 bps with short and long interleave, and
// 4800 bps uncoded. Zero interleave is not listed: the D1/D2 that announce it are not
// established (m110a.json marks them "?").
const std::vector<m110a_waveform>& m110a_waveforms();
// nullptr when unknown.
const m110a_waveform* m110a_waveform_by_name(const std::string& name);
const m110a_waveform* m110a_waveform_by_code(unsigned d1, unsigned d2);

// Preamble: 8-ary Walsh patterns (channel symbols) and the 32-chip scramble.
extern const std::array<std::array<uint8_t, 8>, 8> m110a_walsh8;
extern const std::array<uint8_t, 32> m110a_preamble_scramble;
// The 480 symbols of a preamble segment with the given count (2, 1, 0 for a 3-segment
// preamble; 23 .. 0 for 24).
std::array<uint8_t, m110a_segment_symbols>
m110a_preamble_segment(unsigned d1, unsigned d2, unsigned count);

// Data scrambler (x^12 + x^6 + x^4 + x + 1 from 0xBAD, 8 clocks per symbol): the 160
// values it repeats, restarted at the first symbol after the preamble.
const std::array<uint8_t, 160>& m110a_data_scrambler();

// Bits to symbol numbers, first bit the MSB: modified Gray (tribit gray(s) on symbol s).
uint8_t m110a_map_tribit(unsigned tribit);
uint8_t m110a_map_dibit(unsigned dibit); // QPSK: 00->0, 01->2, 11->4, 10->6
uint8_t m110a_map_bit(unsigned bit);     // BPSK: 0->0, 1->4
// 75 bps: dibit (first bit MSB) to Walsh channel symbol 0..3 (00->0, 01->1, 11->2, 10->3)
// and the 32 chips of a Walsh symbol: the normal set, or the exceptional set for the
// last Walsh symbol of each interleaver block.
unsigned m110a_walsh_symbol_of_dibit(unsigned dibit);
std::array<uint8_t, 32> m110a_walsh_chips(unsigned channel_symbol, bool exceptional);

// Interleaver: entry k is the block's input bit sent k-th (load row step row_inc down
// the columns, fetch down the rows with the column stepping back col_dec).
std::vector<uint32_t> m110a_fetch_order(const m110a_waveform& mode);

} // namespace phy
} // namespace hfstack
} // namespace gr

#endif
