/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "m110a_receiver.h"

#include "burst_snr.h"
#include "channel_tracking_equaliser.h"
#include "differential_products.h"
#include "m110a_transmitter.h"
#include "serial_tone_channel.h"
#include "serial_tone_presence.h"
#include "serial_tone_samples.h"
#include "serial_tone_stages.h"

#include <volk/volk.h>
#include <volk/volk_alloc.hh>

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <memory>

namespace gr {
namespace hfstack {
namespace phy {

namespace {

using cf = std::complex<float>;
using cd = std::complex<double>;

constexpr double two_pi = 6.283185307179586476925286766559;
constexpr double sample_rate = 9600.0;
constexpr unsigned sps = m110a_receiver::samples_per_symbol;
constexpr unsigned segment_samples = m110a_segment_symbols * sps;
constexpr unsigned common_symbols = 288; // channel symbols 0..8 of every segment
constexpr size_t ring = 8192;            // correlation history (> 2 segments)
constexpr size_t peak_window = 8;        // samples past a peak before it is taken
// 75 bps: a block's decided Walsh metrics over the other candidates' mean, summed over
// the block. Noise alone gives 1.3-1.4, a signal at 1 dB on 5 ms / 5 Hz at least 1.9
// (measured); a count of symbols without a clear winner said "lost" at 1 dB.
constexpr double walsh_presence_ratio = 1.6;
// Positions whose power on the common preamble symbols is at least this share of the
// strongest's are combined when the mode and count are read.
constexpr double preamble_path_share = 0.1;
// Segments read when a preamble is detected (the detected one and those after it),
// and the share of a segment's power its common symbols must explain for its codes to
// count (see preamble_reading::known_share).
constexpr unsigned preamble_readings = 4;
constexpr double preamble_known_share = 0.3;

cf point(unsigned symbol) { return std::polar(1.0f, float(two_pi / 8 * (symbol & 7))); }

using phase = serial_tone_stage;

} // namespace

struct m110a_receiver::state {
    m110a_receiver_config cfg;
    std::vector<std::complex<float>>* symbol_tap = nullptr; // tap_symbols()

    serial_tone_samples input{ sample_rate };
    cf at(uint64_t i) const { return input.at(i); }

    // Search.
    std::array<cf, common_symbols> known{};
    std::vector<cf> rotations; // known[k] conj(known[k - 1]), k = 1..287
    volk::vector<cf> conj_rotations; // their conjugates, for VOLK's dot product
    differential_products products{ common_symbols - 1, ring };
    std::vector<cd> corr = std::vector<cd>(ring);
    std::vector<double> energy = std::vector<double>(ring);
    uint64_t candidate = sps; // next segment start to test
    correlation_peak peak;
    uint64_t quiet_until = 0; // no peak opens before this sample (a rejected one's lobes)

    // Burst.
    phase stage = phase::search;
    uint64_t start = 0;       // sample of symbol 0 of the detected segment
    const m110a_waveform* mode = nullptr;
    unsigned first_count = 0; // count of the detected segment
    uint64_t data_symbol = 0; // symbol index (from start) of the first data symbol
    uint64_t symbol = 0;      // next symbol to equalise
    std::array<uint8_t, m110a_segment_symbols> segment{};
    unsigned segment_count = ~0u;

    // Equaliser (channel_tracking_equaliser.h) and the symbol timing: symbol k of the
    // burst is taken around sample start + k * sps + timing_shift.
    std::unique_ptr<channel_tracking_equaliser> equaliser;
    int64_t timing_shift = 0;
    uint64_t timing_checked = ~uint64_t(0); // symbol whose timing was last looked at
    std::vector<cd> window;
    // Fills `window` for symbol k; false while its samples are not all in.
    bool window_for(uint64_t k);
    serial_tone_presence presence;
    burst_snr report; // the burst's SNR report

    // Decoding.
    std::vector<uint32_t> order;
    std::vector<float> block_llr;
    std::vector<float> pair_llr;
    // Windows of the Walsh symbol in progress (32 chips, window_samples() each).
    std::vector<cd> walsh_windows;
    double walsh_decided_metric = 0; // this block's decided candidates' metrics, summed
    double walsh_other_metric = 0;   // and the other candidates' mean metrics
    // Error power of the matched chips against the decided ones (an average over the
    // last symbols; NaN before the first): noise, tracker lag and interference, which
    // the coherent Walsh metric is scaled by.
    double walsh_chip_error = std::nan("");
    k7_viterbi viterbi;
    // Decoder-aided passes over each interleaver block (cfg.decoder_passes):
    // the equaliser as the block began, and the block's symbols as received.
    struct stored_symbol {
        bool probe;
        cf sent;      // probes: the symbol sent
        unsigned scr; // data: the scrambler value
        int slip;     // timing slip applied before this symbol
    };
    std::unique_ptr<channel_tracking_equaliser> block_start_equaliser;
    std::vector<stored_symbol> block_symbols_seen;
    std::vector<cd> block_windows;
    int pending_slip = 0;
    std::vector<float> recent_pairs; // the last pair LLRs given to the Viterbi decoder
    // The block as the previous pass's decisions decoded it (empty before the second).
    std::vector<uint8_t> previous_pass_decoded;
    uint64_t later_passes = 0;
    void store_symbol(bool probe, cf sent, unsigned scr);
    // Equalises the block again on its decoded decisions; false (nothing done) when they
    // are those the previous pass ran on, which would only repeat it.
    bool second_pass();
    // soft_decoder_feedback: a symbol's mean point given its bits' a posteriori LLRs
    // (MSB first), and the probability that all its bits are as their signs say.
    struct soft_symbol {
        cd mean;
        double right = 1;
    };
    soft_symbol soft_decision(const float* llr, unsigned scr) const;
    // Nearest point of the mode's set to u (descrambled), and max-log LLRs (MSB first).
    unsigned nearest_point(cd u) const;
    void demap(cd u, double sigma2, float* llr) const;
    unsigned stride() const;
    std::vector<uint8_t> bits;
    static constexpr size_t no_eom = std::numeric_limits<size_t>::max();
    size_t eom_at = no_eom;
    size_t eom_searched = 0;      // bits before this were looked at for the EOM
    size_t near_eom_searched = 0; // and for a near-EOM followed by the flush
    void find_eom();
    // deliver_per_block: bytes handed on so far, and whether a block decoded since.
    user_byte_stream streamed;
    bool block_decoded = false;
    void hand_on_decoded(std::vector<m110a_burst>& done);
    // The burst's mode, start, offset and SNR as of now, without bytes.
    m110a_burst burst_so_far() const;

    explicit state(const m110a_receiver_config& c) : cfg(c)
    {
        const auto seg = m110a_preamble_segment(0, 0, 0);
        for (unsigned k = 0; k < common_symbols; ++k)
            known[k] = point(seg[k]);
        for (unsigned k = 1; k < common_symbols; ++k)
            rotations.push_back(known[k] * std::conj(known[k - 1]));
        for (const cf& r : rotations)
            conj_rotations.push_back(std::conj(r));
    }

    // Scans new samples for a preamble; true when one was found (found_at, found_hz).
    bool search();
    uint64_t found_at = 0;
    double found_hz = 0;
    // In the data stage: a new preamble cuts the burst in progress.
    bool watch(std::vector<m110a_burst>& done);
    bool preamble();
    struct preamble_reading {
        const m110a_waveform* mode = nullptr;
        unsigned count = 0;
        double offset_hz = 0;
        cd h;             // channel gain over the known symbols
        double power = 0; // mean sample power over the segment
        // Walsh metric of each value (0..7) of D1, D2, C1, C2, C3 as a z-score.
        std::array<std::array<double, 8>, 5> code_metric{};
        // Share of the segment's power that the common symbols explain on all paths:
        // most of it for a preamble segment, under 0.1 for data.
        double known_share = 0;
    };
    // The mode and count that best explain the readings of consecutive segments
    // (reading s, if any, is of the segment s after the first; a count c puts preamble
    // codes of count c - s there, while c - s >= 0).
    static void decide_codes(const std::vector<preamble_reading>& readings, preamble_reading& r);
    // Reads the segment starting at sample `at` (samples up to at + 1 segment + 64
    // must be in); false when its codes name no mode or no count.
    bool read_preamble(uint64_t at, double coarse_hz, preamble_reading& r) const;
    void begin_burst(const preamble_reading& r);
    bool watch_pending = false;
    bool data(std::vector<m110a_burst>& done);
    void end_burst(bool eom, std::vector<m110a_burst>& done);
    void restart_search(uint64_t from);
    void trim();
    // Commits symbol k (known or decided) to the equaliser; known ones also measure
    // the error against the estimate `z`.
    void commit(cd z, cf sent, bool known_symbol);
    // Moves the sample grid T/2 when the equaliser sees the channel drift a symbol.
    void follow_timing();
    std::vector<cd> pending_estimates; // Walsh chips equalised, not yet decided
    void push_llrs(const float* llr, size_t n);
    // Deinterleaves the block's LLRs (the first block_bits() of block_llr) and appends
    // its (T1, T2) pairs, repetitions combined.
    void append_block_pairs(std::vector<float>& pairs) const;
    void decode_block();
};

m110a_receiver::m110a_receiver(const m110a_receiver_config& config)
{
    check_tracking_settings(config.forgetting, config.decision_weight, config.equaliser_solve_interval);
    if (config.decoder_passes == 0)
        throw std::invalid_argument("m110a_receiver: decoder_passes must be at least 1");
    d.reset(new state(config));
}

m110a_receiver::~m110a_receiver() = default;

bool m110a_receiver::carrier_detected() const { return d->stage != phase::search; }

uint64_t m110a_receiver::samples() const { return d->input.total(); }

uint64_t m110a_receiver::later_passes() const { return d->later_passes; }

void m110a_receiver::tap_symbols(std::vector<cf>* symbols) { d->symbol_tap = symbols; }

void m110a_receiver::process(const cf* x, size_t n, std::vector<m110a_burst>& done)
{
    d->input.append(x, n);
    run_serial_tone_stages(*d, done);
}

void m110a_receiver::state::trim()
{
    // Keep what the correlation (two segments back) or the equaliser may still read.
    uint64_t keep = stage == phase::search ? candidate : stage == phase::preamble ? start : start + symbol * sps;
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
        for (unsigned s = 0; s < 3 && n >= input.base() + s * segment_samples + sps; ++s) {
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
    if (presence.matched_blocks() > 0)
        end_burst(false, done);
    else
        restart_search(start + symbol * sps);
    start = found_at;
    begin_burst(r);
    return true;
}

bool m110a_receiver::state::read_preamble(uint64_t at, double coarse_hz, preamble_reading& r) const
{
    // Symbol-spaced samples of the segment, the offset removed.
    const auto samples = [&](double hz) {
        std::vector<cf> y(m110a_segment_symbols);
        for (unsigned k = 0; k < m110a_segment_symbols; ++k) {
            const double cycles = std::fmod(hz * double(k * sps) / sample_rate, 1.0);
            y[k] = this->at(at + uint64_t(k) * sps) * std::polar(1.0f, float(-two_pi * cycles));
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
        const double cycles = std::fmod(r.offset_hz * double(i - long(at)) / sample_rate, 1.0);
        grid[g] = cd(this->at(uint64_t(i))) * std::polar(1.0, -two_pi * cycles);
    }
    const auto sample = [&](long k, int m, unsigned p) { return grid[size_t(2 * (k + m + reach)) + p]; };
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
            reference[v][j] = std::conj(cd(point((m110a_walsh8[v][j % 8] + m110a_preamble_scramble[j]) % 8)));
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
                    acc += sample(long(cs * 32 + j), m, unsigned(q % 2)) * reference[v][j];
                // Rayleigh diversity combining: each path's power over the noise.
                const double despread_power = 32.0 * 32.0 * path_power[q];
                metric += std::norm(acc) * despread_power / (chip_noise * (despread_power + chip_noise));
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
    r.count = count_ok ? ((value[2] - 4) << 4) | ((value[3] - 4) << 2) | (value[4] - 4) : ~0u;
    return r.mode && count_ok && std::abs(r.h) > 0;
}

void m110a_receiver::state::decide_codes(const std::vector<preamble_reading>& readings, preamble_reading& r)
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
            score += m[2][4 + ((n >> 4) & 3)] + m[3][4 + ((n >> 2) & 3)] + m[4][4 + (n & 3)];
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
        any_ok = any_ok || (ok && (s == 0 || readings[s].known_share >= preamble_known_share));
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
    serial_tone_channel_start channel = start_serial_tone_channel(
        input, start, known, cfg.max_delay_spread_symbols, tracking, r.h, std::max(1e-3, r.power - std::norm(r.h)));
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

bool m110a_receiver::state::window_for(uint64_t k)
{
    return serial_tone_window(input, start, k, *equaliser, timing_shift, window, presence);
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
    pending_slip += follow_serial_tone_channel(input, *equaliser, start + symbol * sps, timing_shift);
}

bool m110a_receiver::state::data(std::vector<m110a_burst>& done)
{
    const auto& scrambler = m110a_data_scrambler();
    const bool walsh = mode->modulation == m110a_modulation::walsh;
    for (;;) {
        // The timing first: the window of this symbol is taken on the grid it sets.
        if (symbol % timing_check_symbols == 0 && walsh_windows.empty() && timing_checked != symbol) {
            timing_checked = symbol;
            follow_timing();
        }
        if (!window_for(symbol))
            break;
        const uint64_t k = symbol++;
        if (k >= data_symbol && block_symbols_seen.empty() && cfg.decoder_passes >= 2 && mode->interleaved() &&
            !walsh) {
            // The state the next interleaver block starts from (a slip just before
            // this symbol is in it already).
            block_start_equaliser.reset(new channel_tracking_equaliser(*equaliser));
            pending_slip = 0;
        }
        const cd z = walsh ? equaliser->match(window.data()) : equaliser->equalise(window.data());
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
            if (block_end) {
                if (presence.block_says_lost(presence.probes_match())) {
                    end_burst(false, done);
                    return true;
                }
            }
            continue;
        }
        if (walsh) {
            // Chips wait for their Walsh symbol's decision before the channel learns them.
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
                    reference[j] = std::conj(cd(point(chips[j] + scrambler[(dk - 31 + j) % 160])));
                metric[v] = 0;
                for (size_t q = 0; q < width; ++q) {
                    const double path_power = 32.0 * 32.0 * profile[q];
                    if (!(path_power > 0))
                        continue;
                    cd y;
                    for (unsigned j = 0; j < 32; ++j)
                        y += reference[j] * walsh_windows[j * width + q];
                    metric[v] += std::norm(y) * path_power / (chip_noise * (path_power + chip_noise));
                }
            }
            if (cfg.walsh_metric != 0) {
                // Coherent: the matched chips (unit gain, tracked channel) against each
                // candidate, as a log-likelihood over their error variance.
                const double variance = std::max(
                    std::isnan(walsh_chip_error) ? equaliser->estimate_variance() : walsh_chip_error, 1e-9);
                for (unsigned v = 0; v < 4; ++v) {
                    const auto chips = m110a_walsh_chips(v, exceptional);
                    cd y;
                    for (unsigned j = 0; j < 32; ++j)
                        y += std::conj(cd(point(chips[j] + scrambler[(dk - 31 + j) % 160]))) *
                             pending_estimates[j];
                    const double coherent = 2.0 * y.real() / variance;
                    metric[v] = cfg.walsh_metric == 1 ? coherent : (1 - cfg.walsh_coherent_weight) * metric[v] + cfg.walsh_coherent_weight * coherent;
                }
            }
            walsh_windows.clear();
            const unsigned best = unsigned(std::max_element(metric, metric + 4) - metric);
            const auto decided = m110a_walsh_chips(best, exceptional);
            double chip_error = 0;
            for (unsigned j = 0; j < 32; ++j)
                chip_error += std::norm(pending_estimates[j] -
                                        cd(point(decided[j] + scrambler[(dk - 31 + j) % 160])));
            chip_error /= 32.0;
            walsh_chip_error = std::isnan(walsh_chip_error) ? chip_error : 0.75 * walsh_chip_error + 0.25 * chip_error;
            for (unsigned j = 0; j < 32; ++j) {
                const unsigned scr_j = scrambler[(dk - 31 + j) % 160];
                commit(pending_estimates[j], point(decided[j] + scr_j), true);
                if (symbol_tap)
                    symbol_tap->push_back(cf(pending_estimates[j] * std::conj(cd(point(scr_j)))));
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
            walsh_other_metric += (metric[0] + metric[1] + metric[2] + metric[3] - metric[best]) / 3.0;
            // The symbol's bits go in first: the block they complete may hold the EOM.
            push_llrs(llr, 2);
            if ((walsh_index + 1) % per_block == 0) {
                // Noise alone leaves no candidate well ahead of the others.
                const bool unclear = walsh_decided_metric < walsh_presence_ratio * walsh_other_metric;
                walsh_decided_metric = 0;
                walsh_other_metric = 0;
                if (eom_at == no_eom && presence.block_says_lost(!unclear)) {
                    end_burst(false, done);
                    return true;
                }
            }
        } else {
            // Decision-directed: nearest point of the mode's set (scrambled).
            const cd u = z * std::conj(cd(point(scr)));
            if (symbol_tap)
                symbol_tap->push_back(cf(u));
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
    auto bytes = streamed.take(bits, std::min(eom_searched, near_eom_searched), cfg.msb_first);
    if (bytes.empty())
        return;
    m110a_burst piece = burst_so_far();
    piece.bytes = std::move(bytes);
    piece.continues = true;
    done.push_back(std::move(piece));
}

unsigned m110a_receiver::state::stride() const
{
    return mode->modulation == m110a_modulation::bpsk ? 4 : mode->modulation == m110a_modulation::qpsk ? 2 : 1;
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
    if (cfg.decoder_passes < 2 || !mode->interleaved() || mode->modulation == m110a_modulation::walsh)
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
        demap(z * std::conj(cd(point(seen.scr))), std::max(1e-3, again.estimate_variance()), &block_llr[bit]);
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
    constexpr int eom_tolerance = 4;       // bit errors in the 32-bit word
    constexpr size_t flush_checked = 64;   // flush bits that must follow it
    constexpr size_t flush_tolerance = 2;  // ones among them
    // Near words first: one whose flush has decoded lies before any exact word seen now.
    for (; near_eom_searched + m110a_eom_bits + flush_checked <= bits.size() && eom_at == no_eom;
         ++near_eom_searched) {
        if (__builtin_popcount(bits_word(bits, near_eom_searched) ^ m110a_eom) > eom_tolerance)
            continue;
        const auto flush = bits.begin() + long(near_eom_searched + m110a_eom_bits);
        if (size_t(std::count(flush, flush + long(flush_checked), 1)) <= flush_tolerance)
            eom_at = near_eom_searched;
    }
    for (; eom_searched + m110a_eom_bits <= bits.size() && eom_at == no_eom; ++eom_searched)
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
        recent_pairs.erase(recent_pairs.begin(), recent_pairs.end() - long(2 * lead_pairs));
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
    m110a_burst burst = burst_so_far();
    burst.eom = eom;
    burst.bytes = streamed.take(bits, eom ? eom_at : bits.size(), cfg.msb_first);
    done.push_back(std::move(burst));
    restart_search(start + symbol * sps);
}

} // namespace phy
} // namespace hfstack
} // namespace gr
