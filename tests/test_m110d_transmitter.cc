/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

// The STANAG 5069 (MIL-STD-188-110D App D) transmitter at 3 kHz: its length against the
// air-time model m110d_timing, its layout (preamble, probes with the boundary rule, EOT),
// and a noise-free loopback through hard decisions and the block decoder that gives
// back the bytes and the EOM for every WN, interleaver, code and reading.
#include "phy/m110d_timing.h"
#include "phy/m110d_transmitter.h"
#include "phy/m110d_decoder.h"
#include "phy/m110d_waveform.h"
#include "phy/psk_modulator.h"

#include "m110d_test_support.h"
#include "modem_test_support.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

using namespace gr::hfstack::phy;
using namespace m110d_test;

TEST(M110dTransmitter, SymbolCountMatchesTheAirTimeModel)
{
    std::vector<m110d_transmit_options> variants(3);
    variants[1].timing.preamble.tlc_blocks = 3;
    variants[1].timing.preamble.superframes = 4;
    variants[1].constraint_length = 9;
    variants[2].timing.preamble.superframes = 20;
    variants[2].timing.eot_extension = true;
    for (const m110d_mode& m : modes_3khz())
        for (const auto& o : variants)
            for (size_t bytes : { size_t(0), size_t(1), size_t(m.input_bits_per_block / 8), size_t(700) }) {
                const std::vector<uint8_t> data = random_bytes(bytes, unsigned(bytes) + m.wn);
                const auto points = m110d_transmit_points(m, data.data(), data.size(), o);
                ASSERT_EQ(points.size(), symbols_of(m, bytes, o)) << m.name() << " " << bytes << " bytes";
            }
}

TEST(M110dTransmitter, LaysOutPreambleProbesAndEot)
{
    const std::vector<uint8_t> data = random_bytes(400, 9);
    for (const m110d_mode& m : modes_3khz()) {
        if (m.wn == 0)
            continue;
        m110d_transmit_options o;
        o.timing.preamble.superframes = 2;
        o.timing.eot_extension = true;
        const auto points = m110d_transmit_points(m, data.data(), data.size(), o);
        const std::vector<uint8_t> preamble = m110d_preamble(m, o.timing.preamble, 7);
        const auto& psk8 = m110d_constellation(3);
        for (size_t k = 0; k < preamble.size(); ++k)
            ASSERT_LT(std::abs(points[k] - psk8[preamble[k]]), 1e-6f) << m.name() << " preamble " << k;
        const unsigned K = m.probe_symbols, frame = m.data_symbols + K;
        const size_t extension = m110d_eot_extension_symbols(m);
        const size_t frames = (points.size() - preamble.size() - K - extension) / frame;
        ASSERT_EQ(preamble.size() + K + frames * frame + extension, points.size()) << m.name();
        ASSERT_EQ(frames % m.frames_per_block, 0u) << m.name();
        for (int64_t f = -1; f < int64_t(frames); ++f) {
            const size_t at = preamble.size() + size_t(f + 1) * frame;
            const bool last = f + 1 == int64_t(frames);
            const unsigned length = K + (last ? unsigned(extension) : 0);
            const auto want = m110d_mini_probe(K, m110d_probe_is_boundary(m, f), length);
            for (unsigned i = 0; i < length; ++i)
                ASSERT_LT(std::abs(points[at + i] - want[i]), 1e-6f) << m.name() << " probe after frame " << f;
        }
        // Every symbol's amplitude is at most the probes' (QAM as printed).
        for (const cf& p : points)
            ASSERT_LE(std::abs(p), 1.0001f) << m.name();
    }
}

TEST(M110dTransmitter, Every3khzModeLoopsBackThroughHardDecisions)
{
    const std::vector<uint8_t> data = random_bytes(333, 21);
    for (const m110d_mode& m : modes_3khz())
        for (unsigned k : { 7u, 9u }) {
            m110d_transmit_options o;
            o.constraint_length = k;
            if (k == 9) { // the alternative readings ride along with K = 9
                o.readings.scrambler = x9_orientation::b;
                o.readings.tail_biting = tail_biting_start::from_block_start;
                o.readings.pn_alignment = m110d_pn_alignment::continuous;
            }
            const auto points = m110d_transmit_points(m, data.data(), data.size(), o);
            const std::vector<float> llr = hard_channel_llrs(m, points, o);
            EXPECT_EQ(llr, [&] {
                std::vector<float> want;
                for (uint8_t b : m110d_channel_bits(m, data.data(), data.size(), o))
                    want.push_back(b ? -1.0f : 1.0f);
                return want;
            }()) << m.name() << " K" << k;
            expect_message(decode_all(m, llr, o), data, m.name() + " K" + std::to_string(k));
        }
}

TEST(M110dTransmitter, ReadingsChangeWhatTheyName)
{
    const m110d_mode m = *m110d_mode_by_name("WN7/3kHz/S");
    const std::vector<uint8_t> data = random_bytes(100, 2);
    const auto base = m110d_transmit_points(m, data.data(), data.size());
    const size_t preamble = 10 * 32;
    m110d_transmit_options o;
    o.readings.scrambler = x9_orientation::b;
    auto other = m110d_transmit_points(m, data.data(), data.size(), o);
    EXPECT_TRUE(std::equal(base.begin(), base.begin() + preamble + 32, other.begin())); // preamble, first probe
    EXPECT_NE(base, other);
    o = {};
    o.msb_first = true;
    EXPECT_NE(m110d_channel_bits(m, data.data(), data.size(), o), m110d_channel_bits(m, data.data(), data.size()));
    // K = 9 is announced in the WID (d3) and changes the coded bits.
    o = {};
    o.constraint_length = 9;
    other = m110d_transmit_points(m, data.data(), data.size(), o);
    EXPECT_FALSE(std::equal(base.begin(), base.begin() + preamble, other.begin()));
    EXPECT_NE(m110d_channel_bits(m, data.data(), data.size(), o), m110d_channel_bits(m, data.data(), data.size()));
    o.constraint_length = 8;
    EXPECT_THROW(m110d_transmit_points(m, data.data(), data.size(), o), std::invalid_argument);
}

TEST(M110dTransmitter, ShapesSamplesLikeTheAppCTransmitter)
{
    // 3 kHz: 2400 Bd on an 1800 Hz sub-carrier, shaped by psk_modulator at 9600 Hz.
    const m110d_mode m = *m110d_mode_by_name("WN10/3kHz/S");
    const psk_modulator_config c = m110d_modulator_config(m, 9600);
    EXPECT_EQ(c.symbol_rate, 2400);
    EXPECT_EQ(c.carrier_hz, 1800);
    const psk_modulator modulator(c);
    const std::vector<uint8_t> data = random_bytes(1000, 5);
    const auto points = m110d_transmit_points(m, data.data(), data.size());
    const auto samples = modulator.baseband(points);
    // Four samples a symbol plus the pulse's tails; the air time at 9600 Hz.
    const size_t tails = samples.size() - 4 * points.size();
    EXPECT_LE(tails, 2 * 4 * c.span_symbols + 1);
    const double seconds = m110d_transmission_time(m, data.size()).total_s;
    EXPECT_EQ(4 * points.size(), size_t(std::lround(seconds * 9600)));
    const auto audio = modulator.audio(points);
    EXPECT_EQ(audio.size(), samples.size());
    // 48 kHz: a wider bandwidth's symbol rate and sub-carrier.
    const psk_modulator_config wide = m110d_modulator_config(*m110d_mode_by_name("WN6/24kHz/S"), 96000);
    EXPECT_EQ(wide.symbol_rate, 19200);
    EXPECT_EQ(wide.carrier_hz, 12300);
}

TEST(M110dTransmitter, EveryBandwidthCodesAndLastsAsTheAirTimeModelSays)
{
    // The tables cover 3-48 kHz (interleaver increments of one source, S): every WN of
    // every bandwidth with its two shorter interleavers has a code rate in D-L, a
    // probe in D-XXI and the model's length; a few loop back through hard decisions.
    const std::vector<uint8_t> data = random_bytes(60, 12);
    size_t modes = 0;
    for (const std::string& name : m110d_mode_names()) {
        const m110d_mode m = *m110d_mode_by_name(name);
        if (m.interleaver != m110d_interleaver::ultra_short && m.interleaver != m110d_interleaver::short_)
            continue;
        ++modes;
        m110d_transmit_options o;
        o.timing.eot_extension = true;
        const auto points = m110d_transmit_points(m, data.data(), data.size(), o);
        ASSERT_EQ(points.size(), symbols_of(m, data.size(), o)) << name;
    }
    EXPECT_GT(modes, 250u);
    for (const char* name : { "WN0/9kHz/S", "WN3/21kHz/US", "WN6/24kHz/S", "WN12/18kHz/US", "WN11/48kHz/US" }) {
        const m110d_mode m = *m110d_mode_by_name(name);
        const m110d_transmit_options o;
        const auto points = m110d_transmit_points(m, data.data(), data.size(), o);
        expect_message(decode_all(m, hard_channel_llrs(m, points, o), o), data, name);
    }
}

TEST(M110dTransmitter, SymbolRolesPlaceEveryProbeAndDataSymbol)
{
    // After the preamble, every probe symbol is the one its role names and the data
    // fill the rest (WN0: Walsh chips only); the EOT extension continues the last probe.
    const std::vector<uint8_t> data = random_bytes(500, 14);
    for (const m110d_mode& m : modes_3khz()) {
        m110d_transmit_options o;
        o.timing.preamble.superframes = 2;
        o.timing.eot_extension = true;
        const auto points = m110d_transmit_points(m, data.data(), data.size(), o);
        const size_t first = preamble_symbols(m, o);
        const size_t extension = m.wn == 0 ? 0 : m110d_eot_extension_symbols(m);
        size_t data_symbols = 0;
        for (size_t k = first; k < points.size() - extension; ++k) {
            const m110d_symbol_role role = m110d_role_after_preamble(m, k - first);
            if (role.kind == m110d_symbol_kind::data) {
                ++data_symbols;
                continue;
            }
            ASSERT_LT(std::abs(points[k] - m110d_probe_point(m, role)), 1e-6f) << m.name() << " symbol " << k;
        }
        const unsigned per_symbol = m.wn == 0 ? 1 : m110d_bits_per_symbol(m.wn);
        const size_t channel_bits = m110d_channel_bits(m, data.data(), data.size(), o).size();
        EXPECT_EQ(data_symbols * per_symbol, m.wn == 0 ? channel_bits * 16 : channel_bits) << m.name();
        if (extension) {
            const m110d_symbol_role last = m110d_role_after_preamble(m, points.size() - extension - 1 - first);
            ASSERT_EQ(last.kind, m110d_symbol_kind::probe);
            ASSERT_EQ(last.position, m.probe_symbols - 1);
            const auto probe = m110d_mini_probe(m.probe_symbols, m110d_probe_is_boundary(m, last.frame),
                                                m.probe_symbols + unsigned(extension));
            for (size_t i = 0; i < extension; ++i)
                ASSERT_LT(std::abs(points[points.size() - extension + i] - probe[m.probe_symbols + i]), 1e-6f)
                    << m.name();
        }
    }
    EXPECT_THROW(m110d_probe_point(*m110d_mode_by_name("WN3/3kHz/S"), { m110d_symbol_kind::data, 0, 0 }),
                 std::invalid_argument);
}
