/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "m110c_transmitter.h"

#include "m110a_transmitter.h"
#include "m110a_waveform.h"


namespace gr {
namespace hfstack {
namespace phy {

m110c_symbol_role m110c_role_of(uint64_t k)
{
    if (k < m110c_preamble_symbols)
        return { m110c_symbol_kind::preamble, 0, unsigned(k) };
    k -= m110c_preamble_symbols;
    // 72 frames, then the re-inserted section.
    constexpr uint64_t group =
        uint64_t(m110c_reinsert_period_frames) * m110c_frame_symbols +
        m110c_reinserted_symbols;
    const uint64_t g = k / group, in_group = k % group;
    const uint64_t in_frames =
        uint64_t(m110c_reinsert_period_frames) * m110c_frame_symbols;
    if (in_group >= in_frames)
        return { m110c_symbol_kind::reinserted,
                 (g + 1) * m110c_reinsert_period_frames - 1,
                 unsigned(in_group - in_frames) };
    const uint64_t frame =
        g * m110c_reinsert_period_frames + in_group / m110c_frame_symbols;
    const unsigned at = unsigned(in_group % m110c_frame_symbols);
    if (at < m110c_data_symbols)
        return { m110c_symbol_kind::data, frame, at };
    return { m110c_symbol_kind::probe, frame, at - m110c_data_symbols };
}

std::vector<uint8_t> m110c_channel_bits(const m110c_mode& mode,
                                        const uint8_t* bytes,
                                        size_t n,
                                        bool msb_first,
                                        const m110c_readings& readings)
{
    // User bits and the EOM (m110a_message_bits adds 110A's flush too: App C has none).
    static_assert(m110c_eom == m110a_eom, "App C's EOM is read as 110A's");
    std::vector<uint8_t> bits = m110a_message_bits(bytes, n, msb_first);
    bits.resize(8 * n + m110c_eom_bits);
    const size_t block_bits = m110c_interleaver_bits(mode);
    const size_t user_per_block = mode.coded ? block_bits * 3 / 4 : block_bits;
    bits.resize((bits.size() + user_per_block - 1) / user_per_block * user_per_block, 0);
    if (!mode.coded)
        return bits;

    const std::vector<uint32_t> order = m110c_fetch_order(mode);
    std::vector<uint8_t> out;
    out.reserve(bits.size() / user_per_block * block_bits);
    for (size_t b = 0; b < bits.size() / user_per_block; ++b) {
        const std::vector<uint8_t> block = m110c_block_channel_bits(
            mode, bits.data() + b * user_per_block, order, readings);
        out.insert(out.end(), block.begin(), block.end());
    }
    return out;
}

std::vector<uint8_t> m110c_block_channel_bits(const m110c_mode& mode,
                                              const uint8_t* user_bits,
                                              const std::vector<uint32_t>& fetch_order,
                                              const m110c_readings& readings)
{
    const size_t block_bits = m110c_interleaver_bits(mode);
    const std::vector<uint8_t> coded =
        m110c_tail_biting_encode(user_bits, block_bits * 3 / 4, readings.tail_biting);
    std::vector<uint8_t> punctured;
    punctured.reserve(block_bits);
    for (size_t i = 0; i < coded.size(); ++i)
        if (m110c_puncture_kept[i % 6])
            punctured.push_back(coded[i]);
    std::vector<uint8_t> sent(block_bits);
    for (size_t k = 0; k < block_bits; ++k)
        sent[k] = punctured[fetch_order[k]];
    return sent;
}

std::vector<std::complex<float>> m110c_transmit_points(const m110c_mode& mode,
                                                       const uint8_t* bytes,
                                                       size_t n,
                                                       bool msb_first,
                                                       const m110c_readings& readings)
{
    const std::vector<uint8_t> bits =
        m110c_channel_bits(mode, bytes, n, msb_first, readings);
    const unsigned nb = mode.bits_per_symbol;
    const size_t frames = bits.size() / (size_t(m110c_data_symbols) * nb);
    const bool psk = nb <= 3;
    const auto& points = m110c_constellation(nb);
    const auto& psk8 = m110c_constellation(3);
    const auto scrambler = m110c_data_scrambler(nb, readings.scrambler);

    std::vector<std::complex<float>> out;
    const std::vector<uint8_t> preamble = m110c_preamble(mode);
    const std::vector<uint8_t> reinserted = m110c_reinserted_section(mode);
    for (uint8_t s : preamble)
        out.push_back(psk8[s]);
    size_t next_bit = 0;
    for (size_t f = 0; f < frames; ++f) {
        for (unsigned i = 0; i < m110c_data_symbols; ++i) {
            unsigned v = 0;
            for (unsigned b = 0; b < nb; ++b)
                v = (v << 1) | bits[next_bit++];
            const uint8_t symbol = m110c_map_bits(v, nb);
            if (psk)
                out.push_back(psk8[(symbol + scrambler[i]) % 8]);
            else
                out.push_back(
                    points[symbol ^ scrambler[i]]); // as printed: peak 1, as the probes
        }
        const unsigned n_in_group = unsigned(f % m110c_reinsert_period_frames);
        for (uint8_t s : m110c_probe(m110c_probe_is_minus(mode, n_in_group)))
            out.push_back(psk8[s]);
        if (n_in_group == m110c_reinsert_period_frames - 1)
            for (uint8_t s : reinserted)
                out.push_back(psk8[s]);
    }
    return out;
}

} // namespace phy
} // namespace hfstack
} // namespace gr
