/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

// Air time of MIL-STD-188-110D Appendix D transmissions, against values worked out by
// hand from the standard and its waveform table.
#include "phy/m110d_timing.h"

#include <gtest/gtest.h>

#include <stdexcept>
#include <vector>

using namespace gr::hfstack::phy;

namespace {
m110d_mode mode(unsigned bw_khz, unsigned wn, m110d_interleaver il)
{
    auto m = m110d_mode_for(bw_khz, wn, il);
    EXPECT_TRUE(m.has_value()) << "WN" << wn << " " << bw_khz << " kHz";
    return m.value_or(m110d_mode{});
}
constexpr m110d_interleaver all_interleavers[] = { m110d_interleaver::ultra_short,
                                                   m110d_interleaver::short_,
                                                   m110d_interleaver::medium,
                                                   m110d_interleaver::long_ };
constexpr unsigned all_bandwidths[] = { 3, 6, 9, 12, 15, 18, 21, 24, 30, 36, 42, 48 };

std::vector<m110d_mode> every_mode()
{
    std::vector<m110d_mode> modes;
    for (unsigned bw : all_bandwidths)
        for (unsigned wn = 0; wn < 16; ++wn)
            for (auto il : all_interleavers)
                if (auto m = m110d_mode_for(bw, wn, il))
                    modes.push_back(*m);
    return modes;
}
} // namespace

TEST(M110dTiming, KnownAnswers3kHzWn6Short)
{
    // 3200 bps: frames of 256 + 32 symbols at 2400 Bd, 4 per block = 0.48 s, 1536 bits.
    // Preamble: 10 Walsh symbols of 32 symbols (N = 0, M = 1) + the 32-symbol mini-probe.
    const auto m = mode(3, 6, m110d_interleaver::short_);
    EXPECT_EQ(m.name(), "WN6/3kHz/S");
    EXPECT_EQ(m.user_bps(), 3200u);
    auto t = m110d_transmission_time(m, 1000); // 8032 bits: 6 blocks
    EXPECT_NEAR(t.preamble_s, 352 / 2400.0, 1e-12);
    EXPECT_EQ(t.units, 6u);
    EXPECT_EQ(t.fill_bits, 6u * 1536 - 8032);
    EXPECT_NEAR(t.data_s, 2.88, 1e-12);
    EXPECT_NEAR(t.total_s, 352 / 2400.0 + 2.88, 1e-12);
    t = m110d_transmission_time(m, 10000); // 80032 bits: 53 blocks
    EXPECT_EQ(t.units, 53u);
    EXPECT_EQ(t.fill_bits, 1376u);
    EXPECT_NEAR(t.data_s, 53 * 0.48, 1e-9);
    // Exactly one block: 1536 - 32 EOM bits = 188 bytes; one byte more needs a second.
    t = m110d_transmission_time(m, 188);
    EXPECT_EQ(t.units, 1u);
    EXPECT_EQ(t.fill_bits, 0u);
    t = m110d_transmission_time(m, 189);
    EXPECT_EQ(t.units, 2u);
    EXPECT_EQ(t.fill_bits, 1536u - 8);
}

TEST(M110dTiming, KnownAnswers3kHzWn10Long)
{
    // 9600 bps long: 64 frames of 288 symbols = 7.68 s, 73728 bits per block.
    const auto m = mode(3, 10, m110d_interleaver::long_);
    EXPECT_EQ(m.name(), "WN10/3kHz/L");
    EXPECT_EQ(m.user_bps(), 9600u);
    EXPECT_EQ(m.input_bits_per_block, 73728u);
    auto t = m110d_transmission_time(m, 1000);
    EXPECT_EQ(t.units, 1u);
    EXPECT_EQ(t.fill_bits, 73728u - 8032);
    EXPECT_NEAR(t.total_s, 352 / 2400.0 + 7.68, 1e-12);
    t = m110d_transmission_time(m, 10000);
    EXPECT_EQ(t.units, 2u);
    EXPECT_NEAR(t.total_s, 352 / 2400.0 + 15.36, 1e-12);
}

TEST(M110dTiming, KnownAnswers3kHzWn0Short)
{
    // 75 bps: 40 Walsh symbols of 32 chips per block = 0.5333 s carrying 40 bits; no
    // mini-probe after the 320-symbol preamble.
    const auto m = mode(3, 0, m110d_interleaver::short_);
    EXPECT_EQ(m.user_bps(), 75u);
    EXPECT_EQ(m.probe_symbols, 0u);
    auto t = m110d_transmission_time(m, 1000); // 8032 bits: 201 blocks
    EXPECT_NEAR(t.preamble_s, 320 / 2400.0, 1e-12);
    EXPECT_EQ(t.units, 201u);
    EXPECT_EQ(t.fill_bits, 8u);
    EXPECT_NEAR(t.data_s, 201 * 1280 / 2400.0, 1e-9);
    t = m110d_transmission_time(m, 10); // 112 bits: 3 blocks = 1.6 s
    EXPECT_EQ(t.units, 3u);
    EXPECT_NEAR(t.data_s, 1.6, 1e-12);
    // WN0 has no probe to extend at the end.
    m110d_timing_options eot;
    eot.eot_extension = true;
    EXPECT_DOUBLE_EQ(m110d_transmission_time(m, 10, eot).total_s, t.total_s);
}

TEST(M110dTiming, KnownAnswers48kHzTopRate)
{
    // 240 kbps is WN12 (256QAM, 5/6) at 48 kHz: frames of 2880 + 192 symbols at 38400 Bd
    // = 80 ms; US = 1 frame carrying 19200 bits, L = 96 frames = 7.68 s. Preamble Walsh
    // symbols are 512 symbols long (the 30-48 kHz extrapolation).
    const auto us = m110d_mode_for_rate(48, 240000, m110d_interleaver::ultra_short);
    ASSERT_TRUE(us.has_value());
    EXPECT_EQ(us->wn, 12u);
    EXPECT_EQ(us->name(), "WN12/48kHz/US");
    auto t = m110d_transmission_time(*us, 1000);
    EXPECT_NEAR(t.preamble_s, (10 * 512 + 192) / 38400.0, 1e-12);
    EXPECT_EQ(t.units, 1u);
    EXPECT_NEAR(t.data_s, 0.08, 1e-12);
    t = m110d_transmission_time(*us, 10000); // 80032 bits: 5 blocks
    EXPECT_EQ(t.units, 5u);
    EXPECT_EQ(t.fill_bits, 5u * 19200 - 80032);
    EXPECT_NEAR(t.data_s, 0.4, 1e-12);
    const auto l = mode(48, 12, m110d_interleaver::long_);
    EXPECT_EQ(l.input_bits_per_block, 1843200u);
    EXPECT_NEAR(l.block_s(), 7.68, 1e-12);
    EXPECT_EQ(m110d_transmission_time(l, 10000).units, 1u);
}

TEST(M110dTiming, BlocksHoldTheTablesInputBits)
{
    // Spot checks against m110d_waveforms.csv <il>_input_bits and <il>_frames.
    struct expect {
        unsigned bw, wn;
        m110d_interleaver il;
        unsigned frames, input_bits;
    };
    for (auto e : { expect{ 3, 6, m110d_interleaver::short_, 4, 1536 },
                    expect{ 3, 10, m110d_interleaver::long_, 64, 73728 },
                    expect{ 3, 0, m110d_interleaver::short_, 40, 40 },
                    expect{ 3, 1, m110d_interleaver::ultra_short, 4, 24 },
                    expect{ 3, 13, m110d_interleaver::medium, 16, 4608 },
                    expect{ 9, 0, m110d_interleaver::short_, 120, 160 },
                    expect{ 21, 1, m110d_interleaver::ultra_short, 4, 80 },
                    expect{ 42, 0, m110d_interleaver::medium, 2016, 2304 },
                    expect{ 48, 12, m110d_interleaver::ultra_short, 1, 19200 },
                    expect{ 48, 1, m110d_interleaver::long_, 288, 18432 } }) {
        const auto m = mode(e.bw, e.wn, e.il);
        EXPECT_EQ(m.frames_per_block, e.frames) << m.name();
        EXPECT_EQ(m.input_bits_per_block, e.input_bits) << m.name();
        EXPECT_EQ(m.timing().unit_bits, e.input_bits) << m.name();
    }
    // Every mode: the bytes that exactly fill whole blocks (with the EOM) leave no fill,
    // and one byte more opens one more block.
    for (const auto& m : every_mode()) {
        const size_t blocks =
            (m110d_eom_bits + m.input_bits_per_block - 1) / m.input_bits_per_block;
        const size_t bytes = (blocks * m.input_bits_per_block - m110d_eom_bits) / 8;
        auto t = m110d_transmission_time(m, bytes);
        EXPECT_EQ(t.units, blocks) << m.name();
        EXPECT_EQ(t.fill_bits, 0u) << m.name();
        t = m110d_transmission_time(m, bytes + 1);
        EXPECT_EQ(t.units, blocks + 1) << m.name();
        EXPECT_EQ(t.fill_bits, m.input_bits_per_block - 8) << m.name();
    }
}

TEST(M110dTiming, SpecWorkedExamples)
{
    // interleaver.worked_example: WN1 3 kHz US has a 192-bit interleaver: 4 frames of
    // 48 BPSK symbols, carrying 24 user bits at rate 1/8.
    const auto wn1 = mode(3, 1, m110d_interleaver::ultra_short);
    EXPECT_EQ(wn1.frames_per_block * wn1.data_symbols, 192u);
    EXPECT_EQ(wn1.input_bits_per_block * 8, 192u);
    // interleaver.wn0: 3 kHz WN0 S/M/L blocks are 0.533/1.92/7.68 s.
    EXPECT_NEAR(mode(3, 0, m110d_interleaver::short_).block_s(), 0.5 + 1 / 30.0, 1e-12);
    EXPECT_NEAR(mode(3, 0, m110d_interleaver::medium).block_s(), 1.92, 1e-12);
    EXPECT_NEAR(mode(3, 0, m110d_interleaver::long_).block_s(), 7.68, 1e-12);
    // eom_eot.eot: the extension is 32 symbols at 3 kHz, e.g. a 24-symbol probe (WN11)
    // grows to 56.
    const auto wn11 = mode(3, 11, m110d_interleaver::short_);
    m110d_timing_options eot;
    eot.eot_extension = true;
    EXPECT_NEAR(
        (wn11.probe_symbols / 2400.0 + wn11.eot_extension_s(eot)) * 2400, 56, 1e-9);
    // performance_D_LXIV: tests are run with 20 super-frames: 360 Walsh symbols = 4.8 s.
    m110d_preamble_options twenty;
    twenty.superframes = 20;
    EXPECT_NEAR(mode(3, 6, m110d_interleaver::long_).preamble_s(twenty),
                4.8 + 32 / 2400.0,
                1e-12);
}

TEST(M110dTiming, LongTransmissionsRunAtTheNominalRate)
{
    for (const auto& m : every_mode()) {
        const size_t bytes = 1'000'000;
        const auto t = m110d_transmission_time(m, bytes);
        const double bits = 8.0 * bytes + m110d_eom_bits;
        // Probes are part of the nominal rate; only the last block's fill is extra.
        EXPECT_GE(t.data_s, bits / m.user_bps() - 1e-6) << m.name();
        EXPECT_LE(t.data_s, bits / m.user_bps() + m.block_s() + 1e-6) << m.name();
        EXPECT_DOUBLE_EQ(m.timing().bit_rate, double(m.user_bps())) << m.name();
        // Over the whole transmission, the preamble, the EOM and the last block's fill
        // are the overhead.
        const double effective_bps = 8.0 * bytes / t.total_s;
        EXPECT_LE(effective_bps, m.user_bps()) << m.name();
        EXPECT_GE(effective_bps,
                  8.0 * bytes / (bits / m.user_bps() + t.preamble_s + m.block_s() + 1e-6))
            << m.name();
    }
}

TEST(M110dTiming, AirTimeGrowsByWholeBlocks)
{
    for (const auto& m : every_mode()) {
        const auto empty = m110d_transmission_time(m, 0);
        double previous = empty.total_s;
        size_t previous_units = empty.units;
        for (size_t bytes = 1; bytes < 5000; bytes += 97) {
            const auto t = m110d_transmission_time(m, bytes);
            EXPECT_GE(t.total_s, previous) << m.name();
            EXPECT_GE(t.units, previous_units) << m.name();
            EXPECT_LT(t.fill_bits, m.input_bits_per_block) << m.name();
            EXPECT_NEAR(t.data_s, t.units * m.block_s(), 1e-9) << m.name();
            EXPECT_DOUBLE_EQ(t.preamble_s, empty.preamble_s) << m.name();
            previous = t.total_s;
            previous_units = t.units;
        }
    }
}

TEST(M110dTiming, ModesAppendixDLacksAreRefused)
{
    // 155 bandwidth x WN rows, 4 interleavers each, less WN0 US at 12 bandwidths.
    EXPECT_EQ(every_mode().size(), 155u * 4 - 12);
    EXPECT_FALSE(m110d_mode_for(3, 0, m110d_interleaver::ultra_short));
    EXPECT_FALSE(m110d_mode_for(48, 0, m110d_interleaver::ultra_short));
    EXPECT_FALSE(m110d_mode_for(6, 13, m110d_interleaver::short_)); // WN13: 3 kHz only
    EXPECT_FALSE(m110d_mode_for(9, 4, m110d_interleaver::short_));  // no WN4 at 9, 18 kHz
    EXPECT_FALSE(m110d_mode_for(18, 4, m110d_interleaver::long_));
    EXPECT_FALSE(m110d_mode_for(27, 6, m110d_interleaver::short_)); // no 27 kHz
    EXPECT_FALSE(m110d_mode_for(3, 14, m110d_interleaver::short_)); // WN14/15 reserved
    EXPECT_FALSE(m110d_mode_for_rate(3, 12800, m110d_interleaver::short_)); // App C only
    EXPECT_FALSE(m110d_mode_for_rate(3, 75, m110d_interleaver::ultra_short));
    EXPECT_TRUE(m110d_mode_for(3, 13, m110d_interleaver::short_));
    EXPECT_TRUE(m110d_mode_for(12, 4, m110d_interleaver::short_));
    // Lookup by rate finds the same modes as by WN.
    EXPECT_EQ(m110d_mode_for_rate(3, 2400, m110d_interleaver::long_)->wn, 13u);
    EXPECT_EQ(m110d_mode_for_rate(3, 9600, m110d_interleaver::long_)->name(),
              "WN10/3kHz/L");
    EXPECT_EQ(m110d_mode_for_rate(24, 120000, m110d_interleaver::medium)->wn, 12u);
    for (const auto& m : every_mode()) {
        const auto by_rate = m110d_mode_for_rate(m.bw_khz, m.user_bps(), m.interleaver);
        ASSERT_TRUE(by_rate.has_value()) << m.name();
        EXPECT_EQ(by_rate->name(), m.name());
    }
}

TEST(M110dTiming, OptionsChangeThePreamble)
{
    const auto m = mode(3, 6, m110d_interleaver::short_);
    const double walsh_s = 32 / 2400.0; // 1/75 s
    const auto base = m110d_transmission_time(m, 1000);

    m110d_timing_options o;
    o.preamble.tlc_blocks = 3;
    auto t = m110d_transmission_time(m, 1000, o);
    EXPECT_NEAR(t.preamble_s - base.preamble_s, 3 * walsh_s, 1e-12);
    EXPECT_DOUBLE_EQ(t.data_s, base.data_s);

    // M = 2: two 18-symbol super-frames replace the single 10-symbol one.
    o = {};
    o.preamble.superframes = 2;
    t = m110d_transmission_time(m, 1000, o);
    EXPECT_NEAR(t.preamble_s - base.preamble_s, 26 * walsh_s, 1e-12);

    // EOT extension: 13.333 ms more at the end, the preamble unchanged.
    o = {};
    o.eot_extension = true;
    t = m110d_transmission_time(m, 1000, o);
    EXPECT_DOUBLE_EQ(t.preamble_s, base.preamble_s);
    EXPECT_NEAR(t.data_s - base.data_s, 1 / 75.0, 1e-12);
    EXPECT_EQ(t.units, base.units);

    // The Walsh symbol is 1/75 s at every bandwidth, so the default preamble is too;
    // the override scales it.
    const auto wide = mode(48, 6, m110d_interleaver::short_);
    EXPECT_NEAR(wide.preamble_s() - 512 / 38400.0, 10 * walsh_s, 1e-12);
    o = {};
    o.preamble.preamble_walsh_chips = 256;
    EXPECT_NEAR(wide.preamble_s(o.preamble) - 512 / 38400.0, 10 * 256 / 38400.0, 1e-12);

    // Out-of-range N or M is refused.
    o = {};
    o.preamble.superframes = 0;
    EXPECT_THROW(m110d_transmission_time(m, 1, o), std::invalid_argument);
    o.preamble.superframes = 33;
    EXPECT_THROW(m110d_transmission_time(m, 1, o), std::invalid_argument);
    o.preamble.superframes = 32;
    o.preamble.tlc_blocks = 256;
    EXPECT_THROW(m110d_transmission_time(m, 1, o), std::invalid_argument);
}

TEST(M110dTiming, PlannerTimingMatchesTheModel)
{
    m110d_timing_options o;
    o.preamble.superframes = 4;
    o.eot_extension = true;
    for (auto m : { mode(3, 6, m110d_interleaver::short_),
                    mode(3, 0, m110d_interleaver::long_),
                    mode(48, 12, m110d_interleaver::ultra_short) }) {
        for (size_t bytes : { 0u, 1u, 500u, 20000u }) {
            EXPECT_NEAR(transmission_time_of(m.timing(o), bytes).total_s,
                        m110d_transmission_time(m, bytes, o).total_s,
                        1e-9)
                << m.name();
        }
        // The largest payload within 10 s fits, one byte more does not.
        const size_t most = max_bytes_within(m.timing(o), 10.0);
        EXPECT_LE(m110d_transmission_time(m, most, o).total_s, 10.0 + 1e-9) << m.name();
        EXPECT_GT(m110d_transmission_time(m, most + 1, o).total_s, 10.0) << m.name();
    }
}

TEST(M110dTiming, ModesByName)
{
    const auto m = m110d_mode_by_name("wn12/48khz/us");
    ASSERT_TRUE(m.has_value());
    EXPECT_EQ(m->user_bps(), 240000u);
    EXPECT_EQ(m->name(), "WN12/48kHz/US");
    for (const char* bad : { "",
                             "WN12/48kHz",
                             "WN12/48kHz/VS",
                             "WN0/3kHz/US",
                             "WN13/48kHz/S",
                             "WN12/48kHz/USX",
                             "WN12/47kHz/S",
                             "12/48kHz/S" })
        EXPECT_FALSE(m110d_mode_by_name(bad).has_value()) << bad;
    const auto names = m110d_mode_names();
    EXPECT_EQ(names.size(), 608u); // the count the table tests cover
    for (const auto& n : names) {
        const auto again = m110d_mode_by_name(n);
        ASSERT_TRUE(again.has_value()) << n;
        EXPECT_EQ(again->name(), n);
    }
}
