/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "m110a_transmitter.h"

#include "conv_k7.h"

namespace gr {
namespace hfstack {
namespace phy {

std::vector<uint8_t> m110a_message_bits(const uint8_t* bytes, size_t n, bool msb_first)
{
    std::vector<uint8_t> bits;
    bits.reserve(8 * n + m110a_eom_bits + m110a_flush_bits);
    for (size_t k = 0; k < n; ++k)
        for (int b = 0; b < 8; ++b)
            bits.push_back(uint8_t((bytes[k] >> (msb_first ? 7 - b : b)) & 1));
    for (int b = 31; b >= 0; --b)
        bits.push_back(uint8_t((m110a_eom >> b) & 1));
    bits.insert(bits.end(), m110a_flush_bits, 0);
    return bits;
}

m110a_symbol_role m110a_role_of(const m110a_waveform& mode, size_t k)
{
    const size_t frame_len = mode.unknown_symbols + mode.known_symbols;
    const size_t in_frame = k % frame_len;
    if (in_frame < mode.unknown_symbols)
        return { false, 0 };
    const size_t frame_in_block = (k / frame_len) % mode.frames_per_block;
    const size_t j = in_frame - mode.unknown_symbols;
    uint8_t known = 0;
    if (frame_in_block + 2 >= mode.frames_per_block && j < 16) {
        const unsigned code =
            frame_in_block + 2 == mode.frames_per_block ? mode.d1 : mode.d2;
        known = m110a_walsh8[code][j % 8];
    }
    return { true, known };
}

std::vector<uint8_t> m110a_transmit_symbols(const m110a_waveform& mode,
                                            const uint8_t* bytes,
                                            size_t n,
                                            bool msb_first,
                                            m110a_4800u_fill fill)
{
    std::vector<uint8_t> bits = m110a_message_bits(bytes, n, msb_first);

    // Coded bits, filled to whole blocks with zero user bits.
    const size_t bps = mode.bits_per_symbol;
    const size_t symbols_per_block =
        size_t(mode.frames_per_block) * mode.unknown_symbols /
        (mode.modulation == m110a_modulation::walsh ? 32 : 1);
    const size_t block_bits = symbols_per_block * mode.bits_per_symbol;
    const size_t coded_per_bit = mode.coded ? 2 * mode.repeat : 1;
    // Interleaved modes fill to the end of the block; 4800U (not interleaved) to the end
    // of the frame, as the air-time model counts it, or of its probe cycle.
    const size_t frame_bits = size_t(mode.unknown_symbols) * bps;
    const size_t fill_bits = mode.interleaved() ? block_bits
                             : fill == m110a_4800u_fill::probe_cycle
                                 ? frame_bits * mode.frames_per_block
                                 : frame_bits;
    const size_t user_per_block = fill_bits / coded_per_bit;
    bits.resize((bits.size() + user_per_block - 1) / user_per_block * user_per_block, 0);
    std::vector<uint8_t> coded;
    if (mode.coded) {
        k7_encoder encoder;
        std::vector<uint8_t> pair;
        coded.reserve(bits.size() * coded_per_bit);
        for (uint8_t b : bits) {
            pair.clear();
            encoder.encode(&b, 1, pair);
            for (unsigned r = 0; r < mode.repeat; ++r)
                coded.insert(coded.end(), pair.begin(), pair.end());
        }
    } else {
        coded = bits;
    }

    // Interleave block by block.
    if (mode.interleaved()) {
        const std::vector<uint32_t> order = m110a_fetch_order(mode);
        std::vector<uint8_t> block(block_bits);
        for (size_t start = 0; start < coded.size(); start += block_bits) {
            for (size_t k = 0; k < block_bits; ++k)
                block[k] = coded[start + order[k]];
            std::copy(block.begin(), block.end(), coded.begin() + long(start));
        }
    }

    // Map to data symbols (chips at 75 bps), lay out frames, scramble.
    std::vector<uint8_t> data;
    for (size_t k = 0; k + bps <= coded.size(); k += bps) {
        unsigned v = 0;
        for (size_t b = 0; b < bps; ++b)
            v = (v << 1) | coded[k + b];
        switch (mode.modulation) {
        case m110a_modulation::walsh: {
            const size_t index = k / bps; // Walsh symbol number
            const bool last_of_block = index % symbols_per_block == symbols_per_block - 1;
            const auto chips =
                m110a_walsh_chips(m110a_walsh_symbol_of_dibit(v), last_of_block);
            data.insert(data.end(), chips.begin(), chips.end());
            break;
        }
        case m110a_modulation::bpsk:
            data.push_back(m110a_map_bit(v));
            break;
        case m110a_modulation::qpsk:
            data.push_back(m110a_map_dibit(v));
            break;
        case m110a_modulation::psk8:
            data.push_back(m110a_map_tribit(v));
            break;
        }
    }

    std::vector<uint8_t> out;
    const size_t frames = data.size() / mode.unknown_symbols;
    const size_t frame_len = mode.unknown_symbols + mode.known_symbols;
    out.reserve(mode.preamble_segments * m110a_segment_symbols + frames * frame_len);
    for (unsigned s = 0; s < mode.preamble_segments; ++s) {
        const auto seg =
            m110a_preamble_segment(mode.d1, mode.d2, mode.preamble_segments - 1 - s);
        out.insert(out.end(), seg.begin(), seg.end());
    }
    const auto& scrambler = m110a_data_scrambler();
    size_t next_data = 0;
    for (size_t k = 0; k < frames * frame_len; ++k) {
        const m110a_symbol_role role = m110a_role_of(mode, k);
        const uint8_t symbol = role.probe ? role.known : data[next_data++];
        out.push_back(uint8_t((symbol + scrambler[k % 160]) % 8));
    }
    return out;
}

} // namespace phy
} // namespace hfstack
} // namespace gr
