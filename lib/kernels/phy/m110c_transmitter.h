/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

/* STANAG 4539 high-rate transmitter (MIL-STD-188-110B/C Appendix C), bytes to channel
 * symbols: user bits, the 32-bit EOM, zeros to the end of the interleaver block; per
 * block a tail-biting K=7 code punctured to rate 3/4 and the load-increment
 * interleaver (12800 bps: neither); symbols mapped and scrambled per 256-symbol frame;
 * the 287-symbol preamble first, a 31-symbol mini-probe after every frame (its sign
 * from the probe schedule) and the 72-symbol section again after every 72 frames.
 * Constants and readings: m110c_waveform.h. The length agrees with
 * m110c_transmission_time(). */
#ifndef HFSTACK_KERNELS_PHY_M110C_TRANSMITTER_H
#define HFSTACK_KERNELS_PHY_M110C_TRANSMITTER_H

#include "m110c_waveform.h"

#include <complex>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace gr {
namespace hfstack {
namespace phy {

// What channel symbol k of a transmission is.
enum class m110c_symbol_kind { preamble, data, probe, reinserted };
struct m110c_symbol_role {
    m110c_symbol_kind kind;
    uint64_t frame;    // data frame (from 0) the symbol belongs to or follows
    unsigned position; // index within its preamble, frame data, probe or section
};
m110c_symbol_role m110c_role_of(uint64_t k);

// The coded, interleaved bits of one transmission, block after block (12800 bps: the
// user bits, EOM and fill).
std::vector<uint8_t> m110c_channel_bits(const m110c_mode& mode,
                                        const uint8_t* bytes,
                                        size_t n,
                                        bool msb_first = false,
                                        const m110c_readings& readings = {});

// One interleaver block's channel bits from its user bits (m110c_interleaver_bits(mode)
// * 3 / 4 of them): tail-biting code, puncturing, interleaving.
std::vector<uint8_t> m110c_block_channel_bits(const m110c_mode& mode,
                                              const uint8_t* user_bits,
                                              const std::vector<uint32_t>& fetch_order,
                                              const m110c_readings& readings = {});

// The transmission as constellation points: PSK symbols on the unit circle, QAM data
// points as the tables print them, outer points at amplitude 1 (every mode's peak is
// the probes'; 16/32/64QAM frames' mean power 0.81/0.69/0.63 of it, m110c_frame_power).
std::vector<std::complex<float>>
m110c_transmit_points(const m110c_mode& mode,
                      const uint8_t* bytes,
                      size_t n,
                      bool msb_first = false,
                      const m110c_readings& readings = {});

} // namespace phy
} // namespace hfstack
} // namespace gr

#endif
