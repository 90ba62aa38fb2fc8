/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

/* MIL-STD-188-110A/B serial-tone receiver: complex baseband at 9600 Hz (from
 * serial_tone_frontend) to decoded bursts.
 *
 * Stages:
 *   1. Search: the first 288 symbols of every preamble segment are the same for every
 *      mode. A differential correlation against them (z[n] z*[n - 1 symbol] against the
 *      known symbol-to-symbol rotations) does not care about the carrier offset; its
 *      sums over up to three consecutive segments are added coherently (their phase is
 *      the offset's rotation per symbol, the same in each) and compared, as a z-score
 *      against the noise (|C| / sqrt(sum |p|^2)), with a threshold (5.5 by default: on
 *      noise alone about one false start in 10^7 s). The angle of the sum gives the
 *      coarse offset (+-1200 Hz range).
 *   2. Preamble: a fine offset from the phase slope over the known symbols (8-, then
 *      32-symbol chunks); D1, D2 and the count C1 C2 C3 by 8-ary Walsh correlation on
 *      every path position (powers combined); the segment after the detected one is
 *      read too and the mode and count chosen that explain both; an unknown D1/D2 or a
 *      count out of range drops the detection and the search goes on (keeping the
 *      correlation history, so the next segment adds up with this one).
 *   3. Data: the channel is measured over the detected segment (least squares over a
 *      wide span; the symbol timing is then placed at its first path and the
 *      equaliser made as long as its delay spread), then tracked symbol by symbol and
 *      equalised by an MMSE decision feedback equaliser solved from it
 *      (channel_tracking_equaliser.h), trained on every known symbol (the rest of the
 *      preamble, then the probes) and decision-directed on data symbols. Soft
 *      demapping uses the equaliser's own error variance, so LLRs shrink in fades. The
 *      75 bps mode despreads each Walsh symbol on every path position and combines the
 *      powers (no channel phase needed), then tracks the channel on the decided chips.
 *      Deinterleaving, repetition combining, streaming Viterbi, and the bit stream
 *      searched for the EOM.
 *      Symbol timing follows a sample-rate offset: when the channel's long-term path
 *      profile matches its start better shifted by T/2, the sample grid moves T/2. A
 *      first-order loop on the channel's common turn removes a residual carrier offset.
 *   4. The burst ends at the EOM; or cut when the signal is lost (13 dB weaker than
 *      at its preamble for an interleaver block whose probes no longer correlate with
 *      what was sent, or three such blocks), when a new preamble appears (the search
 *      keeps running during data), or at max_burst_s; it is reported with mode,
 *      offset, SNR and whether the EOM was found.
 * Bad input (noise, partial bursts, corrupt mode codes) only ever sends it back to
 * searching. */
#ifndef HFSTACK_KERNELS_PHY_M110A_RECEIVER_H
#define HFSTACK_KERNELS_PHY_M110A_RECEIVER_H

#include "conv_k7.h"
#include "m110a_waveform.h"

#include <complex>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace gr {
namespace hfstack {
namespace phy {

struct m110a_receiver_config {
    double detection_threshold = 5.5; // z-score of the preamble correlation
    unsigned max_delay_spread_symbols =
        13; // longest channel the equaliser spans (5.4 ms)
    // Channel tracker's forgetting (memory ~ 1 / (1 - it) symbols): 0.97 (14 ms)
    // follows 1 Hz fading; 0.99 lost bursts on F.1487 poor (docs/modem-design.md).
    double forgetting = 0.97;
    unsigned equaliser_solve_interval = 24; // symbols between MMSE-DFE solutions
    // Weight of a decided symbol in the channel tracker (known ones 1): 0.5 lets the
    // probes pull back a tracker that followed a fade's wrong decisions.
    double decision_weight = 0.5;
    // Most equalisation passes over an interleaver block. 2: the block is equalised
    // again with the decoder's decisions in place of the equaliser's own (about twice
    // the work); 1: one pass; 3 or more: again on the previous pass's decisions, but
    // only while they still change (a pass on the same decisions would repeat the last),
    // so the passes beyond the second cost little where the decoder is already right;
    // 4 repairs fading blocks 2 does not (docs/modem-design.md, "Where fading still
    // fails, and what comes next").
    unsigned decoder_passes = 4;
    // The decoder-aided passes' decisions in the channel tracker. true: from the
    // max-log BCJR's a posteriori LLRs of the coded bits, each symbol's mean point
    // (cancelled as past symbol, and regressed on) weighted by the probability that it
    // is as decided, so the symbols the decoder itself doubts, where a fade lost them,
    // pull the channel estimate little; false: every re-encoded Viterbi decision as
    // good as known. True errs less on fading with short interleavers
    // (docs/modem-design.md, "Where fading still fails, and what comes next").
    bool soft_decoder_feedback = true;
    bool msb_first = false;    // byte bit order (see m110a_transmitter.h)
    double max_burst_s = 3600; // a burst longer than this is cut
    // Hand on the user bytes each interleaver block completes as soon as it is decoded
    // (pieces with `continues`), as a streaming modem does; the burst's last entry has
    // the rest. False: one entry per burst.
    bool deliver_per_block = false;
    // 75 bps: how a Walsh symbol's candidates are scored. 0: despread on every path
    // position, powers combined (no channel phase: a tracker lagging 5 Hz fading cannot
    // turn the decisions); 1: coherently, the channel-matched chips on the tracked
    // channel against each candidate over their measured error power (noise, tracker
    // lag and interference, from the decided chips); 2: the two mixed, the coherent one
    // weighted walsh_coherent_weight. 2 with 0.2: half the errors on AWGN at -4 dB and no
    // row worse on fading (docs/modem-design.md); more weight hurt 75L on 5 ms / 5 Hz.
    unsigned walsh_metric = 2;
    double walsh_coherent_weight = 0.2;
};

struct m110a_burst {
    std::string mode;          // "2400S", ...
    uint64_t start_sample = 0; // 9600 Hz baseband sample of the detected segment
    double frequency_offset_hz = 0;
    double snr_db = 0;          // measured on the known symbols, in 3 kHz
    double snr_db_recent = 0;   // the same over its last 20 s (burst_snr.h)
    std::vector<uint8_t> bytes; // user bytes (before the EOM)
    bool eom = false;           // false: the burst was cut; bytes may be bad
    // A piece (deliver_per_block): more bytes of this burst follow; eom not yet known.
    bool continues = false;
};

class m110a_receiver
{
public:
    static constexpr unsigned samples_per_symbol = 4; // 9600 Hz at 2400 Bd

    // Throws std::invalid_argument naming a bad forgetting, decision_weight,
    // equaliser_solve_interval or decoder_passes.
    explicit m110a_receiver(const m110a_receiver_config& config = {});
    ~m110a_receiver();
    m110a_receiver(const m110a_receiver&) = delete;
    m110a_receiver& operator=(const m110a_receiver&) = delete;

    // Feeds n baseband samples; bursts that end here are appended to `done`.
    void process(const std::complex<float>* x, size_t n, std::vector<m110a_burst>& done);
    // True from a detection until its burst ends.
    bool carrier_detected() const;
    // Samples consumed so far.
    uint64_t samples() const;
    // Equalisation passes run after the first, over all interleaver blocks so far.
    uint64_t later_passes() const;
    // From now on each data symbol is appended to *symbols as the equaliser gives it
    // (first pass, descrambled: on the mode's constellation; 75 bps: the Walsh chips,
    // once their symbol is decided); probes and preamble are left out. nullptr stops
    // it. For displays: the caller empties the vector.
    void tap_symbols(std::vector<std::complex<float>>* symbols);
    // How many of the last symbols tapped may still be taken back (their blocks not
    // yet judged part of the burst; a lost burst's are): a caller that empties the
    // vector leaves these in it.
    size_t tapped_unsettled() const;

private:
    struct state;
    std::unique_ptr<state> d;
};

} // namespace phy
} // namespace hfstack
} // namespace gr

#endif
