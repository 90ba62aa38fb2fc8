/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

/* Carrier sense / listen before transmit (STANAG 5066 Annex K and the slotted option).
 * See carrier_sense.h for the rules and their sources. */
#include "carrier_sense.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

namespace gr {
namespace hfstack {
namespace dl {

namespace {
constexpr double inf = std::numeric_limits<double>::infinity();
}

carrier_sense::carrier_sense(const carrier_sense_config& cfg)
    : d_cfg(cfg),
      d_rng(cfg.seed),
      d_carrier_off_at(-inf),
      d_own_end(-inf),
      d_hold_start(-inf),
      d_busy_since(-inf)
{
    auto finite_nonneg = [](double v) { return std::isfinite(v) && v >= 0.0; };
    if (!finite_nonneg(cfg.idle_holdoff_s))
        throw std::invalid_argument("carrier_sense_config: idle_holdoff_s must be >= 0");
    if (!(cfg.quiet_channel_s >= 0) || !(cfg.max_channel_hold_s >= 0))
        throw std::invalid_argument(
            "carrier_sense_config: quiet_channel_s and max_channel_hold_s must be >= 0");
    if (!finite_nonneg(cfg.backoff_min_s) || !finite_nonneg(cfg.backoff_max_s) ||
        !finite_nonneg(cfg.backoff_slot_s))
        throw std::invalid_argument("carrier_sense_config: back-off times must be >= 0");
    if (cfg.backoff_min_s > cfg.backoff_max_s)
        throw std::invalid_argument(
            "carrier_sense_config: backoff_min_s > backoff_max_s");
    if (!(cfg.max_exchange_s > 0.0) || !(cfg.contended_burst_s > 0.0) ||
        !(cfg.network_burst_s > 0.0))
        throw std::invalid_argument("carrier_sense_config: max_exchange_s, "
                                    "contended_burst_s and network_burst_s must be > 0");
    if (!finite_nonneg(cfg.turn_change_backoff_min_s))
        throw std::invalid_argument(
            "carrier_sense_config: turn_change_backoff_min_s must be >= 0");
    if (!(cfg.max_exchange_stretch_s >= 0.0))
        throw std::invalid_argument(
            "carrier_sense_config: max_exchange_stretch_s must be >= 0");
    if (!(cfg.turn_change_backoff_max_s >= 0.0) ||
        !(cfg.waiting_caller_backoff_max_s >= 0.0))
        throw std::invalid_argument("carrier_sense_config: turn_change_backoff_max_s and "
                                    "waiting_caller_backoff_max_s must be >= 0");
    if (!(cfg.persistence > 0.0 && cfg.persistence <= 1.0))
        throw std::invalid_argument(
            "carrier_sense_config: persistence must be in (0, 1]");
    if (!finite_nonneg(cfg.base_delay_s) || !finite_nonneg(cfg.slot_length_s))
        throw std::invalid_argument("carrier_sense_config: slot times must be >= 0");
    if (cfg.mode == channel_access_mode::slotted && !(cfg.slot_length_s > 0.0))
        throw std::invalid_argument("carrier_sense_config: slot_length_s must be > 0");
}

double carrier_sense::uniform01()
{
    // 32 random bits -> [0, 1): the same sequence on every standard library.
    return static_cast<double>(d_rng()) * (1.0 / 4294967296.0);
}

double carrier_sense::draw_one()
{
    const double lo = std::max(d_cfg.backoff_min_s, d_backoff_floor),
                 hi = std::max(lo, std::min(d_cfg.backoff_max_s, d_backoff_limit));
    ++d_counters.backoffs_drawn;
    if (d_cfg.backoff_slot_s > 0.0) {
        const auto n =
            static_cast<uint64_t>(std::floor((hi - lo) / d_cfg.backoff_slot_s + 1e-9)) +
            1;
        auto k = static_cast<uint64_t>(uniform01() * static_cast<double>(n));
        if (k >= n)
            k = n - 1;
        return lo + static_cast<double>(k) * d_cfg.backoff_slot_s;
    }
    return lo + (hi - lo) * uniform01();
}

double carrier_sense::draw_backoff()
{
    double total = draw_one();
    // p-persistence: at each expiry on an idle channel, transmit with probability p,
    // otherwise wait another back-off. Trials decided now, used while the channel stays
    // idle.
    if (d_cfg.persistence < 1.0) {
        // Bound the retrials so a tiny p cannot loop for long; the expected count is 1/p.
        for (int i = 0; i < 100000 && uniform01() >= d_cfg.persistence; ++i) {
            ++d_counters.persistence_deferrals;
            total += draw_one();
        }
    }
    return total;
}

void carrier_sense::note_busy(double at)
{
    const double shortest_wait =
        d_cfg.idle_holdoff_s + (d_cfg.mode == channel_access_mode::slotted
                                    ? d_cfg.base_delay_s
                                    : d_cfg.backoff_min_s);
    if (d_busy_since == -inf || at - idle_since() >= shortest_wait)
        d_busy_since = at;
}

double carrier_sense::idle_since() const { return std::max(d_carrier_off_at, d_own_end); }

void carrier_sense::ensure_draw()
{
    if (d_cfg.mode != channel_access_mode::random_backoff || !d_want || d_carrier ||
        d_have_draw || d_response_pending)
        return;
    if (d_priority) {
        d_draw = d_cfg.backoff_min_s;
        d_resume = -1.0;
    } else if (d_resume >= 0.0) {
        d_draw = d_resume;
        d_resume = -1.0;
    } else {
        d_draw = draw_backoff();
    }
    d_draw_anchor = idle_since();
    d_have_draw = true;
}

void carrier_sense::on_carrier(bool detected, double now)
{
    if (detected == d_carrier)
        return;
    if (!detected) {
        d_carrier = false;
        d_carrier_off_at = now;
        ensure_draw();
        return;
    }
    const double start = start_time(); // the start pending until now, before the carrier
    note_busy(now);
    d_carrier = true;
    if (!d_want || d_cfg.mode == channel_access_mode::none)
        return;
    ++d_counters.deferrals_busy;
    const double wait_from = idle_since() + d_cfg.idle_holdoff_s;
    if (!d_response_pending && now < start)
        ++d_counters.collisions_suspected;
    if (d_cfg.mode == channel_access_mode::random_backoff && d_have_draw) {
        if (d_cfg.resume_backoff && now < start)
            d_resume = std::min(d_draw, start - std::max(now, wait_from));
        d_have_draw = false;
    }
}

void carrier_sense::on_own_transmission(double start, double end)
{
    ++d_counters.transmissions;
    if (d_carrier)
        ++d_counters.transmissions_over_carrier;
    if (d_want && d_response_pending && d_cfg.mode != channel_access_mode::none)
        ++d_counters.immediate_responses;
    if (keeps_channel())
        ++d_counters.channel_kept;
    else
        d_hold_start = start;
    if (!d_carrier)
        note_busy(start);
    d_own_end = std::max(d_own_end, std::max(start, end));
    d_want = false;
    d_have_draw = false;
    d_resume = -1.0;
}

void carrier_sense::want_to_transmit(double now)
{
    if (d_want)
        return;
    d_want = true;
    d_want_since = now;
    if (d_carrier && d_cfg.mode != channel_access_mode::none)
        ++d_counters.deferrals_busy;
    ensure_draw();
}

void carrier_sense::cancel()
{
    d_want = false;
    d_have_draw = false;
    d_resume = -1.0;
}

void carrier_sense::set_backoff_range(double& bound, double value)
{
    if (value == bound)
        return;
    bound = value;
    // A back-off drawn under the other range is drawn again (as set_priority).
    if (d_have_draw && d_cfg.mode == channel_access_mode::random_backoff && !d_priority) {
        d_have_draw = false;
        ensure_draw();
    }
}

void carrier_sense::set_backoff_limit(double max_s)
{
    set_backoff_range(d_backoff_limit, max_s);
}

void carrier_sense::set_backoff_floor(double min_s)
{
    set_backoff_range(d_backoff_floor, min_s);
}

void carrier_sense::set_priority(bool priority)
{
    if (priority == d_priority)
        return;
    d_priority = priority;
    // A back-off drawn before the data came would hold them back; one kept after they
    // went is no longer owed to them.
    if (d_have_draw) {
        d_have_draw = false;
        ensure_draw();
    }
}

void carrier_sense::set_response_pending(bool pending)
{
    d_response_pending = pending;
    ensure_draw(); // back to contention: the current idle period needs a back-off
}

double carrier_sense::start_time() const
{
    if (!d_want)
        return inf;
    if (d_cfg.mode == channel_access_mode::none)
        return d_want_since;
    if (d_carrier)
        return inf;
    const double base = idle_since() + d_cfg.idle_holdoff_s;
    if (d_response_pending || keeps_channel())
        return base;
    if (d_cfg.mode == channel_access_mode::slotted)
        return base + d_cfg.base_delay_s +
               static_cast<double>(d_cfg.slot_number) * d_cfg.slot_length_s;
    // random_backoff: the draw exists whenever wanted and idle (ensure_draw).
    return d_draw_anchor + d_cfg.idle_holdoff_s + d_draw;
}

bool carrier_sense::keeps_channel() const
{
    return d_cfg.quiet_channel_s > 0 && d_cfg.mode != channel_access_mode::none &&
           d_own_end >= d_carrier_off_at &&
           d_own_end - d_carrier_off_at >= d_cfg.quiet_channel_s &&
           d_own_end - d_hold_start < d_cfg.max_channel_hold_s;
}

double carrier_sense::transmit_time(double now) const
{
    const double t = start_time();
    return t <= now ? now : t;
}

double carrier_sense::next_deadline() const { return start_time(); }

} // namespace dl
} // namespace hfstack
} // namespace gr
