/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

// The modem blocks' modes of either standard by name (STANAG 4539 and STANAG 5069 at
// 3 kHz), their timing, transmit points and the STANAG 5069 settings text.
#include "phy/m110d_transmitter.h"
#include "phy/waveform_modes.h"

#include <gtest/gtest.h>

#include <set>

using namespace gr::hfstack::phy;

TEST(WaveformModes, NamesAreBothStandardsAndEachResolvesToItself)
{
    const auto names = waveform_mode_names();
    // STANAG 4539 without the zero interleaver (6 serial-tone rates x S/L, 4800U, App C
    // 5 x 6 and 12800U), then STANAG 5069 at 3 kHz: WN0 S/M/L and WN1-WN13 x 4.
    EXPECT_EQ(names.size(), 6u * 2 + 1 + 5 * 6 + 1 + 3 + 13 * 4);
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
    EXPECT_EQ(names.back(), "WN13/3kHz/L");
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
    // Wider than 3 kHz: a timing (the simulator's) but no mode of the blocks.
    EXPECT_FALSE(waveform_mode_by_name("WN8/6kHz/L"));
    EXPECT_TRUE(waveform_timing_by_name("WN8/6kHz/L").has_value());
    EXPECT_NE(waveform_mode_problem("WN8/6kHz/L").find("6 kHz"), std::string::npos);
    // WN0 has no US; WN14 and WN13 above 3 kHz do not exist.
    for (const char* bad : { "WN0/3kHz/US", "WN14/3kHz/L", "WN8/3kHz/X", "WN8", "" }) {
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
    EXPECT_EQ(c.readings.tail_biting, tail_biting_start::from_full_register);
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
