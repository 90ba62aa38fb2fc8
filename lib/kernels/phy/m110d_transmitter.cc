/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "m110d_transmitter.h"

#include "m110a_transmitter.h"
#include "m110a_waveform.h"

#include <stdexcept>
#include <string>

namespace gr {
namespace hfstack {
namespace phy {

m110d_symbol_role m110d_role_after_preamble(const m110d_mode& mode, uint64_t k)
{
    if (mode.wn == 0)
        return { m110d_symbol_kind::data,
                 int64_t(k / m110d_walsh_data_chips),
                 unsigned(k % m110d_walsh_data_chips) };
    if (k < mode.probe_symbols)
        return { m110d_symbol_kind::probe, -1, unsigned(k) };
    k -= mode.probe_symbols;
    const uint64_t frame = mode.data_symbols + mode.probe_symbols;
    const unsigned at = unsigned(k % frame);
    if (at < mode.data_symbols)
        return { m110d_symbol_kind::data, int64_t(k / frame), at };
    return { m110d_symbol_kind::probe, int64_t(k / frame), at - mode.data_symbols };
}

std::complex<float> m110d_probe_point(const m110d_mode& mode,
                                      const m110d_symbol_role& role)
{
    const auto shape = m110d_probe_shape_of(mode.probe_symbols);
    if (role.kind != m110d_symbol_kind::probe || !shape)
        throw std::invalid_argument("m110d_probe_point: not a probe symbol of " +
                                    mode.name());
    const auto& base = m110d_probe_base(shape->base_length);
    const unsigned start =
        m110d_probe_is_boundary(mode, role.frame) ? shape->boundary_shift : 0;
    return base[(role.position + start) % base.size()];
}

std::vector<uint8_t>
m110d_message_bits(const m110d_mode& mode, const uint8_t* bytes, size_t n, bool msb_first)
{
    // User bits and the EOM (m110a_message_bits adds 110A's flush too: App D has none,
    // its code is tail-biting).
    static_assert(m110d_eom == m110a_eom, "App D's EOM is 110A's word");
    std::vector<uint8_t> bits = m110a_message_bits(bytes, n, msb_first);
    bits.resize(8 * n + m110d_eom_bits);
    const size_t per_block = mode.input_bits_per_block;
    bits.resize((bits.size() + per_block - 1) / per_block * per_block, 0);
    return bits;
}

std::vector<uint8_t> m110d_channel_bits(const m110d_mode& mode,
                                        const uint8_t* bytes,
                                        size_t n,
                                        const m110d_transmit_options& options)
{
    const std::vector<uint8_t> bits =
        m110d_message_bits(mode, bytes, n, options.msb_first);
    const std::vector<uint32_t> order = m110d_fetch_order(mode);
    const size_t blocks = bits.size() / mode.input_bits_per_block;
    std::vector<uint8_t> out;
    out.reserve(blocks * order.size());
    for (size_t b = 0; b < blocks; ++b) {
        const std::vector<uint8_t> block =
            m110d_block_channel_bits(mode,
                                     bits.data() + b * mode.input_bits_per_block,
                                     order,
                                     options.constraint_length,
                                     options.readings.tail_biting);
        out.insert(out.end(), block.begin(), block.end());
    }
    return out;
}

std::vector<std::complex<float>>
m110d_transmit_points(const m110d_mode& mode,
                      const uint8_t* bytes,
                      size_t n,
                      const m110d_transmit_options& options)
{
    const std::vector<uint8_t> bits = m110d_channel_bits(mode, bytes, n, options);
    const auto& psk8 = m110d_constellation(3);
    std::vector<std::complex<float>> out;
    for (uint8_t s : m110d_preamble(
             mode, options.timing.preamble, options.constraint_length, options.readings))
        out.push_back(psk8[s]);

    if (mode.wn == 0) {
        // One coded dibit per 32-chip Walsh symbol; the Trinomial scrambler restarts at
        // every interleaver block and wraps after 2048 chips.
        const auto& trinomial = m110d_trinomial_sequence();
        const size_t block_bits = m110d_interleaver_bits(mode);
        for (size_t k = 0; k + 1 < bits.size(); k += 2) {
            const unsigned dibit = unsigned(bits[k]) << 1 | bits[k + 1];
            const size_t first_chip = (k % block_bits) / 2 * m110d_walsh_data_chips;
            for (unsigned j = 0; j < m110d_walsh_data_chips; ++j)
                out.push_back(
                    psk8[(m110d_wn0_walsh_chip(dibit, j) +
                          trinomial[(first_chip + j) % m110d_trinomial_period]) %
                         8]);
        }
        return out;
    }

    const unsigned nb = m110d_bits_per_symbol(mode.wn);
    const bool psk = nb <= 3;
    const auto& points = m110d_constellation(nb);
    const std::vector<uint8_t> scrambler =
        m110d_data_scrambler(mode, options.readings.scrambler);
    const size_t frames = bits.size() / (size_t(mode.data_symbols) * nb);
    const auto append_probe = [&](int64_t frame, unsigned length) {
        for (const auto& p : m110d_mini_probe(
                 mode.probe_symbols, m110d_probe_is_boundary(mode, frame), length))
            out.push_back(p);
    };
    append_probe(-1, mode.probe_symbols);
    size_t next_bit = 0;
    for (size_t f = 0; f < frames; ++f) {
        for (unsigned i = 0; i < mode.data_symbols; ++i) {
            unsigned v = 0;
            for (unsigned b = 0; b < nb; ++b)
                v = (v << 1) | bits[next_bit++];
            const uint8_t symbol = m110d_map_bits(v, nb);
            out.push_back(psk ? psk8[(symbol + scrambler[i]) % 8]
                              : points[symbol ^ scrambler[i]]);
        }
        const bool last = f + 1 == frames;
        const unsigned extension =
            last && options.timing.eot_extension ? m110d_eot_extension_symbols(mode) : 0;
        append_probe(int64_t(f), mode.probe_symbols + extension);
    }
    return out;
}

m110d_timing_options m110d_timing_under(const m110d_mode& mode,
                                        const m110d_transmit_options& options)
{
    m110d_timing_options timing = options.timing;
    timing.preamble =
        m110d_preamble_options_under(mode, timing.preamble, options.readings);
    return timing;
}

double m110d_sample_rate(unsigned bw_khz)
{
    const std::vector<m110d_mode> modes = m110d_modes_at(bw_khz);
    if (modes.empty())
        throw std::invalid_argument("m110d_sample_rate: Appendix D has no " +
                                    std::to_string(bw_khz) +
                                    " kHz bandwidth (3, 6, ..., 24, 30, 36, 42, 48)");
    return m110d_samples_per_symbol * modes.front().symbol_rate();
}

psk_modulator_config m110d_modulator_config(const m110d_mode& mode, double sample_rate)
{
    psk_modulator_config c;
    c.symbol_rate = mode.symbol_rate();
    c.sample_rate = sample_rate > 0 ? sample_rate : m110d_sample_rate(mode.bw_khz);
    c.carrier_hz = 300.0 + 500.0 * mode.bw_khz;
    return c;
}

} // namespace phy
} // namespace hfstack
} // namespace gr
