/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

/* STANAG 4539 high-rate receiver (MIL-STD-188-110B/C Appendix C, 3200-9600 bps and
 * 12800 bps uncoded): complex baseband at 9600 Hz (from serial_tone_frontend) to
 * decoded bursts. The serial-tone machinery is the 110A receiver's (serial_tone_*.h,
 * channel_tracking_equaliser.h); constants and readings m110c_waveform.h.
 *
 * Stages:
 *   1. Search: a differential correlation (x[n] x*[n - 1 symbol] against the known
 *      symbol-to-symbol rotations of the 184-symbol synchronisation sequence), blind
 *      to the carrier offset, as a z-score against the noise (|C| / sqrt(sum |p|^2))
 *      with a threshold; its angle is the coarse offset (+-1200 Hz). Alongside, the
 *      same on the known head (MP+ and "2") and tail ("6" and MP-) of the 103-symbol
 *      section that ends the preamble and is re-inserted after every 72 frames: a
 *      receiver started late (or one that missed the sync) starts there (offsets up to
 *      +-300 Hz; the probes are Frank sequences, which match shifted by 4 symbols at
 *      600 Hz), reads D0..D2 on one complex gain, then measures the channel over the
 *      whole section and decodes the blocks after it; unless the section is the first
 *      re-inserted one of a transmission whose preamble was missed, its 72 mini-probes
 *      found where its frames put them (samples are kept 8.7 s behind the search):
 *      then the burst is decoded from that transmission's start.
 *   2. Preamble: the offset refined from the phase slope over the known symbols (8-,
 *      then 23-symbol chunks); the channel measured over the sync sequence, MP+ and
 *      the symbol after it (start_serial_tone_channel); D0, D1, D2 equalised and each
 *      read as the rotation of Barker-13 (of four) that its estimates match best: the
 *      rate and interleaver codes. Reserved or illegal codes send the search on. The
 *      mini-probes' signs carry the codes again (frames 8-13 of every 18): read on the
 *      first 18 frames, with every probe clear, a different legal mode there replaces
 *      the one read (a preamble in a fade) and the data are equalised again from
 *      their start.
 *   3. Data: every symbol equalised by the channel-tracking MMSE-DFE. The channel
 *      under each data frame is interpolated (Lagrange in time) from least-squares
 *      measurements on the 31-symbol probes around it, up to two before and two after
 *      (the second after only within an interleaver block, where the transmission
 *      surely goes on; so the receiver runs up to two frames behind the samples), and
 *      the tracker
 *      follows the decisions only for the difference: 16-64QAM on fading loses whole
 *      frames when the decisions alone carry the channel between probes. Decisions
 *      are the nearest point the scrambled symbol may take; max-log LLRs scaled by the
 *      equaliser's error variance, or by the decisions' own error where that is
 *      larger (errors fed back); each interleaver block deinterleaved, depunctured and
 *      decoded (tail-biting Viterbi), then equalised again with the decoder's
 *      decisions (decoder_passes); the bits searched for the EOM. A frame whose
 *      decisions look wrong somewhere is first equalised again backward, from the probe
 *      after it (backward_frames; in the last decoder-aided pass too). Frequency loop and
 *      T/2 timing slips as in the 110A receiver.
 *   4. The burst ends at its EOM; when the signal is lost (13 dB weaker than at its
 *      preamble for a block whose probes no longer correlate with what was sent, or
 *      three such blocks); at a new preamble's sync sequence (searched for through
 *      the burst); or at max_burst_s; reported with mode, offset, SNR and whether the
 *      EOM was found. */
#ifndef HFSTACK_KERNELS_PHY_M110C_RECEIVER_H
#define HFSTACK_KERNELS_PHY_M110C_RECEIVER_H

#include "m110c_waveform.h"

#include <complex>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace gr {
namespace hfstack {
namespace phy {

struct m110c_receiver_config {
    double detection_threshold = 5.5; // z-score of the sync correlation
    unsigned max_delay_spread_symbols =
        13;                   // longest channel the equaliser spans (5.4 ms)
    double forgetting = 0.97; // channel tracker (see m110a_receiver_config)
    unsigned equaliser_solve_interval = 24; // symbols between MMSE-DFE solutions
    double decision_weight = 0.5;           // of a decided symbol in the tracker
    // N > 1: each interleaver block is equalised N - 1 times more, each time with the
    // decoder's decisions from the pass before in place of the equaliser's own (as in
    // the 110A receiver, which makes one such pass); 1: one pass. A third pass still
    // pays on fading (docs/modem-design.md, "The channel between the mini-probes").
    unsigned decoder_passes = 3;
    // 64QAM (9600 bps, 12800U) instead: solutions twice as often, one pass fewer, for
    // about the same work and fewer errors on fading (same section).
    unsigned qam64_solve_interval = 12;
    unsigned qam64_decoder_passes = 2;
    // true: the channel under each data frame is interpolated (Lagrange, in time) from
    // least-squares measurements on the mini-probes around it, two before and up to
    // two after; false: tracked from the decisions (as the 110A receiver does).
    bool interpolate_probes = true;
    // true: each data frame of a coded mode is also equalised backward, from the probe
    // after it, and each 32 symbols' LLRs taken from the direction whose decisions
    // erred less (a decision error in a fade feeds back through the rest of a frame);
    // in the last decoder-aided pass too, with the decoded symbols (else it could
    // decode worse than the pass before).
    bool backward_frames = true;
    // true: the equaliser's MMSE solution, error variance and whole-span LMS step take
    // the QAM data at their own mean power (0.78/0.65/0.58 of the probes'); false: at
    // the probes' (unit), which under-weighs the noise in fades and slows the path
    // watch (docs/modem-design.md, "QAM amplitude, SNR reference and bytes_bad").
    bool weigh_data_power = true;
    // A decoded block whose reliability (m110c_block_decoder::reliability(): minus the
    // natural log of its expected wrong bits, at most 0 where the decoder's paths do
    // not close round it) is under this makes the burst's bytes_bad (a tail-biting
    // block has no check to know it decoded right). Miss and false-alarm rates near
    // threshold: docs/modem-design.md. -infinity flags none.
    double reliability_threshold = 1.0;
    bool msb_first = false;    // byte bit order (as the transmitter's)
    double max_burst_s = 3600; // a burst longer than this is cut
    m110c_readings readings;   // scrambler orientation, tail-biting phase
    // true (the default): the tail-biting phase is found from the burst, as the App D
    // receiver finds it (m110d_receiver_config::find_tail_biting: the EOM on a byte
    // boundary with zeros after it settles it, kept for the next burst; blocks handed
    // on before it go under the phase in use); false: readings.tail_biting only.
    bool find_tail_biting = true;
    // true (the default): the data scrambler's reading is found too, as the App D
    // receiver finds it (m110d_receiver_config::find_scrambler: the first block decoded
    // under the reading in use and, unless it fits it surely, the burst read again from
    // its preamble under the other, the reading whose re-coded bits disagree less with
    // the LLRs kept, and kept for the next burst; samples held meanwhile); false:
    // readings.scrambler only. 12800U, uncoded, is taken under the reading in use.
    bool find_scrambler = true;
    // Hand on the user bytes each interleaver block completes as soon as it is decoded
    // (pieces with `continues`), once the mini-probes have confirmed the mode; the
    // burst's last entry has the rest. False: one entry per burst.
    bool deliver_per_block = false;
};

struct m110c_burst {
    std::string mode;          // "9600S", "3200US", "12800U", ...
    uint64_t start_sample = 0; // 9600 Hz baseband sample of the first sync symbol
    double frequency_offset_hz = 0;
    double snr_db = 0; // mean signal power over noise (on the known symbols), 3 kHz
    double snr_db_recent = 0;   // the same over its last 20 s (burst_snr.h)
    std::vector<uint8_t> bytes; // user bytes (before the EOM)
    bool eom = false;           // false: the burst was cut; bytes may be bad
    // Cut, or a block decoded on too little evidence (reliability_threshold): some
    // bytes are probably wrong.
    bool bytes_bad = false;
    size_t unreliable_blocks = 0;
    double least_reliability = 0; // of the burst's blocks (m110c_block_decoder)
    // A piece (deliver_per_block): more bytes of this burst follow; eom not yet known,
    // bytes_bad and the reliabilities as of the blocks so far.
    bool continues = false;
    // The readings of the `?` constants the burst was taken under, found or told, as
    // NAME=VALUE words m110d_set_reading takes ("scrambler=a
    // tail_biting=first_pair_bit_7"; 12800U has no phase; App D adds pn_alignment= and
    // wid_parity=, WN0 leaves scrambler= out). Of a piece: as far as its blocks have
    // told.
    std::string readings;
};

class m110c_receiver
{
public:
    static constexpr unsigned samples_per_symbol = 4; // 9600 Hz at 2400 Bd

    // Throws std::invalid_argument naming a bad forgetting, decision_weight,
    // equaliser_solve_interval, decoder_passes or their 64QAM counterparts.
    explicit m110c_receiver(const m110c_receiver_config& config = {});
    ~m110c_receiver();
    m110c_receiver(const m110c_receiver&) = delete;
    m110c_receiver& operator=(const m110c_receiver&) = delete;

    // Feeds n baseband samples; bursts that end here are appended to `done`.
    void process(const std::complex<float>* x, size_t n, std::vector<m110c_burst>& done);
    // True from a detection until its burst ends.
    bool carrier_detected() const;
    uint64_t samples() const;
    // From now on each data symbol is appended to *symbols as the equaliser gives it
    // (first pass, forward; PSK descrambled onto the mode's set, QAM as received: its
    // scrambler keeps the constellation); probes, sections and preamble are left out.
    // A burst whose mode is corrected from the mini-probes repeats its first frames.
    // nullptr stops it. For displays: the caller empties the vector.
    void tap_symbols(std::vector<std::complex<float>>* symbols);
    // How many of the last symbols tapped may still be taken back (the burst's first
    // block, while its scrambler reading is judged, is equalised again under the other
    // reading and tapped again): a caller that empties the vector leaves these in it.
    size_t tapped_unsettled() const;

private:
    struct state;
    std::unique_ptr<state> d;
};

} // namespace phy
} // namespace hfstack
} // namespace gr

#endif
