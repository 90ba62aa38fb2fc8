/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "helper_threads.h"
#include "serial_tone_coding.h"
#include "serial_tone_presence.h"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <limits>
#include <stdexcept>
#include <tuple>
#include <utility>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif
#if defined(__x86_64__) && defined(__GNUC__)
#define HFSTACK_VITERBI_AVX2 1
#include <immintrin.h>
#endif

namespace gr {
namespace hfstack {
namespace phy {

namespace {

// Pairs decoded on either side of a tail-biting block: several constraint lengths, so
// the Viterbi's free start and end fall far from the block's own bits.
constexpr size_t wrap_pairs = 64;
// expected_errors: pairs per window of backward metrics, and pairs the backward pass
// runs past a window before them (from equal metrics; as the Viterbi's wraps settle).
constexpr size_t map_window = 2048;
constexpr size_t map_settle = 64;
// A block of twice this many pairs or more is decoded in pieces of about this many, each
// piece's Viterbi and MAP pass started piece_overlap pairs before it from equal metrics
// (and the Viterbi's traced back from as many after it): how many pieces depends on the
// block alone, so the bits are the same whether one thread decodes them in turn or two
// share them. The overlap is twice the wraps' (punctured high rates merge later).
constexpr size_t piece_pairs = 65536;
constexpr size_t piece_overlap = 128;
// Coding again: fewer pairs than this per range are not worth sharing (run_ranges).
constexpr size_t min_coding_range = 16384;

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
    // The bit's pair into pair[0], pair[1].
    void encode(uint8_t bit, uint8_t* pair)
    {
        const unsigned reg = (state << 1) | (bit & 1u);
        pair[0] = uint8_t(parity(reg & t1));
        pair[1] = uint8_t(parity(reg & t2));
        state = reg & mask;
    }
};

#if defined(__SSE2__)
// For new states ns .. ns + 3 (ns a multiple of 4): the metrics of their predecessors
// j = ns / 2 and j + half, each repeated for the two inputs (j, j, j + 1, j + 1).
inline void
predecessor_metrics(const float* v, unsigned ns, unsigned half, __m128& lo, __m128& hi)
{
    const unsigned j = ns >> 1;
    lo = _mm_loadl_pi(_mm_setzero_ps(), reinterpret_cast<const __m64*>(&v[j]));
    hi = _mm_loadl_pi(_mm_setzero_ps(), reinterpret_cast<const __m64*>(&v[j + half]));
    lo = _mm_unpacklo_ps(lo, lo);
    hi = _mm_unpacklo_ps(hi, hi);
}
#endif


#if defined(HFSTACK_VITERBI_AVX2)
// Eight states at once where the processor has AVX2 (checked at run time): the same
// operations in the same order as the four-state SSE2 code (no fused multiply-add), so
// the same metrics and decisions; maxima taken over eight lanes instead of four can
// differ only in the sign of a zero, which no comparison or sum sees.
bool wide_vectors_available() { return __builtin_cpu_supports("avx2"); }

__attribute__((target("avx2"))) inline __m256 duplicated_pairs(const float* v)
{
    // v[0], v[0], v[1], v[1], ..., v[3], v[3].
    return _mm256_permutevar8x32_ps(_mm256_castps128_ps256(_mm_loadu_ps(v)),
                                    _mm256_setr_epi32(0, 0, 1, 1, 2, 2, 3, 3));
}

// The Viterbi's add-compare-select over `steps` pairs (as tail_biting_viterbi::viterbi);
// returns the buffer holding the final metrics (metric or next).
__attribute__((target("avx2"))) float* viterbi_steps_avx2(const float* llr,
                                                          size_t steps,
                                                          unsigned states,
                                                          const float* sign,
                                                          float* metric,
                                                          float* next,
                                                          uint64_t* decisions,
                                                          size_t words)
{
    const unsigned half = states / 2;
    for (size_t k = 0; k < steps; ++k) {
        const float a = 0.5f * llr[2 * k], b = 0.5f * llr[2 * k + 1];
        uint64_t* decision = &decisions[k * words];
        const __m256 va = _mm256_set1_ps(a), vb = _mm256_set1_ps(b);
        for (unsigned ns = 0; ns < states; ns += 8) {
            const unsigned j = ns >> 1;
            const __m256 lo = duplicated_pairs(metric + j),
                         hi = duplicated_pairs(metric + j + half);
            const __m256 m0 = _mm256_add_ps(
                _mm256_add_ps(lo, _mm256_mul_ps(_mm256_loadu_ps(sign + ns), va)),
                _mm256_mul_ps(_mm256_loadu_ps(sign + states + ns), vb));
            const __m256 m1 = _mm256_add_ps(
                _mm256_add_ps(hi,
                              _mm256_mul_ps(_mm256_loadu_ps(sign + 2 * states + ns), va)),
                _mm256_mul_ps(_mm256_loadu_ps(sign + 3 * states + ns), vb));
            const __m256 gt = _mm256_cmp_ps(m1, m0, _CMP_GT_OQ);
            _mm256_storeu_ps(next + ns, _mm256_blendv_ps(m0, m1, gt));
            decision[ns / 64] |= uint64_t(unsigned(_mm256_movemask_ps(gt))) << (ns % 64);
        }
        if (k % 16 == 15) {
            const float top = *std::max_element(next, next + states);
            for (unsigned s = 0; s < states; ++s)
                metric[s] = next[s] - top;
        } else {
            // x - 0 is x: the buffers swap instead.
            std::swap(metric, next);
        }
    }
    return metric;
}

// expected_errors' backward step k for all states: now[s] from later; returns the
// largest.
__attribute__((target("avx2"))) float backward_step_avx2(const float* later,
                                                         float* now,
                                                         unsigned states,
                                                         const float* sign_by_state,
                                                         float w0_value,
                                                         float w1_value)
{
    const unsigned mask = states - 1;
    const __m256 w0 = _mm256_set1_ps(w0_value), w1 = _mm256_set1_ps(w1_value);
    const __m256 halves = _mm256_set1_ps(0.5f);
    __m256 tops = _mm256_set1_ps(-std::numeric_limits<float>::infinity());
    for (unsigned s = 0; s < states; s += 8) {
        const float* l = &later[(s << 1) & mask];
        const __m256 x0 = _mm256_loadu_ps(l), x1 = _mm256_loadu_ps(l + 8);
        const __m256 even = _mm256_castpd_ps(_mm256_permute4x64_pd(
            _mm256_castps_pd(_mm256_shuffle_ps(x0, x1, _MM_SHUFFLE(2, 0, 2, 0))),
            _MM_SHUFFLE(3, 1, 2, 0)));
        const __m256 odd = _mm256_castpd_ps(_mm256_permute4x64_pd(
            _mm256_castps_pd(_mm256_shuffle_ps(x0, x1, _MM_SHUFFLE(3, 1, 3, 1))),
            _MM_SHUFFLE(3, 1, 2, 0)));
        const __m256 r0 = _mm256_loadu_ps(sign_by_state + s),
                     r1 = _mm256_loadu_ps(sign_by_state + states + s),
                     r2 = _mm256_loadu_ps(sign_by_state + 2 * states + s),
                     r3 = _mm256_loadu_ps(sign_by_state + 3 * states + s);
        const __m256 b0 = _mm256_mul_ps(
            halves, _mm256_add_ps(_mm256_mul_ps(r0, w0), _mm256_mul_ps(r1, w1)));
        const __m256 b1 = _mm256_mul_ps(
            halves, _mm256_add_ps(_mm256_mul_ps(r2, w0), _mm256_mul_ps(r3, w1)));
        const __m256 v = _mm256_max_ps(_mm256_add_ps(b1, odd), _mm256_add_ps(b0, even));
        _mm256_storeu_ps(now + s, v);
        tops = _mm256_max_ps(v, tops);
    }
    float t[8];
    _mm256_storeu_ps(t, tops);
    float top = -std::numeric_limits<float>::infinity();
    for (float x : t)
        top = std::max(top, x);
    return top;
}

// expected_errors' forward step: `after` from alpha, and each input bit's best path
// through beta.
__attribute__((target("avx2"))) void forward_step_avx2(const float* alpha,
                                                       const float* beta,
                                                       float* after,
                                                       unsigned states,
                                                       const float* sign,
                                                       float w0_value,
                                                       float w1_value,
                                                       float best[2])
{
    const unsigned half = states / 2;
    const __m256 w0 = _mm256_set1_ps(w0_value), w1 = _mm256_set1_ps(w1_value);
    const __m256 halves = _mm256_set1_ps(0.5f);
    __m256 bests = _mm256_set1_ps(-std::numeric_limits<float>::infinity());
    for (unsigned ns = 0; ns < states; ns += 8) {
        const unsigned j = ns >> 1;
        const __m256 lo = duplicated_pairs(alpha + j),
                     hi = duplicated_pairs(alpha + j + half);
        const __m256 b0 = _mm256_mul_ps(
            halves,
            _mm256_add_ps(_mm256_mul_ps(_mm256_loadu_ps(sign + ns), w0),
                          _mm256_mul_ps(_mm256_loadu_ps(sign + states + ns), w1)));
        const __m256 b1 = _mm256_mul_ps(
            halves,
            _mm256_add_ps(_mm256_mul_ps(_mm256_loadu_ps(sign + 2 * states + ns), w0),
                          _mm256_mul_ps(_mm256_loadu_ps(sign + 3 * states + ns), w1)));
        const __m256 a0 = _mm256_add_ps(lo, b0), a1 = _mm256_add_ps(hi, b1);
        _mm256_storeu_ps(after + ns, _mm256_max_ps(a1, a0));
        const __m256 bt = _mm256_loadu_ps(beta + ns);
        bests = _mm256_max_ps(
            bests, _mm256_max_ps(_mm256_add_ps(a0, bt), _mm256_add_ps(a1, bt)));
    }
    float t[8];
    _mm256_storeu_ps(t, bests);
    best[0] = std::max(std::max(t[0], t[2]), std::max(t[4], t[6]));
    best[1] = std::max(std::max(t[1], t[3]), std::max(t[5], t[7]));
}
#else
bool wide_vectors_available() { return false; }
#endif

bool wide_vectors = wide_vectors_available();
} // namespace

std::vector<uint8_t>
x9_scrambler_values(size_t count, unsigned bits_per_symbol, x9_orientation orientation)
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

namespace {

// The inverse of `step` modulo `size`, or 0 where there is none (gcd > 1).
uint64_t inverse_modulo(uint64_t step, uint64_t size)
{
    int64_t r0 = int64_t(size), r1 = int64_t(step), t0 = 0, t1 = 1;
    while (r1 != 0) {
        const int64_t q = r0 / r1;
        std::tie(r0, r1) = std::make_pair(r1, r0 - q * r1);
        std::tie(t0, t1) = std::make_pair(t1, t0 - q * t1);
    }
    if (r0 != 1)
        return 0;
    return uint64_t(t0 < 0 ? t0 + int64_t(size) : t0);
}

} // namespace

std::vector<uint32_t> increment_fetch_order(uint32_t size, uint32_t increment)
{
    std::vector<uint32_t> order(size);
    // (n * increment) % size, stepped.
    const uint64_t step = size > 0 ? increment % size : 0;
    // Where the increment is prime to the size, order[at] = (at / increment) % size,
    // stepped by the inverse: written in order (the scattered writes below missed the
    // cache on every sample of a 48 kHz block, tens of milliseconds a block).
    if (const uint64_t inverse = size > 1 ? inverse_modulo(step, size) : 0) {
        uint64_t n = 0;
        for (uint64_t at = 0; at < size; ++at) {
            order[at] = uint32_t(n);
            n += inverse;
            if (n >= size)
                n -= size;
        }
        return order;
    }
    uint64_t at = 0;
    for (uint64_t n = 0; n < size; ++n) {
        order[at] = uint32_t(n);
        at += step;
        if (at >= size)
            at -= size;
    }
    return order;
}

unsigned tail_biting_first_bit(tail_biting_start start, const conv_code& code)
{
    switch (start) {
    case tail_biting_start::first_pair_bit_7:
        return 7;
    case tail_biting_start::from_full_register:
        return code.memory();
    case tail_biting_start::from_block_start:
        break;
    }
    return 0;
}

std::vector<uint8_t> tail_biting_encode(const conv_code& code,
                                        const uint8_t* bits,
                                        size_t n,
                                        tail_biting_start start)
{
    std::vector<uint8_t> out(2 * n);
    tail_biting_encode(code, bits, n, start, out.data(), false);
    return out;
}

void tail_biting_encode(const conv_code& code,
                        const uint8_t* bits,
                        size_t n,
                        tail_biting_start start,
                        uint8_t* pairs,
                        bool concurrently)
{
    const unsigned memory = code.memory(), first = tail_biting_first_bit(start, code);
    if (n < memory || n <= first)
        throw std::invalid_argument("tail_biting_encode: a block needs at least " +
                                    std::to_string(std::max<size_t>(memory, first + 1)) +
                                    " bits");
    // Pair j codes bit (first + j) mod n, the register holding the K-1 bits before it
    // (cyclically): a range of pairs starts from those bits alone.
    const auto range = [&](size_t from, size_t to) {
        encoder e(code);
        size_t at = (first + n + from - memory) % n;
        for (unsigned i = 0; i < memory; ++i) {
            e.shift(bits[at]);
            if (++at == n)
                at = 0;
        }
        for (size_t j = from; j < to; ++j) {
            e.encode(bits[at], pairs + 2 * j);
            if (++at == n)
                at = 0;
        }
    };
    run_ranges(n, min_coding_range, range, concurrently);
}

tail_biting_viterbi::tail_biting_viterbi(const conv_code& code)
    : d_code(code), d_states(1u << code.memory()), d_sign(4 * d_states)
{
    encoder e(code);
    uint8_t pair[2];
    for (unsigned s = 0; s < d_states; ++s)
        for (unsigned b = 0; b < 2; ++b) {
            e.state = s;
            e.encode(uint8_t(b), pair);
            d_sign[4 * s + 2 * b] = pair[0] ? -1.0f : 1.0f;
            d_sign[4 * s + 2 * b + 1] = pair[1] ? -1.0f : 1.0f;
        }
    const unsigned half = d_states / 2;
    d_sign_by_next.resize(4 * d_states);
    for (unsigned ns = 0; ns < d_states; ++ns) {
        const unsigned i = ns >> 1, b = ns & 1u;
        d_sign_by_next[ns] = d_sign[4 * i + 2 * b];
        d_sign_by_next[d_states + ns] = d_sign[4 * i + 2 * b + 1];
        d_sign_by_next[2 * d_states + ns] = d_sign[4 * (i + half) + 2 * b];
        d_sign_by_next[3 * d_states + ns] = d_sign[4 * (i + half) + 2 * b + 1];
    }
    d_sign_by_state.resize(4 * d_states);
    for (unsigned s = 0; s < d_states; ++s)
        for (unsigned t = 0; t < 4; ++t)
            d_sign_by_state[t * d_states + s] = d_sign[4 * s + t];
}

bool tail_biting_viterbi::set_wide_vectors(bool on)
{
    wide_vectors = on && wide_vectors_available();
    return wide_vectors;
}

void tail_biting_viterbi::decode(const float* llr,
                                 size_t n,
                                 tail_biting_start start,
                                 std::vector<uint8_t>& bits,
                                 bool concurrently)
{
    wrap(llr, n, start);
    d_decoded.resize(d_n + 2 * wrap_pairs);
    run_pieces(
        pieces(),
        [&](size_t p, unsigned worker) { viterbi_piece(p, d_scratch[worker]); },
        concurrently);
    append_decoded(start, bits);
}

double tail_biting_viterbi::decode_with_expected_errors(const float* llr,
                                                        size_t n,
                                                        tail_biting_start start,
                                                        std::vector<uint8_t>& bits,
                                                        bool concurrently)
{
    wrap(llr, n, start);
    d_decoded.resize(d_n + 2 * wrap_pairs);
    // The Viterbi's pieces, then the MAP pass's (in that order on one thread).
    const size_t count = pieces();
    std::vector<double> expected(count, 0.0);
    run_pieces(
        2 * count,
        [&](size_t p, unsigned worker) {
            if (p < count)
                viterbi_piece(p, d_scratch[worker]);
            else
                expected[p - count] = expected_errors_piece(p - count, d_scratch[worker]);
        },
        concurrently);
    append_decoded(start, bits);
    double sum = 0;
    for (double e : expected)
        sum += e;
    return sum;
}

size_t tail_biting_viterbi::pieces() const
{
    return d_n >= 2 * piece_pairs ? d_n / piece_pairs : 1;
}

std::pair<size_t, size_t> tail_biting_viterbi::piece_span(size_t p) const
{
    const size_t count = pieces(), steps = d_n + 2 * wrap_pairs;
    const size_t begin = p == 0 ? 0 : wrap_pairs + d_n * p / count;
    const size_t end = p + 1 == count ? steps : wrap_pairs + d_n * (p + 1) / count;
    return { begin, end };
}

void tail_biting_viterbi::wrap(const float* llr, size_t n, tail_biting_start start)
{
    const unsigned memory = d_code.memory(),
                   first_bit = tail_biting_first_bit(start, d_code);
    if (n < memory || n <= first_bit)
        throw std::invalid_argument(
            "tail_biting_viterbi: a block needs at least " +
            std::to_string(std::max<size_t>(memory, first_bit + 1)) + " bits");
    // The block's pairs, cyclically extended by wrap_pairs on both sides (a short block
    // repeats whole).
    d_wrapped.resize(2 * (n + 2 * wrap_pairs));
    // Pair j is the block's (j - wrap_pairs) mod n, stepped (no division per pair).
    size_t p = (n * (wrap_pairs / n + 1) - wrap_pairs) % n;
    for (size_t j = 0; j < n + 2 * wrap_pairs; ++j) {
        d_wrapped[2 * j] = llr[2 * p];
        d_wrapped[2 * j + 1] = llr[2 * p + 1];
        if (++p == n)
            p = 0;
    }
    d_n = n;
}

void tail_biting_viterbi::append_decoded(tail_biting_start start,
                                         std::vector<uint8_t>& bits) const
{
    const size_t n = d_n;
    // Pair j carries bit j + the first bit (mod n).
    const size_t rotation = tail_biting_first_bit(start, d_code);
    const size_t first = bits.size();
    bits.resize(first + n);
    size_t at = rotation % n; // (j + rotation) mod n, stepped
    for (size_t j = 0; j < n; ++j) {
        bits[first + at] = d_decoded[wrap_pairs + j];
        if (++at == n)
            at = 0;
    }
}

bool tail_biting_viterbi::closed() const
{
    // The halves of the wraps away from the Viterbi's own start and end.
    const size_t n = d_n, half = wrap_pairs / 2;
    if (d_decoded.size() < n + 2 * wrap_pairs)
        return false;
    for (size_t j = half; j < wrap_pairs; ++j)
        if (d_decoded[j] != d_decoded[j + n])
            return false;
    for (size_t j = wrap_pairs + n; j < wrap_pairs + n + half; ++j)
        if (d_decoded[j] != d_decoded[j - n])
            return false;
    return true;
}

double tail_biting_viterbi::expected_errors()
{
    double sum = 0;
    for (size_t p = 0; p < pieces(); ++p)
        sum += expected_errors_piece(p, d_scratch[0]);
    return sum;
}

double tail_biting_viterbi::expected_errors_piece(size_t p, scratch& work) const
{
    const size_t steps = d_wrapped.size() / 2;
    const auto [keep_begin, keep_end] = piece_span(p);
    // Forward metrics from equal ones piece_overlap pairs before the piece (the block's
    // first piece: from the wrapped pairs' start, as the Viterbi's).
    const size_t start = p == 0 ? 0 : keep_begin - piece_overlap;
    const unsigned mask = d_states - 1;
    [[maybe_unused]] const auto branch = [&](size_t k, unsigned s, unsigned b) {
        return 0.5f * (d_sign[4 * s + 2 * b] * d_wrapped[2 * k] +
                       d_sign[4 * s + 2 * b + 1] * d_wrapped[2 * k + 1]);
    };
    std::vector<float>&alpha = work.alpha, &after = work.after, &later = work.later,
    &now = work.now;
    std::vector<float>& d_beta = work.beta;
    alpha.assign(d_states, 0.0f);
    after.resize(d_states);
    now.resize(d_states);
    const float none = -std::numeric_limits<float>::infinity();
    double expected = 0;
    for (size_t from = start; from < keep_end; from += map_window) {
        const size_t to = std::min(keep_end, from + map_window);
        const size_t end = std::min(steps, to + map_settle);
        // Backward metrics beta[k - from][s] for k in [from, to], from equal ones at end.
        d_beta.assign((to - from + 1) * d_states, 0.0f);
        later.assign(d_states, 0.0f);
        for (size_t k = end; k-- > from;) {
            float top = none;
#if defined(HFSTACK_VITERBI_AVX2)
            if (wide_vectors && d_states >= 8) {
                top = backward_step_avx2(later.data(),
                                         now.data(),
                                         d_states,
                                         d_sign_by_state.data(),
                                         d_wrapped[2 * k],
                                         d_wrapped[2 * k + 1]);
            } else
#endif
            {
#if defined(__SSE2__)
                // Four states at once, the same operations in the same order as below
                // (std::max(x, y) is _mm_max_ps(y, x)).
                const __m128 w0 = _mm_set1_ps(d_wrapped[2 * k]),
                             w1 = _mm_set1_ps(d_wrapped[2 * k + 1]);
                const __m128 halves = _mm_set1_ps(0.5f);
                __m128 tops = _mm_set1_ps(none);
                for (unsigned s = 0; s < d_states; s += 4) {
                    const float* l = &later[(s << 1) & mask];
                    const __m128 x0 = _mm_loadu_ps(l), x1 = _mm_loadu_ps(l + 4);
                    const __m128 even = _mm_shuffle_ps(x0, x1, _MM_SHUFFLE(2, 0, 2, 0));
                    const __m128 odd = _mm_shuffle_ps(x0, x1, _MM_SHUFFLE(3, 1, 3, 1));
                    // d_sign[4 s + 2 b + t] for s .. s + 3: transposed from 16 values.
                    __m128 r0 = _mm_loadu_ps(&d_sign[4 * s]),
                           r1 = _mm_loadu_ps(&d_sign[4 * s + 4]);
                    __m128 r2 = _mm_loadu_ps(&d_sign[4 * s + 8]),
                           r3 = _mm_loadu_ps(&d_sign[4 * s + 12]);
                    _MM_TRANSPOSE4_PS(r0, r1, r2, r3);
                    const __m128 b0 = _mm_mul_ps(
                        halves, _mm_add_ps(_mm_mul_ps(r0, w0), _mm_mul_ps(r1, w1)));
                    const __m128 b1 = _mm_mul_ps(
                        halves, _mm_add_ps(_mm_mul_ps(r2, w0), _mm_mul_ps(r3, w1)));
                    const __m128 v =
                        _mm_max_ps(_mm_add_ps(b1, odd), _mm_add_ps(b0, even));
                    _mm_storeu_ps(&now[s], v);
                    tops = _mm_max_ps(v, tops);
                }
                float t[4];
                _mm_storeu_ps(t, tops);
                for (float x : t)
                    top = std::max(top, x);
#else
                for (unsigned s = 0; s < d_states; ++s) {
                    const unsigned next = (s << 1) & mask;
                    now[s] = std::max(branch(k, s, 0) + later[next],
                                      branch(k, s, 1) + later[next | 1]);
                    top = std::max(top, now[s]);
                }
#endif
            }
            for (unsigned s = 0; s < d_states; ++s)
                later[s] = now[s] - top;
            if (k <= to)
                std::copy(later.begin(),
                          later.end(),
                          d_beta.begin() + long((k - from) * d_states));
        }
        // Forward through the window: each bit's best path with it 0 and with it 1.
        for (size_t k = from; k < to; ++k) {
            const float* beta = &d_beta[(k + 1 - from) * d_states];
            float best[2] = { none, none };
#if defined(HFSTACK_VITERBI_AVX2)
            if (wide_vectors && d_states >= 8) {
                forward_step_avx2(alpha.data(),
                                  beta,
                                  after.data(),
                                  d_states,
                                  d_sign_by_next.data(),
                                  d_wrapped[2 * k],
                                  d_wrapped[2 * k + 1],
                                  best);
            } else
#endif
            {
#if defined(__SSE2__)
                // By new state, four at once: from predecessors ns / 2 and ns / 2 + half
                // with input bit ns % 2 (the values as below; maxima of the same terms).
                {
                    const unsigned half = d_states / 2;
                    const float* sign = d_sign_by_next.data();
                    const __m128 w0 = _mm_set1_ps(d_wrapped[2 * k]),
                                 w1 = _mm_set1_ps(d_wrapped[2 * k + 1]);
                    const __m128 halves = _mm_set1_ps(0.5f);
                    __m128 bests = _mm_set1_ps(none);
                    for (unsigned ns = 0; ns < d_states; ns += 4) {
                        __m128 lo, hi;
                        predecessor_metrics(alpha.data(), ns, half, lo, hi);
                        const __m128 b0 = _mm_mul_ps(
                            halves,
                            _mm_add_ps(
                                _mm_mul_ps(_mm_loadu_ps(sign + ns), w0),
                                _mm_mul_ps(_mm_loadu_ps(sign + d_states + ns), w1)));
                        const __m128 b1 = _mm_mul_ps(
                            halves,
                            _mm_add_ps(
                                _mm_mul_ps(_mm_loadu_ps(sign + 2 * d_states + ns), w0),
                                _mm_mul_ps(_mm_loadu_ps(sign + 3 * d_states + ns), w1)));
                        const __m128 a0 = _mm_add_ps(lo, b0), a1 = _mm_add_ps(hi, b1);
                        _mm_storeu_ps(&after[ns], _mm_max_ps(a1, a0));
                        const __m128 bt = _mm_loadu_ps(beta + ns);
                        bests = _mm_max_ps(
                            bests, _mm_max_ps(_mm_add_ps(a0, bt), _mm_add_ps(a1, bt)));
                    }
                    float t[4];
                    _mm_storeu_ps(t, bests);
                    best[0] = std::max(t[0], t[2]);
                    best[1] = std::max(t[1], t[3]);
                }
#else
                std::fill(after.begin(), after.end(), none);
                for (unsigned s = 0; s < d_states; ++s)
                    for (unsigned b = 0; b < 2; ++b) {
                        const unsigned next = ((s << 1) & mask) | b;
                        const float a = alpha[s] + branch(k, s, b);
                        after[next] = std::max(after[next], a);
                        best[b] = std::max(best[b], a + beta[next]);
                    }
#endif
            }
            if (k >= wrap_pairs && k < wrap_pairs + d_n && k >= keep_begin) {
                const double l = std::abs(double(best[0]) - double(best[1]));
                expected += 1.0 / (1.0 + std::exp(std::min(l, 700.0)));
            }
            const float top = *std::max_element(after.begin(), after.end());
            for (unsigned s = 0; s < d_states; ++s)
                alpha[s] = after[s] - top;
        }
    }
    return expected;
}

void tail_biting_viterbi::viterbi_piece(size_t p, scratch& work)
{
    const auto [keep_begin, keep_end] = piece_span(p);
    // From equal metrics piece_overlap pairs before the piece, to the best state as
    // many after it (the block's first and last pieces: the wrapped pairs' ends).
    const size_t first = p == 0 ? 0 : keep_begin - piece_overlap;
    const size_t last =
        p + 1 == pieces() ? d_n + 2 * wrap_pairs : keep_end + piece_overlap;
    const size_t steps = last - first;
    const float* llr = &d_wrapped[2 * first];
    const unsigned half = d_states / 2;
    const size_t words = (d_states + 63) / 64;
    std::vector<float>&metric = work.metric, &next = work.next;
    metric.assign(d_states, 0.0f);
    next.resize(d_states);
    // Decision bit per step and new state, packed: the dropped (oldest) bit of the
    // survivor's predecessor.
    std::vector<uint64_t>& decisions = work.decisions;
    decisions.assign(steps * words, 0);
    uint8_t* bits = &d_decoded[first];
#if defined(HFSTACK_VITERBI_AVX2)
    if (wide_vectors && d_states >= 8) {
        const float* at_end = viterbi_steps_avx2(llr,
                                                 steps,
                                                 d_states,
                                                 d_sign_by_next.data(),
                                                 metric.data(),
                                                 next.data(),
                                                 decisions.data(),
                                                 words);
        if (at_end != metric.data())
            metric.swap(next);
        return traceback(
            metric, decisions, steps, keep_begin - first, keep_end - first, bits);
    }
#endif
    for (size_t k = 0; k < steps; ++k) {
        const float a = 0.5f * llr[2 * k], b = 0.5f * llr[2 * k + 1];
        uint64_t* decision = &decisions[k * words];
#if defined(__SSE2__)
        // By new state, four at once: predecessors j and j + half, j = ns / 2, with input
        // bit ns % 2; the same sums in the same order as below, the survivor by the same
        // comparison.
        const float* sign = d_sign_by_next.data();
        const __m128 va = _mm_set1_ps(a), vb = _mm_set1_ps(b);
        for (unsigned ns = 0; ns < d_states; ns += 4) {
            __m128 lo, hi;
            predecessor_metrics(metric.data(), ns, half, lo, hi);
            const __m128 m0 =
                _mm_add_ps(_mm_add_ps(lo, _mm_mul_ps(_mm_loadu_ps(sign + ns), va)),
                           _mm_mul_ps(_mm_loadu_ps(sign + d_states + ns), vb));
            const __m128 m1 = _mm_add_ps(
                _mm_add_ps(hi, _mm_mul_ps(_mm_loadu_ps(sign + 2 * d_states + ns), va)),
                _mm_mul_ps(_mm_loadu_ps(sign + 3 * d_states + ns), vb));
            const __m128 gt = _mm_cmpgt_ps(m1, m0);
            _mm_storeu_ps(&next[ns],
                          _mm_or_ps(_mm_and_ps(gt, m1), _mm_andnot_ps(gt, m0)));
            decision[ns / 64] |= uint64_t(unsigned(_mm_movemask_ps(gt))) << (ns % 64);
        }
#else
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
#endif
        // Metrics only grow: taking the best off now and then keeps their float
        // resolution.
        const float top =
            k % 16 == 15 ? *std::max_element(next.begin(), next.end()) : 0.0f;
        for (unsigned s = 0; s < d_states; ++s)
            metric[s] = next[s] - top;
    }
    traceback(metric, decisions, steps, keep_begin - first, keep_end - first, bits);
}

void tail_biting_viterbi::traceback(const std::vector<float>& metric,
                                    const std::vector<uint64_t>& decisions,
                                    size_t steps,
                                    size_t keep_from,
                                    size_t keep_to,
                                    uint8_t* bits) const
{
    const unsigned half = d_states / 2;
    const size_t words = (d_states + 63) / 64;
    unsigned state =
        unsigned(std::max_element(metric.begin(), metric.end()) - metric.begin());
    for (size_t k = steps; k-- > keep_from;) {
        if (k < keep_to)
            bits[k] = uint8_t(state & 1u);
        const bool dropped = (decisions[k * words + state / 64] >> (state % 64)) & 1u;
        state = (state >> 1) | (dropped ? half : 0u);
    }
}

void tail_biting_phase_search::clear()
{
    for (auto& o : d_other_bits)
        o.clear();
    std::fill(std::begin(d_other_searched), std::end(d_other_searched), size_t(0));
}

bool tail_biting_phase_search::eom_fits(const std::vector<uint8_t>& bits, size_t at) const
{
    if (at % 8 != 0)
        return false;
    for (size_t i = at + d_eom_bits; i < bits.size(); ++i)
        if (bits[i])
            return false;
    return true;
}

tail_biting_start tail_biting_phase_search::settle(std::vector<uint8_t>& bits,
                                                   size_t& eom_at,
                                                   size_t& eom_searched,
                                                   tail_biting_start in_use,
                                                   const conv_code& code,
                                                   size_t n)
{
    if (eom_at != no_eom && eom_fits(bits, eom_at))
        return in_use;
    const size_t mine = tail_biting_first_bit(in_use, code) % n;
    for (size_t q = 0; q < std::size(tail_biting_starts); ++q) {
        const tail_biting_start phase = tail_biting_starts[q];
        const size_t theirs = tail_biting_first_bit(phase, code) % n;
        if (phase == in_use || theirs == mine)
            continue;
        std::vector<uint8_t>& other = d_other_bits[q];
        // Each block's bits i + shift (mod n) under the phase in use.
        const size_t shift = (n + mine - theirs) % n;
        for (size_t first = other.size(); first + n <= bits.size(); first += n) {
            const auto block = bits.begin() + long(first);
            other.insert(other.end(), block + long(shift), block + long(n));
            other.insert(other.end(), block, block + long(shift));
        }
        size_t& searched = d_other_searched[q];
        const size_t found = find_bits_word(other, searched, d_eom, d_eom_bits);
        const size_t other_at = found == SIZE_MAX ? no_eom : found;
        if (other_at == no_eom || !eom_fits(other, other_at))
            continue;
        bits.swap(other);
        eom_at = other_at;
        eom_searched = searched;
        clear();
        return phase;
    }
    return in_use;
}

reencoding_agreement agreement_of(const std::vector<float>& llr,
                                  const std::vector<uint8_t>& channel_bits)
{
    reencoding_agreement a;
    for (size_t k = 0; k < channel_bits.size() && k < llr.size(); ++k) {
        const double l = std::abs(double(llr[k]));
        if ((llr[k] < 0) != (channel_bits[k] != 0))
            a.wrong += l;
        a.expected += l / (1.0 + std::exp(std::min(l, 700.0)));
        a.weight += l;
    }
    return a;
}

namespace {
// Once a burst has told the readings apart, a first block is taken under the reading in
// use when the LLR weight its decoded bits, coded again, disagree with is at most this
// many times what the LLRs expect wrong, plus this share of their weight; else (and
// before) the other reading is tried too and the one disagreeing less kept.
constexpr double scrambler_expected_factor = 1.25;
constexpr double scrambler_margin = 0.002;
// ... and when the LLRs themselves expect at most this share of their weight wrong. A
// wrong reading can pass the test above on LLRs that doubt enough (at 40 dB, WN4 and
// WN9 US: wrong 0.6 % and 1.4 %, expected 0.56 % and 1.4 %; the right reading's
// expected share there is 1e-20 or less): such a block is tried under the other too.
constexpr double scrambler_sure_share = 0.001;
// ... and a burst tells the readings apart when the other's share is over twice this
// one's plus this (35 dB, WN3 and WN8: 0 against 0.02-0.17).
constexpr double scrambler_apart = 0.005;
} // namespace

x9_orientation scrambler_reading_judge::judge(x9_orientation in_use,
                                              const reencoding_agreement& agreement)
{
    const double wrong = agreement.wrong, expected = agreement.expected,
                 size = agreement.weight;
    const unsigned mine = in_use == x9_orientation::a ? 0 : 1, other = 1 - mine;
    score_[mine] = size > 0 ? wrong / size : 1.0;
    tried_[mine] = true;
    // Until a burst has told the readings apart, both are tried.
    const bool fits =
        settled_ && expected <= scrambler_sure_share * size &&
        wrong <= scrambler_expected_factor * expected + scrambler_margin * size;
    if (!fits && (!tried_[other] || score_[other] < score_[mine]))
        return other == 0 ? x9_orientation::a : x9_orientation::b;
    if (tried_[other] && score_[other] >= 2 * score_[mine] + scrambler_apart)
        settled_ = true;
    return in_use;
}

} // namespace phy
} // namespace hfstack
} // namespace gr
