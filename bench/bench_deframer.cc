/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

/* Deframer throughput on one core. Prints MB/s for clean streams of small and
 * full-size D_PDUs and for a stream with bit errors and junk.
 *   build/bench/bench_deframer [megabytes]      (default 256 MB per case) */
#include "dl/deframer.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>

using namespace gr::hfstack::dl;

namespace {

bytes make_stream(size_t target, size_t segment, double ber, std::mt19937& rng)
{
    bytes stream;
    stream.reserve(target + max_dpdu_size);
    dpdu d;
    d.type = dpdu_type::data_only;
    d.destination = 0x1234;
    d.source = 0x5678;
    d.segment.resize(segment);
    for (auto& b : d.segment)
        b = uint8_t(rng());
    while (stream.size() < target) {
        d.tx_sequence = uint8_t(d.tx_sequence + 1);
        encode_into(d, stream);
    }
    if (ber > 0) {
        std::geometric_distribution<size_t> gap(ber);
        for (size_t bit = gap(rng); bit < stream.size() * 8; bit += 1 + gap(rng))
            stream[bit / 8] ^= uint8_t(1 << (bit % 8));
    }
    return stream;
}

void run(const char* name, const bytes& stream, size_t chunk)
{
    dpdu_deframer f;
    std::vector<received_dpdu> out;
    out.reserve(1 << 16);
    const auto t0 = std::chrono::steady_clock::now();
    for (size_t at = 0; at < stream.size(); at += chunk) {
        f.push(stream.data() + at, std::min(chunk, stream.size() - at), out);
        out.clear(); // a real receiver hands these on
    }
    const double s =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const auto& c = f.counters();
    std::printf("%-34s %8.1f MB/s  %9llu D_PDUs  %7llu damaged  %7llu header CRC  %9llu "
                "junk bytes\n",
                name,
                stream.size() / s / 1e6,
                (unsigned long long)c.dpdus,
                (unsigned long long)c.damaged_segments,
                (unsigned long long)c.header_crc_errors,
                (unsigned long long)c.junk_bytes);
}

} // namespace

int main(int argc, char** argv)
{
    const double mb = argc > 1 ? std::atof(argv[1]) : 256;
    if (!(mb > 0)) {
        std::fprintf(stderr, "usage: bench_deframer [megabytes > 0]\n");
        return 2;
    }
    const size_t size = size_t(mb * 1e6);
    std::mt19937 rng(5066);
    std::printf("deframer throughput, one core, %.0f MB per case, 64 KiB chunks\n", mb);
    run("1023-byte segments, clean", make_stream(size, 1023, 0, rng), 65536);
    run("200-byte segments, clean", make_stream(size, 200, 0, rng), 65536);
    run("1023-byte segments, BER 1e-4", make_stream(size, 1023, 1e-4, rng), 65536);
    run("1023-byte segments, clean, 1 KiB chunks", make_stream(size, 1023, 0, rng), 1024);
    return 0;
}
