/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

// The App C receiver's data: symbols equalised and kept, the mode checked on the
// mini-probes, frames equalised again backward, the decoder-aided passes over a block,
// its decoding and the burst's report (the receiver's state: m110c_receiver_state.h).

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

// The mode read from the preamble is checked on the probes' signs only when every
// probe's channel correlates with the one before it at least this much (either sign).
constexpr double mode_check_correlation = 0.5;

} // namespace

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
            if (cfg.interpolate_probes &&
                m110c_role_of(skipped + first + i).kind != m110c_symbol_kind::preamble)
                interpolate_channel(again, first + i, shift);
        },
        [&](size_t i, cd z, double variance) {
            const unsigned position = m110c_role_of(skipped + first + i).position;
            const size_t symbol_bit = bit;
            const cd decision =
                demapper->demap_to(z, position, variance, &channel[bit], &block_llr[bit]);
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
            if (last && cfg.backward_frames && position + 1 == m110c_data_symbols &&
                shift == frame_shift && !anchors.empty() && frame_suspect())
                equalise_frame_backward(
                    frame_start, shift, again.noise(), frame_bit, &channel[frame_bit]);
        });
}

bool m110c_receiver::state::window_for(uint64_t k)
{
    return serial_tone_window(
        input, start, k, *equaliser, timing_shift, window, presence);
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
                sum += d_estimates[f * m110c_d_field_symbols + j] *
                       std::conj(cd(psk8(m110c_d_chip(j, c))));
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
        if (symbol % timing_check_symbols == 0 && skipped + symbol > known_lead &&
            timing_checked != symbol) {
            timing_checked = symbol;
            pending_slip += follow_serial_tone_channel(
                input, *equaliser, start + symbol * sps, timing_shift);
        }
        const m110c_symbol_role role = m110c_role_of(skipped + symbol);
        // A frame's anchors before its data (or before the re-inserted section ahead of
        // it: the tracker follows the section's known symbols, the interpolation with
        // it).
        if (mode && cfg.interpolate_probes && role.position == 0 &&
            ((role.kind == m110c_symbol_kind::data && !anchors_for_frame(symbol)) ||
             (role.kind == m110c_symbol_kind::reinserted &&
              !anchors_for_frame(symbol + m110c_reinserted_symbols))))
            return false; // the probe after the frame is not in yet
        if (corrected_mode) {
            restart_data();
            continue;
        }
        if (scrambler_restart) {
            // The burst again from its preamble under the other reading; the symbols
            // this try tapped are tapped again.
            if (symbol_tap)
                symbol_tap->resize(symbol_tap->size() -
                                   std::min(tapped, symbol_tap->size()));
            held_symbols = 0;
            scrambler_restart = false;
            scrambler_rerun = true;
            stage = phase::preamble;
            return true;
        }
        if (!window_for(symbol))
            return false;
        const uint64_t k = skipped + symbol++; // as seen from the transmission's start
        if (mode && mode->coded && decoder_passes() >= 2 &&
            role.kind != m110c_symbol_kind::preamble) {
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
                ++held_symbols;
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
                forward_error[role.position / reliability_symbols] +=
                    std::norm(z - decision);
                forward_variance[role.position / reliability_symbols] += variance;
                // Backward only where some decisions look wrong: it costs as much as
                // the forward equaliser.
                if (role.position + 1 == m110c_data_symbols &&
                    timing_shift == frame_shift && !anchors.empty() && frame_suspect())
                    equalise_frame_backward(frame_first,
                                            timing_shift,
                                            equaliser->noise(),
                                            block_llr.size() -
                                                size_t(m110c_data_symbols) *
                                                    mode->bits_per_symbol);
            }
            if (block_llr.size() == decoder->channel_bits()) {
                for (unsigned pass = 2; pass <= decoder_passes() && block_pass.active();
                     ++pass)
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
            if (block_end && eom_at == no_eom &&
                block_ends_burst(presence, held_symbols)) {
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

void m110c_receiver::state::weigh_decision(cd z,
                                           cd decision,
                                           double variance,
                                           size_t llr_end)
{
    segment_error += std::norm(z - decision);
    segment_variance += variance;
    if (++segment_symbols < reliability_symbols)
        return;
    const float scale = serial_tone_llr_scale(segment_error, segment_variance);
    if (scale < 1)
        for (size_t b = llr_end - reliability_symbols * mode->bits_per_symbol;
             b < llr_end;
             ++b)
            block_llr[b] *= scale;
    segment_error = segment_variance = 0;
    segment_symbols = 0;
}

void m110c_receiver::state::equalise_frame_backward(
    uint64_t first, int64_t shift, double noise, size_t frame_llr, const uint8_t* labels)
{
    channel_tracking_equaliser_config settings;
    settings.forgetting = cfg.forgetting;
    settings.decision_weight = cfg.decision_weight;
    settings.solve_interval =
        cfg.equaliser_solve_interval; // 64QAM's 12 would cost a tenth of the speed
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
            nearest_points =
                std::min(nearest_points, double(std::norm(points[i] - points[j])));
    demapper.reset(new m110c_demapper(*mode, data_readings));
    decoder.reset(new m110c_block_decoder(*mode, data_readings));
    fetch_order = m110c_fetch_order(*mode);
    // 64QAM runs where the tracked taps are steady enough for the feedback to follow
    // them (F.1487 poor, 9600L at 30 dB: 2.0e-2 with one gain, 9.0e-3; the PSK and
    // 16/32QAM modes do as well or better with one gain at their lower SNRs), and
    // needs its solutions fresher.
    equaliser->set_follow_channel(qam64());
    equaliser->set_solve_interval(qam64() ? cfg.qam64_solve_interval
                                          : cfg.equaliser_solve_interval);
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
        return cd(psk8(m110c_probe(m110c_probe_is_minus(
            *mode, unsigned(role.frame % m110c_reinsert_period_frames)))[role.position]));
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
    if (!(measure_anchor(s - m110c_probe_symbols) &&
          measure_anchor(s + m110c_data_symbols)))
        return false;
    // Within an interleaver block the transmission surely goes on: the probe after the
    // next frame too (a block's last frame may be the transmission's).
    const uint64_t frame = m110c_role_of(skipped + s).frame;
    if ((frame + 1) % mode->frames_per_block == 0)
        return true;
    const uint64_t next =
        s + m110c_frame_symbols +
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
    for (; eom_searched + m110c_eom_bits <= bits.size() && eom_at == no_eom;
         ++eom_searched)
        if (bits_word(bits, eom_searched) == m110c_eom)
            eom_at = eom_searched;
}

void m110c_receiver::state::settle_tail_biting()
{
    const tail_biting_start found = phase_search.settle(bits,
                                                        eom_at,
                                                        eom_searched,
                                                        data_readings.tail_biting,
                                                        conv_code_k7,
                                                        decoder->user_bits());
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
        if (word.rfind("scrambler=", 0) == 0 ||
            (mode->coded && word.rfind("tail_biting=", 0) == 0))
            burst.readings += (burst.readings.empty() ? "" : " ") + word;
    return burst;
}

void m110c_receiver::state::end_burst(bool eom, std::vector<m110c_burst>& done)
{
    if (eom) // the block with the EOM is the burst's
        held_symbols = 0;
    // The symbols of blocks not judged part of the burst (noise after it was lost)
    // are not shown.
    drop_held_symbols(symbol_tap, held_symbols);
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
            if (role.frame % m110c_reinsert_period_frames ==
                m110c_reinsert_period_frames - 1)
                next += m110c_reinserted_symbols;
        }
    }
    quiet_since = start + next * sps;
    restart_search(quiet_since);
}

} // namespace phy
} // namespace hfstack
} // namespace gr
