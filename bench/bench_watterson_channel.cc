/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

/* Watterson channel speed on one core, as multiples of real time (targets:
 * >= 500x at 9.6 kHz complex baseband with 2 paths and AWGN, >= 50x at 96 kHz).
 *   build/bench/bench_watterson_channel [seconds of signal per case]   (default 600) */
#include "chan/watterson_channel.h"

#include <chrono>
#include <complex>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

using namespace gr::hfstack::chan;

namespace {

constexpr size_t block = 4096; // a typical GNU Radio work() size

double seconds_since(std::chrono::steady_clock::time_point t0)
{
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

void run_complex(const std::string& profile, double fs, double signal_s)
{
    watterson_channel ch(watterson_preset(profile, fs, 10.0, 1));
    std::mt19937 rng(1);
    std::vector<std::complex<float>> in(block), out;
    for (auto& x : in)
        x = std::polar(1.0f, float(rng() % 8) * 0.785398f);
    const size_t blocks = size_t(signal_s * fs / double(block));
    const auto t0 = std::chrono::steady_clock::now();
    for (size_t b = 0; b < blocks; ++b) {
        out.clear();
        ch.process(in.data(), in.size(), out);
    }
    const double cpu = seconds_since(t0);
    const double simulated = double(blocks * block) / fs;
    std::printf("complex %-24s %6.0f Hz  %8.1fx real time  (%.1f Msamples/s)\n",
                profile.c_str(),
                fs,
                simulated / cpu,
                double(blocks * block) / cpu / 1e6);
}

void run_real(const std::string& profile, double fs, double signal_s)
{
    watterson_config c = watterson_preset(profile, fs, 10.0, 1);
    c.real_signal = true;
    c.signal_power = 0.5;
    watterson_channel ch(c);
    std::vector<float> in(block), out;
    for (size_t k = 0; k < block; ++k)
        in[k] = float(std::cos(6.283185307 * 1500.0 * double(k) / fs));
    const size_t blocks = size_t(signal_s * fs / double(block));
    const auto t0 = std::chrono::steady_clock::now();
    for (size_t b = 0; b < blocks; ++b) {
        out.clear();
        ch.process(in.data(), in.size(), out);
    }
    const double cpu = seconds_since(t0);
    const double simulated = double(blocks * block) / fs;
    std::printf("real    %-24s %6.0f Hz  %8.1fx real time  (%.1f Msamples/s)\n",
                profile.c_str(),
                fs,
                simulated / cpu,
                double(blocks * block) / cpu / 1e6);
}

} // namespace

int main(int argc, char** argv)
{
    const double signal_s = argc > 1 ? std::atof(argv[1]) : 600.0;
    if (!(signal_s > 0)) {
        std::fprintf(stderr,
                     "usage: bench_watterson_channel [seconds of signal per case > 0]\n");
        return 2;
    }
    // "poor" = F.1487 mid-latitude disturbed: 2 Rayleigh paths, 2 ms (19.2 samples at
    // 9.6 kHz: the fractional-delay filter runs), 1 Hz, plus AWGN at 10 dB.
    run_complex("awgn", 9600, signal_s);
    run_complex("poor", 9600, signal_s);
    run_complex("high_latitude_disturbed", 9600, signal_s);
    run_complex("poor", 96000, signal_s / 10);
    run_real("poor", 8000, signal_s);
    run_real("poor", 48000, signal_s / 5);
    return 0;
}
