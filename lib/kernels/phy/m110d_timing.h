/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

/* Air time of MIL-STD-188-110D Appendix D transmissions (the public counterpart of
 * STANAG 5069: 3-48 kHz, waveform numbers WN0-WN13, interleavers US/S/M/L) from the
 * waveform's structure: the Walsh-coded preamble, a mini-probe, then frames of U data
 * and K probe symbols at 800 Bd per kHz grouped into interleaver blocks, the data
 * padded with the end of message and zeros to a whole block.
 *
 * Constants: MIL-STD-188-110D Appendix D (bandwidths, waveform numbers, frame,
 * mini-probes, interleaver, preamble, EOM/EOT, FEC) and its waveform table (U, K,
 * frames and input bits per block for every bandwidth x WN, in m110d_timing.cc). Rates,
 * U/K and 3 kHz interleavers are verified; the other bandwidths' interleaver sizes
 * come from one source (every cell passes the size x code rate
 * and nominal-rate checks, which m110d_timing.cc repeats at compile time).
 *
 * Shape of one transmission, as modelled here:
 *   [TLC: N Walsh symbols] [super-frame] x M   preamble; super-frame = fixed (9 Walsh
 *                                              symbols, 1 when M = 1) + count (4) + WID
 * (5) [mini-probe: K symbols]                    counted in preamble_s, like the closing
 *                                              mini-probe of m110c's 287-symbol preamble
 *   ([U data][K probe]) x frames, per block    every data block is followed by its probe,
 *                                              the last one too: the transmission ends
 *                                              with a whole frame's probe, which the
 *                                              receiver needs to equalise the last data
 *   [EOT extension: 13.333 ms]                 optional, see below; counted in data_s
 * A preamble Walsh symbol is 32*BW/3 symbols long, i.e. 1/75 s at every bandwidth.
 * WN0 (4-ary Walsh, 32 chips per coded dibit) has no probes: a "frame" is one 32-chip
 * Walsh symbol, there is no mini-probe after the preamble and no EOT extension.
 *
 * Data: 8*bytes user bits, then the 32-bit EOM (4B65A5B2), then zero fill to the end of
 * the interleaver block's input bits (eom_eot, tagged S). No flush bits: the code is
 * tail-biting per interleaver block (fec.termination; only where the encoder starts
 * its output is uncertain, which does not change the length).
 *
 * Readings of constants the spec marks `?` or leaves open (defaults; the alternative is
 * an option of m110d_timing_options):
 *  - TLC block count N (0..255) and super-frame count M (1..32) are the sender's choice.
 *    Default: the minimal conforming preamble, N = 0 and M = 1 (10 Walsh symbols =
 *    133.3 ms). The D-LXIV performance tests use M = 20 (360 symbols = 4.8 s).
 *  - EOT: the optional 13.333 ms cyclic extension of the final mini-probe is off by
 *    default (eot_extension).
 *  - Preamble Walsh symbol length above 24 kHz: D-XIII stops at 24 kHz; 32*BW/3 chips
 *    (320/384/448/512 at 30-48 kHz, one source's extrapolation, 1/75 s like every other
 *    bandwidth) is used. preamble_walsh_chips overrides it if the standard says
 * otherwise.
 *  - The PN alignment (O-1), the w1 caption (O-3), the scrambler orientation and the
 *    tail-biting start do not affect lengths. */
#ifndef HFSTACK_KERNELS_PHY_M110D_TIMING_H
#define HFSTACK_KERNELS_PHY_M110D_TIMING_H

#include "transmission_time.h"

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace gr {
namespace hfstack {
namespace phy {

constexpr double m110d_baud_per_khz = 800.0;
constexpr unsigned m110d_eom_bits = 32;         // 0x4B65A5B2; no flush (tail-biting)
constexpr unsigned m110d_walsh_data_chips = 32; // WN0: chips per Walsh data symbol
constexpr unsigned m110d_superframe_symbols = 9 + 4 + 5;        // fixed + count + WID
constexpr unsigned m110d_single_superframe_symbols = 1 + 4 + 5; // M = 1: fixed is 1
constexpr unsigned m110d_max_tlc_blocks = 255;
constexpr unsigned m110d_max_superframes = 32;
constexpr double m110d_eot_extension_s = 1.0 / 75; // 32*BW/3 symbols at 800*BW Bd

enum class m110d_interleaver { ultra_short, short_, medium, long_ };

struct m110d_preamble_options {
    unsigned tlc_blocks = 0;  // N, 0..255 Walsh-symbol-long TLC blocks before the first
    unsigned superframes = 1; // M, 1..32
    unsigned preamble_walsh_chips = 0; // symbols per preamble Walsh symbol; 0 = 32*BW/3
};

struct m110d_timing_options {
    m110d_preamble_options preamble;
    bool eot_extension = false; // extend the final mini-probe by 13.333 ms
};

struct m110d_mode {
    unsigned bw_khz = 3; // 3, 6, ..., 24, 30, 36, 42, 48
    unsigned wn = 0;     // 0..13 (WN13 at 3 kHz only; no WN4 at 9 and 18 kHz)
    m110d_interleaver interleaver = m110d_interleaver::short_;
    unsigned data_symbols = 0;     // U per frame; WN0: the 32 chips of one Walsh symbol
    unsigned probe_symbols = 0;    // K per frame; WN0: 0
    unsigned frames_per_block = 0; // frames per interleaver block (WN0: Walsh symbols)
    unsigned input_bits_per_block = 0; // user bits one interleaver block carries

    double symbol_rate() const { return m110d_baud_per_khz * bw_khz; }
    double frame_s() const { return (data_symbols + probe_symbols) / symbol_rate(); }
    double block_s() const { return frames_per_block * frame_s(); }
    // Nominal user rate (Table D-II), from the block structure; exact for every mode.
    unsigned user_bps() const;
    // "WN<wn>/<bw>kHz/<US|S|M|L>", e.g. "WN10/3kHz/L".
    std::string name() const;

    // The preamble proper (TLC and super-frames) and the mini-probe that follows it.
    // Throws std::invalid_argument when N or M is out of range.
    double preamble_s(const m110d_preamble_options& options = {}) const;
    double eot_extension_s(const m110d_timing_options& options = {}) const;
    // For planners (max_bytes_within): the EOT extension is a fixed cost like the
    // preamble, so it is folded into preamble_s here; transmission_time_of(timing(o), n)
    // has the same total_s as m110d_transmission_time(mode, n, o).
    waveform_timing timing(const m110d_timing_options& options = {}) const;
};

// nullopt for a bandwidth, WN or interleaver Appendix D lacks (WN0 has no US).
std::optional<m110d_mode>
m110d_mode_for(unsigned bw_khz, unsigned wn, m110d_interleaver il);

// The mode with this nominal user rate at this bandwidth (rates are unique per
// bandwidth); nullopt if none.
std::optional<m110d_mode>
m110d_mode_for_rate(unsigned bw_khz, unsigned user_bps, m110d_interleaver il);

// The mode named as m110d_mode::name() gives it ("WN10/3kHz/L", letters in any case);
// nullopt for anything else. Every mode's name, by bandwidth then WN then interleaver.
std::optional<m110d_mode> m110d_mode_by_name(const std::string& name);
std::vector<std::string> m110d_mode_names();
// Every mode of one bandwidth, by WN then interleaver (US, S, M, L).
std::vector<m110d_mode> m110d_modes_at(unsigned bw_khz);

// Air time of one transmission carrying `bytes` user bytes. units = interleaver blocks;
// preamble_s includes the mini-probe after the preamble, data_s the EOT extension.
transmission_time m110d_transmission_time(const m110d_mode& mode,
                                          size_t bytes,
                                          const m110d_timing_options& options = {});

} // namespace phy
} // namespace hfstack
} // namespace gr

#endif
