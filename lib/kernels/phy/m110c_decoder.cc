#include "m110c_decoder.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace gr {
namespace hfstack {
namespace phy {

namespace {
// Pairs decoded on either side of a tail-biting block (its own end before it, its
// start after it), so that the Viterbi's start and end fall far from the block's bits:
// several constraint lengths.
constexpr size_t wrap_pairs = 48;
} // namespace

m110c_demapper::m110c_demapper(const m110c_mode& mode, const m110c_readings& readings)
    : d_bits(mode.bits_per_symbol), d_scrambler(m110c_data_scrambler(mode.bits_per_symbol, readings.scrambler))
{
    for (const auto& p : m110c_constellation(d_bits))
        d_points.push_back(cd(p));
    if (d_bits <= 3) {
        d_label_of.assign(8, 0);
        for (unsigned v = 0; v < (1u << d_bits); ++v) {
            const unsigned s = m110c_map_bits(v, d_bits);
            d_set.push_back(s);
            d_label_of[s] = v;
        }
    }
}

m110c_demapper::cd m110c_demapper::demap(cd u, unsigned i, double sigma2, float* llr) const
{
    constexpr double inf = std::numeric_limits<double>::infinity();
    double best[6][2];
    for (unsigned b = 0; b < d_bits; ++b)
        best[b][0] = best[b][1] = inf;
    const unsigned scr = d_scrambler[i % m110c_data_symbols];
    double nearest = inf;
    cd decision;
    auto consider = [&](const cd& point, unsigned label) {
        const double d = std::norm(u - point);
        if (d < nearest) {
            nearest = d;
            decision = point;
        }
        for (unsigned b = 0; b < d_bits; ++b) {
            double& slot = best[b][(label >> (d_bits - 1 - b)) & 1];
            slot = std::min(slot, d);
        }
    };
    if (d_bits <= 3) {
        for (unsigned s : d_set)
            consider(d_points[(s + scr) % 8], d_label_of[s]);
    } else {
        for (unsigned m = 0; m < d_points.size(); ++m)
            consider(d_points[m], m ^ scr);
    }
    const double scale = 1.0 / std::max(sigma2, 1e-9);
    for (unsigned b = 0; b < d_bits; ++b)
        llr[b] = float((best[b][1] - best[b][0]) * scale);
    return decision;
}

m110c_demapper::cd m110c_demapper::point_of(unsigned label, unsigned i) const
{
    const unsigned scr = d_scrambler[i % m110c_data_symbols];
    const unsigned symbol = m110c_map_bits(label, d_bits);
    return d_bits <= 3 ? d_points[(symbol + scr) % 8] : d_points[symbol ^ scr];
}

m110c_block_decoder::m110c_block_decoder(const m110c_mode& mode, const m110c_readings& readings)
    : d_coded(mode.coded),
      d_reading(readings.tail_biting),
      d_channel_bits(m110c_interleaver_bits(mode)),
      d_user_bits(mode.coded ? m110c_interleaver_bits(mode) * 3 / 4 : m110c_interleaver_bits(mode)),
      d_order(m110c_fetch_order(mode))
{
}

void m110c_block_decoder::decode(const float* llr, std::vector<uint8_t>& bits)
{
    if (!d_coded) {
        double expected_errors = 0;
        for (size_t k = 0; k < d_channel_bits; ++k) {
            bits.push_back(llr[k] < 0 ? 1 : 0);
            expected_errors += 1.0 / (1.0 + std::exp(std::min(std::abs(double(llr[k])), 700.0)));
        }
        d_reliability = -std::log(std::max(expected_errors, 1e-300));
        return;
    }
    // Deinterleave and depuncture: punctured bit n went out k-th where order[k] = n;
    // mother-code position of punctured bit n: the n-th kept one.
    const size_t n = d_user_bits;
    std::vector<float> mother(2 * n, 0.0f);
    std::vector<float> punctured(d_channel_bits);
    for (size_t k = 0; k < d_channel_bits; ++k)
        punctured[d_order[k]] = llr[k];
    size_t next = 0;
    for (size_t i = 0; i < 2 * n; ++i)
        if (m110c_puncture_kept[i % 6])
            mother[i] = punctured[next++];
    // Tail-biting: decode the block with its own end before it and its start after it.
    const size_t wrap = std::min(wrap_pairs, n);
    d_mother.clear();
    d_mother.insert(d_mother.end(), mother.end() - long(2 * wrap), mother.end());
    d_mother.insert(d_mother.end(), mother.begin(), mother.end());
    d_mother.insert(d_mother.end(), mother.begin(), mother.begin() + long(2 * wrap));
    d_decoded = d_viterbi.decode(d_mother.data(), d_mother.size() / 2);
    // Pair j of the block carries bit j (from the block start) or bit j + 6 (from the
    // full register: bits 6 .. n-1, then 0 .. 5).
    const size_t rotation = d_reading == m110c_tail_biting::from_full_register ? 6 : 0;
    const size_t first = bits.size();
    bits.resize(first + n);
    for (size_t j = 0; j < n; ++j)
        bits[first + (j + rotation) % n] = d_decoded[wrap + j];
    // The paths close when the wraps decoded as the block's own end and start (the
    // halves away from the Viterbi's own start, forced to state 0, and its end).
    bool closed = true;
    for (size_t j = 0; j < wrap / 2 && closed; ++j)
        closed = d_decoded[wrap / 2 + j] == d_decoded[n + wrap / 2 + j] && d_decoded[wrap + n + j] == d_decoded[wrap + j];
    judge(mother, bits.data() + first, closed);
}

void m110c_block_decoder::judge(const std::vector<float>& mother, const uint8_t* block_bits, bool closed)
{
    const size_t n = d_user_bits;
    if (!closed || n < reliability_window_pairs) {
        d_reliability = 0;
        return;
    }
    // Pair j of the mother code as the transmitter codes the decoded bits; a punctured
    // position has LLR 0 and weighs nothing.
    const std::vector<uint8_t> coded = m110c_tail_biting_encode(block_bits, n, d_reading);
    std::vector<double> agreement(n, 0.0);
    for (size_t j = 0; j < n; ++j)
        for (size_t t = 0; t < 2; ++t)
            agreement[j] += coded[2 * j + t] ? -mother[2 * j + t] : mother[2 * j + t];
    // Kept bits per window: of each 3 pairs 4 are sent, so a window's mean is over
    // reliability_window_pairs * 4 / 3 of them.
    const double kept = double(reliability_window_pairs) * 4.0 / 3.0;
    double sum = 0;
    for (size_t j = 0; j < reliability_window_pairs; ++j)
        sum += agreement[j];
    double least = sum;
    for (size_t j = reliability_window_pairs; j < n; ++j) {
        sum += agreement[j] - agreement[j - reliability_window_pairs];
        least = std::min(least, sum);
    }
    d_reliability = least / kept;
}

} // namespace phy
} // namespace hfstack
} // namespace gr
