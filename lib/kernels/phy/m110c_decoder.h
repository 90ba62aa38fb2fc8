/* STANAG 4539 App C receive side, after the equaliser: soft demapping of the data
 * symbols (the scrambler undone) and the decoding of an interleaver block (deinterleave,
 * depuncture, tail-biting Viterbi). Constants and readings: m110c_waveform.h.
 *
 * LLRs are log P(0) / P(1) per coded bit, max-log over the constellation: PSK data
 * (QPSK, 8PSK) are scrambled by rotation, so the points a symbol may take are its
 * mode's set turned by the scrambler value; QAM data are scrambled by XOR on the symbol
 * number, so every point may be sent and only the labels change. */
#ifndef HFSTACK_KERNELS_PHY_M110C_DECODER_H
#define HFSTACK_KERNELS_PHY_M110C_DECODER_H

#include "conv_k7.h"
#include "m110c_waveform.h"

#include <array>
#include <complex>
#include <cstdint>
#include <vector>

namespace gr {
namespace hfstack {
namespace phy {

class m110c_demapper
{
public:
    using cd = std::complex<double>;
    explicit m110c_demapper(const m110c_mode& mode, const m110c_readings& readings = {});

    // Data symbol i (0..255) of a frame, equalised to the probes' scale (PSK on the
    // unit circle, QAM points as printed, outer ones at amplitude 1), with error
    // variance sigma2 on that scale: writes its
    // bits_per_symbol LLRs (first bit first) and returns the nearest point it may have
    // been sent as (the decision).
    cd demap(cd u, unsigned i, double sigma2, float* llr) const;
    // The point data symbol i is sent as when it carries `label` (its bits, first the
    // MSB).
    cd point_of(unsigned label, unsigned i) const;
    // Data symbol i as it would be received unscrambled: PSK rotated back onto the
    // mode's set; QAM unchanged (its scrambler maps the constellation onto itself).
    cd unscrambled(cd z, unsigned i) const;

private:
    unsigned d_bits;
    std::vector<cd> d_points;    // candidate points (PSK: the 8PSK circle)
    std::vector<unsigned> d_set; // PSK: the mode's symbol numbers before scrambling
    std::vector<unsigned> d_label_of; // PSK: bits of each symbol number (inverse map)
    std::array<uint8_t, m110c_data_symbols> d_scrambler;
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
    explicit m110c_block_decoder(const m110c_mode& mode, const m110c_readings& readings = {});
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
    bool d_judged = true;  // d_reliability is the last block's
    bool d_closed = true;  // its Viterbi paths closed round it
    size_t d_wrap = 0;
    std::vector<float> d_beta; // scratch: the MAP pass's backward metrics
    // Expected wrong bits among the n pairs of d_mother from `first` on (max-log MAP).
    double expected_errors(size_t first, size_t n);
};

} // namespace phy
} // namespace hfstack
} // namespace gr

#endif
