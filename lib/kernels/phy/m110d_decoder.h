/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

/* STANAG 5069 (MIL-STD-188-110D App D) receive side after the equaliser: the preamble's
 * count and WID fields read from their Walsh symbols (under either PN alignment and
 * WID parity reading), soft demapping of the data symbols (serial_tone_demapper.h,
 * shared with App C: max-log LLRs, the scrambler undone; WN0: its Walsh symbols) and
 * the decoding of an interleaver block (deinterleave, undo the repetition and
 * puncturing, tail-biting Viterbi for K = 7 or K = 9). Input chips and symbols are
 * equalised: the channel removed, on the scale of the unit-amplitude probes and
 * preamble. Constants and readings: m110d_waveform.h. */
#ifndef HFSTACK_KERNELS_PHY_M110D_DECODER_H
#define HFSTACK_KERNELS_PHY_M110D_DECODER_H

#include "m110d_waveform.h"
#include "serial_tone_demapper.h"

#include <array>
#include <complex>
#include <cstdint>
#include <optional>
#include <vector>

namespace gr {
namespace hfstack {
namespace phy {

// ---- preamble fields
// Coherent correlations Re(sum_j y[j] conj(c_d[j])) of one received preamble Walsh
// symbol y[0 .. chips) with the chips c_d it would be for each dibit d, the symbol
// being number `index` of its section in `table` (where its PN starts depends on the
// alignment).
std::array<double, 4> m110d_walsh_correlations(const std::complex<float>* y,
                                               unsigned chips,
                                               m110d_pn_table table,
                                               unsigned index,
                                               m110d_pn_alignment alignment);

// The count and WID fields of a super-frame, read.
struct m110d_fields {
    unsigned count = 0; // super-frames still to come after this one
    m110d_wid wid;
    m110d_pn_alignment alignment = m110d_pn_alignment::per_symbol;
    m110d_wid_parity parity = m110d_wid_parity::checksum;
    double correlation = 0; // sum of the nine chosen symbols' correlations
};
// Reads y: the count section (4 Walsh symbols) and the WID section (5) that follows it,
// 9 * chips chips, each symbol decided on its largest correlation. nullopt when the
// count's or the WID's check bits fail, or the WN is reserved.
std::optional<m110d_fields> m110d_read_fields(const std::complex<float>* y,
                                              unsigned chips,
                                              m110d_pn_alignment alignment,
                                              m110d_wid_parity parity);
// The count section alone (the first 4 of those Walsh symbols), decided as
// m110d_read_fields decides it: the count it reads, nullopt when its check bits fail.
// m110d_read_fields reads no count other than this one, under either WID parity.
std::optional<unsigned> m110d_read_count(const std::complex<float>* y,
                                         unsigned chips,
                                         m110d_pn_alignment alignment);
// The same under every PN alignment and WID parity reading: the fields whose checks
// pass with the largest correlation (a wrong alignment decorrelates every symbol but
// the first of each section), the checksum parity preferred on a tie.
std::optional<m110d_fields> m110d_read_fields_any_reading(const std::complex<float>* y,
                                                          unsigned chips);

// ---- WN0
// The two LLRs (log P(0) / P(1), first bit the MSB) of the coded dibit a WN0 Walsh
// symbol carries: y[0 .. 32), the symbol number `symbol_in_block` of its interleaver
// block (the Trinomial scrambler restarts at each), sigma2 the chips' complex noise
// variance. Max-log over the four patterns.
void m110d_wn0_demap(const std::complex<float>* y,
                     size_t symbol_in_block,
                     double sigma2,
                     float* llr);

// Demapper of a mode's data symbols (WN1-WN13), i the symbol's position in its block
// of U data symbols.
class m110d_demapper : public serial_tone_demapper
{
public:
    explicit m110d_demapper(const m110d_mode& mode, const m110d_readings& readings = {});
};

// The inverse: one block's channel-bit LLRs (in the order sent) to its user bits.
class m110d_block_decoder
{
public:
    // k7_newest_lsb: K = 7 as conv_code_k7_newest_lsb (serial_tone_coding.h).
    m110d_block_decoder(const m110d_mode& mode,
                        unsigned constraint_length,
                        tail_biting_start start = tail_biting_start::first_pair_bit_7,
                        bool k7_newest_lsb = false);
    size_t channel_bits() const { return d_order.size(); }
    size_t user_bits() const { return d_user_bits; }
    // llr: channel_bits() values, log P(0) / P(1); appends user_bits() bits. With
    // `concurrently` a long block's Viterbi pieces are shared with a second thread
    // (tail_biting_viterbi::decode; the same bits).
    void decode(const float* llr, std::vector<uint8_t>& bits, bool concurrently = false);
    // Of the last block decoded, as the App C decoder's (m110c_block_decoder): minus the
    // natural log of its user bits expected wrong (tail_biting_viterbi::expected_errors:
    // 2.3 is 0.1 bits), at most 0 where the Viterbi's paths did not close round it.
    // Larger is more reliable; costs about a decoding.
    double reliability();
    // decode() and then reliability(), the same results; with `concurrently` the MAP
    // pass the reliability takes runs on a second thread beside the Viterbi's.
    double decode_with_reliability(const float* llr,
                                   std::vector<uint8_t>& bits,
                                   bool concurrently);

private:
    const m110d_code_rate& d_rate;
    unsigned d_constraint_length;
    tail_biting_start d_start;
    size_t d_user_bits;
    std::vector<uint32_t> d_order;
    std::vector<float> d_punctured;
    std::vector<float> d_mother;
    tail_biting_viterbi d_viterbi;
    // The block's channel-bit LLRs as the mother code's pairs (d_mother's, kept till
    // the next call); with `concurrently` ranges of them on two threads.
    const std::vector<float>& mother_pairs(const float* llr, bool concurrently);
    double reliability_of(double expected_errors) const;
};

} // namespace phy
} // namespace hfstack
} // namespace gr

#endif
