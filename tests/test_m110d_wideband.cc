/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

// STANAG 5069 (110D App D) at every bandwidth of Table D-I: every WN of every
// bandwidth, shaped at the modem's rate (4 samples a symbol, m110d_sample_rate) or a
// radio's (resampled by the front end), goes through a carrier offset, without noise
// and at 40 dB, and the receiver configured for that bandwidth gives back the bytes,
// the EOM, the mode's name and the offset; the receiver refuses a bandwidth Appendix D
// lacks; the front end refuses a sample rate that cannot hold the bandwidth.
// Short interleavers and short payloads keep the run modest.
#include "chan/watterson_channel.h"
#include "phy/differential_products.h"
#include "phy/m110d_receiver.h"
#include "phy/m110d_transmitter.h"
#include "phy/psk_modulator.h"
#include "phy/serial_tone_frontend.h"

#include "modem_test_support.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <vector>

using namespace gr::hfstack;
using namespace gr::hfstack::phy;
using cf = std::complex<float>;

namespace {

constexpr unsigned bandwidths[] = { 3, 6, 9, 12, 15, 18, 21, 24, 30, 36, 42, 48 };

void expect_whole(const std::vector<m110d_burst>& bursts,
                  const m110d_mode& mode,
                  const std::vector<uint8_t>& data,
                  double offset_hz,
                  const std::string& what)
{
    ASSERT_EQ(bursts.size(), 1u) << what;
    EXPECT_EQ(bursts[0].mode, mode.name()) << what;
    EXPECT_TRUE(bursts[0].eom) << what;
    EXPECT_FALSE(bursts[0].bytes_bad) << what;
    EXPECT_EQ(bursts[0].bytes, data) << what;
    EXPECT_NEAR(bursts[0].frequency_offset_hz, offset_hz, 0.5 + 1e-4 * mode.symbol_rate())
        << what;
}

// Every WN of a bandwidth (ultra-short interleaver; WN0 short), noise-free or at 40 dB,
// with an offset of `offset_hz`.
void every_wn_round_trips(unsigned bw, double snr_db, double offset_hz)
{
    for (const m110d_mode& mode : m110d_modes_at(bw)) {
        const auto shortest =
            mode.wn == 0 ? m110d_interleaver::short_ : m110d_interleaver::ultra_short;
        if (mode.interleaver != shortest)
            continue;
        const std::vector<uint8_t> data = random_bytes(12 + mode.wn, 1000 * bw + mode.wn);
        const std::string what =
            mode.name() + " at " + std::to_string(int(snr_db)) + " dB";
        expect_whole(m110d_bursts_received(
                         m110d_on_the_air(mode, data, 0, snr_db, offset_hz, bw + mode.wn),
                         mode,
                         0),
                     mode,
                     data,
                     offset_hz,
                     what);
    }
}

// ITU-R F.1487 poor: two equal 1 Hz Rayleigh paths 2 ms apart.
std::vector<chan::watterson_path> f1487_poor_paths()
{
    return { { 0.5, 1.0, 0.0, 0.0 }, { 0.5, 1.0, 0.0, 2e-3 } };
}

// `blocks` interleaver blocks of random data (seed `data_seed`) over F.1487 poor at
// `snr_db` (channel seed `seed`): one burst, ended by its EOM, read whole.
void expect_poor_burst_whole(const m110d_mode& mode,
                             double snr_db,
                             uint64_t seed,
                             size_t blocks,
                             uint32_t data_seed)
{
    const std::vector<uint8_t> data =
        random_bytes(mode.input_bits_per_block / 8 * blocks, data_seed);
    const std::vector<m110d_burst> bursts = m110d_bursts_received(
        m110d_on_the_air(mode, data, 0, snr_db, 0, seed, {}, f1487_poor_paths()),
        mode,
        0);
    ASSERT_EQ(bursts.size(), 1u) << seed;
    EXPECT_TRUE(bursts[0].eom) << seed;
    EXPECT_EQ(bursts[0].bytes, data) << seed;
}

} // namespace

// One test per bandwidth so ctest -j spreads them: noise-free and 40 dB, offsets of a
// few Hz (either sign) to about 1 % of the symbol rate.
class M110dWideband : public ::testing::TestWithParam<unsigned>
{
};

// Why a front end with this configuration is refused ("" when it is accepted).
std::string frontend_refusal(const serial_tone_frontend_config& fc)
{
    try {
        serial_tone_frontend front(fc);
    } catch (const std::invalid_argument& e) {
        return e.what();
    }
    return "";
}

TEST_P(M110dWideband, EveryWnRoundTripsNoiseFreeAndAt40DbWithAnOffset)
{
    const unsigned bw = GetParam();
    every_wn_round_trips(bw, std::numeric_limits<double>::infinity(), 25.0 * bw / 3);
    every_wn_round_trips(bw, 40, -7.0 - bw);
}

INSTANTIATE_TEST_SUITE_P(EveryBandwidth,
                         M110dWideband,
                         ::testing::ValuesIn(bandwidths),
                         [](const ::testing::TestParamInfo<unsigned>& p) {
                             return std::to_string(p.param) + "kHz";
                         });

// A radio's rate, resampled: 48 kHz at 96 kS/s (5/2 samples a symbol, the modulator
// shaping straight at it; the front end resampling to 153.6 kHz) and at 250 kS/s, 6 kHz
// at 48 kS/s; K = 9, the alternative readings and the capped preamble Walsh symbols
// too.
TEST(M110dWidebandRates, RadioRatesAreResampled)
{
    struct row {
        const char* mode;
        double fs;
    };
    for (const row& r : { row{ "WN12/48kHz/US", 96000 },
                          row{ "WN6/48kHz/US", 250000 },
                          row{ "WN8/6kHz/US", 48000 },
                          row{ "WN10/36kHz/S", 100000 } }) {
        const m110d_mode mode = *m110d_mode_by_name(r.mode);
        const std::vector<uint8_t> data = random_bytes(300, 77);
        const std::string what =
            std::string(r.mode) + " at " + std::to_string(int(r.fs)) + " Hz";
        expect_whole(m110d_bursts_received(
                         m110d_on_the_air(mode, data, r.fs, 40, 31, 5), mode, r.fs),
                     mode,
                     data,
                     31,
                     what);
    }
    const m110d_mode mode = *m110d_mode_by_name("WN7/42kHz/US");
    m110d_transmit_options o;
    o.constraint_length = 9;
    o.readings.preamble_walsh = m110d_preamble_walsh::capped;
    o.readings.pn_alignment = m110d_pn_alignment::continuous;
    o.timing.preamble.superframes = 3;
    m110d_receiver_config c;
    c.readings = o.readings;
    const std::vector<uint8_t> data = random_bytes(200, 78);
    expect_whole(
        m110d_bursts_received(m110d_on_the_air(mode, data, 0, 40, -60, 6, o), mode, 0, c),
        mode,
        data,
        -60,
        "WN7/42kHz/US K9 capped continuous M3");
    // Told the other preamble Walsh reading, the receiver finds nothing.
    c.readings.preamble_walsh = m110d_preamble_walsh::scaled;
    EXPECT_TRUE(
        m110d_bursts_received(m110d_on_the_air(mode, data, 0, 40, -60, 6, o), mode, 0, c)
            .empty());
}

TEST(M110dWidebandRates, BadBandwidthsAndRatesAreRefused)
{
    m110d_receiver_config c;
    for (unsigned bw : { 0u, 4u, 27u, 51u }) {
        c.bandwidth_khz = bw;
        try {
            m110d_receiver rx(c);
            ADD_FAILURE() << bw << " kHz accepted";
        } catch (const std::invalid_argument& e) {
            EXPECT_NE(std::string(e.what()).find("bandwidth_khz " + std::to_string(bw)),
                      std::string::npos)
                << e.what();
        }
    }
    serial_tone_frontend_config fc;
    fc.real_input = false;
    fc.symbol_rate = 38400;
    fc.sample_rate = 9600;
    EXPECT_NE(frontend_refusal(fc).find("cannot hold a 38400 Bd signal"),
              std::string::npos)
        << "9600 Hz for 38400 Bd: " << frontend_refusal(fc);
    fc.sample_rate = 51000; // under the RRC-0.35 band, 1.35 symbol rates (51840 Hz)
    EXPECT_THROW(serial_tone_frontend front(fc), std::invalid_argument);
    fc.sample_rate = 51840;
    EXPECT_NO_THROW(serial_tone_frontend front(fc));
    fc.real_input = true; // 48 kHz on 24.3 kHz: the RRC-0.35 band reaches below 0 Hz
    fc.carrier_hz = 24300;
    fc.sample_rate = 192000;
    EXPECT_NE(frontend_refusal(fc).find("below 0 Hz"), std::string::npos)
        << "real 48 kHz: " << frontend_refusal(fc);
    fc.symbol_rate = 4800; // 6 kHz on 3.3 kHz fits, at 13.08 kHz or more
    fc.carrier_hz = 3300;
    fc.sample_rate = 12000;
    EXPECT_THROW(serial_tone_frontend front(fc), std::invalid_argument);
    fc.sample_rate = 48000;
    EXPECT_NO_THROW(serial_tone_frontend front(fc));
}

// A long burst at 48 kHz (2 s of WN12, 84 blocks): the frequency loop holds the offset.
// Its gains are per check of 48 symbols; at 16 times 2400 Bd, unscaled, it rang and lost
// the burst within a second (serial_tone_channel.cc, follow_channel).
TEST(M110dWidebandRates, LongBurstAt48kHzHoldsItsOffset)
{
    const m110d_mode mode = *m110d_mode_by_name("WN12/48kHz/US");
    const std::vector<uint8_t> data = random_bytes(60000, 79);
    const std::vector<m110d_burst> bursts =
        m110d_bursts_received(m110d_on_the_air(mode, data, 0, 40, 45, 7), mode, 0);
    expect_whole(bursts, mode, data, 45, "WN12/48kHz/US, 60000 bytes");
}

namespace {
// 640 random 8PSK symbols (bytes from `seed`).
std::vector<cf> random_8psk_sequence(uint32_t seed)
{
    std::vector<cf> known;
    for (const uint8_t b : random_bytes(640, seed))
        known.push_back(std::polar(1.0f, float(b % 8) * 0.785398163f));
    return known;
}

// `samples` of uniform noise after 3000 of silence (noise seed `seed`), `known` at
// sample 20001, 4 samples a symbol, turning slowly.
std::vector<cf>
known_sequence_in_noise(const std::vector<cf>& known, size_t samples, uint32_t seed)
{
    std::vector<cf> x(samples);
    uint32_t state = seed;
    const auto noise = [&state] {
        state = state * 1664525u + 1013904223u;
        return float(state >> 8) / float(1u << 24) - 0.5f;
    };
    for (size_t i = 0; i < x.size(); ++i)
        x[i] = i < 3000 ? cf() : cf(noise(), noise());
    for (size_t k = 0; k < known.size(); ++k)
        for (size_t j = 0; j < 4; ++j)
            x[20001 + 4 * k + j] += 0.3f * known[k] * std::polar(1.0f, 0.01f * float(k));
    return x;
}
} // namespace

// The search's correlation by FFT (differential_correlator with fft, as the App D
// receiver's above 3 kHz): the same z as the dot product to rounding at every sample,
// exactly the dot product's from exact_from up, and 0 over silence before a strong
// signal (where the FFT's rounding, relative to the block, would be all there is).
TEST(M110dWidebandSearch, FftCorrelationIsTheDotProducts)
{
    const std::vector<cf> known = random_8psk_sequence(80);
    const std::vector<cf> x = known_sequence_in_noise(known, 40000, 81);
    const double exact_from = 3.5;
    differential_correlator direct(known, 4096), fft(known, 4096, true, exact_from);
    ASSERT_TRUE(fft.uses_fft());
    EXPECT_FALSE(direct.uses_fft());
    serial_tone_samples input(9600 * 16);
    // In pieces, as a receiver gets them: the FFT's blocks take what the input holds.
    size_t fed = 0, largest_at = 0;
    double largest = 0;
    for (uint64_t n = 4; n + 4 * known.size() + 4 < x.size(); ++n) {
        while (fed < x.size() && fed < n + 4 * known.size() + 1 + 1000) {
            const size_t piece = std::min<size_t>(960, x.size() - fed);
            input.append(x.data() + fed, piece);
            fed += piece;
        }
        cf a, b;
        const double za = direct.z_at(input, n, a), zb = fft.z_at(input, n, b);
        ASSERT_NEAR(zb, za, 1e-3 * std::max(1.0, za)) << "sample " << n;
        if (za >= exact_from + 0.01) {
            ASSERT_EQ(za, zb) << "sample " << n;
            ASSERT_EQ(a, b) << "sample " << n;
        }
        if (n + 4 * known.size() < 3000) {
            ASSERT_EQ(zb, 0.0) << "sample " << n;
        }
        if (za > largest) {
            largest = za;
            largest_at = n;
        }
    }
    EXPECT_EQ(largest_at, 20001u);
    EXPECT_GT(largest, 8.0);
}

// The FFT correlation over a run of samples with its polyphases on two threads
// (z_run): every z and sum as z_at one sample at a time gives them, over runs of
// several lengths fed in pieces (the FFT's blocks take what the input holds), the
// products' window moving under them and starting afresh after a jump.
TEST(M110dWidebandSearch, FftCorrelationOnTwoThreadsIsOneAtATimes)
{
    const std::vector<cf> known = random_8psk_sequence(82);
    const std::vector<cf> x = known_sequence_in_noise(known, 60000, 83);
    differential_correlator one(known, 2048, true, 3.5), two(known, 2048, true, 3.5);
    serial_tone_samples input(9600 * 16);
    size_t fed = 0, runs = 0;
    uint64_t n = 4;
    const size_t lengths[] = { 300, 1500, 37, 3000, 700, 256, 2999 };
    while (n + 4 * known.size() + 4 + 3000 < x.size()) {
        const size_t count = lengths[runs++ % 7];
        while (fed < x.size() && fed < n + count + 4 * known.size() + 1 + 500) {
            const size_t piece = std::min<size_t>(960, x.size() - fed);
            input.append(x.data() + fed, piece);
            fed += piece;
        }
        std::vector<double> z(count, -1);
        std::vector<cf> sums(count);
        two.z_run(
            input,
            n,
            count,
            [&](size_t i, double zi, cf sum) {
                z[i] = zi;
                sums[i] = sum;
            },
            true);
        for (size_t i = 0; i < count; ++i) {
            cf sum;
            const double zi = one.z_at(input, n + i, sum);
            ASSERT_EQ(z[i], zi) << "sample " << n + i;
            ASSERT_EQ(sums[i], sum) << "sample " << n + i;
        }
        n += count;
        if (runs == 9)
            n += 20000; // far ahead: the products start afresh
    }
    EXPECT_GT(runs, 12u);
}

// The receiver with the FFT search (default) and with dot products (fft_search false)
// reports the same bursts: the same start, bytes, offset and SNR (the detection's z and
// sum are the dot product's), at 12 kHz with one super-frame and at 24 kHz with three
// (the comb's sections from the FFT: the same start and bytes, the offset to rounding).
TEST(M110dWidebandSearch, FftSearchFindsWhatDotProductsFind)
{
    struct row {
        const char* mode;
        unsigned superframes;
        double snr_db;
    };
    for (const row& r : { row{ "WN6/12kHz/US", 1, 8 }, row{ "WN2/24kHz/S", 3, -1 } }) {
        const m110d_mode mode = *m110d_mode_by_name(r.mode);
        m110d_transmit_options o;
        o.timing.preamble.superframes = r.superframes;
        const std::vector<uint8_t> data = random_bytes(400, 82);
        std::vector<cf> air = m110d_on_the_air(mode, data, 0, r.snr_db, 17, 8, o);
        const std::vector<cf> again = m110d_on_the_air(mode, data, 0, r.snr_db, 17, 9, o);
        air.insert(air.end(), again.begin(), again.end()); // two bursts
        m110d_receiver_config c;
        const std::vector<m110d_burst> by_fft = m110d_bursts_received(air, mode, 0, c);
        c.fft_search = false;
        const std::vector<m110d_burst> by_dot = m110d_bursts_received(air, mode, 0, c);
        ASSERT_EQ(by_fft.size(), 2u) << r.mode;
        ASSERT_EQ(by_dot.size(), by_fft.size()) << r.mode;
        for (size_t i = 0; i < by_fft.size(); ++i) {
            EXPECT_EQ(by_fft[i].start_sample, by_dot[i].start_sample) << r.mode;
            EXPECT_EQ(by_fft[i].bytes, by_dot[i].bytes) << r.mode;
            EXPECT_EQ(by_fft[i].eom, by_dot[i].eom) << r.mode;
            EXPECT_EQ(by_fft[i].bytes, data) << r.mode;
            if (r.superframes == 1) {
                EXPECT_EQ(by_fft[i].frequency_offset_hz, by_dot[i].frequency_offset_hz)
                    << r.mode;
                EXPECT_EQ(by_fft[i].snr_db, by_dot[i].snr_db) << r.mode;
            } else {
                EXPECT_NEAR(
                    by_fft[i].frequency_offset_hz, by_dot[i].frequency_offset_hz, 1e-3)
                    << r.mode;
            }
        }
    }
}

// The equaliser's default span per bandwidth (m110d_delay_spread_symbols): 2 ms at the
// symbol rate plus 8 symbols, 13 at 3 kHz as before.
TEST(M110dWidebandSpan, DefaultSpanScalesWithTheSymbolRate)
{
    EXPECT_EQ(m110d_delay_spread_symbols(3), 13u);
    EXPECT_EQ(m110d_delay_spread_symbols(6), 18u);
    EXPECT_EQ(m110d_delay_spread_symbols(9), 23u);
    EXPECT_EQ(m110d_delay_spread_symbols(12), 28u);
    EXPECT_EQ(m110d_delay_spread_symbols(24), 47u);
    EXPECT_EQ(m110d_delay_spread_symbols(48), 85u);
    EXPECT_EQ(m110d_delay_spread_symbols(48, 0.5), 28u);
    EXPECT_EQ(m110d_receiver_config{}.max_delay_spread_symbols, 0u); // by bandwidth
}

// F.1487 poor's two paths 2 ms apart at 12 kHz (19.2 symbols): with the default span
// (28) bursts come through, static and fading; with 3 kHz's 13 symbols (1.35 ms here)
// the MMSE-DFE misses the later path and they do not. The block frequency-domain
// equaliser (the default above 3 kHz) measures the data's channel on the probes, over
// every delay they reach, whatever the span.
TEST(M110dWidebandSpan, TwoPathsTwoMillisecondsApartAt12kHz)
{
    const m110d_mode mode = *m110d_mode_by_name("WN6/12kHz/S");
    const std::vector<uint8_t> data = random_bytes(6000, 83);
    const std::vector<chan::watterson_path> still = { { 1.0, 0.0, 0.0, 0.0 },
                                                      { 1.0, 0.0, 0.0, 2e-3 } };
    const std::vector<chan::watterson_path> poor = { { 1.0, 1.0, 0.0, 0.0 },
                                                     { 1.0, 1.0, 0.0, 2e-3 } };
    for (const auto* paths : { &still, &poor }) {
        const std::string what = paths == &still ? "static" : "fading";
        const std::vector<cf> air =
            m110d_on_the_air(mode, data, 0, 20, 5, 10, {}, *paths);
        expect_whole(
            m110d_bursts_received(air, mode, 0), mode, data, 5, what + ", default span");
        m110d_receiver_config narrow;
        narrow.max_delay_spread_symbols = 13;
        expect_whole(m110d_bursts_received(air, mode, 0, narrow),
                     mode,
                     data,
                     5,
                     what + ", 13 symbols, block FDE");
        narrow.data_equaliser = m110d_data_equaliser::mmse_dfe;
        const std::vector<m110d_burst> missed =
            m110d_bursts_received(air, mode, 0, narrow);
        EXPECT_TRUE(missed.empty() || missed[0].bytes != data || missed[0].bytes_bad)
            << what << ", 13 symbols, MMSE-DFE";
    }
}

// The paths trade places within the preamble (M = 20): the super-frame comb finds the
// preamble super-frames before its last, timed on the first path, strong then; at the
// last super-frame, where the channel is measured, that path is 20 dB under the other,
// 2 ms (19 symbols) later at 12 kHz. The measurement must reach the later path: at +-16
// symbols it spread over every tap, none cleared the noise floor and the burst went to
// a one-tap equaliser, received wholly wrong (F.1487 poor at D-LXIV's rows - 1 dB, 12
// kHz, channel seed 1: WN5-WN8 each lost a burst so).
TEST(M110dWidebandSpan, PathsTradingPlacesWithinThePreambleAt12kHz)
{
    const m110d_mode mode = *m110d_mode_by_name("WN5/12kHz/S");
    const std::vector<uint8_t> data = random_bytes(3000, 84);
    m110d_transmit_options options;
    options.timing.preamble.superframes = 20;
    // 3 s into the 4.8 s preamble.
    const std::vector<cf> air =
        m110d_on_the_air(mode,
                         data,
                         0,
                         20,
                         0,
                         7,
                         options,
                         { { 1.0, 0.0, 0.0, 0.0 }, { 0.01, 0.0, 0.0, 2e-3 } },
                         { { 0.01, 0.0, 0.0, 0.0 }, { 1.0, 0.0, 0.0, 2e-3 } },
                         3.1);
    expect_whole(
        m110d_bursts_received(air, mode, 0), mode, data, 0, "paths traded at 3 s");
}

// D-LXV's static multipath rows the MMSE-DFE failed above 3 kHz (a path beyond its span,
// or four paths to 5 ms), through the block frequency-domain equaliser, the default
// there: each at its 3 kHz test's SNR, a short interleaver to keep the run short, with
// the channel's paths measured on the probes at whatever delay they lie.
TEST(M110dWidebandBlockFde, StaticMultipathRowsOfDLxvBeyondTheDfeSpan)
{
    struct row {
        const char* mode;
        std::vector<double> delays_ms;
        double snr_db;
    };
    const row rows[] = {
        { "WN2/6kHz/S", { 0, 2, 9 }, 15 },
        { "WN10/6kHz/S", { 0, 1.5, 3, 5 }, 30 },
        { "WN10/9kHz/S", { 0, 2, 4.5 }, 30 },
        { "WN2/12kHz/S", { 0, 2.5, 8.5 }, 15 },
        { "WN10/12kHz/S", { 0, 1.5, 3, 5 }, 30 },
        { "WN5/24kHz/S", { 0, 2.5, 5.5 }, 15 },
        { "WN10/48kHz/US", { 0, 1.5, 3, 4 }, 30 },
    };
    for (const row& r : rows) {
        const m110d_mode mode = *m110d_mode_by_name(r.mode);
        const std::vector<uint8_t> data = random_bytes(mode.input_bits_per_block / 4, 90);
        std::vector<chan::watterson_path> paths;
        for (double d : r.delays_ms)
            paths.push_back({ 1.0, 0.0, 0.0, d * 1e-3 });
        const std::vector<cf> air =
            m110d_on_the_air(mode, data, 0, r.snr_db, 3, 11, {}, paths);
        expect_whole(m110d_bursts_received(air, mode, 0), mode, data, 3, r.mode);
    }
}

// A burst the block FDE is receiving that stops halfway (the transmitter cut off) ends
// in the noise after it and is reported, cut and flagged: no path above the noise, no
// probe predicted, the signal counted gone.
TEST(M110dWidebandBlockFde, ABurstCutOffEndsInTheNoise)
{
    const m110d_mode mode = *m110d_mode_by_name("WN5/24kHz/S");
    const std::vector<uint8_t> data = random_bytes(mode.input_bits_per_block / 2, 91);
    std::vector<cf> air = m110d_on_the_air(mode, data, 0, 25, 0, 12);
    const size_t cut = air.size() / 2;
    std::mt19937 rng(13);
    std::normal_distribution<float> noise(0.0f, 0.02f);
    for (size_t i = cut; i < air.size(); ++i)
        air[i] = cf(noise(rng), noise(rng));
    air.resize(air.size() + size_t(3 * m110d_sample_rate(mode.bw_khz)), cf());
    for (size_t i = air.size() - size_t(3 * m110d_sample_rate(mode.bw_khz));
         i < air.size();
         ++i)
        air[i] = cf(noise(rng), noise(rng));
    const std::vector<m110d_burst> bursts = m110d_bursts_received(air, mode, 0);
    ASSERT_EQ(bursts.size(), 1u);
    EXPECT_EQ(bursts[0].mode, mode.name());
    EXPECT_FALSE(bursts[0].eom);
    EXPECT_TRUE(bursts[0].bytes_bad);
}

// The block FDE reports the channel's SNR, not its linear estimate's error: on F.1487
// poor (two equal 1 Hz Rayleigh paths 2 ms apart) at 12 kHz and 20 dB that error, ruled
// by the bins in the paths' spectral nulls, read 13-15 dB; the channel's energy over
// the noise reads as the MMSE-DFE's does, the chunks' mean in dB a little under the SNR
// set (about 1.2 dB for two Rayleigh paths). On AWGN both readings are the SNR set.
TEST(M110dWidebandBlockFde, ReportsTheChannelsSnrOnFading)
{
    const m110d_mode mode = *m110d_mode_by_name("WN6/12kHz/S");
    const std::vector<uint8_t> data = random_bytes(30000, 94);
    const std::vector<chan::watterson_path> poor = f1487_poor_paths();
    for (uint64_t seed : { 21u, 22u }) {
        const std::vector<m110d_burst> steady =
            m110d_bursts_received(m110d_on_the_air(mode, data, 0, 20, 0, seed), mode, 0);
        ASSERT_EQ(steady.size(), 1u) << seed;
        EXPECT_NEAR(steady[0].snr_db, 20.0, 1.0) << seed;
        const std::vector<m110d_burst> fading = m110d_bursts_received(
            m110d_on_the_air(mode, data, 0, 20, 0, seed, {}, poor), mode, 0);
        ASSERT_EQ(fading.size(), 1u) << seed;
        EXPECT_GT(fading[0].snr_db, 17.0) << seed << ": " << fading[0].snr_db;
        EXPECT_LT(fading[0].snr_db, 21.0) << seed << ": " << fading[0].snr_db;
    }
}

// F.1487 poor at 12 kHz (two 1 Hz Rayleigh paths 2 ms apart, 19.2 symbols): the probe
// reaches a whole base period (64 symbols), so a path read from the wrong window is an
// alias 64 symbols off. Where the path the preamble's timing sat on was in a fade at the
// first frames, a window or grid moved onto the later path read the earlier one, back,
// as an alias after it; now the window stays where the first frame placed it (the
// middle of the clean placements) until the paths' profile holds 2 s. These seeds lost
// their bursts before (12 of 30 seeds lost then, 2 now).
TEST(M110dWidebandBlockFde, AnEarlierPathBackFromAFadeIsNotReadAsAnAlias)
{
    const m110d_mode mode = *m110d_mode_by_name("WN3/12kHz/S");
    for (uint64_t seed : { 11u, 13u, 14u, 19u, 21u })
        expect_poor_burst_whole(mode, 6, seed, 3, uint32_t(100 + seed));
}

// F.1487 poor at 12 kHz and 30 dB (WN10's row - 1 dB): the two 1 Hz paths move too far
// across a frame (120 ms between its probes) for 64QAM to be read on their mean; the
// block FDE follows each path as a straight line between the probes, bent as the
// frame's decisions show. On the mean alone these seeds' bursts lost 9563-13959 bits;
// on the line alone 21, 217, 7 and 60 (the MMSE-DFE, which tracks every symbol, read
// them whole).
TEST(M110dWidebandBlockFde, PathsFollowedAcrossTheFrameFor64QamOnFading)
{
    const m110d_mode mode = *m110d_mode_by_name("WN10/12kHz/S");
    const std::vector<chan::watterson_path> poor = f1487_poor_paths();
    for (uint64_t seed : { 34u, 40u, 45u, 48u }) {
        const std::vector<uint8_t> data =
            random_bytes(mode.input_bits_per_block / 8 * 4, uint32_t(200 + seed));
        const std::vector<m110d_burst> bursts = m110d_bursts_received(
            m110d_on_the_air(mode, data, 0, 30, 0, seed, {}, poor), mode, 0);
        ASSERT_EQ(bursts.size(), 1u) << seed;
        EXPECT_TRUE(bursts[0].eom) << seed;
        ASSERT_EQ(bursts[0].bytes.size(), data.size()) << seed;
        size_t wrong = 0;
        for (size_t i = 0; i < data.size(); ++i)
            wrong += size_t(__builtin_popcount(unsigned(bursts[0].bytes[i] ^ data[i])));
        EXPECT_EQ(wrong, 0u) << seed;
    }
}

// F.1487 poor at 12 kHz for WN2 (paths 20 symbols apart; the probe's window reaches 92
// symbols of a base of 100, so a path beyond it reads as another delay modulo 100). At
// 3 dB the data the first frame's windows let in are under the noise and every window
// measures as clean: the cleanest, the latest, read the later path 80 symbols early,
// and the window followed that reading and lost the burst. The middle of the clean
// windows holds both paths.
TEST(M110dWidebandBlockFde, TheFirstWindowIsTheMiddleOfTheCleanOnesAtLowSnr)
{
    expect_poor_burst_whole(*m110d_mode_by_name("WN2/12kHz/L"), 3, 42, 1, 300 + 42);
}

// The same channel at 4 dB (the row - 1 dB): a window a few symbols before the first
// path read an earlier path, back from a fade, 80 symbols late (these seeds: 257 bits
// wrong, lost, lost, 2427 wrong); the window is centred on the paths.
TEST(M110dWidebandBlockFde, TheWindowIsCentredOnThePathsWhereItLacksABasePeriod)
{
    for (uint64_t seed : { 10u, 23u, 34u, 36u })
        expect_poor_burst_whole(
            *m110d_mode_by_name("WN2/12kHz/L"), 4, seed, 1, uint32_t(300 + seed));
}

namespace {

// The bursts and tapped symbols of one receiver over `air` in 10 ms pieces, with
// `threads` threads (what is still decoding at the end completed).
void receive_with_threads(const std::vector<cf>& air,
                          unsigned bandwidth_khz,
                          unsigned threads,
                          std::vector<m110d_burst>& bursts,
                          std::vector<cf>& tapped)
{
    m110d_receiver_config config;
    config.bandwidth_khz = bandwidth_khz;
    config.threads = threads;
    m110d_receiver rx(config);
    rx.tap_symbols(&tapped);
    const size_t piece = size_t(m110d_sample_rate(bandwidth_khz) / 100);
    for (size_t k = 0; k < air.size(); k += piece)
        rx.process(air.data() + k, std::min(piece, air.size() - k), bursts);
    rx.complete_decoding(bursts);
}

void expect_threads_agree(const std::vector<cf>& air,
                          unsigned bandwidth_khz,
                          size_t least_bursts,
                          const std::string& what)
{
    std::vector<m110d_burst> bursts[2];
    std::vector<cf> tapped[2];
    for (unsigned threads : { 1u, 2u })
        receive_with_threads(
            air, bandwidth_khz, threads, bursts[threads - 1], tapped[threads - 1]);
    ASSERT_GE(bursts[0].size(), least_bursts) << what;
    ASSERT_EQ(bursts[1].size(), bursts[0].size()) << what;
    for (size_t b = 0; b < bursts[0].size(); ++b) {
        EXPECT_EQ(bursts[1][b].mode, bursts[0][b].mode) << what;
        EXPECT_EQ(bursts[1][b].start_sample, bursts[0][b].start_sample) << what;
        EXPECT_EQ(bursts[1][b].bytes, bursts[0][b].bytes) << what;
        EXPECT_EQ(bursts[1][b].eom, bursts[0][b].eom) << what;
        EXPECT_EQ(bursts[1][b].bytes_bad, bursts[0][b].bytes_bad) << what;
        EXPECT_EQ(bursts[1][b].least_reliability, bursts[0][b].least_reliability) << what;
        EXPECT_EQ(bursts[1][b].unreliable_blocks, bursts[0][b].unreliable_blocks) << what;
        EXPECT_EQ(bursts[1][b].snr_db, bursts[0][b].snr_db) << what;
        EXPECT_EQ(bursts[1][b].snr_db_recent, bursts[0][b].snr_db_recent) << what;
        EXPECT_EQ(bursts[1][b].frequency_offset_hz, bursts[0][b].frequency_offset_hz)
            << what;
        EXPECT_EQ(bursts[1][b].readings, bursts[0][b].readings) << what;
    }
    EXPECT_TRUE(tapped[1] == tapped[0]) << what;
}

} // namespace

// Two threads decode each interleaver block beside the next block's frames, applying
// what those feed back in one thread's order: the same bursts, bits, reliabilities, SNR
// and tapped symbols as one thread where a burst ends mid-stream at its EOM with
// another after it, where its signal is lost, and where a new preamble cuts it.
TEST(M110dWidebandBlockFde, TwoThreadsEndBurstsWhereOneDoes)
{
    const m110d_mode mode = *m110d_mode_by_name("WN8/24kHz/S");
    const unsigned bw = mode.bw_khz;
    const double rate = m110d_sample_rate(bw);
    const std::vector<uint8_t> first =
        random_bytes(mode.input_bits_per_block * 5 / 16, 93);
    const std::vector<uint8_t> second = random_bytes(mode.input_bits_per_block / 4, 94);
    const std::vector<chan::watterson_path> fading = { { 0.5, 1, 0, 0 },
                                                       { 0.5, 1, 0, 1e-3 } };
    // EOM mid-stream, the next burst 0.3 s after (fading, then AWGN).
    std::vector<cf> air = m110d_on_the_air(mode, first, 0, 24, 3, 21, {}, fading);
    std::vector<cf> next = m110d_on_the_air(mode, second, 0, 30, -5, 22);
    air.insert(air.end(), next.begin(), next.end());
    expect_threads_agree(air, bw, 2, "EOM then another burst");
    // The signal lost half-way (noise after it), then a burst.
    std::vector<cf> lost = m110d_on_the_air(mode, first, 0, 30, 0, 23);
    std::mt19937 rng(17);
    std::normal_distribution<float> noise(0.0f, 0.02f);
    for (size_t i = lost.size() / 2; i < lost.size(); ++i)
        lost[i] = cf(noise(rng), noise(rng));
    for (size_t i = 0; i < size_t(3 * rate); ++i)
        lost.push_back(cf(noise(rng), noise(rng)));
    lost.insert(lost.end(), next.begin(), next.end());
    expect_threads_agree(lost, bw, 2, "signal lost");
    // A burst cut by the next one's preamble (no EOM, no gap).
    std::vector<cf> cut = m110d_on_the_air(mode, first, 0, 30, 0, 24);
    cut.resize(cut.size() * 2 / 3);
    cut.insert(cut.end(), next.begin(), next.end());
    expect_threads_agree(cut, bw, 2, "cut by a preamble");
}

// Two threads judge the data scrambler's reading as one does, though they begin again
// under the other reading before a first block's judgement is in (its passes on the
// second thread) and then may have to come back: bursts sent under reading b (the
// stream's first burst goes over its first block under a, b, a, then b again) and one
// under a after one under b.
TEST(M110dWidebandBlockFde, TwoThreadsFindTheScramblerReadingAsOneDoes)
{
    const m110d_mode mode = *m110d_mode_by_name("WN8/24kHz/S");
    const unsigned bw = mode.bw_khz;
    const std::vector<uint8_t> first =
        random_bytes(mode.input_bits_per_block * 5 / 16, 96);
    const std::vector<uint8_t> second = random_bytes(mode.input_bits_per_block / 4, 97);
    m110d_transmit_options under_b;
    under_b.readings.scrambler = x9_orientation::b;
    const std::vector<chan::watterson_path> fading = { { 0.5, 1, 0, 0 },
                                                       { 0.5, 1, 0, 1e-3 } };
    std::vector<cf> air = m110d_on_the_air(mode, first, 0, 24, 3, 26, under_b, fading);
    std::vector<cf> next = m110d_on_the_air(mode, second, 0, 30, -5, 27, under_b);
    air.insert(air.end(), next.begin(), next.end());
    expect_threads_agree(air, bw, 2, "b then b");
    const std::vector<m110d_burst> one = m110d_bursts_received(air, mode, 0);
    ASSERT_EQ(one.size(), 2u);
    EXPECT_EQ(one[0].bytes, first);
    EXPECT_EQ(one[1].bytes, second);
    std::vector<cf> mixed = m110d_on_the_air(mode, first, 0, 30, 0, 28, under_b);
    next = m110d_on_the_air(mode, second, 0, 30, -5, 29);
    mixed.insert(mixed.end(), next.begin(), next.end());
    expect_threads_agree(mixed, bw, 2, "b then a");
}

// A two-thread receiver let go mid-burst, a block still decoding on its second thread
// (its caller stopped without complete_decoding, or an exception left the caller):
// that thread, which uses the receiver's state, is waited for, where an unjoined
// std::thread would end the process.
TEST(M110dWidebandBlockFde, TwoThreadReceiverLetGoMidBurst)
{
    const m110d_mode mode = *m110d_mode_by_name("WN8/24kHz/S");
    const std::vector<uint8_t> data =
        random_bytes(mode.input_bits_per_block * 5 / 16, 95);
    const std::vector<cf> air = m110d_on_the_air(mode, data, 0, 30, 0, 25);
    const size_t piece = size_t(m110d_sample_rate(mode.bw_khz) / 100);
    for (unsigned tenths : { 4u, 6u, 8u }) {
        std::vector<m110d_burst> bursts;
        {
            m110d_receiver_config config;
            config.bandwidth_khz = mode.bw_khz;
            config.data_equaliser = m110d_data_equaliser::block_fde;
            config.threads = 2;
            m110d_receiver rx(config);
            const size_t cut = air.size() * tenths / 10;
            for (size_t k = 0; k < cut; k += piece)
                rx.process(air.data() + k, std::min(piece, cut - k), bursts);
        }
        EXPECT_TRUE(bursts.empty()) << tenths; // the burst had not ended
    }
}

namespace {

struct two_thread_trial {
    const char* mode;
    double snr_db;
    std::vector<chan::watterson_path> paths;
    unsigned blocks = 4; // interleaver blocks of data
};

// The bursts, their bytes and reports and the symbols tapped, the same on two threads
// as on one.
void expect_two_threads_give_what_one_gives(const two_thread_trial& t)
{
    const m110d_mode mode = *m110d_mode_by_name(t.mode);
    const std::vector<uint8_t> data =
        random_bytes(mode.input_bits_per_block * t.blocks / 8, 92);
    const std::vector<cf> air =
        m110d_on_the_air(mode, data, 0, t.snr_db, 2, 17, {}, t.paths);
    std::vector<m110d_burst> bursts[2];
    std::vector<cf> tapped[2];
    for (unsigned threads : { 1u, 2u }) {
        m110d_receiver_config config;
        config.bandwidth_khz = mode.bw_khz;
        config.threads = threads;
        m110d_receiver rx(config);
        rx.tap_symbols(&tapped[threads - 1]);
        const size_t piece = size_t(m110d_sample_rate(mode.bw_khz) / 100);
        for (size_t k = 0; k < air.size(); k += piece)
            rx.process(
                air.data() + k, std::min(piece, air.size() - k), bursts[threads - 1]);
        // What is still decoding at the input's end (the 48 kHz burst's last block).
        rx.complete_decoding(bursts[threads - 1]);
    }
    ASSERT_FALSE(bursts[0].empty()) << t.mode;
    ASSERT_EQ(bursts[1].size(), bursts[0].size()) << t.mode;
    for (size_t b = 0; b < bursts[0].size(); ++b) {
        EXPECT_EQ(bursts[1][b].bytes, bursts[0][b].bytes) << t.mode;
        EXPECT_EQ(bursts[1][b].eom, bursts[0][b].eom) << t.mode;
        EXPECT_EQ(bursts[1][b].bytes_bad, bursts[0][b].bytes_bad) << t.mode;
        EXPECT_EQ(bursts[1][b].least_reliability, bursts[0][b].least_reliability)
            << t.mode;
        EXPECT_EQ(bursts[1][b].unreliable_blocks, bursts[0][b].unreliable_blocks)
            << t.mode;
        EXPECT_EQ(bursts[1][b].snr_db, bursts[0][b].snr_db) << t.mode;
        EXPECT_EQ(bursts[1][b].frequency_offset_hz, bursts[0][b].frequency_offset_hz)
            << t.mode;
    }
    ASSERT_GT(tapped[0].size(), size_t(mode.input_bits_per_block / 8)) << t.mode;
    EXPECT_TRUE(tapped[1] == tapped[0]) << t.mode;
}

} // namespace

// With two threads (each block's MAP pass beside its Viterbi, each frame's demapping
// split, the search's correlator and the MMSE-DFE's factorisations shared) the receiver
// gives what it gives with one: bursts, bits, reliabilities, SNR, offset and every
// tapped symbol, on two fading paths (the iterative block DFE, LLRs scaled down in
// fades), at 48 kHz, and on AWGN near 256QAM's threshold.
TEST(M110dWidebandBlockFde, TwoThreadsGiveWhatOneGives)
{
    const two_thread_trial trials[] = {
        { "WN6/12kHz/US", 16, { { 0.5, 1, 0, 0 }, { 0.5, 1, 0, 2e-3 } } },
        { "WN12/24kHz/US", 29, {} },
        // 48 kHz on two paths 2 ms apart: the preamble's MMSE-DFE solves for 340
        // unknowns, its factorisations shared between the threads.
        { "WN8/48kHz/S", 22, { { 0.5, 1, 0, 0 }, { 0.5, 1, 0, 2e-3 } } },
    };
    for (const two_thread_trial& t : trials)
        expect_two_threads_give_what_one_gives(t);
}

// Long blocks (156,672 pairs: decoded in pieces; coded again, depunctured and
// deinterleaved in ranges), two of them: the first's passes and judgement on threads
// while the burst begins again, the second's decoding helped by the calling thread.
TEST(M110dWidebandBlockFde, TwoThreadsGiveWhatOneGivesOnLongBlocks)
{
    expect_two_threads_give_what_one_gives({ "WN10/6kHz/L", 21, {}, 2 });
}

// Data the watch in a burst takes for a preamble's known chips (z over the threshold,
// under sure_cut_z) now and then read as fields (count 0 and a WID that passes by
// chance) on one gain: WN12/48kHz/L on AWGN at 29 dB, one super-frame, the bench's
// second burst (bench_s4539_modem --modes WN12/48kHz/L --snr 29 --superframes 1, its
// data and channel seeds) was cut there, its bytes all lost. Fields read so stand out
// of the chips' power far less than a preamble's, and no longer cut it.
TEST(M110dWidebandWatch, DataReadAsFieldsByChanceDoNotCutTheBurst)
{
    const m110d_mode mode = *m110d_mode_for(48, 12, m110d_interleaver::long_);
    const psk_modulator modulator(m110d_modulator_config(mode, 0));
    const double fs = modulator.config().sample_rate;
    m110d_transmit_options options;
    options.timing.preamble.superframes = 1;
    const size_t burst_bytes = size_t(mode.user_bps() * 10 / 8);
    // The bench's level: the mean power of a burst of random data (its seed).
    double mean = 0;
    {
        std::mt19937 rng{ 12345 };
        std::vector<uint8_t> data(burst_bytes);
        for (auto& b : data)
            b = uint8_t(rng());
        const std::vector<cf> x = modulator.baseband(
            m110d_transmit_points(mode, data.data(), data.size(), options));
        for (const cf& v : x)
            mean += std::norm(v);
        mean /= double(x.size());
    }
    chan::watterson_config cc = chan::watterson_preset("awgn", fs, 29, 1);
    cc.noise_bandwidth_hz = 1000.0 * mode.bw_khz;
    cc.signal_power = mean;
    chan::watterson_channel channel(cc);
    serial_tone_frontend_config fc;
    fc.real_input = false;
    fc.sample_rate = fs;
    fc.symbol_rate = modulator.config().symbol_rate;
    serial_tone_frontend front(fc);
    m110d_receiver_config config;
    config.bandwidth_khz = mode.bw_khz;
    m110d_receiver rx(config);
    std::mt19937 rng{ 1 };
    std::vector<m110d_burst> bursts;
    std::vector<std::vector<uint8_t>> sent;
    std::vector<cf> noisy, bb;
    for (int t = 0; t < 2; ++t) {
        std::vector<uint8_t> data(burst_bytes);
        for (auto& b : data)
            b = uint8_t(rng());
        std::vector<cf> air = modulator.baseband(
            m110d_transmit_points(mode, data.data(), data.size(), options));
        air.resize(air.size() + size_t(0.5 * fs));
        sent.push_back(std::move(data));
        noisy.clear();
        channel.process(air.data(), air.size(), noisy);
        for (size_t k = 0; k < noisy.size(); k += 4096) {
            bb.clear();
            front.process(noisy.data() + k, std::min<size_t>(4096, noisy.size() - k), bb);
            rx.process(bb.data(), bb.size(), bursts);
        }
        rx.complete_decoding(bursts);
    }
    ASSERT_EQ(bursts.size(), 2u);
    for (size_t b = 0; b < 2; ++b) {
        EXPECT_TRUE(bursts[b].eom) << "burst " << b;
        EXPECT_FALSE(bursts[b].bytes_bad) << "burst " << b;
        EXPECT_TRUE(bursts[b].bytes == sent[b]) << "burst " << b;
    }
}

// A preamble's chips turned half a turn a chip (an offset of half the symbol rate, where
// the search's angle wraps) read as other Walsh symbols, and now and then count 0 and a
// WID that passes: F.1487 poor at 12 kHz, 13 dB, M = 20, channel seed 1 (the bench's
// WN6/12kHz/L poor row - 1 dB) began a burst 4.8 kHz off at the preamble's start, whose
// decoding ran over the real one's first seconds (the real one reported as a second
// burst). Offsets beyond a quarter of the symbol rate are refused above 3 kHz.
TEST(M110dWidebandSearch, APreambleIsNotTakenAtTheWalshAliasOffset)
{
    const m110d_mode mode = *m110d_mode_by_name("WN6/12kHz/L");
    const std::vector<chan::watterson_path> poor = f1487_poor_paths();
    m110d_transmit_options options;
    options.timing.preamble.superframes = 20;
    const std::vector<uint8_t> data = random_bytes(2000, 1);
    // No lead: the channel's samples from the burst's first, as the bench sends them.
    const std::vector<m110d_burst> bursts = m110d_bursts_received(
        m110d_on_the_air(mode, data, 0, 13, 0, 1, options, poor, {}, 0, 0.0), mode, 0);
    ASSERT_EQ(bursts.size(), 1u);
    EXPECT_NEAR(bursts[0].frequency_offset_hz, 0.0, 5.0);
    EXPECT_TRUE(bursts[0].eom);
    EXPECT_EQ(bursts[0].bytes, data);
}
