/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

/* STANAG 5069 (MIL-STD-188-110D Appendix D) modes in the node.
 *
 * The data link names a mode by Annex C's Table C-5 data rate code and Table C-6
 * interleaving code (modem_mode), which stop at 9600 bps and know no WN. A node whose
 * mode option names a STANAG 5069 mode ("WN12/48kHz/US") runs at that one bandwidth
 * (node_config::s5069_bandwidth_khz) and reads every modem_mode as a WN of it:
 *
 *   data_rate   = WN - 1          (WN1..WN12 are codes 0..11, least robust last)
 *   interleaving: US = 0 (none), S = 1 (short), L = 2 (long), M = 6 (medium, fixed only)
 *
 * so the Annex C machinery (less_robust, the rate policy's ladder, the EOW advisory's
 * fields) works on them unchanged. WN0 (Walsh) and WN13 (3 kHz only) have no code and are
 * refused by the node. Rate adaptation runs within the bandwidth and the interleaver
 * chosen, over s5069_rate_table(); with autobaud (a 5069 receiver reads the WN from the
 * WID) a node changes its transmit mode on its peer's advisory without the Annex C
 * procedure, which could not announce these modes. The advisory's Table C-5 field then
 * carries WN - 1: a private reading between nodes configured for the same bandwidth
 * (docs/node-design.md, "STANAG 5069 modes in the node"). */
#ifndef HFSTACK_KERNELS_DL_WIDEBAND_MODES_H
#define HFSTACK_KERNELS_DL_WIDEBAND_MODES_H

#include "modem_mode.h"
#include "phy/m110d_timing.h"
#include "phy/transmission_time.h"
#include "rate_policy.h"

#include <optional>
#include <set>
#include <string>
#include <vector>

namespace gr {
namespace hfstack {
namespace dl {

// A mode of either standard as the node holds it: s5069_bandwidth_khz 0 for STANAG 4539.
struct node_waveform {
    unsigned s5069_bandwidth_khz = 0;
    modem_mode mode;
};

// The node's mode for a STANAG 4539 name ("2400S", as node_mode_by_name) or a STANAG
// 5069 one ("WN12/48kHz/US"); std::invalid_argument saying why for any other name,
// WN0 and WN13 included.
node_waveform node_waveform_by_name(const std::string& name);

// The STANAG 5069 mode a node mode means at a bandwidth; nullopt when it means none
// (a code above 11, an interleaving code other than 0, 1, 2, 6, WN4 at 9 and 18 kHz).
std::optional<phy::m110d_mode> s5069_mode_of(unsigned bw_khz, const modem_mode& m);
// The node mode of a STANAG 5069 mode; nullopt for WN0 and WN13.
std::optional<modem_mode> s5069_node_mode(const phy::m110d_mode& m);

// The mode's name as the modem names it: "WN12/48kHz/US" at a 5069 bandwidth, else
// to_string(m) ("2400S").
std::string waveform_name(unsigned s5069_bandwidth_khz, const modem_mode& m);
// Air time model of a node mode: the STANAG 5069 mode's timing at a 5069 bandwidth
// (std::invalid_argument for a code that means no mode there), else
// default_waveform_timing(m).
phy::waveform_timing waveform_timing_of(unsigned s5069_bandwidth_khz,
                                        const modem_mode& m);

// SNR (dB in the mode's bandwidth) a STANAG 5069 WN needs: the AWGN column of 110D
// Table D-LXIV (coded BER 1e-5, long interleaver, the same at every bandwidth), which our
// modem meets 1 dB below for WN0-WN10 at 6-48 kHz (docs/modem-design.md, "STANAG 5069 at
// every bandwidth").
double s5069_required_snr_db(unsigned wn);
// The rate adaptation ladder at one bandwidth and interleaver (US, S or L): WN1..WN12
// (no WN4 at 9 and 18 kHz), most robust first, thresholds s5069_required_snr_db.
// std::invalid_argument for M (Table C-6 has no code for it) or a bandwidth Appendix D
// lacks.
std::vector<rate_policy_entry> s5069_rate_table(unsigned bw_khz,
                                                phy::m110d_interleaver il);
std::set<modem_mode> s5069_supported_modes(unsigned bw_khz, phy::m110d_interleaver il);

} // namespace dl
} // namespace hfstack
} // namespace gr

#endif
