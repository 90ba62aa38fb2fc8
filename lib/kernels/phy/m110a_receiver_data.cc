/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

// The 110A receiver's data: symbols equalised and demapped, 75 bps Walsh symbols, the
// decoder-aided passes over a block, its decoding and the burst's report (the
// receiver's state: m110a_receiver_state.h).

#include "m110a_receiver_state.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <memory>
#include <stdexcept>

namespace gr {
namespace hfstack {
namespace phy {

using namespace m110a_rx;

namespace {

// 75 bps: a block's decided Walsh metrics over the other candidates' mean, summed over
// the block. Noise alone gives 1.3-1.4, a signal at 1 dB on 5 ms / 5 Hz at least 1.9
// (measured); a count of symbols without a clear winner said "lost" at 1 dB.
constexpr double walsh_presence_ratio = 1.6;

} // namespace

bool m110a_receiver::state::window_for(uint64_t k)
{
    return serial_tone_window(
        input, start, k, *equaliser, timing_shift, window, presence);
}

void m110a_receiver::state::commit(cd z, cf sent, bool known_symbol)
{
    equaliser->decide(cd(sent), known_symbol);
    if (!known_symbol)
        return;
    // 75 bps: z is the matched filter's output, whose error holds the intersymbol
    // interference of the pulse and the echoes (a clean recording read 5 dB); the
    // channel model's own error variance is the noise.
    const double error_power = mode && mode->modulation == m110a_modulation::walsh
                                   ? equaliser->estimate_variance()
                                   : std::norm(z - cd(sent));
    presence.add_error_power(error_power);
    report.add(error_power, double(symbol) / 2400.0);
}

void m110a_receiver::state::follow_timing()
{
    pending_slip +=
        follow_serial_tone_channel(input, *equaliser, start + symbol * sps, timing_shift);
}

bool m110a_receiver::state::data(std::vector<m110a_burst>& done)
{
    const auto& scrambler = m110a_data_scrambler();
    const bool walsh = mode->modulation == m110a_modulation::walsh;
    for (;;) {
        // The timing first: the window of this symbol is taken on the grid it sets.
        if (symbol % timing_check_symbols == 0 && walsh_windows.empty() &&
            timing_checked != symbol) {
            timing_checked = symbol;
            follow_timing();
        }
        if (!window_for(symbol))
            break;
        const uint64_t k = symbol++;
        if (k >= data_symbol && block_symbols_seen.empty() && cfg.decoder_passes >= 2 &&
            mode->interleaved() && !walsh) {
            // The state the next interleaver block starts from (a slip just before
            // this symbol is in it already).
            block_start_equaliser.reset(new channel_tracking_equaliser(*equaliser));
            pending_slip = 0;
        }
        const cd z =
            walsh ? equaliser->match(window.data()) : equaliser->equalise(window.data());
        if (k < data_symbol) {
            // Preamble: every symbol known.
            const unsigned seg = unsigned(k / m110a_segment_symbols);
            const unsigned count = first_count - seg;
            if (count != segment_count) {
                segment = m110a_preamble_segment(mode->d1, mode->d2, count);
                segment_count = count;
            }
            commit(z, point(segment[k % m110a_segment_symbols]), true);
            continue;
        }
        const uint64_t dk = k - data_symbol;
        if (double(dk) / 2400.0 > cfg.max_burst_s) {
            end_burst(false, done);
            return true;
        }
        const m110a_symbol_role role = m110a_role_of(*mode, dk);
        const unsigned scr = scrambler[dk % 160];
        if (role.probe) {
            const cf target = point(role.known + scr);
            presence.add_probe(z, cd(target));
            store_symbol(true, target, scr);
            commit(z, target, true);
            const size_t frame_len = mode->unknown_symbols + mode->known_symbols;
            const bool block_end = (dk + 1) % (frame_len * mode->frames_per_block) == 0;
            if (block_end && block_ends_burst(presence, held_symbols)) {
                end_burst(false, done);
                return true;
            }
            continue;
        }
        if (walsh) {
            // Chips wait for their Walsh symbol's decision before the channel learns
            // them.
            pending_estimates.push_back(z);
            walsh_windows.insert(walsh_windows.end(), window.begin(), window.end());
            if (walsh_windows.size() < 32 * window.size())
                continue;
            const size_t walsh_index = size_t(dk / 32);
            const size_t per_block = mode->frames_per_block;
            const bool exceptional = walsh_index % per_block == per_block - 1;
            // Despread on every T/2 path position and combine the powers, weighted by
            // the paths' long-term powers (Rayleigh diversity combining): no channel
            // phase is needed, so a tracker that lags 5 Hz fading, or followed a wrong
            // decision, cannot turn the decisions (there are no probes to pull it back).
            const size_t width = window.size();
            const std::vector<double>& profile = equaliser->energy_profile();
            const double chip_noise = 32.0 * std::max(equaliser->noise(), 1e-9);
            double metric[4];
            for (unsigned v = 0; v < 4; ++v) {
                const auto chips = m110a_walsh_chips(v, exceptional);
                cd reference[32];
                for (unsigned j = 0; j < 32; ++j)
                    reference[j] =
                        std::conj(cd(point(chips[j] + scrambler[(dk - 31 + j) % 160])));
                metric[v] = 0;
                for (size_t q = 0; q < width; ++q) {
                    const double path_power = 32.0 * 32.0 * profile[q];
                    if (!(path_power > 0))
                        continue;
                    cd y;
                    for (unsigned j = 0; j < 32; ++j)
                        y += reference[j] * walsh_windows[j * width + q];
                    metric[v] += std::norm(y) * path_power /
                                 (chip_noise * (path_power + chip_noise));
                }
            }
            if (cfg.walsh_metric != 0) {
                // Coherent: the matched chips (unit gain, tracked channel) against each
                // candidate, as a log-likelihood over their error variance.
                const double variance =
                    std::max(std::isnan(walsh_chip_error) ? equaliser->estimate_variance()
                                                          : walsh_chip_error,
                             1e-9);
                for (unsigned v = 0; v < 4; ++v) {
                    const auto chips = m110a_walsh_chips(v, exceptional);
                    cd y;
                    for (unsigned j = 0; j < 32; ++j)
                        y += std::conj(
                                 cd(point(chips[j] + scrambler[(dk - 31 + j) % 160]))) *
                             pending_estimates[j];
                    const double coherent = 2.0 * y.real() / variance;
                    metric[v] = cfg.walsh_metric == 1
                                    ? coherent
                                    : (1 - cfg.walsh_coherent_weight) * metric[v] +
                                          cfg.walsh_coherent_weight * coherent;
                }
            }
            walsh_windows.clear();
            const unsigned best = unsigned(std::max_element(metric, metric + 4) - metric);
            const auto decided = m110a_walsh_chips(best, exceptional);
            double chip_error = 0;
            for (unsigned j = 0; j < 32; ++j)
                chip_error +=
                    std::norm(pending_estimates[j] -
                              cd(point(decided[j] + scrambler[(dk - 31 + j) % 160])));
            chip_error /= 32.0;
            walsh_chip_error = std::isnan(walsh_chip_error)
                                   ? chip_error
                                   : 0.75 * walsh_chip_error + 0.25 * chip_error;
            for (unsigned j = 0; j < 32; ++j) {
                const unsigned scr_j = scrambler[(dk - 31 + j) % 160];
                commit(pending_estimates[j], point(decided[j] + scr_j), true);
                if (symbol_tap) {
                    symbol_tap->push_back(
                        cf(pending_estimates[j] * std::conj(cd(point(scr_j)))));
                    ++held_symbols;
                }
            }
            pending_estimates.clear();
            // Dibit of channel symbol v: 0 -> 00, 1 -> 01, 2 -> 11, 3 -> 10. The metrics
            // are log-likelihoods already.
            static const unsigned dibit_of[4] = { 0, 1, 3, 2 };
            float llr[2];
            for (unsigned b = 0; b < 2; ++b) {
                double best0 = -1e30, best1 = -1e30;
                for (unsigned v = 0; v < 4; ++v) {
                    const bool one = (dibit_of[v] >> (1 - b)) & 1;
                    (one ? best1 : best0) = std::max(one ? best1 : best0, metric[v]);
                }
                llr[b] = float(best0 - best1);
            }
            walsh_decided_metric += metric[best];
            walsh_other_metric +=
                (metric[0] + metric[1] + metric[2] + metric[3] - metric[best]) / 3.0;
            // The symbol's bits go in first: the block they complete may hold the EOM.
            push_llrs(llr, 2);
            if ((walsh_index + 1) % per_block == 0) {
                // Noise alone leaves no candidate well ahead of the others.
                const bool unclear =
                    walsh_decided_metric < walsh_presence_ratio * walsh_other_metric;
                walsh_decided_metric = 0;
                walsh_other_metric = 0;
                if (eom_at == no_eom && presence.block_says_lost(!unclear)) {
                    end_burst(false, done);
                    return true;
                }
                if (!unclear)
                    held_symbols = 0;
            }
        } else {
            // Decision-directed: nearest point of the mode's set (scrambled).
            const cd u = z * std::conj(cd(point(scr)));
            if (symbol_tap) {
                symbol_tap->push_back(cf(u));
                ++held_symbols;
            }
            store_symbol(false, cf(), scr);
            commit(z, point(nearest_point(u) + scr), false);
            float llr[3];
            demap(u, std::max(1e-3, equaliser->estimate_variance()), llr);
            push_llrs(llr, mode->bits_per_symbol);
        }
        if (eom_at != no_eom) {
            end_burst(true, done);
            return true;
        }
        if (cfg.deliver_per_block && block_decoded)
            hand_on_decoded(done);
    }
    return false;
}

void m110a_receiver::state::hand_on_decoded(std::vector<m110a_burst>& done)
{
    block_decoded = false;
    // No EOM can start before the positions already searched.
    auto bytes =
        streamed.take(bits, std::min(eom_searched, near_eom_searched), cfg.msb_first);
    if (bytes.empty())
        return;
    m110a_burst piece = burst_so_far();
    piece.bytes = std::move(bytes);
    piece.continues = true;
    done.push_back(std::move(piece));
}

unsigned m110a_receiver::state::stride() const
{
    return mode->modulation == m110a_modulation::bpsk   ? 4
           : mode->modulation == m110a_modulation::qpsk ? 2
                                                        : 1;
}

namespace {
// Bits (MSB first) carried by symbol s of an nbits-per-symbol set.
unsigned label_of(unsigned s, unsigned nbits)
{
    if (nbits == 3)
        return s ^ (s >> 1); // tribit carried by symbol s
    if (nbits == 2)
        return s == 0 ? 0 : s == 2 ? 1 : s == 4 ? 3 : 2;
    return s == 0 ? 0 : 1;
}
} // namespace

unsigned m110a_receiver::state::nearest_point(cd u) const
{
    unsigned decided = 0;
    double nearest = 1e30;
    for (unsigned s = 0; s < 8; s += stride()) {
        const double dist = std::norm(u - cd(point(s)));
        if (dist < nearest) {
            nearest = dist;
            decided = s;
        }
    }
    return decided;
}

void m110a_receiver::state::demap(cd u, double sigma2, float* llr) const
{
    const unsigned nbits = mode->bits_per_symbol;
    for (unsigned b = 0; b < nbits; ++b) {
        double d0 = 1e30, d1 = 1e30;
        for (unsigned s = 0; s < 8; s += stride()) {
            const double dist = std::norm(u - cd(point(s)));
            if ((label_of(s, nbits) >> (nbits - 1 - b)) & 1)
                d1 = std::min(d1, dist);
            else
                d0 = std::min(d0, dist);
        }
        llr[b] = float((d1 - d0) / sigma2);
    }
}

void m110a_receiver::state::store_symbol(bool probe, cf sent, unsigned scr)
{
    if (cfg.decoder_passes < 2 || !mode->interleaved() ||
        mode->modulation == m110a_modulation::walsh)
        return;
    block_symbols_seen.push_back({ probe, sent, scr, pending_slip });
    pending_slip = 0;
    block_windows.insert(block_windows.end(), window.begin(), window.end());
}

bool m110a_receiver::state::second_pass()
{
    // Decode the block as it stands (with the pairs before it to settle the coder's
    // state) and run the equaliser over the block again from where it began with the
    // decoder's symbols (re-encoded, or their a posteriori means) in place of its own
    // decisions: the channel is then tracked, and past symbols cancelled, with the
    // decoder's far fewer errors.
    const size_t nb = mode->block_bits();
    const size_t rep = mode->repeat;
    std::vector<float> pairs = recent_pairs;
    const size_t lead = recent_pairs.size() / 2;
    append_block_pairs(pairs);
    // Channel-order bit k of the block is coded bit order[k] (repetitions share it).
    const auto coded_index = [&](size_t k) {
        const size_t j = order[k];
        return 2 * (lead + j / (2 * rep)) + j % 2;
    };
    std::vector<uint8_t> decoded;
    k7_soft_output soft; // soft_decoder_feedback
    if (cfg.soft_decoder_feedback) {
        soft = k7_max_log_map(pairs.data(), pairs.size() / 2);
        for (float l : soft.input)
            decoded.push_back(l < 0 ? 1 : 0);
    } else {
        k7_viterbi tentative;
        decoded = tentative.decode(pairs.data(), pairs.size() / 2);
    }
    if (decoded == previous_pass_decoded)
        return false;
    std::vector<uint8_t> channel_bits; // hard feedback: the re-encoded decisions
    std::vector<float> channel_llr;    // soft feedback: their a posteriori LLRs
    if (cfg.soft_decoder_feedback) {
        channel_llr.resize(nb);
        for (size_t k = 0; k < nb; ++k)
            channel_llr[k] = soft.coded[coded_index(k)];
    } else {
        std::vector<uint8_t> coded;
        k7_encoder encoder;
        encoder.encode(decoded.data(), decoded.size(), coded);
        channel_bits.resize(nb);
        for (size_t k = 0; k < nb; ++k)
            channel_bits[k] = coded[coded_index(k)];
    }
    const unsigned nbits = mode->bits_per_symbol;
    std::array<unsigned, 8> symbol_of_label{};
    for (unsigned s = 0; s < 8; s += stride())
        symbol_of_label[label_of(s, nbits)] = s;
    channel_tracking_equaliser again(*block_start_equaliser);
    const size_t width = window.size();
    size_t bit = 0;
    for (size_t i = 0; i < block_symbols_seen.size(); ++i) {
        const stored_symbol& seen = block_symbols_seen[i];
        if (seen.slip != 0)
            again.slip(seen.slip);
        const cd z = again.equalise(&block_windows[i * width]);
        if (seen.probe) {
            again.decide(cd(seen.sent), true);
            continue;
        }
        demap(z * std::conj(cd(point(seen.scr))),
              std::max(1e-3, again.estimate_variance()),
              &block_llr[bit]);
        if (cfg.soft_decoder_feedback) {
            const soft_symbol decided = soft_decision(&channel_llr[bit], seen.scr);
            again.decide_weighted(decided.mean, decided.right);
        } else {
            unsigned label = 0;
            for (unsigned b = 0; b < nbits; ++b)
                label = (label << 1) | channel_bits[bit + b];
            again.decide(cd(point(symbol_of_label[label] + seen.scr)),
                         true); // as good as known
        }
        bit += nbits;
    }
    again.take_turn(); // the loop already heard of this block's turn in the first pass
    *equaliser = again;
    previous_pass_decoded = std::move(decoded);
    ++later_passes;
    return true;
}

m110a_receiver::state::soft_symbol
m110a_receiver::state::soft_decision(const float* llr, unsigned scr) const
{
    // Bits independent given their LLRs (log P(0) / P(1)), MSB first as demap() gives.
    const unsigned nbits = mode->bits_per_symbol;
    std::array<double, 3> p0{};
    soft_symbol decided;
    for (unsigned b = 0; b < nbits; ++b) {
        p0[b] = 1 / (1 + std::exp(-double(llr[b])));
        decided.right /= 1 + std::exp(-double(std::fabs(llr[b])));
    }
    for (unsigned s = 0; s < 8; s += stride()) {
        const unsigned label = label_of(s, nbits);
        double probability = 1;
        for (unsigned b = 0; b < nbits; ++b)
            probability *= (label >> (nbits - 1 - b)) & 1 ? 1 - p0[b] : p0[b];
        decided.mean += probability * cd(point(s + scr));
    }
    return decided;
}

void m110a_receiver::state::push_llrs(const float* llr, size_t n)
{
    if (!mode->interleaved()) {
        // 4800U: uncoded bits straight into the stream.
        for (size_t k = 0; k < n; ++k)
            bits.push_back(llr[k] < 0 ? 1 : 0);
        // No blocks: hand on every 256 bytes.
        block_decoded = bits.size() >= 8 * (streamed.taken_bytes() + 256);
    } else {
        block_llr.insert(block_llr.end(), llr, llr + n);
        if (block_llr.size() >= mode->block_bits()) {
            if (!block_symbols_seen.empty() && block_llr.size() == mode->block_bits())
                for (unsigned pass = 2; pass <= cfg.decoder_passes; ++pass)
                    if (!second_pass())
                        break;
            previous_pass_decoded.clear();
            block_symbols_seen.clear();
            block_windows.clear();
            decode_block();
            block_decoded = true;
        }
    }
    find_eom();
}

void m110a_receiver::state::find_eom()
{
    // The exact word ends the burst at once. A word a few bits off counts once the
    // first 64 flush bits after it have decoded as zeros (a decoder error event can
    // land on the EOM; data does not hold a near-EOM followed by 64 zeros but by
    // chance: a 32-bit value within 4 bits of the EOM, about 1e-5, then zeros). All
    // 144 would come out of the decoder only after the transmission has ended.
    constexpr int eom_tolerance = 4;      // bit errors in the 32-bit word
    constexpr size_t flush_checked = 64;  // flush bits that must follow it
    constexpr size_t flush_tolerance = 2; // ones among them
    // Near words first: one whose flush has decoded lies before any exact word seen now.
    for (; near_eom_searched + m110a_eom_bits + flush_checked <= bits.size() &&
           eom_at == no_eom;
         ++near_eom_searched) {
        if (__builtin_popcount(bits_word(bits, near_eom_searched) ^ m110a_eom) >
            eom_tolerance)
            continue;
        const auto flush = bits.begin() + long(near_eom_searched + m110a_eom_bits);
        if (size_t(std::count(flush, flush + long(flush_checked), 1)) <= flush_tolerance)
            eom_at = near_eom_searched;
    }
    for (; eom_searched + m110a_eom_bits <= bits.size() && eom_at == no_eom;
         ++eom_searched)
        if (bits_word(bits, eom_searched) == m110a_eom)
            eom_at = eom_searched;
}

void m110a_receiver::state::append_block_pairs(std::vector<float>& pairs) const
{
    const size_t nb = mode->block_bits();
    std::vector<float> deinterleaved(nb);
    for (size_t k = 0; k < nb; ++k)
        deinterleaved[order[k]] = block_llr[k];
    // Repetition: the copies of each (T1, T2) pair add up.
    const size_t rep = mode->repeat;
    for (size_t i = 0; i + 2 * rep <= nb; i += 2 * rep) {
        float t1 = 0, t2 = 0;
        for (size_t r = 0; r < rep; ++r) {
            t1 += deinterleaved[i + 2 * r];
            t2 += deinterleaved[i + 2 * r + 1];
        }
        pairs.push_back(t1);
        pairs.push_back(t2);
    }
}

void m110a_receiver::state::decode_block()
{
    pair_llr.clear();
    append_block_pairs(pair_llr);
    block_llr.erase(block_llr.begin(), block_llr.begin() + long(mode->block_bits()));
    viterbi.push(pair_llr.data(), pair_llr.size() / 2);
    viterbi.take_decided(bits, 96);
    // The second pass's decoding starts this far back (its state settles there).
    constexpr size_t lead_pairs = 96;
    recent_pairs.insert(recent_pairs.end(), pair_llr.begin(), pair_llr.end());
    if (recent_pairs.size() > 2 * lead_pairs)
        recent_pairs.erase(recent_pairs.begin(),
                           recent_pairs.end() - long(2 * lead_pairs));
}

m110a_burst m110a_receiver::state::burst_so_far() const
{
    m110a_burst burst;
    burst.mode = mode->name;
    burst.start_sample = start;
    burst.frequency_offset_hz = input.offset_hz();
    burst.snr_db = report.snr_db();
    burst.snr_db_recent = report.recent_snr_db();
    if (std::isnan(burst.snr_db)) // not half a chunk of known symbols yet
        burst.snr_db = burst.snr_db_recent = presence.snr_db();
    return burst;
}

void m110a_receiver::state::end_burst(bool eom, std::vector<m110a_burst>& done)
{
    if (!eom && mode->interleaved()) {
        // A last look for the EOM in the bits the traceback releases now.
        viterbi.finish(bits);
        find_eom();
        eom = eom_at != no_eom;
    }
    if (eom) // the blocks up to the EOM's are the burst's
        held_symbols = 0;
    // The symbols of blocks not judged part of the burst (noise after it was lost)
    // are not shown.
    drop_held_symbols(symbol_tap, held_symbols);
    m110a_burst burst = burst_so_far();
    burst.eom = eom;
    burst.bytes = streamed.take(bits, eom ? eom_at : bits.size(), cfg.msb_first);
    done.push_back(std::move(burst));
    restart_search(start + symbol * sps);
}

} // namespace phy
} // namespace hfstack
} // namespace gr
