/* The modes of STANAG 4539 by name, one namespace for the two waveform families:
 *   serial tone (110A/B), 75-2400 bps with interleaver Z (zero), S or L: "1200S", "75L";
 *     4800 bps uncoded: "4800U";
 *   Appendix C, 3200-9600 bps with US, VS, S, M, L or VL: "9600S", "3200VL";
 *     12800 bps uncoded: "12800U".
 * 4800 bps with an interleaver letter is Appendix C's coded 8PSK mode, the one STANAG
 * 4539 means by 4800 bps; the serial-tone 4800 bps mode is "4800U". */
#ifndef HFSTACK_KERNELS_PHY_S4539_MODES_H
#define HFSTACK_KERNELS_PHY_S4539_MODES_H

#include "transmission_time.h"

#include <optional>
#include <string>
#include <vector>

namespace gr {
namespace hfstack {
namespace phy {

// nullopt for a name that is not a STANAG 4539 mode (case of the letters ignored).
std::optional<waveform_timing> s4539_timing(const std::string& mode_name);
// Every mode, slowest first.
std::vector<std::string> s4539_mode_names();

} // namespace phy
} // namespace hfstack
} // namespace gr

#endif
