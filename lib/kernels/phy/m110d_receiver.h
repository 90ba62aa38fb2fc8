/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

/* STANAG 5069 receiver (MIL-STD-188-110D Appendix D) at any bandwidth of Table D-I
 * (3-48 kHz), WN0-WN13: complex baseband at 4 samples per symbol (m110d_sample_rate:
 * 9600 Hz at 3 kHz, from serial_tone_frontend as for App C, 2400 Bd on an 1800 Hz
 * carrier; 153.6 kHz at 48 kHz) to decoded bursts. The bandwidth is configured (the
 * WID does not carry it); the preamble's Walsh symbols, the search's known chips and
 * the super-frame comb scale with it (32 * BW / 3 chips a Walsh symbol), and every
 * offset in Hz is at its symbol rate; the rest is counted in symbols as at 3 kHz. The
 * stages below give 3 kHz's numbers. The serial-tone machinery is the App C receiver's
 * (serial_tone_*.h, channel_tracking_equaliser.h); constants and readings
 * m110d_waveform.h, the receive elements after the equaliser m110d_decoder.h.
 *
 * Stages:
 *   1. Search: a differential correlation (differential_correlator, blind to the
 *      carrier offset) against the 160 chips every preamble ends its known part with:
 *      the last Walsh symbol of the last super-frame's fixed section (dibit 3 whether M
 *      is 1 or more, PN[0..31] under either PN alignment at 3 kHz) and that super-frame's
 *      count field, whose count is 0. A z-score threshold (4.0); the count field of 0 is
 *      its PN four times over, so the correlation has side peaks 32, 64 and 96 chips
 *      either side of the true one: the largest within 98 chips is taken. Its angle is
 *      the coarse offset. Between bursts, with M > 1 super-frames, the sums of the
 *      fixed sections before (8 known Walsh symbols each, 576 chips apart) are added
 *      coherently (integrate_superframes; a z the comb carries counts from 5.0, and its
 *      peak is held a super-frame longer so the last super-frame's is taken). The TLC
 *      section is not used. Above 3 kHz the correlations are computed by FFT, many
 *      samples at once (fft_search; z near the threshold again by dot product). At 3
 *      kHz between bursts the known chips are also correlated coherently over a grid
 *      of offsets (coherent_search), its peak taken where the differential has none:
 *      a preamble of one super-frame in a fade; also on two paths together
 *      (coherent_two_paths), taken once its fields read on both paths' gains. A
 *      coherent peak up to 1.5 under its threshold is held until the data after it
 *      are in (confirm_weak_with_data, m110d_receiver_joint.cc) and taken where they
 *      carry a frame structure's known symbols, carried back before it they do not,
 *      and its fields stand out. WN0's data are also watched for between bursts
 *      (start_wn0_from_data, m110d_wn0_data_watch): where they stand out with no
 *      preamble found, the burst starts at the scrambler period with no Walsh symbols
 *      before it, if its first block decodes; the mini-probes of the other modes
 *      likewise (start_from_mini_probes, m110d_probe_data_watch).
 *   2. Preamble: the offset refined from the phase slope over the 160 chips (8-, then
 *      32-chip chunks); the channel measured on them (start_serial_tone_channel) and
 *      the MMSE-DFE started; the WID's five Walsh symbols equalised chip by chip (each
 *      chip decided as its PN point or the opposite: Walsh chips are 0 or 4), then the
 *      count and WID fields read (m110d_read_fields, under the configured PN alignment
 *      and WID parity reading, or with find_preamble_readings the ones that fit): WN,
 *      interleaver and constraint length. A count other than 0, a failed check bit, a
 *      reserved WN (14, 15) or a WN/interleaver pair App D lacks (WN0 US) is refused
 *      (refused_preambles()) and the search goes on (a count other than 0 read on the
 *      count chips alone once they are equalised, where nothing but the last
 *      super-frame's fields would be read: the same refusal, before the WID). A
 *      preamble the super-frame comb found takes its offset over the fixed sections of
 *      every super-frame it added, and its count (which super-frame was found) from all
 *      of them; count 0: the count and WID are read over them all where the last one's
 *      alone do not read; count c: the preamble is read again c super-frames on.
 *   3. Data (WN1-WN13): every symbol equalised by the channel-tracking MMSE-DFE, the
 *      tracker taking the mini-probes as known symbols and the data decisions (nearest
 *      point the scrambled symbol may take) with the decision weight. The channel under
 *      each data frame is interpolated (Lagrange in time) from least-squares
 *      measurements on the probes around it, up to two before and two after (the
 *      second after only within an interleaver block; serial_tone_probe_anchors, the
 *      App C receiver's), so the receiver runs up to two frames behind the samples,
 *      and the tracker follows the decisions only for the difference. Max-log LLRs
 *      (m110d_demapper) scaled by the equaliser's error variance, or by the decisions'
 *      own error where that is larger (per 32 symbols); each interleaver
 *      block deinterleaved, depunctured and decoded (m110d_block_decoder, tail-biting
 *      Viterbi for K = 7 or 9 as the WID says), then equalised again with the decoder's
 *      decisions (decoder_passes, serial_tone_block_pass), the bits searched for the EOM.
 *      WN0: the 32 chips of each Walsh symbol kept until the symbol is decided from
 *      all of them (wn0_symbol_metrics: despread on every tracked path, coherent as far
 *      as the tracked channel is good, energy-combining otherwise, as the 110A 75 bps
 *      receiver), then given to the tracker as known chips; each block read again
 *      once decoded, every symbol on the channel its decoded neighbours measure
 *      (wn0_decoder_pass). Frequency loop and T/2 timing slips as in the App C
 *      receiver (follow_serial_tone_channel; a second-order loop for swept offsets
 *      by option, follow_frequency_rate).
 *   4. The burst ends at its EOM; when the signal is lost (serial_tone_presence: per
 *      interleaver block, on the probes, or for WN0 on how decisively its Walsh symbols
 *      were read; at WN0 before a later block read as noise, searched again:
 *      wn0_end_at_foreign_block); at a new preamble (searched for through the burst);
 *      or at max_burst_s; reported with mode, offset, SNR and whether the EOM was
 *      found. A new preamble cuts a burst at z 5.5, or under that once its count and
 *      WID read as a preamble's (on one complex gain over its known chips) with
 *      correlations that stand out of the chips' power: fading data cross the
 *      search's threshold (a WN7/3kHz/L burst on the poor channel at 20 dB lost a
 *      block so), and data at 48 kHz now and then read as count 0 and a passing WID.
 * Suspect frames are equalised backward too (backward_frames, as the App C receiver).
 * By default the receiver finds, per burst, the preamble's PN alignment and WID parity
 * (find_preamble_readings), the data scrambler's reading (find_scrambler) and the
 * tail-biting phase (find_tail_biting), and reports them (m110c_burst::readings); a
 * reading named in the configuration forces it.
 * Each decoded block is judged as the App C receiver's are (reliability_threshold):
 * bytes_bad marks a burst cut or with a block decoded on too little evidence.
 * Above 3 kHz (data_equaliser) the data frames are equalised instead in the frequency
 * domain, a frame at a time, the probe before each its cyclic prefix (stage 3's
 * MMSE-DFE reads the preamble and WID; m110d_receiver_fde.cc).
 * Not (yet) here, which the App C receiver has: a late start on a missed preamble; nor
 * detection integrated over TLC blocks. */
#ifndef HFSTACK_KERNELS_PHY_M110D_RECEIVER_H
#define HFSTACK_KERNELS_PHY_M110D_RECEIVER_H

#include "m110c_receiver.h"
#include "m110d_waveform.h"

#include <complex>
#include <cstdint>
#include <memory>
#include <vector>

namespace gr {
namespace hfstack {
namespace phy {

// How the data symbols (WN1-WN13) are equalised (m110d_receiver_config::data_equaliser).
enum class m110d_data_equaliser {
    // By bandwidth: block_fde above 3 kHz, mmse_dfe at 3 kHz; above 3 kHz 256QAM (WN12)
    // through more than one path (as the preamble measures the channel) mmse_dfe.
    automatic,
    // The channel-tracking MMSE-DFE, symbol by symbol (the preamble always is).
    mmse_dfe,
    // Frame by frame in the frequency domain, the probe before each frame its cyclic
    // prefix (block_frequency_equaliser.h): any channel the probe's cyclic base spans,
    // measured afresh on the probes either side of every frame.
    block_fde,
};

struct m110d_receiver_config {
    // The bandwidth listened on (Table D-I: 3, 6, ..., 24, 30, 36, 42, 48 kHz; the WID
    // does not say it). The input is complex baseband at m110d_sample_rate(bandwidth):
    // 4 samples per symbol of 800 Bd per kHz. Every length below given in symbols is the
    // same number of symbols at every bandwidth (so a shorter time above 3 kHz).
    unsigned bandwidth_khz = 3;
    // z-score of the preamble correlation. Under the App C receiver's 5.5: equal static
    // paths share the differential correlation (three: z about 4.2 at high SNR, D-LXV's
    // 0/2/4.5 ms), and WN2 at its D-LXIV row needs it. Noise alone crosses 4.0 about
    // e^-16 of the time (600 s of noise: no detection; at 3.5, eight, refused by the
    // count and WID checks).
    double detection_threshold = 4.0;
    // true: above 3 kHz the search's correlations (the known chips' and the super-frame
    // comb's sections') are computed many samples at once by FFT (differential_correlator
    // with fft), their cost a few tens of operations a sample rather than the known
    // chips' number (2560 at 48 kHz); a z within fft_exact_margin (0.5) of the threshold
    // is computed again by dot product, so detections and their peaks are the dot
    // product's. The comb's section sums are the FFT's (to about 1e-6 of their size).
    // 3 kHz: dot products either way. false: dot products at every bandwidth.
    bool fft_search = true;
    // The longest channel the equaliser spans, in symbols (it reaches this far before
    // the first path the preamble shows and past the last); 0 (default): by bandwidth,
    // m110d_delay_spread_symbols.
    unsigned max_delay_spread_symbols = 0;
    double forgetting = 0.97;               // channel tracker (see m110c_receiver_config)
    unsigned equaliser_solve_interval = 24; // symbols between MMSE-DFE solutions
    // true (default): the equaliser's time constants are the ones above (and
    // qam64_solve_interval's, wn0_forgetting's) at 3 kHz's 2400 Bd, kept in seconds at
    // every bandwidth (fading is as fast in Hz at each, the symbol rate bandwidth / 3
    // times 2400 Bd): with s = bandwidth_khz / 3, solutions every s times as many
    // symbols, the tracker's memory s times as many symbols (forgetting 1 - (1 - f) / s)
    // and the whole-span LMS, tap choice and energy profile likewise
    // (channel_tracking_equaliser_config::time_scale), and the probes' whole-spread
    // measurement on every s-th probe. 3 kHz: s = 1, no change. false:
    // the same numbers in symbols at every bandwidth (a solve every 0.6 ms at 48 kHz).
    bool time_scaled_tracking = true;
    double decision_weight = 0.5; // of a decided symbol in the tracker
    // 64QAM and 256QAM (WN10-WN12): solutions this often, the feedback following the
    // tracked channel between them (as the App C receiver's 64QAM).
    unsigned qam64_solve_interval = 12;
    // N > 1 (WN1-WN13): each interleaver block is equalised N - 1 times more, each time
    // with the decoder's decisions from the pass before in place of the equaliser's own
    // (serial_tone_block_pass, as the App C receiver); 1: one pass.
    unsigned decoder_passes = 2;
    // true (WN1-WN13): the channel under each data symbol is interpolated (Lagrange, in
    // time) from least-squares measurements on the mini-probes around its frame, two
    // before and up to two after (serial_tone_probe_anchors, as the App C receiver), the
    // tracker following the decisions for the difference only, and LLRs of 32 symbols
    // whose decisions err more than the equaliser's variance says scaled down; false:
    // tracked from the decisions alone.
    bool interpolate_probes = true;
    // true (with interpolate_probes): a data frame whose decisions look wrong somewhere
    // (32 of them erring by a tenth of the nearest points' squared distance) is also
    // equalised backward, from the probe after it, each 32 symbols' LLRs taken from the
    // direction whose decisions erred less; in the last decoder-aided pass too, with
    // the decoded symbols (serial_tone_equalise_frame_backward, as the App C receiver).
    bool backward_frames = true;
    // Detection integrated over the preamble's super-frames: up to this many earlier
    // fixed sections (8 known Walsh symbols each, one super-frame apart) are added to the
    // search's differential correlation, coherently, the largest z of 0, 1, 2, ... kept.
    // D-LXIV's M = 20 preamble: WN1 at its row needs it (one super-frame's 160 chips
    // reach z 2.1 and 3.8 for WN0 and WN1 there). Costs a second correlation per sample.
    // Between bursts only: in a burst, data with mini-probes (the same every frame, and
    // frames divide a super-frame) add up over the comb too. 0: off; 31: every
    // super-frame a preamble can have.
    unsigned integrate_superframes = m110d_max_superframes - 1;
    // A second-order frequency loop (follow_serial_tone_channel with drift_hz): an offset
    // sweeping at a steady rate is followed without lag (D.6.5, +-75 Hz at 3.5 Hz/s:
    // WN10 at 24 dB lost every burst with the first-order loop on decisions alone between
    // probes, none with this one; with interpolate_probes either loop loses none),
    // but on the poor channel it costs errors (docs/modem-design.md, "Speed with the
    // STANAG 4539 receivers listening too, and the Doppler tests").
    // false (default): the App C receiver's first-order loop.
    bool follow_frequency_rate = false;
    // WN0: each Walsh symbol decided as a whole (the four patterns' log-likelihoods from
    // its 32 chips' windows despread on every tracked path, coherently with the tracked
    // channel as far as its estimate is good, by energy otherwise; wn0_symbol_metrics),
    // and its chips then given to the channel tracker as known symbols; false: each
    // chip decided as its Trinomial point or the opposite for the tracker and the
    // feedback, every 32 demapped together (a quarter of the chips wrong at WN0's AWGN
    // row).
    bool wn0_symbol_decisions = true;
    // WN0 (wn0_symbol_decisions): the channel tracker's forgetting once the WID says WN0
    // (its chips are all known after each symbol's decision: a longer memory than for
    // decided data is affordable, and at -6 dB per chip needed).
    double wn0_forgetting = 0.98;
    // WN0: the tracked taps' error assumed, beside the tracker's own (1 - forgetting of
    // the noise), as this share of their mean power (the channel moving since).
    double wn0_tap_drift = 0.05;
    // WN0 (with wn0_symbol_decisions): each interleaver block read again once decoded,
    // every Walsh symbol on the channel measured over the decoded chips of the symbols
    // either side of it (up to 3 each way, on the same sample grid; not its own), on the
    // positions the tracker follows, then decoded again (docs/modem-design.md, "WN0 at
    // its rows: Walsh symbols decided whole").
    bool wn0_decoder_pass = true;
    // WN0: a block after the burst's first, before any EOM, whose Walsh symbols read as
    // noise does (their match under 0.15: another transmission's about 0.1, a burst's
    // own 0.08-0.63 on F.1487 poor at -2 dB) ends the burst before it,
    // and the search goes over it again from its first chip: such a block is most often
    // the next transmission's preamble and data read under this burst's scrambler (the
    // EOM lost in errors), which the signal-loss test, waiting for three such blocks
    // (23 s at L), let the burst swallow. The cost: a long transmission's blocks after
    // one read as noise in a deep fade are lost with it. False: only the loss test.
    bool wn0_end_at_foreign_block = true;
    // WN0: a Walsh symbol whose log-likelihood leads the next pattern's by less than
    // this goes to the tracker as decided chips (decision_weight), not known ones.
    double wn0_sure_margin = 0;
    bool msb_first = false;    // byte bit order (as the transmitter's)
    double max_burst_s = 3600; // a burst longer than this is cut
    // The `?` readings: PN alignment and WID parity for the preamble, scrambler and
    // tail-biting start for the data (the transmitter's must match).
    m110d_readings readings;
    // true (the default; setting preamble=find): the preamble's PN alignment and WID
    // parity reading are found from the signal
    // (both alignments searched for, at twice the search's cost; the fields read under
    // both parities, the one whose checks pass with the larger correlation taken, the
    // configured one on a tie); false (preamble=configured, or pn_alignment= or
    // wid_parity= named): the configured ones only. The data's scrambler
    // and tail-biting readings: find_scrambler and find_tail_biting below.
    bool find_preamble_readings = true;
    // true (the default, setting scrambler=auto; scrambler=a|b forces one): the data
    // scrambler's reading is tried too. A
    // burst's first interleaver block (WN1-WN13) is decoded under the reading in use
    // (the configured one, then the last one kept), coded again and held against its
    // channel LLRs (the share of LLR weight the bits disagree with); the burst is
    // equalised again from its preamble under the other reading, and the reading that
    // disagreed less kept (and used first for the next burst). Once a burst has told
    // them apart clearly, a later burst tries the other only where its first block
    // disagrees more than its LLRs expect. Costs up to two more passes of the first
    // block, and holds the burst's samples until it is judged.
    bool find_scrambler = true;
    // true (the default, setting tail_biting=auto; a phase named forces it): the
    // tail-biting phase is found too. The three decode to the same bits rotated within
    // each block (by their first bits, 7, K - 1 and 0), so each block's bits are kept
    // under all three; an EOM on a byte boundary with zeros after it to its block's end
    // settles the phase (kept for the next burst). With K = 9, full_register and
    // block_start differ by a whole byte, and a burst ending a byte or more of fill
    // before its block's end reads either way (the phase in use stays, or the earlier
    // in tail_biting_starts); deliver_per_block hands on blocks before the EOM under
    // the phase in use.
    bool find_tail_biting = true;
    // true (setting k7_newest_bit=lsb): a K = 7 burst is decoded as coded with the
    // newest bit at the polynomials' least significant bit (conv_code_k7_newest_lsb, one
    // outside implementation's reading). Never tried unless told.
    bool k7_newest_bit_lsb = false;
    // A decoded block whose reliability (m110d_block_decoder::reliability(): minus the
    // natural log of its user bits expected wrong, at most 0 where the Viterbi's paths
    // do not close round it) is under this makes the burst's bytes_bad, as in the App
    // C receiver (a tail-biting block has no check to know it decoded right).
    // -infinity flags none and skips the MAP pass it costs.
    double reliability_threshold = 1.0;
    // Hand on the user bytes each interleaver block completes as soon as it is decoded
    // (pieces with `continues`); the burst's last entry has the rest. False: one entry
    // per burst.
    bool deliver_per_block = false;
    // WN1-WN13's data: block_fde measures the channel on the mini-probes in the
    // frequency domain over every delay the probe's cyclic base reaches (about 6.7 ms
    // at most bandwidths, far beyond the MMSE-DFE's span above 3 kHz), equalises each
    // frame with two FFTs, and makes decoder-aided passes by cancelling the decoded
    // symbols' interference (decoder_passes); the carrier's residual turn and the
    // paths' drift are followed from probe to probe. interpolate_probes,
    // backward_frames and follow_frequency_rate concern the MMSE-DFE only.
    m110d_data_equaliser data_equaliser = m110d_data_equaliser::automatic;
    // Threads the receiver may use (1 or 2; more counts as 2). With 2, each block's
    // MAP pass for its reliability runs beside its Viterbi decoding, the data symbols
    // of each block frequency-domain frame are demapped half on each, the search's two
    // correlators (known chips, super-frame sections) run side by side, and with the
    // block FDE each interleaver block is decoded on a thread of its own while the next
    // block's frames are equalised, what they feed back applied in one thread's order;
    // a first block whose scrambler reading is judged has its passes there while the
    // burst begins again under the other reading (docs/modem-design.md, "Two
    // threads"): the same bursts, bits, reliabilities, SNR and tapped symbols as with
    // 1, a burst's bytes at the first process() call after its last block's decoding
    // has finished (or complete_decoding).
    unsigned threads = 1;
    // 3 kHz, between bursts: the known chips also searched for coherently (8-chip
    // sections' sums combined over a grid of carrier offsets, +-150 Hz), a detection
    // the differential correlation misses taken (the z-score over the offsets tried,
    // its square less their log, from 0.5 over detection_threshold: noise alone starts
    // no more than without it). A preamble of one
    // super-frame (M = 1) in a fade: the differential correlation's products square
    // the noise and it falls under the threshold there (F.1487 poor, WN1 at 2 dB lost
    // about a third of its bursts). False: the differential correlation alone.
    bool coherent_search = true;
    // With coherent_search: two paths' coherent sums also combined (each offset's power
    // added at two timings 1-6 chips apart, as from two fading paths 0.4-2.5 ms apart),
    // a preamble both carry over the threshold taken where neither alone does (F.1487
    // poor: its two equal paths 2 ms apart in fades together). False: one path's alone.
    bool coherent_two_paths = true;
    // With coherent_search: a coherent peak up to 1.5 under its threshold (a preamble of
    // one super-frame deeper in a fade) is held, and taken once the data after it carry
    // the known symbols of one of the bandwidth's frame structures (mini-probes, or WN0's
    // scrambled Walsh symbols) far out of noise within 1.5 s (the fade passed): the
    // preamble's evidence and the data's together. Any detection in that time takes its
    // place. The WN is read among those of the frame structure found, the offset taken
    // from the data; the WN and K then checked on the first block's LLRs (each mode of
    // the frames and symbol set under K = 7 and 9 decoded, the best fit kept), and a
    // peak whose fields stood out less refused where none fits. The search runs up to
    // 1.5 s behind its input while one is held. False: such peaks are not taken.
    bool confirm_weak_with_data = true;
    // With confirm_weak_with_data: such a peak, and a WN0 start found from its data,
    // is taken only within this offset (Hz) of the carrier, D.6.4's acquisition
    // range; the coherent search itself reaches +-150 Hz, the WN0 data watch +-300
    // Hz. The data's mini-probes tell the offset only modulo the frame rate (25 Hz at
    // WN1), so a peak in noise beyond the range can take a burst's data at an alias
    // (F.1487 poor, WN1 at 2 dB, M = 1, channel seed 37: one at 125 Hz just past a
    // preamble the search had missed, its data read as WN2, two transmissions lost).
    // 150: the whole reach.
    double weak_max_offset_hz = 75;
    // With confirm_weak_with_data at 3 kHz: WN0's data found with no preamble peak at all
    // (a preamble of one super-frame deep in a fade): between bursts the products of
    // chips 4 apart are correlated with what the Trinomial scrambler makes of any Walsh
    // symbol (m110d_wn0_data_watch), and where they stand out, the periods before are
    // tried as the data's start and judged as a held peak's data are (3 s of them, no
    // earlier period matching), the WID read among WN0's and the burst refused where
    // its first block decodes under neither K. False: not done.
    bool start_wn0_from_data = true;
    // The same for the frame structures with mini-probes (WN1-WN13): between bursts the
    // products of symbols one apart are folded modulo each structure's frame and
    // correlated with its mini-probe's own turns (m110d_probe_data_watch); where they
    // stand out, the frames before are tried as the data's first probe and judged on
    // their probes (none in the frames before), the WID read among the structure's
    // modes, and each start that passed decoded in turn, the one whose first block fits
    // best kept. False: not done.
    bool start_from_mini_probes = true;
};

// As the App C receiver's: mode ("WN8/3kHz/L"), start sample (the first of the 160
// chips the search matches), offset, SNR (the signal's mean power over the noise on the
// known symbols, 3 kHz), bytes before the EOM, eom, bytes_bad (no EOM, or a block under
// reliability_threshold), unreliable_blocks and least_reliability (infinity before a
// block is decoded, or with the threshold at -infinity), continues (a piece,
// deliver_per_block; bytes_bad as of the blocks so far).
using m110d_burst = m110c_burst;

// The equaliser's default span at a bandwidth (m110d_receiver_config::
// max_delay_spread_symbols 0): the design delay spread, 2 ms (ITU-R F.1487 poor, D-LXIV's
// fading channel: two paths 2 ms apart; mid-latitude disturbed likewise), in symbols at
// the bandwidth's symbol rate, rounded up, plus the 8 symbols of pulse tail and timing
// margin the 3 kHz receiver's 13 held over its 4.8: 13 at 3 kHz (5.4 ms, as before), 18
// at 6, 23 at 9, 28 at 12, 47 at 24 and 85 at 48 kHz (1.8 ms of margin at 3 kHz, 0.17 ms
// at 48). With 13 at 12 kHz (1.35 ms) the second path was missed: WN6/12kHz/L at 16 dB
// on F.1487 poor, nearly half the bits wrong (docs/modem-design.md, "Receiver speed and
// the equaliser's span per bandwidth").
unsigned m110d_delay_spread_symbols(unsigned bandwidth_khz, double delay_spread_ms = 2.0);

class m110d_receiver
{
public:
    static constexpr unsigned samples_per_symbol = 4; // 9600 Hz at 2400 Bd (3 kHz)

    // Throws std::invalid_argument naming a bad bandwidth, forgetting,
    // decision_weight, solve interval or decoder_passes.
    explicit m110d_receiver(const m110d_receiver_config& config = {});
    ~m110d_receiver();
    m110d_receiver(const m110d_receiver&) = delete;
    m110d_receiver& operator=(const m110d_receiver&) = delete;

    // Feeds n baseband samples (non-finite ones taken as 0); bursts that end here are
    // appended to `done`.
    void process(const std::complex<float>* x, size_t n, std::vector<m110d_burst>& done);
    // threads > 1: waits for the blocks still decoding on the second thread and hands
    // on what they complete (as process() would once they are done; with one thread
    // nothing is waiting). For a bench timing the whole work, or at the input's end.
    void complete_decoding(std::vector<m110d_burst>& done);
    // True from a detection until its burst ends (or its preamble is refused).
    bool carrier_detected() const;
    uint64_t samples() const;
    // Preambles detected whose count or WID fields were refused (failed checks, a
    // reserved WN, a mode App D lacks).
    uint64_t refused_preambles() const;
    // From now on each data symbol is appended to *symbols as the equaliser gives it
    // (first pass; PSK descrambled onto the mode's set, QAM as received: its scrambler
    // keeps the constellation; WN0: each chip rotated back by its Trinomial point, so
    // +-1); probes and preamble are left out. nullptr stops it. For displays, as the
    // App C receiver's: the caller empties the vector.
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
