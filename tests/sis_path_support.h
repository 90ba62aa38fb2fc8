/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

// Two SIS clients (SLEP, the PEP) on nodes 1 and 2, and a simulated STANAG 5066 node
// between them: every U_PDU request is delivered to the other side (unless the link is
// down or the dice say it was rejected), and confirmed with its first 16 bytes echoed,
// as our node does. It can also report a delivered U_PDU as rejected (so it is sent
// twice) and reorder deliveries. Virtual time: settle() runs both until quiet.
#ifndef HFSTACK_TESTS_SIS_PATH_SUPPORT_H
#define HFSTACK_TESTS_SIS_PATH_SUPPORT_H

#include "dl/sis.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <memory>
#include <random>
#include <vector>

// n bytes of a seeded random pattern.
inline gr::hfstack::dl::bytes pattern(size_t n, uint32_t seed)
{
    std::mt19937 rng(seed);
    gr::hfstack::dl::bytes b(n);
    for (auto& x : b)
        x = uint8_t(rng());
    return b;
}

template <typename Endpoint>
struct sis_path {
    using actions = decltype(std::declval<Endpoint&>().take_actions());
    std::unique_ptr<Endpoint> a, b;
    std::mt19937 rng{ 7 };
    double now = 0;
    bool down = false;
    double p_rejected = 0;           // not delivered, rejected (link broke)
    double p_delivered_rejected = 0; // delivered, yet reported rejected
    bool reorder = false;
    // While set, requests wait unanswered (a node whose ARQ cannot reach the peer yet);
    // release_held() carries them in order.
    bool holding = false;
    std::vector<std::pair<Endpoint*, gr::hfstack::dl::sis_primitive>> held;
    size_t requests = 0;
    // Whatever else each side's actions hold (events, TCP actions) goes here.
    std::function<void(Endpoint&, actions&)> keep = [](Endpoint&, actions&) {};

    // Both bound, with an MTU of 2048.
    void bind_both()
    {
        bind(*a);
        bind(*b);
        settle();
    }

    static void bind(Endpoint& e, uint8_t sap = 13)
    {
        using gr::hfstack::dl::sis_primitive;
        e.start(0);
        sis_primitive ok;
        ok.type = gr::hfstack::dl::sis_type::bind_accepted;
        ok.sap = sap;
        ok.mtu = 2048;
        e.on_sis(ok, 0);
    }

    Endpoint& other(Endpoint& e) { return &e == a.get() ? *b : *a; }
    uint32_t node(Endpoint& e) { return &e == a.get() ? 1 : 2; }

    // Runs both until nothing more happens before `until` (virtual seconds).
    void settle(double until = 1e9)
    {
        using namespace gr::hfstack::dl;
        for (int round = 0; round < 200000; ++round) {
            bool busy = false;
            for (Endpoint* e : { a.get(), b.get() }) {
                auto act = e->take_actions();
                std::vector<sis_primitive> now_sent;
                for (auto& p : act.to_sis)
                    if (p.type == sis_type::unidata_request)
                        now_sent.push_back(std::move(p));
                act.to_sis.clear();
                keep(*e, act);
                if (reorder)
                    std::shuffle(now_sent.begin(), now_sent.end(), rng);
                for (auto& r : now_sent) {
                    busy = true;
                    if (holding)
                        held.emplace_back(e, std::move(r));
                    else
                        carry(*e, r);
                }
            }
            if (busy)
                continue;
            const double next = std::min(a->next_deadline(), b->next_deadline());
            if (!(next <= until))
                return;
            now = std::max(now, next);
            a->on_timer(now);
            b->on_timer(now);
        }
        FAIL() << "the path never settled";
    }

    void release_held()
    {
        holding = false;
        auto waiting = std::move(held);
        held.clear();
        for (auto& [from, r] : waiting)
            carry(*from, r);
    }

    void carry(Endpoint& from, const gr::hfstack::dl::sis_primitive& r)
    {
        using namespace gr::hfstack::dl;
        requests += 1;
        std::uniform_real_distribution<double> u(0, 1);
        const bool confirm =
            r.service_type.delivery_confirmation != sis_delivery_confirmation::none;
        const bool lost = down || u(rng) < p_rejected;
        if (!lost) {
            sis_primitive ind;
            ind.type = sis_type::unidata_indication;
            ind.destination_sap = r.destination_sap;
            ind.destination = r.destination;
            ind.source_sap = r.destination_sap;
            ind.source = sis_address{ node(from), 7 };
            ind.payload = r.payload;
            other(from).on_sis(ind, now);
        }
        if (!confirm)
            return;
        sis_primitive answer;
        answer.destination = r.destination;
        answer.destination_sap = r.destination_sap;
        answer.payload.assign(r.payload.begin(),
                              r.payload.begin() +
                                  long(std::min<size_t>(16, r.payload.size())));
        const bool reported_rejected = lost || u(rng) < p_delivered_rejected;
        answer.type = reported_rejected ? sis_type::unidata_request_rejected
                                        : sis_type::unidata_request_confirm;
        answer.reason = uint8_t(sis_unidata_rejected_reason::destination_not_responding);
        from.on_sis(answer, now);
    }
};

#endif
