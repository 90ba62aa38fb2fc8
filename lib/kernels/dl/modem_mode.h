/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

/* Modem modes as STANAG 5066 Edition 3 Annex C codes them: a Table C-5 data rate code
 * and a Table C-6 interleaving code, the modem's names for them, and their order of
 * robustness. */
#ifndef HFSTACK_KERNELS_DL_MODEM_MODE_H
#define HFSTACK_KERNELS_DL_MODEM_MODE_H

#include <cstdint>
#include <optional>
#include <set>
#include <string>

namespace gr {
namespace hfstack {
namespace dl {

// Table C-6 interleaving codes.
constexpr uint8_t interleaving_none = 0;
constexpr uint8_t interleaving_short = 1;
constexpr uint8_t interleaving_long = 2;
// STANAG 4539 App C interleavers Table C-6 has no code for: a node runs them as its
// fixed mode only, never announced in a data rate change (these values stay local).
constexpr uint8_t interleaving_ultra_short = 4, interleaving_very_short = 5,
                  interleaving_medium = 6, interleaving_very_long = 7;

// Table C-5 data rate codes 0..11.
constexpr uint8_t rate_75 = 0, rate_150 = 1, rate_300 = 2, rate_600 = 3, rate_1200 = 4,
                  rate_2400 = 5, rate_3200 = 6, rate_3600 = 7, rate_4800 = 8,
                  rate_6400 = 9, rate_8000 = 10, rate_9600 = 11;
// App C's uncoded 12800 bps in a code Table C-5 reserves: fixed mode only, as above.
constexpr uint8_t rate_12800 = 12;

struct modem_mode {
    uint8_t data_rate = rate_300;              // Table C-5 code
    uint8_t interleaving = interleaving_short; // Table C-6 code
    bool operator==(const modem_mode& o) const
    {
        return data_rate == o.data_rate && interleaving == o.interleaving;
    }
    bool operator!=(const modem_mode& o) const { return !(*this == o); }
    bool operator<(const modem_mode& o) const
    {
        return data_rate != o.data_rate ? data_rate < o.data_rate
                                        : interleaving < o.interleaving;
    }
};

// bps of a Table C-5 code (or rate_12800); 0 for reserved codes (13..15).
unsigned data_rate_bps(uint8_t code);
// Code for a bps value; throws std::invalid_argument for rates Table C-5 lacks
// (12800 gives rate_12800).
uint8_t data_rate_code(unsigned bps);
// True for data rate 0..11 and interleaving 0..2: a mode a data rate change can announce.
bool is_valid_mode(const modem_mode& m);
// True if a is strictly less robust than b: higher data rate, or the same data rate
// with a shorter interleaver (none < short < long in robustness).
bool less_robust(const modem_mode& a, const modem_mode& b);
// As the modem names the modes: "2400L", "300S", "4800U", "9600VS", "12800U".
std::string to_string(const modem_mode& m);
// The modem's name of an interleaving code ("none", "short", ..., "very_long"; "" for
// the reserved 3 and above 7) and the code of a name (nullopt for others).
const char* interleaver_name(uint8_t code);
std::optional<uint8_t> interleaving_code(const std::string& name);
// Annex C default for every new connection: 300 bps, short interleaving (C.6.4.1 (1)).
constexpr modem_mode initial_drc_mode{ rate_300, interleaving_short };
// Every STANAG 4539 / MIL-STD-188-110A serial-tone mode 75..9600 bps with short and
// long interleaving (3600 bps, a 4529 rate, excluded). Annex C Table C-9 note 1 asks
// DRC-capable nodes for at least 75-2400 bps with short and long interleaving.
std::set<modem_mode> default_supported_modes();

} // namespace dl
} // namespace hfstack
} // namespace gr

#endif
