/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

/* Coding elements the high-rate serial-tone waveforms share: STANAG 4539
 * (MIL-STD-188-110C Appendix C) and STANAG 5069 (MIL-STD-188-110D Appendix D).
 *  - the x^9 + x^4 + 1 data scrambler, restarted at every data block;
 *  - the load-increment interleaver: a block's bit n is loaded at (n * increment) mod
 *    size, bits leave in order 0, 1, 2 ...;
 *  - the K = 7 (133, 171) and K = 9 (561, 753) convolutional codes (octal, most
 *    significant bit = the newest input bit, T1 sent first), coded tail-biting per block,
 *    and a soft Viterbi decoder for such blocks.
 * Sources: MIL-STD-188-110C App C and 110D App D (data scrambler, interleaver, FEC).
 * Readings of the constants they leave uncertain are the enums below, recommended first
 * (docs/modem-design.md, "Interoperability"). */
#ifndef HFSTACK_KERNELS_PHY_SERIAL_TONE_CODING_H
#define HFSTACK_KERNELS_PHY_SERIAL_TONE_CODING_H

#include <array>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <utility>
#include <vector>

namespace gr {
namespace hfstack {
namespace phy {

// Register orientation of the x^9 + x^4 + 1 scrambler (tagged `?`: the two part from
// the third PSK value on).
enum class x9_orientation {
    a, // R = (R >> 1) | ((b0 ^ b4) << 8), output the low bits (recommended: the reading
       // of the off-air App C decoder and of two interoperable STANAG 4285 generators)
    b, // R = ((R << 1) | (b8 ^ b4)) & 0x1FF, output the low bits
};

// The values the scrambler adds to `count` data symbols from its start state 000000001:
// bits_per_symbol 1..3 (PSK, added mod 8) take R & 7 and advance 3 steps; N >= 4 (QAM,
// XORed onto the symbol number) take R & (2^N - 1) and advance N steps.
std::vector<uint8_t>
x9_scrambler_values(size_t count, unsigned bits_per_symbol, x9_orientation orientation);

// Entry k: the block's bit sent k-th, when bit n is loaded at (n * increment) mod size.
std::vector<uint32_t> increment_fetch_order(uint32_t size, uint32_t increment);

// A rate-1/2 mother code: constraint length and generators in octal notation.
struct conv_code {
    unsigned constraint_length;
    unsigned t1_octal;
    unsigned t2_octal;
    unsigned memory() const { return constraint_length - 1; }
};
constexpr conv_code conv_code_k7{ 7, 0133, 0171 };
constexpr conv_code conv_code_k9{ 9, 0561, 0753 };
// The K = 7 code read the other way round, the newest bit at each polynomial's least
// significant bit (133 and 171 mirrored over 7 bits): how one App D implementation
// (pdn-soundmodem) codes. 110A recordings confirm the newest bit at the MSB; a receiver
// takes this only when told (k7_newest_bit=lsb).
constexpr conv_code conv_code_k7_newest_lsb{ 7, 0155, 0117 };

// Where a tail-biting block's coded output starts (tagged `?`: invisible in loopback):
// which information bit's pair goes out first. The register then holds the bits before
// it (cyclically: a block's last bits before its bit 0), and the pairs of the bits
// before it go out last. Recommended first (docs/modem-design.md, "Tail-biting phase").
enum class tail_biting_start {
    // The first pair is bit 7's, for K = 7 and K = 9 alike: the pairs of bits 7..n-1,
    // then those of bits 0..6 (the phase the off-air App C and App D decoder
    // gr-digitalhf expects, and D.5.3.2.3's register "filled with the last seven input
    // data bits"; recommended).
    first_pair_bit_7,
    // The register filled with bits 0..K-2 first, without output; the first pair is
    // bit K-1's, the last ones those of bits 0..K-2 shifted in again (D.5.3.2.3's
    // "(k-1)" wording as pdn-soundmodem reads it).
    from_full_register,
    // The register preloaded with the block's last K-1 bits; bit 0's pair first.
    from_block_start,
};
// Every phase, the recommended first.
constexpr tail_biting_start tail_biting_starts[] = {
    tail_biting_start::first_pair_bit_7,
    tail_biting_start::from_full_register,
    tail_biting_start::from_block_start
};
// The information bit whose pair a block's coded output starts with (7, K - 1 or 0).
unsigned tail_biting_first_bit(tail_biting_start start, const conv_code& code);

// How far a block's LLRs agree with its decoded bits coded again (the receivers' test
// of a data reading): the LLR weight of the bits that disagree, the weight expected to
// disagree from the LLRs' own uncertainty, and the whole weight.
struct reencoding_agreement {
    double wrong = 0, expected = 0, weight = 0;
};
reencoding_agreement agreement_of(const std::vector<float>& llr,
                                  const std::vector<uint8_t>& channel_bits);

// find_scrambler, for the App C and App D receivers: the x^9 reading a burst's first
// block is taken under. A wrong reading leaves LLRs of noise that the Viterbi still fits
// in part, so the share of LLR weight the decoded bits coded again disagree with is
// compared between the readings, unless a burst has told them apart and the block fits
// the reading in use on sure LLRs.
class scrambler_reading_judge
{
public:
    // A new burst: neither reading tried on it yet.
    void start_burst() { tried_[0] = tried_[1] = false; }
    // The reading the block decoded under `in_use` with `agreement` is to be taken under:
    // in_use, or the other, to be tried (again) on the burst from its preamble.
    x9_orientation judge(x9_orientation in_use, const reencoding_agreement& agreement);
    // Whether a burst has told the readings apart (before: every burst tries both), and
    // whether this burst has judged a block under `reading` (a receiver may begin again
    // under the other before the agreement is in, and judge it later in order).
    bool settled() const { return settled_; }
    bool tried(x9_orientation reading) const
    {
        return tried_[reading == x9_orientation::a ? 0 : 1];
    }

private:
    double score_[2] = { 0, 0 };
    bool tried_[2] = { false, false };
    bool settled_ = false; // a burst has told the readings apart
};

// Finds a burst's tail-biting phase from where its EOM lands, for the App C and App D
// receivers (docs/modem-design.md, "Interoperability"). Every phase decodes to the same
// cyclic bits, each block rotated by its first bit (tail_biting_viterbi: pair j carries
// bit j + first), so under phase q bit i of a block is bit (i + first_p - first_q) mod n
// under the phase p in use; an EOM where the transmitter puts it (on a byte boundary,
// zeros after it to its block's end) settles the phase.
class tail_biting_phase_search
{
public:
    static constexpr size_t no_eom = SIZE_MAX;
    tail_biting_phase_search(uint32_t eom, unsigned eom_bits)
        : d_eom(eom), d_eom_bits(eom_bits)
    {
    }
    // Forgets the other phases' bits: a new burst, or a phase settled.
    void clear();
    // Whether an EOM at `at` of `bits` sits where a transmitter puts it.
    bool eom_fits(const std::vector<uint8_t>& bits, size_t at) const;
    // bits: the burst's bits so far under `in_use`, in blocks of n; eom_at: the EOM found
    // in them (no_eom: none yet), eom_searched: how far they were searched. Where the
    // phase in use fits, or no other does, nothing changes and `in_use` is returned;
    // otherwise bits, eom_at and eom_searched become those of the first phase (by
    // tail_biting_starts' order) that fits, which is returned. With K = 9 two can fit
    // (from_block_start and from_full_register are a whole byte apart) on a burst with a
    // byte or more of fill: the earlier is taken.
    tail_biting_start settle(std::vector<uint8_t>& bits,
                             size_t& eom_at,
                             size_t& eom_searched,
                             tail_biting_start in_use,
                             const conv_code& code,
                             size_t n);

private:
    uint32_t d_eom;
    unsigned d_eom_bits;
    // The bits under each other phase (the one in use left empty), and how far the EOM
    // was searched for in them.
    std::vector<uint8_t> d_other_bits[std::size(tail_biting_starts)];
    size_t d_other_searched[std::size(tail_biting_starts)] = {};
};

// The mother code's (T1, T2) pairs of one tail-biting block of n >= max(K - 1, 8) bits
// (n > the first bit).
std::vector<uint8_t>
tail_biting_encode(const conv_code& code,
                   const uint8_t* bits,
                   size_t n,
                   tail_biting_start start = tail_biting_start::first_pair_bit_7);
// The same into pairs[0 .. 2n) (a receiver codes a long block again after each pass):
// with `concurrently` ranges of it on two threads (run_ranges), the same pairs.
void tail_biting_encode(const conv_code& code,
                        const uint8_t* bits,
                        size_t n,
                        tail_biting_start start,
                        uint8_t* pairs,
                        bool concurrently);

// Soft-decision Viterbi decoder of a tail-biting block for either code, in plain C++
// with float metrics (about 7 Mbit/s for K = 7, 2 Mbit/s for K = 9 on one core). Not on
// the VOLK K = 7 kernel of conv_k7.h: its 8-bit soft symbols cannot hold both the
// strong and the weak LLRs of a QAM block, and WN11/WN12 blocks at 8/9 decoded wrong
// through it with every channel bit right. LLRs are log P(0) /
// P(1) per mother-code bit, T1 then T2 per input bit (0 = erasure, as after
// puncturing). The block is decoded with its own end before it and its start after
// it, from unknown states, so the paths settle before the block's bits.
class tail_biting_viterbi
{
public:
    explicit tail_biting_viterbi(const conv_code& code);
    // llr: 2 n values; appends the block's n bits (n >= K - 1, and more than the first
    // bit of `start`). A block of 131072 pairs or more is decoded in pieces of about
    // 65536 (each started and ended 128 pairs beyond it), on a second thread too with
    // `concurrently`: the same bits either way.
    void decode(const float* llr,
                size_t n,
                tail_biting_start start,
                std::vector<uint8_t>& bits,
                bool concurrently = false);
    // Of the last block decoded: the expected number of its bits decoded wrong, the sum
    // over them of 1 / (1 + e^|L|), L a bit's a-posteriori LLR from a max-log MAP pass
    // over the same wrapped pairs (in windows of 2048 pairs, each backward pass started
    // 64 pairs past its window: memory bounded whatever the block); and whether the
    // Viterbi's paths closed round the block (the bits decoded on the wraps before and
    // after it equal the block's own end and start). The LLRs must be log-likelihood
    // ratios for L to be one. About the Viterbi's cost again. A block in pieces (decode)
    // has its forward metrics started from equal ones 128 pairs before each piece.
    double expected_errors();
    bool closed() const;
    // decode() and then expected_errors(), their results the same; with `concurrently`
    // the Viterbi's and the max-log MAP pass's pieces are shared with a second thread
    // (all only read the block's pairs).
    double decode_with_expected_errors(const float* llr,
                                       size_t n,
                                       tail_biting_start start,
                                       std::vector<uint8_t>& bits,
                                       bool concurrently);
    // Whether the decoders take eight states at a time where the processor has AVX2
    // (the default there) or four (SSE2): the same bits and expected errors either way.
    // Returns whether the wide path is now in use (false where AVX2 is absent).
    static bool set_wide_vectors(bool on);

private:
    // One thread's working space for a piece of the Viterbi or of the MAP pass.
    struct scratch {
        std::vector<uint64_t> decisions;
        std::vector<float> metric, next;
        std::vector<float> beta; // one window's backward metrics
        std::vector<float> alpha, after, later, now;
    };
    // decode()'s steps: the block's pairs wrapped, then decoded (d_decoded, by wrapped
    // pair) and its bits appended.
    void wrap(const float* llr, size_t n, tail_biting_start start);
    void append_decoded(tail_biting_start start, std::vector<uint8_t>& bits) const;
    // The last wrapped block's pieces, and the wrapped pairs [first, second) piece p
    // decodes (together the whole wrapped block, wraps included).
    size_t pieces() const;
    std::pair<size_t, size_t> piece_span(size_t p) const;
    // Most likely input bits of piece p's pairs (into d_decoded), from any state to any
    // state over the pairs around it.
    void viterbi_piece(size_t p, scratch& work);
    // Piece p's share of expected_errors().
    double expected_errors_piece(size_t p, scratch& work) const;
    // The survivor ending in the best of `metric`, traced back over `steps` pairs; the
    // bits of steps [keep_from, keep_to) written to bits[step].
    void traceback(const std::vector<float>& metric,
                   const std::vector<uint64_t>& decisions,
                   size_t steps,
                   size_t keep_from,
                   size_t keep_to,
                   uint8_t* bits) const;

    conv_code d_code;
    unsigned d_states;
    std::vector<float> d_sign; // per state and input bit: T1 and T2 as +1 (0) or -1 (1)
    // The same by new state ns (predecessors ns / 2 and ns / 2 + half, input bit ns % 2):
    // T1 and T2 from the first, T1 and T2 from the second, d_states each (the SSE2
    // butterflies take four new states at once).
    std::vector<float> d_sign_by_next;
    // d_sign again as four rows of d_states (T1 and T2 for input 0, then for input 1):
    // the eight-state backward step's loads.
    std::vector<float> d_sign_by_state;
    std::vector<float> d_wrapped;
    std::vector<uint8_t> d_decoded;
    size_t d_n = 0;                   // the last block's bits
    std::array<scratch, 2> d_scratch; // by worker (run_pieces)
};

} // namespace phy
} // namespace hfstack
} // namespace gr

#endif
