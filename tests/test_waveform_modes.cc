/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

// The modem blocks' modes of either standard by name (STANAG 4539 and STANAG 5069 at
// 3 kHz), their timing, transmit points and the STANAG 5069 settings text.
#include "phy/m110c_transmitter.h"
#include "phy/m110d_transmitter.h"
#include "phy/waveform_modes.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>

using namespace gr::hfstack::phy;

TEST(WaveformModes, NamesAreBothStandardsAndEachResolvesToItself)
{
    const auto names = waveform_mode_names();
    // STANAG 4539 without the zero interleaver (6 serial-tone rates x S/L, 4800U, App C
    // 5 x 6 and 12800U), then STANAG 5069 at every bandwidth: at 3 kHz WN0
    // S/M/L and WN1-WN13 x 4; at the 11 others WN0 S/M/L and WN1-WN12 x 4, less WN4 at
    // 9 and 18 kHz.
    EXPECT_EQ(names.size(),
              6u * 2 + 1 + 5 * 6 + 1 + 3 + 13 * 4 + 11 * (3 + 12 * 4) - 2 * 4);
    EXPECT_EQ(std::set<std::string>(names.begin(), names.end()).size(), names.size());
    for (const auto& n : names) {
        const auto m = waveform_mode_by_name(n);
        ASSERT_TRUE(m.has_value()) << n;
        EXPECT_EQ(m->name, n);
        EXPECT_TRUE(waveform_mode_problem(n).empty()) << n;
        EXPECT_NE(m->s4539.has_value(), m->s5069.has_value()) << n;
        EXPECT_TRUE(waveform_timing_by_name(n).has_value()) << n;
    }
    EXPECT_EQ(names.front(), "75S");
    EXPECT_EQ(names.back(), "WN12/48kHz/L");
    EXPECT_NE(std::find(names.begin(), names.end(), "WN13/3kHz/L"), names.end());
    EXPECT_NE(std::find(names.begin(), names.end(), "WN12/48kHz/US"), names.end());
}

TEST(WaveformModes, WiderBandwidthsHaveTheirRatesAndRefuseTooFewSamples)
{
    // The blocks take every bandwidth; a sample rate that cannot hold a mode is
    // refused with the mode, its bandwidth and the least rate named.
    const auto m = waveform_mode_by_name("wn12/48khz/us");
    ASSERT_TRUE(m.has_value());
    EXPECT_EQ(m->name, "WN12/48kHz/US");
    EXPECT_EQ(m->user_bps, 240000u);
    EXPECT_EQ(waveform_bandwidth_khz(*m), 48u);
    EXPECT_EQ(waveform_symbol_rate(*m), 38400);
    EXPECT_EQ(waveform_carrier_hz(*m), 24300);
    EXPECT_EQ(waveform_sample_rate_problem(*m, 96000, true), "");
    EXPECT_EQ(waveform_sample_rate_problem(*m, 153600, true), "");
    const std::string why = waveform_sample_rate_problem(*m, 9600, true);
    EXPECT_NE(why.find("WN12/48kHz/US"), std::string::npos) << why;
    EXPECT_NE(why.find("48 kHz"), std::string::npos) << why;
    EXPECT_NE(why.find("51840"), std::string::npos) << why;
    EXPECT_NE(waveform_sample_rate_problem(*m, 51000, true), "");
    // Real samples: at 48 kHz the RRC-0.35 band reaches below 0 Hz on 24.3 kHz; 0.25
    // fits.
    EXPECT_NE(waveform_sample_rate_problem(*m, 192000, false).find("below 0 Hz"),
              std::string::npos);
    EXPECT_EQ(waveform_sample_rate_problem(*m, 192000, false, 0.25), "");
    EXPECT_NE(waveform_sample_rate_problem(*m, 96000, false, 0.25), "");
    const auto six = *waveform_mode_by_name("WN12/6kHz/US");
    EXPECT_EQ(waveform_sample_rate_problem(six, 48000, false), "");
    EXPECT_NE(waveform_sample_rate_problem(
                  *waveform_mode_by_name("WN12/9kHz/US"), 48000, false),
              "");
    const auto a = *waveform_mode_by_name("2400S");
    EXPECT_EQ(waveform_bandwidth_khz(a), 3u);
    EXPECT_EQ(waveform_sample_rate_problem(a, 8000, false), "");
    EXPECT_EQ(waveform_sample_rate_problem(a, 9600, true), "");
    EXPECT_NE(waveform_sample_rate_problem(a, 4000, false), "");
    m110d_receiver_config c;
    EXPECT_EQ(parse_m110d_receive_settings("bandwidth_khz=48 preamble_walsh=capped", c),
              "");
    EXPECT_EQ(c.bandwidth_khz, 48u);
    EXPECT_EQ(c.readings.preamble_walsh, m110d_preamble_walsh::capped);
    EXPECT_NE(
        parse_m110d_receive_settings("bandwidth_khz=27", c).find("bandwidth_khz takes"),
        std::string::npos);
    EXPECT_NE(parse_m110d_receive_settings("bandwidth_khz=", c), "");
    EXPECT_NE(parse_m110d_receive_settings("bandwidth_khz=-3", c), "");
    EXPECT_EQ(c.bandwidth_khz, 48u);
    m110d_transmit_options o;
    EXPECT_NE(parse_m110d_transmit_settings("bandwidth_khz=48", o), "");
}

TEST(WaveformModes, FiveThousandSixtyNineModesByNameWithRateAndInterleaver)
{
    const auto m = waveform_mode_by_name("wn8/3khz/l");
    ASSERT_TRUE(m.has_value());
    EXPECT_EQ(m->name, "WN8/3kHz/L");
    EXPECT_EQ(m->user_bps, 6400u);
    EXPECT_EQ(m->interleaver, "long");
    ASSERT_TRUE(m->s5069.has_value());
    EXPECT_EQ(m->s5069->wn, 8u);
    const auto us = waveform_mode_by_name("WN13/3kHz/US");
    ASSERT_TRUE(us.has_value());
    EXPECT_EQ(us->user_bps, 2400u);
    EXPECT_EQ(us->interleaver, "ultra_short");
    EXPECT_EQ(waveform_mode_by_name("WN0/3kHz/M")->user_bps, 75u);
    EXPECT_EQ(waveform_mode_by_name("WN12/3kHz/S")->user_bps, 16000u);
    // STANAG 4539's as s4539_modes has them.
    const auto c = waveform_mode_by_name("9600vl");
    ASSERT_TRUE(c.has_value());
    EXPECT_EQ(c->name, "9600VL");
    EXPECT_EQ(c->interleaver, "very_long");
    EXPECT_TRUE(c->s4539.has_value());
}

TEST(WaveformModes, RefusedNamesSayWhy)
{
    // WN0 has no US; WN14, WN13 above 3 kHz, WN4 at 9 kHz and 27 kHz do not exist.
    for (const char* bad : { "WN0/3kHz/US",
                             "WN14/3kHz/L",
                             "WN13/6kHz/S",
                             "WN4/9kHz/S",
                             "WN8/27kHz/S",
                             "WN8/3kHz/X",
                             "WN8",
                             "" }) {
        EXPECT_FALSE(waveform_mode_by_name(bad)) << bad;
        EXPECT_NE(waveform_mode_problem(bad).find("WN8/3kHz/L"), std::string::npos)
            << bad;
    }
    EXPECT_NE(waveform_mode_problem("9600X").find("STANAG 4539"), std::string::npos);
    // The zero interleaver keeps its own reason.
    EXPECT_EQ(waveform_mode_problem("2400Z"), s4539_mode_problem("2400Z"));
    EXPECT_TRUE(waveform_timing_by_name("2400Z").has_value());
}

TEST(WaveformModes, TransmitPointsAreEachStandardsOwn)
{
    const uint8_t bytes[] = { 1, 2, 3, 0xA5, 0xFF };
    m110d_transmit_options o;
    o.constraint_length = 9;
    o.readings.scrambler = x9_orientation::b;
    const auto m = *waveform_mode_by_name("WN6/3kHz/S");
    EXPECT_EQ(waveform_transmit_points(m, bytes, sizeof bytes, o),
              m110d_transmit_points(*m.s5069, bytes, sizeof bytes, o));
    const auto c = *waveform_mode_by_name("2400S");
    EXPECT_EQ(waveform_transmit_points(c, bytes, sizeof bytes, o),
              s4539_transmit_points(*c.s4539, bytes, sizeof bytes));
}

TEST(WaveformModes, TransmitSettingsText)
{
    m110d_transmit_options o;
    EXPECT_EQ(parse_m110d_transmit_settings("", o), "");
    EXPECT_EQ(o.constraint_length, 7u);
    EXPECT_EQ(parse_m110d_transmit_settings(
                  " scrambler=b,tail_biting=block_start  constraint_length=9 ", o),
              "");
    EXPECT_EQ(o.constraint_length, 9u);
    EXPECT_EQ(o.readings.scrambler, x9_orientation::b);
    EXPECT_EQ(o.readings.tail_biting, tail_biting_start::from_block_start);
    EXPECT_EQ(parse_m110d_transmit_settings(
                  "pn_alignment=continuous wid_parity=caption_d2_zero", o),
              "");
    EXPECT_EQ(o.readings.pn_alignment, m110d_pn_alignment::continuous);
    EXPECT_EQ(o.readings.wid_parity, m110d_wid_parity::caption_d2_zero);
    // Refused: the options stay as they were.
    const m110d_transmit_options before = o;
    for (const char* bad : { "constraint_length=8",
                             "scrambler=c",
                             "colour=red",
                             "preamble=find",
                             "scrambler=a constraint_length=5" }) {
        const std::string why = parse_m110d_transmit_settings(bad, o);
        EXPECT_FALSE(why.empty()) << bad;
        EXPECT_EQ(o.constraint_length, before.constraint_length) << bad;
        EXPECT_EQ(o.readings.scrambler, before.readings.scrambler) << bad;
    }
    EXPECT_NE(parse_m110d_transmit_settings("scrambler=c", o).find("a or b"),
              std::string::npos);
}

TEST(WaveformModes, ReceiveSettingsText)
{
    m110d_receiver_config c;
    EXPECT_EQ(parse_m110d_receive_settings("preamble=find scrambler=b", c), "");
    EXPECT_TRUE(c.find_preamble_readings);
    EXPECT_EQ(c.readings.scrambler, x9_orientation::b);
    EXPECT_FALSE(c.follow_frequency_rate);
    EXPECT_EQ(parse_m110d_receive_settings(
                  "preamble=configured frequency_loop=second_order", c),
              "");
    EXPECT_FALSE(c.find_preamble_readings);
    EXPECT_TRUE(c.follow_frequency_rate);
    EXPECT_EQ(parse_m110d_receive_settings("frequency_loop=first_order", c), "");
    EXPECT_FALSE(c.follow_frequency_rate);
    EXPECT_NE(parse_m110d_receive_settings("constraint_length=9", c), "");
    EXPECT_NE(parse_m110d_receive_settings("preamble=guess", c), "");
    EXPECT_NE(parse_m110d_receive_settings("frequency_loop=third_order", c), "");
    EXPECT_NE(parse_m110d_receive_settings("tail_biting=block_start wid_parity=odd", c),
              "");
    EXPECT_NE(parse_m110d_receive_settings("frequency_loop=second_order scrambler=c", c),
              "");
    // Unchanged on refusal.
    EXPECT_EQ(c.readings.tail_biting, tail_biting_start::first_pair_bit_7);
    EXPECT_FALSE(c.follow_frequency_rate);
    // The transmitter refuses it: a receiver's setting.
    m110d_transmit_options o;
    EXPECT_NE(parse_m110d_transmit_settings("frequency_loop=second_order", o), "");
    // scrambler=auto, tail_biting=auto: the receiver tries both; a reading named after
    // it takes it back. The transmitter sends one.
    EXPECT_EQ(parse_m110d_receive_settings("scrambler=auto tail_biting=auto", c), "");
    EXPECT_TRUE(c.find_scrambler);
    EXPECT_TRUE(c.find_tail_biting);
    EXPECT_EQ(parse_m110d_receive_settings("scrambler=a", c), "");
    EXPECT_FALSE(c.find_scrambler);
    EXPECT_TRUE(c.find_tail_biting);
    EXPECT_NE(parse_m110d_transmit_settings("scrambler=auto", o), "");
    EXPECT_NE(parse_m110d_transmit_settings("tail_biting=auto", o), "");
}

// The receiver finds every reading unless one is named; the mirrored K = 7 code only
// when told; the transmitter takes the field-trial knobs and refuses the receiver's.
TEST(WaveformModes, ReadingsFoundUnlessNamedAndTheTransmittersKnobs)
{
    const m110d_receiver_config defaults;
    EXPECT_TRUE(defaults.find_preamble_readings);
    EXPECT_TRUE(defaults.find_scrambler);
    EXPECT_TRUE(defaults.find_tail_biting);
    EXPECT_FALSE(defaults.k7_newest_bit_lsb);
    m110d_receiver_config c;
    EXPECT_EQ(parse_m110d_receive_settings(
                  "tail_biting=full_register pn_alignment=continuous", c),
              "");
    EXPECT_FALSE(c.find_tail_biting);
    EXPECT_FALSE(c.find_preamble_readings);
    EXPECT_TRUE(c.find_scrambler);
    EXPECT_EQ(c.readings.tail_biting, tail_biting_start::from_full_register);
    EXPECT_EQ(parse_m110d_receive_settings(
                  "tail_biting=auto preamble=find k7_newest_bit=lsb", c),
              "");
    EXPECT_TRUE(c.find_tail_biting);
    EXPECT_TRUE(c.find_preamble_readings);
    EXPECT_TRUE(c.k7_newest_bit_lsb);
    EXPECT_NE(parse_m110d_receive_settings("k7_newest_bit=middle", c).find("msb or lsb"),
              std::string::npos);
    EXPECT_NE(parse_m110d_receive_settings("tail_biting=bit_8", c)
                  .find("first_pair_bit_7, full_register or block_start"),
              std::string::npos);

    m110d_transmit_options o;
    EXPECT_EQ(parse_m110d_transmit_settings("tail_biting=block_start superframes=32 "
                                            "tlc_blocks=255 eot=on constraint_length=9",
                                            o),
              "");
    EXPECT_EQ(o.readings.tail_biting, tail_biting_start::from_block_start);
    EXPECT_EQ(o.timing.preamble.superframes, 32u);
    EXPECT_EQ(o.timing.preamble.tlc_blocks, 255u);
    EXPECT_TRUE(o.timing.eot_extension);
    EXPECT_EQ(o.constraint_length, 9u);
    EXPECT_EQ(parse_m110d_transmit_settings("eot=off superframes=1 tlc_blocks=0", o), "");
    EXPECT_FALSE(o.timing.eot_extension);
    for (const char* bad : { "superframes=0",
                             "superframes=33",
                             "tlc_blocks=256",
                             "eot=yes",
                             "superframes=x",
                             "k7_newest_bit=lsb" }) {
        const m110d_transmit_options before = o;
        EXPECT_NE(parse_m110d_transmit_settings(bad, o), "") << bad;
        EXPECT_EQ(o.timing.preamble.superframes, before.timing.preamble.superframes)
            << bad;
    }
    // App C takes the scrambler and tail-biting readings of the same settings.
    const auto c3200 = *waveform_mode_by_name("3200S");
    const uint8_t bytes[] = { 1, 2, 3, 4, 5 };
    m110d_transmit_options full;
    full.readings.tail_biting = tail_biting_start::from_full_register;
    m110c_readings c_full;
    c_full.tail_biting = tail_biting_start::from_full_register;
    EXPECT_EQ(
        waveform_transmit_points(c3200, bytes, sizeof bytes, full),
        m110c_transmit_points(*c3200.s4539->high, bytes, sizeof bytes, false, c_full));
    EXPECT_NE(waveform_transmit_points(c3200, bytes, sizeof bytes, full),
              waveform_transmit_points(c3200, bytes, sizeof bytes));
}
