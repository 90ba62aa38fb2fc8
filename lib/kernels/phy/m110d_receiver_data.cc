/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

// The App D receiver's data: symbols equalised and kept, frames equalised again backward,
// the decoder-aided passes over a block, its decoding and the burst's report (the
// receiver's state: m110d_receiver_state.h).

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

// WN0's signal is there for a block whose Walsh symbols were read decisively: the mean
// over the block of the chosen pattern's correlation over sqrt(32 x the chips' energy)
// (1 in the clear, 0.58 at -3 dB per chip, about 0.13 for noise alone).
constexpr double wn0_match = 0.3;
// wn0_end_at_foreign_block: a later block whose match is under this reads as noise
// (another transmission under this burst's scrambler periods: 0.09-0.14 on F.1487 poor
// at -2 dB; the burst's own second blocks in a deep fade too, 5 of 552).
constexpr double wn0_foreign_block_match = 0.15;
// A frame is equalised again backward when the mean squared error of some 32 of its
// decisions exceeds this share of the squared distance between nearest points (as the
// App C receiver's).
constexpr double backward_suspect_error = 0.1;
// choose_wid_by_data: the most of its first block's LLR weight over what they expect
// wrong (a share of their whole weight) the code of a burst whose fields stood out
// less may leave. The right code's 0.3-3 % on F.1487 poor (WN0 at -2 dB, WN1 at 2 dB);
// a wrong constraint length or WN 4.5-11 %, a wrong scrambler reading 11-22 %.
constexpr double unsure_start_excess = 0.04;

} // namespace

void m110d_receiver::state::commit(cd z, cd sent, bool known_symbol)
{
    equaliser->decide(sent, known_symbol);
    if (known_symbol) {
        presence.add_known(z, sent);
        snr_report.add(std::norm(z - sent), double(symbol) / symbol_rate);
    }
}

std::vector<uint8_t> m110d_receiver::state::block_coded_again()
{
    std::vector<uint8_t> user;
    decoder->decode(block_llr.data(), user, cfg.threads > 1);
    return m110d_block_channel_bits(*mode,
                                    user.data(),
                                    fetch_order,
                                    constraint_length,
                                    data_readings.tail_biting,
                                    cfg.k7_newest_bit_lsb);
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

bool m110d_receiver::state::choose_wid_by_data()
{
    // Each candidate's decoding coded again against the LLRs: the right code leaves
    // about the disagreement the LLRs expect, a wrong one much more (its Viterbi fits
    // the bits only in part).
    std::optional<std::pair<m110d_mode, unsigned>> best;
    double best_excess = std::numeric_limits<double>::infinity();
    for (const auto& [m, k] : wid_candidates) {
        m110d_block_decoder candidate(
            m, k, data_readings.tail_biting, cfg.k7_newest_bit_lsb);
        if (candidate.channel_bits() != block_llr.size())
            continue;
        std::vector<uint8_t> user;
        candidate.decode(block_llr.data(), user, cfg.threads > 1);
        const reencoding_agreement a =
            agreement_of(block_llr,
                         m110d_block_channel_bits(m,
                                                  user.data(),
                                                  m110d_fetch_order(m),
                                                  k,
                                                  data_readings.tail_biting,
                                                  cfg.k7_newest_bit_lsb));
        const double excess = a.weight > 0 ? (a.wrong - a.expected) / a.weight : 0;
        if (excess < best_excess) {
            best_excess = excess;
            best.emplace(m, k);
        }
    }
    wid_candidates.clear();
    const bool decoded = best_excess <= unsure_start_excess;
    weak_start_decoded = weak_start_decoded || decoded;
    weak_start_failures += !decoded;
    // Under the other scrambler reading (find_scrambler tries it next) it may decode.
    const unsigned failures_refusing = mode->wn != 0 && cfg.find_scrambler ? 2 : 1;
    const bool refused = weak_fields_unsure && !weak_start_decoded &&
                         weak_start_failures >= failures_refusing;
    if ((found_from_data && set_data_start_aside(decoded, best_excess)) || refused) {
        data_start_refused = found_from_data;
        mode.reset();
        readings_open = false;
        block_llr.clear();
        drop_held_symbols(symbol_tap, held_symbols);
        restart_after_refusal();
        return false;
    }
    data_start_alternates.clear();
    if (!best || (best->first.wn == mode->wn && best->second == constraint_length))
        return true;
    mode = best->first;
    constraint_length = best->second;
    fetch_order = m110d_fetch_order(*mode);
    if (mode->wn != 0)
        demapper.reset(new m110d_demapper(*mode, data_readings));
    decoder.reset(new m110d_block_decoder(
        *mode, constraint_length, data_readings.tail_biting, cfg.k7_newest_bit_lsb));
    return true;
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
        settle_deferred_judge();
        const x9_orientation best = scrambler_judge.judge(
            data_readings.scrambler, agreement_of(block_llr, channel));
        if (best != data_readings.scrambler) {
            begin_again_with_scrambler(best);
            return false;
        }
        readings_open = false;
    }
    if (cfg.reliability_threshold > -std::numeric_limits<double>::infinity()) {
        const double reliability =
            decoder->decode_with_reliability(block_llr.data(), bits, cfg.threads > 1);
        least_reliability = std::min(least_reliability, reliability);
        unreliable_blocks += reliability < cfg.reliability_threshold;
    } else {
        decoder->decode(block_llr.data(), bits);
    }
    block_llr.clear();
    block_bits_in();
    return true;
}

void m110d_receiver::state::block_bits_in()
{
    if (eom_at == no_eom) {
        const size_t found =
            find_bits_word(bits, eom_searched, m110d_eom, m110d_eom_bits);
        if (found != SIZE_MAX)
            eom_at = found;
    }
    if (cfg.find_tail_biting)
        settle_tail_biting();
    block_decoded = true;
}

bool m110d_receiver::state::data(std::vector<m110d_burst>& done)
{
    for (;;) {
        if (symbol >= preamble_end && fde_chosen()) {
            // The first attempt's data start, for the burst's next ones.
            if (!fde && readings_open && !kept_data_start)
                keep_data_start();
            return fde_data(done);
        }
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
        // WN0's Walsh symbols are read from the windows on the tracked channel
        // (wn0_chip): no equaliser output.
        const bool walsh_read =
            k >= preamble_end && mode->wn == 0 && cfg.wn0_symbol_decisions;
        cd z;
        if (walsh_read)
            equaliser->track(window.data());
        else
            z = equaliser->equalise(window.data());
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
            if (k + 1 == known_symbols && count_refuses()) {
                // What read_fields would do once the WID is in (the count chips read
                // the same then): refused now, the WID not equalised for nothing. The
                // WID of a detection at a long preamble's first super-frame (count 19
                // of M = 20) took a sixth of a second of CPU at 48 kHz, 50 times a
                // real preamble's. (preamble() waited for the WID's samples, so the
                // search starts again within the same call either way.)
                ++refused;
                mode.reset();
                count_ahead = 0;
                readings_open = false;
                drop_held_symbols(symbol_tap, held_symbols);
                restart_after_refusal();
                return true;
            }
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
                drop_held_symbols(symbol_tap, held_symbols);
                restart_after_refusal();
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
            if (block_end && wid_candidates.empty() && foreign_wn0_block()) {
                end_burst_before_block(k, done);
                return true;
            }
            if (block_llr.size() == decoder->channel_bits()) {
                if (!wid_candidates.empty() && !choose_wid_by_data())
                    return true;
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
                ++held_symbols;
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
                if (!wid_candidates.empty() && !choose_wid_by_data())
                    return true;
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
        if (burst_ended(block_end, matched, done))
            return true;
    }
}

m110d_burst m110d_receiver::state::report() const
{
    m110d_burst burst;
    burst.mode = mode->name();
    burst.start_sample = start;
    // The block FDE's rotation on top of the input's derotation (its residual turn).
    burst.frequency_offset_hz = input.offset_hz() + (fde ? fde->residual_hz : 0.0);
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

bool m110d_receiver::state::burst_ended(bool block_end,
                                        bool matched,
                                        std::vector<m110d_burst>& done)
{
    if (eom_at != no_eom) {
        end_burst(true, done);
        return true;
    }
    if (block_end && presence.block_says_lost(matched)) {
        end_burst(false, done);
        return true;
    }
    if (matched)
        held_symbols = 0;
    if (cfg.deliver_per_block && block_decoded)
        hand_on_decoded(done);
    return false;
}

uint64_t m110d_receiver::state::wn0_block_search_from(uint64_t k) const
{
    // A Walsh symbol before the block's first chip: the next transmission may follow
    // at once, and the tracked timing have slipped a little.
    const uint64_t block_symbols =
        uint64_t(mode->frames_per_block) * m110d_walsh_data_chips;
    const uint64_t first =
        preamble_end + (k - preamble_end) / block_symbols * block_symbols;
    return start + (first - m110d_walsh_data_chips) * sps;
}

bool m110d_receiver::state::foreign_wn0_block() const
{
    // (A block decoded before: this one is not the burst's first.)
    return cfg.wn0_end_at_foreign_block && eom_at == no_eom && !bits.empty() &&
           walsh_match < wn0_foreign_block_match * mode->frames_per_block;
}

void m110d_receiver::state::end_burst_before_block(uint64_t k,
                                                   std::vector<m110d_burst>& done)
{
    // Its LLRs are not decoded (its tapped symbols are held, as a lost block's).
    block_llr.clear();
    end_burst(false, done, wn0_block_search_from(k));
}

void m110d_receiver::state::end_burst(bool eom,
                                      std::vector<m110d_burst>& done,
                                      std::optional<uint64_t> search_from)
{
    readings_open = false;
    watch_in_log = false;
    if (eom) // the block with the EOM is the burst's
        held_symbols = 0;
    // The symbols of blocks not judged part of the burst (noise after it was lost)
    // are not shown.
    drop_held_symbols(symbol_tap, held_symbols);
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
    // No WN0 data start within this burst (its last block's fill is data-like under
    // the same scrambler periods).
    const uint64_t burst_end = search_from ? *search_from : start + next * sps;
    data_starts_judged_through = std::max(data_starts_judged_through, burst_end);
    data_starts.erase(std::remove_if(data_starts.begin(),
                                     data_starts.end(),
                                     [&](const weak_candidate& w) {
                                         return w.at <= data_starts_judged_through;
                                     }),
                      data_starts.end());
    // A new preamble may have begun where the watch has not looked yet.
    uint64_t from = burst_end;
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
