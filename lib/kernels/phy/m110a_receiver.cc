/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "m110a_receiver.h"
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

constexpr unsigned segment_samples = m110a_segment_symbols * sps;
constexpr size_t peak_window = 8; // samples past a peak before it is taken
// Positions whose power on the common preamble symbols is at least this share of the
// strongest's are combined when the mode and count are read.
constexpr double preamble_path_share = 0.1;
// Segments read when a preamble is detected (the detected one and those after it),
// and the share of a segment's power its common symbols must explain for its codes to
// count (see preamble_reading::known_share).
constexpr unsigned preamble_readings = 4;
constexpr double preamble_known_share = 0.3;

} // namespace

m110a_receiver::state::state(const m110a_receiver_config& c) : cfg(c)
{
    const auto seg = m110a_preamble_segment(0, 0, 0);
    for (unsigned k = 0; k < common_symbols; ++k)
        known[k] = point(seg[k]);
    for (unsigned k = 1; k < common_symbols; ++k)
        rotations.push_back(known[k] * std::conj(known[k - 1]));
    for (const cf& r : rotations)
        conj_rotations.push_back(std::conj(r));
}

m110a_receiver::m110a_receiver(const m110a_receiver_config& config)
{
    check_tracking_settings(
        config.forgetting, config.decision_weight, config.equaliser_solve_interval);
    if (config.decoder_passes == 0)
        throw std::invalid_argument("m110a_receiver: decoder_passes must be at least 1");
    d.reset(new state(config));
}

m110a_receiver::~m110a_receiver() = default;

bool m110a_receiver::carrier_detected() const { return d->stage != phase::search; }

uint64_t m110a_receiver::samples() const { return d->input.total(); }

uint64_t m110a_receiver::later_passes() const { return d->later_passes; }

void m110a_receiver::tap_symbols(std::vector<cf>* symbols) { d->symbol_tap = symbols; }

size_t m110a_receiver::tapped_unsettled() const { return d->held_symbols; }

void m110a_receiver::process(const cf* x, size_t n, std::vector<m110a_burst>& done)
{
    d->input.append(x, n);
    run_serial_tone_stages(*d, done);
}

void m110a_receiver::state::trim()
{
    // Keep what the correlation (two segments back) or the equaliser may still read.
    uint64_t keep = stage == phase::search     ? candidate
                    : stage == phase::preamble ? start
                                               : start + symbol * sps;
    keep = std::min(keep, input.total());
    keep = keep > 2 * segment_samples + 64 ? keep - 2 * segment_samples - 64 : 0;
    input.release_before(keep);
}

void m110a_receiver::state::restart_search(uint64_t from)
{
    stage = phase::search;
    candidate = std::max<uint64_t>(from, input.base() + sps);
    peak.open = false;
    std::fill(corr.begin(), corr.end(), cd());
    std::fill(energy.begin(), energy.end(), 0.0);
}

bool m110a_receiver::state::search()
{
    const uint64_t span = uint64_t(common_symbols - 1) * sps;
    while (candidate + span < input.total()) {
        const uint64_t n = candidate++;
        // c = sum over k of p(n + k sps) conj(rotation k), on VOLK; the energy from
        // the running sums.
        const cf* p = products.at(input, n + sps);
        cf dot;
        volk_32fc_x2_dot_prod_32fc(&dot, p, conj_rotations.data(), common_symbols - 1);
        const cd c(dot);
        const double e = products.energy(n + sps);
        corr[n % ring] = c;
        energy[n % ring] = e;
        // Best of one, two or three segments summed.
        double best_z = 0;
        cd best_sum;
        cd sum;
        double esum = 0;
        for (unsigned s = 0; s < 3 && n >= input.base() + s * segment_samples + sps;
             ++s) {
            sum += corr[(n - s * segment_samples) % ring];
            esum += energy[(n - s * segment_samples) % ring];
            if (esum <= 0)
                break;
            const double z = std::abs(sum) / std::sqrt(esum);
            if (z > best_z) {
                best_z = z;
                best_sum = sum;
            }
        }
        if (n >= quiet_until)
            peak.offer(best_z, n, best_sum, cfg.detection_threshold);
        if (peak.taken(n, peak_window)) {
            found_at = peak.at;
            found_hz = peak.offset_hz();
            return true;
        }
    }
    return false;
}

bool m110a_receiver::state::watch(std::vector<m110a_burst>& done)
{
    // Only past our own preamble: its later segments would match too.
    const uint64_t data_start = start + data_symbol * sps;
    if (candidate < data_start) {
        // The correlation history holds our own segments: forget it, or their sums
        // would announce a new preamble right after ours.
        restart_search(data_start);
        stage = phase::data;
        watch_pending = false;
    }
    if (!watch_pending) {
        if (!search())
            return false;
        watch_pending = true;
    }
    if (found_at + segment_samples + 64 >= input.total())
        return false;
    watch_pending = false;
    // A new burst only if its preamble reads as one: long zero fill can line the
    // correlation up by chance.
    preamble_reading r;
    if (!read_preamble(found_at, found_hz, r) || r.count >= r.mode->preamble_segments)
        return true;
    // A burst none of whose blocks looked like one (probes or Walsh metrics) started
    // on a misread count or mode, inside the preamble this one belongs to: it is not
    // reported.
    if (presence.matched_blocks() > 0) {
        end_burst(false, done);
    } else {
        drop_held_symbols(symbol_tap, held_symbols); // nor are its symbols shown
        restart_search(start + symbol * sps);
    }
    start = found_at;
    begin_burst(r);
    return true;
}

bool m110a_receiver::state::read_preamble(uint64_t at,
                                          double coarse_hz,
                                          preamble_reading& r) const
{
    // Symbol-spaced samples of the segment, the offset removed.
    const auto samples = [&](double hz) {
        std::vector<cf> y(m110a_segment_symbols);
        for (unsigned k = 0; k < m110a_segment_symbols; ++k) {
            const double cycles = std::fmod(hz * double(k * sps) / sample_rate, 1.0);
            y[k] = this->at(at + uint64_t(k) * sps) *
                   std::polar(1.0f, float(-two_pi * cycles));
        }
        return y;
    };
    // Fine offset: the phase slope across chunks of the known symbols, first over short
    // chunks (+-150 Hz unambiguous: the coarse angle can be far off when echoes of
    // equal strength share the correlation), then over 32-symbol chunks. At low SNR the
    // short chunks can land a 75 Hz alias off; the candidate (it, its aliases, the
    // coarse angle) whose 32-symbol chunks hold the most power is refined.
    const auto chunks = [&](const std::vector<cf>& y, unsigned chunk_symbols) {
        std::vector<cd> chunk(common_symbols / chunk_symbols);
        for (unsigned k = 0; k < chunk.size() * chunk_symbols; ++k)
            chunk[k / chunk_symbols] += cd(y[k]) * cd(std::conj(known[k]));
        return chunk;
    };
    const auto slope_hz = [&](const std::vector<cd>& chunk, unsigned chunk_symbols) {
        cd slope;
        for (size_t i = 1; i < chunk.size(); ++i)
            slope += chunk[i] * std::conj(chunk[i - 1]);
        return std::arg(slope) / two_pi * (2400.0 / chunk_symbols);
    };
    const double short_hz = coarse_hz + slope_hz(chunks(samples(coarse_hz), 8), 8);
    double best_power = -1;
    std::vector<cd> best_chunks;
    for (const double hz : { short_hz, short_hz - 75.0, short_hz + 75.0, coarse_hz }) {
        std::vector<cd> chunk = chunks(samples(hz), 32);
        double power = 0;
        for (const cd& c : chunk)
            power += std::norm(c);
        if (power > best_power) {
            best_power = power;
            best_chunks = std::move(chunk);
            r.offset_hz = hz;
        }
    }
    r.offset_hz += slope_hz(best_chunks, 32);
    const std::vector<cf> y = samples(r.offset_hz);
    r.h = cd();
    for (unsigned k = 0; k < common_symbols; ++k)
        r.h += cd(y[k]) * cd(std::conj(known[k]));
    r.h /= double(common_symbols);
    r.power = 0;
    for (unsigned k = 0; k < m110a_segment_symbols; ++k)
        r.power += std::norm(y[k]);
    r.power /= double(m110a_segment_symbols);
    // Channel symbols 9..13: D1, D2, C1, C2, C3 by Walsh correlation on every path
    // (T/2 positions within the longest delay spread either side of the detection, as
    // seen on the common symbols), powers combined over the paths: an echo as strong
    // as the detected path would otherwise be interference, and 5 Hz fading turns the
    // phase within the segment.
    const int reach = int(cfg.max_delay_spread_symbols);
    const size_t positions = size_t(2 * reach + 1) * 2;
    // T/2 samples of the segment and reach symbols either side, derotated once:
    // grid[2 (k + reach) + p] is symbol time k, phase p.
    std::vector<cd> grid(2 * (m110a_segment_symbols + 2 * size_t(reach)));
    for (size_t g = 0; g < grid.size(); ++g) {
        const long i = long(at) + (long(g / 2) - reach) * long(sps) + 2 * long(g % 2);
        if (i < long(input.base()) || i >= long(input.total()))
            continue;
        const double cycles =
            std::fmod(r.offset_hz * double(i - long(at)) / sample_rate, 1.0);
        grid[g] = cd(this->at(uint64_t(i))) * std::polar(1.0, -two_pi * cycles);
    }
    const auto sample = [&](long k, int m, unsigned p) {
        return grid[size_t(2 * (k + m + reach)) + p];
    };
    std::vector<double> path_power(positions);
    for (int m = -reach; m <= reach; ++m)
        for (unsigned p = 0; p < 2; ++p) {
            cd c;
            for (unsigned k = 0; k < common_symbols; ++k)
                c += sample(long(k), m, p) * cd(std::conj(known[k]));
            path_power[size_t(m + reach) * 2 + p] = std::norm(c / double(common_symbols));
        }
    const double strongest = *std::max_element(path_power.begin(), path_power.end());
    // Noise per sample: what the paths (on one T/2 phase) leave of the sample power.
    double explained = 0;
    for (size_t q = 0; q < positions; q += 2)
        explained += path_power[q];
    const double chip_noise = 32.0 * std::max(r.power - explained, 0.05 * r.power);
    r.known_share = r.power > 0 ? explained / r.power : 0.0;
    cd reference[8][32]; // conjugated chips of each 8-ary Walsh value
    for (unsigned v = 0; v < 8; ++v)
        for (unsigned j = 0; j < 32; ++j)
            reference[v][j] = std::conj(
                cd(point((m110a_walsh8[v][j % 8] + m110a_preamble_scramble[j]) % 8)));
    unsigned value[5] = {};
    for (unsigned cs = 9; cs < 14; ++cs) {
        double best = -1e30;
        for (unsigned v = 0; v < 8; ++v) {
            double metric = 0;
            for (size_t q = 0; q < positions; ++q) {
                if (path_power[q] < preamble_path_share * strongest)
                    continue;
                const int m = int(q / 2) - reach;
                cd acc;
                for (unsigned j = 0; j < 32; ++j)
                    acc +=
                        sample(long(cs * 32 + j), m, unsigned(q % 2)) * reference[v][j];
                // Rayleigh diversity combining: each path's power over the noise.
                const double despread_power = 32.0 * 32.0 * path_power[q];
                metric += std::norm(acc) * despread_power /
                          (chip_noise * (despread_power + chip_noise));
            }
            r.code_metric[cs - 9][v] = metric;
            if (metric > best) {
                best = metric;
                value[cs - 9] = v;
            }
        }
        // As a z-score across the 8 values: readings of different segments (one in
        // a fade, one not) then weigh by how clearly they read, not by their power.
        double mean = 0, square = 0;
        for (double m : r.code_metric[cs - 9]) {
            mean += m / 8;
            square += m * m / 8;
        }
        const double spread = std::sqrt(std::max(square - mean * mean, 1e-30));
        for (double& m : r.code_metric[cs - 9])
            m = (m - mean) / spread;
    }
    r.mode = m110a_waveform_by_code(value[0], value[1]);
    const bool count_ok = value[2] >= 4 && value[3] >= 4 && value[4] >= 4;
    r.count =
        count_ok ? ((value[2] - 4) << 4) | ((value[3] - 4) << 2) | (value[4] - 4) : ~0u;
    return r.mode && count_ok && std::abs(r.h) > 0;
}

void m110a_receiver::state::decide_codes(const std::vector<preamble_reading>& readings,
                                         preamble_reading& r)
{
    // The detected segment, and those after it that look like preamble segments (each
    // then means one more to come): data read as codes only adds noise, and a segment
    // in a fade leaves the others to decide.
    std::vector<size_t> used = { 0 };
    for (size_t s = 1; s < readings.size(); ++s)
        if (readings[s].known_share >= preamble_known_share)
            used.push_back(s);
    double best = -1e300;
    for (const m110a_waveform& w : m110a_waveforms()) {
        if (m110a_waveform_by_code(w.d1, w.d2) != &w)
            continue; // not announced (no codes established)
        double score = 0;
        for (size_t s : used)
            score += readings[s].code_metric[0][w.d1] + readings[s].code_metric[1][w.d2];
        if (score > best) {
            best = score;
            r.mode = &w;
        }
    }
    best = -1e300;
    for (unsigned c = unsigned(used.back()); c < r.mode->preamble_segments; ++c) {
        double score = 0;
        for (size_t s : used) {
            const auto& m = readings[s].code_metric;
            const unsigned n = c - unsigned(s);
            score +=
                m[2][4 + ((n >> 4) & 3)] + m[3][4 + ((n >> 2) & 3)] + m[4][4 + (n & 3)];
        }
        if (score > best) {
            best = score;
            r.count = c;
        }
    }
    if (best == -1e300) // more preamble-like segments than the mode has: trust the first
        r.count = ~0u;
}

bool m110a_receiver::state::preamble()
{
    // The segments after the detected one are read too (in fading one segment's codes
    // alone were misread: 300S as 2400S, 300L as 1200L).
    if (start + preamble_readings * segment_samples + 64 >= input.total())
        return false;
    std::vector<preamble_reading> readings(preamble_readings);
    bool any_ok = false;
    double offset = found_hz;
    for (unsigned s = 0; s < preamble_readings; ++s) {
        const bool ok = read_preamble(start + s * segment_samples, offset, readings[s]);
        if (s == 0)
            offset = readings[0].offset_hz;
        // The detected segment, or a later one that looks like a preamble, reading as
        // one is enough to go on (one can be in a fade).
        any_ok =
            any_ok || (ok && (s == 0 || readings[s].known_share >= preamble_known_share));
    }
    preamble_reading r = readings[0];
    if (any_ok) {
        if (r.known_share < readings[1].known_share)
            r.offset_hz = readings[1].offset_hz;
        decide_codes(readings, r);
    }
    if (!any_ok || r.count == ~0u) {
        // Not a preamble we can use (a false start, a side lobe of one, or a corrupt
        // mode code): search on past this peak, keeping the correlation history so
        // that the next segment adds up with this one (in fading one segment alone
        // may not reach the threshold).
        stage = phase::search;
        peak.open = false;
        quiet_until = start + peak_window * 8;
        return true;
    }
    begin_burst(r);
    return true;
}

void m110a_receiver::state::begin_burst(const preamble_reading& r)
{
    input.start_derotation(start, r.offset_hz);
    mode = r.mode;
    first_count = r.count;
    data_symbol = uint64_t(r.count + 1) * m110a_segment_symbols;
    segment = m110a_preamble_segment(mode->d1, mode->d2, r.count);
    segment_count = r.count;
    // The channel over the segment; equalisation goes on once a whole channel's worth
    // of known symbols lies behind.
    std::vector<cf> known(m110a_segment_symbols);
    for (size_t k = 0; k < known.size(); ++k)
        known[k] = point(segment[k]);
    channel_tracking_equaliser_config tracking;
    tracking.forgetting = cfg.forgetting;
    tracking.solve_interval = cfg.equaliser_solve_interval;
    tracking.decision_weight = cfg.decision_weight;
    tracking.feedback = mode->modulation != m110a_modulation::walsh;
    serial_tone_channel_start channel =
        start_serial_tone_channel(input,
                                  start,
                                  known,
                                  cfg.max_delay_spread_symbols,
                                  tracking,
                                  r.h,
                                  std::max(1e-3, r.power - std::norm(r.h)));
    equaliser = std::move(channel.equaliser);
    timing_shift = channel.timing_shift;
    symbol = equaliser->channel_symbols();
    window.assign(equaliser->window_samples(), cd());
    pending_estimates.clear();
    presence.start(r.power);
    report.start();
    order = mode->interleaved() ? m110a_fetch_order(*mode) : std::vector<uint32_t>();
    block_llr.clear();
    walsh_windows.clear();
    walsh_decided_metric = 0;
    walsh_other_metric = 0;
    walsh_chip_error = std::nan("");
    viterbi.start();
    block_start_equaliser.reset();
    block_symbols_seen.clear();
    block_windows.clear();
    pending_slip = 0;
    recent_pairs.clear();
    bits.clear();
    eom_at = no_eom;
    eom_searched = 0;
    near_eom_searched = 0;
    streamed.restart();
    block_decoded = false;
    stage = phase::data;
}

} // namespace phy
} // namespace hfstack
} // namespace gr
