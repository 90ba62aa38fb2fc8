/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

// Helpers of the STANAG 5069 (110D App D) transmitter and decoder tests: the 3 kHz
// modes, lengths from the air-time model, hard decisions on a noise-free transmission,
// block decoding of a whole transmission and the check of its message bits.
#ifndef HFSTACK_TESTS_M110D_TEST_SUPPORT_H
#define HFSTACK_TESTS_M110D_TEST_SUPPORT_H

#include "phy/m110d_decoder.h"
#include "phy/m110d_timing.h"
#include "phy/m110d_transmitter.h"
#include "phy/m110d_waveform.h"

#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <string>
#include <vector>

namespace m110d_test {

using namespace gr::hfstack::phy;

using cf = std::complex<float>;

inline std::vector<m110d_mode> modes_3khz() { return m110d_modes_at(3); }

inline size_t
symbols_of(const m110d_mode& m, size_t bytes, const m110d_transmit_options& o)
{
    return size_t(std::lround(m110d_transmission_time(m, bytes, o.timing).total_s *
                              m.symbol_rate()));
}

inline size_t preamble_symbols(const m110d_mode& m, const m110d_transmit_options& o)
{
    const unsigned walsh =
        o.timing.preamble.tlc_blocks +
        (o.timing.preamble.superframes == 1 ? 10 : 18 * o.timing.preamble.superframes);
    return walsh * m110d_preamble_walsh_chips(m, o.timing.preamble);
}

// Hard decisions on a transmission's data, back to channel bits (+1 / -1 LLRs).
inline std::vector<float> hard_channel_llrs(const m110d_mode& m,
                                            const std::vector<cf>& points,
                                            const m110d_transmit_options& o)
{
    std::vector<float> llr;
    const auto push_bits = [&llr](unsigned v, unsigned n) {
        for (unsigned b = 0; b < n; ++b)
            llr.push_back(((v >> (n - 1 - b)) & 1u) ? -1.0f : 1.0f);
    };
    const auto psk8_number = [](cf z) {
        return unsigned(std::lround(std::arg(z) / (M_PI / 4)) + 8) % 8;
    };
    size_t k = preamble_symbols(m, o);
    if (m.wn == 0) {
        const auto& t = m110d_trinomial_sequence();
        const size_t per_block = m.frames_per_block;
        for (size_t w = 0; k + 32 <= points.size(); ++w, k += 32) {
            unsigned best = 0, best_match = 0;
            for (unsigned dibit = 0; dibit < 4; ++dibit) {
                unsigned match = 0;
                for (unsigned j = 0; j < 32; ++j)
                    match += psk8_number(points[k + j]) ==
                             (m110d_wn0_walsh_chip(dibit, j) +
                              t[((w % per_block) * 32 + j) % 2048]) %
                                 8;
                if (match > best_match) {
                    best_match = match;
                    best = dibit;
                }
            }
            push_bits(best, 2);
        }
        return llr;
    }
    const unsigned nb = m110d_bits_per_symbol(m.wn);
    const auto scrambler = m110d_data_scrambler(m, o.readings.scrambler);
    const auto& table = m110d_constellation(nb);
    k += m.probe_symbols;
    for (; k + m.data_symbols + m.probe_symbols <= points.size();
         k += m.data_symbols + m.probe_symbols)
        for (unsigned i = 0; i < m.data_symbols; ++i) {
            const cf z = points[k + i];
            unsigned symbol = 0;
            if (nb <= 3) {
                symbol = (psk8_number(z) + 8 - scrambler[i]) % 8;
            } else {
                float nearest = 1e9f;
                for (unsigned p = 0; p < table.size(); ++p)
                    if (std::abs(z - table[p]) < nearest) {
                        nearest = std::abs(z - table[p]);
                        symbol = p ^ scrambler[i];
                    }
            }
            unsigned v = 0;
            while (m110d_map_bits(v, nb) != symbol)
                ++v;
            push_bits(v, nb);
        }
    return llr;
}

inline std::vector<uint8_t> decode_all(const m110d_mode& m,
                                       const std::vector<float>& llr,
                                       const m110d_transmit_options& o)
{
    m110d_block_decoder decoder(m, o.constraint_length, o.readings.tail_biting);
    std::vector<uint8_t> bits;
    for (size_t at = 0; at + decoder.channel_bits() <= llr.size();
         at += decoder.channel_bits())
        decoder.decode(llr.data() + at, bits);
    return bits;
}

// The user bits a transmission of `data` must carry: bytes LSB first, EOM, zeros.
inline void expect_message(const std::vector<uint8_t>& bits,
                           const std::vector<uint8_t>& data,
                           const std::string& what)
{
    ASSERT_GE(bits.size(), 8 * data.size() + 32) << what;
    std::vector<uint8_t> bytes(data.size());
    for (size_t i = 0; i < data.size(); ++i)
        for (unsigned b = 0; b < 8; ++b)
            bytes[i] |= uint8_t(bits[8 * i + b] << b);
    EXPECT_EQ(bytes, data) << what;
    uint32_t eom = 0;
    for (unsigned b = 0; b < 32; ++b)
        eom = eom << 1 | bits[8 * data.size() + b];
    EXPECT_EQ(eom, m110d_eom) << what;
    for (size_t i = 8 * data.size() + 32; i < bits.size(); ++i)
        ASSERT_EQ(bits[i], 0) << what << " fill bit " << i;
}


} // namespace m110d_test

#endif
