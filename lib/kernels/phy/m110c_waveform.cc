/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "m110c_waveform.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>

namespace gr {
namespace hfstack {
namespace phy {

namespace {

using cf = std::complex<float>;

// m110c_appc.json preamble.sync_184_8psk.
const std::array<uint8_t, m110c_sync_symbols> sync_sequence = { {
    1, 5, 1, 3, 6, 1, 3, 1, 1, 6, 3, 7, 7, 3, 5, 4, 3, 6, 6, 4, 5, 4, 0, 2, 2, 2, 6,
    0, 7, 5, 7, 4, 0, 7, 5, 7, 1, 6, 1, 0, 5, 2, 2, 6, 2, 3, 6, 0, 0, 5, 1, 4, 2, 2,
    2, 3, 4, 0, 6, 2, 7, 4, 3, 3, 7, 2, 0, 2, 6, 4, 4, 1, 7, 6, 2, 0, 6, 2, 3, 6, 7,
    4, 3, 6, 1, 3, 7, 4, 6, 5, 7, 2, 0, 1, 1, 1, 4, 4, 0, 0, 5, 7, 7, 4, 7, 3, 5, 4,
    1, 6, 5, 6, 6, 4, 6, 3, 4, 3, 0, 7, 1, 3, 4, 7, 0, 1, 4, 3, 3, 3, 5, 1, 1, 1, 4,
    6, 1, 0, 6, 0, 1, 3, 1, 4, 1, 7, 7, 6, 3, 0, 0, 7, 2, 7, 2, 0, 2, 6, 1, 1, 1, 2,
    7, 7, 5, 3, 3, 6, 0, 5, 3, 3, 1, 0, 7, 1, 1, 0, 3, 0, 4, 0, 7, 3,
} };

// m110c_appc.json mini_probe.base16_8psk.
constexpr std::array<uint8_t, 16> probe_base = { 0, 0, 0, 0, 0, 2, 4, 6,
                                                 0, 4, 0, 4, 0, 6, 4, 2 };

// m110c_appc.json interleaver.increment: rows 3200 .. 9600 bps, columns US .. VL.
constexpr unsigned increments[5][6] = {
    { 97, 229, 805, 1393, 3281, 6985 },     // 3200
    { 145, 361, 1045, 2089, 5137, 10273 },  // 4800
    { 189, 481, 1393, 3281, 6985, 11141 },  // 6400
    { 201, 601, 1741, 3481, 8561, 14441 },  // 8000
    { 229, 805, 2089, 5137, 10273, 17329 }, // 9600
};

// m110c_appc.json constellations (symbol number = index; 110D tables D-VII .. D-IX).
const std::vector<cf> qam16 = {
    { 0.866025f, 0.500000f },   { 0.500000f, 0.866025f },   { 1.000000f, 0.000000f },
    { 0.258819f, 0.258819f },   { -0.500000f, 0.866025f },  { 0.000000f, 1.000000f },
    { -0.866025f, 0.500000f },  { -0.258819f, 0.258819f },  { 0.500000f, -0.866025f },
    { 0.000000f, -1.000000f },  { 0.866025f, -0.500000f },  { 0.258819f, -0.258819f },
    { -0.866025f, -0.500000f }, { -0.500000f, -0.866025f }, { -1.000000f, 0.000000f },
    { -0.258819f, -0.258819f },
};
const std::vector<cf> qam32 = {
    { 0.866380f, 0.499386f },   { 0.984849f, 0.173415f },   { 0.499386f, 0.866380f },
    { 0.173415f, 0.984849f },   { 0.520246f, 0.520246f },   { 0.520246f, 0.173415f },
    { 0.173415f, 0.520246f },   { 0.173415f, 0.173415f },   { -0.866380f, 0.499386f },
    { -0.984849f, 0.173415f },  { -0.499386f, 0.866380f },  { -0.173415f, 0.984849f },
    { -0.520246f, 0.520246f },  { -0.520246f, 0.173415f },  { -0.173415f, 0.520246f },
    { -0.173415f, 0.173415f },  { 0.866380f, -0.499386f },  { 0.984849f, -0.173415f },
    { 0.499386f, -0.866380f },  { 0.173415f, -0.984849f },  { 0.520246f, -0.520246f },
    { 0.520246f, -0.173415f },  { 0.173415f, -0.520246f },  { 0.173415f, -0.173415f },
    { -0.866380f, -0.499386f }, { -0.984849f, -0.173415f }, { -0.499386f, -0.866380f },
    { -0.173415f, -0.984849f }, { -0.520246f, -0.520246f }, { -0.520246f, -0.173415f },
    { -0.173415f, -0.520246f }, { -0.173415f, -0.173415f },
};
const std::vector<cf> qam64 = {
    { 1.000000f, 0.000000f },   { 0.822878f, 0.568218f },   { 0.821137f, 0.152996f },
    { 0.932897f, 0.360142f },   { 0.000000f, -1.000000f },  { 0.822878f, -0.568218f },
    { 0.821137f, -0.152996f },  { 0.932897f, -0.360142f },  { 0.568218f, 0.822878f },
    { 0.588429f, 0.588429f },   { 0.588429f, 0.117686f },   { 0.588429f, 0.353057f },
    { 0.568218f, -0.822878f },  { 0.588429f, -0.588429f },  { 0.588429f, -0.117686f },
    { 0.588429f, -0.353057f },  { 0.152996f, 0.821137f },   { 0.117686f, 0.588429f },
    { 0.117686f, 0.117686f },   { 0.117686f, 0.353057f },   { 0.152996f, -0.821137f },
    { 0.117686f, -0.588429f },  { 0.117686f, -0.117686f },  { 0.117686f, -0.353057f },
    { 0.360142f, 0.932897f },   { 0.353057f, 0.588429f },   { 0.353057f, 0.117686f },
    { 0.353057f, 0.353057f },   { 0.360142f, -0.932897f },  { 0.353057f, -0.588429f },
    { 0.353057f, -0.117686f },  { 0.353057f, -0.353057f },  { 0.000000f, 1.000000f },
    { -0.822878f, 0.568218f },  { -0.821137f, 0.152996f },  { -0.932897f, 0.360142f },
    { -1.000000f, 0.000000f },  { -0.822878f, -0.568218f }, { -0.821137f, -0.152996f },
    { -0.932897f, -0.360142f }, { -0.568218f, 0.822878f },  { -0.588429f, 0.588429f },
    { -0.588429f, 0.117686f },  { -0.588429f, 0.353057f },  { -0.568218f, -0.822878f },
    { -0.588429f, -0.588429f }, { -0.588429f, -0.117686f }, { -0.588429f, -0.353057f },
    { -0.152996f, 0.821137f },  { -0.117686f, 0.588429f },  { -0.117686f, 0.117686f },
    { -0.117686f, 0.353057f },  { -0.152996f, -0.821137f }, { -0.117686f, -0.588429f },
    { -0.117686f, -0.117686f }, { -0.117686f, -0.353057f }, { -0.360142f, 0.932897f },
    { -0.353057f, 0.588429f },  { -0.353057f, 0.117686f },  { -0.353057f, 0.353057f },
    { -0.360142f, -0.932897f }, { -0.353057f, -0.588429f }, { -0.353057f, -0.117686f },
    { -0.353057f, -0.353057f },
};

std::vector<cf> psk8_points()
{
    std::vector<cf> p(8);
    for (unsigned s = 0; s < 8; ++s)
        p[s] = std::polar(1.0f, float(s * 3.14159265358979323846 / 4));
    return p;
}

// The 103-symbol section: MP+ | 2 | D0 D1 D2 | 6 | MP-, D_i from the dibit (rate bit i,
// interleaver bit i).
std::vector<uint8_t> section(const m110c_mode& mode)
{
    const unsigned rate = m110c_rate_code(mode);
    const unsigned interleaver = m110c_interleaver_code(mode.interleaver);
    std::vector<uint8_t> s;
    const auto& plus = m110c_probe(false);
    const auto& minus = m110c_probe(true);
    s.insert(s.end(), plus.begin(), plus.end());
    s.push_back(2);
    for (unsigned i = 0; i < 3; ++i) {
        const unsigned dibit =
            ((rate >> (2 - i)) & 1) << 1 | ((interleaver >> (2 - i)) & 1);
        for (unsigned j = 0; j < m110c_d_field_symbols; ++j)
            s.push_back(uint8_t(m110c_d_chip(j, m110c_quadrant_of_dibit[dibit])));
    }
    s.push_back(6);
    s.insert(s.end(), minus.begin(), minus.end());
    return s;
}

} // namespace

unsigned m110c_rate_code(const m110c_mode& mode)
{
    if (!mode.coded)
        return 6;
    switch (mode.user_bps) {
    case 3200:
        return 1;
    case 4800:
        return 2;
    case 6400:
        return 3;
    case 8000:
        return 4;
    case 9600:
        return 5;
    }
    throw std::invalid_argument("m110c_rate_code: no App C rate of " +
                                std::to_string(mode.user_bps) + " bps");
}

unsigned m110c_interleaver_code(m110c_interleaver interleaver)
{
    return unsigned(interleaver) + 1;
}

std::optional<m110c_mode> m110c_mode_by_code(unsigned rate_code,
                                             unsigned interleaver_code)
{
    static const unsigned bps_of_rate[8] = { 0, 3200, 4800, 6400, 8000, 9600, 12800, 0 };
    if (rate_code > 7 || interleaver_code < 1 || interleaver_code > 6 ||
        bps_of_rate[rate_code] == 0)
        return std::nullopt;
    return m110c_mode_for(bps_of_rate[rate_code],
                          m110c_interleaver(interleaver_code - 1));
}

const std::array<uint8_t, m110c_sync_symbols>& m110c_sync_sequence()
{
    return sync_sequence;
}

std::vector<uint8_t> m110c_preamble(const m110c_mode& mode)
{
    std::vector<uint8_t> p(sync_sequence.begin(), sync_sequence.end());
    const std::vector<uint8_t> s = section(mode);
    p.insert(p.end(), s.begin(), s.end());
    return p;
}

std::vector<uint8_t> m110c_reinserted_section(const m110c_mode& mode)
{
    const std::vector<uint8_t> s = section(mode);
    return std::vector<uint8_t>(s.end() - m110c_reinserted_symbols, s.end());
}

const std::array<uint8_t, m110c_probe_symbols>& m110c_probe(bool minus)
{
    static const auto make = [](unsigned shift) {
        std::array<uint8_t, m110c_probe_symbols> p{};
        for (unsigned k = 0; k < m110c_probe_symbols; ++k)
            p[k] = uint8_t((probe_base[k % 16] + shift) % 8);
        return p;
    };
    static const auto plus_probe = make(0), minus_probe = make(4);
    return minus ? minus_probe : plus_probe;
}

bool m110c_probe_is_minus(const m110c_mode& mode, unsigned n)
{
    // s = 1111111 0 | rate code | interleaver code | group (n / 18) + 1 | 0
    const unsigned k = n % 18;
    if (k < 7)
        return true;
    if (k == 7 || k == 17)
        return false;
    const unsigned field = k < 11   ? m110c_rate_code(mode)
                           : k < 14 ? m110c_interleaver_code(mode.interleaver)
                                    : (n / 18) % 4 + 1;
    const unsigned bit = (k - 8) % 3;
    return (field >> (2 - bit)) & 1;
}

std::array<uint8_t, m110c_data_symbols>
m110c_data_scrambler(unsigned bits_per_symbol, m110c_scrambler_orientation orientation)
{
    const std::vector<uint8_t> values =
        x9_scrambler_values(m110c_data_symbols, bits_per_symbol, orientation);
    std::array<uint8_t, m110c_data_symbols> out{};
    std::copy(values.begin(), values.end(), out.begin());
    return out;
}

uint8_t m110c_map_bits(unsigned bits, unsigned bits_per_symbol)
{
    static const uint8_t qpsk[4] = { 0, 2, 6, 4 };             // 00 01 10 11
    static const uint8_t psk8[8] = { 1, 0, 2, 3, 6, 7, 5, 4 }; // 000 .. 111 (D-V)
    if (bits_per_symbol == 2)
        return qpsk[bits & 3];
    if (bits_per_symbol == 3)
        return psk8[bits & 7];
    return uint8_t(bits & ((1u << bits_per_symbol) - 1));
}

const std::vector<std::complex<float>>& m110c_constellation(unsigned bits_per_symbol)
{
    static const std::vector<cf> psk8 = psk8_points();
    switch (bits_per_symbol) {
    case 2:
    case 3:
        return psk8;
    case 4:
        return qam16;
    case 5:
        return qam32;
    case 6:
        return qam64;
    }
    throw std::invalid_argument("m110c_constellation: no App C constellation of " +
                                std::to_string(bits_per_symbol) + " bits per symbol");
}

std::vector<uint8_t>
m110c_tail_biting_encode(const uint8_t* bits, size_t n, m110c_tail_biting reading)
{
    return tail_biting_encode(conv_code_k7, bits, n, reading);
}

double m110c_constellation_power(unsigned bits_per_symbol)
{
    if (bits_per_symbol <= 3)
        return 1.0; // 8PSK points on the unit circle (exactly, not to float rounding)
    double p = 0;
    const auto& points = m110c_constellation(bits_per_symbol);
    for (const auto& x : points)
        p += std::norm(x);
    return p / double(points.size());
}

double m110c_frame_power(const m110c_mode& mode)
{
    return (m110c_data_symbols * m110c_constellation_power(mode.bits_per_symbol) +
            m110c_probe_symbols) /
           m110c_frame_symbols;
}

unsigned m110c_interleaver_bits(const m110c_mode& mode)
{
    return mode.frames_per_block * m110c_data_symbols * mode.bits_per_symbol;
}

unsigned m110c_interleaver_increment(const m110c_mode& mode)
{
    if (!mode.coded)
        return 0;
    return increments[m110c_rate_code(mode) - 1][unsigned(mode.interleaver)];
}

std::vector<uint32_t> m110c_fetch_order(const m110c_mode& mode)
{
    if (!mode.coded)
        return {};
    return increment_fetch_order(m110c_interleaver_bits(mode),
                                 m110c_interleaver_increment(mode));
}

} // namespace phy
} // namespace hfstack
} // namespace gr
