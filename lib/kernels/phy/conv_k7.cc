/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "conv_k7.h"

#include <volk/volk.h>
#include <volk/volk_alloc.hh>

#include <algorithm>
#include <cmath>
#include <cstring>

namespace gr {
namespace hfstack {
namespace phy {

namespace {

// Generators with bit 0 = the newest input bit (the octal forms reversed over 7 bits):
// 133 -> 0x6D, 171 -> 0x4F.
constexpr unsigned t1_poly = 0x6D;
constexpr unsigned t2_poly = 0x4F;
constexpr unsigned states = 64;
constexpr unsigned char start_penalty = 63; // metric of the states we cannot start in
constexpr size_t kept_steps = 65536; // decisions handed out before they are dropped

unsigned parity(unsigned x) { return unsigned(__builtin_parity(x)); }

} // namespace

void k7_encoder::encode(const uint8_t* bits, size_t n, std::vector<uint8_t>& out)
{
    out.reserve(out.size() + 2 * n);
    for (size_t k = 0; k < n; ++k) {
        const unsigned reg = (d_state << 1) | (bits[k] & 1u); // 7 bits, newest in bit 0
        out.push_back(uint8_t(parity(reg & t1_poly)));
        out.push_back(uint8_t(parity(reg & t2_poly)));
        d_state = reg & (states - 1);
    }
}

k7_viterbi::k7_viterbi(float llr_scale)
    : d_scale(llr_scale),
      d_metrics(
          static_cast<unsigned char*>(volk_malloc(2 * states, volk_get_alignment()))),
      d_current(d_metrics)
{
    // The butterfly for old states i and i + 32 expects, on the branch into new state
    // 2i, the outputs of register 2i (bit 6 clear); the other three branches are its
    // complement because both generators use the oldest and the newest bit.
    for (unsigned i = 0; i < states / 2; ++i) {
        d_branch[i] = parity((2 * i) & t1_poly) ? 255 : 0;
        d_branch[i + states / 2] = parity((2 * i) & t2_poly) ? 255 : 0;
    }
    start();
}

k7_viterbi::~k7_viterbi() { volk_free(d_metrics); }

void k7_viterbi::start()
{
    d_current = d_metrics;
    std::fill(d_current, d_current + states, start_penalty);
    d_current[0] = 0;
    d_decisions.clear();
    d_steps = 0;
    d_output = 0;
    d_first = 0;
}

void k7_viterbi::push(const float* llr, size_t pairs)
{
    if (pairs == 0)
        return;
    d_symbols.resize(2 * pairs);
    for (size_t k = 0; k < 2 * pairs; ++k) {
        const float q = std::round(128.0f - llr[k] * d_scale);
        d_symbols[k] = (unsigned char)std::clamp(q, 0.0f, 255.0f);
    }
    // One 64-bit decision word per step: bit s set = the survivor into state s came
    // from the predecessor whose dropped (oldest) bit is 1. The kernel ORs into it.
    d_decisions.resize(8 * (d_steps - d_first + pairs), 0);
    unsigned char* other = (d_current == d_metrics) ? d_metrics + states : d_metrics;
    volk_8u_x4_conv_k7_r2_8u(other,
                             d_current,
                             d_symbols.data(),
                             &d_decisions[8 * (d_steps - d_first)],
                             unsigned(pairs),
                             0,
                             d_branch);
    // The kernel swaps its buffers every step: after an odd count the newest metrics
    // are in the buffer it wrote first.
    if (pairs % 2 == 1)
        d_current = other;
    d_steps += pairs;
}

unsigned k7_viterbi::best_state() const
{
    return unsigned(std::min_element(d_current, d_current + states) - d_current);
}

void k7_viterbi::trace(unsigned state,
                       size_t from,
                       size_t until,
                       std::vector<uint8_t>& out) const
{
    const size_t first = out.size();
    out.resize(first + (until - from));
    for (size_t s = d_steps; s-- > from;) {
        if (s < until)
            out[first + (s - from)] = uint8_t(state & 1);
        uint64_t word;
        std::memcpy(&word, &d_decisions[8 * (s - d_first)], 8);
        const unsigned dropped = unsigned((word >> state) & 1);
        state = (state >> 1) | (dropped << 5);
    }
}

size_t k7_viterbi::take_decided(std::vector<uint8_t>& out, size_t depth)
{
    if (d_steps < d_output + depth + 1)
        return 0;
    const size_t until = d_steps - depth;
    trace(best_state(), d_output, until, out);
    const size_t n = until - d_output;
    d_output = until;
    // Decisions before the bits handed out are never read again: drop them now and
    // then, so a long stream keeps bounded memory.
    if (d_output - d_first > kept_steps) {
        d_decisions.erase(d_decisions.begin(),
                          d_decisions.begin() + long(8 * (d_output - d_first)));
        d_first = d_output;
    }
    return n;
}

void k7_viterbi::finish(std::vector<uint8_t>& out, int end_state)
{
    const unsigned state =
        end_state >= 0 ? unsigned(end_state) & (states - 1) : best_state();
    trace(state, d_output, d_steps, out);
    d_output = d_steps;
}

std::vector<uint8_t> k7_viterbi::decode(const float* llr, size_t n, int end_state)
{
    start();
    push(llr, n);
    std::vector<uint8_t> bits;
    finish(bits, end_state);
    return bits;
}

k7_soft_output k7_max_log_map(const float* llr, size_t n, int end_state)
{
    // Max-log metrics in halves of an LLR: a branch whose coded bit c meets LLR L
    // gains +L/2 for c = 0, -L/2 for c = 1.
    constexpr float unreachable = -1e30f;
    std::vector<float> alpha((n + 1) * states, unreachable),
        beta((n + 1) * states, unreachable);
    alpha[0] = 0;
    const auto gain = [&](size_t k, unsigned reg) {
        const float g1 = parity(reg & t1_poly) ? -llr[2 * k] : llr[2 * k];
        const float g2 = parity(reg & t2_poly) ? -llr[2 * k + 1] : llr[2 * k + 1];
        return 0.5f * (g1 + g2);
    };
    // Every branch of step k out of a state the forward pass reached: f(a, reg), a that
    // state's metric, reg the 7-bit register (input bit in bit 0, next state below 64).
    const auto for_each_branch = [&](size_t k, auto&& f) {
        for (unsigned s = 0; s < states; ++s) {
            const float a = alpha[k * states + s];
            if (a <= unreachable)
                continue;
            for (unsigned u = 0; u < 2; ++u)
                f(a, (s << 1) | u);
        }
    };
    for (size_t k = 0; k < n; ++k)
        for_each_branch(k, [&](float a, unsigned reg) {
            float& next = alpha[(k + 1) * states + (reg & (states - 1))];
            next = std::max(next, a + gain(k, reg));
        });
    for (unsigned s = 0; s < states; ++s)
        beta[n * states + s] =
            end_state < 0 || unsigned(end_state) == s ? 0.0f : unreachable;
    for (size_t k = n; k-- > 0;)
        for (unsigned s = 0; s < states; ++s) {
            float best = unreachable;
            for (unsigned u = 0; u < 2; ++u) {
                const unsigned reg = (s << 1) | u;
                const float b = beta[(k + 1) * states + (reg & (states - 1))];
                if (b > unreachable)
                    best = std::max(best, b + gain(k, reg));
            }
            beta[k * states + s] = best;
        }
    k7_soft_output out;
    out.coded.resize(2 * n);
    out.input.resize(n);
    for (size_t k = 0; k < n; ++k) {
        // Best path through a branch with each value of each bit.
        float best[3][2] = { { unreachable, unreachable },
                             { unreachable, unreachable },
                             { unreachable, unreachable } };
        for_each_branch(k, [&](float a, unsigned reg) {
            const float b = beta[(k + 1) * states + (reg & (states - 1))];
            if (b <= unreachable)
                return;
            const float m = a + gain(k, reg) + b;
            const unsigned bits[3] = { reg & 1u,
                                       parity(reg & t1_poly),
                                       parity(reg & t2_poly) };
            for (unsigned j = 0; j < 3; ++j)
                best[j][bits[j]] = std::max(best[j][bits[j]], m);
        });
        // In halves the metrics' differences are the LLRs themselves.
        out.input[k] = best[0][0] - best[0][1];
        out.coded[2 * k] = best[1][0] - best[1][1];
        out.coded[2 * k + 1] = best[2][0] - best[2][1];
    }
    return out;
}

} // namespace phy
} // namespace hfstack
} // namespace gr
