/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

/* libFuzzer target: the IP client fed garbage from both sides. The input is cut into
 * records: a kind byte, a length byte, then that many bytes as a datagram from the TUN
 * device, as a U_PDU from the air, or a flow-control change. Checks the contracts:
 * never throws, whatever reaches the TUN parses as IP, every U_PDU handed to the node
 * fits the MTU and parses (a compact one once rebuilt), the queue stays within its
 * byte limit. Node 0.0.0.2 has a compact entry, so both header forms are exercised. */
#include "net/ip_client.h"

#include <cstdlib>

using namespace gr::hfstack;
using namespace gr::hfstack::net;

static void check(bool ok)
{
    if (!ok)
        std::abort();
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
    ip_client_config cfg;
    set_ip_client_options(cfg,
                          "routes=10.0.0.0/8=0.0.0.2 10.0.0.2=0.0.0.2,compact "
                          "224.0.0.0/4=31.255.255.255 fd00::/8=0.0.0.3 default=0.0.0.4; "
                          "mtu=576; max_queue_bytes=4000; own_address_v4=10.0.0.1");
    ip_client c(cfg);
    c.start(0);
    dl::sis_primitive accepted;
    accepted.type = dl::sis_type::bind_accepted;
    accepted.sap = 9;
    accepted.mtu = 2048;
    c.on_sis(accepted, 0);
    double now = 0;
    for (size_t at = 0; at + 2 <= size;) {
        const uint8_t kind = data[at];
        const size_t n = std::min<size_t>(data[at + 1] * 8u, size - at - 2);
        const dl::bytes body(data + at + 2, data + at + 2 + n);
        at += 2 + n;
        now += 1;
        switch (kind % 4) {
        case 0:
        case 1:
            c.on_datagram(body, now);
            break;
        case 2: {
            dl::sis_primitive ind;
            ind.type = dl::sis_type::unidata_indication;
            ind.destination_sap = 9;
            ind.source = dl::sis_address{ 2, 7 };
            ind.payload = body;
            c.on_sis(ind, now);
            break;
        }
        default: {
            dl::sis_primitive flow;
            flow.type =
                kind & 4 ? dl::sis_type::data_flow_on : dl::sis_type::data_flow_off;
            c.on_sis(flow, now);
            break;
        }
        }
        c.on_timer(now);
        auto a = c.take_actions();
        for (const auto& d : a.to_tun)
            check(parse_ip(d).ok());
        for (const auto& p : a.to_sis) {
            if (p.type != dl::sis_type::unidata_request &&
                p.type != dl::sis_type::expedited_unidata_request)
                continue;
            check(p.payload.size() <= c.mtu());
            if (is_compact(p.payload)) {
                const auto rebuilt = expand_compact(
                    p.payload, *cfg.own_address_v4, *parse_ip_address("10.0.0.2"));
                check(rebuilt && parse_ip(*rebuilt).ok());
            } else {
                check(parse_ip(p.payload).ok());
            }
        }
        for (const auto& [peer, pc] : c.counters().peers)
            check(pc.queued_bytes <= cfg.max_queue_bytes);
    }
    return 0;
}
