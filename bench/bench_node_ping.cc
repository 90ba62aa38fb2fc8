/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

/* ARQ ping over two node engines in virtual time (the scenario of anchors.md A, "ARQ
 * ping"): a client on node A sends a small U_PDU to node B, whose client answers at once;
 * the round trip is timed from the request to the answer's indication at A. The first
 * ping includes making the link (and the first-contact window reset); the following
 * ones, 10 s apart, find the link up. Air time comes from default_waveform_timing (the
 * STANAG 4539 waveform tables), turnaround 1 s. build/bench/bench_node_ping [pings]
 * (default 5, modes 75S 150S 300S 600S 1200S 2400S 9600S) */
#include "dl/node_engine.h"
#include "sim/virtual_network.h"

#include <cstdio>
#include <cstdlib>
#include <string>

using namespace gr::hfstack;
using namespace gr::hfstack::dl;

int main(int argc, char** argv)
{
    const int pings = argc > 1 ? std::atoi(argv[1]) : 5;
    if (pings < 2) {
        std::fprintf(stderr, "usage: bench_node_ping [pings >= 2]\n");
        return 2;
    }
    std::printf("mode    first ping  later pings (mean, min, max) s\n");
    for (const char* mode :
         { "75S", "150S", "300S", "600S", "1200S", "2400S", "9600S" }) {
        sim::virtual_network net;
        for (uint32_t address : { 1u, 2u }) {
            node_config c;
            c.address = address;
            set_node_option(c, "mode", mode);
            net.add_node(c);
        }
        int answers = 0;
        net.on_client_message([&](size_t node, const client_message& m) {
            if (m.primitive.type == sis_type::keep_alive)
                net.client_send(node, m.client, m.primitive);
            if (m.primitive.type != sis_type::unidata_indication)
                return;
            if (node == 1) { // B answers at once
                sis_primitive reply;
                reply.type = sis_type::unidata_request;
                reply.destination = sis_address{ 1, 7 };
                reply.destination_sap = 5;
                reply.payload = m.primitive.payload;
                net.client_send(1, m.client, reply);
            } else {
                ++answers;
            }
        });
        sis_primitive bind;
        bind.type = sis_type::bind_request;
        bind.sap = 5;
        bind.service_type.tx_mode = sis_tx_mode::arq;
        net.client_send(0, 1, bind);
        net.client_send(1, 1, bind);
        double first = 0, sum = 0, lo = 1e9, hi = 0;
        for (int i = 0; i < pings; ++i) {
            sis_primitive ping;
            ping.type = sis_type::unidata_request;
            ping.destination = sis_address{ 2, 7 };
            ping.destination_sap = 5;
            ping.payload = bytes(64, uint8_t(i));
            const double t0 = net.now();
            net.client_send(0, 1, ping);
            if (!net.run_until([&] { return answers == i + 1; }, t0 + 3600)) {
                std::printf("%-6s  ping %d unanswered after 3600 s\n", mode, i);
                return 1;
            }
            const double rtt = net.now() - t0;
            if (i == 0) {
                first = rtt;
            } else {
                sum += rtt;
                lo = std::min(lo, rtt);
                hi = std::max(hi, rtt);
            }
            net.run_until(net.now() + 10.0);
        }
        std::printf(
            "%-6s  %9.1f  %6.1f %6.1f %6.1f\n", mode, first, sum / (pings - 1), lo, hi);
    }
    return 0;
}
