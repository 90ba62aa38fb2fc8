#include "m110d_decoder.h"

#include <stdexcept>

namespace gr {
namespace hfstack {
namespace phy {

namespace {
unsigned data_bits_per_symbol(const m110d_mode& mode)
{
    if (mode.wn == 0)
        throw std::invalid_argument("m110d_demapper: WN0 carries Walsh symbols, not mapped data");
    return m110d_bits_per_symbol(mode.wn);
}
} // namespace

m110d_demapper::m110d_demapper(const m110d_mode& mode, const m110d_readings& readings)
    : serial_tone_demapper(data_bits_per_symbol(mode), m110d_constellation(data_bits_per_symbol(mode)),
                           m110d_map_bits, m110d_data_scrambler(mode, readings.scrambler))
{
}

m110d_block_decoder::m110d_block_decoder(const m110d_mode& mode, unsigned constraint_length, tail_biting_start start)
    : d_rate(m110d_code_rate_of(mode)),
      d_constraint_length(constraint_length),
      d_start(start),
      d_user_bits(mode.input_bits_per_block),
      d_order(m110d_fetch_order(mode)),
      d_viterbi(m110d_conv_code(constraint_length))
{
}

void m110d_block_decoder::decode(const float* llr, std::vector<uint8_t>& bits)
{
    d_punctured.resize(d_order.size());
    for (size_t k = 0; k < d_order.size(); ++k)
        d_punctured[d_order[k]] = llr[k];
    const std::vector<float> mother = m110d_depuncture(d_punctured.data(), d_user_bits, d_rate, d_constraint_length);
    d_viterbi.decode(mother.data(), d_user_bits, d_start, bits);
}

} // namespace phy
} // namespace hfstack
} // namespace gr
