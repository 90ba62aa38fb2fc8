/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

// STANAG 5069 modes in the node (dl/wideband_modes.h): their codes and
// names, the mode option and what it sets, the node's refusals, the air time of a
// node's bursts, the emulated modem carrying them, and rate adaptation across the WNs
// of one bandwidth.
#include "dl/node_engine.h"
#include "dl/transmission.h"
#include "dl/wideband_modes.h"
#include "phy/m110d_timing.h"
#include "sim/emulated_modem.h"
#include "traffic/scenario.h"

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

using namespace gr::hfstack;

namespace {

std::string refusal(const std::string& options)
{
    try {
        dl::node_config c;
        dl::set_node_options(c, options);
        dl::node_engine check(c);
    } catch (const std::invalid_argument& e) {
        return e.what();
    }
    return "";
}

phy::m110d_mode wn(const std::string& name) { return *phy::m110d_mode_by_name(name); }

} // namespace

TEST(WidebandNode, CodesAndNames)
{
    const auto w = dl::node_waveform_by_name("wn12/48khz/us");
    EXPECT_EQ(w.s5069_bandwidth_khz, 48u);
    EXPECT_EQ(w.mode, (dl::modem_mode{ 11, dl::interleaving_none }));
    EXPECT_EQ(dl::waveform_name(48, w.mode), "WN12/48kHz/US");
    EXPECT_EQ(dl::node_waveform_by_name("WN1/3kHz/L").mode,
              (dl::modem_mode{ 0, dl::interleaving_long }));
    EXPECT_EQ(dl::node_waveform_by_name("WN7/24kHz/M").mode,
              (dl::modem_mode{ 6, dl::interleaving_medium }));
    const auto s = dl::node_waveform_by_name("2400S");
    EXPECT_EQ(s.s5069_bandwidth_khz, 0u);
    EXPECT_EQ(s.mode, (dl::modem_mode{ dl::rate_2400, dl::interleaving_short }));
    EXPECT_EQ(dl::waveform_name(0, s.mode), "2400S");
    // Every WN1-WN12 mode of every bandwidth maps and maps back.
    for (const auto& name : phy::m110d_mode_names()) {
        const auto m = wn(name);
        const auto code = dl::s5069_node_mode(m);
        if (m.wn == 0 || m.wn == 13) {
            EXPECT_FALSE(code) << name;
            continue;
        }
        ASSERT_TRUE(code) << name;
        EXPECT_EQ(dl::waveform_name(m.bw_khz, *code), name);
    }
    // No WN4 at 9 and 18 kHz: code 3 means nothing there.
    EXPECT_FALSE(dl::s5069_mode_of(9, dl::modem_mode{ 3, dl::interleaving_short }));
    EXPECT_THROW(dl::waveform_timing_of(18, dl::modem_mode{ 3, dl::interleaving_short }),
                 std::invalid_argument);
}

TEST(WidebandNode, BadNamesAreRefusedWithAReason)
{
    auto why = [](const std::string& name) {
        try {
            dl::node_waveform_by_name(name);
        } catch (const std::invalid_argument& e) {
            return std::string(e.what());
        }
        return std::string();
    };
    EXPECT_NE(why("WN0/48kHz/S").find("WN1-WN12"), std::string::npos)
        << why("WN0/48kHz/S");
    EXPECT_NE(why("WN13/3kHz/US").find("WN1-WN12"), std::string::npos);
    EXPECT_NE(why("WN4/9kHz/S"), "");
    EXPECT_NE(why("WN12/50kHz/US"), "");
    EXPECT_NE(why("2400Z"), "");
    EXPECT_NE(refusal("mode=WN12/50kHz/US").find("option mode = 'WN12/50kHz/US'"),
              std::string::npos)
        << refusal("mode=WN12/50kHz/US");
}

TEST(WidebandNode, ModeOptionSetsTheBandwidthsLadder)
{
    dl::node_config c;
    dl::set_node_option(c, "mode", "WN12/48kHz/US");
    EXPECT_EQ(c.s5069_bandwidth_khz, 48u);
    EXPECT_EQ(dl::get_node_option(c, "mode"), "WN12/48kHz/US");
    EXPECT_EQ(dl::get_node_option(c, "answer_mode"), "WN2/48kHz/US");
    ASSERT_EQ(c.rate_policy.table.size(), 12u);
    EXPECT_EQ(c.rate_policy.table.front().mode,
              (dl::modem_mode{ 0, dl::interleaving_none }));
    EXPECT_DOUBLE_EQ(c.rate_policy.table.front().min_snr_db, -3.0); // D-LXIV WN1
    EXPECT_DOUBLE_EQ(c.rate_policy.table.back().min_snr_db, 30.0);  // D-LXIV WN12
    EXPECT_EQ(c.rate_policy.initial, c.mode);
    EXPECT_FALSE(c.rate_policy.correct_snr_reports);
    EXPECT_EQ(c.rate_change.supported.size(), 12u);
    // 9 and 18 kHz have no WN4: eleven rungs.
    EXPECT_EQ(dl::s5069_rate_table(9, phy::m110d_interleaver::long_).size(), 11u);
    // answer_mode after mode, at its bandwidth.
    dl::set_node_option(c, "answer_mode", "WN3/48kHz/S");
    EXPECT_EQ(dl::get_node_option(c, "answer_mode"), "WN3/48kHz/S");
    // Back to STANAG 4539: its defaults again.
    dl::set_node_option(c, "mode", "9600S");
    const dl::node_config defaults;
    EXPECT_EQ(c.s5069_bandwidth_khz, 0u);
    EXPECT_EQ(dl::get_node_option(c, "answer_mode"), "600S");
    EXPECT_EQ(c.rate_policy.table.size(), defaults.rate_policy.table.size());
    EXPECT_EQ(c.rate_change.supported, defaults.rate_change.supported);
    EXPECT_TRUE(c.rate_policy.correct_snr_reports);
}

TEST(WidebandNode, RefusalsNameTheProblem)
{
    EXPECT_EQ(refusal("mode=WN12/48kHz/US"), "");
    EXPECT_EQ(
        refusal("mode=WN12/48kHz/US;rate_adaptation=true;rate_change.autobaud=true"), "");
    EXPECT_NE(refusal("mode=WN12/48kHz/US;rate_adaptation=true").find("autobaud"),
              std::string::npos);
    EXPECT_NE(refusal("mode=WN8/24kHz/M;rate_adaptation=true;rate_change.autobaud=true")
                  .find("US, S or L interleaver"),
              std::string::npos);
    EXPECT_EQ(refusal("mode=WN8/24kHz/M"), ""); // M: a fixed mode
    EXPECT_NE(
        refusal("mode=WN12/48kHz/US;answer_mode=WN2/24kHz/US").find("set mode first"),
        std::string::npos);
    EXPECT_NE(refusal("answer_mode=WN2/24kHz/US").find("STANAG 4539 mode"),
              std::string::npos);
}

// Every burst of a node at WN12/48kHz/US lasts App D's air time of its bytes.
TEST(WidebandNode, BurstsLastTheModesAirTime)
{
    sim::scenario_config c;
    c.mode = "WN12/48kHz/US";
    c.client.send_bytes = 300'000;
    c.trace = true;
    const auto r = sim::run_scenario(c);
    ASSERT_TRUE(r.completed) << r.stopped;
    EXPECT_EQ(r.flows[0].bytes_delivered, 300'000u);
    const auto timing = wn("WN12/48kHz/US").timing();
    ASSERT_FALSE(r.transmissions.empty());
    for (const auto& t : r.transmissions) {
        EXPECT_EQ(t.mode, (dl::modem_mode{ 11, dl::interleaving_none }));
        EXPECT_DOUBLE_EQ(t.air_time_s, dl::air_time(timing, t.bytes()));
    }
}

// The emulated modem carries a STANAG 5069 mode with its bandwidth to the hearer.
TEST(WidebandNode, EmulatedModemCarriesTheBandwidth)
{
    sim::emulated_modem a(1), b(2);
    const dl::modem_mode m{ 11, dl::interleaving_none };
    const dl::bytes data(30'000, 0x55);
    const auto air = a.transmit(data, m, 0.0, 48);
    EXPECT_EQ(air.s5069_bandwidth_khz, 48u);
    EXPECT_DOUBLE_EQ(air.air_time_s,
                     dl::air_time(wn("WN12/48kHz/US").timing(), data.size()));
    ASSERT_TRUE(b.hear(air, 0.0));
    size_t delivered = 0;
    for (const auto& ev : b.poll(1000.0))
        if (ev.type == sim::modem_event::kind::burst) {
            EXPECT_EQ(ev.s5069_bandwidth_khz, 48u);
            EXPECT_EQ(*ev.info.mode, m);
            delivered += ev.data.size();
        }
    EXPECT_EQ(delivered, data.size());
    // The same bytes announced as 4539's 9600 bps (bandwidth 0) last another time: the
    // hearer refuses an air time that is not its model's.
    sim::air_transmission wrong = air;
    wrong.s5069_bandwidth_khz = 0;
    EXPECT_FALSE(b.hear(wrong, 0.0));
}

// Rate adaptation with autobaud across the WNs of 48 kHz: from WN6, the sender's mode
// follows the SNR the receiver reports to the least robust WN it clears by the
// hysteresis (1.5 dB over D-LXIV's AWGN row).
TEST(WidebandNode, RateAdaptationClimbsTheLadder)
{
    for (const auto& [snr, expected] :
         { std::pair<double, const char*>{ 35.0, "WN12/48kHz/US" },
           { 20.0, "WN8/48kHz/US" },
           { 10.0, "WN6/48kHz/US" } }) {
        sim::scenario_config c;
        c.mode = "WN6/48kHz/US";
        c.node_options = "rate_adaptation=true;rate_change.autobaud=true";
        c.client.send_bytes = 2'000'000;
        c.channel.snr_db = snr;
        c.trace = true;
        const auto r = sim::run_scenario(c);
        ASSERT_TRUE(r.completed) << snr << ": " << r.stopped;
        EXPECT_EQ(r.flows[0].bytes_delivered, 2'000'000u);
        ASSERT_FALSE(r.transmissions.empty());
        // The last data burst of node 0 (the sender).
        dl::modem_mode last{};
        for (const auto& t : r.transmissions)
            if (t.node == 0 && t.bytes() > 10'000)
                last = t.mode;
        EXPECT_EQ(dl::waveform_name(48, last), expected) << snr << " dB";
    }
}
