/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

/* STANAG 5069 waveforms (MIL-STD-188-110D Appendix D) definitions: every wire constant a
 * transmitter and receiver need beyond the frame timing of m110d_timing.h.
 * Source: MIL-STD-188-110D Appendix D, its waveform and 256QAM tables, and its known
 * answers (docs/modem-design.md, "Readings of the uncertain constants (App D)"). The
 * tables cover every bandwidth (3-48 kHz); the known answers are 3 kHz ones, the other
 * bandwidths are checked for consistency (code rate in D-L, probe in D-XXI, length as
 * m110d_timing) and loopback.
 *
 * Symbols of the preamble and of the PSK data are 8PSK symbol numbers 0..7 (symbol s at
 * phase s * 45 degrees); QAM symbols are numbers into the constellation tables, whose
 * points are sent as printed beside the unit-amplitude probes and preamble, not
 * rescaled to unit mean power (the rule App C follows; docs/modem-design.md, "QAM
 * amplitude, SNR reference and bytes_bad"). Mini-probes are complex points: the Frank
 * bases are not all 8PSK.
 *
 * Shape of a transmission (m110d_timing.h counts the same):
 *   preamble: [TLC: N blocks] [super-frame] x M, every part a sequence of Walsh symbols
 *     of 32 * BW / 3 chips (the 4-chip D-XIV pattern of a dibit repeated) plus a PN
 *     chip mod 8; super-frame = fixed (9 dibits, 1 when M = 1, fixed PN), count (4
 *     dibits, count PN), WID (5 dibits, WID PN); a TLC block is the fixed PN conjugated;
 *   a mini-probe, then per frame U data symbols and K probe symbols (WN0: 32-chip
 *     Walsh symbols, one coded dibit each, plus the Trinomial scrambler; no probes);
 *   data: user bits, the EOM, zeros to the end of the interleaver block's input; per
 *     block a tail-biting K = 7 or K = 9 code, the D-L puncture and repeat rule, the
 *     load-increment interleaver; PSK data transcoded and scrambled (x^9 + x^4 + 1, from
 *     1 at every data block);
 *   optional EOT: the final mini-probe cyclically extended by 32 * BW / 3 symbols.
 *
 * Readings of the constants the spec tags `?` (m110d_readings; docs/modem-design.md,
 * App D section), the recommended one the default:
 *  - scrambler register orientation: x9_orientation::a (the App C twin that decodes
 *    off-air traffic), b selectable;
 *  - tail-biting phase: first_pair_bit_7 (the phase gr-digitalhf's off-air decoder
 *    expects), from_full_register (pdn's reading of D.5.3.2.3) and from_block_start
 *    selectable;
 *  - preamble PN alignment (O-1): per_symbol, PN[0 .. L-1] under every Walsh symbol of
 *    L chips (PN[j mod 256] where L > 256, at 30-48 kHz; the reading of gr-digitalhf,
 *    whose App D receiver was developed on off-air signals);
 *    continuous (PN[j mod 256] for chip j of a section, pdn) selectable;
 *  - WID checksum (O-3): the explicit formula d2 = d9 ^ d8 ^ d7 (both implementations);
 *    the D-XVII caption's "lsb of w1 = 0" selectable;
 *  - preamble Walsh symbol length at 30-48 kHz (D-XIII stops at 24 kHz): 32 * BW / 3
 *    chips (320, 384, 448, 512: 1/75 s as at every other bandwidth, the one source's
 *    extrapolation); `capped`, 256 chips (24 kHz's, the PN tables' length), selectable.
 * Readings of open points the spec does not tag (documented, not selectable):
 *  - the mini-probe after the preamble is the probe "after data block -1": shifted
 *    under the boundary rule like every probe when a block has one frame, normal
 *    otherwise;
 *  - WN0 has no mini-probe after the preamble and no EOT extension;
 *  - bytes go out least significant bit first unless msb_first (as App C and 110A);
 *  - the EOM is 110A's word, sent MSB first (eom_eot, tagged S). */
#ifndef HFSTACK_KERNELS_PHY_M110D_WAVEFORM_H
#define HFSTACK_KERNELS_PHY_M110D_WAVEFORM_H

#include "m110d_timing.h"
#include "serial_tone_coding.h"

#include <array>
#include <complex>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace gr {
namespace hfstack {
namespace phy {

constexpr uint32_t m110d_eom = 0x4B65A5B2;
constexpr unsigned m110d_pn_length = 256;
constexpr unsigned m110d_trinomial_period = 2048;
constexpr unsigned m110d_max_wn = 13; // WN 14 and 15 are reserved

// Preamble PN alignment (O-1, tagged `?`).
enum class m110d_pn_alignment {
    per_symbol, // every Walsh symbol of length L takes PN[0 .. L-1] (recommended)
    continuous, // chip j of a section takes PN[j mod 256]
};
// WID bit d2 (O-3, tagged `?`).
enum class m110d_wid_parity {
    checksum,        // d2 = d9 ^ d8 ^ d7 (recommended)
    caption_d2_zero, // the D-XVII caption: the lsb of w1 (d2) always 0
};

// Preamble Walsh symbol length above 24 kHz (D-XIII stops at 24 kHz, tagged `?`).
enum class m110d_preamble_walsh {
    scaled, // 32 * BW / 3 chips at every bandwidth (1/75 s; 320-512 at 30-48 kHz;
            // recommended)
    capped, // 256 chips above 24 kHz (D-XIII's longest, one PN table's length)
};

struct m110d_readings {
    x9_orientation scrambler = x9_orientation::a;
    tail_biting_start tail_biting = tail_biting_start::first_pair_bit_7;
    m110d_pn_alignment pn_alignment = m110d_pn_alignment::per_symbol;
    m110d_wid_parity wid_parity = m110d_wid_parity::checksum;
    m110d_preamble_walsh preamble_walsh = m110d_preamble_walsh::scaled;
};

// Readings by name, as `--reading NAME=VALUE` gives them (docs/modem-design.md):
//   scrambler=a|b  tail_biting=first_pair_bit_7|full_register|block_start
//   pn_alignment=per_symbol|continuous  wid_parity=checksum|caption_d2_zero
//   preamble_walsh=scaled|capped
// Sets the one named; returns "" or why not (the readings unchanged).
std::string m110d_set_reading(m110d_readings& readings,
                              const std::string& name_equals_value);
// Every reading as "name=value" (the first: the default), and the readings in use as
// the same words, space separated.
std::vector<std::string> m110d_reading_choices();
std::string m110d_readings_text(const m110d_readings& readings);

// ---- preamble
// Chip j of the D-XIV Walsh pattern of a dibit (00 0000, 01 0404, 10 0044, 11 0440),
// repeated every 4 chips.
uint8_t m110d_walsh_chip(unsigned dibit, unsigned j);
// Chips of one preamble Walsh symbol: options.preamble_walsh_chips when set, else
// 32 * BW / 3, or under the `capped` reading at most 256.
unsigned
m110d_preamble_walsh_chips(const m110d_mode& mode,
                           const m110d_preamble_options& options = {},
                           m110d_preamble_walsh reading = m110d_preamble_walsh::scaled);
// The options with preamble_walsh_chips set as the reading gives it, so the timing
// (m110d_transmission_time, preamble_s) counts the preamble the transmitter sends.
m110d_preamble_options m110d_preamble_options_under(const m110d_mode& mode,
                                                    m110d_preamble_options options,
                                                    const m110d_readings& readings);

constexpr std::array<uint8_t, 9> m110d_fixed_dibits = { 0, 0, 2, 1, 2, 1, 0, 2, 3 };
constexpr uint8_t m110d_fixed_dibit_single = 3; // the fixed section when M = 1

// Count field c3 c2 c1 c0 (sent in that order) of a count 0..31: bits b4..b0 the count,
// b7 = b1^b2^b3, b6 = b2^b3^b4, b5 = b0^b1^b2, c3 = (b7 b6) ... c0 = (b1 b0).
std::array<uint8_t, 4> m110d_count_dibits(unsigned count);
// The count a field carries; nullopt when its parity fails.
std::optional<unsigned> m110d_count_of(const std::array<uint8_t, 4>& dibits);

// What the WID field announces.
struct m110d_wid {
    unsigned wn = 0;
    m110d_interleaver interleaver = m110d_interleaver::short_;
    unsigned constraint_length = 7; // 7 or 9
};
// WID w4 .. w0 (sent in that order): d9..d6 the WN, d5 d4 the interleaver (US 00, S 01,
// M 10, L 11), d3 the code (K7 0, K9 1), d2 = d9^d8^d7 (or 0, see the reading),
// d1 = d7^d6^d5, d0 = d5^d4^d3; w4 = (d9 d8) ... w0 = (d1 d0). Throws
// std::invalid_argument for a WN over 15 or a constraint length other than 7 or 9.
std::array<uint8_t, 5>
m110d_wid_dibits(const m110d_wid& wid,
                 m110d_wid_parity parity = m110d_wid_parity::checksum);
// nullopt when a check bit fails or the WN is reserved (14, 15).
std::optional<m110d_wid>
m110d_wid_of(const std::array<uint8_t, 5>& dibits,
             m110d_wid_parity parity = m110d_wid_parity::checksum);

enum class m110d_pn_table { fixed, count, wid };
const std::array<uint8_t, m110d_pn_length>& m110d_pn(m110d_pn_table table);

// One preamble section: a Walsh symbol of `chips` chips per dibit, plus the section's PN.
std::vector<uint8_t> m110d_preamble_section(const std::vector<uint8_t>& dibits,
                                            m110d_pn_table table,
                                            unsigned chips,
                                            m110d_pn_alignment alignment);
// The TLC section: `blocks` blocks of `chips` chips, each chip the fixed PN conjugated
// (8 - p mod 8).
std::vector<uint8_t>
m110d_tlc_section(unsigned blocks, unsigned chips, m110d_pn_alignment alignment);
// The whole preamble (TLC and M super-frames; not the mini-probe after it). Throws
// std::invalid_argument when N or M is out of range.
std::vector<uint8_t> m110d_preamble(const m110d_mode& mode,
                                    const m110d_preamble_options& options,
                                    unsigned constraint_length,
                                    const m110d_readings& readings = {});

// ---- WN0
// The Trinomial(159, 31) scrambler's 2048 8PSK values from its start state (it is reset
// at every interleaver block and wraps after 2048 values).
const std::array<uint8_t, m110d_trinomial_period>& m110d_trinomial_sequence();
// Chip j (0..31) of the WN0 Walsh symbol carrying `dibit` (first bit the MSB), before
// the Trinomial scrambler.
inline uint8_t m110d_wn0_walsh_chip(unsigned dibit, unsigned j)
{
    return m110d_walsh_chip(dibit, j);
}

// ---- data symbols
// Coded bits per data symbol (WN0: the dibit of one Walsh symbol).
unsigned m110d_bits_per_symbol(unsigned wn);
// Symbol number of a group of bits_per_symbol coded bits (first bit the MSB): BPSK
// 0->0 1->4, QPSK 00->0 01->2 11->4 10->6, 8PSK table D-V (8PSK numbers), QAM the
// number itself.
uint8_t m110d_map_bits(unsigned bits, unsigned bits_per_symbol);
// Constellation points by symbol number: 8PSK for 1 to 3 bits, 16/32/64/256QAM as
// printed (outer points at amplitude 1).
const std::vector<std::complex<float>>& m110d_constellation(unsigned bits_per_symbol);
// The scrambler values of one data block of `data_symbols` symbols (restarted at each).
std::vector<uint8_t> m110d_data_scrambler(const m110d_mode& mode,
                                          x9_orientation orientation);
// Mean power of a mode's frames (data and probes) on the probes' scale: 1 for PSK.
double m110d_frame_power(const m110d_mode& mode);

// ---- mini-probes (table D-XXI)
struct m110d_probe_shape {
    unsigned base_length;
    unsigned boundary_shift;
};
// nullopt for a probe length D-XXI lacks.
std::optional<m110d_probe_shape> m110d_probe_shape_of(unsigned probe_symbols);
// The base sequence: Barker-13, the length-19 sequence of D-XXIV, or a Frank sequence
// s[m q + r] = exp(-j 2 pi q r / m) for the square lengths (16, 25, 36, ...). Throws
// std::invalid_argument for a length D-XXI lacks.
const std::vector<std::complex<float>>& m110d_probe_base(unsigned base_length);
// A probe of `length` symbols (the frame's K, or K plus the EOT extension) cyclically
// from the base, normal (from base[0]) or boundary (from base[shift]).
std::vector<std::complex<float>>
m110d_mini_probe(unsigned probe_symbols, bool boundary, unsigned length);
// Whether the probe after data frame `frame` (counted from the first, -1 for the probe
// after the preamble) is a boundary probe: the one after the second-to-last frame of
// an interleaver block, i.e. (frame + 2) mod frames_per_block == 0.
bool m110d_probe_is_boundary(const m110d_mode& mode, int64_t frame);
// Symbols of the EOT extension at this bandwidth (32 * BW / 3: 13.333 ms).
unsigned m110d_eot_extension_symbols(const m110d_mode& mode);

// ---- code (table D-L)
struct m110d_code_rate {
    unsigned numerator, denominator; // with repetition
    unsigned repeat;                 // times each (T1, T2) pair is sent before the mask
    const char* k7_mask[2];          // T1 and T2 rows: '1' = sent
    const char* k9_mask[2];
};
// The code rate of a mode (from its block sizes); throws std::logic_error if D-L has
// none.
const m110d_code_rate& m110d_code_rate_of(const m110d_mode& mode);
// k7_newest_lsb: K = 7 as conv_code_k7_newest_lsb (a receiver's reading only).
const conv_code& m110d_conv_code(unsigned constraint_length, bool k7_newest_lsb = false);
// The repeated and punctured stream of a block's mother-code pairs: pair i is sent
// `repeat` times (T1 T2 T1 T2 ...), copy c of it in mask column (i * repeat + c) mod
// the mask length, T1 then T2 where the column's row has a 1.
std::vector<uint8_t> m110d_puncture(const std::vector<uint8_t>& pairs,
                                    const m110d_code_rate& rate,
                                    unsigned constraint_length);
// The inverse for LLRs: `pairs` pairs' mother-code LLRs, repeats summed, 0 where a bit
// was not sent.
std::vector<float> m110d_depuncture(const float* llr,
                                    size_t pairs,
                                    const m110d_code_rate& rate,
                                    unsigned constraint_length);
// The same into `mother` (its storage reused: a long block's pairs are megabytes);
// with `concurrently` ranges of pairs on two threads, the same LLRs.
void m110d_depuncture(const float* llr,
                      size_t pairs,
                      const m110d_code_rate& rate,
                      unsigned constraint_length,
                      std::vector<float>& mother,
                      bool concurrently = false);

// ---- interleaver
// Bits per interleaver block (frames * U * bits per symbol; WN0: 2 per Walsh symbol).
unsigned m110d_interleaver_bits(const m110d_mode& mode);
unsigned m110d_interleaver_increment(const m110d_mode& mode);
// Entry k: the block's punctured bit sent k-th.
std::vector<uint32_t> m110d_fetch_order(const m110d_mode& mode);

// One interleaver block's channel bits from its mode.input_bits_per_block user bits:
// tail-biting code, repetition and puncturing, interleaving (m110d_block_decoder, in
// m110d_decoder.h, inverts it). With `concurrently` (a receiver coding a long block
// again) ranges of each step on two threads, the same bits.
std::vector<uint8_t> m110d_block_channel_bits(const m110d_mode& mode,
                                              const uint8_t* user_bits,
                                              const std::vector<uint32_t>& fetch_order,
                                              unsigned constraint_length,
                                              tail_biting_start start,
                                              bool k7_newest_lsb = false,
                                              bool concurrently = false);

} // namespace phy
} // namespace hfstack
} // namespace gr

#endif
