/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "helper_threads.h"
#include "m110d_receiver.h"
#include "m110d_receiver_state.h"

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

using namespace m110d_rx;

namespace {

// A detection in a burst this strong cuts it without its fields read first (on one gain
// they may not read in fading; data alone stayed under it in every test).
constexpr double sure_cut_z = 5.5;
// A weaker detection in a burst cuts it once its fields read on one gain with their
// correlations this far out of the chips' power (fields_on_one_gain's fields_z): the sum
// of 9 Walsh symbols' best of 4 correlations, over the deviation of one, is 3.1 (sd
// 0.7) in data or noise, and sqrt(18 chips snr / (1 + snr)) on a preamble's fields (13
// at 3 kHz at the search's threshold, about -3 dB).
constexpr double watch_fields_z = 6.0;
// A z the comb carries counts from this much over the threshold: the largest of up to 32
// sums crosses 4.0 in noise about twice a minute (refused by the field checks), 5.0 far
// less often (e^-25 per sum), and a preamble the comb finds is far over either.
constexpr double comb_margin = 1.0;
// fft_search: the known chips' z is computed again by dot product from this far under
// the threshold (every z a detection or the peak's choice sees is the dot product's).
constexpr double fft_exact_margin = 0.5;

// coherent_search: sections of this many chips are summed coherently (a quarter turn
// within one at 75 Hz), then combined over coherent_bins carrier offsets (a turn per
// section of 0 .. 1 - 1/coherent_bins): 4.7 Hz apart, +-150 Hz.
constexpr unsigned coherent_section = 8;
constexpr unsigned coherent_bins = 64;
// The sections' energy over the chips' (1 in noise, with 20 sections a spread of
// 0.22) under which no offset is tried: a preamble the coherent z takes over the
// threshold has about 2 or more.
constexpr double coherent_gate = 1.4;
// Over the differential's threshold: noise alone reached 4.1 in 60 s of white noise at
// 9600 Hz (every sample a fresh trial), 4.0 in 600 s of noise in 3 kHz.
constexpr double coherent_margin = 0.5;
// The known chips' sections (20 at 3 kHz, the only bandwidth searched so).
constexpr unsigned coherent_max_sections = 20;
// threads > 1: fewer candidates than this are scored on one thread (not worth another).
constexpr size_t min_split_candidates = 256;
// Two paths (F.1487 poor's, 2 ms apart, each fading on its own): a preamble neither
// path carries over the threshold alone may carry it on both, the offset's |sum|^2 over
// the chips' energy added at two samples 1 to coherent_path_chips chips apart (2 ms at
// 2400 Bd, the spread the equaliser is sized for, and a chip). Those are computed where
// the sections' energy is coherent_path_gate times the chips' (about a fifth of noise
// samples; a path carrying a third of the z^2 a detection needs has about 1.3). Such a
// detection is taken only once its fields read on the two paths' gains and stand out
// of the chips' power as the watch asks (paths_detection_reads): strong data's
// correlation side lobes at two lags cross the threshold together (WN8 at 35 dB: z
// 4.7 inside a burst's data, its fields read by chance), and noise's peaks checked so
// are not refused preambles.
constexpr unsigned coherent_path_chips = 6;
constexpr double coherent_path_gate = 1.2;
// Fields that fail their checks symbol by symbol are read as the valid ones that
// correlate best only under this coherent z (a fade): over it a Walsh symbol of the
// fields is decided wrong about one time in 500, and fields that fail are what was sent
// (a reserved WN, say), refused.
constexpr double coherent_best_fields_z = 7.0;
// confirm_weak_with_data: coherent peaks from this far under the coherent threshold are
// held for the data after them (the lost preambles' peaks: 3.2-4.1).
constexpr double weak_margin = 1.5;
// start_wn0_from_data: the WN0 watch's z over noise (m110d_wn0_data_watch).
constexpr double wn0_watch_z = 6.0;
// start_from_mini_probes: the mini-probe watches' (m110d_probe_data_watch).
constexpr double probe_watch_z = 6.0;

// Section k turned back by b k / coherent_bins of a turn: cos and sin per k, b.
struct coherent_turns {
    std::array<std::array<float, coherent_bins>, coherent_max_sections> cos, sin;
};
const coherent_turns coherent_twiddles = [] {
    coherent_turns t;
    for (unsigned k = 0; k < coherent_max_sections; ++k)
        for (unsigned b = 0; b < coherent_bins; ++b) {
            const double angle =
                -2 * M_PI * double((b * k) % coherent_bins) / coherent_bins;
            t.cos[k][b] = float(std::cos(angle));
            t.sin[k][b] = float(std::sin(angle));
        }
    return t;
}();

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

} // namespace

unsigned m110d_delay_spread_symbols(unsigned bandwidth_khz, double delay_spread_ms)
{
    // Pulse tail and timing margin: the 3 kHz span's 13 symbols less 2 ms at 2400 Bd.
    constexpr unsigned margin_symbols = 8;
    const double symbols = delay_spread_ms * 1e-3 * m110d_baud_per_khz * bandwidth_khz;
    return unsigned(std::ceil(symbols - 1e-9)) + margin_symbols;
}

namespace m110d_rx {

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

} // namespace m110d_rx

m110d_receiver::state::state(const m110d_receiver_config& c)
    : cfg(c), data_readings(c.readings)
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
            added.sections.assign(comb_ring, {});
        }
    }
    // A threshold far over noise's largest (z about 3 over 8192 timings a period): a
    // WN0 burst out of a fade reaches 15-30 within two periods.
    if (c.start_wn0_from_data && c.confirm_weak_with_data && c.coherent_search &&
        c.bandwidth_khz == 3)
        wn0_watch.emplace(symbol_rate, wn0_watch_z);
    if (c.start_from_mini_probes && c.confirm_weak_with_data && c.coherent_search &&
        c.bandwidth_khz == 3)
        for (const m110d_mode& m : m110d_modes_at(c.bandwidth_khz)) {
            if (m.wn == 0 || std::any_of(probe_watches.begin(),
                                         probe_watches.end(),
                                         [&](const m110d_probe_data_watch& w) {
                                             return w.data_symbols() == m.data_symbols &&
                                                    w.probe_symbols() == m.probe_symbols;
                                         }))
                continue;
            const unsigned frame = m.data_symbols + m.probe_symbols;
            probe_watches.emplace_back(m.data_symbols,
                                       m.probe_symbols,
                                       sps,
                                       symbol_rate,
                                       probe_watch_frames(frame),
                                       probe_watch_z);
        }
}

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
    if (config.threads == 0)
        throw std::invalid_argument("m110d_receiver: threads must be at least 1");
    if (!(config.weak_max_offset_hz >= 0))
        throw std::invalid_argument(
            "m110d_receiver: weak_max_offset_hz must be 0 or more");
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

size_t m110d_receiver::tapped_unsettled() const
{
    return std::max(d->readings_open ? d->tapped : 0, d->held_symbols);
}

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
    d->run(done);
}

void m110d_receiver::complete_decoding(std::vector<m110d_burst>& done)
{
    if (d->apply_unapplied(state::waiting::all, done))
        d->run(done);
    d->join_dropped_jobs();
}

void m110d_receiver::state::run(std::vector<m110d_burst>& done)
{
    for (;;) {
        run_serial_tone_stages(*this, done);
        if (replay_limits.empty())
            return;
        // The next chunk as it arrived (the last: all of the input).
        replay_limits.pop_front();
        if (replay_limits.empty())
            input.unlimit();
        else
            input.limit_to(replay_limits.front());
    }
}

void m110d_receiver::state::trim()
{
    if (!unapplied.empty()) {
        // What one thread would let go here is let go once the records before are
        // applied.
        if (unapplied.back().boundary)
            unapplied.back().trim = true;
        return;
    }
    trim_now();
}

void m110d_receiver::state::trim_now()
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
    if (coherent_peak.open)
        keep = std::min(keep, coherent_peak.at);
    if (local_weak_peak.open)
        keep = std::min(keep, local_weak_peak.at);
    if (!weak.empty() && stage == phase::search)
        keep = std::min(keep, weak.front().at);
    if (!data_starts.empty() && stage == phase::search)
        keep = std::min(keep, data_starts.front().at);
    for (const weak_judgement& j : data_start_alternates)
        keep = std::min(keep, j.at);
    // A probe start's first block may move it back (boundary_probes_of).
    if (stage == phase::data && found_from_data && data_start_current &&
        data_start_current->from_probes && mode && !wid_candidates.empty()) {
        const uint64_t back =
            uint64_t(probe_start_reach_frames(mode->data_symbols + mode->probe_symbols)) *
            (mode->data_symbols + mode->probe_symbols) * sps;
        keep = std::min(keep, start > back ? start - back : 0);
    }
    for (const auto& [excess, j] : decoded_data_starts)
        keep = std::min(keep, j.at);
    // find_scrambler: the burst may be equalised again from its preamble.
    if (stage == phase::data && readings_open)
        keep = std::min(keep, start);
    // A WN0 block read as noise is searched again from its first chip.
    if (stage == phase::data && mode && mode->wn == 0 && cfg.wn0_end_at_foreign_block &&
        symbol > preamble_end)
        keep = std::min(keep, wn0_block_search_from(symbol - 1));
    // A burst its data may yet refuse: the search goes on after its preamble then.
    if (stage == phase::data && !wid_candidates.empty())
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
    coherent_peak.open = false;
    local_weak_peak.open = false;
    paths_pending = false;
    weak.clear();
    // (Starts the WN0 watch proposed stay: a detection in their data refused goes back
    // a little; a burst taken let them go. A data start refused: the next of those that
    // passed with it is taken.)
    if (!data_start_refused)
        data_start_alternates.clear();
    reset_data_watches();
    differential_from = 0;
    scores_count = scores_offered = 0;
    watch_pending = false;
}

void m110d_receiver::state::restart_after_refusal()
{
    const uint64_t past_side_peaks = start + uint64_t(refused_skip) * sps;
    if (!cfg.coherent_search || cfg.bandwidth_khz != 3 || found_by_coherent ||
        (found_z >= sure_cut_z && found_sections <= 1)) {
        restart_search(past_side_peaks);
        // A coherent detection whose fields a fade left unread: its data may still say
        // it is a burst's (once, not again when they did).
        if (cfg.confirm_weak_with_data && found_by_coherent && !found_weak)
            hold_weak({ found_at, found_other, found_hz, found_z, found_alignment });
        return;
    }
    // A weak detection of the differential's was refused, or one the comb carried over
    // earlier super-frames: data, say (WN1's mini-probes add up over the comb), whose
    // peak held the coherent search's back and whose skip passes the next preamble
    // (F.1487 poor, WN1 at 2 dB, M = 1: a detection at z 5.5 over 31 super-frames 95
    // chips before a preamble the coherent search had at z 6.6, lost). The coherent
    // search goes over the skipped chips again alone. (A strong one on its own chips is
    // a preamble whose fields fail: its side peaks are skipped.)
    restart_search(start + sps);
    differential_from = past_side_peaks;
}

void m110d_receiver::state::score_candidates(size_t alignment,
                                             uint64_t first,
                                             size_t count,
                                             bool coherent)
{
    alignment_search& a = alignments[alignment];
    std::vector<search_score>& scores = search_scores[alignment];
    scores.resize(count);
    // Not in a burst: data with mini-probes (the same every frame, and frames divide a
    // super-frame) add up over the comb too (z 5-9 in WN1 data at 30 dB), so the watch
    // for a new preamble uses the known chips alone. The ring is not kept then either: a
    // preamble after the burst has all its super-frames after the search's restart.
    const bool comb = a.section && stage == phase::search;
    // The known chips' correlator has its polyphases shared between two threads (beside
    // the sections' on a third when the comb is on: the calling thread's share the
    // smaller). Before differential_from it is not called at all (as where the coherent
    // search goes back over a refused detection's skip alone).
    const bool split_known =
        cfg.threads > 1 && count >= min_split_candidates && !coherent;
    const auto known = [&] {
        const size_t skipped =
            differential_from > first
                ? size_t(std::min<uint64_t>(differential_from - first, count))
                : 0;
        for (size_t i = 0; i < skipped; ++i) {
            scores[i].z = 0;
            scores[i].sum = cd();
            scores[i].sections = 0;
        }
        if (skipped == count)
            return;
        a.correlator.z_run(
            input,
            first + skipped,
            count - skipped,
            [&](size_t i, double z, cf sum) {
                scores[skipped + i].z = z;
                scores[skipped + i].sum = cd(sum);
                scores[skipped + i].sections = 0;
            },
            split_known);
    };
    const auto sections = [&] {
        // Each candidate's section sum: the section that would end where the known
        // chips begin.
        const uint64_t back = uint64_t(comb_section_chips) * sps;
        for (size_t i = 0; comb && i < count; ++i) {
            const uint64_t n = first + i;
            if (n < back + sps || n < differential_from)
                continue;
            const uint64_t m = n - back;
            cf s;
            const double zs = a.section->z_at(input, m, s);
            auto& entry = a.sections[size_t(m & (comb_ring - 1))];
            entry.sum = s;
            entry.energy = zs > 0 ? float(std::norm(s) / (zs * zs)) : 0.0f;
            entry.at = m + 1;
        }
        for (size_t i = 0; coherent && i < count; ++i)
            scores[i].coherent_z =
                coherent_z(a, first + i, scores[i].coherent_sum, scores[i].paths);
    };
    // The two correlators (and the coherent sums) share nothing but the input.
    if (cfg.threads > 1 && count >= min_split_candidates && (comb || coherent)) {
        run_beside(sections, known);
    } else {
        known();
        sections();
    }
    if (!comb)
        return;
    // The largest z over the known chips with 0, 1, ... earlier sections added (squared
    // z's compared: no square roots per term); the ring is only read from here on.
    split_work(count, [&](size_t from, size_t to) {
        const double floor = cfg.detection_threshold + comb_margin;
        for (size_t i = from; i < to; ++i) {
            search_score& score = scores[i];
            const uint64_t n = first + i;
            if (n < differential_from)
                continue;
            const double z = score.z;
            double energy = z > 0 ? std::norm(score.sum) / (z * z) : 0.0;
            double best2 = std::max(z * z, floor * floor);
            cd total = score.sum;
            for (unsigned j = 0; j < cfg.integrate_superframes; ++j) {
                const uint64_t offset =
                    (uint64_t(comb_section_chips) + uint64_t(j) * superframe_chips) * sps;
                if (n < offset + sps)
                    break;
                const uint64_t m = n - offset;
                const auto& entry = a.sections[size_t(m & (comb_ring - 1))];
                if (entry.at != m + 1 || m < comb_from)
                    break;
                total += cd(entry.sum);
                energy += entry.energy;
                if (std::norm(total) > best2 * energy) {
                    best2 = std::norm(total) / energy;
                    score.sum = total;
                    score.sections = j + 1; // section 0: this super-frame's first 8
                }
            }
            if (score.sections > 0)
                score.z = std::sqrt(best2);
        }
    });
}

double m110d_receiver::state::coherent_z(alignment_search& a,
                                         uint64_t n,
                                         cd& sum,
                                         two_paths& paths) const
{
    paths.z = 0;
    // Real arithmetic throughout, four candidates at a time (every sample of the search
    // passes here).
    const std::vector<cf>& known = a.known;
    const unsigned sections = unsigned(known.size()) / coherent_section;
    if (sections > coherent_max_sections)
        return 0;
    const uint64_t from = n & ~uint64_t(3);
    if (a.coherent_from != from) {
        // Per section, over the 4 candidates' interleaved samples (re, im; 8 floats):
        // x = sum of y kr and w = sum of y ki, from which the section's sum y conj(k)
        // is (x.re + w.im, x.im - w.re) for each candidate (loops the compiler
        // vectorises: no shuffles, no reductions).
        a.coherent_from = from;
        float energy[8] = {}, section_energy[4] = {};
        for (unsigned k = 0; k < sections; ++k) {
            float x[8] = {}, w[8] = {};
            for (unsigned i = 0; i < coherent_section; ++i) {
                const unsigned c = k * coherent_section + i;
                const float* y = reinterpret_cast<const float*>(
                    input.held_from(from + uint64_t(c) * sps));
                const float kr = known[c].real(), ki = known[c].imag();
                for (unsigned j = 0; j < 8; ++j) {
                    x[j] += y[j] * kr;
                    w[j] += y[j] * ki;
                    energy[j] += y[j] * y[j];
                }
            }
            for (unsigned l = 0; l < 4; ++l) {
                const float sr = x[2 * l] + w[2 * l + 1], si = x[2 * l + 1] - w[2 * l];
                a.coherent_sections[2 * k][l] = sr;
                a.coherent_sections[2 * k + 1][l] = si;
                section_energy[l] += sr * sr + si * si;
            }
        }
        for (unsigned l = 0; l < 4; ++l) {
            a.coherent_energy[l] = energy[2 * l] + energy[2 * l + 1];
            a.coherent_section_energy[l] = section_energy[l];
        }
    }
    const unsigned lane = unsigned(n - from);
    const float energy = a.coherent_energy[lane];
    const size_t ring = power_of_two_over(coherent_path_chips * sps);
    if (a.coherent_powers.size() != ring) {
        a.coherent_powers.assign(ring, {});
        a.coherent_powers_at.assign(ring, 0);
    }
    const size_t slot = size_t(n & (ring - 1));
    a.coherent_powers_at[slot] = 0;
    const float section_energy = a.coherent_section_energy[lane];
    if (!(energy > 0) || section_energy < float(coherent_path_gate) * energy)
        return 0;
    // Every offset at once (a loop over them the compiler vectorises).
    float tr[coherent_bins] = {}, ti[coherent_bins] = {};
    for (unsigned k = 0; k < sections; ++k) {
        const float re = a.coherent_sections[2 * k][lane];
        const float im = a.coherent_sections[2 * k + 1][lane];
        const float* c = coherent_twiddles.cos[k].data();
        const float* s = coherent_twiddles.sin[k].data();
        for (unsigned b = 0; b < coherent_bins; ++b) {
            tr[b] += re * c[b] - im * s[b];
            ti[b] += re * s[b] + im * c[b];
        }
    }
    // The turn per symbol of offset b, as the sum's angle.
    const auto turn_of = [](unsigned b) {
        double turn = 2 * M_PI * double(b) / coherent_bins;
        if (turn > M_PI)
            turn -= 2 * M_PI;
        return turn / coherent_section;
    };
    // The two paths: this sample's powers with those of each sample 1 to
    // coherent_path_chips chips before, at the same offset (the paths share the
    // carrier). A sum of two exponentials with mean 1 passes t with probability (1 + t)
    // e^-t: its z^2 is t - ln(1 + t), less the logs of the offsets and delays tried.
    std::array<float, coherent_bins>& powers = a.coherent_powers[slot];
    const float inverse_energy = 1.0f / energy;
    for (unsigned b = 0; b < coherent_bins; ++b)
        powers[b] = (tr[b] * tr[b] + ti[b] * ti[b]) * inverse_energy;
    a.coherent_powers_at[slot] = n + 1;
    float pair_best = 0;
    unsigned pair_bin = 0;
    uint64_t pair_other = 0;
    for (uint64_t d = sps; d <= uint64_t(coherent_path_chips) * sps && d <= n; ++d) {
        const size_t other = size_t((n - d) & (ring - 1));
        if (a.coherent_powers_at[other] != n - d + 1)
            continue;
        const std::array<float, coherent_bins>& earlier = a.coherent_powers[other];
        for (unsigned b = 0; b < coherent_bins; ++b)
            if (powers[b] + earlier[b] > pair_best) {
                pair_best = powers[b] + earlier[b];
                pair_bin = b;
                pair_other = n - d;
            }
    }
    if (pair_best > 0) {
        const double t = pair_best;
        const double z2 = t - std::log1p(t) - std::log(double(sections)) -
                          std::log(double(coherent_path_chips));
        if (z2 > 0) {
            paths.z = std::sqrt(z2);
            paths.sum = std::polar(paths.z, turn_of(pair_bin));
            const bool later_stronger =
                powers[pair_bin] >=
                a.coherent_powers[size_t(pair_other & (ring - 1))][pair_bin];
            paths.at = later_stronger ? n : pair_other;
            paths.other = later_stronger ? pair_other : n;
        }
    }
    if (section_energy < float(coherent_gate) * energy)
        return 0;
    float best = 0;
    unsigned best_bin = 0;
    for (unsigned b = 0; b < coherent_bins; ++b) {
        const float power = tr[b] * tr[b] + ti[b] * ti[b];
        if (power > best) {
            best = power;
            best_bin = b;
        }
    }
    // |total|^2 / energy is exponential with mean 1 in noise at each offset; the
    // largest of about `sections` independent ones passes z^2 + log(sections) as often
    // as one passes z^2.
    const double z2 = double(best) / double(energy) - std::log(double(sections));
    const double z = z2 > 0 ? std::sqrt(z2) : 0.0;
    sum = std::polar(z, turn_of(best_bin));
    return z;
}

bool m110d_receiver::state::search()
{
    const uint64_t span = uint64_t(known_symbols) * sps;
    const bool coherent = coherent_searching();
    for (;;) {
        if (paths_pending) {
            if (std::max(found_at, found_other) + uint64_t(preamble_end + 8) * sps >=
                input.total())
                return false; // its fields are not all in yet
            paths_pending = false;
            if (paths_detection_reads())
                return true;
            // Fields a fade leaves unread: the data after them may still say it is a
            // burst's.
            if (cfg.confirm_weak_with_data)
                hold_weak({ found_at, found_other, found_hz, found_z, found_alignment });
        }
        // Scores left from a batch a two-path detection broke off are offered on while
        // they are still the next candidates' (scoring them again would call the
        // correlators twice for the same samples).
        if (scores_offered >= scores_count ||
            scores_first + scores_offered != candidate || scores_coherent != coherent) {
            if (candidate + span >= input.total())
                return false;
            // The candidates up to the first a peak could be taken at (one still open
            // at its window's end, a new one a window on) scored first, then offered in
            // order: each correlator sees the calls one candidate at a time makes (its
            // FFT blocks and running sums depend on them), so the scores are the same
            // however score_candidates shares the work.
            uint64_t bound = candidate + peak_window;
            if (peak.open)
                bound = std::min(bound,
                                 peak.at + (peak_comb ? comb_peak_window : peak_window));
            if (coherent_peak.open)
                bound = std::min(bound, coherent_peak.at + peak_window);
            scores_first = candidate;
            scores_count =
                size_t(std::min(bound + 1, input.total() - span) - scores_first);
            scores_offered = 0;
            scores_coherent = coherent;
            for (size_t a = 0; a < alignments.size(); ++a)
                score_candidates(a, scores_first, scores_count, coherent);
        }
        const double coherent_threshold = cfg.detection_threshold + coherent_margin;
        const double weak_threshold = cfg.confirm_weak_with_data
                                          ? coherent_threshold - weak_margin
                                          : coherent_threshold;
        while (scores_offered < scores_count) {
            // A burst begun at a data start refused: the next start that passed.
            if (data_start_refused && stage == phase::search) {
                data_start_refused = false;
                if (!data_start_alternates.empty()) {
                    const weak_judgement next = data_start_alternates.front();
                    data_start_alternates.erase(data_start_alternates.begin());
                    take_data_start(next);
                    return true;
                }
            }
            // A held weak peak is judged once its data are in and no peak is open that
            // might take its place.
            if (!weak.empty() && stage == phase::search &&
                candidate >= weak_judged_at() && !peak.open && !coherent_peak.open &&
                weak_detection_confirmed())
                return true;
            // A WN0 start found from its data alone, once the peaks held before its
            // data end are judged (one may be its preamble's; peaks in its data are
            // held and refused all along) and none is open.
            if (!data_starts.empty() && stage == phase::search &&
                (weak.empty() ||
                 weak.front().at > data_start_judged_end(data_starts.front())) &&
                candidate >= data_starts_judged_at() && !peak.open &&
                !coherent_peak.open && !local_weak_peak.open && data_start_confirmed())
                return true;
            const size_t i = scores_offered++;
            const uint64_t n = candidate++;
            // (Between bursts only: a burst's own data are its.)
            if (stage == phase::search)
                watch_data(n);
            else
                reset_data_watches();
            for (size_t a = 0; a < alignments.size(); ++a) {
                const search_score& s = search_scores[a][i];
                if (peak.offer(s.z, n, s.sum, cfg.detection_threshold)) {
                    peak_alignment = a;
                    peak_comb = s.sections > 0;
                    peak_sections = s.sections;
                }
                if (!coherent)
                    continue;
                // One path's score and, where asked, two paths' offered to a tracker
                // that keeps the alignment and the second path of its best.
                const auto offer_coherent = [&](auto& tracker,
                                                size_t& alignment,
                                                auto& other) {
                    if (tracker.offer(s.coherent_z, n, s.coherent_sum, weak_threshold)) {
                        alignment = a;
                        other = 0;
                    }
                    if (cfg.coherent_two_paths &&
                        tracker.offer(
                            s.paths.z, s.paths.at, s.paths.sum, weak_threshold)) {
                        alignment = a;
                        other = s.paths.other;
                    }
                };
                offer_coherent(coherent_peak, coherent_alignment, coherent_other);
                if (cfg.confirm_weak_with_data)
                    offer_coherent(
                        local_weak_peak, local_weak_alignment, local_weak_other);
            }
            if (local_weak_peak.taken(n, local_weak_window) &&
                local_weak_peak.z < coherent_threshold)
                hold_weak({ local_weak_peak.at,
                            local_weak_other,
                            local_weak_peak.offset_hz(symbol_rate),
                            local_weak_peak.z,
                            local_weak_alignment });
            if (peak.taken(n, peak_comb ? comb_peak_window : peak_window)) {
                coherent_peak.open = false;
                local_weak_peak.open = false;
                weak.clear();
                data_start_alternates.clear();
                found_weak = false;
                found_from_data = false;
                found_by_coherent = false;
                found_other = 0;
                found_alignment = peak_alignment;
                found_z = peak.z;
                found_sections = peak_comb ? peak_sections : 0;
                found_at = peak.at;
                found_hz = peak.offset_hz(symbol_rate);
                return true;
            }
            // The coherent peak only where the differential correlation has none open
            // (a detection the differential makes is taken as without the coherent
            // search).
            if (coherent_peak.taken(n, peak_window) && !peak.open) {
                if (coherent_peak.z < coherent_threshold) {
                    // Under the threshold: held for its data.
                    hold_weak({ coherent_peak.at,
                                coherent_other,
                                coherent_peak.offset_hz(symbol_rate),
                                coherent_peak.z,
                                coherent_alignment });
                    continue;
                }
                weak.clear();
                data_start_alternates.clear();
                local_weak_peak.open = false;
                found_weak = false;
                found_from_data = false;
                found_by_coherent = true;
                found_other = coherent_other;
                found_alignment = coherent_alignment;
                found_z = coherent_peak.z;
                found_sections = 0;
                found_at = coherent_peak.at;
                found_hz = coherent_peak.offset_hz(symbol_rate);
                if (found_other == 0)
                    return true;
                paths_pending = true;
                break;
            }
        }
    }
}

void m110d_receiver::state::hold_weak(const weak_candidate& w)
{
    auto at = std::find_if(
        weak.begin(), weak.end(), [&](const weak_candidate& h) { return h.at >= w.at; });
    if (at != weak.end() && at->at == w.at && at->alignment == w.alignment)
        return;
    weak.insert(at, w);
}

double m110d_receiver::state::refined_offset_hz(uint64_t at, double hz) const
{
    const std::vector<cf>& known = alignments[found_alignment].known;
    for (unsigned chunk : { 8u, 32u }) {
        const std::vector<cf> y =
            symbols_at_offset(input, at, known_symbols, hz, symbol_rate);
        cd turn;
        add_turns(y, known, 0, known_symbols, chunk, turn);
        hz += slope_hz(turn, chunk, symbol_rate);
    }
    return hz;
}

bool m110d_receiver::state::paths_detection_reads() const
{
    // The offset refined as the preamble stage refines it (the search's is a quarter
    // turn over the fields).
    const double hz = refined_offset_hz(found_at, found_hz);
    // Whether they are a preamble's: fields that fail their checks may be its (on two
    // paths at a strong z the equaliser reads what one gain per path does not: F.1487
    // poor, WN1 at 2 dB, z 7.7, a burst lost), the preamble stage reads them as usual.
    double fields_z = 0;
    return fields_on_paths(found_at, found_other, hz, &fields_z, true).has_value() &&
           fields_z >= watch_fields_z;
}

bool m110d_receiver::state::watch(std::vector<m110d_burst>& done)
{
    // With frames unapplied the watch runs at their chunk ends (apply_unapplied).
    return !watch_in_log && watch_now(done);
}

bool m110d_receiver::state::watch_now(std::vector<m110d_burst>& done)
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
    // (A weak peak the data confirmed: the offset they turn by.)
    const double hz = found_sections > 1
                          ? superframes_offset_hz(found_sections - 1, found_hz)
                      : found_weak ? found_hz
                                   : refined_offset_hz(start, found_hz);
    double power = 0;
    for (unsigned k = 0; k < known_symbols; ++k)
        power += std::norm(input.at(start + uint64_t(k) * sps));
    reference_power = power / known_symbols;
    input.start_derotation(start, hz);
    burst_hz = hz;
    burst_sections = found_sections;
    readings_open = cfg.find_scrambler;
    settle_deferred_judge();
    judged_kept.reset();
    kept_data_start.reset();
    first_attempt[0].reset();
    first_attempt[1].reset();
    scrambler_judge.start_burst();
    begin_burst();
    return true;
}

void m110d_receiver::state::begin_again_with_scrambler(x9_orientation reading)
{
    if (symbol_tap)
        symbol_tap->resize(symbol_tap->size() - std::min(tapped, symbol_tap->size()));
    held_symbols = 0;
    data_readings.scrambler = reading;
    found_sections = burst_sections;
    block_llr.clear();
    if (kept_data_start) {
        begin_at_data_start(*kept_data_start);
        return;
    }
    input.start_derotation(start, burst_hz);
    begin_burst();
}

void m110d_receiver::state::keep_data_start()
{
    auto k = std::make_unique<data_start>();
    k->equaliser = std::make_unique<channel_tracking_equaliser>(*equaliser);
    k->timing_shift = timing_shift;
    k->symbol = symbol;
    k->timing_checked = timing_checked;
    k->frequency_drift_hz = frequency_drift_hz;
    k->pending_slip = pending_slip;
    k->window = window;
    k->field_chips = field_chips;
    k->presence = presence;
    k->snr_report = snr_report;
    k->known_error = known_error;
    k->mode = mode;
    k->constraint_length = constraint_length;
    k->preamble_readings = preamble_readings;
    k->fetch_order = fetch_order;
    k->nearest_points = nearest_points;
    k->anchors = anchors;
    k->count_ahead = count_ahead;
    k->derotation = input.derotation_now();
    kept_data_start = std::move(k);
}

void m110d_receiver::state::begin_at_data_start(const data_start& k)
{
    reset_burst();
    equaliser = std::make_unique<channel_tracking_equaliser>(*k.equaliser);
    timing_shift = k.timing_shift;
    symbol = k.symbol;
    timing_checked = k.timing_checked;
    frequency_drift_hz = k.frequency_drift_hz;
    pending_slip = k.pending_slip;
    window = k.window;
    field_chips = k.field_chips;
    presence = k.presence;
    snr_report = k.snr_report;
    known_error = k.known_error;
    mode = k.mode;
    constraint_length = k.constraint_length;
    preamble_readings = k.preamble_readings;
    fetch_order = k.fetch_order;
    nearest_points = k.nearest_points;
    anchors = k.anchors;
    count_ahead = k.count_ahead;
    input.restore_derotation(k.derotation);
    // What read_fields makes under the reading now in use.
    demapper.reset(new m110d_demapper(*mode, data_readings));
    decoder.reset(new m110d_block_decoder(
        *mode, constraint_length, data_readings.tail_biting, cfg.k7_newest_bit_lsb));
}

void m110d_receiver::state::begin_burst()
{
    start_channel();
    reset_burst();
}

void m110d_receiver::state::start_channel()
{
    channel_tracking_equaliser_config tracking;
    tracking.forgetting = scaled_forgetting(cfg.forgetting);
    tracking.solve_interval = cfg.equaliser_solve_interval * time_scale;
    tracking.decision_weight = cfg.decision_weight;
    tracking.time_scale = time_scale;
    tracking.two_threads = cfg.threads > 1;
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
}

void m110d_receiver::state::reset_burst()
{
    block_llr.clear();
    block_pass.end();
    fde.reset();
    burst_blocks = 0;
    watch_in_log = false;
    job_decoders[0].reset();
    job_decoders[1].reset();
    job_cancellers[0].reset();
    job_cancellers[1].reset();
    fde_choice = -1;
    pending_slip = 0;
    anchors.clear();
    segment_error = segment_variance = 0;
    segment_symbols = 0;
    walsh_windows.clear();
    wn0_block_windows.clear();
    wn0_block_positions.clear();
    wn0_block_first.clear();
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
    // Data the search takes for known chips read as fields now and then (count 0 and a
    // WID that passes by chance: WN12/48kHz/L, AWGN, 29 dB, M = 1, 60 s, a burst cut
    // and lost), with fields_z about 3; a preamble read so has 13 and more.
    double fields_z = 0;
    return !beyond_offset_reach(hz) &&
           fields_on_one_gain(at, hz, &fields_z).has_value() &&
           fields_z >= watch_fields_z;
}

std::optional<m110d_fields>
m110d_receiver::state::fields_on_one_gain(uint64_t at, double hz, double* fields_z) const
{
    // One complex gain over the known chips (the strongest path at the detected timing),
    // the count and WID read from the samples it derotates.
    const alignment_search& a = alignments[found_alignment];
    const std::vector<cf> y = symbols_at_offset(input, at, preamble_end, hz, symbol_rate);
    cd h;
    for (unsigned k = 0; k < known_symbols; ++k)
        h += cd(y[k]) * std::conj(cd(a.known[k]));
    if (std::abs(h) == 0)
        return std::nullopt;
    const cf turn(std::conj(h) / std::abs(h));
    std::vector<cf> chips;
    double power = 0;
    for (unsigned k = walsh_chips; k < preamble_end; ++k) {
        chips.push_back(y[k] * turn);
        power += std::norm(y[k]);
    }
    const std::optional<m110d_fields> f = fields_of(chips, a.alignment);
    if (f && fields_z)
        *fields_z = power > 0 ? f->correlation / std::sqrt(0.5 * power) : 0.0;
    return f;
}

bool m110d_receiver::state::combined_field_chips(size_t alignment,
                                                 uint64_t at,
                                                 uint64_t other,
                                                 double hz,
                                                 std::vector<cf>& chips,
                                                 double& deviation) const
{
    // Each path's gain over the known chips, the count and WID chips combined by them
    // (maximal ratio: the paths' noise is the same).
    const alignment_search& a = alignments[alignment];
    std::vector<cd> combined(preamble_end - walsh_chips);
    for (uint64_t path : { at, other }) {
        if (path == 0)
            continue;
        const std::vector<cf> y =
            symbols_at_offset(input, path, preamble_end, hz, symbol_rate);
        cd h;
        for (unsigned k = 0; k < known_symbols; ++k)
            h += cd(y[k]) * std::conj(cd(a.known[k]));
        for (unsigned k = walsh_chips; k < preamble_end; ++k)
            combined[k - walsh_chips] += cd(y[k]) * std::conj(h);
    }
    double scale = 0, power = 0;
    for (const cd& c : combined) {
        scale = std::max(scale, std::abs(c));
        power += std::norm(c);
    }
    if (!(scale > 0))
        return false;
    chips.clear();
    for (const cd& c : combined)
        chips.push_back(cf(c / scale));
    power /= scale * scale;
    deviation = std::sqrt(0.5 * power);
    return true;
}

std::array<std::array<double, 4>, 9>
m110d_receiver::state::field_correlations(const std::vector<cf>& chips,
                                          m110d_pn_alignment alignment) const
{
    std::array<std::array<double, 4>, 9> c;
    for (unsigned s = 0; s < 9; ++s)
        c[s] =
            m110d_walsh_correlations(chips.data() + size_t(s) * walsh_chips,
                                     walsh_chips,
                                     s < 4 ? m110d_pn_table::count : m110d_pn_table::wid,
                                     s < 4 ? s : s - 4,
                                     alignment);
    return c;
}

std::optional<m110d_fields> m110d_receiver::state::fields_on_paths(
    uint64_t at, uint64_t other, double hz, double* fields_z, bool best_at_any_z) const
{
    const alignment_search& a = alignments[found_alignment];
    std::vector<cf> chips;
    double deviation = 0;
    if (!combined_field_chips(found_alignment, at, other, hz, chips, deviation))
        return std::nullopt;
    const std::optional<m110d_fields> f = fields_of(chips, a.alignment);
    if (f && fields_z)
        *fields_z = f->correlation / deviation;
    // (On one path as before: the hard read alone.)
    if (f || (!best_at_any_z && (other == 0 || found_z >= coherent_best_fields_z)))
        return f;
    // Symbol by symbol the fields failed their checks (in a fade a Walsh symbol of 32
    // chips at -6 dB each is decided wrong about one time in 20): the valid count and
    // WID whose symbols' correlations add up the most. The count must be 0, and the nine
    // symbols' correlations stand out of the chips' power as the watch asks (noise 3.1,
    // deviation 0.7).
    const std::array<std::array<double, 4>, 9> c = field_correlations(chips, a.alignment);
    double count_correlation = 0;
    for (unsigned count = 0; count < m110d_max_superframes; ++count) {
        const auto dibits = m110d_count_dibits(count);
        double sum = 0;
        for (unsigned s = 0; s < 4; ++s)
            sum += c[s][dibits[s]];
        if (count == 0)
            count_correlation = sum;
        else if (sum >= count_correlation)
            return std::nullopt;
    }
    std::optional<m110d_fields> best;
    for (m110d_wid_parity parity :
         { m110d_wid_parity::checksum, m110d_wid_parity::caption_d2_zero }) {
        if (parity != cfg.readings.wid_parity && !cfg.find_preamble_readings)
            continue;
        for (unsigned wn = 0; wn <= m110d_max_wn; ++wn)
            for (m110d_interleaver interleaver : { m110d_interleaver::ultra_short,
                                                   m110d_interleaver::short_,
                                                   m110d_interleaver::medium,
                                                   m110d_interleaver::long_ })
                for (unsigned k : { 7u, 9u }) {
                    if (!m110d_mode_for(cfg.bandwidth_khz, wn, interleaver))
                        continue;
                    m110d_fields f;
                    f.alignment = a.alignment;
                    f.parity = parity;
                    f.wid = { wn, interleaver, k };
                    const auto dibits = m110d_wid_dibits(f.wid, parity);
                    f.correlation = count_correlation;
                    for (unsigned s = 0; s < 5; ++s)
                        f.correlation += c[4 + s][dibits[s]];
                    if (!best || f.correlation > best->correlation)
                        best = f;
                }
    }
    if (!best || !(best->correlation >= watch_fields_z * deviation))
        return std::nullopt;
    if (fields_z)
        *fields_z = best->correlation / deviation;
    return best;
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

bool m110d_receiver::state::count_refuses() const
{
    if (found_sections > 1 || found_by_coherent || found_weak || found_from_data ||
        field_chips.size() < 4 * size_t(walsh_chips))
        return false;
    // fields_of refuses any count but 0, under either WID parity.
    const std::optional<unsigned> count =
        m110d_read_count(field_chips.data(), walsh_chips, burst_alignment->alignment);
    return !count || *count != 0;
}

bool m110d_receiver::state::read_fields()
{
    count_ahead = 0;
    if (beyond_offset_reach(burst_hz))
        return false;
    std::optional<m110d_fields> f = fields_of(field_chips, burst_alignment->alignment);
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
    // A preamble of one super-frame the coherent search found in a fade (chips of -5
    // dB): the equaliser, trained on its 160 known chips and then on its own WID chip
    // decisions (a third of them wrong there), can lose fields that one gain over the
    // known chips reads (each Walsh symbol's 32 chips decided together; on both paths
    // where the search added two). Only where the differential search would not have
    // found it: its detections read as before.
    if (!f && found_by_coherent && !found_weak)
        f = fields_on_paths(start, found_other, burst_hz);
    // A weak peak the data confirmed: the fields read for the frame structure they
    // carry, unless the equaliser's read passes with a mode of the same frames.
    if (found_weak) {
        const auto frames_of = [this](const m110d_fields& g) {
            const auto m = m110d_mode_for(cfg.bandwidth_khz, g.wid.wn, g.wid.interleaver);
            return std::array<unsigned, 4>{
                m->wn == 0, m->data_symbols, m->probe_symbols, m->frames_per_block
            };
        };
        if (!f || frames_of(*f) != frames_of(weak_fields))
            f = weak_fields;
    }
    if (!f)
        return false;
    wid_candidates.clear();
    // A faint coherent detection (3 kHz): its fields may be read wrong; its first block
    // must fit one of the modes of the frame structure read, as a weak one's must.
    const bool faint = !found_weak && found_by_coherent && found_z < sure_cut_z &&
                       cfg.bandwidth_khz == 3 && cfg.confirm_weak_with_data;
    if (faint) {
        weak_fields_unsure = true;
        weak_start_decoded = false;
        weak_start_failures = 0;
    }
    if (found_weak || faint) {
        const auto read =
            m110d_mode_for(cfg.bandwidth_khz, f->wid.wn, f->wid.interleaver);
        for (const m110d_mode& m : m110d_modes_at(cfg.bandwidth_khz))
            if ((m.wn == 0) == (read->wn == 0) && m.data_symbols == read->data_symbols &&
                m.probe_symbols == read->probe_symbols &&
                m.frames_per_block == read->frames_per_block &&
                m110d_bits_per_symbol(m.wn) == m110d_bits_per_symbol(read->wn))
                for (unsigned k : { 7u, 9u })
                    wid_candidates.emplace_back(m, k);
    }
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
    // The WN0 watch's starts lie in this burst.
    data_starts.clear();
    return true;
}

} // namespace phy
} // namespace hfstack
} // namespace gr
