/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

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

#include <algorithm>
#include <cmath>
#include <iterator>
#include <limits>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>

namespace gr {
namespace hfstack {
namespace phy {

namespace {

using cf = std::complex<float>;
using cd = std::complex<double>;

constexpr double two_pi = 6.283185307179586476925286766559;
constexpr double sample_rate = 9600.0;
constexpr unsigned sps = m110c_receiver::samples_per_symbol;
constexpr size_t history_symbols = 4096; // differential products kept behind the search
constexpr size_t peak_window = 8;        // samples past a peak before it is taken
// The 103-symbol section (MP+ | 2 | D0 D1 D2 | 6 | MP-) ends the preamble and its last
// 72 symbols are sent again after every 72 frames, after a plus probe: a receiver
// started late finds it by its known head (MP+ and "2") and tail ("6" and MP-).
constexpr unsigned section_symbols = m110c_preamble_symbols - m110c_sync_symbols;
constexpr unsigned section_head = m110c_probe_symbols + 1;   // known before D0
constexpr unsigned section_tail_from = section_head + 3 * m110c_d_field_symbols; // "6"
// Each half's z-score must pass this too: a plus probe followed by data matches the
// head alone (its z reaches sqrt(31) = 5.6 at high SNR; noise alone passes 3.5 in one
// test of 2e5).
constexpr double section_half_threshold = 3.5;
// The probes are Frank sequences: shifted by 4 symbols they still match, turned by 90
// degrees a symbol (600 Hz); a section's detection implying more offset than this is
// such a shift.
constexpr double section_max_offset_hz = 300;
// Data symbols whose decision errors are weighed together against the equaliser's
// variance (a frame holds eight).
constexpr unsigned reliability_symbols = 32;
// A frame is equalised again backward when the mean squared error of some 32 of its
// decisions exceeds this share of the squared distance between nearest points
// (F.1487 poor, 9600L at 30 dB: a fifth of the frames; every frame cost 30 % of the
// speed for the same errors).
constexpr double backward_suspect_error = 0.1;
// The mode read from the preamble is checked on the probes' signs only when every
// probe's channel correlates with the one before it at least this much (either sign).
constexpr double mode_check_correlation = 0.5;
// The mini-probe's base sequence (the probe is it and its first 15 symbols again): a
// probe determines this many taps.
constexpr size_t probe_period = 16;
// From a transmission's first symbol to its first re-inserted section's head (the plus
// probe of frame 71): a section found with no burst in progress may be that one, its
// preamble missed (in a fade); the receiver keeps this much behind its search.
constexpr uint64_t first_section_head =
    m110c_preamble_symbols + (m110c_reinsert_period_frames - 1) * uint64_t(m110c_frame_symbols) + m110c_data_symbols;
// Mini-probes found where a missed preamble's frames would have them: the mean over the
// 72 of each probe's best match (|correlation|^2 over the received energy, within 6
// symbols of the timing) must reach this (noise or unrelated data: about 3.2; a probe
// in the clear: 31).
constexpr double look_back_evidence = 10.0;
constexpr int look_back_reach = 6; // symbols either side of the section's timing

// The preamble symbols known before D0..D2 are read: sync, MP+ and the "2" after it.
constexpr unsigned known_lead = m110c_sync_symbols + section_head;

cf psk8(unsigned s) { return m110c_constellation(3)[s & 7]; }

using phase = serial_tone_stage;

std::vector<cf> sync_points()
{
    std::vector<cf> points;
    for (uint8_t s : m110c_sync_sequence())
        points.push_back(psk8(s));
    return points;
}

} // namespace

struct m110c_receiver::state {
    m110c_receiver_config cfg;
    std::vector<cf>* symbol_tap = nullptr; // tap_symbols()
    serial_tone_samples input{ sample_rate };

    // Search.
    differential_correlator sync_correlator; // the 184 sync symbols
    // The section's known head and tail: rotations and products.
    volk::vector<cf> conj_head_rotations, conj_tail_rotations;
    differential_products head_products{ section_head - 1, history_symbols };
    differential_products tail_products{ section_symbols - section_tail_from - 1, history_symbols };
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
    // Decoder-aided further passes over each interleaver block (decoder_passes() > 1): the
    // equaliser as the block began, and the block's symbols as received.
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
    double nearest_points = 0; // squared distance between the constellation's nearest points
    uint64_t frame_first = 0;
    int64_t frame_shift = 0;
    std::vector<double> forward_error, forward_variance;
    // The frame from burst symbol `first` (on sample grid `shift`) equalised backward,
    // its LLRs from block_llr[frame_llr] on replaced per 32 symbols where the backward
    // decisions erred less than forward_error says. labels: the frame's channel bits as
    // decoded (a decoder-aided pass: decisions as good as known), or nullptr (the
    // equaliser's own decisions).
    void equalise_frame_backward(uint64_t first, int64_t shift, double noise, size_t frame_llr,
                                 const uint8_t* labels = nullptr);
    bool frame_suspect() const
    {
        return *std::max_element(forward_error.begin(), forward_error.end()) >
               backward_suspect_error * reliability_symbols * nearest_points;
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
    std::vector<double> probe_turns; // per frame 7..14 of the first group, that correlation
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

    explicit state(const m110c_receiver_config& c) : cfg(c), data_readings(c.readings), sync_correlator(sync_points(), history_symbols)
    {
        anchors.set_probe(m110c_probe_symbols, probe_period);
        const std::vector<uint8_t> p = m110c_preamble(*m110c_mode_for(3200, m110c_interleaver::short_));
        const auto rotation = [&](size_t k) {
            const size_t g = m110c_sync_symbols + k;
            return std::conj(psk8(p[g]) * std::conj(psk8(p[g - 1])));
        };
        for (size_t k = 1; k < section_head; ++k)
            conj_head_rotations.push_back(rotation(k));
        for (size_t k = section_tail_from + 1; k < section_symbols; ++k)
            conj_tail_rotations.push_back(rotation(k));
    }

    bool preamble();
    bool read_section_codes();
    uint64_t quiet_since = 0; // sample where the last burst ended
    bool look_back(double hz);
    // known: the symbols sent from `start` on. The channel is measured on them, or on
    // `measured` sent from sample `measured_at` (the burst's paths, and the sample grid,
    // found where the signal is clear).
    void begin_burst(const std::vector<cf>& known, const std::vector<cf>* measured = nullptr,
                     uint64_t measured_at = 0);
    bool data(std::vector<m110c_burst>& done);
    bool window_for(uint64_t k);
    void commit(cd z, cd sent, bool known_symbol);
    void read_codes();
    void prepare_mode(); // what the data stage needs of the mode just read
    void know_preamble_of_mode(); // preamble_known: the mode's, D0..D2 included
    bool qam64() const { return mode->bits_per_symbol >= 6; }
    // The data symbols' mean power as the equaliser weighs them (cfg.weigh_data_power).
    double data_power() const
    {
        return cfg.weigh_data_power ? m110c_constellation_power(mode->bits_per_symbol) : 1.0;
    }
    unsigned decoder_passes() const { return qam64() ? cfg.qam64_decoder_passes : cfg.decoder_passes; }
    void find_eom();
    void end_burst(bool eom, std::vector<m110c_burst>& done);
    void restart_search(uint64_t from);
    void trim();
};

m110c_receiver::m110c_receiver(const m110c_receiver_config& config)
{
    check_tracking_settings(config.forgetting, config.decision_weight, config.equaliser_solve_interval);
    check_tracking_settings(config.forgetting, config.decision_weight, config.qam64_solve_interval);
    if (config.decoder_passes == 0 || config.qam64_decoder_passes == 0)
        throw std::invalid_argument("m110c_receiver: decoder_passes must be at least 1");
    d.reset(new state(config));
}

m110c_receiver::~m110c_receiver() = default;

bool m110c_receiver::carrier_detected() const { return d->stage != phase::search; }

uint64_t m110c_receiver::samples() const { return d->input.total(); }

void m110c_receiver::tap_symbols(std::vector<cf>* symbols) { d->symbol_tap = symbols; }

void m110c_receiver::process(const cf* x, size_t n, std::vector<m110c_burst>& done)
{
    d->input.append(x, n);
    run_serial_tone_stages(*d, done);
}

void m110c_receiver::state::trim()
{
    uint64_t keep = stage == phase::search ? candidate : stage == phase::preamble ? start : start + symbol * sps;
    keep = std::min({ keep, candidate, input.total() });
    if (stage == phase::data && data_start_equaliser && !mode_checked)
        keep = std::min(keep, start + data_start_symbol * sps);
    if (stage == phase::data && scrambler_open) {
        const uint64_t back = (first_section_head + look_back_reach + m110c_probe_symbols) * sps;
        keep = std::min(keep, start > back ? start - back : 0);
    }
    // The block's last decoder-aided pass equalises its suspect frames backward again.
    if (stage == phase::data && block_pass.active() && cfg.backward_frames)
        keep = std::min(keep, start + block_pass.first_symbol() * sps);
    if (stage != phase::data) {
        const uint64_t back = (first_section_head + look_back_reach + m110c_probe_symbols) * sps;
        keep = std::max(keep > back ? keep - back : 0, std::min(keep, quiet_since));
    }
    // The equaliser's window reaches back up to 2 x 16 symbols of precursor and timing;
    // a frame is equalised again backward once its 256 data symbols are in.
    keep = keep > 320 * sps ? keep - 320 * sps : 0;
    input.release_before(keep);
}

void m110c_receiver::state::restart_search(uint64_t from) { restart_serial_tone_search(*this, from, sps); }

bool m110c_receiver::state::watch(std::vector<m110c_burst>& done)
{
    // Only past our own preamble (its sync would match).
    const uint64_t data_start = start + uint64_t(m110c_preamble_symbols - skipped) * sps;
    if (!watch_for_new_preamble(*this, data_start, done, [this] { return search(false); }))
        return false;
    found_section = false;
    return true;
}

void m110c_receiver::state::search_section(uint64_t n)
{
    // Head and tail each, and together.
    cf head, tail;
    volk_32fc_x2_dot_prod_32fc(&head, head_products.at(input, n + sps), conj_head_rotations.data(),
                               unsigned(conj_head_rotations.size()));
    volk_32fc_x2_dot_prod_32fc(&tail, tail_products.at(input, n + (section_tail_from + 1) * sps),
                               conj_tail_rotations.data(), unsigned(conj_tail_rotations.size()));
    const double eh = head_products.energy(n + sps);
    const double et = tail_products.energy(n + (section_tail_from + 1) * sps);
    if (eh > 0 && et > 0 && std::abs(head) >= section_half_threshold * std::sqrt(eh) &&
        std::abs(tail) >= section_half_threshold * std::sqrt(et)) {
        const double zs = std::abs(head + tail) / std::sqrt(eh + et);
        const double hz = std::arg(cd(head + tail)) / two_pi * 2400.0;
        if (std::abs(hz) <= section_max_offset_hz && peak.offer(zs, n, cd(head + tail), cfg.detection_threshold))
            peak_is_section = true;
    }
}

bool m110c_receiver::state::search(bool sections)
{
    const uint64_t span = uint64_t(m110c_sync_symbols) * sps;
    while (candidate + span < input.total()) {
        const uint64_t n = candidate++;
        cf dot;
        const double z = sync_correlator.z_at(input, n, dot);
        if (peak.offer(z, n, cd(dot), cfg.detection_threshold))
            peak_is_section = false;
        if (sections)
            search_section(n);
        if (peak.taken(n, peak_window)) {
            found_at = peak.at;
            found_hz = peak.offset_hz();
            found_section = peak_is_section;
            return true;
        }
    }
    return false;
}

bool m110c_receiver::state::preamble()
{
    // What follows the detection, and the channel's reach beyond it, must be in.
    const unsigned length = found_section ? section_symbols : m110c_preamble_symbols;
    if (start + uint64_t(length + 64) * sps >= input.total())
        return false;
    skipped = found_section ? m110c_sync_symbols : 0;
    const std::vector<uint8_t> generic = m110c_preamble(*m110c_mode_for(3200, m110c_interleaver::short_));
    preamble_known.clear();
    for (uint8_t s : generic)
        preamble_known.push_back(psk8(s));
    const std::vector<cf> known(preamble_known.begin() + long(skipped), preamble_known.end());
    // Fine offset: the phase slope over the known symbols (the sync sequence, or the
    // section's head and tail), 8-symbol chunks (+-150 Hz around the coarse angle, which
    // echoes of equal strength can pull tens of Hz off), then longer ones.
    double hz = found_hz;
    for (unsigned chunk : { 8u, found_section ? 16u : 23u }) {
        const std::vector<cf> y = symbols_at_offset(input, start, length, hz);
        cd turn;
        if (found_section) {
            add_turns(y, known, 0, section_head, chunk, turn);
            add_turns(y, known, section_tail_from, section_symbols, chunk, turn);
        } else {
            add_turns(y, known, 0, m110c_sync_symbols, chunk, turn);
        }
        hz += slope_hz(turn, chunk);
    }
    double power = 0;
    for (unsigned k = 0; k < length; ++k)
        power += std::norm(input.at(start + uint64_t(k) * sps));
    reference_power = power / length;
    input.start_derotation(start, hz);
    mode.reset();
    if (found_section) {
        // The codes first: the whole section is then known to measure the channel on.
        if (!read_section_codes()) {
            restart_search(start + sps);
            return true;
        }
        const uint64_t section_at = start;
        if (look_back(hz)) {
            const std::vector<cf> section(preamble_known.begin() + m110c_sync_symbols, preamble_known.end());
            begin_burst(preamble_known, &section, section_at);
            // Derotated afresh from the burst's start: the frequency loop's changes
            // apply only to samples not derotated yet, and those up to the section were.
            input.start_derotation(start, hz);
            return true;
        }
        begin_burst(std::vector<cf>(preamble_known.begin() + long(skipped), preamble_known.end()));
    } else {
        // Until D0..D2 are read, the preamble is known up to the "2" after MP+.
        begin_burst(std::vector<cf>(preamble_known.begin(), preamble_known.begin() + known_lead));
    }
    return true;
}

bool m110c_receiver::state::look_back(double hz)
{
    // The section just found (its codes read) may be the first re-inserted one of a
    // transmission whose preamble was missed: then its start lies first_section_head
    // symbols back, and its 72 mini-probes (signs by the mode read) where its frames
    // put them. If they are there, the burst is taken from that start, its preamble
    // known.
    const uint64_t back = first_section_head * sps;
    const uint64_t reach = uint64_t(look_back_reach) * sps;
    if (start < back + reach || start - back - reach < std::max(input.base(), quiet_since))
        return false;
    const uint64_t first = start - back;
    input.start_derotation(first, hz);
    double evidence = 0;
    for (unsigned f = 0; f < m110c_reinsert_period_frames; ++f) {
        const auto& probe = m110c_probe(m110c_probe_is_minus(*mode, f));
        const uint64_t at =
            first + (m110c_preamble_symbols + uint64_t(f) * m110c_frame_symbols + m110c_data_symbols) * sps;
        double best = 0;
        for (int d = -look_back_reach; d <= look_back_reach; ++d) {
            cd c;
            double energy = 0;
            for (unsigned j = 0; j < m110c_probe_symbols; ++j) {
                const cd x(input.derotated(uint64_t(int64_t(at) + (int64_t(j) + d) * int64_t(sps))));
                c += x * std::conj(cd(psk8(probe[j])));
                energy += std::norm(x);
            }
            if (energy > 0)
                best = std::max(best, std::norm(c) / energy);
        }
        evidence += best;
    }
    if (evidence < look_back_evidence * m110c_reinsert_period_frames) {
        input.start_derotation(start, hz);
        return false;
    }
    start = first;
    skipped = 0;
    found_section = false;
    return true;
}

bool m110c_receiver::state::read_section_codes()
{
    // One complex gain over the section's known head and tail (the strongest path at
    // the detected timing); each D field then reads as the Barker rotation the
    // derotated samples match best.
    cd h;
    for (unsigned k = 0; k < section_symbols; ++k)
        if (k < section_head || k >= section_tail_from)
            h += cd(input.derotated(start + uint64_t(k) * sps)) * std::conj(cd(preamble_known[skipped + k]));
    d_estimates.clear();
    for (unsigned j = 0; j < 3 * m110c_d_field_symbols; ++j)
        d_estimates.push_back(cd(input.derotated(start + uint64_t(section_head + j) * sps)) * std::conj(h));
    read_codes();
    if (!mode)
        return false;
    know_preamble_of_mode();
    return true;
}

void m110c_receiver::state::begin_burst(const std::vector<cf>& known, const std::vector<cf>* measured,
                                         uint64_t measured_at)
{
    channel_tracking_equaliser_config tracking;
    tracking.forgetting = cfg.forgetting;
    tracking.solve_interval = cfg.equaliser_solve_interval;
    tracking.decision_weight = cfg.decision_weight;
    serial_tone_channel_start channel =
        start_serial_tone_channel(input, measured ? measured_at : start, measured ? *measured : known,
                                  cfg.max_delay_spread_symbols, tracking, cd(std::sqrt(reference_power)), 1e-3);
    if (measured) {
        // The equaliser's past: the first of `known`, as start_serial_tone_channel takes
        // its own.
        std::vector<cd> past(channel.equaliser->channel_symbols(), cd());
        for (size_t k = 0; k < past.size() && k < known.size(); ++k)
            past[k] = cd(known[k]);
        const std::vector<cd> taps = channel.equaliser->taps();
        channel.equaliser->start(taps, channel.equaliser->noise(), past);
    }
    equaliser = std::move(channel.equaliser);
    timing_shift = channel.timing_shift;
    symbol = equaliser->channel_symbols();
    timing_checked = ~uint64_t(0);
    window.assign(equaliser->window_samples(), cd());
    mode_checked = false;
    corrected_mode.reset();
    data_start_equaliser.reset();
    probe_turns.clear();
    clear_data_progress();
    if (!scrambler_rerun) {
        scrambler_open = cfg.find_scrambler;
        scrambler_judge.start_burst();
    }
    scrambler_rerun = false;
    scrambler_restart = false;
    tapped = 0;
    d_estimates.clear();
    presence.start(reference_power);
    report.start();
    if (mode) {
        prepare_mode();
        mark_data_start();
    }
    stage = phase::data;
}

void m110c_receiver::state::second_pass(bool last)
{
    // Decode the block as it stands, code it again, and run the equaliser over the
    // block from where it began with those symbols in place of its own decisions: the
    // channel is then tracked, and past symbols cancelled, with the decoder's far fewer
    // errors; the new estimates give new LLRs.
    const std::vector<uint8_t> channel = block_coded_again();
    const unsigned nb = mode->bits_per_symbol;
    const uint64_t first = block_pass.first_symbol();
    size_t bit = 0;
    segment_error = segment_variance = 0;
    segment_symbols = 0;
    // In the block's last pass, suspect frames are equalised backward too, with the
    // decoded symbols, as the first pass does with its decisions: forward only, a frame
    // the first pass took from its backward equaliser (a fade) came out of this pass
    // worse than it went in. In the last pass only: in every pass it changed blocks the
    // passes before decoded right (docs/modem-design.md, "The channel between the
    // mini-probes").
    uint64_t frame_start = 0;
    int64_t frame_shift = 0;
    size_t frame_bit = 0;
    block_pass.replay(
        *equaliser,
        [&](size_t i, channel_tracking_equaliser& again, int64_t shift) {
            if (cfg.interpolate_probes && m110c_role_of(skipped + first + i).kind != m110c_symbol_kind::preamble)
                interpolate_channel(again, first + i, shift);
        },
        [&](size_t i, cd z, double variance) {
            const unsigned position = m110c_role_of(skipped + first + i).position;
            const size_t symbol_bit = bit;
            const cd decision = demapper->demap_to(z, position, variance, &channel[bit], &block_llr[bit]);
            if (last && cfg.backward_frames) {
                if (position == 0) {
                    frame_start = first + i;
                    frame_bit = symbol_bit;
                    forward_error.assign(m110c_data_symbols / reliability_symbols, 0.0);
                }
                forward_error[position / reliability_symbols] += std::norm(z - decision);
            }
            bit += nb;
            weigh_decision(z, decision, variance, bit);
            return decision;
        },
        [&](size_t i, const channel_tracking_equaliser& again, int64_t shift) {
            const unsigned position = m110c_role_of(skipped + first + i).position;
            if (last && cfg.backward_frames && position == 0)
                frame_shift = shift;
            if (last && cfg.backward_frames && position + 1 == m110c_data_symbols && shift == frame_shift &&
                !anchors.empty() && frame_suspect())
                equalise_frame_backward(frame_start, shift, again.noise(), frame_bit, &channel[frame_bit]);
        });
}

bool m110c_receiver::state::window_for(uint64_t k)
{
    return serial_tone_window(input, start, k, *equaliser, timing_shift, window, presence);
}

void m110c_receiver::state::commit(cd z, cd sent, bool known_symbol)
{
    equaliser->decide(sent, known_symbol);
    if (!known_symbol)
        return;
    presence.add_known(z, sent);
    report.add(std::norm(z - sent), double(symbol) / 2400.0);
}

void m110c_receiver::state::read_codes()
{
    // Each field: the rotation by 2c (c = 0..3) of Barker-13 its estimates match best;
    // c is the dibit (rate bit, interleaver bit) 00 -> 0, 01 -> 1, 11 -> 2, 10 -> 3.
    unsigned rate = 0, interleaver = 0;
    for (unsigned f = 0; f < 3; ++f) {
        double best = -std::numeric_limits<double>::infinity();
        unsigned best_c = 0;
        for (unsigned c = 0; c < 4; ++c) {
            cd sum;
            for (unsigned j = 0; j < m110c_d_field_symbols; ++j)
                sum += d_estimates[f * m110c_d_field_symbols + j] * std::conj(cd(psk8(m110c_d_chip(j, c))));
            if (sum.real() > best) {
                best = sum.real();
                best_c = c;
            }
        }
        const unsigned dibit = m110c_quadrant_of_dibit[best_c]; // its own inverse
        rate = (rate << 1) | (dibit >> 1);
        interleaver = (interleaver << 1) | (dibit & 1);
    }
    mode = m110c_mode_by_code(rate, interleaver);
}

bool m110c_receiver::state::data(std::vector<m110c_burst>& done)
{
    for (;;) {
        if (symbol % timing_check_symbols == 0 && skipped + symbol > known_lead && timing_checked != symbol) {
            timing_checked = symbol;
            pending_slip += follow_serial_tone_channel(input, *equaliser, start + symbol * sps, timing_shift);
        }
        const m110c_symbol_role role = m110c_role_of(skipped + symbol);
        // A frame's anchors before its data (or before the re-inserted section ahead of
        // it: the tracker follows the section's known symbols, the interpolation with it).
        if (mode && cfg.interpolate_probes && role.position == 0 &&
            ((role.kind == m110c_symbol_kind::data && !anchors_for_frame(symbol)) ||
             (role.kind == m110c_symbol_kind::reinserted && !anchors_for_frame(symbol + m110c_reinserted_symbols))))
            return false; // the probe after the frame is not in yet
        if (corrected_mode) {
            restart_data();
            continue;
        }
        if (scrambler_restart) {
            // The burst again from its preamble under the other reading; the symbols
            // this try tapped are tapped again.
            if (symbol_tap)
                symbol_tap->resize(symbol_tap->size() - std::min(tapped, symbol_tap->size()));
            scrambler_restart = false;
            scrambler_rerun = true;
            stage = phase::preamble;
            return true;
        }
        if (!window_for(symbol))
            return false;
        const uint64_t k = skipped + symbol++; // as seen from the transmission's start
        if (mode && mode->coded && decoder_passes() >= 2 && role.kind != m110c_symbol_kind::preamble) {
            if (role.kind == m110c_symbol_kind::data && role.position == 0 &&
                role.frame % mode->frames_per_block == 0) {
                // The state the block starts from (a slip just before it is in it).
                block_pass.begin(*equaliser, timing_shift, symbol - 1);
                pending_slip = 0;
                keep_last_anchors();
            }
            if (block_pass.active()) {
                block_pass.add(window, pending_slip);
                pending_slip = 0;
            }
        }
        if (mode && cfg.interpolate_probes && role.kind != m110c_symbol_kind::preamble)
            interpolate_channel(*equaliser, symbol - 1, timing_shift);
        const cd z = equaliser->equalise(window.data());
        if (k < known_lead || (mode && k < m110c_preamble_symbols)) {
            commit(z, cd(preamble_known[k]), true);
            continue;
        }
        if (k < known_lead + 3 * m110c_d_field_symbols) {
            // D0..D2: decided among the four rotations of this chip.
            const unsigned j = unsigned(k - known_lead);
            d_estimates.push_back(z);
            cd decision;
            double nearest = std::numeric_limits<double>::infinity();
            for (unsigned c = 0; c < 4; ++c) {
                const cd point(psk8(m110c_d_chip(j % m110c_d_field_symbols, c)));
                if (std::norm(z - point) < nearest) {
                    nearest = std::norm(z - point);
                    decision = point;
                }
            }
            commit(z, decision, false);
            if (j + 1 == 3 * m110c_d_field_symbols) {
                read_codes();
                if (!mode) {
                    // Reserved or illegal codes: not a burst we can read.
                    restart_search(start + m110c_sync_symbols * sps);
                    return true;
                }
                know_preamble_of_mode();
                prepare_mode();
                mark_data_start();
            }
            continue;
        }
        if (double(k - m110c_preamble_symbols) / 2400.0 > cfg.max_burst_s) {
            end_burst(false, done);
            return true;
        }
        switch (role.kind) {
        case m110c_symbol_kind::data: {
            float llr[6];
            const double variance = std::max(1e-3, equaliser->estimate_variance());
            const cd decision = demapper->demap(z, role.position, variance, llr);
            if (symbol_tap) {
                symbol_tap->push_back(cf(demapper->unscrambled(z, role.position)));
                ++tapped;
            }
            commit(z, decision, false);
            block_llr.insert(block_llr.end(), llr, llr + mode->bits_per_symbol);
            weigh_decision(z, decision, variance, block_llr.size());
            if (cfg.backward_frames && mode->coded) {
                if (role.position == 0) {
                    frame_first = symbol - 1;
                    frame_shift = timing_shift;
                    forward_error.assign(m110c_data_symbols / reliability_symbols, 0.0);
                    forward_variance.assign(forward_error.size(), 0.0);
                }
                forward_error[role.position / reliability_symbols] += std::norm(z - decision);
                forward_variance[role.position / reliability_symbols] += variance;
                // Backward only where some decisions look wrong: it costs as much as
                // the forward equaliser.
                if (role.position + 1 == m110c_data_symbols && timing_shift == frame_shift && !anchors.empty() &&
                    frame_suspect())
                    equalise_frame_backward(frame_first, timing_shift, equaliser->noise(),
                                            block_llr.size() - size_t(m110c_data_symbols) * mode->bits_per_symbol);
            }
            if (block_llr.size() == decoder->channel_bits()) {
                for (unsigned pass = 2; pass <= decoder_passes() && block_pass.active(); ++pass)
                    second_pass(pass == decoder_passes());
                block_pass.end();
                keep_last_anchors();
                if (scrambler_open && mode->coded && !judge_scrambler()) {
                    scrambler_restart = true;
                    break;
                }
                decoder->decode(block_llr.data(), bits);
                const double reliability = decoder->reliability();
                least_reliability = std::min(least_reliability, reliability);
                unreliable_blocks += reliability < cfg.reliability_threshold;
                block_llr.clear();
                find_eom();
                if (cfg.find_tail_biting)
                    settle_tail_biting();
                block_decoded = true;
            }
            break;
        }
        case m110c_symbol_kind::probe: {
            const cd sent = *known_at(k);
            if (block_pass.active())
                block_pass.known(sent);
            presence.add_probe(z, sent);
            commit(z, sent, true);
            if (role.position + 1 == m110c_probe_symbols)
                presence.add_prediction_score(
                    anchors.prediction_score(symbol - m110c_probe_symbols));
            const bool block_end = role.position + 1 == m110c_probe_symbols &&
                                   (role.frame + 1) % mode->frames_per_block == 0;
            if (block_end && eom_at == no_eom && presence.block_says_lost(presence.probes_match())) {
                end_burst(false, done);
                return true;
            }
            break;
        }
        case m110c_symbol_kind::reinserted: {
            const cd sent = *known_at(k);
            if (block_pass.active())
                block_pass.known(sent);
            commit(z, sent, true);
            break;
        }
        case m110c_symbol_kind::preamble:
            break;
        }
        if (eom_at != no_eom) {
            end_burst(true, done);
            return true;
        }
        // Not before the mini-probes have confirmed the mode: a corrected mode starts
        // the data again.
        if (cfg.deliver_per_block && block_decoded && mode_checked && !corrected_mode)
            hand_on_decoded(done);
    }
}

void m110c_receiver::state::hand_on_decoded(std::vector<m110c_burst>& done)
{
    block_decoded = false;
    auto bytes = streamed.take(bits, eom_searched, cfg.msb_first); // no EOM starts before
    if (bytes.empty())
        return;
    m110c_burst piece = burst_so_far();
    piece.bytes = std::move(bytes);
    piece.continues = true;
    done.push_back(std::move(piece));
}

void m110c_receiver::state::weigh_decision(cd z, cd decision, double variance, size_t llr_end)
{
    segment_error += std::norm(z - decision);
    segment_variance += variance;
    if (++segment_symbols < reliability_symbols)
        return;
    const float scale = serial_tone_llr_scale(segment_error, segment_variance);
    if (scale < 1)
        for (size_t b = llr_end - reliability_symbols * mode->bits_per_symbol; b < llr_end; ++b)
            block_llr[b] *= scale;
    segment_error = segment_variance = 0;
    segment_symbols = 0;
}

void m110c_receiver::state::equalise_frame_backward(uint64_t first, int64_t shift, double noise, size_t frame_llr,
                                                    const uint8_t* labels)
{
    channel_tracking_equaliser_config settings;
    settings.forgetting = cfg.forgetting;
    settings.decision_weight = cfg.decision_weight;
    settings.solve_interval = cfg.equaliser_solve_interval; // 64QAM's 12 would cost a tenth of the speed
    settings.follow_channel = qam64();
    settings.symbol_power = data_power();
    serial_tone_backward_frame frame;
    frame.input = &input;
    frame.start = start;
    frame.timing_shift = shift;
    frame.first = first;
    frame.data_symbols = m110c_data_symbols;
    const uint64_t last = first + m110c_data_symbols - 1;
    for (uint64_t j = 0; j < m110c_probe_symbols; ++j)
        frame.probe_after.push_back(*known_at(skipped + last + 1 + j));
    frame.noise = noise;
    frame.demapper = demapper.get();
    frame.segment_symbols = reliability_symbols;
    frame.forward_error = &forward_error;
    frame.llr = &block_llr[frame_llr];
    frame.labels = labels;
    serial_tone_equalise_frame_backward(frame, *equaliser, settings, anchors);
}

void m110c_receiver::state::mark_data_start()
{
    data_start_equaliser.reset(new channel_tracking_equaliser(*equaliser));
    data_start_symbol = symbol;
    data_start_shift = timing_shift;
}

void m110c_receiver::state::note_probe_turn(uint64_t first, const std::vector<cd>& taps)
{
    if (mode_checked || !mode)
        return;
    const std::vector<cd> before = std::exchange(previous_anchor_taps, taps);
    const m110c_symbol_role role = m110c_role_of(skipped + first);
    if (role.kind != m110c_symbol_kind::probe)
        return;
    const unsigned n = unsigned(role.frame % m110c_reinsert_period_frames);
    const unsigned k = n % 18;
    if (k < 7 || k > 14 || before.size() != taps.size()) {
        if (k > 14)
            mode_checked = true; // the first group's codes went by unread
        return;
    }
    if (k == 7)
        probe_turns.clear();
    cd inner;
    double a = 0, b = 0;
    for (size_t q = 0; q < taps.size(); ++q) {
        inner += std::conj(before[q]) * taps[q];
        a += std::norm(before[q]);
        b += std::norm(taps[q]);
    }
    probe_turns.push_back(a > 0 && b > 0 ? inner.real() / std::sqrt(a * b) : 0.0);
    if (k < 14)
        return;
    mode_checked = true;
    // Frames 7 and 14 are plus whatever the mode: the chain of relative signs from 7 must
    // come back to plus at 14, and every link be clear, or the check says nothing.
    if (probe_turns.size() != 8)
        return;
    bool flipped = false; // probe k sent with the other sign than the mode read says
    unsigned rate = 0, interleaver = 0;
    for (unsigned j = 1; j < probe_turns.size(); ++j) {
        if (std::abs(probe_turns[j]) < mode_check_correlation)
            return;
        flipped = flipped != (probe_turns[j] < 0);
        const unsigned kj = 7 + j;
        if (kj >= 8 && kj <= 13) {
            const bool minus = m110c_probe_is_minus(*mode, n - 14 + kj) != flipped;
            if (kj <= 10)
                rate = (rate << 1) | unsigned(minus);
            else
                interleaver = (interleaver << 1) | unsigned(minus);
        }
    }
    if (flipped)
        return;
    const std::optional<m110c_mode> read = m110c_mode_by_code(rate, interleaver);
    if (read && read->name() != mode->name())
        corrected_mode = read;
}

std::vector<uint8_t> m110c_receiver::state::block_coded_again()
{
    std::vector<uint8_t> user;
    decoder->decode(block_llr.data(), user);
    return m110c_block_channel_bits(*mode, user.data(), fetch_order, data_readings);
}

bool m110c_receiver::state::judge_scrambler()
{
    // As the App D receiver's (find_scrambler): the block decoded and coded again, held
    // against its LLRs.
    const std::vector<uint8_t> channel = block_coded_again();
    const x9_orientation best =
        scrambler_judge.judge(data_readings.scrambler, agreement_of(block_llr, channel));
    if (best != data_readings.scrambler) {
        data_readings.scrambler = best;
        return false;
    }
    scrambler_open = false;
    return true;
}

void m110c_receiver::state::restart_data()
{
    mode = corrected_mode;
    corrected_mode.reset();
    know_preamble_of_mode();
    equaliser.reset(new channel_tracking_equaliser(*data_start_equaliser));
    symbol = data_start_symbol;
    timing_shift = data_start_shift;
    timing_checked = ~uint64_t(0);
    prepare_mode();
    clear_data_progress();
}

void m110c_receiver::state::clear_data_progress()
{
    anchors.clear();
    previous_anchor_taps.clear();
    block_pass.end();
    pending_slip = 0;
    segment_error = segment_variance = 0;
    segment_symbols = 0;
    block_llr.clear();
    bits.clear();
    streamed.restart();
    block_decoded = false;
    eom_at = no_eom;
    eom_searched = 0;
    phase_search.clear();
    unreliable_blocks = 0;
    least_reliability = std::numeric_limits<double>::infinity();
}

void m110c_receiver::state::know_preamble_of_mode()
{
    const std::vector<uint8_t> p = m110c_preamble(*mode);
    for (size_t i = 0; i < p.size(); ++i)
        preamble_known[i] = psk8(p[i]);
}

void m110c_receiver::state::prepare_mode()
{
    reinserted = m110c_reinserted_section(*mode);
    const auto& points = m110c_constellation(mode->bits_per_symbol);
    nearest_points = std::numeric_limits<double>::infinity();
    for (size_t i = 0; i < points.size(); ++i)
        for (size_t j = i + 1; j < points.size(); ++j)
            nearest_points = std::min(nearest_points, double(std::norm(points[i] - points[j])));
    demapper.reset(new m110c_demapper(*mode, data_readings));
    decoder.reset(new m110c_block_decoder(*mode, data_readings));
    fetch_order = m110c_fetch_order(*mode);
    // 64QAM runs where the tracked taps are steady enough for the feedback to follow
    // them (F.1487 poor, 9600L at 30 dB: 2.0e-2 with one gain, 9.0e-3; the PSK and
    // 16/32QAM modes do as well or better with one gain at their lower SNRs), and
    // needs its solutions fresher.
    equaliser->set_follow_channel(qam64());
    equaliser->set_solve_interval(qam64() ? cfg.qam64_solve_interval : cfg.equaliser_solve_interval);
    // The data's mean power on the probes' scale (QAM as printed: under 1).
    equaliser->set_symbol_power(data_power());
}

std::optional<cd> m110c_receiver::state::known_at(uint64_t k) const
{
    const m110c_symbol_role role = m110c_role_of(k);
    switch (role.kind) {
    case m110c_symbol_kind::preamble:
        return cd(preamble_known[k]);
    case m110c_symbol_kind::probe:
        return cd(psk8(m110c_probe(
            m110c_probe_is_minus(*mode, unsigned(role.frame % m110c_reinsert_period_frames)))[role.position]));
    case m110c_symbol_kind::reinserted:
        return cd(psk8(reinserted[role.position]));
    case m110c_symbol_kind::data:
        break;
    }
    return std::nullopt;
}

bool m110c_receiver::state::anchors_for_frame(uint64_t s)
{
    // Before the frame's data: a probe, or the last 31 symbols (MP-) of the preamble or
    // of a re-inserted section, which end the same way.
    if (!(measure_anchor(s - m110c_probe_symbols) && measure_anchor(s + m110c_data_symbols)))
        return false;
    // Within an interleaver block the transmission surely goes on: the probe after the
    // next frame too (a block's last frame may be the transmission's).
    const uint64_t frame = m110c_role_of(skipped + s).frame;
    if ((frame + 1) % mode->frames_per_block == 0)
        return true;
    const uint64_t next = s + m110c_frame_symbols +
                          ((frame + 1) % m110c_reinsert_period_frames == 0 ? m110c_reinserted_symbols : 0);
    return measure_anchor(next + m110c_data_symbols);
}

bool m110c_receiver::state::measure_anchor(uint64_t first)
{
    if (anchors.has(first))
        return true;
    std::vector<cd> known;
    for (uint64_t j = 0; j < m110c_probe_symbols; ++j) {
        const std::optional<cd> symbol = known_at(skipped + first + j);
        if (!symbol)
            return true; // not a run of known symbols (cannot happen): no anchor here
        known.push_back(*symbol);
    }
    if (!anchors.measure(input, start, timing_shift, *equaliser, first, known))
        return false;
    note_probe_turn(first, anchors.last().taps);
    if (!block_pass.active())
        keep_last_anchors();
    return true;
}

void m110c_receiver::state::find_eom()
{
    for (; eom_searched + m110c_eom_bits <= bits.size() && eom_at == no_eom; ++eom_searched)
        if (bits_word(bits, eom_searched) == m110c_eom)
            eom_at = eom_searched;
}

void m110c_receiver::state::settle_tail_biting()
{
    const tail_biting_start found = phase_search.settle(
        bits, eom_at, eom_searched, data_readings.tail_biting, conv_code_k7, decoder->user_bits());
    if (found == data_readings.tail_biting)
        return;
    data_readings.tail_biting = found;
    decoder.reset(new m110c_block_decoder(*mode, data_readings));
}

m110c_burst m110c_receiver::state::burst_so_far() const
{
    m110c_burst burst;
    burst.mode = mode->name();
    burst.start_sample = start;
    burst.frequency_offset_hz = input.offset_hz();
    // The signal's mean power, as a channel's SNR is measured (QAM's is under the
    // probes' the noise is measured against).
    burst.snr_db = report.snr_db(m110c_frame_power(*mode));
    burst.snr_db_recent = report.recent_snr_db(m110c_frame_power(*mode));
    if (std::isnan(burst.snr_db)) // not half a chunk of known symbols yet
        burst.snr_db = burst.snr_db_recent = presence.snr_db(m110c_frame_power(*mode));
    burst.unreliable_blocks = unreliable_blocks;
    burst.least_reliability = least_reliability;
    burst.bytes_bad = unreliable_blocks > 0;
    m110d_readings words;
    words.scrambler = data_readings.scrambler;
    words.tail_biting = data_readings.tail_biting;
    std::istringstream text(m110d_readings_text(words));
    std::string word;
    while (text >> word)
        if (word.rfind("scrambler=", 0) == 0 || (mode->coded && word.rfind("tail_biting=", 0) == 0))
            burst.readings += (burst.readings.empty() ? "" : " ") + word;
    return burst;
}

void m110c_receiver::state::end_burst(bool eom, std::vector<m110c_burst>& done)
{
    m110c_burst burst = burst_so_far();
    burst.eom = eom;
    burst.bytes_bad = burst.bytes_bad || !eom;
    burst.bytes = streamed.take(bits, eom ? eom_at : bits.size(), cfg.msb_first);
    done.push_back(std::move(burst));
    // After the EOM the transmission ends with its last frame's probe and, when that
    // frame closes a group of 72, a re-inserted section: not a new burst.
    uint64_t next = symbol;
    if (eom) {
        const m110c_symbol_role role = m110c_role_of(skipped + next);
        if (role.kind == m110c_symbol_kind::probe) {
            next += m110c_probe_symbols - role.position;
            if (role.frame % m110c_reinsert_period_frames == m110c_reinsert_period_frames - 1)
                next += m110c_reinserted_symbols;
        }
    }
    quiet_since = start + next * sps;
    restart_search(quiet_since);
}

} // namespace phy
} // namespace hfstack
} // namespace gr
