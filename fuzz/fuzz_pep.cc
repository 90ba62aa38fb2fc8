/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

/* libFuzzer target: an HF-PEP fed garbage SLEP PDUs from the air (streams opened with
 * random request headers, data, windows, resets), random confirmations, and random
 * driver calls for the connections it reports (host names to resolve and the lookups'
 * answers among them). Checks the contracts: never throws,
 * connections stay within max_connections plus SLEP's streams, every U_PDU it hands the
 * node decodes as SLEP and fits the MTU, and tcp_space is always honoured by from_tcp. */
#include "fuzz_support.h"
#include "net/pep.h"

#include <set>

using namespace gr::hfstack;
using namespace gr::hfstack::net;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
    pep_config cfg;
    set_pep_options(cfg,
                    "peers=10.0.0.0/8=0.0.0.2; max_connections=8; deny_ports=25; "
                    "give_up_s=40; retry_s=5; connect_timeout_s=20; idle_timeout_s=300");
    pep p(cfg);
    accept_bind<decltype(p), dl::sis_primitive>(
        p, cfg.slep.sap, 600, dl::sis_type::bind_accepted);
    std::set<pep_connection> known;
    double now = 0;
    for (size_t at = 0; at + 2 <= size;) {
        const uint8_t kind = data[at];
        const size_t n = std::min<size_t>(data[at + 1], size - at - 2);
        const dl::bytes body(data + at + 2, data + at + 2 + n);
        at += 2 + n;
        now += kind & 0x80 ? 30 : 0.25;
        const pep_connection c =
            known.empty() ? 0 : *std::next(known.begin(), long(kind % known.size()));
        switch (kind % 8) {
        case 0:
        case 1: {
            dl::sis_primitive ind;
            ind.type = dl::sis_type::unidata_indication;
            ind.destination_sap = cfg.slep.sap;
            ind.source = dl::sis_address{ 2, 7 };
            ind.payload = body;
            p.on_sis(ind, now);
            break;
        }
        case 2: {
            dl::sis_primitive conf;
            conf.type = kind & 0x10 ? dl::sis_type::unidata_request_rejected
                                    : dl::sis_type::unidata_request_confirm;
            conf.reason = uint8_t(kind >> 5);
            conf.destination = dl::sis_address{ 2, 7 };
            conf.payload = body;
            p.on_sis(conf, now);
            break;
        }
        case 3:
            if (n >= 2 && (kind & 0x10)) {
                // A host name (the rest of the body, valid or not).
                pep_request r;
                r.port = uint16_t(body[1] * 7);
                r.name.assign(body.begin() + 2, body.end());
                known.insert(p.accept(r, now));
            } else if (n >= 2) {
                known.insert(p.accept(
                    { ip_address::v4(0x0A000000u | body[0]), uint16_t(body[1] * 7) },
                    now));
            }
            break;
        case 4:
            if (c) {
                const size_t room = p.tcp_space(c);
                check(p.from_tcp(c, body.data(), body.size(), now) <= room);
            }
            break;
        case 5:
            if (c)
                p.take_tcp_data(c, n + 1, now);
            break;
        case 6:
            if (c) {
                if ((kind & 0x30) == 0x30) {
                    // The lookup's answer: addresses from the body (loopback among
                    // them as often as not), or none.
                    std::vector<ip_address> found;
                    for (size_t i = 0; i + 4 <= n && found.size() < 4; i += 4)
                        found.push_back(ip_address::v4(
                            uint32_t(body[i]) << 24 | uint32_t(body[i + 1]) << 16 |
                            uint32_t(body[i + 2]) << 8 | body[i + 3]));
                    p.resolved(c, found, now);
                } else if (kind & 0x10)
                    p.connected(c, now);
                else if (kind & 0x20)
                    p.tcp_finished(c, now);
                else
                    p.tcp_reset(c, now);
            }
            break;
        default:
            p.on_timer(now);
            break;
        }
        auto a = p.take_actions();
        for (const auto& out : a.to_sis) {
            if (out.type != dl::sis_type::unidata_request)
                continue;
            check(out.payload.size() <= 600);
            check(decode_slep(out.payload).ok());
        }
        for (const auto& t : a.tcp) {
            if (t.what == pep_action::kind::connect ||
                t.what == pep_action::kind::resolve)
                known.insert(t.connection);
            if (t.what == pep_action::kind::connect)
                check(t.destination.destination.version == 4 ||
                      t.destination.destination.version == 6);
            if (t.what == pep_action::kind::resolve)
                check(valid_host_name(t.destination.name));
            if (t.what == pep_action::kind::closed)
                known.erase(t.connection);
        }
        check(p.connection_count() <= cfg.max_connections + cfg.slep.max_streams);
    }
    return 0;
}
