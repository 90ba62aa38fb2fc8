/* STANAG 5069 (MIL-STD-188-110D App D) receive side after the equaliser: soft demapping
 * of the data symbols (serial_tone_demapper.h, shared with App C: max-log LLRs, the
 * scrambler undone) and the decoding of an interleaver block (deinterleave, undo the
 * repetition and puncturing, tail-biting Viterbi for K = 7 or K = 9). Constants and
 * readings: m110d_waveform.h. */
#ifndef HFSTACK_KERNELS_PHY_M110D_DECODER_H
#define HFSTACK_KERNELS_PHY_M110D_DECODER_H

#include "m110d_waveform.h"
#include "serial_tone_demapper.h"

#include <cstdint>
#include <vector>

namespace gr {
namespace hfstack {
namespace phy {

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
    m110d_block_decoder(const m110d_mode& mode, unsigned constraint_length,
                        tail_biting_start start = tail_biting_start::from_full_register);
    size_t channel_bits() const { return d_order.size(); }
    size_t user_bits() const { return d_user_bits; }
    // llr: channel_bits() values, log P(0) / P(1); appends user_bits() bits.
    void decode(const float* llr, std::vector<uint8_t>& bits);

private:
    const m110d_code_rate& d_rate;
    unsigned d_constraint_length;
    tail_biting_start d_start;
    size_t d_user_bits;
    std::vector<uint32_t> d_order;
    std::vector<float> d_punctured;
    tail_biting_viterbi d_viterbi;
};

} // namespace phy
} // namespace hfstack
} // namespace gr

#endif
