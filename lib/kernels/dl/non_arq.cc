/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "non_arq.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

namespace gr {
namespace hfstack {
namespace dl {

uint16_t reception_window_units(double seconds)
{
    if (!(seconds > 0)) // negative, zero or NaN
        return 0;
    const double units = std::ceil(seconds * 2.0);
    if (units >= double(max_reception_window))
        return max_reception_window;
    return uint16_t(units);
}

// ---------------------------------------------------------------------------- sender

non_arq_sender::non_arq_sender(const non_arq_config& config)
    : d_config(config),
      d_next_id(uint16_t(config.first_id % cpdu_id_modulus)),
      d_release(cpdu_id_modulus, -std::numeric_limits<double>::infinity())
{
    if (config.segment_size < 1 || config.segment_size > max_segment_size)
        throw std::invalid_argument(
            "non_arq_config.segment_size = " + std::to_string(config.segment_size) +
            " is outside 1..1023");
    if (config.repeats > 15)
        throw std::invalid_argument(
            "non_arq_config.repeats = " + std::to_string(config.repeats) + " exceeds 15");
    if (!(config.window_margin >= 0) || std::isinf(config.window_margin))
        throw std::invalid_argument(
            "non_arq_config.window_margin must be finite and >= 0");
}

non_arq_batch non_arq_sender::make_dpdus(const bytes& cpdu,
                                         uint32_t destination,
                                         bool deliver_in_order,
                                         double window_seconds,
                                         double now,
                                         int repeats)
{
    if (repeats > 15)
        throw std::invalid_argument("non-ARQ repeats = " + std::to_string(repeats) +
                                    " exceeds 15");
    if (cpdu.empty() || cpdu.size() > max_non_arq_cpdu_size)
        throw encode_error("non-ARQ C_PDU size = " + std::to_string(cpdu.size()) +
                           " is outside 1..65535");
    if (std::isnan(window_seconds) || window_seconds < 0)
        window_seconds = 0;

    non_arq_batch batch;
    batch.cpdu_id = d_next_id;
    batch.expires_at = now + window_seconds + d_config.window_margin;
    if (id_in_use(batch.cpdu_id, now))
        ++d_counters.ids_reused_early;
    d_release[batch.cpdu_id] = batch.expires_at;
    d_next_id = uint16_t((d_next_id + 1) % cpdu_id_modulus);

    const uint16_t window =
        reception_window_units(window_seconds + d_config.window_margin);
    const size_t seg = d_config.segment_size;
    const size_t n = (cpdu.size() + seg - 1) / seg;
    const size_t copies = size_t(repeats < 0 ? d_config.repeats : unsigned(repeats)) + 1;
    batch.dpdus.reserve(n * copies);
    for (size_t copy = 0; copy < copies; ++copy) {
        for (size_t i = 0; i < n; ++i) {
            const size_t offset = i * seg;
            const size_t len = std::min(seg, cpdu.size() - offset);
            dpdu d;
            d.type = d_config.expedited ? dpdu_type::expedited_non_arq_data
                                        : dpdu_type::non_arq_data;
            d.cpdu_id = batch.cpdu_id;
            d.deliver_in_order = deliver_in_order;
            d.destination = destination;
            d.cpdu_size = uint16_t(cpdu.size());
            d.segment_offset = uint16_t(offset);
            d.reception_window = window;
            d.segment.assign(cpdu.begin() + offset, cpdu.begin() + offset + len);
            batch.dpdus.push_back(std::move(d));
        }
    }
    ++d_counters.cpdus;
    d_counters.cpdu_bytes += cpdu.size();
    d_counters.dpdus += batch.dpdus.size();
    return batch;
}

void non_arq_sender::refresh_window(dpdu& d, double expires_at, double tx_time)
{
    d.reception_window = reception_window_units(expires_at - tx_time);
}

bool non_arq_sender::id_in_use(uint16_t id, double now) const
{
    return now < id_release_time(id);
}

double non_arq_sender::id_release_time(uint16_t id) const
{
    return d_release[id % cpdu_id_modulus];
}

// -------------------------------------------------------------------------- receiver

namespace {

// Runs of bytes whose state equals `wanted`, as sorted, merged block ranges.
std::vector<sis_block_range> ranges_of(const bytes& state, uint8_t wanted)
{
    std::vector<sis_block_range> out;
    size_t i = 0;
    while (i < state.size()) {
        if (state[i] != wanted) {
            ++i;
            continue;
        }
        size_t j = i;
        while (j < state.size() && state[j] == wanted)
            ++j;
        sis_block_range r;
        r.offset = uint16_t(i);
        r.size = uint16_t(j - i);
        out.push_back(r);
        i = j;
    }
    return out;
}

// a precedes b in the 12-bit ID space (b is 1..2047 ahead of a).
bool id_before(uint16_t a, uint16_t b)
{
    const unsigned d = (unsigned(b) + cpdu_id_modulus - a) % cpdu_id_modulus;
    return d != 0 && d < cpdu_id_modulus / 2;
}

} // namespace

non_arq_receiver::non_arq_receiver(const non_arq_receiver_config& config)
    : d_config(config)
{
    if (d_config.max_entries < 1)
        d_config.max_entries = 1;
    if (!(d_config.min_window >= 0))
        d_config.min_window = 0;
    if (!(d_config.min_duplicate_hold >= 0))
        d_config.min_duplicate_hold = 0;
}

void non_arq_receiver::on_dpdu(const dpdu& d, bool segment_ok, double now)
{
    if (d.type != dpdu_type::non_arq_data &&
        d.type != dpdu_type::expedited_non_arq_data) {
        ++d_counters.wrong_type;
        return;
    }
    ++d_counters.segments;
    if (segment_ok)
        ++d_counters.good_segments;
    else
        ++d_counters.damaged_segments;

    const size_t size = d.cpdu_size;
    const size_t offset = d.segment_offset;
    if (size == 0 || d.segment.empty() || offset + d.segment.size() > size) {
        ++d_counters.inconsistent;
        return;
    }
    if (size > d_config.max_bytes) {
        ++d_counters.oversize;
        return;
    }

    const key k(d.source, uint8_t(d.type), uint16_t(d.cpdu_id % cpdu_id_modulus));

    // A copy of a C_PDU already delivered.
    auto recent = d_recent.find(k);
    if (recent != d_recent.end()) {
        if (now < recent->second) {
            ++d_counters.duplicate_cpdus;
            return;
        }
        // Hold over: the ID may be a new C_PDU.
        auto range = d_recent_order.equal_range(recent->second);
        for (auto it = range.first; it != range.second; ++it)
            if (it->second == k) {
                d_recent_order.erase(it);
                break;
            }
        d_recent.erase(recent);
    }

    const double window =
        std::max(reception_window_seconds(d.reception_window), d_config.min_window);
    auto it = d_entries.find(k);
    if (it == d_entries.end()) {
        entry e;
        e.destination = d.destination;
        e.deliver_in_order = d.deliver_in_order;
        e.cpdu_size = uint16_t(size);
        e.data.assign(size, 0);
        e.state.assign(size, byte_missing);
        e.first_arrival = now;
        e.deadline = now + window;
        it = d_entries.emplace(k, std::move(e)).first;
        d_bytes += size;
        if (!enforce_caps(k, now))
            return;
    } else if (it->second.cpdu_size != size) {
        ++d_counters.inconsistent;
        return;
    } else {
        it->second.deadline = now + window; // latest D_PDU's window rules
    }

    entry& e = it->second;
    if (e.complete) { // held for in-order delivery: nothing left to add
        if (segment_ok)
            ++d_counters.duplicate_segments;
        return;
    }
    if (segment_ok) {
        size_t added = 0;
        for (size_t i = 0; i < d.segment.size(); ++i) {
            const size_t p = offset + i;
            if (e.state[p] != byte_good) {
                e.state[p] = byte_good;
                e.data[p] = d.segment[i];
                ++added;
            }
        }
        e.good += added;
        if (added == 0)
            ++d_counters.duplicate_segments;
    } else {
        // Damaged bytes fill only holes; a good byte is never overwritten.
        for (size_t i = 0; i < d.segment.size(); ++i) {
            const size_t p = offset + i;
            if (e.state[p] == byte_missing) {
                e.state[p] = byte_errored;
                e.data[p] = d.segment[i];
            }
        }
    }

    if (e.good == e.cpdu_size) {
        e.complete = true;
        if (e.deliver_in_order && waits_for_earlier(k)) {
            ++d_counters.held_in_order;
            return;
        }
        const uint32_t source = std::get<0>(k);
        const uint8_t type = std::get<1>(k);
        finish(it, now, true);
        release_held(source, type, now);
    }
}

bool non_arq_receiver::waits_for_earlier(const key& k) const
{
    const uint32_t source = std::get<0>(k);
    const uint8_t type = std::get<1>(k);
    const uint16_t id = std::get<2>(k);
    auto it = d_entries.lower_bound(key(source, type, 0));
    for (; it != d_entries.end(); ++it) {
        if (std::get<0>(it->first) != source || std::get<1>(it->first) != type)
            break;
        const entry& other = it->second;
        if (!other.complete && other.deliver_in_order &&
            id_before(std::get<2>(it->first), id))
            return true;
    }
    return false;
}

void non_arq_receiver::release_held(uint32_t source, uint8_t type, double now)
{
    // Releasable: complete, held, and no earlier incomplete in-order entry remains.
    std::vector<std::pair<double, uint16_t>> ready; // (first arrival, id)
    auto it = d_entries.lower_bound(key(source, type, 0));
    for (; it != d_entries.end(); ++it) {
        if (std::get<0>(it->first) != source || std::get<1>(it->first) != type)
            break;
        if (it->second.complete && !waits_for_earlier(it->first))
            ready.emplace_back(it->second.first_arrival, std::get<2>(it->first));
    }
    if (ready.empty())
        return;
    // ID order, taking the earliest-arrived one as the reference so that a wrap from
    // 4095 to 0 sorts correctly (IDs in flight span less than half the space).
    const uint16_t ref = std::min_element(ready.begin(), ready.end())->second;
    auto rank = [ref](uint16_t id) {
        return (unsigned(id) + cpdu_id_modulus + cpdu_id_modulus / 2 - ref) %
               cpdu_id_modulus;
    };
    std::sort(ready.begin(), ready.end(), [&](const auto& a, const auto& b) {
        return rank(a.second) < rank(b.second);
    });
    for (const auto& r : ready) {
        auto e = d_entries.find(key(source, type, r.second));
        if (e != d_entries.end())
            finish(e, now, true);
    }
}

void non_arq_receiver::finish(std::map<key, entry>::iterator it,
                              double now,
                              bool complete)
{
    const key k = it->first;
    entry& e = it->second;
    non_arq_delivery out;
    out.source = std::get<0>(k);
    out.destination = e.destination;
    out.cpdu_id = std::get<2>(k);
    out.expedited = std::get<1>(k) == uint8_t(dpdu_type::expedited_non_arq_data);
    out.deliver_in_order = e.deliver_in_order;
    out.complete = complete;
    if (!complete) {
        out.errored = ranges_of(e.state, byte_errored);
        out.non_received = ranges_of(e.state, byte_missing);
        for (const auto& r : out.non_received) // already zero; make it a guarantee
            std::fill(e.data.begin() + r.offset, e.data.begin() + r.offset + r.size, 0);
        ++d_counters.delivered_with_errors;
    } else {
        ++d_counters.cpdus_complete;
    }
    out.data = std::move(e.data);
    const double hold = std::max(e.deadline, now + d_config.min_duplicate_hold);
    d_bytes -= e.cpdu_size;
    d_entries.erase(it);
    remember(k, hold);
    d_delivered.push_back(std::move(out));
}

void non_arq_receiver::remember(const key& k, double until)
{
    auto old = d_recent.find(k);
    if (old != d_recent.end()) {
        auto range = d_recent_order.equal_range(old->second);
        for (auto it = range.first; it != range.second; ++it)
            if (it->second == k) {
                d_recent_order.erase(it);
                break;
            }
        d_recent.erase(old);
    }
    if (d_config.max_recent == 0)
        return;
    while (d_recent.size() >= d_config.max_recent && !d_recent_order.empty()) {
        d_recent.erase(d_recent_order.begin()->second);
        d_recent_order.erase(d_recent_order.begin());
    }
    d_recent.emplace(k, until);
    d_recent_order.emplace(until, k);
}

bool non_arq_receiver::enforce_caps(const key& keep, double now)
{
    while (d_entries.size() > d_config.max_entries || d_bytes > d_config.max_bytes) {
        // Oldest incomplete entry other than the one just created.
        auto victim = d_entries.end();
        for (auto it = d_entries.begin(); it != d_entries.end(); ++it) {
            if (it->second.complete || it->first == keep)
                continue;
            if (victim == d_entries.end() ||
                it->second.first_arrival < victim->second.first_arrival)
                victim = it;
        }
        if (victim == d_entries.end()) {
            // Only complete entries held behind `keep` remain: drop `keep` itself,
            // which releases them.
            victim = d_entries.find(keep);
            if (victim == d_entries.end())
                return false;
        }
        const uint32_t source = std::get<0>(victim->first);
        const uint8_t type = std::get<1>(victim->first);
        const bool kept = victim->first != keep;
        d_bytes -= victim->second.cpdu_size;
        d_entries.erase(victim);
        ++d_counters.evicted;
        release_held(source, type, now);
        if (!kept)
            return false;
    }
    return true;
}

void non_arq_receiver::poll(double now)
{
    // Age out duplicate-suppression memory.
    while (!d_recent_order.empty() && d_recent_order.begin()->first <= now) {
        d_recent.erase(d_recent_order.begin()->second);
        d_recent_order.erase(d_recent_order.begin());
    }
    // Expire in deadline order, so that releases happen in a deterministic order.
    for (;;) {
        auto victim = d_entries.end();
        for (auto it = d_entries.begin(); it != d_entries.end(); ++it) {
            if (it->second.complete || it->second.deadline > now)
                continue;
            if (victim == d_entries.end() ||
                it->second.deadline < victim->second.deadline)
                victim = it;
        }
        if (victim == d_entries.end())
            break;
        const uint32_t source = std::get<0>(victim->first);
        const uint8_t type = std::get<1>(victim->first);
        ++d_counters.expired;
        if (d_config.deliver_with_errors) {
            finish(victim, now, false);
        } else {
            ++d_counters.discarded;
            d_bytes -= victim->second.cpdu_size;
            d_entries.erase(victim);
        }
        release_held(source, type, now);
    }
}

double non_arq_receiver::next_deadline() const
{
    double t = std::numeric_limits<double>::infinity();
    for (const auto& kv : d_entries)
        if (!kv.second.complete)
            t = std::min(t, kv.second.deadline);
    return t;
}

std::vector<non_arq_delivery> non_arq_receiver::take_delivered()
{
    std::vector<non_arq_delivery> out;
    out.swap(d_delivered);
    return out;
}

} // namespace dl
} // namespace hfstack
} // namespace gr
