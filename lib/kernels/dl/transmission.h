/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

/* Transmission timing of the data transfer sublayer (STANAG 5066 Annex C): how long a
 * burst occupies the air, the EOT field of each D_PDU in it, and how many D_PDUs fit
 * in the maximum transmission length. The PHY is described by the waveform definitions
 * of the PHY kernels (phy::waveform_timing). */
#ifndef HFSTACK_KERNELS_DL_TRANSMISSION_H
#define HFSTACK_KERNELS_DL_TRANSMISSION_H

#include "dpdu.h"
#include "phy/transmission_time.h"

#include <vector>

namespace gr {
namespace hfstack {
namespace dl {

constexpr double max_eot_seconds = 127.5;           // EOT 255 half-seconds
constexpr double default_max_transmission_s = 127.5;

// Seconds on air of a burst of `bytes` bytes, preamble to end.
double air_time(const phy::waveform_timing& phy, size_t bytes);

// EOT field for `seconds_left`: half-seconds rounded up, saturated at 255.
uint8_t eot_field(double seconds_left);

// Sets the EOT of every D_PDU of a burst sent back to back in this order: the time
// from the start of each D_PDU to the end of the transmission, so the values never
// increase along the burst. (Re-inserted preambles are not located, which can only
// make an EOT longer, never shorter, than the truth.)
void stamp_eot(std::vector<dpdu>& burst, const phy::waveform_timing& phy);

// How many of the leading D_PDUs (encoded sizes in order) fit in one transmission of
// at most max_seconds, preamble and tail included. At least one if any is given and
// the first fits at all; 0 if even the first does not.
size_t dpdus_that_fit(const std::vector<size_t>& encoded_sizes, const phy::waveform_timing& phy,
                      double max_seconds = default_max_transmission_s);

} // namespace dl
} // namespace hfstack
} // namespace gr

#endif
