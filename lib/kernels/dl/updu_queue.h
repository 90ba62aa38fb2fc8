/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

/* The subnet interface sublayer's transmit queue (STANAG 5066 Annex A): U_PDUs from
 * clients waiting for the data link, served highest priority first (expedited before
 * normal, priority 15 before 0, oldest first among equals), dropped when their TTL
 * expires, and metered per client for DATA_FLOW_ON/OFF flow control.
 * Sans-IO: time is the caller's `now` in seconds. */
#ifndef HFSTACK_KERNELS_DL_UPDU_QUEUE_H
#define HFSTACK_KERNELS_DL_UPDU_QUEUE_H

#include "sis.h"

#include <unordered_map>
#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <optional>
#include <tuple>
#include <vector>

namespace gr {
namespace hfstack {
namespace dl {

constexpr double no_deadline = std::numeric_limits<double>::infinity();

// One U_PDU a client asked the node to send.
// The client of a request whose client has left (closed or unbound) while the
// request was still to be sent: nobody gets its confirmation or rejection.
constexpr uint32_t departed_client = 0xFFFFFFFF;

struct updu_request {
    uint64_t id = 0;     // assigned by updu_queue::push
    uint32_t client = 0; // SIS connection that sent it
    uint8_t source_sap = 0;
    uint8_t destination_sap = 0;
    uint32_t destination = 0; // node address; bit 28 marks a group
    uint8_t priority = 0;     // 0..15, 15 served first
    bool expedited = false;   // S_EXPEDITED_UNIDATA_REQUEST: ahead of every priority
    sis_service_type service;
    double deadline = no_deadline; // absolute time the TTL runs out
    bytes updu;
};

// Converts the SIS TTL field (20 bits, 2-second units, 0 = no limit) to a deadline.
double ttl_deadline(uint32_t ttl_field, double now);

struct updu_queue_limits {
    // A client is told DATA_FLOW_OFF when its queued bytes exceed flow_off_bytes and
    // DATA_FLOW_ON again once they fall to flow_on_bytes or below; both times the
    // number of destinations it has U_PDUs queued for. A hub's one client feeding
    // many spokes, which the node serves one at a time, then keeps each spoke's share
    // of the queue as full as a two-node link's whole queue.
    size_t flow_off_bytes = 64 * 1024;
    size_t flow_on_bytes = 16 * 1024;
    // Hard cap on all queued bytes: a push beyond it is refused, never silently lost.
    size_t max_total_bytes = 16 * 1024 * 1024;
};

struct flow_event {
    uint32_t client = 0;
    bool flow_on = false; // false: send S_DATA_FLOW_OFF; true: S_DATA_FLOW_ON
};

class updu_queue
{
public:
    explicit updu_queue(updu_queue_limits limits = {});

    // Queues r (its id is assigned and returned). Returns nullopt, queueing nothing,
    // when max_total_bytes would be exceeded or the deadline has already passed.
    std::optional<uint64_t> push(updu_request r, double now);

    // The request served next among those `accept` returns true for (all if empty).
    const updu_request*
    peek(const std::function<bool(const updu_request&)>& accept = {}) const;
    // Removes and returns request `id` (nullopt if it is not queued).
    std::optional<updu_request> pop(uint64_t id);

    // Removes and returns every request whose deadline is at or before now, oldest
    // deadline first: the node answers each with S_UNIDATA_REQUEST_REJECTED (TTL
    // expired).
    std::vector<updu_request> expire(double now);
    // Removes and returns all requests of a client (unbind, disconnect).
    std::vector<updu_request> remove_client(uint32_t client);
    // Keeps a departed client's requests queued, owned by departed_client.
    void orphan_client(uint32_t client);

    double next_deadline() const;
    // Flow-control changes since the last call, in the order they happened.
    std::vector<flow_event> take_flow_events();

    size_t size() const { return d_items.size(); }
    bool empty() const { return d_items.empty(); }
    size_t total_bytes() const { return d_total_bytes; }
    size_t client_bytes(uint32_t client) const;
    size_t depth(uint8_t priority, bool expedited = false) const;
    bool flow_off(uint32_t client) const;
    const updu_queue_limits& limits() const { return d_limits; }

private:
    // Service order: expedited first, then higher priority, then older.
    using order_key = std::tuple<int, int, uint64_t>;
    static order_key key_of(const updu_request& r)
    {
        return { r.expedited ? 0 : 1, -int(r.priority), r.id };
    }

    void account(uint32_t client, uint32_t destination, long delta);
    void forget_flow(uint32_t client);
    updu_request take(std::map<order_key, updu_request>::iterator it);

    updu_queue_limits d_limits;
    uint64_t d_next_id = 1;
    std::map<order_key, updu_request> d_items;
    std::unordered_map<uint64_t, order_key> d_key_by_id;
    std::multimap<double, uint64_t> d_deadlines;
    std::unordered_map<uint32_t, size_t> d_client_bytes;
    // Per client, its queued bytes by destination (only destinations with some).
    std::unordered_map<uint32_t, std::map<uint32_t, size_t>> d_client_destinations;
    std::unordered_map<uint32_t, bool> d_client_flow_off;
    std::vector<flow_event> d_flow_events;
    size_t d_total_bytes = 0;
};

} // namespace dl
} // namespace hfstack
} // namespace gr

#endif
