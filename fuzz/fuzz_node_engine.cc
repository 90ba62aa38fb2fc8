/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

/* libFuzzer target: a node engine driven by a script the input spells out. Each step
 * is one input the engine can get from outside: a raw burst, a well-formed D_PDU from
 * a peer (valid CRCs, so the ARQ, CAS, reset and rate-change logic is reached), a
 * client primitive, modem status or the passing of time. Checks that the engine
 * never throws, never asks for a deadline that is NaN, and never spins (asks again
 * and again for a timer at the same instant). */
#include "dl/cpdu.h"
#include "dl/node_engine.h"
#include "fuzz_support.h"

#include <cmath>
#include <cstdlib>

using namespace gr::hfstack::dl;

namespace {


// Peers 2 and 3, a group, or broadcast; the engine is node 1.
uint32_t address(uint8_t x)
{
    switch (x & 3) {
    case 0:
        return 2;
    case 1:
        return 3;
    case 2:
        return group_address_flag | 5;
    default:
        return broadcast_address;
    }
}

dpdu make_frame(script_reader& r)
{
    static const dpdu_type types[] = { dpdu_type::data_only,
                                       dpdu_type::ack_only,
                                       dpdu_type::data_ack,
                                       dpdu_type::reset_win_resync,
                                       dpdu_type::expedited_data_only,
                                       dpdu_type::expedited_ack_only,
                                       dpdu_type::management,
                                       dpdu_type::non_arq_data,
                                       dpdu_type::expedited_non_arq_data,
                                       dpdu_type::warning };
    dpdu d;
    d.type = types[r.u8() % 10];
    const uint8_t flags = r.u8();
    d.source = (flags & 1) ? 3 : 2;
    d.destination = (flags & 4) ? address(flags >> 3) : 1;
    d.cpdu_start = flags & 8;
    d.cpdu_end = flags & 16;
    d.deliver_in_order = flags & 32;
    d.drop_cpdu = flags & 64;
    d.tx_win_lwe = flags & 128;
    d.tx_sequence = r.u8();
    d.rx_lwe = r.u8();
    d.selective_acks = r.take(r.u8() % 17);
    d.full_reset = flags & 1;
    d.reset_ack = flags & 2;
    d.reset_rx_win_command = flags & 64;
    d.new_rx_lwe = r.u8();
    d.reset_frame_id = r.u8();
    d.eow = eow_type(r.u8() % 8);
    d.eow_content = r.u8();
    d.valid_message = flags & 8;
    d.management_ack = flags & 16;
    d.management_frame_id = r.u8();
    d.cpdu_id = r.u16() & (d.type == dpdu_type::expedited_data_only ? 0xF : 0xFFF);
    d.cpdu_size = r.u16();
    d.segment_offset = r.u16();
    d.reception_window = r.u16();
    d.received_frame_type = r.u8() & 0xF;
    d.warning_reason = r.u8() & 0xF;
    if (carries_segment(d.type))
        d.segment = r.take(r.u8() % 64 + (d.drop_cpdu ? 0 : 1));
    if (d.type == dpdu_type::expedited_data_only)
        d.deliver_in_order = d.drop_cpdu = d.tx_win_lwe = false;
    return d;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
    script_reader r{ data, size };
    node_config cfg;
    cfg.address = 1;
    const uint8_t setup = r.u8();
    cfg.rate_adaptation = setup & 1;
    if (setup & 2) // journal records and numbered deliveries (the engine writes no file)
        cfg.state_dir = "journal";
    node_engine e(cfg);
    std::vector<uint64_t> deliveries; // numbered, not yet settled by this script
    double now = 0;
    auto settle = [&]() {
        // Timers that are due run now; a correct engine runs out of them quickly.
        for (int i = 0; e.next_deadline() <= now; ++i) {
            check(i < 1000);
            e.on_timer(now);
        }
        check(!std::isnan(e.next_deadline()));
        for (const auto& m : e.take_actions().to_clients)
            if (m.delivery)
                deliveries.push_back(m.delivery);
    };
    try {
        while (r.n) {
            switch (r.u8() % 8) {
            case 0: { // raw bytes from the air
                const bytes b = r.take(r.u16() % 2048);
                burst_info info;
                info.snr_db = double(r.u8() % 40);
                e.on_burst(b, info, now);
                break;
            }
            case 1:
            case 2: { // a burst of well-formed D_PDUs (CRCs valid)
                bytes b;
                for (int k = r.u8() % 4; k >= 0; --k) {
                    dpdu d = make_frame(r);
                    try {
                        encode_into(d, b);
                    } catch (const encode_error&) {
                        // Fields the codec refuses (a caller bug): not on the air.
                    }
                }
                e.on_burst(b, burst_info{}, now);
                break;
            }
            case 3: { // a client primitive, whatever the bytes decode to
                const bytes b = r.take(r.u8());
                auto p = decode_sis_body(sis_type(r.u8() % 28), b.data(), b.size());
                if (p)
                    e.on_sis(r.u8() % 4, p.value, now);
                else
                    e.on_client_invalid(r.u8() % 4, p.reason, r.u8() & 1, now);
                break;
            }
            case 4: { // typical client traffic: bind, then data to a peer
                sis_primitive p;
                p.type = sis_type::bind_request;
                p.sap = r.u8() % 16;
                p.service_type.tx_mode = sis_tx_mode(r.u8() % 4);
                e.on_sis(r.u8() % 4, p, now);
                sis_primitive u;
                u.type = (r.u8() & 1) ? sis_type::unidata_request
                                      : sis_type::expedited_unidata_request;
                u.destination = sis_address{ address(r.u8()), 7 };
                u.destination_sap = r.u8() % 16;
                u.ttl = r.u8();
                u.payload = r.take(r.u16() % 2100);
                e.on_sis(r.u8() % 4, u, now);
                break;
            }
            case 5:
                e.on_phy_status(phy_event(r.u8() % 4), now);
                break;
            case 6: {
                const uint8_t what = r.u8() % 3;
                if (what == 0) {
                    e.on_client_connected(r.u8() % 4, now, r.u8() & 1);
                } else if (what == 1) {
                    e.on_client_closed(r.u8() % 4, now);
                } else { // a write reported: one outstanding, or any number at all
                    const size_t k = r.u8();
                    const uint64_t number =
                        k < deliveries.size() ? deliveries[k] : uint64_t(r.u16());
                    e.on_delivery_settled(number, r.u8() & 1, now);
                }
                break;
            }
            default: // time passes
                now += double(r.u16()) / 16.0;
                break;
            }
            settle();
        }
    } catch (...) {
        check(false); // the engine never throws on outside input
    }
    return 0;
}
