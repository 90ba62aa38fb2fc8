/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "serial_tone_coding.h"

#include <algorithm>
#include <limits>
#include <stdexcept>

namespace gr {
namespace hfstack {
namespace phy {

namespace {

// Pairs decoded on either side of a tail-biting block: several constraint lengths, so
// the Viterbi's free start and end fall far from the block's own bits.
constexpr size_t wrap_pairs = 64;

unsigned parity(unsigned x) { return unsigned(__builtin_parity(x)); }

// A generator with bit 0 = the newest input bit: the octal form reversed over K bits.
unsigned reversed(unsigned octal, unsigned k)
{
    unsigned r = 0;
    for (unsigned i = 0; i < k; ++i)
        r |= ((octal >> i) & 1u) << (k - 1 - i);
    return r;
}

// Encoder state: the last K-1 input bits, the newest in bit 0.
struct encoder {
    unsigned t1, t2, mask, state = 0;
    explicit encoder(const conv_code& code)
        : t1(reversed(code.t1_octal, code.constraint_length)),
          t2(reversed(code.t2_octal, code.constraint_length)),
          mask((1u << code.memory()) - 1)
    {
    }
    void shift(uint8_t bit) { state = ((state << 1) | (bit & 1u)) & mask; }
    void encode(uint8_t bit, std::vector<uint8_t>& out)
    {
        const unsigned reg = (state << 1) | (bit & 1u);
        out.push_back(uint8_t(parity(reg & t1)));
        out.push_back(uint8_t(parity(reg & t2)));
        state = reg & mask;
    }
};

} // namespace

std::vector<uint8_t> x9_scrambler_values(size_t count, unsigned bits_per_symbol, x9_orientation orientation)
{
    const unsigned steps = bits_per_symbol <= 3 ? 3 : bits_per_symbol;
    const unsigned mask = (1u << steps) - 1;
    std::vector<uint8_t> out(count);
    unsigned r = 1;
    for (auto& v : out) {
        v = uint8_t(r & mask);
        for (unsigned s = 0; s < steps; ++s) {
            if (orientation == x9_orientation::a)
                r = (r >> 1) | (((r ^ (r >> 4)) & 1) << 8);
            else
                r = ((r << 1) | (((r >> 8) ^ (r >> 4)) & 1)) & 0x1FF;
        }
    }
    return out;
}

std::vector<uint32_t> increment_fetch_order(uint32_t size, uint32_t increment)
{
    std::vector<uint32_t> order(size);
    for (uint64_t n = 0; n < size; ++n)
        order[(n * increment) % size] = uint32_t(n);
    return order;
}

std::vector<uint8_t> tail_biting_encode(const conv_code& code, const uint8_t* bits, size_t n, tail_biting_start start)
{
    const unsigned memory = code.memory();
    if (n < memory)
        throw std::invalid_argument("tail_biting_encode: a block needs at least " + std::to_string(memory) +
                                    " bits");
    encoder e(code);
    std::vector<uint8_t> out;
    out.reserve(2 * n);
    if (start == tail_biting_start::from_block_start) {
        for (size_t i = n - memory; i < n; ++i)
            e.shift(bits[i]);
        for (size_t i = 0; i < n; ++i)
            e.encode(bits[i], out);
    } else {
        for (size_t i = 0; i < memory; ++i)
            e.shift(bits[i]);
        for (size_t i = memory; i < n; ++i)
            e.encode(bits[i], out);
        for (size_t i = 0; i < memory; ++i)
            e.encode(bits[i], out);
    }
    return out;
}

tail_biting_viterbi::tail_biting_viterbi(const conv_code& code)
    : d_code(code), d_states(1u << code.memory()), d_sign(4 * d_states)
{
    encoder e(code);
    std::vector<uint8_t> pair;
    for (unsigned s = 0; s < d_states; ++s)
        for (unsigned b = 0; b < 2; ++b) {
            e.state = s;
            pair.clear();
            e.encode(uint8_t(b), pair);
            d_sign[4 * s + 2 * b] = pair[0] ? -1.0f : 1.0f;
            d_sign[4 * s + 2 * b + 1] = pair[1] ? -1.0f : 1.0f;
        }
}

void tail_biting_viterbi::decode(const float* llr, size_t n, tail_biting_start start, std::vector<uint8_t>& bits)
{
    const unsigned memory = d_code.memory();
    if (n < memory)
        throw std::invalid_argument("tail_biting_viterbi: a block needs at least " + std::to_string(memory) +
                                    " bits");
    // The block's pairs, cyclically extended by wrap_pairs on both sides (a short block
    // repeats whole).
    d_wrapped.resize(2 * (n + 2 * wrap_pairs));
    for (size_t j = 0; j < n + 2 * wrap_pairs; ++j) {
        const size_t p = (j + n * (wrap_pairs / n + 1) - wrap_pairs) % n;
        d_wrapped[2 * j] = llr[2 * p];
        d_wrapped[2 * j + 1] = llr[2 * p + 1];
    }
    viterbi(d_wrapped, d_decoded);
    // Pair j carries bit j (from the block start) or bit j + K - 1 (from the full
    // register).
    const size_t rotation = start == tail_biting_start::from_full_register ? memory : 0;
    const size_t first = bits.size();
    bits.resize(first + n);
    for (size_t j = 0; j < n; ++j)
        bits[first + (j + rotation) % n] = d_decoded[wrap_pairs + j];
}

void tail_biting_viterbi::viterbi(const std::vector<float>& llr, std::vector<uint8_t>& bits)
{
    const size_t steps = llr.size() / 2;
    const unsigned half = d_states / 2;
    const size_t words = (d_states + 63) / 64;
    std::vector<float> metric(d_states, 0.0f), next(d_states);
    // Decision bit per step and new state, packed: the dropped (oldest) bit of the
    // survivor's predecessor.
    d_decisions.assign(steps * words, 0);
    for (size_t k = 0; k < steps; ++k) {
        const float a = 0.5f * llr[2 * k], b = 0.5f * llr[2 * k + 1];
        uint64_t* decision = &d_decisions[k * words];
        // Butterfly: predecessors i and i + half lead to new states 2i (input 0) and
        // 2i + 1 (input 1).
        for (unsigned i = 0; i < half; ++i) {
            const float* s0 = &d_sign[4 * i];
            const float* s1 = &d_sign[4 * (i + half)];
            for (unsigned bit = 0; bit < 2; ++bit) {
                const float m0 = metric[i] + s0[2 * bit] * a + s0[2 * bit + 1] * b;
                const float m1 = metric[i + half] + s1[2 * bit] * a + s1[2 * bit + 1] * b;
                const unsigned ns = 2 * i + bit;
                if (m1 > m0) {
                    decision[ns / 64] |= uint64_t(1) << (ns % 64);
                    next[ns] = m1;
                } else {
                    next[ns] = m0;
                }
            }
        }
        // Metrics only grow: taking the best off now and then keeps their float
        // resolution.
        const float top = k % 16 == 15 ? *std::max_element(next.begin(), next.end()) : 0.0f;
        for (unsigned s = 0; s < d_states; ++s)
            metric[s] = next[s] - top;
    }
    unsigned state = unsigned(std::max_element(metric.begin(), metric.end()) - metric.begin());
    bits.assign(steps, 0);
    for (size_t k = steps; k-- > 0;) {
        bits[k] = uint8_t(state & 1u);
        const bool dropped = (d_decisions[k * words + state / 64] >> (state % 64)) & 1u;
        state = (state >> 1) | (dropped ? half : 0u);
    }
}

} // namespace phy
} // namespace hfstack
} // namespace gr
