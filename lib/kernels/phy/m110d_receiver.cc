/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "m110d_receiver.h"

#include "burst_snr.h"
#include "channel_tracking_equaliser.h"
#include "differential_products.h"
#include "m110d_decoder.h"
#include "m110d_transmitter.h"
#include "serial_tone_anchors.h"
#include "serial_tone_block_pass.h"
#include "serial_tone_channel.h"
#include "serial_tone_presence.h"
#include "serial_tone_samples.h"
#include "serial_tone_stages.h"

#include <algorithm>
#include <array>
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

constexpr unsigned sps = m110d_receiver::samples_per_symbol;
// A detection in a burst this strong cuts it without its fields read first (on one gain
// they may not read in fading; data alone stayed under it in every test).
constexpr double sure_cut_z = 5.5;
// A z the comb carries counts from this much over the threshold: the largest of up to 32
// sums crosses 4.0 in noise about twice a minute (refused by the field checks), 5.0 far
// less often (e^-25 per sum), and a preamble the comb finds is far over either.
constexpr double comb_margin = 1.0;
// fft_search: the known chips' z is computed again by dot product from this far under
// the threshold (every z a detection or the peak's choice sees is the dot product's).
constexpr double fft_exact_margin = 0.5;
// WN0's signal is there for a block whose Walsh symbols were read decisively: the mean
// over the block of the chosen pattern's correlation over sqrt(32 x the chips' energy)
// (1 in the clear, 0.58 at -3 dB per chip, about 0.13 for noise alone).
constexpr double wn0_match = 0.3;
// Data symbols whose decision errors are weighed together against the equaliser's
// variance (as the App C receiver's).
constexpr unsigned reliability_symbols = 32;
// A frame is equalised again backward when the mean squared error of some 32 of its
// decisions exceeds this share of the squared distance between nearest points (as the
// App C receiver's).
constexpr double backward_suspect_error = 0.1;
// WN0's decoder-aided pass: Walsh symbols either side whose decoded chips measure the
// channel a symbol is read again on.
constexpr size_t wn0_pass_reach = 3;

cf psk8(unsigned s) { return m110d_constellation(3)[s & 7]; }

using phase = serial_tone_stage;

// The 5 Walsh symbols the search matches (160 chips at 3 kHz), as points: the fixed
// section's last Walsh symbol (dibit 3 whether M is 1 or more; PN[0..31] under either
// alignment at 3 kHz, the 9th symbol of a 9-symbol section starting at chip 256) and the
// count field of the last super-frame (count 0).
std::vector<cf> known_chips(m110d_pn_alignment alignment, unsigned walsh_chips)
{
    std::vector<uint8_t> chips = m110d_preamble_section(
        { m110d_fixed_dibit_single }, m110d_pn_table::fixed, walsh_chips, alignment);
    const auto count = m110d_count_dibits(0);
    const std::vector<uint8_t> c = m110d_preamble_section(
        { count.begin(), count.end() }, m110d_pn_table::count, walsh_chips, alignment);
    chips.insert(chips.end(), c.begin(), c.end());
    std::vector<cf> points;
    for (uint8_t s : chips)
        points.push_back(psk8(s));
    return points;
}

// The point `base` or its opposite, whichever z is nearer (a Walsh chip adds 0 or 4).
cd antipodal_decision(cd z, cd base)
{
    return (z * std::conj(base)).real() >= 0 ? base : -base;
}

// WN0: log-likelihoods (up to a common term) of the four dibits a Walsh symbol may
// carry, from its 32 chips' equaliser windows (`width` T/2 samples each, chip j's at
// windows[j * width]), `chips[j]` the Trinomial points under its chips, `taps` the
// tracked channel (as the equaliser's taps(), zero where no path is tracked), `noise`
// per T/2 sample and `tap_error` the variance of each tap's error (per position).
// Despread on every tracked T/2 position q: y_q(d) = sum_j conj(c_d[j]) w_j[q], c_d the
// dibit's chips, about 32 g_q + noise of variance 32 N0 under the dibit sent and noise
// alone under the others (the patterns are orthogonal). With the channel known to within
// tap_error (g_q ~ CN(g^_q, e)), the log-likelihood ratio of d against the others is, per
// position, |y|^2 (1 / (32 N0) - 1 / v) + 2 Re(conj(32 g^_q) y) / v, v = 32^2 e + 32 N0:
// coherent where the estimate is good, energy-combining (the 110A 75 bps receiver's
// metric) where it is not.
std::array<double, 4> wn0_symbol_metrics(const std::vector<cd>& windows,
                                         size_t width,
                                         const cf* chips,
                                         const std::vector<cd>& taps,
                                         double noise,
                                         const std::vector<double>& tap_error)
{
    constexpr double n = m110d_walsh_data_chips;
    const double despread_noise = n * std::max(noise, 1e-12);
    std::array<double, 4> metric{};
    for (size_t q = 0; q < width && q < taps.size(); ++q) {
        if (taps[q] == cd())
            continue;
        // The Walsh patterns repeat every 4 chips: despread per chip position mod 4.
        cd by_position[4];
        for (unsigned j = 0; j < m110d_walsh_data_chips; ++j)
            by_position[j % 4] += std::conj(cd(chips[j])) * windows[j * width + q];
        const double v = n * n * tap_error[q] + despread_noise;
        const double energy_weight = 1.0 / despread_noise - 1.0 / v;
        const cd coherent = std::conj(n * taps[q]) * (2.0 / v);
        for (unsigned d = 0; d < 4; ++d) {
            cd y;
            for (unsigned r = 0; r < 4; ++r)
                y += m110d_walsh_chip(d, r) ? -by_position[r] : by_position[r];
            metric[d] += energy_weight * std::norm(y) + (coherent * y).real();
        }
    }
    return metric;
}

} // namespace

unsigned m110d_delay_spread_symbols(unsigned bandwidth_khz, double delay_spread_ms)
{
    // Pulse tail and timing margin: the 3 kHz span's 13 symbols less 2 ms at 2400 Bd.
    constexpr unsigned margin_symbols = 8;
    const double symbols = delay_spread_ms * 1e-3 * m110d_baud_per_khz * bandwidth_khz;
    return unsigned(std::ceil(symbols - 1e-9)) + margin_symbols;
}

// The preamble Walsh symbol's chips at the configured bandwidth (32 * BW / 3, or as the
// preamble_walsh reading caps it); the constructor has checked the bandwidth.
unsigned walsh_chips_of(const m110d_receiver_config& c)
{
    const auto m = m110d_mode_for(c.bandwidth_khz, 6, m110d_interleaver::short_);
    return m110d_preamble_walsh_chips(*m, {}, c.readings.preamble_walsh);
}

// The longest frame (U + K) of the bandwidth's modes, in symbols.
unsigned longest_frame_of(unsigned bw_khz)
{
    unsigned longest = 0;
    for (const m110d_mode& m : m110d_modes_at(bw_khz))
        longest = std::max(longest, m.data_symbols + m.probe_symbols);
    return longest;
}

size_t power_of_two_over(size_t n)
{
    size_t p = 1;
    while (p <= n)
        p <<= 1;
    return p;
}

struct m110d_receiver::state {
    m110d_receiver_config cfg;
    // The bandwidth's symbol rate (800 Bd per kHz); every sample count below is in
    // symbols at 4 samples each, the 3 kHz receiver's grid at every bandwidth.
    const double symbol_rate = m110d_baud_per_khz * cfg.bandwidth_khz;
    // A preamble Walsh symbol (32 at 3 kHz), the known chips the search matches (last
    // fixed symbol and the count field of 0), and with the WID field after them.
    const unsigned walsh_chips = walsh_chips_of(cfg);
    const unsigned known_symbols = 5 * walsh_chips;
    const unsigned preamble_end = 10 * walsh_chips;
    // Differential products kept behind the search (4096 at 3 kHz).
    const size_t history_symbols = size_t(128) * walsh_chips;
    // Samples past a peak before it is taken: the count field of 0 is four times the
    // count PN (at 3 kHz), so the correlation has side peaks one, two and three Walsh
    // symbols either side of the true one (at 0.76, 0.55 and 0.35 of it); the largest
    // within three Walsh symbols and a bit is taken.
    const size_t peak_window = size_t(3 * walsh_chips + 2) * sps;
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
    const size_t comb_ring =
        power_of_two_over(size_t(comb_section_chips + 31 * superframe_chips) * sps);
    const size_t comb_peak_window = size_t(superframe_chips + 3 * walsh_chips + 2) * sps;
    // Samples kept behind the equaliser: a frame equalised again backward once its data
    // are in, and the equaliser's reach (448 symbols at 3 kHz).
    const unsigned frame_margin =
        std::max(448u, longest_frame_of(cfg.bandwidth_khz) + 128);
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
        std::vector<cf> section_sum;
        std::vector<float> section_energy;
        std::vector<uint64_t> section_at;
    };
    std::vector<alignment_search> alignments;
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
    std::unique_ptr<m110d_demapper> demapper;
    std::unique_ptr<m110d_block_decoder> decoder;
    std::vector<float> block_llr;
    std::vector<cd> walsh_windows; // WN0: the windows of the Walsh symbol under way
    // WN0 (wn0_decoder_pass): the block's Walsh symbols' windows and sample grids.
    std::vector<cd> wn0_block_windows;
    std::vector<int64_t> wn0_block_shift;
    // WN0: the block read again, each Walsh symbol on the channel measured over the
    // decoded symbols around it.
    void wn0_decoder_pass();
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

    explicit state(const m110d_receiver_config& c) : cfg(c), data_readings(c.readings)
    {
        const m110d_pn_alignment other =
            c.readings.pn_alignment == m110d_pn_alignment::per_symbol
                ? m110d_pn_alignment::continuous
                : m110d_pn_alignment::per_symbol;
        alignments.reserve(2);
        for (m110d_pn_alignment a : { c.readings.pn_alignment, other }) {
            if (a == other && !c.find_preamble_readings)
                break;
            std::vector<cf> base;
            for (uint8_t s : m110d_preamble_section(
                     { 0, 0, 0, 0, 0 }, m110d_pn_table::wid, walsh_chips, a))
                base.push_back(psk8(s));
            const std::vector<cf> chips = known_chips(a, walsh_chips);
            // At 24 kHz a Walsh symbol is the PN's 256 chips: both alignments are the
            // same preamble, searched for once (and reported as the configured one).
            if (!alignments.empty() && chips == alignments[0].known &&
                base == alignments[0].wid_base)
                break;
            alignments.push_back(
                { a,
                  chips,
                  std::move(base),
                  differential_correlator(chips,
                                          history_symbols,
                                          fft_search(),
                                          cfg.detection_threshold - fft_exact_margin) });
            if (c.integrate_superframes > 0) {
                std::vector<cf> section;
                for (uint8_t s : m110d_preamble_section(
                         { m110d_fixed_dibits.begin(), m110d_fixed_dibits.begin() + 8 },
                         m110d_pn_table::fixed,
                         walsh_chips,
                         a))
                    section.push_back(psk8(s));
                alignment_search& added = alignments.back();
                added.section.reset(new differential_correlator(
                    section, history_symbols, fft_search(), cfg.detection_threshold));
                added.section_sum.assign(comb_ring, cf());
                added.section_energy.assign(comb_ring, 0.0f);
                added.section_at.assign(comb_ring, 0);
            }
        }
    }
    // The search's correlations by FFT (fft_search, above 3 kHz).
    bool fft_search() const { return cfg.fft_search && cfg.bandwidth_khz > 3; }
    // The search's z at sample n for alignment a: the known chips' alone, or with
    // integrate_superframes the largest over 1, 2, ... earlier fixed sections added
    // (coherently: each sum's angle is the same carrier turn). comb: sections counted.
    double search_z(alignment_search& a, uint64_t n, cd& sum, unsigned& sections);

    bool search();
    bool preamble();
    bool data(std::vector<m110d_burst>& done);
    bool watch(std::vector<m110d_burst>& done);
    void trim();
    void restart_search(uint64_t from);
    void begin_burst();
    bool read_fields();
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
    double burst_hz = 0;            // the derotation the burst started with
    unsigned burst_sections = 0;    // found_sections of the burst's detection
    // find_tail_biting: the burst's bits under the other phases, and where their EOM is.
    tail_biting_phase_search phase_search{ m110d_eom, m110d_eom_bits };
    // The burst's blocks under reliability_threshold, and the least reliability.
    size_t unreliable_blocks = 0;
    double least_reliability = std::numeric_limits<double>::infinity();
    // Of an EOM at `at` in `b` (whose end is a block's): on a byte boundary, zeros after
    // it to the block's end, as the transmitter fills it.
    void settle_tail_biting();
    m110d_burst report() const;
    void end_burst(bool eom, std::vector<m110d_burst>& done);
    void hand_on_decoded(std::vector<m110d_burst>& done);
};

m110d_receiver::m110d_receiver(const m110d_receiver_config& config)
{
    check_tracking_settings(
        config.forgetting, config.decision_weight, config.equaliser_solve_interval);
    check_tracking_settings(
        config.forgetting, config.decision_weight, config.qam64_solve_interval);
    check_tracking_settings(
        config.wn0_forgetting, config.decision_weight, config.equaliser_solve_interval);
    if (!(config.wn0_tap_drift >= 0))
        throw std::invalid_argument("m110d_receiver: wn0_tap_drift must be 0 or more");
    if (config.decoder_passes == 0)
        throw std::invalid_argument("m110d_receiver: decoder_passes must be at least 1");
    if (m110d_modes_at(config.bandwidth_khz).empty())
        throw std::invalid_argument(
            "m110d_receiver: bandwidth_khz " + std::to_string(config.bandwidth_khz) +
            " is none of Appendix D's (3, 6, ..., 24, 30, 36, 42, 48)");
    d.reset(new state(config));
}

m110d_receiver::~m110d_receiver() = default;

bool m110d_receiver::carrier_detected() const { return d->stage != phase::search; }

uint64_t m110d_receiver::samples() const { return d->input.total(); }

uint64_t m110d_receiver::refused_preambles() const { return d->refused; }

void m110d_receiver::tap_symbols(std::vector<cf>* symbols) { d->symbol_tap = symbols; }

void m110d_receiver::process(const cf* x, size_t n, std::vector<m110d_burst>& done)
{
    // NaN or infinity would poison the correlator's running sums and the equaliser for
    // good; huge finite values would overflow their squares.
    d->clean.assign(x, x + n);
    for (cf& v : d->clean)
        if (!std::isfinite(v.real()) || !std::isfinite(v.imag()) ||
            std::abs(v.real()) > 1e15f || std::abs(v.imag()) > 1e15f)
            v = cf();
    d->input.append(d->clean.data(), n);
    run_serial_tone_stages(*d, done);
}

void m110d_receiver::state::trim()
{
    uint64_t keep = stage == phase::search     ? candidate
                    : stage == phase::preamble ? start
                                               : start + symbol * sps;
    keep = std::min({ keep, candidate, input.total() });
    if (watch_pending)
        keep = std::min(keep, found_at);
    // An open peak becomes the burst's start when taken: a peak the super-frame comb
    // carries is held a super-frame and more (comb_peak_window), further back than the
    // margin below (a preamble read from released samples crashed: WN2/3kHz/L, poor,
    // 4 dB, 300 s, channel seed 4).
    if (peak.open)
        keep = std::min(keep, peak.at);
    // find_scrambler: the burst may be equalised again from its preamble.
    if (stage == phase::data && readings_open)
        keep = std::min(keep, start);
    // The block's last decoder-aided pass equalises its suspect frames backward again.
    if (stage == phase::data && block_pass.active() && cfg.backward_frames)
        keep = std::min(keep, start + block_pass.first_symbol() * sps);
    // The equaliser's window reaches back its precursor and the timing shift; the
    // super-frame sections (integrate_superframes) are correlated 8 Walsh symbols behind
    // the search; a frame (up to 360 data symbols) is equalised again backward once its
    // data are in.
    uint64_t margin =
        std::max(cfg.integrate_superframes > 0 ? 128 + comb_section_chips + 8 : 128,
                 frame_margin) *
        sps;
    // Until the fields are read, the super-frames the comb added (superframe_fields).
    if (cfg.integrate_superframes > 0 && (stage != phase::data || !mode || readings_open))
        margin += uint64_t(cfg.integrate_superframes) * superframe_chips * sps;
    keep = keep > margin ? keep - margin : 0;
    input.release_before(keep);
}

void m110d_receiver::state::restart_search(uint64_t from)
{
    restart_serial_tone_search(*this, from, sps);
    watch_pending = false;
}

double m110d_receiver::state::search_z(alignment_search& a,
                                       uint64_t n,
                                       cd& sum,
                                       unsigned& sections)
{
    cf known_sum;
    const double z = a.correlator.z_at(input, n, known_sum);
    sum = cd(known_sum);
    sections = 0;
    // Not in a burst: data with mini-probes (the same every frame, and frames divide a
    // super-frame) add up over the comb too (z 5-9 in WN1 data at 30 dB), so the watch
    // for a new preamble uses the known chips alone. The ring is not kept then either: a
    // preamble after the burst has all its super-frames after the search's restart.
    if (!a.section || stage != phase::search)
        return z;
    // This sample's section sum: the section that would end where the known chips begin.
    const uint64_t back = uint64_t(comb_section_chips) * sps;
    if (n >= back + sps) {
        const uint64_t m = n - back;
        cf s;
        const double zs = a.section->z_at(input, m, s);
        const size_t i = size_t(m % comb_ring);
        a.section_sum[i] = s;
        a.section_energy[i] = zs > 0 ? float(std::norm(s) / (zs * zs)) : 0.0f;
        a.section_at[i] = m + 1;
    }
    // Squared z's compared (no square roots per term).
    double energy = z > 0 ? std::norm(sum) / (z * z) : 0.0;
    const double floor = cfg.detection_threshold + comb_margin;
    double best2 = std::max(z * z, floor * floor);
    cd total = sum;
    for (unsigned j = 0; j < cfg.integrate_superframes; ++j) {
        const uint64_t offset =
            (uint64_t(comb_section_chips) + uint64_t(j) * superframe_chips) * sps;
        if (n < offset + sps)
            break;
        const uint64_t m = n - offset;
        const size_t i = size_t(m % comb_ring);
        if (a.section_at[i] != m + 1 || m < comb_from)
            break;
        total += cd(a.section_sum[i]);
        energy += a.section_energy[i];
        if (std::norm(total) > best2 * energy) {
            best2 = std::norm(total) / energy;
            sum = total;
            sections = j + 1; // section 0 is this super-frame's own first 8 symbols
        }
    }
    return sections > 0 ? std::sqrt(best2) : z;
}

bool m110d_receiver::state::search()
{
    const uint64_t span = uint64_t(known_symbols) * sps;
    while (candidate + span < input.total()) {
        const uint64_t n = candidate++;
        for (size_t a = 0; a < alignments.size(); ++a) {
            cd sum;
            unsigned sections = 0;
            const double z = search_z(alignments[a], n, sum, sections);
            if (peak.offer(z, n, sum, cfg.detection_threshold)) {
                peak_alignment = a;
                peak_comb = sections > 0;
                peak_sections = sections;
            }
        }
        if (peak.taken(n, peak_comb ? comb_peak_window : peak_window)) {
            found_alignment = peak_alignment;
            found_z = peak.z;
            found_sections = peak_comb ? peak_sections : 0;
            found_at = peak.at;
            found_hz = peak.offset_hz(symbol_rate);
            return true;
        }
    }
    return false;
}

bool m110d_receiver::state::watch(std::vector<m110d_burst>& done)
{
    // Only past our own preamble.
    // A detection cuts the burst when it is strong (sure_cut_z), or else once its count
    // and WID read as a preamble's: fading data cross the search's threshold.
    return watch_for_new_preamble(
        *this, start + uint64_t(preamble_end) * sps, done, [this] {
            for (;;) {
                if (!watch_pending) {
                    if (!search())
                        return false;
                    watch_pending = true;
                }
                if (found_at + uint64_t(preamble_end + 8) * sps >= input.total())
                    return false;
                watch_pending = false;
                if (found_z >= sure_cut_z || new_preamble_reads(found_at, found_hz))
                    return true;
            }
        });
}

bool m110d_receiver::state::preamble()
{
    // The known chips, the WID and the channel's reach beyond them must be in.
    if (start + uint64_t(preamble_end + 64) * sps >= input.total())
        return false;
    // Fine offset: the phase slope over the known chips, 8-chip chunks (+-150 Hz around
    // the coarse angle), then 32.
    burst_alignment = &alignments[found_alignment];
    const std::vector<cf>& known = burst_alignment->known;
    double hz = found_hz;
    if (found_sections > 1)
        hz = superframes_offset_hz(found_sections - 1, hz);
    else
        for (unsigned chunk : { 8u, 32u }) {
            const std::vector<cf> y =
                symbols_at_offset(input, start, known_symbols, hz, symbol_rate);
            cd turn;
            add_turns(y, known, 0, known_symbols, chunk, turn);
            hz += slope_hz(turn, chunk, symbol_rate);
        }
    double power = 0;
    for (unsigned k = 0; k < known_symbols; ++k)
        power += std::norm(input.at(start + uint64_t(k) * sps));
    reference_power = power / known_symbols;
    input.start_derotation(start, hz);
    burst_hz = hz;
    burst_sections = found_sections;
    readings_open = cfg.find_scrambler;
    scrambler_judge.start_burst();
    begin_burst();
    return true;
}

void m110d_receiver::state::begin_burst()
{
    channel_tracking_equaliser_config tracking;
    tracking.forgetting = scaled_forgetting(cfg.forgetting);
    tracking.solve_interval = cfg.equaliser_solve_interval * time_scale;
    tracking.decision_weight = cfg.decision_weight;
    tracking.time_scale = time_scale;
    const std::vector<cf>& known = burst_alignment->known;
    serial_tone_channel_start channel =
        start_serial_tone_channel(input,
                                  start,
                                  known,
                                  delay_spread_symbols,
                                  tracking,
                                  cd(std::sqrt(reference_power)),
                                  1e-3);
    equaliser = std::move(channel.equaliser);
    timing_shift = channel.timing_shift;
    symbol = equaliser->channel_symbols();
    timing_checked = ~uint64_t(0);
    frequency_drift_hz = 0;
    window.assign(equaliser->window_samples(), cd());
    mode.reset();
    field_chips.clear();
    for (unsigned k = walsh_chips; k < symbol && k < known_symbols; ++k)
        field_chips.push_back(known[k]); // the count chips the equaliser starts past
    block_llr.clear();
    block_pass.end();
    pending_slip = 0;
    anchors.clear();
    segment_error = segment_variance = 0;
    segment_symbols = 0;
    walsh_windows.clear();
    wn0_block_windows.clear();
    wn0_block_shift.clear();
    wn0_chips.clear();
    walsh_match = 0;
    tapped = 0;
    bits.clear();
    eom_at = no_eom;
    eom_searched = 0;
    phase_search.clear();
    unreliable_blocks = 0;
    least_reliability = std::numeric_limits<double>::infinity();
    streamed.restart();
    block_decoded = false;
    presence.start(reference_power);
    snr_report.start();
    known_error = 0;
    stage = phase::data;
}

std::optional<m110d_fields>
m110d_receiver::state::fields_of(const std::vector<cf>& chips,
                                 m110d_pn_alignment alignment) const
{
    // Under the configured WID parity reading, or (find_preamble_readings) the one whose
    // checks pass with the larger correlation. A count other than 0 (the search matched
    // count 0) or a WN/interleaver pair App D lacks is no preamble.
    std::optional<m110d_fields> f;
    for (m110d_wid_parity parity :
         { m110d_wid_parity::checksum, m110d_wid_parity::caption_d2_zero }) {
        if (parity != cfg.readings.wid_parity && !cfg.find_preamble_readings)
            continue;
        const auto g = m110d_read_fields(chips.data(), walsh_chips, alignment, parity);
        if (g &&
            (!f || g->correlation > f->correlation ||
             (g->correlation == f->correlation && parity == cfg.readings.wid_parity)))
            f = g;
    }
    if (!f || f->count != 0 ||
        !m110d_mode_for(cfg.bandwidth_khz, f->wid.wn, f->wid.interleaver))
        return std::nullopt;
    return f;
}

bool m110d_receiver::state::new_preamble_reads(uint64_t at, double hz) const
{
    // One complex gain over the known chips (the strongest path at the detected timing),
    // the count and WID read from the samples it derotates.
    const alignment_search& a = alignments[found_alignment];
    const std::vector<cf> y = symbols_at_offset(input, at, preamble_end, hz, symbol_rate);
    cd h;
    for (unsigned k = 0; k < known_symbols; ++k)
        h += cd(y[k]) * std::conj(cd(a.known[k]));
    if (std::abs(h) == 0)
        return false;
    const cf turn(std::conj(h) / std::abs(h));
    std::vector<cf> chips;
    for (unsigned k = walsh_chips; k < preamble_end; ++k)
        chips.push_back(y[k] * turn);
    return fields_of(chips, a.alignment).has_value();
}

std::vector<cf> m110d_receiver::state::fixed_section() const
{
    std::vector<cf> fixed;
    for (uint8_t c :
         m110d_preamble_section({ m110d_fixed_dibits.begin(), m110d_fixed_dibits.end() },
                                m110d_pn_table::fixed,
                                walsh_chips,
                                burst_alignment->alignment))
        fixed.push_back(psk8(c));
    return fixed;
}

double m110d_receiver::state::superframes_offset_hz(unsigned earlier, double hz) const
{
    // 8-chip chunks first (+-150 Hz around the search's angle, as on the 160 chips
    // alone: three equal static paths turn that angle by tens of Hz), then 32.
    const std::vector<cf>& known = burst_alignment->known;
    const std::vector<cf> fixed = fixed_section();
    for (unsigned chunk : { 8u, 32u }) {
        cd turn;
        add_turns(symbols_at_offset(input, start, known_symbols, hz, symbol_rate),
                  known,
                  0,
                  known_symbols,
                  chunk,
                  turn);
        for (unsigned j = 0; j <= earlier; ++j) {
            const uint64_t back =
                (uint64_t(j) * superframe_chips + 8 * walsh_chips) * sps;
            if (start < back || start - back < input.base())
                break;
            add_turns(symbols_at_offset(
                          input, start - back, unsigned(fixed.size()), hz, symbol_rate),
                      fixed,
                      0,
                      fixed.size(),
                      chunk,
                      turn);
        }
        hz += slope_hz(turn, chunk, symbol_rate);
    }
    return hz;
}

std::vector<cf> m110d_receiver::state::superframe_fields(unsigned earlier,
                                                         unsigned& count) const
{
    const m110d_pn_alignment alignment = burst_alignment->alignment;
    const std::vector<cf> fixed = fixed_section();
    const unsigned fixed_chips = 9 * walsh_chips, field_chips_n = 9 * walsh_chips;
    const unsigned count_chips = 4 * walsh_chips;
    std::vector<std::vector<cf>> count_points(m110d_max_superframes);
    for (unsigned c = 0; c < m110d_max_superframes; ++c) {
        const auto dibits = m110d_count_dibits(c);
        for (uint8_t chip : m110d_preamble_section({ dibits.begin(), dibits.end() },
                                                   m110d_pn_table::count,
                                                   walsh_chips,
                                                   alignment))
            count_points[c].push_back(psk8(chip));
    }
    // Each super-frame's count and WID chips, weighted by its gain.
    std::vector<std::vector<cd>> weighted;
    const double hz = input.offset_hz();
    for (unsigned j = 0; j <= earlier && j < m110d_max_superframes; ++j) {
        const uint64_t back = (uint64_t(j) * superframe_chips + 8 * walsh_chips) * sps;
        if (start < back || start - back < input.base())
            break;
        const uint64_t from = start - back;
        // With the next super-frame's fixed section after it (all but the last).
        const unsigned length = fixed_chips + field_chips_n + (j > 0 ? fixed_chips : 0);
        if (from + uint64_t(length) * sps >= input.total())
            break;
        const std::vector<cf> y = symbols_at_offset(input, from, length, hz, symbol_rate);
        // The gain over the fixed section before the fields and (j > 0) the one after
        // them, linear in between: on F.1487 poor the channel turns within the 0.24 s of
        // a super-frame (with the gain before alone WN1's fields at 2 dB did not read).
        cd before, after;
        for (unsigned k = 0; k < fixed_chips; ++k) {
            before += cd(y[k]) * std::conj(cd(fixed[k]));
            if (j > 0)
                after += cd(y[fixed_chips + field_chips_n + k]) * std::conj(cd(fixed[k]));
        }
        const double centre_before = 0.5 * fixed_chips;
        const double centre_after = centre_before + fixed_chips + field_chips_n;
        std::vector<cd> chips(field_chips_n);
        for (unsigned k = 0; k < field_chips_n; ++k) {
            const double t =
                (fixed_chips + k - centre_before) / (centre_after - centre_before);
            const cd h = j > 0 ? before + t * (after - before) : before;
            chips[k] = cd(y[fixed_chips + k]) * std::conj(h);
        }
        weighted.push_back(std::move(chips));
    }
    // The count of the super-frame found (super-frame j back carries it plus j): the one
    // whose count fields match best, summed over the super-frames.
    double best = -std::numeric_limits<double>::infinity();
    count = 0;
    for (unsigned c = 0; c + weighted.size() <= m110d_max_superframes; ++c) {
        double match = 0;
        for (size_t j = 0; j < weighted.size(); ++j) {
            cd sum;
            for (unsigned k = 0; k < count_chips; ++k)
                sum += weighted[j][k] * std::conj(cd(count_points[c + j][k]));
            match += sum.real();
        }
        if (match > best) {
            best = match;
            count = c;
        }
    }
    // Combined, each count field turned into the one the found super-frame's carries.
    std::vector<cd> sum(field_chips_n);
    for (size_t j = 0; j < weighted.size(); ++j)
        for (unsigned k = 0; k < field_chips_n; ++k)
            sum[k] += k < count_chips
                          ? weighted[j][k] * std::conj(cd(count_points[count + j][k])) *
                                cd(count_points[count][k])
                          : weighted[j][k];
    std::vector<cf> chips;
    for (const cd& c : sum)
        chips.push_back(cf(c));
    return chips;
}

bool m110d_receiver::state::read_fields()
{
    std::optional<m110d_fields> f = fields_of(field_chips, burst_alignment->alignment);
    count_ahead = 0;
    if (found_sections > 1) {
        // Read over the super-frames, which outweigh the last one; and a count they read
        // as other than 0 refuses the preamble whatever the last one's read: the comb
        // also finds earlier super-frames (whose count fields share Walsh symbols with
        // count 0's), and there the equaliser, trained on count 0's chips as known, read
        // count 0 (WN8/3kHz/L, poor, 22 dB, M = 20, 300 s, channel seed 1: a burst begun
        // at the fourth super-frame, its data lost, the real one after it unmatched).
        unsigned count = 0;
        const std::vector<cf> combined = superframe_fields(found_sections - 1, count);
        if (count == 0) {
            if (const std::optional<m110d_fields> g =
                    fields_of(combined, burst_alignment->alignment))
                f = g;
        } else {
            f.reset();
            // Its WID must read as well for the last super-frame to be sought.
            for (m110d_wid_parity parity :
                 { m110d_wid_parity::checksum, m110d_wid_parity::caption_d2_zero }) {
                const auto other = m110d_read_fields(
                    combined.data(), walsh_chips, burst_alignment->alignment, parity);
                if (other && other->count == count)
                    count_ahead = count;
            }
        }
    }
    if (!f)
        return false;
    mode = m110d_mode_for(cfg.bandwidth_khz, f->wid.wn, f->wid.interleaver);
    constraint_length = f->wid.constraint_length;
    preamble_readings.pn_alignment = burst_alignment->alignment;
    preamble_readings.wid_parity = f->parity;
    const unsigned nb = m110d_bits_per_symbol(mode->wn);
    if (mode->wn != 0)
        demapper.reset(new m110d_demapper(*mode, data_readings));
    decoder.reset(new m110d_block_decoder(
        *mode, constraint_length, data_readings.tail_biting, cfg.k7_newest_bit_lsb));
    fetch_order = m110d_fetch_order(*mode);
    nearest_points = std::numeric_limits<double>::infinity();
    const std::vector<cf>& points = m110d_constellation(m110d_bits_per_symbol(mode->wn));
    for (size_t i = 0; i < points.size(); ++i)
        for (size_t j = i + 1; j < points.size(); ++j)
            nearest_points =
                std::min(nearest_points, double(std::norm(points[i] - points[j])));
    if (mode->wn != 0) {
        anchors.set_probe(mode->probe_symbols,
                          m110d_probe_shape_of(mode->probe_symbols)->base_length);
        anchors.set_whole_spread_interval(time_scale);
    }
    // 64QAM and 256QAM: fresher solutions following the tracked channel. The data's
    // mean power on the probes' scale (QAM as printed: under 1).
    const bool dense = nb >= 6;
    equaliser->set_follow_channel(dense);
    equaliser->set_solve_interval(
        (dense ? cfg.qam64_solve_interval : cfg.equaliser_solve_interval) * time_scale);
    double power = 1;
    if (mode->wn != 0 && nb > 3) {
        power = 0;
        for (cf p : m110d_constellation(nb))
            power += std::norm(p);
        power /= double(m110d_constellation(nb).size());
    }
    equaliser->set_symbol_power(power);
    if (mode->wn == 0 && cfg.wn0_symbol_decisions)
        equaliser->set_forgetting(scaled_forgetting(cfg.wn0_forgetting));
    if (mode->wn == 0)
        readings_open = false; // WN0 has the Trinomial scrambler only
    return true;
}

void m110d_receiver::state::commit(cd z, cd sent, bool known_symbol)
{
    equaliser->decide(sent, known_symbol);
    if (known_symbol) {
        presence.add_known(z, sent);
        snr_report.add(std::norm(z - sent), double(symbol) / symbol_rate);
    }
}

void m110d_receiver::state::wn0_symbol_read(const float* llr, const cf* y, size_t first)
{
    block_llr.insert(block_llr.end(), llr, llr + 2);
    // How decisively the symbol read: the chosen pattern's correlation.
    const auto& trinomial = m110d_trinomial_sequence();
    const unsigned dibit = unsigned(llr[0] < 0) << 1 | unsigned(llr[1] < 0);
    cd c;
    double energy = 0;
    for (unsigned j = 0; j < m110d_walsh_data_chips; ++j) {
        const unsigned chip = m110d_wn0_walsh_chip(dibit, j) +
                              trinomial[(first + j) % m110d_trinomial_period];
        c += cd(y[j]) * std::conj(cd(psk8(chip)));
        energy += std::norm(y[j]);
    }
    walsh_match +=
        energy > 0 ? c.real() / std::sqrt(m110d_walsh_data_chips * energy) : 0.0;
}

bool m110d_receiver::state::wn0_chip_decided(cd z, const m110d_symbol_role& role)
{
    // Chip `position` of Walsh symbol `frame`: its Trinomial point or the opposite.
    const size_t in_block = size_t(role.frame % mode->frames_per_block);
    const auto& trinomial = m110d_trinomial_sequence();
    const size_t first = in_block * m110d_walsh_data_chips;
    const cd base(psk8(trinomial[(first + role.position) % m110d_trinomial_period]));
    commit(z, antipodal_decision(z, base), false);
    if (symbol_tap) {
        symbol_tap->push_back(cf(z * std::conj(base)));
        ++tapped;
    }
    wn0_chips.push_back(cf(z));
    if (wn0_chips.size() < m110d_walsh_data_chips)
        return false;
    float llr[2];
    m110d_wn0_demap(
        wn0_chips.data(), in_block, std::max(1e-3, equaliser->estimate_variance()), llr);
    wn0_symbol_read(llr, wn0_chips.data(), first);
    wn0_chips.clear();
    return in_block + 1 == mode->frames_per_block;
}

bool m110d_receiver::state::wn0_chip(const m110d_symbol_role& role)
{
    // The chips wait for their Walsh symbol's decision before the channel learns them:
    // decided one by one at WN0's rows (-6 dB per chip) a quarter of them were wrong,
    // and the tracker followed those.
    walsh_windows.insert(walsh_windows.end(), window.begin(), window.end());
    const size_t width = window.size();
    if (walsh_windows.size() < m110d_walsh_data_chips * width)
        return false;
    const size_t in_block = size_t(role.frame % mode->frames_per_block);
    const auto& trinomial = m110d_trinomial_sequence();
    const size_t first = in_block * m110d_walsh_data_chips;
    cf base[m110d_walsh_data_chips];
    for (unsigned j = 0; j < m110d_walsh_data_chips; ++j)
        base[j] = psk8(trinomial[(first + j) % m110d_trinomial_period]);
    // The channel as tracked up to the symbol before; its taps' error variance about
    // the RLS's (1 - forgetting) of the noise, and a share of their own power for the
    // fading since (and a path the tracker lags).
    const std::vector<cd>& taps = equaliser->taps();
    const double noise = equaliser->noise();
    const double error = noise * (1.0 - equaliser->forgetting());
    double tap_energy = 0;
    for (const cd& g : taps)
        tap_energy += std::norm(g);
    const std::vector<double> errors(
        taps.size(), error + cfg.wn0_tap_drift * tap_energy / double(taps.size()));
    const std::array<double, 4> metric =
        wn0_symbol_metrics(walsh_windows, width, base, taps, noise, errors);
    float llr[2];
    llr[0] = float(std::max(metric[0], metric[1]) - std::max(metric[2], metric[3]));
    llr[1] = float(std::max(metric[0], metric[2]) - std::max(metric[1], metric[3]));
    // The chips matched to the channel (for the symbol tap and how decisively it read).
    cf y[m110d_walsh_data_chips];
    for (unsigned j = 0; j < m110d_walsh_data_chips; ++j) {
        cd m;
        for (size_t q = 0; q < width; ++q)
            m += std::conj(taps[q]) * walsh_windows[j * width + q];
        y[j] = cf(tap_energy > 0 ? m / tap_energy : cd());
        if (symbol_tap) {
            symbol_tap->push_back(y[j] * std::conj(base[j]));
            ++tapped;
        }
    }
    wn0_symbol_read(llr, y, first);
    // The chosen pattern's chips are known symbols from now on; decided ones (the
    // decision weight) where another pattern came close.
    const unsigned dibit = unsigned(llr[0] < 0) << 1 | unsigned(llr[1] < 0);
    double runner_up = -std::numeric_limits<double>::infinity();
    for (unsigned d = 0; d < 4; ++d)
        if (d != dibit)
            runner_up = std::max(runner_up, metric[d]);
    const bool sure = metric[dibit] - runner_up >= cfg.wn0_sure_margin;
    for (unsigned j = 0; j < m110d_walsh_data_chips; ++j)
        equaliser->decide(cd(psk8(m110d_wn0_walsh_chip(dibit, j) +
                                  trinomial[(first + j) % m110d_trinomial_period])),
                          sure);
    if (cfg.wn0_decoder_pass) {
        wn0_block_windows.insert(
            wn0_block_windows.end(), walsh_windows.begin(), walsh_windows.end());
        wn0_block_shift.push_back(timing_shift);
    }
    walsh_windows.clear();
    return in_block + 1 == mode->frames_per_block;
}

std::vector<uint8_t> m110d_receiver::state::block_coded_again()
{
    std::vector<uint8_t> user;
    decoder->decode(block_llr.data(), user);
    return m110d_block_channel_bits(*mode,
                                    user.data(),
                                    fetch_order,
                                    constraint_length,
                                    data_readings.tail_biting,
                                    cfg.k7_newest_bit_lsb);
}

void m110d_receiver::state::wn0_decoder_pass()
{
    const size_t width = window.size(), per_symbol = m110d_walsh_data_chips * width;
    const size_t symbols = wn0_block_shift.size();
    if (symbols * 2 != block_llr.size() ||
        wn0_block_windows.size() != symbols * per_symbol)
        return;
    // The block decoded as it stands, coded again: each Walsh symbol's pattern.
    const std::vector<uint8_t> channel = block_coded_again();
    const auto& trinomial = m110d_trinomial_sequence();
    const auto chip_point = [&](size_t s, unsigned j, unsigned dibit) {
        return cd(
            psk8(m110d_wn0_walsh_chip(dibit, j) +
                 trinomial[(s * m110d_walsh_data_chips + j) % m110d_trinomial_period]));
    };
    // Per symbol and T/2 position, the decoded chips' despread sum (32 g_q and noise).
    std::vector<cd> despread(symbols * width);
    for (size_t s = 0; s < symbols; ++s) {
        const unsigned dibit = unsigned(channel[2 * s]) << 1 | channel[2 * s + 1];
        for (unsigned j = 0; j < m110d_walsh_data_chips; ++j) {
            const cd c = std::conj(chip_point(s, j, dibit));
            const cd* w = &wn0_block_windows[s * per_symbol + j * width];
            for (size_t q = 0; q < width; ++q)
                despread[s * width + q] += c * w[q];
        }
    }
    // Each symbol read again on the channel measured over the symbols either side of it
    // on the same sample grid (not itself: its own pattern would be favoured), up to
    // wn0_pass_reach each way.
    const double noise = std::max(equaliser->noise(), 1e-12);
    const std::vector<cd>& tracked = equaliser->taps();
    std::vector<cd> taps(width);
    std::vector<double> errors(width);
    cf base[m110d_walsh_data_chips];
    for (size_t s = 0; s < symbols; ++s) {
        std::fill(taps.begin(), taps.end(), cd());
        unsigned used = 0;
        for (size_t t = s >= wn0_pass_reach ? s - wn0_pass_reach : 0;
             t <= s + wn0_pass_reach && t < symbols;
             ++t) {
            if (t == s || wn0_block_shift[t] != wn0_block_shift[s])
                continue;
            for (size_t q = 0; q < width; ++q)
                taps[q] += despread[t * width + q];
            ++used;
        }
        if (used == 0)
            continue;
        // On the positions the tracker follows (the paths and their pulse tails): the
        // others' measurements are noise, which the coherent sum would add up.
        const double chips = double(used) * m110d_walsh_data_chips;
        for (size_t q = 0; q < width; ++q) {
            taps[q] = q < tracked.size() && tracked[q] != cd() ? taps[q] / chips : cd();
            errors[q] = noise / chips + cfg.wn0_tap_drift * std::norm(taps[q]);
        }
        for (unsigned j = 0; j < m110d_walsh_data_chips; ++j)
            base[j] = cf(chip_point(s, j, 0)); // dibit 0's pattern adds nothing
        const std::vector<cd> windows(wn0_block_windows.begin() + long(s * per_symbol),
                                      wn0_block_windows.begin() +
                                          long((s + 1) * per_symbol));
        const std::array<double, 4> metric =
            wn0_symbol_metrics(windows, width, base, taps, noise, errors);
        block_llr[2 * s] =
            float(std::max(metric[0], metric[1]) - std::max(metric[2], metric[3]));
        block_llr[2 * s + 1] =
            float(std::max(metric[0], metric[2]) - std::max(metric[1], metric[3]));
    }
    wn0_block_windows.clear();
    wn0_block_shift.clear();
}

void m110d_receiver::state::keep_for_passes(uint64_t k)
{
    if (mode->wn == 0 || cfg.decoder_passes < 2)
        return;
    const m110d_symbol_role role = m110d_role_after_preamble(*mode, k - preamble_end);
    if (role.kind == m110d_symbol_kind::data && role.position == 0 &&
        role.frame % mode->frames_per_block == 0) {
        // The state the block starts from (a slip just before it is in it).
        block_pass.begin(*equaliser, timing_shift, k);
        pending_slip = 0;
        anchors.keep_last();
    }
    if (block_pass.active()) {
        block_pass.add(window, pending_slip);
        pending_slip = 0;
    }
}

bool m110d_receiver::state::measure_anchor(uint64_t first)
{
    if (anchors.has(first))
        return true;
    std::vector<cd> known;
    for (uint64_t j = 0; j < mode->probe_symbols; ++j)
        known.push_back(cd(m110d_probe_point(
            *mode, m110d_role_after_preamble(*mode, first + j - preamble_end))));
    if (!anchors.measure(input, start, timing_shift, *equaliser, first, known))
        return false;
    if (!block_pass.active())
        anchors.keep_last();
    return true;
}

bool m110d_receiver::state::anchors_for_frame(uint64_t s)
{
    // The probe before the frame (after the preamble, or the frame before's) and the
    // one after it; within an interleaver block the transmission surely goes on, so the
    // probe after the next frame too (a block's last frame may be the transmission's,
    // and past it lies noise).
    const uint64_t data = mode->data_symbols, probe = mode->probe_symbols;
    if (!(measure_anchor(s - probe) && measure_anchor(s + data)))
        return false;
    const int64_t frame = m110d_role_after_preamble(*mode, s - preamble_end).frame;
    if ((frame + 1) % mode->frames_per_block == 0)
        return true;
    return measure_anchor(s + data + probe + data);
}

void m110d_receiver::state::weigh_decision(cd z,
                                           cd decision,
                                           double variance,
                                           size_t llr_end)
{
    // Per 32 symbols (or the block's last few): a segment whose decisions erred more
    // than the equaliser's variance says becomes an erasure rather than confident
    // errors.
    segment_error += std::norm(z - decision);
    segment_variance += variance;
    if (++segment_symbols < reliability_symbols && llr_end < decoder->channel_bits())
        return;
    const float scale = serial_tone_llr_scale(segment_error, segment_variance);
    if (scale < 1)
        for (size_t b = llr_end - size_t(segment_symbols) * demapper->bits_per_symbol();
             b < llr_end;
             ++b)
            block_llr[b] *= scale;
    segment_error = segment_variance = 0;
    segment_symbols = 0;
}

void m110d_receiver::state::start_frame(uint64_t first, int64_t shift)
{
    frame_first = first;
    frame_shift = shift;
    forward_error.assign(
        (mode->data_symbols + reliability_symbols - 1) / reliability_symbols, 0.0);
}

bool m110d_receiver::state::frame_suspect() const
{
    return *std::max_element(forward_error.begin(), forward_error.end()) >
           backward_suspect_error * reliability_symbols * nearest_points;
}

void m110d_receiver::state::equalise_frame_backward(
    uint64_t first, int64_t shift, double noise, size_t frame_llr, const uint8_t* labels)
{
    channel_tracking_equaliser_config settings;
    settings.forgetting = scaled_forgetting(cfg.forgetting);
    settings.decision_weight = cfg.decision_weight;
    // Not the 64QAM interval (12 would cost a tenth more).
    settings.solve_interval = cfg.equaliser_solve_interval * time_scale;
    settings.time_scale = time_scale;
    const unsigned nb = demapper->bits_per_symbol();
    settings.follow_channel = nb >= 6;
    double power = 1;
    if (nb > 3) {
        power = 0;
        for (cf p : m110d_constellation(nb))
            power += std::norm(p);
        power /= double(m110d_constellation(nb).size());
    }
    settings.symbol_power = power;
    serial_tone_backward_frame frame;
    frame.input = &input;
    frame.start = start;
    frame.timing_shift = shift;
    frame.first = first;
    frame.data_symbols = mode->data_symbols;
    for (uint64_t j = 0; j < mode->probe_symbols; ++j) {
        const uint64_t k = first + mode->data_symbols + j;
        frame.probe_after.push_back(cd(m110d_probe_point(
            *mode, m110d_role_after_preamble(*mode, k - preamble_end))));
    }
    frame.noise = noise;
    frame.demapper = demapper.get();
    frame.segment_symbols = reliability_symbols;
    frame.forward_error = &forward_error;
    frame.llr = &block_llr[frame_llr];
    frame.labels = labels;
    serial_tone_equalise_frame_backward(frame, *equaliser, settings, anchors);
}

void m110d_receiver::state::second_pass(bool last)
{
    // The block decoded as it stands and coded again; equalised once more with those
    // symbols in place of the equaliser's decisions, for new LLRs.
    const std::vector<uint8_t> channel = block_coded_again();
    const uint64_t first = block_pass.first_symbol() - preamble_end;
    size_t bit = 0;
    segment_error = segment_variance = 0;
    segment_symbols = 0;
    // In the last pass suspect frames are equalised backward too, with the decoded
    // symbols, as the first pass does with its decisions (App C: forward only, a frame
    // the first pass took from its backward equaliser came out of this pass worse).
    const bool backward_too = last && backward();
    size_t frame_bit = 0;
    block_pass.replay(
        *equaliser,
        [&](size_t i, channel_tracking_equaliser& again, int64_t shift) {
            if (interpolating())
                anchors.rebase(again, block_pass.first_symbol() + i, shift);
        },
        [&](size_t i, cd z, double variance) {
            const unsigned position =
                m110d_role_after_preamble(*mode, first + i).position;
            const size_t symbol_bit = bit;
            const cd decision =
                demapper->demap_to(z, position, variance, &channel[bit], &block_llr[bit]);
            if (backward_too) {
                if (position == 0) {
                    start_frame(block_pass.first_symbol() + i, 0);
                    frame_bit = symbol_bit;
                }
                forward_error[position / reliability_symbols] += std::norm(z - decision);
            }
            bit += demapper->bits_per_symbol();
            weigh_decision(z, decision, variance, bit);
            return decision;
        },
        [&](size_t i, const channel_tracking_equaliser& again, int64_t shift) {
            if (!backward_too)
                return;
            const unsigned position =
                m110d_role_after_preamble(*mode, first + i).position;
            if (position == 0)
                frame_shift = shift;
            if (position + 1 == mode->data_symbols && shift == frame_shift &&
                !anchors.empty() && frame_suspect())
                equalise_frame_backward(
                    frame_first, shift, again.noise(), frame_bit, &channel[frame_bit]);
        });
}

void m110d_receiver::state::settle_tail_biting()
{
    const tail_biting_start found =
        phase_search.settle(bits,
                            eom_at,
                            eom_searched,
                            data_readings.tail_biting,
                            m110d_conv_code(constraint_length),
                            mode->input_bits_per_block);
    if (found == data_readings.tail_biting)
        return;
    data_readings.tail_biting = found;
    decoder.reset(new m110d_block_decoder(
        *mode, constraint_length, data_readings.tail_biting, cfg.k7_newest_bit_lsb));
}

bool m110d_receiver::state::decode_block()
{
    if (readings_open && mode->wn != 0) {
        // The burst's first block under this scrambler reading: the decoded bits coded
        // again against the channel LLRs. A wrong reading leaves LLRs of noise, which
        // the Viterbi still fits (its bits coded again disagree with 5 % of strong LLRs
        // at 35 dB, WN3 and WN8), so the share of LLR weight they disagree with is held
        // against the share the LLRs themselves expect wrong (sum of |L| / (1 + e^|L|)).
        const std::vector<uint8_t> channel = block_coded_again();
        const x9_orientation best =
            scrambler_judge.judge(data_readings.scrambler, agreement_of(block_llr, channel));
        if (best != data_readings.scrambler) {
            // Again from the preamble under the other reading (its samples were kept);
            // the symbols it tapped are tapped again.
            if (symbol_tap)
                symbol_tap->resize(symbol_tap->size() -
                                   std::min(tapped, symbol_tap->size()));
            data_readings.scrambler = best;
            found_sections = burst_sections;
            input.start_derotation(start, burst_hz);
            block_llr.clear();
            begin_burst();
            return false;
        }
        readings_open = false;
    }
    decoder->decode(block_llr.data(), bits);
    if (cfg.reliability_threshold > -std::numeric_limits<double>::infinity()) {
        const double reliability = decoder->reliability();
        least_reliability = std::min(least_reliability, reliability);
        unreliable_blocks += reliability < cfg.reliability_threshold;
    }
    block_llr.clear();
    for (; eom_searched + m110d_eom_bits <= bits.size() && eom_at == no_eom;
         ++eom_searched)
        if (bits_word(bits, eom_searched) == m110d_eom)
            eom_at = eom_searched;
    if (cfg.find_tail_biting)
        settle_tail_biting();
    block_decoded = true;
    return true;
}

bool m110d_receiver::state::data(std::vector<m110d_burst>& done)
{
    for (;;) {
        if (symbol % timing_check_symbols == 0 && symbol > known_symbols &&
            timing_checked != symbol && walsh_windows.empty()) {
            timing_checked = symbol;
            pending_slip += cfg.follow_frequency_rate
                                ? follow_serial_tone_channel(input,
                                                             *equaliser,
                                                             start + symbol * sps,
                                                             timing_shift,
                                                             frequency_drift_hz,
                                                             symbol_rate)
                                : follow_serial_tone_channel(input,
                                                             *equaliser,
                                                             start + symbol * sps,
                                                             timing_shift,
                                                             symbol_rate);
        }
        // A frame's anchors before its data: the receiver runs up to two frames behind.
        if (interpolating() && symbol >= preamble_end) {
            const m110d_symbol_role next =
                m110d_role_after_preamble(*mode, symbol - preamble_end);
            if (next.kind == m110d_symbol_kind::data && next.position == 0 &&
                !anchors_for_frame(symbol))
                return false; // the probes after the frame are not in yet
        }
        if (!serial_tone_window(
                input, start, symbol, *equaliser, timing_shift, window, presence))
            return false;
        const uint64_t k = symbol++;
        if (k >= preamble_end)
            keep_for_passes(k);
        if (interpolating() && k >= preamble_end)
            anchors.rebase(*equaliser, k, timing_shift);
        const cd z = equaliser->equalise(window.data());
        const std::vector<cf>& known = burst_alignment->known;
        if (k < known_symbols) {
            commit(z, cd(known[k]), true);
            known_error += std::norm(z - cd(known[k]));
            if (k >= walsh_chips)
                field_chips.push_back(cf(z));
            if (k + 1 == known_symbols) // 160 chips: the moving average has not forgotten
                                        // its start
                presence.seed_noise(
                    known_error /
                    std::max(1.0, double(known_symbols) - equaliser->channel_symbols()));
            continue;
        }
        if (k < preamble_end) {
            // A WID chip: its PN point, or the opposite.
            field_chips.push_back(cf(z));
            commit(
                z,
                antipodal_decision(z, cd(burst_alignment->wid_base[k - known_symbols])),
                false);
            if (k + 1 == preamble_end && !read_fields()) {
                ++refused;
                mode.reset();
                if (count_ahead > 0) {
                    // The last super-frame is count_ahead super-frames on: its preamble
                    // is read there. Searched for, it may lose to the data after it,
                    // whose mini-probes add up over the comb too and held its peak
                    // (WN8/3kHz/L, poor, 22 dB, M = 20, channel seed 1: a burst lost).
                    const uint64_t last =
                        start + uint64_t(count_ahead) * superframe_chips * sps;
                    found_sections =
                        std::min(found_sections + count_ahead, m110d_max_superframes);
                    found_hz = input.offset_hz();
                    restart_search(last);
                    start = last;
                    stage = phase::preamble;
                    return true;
                }
                readings_open = false;
                restart_search(start + uint64_t(refused_skip) * sps);
                return true;
            }
            continue;
        }
        if (double(k - preamble_end) / mode->symbol_rate() > cfg.max_burst_s) {
            end_burst(false, done);
            return true;
        }
        const m110d_symbol_role role = m110d_role_after_preamble(*mode, k - preamble_end);
        bool block_end = false, matched = false;
        if (mode->wn == 0) {
            block_end =
                cfg.wn0_symbol_decisions ? wn0_chip(role) : wn0_chip_decided(z, role);
            if (block_llr.size() == decoder->channel_bits()) {
                if (cfg.wn0_decoder_pass && cfg.wn0_symbol_decisions)
                    wn0_decoder_pass();
                decode_block(); // WN0: one scrambler
            }
            if (block_end) {
                matched = walsh_match >= wn0_match * mode->frames_per_block;
                walsh_match = 0;
            }
        } else if (role.kind == m110d_symbol_kind::data) {
            float llr[serial_tone_demapper::max_bits_per_symbol];
            const double variance = std::max(1e-3, equaliser->estimate_variance());
            const cd decision = demapper->demap(z, role.position, variance, llr);
            if (symbol_tap) {
                symbol_tap->push_back(cf(demapper->unscrambled(z, role.position)));
                ++tapped;
            }
            commit(z, decision, false);
            block_llr.insert(block_llr.end(), llr, llr + demapper->bits_per_symbol());
            weigh_decision(z, decision, variance, block_llr.size());
            if (backward()) {
                if (role.position == 0)
                    start_frame(k, timing_shift);
                forward_error[role.position / reliability_symbols] +=
                    std::norm(z - decision);
                // Backward only where some decisions look wrong: it costs as much as
                // the forward equaliser.
                if (role.position + 1 == mode->data_symbols &&
                    timing_shift == frame_shift && !anchors.empty() && frame_suspect())
                    equalise_frame_backward(frame_first,
                                            timing_shift,
                                            equaliser->noise(),
                                            block_llr.size() -
                                                size_t(mode->data_symbols) *
                                                    demapper->bits_per_symbol());
            }
            if (block_llr.size() == decoder->channel_bits()) {
                for (unsigned pass = 2; pass <= cfg.decoder_passes && block_pass.active();
                     ++pass)
                    second_pass(pass == cfg.decoder_passes);
                block_pass.end();
                anchors.keep_last();
                if (!decode_block())
                    return true; // again from the preamble, another scrambler reading
            }
        } else {
            const cd sent(m110d_probe_point(*mode, role));
            if (block_pass.active())
                block_pass.known(sent);
            presence.add_probe(z, sent);
            commit(z, sent, true);
            if (role.position + 1 == mode->probe_symbols)
                presence.add_prediction_score(
                    anchors.prediction_score(symbol - mode->probe_symbols));
            block_end = role.frame >= 0 && role.position + 1 == mode->probe_symbols &&
                        (role.frame + 1) % mode->frames_per_block == 0;
            matched = block_end && presence.probes_match();
        }
        if (eom_at != no_eom) {
            end_burst(true, done);
            return true;
        }
        if (block_end && presence.block_says_lost(matched)) {
            end_burst(false, done);
            return true;
        }
        if (cfg.deliver_per_block && block_decoded)
            hand_on_decoded(done);
    }
}

m110d_burst m110d_receiver::state::report() const
{
    m110d_burst burst;
    burst.mode = mode->name();
    burst.start_sample = start;
    burst.frequency_offset_hz = input.offset_hz();
    // The signal's mean power, as a channel's SNR is measured; over the whole burst, as
    // the 110A and App C receivers report (burst_snr.h), or, for a burst too short for
    // half a chunk of known symbols, the tracked noise at its end.
    const double power = m110d_frame_power(*mode);
    burst.snr_db =
        snr_report.chunks() > 0 ? snr_report.snr_db(power) : presence.snr_db(power);
    burst.snr_db_recent =
        snr_report.chunks() > 0 ? snr_report.recent_snr_db(power) : burst.snr_db;
    burst.unreliable_blocks = unreliable_blocks;
    burst.least_reliability = least_reliability;
    burst.bytes_bad = unreliable_blocks > 0;
    m110d_readings r = data_readings;
    r.pn_alignment = preamble_readings.pn_alignment;
    r.wid_parity = preamble_readings.wid_parity;
    // The words of the readings a burst tells (not preamble_walsh, which it does not);
    // WN0's Trinomial scrambler has no reading.
    std::string word;
    std::istringstream words(m110d_readings_text(r));
    while (words >> word)
        if (word.rfind("preamble_walsh=", 0) != 0 &&
            (mode->wn != 0 || word.rfind("scrambler=", 0) != 0))
            burst.readings += (burst.readings.empty() ? "" : " ") + word;
    return burst;
}

void m110d_receiver::state::end_burst(bool eom, std::vector<m110d_burst>& done)
{
    readings_open = false;
    if (!mode) { // cut while its WID was read: nothing to report
        restart_search(start + uint64_t(preamble_end) * sps);
        return;
    }
    m110d_burst burst = report();
    burst.eom = eom;
    burst.bytes_bad = burst.bytes_bad || !eom;
    burst.bytes = streamed.take(bits, eom ? eom_at : bits.size(), cfg.msb_first);
    done.push_back(std::move(burst));
    // After the EOM's block the transmission ends with its last frame's probe.
    uint64_t next = symbol;
    if (eom && mode->wn != 0) {
        const m110d_symbol_role role =
            m110d_role_after_preamble(*mode, next - preamble_end);
        if (role.kind == m110d_symbol_kind::probe)
            next += mode->probe_symbols - role.position;
    }
    // A new preamble may have begun where the watch has not looked yet.
    uint64_t from = start + next * sps;
    if (candidate >= start + uint64_t(preamble_end) * sps)
        from = std::min(from, peak.open ? peak.at : candidate);
    mode.reset();
    comb_from = from;
    restart_search(from);
}

void m110d_receiver::state::hand_on_decoded(std::vector<m110d_burst>& done)
{
    block_decoded = false;
    std::vector<uint8_t> bytes =
        streamed.take(bits, eom_searched, cfg.msb_first); // no EOM starts before
    if (bytes.empty())
        return;
    m110d_burst piece = report();
    piece.bytes = std::move(bytes);
    piece.continues = true;
    done.push_back(std::move(piece));
}

} // namespace phy
} // namespace hfstack
} // namespace gr
