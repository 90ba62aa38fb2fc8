/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

/* ARQ data path throughput on one core: sender -> encode -> deframer -> receiver, and
 * the acknowledgement back through the codec, over a clean in-memory link. Prints
 * D_PDUs per second (the node engine target is >= 100,000).
 *   build/bench/bench_arq_link [number_of_cpdus]        (default 200,000) */
#include "dl/arq.h"
#include "dl/deframer.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>

using namespace gr::hfstack::dl;

int main(int argc, char** argv)
{
    const long cpdus = argc > 1 ? std::atol(argv[1]) : 200000;
    if (cpdus <= 0) {
        std::fprintf(stderr, "usage: bench_arq_link [number of C_PDUs > 0]\n");
        return 2;
    }
    std::mt19937 rng(5066);
    for (size_t segment : { size_t(200), size_t(1023) }) {
        arq_config cfg;
        cfg.segment_size = segment;
        arq_sender tx(cfg);
        arq_receiver rx;
        dpdu_deframer deframer;
        std::vector<received_dpdu> frames;
        bytes burst;
        long delivered = 0, dpdus = 0;
        const auto t0 = std::chrono::steady_clock::now();
        for (long i = 0; i < cpdus; ++i) {
            bytes c(1 + rng() % 2048);
            c[0] = uint8_t(i);
            tx.enqueue(std::move(c), true);
        }
        while (!tx.idle()) {
            burst.clear();
            for (auto& d : tx.next_transmission(128, 1 << 20)) {
                d.destination = 2;
                d.source = 1;
                encode_into(d, burst);
                ++dpdus;
            }
            frames.clear();
            deframer.push(burst.data(), burst.size(), frames);
            for (const auto& f : frames)
                rx.on_data(f.frame, f.segment_ok);
            delivered += long(rx.take_delivered().size());
            const bytes ack = encode(make_ack_only(rx.ack()));
            auto back = decode_dpdu(ack.data(), ack.size());
            tx.on_ack(ack_of(back.value));
            ++dpdus;
        }
        const double s =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        std::printf("segment %4zu bytes: %ld C_PDUs delivered, %ld D_PDUs in %.2f s = "
                    "%.0f D_PDUs/s (%.0f MB/s of C_PDU data)\n",
                    segment,
                    delivered,
                    dpdus,
                    s,
                    dpdus / s,
                    double(tx.counters().bytes_sent) / s / 1e6);
        if (delivered != cpdus)
            return 1;
    }
    return 0;
}
