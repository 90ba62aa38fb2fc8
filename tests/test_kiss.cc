/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "net/kiss.h"

#include <gtest/gtest.h>

using namespace gr::hfstack;
using namespace gr::hfstack::net;

namespace {

std::vector<kiss_frame> decode(kiss_decoder& d, const bytes& in, size_t piece = 0)
{
    std::vector<kiss_frame> out;
    if (!piece)
        piece = in.size() ? in.size() : 1;
    for (size_t at = 0; at < in.size(); at += piece)
        d.feed(in.data() + at, std::min(piece, in.size() - at), out);
    return out;
}

dl::sis_primitive accepted(uint8_t sap, uint16_t mtu = 2048)
{
    dl::sis_primitive p;
    p.type = dl::sis_type::bind_accepted;
    p.sap = sap;
    p.mtu = mtu;
    return p;
}

} // namespace

TEST(kiss, escapes_both_ways_and_any_cut)
{
    const bytes data{ 0x01, kiss_fend, 0x02, kiss_fesc, kiss_tfend, kiss_tfesc, 0x03 };
    const bytes wire = kiss_encode(3, data);
    EXPECT_EQ(wire,
              (bytes{ kiss_fend,
                      0x30,
                      0x01,
                      kiss_fesc,
                      kiss_tfend,
                      0x02,
                      kiss_fesc,
                      kiss_tfesc,
                      kiss_tfend,
                      kiss_tfesc,
                      0x03,
                      kiss_fend }));
    for (size_t piece = 1; piece <= wire.size(); ++piece) {
        kiss_decoder d;
        const auto frames = decode(d, wire, piece);
        ASSERT_EQ(frames.size(), 1u) << piece;
        EXPECT_EQ(frames[0].port, 3);
        EXPECT_EQ(frames[0].command, kiss_data_command);
        EXPECT_EQ(frames[0].data, data);
    }
}

TEST(kiss, garbage_bad_escapes_and_oversize_are_dropped_and_counted)
{
    kiss_decoder d(8);                                        // type byte + 7
    bytes in{ 'x', 'y', 'z' };                                // before the first FEND
    in.insert(in.end(), { kiss_fend, kiss_fend, kiss_fend }); // empty frames: nothing
    in.insert(in.end(), { 0x00, kiss_fesc, 0x41, 0x42, kiss_fend });     // bad escape
    in.insert(in.end(), { 0x00, 1, 2, 3, 4, 5, 6, 7, 8, 9, kiss_fend }); // oversize
    in.insert(in.end(), { 0x00, 1, 2, 3, 4, 5, 6, 7, kiss_fend });       // just fits
    in.insert(in.end(), { 0x00, 'o', 'k', kiss_fesc, kiss_fend });       // FESC at end
    const auto frames = decode(d, in);
    ASSERT_EQ(frames.size(), 1u);
    EXPECT_EQ(frames[0].data, (bytes{ 1, 2, 3, 4, 5, 6, 7 }));
    EXPECT_EQ(d.counters().garbage_bytes, 3u);
    EXPECT_EQ(d.counters().bad_escapes, 2u);
    EXPECT_EQ(d.counters().oversize, 1u);
    // The decoder is in step afterwards.
    const auto next = decode(d, kiss_encode(0, bytes{ 9 }));
    ASSERT_EQ(next.size(), 1u);
    EXPECT_EQ(next[0].data, bytes{ 9 });
}

TEST(kiss, gateway_routes_ports_to_saps_and_back)
{
    kiss_gateway_config c;
    c.routes = { kiss_route{}, kiss_route{} };
    c.routes[1].port = 1;
    c.routes[1].sap = 15;
    c.routes[1].destination = 2;
    c.routes[1].arq = true;
    kiss_gateway g(c);
    EXPECT_EQ(g.saps(), (std::vector<uint8_t>{ 14, 15 }));
    g.start(14);
    g.start(15);
    auto a = g.take_actions();
    ASSERT_EQ(a.to_sis.size(), 2u);
    EXPECT_EQ(a.to_sis[0].second.type, dl::sis_type::bind_request);
    EXPECT_EQ(a.to_sis[1].second.service_type.tx_mode, dl::sis_tx_mode::arq);

    // Before the bind is accepted frames wait.
    const bytes f0 = kiss_encode(0, bytes{ 'a', 'b' });
    g.on_client_bytes(7, f0.data(), f0.size());
    EXPECT_TRUE(g.take_actions().to_sis.empty());
    g.on_sis(14, accepted(14));
    a = g.take_actions();
    ASSERT_EQ(a.to_sis.size(), 1u);
    EXPECT_EQ(a.to_sis[0].first, 14);
    EXPECT_EQ(a.to_sis[0].second.type, dl::sis_type::unidata_request);
    EXPECT_EQ(a.to_sis[0].second.destination.address, 0x1FFFFFFFu);
    EXPECT_EQ(a.to_sis[0].second.service_type.tx_mode, dl::sis_tx_mode::non_arq);
    EXPECT_EQ(a.to_sis[0].second.payload, (bytes{ 'a', 'b' }));

    g.on_sis(15, accepted(15));
    const bytes f1 = kiss_encode(1, bytes{ 'c' });
    const bytes f9 = kiss_encode(9, bytes{ 'd' });
    const bytes txdelay = kiss_encode(0, 1, f1.data(), 1);
    bytes all = f1;
    all.insert(all.end(), f9.begin(), f9.end());
    all.insert(all.end(), txdelay.begin(), txdelay.end());
    g.on_client_bytes(7, all.data(), all.size());
    a = g.take_actions();
    ASSERT_EQ(a.to_sis.size(), 1u);
    EXPECT_EQ(a.to_sis[0].first, 15);
    EXPECT_EQ(a.to_sis[0].second.destination.address, 2u);
    EXPECT_EQ(a.to_sis[0].second.service_type.tx_mode, dl::sis_tx_mode::arq);
    EXPECT_EQ(g.counters().unknown_port, 1u);
    EXPECT_EQ(g.counters().commands_ignored, 1u);

    dl::sis_primitive ind;
    ind.type = dl::sis_type::unidata_indication;
    ind.payload = { kiss_fend, 'z' };
    g.on_sis(15, ind);
    EXPECT_EQ(g.take_actions().to_clients, kiss_encode(1, ind.payload));
}

TEST(kiss, gateway_bounds_its_queue_and_the_mtu)
{
    kiss_gateway_config c;
    c.max_queued = 2;
    kiss_gateway g(c);
    g.start(14);
    g.on_sis(14, accepted(14, 100));
    dl::sis_primitive off;
    off.type = dl::sis_type::data_flow_off;
    g.on_sis(14, off);
    g.take_actions();
    for (int i = 0; i < 4; ++i) {
        const bytes f = kiss_encode(0, bytes(10, uint8_t(i)));
        g.on_client_bytes(1, f.data(), f.size());
    }
    const bytes big = kiss_encode(0, bytes(101, 1));
    g.on_client_bytes(2, big.data(), big.size());
    EXPECT_TRUE(g.take_actions().to_sis.empty());
    EXPECT_EQ(g.counters().queue_full, 2u);
    EXPECT_EQ(g.counters().too_large, 1u);
    dl::sis_primitive on;
    on.type = dl::sis_type::data_flow_on;
    g.on_sis(14, on);
    const auto a = g.take_actions();
    ASSERT_EQ(a.to_sis.size(), 2u);
    EXPECT_EQ(a.to_sis[1].second.payload, bytes(10, 1));
}

TEST(kiss, gateway_refuses_bad_routes)
{
    kiss_gateway_config c;
    c.routes = { kiss_route{}, kiss_route{} };
    EXPECT_THROW(kiss_gateway{ c }, std::invalid_argument); // port 0 twice
    c.routes[1].port = 1;
    EXPECT_THROW(kiss_gateway{ c }, std::invalid_argument); // SAP 14 twice
    c.routes[1].sap = 16;
    EXPECT_THROW(kiss_gateway{ c }, std::invalid_argument);
    c.routes.clear();
    EXPECT_THROW(kiss_gateway{ c }, std::invalid_argument);
}
