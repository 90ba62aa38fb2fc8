/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

/* A coherent peak under the search's threshold judged on the data after its preamble
 * (m110d_receiver_config::confirm_weak_with_data): a preamble of one super-frame in a
 * fade reaches a coherent z of 3-4 where 4.5 is needed (F.1487 poor, WN0 at -2 dB and
 * WN1 at 2 dB), and a lower threshold alone lets data through (their peaks read as modes
 * never sent). The fade passes within a few tenths of a second, and the data after the
 * preamble carry known symbols at places its timing fixes: the mini-probe after it and
 * one after every frame (WN1-WN13), or WN0's Walsh symbols, each one of four patterns
 * under the known Trinomial scrambler. Where those stand out of noise for one of the
 * bandwidth's frame structures, the peak is a burst's. */

#include "m110d_receiver.h"
#include "m110d_receiver_state.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace gr {
namespace hfstack {
namespace phy {

using namespace m110d_rx;

namespace {

// The data searched for known symbols after the preamble: 1.5 s at 2400 Bd (a fade on
// F.1487 poor, 1 Hz Doppler spread, lasts a few tenths of a second).
constexpr unsigned weak_data_symbols = 3600;
// Timings tried either side of the peak's, in symbols: the other path of two 2 ms
// apart (4.8 symbols), and a peak in a fade a symbol or two off.
constexpr int weak_lags = 6;
// The known symbols' evidence, over its mean and deviation in noise, a frame structure
// needs (the largest of about 13 timings and 19 structures; a burst at its D-LXIV row
// out of the fade has 30 and more).
constexpr double weak_data_z = 12.0;
// Structures whose evidence is within this of the best may be the burst's (a boundary
// probe or the Trinomial's restart after 40 Walsh symbols tell interleavers apart only
// faintly): the fields choose among them.
constexpr double weak_structure_margin = 3.0;
// A super-frame's fixed section where the mini-probe should begin (the peak an earlier
// super-frame's of a preamble of M > 1, whose data then match whole frames on): the 8
// Walsh symbols' evidence over its deviation from this on refuses the peak.
constexpr double weak_next_superframe_z = 4.0;
// A peak inside a burst's data whose timing happens to fit its frames (a burst whose
// preamble was missed, searched through): the structure's known symbols carried back
// over the preamble and this far before it stand out there too, where a preamble has
// its own chips and before it silence (0.3 s; the bench leaves 0.5 s between bursts).
constexpr unsigned weak_before_symbols = 720;
constexpr double weak_before_z = 5.0;
// The fields' correlations over their deviation in noise (3.1, deviation 0.7 for the
// best of the valid count and WID) a held peak's fields need.
constexpr double weak_fields_z = 5.5;
// Down to this the fields may be a faded preamble's if its first block then decodes
// under a WID of the data's frame structure (F.1487 poor, WN0 at -2 dB, M = 1, channel
// seed 24: 5.2, a burst lost): a start whose block boundaries are not a burst's leaves
// LLRs no candidate's code fits.
constexpr double weak_fields_unsure_z = 5.0;
// The same on the search's offset (4.7 Hz coarse) and any valid mode, first: under this
// the peak is not judged further.
constexpr double weak_fields_near_z = 5.0;
// start_wn0_from_data: the data a start the WN0 watch proposed is judged on, 3 s (225
// Walsh symbols: past the M interleaver's first restart of the scrambler after 144, so
// that M and L tell apart), and the scrambler periods before the one the watch found
// tried as the data's first (the watch adds two periods up at a time, and those may
// have held too little of the data; a fade may have hidden the first).
constexpr unsigned data_start_symbols = 7200;
constexpr unsigned wn0_start_periods_back = 4;
// ... and one period after it (the watch may fire in the period before the data's
// first); the candidates of one detection (the first held and those up to six periods
// after it, less half a period: not those a later detection adds after them) are
// judged together.
constexpr uint64_t data_start_group_reach =
    (2 * wn0_start_periods_back + 3) * m110d_wn0_data_watch::period_samples / 2;

// Per symbol window of K known symbols, |sum y conj(known)|^2 over the window's energy:
// mean 1 in noise and at most K - 1 over K + 1 in variance (taken as 1). WN0: the
// largest of four such over 32 chips (the Walsh patterns): mean 25 / 12, variance about
// 1.42.
constexpr double probe_noise_mean = 1.0, probe_noise_variance = 1.0;
constexpr double walsh_noise_mean = 25.0 / 12.0, walsh_noise_variance = 1.42;
// The larger of two (a normal and a boundary probe): mean 1.5, variance 1.25.
constexpr double either_probe_noise_mean = 1.5, either_probe_noise_variance = 1.25;

// One frame structure's evidence: its z at the best timing, that timing's lag, and the
// turn from one window of known symbols to the next (spacing symbols apart).
struct structure_evidence {
    m110d_mode mode;
    double z = -std::numeric_limits<double>::infinity();
    int lag = 0;
    cd turn;
    unsigned spacing = 0;
};

// Per lag, the windows' |sum|^2 / energy added up, and the turn between neighbours.
struct lag_sums {
    double sum = 0;
    unsigned count = 0;
    cd turn, last;
    void add(double term, cd c)
    {
        sum += term;
        ++count;
        turn += c * std::conj(last);
        last = c;
    }
};

// A window of a mini-probe's length against the normal and the boundary probe: its
// energy and the two correlations.
struct probe_window {
    double energy = 0;
    cd normal, boundary;
};
probe_window correlate_probe_window(const cf* x,
                                    const std::vector<cf>& normal,
                                    const std::vector<cf>& boundary)
{
    probe_window w;
    for (size_t i = 0; i < normal.size(); ++i) {
        w.energy += std::norm(x[i]);
        w.normal += cd(x[i]) * std::conj(cd(normal[i]));
        w.boundary += cd(x[i]) * std::conj(cd(boundary[i]));
    }
    return w;
}

// The offset the data turn by: the turn from one window of known symbols to the next on
// the search's coarse offset; none beyond max_hz, where the data may fit at an alias of
// their frames (the turn is read modulo the frame rate).
std::optional<double> offset_from_data(double coarse_hz,
                                       const structure_evidence& e,
                                       double symbol_rate,
                                       double max_hz)
{
    const double hz = coarse_hz + std::arg(e.turn) / (2 * M_PI * e.spacing) * symbol_rate;
    if (std::abs(hz) > max_hz)
        return std::nullopt;
    return hz;
}

structure_evidence best_lag(const m110d_mode& mode,
                            unsigned spacing,
                            const std::vector<lag_sums>& sums,
                            const std::vector<int>& lags,
                            double mean,
                            double variance)
{
    structure_evidence e;
    e.mode = mode;
    e.spacing = spacing;
    for (size_t l = 0; l < lags.size(); ++l) {
        const lag_sums& s = sums[l];
        if (s.count == 0)
            continue;
        const double z = (s.sum - s.count * mean) / std::sqrt(s.count * variance);
        if (z > e.z) {
            e.z = z;
            e.lag = lags[l];
            e.turn = s.turn;
        }
    }
    return e;
}

// The mini-probes' evidence for each frame structure with probes (one per frame length,
// probe length and block length: a boundary probe ends each block): y[origin + k + lag]
// is symbol k of the data at a lag.
// Over data_symbols of data; with `only`, its frames' structures alone.
std::vector<structure_evidence> probe_evidence(unsigned bw_khz,
                                               const std::vector<cf>& y,
                                               size_t origin,
                                               const std::vector<int>& lags,
                                               unsigned data_symbols = weak_data_symbols,
                                               const m110d_mode* only = nullptr)
{
    std::vector<structure_evidence> evidence;
    std::vector<m110d_mode> done;
    for (const m110d_mode& m : m110d_modes_at(bw_khz)) {
        if (m.wn == 0 || std::any_of(done.begin(), done.end(), [&](const m110d_mode& d) {
                return d.data_symbols == m.data_symbols &&
                       d.probe_symbols == m.probe_symbols;
            }))
            continue;
        if (only && (only->data_symbols != m.data_symbols ||
                     only->probe_symbols != m.probe_symbols))
            continue;
        done.push_back(m);
        // The block lengths these frames come in, each a structure.
        std::vector<m110d_mode> variants;
        for (const m110d_mode& v : m110d_modes_at(bw_khz))
            if (v.wn != 0 && v.data_symbols == m.data_symbols &&
                v.probe_symbols == m.probe_symbols &&
                std::none_of(variants.begin(), variants.end(), [&](const m110d_mode& u) {
                    return u.frames_per_block == v.frames_per_block;
                }))
                variants.push_back(v);
        const unsigned k = m.probe_symbols, frame = m.data_symbols + k;
        const std::vector<cf> normal = m110d_mini_probe(k, false, k);
        const std::vector<cf> boundary = m110d_mini_probe(k, true, k);
        std::vector<std::vector<lag_sums>> sums(variants.size(),
                                                std::vector<lag_sums>(lags.size()));
        // The probe after the preamble (frame -1), then the one after each frame.
        for (unsigned j = 0; uint64_t(j) * frame + k <= data_symbols; ++j)
            for (size_t l = 0; l < lags.size(); ++l) {
                const probe_window w = correlate_probe_window(
                    y.data() + origin + size_t(j) * frame + lags[l], normal, boundary);
                if (!(w.energy > 0))
                    continue;
                for (size_t v = 0; v < variants.size(); ++v) {
                    const cd c = m110d_probe_is_boundary(variants[v], int64_t(j) - 1)
                                     ? w.boundary
                                     : w.normal;
                    sums[v][l].add(std::norm(c) / w.energy, c);
                }
            }
        for (size_t v = 0; v < variants.size(); ++v)
            evidence.push_back(best_lag(variants[v],
                                        frame,
                                        sums[v],
                                        lags,
                                        probe_noise_mean,
                                        probe_noise_variance));
    }
    return evidence;
}

// WN0's: each Walsh symbol's 32 chips against its four patterns under the Trinomial
// scrambler, which restarts at every interleaver block (one structure per block length).
std::vector<structure_evidence> walsh_evidence(unsigned bw_khz,
                                               const std::vector<cf>& y,
                                               size_t origin,
                                               const std::vector<int>& lags,
                                               unsigned data_symbols = weak_data_symbols)
{
    std::vector<m110d_mode> variants;
    for (const m110d_mode& m : m110d_modes_at(bw_khz))
        if (m.wn == 0)
            variants.push_back(m);
    if (variants.empty())
        return {};
    const auto& trinomial = m110d_trinomial_sequence();
    constexpr unsigned chips = m110d_walsh_data_chips;
    // A Walsh pattern is 4 chips repeated: the correlation with pattern d is the sums
    // of every 4th descrambled chip, each against the pattern's chip.
    std::array<std::array<cd, 4>, 4> pattern;
    for (unsigned d = 0; d < 4; ++d)
        for (unsigned i = 0; i < 4; ++i)
            pattern[d][i] = std::conj(cd(psk8(m110d_wn0_walsh_chip(d, i))));
    std::vector<std::vector<lag_sums>> sums(variants.size(),
                                            std::vector<lag_sums>(lags.size()));
    // The descrambler's points as real and imaginary parts (spelt out: this loop is most
    // of a held peak's cost in noise).
    std::array<float, chips> descrambler_re, descrambler_im;
    std::vector<double> energies(lags.size());
    for (unsigned s = 0; s < data_symbols / chips; ++s) {
        // A lag's energy is the same under every variant's descrambler.
        for (size_t l = 0; l < lags.size(); ++l) {
            const cf* x = y.data() + origin + size_t(s) * chips + lags[l];
            double energy = 0;
            for (unsigned j = 0; j < chips; ++j)
                energy += std::norm(x[j]);
            energies[l] = energy;
        }
        // Variants whose block restarts the scrambler at the same place share the sums.
        std::vector<bool> done(variants.size(), false);
        for (size_t v = 0; v < variants.size(); ++v) {
            if (done[v])
                continue;
            const size_t first = size_t(s % variants[v].frames_per_block) * chips;
            std::vector<size_t> same;
            for (size_t u = v; u < variants.size(); ++u)
                if (size_t(s % variants[u].frames_per_block) * chips == first) {
                    same.push_back(u);
                    done[u] = true;
                }
            for (unsigned j = 0; j < chips; ++j) {
                const cf d =
                    std::conj(psk8(trinomial[(first + j) % m110d_trinomial_period]));
                descrambler_re[j] = d.real();
                descrambler_im[j] = d.imag();
            }
            for (size_t l = 0; l < lags.size(); ++l) {
                if (!(energies[l] > 0))
                    continue;
                const cf* x = y.data() + origin + size_t(s) * chips + lags[l];
                std::array<double, 4> phase_re{}, phase_im{};
                for (unsigned j = 0; j < chips; j += 4)
                    for (unsigned i = 0; i < 4; ++i) {
                        const float xr = x[j + i].real(), xi = x[j + i].imag();
                        const float dr = descrambler_re[j + i],
                                    di = descrambler_im[j + i];
                        phase_re[i] += double(xr * dr - xi * di);
                        phase_im[i] += double(xr * di + xi * dr);
                    }
                double best = -1;
                cd best_sum;
                for (unsigned d = 0; d < 4; ++d) {
                    cd c;
                    for (unsigned i = 0; i < 4; ++i)
                        c += cd(phase_re[i], phase_im[i]) * pattern[d][i];
                    if (std::norm(c) > best) {
                        best = std::norm(c);
                        best_sum = c;
                    }
                }
                for (size_t u : same)
                    sums[u][l].add(best / energies[l], best_sum);
            }
        }
    }
    std::vector<structure_evidence> evidence;
    for (size_t v = 0; v < variants.size(); ++v)
        evidence.push_back(best_lag(
            variants[v], chips, sums[v], lags, walsh_noise_mean, walsh_noise_variance));
    return evidence;
}

// The same structure's evidence at one lag over the windows it would have before the
// data (back from y[origin + lag], `back` symbols): the frames carried back, each probe
// taken as normal or boundary, whichever fits better (a Frank probe turned by a
// multiple of its base's rate reads as a shifted one: data off by such an offset
// matched a boundary probe every block forward); WN0's
// scrambler index with them, continuously over its period (a block of M or L holds
// whole periods; a match forward may be a block's restart within S's).
double evidence_before(const m110d_mode& mode,
                       const std::vector<cf>& y,
                       size_t origin,
                       int lag,
                       unsigned back)
{
    std::vector<lag_sums> sums(1);
    const size_t at = size_t(int64_t(origin) + lag);
    if (mode.wn != 0) {
        const unsigned k = mode.probe_symbols, frame = mode.data_symbols + k;
        const std::vector<cf> normal = m110d_mini_probe(k, false, k);
        const std::vector<cf> boundary = m110d_mini_probe(k, true, k);
        for (unsigned j = 1; uint64_t(j) * frame <= back && j * frame <= at; ++j) {
            const probe_window w = correlate_probe_window(
                y.data() + at - size_t(j) * frame, normal, boundary);
            if (w.energy > 0)
                sums[0].add(std::max(std::norm(w.normal), std::norm(w.boundary)) /
                                w.energy,
                            w.normal);
        }
        return best_lag(mode,
                        frame,
                        sums,
                        { lag },
                        either_probe_noise_mean,
                        either_probe_noise_variance)
            .z;
    }
    const auto& trinomial = m110d_trinomial_sequence();
    constexpr unsigned chips = m110d_walsh_data_chips;
    for (unsigned s = 1; s * chips <= back && s * chips <= at; ++s) {
        const cf* x = y.data() + at - size_t(s) * chips;
        constexpr unsigned period = m110d_trinomial_period / chips;
        const size_t first = size_t((period - s % period) % period) * chips;
        double energy = 0;
        std::array<cd, 4> phase{};
        for (unsigned j = 0; j < chips; ++j) {
            energy += std::norm(x[j]);
            phase[j % 4] +=
                cd(x[j]) *
                std::conj(cd(psk8(trinomial[(first + j) % m110d_trinomial_period])));
        }
        if (!(energy > 0))
            continue;
        double best = 0;
        cd best_sum;
        for (unsigned d = 0; d < 4; ++d) {
            cd c;
            for (unsigned i = 0; i < 4; ++i)
                c += phase[i] * std::conj(cd(psk8(m110d_wn0_walsh_chip(d, i))));
            if (std::norm(c) > best) {
                best = std::norm(c);
                best_sum = c;
            }
        }
        sums[0].add(best / energy, best_sum);
    }
    return best_lag(mode, chips, sums, { lag }, walsh_noise_mean, walsh_noise_variance).z;
}

// The structure's probes (normal and boundary as they fall) in y from origin + lag,
// correlated over each probe turned back by `hz` more: their power added up.
double probe_power(const std::vector<cf>& y,
                   size_t origin,
                   const structure_evidence& e,
                   const std::vector<cf>& normal,
                   const std::vector<cf>& boundary,
                   double hz,
                   double symbol_rate)
{
    const m110d_mode& mode = e.mode;
    const unsigned k = mode.probe_symbols, frame = mode.data_symbols + k;
    std::vector<cd> turn(k);
    for (unsigned i = 0; i < k; ++i)
        turn[i] = std::polar(1.0, -2 * M_PI * hz * i / symbol_rate);
    double power = 0;
    for (unsigned j = 0; uint64_t(j) * frame + k <= weak_data_symbols; ++j) {
        const int64_t at = int64_t(origin) + int64_t(j) * frame + e.lag;
        if (at < 0 || size_t(at) + k > y.size())
            break;
        const std::vector<cf>& p =
            m110d_probe_is_boundary(mode, int64_t(j) - 1) ? boundary : normal;
        cd c;
        for (unsigned i = 0; i < k; ++i)
            c += cd(y[size_t(at) + i]) * std::conj(cd(p[i])) * turn[i];
        power += std::norm(c);
    }
    return power;
}

// Whether the probes' power at another alias of the frame rate within two of `hz`
// (the offset the data were read at, `hz` over what y was turned back by) is half as
// much again as at `hz`: the data's offset is that alias.
bool probe_alias_stands_out(const std::vector<cf>& y,
                            size_t origin,
                            const structure_evidence& e,
                            double hz,
                            double symbol_rate)
{
    const unsigned k = e.mode.probe_symbols;
    const std::vector<cf> normal = m110d_mini_probe(k, false, k);
    const std::vector<cf> boundary = m110d_mini_probe(k, true, k);
    const double frame_hz = symbol_rate / (e.mode.data_symbols + k);
    const auto power = [&](double at_hz) {
        return probe_power(y, origin, e, normal, boundary, at_hz, symbol_rate);
    };
    const double own = power(hz);
    for (int m : { -2, -1, 1, 2 })
        if (power(hz + m * frame_hz) > 1.5 * own)
            return true;
    return false;
}

bool same_structure(const m110d_mode& a, const m110d_mode& b)
{
    return (a.wn == 0) == (b.wn == 0) && a.data_symbols == b.data_symbols &&
           a.probe_symbols == b.probe_symbols && a.frames_per_block == b.frames_per_block;
}

} // namespace

uint64_t m110d_receiver::state::judged_data_end(uint64_t at, unsigned data_symbols) const
{
    return at +
           uint64_t(preamble_end + data_symbols + 2 * (walsh_chips + weak_lags)) * sps;
}

uint64_t m110d_receiver::state::group_judged_at(const std::vector<weak_candidate>& held,
                                                unsigned data_symbols,
                                                uint64_t reach) const
{
    // The first held and those within its data (or reach), judged together.
    if (held.empty())
        return 0;
    const uint64_t first_end =
        std::max(judged_data_end(held.front().at, data_symbols), held.front().at + reach);
    uint64_t at = 0;
    for (const weak_candidate& w : held)
        if (w.at <= first_end)
            at = std::max(at, judged_data_end(w.at, data_symbols));
    return at;
}

void m110d_receiver::state::judge_group(
    std::vector<weak_candidate>& held,
    unsigned data_symbols,
    const std::function<void(const weak_candidate&)>& judge,
    uint64_t reach)
{
    const uint64_t group_end =
        std::max(judged_data_end(held.front().at, data_symbols), held.front().at + reach);
    size_t judged = 0;
    for (const weak_candidate& w : held) {
        if (w.at > group_end)
            break;
        ++judged;
        judge(w);
    }
    held.erase(held.begin(), held.begin() + long(judged));
}

uint64_t m110d_receiver::state::weak_data_end(const weak_candidate& w) const
{
    return judged_data_end(w.at, weak_data_symbols);
}

uint64_t m110d_receiver::state::weak_judged_at() const
{
    return group_judged_at(weak, weak_data_symbols);
}

bool m110d_receiver::state::weak_detection_confirmed()
{
    // Of the peaks judged together whose data carry a frame structure, the one whose
    // preamble stands out most (its known chips and its fields): a peak in noise before
    // a burst's, its timing whole frames off the burst's, sees the same probes in the
    // data, but no preamble of its own.
    std::optional<weak_judgement> best;
    judge_group(weak, weak_data_symbols, [&](const weak_candidate& w) {
        const std::optional<weak_judgement> j = judge_weak(w);
        // (Fields that stand out before those that stand out less.)
        if (j && (!best || (best->fields_unsure && !j->fields_unsure) ||
                  (best->fields_unsure == j->fields_unsure &&
                   j->preamble_z > best->preamble_z)))
            best = j;
    });
    if (!best)
        return false;
    weak.clear(); // the later ones lie in its burst
    data_start_alternates.clear();
    found_from_data = false;
    weak_fields = best->fields;
    weak_fields_unsure = best->fields_unsure;
    weak_start_decoded = false;
    weak_start_failures = 0;
    found_weak = true;
    found_by_coherent = true;
    found_other = 0;
    found_alignment = best->alignment;
    found_z = best->peak_z;
    found_sections = 0;
    found_at = best->at;
    found_hz = best->hz;
    return true;
}

template <typename Possible>
std::optional<m110d_fields> m110d_receiver::state::weak_fields_at(const weak_candidate& w,
                                                                  int side,
                                                                  double hz,
                                                                  double& fields_z,
                                                                  Possible possible) const
{
    const auto moved = [&](uint64_t at) {
        return at == 0 ? at : uint64_t(int64_t(at) + int64_t(side) * int64_t(sps));
    };
    // Only samples still held (a side a Walsh symbol back may lie before them).
    for (uint64_t at : { w.at, w.other })
        if (at != 0 &&
            (int64_t(at) + int64_t(side) * int64_t(sps) < int64_t(input.base()) ||
             moved(at) + uint64_t(preamble_end) * sps > input.total()))
            return std::nullopt;
    std::vector<cf> chips;
    double deviation = 0;
    if (!combined_field_chips(
            w.alignment, moved(w.at), moved(w.other), hz, chips, deviation))
        return std::nullopt;
    const m110d_pn_alignment alignment = alignments[w.alignment].alignment;
    const std::array<std::array<double, 4>, 9> c = field_correlations(chips, alignment);
    const auto count = m110d_count_dibits(0);
    double count_correlation = 0;
    for (unsigned s = 0; s < 4; ++s)
        count_correlation += c[s][count[s]];
    std::optional<m110d_fields> fields;
    for (m110d_wid_parity parity :
         { m110d_wid_parity::checksum, m110d_wid_parity::caption_d2_zero }) {
        if (parity != cfg.readings.wid_parity && !cfg.find_preamble_readings)
            continue;
        for (const m110d_mode& m : m110d_modes_at(cfg.bandwidth_khz)) {
            if (!possible(m))
                continue;
            for (unsigned k : { 7u, 9u }) {
                m110d_fields f;
                f.alignment = alignment;
                f.parity = parity;
                f.wid = { m.wn, m.interleaver, k };
                const auto dibits = m110d_wid_dibits(f.wid, parity);
                f.correlation = count_correlation;
                for (unsigned s = 0; s < 5; ++s)
                    f.correlation += c[4 + s][dibits[s]];
                if (!fields || f.correlation > fields->correlation)
                    fields = f;
            }
        }
    }
    if (fields)
        fields_z = fields->correlation / deviation;
    return fields;
}

std::optional<m110d_receiver::state::weak_judgement>
m110d_receiver::state::judge_weak(const weak_candidate& w) const
{
    // The peak's timing, and the count field's side peaks a Walsh symbol either side
    // (0.76 of the true one: in a fade noise lifts one over it), each +-weak_lags.
    // (At the input's start, those there are.)
    const int reach = int(walsh_chips) + weak_lags;
    if (w.at < input.base() || weak_data_end(w) > input.total())
        return std::nullopt;
    const unsigned back = unsigned(std::min<uint64_t>(
        (w.at - input.base()) / sps, uint64_t(reach) + weak_before_symbols));
    const unsigned before = back > unsigned(reach) ? back - unsigned(reach) : 0;
    // First what costs little: the fields on the peak's offset, at its timing or a
    // Walsh symbol either side, must come near standing out (the data's offset reads
    // them better; most peaks in noise end here).
    double near_z = 0;
    for (int side : { -int(walsh_chips), 0, int(walsh_chips) }) {
        double z = 0;
        if (weak_fields_at(w, side, w.hz, z, [](const m110d_mode&) { return true; }))
            near_z = std::max(near_z, z);
    }
    if (near_z < weak_fields_near_z)
        return std::nullopt;
    std::vector<int> lags;
    for (int side : { -int(walsh_chips), 0, int(walsh_chips) })
        for (int l = -weak_lags; l <= weak_lags; ++l)
            if (side + l >= -int(back))
                lags.push_back(side + l);
    const std::vector<cf> y =
        symbols_at_offset(input,
                          w.at - uint64_t(back) * sps,
                          back + preamble_end + weak_data_symbols + unsigned(reach),
                          w.hz,
                          symbol_rate);
    const size_t origin = size_t(back) + preamble_end;
    std::vector<structure_evidence> evidence =
        probe_evidence(cfg.bandwidth_khz, y, origin, lags);
    for (structure_evidence& e : walsh_evidence(cfg.bandwidth_khz, y, origin, lags))
        evidence.push_back(e);
    const auto best =
        std::max_element(evidence.begin(),
                         evidence.end(),
                         [](const structure_evidence& a, const structure_evidence& b) {
                             return a.z < b.z;
                         });
    if (best == evidence.end() || !(best->z >= weak_data_z))
        return std::nullopt;
    const double z_before =
        evidence_before(best->mode, y, origin, best->lag, preamble_end + before + reach);
    if (z_before >= weak_before_z)
        return std::nullopt;
    // An earlier super-frame of a longer preamble is followed by the next one's fixed
    // section, not by a mini-probe.
    const alignment_search& a = alignments[w.alignment];
    {
        std::vector<cf> fixed;
        for (uint8_t c : m110d_preamble_section(
                 { m110d_fixed_dibits.begin(), m110d_fixed_dibits.begin() + 8 },
                 m110d_pn_table::fixed,
                 walsh_chips,
                 a.alignment))
            fixed.push_back(psk8(c));
        std::vector<lag_sums> sums(1);
        for (unsigned sym = 0; sym < 8; ++sym) {
            const cf* x = y.data() + origin + size_t(sym) * walsh_chips + best->lag;
            const cf* f = fixed.data() + size_t(sym) * walsh_chips;
            double energy = 0;
            cd c;
            for (unsigned i = 0; i < walsh_chips; ++i) {
                energy += std::norm(x[i]);
                c += cd(x[i]) * std::conj(cd(f[i]));
            }
            if (energy > 0)
                sums[0].add(std::norm(c) / energy, c);
        }
        const structure_evidence next = best_lag(best->mode,
                                                 walsh_chips,
                                                 sums,
                                                 { best->lag },
                                                 probe_noise_mean,
                                                 probe_noise_variance);
        if (next.z >= weak_next_superframe_z)
            return std::nullopt;
    }
    // The offset: the turn from one window of known symbols to the next (4.7 Hz
    // between the coherent search's offsets; +-12.5 Hz reach at WN1's 96-symbol frames,
    // 3.1 Hz at WN11's 384).
    const std::optional<double> data_hz =
        offset_from_data(w.hz, *best, symbol_rate, cfg.weak_max_offset_hz);
    if (!data_hz)
        return std::nullopt;
    const double hz = *data_hz;
    // The turn from probe to probe reads the offset modulo the frame rate; within a probe
    // another alias turns it by half a turn or more at WN1-WN2 (25 Hz over 48 symbols): a
    // peak in a burst's data whose data fit at an alias of their own offset (F.1487 poor,
    // WN2 at 4 dB, M = 1, channel seed 37: -22.5 Hz on data at 0, 2 s into a burst whose
    // preamble was missed, which then ran on over the next) is no preamble's, whose
    // offset the coherent search reads within 4.7 Hz.
    if (best->mode.wn != 0 &&
        probe_alias_stands_out(y, origin, *best, hz - w.hz, symbol_rate))
        return std::nullopt;
    // The count and WID: the valid fields of a mode among the structures that may be
    // the burst's whose symbols correlate best (in a fade symbol-by-symbol decisions
    // fail), at the preamble's timing (the side peak's a Walsh symbol off where the data
    // say so).
    const int side = best->lag < -weak_lags  ? -int(walsh_chips)
                     : best->lag > weak_lags ? int(walsh_chips)
                                             : 0;
    double fields_z = 0;
    const std::optional<m110d_fields> fields =
        weak_fields_at(w, side, hz, fields_z, [&](const m110d_mode& m) {
            return std::any_of(
                evidence.begin(), evidence.end(), [&](const structure_evidence& e) {
                    return same_structure(e.mode, m) &&
                           e.z >= best->z - weak_structure_margin;
                });
        });
    if (!fields)
        return std::nullopt;
    weak_judgement j;
    // The fields' correlations must stand out of the chips' power: a peak in a burst's
    // data that fits its frames (its data before it in a fade) read about 1-4.5, a
    // faded preamble's 7-9.
    if (fields_z < weak_fields_unsure_z)
        return std::nullopt;
    j.fields_unsure = fields_z < weak_fields_z;
    j.z = best->z;
    j.peak_z = w.z;
    // The fields out of noise (3.1, deviation 0.7, on the WID that correlates best), with
    // the known chips' z.
    const double fields_excess = (fields_z - 3.1) / 0.7;
    j.preamble_z = std::sqrt(w.z * w.z + fields_excess * fields_excess);
    j.alignment = w.alignment;
    j.at = uint64_t(int64_t(w.at) + int64_t(best->lag) * int64_t(sps));
    j.hz = hz;
    j.fields = *fields;
    return j;
}

void m110d_receiver::state::reset_data_watches()
{
    if (wn0_watch)
        wn0_watch->reset();
    for (m110d_probe_data_watch& w : probe_watches)
        w.reset();
}

void m110d_receiver::state::hold_data_start(const weak_candidate& w)
{
    if (w.at <= data_starts_judged_through)
        return;
    auto place = std::find_if(data_starts.begin(),
                              data_starts.end(),
                              [&](const weak_candidate& h) { return h.at >= w.at; });
    if (place != data_starts.end() && place->at == w.at)
        return;
    data_starts.insert(place, w);
}

std::optional<m110d_probe_data_watch::detection>
m110d_receiver::state::probe_detection_refined(const m110d_probe_data_watch& watch,
                                               m110d_probe_data_watch::detection d) const
{
    // The products' correlation has side lobes of 80-90 % of its peak a symbol or a
    // Frank row off, turned by 80 or 480 Hz: in a fade one of those can stand out. The
    // window's probes correlated with the mini-probe itself over the timings around it
    // and a grid of offsets within weak_max_offset_hz tell the burst's (a grid step of
    // 5 Hz loses under 1 % of a 48-symbol probe's power).
    constexpr int timing_reach = 8; // symbols either side
    constexpr double grid_hz = 5;
    const unsigned k = watch.probe_symbols();
    const unsigned frame = watch.data_symbols() + k;
    const unsigned frames = watch.frames_summed();
    const std::vector<cf> probe = m110d_mini_probe(k, false, k);
    const int steps = int(std::floor(cfg.weak_max_offset_hz / grid_hz));
    std::vector<std::vector<cd>> turns;
    for (int h = -steps; h <= steps; ++h) {
        std::vector<cd> t(k);
        for (unsigned i = 0; i < k; ++i)
            t[i] = std::polar(1.0, -2 * M_PI * h * grid_hz * i / symbol_rate);
        turns.push_back(std::move(t));
    }
    const uint64_t reach = uint64_t(timing_reach) * sps;
    const uint64_t span = uint64_t(frames - 1) * frame * sps;
    if (d.probe_start < input.base() + span + reach ||
        d.probe_start + reach + uint64_t(k) * sps > input.total())
        return std::nullopt;
    const uint64_t first = d.probe_start - span;
    double best = 0;
    uint64_t best_first = first;
    int best_h = 0;
    std::vector<double> power(turns.size());
    std::vector<cd> q(k);
    for (uint64_t at = first - reach; at <= first + reach; ++at) {
        const std::vector<cf> y =
            symbols_at_offset(input, at, (frames - 1) * frame + k, 0, symbol_rate);
        std::fill(power.begin(), power.end(), 0.0);
        double energy = 0;
        for (unsigned j = 0; j < frames; ++j) {
            for (unsigned i = 0; i < k; ++i) {
                const cd x(y[size_t(j) * frame + i]);
                q[i] = x * std::conj(cd(probe[i]));
                energy += std::norm(x);
            }
            for (size_t h = 0; h < turns.size(); ++h) {
                cd c;
                for (unsigned i = 0; i < k; ++i)
                    c += q[i] * turns[h][i];
                power[h] += std::norm(c);
            }
        }
        if (!(energy > 0))
            continue;
        for (size_t h = 0; h < turns.size(); ++h)
            if (power[h] / energy > best) {
                best = power[h] / energy;
                best_first = at;
                best_h = int(h) - steps;
            }
    }
    if (!(best > 0))
        return std::nullopt;
    d.probe_start = best_first + span;
    d.hz = best_h * grid_hz;
    return d;
}

void m110d_receiver::state::watch_data(uint64_t n)
{
    if (!probe_watches.empty()) {
        const cf product = input.at(n + sps) * std::conj(input.at(n));
        for (m110d_probe_data_watch& watch : probe_watches) {
            std::optional<m110d_probe_data_watch::detection> d = watch.add(n, product);
            if (!d)
                continue;
            d = probe_detection_refined(watch, *d);
            if (!d)
                continue;
            // The data's first probe (the one after the preamble) is one of the window's
            // or of those in the window before (which had too little of the data), or
            // the next.
            const uint64_t frame = watch.frame_samples();
            const uint64_t preamble = uint64_t(preamble_end) * sps;
            const unsigned frames = watch.frames_summed();
            for (int back = -1; back <= int(2 * frames); ++back) {
                if (int64_t(d->probe_start) <
                    int64_t(input.base() + preamble) + back * int64_t(frame))
                    break;
                weak_candidate w;
                w.at =
                    uint64_t(int64_t(d->probe_start) - back * int64_t(frame)) - preamble;
                w.hz = d->hz;
                w.z = d->z;
                w.data_symbols = watch.data_symbols();
                w.probe_symbols = watch.probe_symbols();
                hold_data_start(w);
            }
        }
    }
    if (!wn0_watch)
        return;
    constexpr unsigned lag = m110d_wn0_data_watch::lag_samples;
    const std::optional<m110d_wn0_data_watch::detection> d =
        wn0_watch->add(n, input.at(n + lag) * std::conj(input.at(n)));
    if (!d)
        return;
    // The data's first period is one of the window's two or of those just before it;
    // the preamble ends where the data begin.
    constexpr uint64_t period = m110d_wn0_data_watch::period_samples;
    const uint64_t preamble = uint64_t(preamble_end) * sps;
    for (int back = -1; back <= int(wn0_start_periods_back); ++back) {
        if (int64_t(d->period_start) <
            int64_t(input.base() + preamble) + back * int64_t(period))
            break;
        weak_candidate w;
        w.at = uint64_t(int64_t(d->period_start) - back * int64_t(period)) - preamble;
        w.hz = d->hz;
        w.z = d->z;
        hold_data_start(w);
    }
}

uint64_t m110d_receiver::state::data_start_judged_end(const weak_candidate& w) const
{
    return judged_data_end(w.at, data_start_symbols);
}

uint64_t m110d_receiver::state::data_starts_judged_at() const
{
    return group_judged_at(data_starts, data_start_symbols, data_start_group_reach);
}

bool m110d_receiver::state::data_start_confirmed()
{
    // Of the starts judged together, the one whose data stand out most is tried first
    // (a start a period early has a period of noise in its data, one a period late the
    // data before it), then the others in turn, and of those whose first block decodes
    // the one that fits best is kept (set_data_start_aside): under a fade a start whole
    // periods off can stand out more and still decode, worse.
    std::vector<weak_judgement> passed;
    judge_group(
        data_starts,
        data_start_symbols,
        [&](const weak_candidate& w) {
            data_starts_judged_through = std::max(data_starts_judged_through, w.at);
            if (const std::optional<weak_judgement> j = judge_data_start(w))
                passed.push_back(*j);
        },
        data_start_group_reach);
    if (passed.empty())
        return false;
    decoded_data_starts.clear();
    data_start_final = false;
    std::stable_sort(
        passed.begin(),
        passed.end(),
        [](const weak_judgement& a, const weak_judgement& b) { return a.z > b.z; });
    // The others, each whole periods from those before it (one a path or a few chips
    // off a better one starts the same blocks).
    data_start_alternates.clear();
    // A probe start: its block's boundary probe moves it by whole frames once its first
    // block is in (set_data_start_aside); a fade over the preamble leaves the
    // interleaver read there unsure, so the start under the structure's other
    // interleavers (the longest first) follows it.
    if (passed.front().from_probes) {
        const weak_judgement& best = passed.front();
        const auto read = m110d_mode_for(
            cfg.bandwidth_khz, best.fields.wid.wn, best.fields.wid.interleaver);
        std::vector<m110d_mode> others;
        for (const m110d_mode& m : m110d_modes_at(cfg.bandwidth_khz))
            if (read && m.wn == read->wn && m.interleaver != read->interleaver)
                others.push_back(m);
        std::sort(
            others.begin(), others.end(), [](const m110d_mode& a, const m110d_mode& b) {
                return a.frames_per_block > b.frames_per_block;
            });
        for (const m110d_mode& m : others) {
            weak_judgement j = best;
            j.fields.wid.interleaver = m.interleaver;
            data_start_alternates.push_back(j);
        }
        data_starts.clear();
        weak.clear();
        take_data_start(best);
        return true;
    }
    const uint64_t near = uint64_t(2 * walsh_chips) * sps;
    for (size_t i = 1; i < passed.size(); ++i)
        if (std::none_of(
                passed.begin(), passed.begin() + i, [&](const weak_judgement& b) {
                    return passed[i].at + near > b.at && b.at + near > passed[i].at;
                }))
            data_start_alternates.push_back(passed[i]);
    data_starts.clear();
    weak.clear();
    take_data_start(passed.front());
    return true;
}

bool m110d_receiver::state::set_data_start_aside(bool decoded, double excess)
{
    if (data_start_final || !data_start_current) {
        data_start_final = false;
        decoded_data_starts.clear();
        return false;
    }
    // A probe start whole frames off decodes as well as the data's first (the
    // interleaver's fetch order is linear: the block's symbols a frame on are its bits
    // a fixed step on, and the code is tail-biting), its data turned: the first block's
    // boundary probe, now in, tells the start (the frames either side of the one the
    // data stood out most at were not told apart).
    if (data_start_current->from_probes) {
        const boundary_verdict v = boundary_probes_of(*data_start_current);
        // The start moved v.shift frames, under an interleaver, taken next.
        const auto next = [&](m110d_interleaver interleaver) {
            weak_judgement moved = *data_start_current;
            moved.at = uint64_t(int64_t(moved.at) +
                                int64_t(v.shift) *
                                    int64_t(mode->data_symbols + mode->probe_symbols) *
                                    int64_t(sps));
            moved.fields.wid.interleaver = interleaver;
            data_start_alternates.assign(1, moved);
            decoded_data_starts.clear();
            return true;
        };
        switch (v.kind) {
        case boundary_verdict::moved:
            // The interleaver is the one whose boundary probe that is.
            return next(mode->interleaver);
        case boundary_verdict::shorter_block:
            return next(v.shorter->interleaver);
        case boundary_verdict::found:
            // The block is where its boundary says: kept, decoded or not (a burst's,
            // with errors).
            weak_start_decoded = true;
            data_start_alternates.clear();
            decoded_data_starts.clear();
            return false;
        case boundary_verdict::refuted:
            // A normal probe where this interleaver's boundary would be: not this block,
            // decoded or not (a short block misaligned on a long one fits its code
            // too); the next interleaver, if any is left.
            decoded_data_starts.clear();
            return true;
        case boundary_verdict::unknown:
            // Kept if it decodes; else the next interleaver (the last also under the
            // other scrambler reading, as any unsure start).
            if (decoded || data_start_alternates.empty()) {
                data_start_alternates.clear();
                decoded_data_starts.clear();
                return false;
            }
            return true;
        }
    }
    if (decoded)
        decoded_data_starts.emplace_back(excess, *data_start_current);
    if (!data_start_alternates.empty())
        return decoded; // one not decoded is refused anyway
    if (decoded_data_starts.empty())
        return false;
    const auto best =
        std::min_element(decoded_data_starts.begin(),
                         decoded_data_starts.end(),
                         [](const auto& a, const auto& b) { return a.first < b.first; });
    if (decoded && best->second.at == data_start_current->at) {
        decoded_data_starts.clear();
        return false;
    }
    data_start_alternates.assign(1, best->second);
    decoded_data_starts.clear();
    data_start_final = true;
    return true;
}

m110d_receiver::state::boundary_verdict
m110d_receiver::state::boundary_probes_of(const weak_judgement& j) const
{
    // A probe stands out as one sequence where it reads over probe_stands_out and over
    // twice the other's (in noise, e^-6 a probe).
    constexpr double probe_stands_out = 6.0;
    const auto is = [](double one, double other) {
        return one >= probe_stands_out && one > 2 * other;
    };
    const unsigned frame = mode->data_symbols + mode->probe_symbols;
    const int64_t frame_samples = int64_t(frame) * sps;
    const int64_t first_probe = int64_t(j.at) + int64_t(preamble_end) * sps;
    // The probe after frame f of the block (its boundary probe: f = fpb - 2).
    const auto probe_after = [&](int64_t start_probe, unsigned f) {
        return start_probe + int64_t(f + 1) * frame_samples;
    };
    // The normal and the boundary probe's |correlation|^2 over the window's energy at
    // sample `at` (exponential with mean 1 in noise; the other sequence's, a cyclic
    // shift of the same base, reads near 0 on a clean probe); 0 where not held.
    struct probe_reading {
        double normal = 0, boundary = 0;
    };
    const unsigned k = mode->probe_symbols;
    const std::vector<cf> normal = m110d_mini_probe(k, false, k);
    const std::vector<cf> boundary = m110d_mini_probe(k, true, k);
    const auto probe_read_at = [&](int64_t at) {
        probe_reading r;
        if (at < int64_t(input.base()) ||
            uint64_t(at) + uint64_t(k) * sps > input.total())
            return r;
        const std::vector<cf> y =
            symbols_at_offset(input, uint64_t(at), k, j.hz, symbol_rate);
        const probe_window w = correlate_probe_window(y.data(), normal, boundary);
        if (w.energy > 0) {
            r.normal = std::norm(w.normal) / w.energy;
            r.boundary = std::norm(w.boundary) / w.energy;
        }
        return r;
    };
    // A boundary probe at `at` (a sample) is a shorter interleaver's where another
    // stands out a shorter block before or after it (a burst of several shorter blocks
    // has one at the longer's place too): the shortest such, and the shift that puts
    // the start on its blocks nearest where it is.
    const auto shorter_blocks = [&](int64_t at, boundary_verdict& v) {
        std::vector<m110d_mode> shorter;
        for (const m110d_mode& m : m110d_modes_at(cfg.bandwidth_khz))
            if (m.wn == mode->wn && m.frames_per_block < mode->frames_per_block)
                shorter.push_back(m);
        std::sort(
            shorter.begin(), shorter.end(), [](const m110d_mode& a, const m110d_mode& b) {
                return a.frames_per_block < b.frames_per_block;
            });
        for (const m110d_mode& m : shorter) {
            const int64_t block = int64_t(m.frames_per_block) * frame_samples;
            const probe_reading before = probe_read_at(at - block);
            const probe_reading after = probe_read_at(at + block);
            if (!is(before.boundary, before.normal) && !is(after.boundary, after.normal))
                continue;
            // Frames from the start to a block start of this interleaver, the nearest.
            const int64_t to_block =
                (at - probe_after(first_probe, m.frames_per_block - 2)) / frame_samples;
            const int64_t fpb = m.frames_per_block;
            int64_t shift = ((to_block % fpb) + fpb) % fpb;
            if (shift > fpb / 2)
                shift -= fpb;
            v.kind = boundary_verdict::shorter_block;
            v.shorter = m;
            v.shift = int(shift);
            return true;
        }
        return false;
    };
    boundary_verdict v;
    const int64_t expected = probe_after(first_probe, mode->frames_per_block - 2);
    const probe_reading there = probe_read_at(expected);
    if (is(there.boundary, there.normal)) {
        if (!shorter_blocks(expected, v))
            v.kind = boundary_verdict::found;
        return v;
    }
    if (is(there.normal, there.boundary))
        v.kind = boundary_verdict::refuted;
    // Elsewhere within the reach of the starts judged together, where it stands out most
    // (onto samples still held).
    const int reach = int(probe_start_reach_frames(frame));
    double best = 0;
    for (int shift = -reach; shift <= reach; ++shift) {
        if (shift == 0 ||
            int64_t(j.at) + int64_t(shift) * frame_samples < int64_t(input.base()))
            continue;
        const probe_reading r = probe_read_at(expected + int64_t(shift) * frame_samples);
        if (is(r.boundary, r.normal) && r.boundary > best) {
            best = r.boundary;
            v.shift = shift;
            v.kind = boundary_verdict::moved;
        }
    }
    if (v.kind == boundary_verdict::moved)
        shorter_blocks(expected + int64_t(v.shift) * frame_samples, v);
    return v;
}

void m110d_receiver::state::take_data_start(const weak_judgement& j)
{
    data_start_current = j;
    weak_fields = j.fields;
    weak_fields_unsure = true;
    weak_start_decoded = false;
    weak_start_failures = 0;
    found_weak = true;
    found_from_data = true;
    found_by_coherent = true;
    found_other = 0;
    found_alignment = j.alignment;
    found_z = j.peak_z;
    found_sections = 0;
    found_at = j.at;
    found_hz = j.hz;
}

std::optional<m110d_receiver::state::weak_judgement>
m110d_receiver::state::judge_data_start(const weak_candidate& w) const
{
    const bool probes = w.probe_symbols != 0;
    // The lags: a WN0 start's a Walsh symbol either side too (its period found by the
    // watch, the Walsh timing a symbol off where a fade lifts a side peak); the probe
    // watch's timing is a sample's on the strongest path (the lags cover the other
    // path and a symbol either side).
    const std::vector<int> sides =
        probes ? std::vector<int>{ 0 }
               : std::vector<int>{ -int(walsh_chips), 0, int(walsh_chips) };
    const int reach = (probes ? 0 : int(walsh_chips)) + weak_lags;
    if (w.at < input.base() || data_start_judged_end(w) > input.total())
        return std::nullopt;
    std::optional<m110d_mode> structure;
    if (probes) {
        for (const m110d_mode& m : m110d_modes_at(cfg.bandwidth_khz))
            if (m.wn != 0 && m.data_symbols == w.data_symbols &&
                m.probe_symbols == w.probe_symbols) {
                structure = m;
                break;
            }
        if (!structure)
            return std::nullopt;
    }
    const unsigned back = unsigned(std::min<uint64_t>(
        (w.at - input.base()) / sps, uint64_t(reach) + weak_before_symbols));
    const unsigned before = back > unsigned(reach) ? back - unsigned(reach) : 0;
    std::vector<int> lags;
    for (int side : sides)
        for (int l = -weak_lags; l <= weak_lags; ++l)
            if (side + l >= -int(back))
                lags.push_back(side + l);
    const std::vector<cf> y =
        symbols_at_offset(input,
                          w.at - uint64_t(back) * sps,
                          back + preamble_end + data_start_symbols + unsigned(reach),
                          w.hz,
                          symbol_rate);
    const size_t origin = size_t(back) + preamble_end;
    const std::vector<structure_evidence> evidence =
        probes ? probe_evidence(
                     cfg.bandwidth_khz, y, origin, lags, data_start_symbols, &*structure)
               : walsh_evidence(cfg.bandwidth_khz, y, origin, lags, data_start_symbols);
    const auto best =
        std::max_element(evidence.begin(),
                         evidence.end(),
                         [](const structure_evidence& a, const structure_evidence& b) {
                             return a.z < b.z;
                         });
    if (best == evidence.end() || !(best->z >= weak_data_z))
        return std::nullopt;
    // Data before the start: a start within the burst's data (the preamble and the
    // silence before it have no Walsh symbols under the scrambler, no probes).
    if (evidence_before(
            best->mode, y, origin, best->lag, preamble_end + before + reach) >=
        weak_before_z)
        return std::nullopt;
    // The watch's offset (the probe watch's read again on the probes, within 2.5 Hz)
    // moved by the turn from window to window.
    const std::optional<double> data_hz =
        offset_from_data(w.hz, *best, symbol_rate, cfg.weak_max_offset_hz);
    if (!data_hz)
        return std::nullopt;
    const double hz = *data_hz;
    const int side = best->lag < -weak_lags  ? -int(walsh_chips)
                     : best->lag > weak_lags ? int(walsh_chips)
                                             : 0;
    // The fields as a faded preamble's may still give them, among the modes of the
    // structure and block length found (the first block then decides WN and K).
    double fields_z = 0;
    std::optional<m110d_fields> fields =
        weak_fields_at(w, side, hz, fields_z, [&](const m110d_mode& m) {
            return same_structure(m, best->mode);
        });
    if (!fields) {
        fields.emplace();
        fields->alignment = alignments[w.alignment].alignment;
        fields->parity = cfg.readings.wid_parity;
        fields->wid = { best->mode.wn, best->mode.interleaver, 7 };
    }
    weak_judgement j;
    j.from_probes = probes;
    j.fields_unsure = true;
    j.z = best->z;
    j.peak_z = w.z;
    j.preamble_z = best->z;
    j.alignment = w.alignment;
    j.at = uint64_t(int64_t(w.at) + int64_t(best->lag) * int64_t(sps));
    j.hz = hz;
    j.fields = *fields;
    return j;
}

} // namespace phy
} // namespace hfstack
} // namespace gr
