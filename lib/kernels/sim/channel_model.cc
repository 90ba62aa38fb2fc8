/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "channel_model.h"

#include "phy/burst_snr.h"

#include <algorithm>
#include <cmath>
#include <sstream>
#include <stdexcept>
#include <string>

namespace gr {
namespace hfstack {
namespace sim {

namespace {

[[noreturn]] void bad(const char* field, const std::string& what, double value)
{
    std::ostringstream os;
    os << "channel_config." << field << " " << what << ", got " << value;
    throw std::invalid_argument(os.str());
}

void check_probability(const char* field, double v)
{
    if (!(v >= 0.0 && v <= 1.0))
        bad(field, "must be a probability in [0, 1]", v);
}

void check_non_negative(const char* field, double v)
{
    if (!(v >= 0.0) || !std::isfinite(v))
        bad(field, "must be finite and >= 0", v);
}

void check_finite(const char* field, double v)
{
    if (!std::isfinite(v))
        bad(field, "must be finite", v);
}

// A periodic window (fades, outages): period, duration, offset of fields `name`_*.
void check_window(const std::string& name, double period, double duration, double offset)
{
    const std::string p = name + "_period_s", d = name + "_duration_s";
    check_non_negative(p.c_str(), period);
    check_non_negative(d.c_str(), duration);
    check_finite((name + "_offset_s").c_str(), offset);
    if (period > 0 && duration > period)
        bad(d.c_str(),
            "must not exceed " + p + " (" + std::to_string(period) + ")",
            duration);
}

bool enabled(double period, double duration) { return period > 0 && duration > 0; }

// First index n >= 0 of a periodic window [offset + n * period, + duration) that can
// end after t.
int64_t first_window(double t, double offset, double period, double duration)
{
    const double n = std::floor((t - offset - duration) / period);
    if (!(n > 0))
        return 0;
    return int64_t(n);
}

// The time-weighted mean over [t0, t1) of f(SNR in dB) with the steps in force (steps
// sorted by time; before_db until the first); f of the level at t0 for an empty span.
template <typename F>
double stepped_time_mean(double before_db,
                         const std::vector<std::pair<double, double>>& steps_db,
                         double t0,
                         double t1,
                         F f)
{
    double level = before_db;
    for (const auto& [from, db] : steps_db)
        if (t0 >= from)
            level = db;
    if (!(t1 > t0))
        return f(level);
    double sum = 0, from = t0;
    for (const auto& [at, db] : steps_db) {
        if (at <= from)
            continue;
        if (!(at < t1))
            break;
        sum += (at - from) * f(level);
        from = at;
        level = db;
    }
    sum += (t1 - from) * f(level);
    return sum / (t1 - t0);
}

} // namespace

void validate(const channel_config& c)
{
    check_probability("ber", c.ber);
    check_non_negative("burst_rate_per_s", c.burst_rate_per_s);
    check_probability("burst_ber", c.burst_ber);
    check_window("fade", c.fade_period_s, c.fade_duration_s, c.fade_offset_s);
    check_probability("fade_ber", c.fade_ber);
    check_window("outage", c.outage_period_s, c.outage_duration_s, c.outage_offset_s);
    check_non_negative("propagation_s", c.propagation_s);
    if (!c.fading_profile.empty()) {
        fading_profile_by_name(c.fading_profile); // throws naming "profile"
        if (!std::isfinite(c.snr_db))
            bad("snr_db", "must be finite with a fading profile", c.snr_db);
    }
    if (!c.snr_steps.empty() && !std::isfinite(c.snr_db))
        bad("snr_db", "must be finite with SNR steps", c.snr_db);
    for (size_t i = 0; i < c.snr_steps.size(); ++i) {
        const auto& st = c.snr_steps[i];
        if (!std::isfinite(st.t_s) || (i > 0 && !(st.t_s > c.snr_steps[i - 1].t_s)))
            bad("snr_steps.t_s", "must be finite and strictly ascending", st.t_s);
        if (!std::isfinite(st.snr_db))
            bad("snr_steps.snr_db", "must be finite", st.snr_db);
    }
}

channel_model::channel_model(channel_config config)
    : d_cfg(config), d_rng(config.seed), d_report_rng(config.seed ^ 0x5e9a7e5071ULL)
{
    validate(d_cfg);
    d_clear =
        !(d_cfg.ber > 0) &&
        !(d_cfg.burst_rate_per_s > 0 && d_cfg.burst_length_bits > 0 &&
          d_cfg.burst_ber > 0) &&
        !(enabled(d_cfg.fade_period_s, d_cfg.fade_duration_s) && d_cfg.fade_ber > 0) &&
        !enabled(d_cfg.outage_period_s, d_cfg.outage_duration_s) &&
        d_cfg.fading_profile.empty();
    for (const auto& st : d_cfg.snr_steps)
        d_snr_steps_db.emplace_back(st.t_s, st.snr_db);
}

double channel_model::uniform_open()
{
    // 53 random bits -> [0, 1), then 1 - u -> (0, 1].
    return 1.0 - double(d_rng() >> 11) * (1.0 / 9007199254740992.0);
}

void channel_model::draw_errors(uint64_t first, uint64_t last, double p)
{
    if (!(p > 0) || first >= last)
        return;
    if (p >= 1.0) {
        for (uint64_t k = first; k < last; ++k)
            d_errors.push_back(k);
        return;
    }
    // Number of good bits before the next bad one is geometric: floor(ln U / ln(1 - p)).
    const double log_good = std::log1p(-p);
    uint64_t k = first;
    for (;;) {
        const double gap = std::floor(std::log(uniform_open()) / log_good);
        if (!(double(k) + gap < double(last)))
            break;
        k += uint64_t(gap);
        if (k >= last)
            break;
        d_errors.push_back(k);
        ++k;
    }
}

bool channel_model::in_outage(double t0, double t1) const
{
    const double period = d_cfg.outage_period_s;
    const double duration = d_cfg.outage_duration_s;
    if (!enabled(period, duration))
        return false;
    if (t1 < t0)
        std::swap(t0, t1);
    const double offset = d_cfg.outage_offset_s;
    for (int64_t n = first_window(t0, offset, period, duration);; ++n) {
        const double ws = offset + double(n) * period;
        const double we = ws + duration;
        if (t0 == t1) {
            if (ws > t0)
                return false;
            if (t0 < we)
                return true;
        } else {
            if (ws >= t1)
                return false;
            if (t0 < we)
                return true;
        }
    }
}

bool channel_model::drop_in_outage(double t0, double t1)
{
    if (!in_outage(t0, t1))
        return false;
    ++d_counters.lost_bursts;
    return true;
}

double channel_model::mean_snr_db(double t) const
{
    return stepped_mean_db(d_cfg.snr_db, d_snr_steps_db, t, t);
}

double channel_model::reported_snr_db(const std::string& mode, double t, double burst_s)
{
    return reported_snrs(mode, t, burst_s).whole_db;
}

channel_model::snr_reports
channel_model::reported_snrs(const std::string& mode, double t, double burst_s)
{
    // Our receivers report a burst's SNR as the mean over it of short looks in dB
    // (phy/burst_snr.h): a burst across an SNR step reads the time-weighted mean of the
    // levels' reports, in dB (a power mean would let the higher level rule).
    const double recent_s = std::min(burst_s, phy::burst_snr::recent_window_s);
    const double recent_from = t + burst_s - recent_s;
    const auto in_db = [](double db) { return db; };
    const double mean =
        stepped_time_mean(d_cfg.snr_db, d_snr_steps_db, t, t + burst_s, in_db);
    const double recent_mean =
        stepped_time_mean(d_cfg.snr_db, d_snr_steps_db, recent_from, t + burst_s, in_db);
    if (!std::isfinite(mean) || d_cfg.fading_profile.empty() || !d_cfg.model_snr_report)
        return { mean, recent_mean };
    auto it = d_report_maps.find(mode);
    if (it == d_report_maps.end()) {
        const auto& data = phy::measured_modem_curves();
        auto map = phy::snr_report_map_on(data, mode, d_cfg.fading_profile);
        if (!map)
            map = phy::snr_report_map_from(data, mode);
        it = d_report_maps.emplace(mode, std::move(map)).first;
    }
    if (!it->second)
        return { mean, recent_mean };
    const phy::snr_report_map& m = *it->second;
    const auto report_of = [&m](double db) { return m.report_for(db); };
    const double z = std::normal_distribution<double>()(d_report_rng);
    return { stepped_time_mean(d_cfg.snr_db, d_snr_steps_db, t, t + burst_s, report_of) +
                 m.report_sd_db(burst_s) * z,
             stepped_time_mean(
                 d_cfg.snr_db, d_snr_steps_db, recent_from, t + burst_s, report_of) +
                 m.report_sd_db(recent_s) * z };
}

fading_error_process&
channel_model::fading_for(double bit_rate, double block_s, double data_start)
{
    const mode_model& mode = mode_model_for(bit_rate, block_s);
    if (!d_fading || &mode != d_fading_mode || block_s != d_fading_block_s ||
        !d_fading->reaches_back_to(data_start)) {
        fading_error_config fc;
        fc.interleaver_s = block_s;
        fc.fading_loss_db = mode.fading_loss_db;
        fading_snr snr(
            d_cfg.snr_db, fading_profile_by_name(d_cfg.fading_profile), d_cfg.seed);
        snr.set_steps(d_snr_steps_db);
        d_fading = std::make_unique<fading_error_process>(mode.curve, std::move(snr), fc);
        d_fading_mode = &mode;
        d_fading_block_s = block_s;
    }
    return *d_fading;
}

reception_errors channel_model::receive(uint8_t* data,
                                        size_t size,
                                        double start_time,
                                        double preamble_s,
                                        double bit_rate,
                                        double block_s)
{
    reception_errors r;
    if (!d_cfg.fading_profile.empty() && std::isfinite(bit_rate) && bit_rate > 0) {
        fading_error_process& f = fading_for(bit_rate, block_s, start_time + preamble_s);
        // A burst overlapping the path's previous one (no single transmitter sends that;
        // the emulator must not fail on it) sees what is left of its preamble.
        const double from = std::max(start_time, f.earliest_s());
        const double snr =
            f.mean_snr_linear(from, std::max(from, start_time + preamble_s));
        const double p = preamble_miss_probability(10.0 * std::log10(snr),
                                                   d_fading_mode->detect_snr_db,
                                                   d_fading_mode->detect_width_db);
        // Certain outcomes draw no random number (a step model draws none at all).
        const bool missed = p >= 1.0 || (p > 0.0 && uniform_open() <= p);
        if (missed) {
            ++d_counters.missed_preambles;
            r.preamble_missed = true;
            return r;
        }
    }
    r.bits_flipped = corrupt(data, size, start_time, preamble_s, bit_rate, block_s);
    return r;
}

size_t channel_model::corrupt(std::vector<uint8_t>& burst,
                              double start_time,
                              double preamble_s,
                              double bit_rate,
                              double block_s)
{
    return corrupt(burst.data(), burst.size(), start_time, preamble_s, bit_rate, block_s);
}

size_t channel_model::corrupt(uint8_t* data,
                              size_t size,
                              double start_time,
                              double preamble_s,
                              double bit_rate,
                              double block_s)
{
    if (!(bit_rate > 0) || !std::isfinite(bit_rate))
        throw std::invalid_argument(
            "channel_model::corrupt: bit_rate must be positive, got " +
            std::to_string(bit_rate));
    ++d_counters.bursts;
    const uint64_t nbits = uint64_t(size) * 8;
    d_counters.bits += nbits;
    if (nbits == 0 || d_clear)
        return 0;

    d_errors.clear();
    const double t0 = start_time + preamble_s; // bit 0 on air
    auto bit_time = [&](uint64_t k) { return t0 + double(k) / bit_rate; };
    // Smallest k in [0, nbits] whose on-air instant is >= t (nbits if none).
    auto first_bit_at = [&](double t) -> uint64_t {
        if (!(t > t0))
            return 0;
        const double x = std::ceil((t - t0) * bit_rate);
        if (!(x < double(nbits)))
            return nbits;
        uint64_t k = uint64_t(x);
        while (k > 0 && bit_time(k - 1) >= t)
            --k;
        while (k < nbits && bit_time(k) < t)
            ++k;
        return k;
    };

    draw_errors(0, nbits, d_cfg.ber);

    if (!d_cfg.fading_profile.empty()) {
        fading_error_process& f = fading_for(bit_rate, block_s, t0);
        f.segments(t0, t0, t0 + double(nbits) / bit_rate, d_segments);
        for (const auto& seg : d_segments)
            draw_errors(first_bit_at(seg.start_s), first_bit_at(seg.end_s), seg.ber);
    }

    if (enabled(d_cfg.fade_period_s, d_cfg.fade_duration_s) && d_cfg.fade_ber > 0) {
        const double period = d_cfg.fade_period_s;
        const double duration = d_cfg.fade_duration_s;
        const double t_last = bit_time(nbits - 1);
        for (int64_t n = first_window(t0, d_cfg.fade_offset_s, period, duration);; ++n) {
            const double ws = d_cfg.fade_offset_s + double(n) * period;
            if (ws > t_last)
                break;
            const double we = ws + duration;
            if (we <= t0)
                continue;
            draw_errors(first_bit_at(ws), first_bit_at(we), d_cfg.fade_ber);
        }
    }

    if (d_cfg.burst_rate_per_s > 0 && d_cfg.burst_length_bits > 0 &&
        d_cfg.burst_ber > 0) {
        const double t_end = t0 + double(nbits) / bit_rate;
        const double length_s = double(d_cfg.burst_length_bits) / bit_rate;
        double t = std::min(start_time, t0);
        for (;;) {
            t += -std::log(uniform_open()) / d_cfg.burst_rate_per_s;
            if (!(t < t_end))
                break;
            draw_errors(first_bit_at(t), first_bit_at(t + length_s), d_cfg.burst_ber);
        }
    }

    if (d_errors.empty())
        return 0;
    std::sort(d_errors.begin(), d_errors.end());
    d_errors.erase(std::unique(d_errors.begin(), d_errors.end()), d_errors.end());
    for (uint64_t k : d_errors)
        data[k >> 3] ^= uint8_t(0x80u >> (k & 7));
    d_counters.bit_errors += d_errors.size();
    return d_errors.size();
}

} // namespace sim
} // namespace hfstack
} // namespace gr
