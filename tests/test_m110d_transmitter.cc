/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

// The STANAG 5069 (MIL-STD-188-110D App D) transmitter at 3 kHz: its length against the
// air-time model m110d_timing, its layout (preamble, probes with the boundary rule, EOT),
// and a noise-free loopback through hard decisions and the block decoder that gives
// back the bytes and the EOM for every WN, interleaver, code and reading.
#include "phy/m110d_decoder.h"
#include "phy/m110d_timing.h"
#include "phy/m110d_transmitter.h"
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
            for (size_t bytes : { size_t(0),
                                  size_t(1),
                                  size_t(m.input_bits_per_block / 8),
                                  size_t(700) }) {
                const std::vector<uint8_t> data =
                    random_bytes(bytes, unsigned(bytes) + m.wn);
                const auto points = m110d_transmit_points(m, data.data(), data.size(), o);
                ASSERT_EQ(points.size(), symbols_of(m, bytes, o))
                    << m.name() << " " << bytes << " bytes";
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
            ASSERT_LT(std::abs(points[k] - psk8[preamble[k]]), 1e-6f)
                << m.name() << " preamble " << k;
        const unsigned K = m.probe_symbols, frame = m.data_symbols + K;
        const size_t extension = m110d_eot_extension_symbols(m);
        const size_t frames = (points.size() - preamble.size() - K - extension) / frame;
        ASSERT_EQ(preamble.size() + K + frames * frame + extension, points.size())
            << m.name();
        ASSERT_EQ(frames % m.frames_per_block, 0u) << m.name();
        for (int64_t f = -1; f < int64_t(frames); ++f) {
            const size_t at = preamble.size() + size_t(f + 1) * frame;
            const bool last = f + 1 == int64_t(frames);
            const unsigned length = K + (last ? unsigned(extension) : 0);
            const auto want = m110d_mini_probe(K, m110d_probe_is_boundary(m, f), length);
            for (unsigned i = 0; i < length; ++i)
                ASSERT_LT(std::abs(points[at + i] - want[i]), 1e-6f)
                    << m.name() << " probe after frame " << f;
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
            EXPECT_EQ(llr,
                      [&] {
                          std::vector<float> want;
                          for (uint8_t b :
                               m110d_channel_bits(m, data.data(), data.size(), o))
                              want.push_back(b ? -1.0f : 1.0f);
                          return want;
                      }())
                << m.name() << " K" << k;
            expect_message(
                decode_all(m, llr, o), data, m.name() + " K" + std::to_string(k));
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
    EXPECT_TRUE(std::equal(base.begin(),
                           base.begin() + preamble + 32,
                           other.begin())); // preamble, first probe
    EXPECT_NE(base, other);
    o = {};
    o.msb_first = true;
    EXPECT_NE(m110d_channel_bits(m, data.data(), data.size(), o),
              m110d_channel_bits(m, data.data(), data.size()));
    // K = 9 is announced in the WID (d3) and changes the coded bits.
    o = {};
    o.constraint_length = 9;
    other = m110d_transmit_points(m, data.data(), data.size(), o);
    EXPECT_FALSE(std::equal(base.begin(), base.begin() + preamble, other.begin()));
    EXPECT_NE(m110d_channel_bits(m, data.data(), data.size(), o),
              m110d_channel_bits(m, data.data(), data.size()));
    o.constraint_length = 8;
    EXPECT_THROW(m110d_transmit_points(m, data.data(), data.size(), o),
                 std::invalid_argument);
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
    const psk_modulator_config wide =
        m110d_modulator_config(*m110d_mode_by_name("WN6/24kHz/S"), 96000);
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
        if (m.interleaver != m110d_interleaver::ultra_short &&
            m.interleaver != m110d_interleaver::short_)
            continue;
        ++modes;
        m110d_transmit_options o;
        o.timing.eot_extension = true;
        const auto points = m110d_transmit_points(m, data.data(), data.size(), o);
        ASSERT_EQ(points.size(), symbols_of(m, data.size(), o)) << name;
    }
    EXPECT_GT(modes, 250u);
    for (const char* name : { "WN0/9kHz/S",
                              "WN3/21kHz/US",
                              "WN6/24kHz/S",
                              "WN12/18kHz/US",
                              "WN11/48kHz/US" }) {
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
            ASSERT_LT(std::abs(points[k] - m110d_probe_point(m, role)), 1e-6f)
                << m.name() << " symbol " << k;
        }
        const unsigned per_symbol = m.wn == 0 ? 1 : m110d_bits_per_symbol(m.wn);
        const size_t channel_bits =
            m110d_channel_bits(m, data.data(), data.size(), o).size();
        EXPECT_EQ(data_symbols * per_symbol, m.wn == 0 ? channel_bits * 16 : channel_bits)
            << m.name();
        if (extension) {
            const m110d_symbol_role last =
                m110d_role_after_preamble(m, points.size() - extension - 1 - first);
            ASSERT_EQ(last.kind, m110d_symbol_kind::probe);
            ASSERT_EQ(last.position, m.probe_symbols - 1);
            const auto probe = m110d_mini_probe(m.probe_symbols,
                                                m110d_probe_is_boundary(m, last.frame),
                                                m.probe_symbols + unsigned(extension));
            for (size_t i = 0; i < extension; ++i)
                ASSERT_LT(std::abs(points[points.size() - extension + i] -
                                   probe[m.probe_symbols + i]),
                          1e-6f)
                    << m.name();
        }
    }
    EXPECT_THROW(m110d_probe_point(*m110d_mode_by_name("WN3/3kHz/S"),
                                   { m110d_symbol_kind::data, 0, 0 }),
                 std::invalid_argument);
}

TEST(M110dTransmitter, EveryBandwidthWnAndInterleaverLastsAsTheAirTimeModelSays)
{
    // Every mode of Table D-I (3-48 kHz, WN0-WN12, WN13 at 3 kHz, no WN4 at 9
    // and 18 kHz), every interleaver, one block's worth and a bit more, under both
    // preamble Walsh readings: the points are as many as m110d_transmission_time says.
    const std::vector<uint8_t> data = random_bytes(40, 24);
    size_t modes = 0;
    for (const std::string& name : m110d_mode_names()) {
        const m110d_mode m = *m110d_mode_by_name(name);
        ++modes;
        m110d_transmit_options o;
        o.readings.preamble_walsh = m.bw_khz >= 30 && m.wn % 2
                                        ? m110d_preamble_walsh::capped
                                        : m110d_preamble_walsh::scaled;
        const auto points = m110d_transmit_points(m, data.data(), data.size(), o);
        const double seconds =
            m110d_transmission_time(m, data.size(), m110d_timing_under(m, o)).total_s;
        ASSERT_EQ(points.size(), size_t(std::lround(seconds * m.symbol_rate()))) << name;
    }
    // 12 bandwidths x 13 WNs x 4 interleavers, less WN0/US, WN4 at 9 and 18 kHz and
    // plus WN13 at 3 kHz.
    EXPECT_EQ(modes, 12u * (13 * 4 - 1) - 2 * 4 + 4);
    for (unsigned bw : { 9u, 18u })
        EXPECT_FALSE(m110d_mode_for(bw, 4, m110d_interleaver::short_)) << bw;
}

TEST(M110dTransmitter, PreambleWalshLengthAboveTwentyFourKilohertzIsAReading)
{
    // D-XIII stops at 24 kHz (256 chips). scaled (default): 32 * BW / 3 chips, i.e.
    // 320, 384, 448, 512 at 30-48 kHz; capped: 256. At 3-24 kHz both are 32 * BW / 3.
    const std::vector<uint8_t> data = random_bytes(30, 3);
    for (unsigned bw : { 3u, 6u, 9u, 12u, 15u, 18u, 21u, 24u, 30u, 36u, 42u, 48u }) {
        const m110d_mode m = *m110d_mode_for(bw, 6, m110d_interleaver::short_);
        m110d_transmit_options scaled, capped;
        capped.readings.preamble_walsh = m110d_preamble_walsh::capped;
        const unsigned want = 32 * bw / 3;
        EXPECT_EQ(m110d_preamble_walsh_chips(
                      m, scaled.timing.preamble, scaled.readings.preamble_walsh),
                  want);
        EXPECT_EQ(m110d_preamble_walsh_chips(
                      m, capped.timing.preamble, capped.readings.preamble_walsh),
                  std::min(want, 256u));
        const auto a = m110d_preamble(m, scaled.timing.preamble, 7, scaled.readings);
        const auto b = m110d_preamble(m, capped.timing.preamble, 7, capped.readings);
        EXPECT_EQ(a.size(), 10u * want) << bw;
        EXPECT_EQ(b.size(), 10u * std::min(want, 256u)) << bw;
        if (bw <= 24) {
            EXPECT_EQ(a, b) << bw;
        }
        // The whole transmission's length follows the reading.
        const auto points = m110d_transmit_points(m, data.data(), data.size(), capped);
        EXPECT_EQ(points.size(),
                  size_t(std::lround(m110d_transmission_time(
                                         m, data.size(), m110d_timing_under(m, capped))
                                         .total_s *
                                     m.symbol_rate())))
            << bw;
        // An explicit preamble_walsh_chips wins over the reading.
        capped.timing.preamble.preamble_walsh_chips = 96;
        EXPECT_EQ(m110d_preamble_walsh_chips(
                      m, capped.timing.preamble, capped.readings.preamble_walsh),
                  96u);
    }
    m110d_readings r;
    EXPECT_EQ(m110d_set_reading(r, "preamble_walsh=capped"), "");
    EXPECT_EQ(r.preamble_walsh, m110d_preamble_walsh::capped);
    EXPECT_NE(m110d_set_reading(r, "preamble_walsh=256"), "");
}

TEST(M110dTransmitter, PreambleSectionsAtEveryBandwidthFollowTheTables)
{
    // Consistency where the spec has no wideband known answer: at 24 kHz (L = 256) the
    // two PN alignments coincide (O-1), and at 48 kHz (L = 512) too, both taking
    // PN[j mod 256]; at 6 kHz (L = 64) they differ; the Walsh pattern of a dibit
    // (D-XIV) repeats every 4 chips at every length.
    for (const char* name : { "WN6/24kHz/S", "WN6/48kHz/S", "WN6/6kHz/S" }) {
        const m110d_mode m = *m110d_mode_by_name(name);
        const unsigned chips = m110d_preamble_walsh_chips(m);
        const std::vector<uint8_t> dibits = { 0, 1, 2, 3 };
        const auto per_symbol = m110d_preamble_section(
            dibits, m110d_pn_table::fixed, chips, m110d_pn_alignment::per_symbol);
        const auto continuous = m110d_preamble_section(
            dibits, m110d_pn_table::fixed, chips, m110d_pn_alignment::continuous);
        ASSERT_EQ(per_symbol.size(), 4u * chips) << name;
        const auto& pn = m110d_pn(m110d_pn_table::fixed);
        for (unsigned d = 0; d < 4; ++d)
            for (unsigned j = 0; j < chips; ++j)
                ASSERT_EQ(per_symbol[d * chips + j],
                          (pn[j % 256] + m110d_walsh_chip(d, j)) % 8)
                    << name << " " << j;
        if (chips % 256 == 0) {
            EXPECT_EQ(per_symbol, continuous) << name;
        } else {
            EXPECT_NE(per_symbol, continuous) << name;
        }
    }
}

TEST(M110dTransmitter, EveryBandwidthShapesSamplesAtItsRate)
{
    // The modem's rate: 4 samples a symbol at every bandwidth (9600 Hz at 3 kHz, 153.6
    // kHz at 48 kHz); a radio's rational multiple of the symbol rate directly (96 kHz
    // at 48 kHz: 5/2 a symbol). The samples last the air time (plus the pulse's tails).
    const std::vector<uint8_t> data = random_bytes(200, 48);
    for (unsigned bw : { 3u, 6u, 9u, 12u, 15u, 18u, 21u, 24u, 30u, 36u, 42u, 48u }) {
        const m110d_mode m = *m110d_mode_for(bw, 8, m110d_interleaver::ultra_short);
        EXPECT_EQ(m110d_sample_rate(bw), 4 * m.symbol_rate());
        const auto points = m110d_transmit_points(m, data.data(), data.size());
        for (double rate : { m110d_sample_rate(bw), 2.5 * m.symbol_rate() }) {
            const psk_modulator_config c = m110d_modulator_config(m, rate);
            EXPECT_EQ(c.sample_rate, rate);
            EXPECT_EQ(c.carrier_hz, 300.0 + 500.0 * bw);
            const auto samples = psk_modulator(c).baseband(points);
            const double air = m110d_transmission_time(m, data.size()).total_s * rate;
            const double tails = 2.0 * c.span_symbols * rate / m.symbol_rate() + 2;
            EXPECT_GE(double(samples.size()), air - 1) << bw << " " << rate;
            EXPECT_LE(double(samples.size()), air + tails) << bw << " " << rate;
        }
    }
    EXPECT_EQ(m110d_modulator_config(*m110d_mode_by_name("WN12/48kHz/US")).sample_rate,
              153600);
    EXPECT_THROW(m110d_sample_rate(27), std::invalid_argument);
    EXPECT_THROW(m110d_sample_rate(0), std::invalid_argument);
}
