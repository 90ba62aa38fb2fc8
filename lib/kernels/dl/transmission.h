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

#include <cstdint>
#include <vector>

namespace gr {
namespace hfstack {
namespace dl {

constexpr double max_eot_seconds = 127.5; // EOT 255 half-seconds
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
size_t dpdus_that_fit(const std::vector<size_t>& encoded_sizes,
                      const phy::waveform_timing& phy,
                      double max_seconds = default_max_transmission_s);

// The D_PDUs of one transmission as it is built, within its longest air time: whether
// more fits, the payload room left after some header bytes, and the frames so far.
class transmission_budget
{
public:
    // Throws std::invalid_argument when max_s is not a positive number of seconds.
    transmission_budget(const phy::waveform_timing& phy, double max_s, uint32_t source);

    // `more` bytes after those already in keep the burst within max_s.
    bool fits(size_t more) const;
    // Appends `d` with our address as its source if it fits; else adds nothing.
    bool add(dpdu d);
    // Payload bytes that still fit, after `overhead` bytes of headers.
    size_t room(size_t overhead) const;

    const phy::waveform_timing& phy() const { return d_phy; }
    double max_s() const { return d_max_s; }
    size_t bytes() const { return d_bytes; }
    // In order; the caller may still stamp fields (EOW, EOT) that keep their sizes.
    std::vector<dpdu>& frames() { return d_frames; }
    const std::vector<dpdu>& frames() const { return d_frames; }

private:
    phy::waveform_timing d_phy;
    double d_max_s;
    uint32_t d_source;
    std::vector<dpdu> d_frames;
    size_t d_bytes = 0;
};

} // namespace dl
} // namespace hfstack
} // namespace gr

#endif
