/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "m110c_decoder.h"

#include <algorithm>
#include <array>
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

// The K=7 code's trellis: from state s (the last six input bits, newest in bit 0) input
// b goes to state (2 s + b) mod 64 and sends the pair sign[s][2 b], sign[s][2 b + 1]
// (+1 for a 0 bit), taken from the encoder itself.
struct k7_trellis {
    std::array<std::array<float, 4>, 64> sign;
    k7_trellis()
    {
        for (unsigned s = 0; s < 64; ++s)
            for (unsigned b = 0; b < 2; ++b) {
                uint8_t bits[7];
                for (unsigned i = 0; i < 6; ++i)
                    bits[i] = uint8_t((s >> (5 - i)) & 1);
                bits[6] = uint8_t(b);
                k7_encoder encoder;
                std::vector<uint8_t> out;
                encoder.encode(bits, 7, out);
                sign[s][2 * b] = out[12] ? -1.0f : 1.0f;
                sign[s][2 * b + 1] = out[13] ? -1.0f : 1.0f;
            }
    }
};

const k7_trellis& trellis()
{
    static const k7_trellis t;
    return t;
}

double minus_log(double expected_errors)
{
    return -std::log(std::max(expected_errors, 1e-300));
}

// Probability that a bit with LLR l is decided wrong.
double wrong_probability(double l)
{
    return 1.0 / (1.0 + std::exp(std::min(std::abs(l), 700.0)));
}
} // namespace

m110c_demapper::m110c_demapper(const m110c_mode& mode, const m110c_readings& readings)
    : serial_tone_demapper(mode.bits_per_symbol,
                           m110c_constellation(mode.bits_per_symbol),
                           m110c_map_bits,
                           x9_scrambler_values(m110c_data_symbols,
                                               mode.bits_per_symbol,
                                               readings.scrambler))
{
}

m110c_block_decoder::m110c_block_decoder(const m110c_mode& mode,
                                         const m110c_readings& readings)
    : d_coded(mode.coded),
      d_reading(readings.tail_biting),
      d_channel_bits(m110c_interleaver_bits(mode)),
      d_user_bits(mode.coded ? m110c_interleaver_bits(mode) * 3 / 4
                             : m110c_interleaver_bits(mode)),
      d_order(m110c_fetch_order(mode))
{
}

void m110c_block_decoder::decode(const float* llr, std::vector<uint8_t>& bits)
{
    if (!d_coded) {
        double expected = 0;
        for (size_t k = 0; k < d_channel_bits; ++k) {
            bits.push_back(llr[k] < 0 ? 1 : 0);
            expected += wrong_probability(llr[k]);
        }
        d_reliability = minus_log(expected);
        d_judged = true;
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
    // Pair j of the block carries bit j + the phase's first bit (7, 6 or 0; mod n).
    const size_t rotation = tail_biting_first_bit(d_reading, conv_code_k7);
    const size_t first = bits.size();
    bits.resize(first + n);
    for (size_t j = 0; j < n; ++j)
        bits[first + (j + rotation) % n] = d_decoded[wrap + j];
    // The paths close when the wraps decoded as the block's own end and start (the
    // halves away from the Viterbi's own start, forced to state 0, and its end).
    d_closed = true;
    for (size_t j = 0; j < wrap / 2 && d_closed; ++j)
        d_closed = d_decoded[wrap / 2 + j] == d_decoded[n + wrap / 2 + j] &&
                   d_decoded[wrap + n + j] == d_decoded[wrap + j];
    d_wrap = wrap;
    d_judged = false;
}

double m110c_block_decoder::reliability()
{
    if (!d_judged) {
        const double r = minus_log(expected_errors(d_wrap, d_user_bits));
        d_reliability = d_closed ? r : std::min(r, 0.0);
        d_judged = true;
    }
    return d_reliability;
}

double m110c_block_decoder::expected_errors(size_t first, size_t n)
{
    // Max-log MAP over the whole wrapped sequence, from and to unknown states: the wraps
    // settle the metrics before the block's own pairs (as for the Viterbi).
    const k7_trellis& t = trellis();
    const size_t steps = d_mother.size() / 2;
    const float* m = d_mother.data();
    const auto branch = [&](size_t k, unsigned s, unsigned b) {
        return 0.5f * (t.sign[s][2 * b] * m[2 * k] + t.sign[s][2 * b + 1] * m[2 * k + 1]);
    };
    // Backward metrics beta[k][s]: the best continuation from state s before pair k.
    d_beta.assign((steps + 1) * 64, 0.0f);
    for (size_t k = steps; k-- > 0;) {
        float* now = &d_beta[k * 64];
        const float* next = &d_beta[(k + 1) * 64];
        float top = -std::numeric_limits<float>::infinity();
        for (unsigned s = 0; s < 64; ++s) {
            const unsigned to = (2 * s) & 63;
            now[s] = std::max(branch(k, s, 0) + next[to], branch(k, s, 1) + next[to | 1]);
            top = std::max(top, now[s]);
        }
        for (unsigned s = 0; s < 64; ++s)
            now[s] -= top;
    }
    std::array<float, 64> alpha{}, after{};
    double expected = 0;
    for (size_t k = 0; k < first + n; ++k) {
        const float* next = &d_beta[(k + 1) * 64];
        float best[2] = { -std::numeric_limits<float>::infinity(),
                          -std::numeric_limits<float>::infinity() };
        after.fill(-std::numeric_limits<float>::infinity());
        for (unsigned s = 0; s < 64; ++s)
            for (unsigned b = 0; b < 2; ++b) {
                const unsigned to = ((2 * s) & 63) | b;
                const float a = alpha[s] + branch(k, s, b);
                after[to] = std::max(after[to], a);
                best[b] = std::max(best[b], a + next[to]);
            }
        if (k >= first)
            expected += wrong_probability(double(best[0]) - double(best[1]));
        const float top = *std::max_element(after.begin(), after.end());
        for (unsigned s = 0; s < 64; ++s)
            alpha[s] = after[s] - top;
    }
    return expected;
}

} // namespace phy
} // namespace hfstack
} // namespace gr
