/* How long one modem transmission lasts, part by part: shared by the waveform timing
 * models (m110a_timing.h, m110c_timing.h). */
#ifndef HFSTACK_KERNELS_PHY_TRANSMISSION_TIME_H
#define HFSTACK_KERNELS_PHY_TRANSMISSION_TIME_H

#include <cstddef>

namespace gr {
namespace hfstack {
namespace phy {

struct transmission_time {
    double preamble_s = 0;
    double data_s = 0;    // user bytes, end of message, flush and fill, in whole units
    double total_s = 0;
    size_t units = 0;     // interleaver blocks (or frames, when not interleaved) sent
    size_t fill_bits = 0; // zero bits padding the last unit
};

} // namespace phy
} // namespace hfstack
} // namespace gr

#endif
