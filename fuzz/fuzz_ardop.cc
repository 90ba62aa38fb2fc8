/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

/* libFuzzer target: the ARDOP host interface (net/ardop.h). The input is a script of
 * what a host and the far station do to a TNC on node 2 whose peer is node 1 (AAA1):
 * each step's first byte says which (command bytes, data-connection bytes, stream bytes
 * from the far TNC as a SLEP stream it opened, time passing, the host closing), its
 * second the length of what follows. The far TNC's bytes are a real SLEP peer's, so
 * they reach the session code. Checks the contracts: nothing throws; what goes to the
 * host's data connection is well framed (2-byte length, ARQ or FEC tag) and never more
 * than the far side sent. */
#include "fuzz_support.h"
#include "net/ardop.h"

using namespace gr::hfstack;
using namespace gr::hfstack::net;

namespace {

void carry(slep& from, ardop_tnc& to, uint32_t from_node, double now)
{
    auto a = from.take_actions();
    for (const auto& p : a.to_sis) {
        if (p.type != dl::sis_type::unidata_request)
            continue;
        dl::sis_primitive ind;
        ind.type = dl::sis_type::unidata_indication;
        ind.destination_sap = p.destination_sap;
        ind.destination = p.destination;
        ind.source_sap = p.destination_sap;
        ind.source = dl::sis_address{ from_node, 7 };
        ind.payload = p.payload;
        to.on_sis(ind, now);
    }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
    script_reader in{ data, size };
    ardop_config c;
    c.stations = { { "AAA1", 1 } };
    c.slep.sap = 15;
    ardop_tnc tnc(c);
    accept_bind<ardop_tnc, dl::sis_primitive>(tnc, 15, 2048, dl::sis_type::bind_accepted);

    slep_config pc;
    pc.sap = 15;
    pc.incarnation = 77;
    slep peer(pc);
    peer.start(0);
    dl::sis_primitive ok;
    ok.type = dl::sis_type::bind_accepted;
    ok.sap = 15;
    ok.mtu = 2048;
    peer.on_sis(ok, 0);
    peer.take_actions();
    std::optional<slep_stream> stream;

    double now = 0;
    uint64_t far_bytes = 0, host_bytes = 0;
    bytes to_data;
    for (int step = 0; step < 64 && in.n; ++step) {
        const uint8_t what = in.u8() % 7;
        const bytes chunk = in.take(in.u8());
        switch (what) {
        case 0:
            tnc.on_command_bytes(chunk.data(), chunk.size(), now);
            break;
        case 1:
            tnc.on_data_bytes(chunk.data(), chunk.size(), now);
            break;
        case 2:
            far_bytes += chunk.size();
            if (!stream)
                stream = peer.open(2, c.address, c.address, chunk, false, false, now);
            else
                peer.write(*stream, chunk.data(), chunk.size(), now);
            peer.on_timer(now + 1);
            carry(peer, tnc, 1, now);
            break;
        case 3:
            now += chunk.empty() ? 1.0 : chunk[0] * 0.5;
            tnc.on_timer(now);
            break;
        case 4:
            tnc.on_host_closed(now);
            to_data.clear();
            break;
        case 5: // the app's view of the host's reading and the node's carrier sense
            tnc.set_host_reading(chunk.empty() || (chunk[0] & 1), now);
            tnc.set_channel_busy(!chunk.empty() && (chunk[0] & 2));
            break;
        default:
            if (stream)
                peer.finish(*stream, now);
            peer.on_timer(now + 1);
            carry(peer, tnc, 1, now);
            break;
        }
        auto a = tnc.take_actions();
        to_data.insert(to_data.end(), a.to_data.begin(), a.to_data.end());
        // Whole frames only, as they complete: length, tag, payload.
        while (to_data.size() >= 2) {
            const size_t n = size_t(to_data[0]) << 8 | to_data[1];
            if (to_data.size() < 2 + n)
                break;
            check(n >= 3);
            const std::string tag(to_data.begin() + 2, to_data.begin() + 5);
            check(tag == "ARQ" || tag == "FEC");
            host_bytes += n - 3;
            to_data.erase(to_data.begin(), to_data.begin() + long(2 + n));
        }
        check(host_bytes <= far_bytes);
    }
    return 0;
}
