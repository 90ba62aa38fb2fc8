/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

/* The modes of STANAG 4539 by name, one namespace for the two waveform families:
 *   serial tone (110A/B), 75-2400 bps with interleaver Z (zero), S or L: "1200S", "75L";
 *     4800 bps uncoded: "4800U";
 *   Appendix C, 3200-9600 bps with US, VS, S, M, L or VL: "9600S", "3200VL";
 *     12800 bps uncoded: "12800U".
 * 4800 bps with an interleaver letter is Appendix C's coded 8PSK mode, the one STANAG
 * 4539 means by 4800 bps; the serial-tone 4800 bps mode is "4800U". */
#ifndef HFSTACK_KERNELS_PHY_S4539_MODES_H
#define HFSTACK_KERNELS_PHY_S4539_MODES_H

#include "m110a_waveform.h"
#include "m110c_timing.h"
#include "m110c_waveform.h"
#include "transmission_time.h"

#include <complex>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace gr {
namespace hfstack {
namespace phy {

// A mode of either family, as the blocks and the node name it: a user rate and an
// interleaver name, "none" (4800U, 12800U), "short", "long" (110A and App C),
// "ultra_short", "very_short", "medium", "very_long" (App C).
struct s4539_mode {
    std::string name; // "2400S", "9600VL", "4800U", ...
    unsigned user_bps = 0;
    std::string interleaver;
    const m110a_waveform* serial = nullptr; // the 110A mode, or
    std::optional<m110c_mode> high;         // the App C one
};
// nullopt when STANAG 4539 has no such mode (4800 with "none" is 110A's uncoded mode,
// with an App C interleaver App C's coded one).
std::optional<s4539_mode> s4539_mode_for(unsigned user_bps,
                                         const std::string& interleaver);
std::optional<s4539_mode> s4539_mode_by_name(const std::string& name);
// One transmission's channel symbols as constellation points (psk_modulator shapes them).
// readings: App C's (scrambler, tail-biting phase); 110A has none.
std::vector<std::complex<float>>
s4539_transmit_points(const s4539_mode& mode,
                      const uint8_t* bytes,
                      size_t n,
                      const m110c_readings& readings = {});

// nullopt for a name that is not a STANAG 4539 mode (case of the letters ignored).
std::optional<waveform_timing> s4539_timing(const std::string& mode_name);
// Every mode, slowest first (the zero-interleave ones too, which only have a timing).
std::vector<std::string> s4539_mode_names();
// Why `name` is no mode our modem sends ("" when it is one): one reason that the modem,
// the node, the simulator and GRC all show alike (the zero interleaver, 75Z..2400Z,
// has a timing model but no transmitter or receiver, so every place refuses it).
std::string s4539_mode_problem(const std::string& name);

} // namespace phy
} // namespace hfstack
} // namespace gr

#endif
