/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

/* Whether a serial-tone burst's signal is still there, judged block by block (an
 * interleaver block, or a probe cycle) by the serial-tone receivers: the signal is gone
 * when it is 13 dB weaker than at its preamble for a block whose known symbols no
 * longer match what was sent (a slow fade alone stays 13 dB down for blocks with the
 * probes read well; a fast one spoils a block's probes), or when they have not matched
 * for three blocks; where probes are scored (App C, App D), also over at least 6 and 9
 * probes (a block may be one frame). Known symbols "match" when their estimates
 * correlate with what was sent, normalised over the block, by at least 0.05: noise
 * alone gives about 1 / probes, a signal at an SINR of -6 dB still 0.2 (the estimates
 * are unbiased, so their error alone says little at low SNR); where the estimates come
 * from a channel fitted to the probe itself, the probes' prediction scores decide
 * instead (add_prediction_score). Also the known-symbol error power behind the burst's
 * SNR report. */
#ifndef HFSTACK_KERNELS_PHY_SERIAL_TONE_PRESENCE_H
#define HFSTACK_KERNELS_PHY_SERIAL_TONE_PRESENCE_H

#include <complex>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

namespace gr {
namespace hfstack {
namespace phy {

class serial_tone_presence
{
public:
    using cd = std::complex<double>;

    // A burst starts: input power per sample over its preamble.
    void start(double reference_power);
    // Mean power of a symbol's window of input samples.
    void add_window_power(double power);
    // A probe (a known symbol of the block): its estimate z and what was sent.
    void add_probe(cd z, cd sent);
    // A probe's samples scored against the channel measured before it
    // (known_run_prediction_score, App C and App D). Once a block has scores, they
    // decide whether its probes match (their mean at least 4, noise alone averaging 1):
    // the estimates there come from a channel interpolated through the probe's own
    // least squares, which fits noise to the known symbols (a block of noise alone
    // correlated 0.03-0.13, so the 0.05 test went on reading noise for 12-22 s).
    // nullopt (no score for the probe: the first, or one after a slip) adds nothing.
    void add_prediction_score(std::optional<double> score);
    // The block's probes so far: do they still match what was sent?
    bool probes_match() const;
    // The block is over: true when the signal is gone. `matched`: its probes matched
    // (probes_match(), or the caller's own test, e.g. 75 bps Walsh metrics).
    bool block_says_lost(bool matched);
    // Blocks so far whose probes matched.
    size_t matched_blocks() const { return d_matched_blocks; }
    // Error power on known symbols (moving average, on the scale of the unit-amplitude
    // known symbols), and as an SNR in 3 kHz for a signal whose mean power is
    // signal_power on that scale (1 for PSK; less for a QAM mode, whose peak points are
    // at the probes' amplitude: the channel's SNR is the mean power's).
    double noise() const { return d_noise; }
    double snr_db(double signal_power = 1.0) const;
    // Any known symbol (preamble, probe): updates noise().
    void add_known(cd z, cd sent);
    // The error power so far, measured by the caller over a run of known symbols (a
    // preamble too short for the moving average to forget its start).
    void seed_noise(double variance) { d_noise = variance; }
    // Instead, a model's error variance for a known symbol (75 bps: the matched filter's
    // output carries the pulse's intersymbol interference, which is not noise).
    void add_error_power(double variance);

private:
    double d_reference_power = 0;
    double d_block_power = 0;
    size_t d_block_symbols = 0;
    cd d_correlation;
    double d_estimate_power = 0;
    size_t d_known = 0;
    double d_prediction_scores = 0;
    size_t d_scored_probes = 0;
    // Scored probes in the blocks unmatched since the last match.
    size_t d_unmatched_probes = 0;
    unsigned d_unmatched_blocks = 0;
    size_t d_matched_blocks = 0;
    double d_noise = 1.0;
};

// The 32 bits from bits[at] on as a word, the first the MSB (an EOM is looked for so).
uint32_t bits_word(const std::vector<uint8_t>& bits, size_t at);
// The first `at` from `searched` on where the word_bits bits from bits[at] (each bit's
// lowest) read `word`, or SIZE_MAX; `searched` left one past it, or past the last
// start the bits hold (as a loop of bits_word from `searched` would leave it), in one
// sliding word rather than word_bits reads per start.
size_t find_bits_word(const std::vector<uint8_t>& bits,
                      size_t& searched,
                      uint32_t word,
                      unsigned word_bits = 32);

// User bits [first_bit, n_bits) to bytes (8 bits each, the first bit the LSB unless
// msb_first), a trailing partial byte dropped. first_bit is a multiple of 8.
std::vector<uint8_t> pack_user_bytes(const std::vector<uint8_t>& bits,
                                     size_t n_bits,
                                     bool msb_first,
                                     size_t first_bit = 0);

// A burst's user bytes handed on as the decoder releases them (a streaming receiver):
// each take() returns the whole bytes before `safe_bits` not taken yet. The receiver
// passes as safe the bits no end of message can start in any more, and at the burst's
// end the EOM's position (or every bit, for a burst cut short).
class user_byte_stream
{
public:
    void restart() { d_taken_bits = 0; }
    std::vector<uint8_t>
    take(const std::vector<uint8_t>& bits, size_t safe_bits, bool msb_first);
    size_t taken_bytes() const { return d_taken_bits / 8; }

private:
    size_t d_taken_bits = 0;
};

} // namespace phy
} // namespace hfstack
} // namespace gr

#endif
