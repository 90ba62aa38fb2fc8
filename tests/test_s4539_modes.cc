/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

// STANAG 4539 modes by name, and the node's default air-time model built on them.
#include "dl/node_engine.h"
#include "phy/m110a_timing.h"
#include "phy/m110c_timing.h"
#include "phy/s4539_modes.h"

#include <gtest/gtest.h>

using namespace gr::hfstack;

TEST(S4539Modes, EveryListedNameHasATimingWhoseRateIsTheNamedOne)
{
    const auto names = phy::s4539_mode_names();
    EXPECT_EQ(names.size(), 6u * 3 + 1 + 5 * 6 + 1);
    for (const auto& n : names) {
        const auto w = phy::s4539_timing(n);
        ASSERT_TRUE(w.has_value()) << n;
        // Long-run rate: 10 MB, preamble aside; the fill of the last unit (at most one
        // 8.64 s block in some 8700 s) is the 0.2 % tolerance.
        const size_t bytes = 10'000'000;
        const double rate = 8.0 * bytes / (phy::transmission_time_of(*w, bytes).data_s);
        EXPECT_NEAR(rate, std::stod(n), 0.002 * std::stod(n)) << n;
    }
}

TEST(S4539Modes, NamesSelectTheRightFamily)
{
    // 4800 with an interleaver is Appendix C 8PSK; 4800U the serial-tone uncoded mode.
    const auto c = phy::s4539_timing("4800S");
    ASSERT_TRUE(c);
    EXPECT_DOUBLE_EQ(c->preamble_s, phy::m110c_preamble_symbols / phy::m110c_symbol_rate);
    const auto a = phy::s4539_timing("4800u");
    ASSERT_TRUE(a);
    EXPECT_DOUBLE_EQ(a->preamble_s, 0.6);
    EXPECT_DOUBLE_EQ(phy::s4539_timing("1200l")->preamble_s, 4.8);
    EXPECT_EQ(phy::s4539_timing("9600VL")->unit_bits, 72u * 1152u);
}

TEST(S4539Modes, UnknownNamesAreRefused)
{
    for (const char* bad : { "",
                             "S",
                             "1200",
                             "1200US",
                             "9600Z",
                             "2400VL",
                             "3600S",
                             "12800S",
                             "9600U",
                             "99999999S",
                             "1200SS",
                             "-1200S" })
        EXPECT_FALSE(phy::s4539_timing(bad).has_value()) << bad;
}

TEST(S4539Modes, NodeDefaultTimingIsTheWaveformOne)
{
    using namespace dl;
    const auto same = [](const phy::waveform_timing& x, const phy::waveform_timing& y) {
        return x.preamble_s == y.preamble_s && x.unit_bits == y.unit_bits &&
               x.unit_s == y.unit_s && x.trailer_bits == y.trailer_bits &&
               x.units_per_reinsertion == y.units_per_reinsertion;
    };
    EXPECT_TRUE(same(default_waveform_timing({ rate_1200, interleaving_short }),
                     *phy::s4539_timing("1200S")));
    EXPECT_TRUE(same(default_waveform_timing({ rate_75, interleaving_none }),
                     *phy::s4539_timing("75Z")));
    EXPECT_TRUE(same(default_waveform_timing({ rate_9600, interleaving_long }),
                     *phy::s4539_timing("9600L")));
    EXPECT_TRUE(same(default_waveform_timing({ rate_9600, interleaving_none }),
                     *phy::s4539_timing("9600US")));
    // 3600 bps is no STANAG 4539 rate: the linear fallback.
    EXPECT_FALSE(
        default_waveform_timing({ rate_3600, interleaving_short }).whole_units());
}

TEST(S4539Modes, RateAndInterleaverNameEveryModeOfBothFamilies)
{
    using namespace phy;
    for (const std::string& name : s4539_mode_names()) {
        if (name.back() == 'Z')
            continue; // zero interleave is not offered (its mode codes are not known)
        const auto m = s4539_mode_by_name(name);
        ASSERT_TRUE(m) << name;
        EXPECT_EQ(m->name, name);
        EXPECT_NE(m->serial != nullptr, m->high.has_value()) << name;
        const auto again = s4539_mode_for(m->user_bps, m->interleaver);
        ASSERT_TRUE(again) << name;
        EXPECT_EQ(again->name, name);
        // The points last what the air-time model says.
        const std::vector<uint8_t> data(40, 0x5a);
        const auto points = s4539_transmit_points(*m, data.data(), data.size());
        const transmission_time t =
            transmission_time_of(*s4539_timing(name), data.size());
        EXPECT_NEAR(double(points.size()) / 2400.0, t.total_s, 1e-9) << name;
    }
    // 4800 bps: uncoded 110A without an interleaver, App C's coded 8PSK with one.
    EXPECT_EQ(s4539_mode_for(4800, "none")->name, "4800U");
    EXPECT_EQ(s4539_mode_for(4800, "short")->name, "4800S");
    EXPECT_EQ(s4539_mode_for(12800, "none")->name, "12800U");
    EXPECT_FALSE(s4539_mode_for(2400, "medium"));
    EXPECT_FALSE(s4539_mode_for(9600, "none"));
    EXPECT_FALSE(s4539_mode_for(12800, "short"));
    EXPECT_FALSE(s4539_mode_for(1234, "short"));
    EXPECT_FALSE(s4539_mode_for(2400, "none"));
    EXPECT_FALSE(s4539_mode_by_name("9600X"));
}
