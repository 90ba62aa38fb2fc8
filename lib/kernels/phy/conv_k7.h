/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

/* The K = 7, rate 1/2 convolutional code of MIL-STD-188-110A/B and STANAG 4539/5069:
 * T1 = 133, T2 = 171 (octal, most significant bit = the newest input bit), T1 sent
 * first, the encoder starting in the all-zero state (m110a.json "fec", tagged V).
 *
 * The decoder is a soft-decision Viterbi on VOLK's K=7 rate-1/2 butterfly kernel
 * (volk_8u_x4_conv_k7_r2_8u, the one GNU Radio's cc_decoder uses) with our own
 * traceback. Soft input: one log-likelihood ratio per coded bit, log P(0) / P(1)
 * (positive favours 0, 0 = erasure), quantised to the kernel's 8 bits. */
#ifndef HFSTACK_KERNELS_PHY_CONV_K7_H
#define HFSTACK_KERNELS_PHY_CONV_K7_H

#include <cstddef>
#include <cstdint>
#include <vector>

#include <volk/volk_alloc.hh>

namespace gr {
namespace hfstack {
namespace phy {

class k7_encoder
{
public:
    // Appends the two coded bits (T1, T2) of each input bit (0 or 1) to out.
    void encode(const uint8_t* bits, size_t n, std::vector<uint8_t>& out);
    void reset() { d_state = 0; }
    unsigned state() const { return d_state; } // last 6 input bits, newest in bit 0

private:
    unsigned d_state = 0;
};

class k7_viterbi
{
public:
    // llr_scale: LLR units per quantisation step of the kernel's 8-bit soft symbols
    // (the symbol is 128 - llr * scale, clamped to 0..255). The default suits LLRs of a
    // few units; the decision is invariant to a common scale except through clamping.
    explicit k7_viterbi(float llr_scale = 16.0f);
    ~k7_viterbi();
    k7_viterbi(const k7_viterbi&) = delete;
    k7_viterbi& operator=(const k7_viterbi&) = delete;

    // Decodes llr[0 .. 2 n) (T1, T2 per input bit) from the all-zero state into n bits.
    // end_state: the encoder's known final state (0 after a flush), or -1 to end in the
    // best one. Resets any stream in progress.
    std::vector<uint8_t> decode(const float* llr, size_t n, int end_state = -1);

    // Streaming: start() from the all-zero state, push() soft pairs as they come,
    // take_decided() the bits that are at least `depth` steps behind the newest (traced
    // back from the best state now; 5 to 7 constraint lengths lose nothing measurable),
    // finish() for the rest.
    void start();
    void push(const float* llr, size_t pairs);
    size_t take_decided(std::vector<uint8_t>& out, size_t depth = 96);
    void finish(std::vector<uint8_t>& out, int end_state = -1);
    size_t steps() const { return d_steps; }

private:
    // Traces back from `state` at the newest step to step `from`, writing the bits of
    // steps [from, until) to out.
    void
    trace(unsigned state, size_t from, size_t until, std::vector<uint8_t>& out) const;
    unsigned best_state() const;

    float d_scale;
    unsigned char* d_metrics; // two 64-entry metric buffers, VOLK-aligned
    unsigned char* d_current; // the one holding the newest metrics
    unsigned char d_branch[64];
    // VOLK-aligned: the SIMD kernels may store decisions and load symbols aligned.
    volk::vector<uint8_t> d_decisions; // 8 bytes per step
    size_t d_steps = 0;
    size_t d_output = 0; // steps whose bits were handed out
    size_t d_first = 0;  // step of the first decision still kept
    volk::vector<unsigned char> d_symbols;
};

// A posteriori LLRs of the coded bits (and the input bits) by the max-log BCJR: what
// a decoder-aided pass needs to tell the re-encoded decisions it can trust from those
// the decoder itself was unsure of (the Viterbi decoder gives bits only). Same LLR
// convention as k7_viterbi: log P(0) / P(1), T1, T2 per input bit.
struct k7_soft_output {
    std::vector<float> coded; // 2 n a posteriori LLRs
    std::vector<float> input; // n
};
// From the all-zero state; end_state as k7_viterbi::decode (-1: any).
k7_soft_output k7_max_log_map(const float* llr, size_t n, int end_state = -1);

} // namespace phy
} // namespace hfstack
} // namespace gr

#endif
