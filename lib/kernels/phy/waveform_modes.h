/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

/* Every mode the modem blocks (s4539_tx, s4539_rx) send and receive, by name: STANAG
 * 4539's (s4539_modes.h: "2400S", "9600VL", "12800U") and STANAG 5069's at every
 * bandwidth of Table D-I (MIL-STD-188-110D Appendix D, m110d_timing.h: "WN8/3kHz/L",
 * "WN12/48kHz/US", letters in any case). Both families share the modulator (2400 Bd on
 * an 1800 Hz carrier at 3 kHz; 800 Bd per kHz on 300 Hz + BW / 2 above) and the
 * receiver's front end, so one transmitter and one receiver block take either; a
 * sample rate too low for a mode's bandwidth is refused (waveform_sample_rate_problem).
 *
 * The Appendix D readings of the constants the spec tags `?` (m110d_readings) and the
 * transmitter's constraint length are given as text, NAME=VALUE tokens separated by
 * spaces or commas: the four readings as m110d_set_reading takes them
 * (scrambler=a|b tail_biting=full_register|block_start pn_alignment=per_symbol|continuous
 * wid_parity=checksum|caption_d2_zero), constraint_length=7|9 (transmitter), and for
 * the receiver preamble=find|configured (find the PN alignment and WID parity from the
 * signal, m110d_receiver_config::find_preamble_readings),
 * frequency_loop=first_order|second_order (follow_frequency_rate: swept offsets) and
 * scrambler=auto, tail_biting=auto (the receiver tries both readings: find_scrambler,
 * find_tail_biting). */
#ifndef HFSTACK_KERNELS_PHY_WAVEFORM_MODES_H
#define HFSTACK_KERNELS_PHY_WAVEFORM_MODES_H

#include "m110d_receiver.h"
#include "m110d_timing.h"
#include "m110d_transmitter.h"
#include "s4539_modes.h"
#include "transmission_time.h"

#include <complex>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace gr {
namespace hfstack {
namespace phy {

// A mode of either standard, as the blocks name it.
struct waveform_mode {
    std::string name;      // "2400S", "WN8/3kHz/L" (canonical spelling)
    unsigned user_bps = 0; // nominal user rate
    std::string
        interleaver; // the blocks' word: "short", "long", "ultra_short", "medium", ...
    std::optional<s4539_mode> s4539;
    std::optional<m110d_mode> s5069;
};

// The mode's bandwidth (3 for STANAG 4539), symbol rate (2400 Bd for STANAG 4539) and
// sub-carrier of real samples (1800 Hz; 300 Hz + BW / 2 for STANAG 5069).
unsigned waveform_bandwidth_khz(const waveform_mode& mode);
double waveform_symbol_rate(const waveform_mode& mode);
double waveform_carrier_hz(const waveform_mode& mode);
// Why samples at `sample_rate` cannot carry the mode ("" when they can): the band its
// root-raised-cosine pulse occupies must fit, (1 + rolloff) symbol rates for complex
// samples, twice the sub-carrier plus that for real ones (RRC 0.35: 3240 Hz complex or
// 6840 Hz real at 3 kHz; 51840 Hz complex at 48 kHz), and for real samples the band
// must stay above 0 Hz on the sub-carrier (App D's, 300 Hz + BW / 2, leaves room for
// 1.25 symbol rates: RRC 0.35 up to 6 kHz, 0.25 at every bandwidth). The message names
// the mode, its bandwidth and the least rate or the fold.
std::string waveform_sample_rate_problem(const waveform_mode& mode,
                                         double sample_rate,
                                         bool complex_samples,
                                         double rolloff = 0.35);

// nullopt for a name that is neither (case of the letters ignored).
std::optional<waveform_mode> waveform_mode_by_name(const std::string& name);
// Why `name` is no mode of the modem blocks ("" when it is one): s4539_mode_problem's
// reason for a STANAG 4539 name, else what the names of both standards look like.
std::string waveform_mode_problem(const std::string& name);
// The interleaver word of an Appendix D interleaver ("ultra_short", "short", "medium",
// "long"), as s4539_tx / s4539_rx metadata name it.
std::string m110d_interleaver_word(m110d_interleaver il);
// Every mode of the blocks: STANAG 4539's (s4539_mode_names without the zero
// interleaver), then STANAG 5069's by bandwidth, WN and interleaver.
std::vector<std::string> waveform_mode_names();
// Air-time shape of any mode the simulator models (every STANAG 4539 name, the zero
// interleaver included, and every STANAG 5069 one, 6-48 kHz included); nullopt else.
std::optional<waveform_timing> waveform_timing_by_name(const std::string& name);

// One transmission's channel symbols as constellation points (psk_modulator shapes
// them at waveform_symbol_rate); `s5069` applies to STANAG 5069 modes, and its
// scrambler and tail-biting readings to STANAG 4539's App C modes too.
std::vector<std::complex<float>>
waveform_transmit_points(const waveform_mode& mode,
                         const uint8_t* bytes,
                         size_t n,
                         const m110d_transmit_options& s5069 = {});

// Settings text (see above) onto transmitter options; "" or why not (the options then
// unchanged). preamble= is refused here (a receiver's setting).
std::string parse_m110d_transmit_settings(const std::string& text,
                                          m110d_transmit_options& options);
// Settings text onto a receiver's readings, find_preamble_readings (preamble=find),
// find_scrambler (scrambler=auto), find_tail_biting (tail_biting=auto) and
// follow_frequency_rate (frequency_loop=second_order) and the bandwidth listened on
// (bandwidth_khz=3..48); "" or why not (the config then unchanged). constraint_length=
// is refused (the receiver reads it from the WID).
std::string parse_m110d_receive_settings(const std::string& text,
                                         m110d_receiver_config& config);

} // namespace phy
} // namespace hfstack
} // namespace gr

#endif
