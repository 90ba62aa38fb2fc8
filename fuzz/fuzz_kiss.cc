/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

/* libFuzzer target: the KISS decoder and gateway (net/kiss.h). The first input byte
 * sets the piece size the rest is fed in; the rest is what a KISS client sends. Checks
 * the contracts: nothing throws; the same bytes cut differently give the same frames;
 * every frame is within the limit; each frame re-encoded decodes to itself; the gateway
 * sends no U_PDU above max_frame and never more than it was given. */
#include "fuzz_support.h"
#include "net/kiss.h"

using namespace gr::hfstack;
using namespace gr::hfstack::net;

namespace {

constexpr size_t max_frame = 300;

std::vector<kiss_frame> decode(const uint8_t* data, size_t size, size_t piece)
{
    kiss_decoder d(max_frame + 1);
    std::vector<kiss_frame> out;
    for (size_t at = 0; at < size; at += piece)
        d.feed(data + at, std::min(piece, size - at), out);
    return out;
}

bool same(const std::vector<kiss_frame>& a, const std::vector<kiss_frame>& b)
{
    if (a.size() != b.size())
        return false;
    for (size_t i = 0; i < a.size(); ++i)
        if (a[i].port != b[i].port || a[i].command != b[i].command ||
            a[i].data != b[i].data)
            return false;
    return true;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
    if (size < 1)
        return 0;
    const size_t piece = data[0] % 64 + 1;
    ++data;
    --size;
    const auto whole = decode(data, size, size ? size : 1);
    check(same(whole, decode(data, size, piece)));
    for (const auto& f : whole) {
        check(f.data.size() <= max_frame);
        const bytes again = kiss_encode(f.port, f.command, f.data.data(), f.data.size());
        check(same({ f }, decode(again.data(), again.size(), again.size())));
    }

    kiss_gateway_config c;
    c.max_frame = max_frame;
    c.routes = { kiss_route{}, kiss_route{} };
    c.routes[1].port = 1;
    c.routes[1].sap = 15;
    c.routes[1].destination = 2;
    c.routes[1].arq = true;
    kiss_gateway g(c);
    for (uint8_t sap : g.saps()) {
        g.start(sap);
        dl::sis_primitive p;
        p.type = dl::sis_type::bind_accepted;
        p.sap = sap;
        p.mtu = 256;
        g.on_sis(sap, p);
    }
    for (size_t at = 0; at < size; at += piece)
        g.on_client_bytes(1, data + at, std::min(piece, size - at));
    const auto a = g.take_actions();
    check(a.to_sis.size() <= whole.size() + 2);
    for (const auto& [sap, p] : a.to_sis)
        check(p.type != dl::sis_type::unidata_request || p.payload.size() <= 256);
    return 0;
}
