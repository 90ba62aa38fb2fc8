/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

/* STANAG 4539 App C receive side, after the equaliser: soft demapping of the data
 * symbols (the scrambler undone) and the decoding of an interleaver block (deinterleave,
 * depuncture, tail-biting Viterbi). Constants and readings: m110c_waveform.h.
 *
 * LLRs are log P(0) / P(1) per coded bit (serial_tone_demapper.h: max-log over the
 * constellation, the scrambler undone). */
#ifndef HFSTACK_KERNELS_PHY_M110C_DECODER_H
#define HFSTACK_KERNELS_PHY_M110C_DECODER_H

#include "conv_k7.h"
#include "m110c_waveform.h"
#include "serial_tone_demapper.h"

#include <array>
#include <complex>
#include <cstdint>
#include <vector>

namespace gr {
namespace hfstack {
namespace phy {

// Demapper of a mode's data symbols (serial_tone_demapper.h), i the symbol's position
// in its 256-symbol frame.
class m110c_demapper : public serial_tone_demapper
{
public:
    explicit m110c_demapper(const m110c_mode& mode, const m110c_readings& readings = {});
};

// One interleaver block's channel-bit LLRs, in the order sent, to its user bits.
//
// A tail-biting block carries no check its decoder could verify, so each decoded block
// is also judged (reliability()): the expected number of its user bits decoded wrong,
// sum over them of 1 / (1 + e^|L|), L a bit's a-posteriori LLR from a max-log MAP
// pass over the same wrapped block (the channel LLRs are log-likelihood ratios, scaled
// by the equaliser's error variance, so L is one too); reliability() is minus its
// natural logarithm (2.3: 0.1 bits expected wrong). The Viterbi's paths must also
// close round the block (the bits decoded on the wraps before and after it equal the
// block's own end and start), or the reliability is at most 0. Uncoded (12800 bps):
// the same sum over the channel LLRs.
class m110c_block_decoder
{
public:
    explicit m110c_block_decoder(const m110c_mode& mode,
                                 const m110c_readings& readings = {});
    size_t channel_bits() const { return d_channel_bits; }
    size_t user_bits() const { return d_user_bits; }
    // llr: channel_bits() values; appends user_bits() bits.
    void decode(const float* llr, std::vector<uint8_t>& bits);
    // Of the last block decode() decoded (see above): larger is more reliable. Computed
    // on the first call (the MAP pass costs about what the Viterbi does).
    double reliability();

private:
    bool d_coded;
    m110c_tail_biting d_reading;
    size_t d_channel_bits, d_user_bits;
    std::vector<uint32_t> d_order;
    std::vector<float> d_mother; // scratch: the mother code's pair LLRs, wrapped
    std::vector<uint8_t> d_decoded;
    k7_viterbi d_viterbi;
    double d_reliability = 0;
    bool d_judged = true; // d_reliability is the last block's
    bool d_closed = true; // its Viterbi paths closed round it
    size_t d_wrap = 0;
    std::vector<float> d_beta; // scratch: the MAP pass's backward metrics
    // Expected wrong bits among the n pairs of d_mother from `first` on (max-log MAP).
    double expected_errors(size_t first, size_t n);
};

} // namespace phy
} // namespace hfstack
} // namespace gr

#endif
