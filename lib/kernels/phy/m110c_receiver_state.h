/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

/* The App C receiver's state, shared by its two parts: the preamble search and the
 * codes it reads (m110c_receiver.cc), and the data with their decoder-aided passes
 * (m110c_receiver_data.cc). Internal: only those files include it. */
#ifndef HFSTACK_KERNELS_PHY_M110C_RECEIVER_STATE_H
#define HFSTACK_KERNELS_PHY_M110C_RECEIVER_STATE_H

#include "m110c_receiver.h"

#include "burst_snr.h"
#include "channel_tracking_equaliser.h"
#include "differential_products.h"
#include "m110c_decoder.h"
#include "m110c_transmitter.h"
#include "m110d_waveform.h"
#include "serial_tone_anchors.h"
#include "serial_tone_block_pass.h"
#include "serial_tone_channel.h"
#include "serial_tone_presence.h"
#include "serial_tone_samples.h"
#include "serial_tone_stages.h"

#include <volk/volk.h>
#include <volk/volk_alloc.hh>

#include <complex>
#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <vector>

namespace gr {
namespace hfstack {
namespace phy {

// What the two parts share besides the state.
namespace m110c_rx {

using cf = std::complex<float>;
using cd = std::complex<double>;
using phase = serial_tone_stage;

constexpr double sample_rate = 9600.0;
constexpr unsigned sps = m110c_receiver::samples_per_symbol;
constexpr size_t history_symbols = 4096; // differential products kept behind the search
// The 103-symbol section (MP+ | 2 | D0 D1 D2 | 6 | MP-) ends the preamble and its last
// 72 symbols are sent again after every 72 frames, after a plus probe: a receiver
// started late finds it by its known head (MP+ and "2") and tail ("6" and MP-).
constexpr unsigned section_symbols = m110c_preamble_symbols - m110c_sync_symbols;
constexpr unsigned section_head = m110c_probe_symbols + 1; // known before D0
constexpr unsigned section_tail_from = section_head + 3 * m110c_d_field_symbols; // "6"
// Data symbols whose decision errors are weighed together against the equaliser's
// variance (a frame holds eight).
constexpr unsigned reliability_symbols = 32;
// A frame is equalised again backward when the mean squared error of some 32 of its
// decisions exceeds this share of the squared distance between nearest points
// (F.1487 poor, 9600L at 30 dB: a fifth of the frames; every frame cost 30 % of the
// speed for the same errors).
constexpr double backward_suspect_error = 0.1;
// The mini-probe's base sequence (the probe is it and its first 15 symbols again): a
// probe determines this many taps.
constexpr size_t probe_period = 16;

// The preamble symbols known before D0..D2 are read: sync, MP+ and the "2" after it.
constexpr unsigned known_lead = m110c_sync_symbols + section_head;

inline cf psk8(unsigned s) { return m110c_constellation(3)[s & 7]; }

} // namespace m110c_rx

struct m110c_receiver::state {
    using cf = m110c_rx::cf;
    using cd = m110c_rx::cd;
    using phase = m110c_rx::phase;
    static constexpr unsigned sps = m110c_rx::sps;

    m110c_receiver_config cfg;
    std::vector<cf>* symbol_tap = nullptr; // tap_symbols()
    serial_tone_samples input{ m110c_rx::sample_rate };

    // Search.
    differential_correlator sync_correlator; // the 184 sync symbols
    // The section's known head and tail: rotations and products.
    volk::vector<cf> conj_head_rotations, conj_tail_rotations;
    differential_products head_products{ m110c_rx::section_head - 1,
                                         m110c_rx::history_symbols };
    differential_products tail_products{ m110c_rx::section_symbols -
                                             m110c_rx::section_tail_from - 1,
                                         m110c_rx::history_symbols };
    bool peak_is_section = false;
    bool found_section = false; // the detection is a section, not the sync sequence
    uint64_t candidate = sps;
    correlation_peak peak;
    uint64_t found_at = 0;
    double found_hz = 0;
    // sections false: the sync sequence only (in a burst, its own re-inserted sections
    // would match).
    bool search(bool sections = true);
    void search_section(uint64_t n); // the section at sample n
    // In the data stage: a new preamble cuts the burst in progress.
    bool watch(std::vector<m110c_burst>& done);

    // Burst.
    phase stage = phase::search;
    uint64_t start = 0;  // sample of the first symbol received (sync, or section)
    uint64_t symbol = 0; // next symbol (from start) to equalise
    // Preamble symbols before `start` (184 when the burst was found by its section):
    // symbol k is symbol k + skipped of a transmission seen from its start.
    uint64_t skipped = 0;
    std::optional<m110c_mode> mode;
    std::vector<cf> preamble_known; // the preamble as points, D0..D2 once read
    std::vector<cd> d_estimates;    // D0..D2 symbols as equalised
    std::unique_ptr<channel_tracking_equaliser> equaliser;
    int64_t timing_shift = 0;
    uint64_t timing_checked = ~uint64_t(0); // symbol whose timing was last looked at
    std::vector<cd> window;
    double reference_power = 0; // input power per sample over the sync sequence
    serial_tone_presence presence;
    burst_snr report; // the burst's SNR report
    std::unique_ptr<m110c_demapper> demapper;
    std::unique_ptr<m110c_block_decoder> decoder;
    std::vector<uint8_t> reinserted;
    std::vector<float> block_llr;
    std::vector<uint32_t> fetch_order;
    // Decoder-aided further passes over each interleaver block (decoder_passes() > 1):
    // the equaliser as the block began, and the block's symbols as received.
    serial_tone_block_pass block_pass;
    int pending_slip = 0; // timing slip applied since the last symbol kept
    // last: the block's last pass (its suspect frames are equalised backward too).
    void second_pass(bool last);
    // Channel measurements on the known symbols around each data frame
    // (cfg.interpolate_probes): the probe before it, the one after and (within an
    // interleaver block) the one after the next frame, oldest first; kept from the
    // last four before the block on while the block may be passed again.
    serial_tone_probe_anchors anchors;
    const std::vector<cd>& channel_at(uint64_t s, int64_t shift)
    {
        return anchors.channel_at(s, shift, equaliser->window_samples());
    }
    bool anchors_for_frame(uint64_t s);
    bool measure_anchor(uint64_t first);
    void interpolate_channel(channel_tracking_equaliser& eq, uint64_t s, int64_t shift)
    {
        anchors.rebase(eq, s, shift); // the tracker follows the decisions for the rest
    }
    void keep_last_anchors() { anchors.keep_last(); }
    std::optional<cd> known_at(uint64_t k) const;
    // LLR reliability: when a segment's decisions err more than the equaliser's
    // variance says (errors fed back, a channel the estimate lags), its LLRs are scaled
    // down by the ratio.
    double segment_error = 0, segment_variance = 0;
    unsigned segment_symbols = 0;
    void weigh_decision(cd z, cd decision, double variance, size_t llr_end);
    // The frame just equalised (cfg.backward_frames): its first data symbol, the
    // sample grid it began on, and per 32 symbols the forward decisions' squared error
    // and the equaliser's variance.
    double nearest_points =
        0; // squared distance between the constellation's nearest points
    uint64_t frame_first = 0;
    int64_t frame_shift = 0;
    std::vector<double> forward_error, forward_variance;
    // The frame from burst symbol `first` (on sample grid `shift`) equalised backward,
    // its LLRs from block_llr[frame_llr] on replaced per 32 symbols where the backward
    // decisions erred less than forward_error says. labels: the frame's channel bits as
    // decoded (a decoder-aided pass: decisions as good as known), or nullptr (the
    // equaliser's own decisions).
    void equalise_frame_backward(uint64_t first,
                                 int64_t shift,
                                 double noise,
                                 size_t frame_llr,
                                 const uint8_t* labels = nullptr);
    bool frame_suspect() const
    {
        return *std::max_element(forward_error.begin(), forward_error.end()) >
               m110c_rx::backward_suspect_error * m110c_rx::reliability_symbols *
                   nearest_points;
    }
    // The mode read from D0..D2, checked against the codes the mini-probes' signs carry
    // (frames 8-13 of the first 18 after the preamble): a misread D field (a preamble
    // in a fade) is corrected by equalising the burst again from its data's start, as
    // it stood then. Each probe's sign is read relative to the probe before it: the
    // normalised correlation of their channel measurements, taken with the signs the
    // mode read says (negative where one of the two is the other sign).
    bool mode_checked = false;
    std::unique_ptr<channel_tracking_equaliser> data_start_equaliser;
    uint64_t data_start_symbol = 0;
    int64_t data_start_shift = 0;
    std::vector<cd> previous_anchor_taps;
    std::vector<double>
        probe_turns; // per frame 7..14 of the first group, that correlation
    std::optional<m110c_mode> corrected_mode;
    void note_probe_turn(uint64_t first, const std::vector<cd>& taps);
    void mark_data_start();
    void restart_data();
    // Forgets what the data stage has taken in (anchors, block state, bits).
    void clear_data_progress();
    std::vector<uint8_t> bits;
    static constexpr size_t no_eom = std::numeric_limits<size_t>::max();
    size_t eom_at = no_eom;
    size_t eom_searched = 0;
    // The readings the data are taken under: the configured ones, or (find_tail_biting)
    // the tail-biting phase the last burst settled.
    m110c_readings data_readings;
    // find_scrambler (as the App D receiver's): the burst's first block not judged yet
    // (its samples from the preamble on kept), the judge of the readings tried on it;
    // the symbols tapped since the data began (taken back when they are equalised
    // again). The burst is read again from its preamble, as the first
    // time (the frequency loop's corrections are in the samples derotated since: from
    // the data's start they would count twice).
    bool scrambler_open = false;
    bool scrambler_restart = false;
    bool scrambler_rerun = false;
    scrambler_reading_judge scrambler_judge;
    size_t tapped = 0;
    // The last symbols tapped whose blocks are not yet judged part of the burst:
    // kept back from the caller, taken back when the burst is lost.
    size_t held_symbols = 0;
    // False when the data are to be equalised again from their start under the other
    // scrambler reading.
    bool judge_scrambler();
    // The block decoded as it stands and coded again: its channel bits.
    std::vector<uint8_t> block_coded_again();
    // find_tail_biting: the burst's bits under the other phases, and where their EOM is.
    tail_biting_phase_search phase_search{ m110c_eom, m110c_eom_bits };
    void settle_tail_biting();
    size_t unreliable_blocks = 0;
    double least_reliability = std::numeric_limits<double>::infinity();
    // deliver_per_block: bytes handed on so far, and whether a block decoded since.
    user_byte_stream streamed;
    bool block_decoded = false;
    void hand_on_decoded(std::vector<m110c_burst>& done);
    // The burst's mode, start, offset, SNR and reliability as of now, without bytes.
    m110c_burst burst_so_far() const;

    explicit state(const m110c_receiver_config& c);

    bool preamble();
    bool read_section_codes();
    uint64_t quiet_since = 0; // sample where the last burst ended
    bool look_back(double hz);
    // known: the symbols sent from `start` on. The channel is measured on them, or on
    // `measured` sent from sample `measured_at` (the burst's paths, and the sample grid,
    // found where the signal is clear).
    void begin_burst(const std::vector<cf>& known,
                     const std::vector<cf>* measured = nullptr,
                     uint64_t measured_at = 0);
    bool data(std::vector<m110c_burst>& done);
    bool window_for(uint64_t k);
    void commit(cd z, cd sent, bool known_symbol);
    void read_codes();
    void prepare_mode();          // what the data stage needs of the mode just read
    void know_preamble_of_mode(); // preamble_known: the mode's, D0..D2 included
    bool qam64() const { return mode->bits_per_symbol >= 6; }
    // The data symbols' mean power as the equaliser weighs them (cfg.weigh_data_power).
    double data_power() const
    {
        return cfg.weigh_data_power ? m110c_constellation_power(mode->bits_per_symbol)
                                    : 1.0;
    }
    unsigned decoder_passes() const
    {
        return qam64() ? cfg.qam64_decoder_passes : cfg.decoder_passes;
    }
    void find_eom();
    void end_burst(bool eom, std::vector<m110c_burst>& done);
    void restart_search(uint64_t from);
    void trim();
};

} // namespace phy
} // namespace hfstack
} // namespace gr

#endif
