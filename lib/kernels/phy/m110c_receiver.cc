/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "m110c_receiver.h"
#include "m110c_receiver_state.h"

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

using namespace m110c_rx;

namespace {

constexpr double two_pi = 6.283185307179586476925286766559;
constexpr size_t peak_window = 8; // samples past a peak before it is taken
// Each half's z-score must pass this too: a plus probe followed by data matches the
// head alone (its z reaches sqrt(31) = 5.6 at high SNR; noise alone passes 3.5 in one
// test of 2e5).
constexpr double section_half_threshold = 3.5;
// The probes are Frank sequences: shifted by 4 symbols they still match, turned by 90
// degrees a symbol (600 Hz); a section's detection implying more offset than this is
// such a shift.
constexpr double section_max_offset_hz = 300;
// From a transmission's first symbol to its first re-inserted section's head (the plus
// probe of frame 71): a section found with no burst in progress may be that one, its
// preamble missed (in a fade); the receiver keeps this much behind its search.
constexpr uint64_t first_section_head =
    m110c_preamble_symbols +
    (m110c_reinsert_period_frames - 1) * uint64_t(m110c_frame_symbols) +
    m110c_data_symbols;
// Mini-probes found where a missed preamble's frames would have them: the mean over the
// 72 of each probe's best match (|correlation|^2 over the received energy, within 6
// symbols of the timing) must reach this (noise or unrelated data: about 3.2; a probe
// in the clear: 31).
constexpr double look_back_evidence = 10.0;
constexpr int look_back_reach = 6; // symbols either side of the section's timing

std::vector<cf> sync_points()
{
    std::vector<cf> points;
    for (uint8_t s : m110c_sync_sequence())
        points.push_back(psk8(s));
    return points;
}

} // namespace

m110c_receiver::state::state(const m110c_receiver_config& c)
    : cfg(c), sync_correlator(sync_points(), history_symbols), data_readings(c.readings)
{
    anchors.set_probe(m110c_probe_symbols, probe_period);
    const std::vector<uint8_t> p =
        m110c_preamble(*m110c_mode_for(3200, m110c_interleaver::short_));
    const auto rotation = [&](size_t k) {
        const size_t g = m110c_sync_symbols + k;
        return std::conj(psk8(p[g]) * std::conj(psk8(p[g - 1])));
    };
    for (size_t k = 1; k < section_head; ++k)
        conj_head_rotations.push_back(rotation(k));
    for (size_t k = section_tail_from + 1; k < section_symbols; ++k)
        conj_tail_rotations.push_back(rotation(k));
}

m110c_receiver::m110c_receiver(const m110c_receiver_config& config)
{
    check_tracking_settings(
        config.forgetting, config.decision_weight, config.equaliser_solve_interval);
    check_tracking_settings(
        config.forgetting, config.decision_weight, config.qam64_solve_interval);
    if (config.decoder_passes == 0 || config.qam64_decoder_passes == 0)
        throw std::invalid_argument("m110c_receiver: decoder_passes must be at least 1");
    d.reset(new state(config));
}

m110c_receiver::~m110c_receiver() = default;

bool m110c_receiver::carrier_detected() const { return d->stage != phase::search; }

uint64_t m110c_receiver::samples() const { return d->input.total(); }

void m110c_receiver::tap_symbols(std::vector<cf>* symbols) { d->symbol_tap = symbols; }

size_t m110c_receiver::tapped_unsettled() const
{
    return std::max(d->scrambler_open ? d->tapped : 0, d->held_symbols);
}

void m110c_receiver::process(const cf* x, size_t n, std::vector<m110c_burst>& done)
{
    d->input.append(x, n);
    run_serial_tone_stages(*d, done);
}

void m110c_receiver::state::trim()
{
    uint64_t keep = stage == phase::search     ? candidate
                    : stage == phase::preamble ? start
                                               : start + symbol * sps;
    keep = std::min({ keep, candidate, input.total() });
    if (stage == phase::data && data_start_equaliser && !mode_checked)
        keep = std::min(keep, start + data_start_symbol * sps);
    if (stage == phase::data && scrambler_open) {
        const uint64_t back =
            (first_section_head + look_back_reach + m110c_probe_symbols) * sps;
        keep = std::min(keep, start > back ? start - back : 0);
    }
    // The block's last decoder-aided pass equalises its suspect frames backward again.
    if (stage == phase::data && block_pass.active() && cfg.backward_frames)
        keep = std::min(keep, start + block_pass.first_symbol() * sps);
    if (stage != phase::data) {
        const uint64_t back =
            (first_section_head + look_back_reach + m110c_probe_symbols) * sps;
        keep = std::max(keep > back ? keep - back : 0, std::min(keep, quiet_since));
    }
    // The equaliser's window reaches back up to 2 x 16 symbols of precursor and timing;
    // a frame is equalised again backward once its 256 data symbols are in.
    keep = keep > 320 * sps ? keep - 320 * sps : 0;
    input.release_before(keep);
}

void m110c_receiver::state::restart_search(uint64_t from)
{
    restart_serial_tone_search(*this, from, sps);
}

bool m110c_receiver::state::watch(std::vector<m110c_burst>& done)
{
    // Only past our own preamble (its sync would match).
    const uint64_t data_start = start + uint64_t(m110c_preamble_symbols - skipped) * sps;
    if (!watch_for_new_preamble(
            *this, data_start, done, [this] { return search(false); }))
        return false;
    found_section = false;
    return true;
}

void m110c_receiver::state::search_section(uint64_t n)
{
    // Head and tail each, and together.
    cf head, tail;
    volk_32fc_x2_dot_prod_32fc(&head,
                               head_products.at(input, n + sps),
                               conj_head_rotations.data(),
                               unsigned(conj_head_rotations.size()));
    volk_32fc_x2_dot_prod_32fc(&tail,
                               tail_products.at(input, n + (section_tail_from + 1) * sps),
                               conj_tail_rotations.data(),
                               unsigned(conj_tail_rotations.size()));
    const double eh = head_products.energy(n + sps);
    const double et = tail_products.energy(n + (section_tail_from + 1) * sps);
    if (eh > 0 && et > 0 && std::abs(head) >= section_half_threshold * std::sqrt(eh) &&
        std::abs(tail) >= section_half_threshold * std::sqrt(et)) {
        const double zs = std::abs(head + tail) / std::sqrt(eh + et);
        const double hz = std::arg(cd(head + tail)) / two_pi * 2400.0;
        if (std::abs(hz) <= section_max_offset_hz &&
            peak.offer(zs, n, cd(head + tail), cfg.detection_threshold))
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
    const std::vector<uint8_t> generic =
        m110c_preamble(*m110c_mode_for(3200, m110c_interleaver::short_));
    preamble_known.clear();
    for (uint8_t s : generic)
        preamble_known.push_back(psk8(s));
    const std::vector<cf> known(preamble_known.begin() + long(skipped),
                                preamble_known.end());
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
            const std::vector<cf> section(preamble_known.begin() + m110c_sync_symbols,
                                          preamble_known.end());
            begin_burst(preamble_known, &section, section_at);
            // Derotated afresh from the burst's start: the frequency loop's changes
            // apply only to samples not derotated yet, and those up to the section were.
            input.start_derotation(start, hz);
            return true;
        }
        begin_burst(std::vector<cf>(preamble_known.begin() + long(skipped),
                                    preamble_known.end()));
    } else {
        // Until D0..D2 are read, the preamble is known up to the "2" after MP+.
        begin_burst(
            std::vector<cf>(preamble_known.begin(), preamble_known.begin() + known_lead));
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
    if (start < back + reach ||
        start - back - reach < std::max(input.base(), quiet_since))
        return false;
    const uint64_t first = start - back;
    input.start_derotation(first, hz);
    double evidence = 0;
    for (unsigned f = 0; f < m110c_reinsert_period_frames; ++f) {
        const auto& probe = m110c_probe(m110c_probe_is_minus(*mode, f));
        const uint64_t at =
            first + (m110c_preamble_symbols + uint64_t(f) * m110c_frame_symbols +
                     m110c_data_symbols) *
                        sps;
        double best = 0;
        for (int d = -look_back_reach; d <= look_back_reach; ++d) {
            cd c;
            double energy = 0;
            for (unsigned j = 0; j < m110c_probe_symbols; ++j) {
                const cd x(input.derotated(
                    uint64_t(int64_t(at) + (int64_t(j) + d) * int64_t(sps))));
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
            h += cd(input.derotated(start + uint64_t(k) * sps)) *
                 std::conj(cd(preamble_known[skipped + k]));
    d_estimates.clear();
    for (unsigned j = 0; j < 3 * m110c_d_field_symbols; ++j)
        d_estimates.push_back(
            cd(input.derotated(start + uint64_t(section_head + j) * sps)) * std::conj(h));
    read_codes();
    if (!mode)
        return false;
    know_preamble_of_mode();
    return true;
}

void m110c_receiver::state::begin_burst(const std::vector<cf>& known,
                                        const std::vector<cf>* measured,
                                        uint64_t measured_at)
{
    channel_tracking_equaliser_config tracking;
    tracking.forgetting = cfg.forgetting;
    tracking.solve_interval = cfg.equaliser_solve_interval;
    tracking.decision_weight = cfg.decision_weight;
    serial_tone_channel_start channel =
        start_serial_tone_channel(input,
                                  measured ? measured_at : start,
                                  measured ? *measured : known,
                                  cfg.max_delay_spread_symbols,
                                  tracking,
                                  cd(std::sqrt(reference_power)),
                                  1e-3);
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

} // namespace phy
} // namespace hfstack
} // namespace gr
