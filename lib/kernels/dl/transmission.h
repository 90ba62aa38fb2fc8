/* Transmission timing of the data transfer sublayer (STANAG 5066 Annex C): how long a
 * burst occupies the air, the EOT field of each D_PDU in it, and how many D_PDUs fit
 * in the maximum transmission length. The PHY is described by a linear timing model;
 * the waveform definitions of the PHY kernels supply its numbers per mode. */
#ifndef HFSTACK_KERNELS_DL_TRANSMISSION_H
#define HFSTACK_KERNELS_DL_TRANSMISSION_H

#include "dpdu.h"

#include <vector>

namespace gr {
namespace hfstack {
namespace dl {

// Air time of a burst = preamble_s + bytes * 8 / bit_rate + tail_s.
struct phy_timing {
    double preamble_s = 0.0;   // synchronisation preamble before the first data bit
    double bit_rate = 2400.0;  // user bits per second of the mode
    double tail_s = 0.0;       // end of message, interleaver flush
};

constexpr double max_eot_seconds = 127.5;           // EOT 255 half-seconds
constexpr double default_max_transmission_s = 127.5;

double air_time(const phy_timing& phy, size_t bytes);

// EOT field for `seconds_left`: half-seconds rounded up, saturated at 255.
uint8_t eot_field(double seconds_left);

// Sets the EOT of every D_PDU of a burst sent back to back in this order: the time
// from the start of each D_PDU to the end of the transmission, so the values never
// increase along the burst.
void stamp_eot(std::vector<dpdu>& burst, const phy_timing& phy);

// How many of the leading D_PDUs (encoded sizes in order) fit in one transmission of
// at most max_seconds, preamble and tail included. At least one if any is given and
// the first fits at all; 0 if even the first does not.
size_t dpdus_that_fit(const std::vector<size_t>& encoded_sizes, const phy_timing& phy,
                      double max_seconds = default_max_transmission_s);

} // namespace dl
} // namespace hfstack
} // namespace gr

#endif
