/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

/* Node engine throughput on one core: two complete nodes (SIS in, S_PDU, C_PDU, ARQ,
 * D_PDU encode, simulated air, deframe, reassembly, SIS indication out) exchanging
 * ARQ traffic in virtual time over the channel model. Prints D_PDUs per second of
 * CPU time (issue target: >= 100,000) and how much faster than real time the
 * simulated link runs.
 *   build/bench/bench_node_engine [updus] [ber] [mode]     (default 20000 0 9600S) */
#include "dl/node_engine.h"
#include "sim/virtual_network.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>

using namespace gr::hfstack;
using namespace gr::hfstack::dl;

int main(int argc, char** argv)
{
    const long n = argc > 1 ? std::atol(argv[1]) : 20000;
    const double ber = argc > 2 ? std::atof(argv[2]) : 0.0;
    const std::string mode = argc > 3 ? argv[3] : "9600S";
    if (n <= 0 || ber < 0 || ber > 1) {
        std::fprintf(
            stderr,
            "usage: bench_node_engine [updus > 0] [ber 0..1] [mode, e.g. 2400S]\n");
        return 2;
    }
    sim::virtual_network net;
    sim::channel_config ch;
    ch.ber = ber;
    ch.seed = 7;
    net.set_channel_all(ch);
    for (uint32_t address : { 1u, 2u }) {
        node_config c;
        c.address = address;
        try {
            set_node_option(c, "mode", mode);
        } catch (const std::invalid_argument& e) {
            std::fprintf(stderr, "bench_node_engine: %s\n", e.what());
            return 2;
        }
        c.queue.max_total_bytes = 1u << 30;
        net.add_node(c);
    }
    long delivered = 0;
    net.on_client_message([&](size_t node, const client_message& m) {
        if (m.primitive.type == sis_type::keep_alive)
            net.client_send(node, m.client, m.primitive);
        delivered += m.primitive.type == sis_type::unidata_indication;
    });
    sis_primitive bind;
    bind.type = sis_type::bind_request;
    bind.sap = 5;
    bind.service_type.tx_mode = sis_tx_mode::arq;
    net.client_send(0, 1, bind);
    net.client_send(1, 1, bind);
    std::mt19937 rng(5066);
    long payload = 0;
    const auto t0 = std::chrono::steady_clock::now();
    for (long i = 0; i < n; ++i) {
        sis_primitive u;
        u.type = sis_type::unidata_request;
        u.destination = sis_address{ 2, 7 };
        u.destination_sap = 5;
        u.payload.resize(1 + rng() % 2048);
        payload += long(u.payload.size());
        net.client_send(0, 1, u);
    }
    const bool done = net.run_until([&] { return delivered >= n; }, 1e9);
    const double cpu =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const auto a = net.node(0).counters(), b = net.node(1).counters();
    const double dpdus = double(a.dpdus_sent + b.dpdus_sent);
    std::printf(
        "mode %s, BER %g: %ld of %ld U_PDUs (%ld bytes) delivered in %.0f s simulated\n",
        mode.c_str(),
        ber,
        delivered,
        n,
        payload,
        net.now());
    std::printf(
        "  %.0f D_PDUs (%llu retransmissions, %llu response timeouts) in %.3f s CPU: "
        "%.0f D_PDUs/s, %.0fx real time\n",
        dpdus,
        (unsigned long long)a.arq_retransmissions,
        (unsigned long long)a.response_timeouts,
        cpu,
        dpdus / cpu,
        net.now() / cpu);
    std::printf(
        "  link utilisation %.1f %% (U_PDU bits / (nominal rate x time))\n",
        100.0 * payload * 8 /
            (double(data_rate_bps(net.node(0).config().mode.data_rate)) * net.now()));
    return done ? 0 : 1;
}
