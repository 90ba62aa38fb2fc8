#include "m110c_timing.h"

#include <cmath>

namespace gr {
namespace hfstack {
namespace phy {

namespace {
// m110c_appc.json interleaver_code.frames_per_block, in enum order.
constexpr unsigned frames_per_block[] = { 1, 3, 9, 18, 36, 72 };
const char* const interleaver_names[] = { "US", "VS", "S", "M", "L", "VL" };
} // namespace

std::string m110c_mode::name() const
{
    if (!coded)
        return std::to_string(user_bps) + "U";
    return std::to_string(user_bps) + interleaver_names[unsigned(interleaver)];
}

std::optional<m110c_mode> m110c_mode_for(unsigned user_bps, m110c_interleaver interleaver)
{
    m110c_mode m;
    m.user_bps = user_bps;
    m.interleaver = interleaver;
    m.frames_per_block = frames_per_block[unsigned(interleaver)];
    switch (user_bps) { // m110c_appc.json rate_code
    case 3200:
        m.bits_per_symbol = 2;
        break;
    case 4800:
        m.bits_per_symbol = 3;
        break;
    case 6400:
        m.bits_per_symbol = 4;
        break;
    case 8000:
        m.bits_per_symbol = 5;
        break;
    case 9600:
        m.bits_per_symbol = 6;
        break;
    case 12800:
        m.bits_per_symbol = 6;
        m.coded = false;
        m.frames_per_block = 1;
        break;
    default:
        return std::nullopt;
    }
    return m;
}

transmission_time m110c_transmission_time(const m110c_mode& mode, size_t bytes)
{
    transmission_time t;
    t.preamble_s = m110c_preamble_symbols / m110c_symbol_rate;
    const size_t per_unit = size_t(std::lround(mode.user_bits_per_frame())) * mode.frames_per_block;
    const size_t bits = 8 * bytes + m110c_eom_bits;
    t.units = (bits + per_unit - 1) / per_unit;
    t.fill_bits = t.units * per_unit - bits;
    const size_t frames = t.units * mode.frames_per_block;
    const size_t symbols = frames * (m110c_data_symbols + m110c_probe_symbols) +
                           (frames / m110c_reinsert_period_frames) * m110c_reinserted_symbols;
    t.data_s = symbols / m110c_symbol_rate;
    t.total_s = t.preamble_s + t.data_s;
    return t;
}

} // namespace phy
} // namespace hfstack
} // namespace gr
