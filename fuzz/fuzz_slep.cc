/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

/* libFuzzer target: SLEP fed garbage from the node. The input is cut into records: a
 * kind byte, a length byte, then that many bytes as a U_PDU from the air (from node 1 or
 * 2), as the echo of a confirmation or rejection, or as an application action (open,
 * write, read, finish, reset). Checks the contracts: never throws on what the air or
 * the node sends, streams stay within max_streams, what a stream holds for its reader
 * stays within its window, and every U_PDU SLEP hands the node decodes and fits the MTU.
 */
#include "fuzz_support.h"
#include "net/slep.h"

using namespace gr::hfstack;
using namespace gr::hfstack::net;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
    slep_config cfg;
    cfg.max_streams = 16;
    cfg.give_up_s = 50;
    cfg.retry_s = 5;
    slep s(cfg);
    accept_bind<decltype(s), dl::sis_primitive>(
        s, cfg.sap, 512, dl::sis_type::bind_accepted);
    s.listen(80);
    std::vector<slep_stream> mine;
    double now = 0;
    for (size_t at = 0; at + 2 <= size;) {
        const uint8_t kind = data[at];
        const size_t n = std::min<size_t>(data[at + 1], size - at - 2);
        const dl::bytes body(data + at + 2, data + at + 2 + n);
        at += 2 + n;
        now += 0.5;
        dl::sis_primitive p;
        switch (kind % 8) {
        case 0:
        case 1:
        case 2:
            p.type = dl::sis_type::unidata_indication;
            p.destination_sap = cfg.sap;
            p.source = dl::sis_address{ 1u + (kind >> 7), 7 };
            p.payload = body;
            s.on_sis(p, now);
            break;
        case 3:
            p.type = kind & 0x10 ? dl::sis_type::unidata_request_rejected
                                 : dl::sis_type::unidata_request_confirm;
            p.reason = uint8_t(kind >> 5);
            p.destination = dl::sis_address{ 1u + (kind >> 7), 7 };
            p.payload = body;
            s.on_sis(p, now);
            break;
        case 4:
            if (s.stream_count() < cfg.max_streams)
                mine.push_back(
                    s.open(1 + (kind >> 7), 80, 1, body, kind & 0x10, kind & 0x20, now));
            break;
        case 5:
            for (auto st : mine)
                s.write(st, body.data(), body.size(), now);
            break;
        case 6:
            for (auto st : mine) {
                s.read(st, n * 64 + 1, now);
                if (kind & 0x10)
                    s.finish(st, now);
            }
            break;
        default:
            if (!mine.empty() && (kind & 0x10)) {
                s.reset(mine.back(), now);
                mine.pop_back();
            }
            s.on_timer(now);
            break;
        }
        auto a = s.take_actions();
        for (const auto& out : a.to_sis) {
            if (out.type != dl::sis_type::unidata_request)
                continue;
            check(out.payload.size() <= s.mtu());
            check(decode_slep(out.payload).ok());
        }
        for (const auto& e : a.events)
            if (e.what == slep_event::kind::incoming ||
                e.what == slep_event::kind::readable) {
                const auto i = s.info(e.stream);
                if (i)
                    check(i->readable <= cfg.window);
            }
        check(s.stream_count() <= cfg.max_streams);
    }
    return 0;
}
