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

    // Data symbol i (0..255) of a frame, equalised to the transmitter's scale (PSK on
    // the unit circle, QAM at unit mean power), with error variance sigma2: writes its
    // bits_per_symbol LLRs (first bit first) and returns the nearest point it may have
    // been sent as (the decision).
    cd demap(cd u, unsigned i, double sigma2, float* llr) const;
    // The point data symbol i is sent as when it carries `label` (its bits, first the
    // MSB).
    cd point_of(unsigned label, unsigned i) const;

private:
    unsigned d_bits;
    std::vector<cd> d_points;    // candidate points (PSK: the 8PSK circle)
    std::vector<unsigned> d_set; // PSK: the mode's symbol numbers before scrambling
    std::vector<unsigned> d_label_of; // PSK: bits of each symbol number (inverse map)
    std::array<uint8_t, m110c_data_symbols> d_scrambler;
};

// One interleaver block's channel-bit LLRs, in the order sent, to its user bits.
class m110c_block_decoder
{
public:
    explicit m110c_block_decoder(const m110c_mode& mode, const m110c_readings& readings = {});
    size_t channel_bits() const { return d_channel_bits; }
    size_t user_bits() const { return d_user_bits; }
    // llr: channel_bits() values; appends user_bits() bits.
    void decode(const float* llr, std::vector<uint8_t>& bits);

private:
    bool d_coded;
    m110c_tail_biting d_reading;
    size_t d_channel_bits, d_user_bits;
    std::vector<uint32_t> d_order;
    std::vector<float> d_mother; // scratch: the mother code's pair LLRs, wrapped
    std::vector<uint8_t> d_decoded;
    k7_viterbi d_viterbi;
};

} // namespace phy
} // namespace hfstack
} // namespace gr

#endif
