/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "serial_tone_presence.h"

#include "burst_snr.h"

#include <algorithm>
#include <cmath>
#include <cstdint>

namespace gr {
namespace hfstack {
namespace phy {

namespace {
constexpr double lost_correlation = 0.05; // see the header
constexpr double lost_power = 0.05;       // 13 dB
constexpr unsigned lost_blocks = 3;
// A mean prediction score of 4 (6 dB over noise alone's 1): a signal at an SINR of -6
// dB scores about 10 on 3 kHz's 31-symbol probes.
constexpr double matched_prediction_score = 4.0;
// Scored probes a signal must be missing over before it counts as gone, on the power
// rule and on the count of blocks: an ultra-short interleaver's block is one frame,
// and three of its probes (0.36 s) in a fade cut 3200US bursts on F.1487 poor at 15 dB
// (errors 7.2e-3 -> 5.3e-2 over 240 s); at 3 kHz a probe comes every 0.12 s.
constexpr size_t lost_power_probes = 6;
constexpr size_t lost_probes = 9;
} // namespace

void serial_tone_presence::start(double reference_power)
{
    *this = serial_tone_presence();
    d_reference_power = reference_power;
}

void serial_tone_presence::add_window_power(double power)
{
    d_block_power += power;
    ++d_block_symbols;
}

void serial_tone_presence::add_known(cd z, cd sent)
{
    add_error_power(std::norm(z - sent));
}

void serial_tone_presence::add_error_power(double variance)
{
    d_noise = 0.98 * d_noise + 0.02 * variance;
}

void serial_tone_presence::add_probe(cd z, cd sent)
{
    d_correlation += z * std::conj(sent);
    d_estimate_power += std::norm(z);
    ++d_known;
}

void serial_tone_presence::add_prediction_score(std::optional<double> score)
{
    if (!score)
        return;
    d_prediction_scores += *score;
    ++d_scored_probes;
}

bool serial_tone_presence::probes_match() const
{
    if (d_scored_probes > 0)
        return d_prediction_scores >= matched_prediction_score * double(d_scored_probes);
    return !(std::norm(d_correlation) <
             lost_correlation * d_estimate_power * double(d_known));
}

bool serial_tone_presence::block_says_lost(bool matched)
{
    const double power = d_block_symbols ? d_block_power / double(d_block_symbols) : 0;
    d_block_power = 0;
    d_block_symbols = 0;
    d_correlation = cd();
    d_estimate_power = 0;
    d_known = 0;
    const size_t scored = d_scored_probes;
    d_prediction_scores = 0;
    d_scored_probes = 0;
    d_unmatched_probes = matched ? 0 : d_unmatched_probes + scored;
    if (power < lost_power * d_reference_power && !matched &&
        (scored == 0 || d_unmatched_probes >= lost_power_probes))
        return true;
    d_matched_blocks += matched;
    d_unmatched_blocks = matched ? 0 : d_unmatched_blocks + 1;
    return d_unmatched_blocks >= lost_blocks &&
           (scored == 0 || d_unmatched_probes >= lost_probes);
}

double serial_tone_presence::snr_db(double signal_power) const
{
    // Mean symbol power over the tracked noise, as the burst reports are taken.
    return serial_tone_snr_3khz_db(signal_power, d_noise);
}

uint32_t bits_word(const std::vector<uint8_t>& bits, size_t at)
{
    uint32_t word = 0;
    for (size_t b = at; b < at + 32; ++b)
        word = (word << 1) | bits[b];
    return word;
}

size_t find_bits_word(const std::vector<uint8_t>& bits,
                      size_t& searched,
                      uint32_t word,
                      unsigned word_bits)
{
    if (word_bits == 0 || searched + word_bits > bits.size())
        return SIZE_MAX;
    const uint32_t mask = word_bits >= 32 ? ~uint32_t(0) : (uint32_t(1) << word_bits) - 1;
    uint32_t w = 0;
    for (unsigned i = 0; i + 1 < word_bits; ++i)
        w = (w << 1) | (bits[searched + i] & 1u);
    for (; searched + word_bits <= bits.size(); ++searched) {
        w = ((w << 1) | (bits[searched + word_bits - 1] & 1u)) & mask;
        if (w == word)
            return searched++;
    }
    return SIZE_MAX;
}

std::vector<uint8_t> pack_user_bytes(const std::vector<uint8_t>& bits,
                                     size_t n_bits,
                                     bool msb_first,
                                     size_t first_bit)
{
    std::vector<uint8_t> bytes;
    for (size_t b = first_bit; b + 8 <= n_bits; b += 8) {
        uint8_t byte = 0;
        for (int j = 0; j < 8; ++j)
            byte |= uint8_t(bits[b + size_t(j)] << (msb_first ? 7 - j : j));
        bytes.push_back(byte);
    }
    return bytes;
}

std::vector<uint8_t>
user_byte_stream::take(const std::vector<uint8_t>& bits, size_t safe_bits, bool msb_first)
{
    const size_t end = std::min(safe_bits, bits.size()) / 8 * 8;
    if (end <= d_taken_bits)
        return {};
    auto bytes = pack_user_bytes(bits, end, msb_first, d_taken_bits);
    d_taken_bits = end;
    return bytes;
}

} // namespace phy
} // namespace hfstack
} // namespace gr
