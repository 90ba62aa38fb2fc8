/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

/* The start of a serial-tone burst's equalisation, shared by the serial-tone receivers:
 * the channel measured by least squares over known preamble symbols (+-(span + 3)
 * symbols at T/2, at least +-16, over three chunks summed in power: a fading channel
 * changes within a preamble), its paths found (taps over 5 % of the strongest and 6x the
 * median, the noise floor), the symbol timing placed at the first path, and a
 * channel-tracking equaliser sized to the delay spread (up to max_delay_spread_symbols,
 * reaching that far again on either side for paths faded out during the measurement)
 * started from the first chunk's estimate. */
#ifndef HFSTACK_KERNELS_PHY_SERIAL_TONE_CHANNEL_H
#define HFSTACK_KERNELS_PHY_SERIAL_TONE_CHANNEL_H

#include "channel_tracking_equaliser.h"
#include "serial_tone_presence.h"
#include "serial_tone_samples.h"

#include <complex>
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

namespace gr {
namespace hfstack {
namespace phy {

struct serial_tone_channel_start {
    std::unique_ptr<channel_tracking_equaliser> equaliser;
    // Symbol k (from the measured symbols' first) is taken around sample
    // symbol0 + k * samples_per_symbol + timing_shift.
    int64_t timing_shift = 0;
};

// known: the symbols sent from sample symbol0 on (4 samples per symbol, derotated
// samples of `input`); the equaliser starts with the first channel_symbols() of them
// as its past, so equalisation goes on at symbol channel_symbols(). tracking gives
// forgetting, solve interval, decision weight and feedback; its span is set here. When
// no chunk can be measured (samples missing), one path of gain fallback_gain at
// symbol0 is assumed, with noise fallback_noise.
serial_tone_channel_start
start_serial_tone_channel(const serial_tone_samples& input,
                          uint64_t symbol0,
                          const std::vector<std::complex<float>>& known,
                          unsigned max_delay_spread_symbols,
                          channel_tracking_equaliser_config tracking,
                          std::complex<double> fallback_gain,
                          double fallback_noise);

// Throws std::invalid_argument, as the equaliser would at a burst's start, for tracking
// settings it refuses: receivers check theirs when they are constructed.
void check_tracking_settings(double forgetting,
                             double decision_weight,
                             unsigned solve_interval);

// Fills `window` (equaliser.window_samples() values) with the derotated T/2 samples the
// equaliser reads for symbol k of a burst whose symbol 0 is at sample `start` (moved by
// timing_shift), and counts their mean power into `presence`; false while they are not
// all in.
bool serial_tone_window(const serial_tone_samples& input,
                        uint64_t start,
                        uint64_t k,
                        const channel_tracking_equaliser& equaliser,
                        int64_t timing_shift,
                        std::vector<std::complex<double>>& window,
                        serial_tone_presence& presence);

// Least squares over a run of known symbols (known[j] sent as burst symbol first + j,
// its samples taken as serial_tone_window takes them) for the symbol taps `measured`
// (ascending; the equaliser's tracked taps, say) of the equaliser's channel, on the
// observations all of whose symbols are known; `taps` (as equaliser.taps()) is the
// prior going in, weighted by `ridge` per tap (a run shorter than the span measured
// still gives an estimate), and the estimate coming out, zero off the taps measured.
// False while samples are missing.
bool measure_known_run(const serial_tone_samples& input,
                       uint64_t start,
                       int64_t timing_shift,
                       const channel_tracking_equaliser& equaliser,
                       const std::vector<size_t>& measured,
                       uint64_t first,
                       const std::vector<std::complex<double>>& known,
                       double ridge,
                       std::vector<std::complex<double>>& taps);

// How well a channel measured before a run of known symbols (taps as the equaliser's,
// zero outside [from_q, end_q)) predicts that run's samples (taken as
// measure_known_run takes them, on the observations all of whose symbols are known):
// |<y, prediction>|^2 / (|y|^2 |prediction|^2) times the observations. Nothing of the
// run went into the channel, so for noise alone the score is an exponential deviate of
// mean 1, while a signal at an SINR s scores about s / (1 + s) of the observations
// (less as the channel moved). nullopt while samples are missing or no observation has
// all its symbols known.
std::optional<double>
known_run_prediction_score(const serial_tone_samples& input,
                           uint64_t start,
                           int64_t timing_shift,
                           size_t precursor_symbols,
                           const std::vector<std::complex<double>>& taps,
                           size_t from_q,
                           size_t end_q,
                           uint64_t first,
                           const std::vector<std::complex<double>>& known);

// `length` symbols from sample `start` on (one sample each, 4 samples per symbol at
// `symbol_rate`: 9600 Hz for 2400 Bd), derotated by `hz` (phase 0 at start): a
// preamble's known run, to measure a residual offset on before the derotation is set.
std::vector<std::complex<float>> symbols_at_offset(const serial_tone_samples& input,
                                                   uint64_t start,
                                                   unsigned length,
                                                   double hz,
                                                   double symbol_rate = 2400.0);
// The turn from chunk to chunk of `chunk` symbols of y[k] conj(known[k]), over
// [from, to), summed into `turn` (a carrier offset's phase slope over known symbols).
void add_turns(const std::vector<std::complex<float>>& y,
               const std::vector<std::complex<float>>& known,
               size_t from,
               size_t to,
               unsigned chunk,
               std::complex<double>& turn);
// The offset (Hz, at `symbol_rate` Bd) that turns the known symbols' phase least from
// chunk to chunk.
double
slope_hz(const std::complex<double>& turn, unsigned chunk, double symbol_rate = 2400.0);

// Between symbols, every 48 (timing_check_symbols): a first-order loop adds 5 % of the
// channel's mean turn (Hz) to the carrier offset (fading turns it both ways, an offset
// one way), without a phase step, from the next sample not derotated yet at or after
// `next_sample`; and when the path profile has drifted T/2 the sample grid follows
// (timing_shift moves 2 samples). Returns the slip applied: -1, 0 or +1. The turn is
// per symbol at `symbol_rate` Bd (2400 for 3 kHz; App D's wider bandwidths pass theirs).
constexpr uint64_t timing_check_symbols = 48;
int follow_serial_tone_channel(serial_tone_samples& input,
                               channel_tracking_equaliser& equaliser,
                               uint64_t next_sample,
                               int64_t& timing_shift,
                               double symbol_rate = 2400.0);
// The same with a second-order frequency loop: 10 % of the turn at once, and
// `drift_hz`, the loop's estimate of how much the offset moves from one check to the
// next, integrating frequency_rate_gain of the turn (held to +-max_drift_hz, 5 Hz/s;
// start it at 0 for each burst). An offset sweeping at a steady rate (D.6.5: +-75 Hz at
// 3.5 Hz/s) is then followed without the first-order loop's lag (3.5 Hz/s x 0.4 s =
// 1.4 Hz, which 64QAM between the App D receiver's probes does not survive); on fading
// channels the wider loop follows the fading's turns too and costs errors (App D WN8 on
// the poor channel), so it is an option (m110d_receiver_config::follow_frequency_rate).
constexpr double second_order_loop_gain = 0.1;
constexpr double frequency_rate_gain = 0.0025; // (0.1 / 2)^2: critically damped
constexpr double max_drift_hz = 0.1;
int follow_serial_tone_channel(serial_tone_samples& input,
                               channel_tracking_equaliser& equaliser,
                               uint64_t next_sample,
                               int64_t& timing_shift,
                               double& drift_hz,
                               double symbol_rate = 2400.0);

} // namespace phy
} // namespace hfstack
} // namespace gr

#endif
