/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "rate_policy.h"

#include "phy/burst_snr.h"
#include "phy/modem_curves.h"
#include "phy/snr_report_map.h"
#include "phy/waveform_modes.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace gr {
namespace hfstack {
namespace dl {

namespace {
constexpr double nan_v = std::numeric_limits<double>::quiet_NaN();
} // namespace

std::vector<rate_policy_entry> rate_table_from(const phy::modem_curve_data& data)
{
    // Every mode a data rate change can announce with a finite threshold.
    std::vector<rate_policy_entry> all;
    for (const auto& f : data.fits) {
        const auto mode = phy::waveform_mode_by_name(f.mode);
        if (!mode || !mode->s4539 || !std::isfinite(f.rate_snr_db))
            continue;
        const auto il = interleaving_code(mode->interleaver);
        if (!il)
            continue;
        modem_mode m;
        try {
            m.data_rate = data_rate_code(mode->user_bps);
        } catch (const std::invalid_argument&) {
            continue;
        }
        m.interleaving = *il;
        if (is_valid_mode(m))
            all.push_back({ m, f.rate_snr_db });
    }
    // The Annex C initial mode stays in the ladder: a mode less robust than it that needs
    // less SNR is raised to just above it (0.5 dB), a more robust one that needs more is
    // left out below.
    const auto initial =
        std::find_if(all.begin(), all.end(), [](const rate_policy_entry& e) {
            return e.mode == initial_drc_mode;
        });
    if (initial != all.end()) {
        const rate_policy_entry init = *initial;
        for (auto& e : all)
            if (less_robust(e.mode, init.mode) && e.min_snr_db <= init.min_snr_db)
                e.min_snr_db = init.min_snr_db + 0.5;
    }
    // By threshold; at equal thresholds the least robust (fastest) first, the others left
    // out.
    std::stable_sort(all.begin(), all.end(), [](const auto& a, const auto& b) {
        return a.min_snr_db != b.min_snr_db ? a.min_snr_db < b.min_snr_db
                                            : less_robust(a.mode, b.mode);
    });
    // A ladder: each entry less robust than the one before, at a higher threshold (a mode
    // that needs more SNR than a less robust one is of no use).
    std::vector<rate_policy_entry> table;
    for (const auto& e : all) {
        if (!table.empty() && (!(e.min_snr_db > table.back().min_snr_db) ||
                               !less_robust(e.mode, table.back().mode)))
            continue;
        table.push_back(e);
    }
    return table;
}

std::vector<rate_policy_entry> default_rate_table()
{
    return rate_table_from(phy::measured_modem_curves());
}

rate_policy::rate_policy(const rate_policy_config& cfg) : cfg_(cfg)
{
    if (cfg_.table.empty())
        throw std::invalid_argument("rate_policy: empty table");
    for (size_t i = 0; i < cfg_.table.size(); ++i) {
        if (!is_valid_mode(cfg_.table[i].mode))
            throw std::invalid_argument("rate_policy: invalid mode in table");
        if (i > 0 && !(cfg_.table[i].min_snr_db > cfg_.table[i - 1].min_snr_db))
            throw std::invalid_argument("rate_policy: min_snr_db must strictly increase");
    }
    if (!(cfg_.slow_time_constant > 0) || !(cfg_.fast_time_constant > 0) ||
        !(cfg_.retx_time_constant > 0))
        throw std::invalid_argument("rate_policy: time constants must be positive");
    if (cfg_.hysteresis_db < 0 || cfg_.min_dwell < 0 || cfg_.sustain_time < 0)
        throw std::invalid_argument("rate_policy: negative hysteresis or time");
    auto it =
        std::find_if(cfg_.table.begin(),
                     cfg_.table.end(),
                     [&](const rate_policy_entry& e) { return e.mode == cfg_.initial; });
    if (it == cfg_.table.end())
        throw std::invalid_argument("rate_policy: initial mode not in table");
    index_ = size_t(it - cfg_.table.begin());
}

void rate_policy::decay_to(double now)
{
    if (std::isnan(last_time_)) {
        last_time_ = now;
        return;
    }
    double dt = now - last_time_;
    if (dt <= 0)
        return; // reports out of order: no decay, keep the later time
    double ds = std::exp(-dt / cfg_.slow_time_constant);
    double df = std::exp(-dt / cfg_.fast_time_constant);
    double dr = std::exp(-dt / cfg_.retx_time_constant);
    slow_sum_ *= ds;
    slow_w_ *= ds;
    fast_sum_ *= df;
    fast_w_ *= df;
    seg_w_ *= dr;
    retx_w_ *= dr;
    last_time_ = now;
}

double rate_policy::slow_snr_db() const
{
    return slow_w_ > 0 ? slow_sum_ / slow_w_ : nan_v;
}
double rate_policy::fast_snr_db() const
{
    return fast_w_ > 0 ? fast_sum_ / fast_w_ : nan_v;
}
double rate_policy::retransmission_rate() const
{
    return seg_w_ >= cfg_.min_segments && seg_w_ > 0 ? retx_w_ / seg_w_ : nan_v;
}

void rate_policy::on_snr(double snr_db, double now, double span_s, double recent_db)
{
    if (!std::isfinite(snr_db))
        return;
    last_span_ = std::isfinite(span_s) && span_s > 0 ? span_s : 0;
    const bool recent = std::isfinite(recent_db);
    const double up_db = recent && cfg_.step_up_on_recent ? recent_db : snr_db;
    const double down_db = recent && cfg_.step_down_on_recent ? recent_db : snr_db;
    if (recent && cfg_.step_up_on_recent)
        last_span_ = std::min(last_span_, phy::burst_snr::recent_window_s);
    decay_to(now);
    slow_sum_ += up_db;
    slow_w_ += 1;
    fast_sum_ += down_db;
    fast_w_ += 1;
    ++counters_.snr_reports;
    if (awaiting_first_report_ && cfg_.first_report_decides) {
        awaiting_first_report_ = false;
        size_t to = 0;
        while (to + 1 < cfg_.table.size() &&
               up_db >= cfg_.table[to + 1].min_snr_db + cfg_.hysteresis_db)
            ++to;
        // No higher than the SNR supports, no lower than it needs.
        size_t floor = index_;
        while (floor > 0 && down_db < cfg_.table[floor].min_snr_db)
            --floor;
        to = to > index_ ? to : std::min(floor, index_);
        if (to != index_) {
            if (to > index_)
                ++counters_.step_ups;
            else
                ++counters_.step_downs_snr;
            changed(to, now);
        }
        return;
    }
    awaiting_first_report_ = false;
    evaluate(now);
}

double rate_policy::on_snr_report(double report_db,
                                  const modem_mode& mode,
                                  double now,
                                  double span_s,
                                  const burst_frames& frames,
                                  double recent_report_db)
{
    double snr_db = report_db;
    double recent_db = recent_report_db;
    if (cfg_.correct_snr_reports && std::isfinite(report_db))
        if (const auto* map = phy::measured_snr_report_map(to_string(mode))) {
            snr_db = map->true_snr_for(report_db);
            if (std::isfinite(recent_report_db))
                recent_db = map->true_snr_for(recent_report_db);
            ++counters_.snr_reports_corrected;
        }
    const unsigned read = frames.good + frames.damaged;
    const unsigned lost = frames.damaged + frames.unreadable;
    burst_works_ = cfg_.burst_works_frames > 0 && mode == recommended() &&
                   read >= cfg_.burst_works_frames &&
                   double(lost) <= cfg_.burst_works_damaged * double(frames.good + lost);
    on_snr(snr_db, now, span_s, recent_db);
    burst_works_ = false;
    return snr_db;
}

void rate_policy::on_arq_stats(uint64_t segments_sent,
                               uint64_t retransmissions,
                               double now,
                               const std::optional<modem_mode>& mode)
{
    if (mode && less_robust(*mode, recommended())) {
        ++counters_.arq_reports_stale;
        return;
    }
    decay_to(now);
    seg_w_ += double(segments_sent);
    retx_w_ += double(std::min(retransmissions, segments_sent));
    ++counters_.arq_reports;
    evaluate(now);
}

modem_mode rate_policy::more_robust(const modem_mode& m, unsigned entries) const
{
    size_t j = 0; // the most robust entry at least as robust as m, as set_current()
    for (size_t i = 0; i < cfg_.table.size(); ++i)
        if (!less_robust(cfg_.table[i].mode, m))
            j = i;
    return cfg_.table[j >= entries ? j - entries : 0].mode;
}

void rate_policy::changed(size_t index, double now)
{
    index_ = index;
    last_change_ = now;
    above_since_ = nan_v;
    seg_w_ = retx_w_ = 0; // statistics of the old mode say nothing about the new one
}

void rate_policy::set_current(const modem_mode& m, double now)
{
    awaiting_first_report_ = true;
    size_t j = 0;
    for (size_t i = 0; i < cfg_.table.size(); ++i)
        if (!less_robust(cfg_.table[i].mode, m))
            j = i;
    changed(j, now);
}

double rate_policy::retx_step_down_at(size_t index) const
{
    if (!cfg_.retx_step_down_goodput || index == 0)
        return cfg_.retx_step_down;
    const double rate = data_rate_bps(cfg_.table[index].mode.data_rate);
    const double lower = data_rate_bps(cfg_.table[index - 1].mode.data_rate);
    return rate > 0 ? std::max(cfg_.retx_step_down, 1.0 - lower / rate)
                    : cfg_.retx_step_down;
}

void rate_policy::evaluate(double now)
{
    const bool have_snr = fast_w_ > 0;
    // Step down on SNR: at once, as far as needed.
    if (have_snr) {
        const double fast = fast_snr_db();
        size_t i = index_;
        while (i > 0 && fast < cfg_.table[i].min_snr_db - cfg_.step_down_margin_db)
            --i;
        if (i != index_ && burst_works_) {
            ++counters_.step_downs_held;
        } else if (i != index_) {
            changed(i, now);
            ++counters_.step_downs_snr;
            return;
        }
    }
    const double retx = retransmission_rate(); // NaN without enough segments
    if (cfg_.use_retransmission_rate && !std::isnan(retx) && index_ > 0 &&
        retx > retx_step_down_at(index_)) {
        changed(index_ - 1, now);
        ++counters_.step_downs_retx;
        return;
    }
    // Step up: one entry, after sustained margin, dwell, and a low retransmission rate.
    if (!have_snr || index_ + 1 >= cfg_.table.size())
        return;
    const double need = cfg_.table[index_ + 1].min_snr_db + cfg_.hysteresis_db;
    if (slow_snr_db() >= need) {
        if (std::isnan(above_since_)) {
            above_since_ = now - last_span_;
            // Frames damaged before the SNR rose describe a channel the reports say
            // is gone: with retx_time_constant 60 s they held a climb after 12 dB ->
            // 25 dB for 90 s of bursts in the old mode (docs/simulator-design.md,
            // "Automatic data rate").
            seg_w_ = retx_w_ = 0;
        }
    } else {
        above_since_ = nan_v;
        return;
    }
    const bool retx_ok =
        !cfg_.use_retransmission_rate || std::isnan(retx) || retx <= cfg_.retx_step_up;
    if (now - above_since_ >= cfg_.sustain_time && now - last_change_ >= cfg_.min_dwell &&
        retx_ok) {
        size_t to = index_ + 1;
        const size_t top = cfg_.step_up_entries ? std::min(cfg_.table.size() - 1,
                                                           index_ + cfg_.step_up_entries)
                                                : cfg_.table.size() - 1;
        while (to < top &&
               slow_snr_db() >= cfg_.table[to + 1].min_snr_db + cfg_.hysteresis_db)
            ++to;
        changed(to, now);
        ++counters_.step_ups;
    }
}

} // namespace dl
} // namespace hfstack
} // namespace gr
