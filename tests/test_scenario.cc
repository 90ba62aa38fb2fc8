/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

// The simulator's runs (traffic/scenario.h): determinism, sanity properties, an analytic
// air-time case, the radio model, and refusal of bad settings.
#include "traffic/scenario.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <memory>
#include <utility>

using namespace gr::hfstack;
using namespace gr::hfstack::sim;

namespace {

scenario_config throughput(const std::string& mode, uint64_t bytes)
{
    scenario_config c;
    c.test = test_kind::throughput;
    c.mode = mode;
    c.client.send_bytes = bytes;
    c.duration_s = 24 * 3600;
    return c;
}

} // namespace

TEST(Scenario, ClearChannelDeliversEveryOfferedByteInOrder)
{
    auto c = throughput("2400S", 200'000);
    const auto r = run_scenario(c);
    ASSERT_TRUE(r.completed) << r.stopped;
    ASSERT_EQ(r.flows.size(), 1u);
    const auto& f = r.flows[0];
    EXPECT_EQ(f.bytes_delivered, 200'000u);
    EXPECT_EQ(f.bytes_sent, 200'000u);
    EXPECT_EQ(f.duplicates + f.out_of_order + f.corrupt + f.rejected, 0u);
    // Sanity: utilisation within (0, 1], time and bytes never go backwards.
    EXPECT_GT(f.utilisation, 0.5);
    EXPECT_LE(f.utilisation, 1.0);
    EXPECT_LE(f.steady_utilisation, 1.0);
    for (size_t i = 1; i < f.delivered.size(); ++i) {
        EXPECT_LE(f.delivered[i - 1].first, f.delivered[i].first);
        EXPECT_LT(f.delivered[i - 1].second, f.delivered[i].second);
    }
    EXPECT_LE(f.last_delivery_at, r.end_time_s);
}

// Node options override the scenario's own fields (hfstack-sim --node-option).
TEST(Scenario, NodeOptionsOverrideTheScenariosFields)
{
    auto c = throughput("2400S", 100'000);
    c.trace = true;
    c.max_transmission_s = 127.5;
    c.node_options = "max_transmission_s=20";
    const auto r = run_scenario(c);
    ASSERT_TRUE(r.completed) << r.stopped;
    ASSERT_FALSE(r.transmissions.empty());
    double longest = 0;
    for (const auto& t : r.transmissions)
        longest = std::max(longest, t.air_time_s);
    EXPECT_LE(longest, 20.0);
    EXPECT_GT(longest, 15.0); // 100 kB at 2400 bps fill them
}

TEST(Scenario, TheSameSeedGivesTheSameRun)
{
    auto c = throughput("1200S", 60'000);
    c.channel.ber = 1e-4;
    c.seed = 42;
    const auto a = run_scenario(c), b = run_scenario(c);
    ASSERT_TRUE(a.completed);
    EXPECT_EQ(a.end_time_s, b.end_time_s);
    EXPECT_EQ(a.flows[0].delivered, b.flows[0].delivered);
    EXPECT_EQ(a.network.bits_flipped, b.network.bits_flipped);
    EXPECT_EQ(a.nodes[0].counters.arq_retransmissions,
              b.nodes[0].counters.arq_retransmissions);
    c.seed = 43;
    const auto other = run_scenario(c);
    EXPECT_NE(other.network.bits_flipped, a.network.bits_flipped);
}

// One non-ARQ U_PDU, one transmission: its air time is the waveform model's for the
// burst's bytes, and the data arrives key-up + air time + receive latency after it was
// handed to the node.
TEST(Scenario, OneTransmissionTakesTheModelledAirTime)
{
    auto c = throughput("600S", 100);
    c.client.updu_size = 100;
    c.client.arq = false;
    c.radio.key_up_s = 0.25;
    c.radio.rx_latency_s = 0.125;
    const auto r = run_scenario(c);
    ASSERT_TRUE(r.completed) << r.stopped;
    ASSERT_EQ(r.nodes[0].air.transmissions, 1u);
    ASSERT_EQ(r.flows[0].delivered.size(), 1u);
    const auto t =
        phy::transmission_time_of(waveform_for("600S"), r.nodes[0].air.bytes_sent);
    EXPECT_DOUBLE_EQ(r.nodes[0].air.air_time_s, t.total_s);
    // 600S: 0.6 s preamble, 0.6 s blocks of 360 bits.
    EXPECT_DOUBLE_EQ(t.total_s, 0.6 + 0.6 * double(t.units));
    // The receiving modem hands on the block that completes the D_PDU, ahead of the
    // EOM's block.
    const auto pieces =
        phy::decoding_schedule(waveform_for("600S"), r.nodes[0].air.bytes_sent);
    ASSERT_GE(pieces.size(), 2u);
    const double complete_at =
        pieces[pieces.size() - 2].bytes_end == r.nodes[0].air.bytes_sent
            ? pieces[pieces.size() - 2].time_s
            : pieces.back().time_s;
    EXPECT_LT(complete_at, t.total_s);
    EXPECT_NEAR(r.flows[0].first_delivery_at - r.flows[0].first_send_at,
                0.25 + complete_at + 0.125,
                1e-9);
    // A modem that delivers at the burst's end.
    c.radio.deliver_per_block = false;
    const auto at_end = run_scenario(c);
    ASSERT_EQ(at_end.flows[0].delivered.size(), 1u);
    EXPECT_NEAR(at_end.flows[0].first_delivery_at - at_end.flows[0].first_send_at,
                0.25 + t.total_s + 0.125,
                1e-9);
}

TEST(Scenario, PingMeasuresRoundTrips)
{
    scenario_config c;
    c.test = test_kind::ping;
    c.mode = "1200S";
    c.client.pings = 4;
    c.client.ping_gap_s = 5;
    const auto r = run_scenario(c);
    ASSERT_TRUE(r.completed) << r.stopped;
    ASSERT_EQ(r.ping.pings.size(), 4u);
    EXPECT_EQ(r.ping.lost, 0u);
    EXPECT_GT(r.ping.first_s, r.ping.later_mean_s); // the first one makes the link
    EXPECT_LE(r.ping.later_min_s, r.ping.later_mean_s);
    EXPECT_LE(r.ping.later_mean_s, r.ping.later_max_s);
}

TEST(Scenario, BadSettingsAreRefusedWithAMessage)
{
    const auto refused = [](scenario_config c, const char* needle) {
        try {
            validate(c);
        } catch (const std::invalid_argument& e) {
            EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
            return;
        }
        ADD_FAILURE() << "accepted, expected: " << needle;
    };
    scenario_config c;
    c.mode = "1300S";
    refused(c, "STANAG 4539 mode");
    c.mode = "9600VS"; // App C interleavers are fixed modes only
    c.node_options = "rate_adaptation=true";
    refused(c, "cannot be used with rate_adaptation");
    c = scenario_config{};
    c.nodes = 1;
    refused(c, "nodes");
    c = scenario_config{};
    c.duration_s = -1;
    refused(c, "duration");
    c = scenario_config{};
    c.node_options = "no_such_option=1";
    refused(c, "no_such_option");
    c = scenario_config{};
    c.channel.ber = 2;
    refused(c, "ber");
    c = scenario_config{};
    c.client.updu_size = 4;
    c.client.send_bytes = 10;
    refused(c, "updu_size");
    c = scenario_config{};
    c.radio.key_up_s = -1;
    refused(c, "key_up_s");
    c = scenario_config{};
    c.test = test_kind::ping;
    refused(c, "ping");
}

// Two nodes without carrier sense that both start sending at once: their link requests
// collide, and the retries must not stay in lockstep.
TEST(Scenario, SimultaneousStartsWithoutChannelAccessGetThrough)
{
    auto c = throughput("9600S", 20'000);
    c.two_way = true;
    c.node_options = "channel_access.mode=none";
    c.duration_s = 3600;
    const auto r = run_scenario(c);
    ASSERT_TRUE(r.completed) << r.stopped;
    EXPECT_EQ(r.flows[0].bytes_delivered, 20'000u);
    EXPECT_EQ(r.flows[1].bytes_delivered, 20'000u);
    EXPECT_GT(r.network.collisions, 0u); // the first requests did collide
}

// App C's interleavers and 12800U run as the nodes' fixed mode, under their own names
// (they used to be refused, or mapped to short/long).
TEST(Scenario, AppendixCModesRunAsTheNodesFixedMode)
{
    EXPECT_EQ(node_mode_for("9600VS"),
              (dl::modem_mode{ dl::rate_9600, dl::interleaving_very_short }));
    EXPECT_EQ(node_mode_for("12800U"),
              (dl::modem_mode{ dl::rate_12800, dl::interleaving_none }));
    // The zero interleaver is a timing model only (reproduce's published rows); users
    // cannot choose it (hfstack-sim --mode refuses it as the node and the modem do).
    EXPECT_EQ(node_mode_for("1200Z"),
              (dl::modem_mode{ dl::rate_1200, dl::interleaving_none }));
    for (const char* mode : { "3200US", "9600M", "12800U" }) {
        auto c = throughput(mode, 20'000);
        const auto r = run_scenario(c);
        ASSERT_TRUE(r.completed) << mode << ": " << r.stopped;
        EXPECT_EQ(r.flows[0].bytes_delivered, 20'000u) << mode;
        EXPECT_DOUBLE_EQ(r.nominal_bps, waveform_for(mode).bit_rate) << mode;
    }
}

// A STANAG 5069 mode: its own air time, announced to the peer as 9600 bps.
TEST(Scenario, WidebandModesRunWithTheirOwnAirTime)
{
    EXPECT_EQ(node_mode_for("WN12/48kHz/US").data_rate, dl::rate_9600);
    EXPECT_EQ(node_mode_for("WN12/48kHz/L").interleaving, dl::interleaving_long);
    auto c = throughput("WN12/48kHz/US", 1'000'000);
    const auto r = run_scenario(c);
    ASSERT_TRUE(r.completed) << r.stopped;
    EXPECT_DOUBLE_EQ(r.nominal_bps, 240000.0);
    EXPECT_EQ(r.flows[0].bytes_delivered, 1'000'000u);
    // 1 MB at 240 kbps is 33 s of air: the whole run takes longer, but not 9600 bps long.
    EXPECT_GT(r.end_time_s, 33.3);
    EXPECT_LT(r.end_time_s, 300.0);
}

namespace {
// An application of its own (the kind a later IP client is): binds SAP 9 on node 2 and
// counts the U_PDUs that reach it; done after `want` of them.
class counting_sink : public traffic::sis_application
{
public:
    // `got` outlives the run (the scenario owns and destroys its applications).
    counting_sink(size_t want, std::shared_ptr<size_t> got)
        : want(want), got(std::move(got))
    {
    }
    void start(double) override
    {
        dl::sis_primitive b;
        b.type = dl::sis_type::bind_request;
        b.sap = 9;
        b.service_type.tx_mode = dl::sis_tx_mode::arq;
        out.push_back(b);
    }
    void on_primitive(const dl::sis_primitive& p, double) override
    {
        if (p.type == dl::sis_type::unidata_indication)
            ++*got;
        if (p.type == dl::sis_type::keep_alive)
            out.push_back(p);
    }
    void on_timer(double) override {}
    double next_deadline() const override
    {
        return std::numeric_limits<double>::infinity();
    }
    std::vector<dl::sis_primitive> take_outgoing() override
    {
        return std::exchange(out, {});
    }
    bool done() const override { return *got >= want; }

    size_t want;
    std::shared_ptr<size_t> got;
    std::vector<dl::sis_primitive> out;
};

// Sends `count` U_PDUs from node 1 to SAP 9 of node 2.
class burst_sender : public counting_sink
{
public:
    explicit burst_sender(size_t count)
        : counting_sink(0, std::make_shared<size_t>(0)), count(count)
    {
    }
    void on_primitive(const dl::sis_primitive& p, double now) override
    {
        counting_sink::on_primitive(p, now);
        if (p.type != dl::sis_type::bind_accepted)
            return;
        for (size_t i = 0; i < count; ++i) {
            dl::sis_primitive u;
            u.type = dl::sis_type::unidata_request;
            u.destination = dl::sis_address{ 2, 7 };
            u.destination_sap = 9;
            u.service_type.tx_mode = dl::sis_tx_mode::arq;
            u.payload = dl::bytes(300, uint8_t(i));
            out.push_back(u);
        }
    }
    size_t count;
};
} // namespace

// The traffic interface is open: applications of other kinds run beside the test
// clients, and the run waits for them.
TEST(Scenario, AddedApplicationsRunBesideTheTestClients)
{
    auto c = throughput("2400S", 10'000);
    auto received = std::make_shared<size_t>(0);
    c.applications = [&](size_t node) {
        std::vector<std::unique_ptr<traffic::sis_application>> v;
        if (node == 0)
            v.push_back(std::make_unique<burst_sender>(5));
        else if (node == 1)
            v.push_back(std::make_unique<counting_sink>(5, received));
        return v;
    };
    const auto r = run_scenario(c);
    ASSERT_TRUE(r.completed) << r.stopped;
    EXPECT_EQ(*received, 5u);
    EXPECT_EQ(r.flows[0].bytes_delivered, 10'000u); // the test client's flow too
}
