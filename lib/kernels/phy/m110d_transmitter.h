/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

/* STANAG 5069 transmitter (MIL-STD-188-110D Appendix D), bytes to channel symbols:
 * the preamble, the mini-probe after it, then per interleaver block the coded,
 * interleaved bits as frames of U data symbols and K probe symbols (WN0: 32-chip Walsh
 * symbols), the optional EOT extension last. Constants and readings: m110d_waveform.h.
 * The symbol count agrees with m110d_transmission_time(); psk_modulator shapes the
 * points at the mode's symbol rate (m110d_modulator_config), as App C's are shaped. */
#ifndef HFSTACK_KERNELS_PHY_M110D_TRANSMITTER_H
#define HFSTACK_KERNELS_PHY_M110D_TRANSMITTER_H

#include "m110d_waveform.h"
#include "psk_modulator.h"

#include <complex>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace gr {
namespace hfstack {
namespace phy {

struct m110d_transmit_options {
    m110d_timing_options timing;    // preamble N and M, EOT extension
    unsigned constraint_length = 7; // 7 or 9, announced in the WID
    bool msb_first = false;         // bytes least significant bit first by default
    m110d_readings readings;
};

// What channel symbol k after the preamble is (the preamble's length depends on N and
// M, which a receiver reads from it): the mini-probe after the preamble (frame -1), or
// data symbol / probe symbol `position` of data frame `frame` (WN0: chip `position` of
// Walsh symbol `frame`, no probes). The EOT extension continues the last frame's probe
// (position K and on), which only the transmission's length tells apart from data.
enum class m110d_symbol_kind { probe, data };
struct m110d_symbol_role {
    m110d_symbol_kind kind;
    int64_t frame;
    unsigned position;
};
m110d_symbol_role m110d_role_after_preamble(const m110d_mode& mode, uint64_t k);
// The known point of a probe symbol (role.kind == probe) at the mode's K (not the EOT
// extension).
std::complex<float> m110d_probe_point(const m110d_mode& mode,
                                      const m110d_symbol_role& role);

// The user bits of a transmission: the bytes, the EOM, zeros to the end of the block.
std::vector<uint8_t> m110d_message_bits(const m110d_mode& mode,
                                        const uint8_t* bytes,
                                        size_t n,
                                        bool msb_first = false);
// The coded, interleaved bits of one transmission, block after block.
std::vector<uint8_t> m110d_channel_bits(const m110d_mode& mode,
                                        const uint8_t* bytes,
                                        size_t n,
                                        const m110d_transmit_options& options = {});

// The transmission as constellation points: preamble, PSK data and probes at amplitude
// 1, QAM data as the tables print them.
std::vector<std::complex<float>>
m110d_transmit_points(const m110d_mode& mode,
                      const uint8_t* bytes,
                      size_t n,
                      const m110d_transmit_options& options = {});

// The timing options a transmission with these options really has: the preamble's
// Walsh symbol length as the readings give it (m110d_preamble_options_under), so
// m110d_transmission_time(mode, n, m110d_timing_under(mode, o)) is the air time of
// m110d_transmit_points(mode, ..., n, o).
m110d_timing_options m110d_timing_under(const m110d_mode& mode,
                                        const m110d_transmit_options& options);

// The modem's complex baseband rate at a bandwidth: 4 samples per symbol (3200 Hz per
// kHz: 9600 Hz at 3 kHz, as for App C, 153.6 kHz at 48 kHz). Every bandwidth's receiver
// runs at it (its T/2 equaliser and its sample grid are the 3 kHz receiver's, in
// symbols); the modulator writes any rational multiple of the symbol rate directly
// (psk_modulator), and a radio's other rate is resampled to it on reception. Throws
// std::invalid_argument for a bandwidth Appendix D lacks.
double m110d_sample_rate(unsigned bw_khz);
constexpr unsigned m110d_samples_per_symbol = 4;

// The modulator settings of a mode: its symbol rate (800 Bd per kHz) and sub-carrier
// (300 Hz + BW / 2, real output only), at `sample_rate` (default: m110d_sample_rate).
psk_modulator_config m110d_modulator_config(const m110d_mode& mode,
                                            double sample_rate = 0);

} // namespace phy
} // namespace hfstack
} // namespace gr

#endif
