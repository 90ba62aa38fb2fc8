/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "emulated_modem.h"

#include "dl/transmission.h"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <limits>
#include <optional>
#include <stdexcept>

namespace gr {
namespace hfstack {
namespace sim {

emulator_settings parse_emulator_settings(const std::string& assignments)
{
    emulator_settings e;
    double* const times[] = { &e.radio.key_up_s,     &e.radio.unkey_s,
                              &e.radio.agc_settle_s, &e.radio.carrier_detect_s,
                              &e.radio.rx_latency_s, &e.propagation_s };
    const char* const time_names[] = {
        "key_up_s",         "unkey_s",      "agc_settle_s",
        "carrier_detect_s", "rx_latency_s", "propagation_s"
    };
    dl::for_each_assignment(
        assignments,
        "modem_emulator option",
        [&](const std::string& n, const std::string& v) {
            for (size_t k = 0; k < std::size(times); ++k)
                if (n == time_names[k]) {
                    *times[k] = dl::parse_option_number(n, v);
                    return;
                }
            if (n == "half_duplex")
                e.half_duplex = dl::parse_option_bool(n, v);
            else if (n == "deliver_per_block")
                e.radio.deliver_per_block = dl::parse_option_bool(n, v);
            else if (n == "collisions")
                e.collisions = dl::parse_option_bool(n, v);
            else if (n == "emulator_id") {
                const double id = dl::parse_option_number(n, v);
                if (id != std::floor(id) || id > 9.0e15)
                    throw std::invalid_argument(
                        "emulator_id must be a whole number, not " + v);
                e.emulator_id = uint64_t(id);
            } else
                throw std::invalid_argument(
                    "unknown modem_emulator option '" + n +
                    "' (key_up_s, unkey_s, agc_settle_s, carrier_detect_s, rx_latency_s, "
                    "propagation_s, half_duplex, collisions, deliver_per_block, "
                    "emulator_id)");
        });
    return e;
}

emulated_modem::emulated_modem(uint64_t id,
                               radio_config radio,
                               channel_config channel,
                               bool half_duplex,
                               bool collisions)
    : d_id(id),
      d_radio(radio),
      d_channel(channel),
      d_half_duplex(half_duplex),
      d_collisions(collisions)
{
    validate(d_radio);
    sim::validate(d_channel);
}

channel_model& emulated_modem::path_from(uint64_t source)
{
    auto it = d_paths.find(source);
    if (it == d_paths.end()) {
        channel_config c = d_channel;
        c.seed = path_seed(d_channel.seed, 0, source, d_id);
        it = d_paths.emplace(source, std::make_unique<channel_model>(c)).first;
    }
    return *it->second;
}

void emulated_modem::forget_busy_before(double t)
{
    // An interval that ended by t cannot overlap a reception starting at t or later.
    d_busy.erase(std::remove_if(d_busy.begin(),
                                d_busy.end(),
                                [t](const busy_interval& v) { return v.end <= t; }),
                 d_busy.end());
}

void emulated_modem::schedule(double t, due what, uint64_t reception)
{
    const pending p{ t, d_seq++, what, reception };
    d_pending.insert(std::upper_bound(d_pending.begin(), d_pending.end(), p), p);
}

void emulated_modem::destroy(reception& r)
{
    if (r.destroyed)
        return;
    r.destroyed = true;
    ++d_stats.collisions;
}

air_transmission emulated_modem::transmit(dl::bytes data,
                                          dl::modem_mode mode,
                                          double now,
                                          unsigned s5069_bandwidth_khz)
{
    air_transmission b;
    b.source = d_id;
    b.mode = mode;
    b.s5069_bandwidth_khz = s5069_bandwidth_khz;
    b.start = std::max(now + d_radio.key_up_s, d_on_air_until);
    b.air_time_s =
        dl::air_time(dl::waveform_timing_of(s5069_bandwidth_khz, mode), data.size());
    b.data = std::move(data);
    const double end = b.start + b.air_time_s;
    d_on_air_until = end;
    ++d_stats.transmissions;
    d_stats.air_time_s += b.air_time_s;
    schedule(b.start, due::tx_started);
    schedule(end, due::tx_finished);

    if (d_half_duplex) {
        const double deaf_from = now, deaf_until = end + d_radio.unkey_s;
        // Kept a while: another modem's burst may be heard() late, after it started.
        forget_busy_before(now - late_hearing_s);
        d_busy.push_back(busy_interval{ deaf_from, deaf_until, 0 });
        for (auto& [id, r] : d_receptions)
            if (r.start < deaf_until && deaf_from < r.end)
                destroy(r);
    }
    return b;
}

bool emulated_modem::hear(const air_transmission& b, double now)
{
    if (b.source == d_id)
        return true; // its own burst, back through a shared connection
    // An announcement that cannot be a modem's burst (another clock, a corrupted or
    // forged message) is refused before it can disturb the schedule: its start must be
    // finite and near now, its air time the timing model's for its bytes, and a path's
    // bursts must come in order (the error processes run forward in time).
    std::optional<phy::waveform_timing> known;
    try {
        known = dl::waveform_timing_of(b.s5069_bandwidth_khz, b.mode);
    } catch (const std::invalid_argument&) {
        ++d_stats.refused; // a code that is no mode at that bandwidth
        return false;
    }
    const phy::waveform_timing timing = *known;
    const double air = dl::air_time(timing, b.data.size());
    auto last = d_last_start.find(b.source);
    if (!std::isfinite(b.start) || !(std::abs(b.air_time_s - air) <= 1e-6 * (1 + air)) ||
        b.start < now - late_hearing_s || b.start > now + max_announce_ahead_s ||
        (last != d_last_start.end() && b.start < last->second)) {
        ++d_stats.refused;
        return false;
    }
    d_last_start[b.source] = b.start;
    ++d_stats.bursts_heard;
    channel_model& path = path_from(b.source);
    const double prop = path.config().propagation_s;
    const double s = b.start + prop, e = s + air;
    if (path.drop_in_outage(s, e)) {
        ++d_stats.lost_outage;
        return true;
    }
    // Intervals are kept a while after they end: a burst announced late (after it
    // started) still meets what it overlapped.
    forget_busy_before(std::min(now, s) - late_hearing_s);

    const uint64_t id = d_next_reception++;
    reception r;
    r.burst = b;
    r.path = &path;
    r.start = s;
    r.end = e;
    // The errors are drawn now, in the order the path's bursts start (its error
    // processes only run forward); deliveries come in the order the bursts end.
    const reception_errors got = path.receive(r.burst.data.data(),
                                              r.burst.data.size(),
                                              s,
                                              timing.preamble_s,
                                              timing.bit_rate,
                                              timing.whole_units() ? timing.unit_s : 0.0);
    r.bits_flipped = got.bits_flipped;
    r.reports = path.reported_snrs(
        dl::waveform_name(r.burst.s5069_bandwidth_khz, r.burst.mode), s, e - s);
    bool hit = false;
    for (const busy_interval& v : d_busy) {
        if (!(v.start < e && s < v.end))
            continue;
        if (v.reception == 0) { // our own transmission (half duplex)
            hit = true;
        } else if (d_collisions) {
            hit = true;
            auto it = d_receptions.find(v.reception);
            if (it != d_receptions.end()) // not delivered yet
                destroy(it->second);
        }
    }
    if (hit) {
        destroy(r);
    } else if (timing.preamble_s < d_radio.agc_settle_s || got.preamble_missed) {
        r.destroyed = true;
        ++d_stats.lost_acquisition;
    }
    d_receptions.emplace(id, std::move(r));
    d_busy.push_back(busy_interval{ s, e, id });

    const double detect = d_radio.agc_settle_s + d_radio.carrier_detect_s;
    if (air > detect) {
        schedule(s + detect, due::carrier_on, id);
        schedule(e, due::carrier_off, id);
    }
    if (d_radio.deliver_per_block) {
        reception& added = d_receptions.at(id);
        auto pieces = phy::decoding_schedule(timing, b.data.size());
        pieces.pop_back(); // the last one is the delivery
        for (const phy::decoded_piece& p : pieces) {
            added.piece_ends.push_back(p.bytes_end);
            schedule(s + p.time_s + d_radio.rx_latency_s, due::piece, id);
        }
    }
    schedule(e + d_radio.rx_latency_s, due::delivery, id);
    return true;
}

double emulated_modem::next_deadline() const
{
    return d_pending.empty() ? std::numeric_limits<double>::infinity()
                             : d_pending.front().time;
}

std::vector<modem_event> emulated_modem::poll(double now)
{
    std::vector<modem_event> out;
    while (!d_pending.empty() && d_pending.front().time <= now) {
        // Taken off the schedule first: an event whose handling throws is not met again.
        const pending p = d_pending.front();
        d_pending.erase(d_pending.begin());
        modem_event ev;
        ev.time = p.time;
        switch (p.what) {
        case due::tx_started:
            ev.status = dl::phy_event::tx_started;
            out.push_back(ev);
            break;
        case due::tx_finished:
            ev.status = dl::phy_event::tx_finished;
            out.push_back(ev);
            break;
        case due::carrier_on: {
            auto it = d_receptions.find(p.reception);
            if (it == d_receptions.end())
                break;
            it->second.carrier_on = true;
            if (d_carrier++ == 0) {
                ev.status = dl::phy_event::carrier_on;
                out.push_back(ev);
            }
            break;
        }
        case due::carrier_off: {
            auto it = d_receptions.find(p.reception);
            if (it == d_receptions.end() || !it->second.carrier_on)
                break;
            it->second.carrier_on = false;
            if (--d_carrier == 0) {
                ev.status = dl::phy_event::carrier_off;
                out.push_back(ev);
            }
            break;
        }
        case due::piece: {
            auto it = d_receptions.find(p.reception);
            if (it == d_receptions.end() || it->second.destroyed)
                break;
            reception& r = it->second;
            const size_t from = r.bytes_delivered();
            const size_t end = r.piece_ends.at(r.pieces_delivered++);
            ev.type = modem_event::kind::burst;
            ev.data.assign(r.burst.data.begin() + long(from),
                           r.burst.data.begin() + long(end));
            ev.info.mode = r.burst.mode;
            ev.s5069_bandwidth_khz = r.burst.s5069_bandwidth_khz;
            ev.info.snr_db = r.reports.whole_db;
            ev.info.snr_db_recent = r.reports.recent_db;
            ev.info.burst_continues = true;
            out.push_back(std::move(ev));
            break;
        }
        case due::delivery: {
            auto it = d_receptions.find(p.reception);
            if (it == d_receptions.end())
                break;
            reception r = std::move(it->second);
            d_receptions.erase(it);
            ev.type = modem_event::kind::burst;
            ev.info.mode = r.burst.mode;
            ev.s5069_bandwidth_khz = r.burst.s5069_bandwidth_khz;
            ev.info.snr_db = r.reports.whole_db;
            ev.info.snr_db_recent = r.reports.recent_db;
            if (r.destroyed) {
                // Pieces already handed on: the receiver is told the burst ended, cut.
                if (r.pieces_delivered > 0) {
                    ev.info.bytes_bad = true;
                    out.push_back(std::move(ev));
                }
                break;
            }
            ev.data.assign(r.burst.data.begin() + long(r.bytes_delivered()),
                           r.burst.data.end());
            d_stats.bits_flipped += r.bits_flipped;
            ++d_stats.bursts_delivered;
            out.push_back(std::move(ev));
            break;
        }
        }
    }
    return out;
}

} // namespace sim
} // namespace hfstack
} // namespace gr
