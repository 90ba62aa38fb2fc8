/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "m110d_decoder.h"

#include "helper_threads.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace gr {
namespace hfstack {
namespace phy {

namespace {

// A long block's deinterleaving in ranges: fewer channel bits than this per range are
// not worth sharing.
constexpr size_t min_interleave_range = 32768;

// Re(sum_j y[j] conj(c_d[j])) for each dibit d, c_d[j] the 8PSK chip walsh(d, j) +
// added(j): the added part (PN or scrambler) taken off once, the Walsh part a sign.
template <typename Added>
std::array<double, 4>
walsh_correlations(const std::complex<float>* y, unsigned chips, Added added)
{
    std::array<std::complex<double>, 4> by_position{};
    for (unsigned j = 0; j < chips; ++j)
        by_position[j % 4] += std::complex<double>(y[j]) *
                              std::polar(1.0, -3.14159265358979323846 / 4 * added(j));
    std::array<double, 4> c{};
    for (unsigned d = 0; d < 4; ++d)
        for (unsigned r = 0; r < 4; ++r)
            c[d] += (m110d_walsh_chip(d, r) ? -1.0 : 1.0) * by_position[r].real();
    return c;
}

unsigned data_bits_per_symbol(const m110d_mode& mode)
{
    if (mode.wn == 0)
        throw std::invalid_argument(
            "m110d_demapper: WN0 carries Walsh symbols, not mapped data");
    return m110d_bits_per_symbol(mode.wn);
}
} // namespace

std::array<double, 4> m110d_walsh_correlations(const std::complex<float>* y,
                                               unsigned chips,
                                               m110d_pn_table table,
                                               unsigned index,
                                               m110d_pn_alignment alignment)
{
    const auto& pn = m110d_pn(table);
    const size_t first =
        alignment == m110d_pn_alignment::per_symbol ? 0 : size_t(index) * chips;
    return walsh_correlations(
        y, chips, [&](unsigned j) { return pn[(first + j) % m110d_pn_length]; });
}

std::optional<unsigned> m110d_read_count(const std::complex<float>* y,
                                         unsigned chips,
                                         m110d_pn_alignment alignment)
{
    std::array<uint8_t, 4> dibits{};
    for (unsigned s = 0; s < 4; ++s) {
        const auto c = m110d_walsh_correlations(
            y + size_t(s) * chips, chips, m110d_pn_table::count, s, alignment);
        dibits[s] = uint8_t(std::max_element(c.begin(), c.end()) - c.begin());
    }
    return m110d_count_of(dibits);
}

std::optional<m110d_fields> m110d_read_fields(const std::complex<float>* y,
                                              unsigned chips,
                                              m110d_pn_alignment alignment,
                                              m110d_wid_parity parity)
{
    m110d_fields f;
    f.alignment = alignment;
    f.parity = parity;
    std::array<uint8_t, 9> dibits{};
    for (unsigned s = 0; s < 9; ++s) {
        const bool count = s < 4;
        const auto c =
            m110d_walsh_correlations(y + size_t(s) * chips,
                                     chips,
                                     count ? m110d_pn_table::count : m110d_pn_table::wid,
                                     count ? s : s - 4,
                                     alignment);
        dibits[s] = uint8_t(std::max_element(c.begin(), c.end()) - c.begin());
        f.correlation += c[dibits[s]];
    }
    const auto count = m110d_count_of({ dibits[0], dibits[1], dibits[2], dibits[3] });
    const auto wid =
        m110d_wid_of({ dibits[4], dibits[5], dibits[6], dibits[7], dibits[8] }, parity);
    if (!count || !wid)
        return std::nullopt;
    f.count = *count;
    f.wid = *wid;
    return f;
}

std::optional<m110d_fields> m110d_read_fields_any_reading(const std::complex<float>* y,
                                                          unsigned chips)
{
    std::optional<m110d_fields> best;
    for (auto alignment :
         { m110d_pn_alignment::per_symbol, m110d_pn_alignment::continuous })
        for (auto parity :
             { m110d_wid_parity::checksum, m110d_wid_parity::caption_d2_zero })
            if (auto f = m110d_read_fields(y, chips, alignment, parity))
                if (!best || f->correlation > best->correlation)
                    best = f;
    return best;
}

void m110d_wn0_demap(const std::complex<float>* y,
                     size_t symbol_in_block,
                     double sigma2,
                     float* llr)
{
    const auto& trinomial = m110d_trinomial_sequence();
    const size_t first = symbol_in_block * m110d_walsh_data_chips;
    const auto c = walsh_correlations(y, m110d_walsh_data_chips, [&](unsigned j) {
        return trinomial[(first + j) % m110d_trinomial_period];
    });
    // Log-likelihood of dibit d up to a common term: 2 Re(y . c_d*) / sigma2.
    double ll[4];
    for (unsigned d = 0; d < 4; ++d)
        ll[d] = 2.0 * c[d] / std::max(sigma2, 1e-9);
    // First bit: dibits 0, 1 against 2, 3; second: 0, 2 against 1, 3.
    llr[0] = float(std::max(ll[0], ll[1]) - std::max(ll[2], ll[3]));
    llr[1] = float(std::max(ll[0], ll[2]) - std::max(ll[1], ll[3]));
}

m110d_demapper::m110d_demapper(const m110d_mode& mode, const m110d_readings& readings)
    : serial_tone_demapper(data_bits_per_symbol(mode),
                           m110d_constellation(data_bits_per_symbol(mode)),
                           m110d_map_bits,
                           m110d_data_scrambler(mode, readings.scrambler))
{
}

m110d_block_decoder::m110d_block_decoder(const m110d_mode& mode,
                                         unsigned constraint_length,
                                         tail_biting_start start,
                                         bool k7_newest_lsb)
    : d_rate(m110d_code_rate_of(mode)),
      d_constraint_length(constraint_length),
      d_start(start),
      d_user_bits(mode.input_bits_per_block),
      d_order(m110d_fetch_order(mode)),
      d_viterbi(m110d_conv_code(constraint_length, k7_newest_lsb))
{
}

const std::vector<float>& m110d_block_decoder::mother_pairs(const float* llr,
                                                            bool concurrently)
{
    d_punctured.resize(d_order.size());
    float* const punctured = d_punctured.data();
    run_ranges(
        d_order.size(),
        min_interleave_range,
        [&](size_t from, size_t to) {
            for (size_t k = from; k < to; ++k)
                punctured[d_order[k]] = llr[k];
        },
        concurrently);
    m110d_depuncture(
        punctured, d_user_bits, d_rate, d_constraint_length, d_mother, concurrently);
    return d_mother;
}

void m110d_block_decoder::decode(const float* llr,
                                 std::vector<uint8_t>& bits,
                                 bool concurrently)
{
    const std::vector<float>& mother = mother_pairs(llr, concurrently);
    d_viterbi.decode(mother.data(), d_user_bits, d_start, bits, concurrently);
}

double m110d_block_decoder::reliability_of(double expected_errors) const
{
    const double r = -std::log(std::max(expected_errors, 1e-300));
    return d_viterbi.closed() ? r : std::min(r, 0.0);
}

double m110d_block_decoder::reliability()
{
    return reliability_of(d_viterbi.expected_errors());
}

double m110d_block_decoder::decode_with_reliability(const float* llr,
                                                    std::vector<uint8_t>& bits,
                                                    bool concurrently)
{
    const std::vector<float>& mother = mother_pairs(llr, concurrently);
    const double expected = d_viterbi.decode_with_expected_errors(
        mother.data(), d_user_bits, d_start, bits, concurrently);
    return reliability_of(expected);
}

} // namespace phy
} // namespace hfstack
} // namespace gr
