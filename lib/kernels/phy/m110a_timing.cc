#include "m110a_timing.h"

#include <cmath>

namespace gr {
namespace hfstack {
namespace phy {

namespace {

struct row {
    unsigned bps, unknown, known, frames_short, frames_long;
};
// m110a.json "modes": frame layout and frames per 0.6 s / 4.8 s interleaver block.
constexpr row rows[] = {
    { 75, 32, 0, 45, 360 },   { 150, 20, 20, 36, 288 }, { 300, 20, 20, 36, 288 },
    { 600, 20, 20, 36, 288 }, { 1200, 20, 20, 36, 288 }, { 2400, 32, 16, 30, 240 },
};

} // namespace

std::string m110a_mode::name() const
{
    if (user_bps == 4800)
        return "4800U";
    const char* il = interleaver == m110a_interleaver::zero    ? "Z"
                     : interleaver == m110a_interleaver::short_ ? "S"
                                                                : "L";
    return std::to_string(user_bps) + il;
}

std::optional<m110a_mode> m110a_mode_for(unsigned user_bps, m110a_interleaver interleaver)
{
    m110a_mode m;
    m.user_bps = user_bps;
    m.interleaver = interleaver;
    if (user_bps == 4800) { // uncoded, never interleaved: frames like 2400 bps
        if (interleaver != m110a_interleaver::zero)
            return std::nullopt;
        m.preamble_segments = 3;
        m.unknown_symbols = 32;
        m.known_symbols = 16;
        m.frames_per_block = 1;
        return m;
    }
    for (const row& r : rows) {
        if (r.bps != user_bps)
            continue;
        m.unknown_symbols = r.unknown;
        m.known_symbols = r.known;
        switch (interleaver) {
        case m110a_interleaver::zero:
            // Not interleaved: padded to the fewest frames holding whole user bits (one
            // frame, except two at 150 bps, where a frame carries 2.5 bits).
            m.preamble_segments = 3;
            m.frames_per_block = 1;
            while (std::fmod(m.unit_bits(), 1.0) > 1e-9)
                ++m.frames_per_block;
            break;
        case m110a_interleaver::short_:
            m.preamble_segments = 3;
            m.frames_per_block = r.frames_short;
            break;
        case m110a_interleaver::long_:
            m.preamble_segments = 24;
            m.frames_per_block = r.frames_long;
            break;
        }
        return m;
    }
    return std::nullopt;
}

waveform_timing m110a_mode::timing() const
{
    waveform_timing w;
    w.preamble_s = preamble_segments * m110a_segment_s;
    // A frame of the 75 bps mode carries one user bit; others carry whole numbers too.
    w.unit_bits = size_t(std::lround(unit_bits()));
    w.unit_s = unit_s();
    w.bit_rate = double(w.unit_bits) / w.unit_s;
    w.trailer_bits = m110a_eom_bits + m110a_flush_bits;
    return w;
}

transmission_time m110a_transmission_time(const m110a_mode& mode, size_t bytes)
{
    return transmission_time_of(mode.timing(), bytes);
}

} // namespace phy
} // namespace hfstack
} // namespace gr
