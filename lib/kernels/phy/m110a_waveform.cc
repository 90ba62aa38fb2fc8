/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "m110a_waveform.h"

namespace gr {
namespace hfstack {
namespace phy {

namespace {

using il = m110a_interleaver;
using mod = m110a_modulation;

} // namespace

// m110a.json "modes" (D1/D2 from preamble.D1_D2_table).
const std::vector<m110a_waveform>& m110a_waveforms()
{
    static const std::vector<m110a_waveform> modes = {
        // name  bps  interleaver modulation bits coded rep d1 d2 seg  U   K  frames rows
        // cols inc dec
        { "75S",
          75,
          il::short_,
          mod::walsh,
          2,
          true,
          1,
          7,
          5,
          3,
          32,
          0,
          45,
          10,
          9,
          7,
          7 },
        { "75L",
          75,
          il::long_,
          mod::walsh,
          2,
          true,
          1,
          5,
          5,
          24,
          32,
          0,
          360,
          20,
          36,
          7,
          7 },
        { "150S",
          150,
          il::short_,
          mod::bpsk,
          1,
          true,
          4,
          7,
          4,
          3,
          20,
          20,
          36,
          40,
          18,
          9,
          17 },
        { "150L",
          150,
          il::long_,
          mod::bpsk,
          1,
          true,
          4,
          5,
          4,
          24,
          20,
          20,
          288,
          40,
          144,
          9,
          17 },
        { "300S",
          300,
          il::short_,
          mod::bpsk,
          1,
          true,
          2,
          6,
          7,
          3,
          20,
          20,
          36,
          40,
          18,
          9,
          17 },
        { "300L",
          300,
          il::long_,
          mod::bpsk,
          1,
          true,
          2,
          4,
          7,
          24,
          20,
          20,
          288,
          40,
          144,
          9,
          17 },
        { "600S",
          600,
          il::short_,
          mod::bpsk,
          1,
          true,
          1,
          6,
          6,
          3,
          20,
          20,
          36,
          40,
          18,
          9,
          17 },
        { "600L",
          600,
          il::long_,
          mod::bpsk,
          1,
          true,
          1,
          4,
          6,
          24,
          20,
          20,
          288,
          40,
          144,
          9,
          17 },
        { "1200S",
          1200,
          il::short_,
          mod::qpsk,
          2,
          true,
          1,
          6,
          5,
          3,
          20,
          20,
          36,
          40,
          36,
          9,
          17 },
        { "1200L",
          1200,
          il::long_,
          mod::qpsk,
          2,
          true,
          1,
          4,
          5,
          24,
          20,
          20,
          288,
          40,
          288,
          9,
          17 },
        { "2400S",
          2400,
          il::short_,
          mod::psk8,
          3,
          true,
          1,
          6,
          4,
          3,
          32,
          16,
          30,
          40,
          72,
          9,
          17 },
        { "2400L",
          2400,
          il::long_,
          mod::psk8,
          3,
          true,
          1,
          4,
          4,
          24,
          32,
          16,
          240,
          40,
          576,
          9,
          17 },
        // Uncoded, not interleaved; D1/D2 probes still mark every 30 frames (brain, S).
        { "4800U",
          4800,
          il::zero,
          mod::psk8,
          3,
          false,
          1,
          7,
          6,
          3,
          32,
          16,
          30,
          0,
          0,
          0,
          0 },
    };
    return modes;
}

const m110a_waveform* m110a_waveform_by_name(const std::string& name)
{
    for (const m110a_waveform& m : m110a_waveforms())
        if (name == m.name)
            return &m;
    return nullptr;
}

const m110a_waveform* m110a_waveform_by_code(unsigned d1, unsigned d2)
{
    for (const m110a_waveform& m : m110a_waveforms())
        if (m.d1 == d1 && m.d2 == d2)
            return &m;
    return nullptr;
}

const std::array<std::array<uint8_t, 8>, 8> m110a_walsh8 = { {
    { 0, 0, 0, 0, 0, 0, 0, 0 },
    { 0, 4, 0, 4, 0, 4, 0, 4 },
    { 0, 0, 4, 4, 0, 0, 4, 4 },
    { 0, 4, 4, 0, 0, 4, 4, 0 },
    { 0, 0, 0, 0, 4, 4, 4, 4 },
    { 0, 4, 0, 4, 4, 0, 4, 0 },
    { 0, 0, 4, 4, 4, 4, 0, 0 },
    { 0, 4, 4, 0, 4, 0, 0, 4 },
} };

const std::array<uint8_t, 32> m110a_preamble_scramble = { 7, 4, 3, 0, 5, 1, 5, 0, 2, 2, 1,
                                                          1, 5, 7, 4, 3, 5, 0, 2, 6, 2, 1,
                                                          6, 2, 0, 0, 5, 0, 5, 2, 6, 6 };

std::array<uint8_t, m110a_segment_symbols>
m110a_preamble_segment(unsigned d1, unsigned d2, unsigned count)
{
    // Channel symbols 0 1 3 0 1 3 1 2 0 D1 D2 C1 C2 C3 0, each 32 scrambled chips.
    const unsigned values[15] = { 0,
                                  1,
                                  3,
                                  0,
                                  1,
                                  3,
                                  1,
                                  2,
                                  0,
                                  d1 & 7,
                                  d2 & 7,
                                  4 + ((count >> 4) & 3),
                                  4 + ((count >> 2) & 3),
                                  4 + (count & 3),
                                  0 };
    std::array<uint8_t, m110a_segment_symbols> out{};
    for (unsigned s = 0; s < 15; ++s)
        for (unsigned k = 0; k < 32; ++k)
            out[s * 32 + k] = uint8_t(
                (m110a_walsh8[values[s]][k % 8] + m110a_preamble_scramble[k]) % 8);
    return out;
}

const std::array<uint8_t, 160>& m110a_data_scrambler()
{
    static const std::array<uint8_t, 160> values = [] {
        std::array<uint8_t, 160> v{};
        unsigned r = 0xBAD;
        for (uint8_t& out : v) {
            for (int clock = 0; clock < 8; ++clock) {
                const unsigned carry = r >> 11;
                r = (r << 1) & 0xFFF;
                if (carry)
                    r ^= 0x053;
            }
            out = uint8_t(r & 7);
        }
        return v;
    }();
    return values;
}

uint8_t m110a_map_tribit(unsigned tribit)
{
    static const uint8_t map[8] = { 0, 1, 3, 2, 7, 6, 4, 5 }; // inverse of gray(s)
    return map[tribit & 7];
}

uint8_t m110a_map_dibit(unsigned dibit)
{
    static const uint8_t map[4] = { 0, 2, 6, 4 };
    return map[dibit & 3];
}

uint8_t m110a_map_bit(unsigned bit) { return (bit & 1) ? 4 : 0; }

unsigned m110a_walsh_symbol_of_dibit(unsigned dibit)
{
    static const unsigned map[4] = { 0, 1, 3, 2 };
    return map[dibit & 3];
}

std::array<uint8_t, 32> m110a_walsh_chips(unsigned channel_symbol, bool exceptional)
{
    // Normal set: Walsh patterns 0..3 repeated four times; exceptional: patterns 4..7.
    const auto& pattern = m110a_walsh8[(channel_symbol & 3) + (exceptional ? 4 : 0)];
    std::array<uint8_t, 32> chips{};
    for (unsigned k = 0; k < 32; ++k)
        chips[k] = pattern[k % 8];
    return chips;
}

std::vector<uint32_t> m110a_fetch_order(const m110a_waveform& mode)
{
    const unsigned rows = mode.rows, cols = mode.cols;
    std::vector<uint32_t> matrix(size_t(rows) * cols);
    unsigned r = 0, c = 0;
    for (uint32_t i = 0; i < rows * cols; ++i) {
        matrix[size_t(r) * cols + c] = i;
        r = (r + mode.row_inc) % rows;
        if (r == 0)
            c = (c + 1) % cols;
    }
    std::vector<uint32_t> order;
    order.reserve(matrix.size());
    unsigned start = 0;
    r = c = 0;
    for (uint32_t k = 0; k < rows * cols; ++k) {
        order.push_back(matrix[size_t(r) * cols + c]);
        r = (r + 1) % rows;
        c = (c + cols - mode.col_dec % cols) % cols;
        if (r == 0) {
            start = (start + 1) % cols;
            c = start;
        }
    }
    return order;
}

} // namespace phy
} // namespace hfstack
} // namespace gr
