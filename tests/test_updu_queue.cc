/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "dl/updu_queue.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>

using namespace gr::hfstack::dl;

namespace {

updu_request req(uint8_t priority,
                 size_t size,
                 uint32_t client = 1,
                 bool expedited = false,
                 uint32_t destination = 2)
{
    updu_request r;
    r.client = client;
    r.priority = priority;
    r.expedited = expedited;
    r.destination = destination;
    r.updu = bytes(size, priority);
    return r;
}

std::vector<uint8_t> drain_priorities(updu_queue& q)
{
    std::vector<uint8_t> out;
    while (const auto* r = q.peek())
        out.push_back(q.pop(r->id)->priority);
    return out;
}

} // namespace

TEST(UpduQueue, ServesExpeditedThenHighestPriorityThenOldest)
{
    updu_queue q;
    const auto a = q.push(req(3, 10), 0);
    q.push(req(15, 10), 0);
    q.push(req(0, 10), 0);
    q.push(req(0, 10, 1, true), 0);
    const auto b = q.push(req(3, 10), 0);
    ASSERT_TRUE(a && b);
    EXPECT_LT(*a, *b);
    const auto* first = q.peek();
    ASSERT_NE(first, nullptr);
    EXPECT_TRUE(first->expedited);
    q.pop(first->id);
    EXPECT_EQ(q.peek()->priority, 15);
    q.pop(q.peek()->id);
    EXPECT_EQ(q.peek()->id, *a); // oldest of the two priority-3 requests
    EXPECT_EQ(drain_priorities(q), (std::vector<uint8_t>{ 3, 3, 0 }));
    EXPECT_TRUE(q.empty());
    EXPECT_EQ(q.total_bytes(), 0u);
}

TEST(UpduQueue, PeekWithAFilterPicksTheBestAcceptable)
{
    updu_queue q;
    q.push(req(9, 5, 1, false, 7), 0);
    q.push(req(4, 5, 1, false, 8), 0);
    q.push(req(6, 5, 1, false, 8), 0);
    const auto* r = q.peek([](const updu_request& x) { return x.destination == 8; });
    ASSERT_NE(r, nullptr);
    EXPECT_EQ(r->priority, 6);
    EXPECT_EQ(q.peek([](const updu_request& x) { return x.destination == 99; }), nullptr);
    EXPECT_EQ(q.depth(4), 1u);
    EXPECT_EQ(q.depth(4, true), 0u);
}

TEST(UpduQueue, TtlExpiry)
{
    EXPECT_EQ(ttl_deadline(0, 100.0), no_deadline);
    EXPECT_DOUBLE_EQ(ttl_deadline(5, 100.0), 110.0);
    EXPECT_DOUBLE_EQ(ttl_deadline(0xFFFFF, 0.0), 2.0 * 0xFFFFF);

    updu_queue q;
    auto r1 = req(1, 10);
    r1.deadline = ttl_deadline(5, 100.0);
    auto r2 = req(1, 10);
    r2.deadline = ttl_deadline(2, 100.0);
    const auto id1 = q.push(r1, 100.0);
    const auto id2 = q.push(r2, 100.0);
    q.push(req(1, 10), 100.0); // no TTL
    EXPECT_DOUBLE_EQ(q.next_deadline(), 104.0);
    EXPECT_TRUE(q.expire(103.9).empty());
    auto gone = q.expire(110.0);
    ASSERT_EQ(gone.size(), 2u);
    EXPECT_EQ(gone[0].id, *id2); // earliest deadline first
    EXPECT_EQ(gone[1].id, *id1);
    EXPECT_EQ(q.size(), 1u);
    EXPECT_EQ(q.next_deadline(), no_deadline);
    EXPECT_FALSE(q.pop(*id1)); // already gone
}

TEST(UpduQueue, RefusesWithoutLosingAnything)
{
    updu_queue_limits limits;
    limits.max_total_bytes = 100;
    updu_queue q(limits);
    ASSERT_TRUE(q.push(req(1, 60), 0));
    EXPECT_FALSE(q.push(req(1, 41), 0)); // would make 101
    auto late = req(1, 1);
    late.deadline = 5.0;
    EXPECT_FALSE(q.push(late, 5.0)); // TTL already over
    EXPECT_EQ(q.size(), 1u);
    EXPECT_EQ(q.total_bytes(), 60u);
    EXPECT_TRUE(q.push(req(1, 40), 0));
}

TEST(UpduQueue, FlowControlWithHysteresis)
{
    updu_queue_limits limits;
    limits.flow_off_bytes = 100;
    limits.flow_on_bytes = 50;
    updu_queue q(limits);
    const auto a = q.push(req(1, 60, 7), 0);
    EXPECT_TRUE(q.take_flow_events().empty());
    const auto b = q.push(req(1, 60, 7), 0);
    q.push(req(1, 500, 8), 0); // another client: its own meter
    auto ev = q.take_flow_events();
    ASSERT_EQ(ev.size(), 2u);
    EXPECT_EQ(ev[0].client, 7u);
    EXPECT_FALSE(ev[0].flow_on);
    EXPECT_EQ(ev[1].client, 8u);
    EXPECT_TRUE(q.flow_off(7));
    q.pop(*a); // 60 left: still above the ON limit
    EXPECT_TRUE(q.take_flow_events().empty());
    q.pop(*b); // 0 left
    ev = q.take_flow_events();
    ASSERT_EQ(ev.size(), 1u);
    EXPECT_EQ(ev[0].client, 7u);
    EXPECT_TRUE(ev[0].flow_on);
    EXPECT_FALSE(q.flow_off(7));
    EXPECT_EQ(q.client_bytes(8), 500u);
}

// A hub's one client feeding several peers: the thresholds count once per destination
// it has U_PDUs queued for, so each peer's share is as large as one peer's queue.
TEST(UpduQueue, FlowControlThresholdsScaleWithTheDestinationsQueuedFor)
{
    updu_queue_limits limits;
    limits.flow_off_bytes = 100;
    limits.flow_on_bytes = 50;
    updu_queue q(limits);
    const auto a = q.push(req(1, 90, 7, false, 2), 0);
    const auto b = q.push(req(1, 90, 7, false, 3), 0);
    EXPECT_TRUE(q.take_flow_events().empty()); // 180 bytes for two: under 2 x 100
    q.push(req(1, 30, 7, false, 3), 0);
    auto ev = q.take_flow_events();
    ASSERT_EQ(ev.size(), 1u); // 210 > 200
    EXPECT_FALSE(ev[0].flow_on);
    q.pop(*b); // 120 left, for two destinations: above 2 x 50
    EXPECT_TRUE(q.take_flow_events().empty());
    q.pop(*a); // 30 left, for one destination: at most 50
    ev = q.take_flow_events();
    ASSERT_EQ(ev.size(), 1u);
    EXPECT_TRUE(ev[0].flow_on);
}

TEST(UpduQueue, RemoveClientReturnsItsRequestsInServiceOrder)
{
    updu_queue_limits limits;
    limits.flow_off_bytes = 10;
    limits.flow_on_bytes = 5;
    updu_queue q(limits);
    q.push(req(2, 20, 1), 0);
    q.push(req(9, 20, 2), 0);
    q.push(req(7, 20, 1), 0);
    q.take_flow_events();
    auto gone = q.remove_client(1);
    ASSERT_EQ(gone.size(), 2u);
    EXPECT_EQ(gone[0].priority, 7);
    EXPECT_EQ(gone[1].priority, 2);
    EXPECT_TRUE(q.take_flow_events().empty()); // no FLOW_ON for a client that is gone
    EXPECT_EQ(q.size(), 1u);
    EXPECT_EQ(q.client_bytes(1), 0u);
    EXPECT_EQ(q.total_bytes(), 20u);
}

// Property: against a simple sorted-list model under random pushes, pops and expiries.
TEST(UpduQueue, MatchesAReferenceModel)
{
    std::mt19937 rng(66);
    updu_queue q;
    std::vector<updu_request> model;
    double now = 0;
    auto model_order = [](const updu_request& a, const updu_request& b) {
        if (a.expedited != b.expedited)
            return a.expedited;
        if (a.priority != b.priority)
            return a.priority > b.priority;
        return a.id < b.id;
    };
    for (int step = 0; step < 20000; ++step) {
        now += 0.1;
        const int op = int(rng() % 10);
        if (op < 5) {
            auto r = req(
                uint8_t(rng() % 16), rng() % 300, uint32_t(rng() % 4), rng() % 8 == 0);
            if (rng() % 2)
                r.deadline = now + 1.0 + double(rng() % 100);
            auto id = q.push(r, now);
            ASSERT_TRUE(id);
            r.id = *id;
            model.push_back(r);
        } else if (op < 8) {
            std::sort(model.begin(), model.end(), model_order);
            const auto* top = q.peek();
            if (model.empty()) {
                ASSERT_EQ(top, nullptr);
                continue;
            }
            ASSERT_NE(top, nullptr);
            ASSERT_EQ(top->id, model.front().id);
            ASSERT_TRUE(q.pop(top->id));
            model.erase(model.begin());
        } else {
            auto gone = q.expire(now);
            size_t want = 0;
            for (auto it = model.begin(); it != model.end();)
                if (it->deadline <= now) {
                    it = model.erase(it);
                    ++want;
                } else
                    ++it;
            ASSERT_EQ(gone.size(), want);
        }
        size_t bytes_total = 0;
        for (const auto& r : model)
            bytes_total += r.updu.size();
        ASSERT_EQ(q.total_bytes(), bytes_total);
        ASSERT_EQ(q.size(), model.size());
    }
}
