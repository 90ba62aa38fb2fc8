/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

/* STANAG 4539 high-rate waveform (MIL-STD-188-110B/C Appendix C) definitions: every wire
 * constant the transmitter and receiver need beyond the frame timing of m110c_timing.
 * Source: MIL-STD-188-110C Appendix C and its known answers.
 *
 * Symbols of the preamble and the mini-probes are 8PSK symbol numbers 0..7 (symbol s at
 * phase s * 45 degrees), as are the PSK data symbols before they become points. QAM
 * symbols are numbers 0 .. 2^N - 1 into the constellation tables, whose coordinates
 * are the standard's and are sent as printed: outer points at amplitude 1, the scale
 * of the PSK probes and preamble (docs/modem-design.md, "QAM amplitude, SNR reference
 * and bytes_bad").
 *
 * Readings of constants the spec tags `?` or S (docs/modem-design.md, App C section):
 *  - data scrambler register orientation: reading A (the one decoding off-air App C);
 *    m110c_scrambler_orientation::b is selectable;
 *  - 8PSK map: the App D table D-V (110A's map with the tribit LSB inverted);
 *  - the code is tail-biting per interleaver block, no flush bits; its output starts
 *    with the pair of the block's bit 7 and ends with those of bits 0..6 (the phase
 *    gr-digitalhf's off-air App C decoder expects); m110c_tail_biting::
 *    from_full_register (bit 6's pair first) and from_block_start (bit 0's) are the
 *    other readings (serial_tone_coding.h);
 *  - EOM: 110A's 32-bit word after the user bits, the block then filled with zeros;
 *  - 12800 bps: 64QAM, uncoded, no interleaver, one frame per block; its preamble
 *    carries rate code 110 and the interleaver code of the mode's interleaver setting. */
#ifndef HFSTACK_KERNELS_PHY_M110C_WAVEFORM_H
#define HFSTACK_KERNELS_PHY_M110C_WAVEFORM_H

#include "m110c_timing.h"
#include "serial_tone_coding.h"

#include <array>
#include <complex>
#include <cstdint>
#include <vector>

namespace gr {
namespace hfstack {
namespace phy {

constexpr unsigned m110c_sync_symbols = 184;
constexpr unsigned m110c_frame_symbols = m110c_data_symbols + m110c_probe_symbols;
constexpr uint32_t m110c_eom = 0x4B65A5B2; // 110A's word, sent MSB first (reading)
// D0..D2 (m110c_appc.json preamble.D_encoding): Barker-13 turned by 2 * q, q the
// quadrant of the field's dibit (rate bit, interleaver bit): 00->0 01->1 11->2 10->3
// (the map is its own inverse).
constexpr unsigned m110c_d_field_symbols = 13;
constexpr std::array<uint8_t, m110c_d_field_symbols> m110c_barker13 = { 0, 4, 0, 4, 0,
                                                                        0, 4, 4, 0, 0,
                                                                        0, 0, 0 };
constexpr std::array<unsigned, 4> m110c_quadrant_of_dibit = { 0, 1, 3, 2 };
// Chip j of a D field in quadrant q, as an 8PSK symbol number.
constexpr unsigned m110c_d_chip(unsigned j, unsigned quadrant)
{
    return (m110c_barker13[j] + 2 * quadrant) % 8;
}

// Rate code (r0 r1 r2, 3200 bps = 001 .. 12800 bps = 110) and interleaver code
// (US = 001 .. VL = 110) as 3-bit numbers, r0 the MSB.
unsigned m110c_rate_code(const m110c_mode& mode);
unsigned m110c_interleaver_code(m110c_interleaver interleaver);
// The mode a pair of codes announces; nullopt for reserved or illegal codes.
std::optional<m110c_mode> m110c_mode_by_code(unsigned rate_code,
                                             unsigned interleaver_code);

// The 184-symbol synchronisation sequence and the 103-symbol section that follows it
// (MP+ | 2 | D0 D1 D2 | 6 | MP-), together one frame's length.
const std::array<uint8_t, m110c_sync_symbols>& m110c_sync_sequence();
std::vector<uint8_t> m110c_preamble(const m110c_mode& mode);
// The last 72 symbols of the 103-symbol section, sent again after every 72 frames.
std::vector<uint8_t> m110c_reinserted_section(const m110c_mode& mode);

// 31-symbol mini-probes: the 16-symbol base and its first 15 symbols; minus = plus + 4.
const std::array<uint8_t, m110c_probe_symbols>& m110c_probe(bool minus);
// Whether the probe after data frame n (counted from the last (re)inserted preamble,
// 0..71) is the minus probe.
bool m110c_probe_is_minus(const m110c_mode& mode, unsigned n);

// Data scrambler x^9 + x^4 + 1 from 000000001, restarted at every 256-symbol data block
// (serial_tone_coding.h; App D shares it).
using m110c_scrambler_orientation = x9_orientation;
// The values added (PSK, mod 8) or XORed (QAM) onto the 256 data symbols of a frame:
// bits_per_symbol 2 or 3 take R & 7 and advance 3 steps; N = 4, 5, 6 take R & (2^N - 1)
// and advance N steps.
std::array<uint8_t, m110c_data_symbols> m110c_data_scrambler(
    unsigned bits_per_symbol,
    m110c_scrambler_orientation orientation = m110c_scrambler_orientation::a);

// Data symbol of a group of bits_per_symbol coded bits (first bit the MSB): QPSK
// 00->0 01->2 11->4 10->6 and 8PSK (table D-V) give 8PSK symbol numbers, QAM the number
// itself.
uint8_t m110c_map_bits(unsigned bits, unsigned bits_per_symbol);
// Constellation points by symbol number (8PSK for 2 and 3 bits per symbol).
const std::vector<std::complex<float>>& m110c_constellation(unsigned bits_per_symbol);
// Mean power of a constellation's points (1 for PSK), on the scale of the
// unit-amplitude probes: QAM is sent as printed, its outer points at amplitude 1.
double m110c_constellation_power(unsigned bits_per_symbol);
// Mean power of a mode's frames (256 data symbols and a 31-symbol probe) on that
// scale: 1 for PSK; 16/32/64QAM 0.81, 0.69, 0.63. A transmission's mean power, which
// an SNR is measured on, is this (its preamble and sections, PSK, aside).
double m110c_frame_power(const m110c_mode& mode);

// Where a tail-biting block's coded output starts (m110c_appc.json fec, tagged ?;
// serial_tone_coding.h): first_pair_bit_7 (recommended), from_full_register (bit 6's
// pair first) or from_block_start (bit 0's).
using m110c_tail_biting = tail_biting_start;
// The mother code's (T1, T2) pairs of one tail-biting block of n >= 8 bits.
std::vector<uint8_t>
m110c_tail_biting_encode(const uint8_t* bits,
                         size_t n,
                         m110c_tail_biting reading = m110c_tail_biting::first_pair_bit_7);

// The readings of `?` constants a transmission or reception uses.
struct m110c_readings {
    m110c_scrambler_orientation scrambler = m110c_scrambler_orientation::a;
    m110c_tail_biting tail_biting = m110c_tail_biting::first_pair_bit_7;
};

// Rate 3/4 from the K=7 mother code: of each three (T1, T2) pairs, T1 T2 T1 . . T2 are
// kept (m110c_appc.json fec.puncture_to_3_4).
constexpr std::array<bool, 6> m110c_puncture_kept = {
    true, true, true, false, false, true
};

// Interleaver: the block's punctured bit n is loaded at (n * increment) mod size and
// bits leave in order 0, 1, 2 ...; size = frames * 256 * bits_per_symbol.
unsigned m110c_interleaver_bits(const m110c_mode& mode);
unsigned m110c_interleaver_increment(const m110c_mode& mode);
// Entry k: the block's punctured bit sent k-th (0 for 12800 bps, which has none).
std::vector<uint32_t> m110c_fetch_order(const m110c_mode& mode);

} // namespace phy
} // namespace hfstack
} // namespace gr

#endif
