/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

/* The App D receiver's state, shared by its three parts: the preamble search and the
 * fields it reads (m110d_receiver.cc), WN0's Walsh symbols (m110d_receiver_wn0.cc), and
 * the data with their decoder-aided passes (m110d_receiver_data.cc). Internal: only those
 * files include it. */
#ifndef HFSTACK_KERNELS_PHY_M110D_RECEIVER_STATE_H
#define HFSTACK_KERNELS_PHY_M110D_RECEIVER_STATE_H

#include "m110d_receiver.h"

#include "block_frequency_equaliser.h"
#include "burst_snr.h"
#include "channel_tracking_equaliser.h"
#include "differential_products.h"
#include "helper_threads.h"
#include "m110d_decoder.h"
#include "m110d_probe_data_watch.h"
#include "m110d_transmitter.h"
#include "m110d_wn0_data_watch.h"
#include "serial_tone_anchors.h"
#include "serial_tone_block_pass.h"
#include "serial_tone_channel.h"
#include "serial_tone_presence.h"
#include "serial_tone_samples.h"
#include "serial_tone_stages.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <cmath>
#include <complex>
#include <cstdint>
#include <deque>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <thread>
#include <vector>

namespace gr {
namespace hfstack {
namespace phy {

// What the three parts share besides the state.
namespace m110d_rx {

using cf = std::complex<float>;
using cd = std::complex<double>;
using phase = serial_tone_stage;
constexpr unsigned sps = m110d_receiver::samples_per_symbol;

// start_from_mini_probes: a mini-probe watch's window, about as many symbols as a WN1
// frame's 32 (1.3 s at 2400 Bd: a fade on F.1487 poor passes within it), in frames of
// frame_symbols; the starts one detection proposes lie within twice that and a frame
// either side.
constexpr unsigned probe_watch_symbols = 3072;
constexpr unsigned probe_watch_frames(unsigned frame_symbols)
{
    return (probe_watch_symbols + frame_symbols - 1) / frame_symbols;
}
constexpr unsigned probe_start_reach_frames(unsigned frame_symbols)
{
    return 2 * probe_watch_frames(frame_symbols) + 2;
}

// Data symbols whose decision errors are weighed together against the equaliser's
// variance (as the App C receiver's).
constexpr unsigned reliability_symbols = 32;

inline cf psk8(unsigned s) { return m110d_constellation(3)[s & 7]; }

// The point `base` or its opposite, whichever z is nearer (a Walsh chip adds 0 or 4).
inline cd antipodal_decision(cd z, cd base)
{
    return (z * std::conj(base)).real() >= 0 ? base : -base;
}

// The preamble Walsh symbol's chips at the configured bandwidth (32 * BW / 3, or as the
// preamble_walsh reading caps it); the constructor has checked the bandwidth.
unsigned walsh_chips_of(const m110d_receiver_config& c);

// The longest frame (U + K) of the bandwidth's modes, in symbols.
unsigned longest_frame_of(unsigned bw_khz);

// The least power of two over n.
size_t power_of_two_over(size_t n);

} // namespace m110d_rx

struct m110d_receiver::state {
    using cf = m110d_rx::cf;
    using cd = m110d_rx::cd;
    using phase = m110d_rx::phase;
    static constexpr unsigned sps = m110d_rx::sps;

    m110d_receiver_config cfg;
    // The bandwidth's symbol rate (800 Bd per kHz); every sample count below is in
    // symbols at 4 samples each, the 3 kHz receiver's grid at every bandwidth.
    const double symbol_rate = m110d_baud_per_khz * cfg.bandwidth_khz;
    // A preamble Walsh symbol (32 at 3 kHz), the known chips the search matches (last
    // fixed symbol and the count field of 0), and with the WID field after them.
    const unsigned walsh_chips = m110d_rx::walsh_chips_of(cfg);
    const unsigned known_symbols = 5 * walsh_chips;
    const unsigned preamble_end = 10 * walsh_chips;
    // Differential products kept behind the search (4096 at 3 kHz).
    const size_t history_symbols = size_t(128) * walsh_chips;
    // Samples past a peak before it is taken: the count field of 0 is four times the
    // count PN (at 3 kHz), so the correlation has side peaks one, two and three Walsh
    // symbols either side of the true one (at 0.76, 0.55 and 0.35 of it); the largest
    // within three Walsh symbols and a bit is taken.
    const size_t peak_window = size_t(3 * walsh_chips + 2) * sps;
    const size_t local_weak_window = size_t(walsh_chips) * sps;
    // After a refused preamble the search goes on past its later side peaks.
    const unsigned refused_skip = 3 * walsh_chips + 4;
    // Integration over super-frames (integrate_superframes): a super-frame is 18 Walsh
    // symbols; its fixed section's first 8 (the 9th is the search's first known symbol)
    // start 8 symbols before the search's known chips, and those of the super-frames
    // before every 18 Walsh symbols (576 chips at 3 kHz) further back. A peak the comb
    // carries is held for a super-frame more, so the last super-frame's (count 0), with
    // the most sections behind it, is taken.
    const unsigned superframe_chips = 18 * walsh_chips;
    const unsigned comb_section_chips = 8 * walsh_chips;
    // A ring over (8 + 18 x 31) Walsh symbols (2^17 samples at 3 kHz).
    const size_t comb_ring = m110d_rx::power_of_two_over(
        size_t(comb_section_chips + 31 * superframe_chips) * sps);
    const size_t comb_peak_window = size_t(superframe_chips + 3 * walsh_chips + 2) * sps;
    // Samples kept behind the equaliser: a frame equalised again backward once its data
    // are in, and the equaliser's reach (448 symbols at 3 kHz).
    const unsigned frame_margin =
        std::max(448u, m110d_rx::longest_frame_of(cfg.bandwidth_khz) + 128);
    serial_tone_samples input{ sps * symbol_rate };
    // The equaliser's time constants' scale (time_scaled_tracking): symbols per 3 kHz
    // symbol.
    const unsigned time_scale = cfg.time_scaled_tracking ? cfg.bandwidth_khz / 3 : 1;
    // A forgetting factor given for 2400 Bd, at this symbol rate.
    double scaled_forgetting(double f) const
    {
        return time_scale > 1 ? 1.0 - (1.0 - f) / time_scale : f;
    }
    // The equaliser's span (max_delay_spread_symbols, or by bandwidth).
    const unsigned
        delay_spread_symbols = cfg.max_delay_spread_symbols > 0
                                   ? cfg.max_delay_spread_symbols
                                   : m110d_delay_spread_symbols(cfg.bandwidth_khz);
    // Per PN alignment searched for (the configured one; with find_preamble_readings the
    // other too): the 160 chips the search matches, the WID section's PN (every dibit 0)
    // as points, and the correlator.
    struct alignment_search {
        m110d_pn_alignment alignment;
        std::vector<cf> known;
        std::vector<cf> wid_base;
        differential_correlator correlator;
        // integrate_superframes: the first 8 fixed Walsh symbols' correlator, and its sum
        // and energy per sample (ring, tagged with the sample + 1).
        std::unique_ptr<differential_correlator> section;
        // (One entry holds all three: the comb reads 31 entries a super-frame apart per
        // sample, each a cache miss at the wide bandwidths' ring sizes.)
        struct comb_section {
            cf sum;
            float energy = 0;
            uint64_t at = 0;
        };
        std::vector<comb_section> sections;
        // coherent_search: the known chips' section sums (re, im) and energies for the
        // candidates coherent_from .. + 3, computed together (their samples lie side by
        // side).
        uint64_t coherent_from = ~uint64_t(0);
        std::array<std::array<float, 4>, 40> coherent_sections{};
        std::array<float, 4> coherent_energy{}, coherent_section_energy{};
        // Two paths: each offset's |sum|^2 over the chips' energy at the samples just
        // searched (ring, tagged with the sample + 1; 0 where not computed).
        std::vector<std::array<float, 64>> coherent_powers;
        std::vector<uint64_t> coherent_powers_at;
    };
    std::vector<alignment_search> alignments;
    // coherent_search: the known chips' coherent z at sample n for alignment a, as a
    // z-score at the differential's false-alarm rate (0 where the sections' energy
    // shows no signal); `sum`'s angle the carrier's turn per symbol.
    // With `paths` the same for two paths, one of them at n and the other at
    // paths->second, paths->z their z (0 where none is found).
    struct two_paths {
        double z = 0;
        cd sum;
        uint64_t at = 0, other = 0; // the stronger path's sample, the other's
    };
    double coherent_z(alignment_search& a, uint64_t n, cd& sum, two_paths& paths) const;
    bool coherent_searching() const
    {
        return cfg.coherent_search && cfg.bandwidth_khz == 3 && stage == phase::search;
    }
    // The coherent search's peak, taken only where the differential one has none open.
    correlation_peak coherent_peak;
    size_t coherent_alignment = 0;
    bool found_by_coherent = false; // the detection is the coherent search's
    // The coherent peak's (and the detection's) second path, where it is the two paths'
    // (their sample; 0 where it is one path's).
    uint64_t coherent_other = 0, found_other = 0;
    // confirm_weak_with_data: peaks under the coherent threshold, each the largest within
    // a Walsh symbol of it (the coherent peak's window lets a later noise peak a little
    // larger take a faded preamble's place), held beside the coherent peak's.
    correlation_peak local_weak_peak;
    size_t local_weak_alignment = 0;
    uint64_t local_weak_other = 0;
    // The differential correlation searches from this sample on (after a refused
    // detection of its own the coherent search goes back over the chips it skips).
    uint64_t differential_from = 0;
    size_t peak_alignment = 0, found_alignment = 0;
    bool peak_comb = false; // the open peak's z has super-frame sections in it
    // Super-frames whose fixed sections the open peak's z (and the detection's) added up:
    // 0 the known chips alone, 1 with the found super-frame's own, 2 and on earlier ones.
    unsigned peak_sections = 0, found_sections = 0;
    const alignment_search* burst_alignment = nullptr; // the burst's
    uint64_t candidate = sps;
    correlation_peak peak;
    uint64_t found_at = 0;
    double found_hz = 0;
    double found_z = 0;
    uint64_t refused = 0;

    phase stage = phase::search;
    uint64_t start = 0;  // sample of the first known chip
    uint64_t symbol = 0; // next symbol (from start) to equalise
    std::optional<m110d_mode> mode;
    unsigned constraint_length = 7;
    std::vector<cf> field_chips; // the count and WID chips as equalised
    std::unique_ptr<channel_tracking_equaliser> equaliser;
    int64_t timing_shift = 0;
    uint64_t timing_checked = ~uint64_t(0);
    double frequency_drift_hz = 0; // the second-order frequency loop's rate term
    std::vector<cd> window;
    double reference_power = 0;
    serial_tone_presence presence;
    burst_snr snr_report;   // the burst's SNR report: its mean over the burst
    double known_error = 0; // over the known chips equalised
    // Shared with the blocks decoding on a thread of their own (threads > 1).
    std::shared_ptr<const m110d_demapper> demapper;
    std::shared_ptr<m110d_block_decoder> decoder;
    std::vector<float> block_llr;
    std::vector<cd> walsh_windows; // WN0: the windows of the Walsh symbol under way
    // WN0: the T/2 positions the tracker follows at the Walsh symbol's end, and the
    // symbol's windows there (chip-major).
    std::vector<size_t> walsh_positions;
    std::vector<cd> walsh_tracked;
    // WN0 (wn0_decoder_pass): the block's Walsh symbols' windows on their tracked
    // positions (walsh_tracked one after another), those positions, where each symbol's
    // begin in them, and the symbols' sample grids.
    std::vector<cd> wn0_block_windows;
    std::vector<size_t> wn0_block_positions;
    std::vector<size_t> wn0_block_first;
    std::vector<int64_t> wn0_block_shift;
    // WN0: the block read again, each Walsh symbol on the channel measured over the
    // decoded symbols around it.
    void wn0_decoder_pass();
    void wn0_read_block_again(size_t width);
    std::vector<cf> wn0_chips; // WN0 chip by chip: the symbol's chips so far
    double walsh_match = 0;    // WN0: the block's Walsh symbols' match so far
    std::vector<uint8_t> bits;
    static constexpr size_t no_eom = std::numeric_limits<size_t>::max();
    size_t eom_at = no_eom;
    size_t eom_searched = 0;
    user_byte_stream streamed;
    bool block_decoded = false;
    std::vector<cf> clean;                 // input with non-finite samples zeroed
    std::vector<cf>* symbol_tap = nullptr; // tap_symbols()
    size_t tapped =
        0; // symbols tapped since the burst's data began (taken back on a retry)
    // The last symbols tapped whose blocks are not yet judged part of the burst:
    // kept back from the caller, taken back when the burst is lost.
    size_t held_symbols = 0;

    explicit state(const m110d_receiver_config& c);
    ~state();
    // The search's correlations by FFT (fft_search, above 3 kHz).
    bool fft_search() const { return cfg.fft_search && cfg.bandwidth_khz > 3; }
    // Above 3 kHz no carrier offset comes within a quarter of the symbol rate of 0 (HF
    // offsets are tens of Hz; 2.4 kHz at 12 kHz). Preamble chips turned half a turn a
    // chip read as other Walsh symbols (each D-XIV pattern times + - + - is another),
    // where the search's angle wraps, so fields read by chance there are refused
    // (F.1487 poor, WN6/12kHz/L 13 dB, channel seed 1: the first burst begun 4.8 kHz
    // off at its preamble's start, the real one after it left unmatched).
    bool beyond_offset_reach(double hz) const
    {
        return cfg.bandwidth_khz > 3 && std::abs(hz) > symbol_rate / 4;
    }
    // The search's scores of candidates first .. first + count - 1 for an alignment
    // (into search_scores): z of the known chips alone, or with integrate_superframes
    // the largest over 1, 2, ... earlier fixed sections added (coherently: each sum's
    // angle is the same carrier turn; sections: how many), and coherent_search's. With
    // threads > 1 the known chips' correlator runs beside the sections' (and the
    // coherent sums), the comb's sums over the ring in halves.
    void score_candidates(size_t alignment, uint64_t first, size_t count, bool coherent);

    bool search();
    // search(): per alignment, the candidates' scores ahead of their offers.
    struct search_score {
        double z = 0, coherent_z = 0;
        cd sum, coherent_sum;
        unsigned sections = 0;
        two_paths paths; // coherent_two_paths
    };
    std::array<std::vector<search_score>, 2> search_scores;
    // The batch search_scores holds: candidates scores_first .. + scores_count - 1,
    // offered up to scores_offered (a two-path detection, checked once its fields are
    // in, can break a batch off), scored with or without the coherent search.
    uint64_t scores_first = 0;
    size_t scores_count = 0, scores_offered = 0;
    bool scores_coherent = false;
    bool preamble();
    bool data(std::vector<m110d_burst>& done);
    bool watch(std::vector<m110d_burst>& done);
    // After the stages: the input behind what they may read again let go (with frames
    // unapplied, at their chunk end: trim_now then).
    void trim();
    void trim_now();
    void restart_search(uint64_t from);
    // After a preamble refused on its fields: the search goes on past its side peaks.
    void restart_after_refusal();
    void begin_burst();
    // The burst again from its preamble (its samples were kept) under another scrambler
    // reading; the symbols it tapped are tapped again.
    void begin_again_with_scrambler(x9_orientation reading);
    // begin_burst's parts: the channel and the equaliser from the preamble's known
    // chips, and the rest of the burst's state made anew.
    void start_channel();
    void reset_burst();
    // find_scrambler with the block FDE: the burst as its data begin (its preamble and
    // WID equalised and read, the same under either scrambler reading), kept from the
    // first attempt for the next: they begin there, with the reading's demapper.
    struct data_start {
        std::unique_ptr<channel_tracking_equaliser> equaliser;
        int64_t timing_shift = 0;
        uint64_t symbol = 0, timing_checked = 0;
        double frequency_drift_hz = 0;
        int pending_slip = 0;
        std::vector<cd> window;
        std::vector<cf> field_chips;
        serial_tone_presence presence;
        burst_snr snr_report;
        double known_error = 0;
        std::optional<m110d_mode> mode;
        unsigned constraint_length = 7;
        m110d_readings preamble_readings;
        std::vector<uint32_t> fetch_order;
        double nearest_points = 0;
        serial_tone_probe_anchors anchors;
        unsigned count_ahead = 0;
        serial_tone_samples::derotation derotation;
    };
    std::unique_ptr<data_start> kept_data_start;
    void keep_data_start();
    void begin_at_data_start(const data_start& k);
    // A block's bits just appended to `bits`: the EOM searched for in them, the
    // tail-biting phase settled.
    void block_bits_in();
    bool read_fields();
    // Once the count chips are equalised: whether read_fields will refuse the preamble
    // on them alone (a count other than 0, read where nothing but the last super-frame's
    // chips are read: not over the comb's super-frames, on paths or for a weak peak).
    bool count_refuses() const;
    // A preamble the comb found at an earlier super-frame: the count its super-frames
    // read (read_fields), i.e. how many super-frames later the last one is.
    unsigned count_ahead = 0;
    // The comb integrates no section from before this sample: the end of the last burst.
    // The ring is not kept during a burst, and its entries from before it (the burst's
    // own preamble) still match their samples: added to a detection in the burst's
    // tail they made a "preamble" whose fields read (WN3/24kHz/US at 40 dB: count 24 a
    // burst after a 0.3 s one, and the receiver skipped 24 super-frames, two bursts).
    uint64_t comb_from = 0;
    // The count and WID chips of the super-frame found and of the `earlier` ones before
    // it combined, each on one complex gain measured over its fixed sections and weighted
    // by it: the fields of a preamble the super-frame comb found, read where the last
    // super-frame's alone may not (in a fade, at WN0's and WN1's rows). `count`: the
    // count of the super-frame found (the comb finds earlier ones too), the one whose
    // count fields match best, super-frame j back carrying it plus j; the combined count
    // chips are turned into its.
    std::vector<cf> superframe_fields(unsigned earlier, unsigned& count) const;
    // The carrier offset from the phase slope over 8-, then 32-chip chunks of the fixed
    // sections of the last super-frame and the `earlier` ones before it (derotated by hz
    // first), with the known chips the search matched: a preamble's 160 chips in a fade
    // gave anything (WN1/3kHz/L, poor, 2 dB: -75 Hz for 0), and the fields then did not
    // read.
    double superframes_offset_hz(unsigned earlier, double hz) const;
    // The fixed section of a super-frame of M > 1 (9 Walsh symbols) as points.
    std::vector<cf> fixed_section() const;
    std::optional<m110d_fields> fields_of(const std::vector<cf>& chips,
                                          m110d_pn_alignment alignment) const;
    // In a burst: whether the preamble the watch found at sample `at` reads as one
    // (count 0, a WID that passes), before the burst is cut for it.
    bool new_preamble_reads(uint64_t at, double hz) const;
    // The count and WID of a preamble whose known chips start at sample `at`, read on
    // one complex gain over them (derotated by hz): a preamble's fields if they read so;
    // with fields_z, how far their chosen Walsh symbols' correlations stand out of the
    // chips' power (fields_z_of).
    std::optional<m110d_fields>
    fields_on_one_gain(uint64_t at, double hz, double* fields_z = nullptr) const;
    // The same on the coherent search's paths, at `at` and (unless 0) at `other`, each
    // weighted by its gain over the known chips; where their checks fail on two paths in
    // a fade (the detection's z under 7), or with best_at_any_z, the valid count and WID
    // that correlate best, if the count is 0 and the fields stand out.
    std::optional<m110d_fields> fields_on_paths(uint64_t at,
                                                uint64_t other,
                                                double hz,
                                                double* fields_z = nullptr,
                                                bool best_at_any_z = false) const;
    // The coherent search's detection on two paths is pending until its fields are in
    // and read (paths_detection_reads).
    bool paths_pending = false;
    bool paths_detection_reads() const;
    // confirm_weak_with_data (m110d_receiver_joint.cc): a coherent peak from weak_margin
    // under the coherent threshold, held while the search goes on (any detection, or a
    // stronger such peak, before it is judged takes its place), then judged once the
    // data after its preamble are in: taken where the known symbols of one of the
    // bandwidth's frame structures (mini-probes, or WN0's scrambled Walsh symbols) stand
    // out there, at its timing or a few symbols either side.
    struct weak_candidate {
        uint64_t at = 0, other = 0; // as found_at, found_other
        double hz = 0, z = 0;
        size_t alignment = 0;
        // A start the mini-probe watch proposed: its frame structure (0: none).
        unsigned data_symbols = 0, probe_symbols = 0;
    };
    std::vector<weak_candidate> weak; // held, in time order
    // The sample a candidate's judged data end at: its preamble, data_symbols of data
    // and the lags' reach (all in: it can be judged).
    uint64_t judged_data_end(uint64_t at, unsigned data_symbols) const;
    // The first of `held` (in time order) and those within its data, or within `reach`
    // samples of it if that is further, are judged together once this sample is in.
    uint64_t group_judged_at(const std::vector<weak_candidate>& held,
                             unsigned data_symbols,
                             uint64_t reach = 0) const;
    // Calls judge on that group, then drops it.
    void judge_group(std::vector<weak_candidate>& held,
                     unsigned data_symbols,
                     const std::function<void(const weak_candidate&)>& judge,
                     uint64_t reach = 0);
    // Holds a peak in time order, once.
    void hold_weak(const weak_candidate& w);
    // The sample the data after a held peak end at (all in: it can be judged).
    uint64_t weak_data_end(const weak_candidate& w) const;
    // The first held peak and those within its data are judged together from this
    // candidate on.
    uint64_t weak_judged_at() const;
    // The evidence a held peak's data give (z over noise of the frame structure found),
    // where it is enough: found_at moved to the data's strongest path, the offset the
    // data's known symbols turn by, and the count and WID read with the WN among the
    // frame structure's.
    struct weak_judgement {
        double z = 0, peak_z = 0, hz = 0;
        double preamble_z = 0; // the peak's z and its fields' together
        size_t alignment = 0;
        uint64_t at = 0;
        m110d_fields fields;
        // Its fields stand out less than weak_fields_z asks: taken only if its first
        // block decodes (choose_wid_by_data).
        bool fields_unsure = false;
        bool from_probes = false; // a start the mini-probe watch proposed
    };
    std::optional<weak_judgement> judge_weak(const weak_candidate& w) const;
    // A start a watch proposed, judged on 3 s of its data: WN0's Walsh symbols, or the
    // probes of the frame structure the probe watch found, at z weak_data_z, none in the
    // 0.3 s before; its fields are read among the modes of the structure and block
    // length found and are always unsure (its first block decides).
    std::optional<weak_judgement> judge_data_start(const weak_candidate& w) const;
    // start_wn0_from_data (m110d_receiver_joint.cc): the watch over the search's samples
    // (between bursts), and the starts it proposes (a preamble's place, preamble_end
    // before a scrambler period it found), held in time order and judged on their data
    // once no held peak is left; starts up to data_starts_judged_through are not held
    // again (one refused is not tried twice).
    std::optional<m110d_wn0_data_watch> wn0_watch;
    // start_from_mini_probes: one watch per frame structure with mini-probes, whose
    // starts are held and judged with the WN0 watch's.
    std::vector<m110d_probe_data_watch> probe_watches;
    std::vector<weak_candidate> data_starts;
    uint64_t data_starts_judged_through = 0;
    // The other starts that passed with the one taken, best first: a fade over the
    // preamble and the data's first period leaves the period after it the best (the
    // block then misaligned, refused), so on its refusal the next is taken.
    std::vector<weak_judgement> data_start_alternates;
    bool data_start_refused = false; // the burst a data start began was refused
    bool found_from_data = false;    // the burst's detection is such a start
    // Starts whole periods off the data's first can still decode their first block
    // within the bound (fitting worse): each start that passed is decoded in turn, those
    // that decode set aside with their excess disagreement, and the best of them taken
    // again, then kept (data_start_final).
    std::optional<weak_judgement> data_start_current;
    std::vector<std::pair<double, weak_judgement>> decoded_data_starts;
    bool data_start_final = false;
    // True: the data start being decoded is set aside (the next alternate, or the best
    // decoded, is taken next).
    bool set_data_start_aside(bool decoded, double excess);
    // A probe start's first block in (the mode its fields read): what its block's
    // boundary probe (the one after its second-to-last frame) says.
    struct boundary_verdict {
        enum kind_t {
            unknown,       // neither probe stands out there, nor a boundary near
            found,         // the boundary probe where the start puts it
            shorter_block, // a boundary probe a shorter block from it too: that
                           // interleaver's, the start `shift` frames onto its blocks
            refuted,       // a normal probe there, no boundary near
            moved,         // a boundary probe `shift` frames off
        } kind = unknown;
        int shift = 0;
        std::optional<m110d_mode> shorter;
    };
    boundary_verdict boundary_probes_of(const weak_judgement& j) const;
    // Sample n to the WN0 and mini-probe watches, the starts they propose held.
    void watch_data(uint64_t n);
    // A mini-probe watch's detection with its timing and offset read again on the probes
    // themselves (none: the samples are not all held).
    std::optional<m110d_probe_data_watch::detection>
    probe_detection_refined(const m110d_probe_data_watch& watch,
                            m110d_probe_data_watch::detection d) const;
    // Holds a start a watch proposed in time order, once, unless judged before.
    void hold_data_start(const weak_candidate& w);
    void reset_data_watches();
    uint64_t data_start_judged_end(const weak_candidate& w) const;
    uint64_t data_starts_judged_at() const;
    bool data_start_confirmed();
    void take_data_start(const weak_judgement& j);
    // A held peak's count (0) and WID read `side` symbols off its timing (and its other
    // path's), derotated by hz: the valid fields of a mode `possible` takes whose
    // symbols correlate best, with fields_z their correlation over its deviation.
    template <typename Possible>
    std::optional<m110d_fields> weak_fields_at(const weak_candidate& w,
                                               int side,
                                               double hz,
                                               double& fields_z,
                                               Possible possible) const;
    // The peaks judged together: true where one is a burst's (the most evident), found_*
    // set from it and weak_fields its count and WID; they leave the held ones.
    bool weak_detection_confirmed();
    bool found_weak = false; // the burst's detection is such a peak
    m110d_fields weak_fields;
    // Such a burst's WID is read on a preamble in a fade: the modes of its frame
    // structure and symbol set (the same channel LLRs: WN1 and WN2, WN3 and WN4) under
    // either constraint length may be its. Its first block's LLRs decide among them
    // (choose_wid_by_data) before its decoder-aided passes; empty once chosen.
    std::vector<std::pair<m110d_mode, unsigned>> wid_candidates;
    // The burst's detection is such a peak whose fields stood out less: refused where no
    // candidate decodes its first block.
    bool weak_fields_unsure = false;
    // Whether its first block decoded under a scrambler reading tried (then it is not
    // refused under another), and how often it did not (find_scrambler: refused once
    // both readings fail).
    bool weak_start_decoded = false;
    unsigned weak_start_failures = 0;
    // False: the burst was refused so (the search restarted after its preamble).
    bool choose_wid_by_data();
    // The count and WID chips combined over the paths at `at` and (unless 0) `other`,
    // each weighted by its gain over the known chips (maximal ratio), scaled to a largest
    // magnitude of 1; `deviation`: a Walsh symbol's correlation's in noise of the
    // chips' power. False where no gain is measured.
    bool combined_field_chips(size_t alignment,
                              uint64_t at,
                              uint64_t other,
                              double hz,
                              std::vector<cf>& chips,
                              double& deviation) const;
    // The 9 count and WID Walsh symbols' four correlations each.
    std::array<std::array<double, 4>, 9>
    field_correlations(const std::vector<cf>& chips, m110d_pn_alignment alignment) const;
    // The search's carrier offset (4.7 Hz coarse at best) refined on the known chips at
    // sample `at`: the phase slope over 8-chip chunks (+-150 Hz around it), then 32.
    double refined_offset_hz(uint64_t at, double hz) const;
    bool watch_pending = false; // the watch found one; its fields are not all in yet
    void commit(cd z, cd sent, bool known_symbol);
    // WN0 (wn0_symbol_decisions): a chip's window kept; at a Walsh symbol's last chip
    // the symbol decided and its chips committed. True at an interleaver block's end.
    bool wn0_chip(const m110d_symbol_role& role);
    // WN0 chip by chip (wn0_symbol_decisions false).
    bool wn0_chip_decided(cd z, const m110d_symbol_role& role);
    // WN0: the block's Walsh symbol read, its LLRs and how decisively (chips y, matched
    // to the channel, `first` the symbol's first Trinomial index).
    void wn0_symbol_read(const float* llr, const cf* y, size_t first);
    // Decoder-aided further passes (WN1-WN13, cfg.decoder_passes > 1).
    serial_tone_block_pass block_pass;
    int pending_slip = 0; // timing slip applied since the last symbol kept
    std::vector<uint32_t> fetch_order;
    void keep_for_passes(uint64_t k);
    // The channel between the mini-probes (cfg.interpolate_probes, WN1-WN13): anchors
    // on the probe before each data frame, the one after it and, within an interleaver
    // block, the one after the next frame; kept from the block's start while it may be
    // passed again.
    serial_tone_probe_anchors anchors;
    bool interpolating() const { return cfg.interpolate_probes && mode && mode->wn != 0; }
    bool anchors_for_frame(uint64_t s);
    bool measure_anchor(uint64_t first);
    // LLRs of decisions that err more than the equaliser's variance says, scaled down.
    double segment_error = 0, segment_variance = 0;
    unsigned segment_symbols = 0;
    void weigh_decision(cd z, cd decision, double variance, size_t llr_end);
    // The frame just equalised (cfg.backward_frames): its first data symbol, the sample
    // grid it began on, and per 32 symbols the forward decisions' squared error.
    double nearest_points = 0; // squared distance between the nearest points
    uint64_t frame_first = 0;
    int64_t frame_shift = 0;
    std::vector<double> forward_error;
    bool backward() const { return cfg.backward_frames && interpolating(); }
    void start_frame(uint64_t first, int64_t shift);
    bool frame_suspect() const;
    // The frame from burst symbol `first` equalised backward (its LLRs from
    // block_llr[frame_llr] on), with the decoded channel bits `labels` or (nullptr) its
    // own decisions.
    void equalise_frame_backward(uint64_t first,
                                 int64_t shift,
                                 double noise,
                                 size_t frame_llr,
                                 const uint8_t* labels = nullptr);
    // The block decoded as it stands and coded again: its channel bits.
    std::vector<uint8_t> block_coded_again();
    // last: the block's last pass (suspect frames are equalised backward too).
    void second_pass(bool last);
    // False when the burst was taken back to its preamble to be equalised again under
    // another scrambler reading (find_scrambler).
    bool decode_block();
    // The scrambler and tail-biting readings the data are taken under: the configured
    // ones, or (find_scrambler, find_tail_biting) the last ones a burst settled.
    m110d_readings data_readings;
    // The PN alignment and WID parity the burst's preamble read under.
    m110d_readings preamble_readings;
    // find_scrambler: the burst's first block not judged yet, so it may be equalised
    // again from its preamble.
    bool readings_open = false;
    scrambler_reading_judge scrambler_judge;
    double burst_hz = 0;         // the derotation the burst started with
    unsigned burst_sections = 0; // found_sections of the burst's detection
    // find_tail_biting: the burst's bits under the other phases, and where their EOM is.
    tail_biting_phase_search phase_search{ m110d_eom, m110d_eom_bits };
    // The burst's blocks under reliability_threshold, and the least reliability.
    size_t unreliable_blocks = 0;
    double least_reliability = std::numeric_limits<double>::infinity();
    // Of an EOM at `at` in `b` (whose end is a block's): on a byte boundary, zeros after
    // it to the block's end, as the transmitter fills it.
    void settle_tail_biting();
    // Block frequency-domain equalisation of the data (data_equaliser; WN1-WN13): the
    // burst's state from its first data frame (m110d_receiver_fde.cc).
    struct fde_state;
    std::unique_ptr<fde_state> fde;
    // Whether the burst's data take the block FDE (data_equaliser; decided once per
    // burst, at its first data symbol, from the mode and the preamble's channel).
    int fde_choice = -1;
    bool fde_chosen();
    bool choose_fde() const;
    // The data from the frame at `symbol` on, a frame at a time (as data()).
    bool fde_data(std::vector<m110d_burst>& done);
    // work(from, to) over [0, n) in ranges (run_ranges): with cfg.threads > 1 shared
    // with a helper thread (work must write disjoint outputs per index).
    void split_work(size_t n, const std::function<void(size_t, size_t)>& work) const;
    // ---- threads > 1 with the block FDE: each interleaver block decoded (its
    // decoder-aided passes, Viterbi and MAP pass) on a thread of its own while the
    // frames after it are equalised, which need nothing of its bits. What the frames
    // feed back (taps, the presence watch, the SNR report, the watch for a new
    // preamble at each point the data ran out of samples) waits in `unapplied` and is
    // applied in the order one thread takes, each block's decoding as it comes; where
    // a block ends the burst (EOM, signal lost, another scrambler reading) or the watch
    // cuts it, the frames after are dropped and the input is gone over again as it
    // arrived, chunk by chunk (replay_limits), so every thread count gives the same.
    struct block_job;
    struct frame_record;
    std::deque<frame_record> unapplied;
    // The input's totals at the chunks still to be gone over again (the first is the
    // input's limit now).
    std::deque<uint64_t> replay_limits;
    unsigned burst_blocks = 0; // blocks handed to decoding in the burst (attempt)
    bool watch_in_log = false; // the watch runs from unapplied's chunk ends
    // Decoders and cancelling equalisers for the blocks' threads, two blocks at a time.
    std::shared_ptr<m110d_block_decoder> job_decoders[2];
    std::shared_ptr<block_frequency_equaliser> job_cancellers[2];
    bool pipelined() const { return cfg.threads > 1 && replay_limits.empty(); }
    // process(): the stages over the input, and again over the chunks to go over.
    void run(std::vector<m110d_burst>& done);
    enum class waiting { none, all_but_newest, all };
    // Applies unapplied's records in order, waiting for the blocks' decoding as told;
    // true when the burst took another course (the records after dropped).
    bool apply_unapplied(waiting wait, std::vector<m110d_burst>& done);
    // The records from unapplied's front on dropped (their blocks still decoding told
    // to stop and kept in dropped_jobs, not waited for); the input gone over again from
    // the chunk end of the first (with `from_front`) or the next.
    void change_course(bool from_front);
    // Blocks dropped while decoding on their threads: joined before the next block is
    // handed (two blocks' threads at most) and when decoding is completed.
    std::vector<std::shared_ptr<block_job>> dropped_jobs;
    void join_dropped_jobs();
    // The block just complete handed to decoding (block_llr and the kept frames).
    std::shared_ptr<block_job> hand_to_decoding();
    // The decoder-aided passes and, for the burst's first block, its bits coded again
    // against its LLRs (find_scrambler); then the decoding (a thread's, or in order).
    void decode_passes(block_job& j) const;
    void decode_final(block_job& j) const;
    // decode_block's part in order: begun_again when the burst begins again from its
    // preamble; decoding when the first block's reading is judged and its decoding goes
    // on on a thread (committed at a later call).
    enum class committed { done, begun_again, decoding };
    committed commit_job(const std::shared_ptr<block_job>& job);
    // find_scrambler: the burst's first block as decoded under each reading (its passes
    // and agreement), kept while the burst may begin again: the stream's first burst
    // goes over it under one reading, the other, then often the first again, where the
    // same LLRs and spectra give the same passes (reused_first_attempt).
    std::shared_ptr<block_job> first_attempt[2];
    bool reused_first_attempt(block_job& j) const;
    // threads > 1, before a burst has told the readings apart: the first block under a
    // reading this burst has not judged has its passes on a thread while the burst
    // begins again under the other reading (the first judgement gives it whatever the
    // agreement; the second gives the first reading back more often than not, as a
    // transmitter of the default reading makes it); judged (in the order one thread
    // judges) before the next judgement or burst: the reading it gives.
    std::shared_ptr<block_job> deferred_judge;
    std::optional<x9_orientation> settle_deferred_judge();
    // A deferred judgement kept its own reading while the burst had gone on under the
    // other: the burst begins again under it, its first block taken as judged then.
    std::optional<x9_orientation> judged_kept;
    void apply_frame(const frame_record& r);
    bool watch_now(std::vector<m110d_burst>& done);
    void join_jobs();
    m110d_burst report() const;
    // search_from: where the search starts again (by default where the burst's
    // symbols end).
    void end_burst(bool eom,
                   std::vector<m110d_burst>& done,
                   std::optional<uint64_t> search_from = std::nullopt);
    // wn0_end_at_foreign_block: the sample the search starts again from when the WN0
    // block symbol k lies in is read as noise; whether the block just read is a later
    // one read as noise before any EOM; the burst ended before it.
    uint64_t wn0_block_search_from(uint64_t k) const;
    bool foreign_wn0_block() const;
    void end_burst_before_block(uint64_t k, std::vector<m110d_burst>& done);
    void hand_on_decoded(std::vector<m110d_burst>& done);
    // After a frame (or its probe), for both equalisers: the burst ends at its EOM or
    // where the probes say it is lost (true), else what is decoded goes on.
    bool burst_ended(bool block_end, bool matched, std::vector<m110d_burst>& done);
};

// The block frequency-domain equaliser's burst state (m110d_receiver_fde.cc).
struct m110d_receiver::state::fde_state {
    unsigned data = 0, probe = 0, block_symbols = 0, base = 0;
    block_frequency_equaliser equaliser;
    // The reference each probe kind (normal, boundary) shows its measurement window,
    // per precursor (rebuilt when the precursor moves).
    int precursor = 0;
    std::unique_ptr<probe_channel_estimator> estimator[2];
    std::vector<cf> probes[2]; // normal, boundary: as sent
    double residual_hz = 0;    // the rotation applied on top of the input's derotation
    std::vector<cd> y0, y1;    // T/2 observations from the probe before the frame on
    std::vector<cd> g[4];      // before (phases 0, 1), after (phases 0, 1)
    std::vector<cd> z;
    std::vector<cd> decisions;
    std::vector<cd> decided; // the data symbols' demapper decisions
    // The block's frames kept for decoder-aided passes, with their data's variance.
    std::vector<block_frequency_equaliser::block> kept;
    size_t kept_frames = 0;
    // A decoded block's kept frames, for the next (their buffers taken again).
    std::vector<block_frequency_equaliser::block> spare_kept;
    int64_t moved_frame = -1;    // the frame the grid last moved for
    bool placed = false;         // the window placed on the paths (first frame)
    std::vector<double> profile; // the paths' long-term power per tap

    explicit fde_state(const m110d_mode& mode)
        : data(mode.data_symbols),
          probe(mode.probe_symbols),
          block_symbols(mode.data_symbols + mode.probe_symbols),
          base(m110d_probe_shape_of(mode.probe_symbols)->base_length),
          equaliser(mode.data_symbols + mode.probe_symbols)
    {
        probes[0] = m110d_mini_probe(probe, false, probe);
        probes[1] = m110d_mini_probe(probe, true, probe);
        // The paths start near the grid (the preamble's timing): a few symbols of
        // pulse before them.
        set_precursor(std::min<int>(4, int(probe - base)));
        z.resize(block_symbols);
        decisions.resize(block_symbols);
    }
    // The delays measured: -precursor .. probe - base - precursor.
    int reach() const { return int(probe - base) - precursor; }
    void set_precursor(int p)
    {
        p = std::clamp(p, 0, int(probe - base));
        if (estimator[0] && p == precursor)
            return;
        precursor = p;
        for (int kind = 0; kind < 2; ++kind) {
            const auto from = probes[kind].begin() + (probe - base - unsigned(p));
            estimator[kind].reset(
                new probe_channel_estimator(std::vector<cf>(from, from + base)));
        }
    }
};

// One interleaver block's decoding (m110d_receiver_fde.cc): what it needs of the burst,
// copied or shared, so that it runs on a thread of its own whatever the receiver does
// meanwhile.
struct m110d_receiver::state::block_job {
    m110d_mode mode;
    std::shared_ptr<const m110d_demapper> demapper;
    std::shared_ptr<m110d_block_decoder> decoder;
    std::shared_ptr<block_frequency_equaliser> canceller; // or the burst's own:
    block_frequency_equaliser* cancel_with = nullptr;
    // threads > 1: the second thread's for its share of the passes' frames.
    std::unique_ptr<block_frequency_equaliser> second_canceller;
    std::vector<cf> probes[2]; // normal, boundary
    std::vector<uint32_t> fetch_order;
    unsigned constraint_length = 7;
    tail_biting_start tail_biting = tail_biting_start::first_pair_bit_7;
    bool k7_newest_bit_lsb = false;
    std::vector<float> llr;
    std::vector<block_frequency_equaliser::block> kept;
    size_t kept_frames = 0;
    bool judge = false; // the burst's first block under find_scrambler
    x9_orientation reading = x9_orientation::a; // the scrambler reading demapped under
    std::vector<float> llr_in;                  // judge: the LLRs before the passes
    bool judged = false;
    bool passes_done = false;
    bool decoded = false; // its final decoding done with its passes on a thread
    // Results.
    reencoding_agreement agreement;
    std::vector<uint8_t> bits;
    double reliability = 0;
    std::thread thread; // threads > 1: the passes and the decoding
    // Its thread's pieces, shared with the calling thread once that waits for it.
    piece_board board;
    // Its thread started on `work` (its pieces on the board), and joined: the calling
    // thread takes pieces meanwhile.
    void start_thread(std::function<void()> work);
    void join_helping();
    // Its record dropped while it decoded (the burst took another course): nothing
    // reads its results, so its thread stops at the next pass or frame.
    std::atomic<bool> dropped{ false };
    // Set by its thread as it ends (its results complete): committed without waiting.
    std::atomic<bool> finished{ false };
    // The block decoded as its LLRs stand and coded again: its channel bits (a long
    // block's Viterbi pieces shared with a second thread `concurrently`, the same bits).
    std::vector<uint8_t> coded_again(bool concurrently) const;
};

// A frame equalised (or, `boundary`, a point where the data ran out of samples: the
// watch for a new preamble runs there, over the input as it was), with what it feeds
// back, applied in order (apply_unapplied).
struct m110d_receiver::state::frame_record {
    bool boundary = false;
    uint64_t total = 0;        // boundary: the input's total then
    bool trim = false;         // boundary: the chunk's last (its input let go there)
    uint64_t symbol_after = 0; // the symbol the receiver is at after it
    double residual_hz = 0;
    bool block_end = false;
    bool applied = false; // its feedback (the block's decoding may still be going on)
    std::vector<cf> taps;
    std::vector<double> window_power;
    std::vector<cd> probe_z;
    bool boundary_probe = false;
    uint64_t probe_first = 0;
    double reported_error = 1.0;    // the SNR report's error per probe symbol
    std::optional<double> score;    // the prediction score, if any
    std::shared_ptr<block_job> job; // the block it completes
};

} // namespace phy
} // namespace hfstack
} // namespace gr

#endif
