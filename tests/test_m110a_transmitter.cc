/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

// The 110A transmitter and the serial-tone modulator: the air time the node's model
// predicts is the air time the modem sends; the modulated signal has the power, band
// and symbols it should.
#include "phy/m110a_timing.h"
#include "phy/m110a_transmitter.h"
#include "phy/psk_modulator.h"

#include "expect_error.h"
#include "modem_test_support.h"

#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <random>
#include <vector>

using namespace gr::hfstack::phy;

namespace {

constexpr double pi = 3.14159265358979323846;

} // namespace

TEST(M110aTransmitter, SendsExactlyTheAirTimeTheTimingModelPredicts)
{
    for (const m110a_waveform& mode : m110a_waveforms()) {
        const auto timing_mode = m110a_mode_for(mode.user_bps, mode.interleaver);
        ASSERT_TRUE(timing_mode) << mode.name;
        for (size_t bytes :
             { size_t(0), size_t(1), size_t(54), size_t(1000), size_t(4000) }) {
            if (mode.user_bps <= 150 && bytes > 1000)
                continue; // long and slow; the shorter sizes cover the rule
            const std::vector<uint8_t> data = random_bytes(bytes, 1);
            const std::vector<uint8_t> symbols =
                m110a_transmit_symbols(mode, data.data(), bytes);
            const transmission_time t = m110a_transmission_time(*timing_mode, bytes);
            EXPECT_NEAR(double(symbols.size()) / 2400.0, t.total_s, 1e-9)
                << mode.name << " " << bytes;
            for (uint8_t s : symbols)
                ASSERT_LT(s, 8) << mode.name;
        }
    }
}

TEST(M110aTransmitter, MessageBitsEndWithEomAndFlush)
{
    const uint8_t byte = 0x41; // 'A' = 01000001, LSB first: 1 0 0 0 0 0 1 0
    const std::vector<uint8_t> bits = m110a_message_bits(&byte, 1);
    ASSERT_EQ(bits.size(), 8u + 32 + 144);
    EXPECT_EQ(std::vector<uint8_t>(bits.begin(), bits.begin() + 8),
              std::vector<uint8_t>({ 1, 0, 0, 0, 0, 0, 1, 0 }));
    const std::vector<uint8_t> msb = m110a_message_bits(&byte, 1, true);
    EXPECT_EQ(std::vector<uint8_t>(msb.begin(), msb.begin() + 8),
              std::vector<uint8_t>({ 0, 1, 0, 0, 0, 0, 0, 1 }));
    uint32_t eom = 0;
    for (size_t k = 8; k < 40; ++k)
        eom = (eom << 1) | bits[k];
    EXPECT_EQ(eom, m110a_eom);
    for (size_t k = 40; k < bits.size(); ++k)
        EXPECT_EQ(bits[k], 0);
}

TEST(M110aTransmitter, PreambleAnnouncesTheModeAndCountsDown)
{
    const m110a_waveform& mode = *m110a_waveform_by_name("600L");
    const std::vector<uint8_t> symbols = m110a_transmit_symbols(mode, nullptr, 0);
    for (unsigned s = 0; s < 24; ++s) {
        const auto seg = m110a_preamble_segment(mode.d1, mode.d2, 23 - s);
        EXPECT_TRUE(std::equal(seg.begin(), seg.end(), symbols.begin() + long(s) * 480))
            << s;
    }
}

TEST(M110aTransmitter, Uncoded4800EndsAfterWholeFramesOrItsProbeCycle)
{
    // 4800U is not interleaved: by default it ends with the frame that holds the end of
    // the flush (the air-time model's count); the alternative reading fills its 30-frame
    // probe cycle, whose last two frames' probes carry D1 and D2.
    const m110a_waveform& mode = *m110a_waveform_by_name("4800U");
    const size_t preamble = size_t(mode.preamble_segments) * m110a_segment_symbols;
    const size_t frame = mode.unknown_symbols + mode.known_symbols;
    const std::vector<uint8_t> data = random_bytes(100, 2);
    // 100 bytes, the EOM and the flush: 976 bits, 11 frames of 32 tribits.
    const std::vector<uint8_t> frames =
        m110a_transmit_symbols(mode, data.data(), data.size());
    EXPECT_EQ(frames.size(), preamble + 11 * frame);
    const std::vector<uint8_t> cycle = m110a_transmit_symbols(
        mode, data.data(), data.size(), false, m110a_4800u_fill::probe_cycle);
    ASSERT_EQ(cycle.size(), preamble + size_t(mode.frames_per_block) * frame);
    EXPECT_TRUE(std::equal(frames.begin(), frames.end(), cycle.begin()));
    // The last frame's probe: D2's Walsh pattern twice, scrambled.
    const size_t last_probe = cycle.size() - mode.known_symbols;
    const auto& scrambler = m110a_data_scrambler();
    for (size_t j = 0; j < 16; ++j) {
        const size_t dk = last_probe - preamble + j;
        EXPECT_EQ(cycle[last_probe + j],
                  (m110a_walsh8[mode.d2][j % 8] + scrambler[dk % 160]) % 8)
            << j;
    }
}

TEST(PskModulator, MatchedFilterReturnsTheSymbolsWithoutIsi)
{
    // RRC transmit and matched RRC receive make a Nyquist pulse: at the symbol centres
    // the points come back within the truncation error.
    psk_modulator_config c;
    c.sample_rate = 9600;
    psk_modulator m(c);
    std::vector<uint8_t> symbols(2000);
    std::mt19937 rng(3);
    for (auto& s : symbols)
        s = uint8_t(rng() % 8);
    const std::vector<std::complex<float>> x = m.baseband(symbols);
    // Matched filter: the same pulse, at 4 samples per symbol.
    psk_modulator unit(c);
    const std::vector<std::complex<float>> pulse =
        unit.baseband(std::vector<uint8_t>{ 0 });
    double worst = 0, power = 0;
    for (size_t n = 0; n < x.size(); ++n)
        power += std::norm(x[n]);
    power /= double(x.size());
    const double energy = [&] {
        double e = 0;
        for (const auto& p : pulse)
            e += std::norm(p);
        return e;
    }();
    for (size_t j = 20; j + 20 < symbols.size(); ++j) {
        std::complex<double> acc;
        const long centre = long(j * 4 + 2 * m.delay_samples());
        for (size_t k = 0; k < pulse.size(); ++k) {
            const long n = centre - long(pulse.size() - 1) + long(k);
            acc += std::complex<double>(x[size_t(n)]) *
                   std::conj(std::complex<double>(pulse[pulse.size() - 1 - k]));
        }
        acc /= energy;
        worst = std::max(worst, std::abs(acc - std::polar(1.0, pi / 4 * symbols[j])));
    }
    EXPECT_LT(worst, 0.02);
    EXPECT_NEAR(power, 1.0, 0.03);
}

TEST(PskModulator, AudioSitsOnTheCarrierAtAnySupportedRate)
{
    std::vector<uint8_t> symbols(4800);
    std::mt19937 rng(4);
    for (auto& s : symbols)
        s = uint8_t(rng() % 8);
    for (double fs : { 8000.0, 9600.0, 48000.0 }) {
        psk_modulator_config c;
        c.sample_rate = fs;
        c.rms = 0.3;
        psk_modulator m(c);
        const std::vector<float> a = m.audio(symbols);
        EXPECT_NEAR(double(a.size()),
                    double(symbols.size() - 1) * fs / 2400.0 + 2 * m.delay_samples() + 1,
                    1.0)
            << fs;
        double power = 0;
        for (float v : a)
            power += double(v) * v;
        power /= double(a.size());
        EXPECT_NEAR(power, 0.09, 0.09 * 0.05) << fs;
        // Spectral density 20 bins around 3500 Hz (beyond 1800 + 1620 Hz, the RRC 0.35
        // band edge) at least 30 dB below that around the carrier.
        const auto band_power = [&](double centre) {
            double sum = 0;
            for (int b = -10; b < 10; ++b) {
                std::complex<double> acc;
                const double f = centre + b * 10.0;
                for (size_t n = 0; n < a.size(); ++n)
                    acc += double(a[n]) *
                           std::polar(1.0, -2 * pi * std::fmod(f * double(n) / fs, 1.0));
                sum += std::norm(acc);
            }
            return sum;
        };
        EXPECT_LT(band_power(3500) / band_power(1800), 1e-3) << fs;
    }
}

TEST(PskModulator, BadSettingsAreRefusedNamingThem)
{
    const auto refused = [](const std::string& name, auto change) {
        psk_modulator_config c;
        change(c);
        expect_throws_naming([&] { psk_modulator m(c); }, name);
    };
    refused("sample_rate", [](psk_modulator_config& c) { c.sample_rate = 9601.7; });
    refused("sample_rate", [](psk_modulator_config& c) { c.sample_rate = 1000; });
    refused("rolloff", [](psk_modulator_config& c) { c.rolloff = 0; });
    refused("carrier_hz", [](psk_modulator_config& c) { c.carrier_hz = 5000; });
    refused("rms", [](psk_modulator_config& c) { c.rms = -1; });
    refused("span_symbols", [](psk_modulator_config& c) { c.span_symbols = 0; });
}
