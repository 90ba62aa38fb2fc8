/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "updu_queue.h"

#include <algorithm>
#include <cmath>

namespace gr {
namespace hfstack {
namespace dl {

double ttl_deadline(uint32_t ttl_field, double now)
{
    return ttl_field == 0 ? no_deadline : now + 2.0 * double(ttl_field & 0xFFFFF);
}

updu_queue::updu_queue(updu_queue_limits limits) : d_limits(limits) {}

std::optional<uint64_t> updu_queue::push(updu_request r, double now)
{
    if (d_total_bytes + r.updu.size() > d_limits.max_total_bytes || r.deadline <= now ||
        std::isnan(r.deadline))
        return std::nullopt;
    r.id = d_next_id++;
    const auto key = key_of(r);
    const uint64_t id = r.id;
    const uint32_t client = r.client;
    const uint32_t destination = r.destination;
    const long size = long(r.updu.size());
    if (r.deadline != no_deadline)
        d_deadlines.emplace(r.deadline, id);
    d_key_by_id.emplace(id, key);
    d_items.emplace(key, std::move(r));
    d_total_bytes += size_t(size);
    account(client, destination, size);
    return id;
}

const updu_request*
updu_queue::peek(const std::function<bool(const updu_request&)>& accept) const
{
    for (const auto& [key, r] : d_items)
        if (!accept || accept(r))
            return &r;
    return nullptr;
}

updu_request updu_queue::take(std::map<order_key, updu_request>::iterator it)
{
    updu_request r = std::move(it->second);
    d_items.erase(it);
    d_key_by_id.erase(r.id);
    if (r.deadline != no_deadline) {
        auto [lo, hi] = d_deadlines.equal_range(r.deadline);
        for (auto d = lo; d != hi; ++d)
            if (d->second == r.id) {
                d_deadlines.erase(d);
                break;
            }
    }
    d_total_bytes -= r.updu.size();
    account(r.client, r.destination, -long(r.updu.size()));
    return r;
}

std::optional<updu_request> updu_queue::pop(uint64_t id)
{
    const auto k = d_key_by_id.find(id);
    if (k == d_key_by_id.end())
        return std::nullopt;
    return take(d_items.find(k->second));
}

std::vector<updu_request> updu_queue::expire(double now)
{
    std::vector<updu_request> out;
    while (!d_deadlines.empty() && d_deadlines.begin()->first <= now)
        out.push_back(*pop(d_deadlines.begin()->second));
    return out;
}

std::vector<updu_request> updu_queue::remove_client(uint32_t client)
{
    std::vector<updu_request> out;
    for (auto it = d_items.begin(); it != d_items.end();) {
        auto next = std::next(it);
        if (it->second.client == client)
            out.push_back(take(it));
        it = next;
    }
    forget_flow(client);
    return out;
}

void updu_queue::orphan_client(uint32_t client)
{
    for (auto& [key, r] : d_items)
        if (r.client == client)
            r.client = departed_client;
    forget_flow(client);
}

// The client is gone: forget its flow state, including an ON its removal just raised.
void updu_queue::forget_flow(uint32_t client)
{
    d_client_bytes.erase(client);
    d_client_destinations.erase(client);
    d_client_flow_off.erase(client);
    d_flow_events.erase(
        std::remove_if(d_flow_events.begin(),
                       d_flow_events.end(),
                       [client](const flow_event& e) { return e.client == client; }),
        d_flow_events.end());
}

double updu_queue::next_deadline() const
{
    return d_deadlines.empty() ? no_deadline : d_deadlines.begin()->first;
}

std::vector<flow_event> updu_queue::take_flow_events()
{
    std::vector<flow_event> out;
    out.swap(d_flow_events);
    return out;
}

size_t updu_queue::client_bytes(uint32_t client) const
{
    const auto it = d_client_bytes.find(client);
    return it == d_client_bytes.end() ? 0 : it->second;
}

size_t updu_queue::depth(uint8_t priority, bool expedited) const
{
    size_t n = 0;
    for (const auto& [key, r] : d_items)
        n += (r.priority == priority && r.expedited == expedited) ? 1 : 0;
    return n;
}

bool updu_queue::flow_off(uint32_t client) const
{
    const auto it = d_client_flow_off.find(client);
    return it != d_client_flow_off.end() && it->second;
}

void updu_queue::account(uint32_t client, uint32_t destination, long delta)
{
    if (client == departed_client) // nobody to pace
        return;
    size_t& bytes_queued = d_client_bytes[client];
    bytes_queued = size_t(long(bytes_queued) + delta);
    auto& by_destination = d_client_destinations[client];
    size_t& to_destination = by_destination[destination];
    to_destination = size_t(long(to_destination) + delta);
    if (to_destination == 0)
        by_destination.erase(destination);
    const size_t destinations = std::max<size_t>(1, by_destination.size());
    bool& off = d_client_flow_off[client];
    // Hysteresis between the two limits keeps a client from flapping on every U_PDU.
    if (!off && bytes_queued > d_limits.flow_off_bytes * destinations) {
        off = true;
        d_flow_events.push_back({ client, false });
    } else if (off && bytes_queued <= d_limits.flow_on_bytes * destinations) {
        off = false;
        d_flow_events.push_back({ client, true });
    }
}

} // namespace dl
} // namespace hfstack
} // namespace gr
