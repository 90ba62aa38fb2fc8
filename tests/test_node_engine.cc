/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

// The node engine on its own: configuration by name, the subnet interface towards
// clients, and what it puts on the air. Multi-node behaviour is in test_node_link.cc.
#include "node_test_support.h"

#include "phy/s4539_modes.h"

#include <gtest/gtest.h>

#include <functional>
#include <random>
#include <set>

using namespace gr::hfstack::dl;


TEST(NodeOptions, EveryOptionRoundTripsThroughText)
{
    node_config c;
    for (auto& o : node_options()) {
        EXPECT_EQ(get_node_option(c, o.name), o.default_value) << o.name;
        set_node_option(c, o.name, o.default_value); // defaults parse back
        EXPECT_FALSE(o.help.empty()) << o.name;
    }
}

TEST(NodeOptions, SetsNestedFieldsAndModes)
{
    node_config c;
    set_node_options(c, "address=0.0.1.2; mode=600L, cas.idle_timeout=inf\nmtu=1500;;");
    EXPECT_EQ(c.address, 0x102u);
    EXPECT_EQ(c.mode, (modem_mode{ rate_600, interleaving_long }));
    EXPECT_TRUE(std::isinf(c.cas.idle_timeout));
    EXPECT_EQ(c.mtu, 1500);
    set_node_option(c, "groups", "16.0.0.1 31.255.255.254");
    EXPECT_EQ(c.groups.size(), 2u);
    EXPECT_EQ(get_node_option(c, "groups"), "16.0.0.1 31.255.255.254");
    set_node_option(c, "channel_access.mode", "slotted");
    EXPECT_EQ(c.channel_access.mode, channel_access_mode::slotted);
    // The uncoded mode by the modem's name; the old N still read.
    set_node_option(c, "mode", "4800U");
    EXPECT_EQ(c.mode, (modem_mode{ rate_4800, interleaving_none }));
    EXPECT_EQ(get_node_option(c, "mode"), "4800U");
    set_node_option(c, "mode", "4800N");
    EXPECT_EQ(c.mode, (modem_mode{ rate_4800, interleaving_none }));
    // App C's interleavers and 12800U, under the modem's names (refused before).
    set_node_option(c, "mode", "9600vs");
    EXPECT_EQ(c.mode, (modem_mode{ rate_9600, interleaving_very_short }));
    EXPECT_EQ(get_node_option(c, "mode"), "9600VS");
    set_node_option(c, "mode", "12800U");
    EXPECT_EQ(c.mode, (modem_mode{ rate_12800, interleaving_none }));
    EXPECT_EQ(get_node_option(c, "mode"), "12800U");
}

TEST(NodeOptions, EveryModemModeIsANodeModeUnderTheSameName)
{
    node_config c;
    for (const std::string& name : gr::hfstack::phy::s4539_mode_names()) {
        if (name.back() == 'Z')
            continue; // no modem for it: refused below
        set_node_option(c, "mode", name);
        EXPECT_EQ(get_node_option(c, "mode"), name);
        // The air time model is the modem's own for that mode.
        EXPECT_EQ(default_waveform_timing(c.mode).unit_bits,
                  gr::hfstack::phy::s4539_timing(name)->unit_bits)
            << name;
        c.rate_adaptation = false;
        EXPECT_NO_THROW({ node_engine e(c); }) << name;
    }
}

TEST(NodeOptions, ModesTheModemLacksAreRefusedWithTheModemsReason)
{
    node_config c;
    auto message = [&](const std::string& mode) {
        try {
            set_node_option(c, "mode", mode);
        } catch (const std::invalid_argument& e) {
            return std::string(e.what());
        }
        return std::string("no error");
    };
    // The zero interleaver (the old 2400N meant it): one reason everywhere.
    for (const char* zero : { "2400Z", "75z" })
        EXPECT_EQ(message(zero),
                  "option mode = '" + std::string(zero) +
                      "': " + gr::hfstack::phy::s4539_mode_problem(zero));
    EXPECT_NE(message("2400Z").find("zero interleaver (Z) is not implemented"),
              std::string::npos);
    for (const char* bad : { "2400N", "9600U", "2400VS", "3600S", "12800S", "9600X" })
        EXPECT_NE(message(bad).find("not a STANAG 4539 mode of our modem"),
                  std::string::npos)
            << bad;
}

TEST(NodeEngine, AppendixCModesAreFixedModesOnly)
{
    // A data rate change announces Table C-5/C-6 codes only: an App C interleaver (or
    // 12800U) with rate adaptation is refused in one line naming both.
    for (const char* mode : { "9600VS", "3200US", "9600M", "9600VL", "12800U" }) {
        node_config c;
        set_node_options(c, std::string("mode=") + mode + ";rate_adaptation=true");
        try {
            node_engine e(c);
            ADD_FAILURE() << mode << " accepted with rate adaptation";
        } catch (const std::invalid_argument& e) {
            const std::string what = e.what();
            EXPECT_NE(what.find(std::string("mode ") + mode +
                                " cannot be used with rate_adaptation"),
                      std::string::npos)
                << what;
            EXPECT_EQ(what.find('\n'), std::string::npos);
        }
    }
    node_config c;
    set_node_options(c, "mode=9600L;rate_adaptation=true"); // App C, but Table C-6's long
    EXPECT_NO_THROW({ node_engine e(c); });
}

TEST(NodeOptions, BadNamesAndValuesAreNamedInTheError)
{
    node_config c;
    auto message = [&](const std::string& s) {
        try {
            set_node_options(c, s);
        } catch (const std::invalid_argument& e) {
            return std::string(e.what());
        }
        return std::string("no error");
    };
    EXPECT_NE(message("nosuch=1").find("unknown node option 'nosuch'"),
              std::string::npos);
    EXPECT_NE(message("mtu=-3").find("mtu"), std::string::npos);
    EXPECT_NE(message("mtu=99999").find("0..4096"), std::string::npos);
    EXPECT_NE(message("mode=2401S").find("mode"), std::string::npos);
    EXPECT_NE(message("mode=2400X").find("mode"), std::string::npos);
    EXPECT_NE(message("turnaround_s=abc").find("turnaround_s"), std::string::npos);
    EXPECT_NE(message("address").find("name=value"), std::string::npos);
    EXPECT_NE(message("broadcast_only=maybe").find("true or false"), std::string::npos);
}

TEST(NodeEngine, InvalidConfigurationIsRefusedWithTheFieldName)
{
    node_config c;
    c.address = broadcast_address;
    EXPECT_THROW({ node_engine e(c); }, std::invalid_argument);
    c = node_config();
    c.max_transmission_s = 200;
    try {
        node_engine e(c);
        FAIL();
    } catch (const std::invalid_argument& e) {
        EXPECT_NE(std::string(e.what()).find("max_transmission_s"), std::string::npos);
    }
    c = node_config();
    c.groups = { 5 };
    EXPECT_THROW({ node_engine e(c); }, std::invalid_argument);
}

TEST(NodeEngine, BindAnswersAcceptedAndSubnetAvailability)
{
    node_engine e(node_without_channel_access(1));
    e.on_sis(7, bind_request(3), 0.0);
    auto a = e.take_actions();
    ASSERT_EQ(types_of(a.to_clients),
              (std::vector<sis_type>{ sis_type::bind_accepted,
                                      sis_type::subnet_availability }));
    EXPECT_EQ(a.to_clients[0].client, 7u);
    EXPECT_EQ(a.to_clients[0].primitive.sap, 3);
    EXPECT_EQ(a.to_clients[0].primitive.mtu, 2048);
    EXPECT_TRUE(a.transmissions.empty());
    EXPECT_EQ(e.bound_clients(), std::vector<uint32_t>{ 7 });
}

TEST(NodeEngine, RequestsThatCannotBeServedAreRejectedWithTheirReason)
{
    node_engine e(node_without_channel_access(1));
    // Before any bind: rejected, and counted as an invalid primitive.
    e.on_sis(1, unidata_to(2, 3, bytes(10)), 0.0);
    auto a = e.take_actions();
    ASSERT_EQ(a.to_clients.size(), 1u);
    EXPECT_EQ(a.to_clients[0].primitive.type, sis_type::unidata_request_rejected);

    // A binding must name its service: "ignore" is refused.
    e.on_sis(1, bind_request(3, sis_tx_mode::ignore), 0.0);
    a = e.take_actions();
    ASSERT_EQ(a.to_clients.size(), 1u);
    EXPECT_EQ(a.to_clients[0].primitive.type, sis_type::bind_rejected);
    EXPECT_EQ(a.to_clients[0].primitive.reason,
              uint8_t(sis_bind_rejected_reason::unknown));
    e.on_sis(1, bind_request(3, sis_tx_mode::arq), 0.5);
    e.take_actions();
    auto big = unidata_to(2, 3, bytes(2049));
    big.service_type.tx_mode = sis_tx_mode::arq;
    e.on_sis(1, big, 1.0);
    a = e.take_actions();
    ASSERT_EQ(a.to_clients.size(), 1u);
    EXPECT_EQ(a.to_clients[0].primitive.reason,
              uint8_t(sis_unidata_rejected_reason::updu_larger_than_mtu));
    EXPECT_EQ(a.to_clients[0].primitive.payload.size(), 2049u);

    // The request names a delivery mode that does not exist.
    auto undefined_mode = unidata_to(2, 3, bytes(5));
    undefined_mode.service_type.tx_mode = sis_tx_mode(9);
    e.on_sis(1, undefined_mode, 2.0);
    a = e.take_actions();
    ASSERT_EQ(a.to_clients.size(), 1u);
    EXPECT_EQ(a.to_clients[0].primitive.reason,
              uint8_t(sis_unidata_rejected_reason::tx_mode_not_specified));
    EXPECT_EQ(e.counters().updus_rejected, 3u);
}

TEST(NodeEngine, UpduToItselfIsDeliveredLocally)
{
    node_engine e(node_without_channel_access(9));
    e.on_sis(1, bind_request(4), 0.0);
    e.on_sis(2, bind_request(5), 0.0);
    e.take_actions();
    e.on_sis(1, unidata_to(9, 5, bytes{ 1, 2, 3 }), 1.0);
    auto a = e.take_actions();
    ASSERT_EQ(a.to_clients.size(), 2u);
    EXPECT_EQ(a.to_clients[0].client, 2u);
    EXPECT_EQ(a.to_clients[0].primitive.type, sis_type::unidata_indication);
    EXPECT_EQ(a.to_clients[0].primitive.source_sap, 4);
    EXPECT_EQ(a.to_clients[0].primitive.payload, (bytes{ 1, 2, 3 }));
    EXPECT_EQ(a.to_clients[1].client, 1u);
    EXPECT_EQ(a.to_clients[1].primitive.type, sis_type::unidata_request_confirm);
    EXPECT_TRUE(a.transmissions.empty());
}

TEST(NodeEngine, ArqDataStartsWithALinkRequestAndWindowReset)
{
    node_engine e(node_without_channel_access(1));
    e.on_sis(1, bind_request(3), 0.0);
    e.on_sis(1, unidata_to(2, 3, bytes(100)), 0.0);
    auto a = e.take_actions();
    ASSERT_EQ(a.transmissions.size(), 1u);
    const auto& t = a.transmissions[0];
    EXPECT_EQ(t.mode, (modem_mode{ rate_2400, interleaving_short }));
    EXPECT_NEAR(
        t.air_time_s, air_time(default_waveform_timing(t.mode), t.burst.size()), 1e-9);
    dpdu_deframer df;
    auto frames = df.push(t.burst.data(), t.burst.size());
    ASSERT_EQ(frames.size(), 2u);
    ASSERT_EQ(t.dpdu_sizes.size(), 2u);
    EXPECT_EQ(frames[0].frame.type, dpdu_type::expedited_non_arq_data); // CAS REQUEST
    EXPECT_EQ(frames[0].frame.destination, 2u);
    EXPECT_EQ(frames[0].frame.source, 1u);
    EXPECT_EQ(frames[1].frame.type, dpdu_type::reset_win_resync);
    EXPECT_TRUE(frames[1].frame.full_reset);
    // EOT counts down to the end of the burst.
    EXPECT_GE(frames[0].frame.eot, frames[1].frame.eot);
    EXPECT_GT(frames[1].frame.eot, 0);
    EXPECT_EQ(e.link_state(2), cas_link_state::requesting);
    // Nothing more until the burst is over and an answer had time to come.
    EXPECT_GT(e.next_deadline(), t.air_time_s);
}

TEST(NodeEngine, ClientsConnectedCountsThoseConnectedNowAcceptedCountsAll)
{
    node_engine e(node_without_channel_access(1));
    for (uint32_t client = 1; client <= 3; ++client)
        e.on_client_connected(client, 0.0);
    EXPECT_EQ(e.counters().clients_connected, 3u);
    e.on_client_closed(2, 1.0);
    e.on_client_closed(3, 1.0);
    e.on_client_connected(4, 2.0);
    EXPECT_EQ(e.counters().clients_connected, 2u); // 1 and 4; it used to say 4
    EXPECT_EQ(e.counters().clients_accepted, 4u);
}

TEST(NodeEngine, LinksReportStateAndModesPerPeer)
{
    node_engine e(node_without_channel_access(1));
    EXPECT_TRUE(e.links().empty());
    e.on_sis(1, bind_request(3), 0.0);
    e.on_sis(1, unidata_to(2, 3, bytes(100)), 0.0);
    e.take_actions();
    const auto links = e.links();
    ASSERT_EQ(links.size(), 1u);
    EXPECT_EQ(links[0].peer, 2u);
    EXPECT_EQ(links[0].state, cas_link_state::requesting);
    EXPECT_EQ(links[0].tx_mode, (modem_mode{ rate_2400, interleaving_short }));
    EXPECT_EQ(links[0].rx_mode, (modem_mode{ rate_2400, interleaving_short }));
    ASSERT_EQ(e.bindings().size(), 1u);
    EXPECT_EQ(e.bindings()[0].sap, 3u);
    EXPECT_EQ(e.bindings()[0].client, 1u);
}

TEST(NodeEngine, GarbageFromTheAirIsCountedNotFatal)
{
    node_engine e(node_without_channel_access(1));
    bytes junk(5000);
    uint32_t x = 12345;
    for (auto& b : junk) {
        x = x * 1103515245u + 12345u;
        b = uint8_t(x >> 24);
    }
    junk[100] = 0x90;
    junk[101] = 0xEB;
    e.on_burst(junk, burst_info{}, 1.0);
    auto c = e.counters();
    EXPECT_EQ(c.bursts_received, 1u);
    EXPECT_EQ(c.bytes_received, 5000u);
    EXPECT_EQ(c.dpdus_received, 0u);
    EXPECT_GT(c.junk_bytes, 0u);
    EXPECT_TRUE(e.take_actions().empty());
}

TEST(NodeEngine, FatalClientErrorUnbindsAndDisconnects)
{
    node_engine e(node_without_channel_access(1));
    e.on_sis(4, bind_request(2), 0.0);
    e.take_actions();
    e.on_client_invalid(4, "5000 bytes without SIS sync", true, 1.0);
    auto a = e.take_actions();
    ASSERT_EQ(a.to_clients.size(), 1u);
    EXPECT_EQ(a.to_clients[0].primitive.type, sis_type::unbind_indication);
    EXPECT_EQ(a.to_clients[0].primitive.reason,
              uint8_t(sis_unbind_reason::too_many_invalid_primitives));
    ASSERT_EQ(a.disconnects.size(), 1u);
    EXPECT_EQ(a.disconnects[0].client, 4u);
    EXPECT_TRUE(e.bound_clients().empty());

    // An unbound client is dropped without an S_UNBIND_INDICATION (none applies).
    e.on_client_connected(5, 2.0);
    e.on_client_invalid(5, "garbage", true, 2.0);
    a = e.take_actions();
    EXPECT_TRUE(a.to_clients.empty());
    ASSERT_EQ(a.disconnects.size(), 1u);
    EXPECT_EQ(a.disconnects[0].client, 5u);
}

TEST(NodeEngine, NodeToClientPrimitivesFromAClientAreInvalid)
{
    node_config c = node_without_channel_access(1);
    c.supervision.max_invalid_primitives = 2;
    node_engine e(c);
    e.on_sis(3, bind_request(1), 0.0);
    e.take_actions();
    sis_primitive wrong;
    wrong.type = sis_type::unidata_indication;
    for (int i = 0; i < 3; ++i)
        e.on_sis(3, wrong, 1.0 + i);
    auto a = e.take_actions();
    ASSERT_EQ(a.disconnects.size(), 1u);
    EXPECT_EQ(a.disconnects[0].reason, sis_unbind_reason::too_many_invalid_primitives);
}

TEST(NodeEngine, OversizedUpduFromTheAirIsNotDelivered)
{
    node_engine e(node_without_channel_access(1));
    e.on_sis(3, bind_request(5, sis_tx_mode::non_arq), 0.0);
    e.take_actions();
    // A peer sends a 60,000-byte U_PDU in non-ARQ D_PDUs: reassembly accepts it, but
    // no MTU allows it and the SIS size field could not carry it.
    spdu s;
    s.type = spdu_type::data;
    s.destination_sap = 5;
    s.updu = bytes(60000, 0x5A);
    cpdu c;
    c.spdu = encode(s);
    non_arq_sender sender(non_arq_config{ 1023, 0, false, 0.0 });
    auto batch = sender.make_dpdus(encode(c), 1, false, 600, 0.0);
    bytes burst;
    for (auto& d : batch.dpdus) {
        d.source = 2;
        encode_into(d, burst);
    }
    e.on_burst(burst, burst_info{}, 1.0);
    auto a = e.take_actions();
    EXPECT_TRUE(a.to_clients.empty());
    EXPECT_EQ(e.counters().updus_undeliverable, 1u);
}

TEST(NodeEngine, HardLinkToItselfOrAGroupIsRefused)
{
    node_engine e(node_without_channel_access(1));
    e.on_sis(3, bind_request(5), 0.0);
    e.take_actions();
    for (uint32_t remote : { 1u, broadcast_address }) {
        sis_primitive est;
        est.type = sis_type::hard_link_establish;
        est.remote = sis_address{ remote, 7 };
        e.on_sis(3, est, 1.0);
        auto a = e.take_actions();
        ASSERT_EQ(a.to_clients.size(), 1u);
        EXPECT_EQ(a.to_clients[0].primitive.type, sis_type::hard_link_rejected);
        EXPECT_TRUE(a.transmissions.empty());
        e.on_timer(200.0); // nothing pending may throw later
        EXPECT_TRUE(e.take_actions().transmissions.empty());
    }
}

TEST(NodeEngine, ModemStillTransmittingHoldsTheNextBurst)
{
    node_engine e(node_without_channel_access(1));
    e.on_sis(3, bind_request(5, sis_tx_mode::non_arq), 0.0);
    e.on_sis(3, unidata_to(broadcast_address, 5, bytes(100, 1)), 0.0);
    auto a = e.take_actions();
    ASSERT_EQ(a.transmissions.size(), 1u);
    const double estimated_end = a.transmissions[0].air_time_s;
    e.on_phy_status(phy_event::tx_started, 0.0);
    // Long after the estimated end the modem has not said it finished: nothing goes.
    e.on_sis(3, unidata_to(broadcast_address, 5, bytes(100, 2)), estimated_end + 10);
    e.on_timer(estimated_end + 20);
    EXPECT_TRUE(e.take_actions().transmissions.empty());
    EXPECT_TRUE(e.transmitting(estimated_end + 20));
    e.on_phy_status(phy_event::tx_finished, estimated_end + 30);
    EXPECT_TRUE(e.take_actions().transmissions.empty()); // turnaround first
    e.on_timer(e.next_deadline());
    EXPECT_EQ(e.take_actions().transmissions.size(), 1u);
}

TEST(NodeEngine, ABurstInPiecesIsDeliveredAsItComesAndAnsweredAfterItsLastPiece)
{
    node_engine n1(node_without_channel_access(1)), n2(node_without_channel_access(2));
    double now = 0;
    const node_transmission data_burst = first_data_burst(n1, n2, now);
    ASSERT_FALSE(data_burst.burst.empty());
    n2.take_actions();
    // Three pieces cutting D_PDUs in the middle: the first U_PDU is whole after piece 2.
    const size_t size = data_burst.burst.size();
    const size_t cuts[] = { 0, 301, size / 2 + 7, size };
    const double start = now;
    const uint64_t received_before = n2.counters().bursts_received;
    std::vector<bytes> delivered;
    for (int i = 0; i < 3; ++i) {
        burst_info info;
        info.burst_continues = i < 2;
        const double t = start + 2.0 * (i + 1);
        n2.on_burst(bytes(data_burst.burst.begin() + long(cuts[i]),
                          data_burst.burst.begin() + long(cuts[i + 1])),
                    info,
                    t);
        auto a = n2.take_actions();
        for (auto& m : a.to_clients)
            if (m.primitive.type == sis_type::unidata_indication)
                delivered.push_back(m.primitive.payload);
        if (i < 2) {
            EXPECT_TRUE(a.transmissions.empty()) << i; // the sender is still on the air
            // Not even once the turnaround and more have passed.
            n2.on_timer(t + 1.9);
            EXPECT_TRUE(n2.take_actions().transmissions.empty()) << i;
            if (i == 1) {
                EXPECT_GE(delivered.size(), 1u); // before the burst's end
            }
        }
    }
    ASSERT_EQ(delivered.size(), 3u);
    for (uint8_t k = 0; k < 3; ++k)
        EXPECT_EQ(delivered[k], bytes(600, uint8_t(k + 1)));
    // After the last piece: the acknowledgement, after the turnaround.
    n2.on_timer(n2.next_deadline());
    const auto answer = n2.take_actions().transmissions;
    ASSERT_EQ(answer.size(), 1u);
    dpdu_deframer df;
    bool acks = false;
    for (auto& f : df.push(answer[0].burst.data(), answer[0].burst.size()))
        acks = acks || f.frame.type == dpdu_type::ack_only ||
               f.frame.type == dpdu_type::data_ack;
    EXPECT_TRUE(acks);
    EXPECT_EQ(n2.counters().bursts_received,
              received_before + 1); // one burst, three pieces
}

// The sender gave up waiting and repeated its data (with new data behind it) when the
// peer's late answer came, heard during the repeat over a full-duplex channel. That
// answer cannot speak for the repeat, still on its way: taking it as the answer made
// every later burst resend the one before (the storm seen with the real modems).
TEST(NodeEngine, ALateAnswerHeardDuringTheNextBurstLeavesThatBurstUndecided)
{
    node_engine n1(node_without_channel_access(1)), n2(node_without_channel_access(2));
    double now = 0;
    const node_transmission first = first_data_burst(n1, n2, now);
    ASSERT_FALSE(first.burst.empty());
    n2.take_actions();
    for (uint8_t k = 3; k < 6; ++k)
        n1.on_sis(1, unidata_to(2, 3, bytes(600, uint8_t(k + 1))), now);
    auto data_fsns = [](const node_transmission& t) {
        std::set<uint16_t> fsns;
        for (auto& d : frames_of(t))
            if (d.type == dpdu_type::data_only || d.type == dpdu_type::data_ack)
                fsns.insert(d.tx_sequence);
        return fsns;
    };
    const auto first_fsns = data_fsns(first);
    size_t confirmed = 0;
    auto transmissions_of_n1 = [&] {
        auto a = n1.take_actions();
        for (auto& m : a.to_clients)
            confirmed += m.primitive.type == sis_type::unidata_request_confirm;
        return a.transmissions;
    };
    // No answer by the deadline: the first burst again, and the new data.
    node_transmission repeat;
    for (int i = 0; i < 10 && repeat.burst.empty(); ++i) {
        now = n1.next_deadline();
        n1.on_timer(now);
        for (auto& t : transmissions_of_n1())
            repeat = t;
    }
    ASSERT_FALSE(repeat.burst.empty());
    ASSERT_EQ(n1.counters().response_timeouts, 1u);
    const auto repeat_fsns = data_fsns(repeat);
    ASSERT_TRUE(std::includes(
        repeat_fsns.begin(), repeat_fsns.end(), first_fsns.begin(), first_fsns.end()));
    ASSERT_GT(repeat_fsns.size(), first_fsns.size());
    const double repeat_end = now + repeat.air_time_s;
    // The peer hears the first burst late and answers it; the answer reaches n1 while
    // the repeat is on the air.
    n2.on_burst(first.burst, burst_info{}, now + 0.1);
    const double late_start = n2.next_deadline();
    n2.on_timer(late_start);
    auto late = n2.take_actions().transmissions;
    ASSERT_EQ(late.size(), 1u);
    ASSERT_LT(late_start + late[0].air_time_s, repeat_end);
    n1.on_burst(late[0].burst, burst_info{}, late_start + late[0].air_time_s);
    EXPECT_EQ(transmissions_of_n1().size(), 0u);
    EXPECT_EQ(confirmed, 3u); // what the first burst carried
    // After the repeat, n1 waits for its answer instead of sending its new data again.
    n1.on_timer(repeat_end + node_config{}.turnaround_s + 0.01);
    EXPECT_EQ(transmissions_of_n1().size(), 0u);
    // The answer to the repeat confirms all six U_PDUs; nothing of the repeat was sent
    // a third time.
    n2.on_burst(repeat.burst, burst_info{}, repeat_end + 0.1);
    const double answer_start = n2.next_deadline();
    n2.on_timer(answer_start);
    auto answer = n2.take_actions().transmissions;
    ASSERT_EQ(answer.size(), 1u);
    n1.on_burst(answer[0].burst, burst_info{}, answer_start + answer[0].air_time_s);
    transmissions_of_n1();
    EXPECT_EQ(confirmed, 6u);
    EXPECT_EQ(n1.counters().arq_retransmissions, first_fsns.size());
    EXPECT_EQ(n1.counters().response_timeouts, 1u);
}

TEST(NodeEngine, APieceWithoutItsEndReleasesTheChannelAfterTheLongestBurst)
{
    node_config c = node_without_channel_access(2);
    node_engine e(c);
    e.on_sis(3, bind_request(5, sis_tx_mode::non_arq), 0.0);
    burst_info piece;
    piece.burst_continues = true;
    e.on_burst(bytes(40, 0x55), piece, 1.0); // junk, and the modem never ends the burst
    e.on_sis(3, unidata_to(broadcast_address, 5, bytes(100, 1)), 1.0);
    EXPECT_TRUE(e.take_actions().transmissions.empty());
    // Nothing goes while the burst may still be on the air; then it does.
    const double released = 1.0 + c.max_transmission_s;
    double sent_at = -1;
    for (int i = 0; i < 50 && sent_at < 0; ++i) {
        const double t = e.next_deadline();
        ASSERT_TRUE(std::isfinite(t));
        e.on_timer(t);
        if (!e.take_actions().transmissions.empty())
            sent_at = t;
    }
    EXPECT_GE(sent_at, released);
    EXPECT_LE(sent_at, released + c.turnaround_s + 1e-9);
    EXPECT_EQ(e.counters().bursts_received, 1u);
}

// Rate adaptation with autobaud: a transmission without data (the receiver's acks) goes
// in answer_mode, and a burst the receiver cannot read at all, with an SNR report that
// advises a more robust mode, is answered at once so the advice reaches its sender.
namespace {

struct autobaud_pair {
    node_engine n1, n2;
    double now = 0;
    std::vector<node_transmission> sent_by_n2;
    static node_config config(uint32_t address, const std::string& extra)
    {
        node_config c = node_without_channel_access(address);
        set_node_options(
            c, "mode=2400S;rate_adaptation=true;rate_change.autobaud=true" + extra);
        return c;
    }
    explicit autobaud_pair(const std::string& extra = "")
        : n1(config(1, extra)), n2(config(2, extra))
    {
        n1.on_sis(1, bind_request(3), 0.0);
        n2.on_sis(7, bind_request(3), 0.0);
        n2.take_actions();
    }
    static bool carries_data(const node_transmission& t)
    {
        dpdu_deframer df;
        for (auto& f : df.push(t.burst.data(), t.burst.size()))
            if (f.frame.type == dpdu_type::data_only ||
                f.frame.type == dpdu_type::data_ack)
                return true;
        return false;
    }
    // Whole bursts back and forth (no carrier sense) until `stop` says so for one of n1's
    // (which is then not delivered) or rounds run out; false then.
    bool exchange_until(const std::function<bool(const node_transmission&)>& stop,
                        node_transmission* stopped = nullptr)
    {
        for (int round = 0; round < 40; ++round) {
            for (auto* from : { &n1, &n2 }) {
                node_engine* to = from == &n1 ? &n2 : &n1;
                for (auto& t : from->take_actions().transmissions) {
                    if (from == &n1 && stop(t)) {
                        if (stopped)
                            *stopped = t;
                        return true;
                    }
                    if (from == &n2)
                        sent_by_n2.push_back(t);
                    burst_info info;
                    info.mode = t.mode;
                    to->on_burst(t.burst, info, now + t.air_time_s);
                }
            }
            now = std::min(n1.next_deadline(), n2.next_deadline());
            if (!std::isfinite(now))
                return false;
            n1.on_timer(now);
            n2.on_timer(now);
        }
        return false;
    }
};

} // namespace

TEST(NodeEngine, AutobaudAnswersGoInTheAnswerModeAndUnreadableBurstsAreAnswered)
{
    autobaud_pair p;
    for (uint8_t k = 0; k < 30; ++k) // more than one transmission holds
        p.n1.on_sis(1, unidata_to(2, 3, bytes(2048, uint8_t(k + 1))), 0.0);
    // Up to n1's second data burst: n2 has acked the first by then.
    int data_bursts = 0;
    node_transmission second;
    ASSERT_TRUE(p.exchange_until(
        [&](const node_transmission& t) {
            return autobaud_pair::carries_data(t) && ++data_bursts == 2;
        },
        &second));
    // (n2 advises its policy's mode for 2400S, the ladder's nearest at least as robust.)
    ASSERT_TRUE(less_robust(second.mode, modem_mode{ rate_600, interleaving_short }))
        << to_string(second.mode);
    EXPECT_EQ(p.n1.counters().response_timeouts, 0u);
    size_t answers = 0;
    for (const auto& t : p.sent_by_n2)
        if (!autobaud_pair::carries_data(t)) {
            EXPECT_EQ(to_string(t.mode), "600S");
            ++answers;
        }
    EXPECT_GE(answers, 1u);
    // The second data burst arrives unreadable (noise) with a report of 0 dB: n2 has
    // nothing to attribute it to but its one link, advises a robust mode and answers.
    p.n2.take_actions();
    std::mt19937 rng(5);
    bytes noise(second.burst.size());
    for (auto& x : noise)
        x = uint8_t(rng());
    burst_info info;
    info.mode = second.mode;
    info.snr_db = 0.0;
    const double end = p.now + second.air_time_s;
    p.n2.on_burst(noise, info, end);
    EXPECT_EQ(p.n2.counters().answers_unattributed, 1u);
    EXPECT_EQ(p.n2.counters().snr_reports_unattributed, 1u);
    p.n2.on_timer(p.n2.next_deadline());
    auto answer = p.n2.take_actions().transmissions;
    ASSERT_EQ(answer.size(), 1u);
    EXPECT_LE(p.n2.next_deadline(), end + 10);
    // n1 takes the answer and its advice: its next data go more robust.
    p.n1.on_burst(answer[0].burst, burst_info{}, end + 5);
    node_transmission next;
    ASSERT_TRUE(p.exchange_until(autobaud_pair::carries_data, &next));
    EXPECT_TRUE(less_robust(second.mode, next.mode)) << to_string(next.mode);
}

TEST(NodeEngine, AnswerModeNoneAnswersInTheTransmitMode)
{
    autobaud_pair p(";answer_mode=none");
    for (uint8_t k = 0; k < 30; ++k) // more than one transmission holds
        p.n1.on_sis(1, unidata_to(2, 3, bytes(2048, uint8_t(k + 1))), 0.0);
    int data_bursts = 0;
    ASSERT_TRUE(p.exchange_until([&](const node_transmission& t) {
        return autobaud_pair::carries_data(t) && ++data_bursts == 2;
    }));
    ASSERT_FALSE(p.sent_by_n2.empty());
    for (const auto& t : p.sent_by_n2) // 2400S, then the mode n1 advises
        EXPECT_TRUE(less_robust(t.mode, modem_mode{ rate_600, interleaving_short }))
            << to_string(t.mode);
    node_config bad = autobaud_pair::config(1, "");
    EXPECT_THROW(set_node_options(bad, "answer_mode=fast"), std::invalid_argument);
    set_node_options(bad, "answer_mode=12800U"); // a mode, but none a change can announce
    EXPECT_THROW(node_engine{ bad }, std::invalid_argument);
}

namespace {

node_config lossy_link_node(uint32_t address, const std::string& options)
{
    node_config c = node_without_channel_access(address);
    set_node_options(c, options);
    return c;
}

// `source`'s data to node 9 as a third station hears them: 40 D_PDUs of 400 bytes,
// every other one with a damaged segment.
bytes heard_lossy_data_from(uint32_t source)
{
    bytes air;
    for (int k = 0; k < 40; ++k) {
        dpdu d;
        d.type = dpdu_type::data_only;
        d.source = source;
        d.destination = 9;
        d.tx_sequence = uint16_t(k);
        d.segment = bytes(400, uint8_t(k));
        bytes b = encode(d);
        if (k % 2)
            b[b.size() - 10] ^= 0x55; // inside the segment: its CRC fails
        air.insert(air.end(), b.begin(), b.end());
    }
    return air;
}

// n1's first data burst delivered to n2, which has 900 bytes of its own for n1: n2's
// answer, and the time it was made.
node_transmission answer_with_data(node_engine& n1, node_engine& n2, double& now)
{
    const node_transmission first = first_data_burst(n1, n2, now);
    n2.on_sis(7, unidata_to(1, 3, bytes(900, 9)), now);
    n2.take_actions();
    now += first.air_time_s;
    n2.on_burst(first.burst, burst_info{}, now);
    for (int i = 0; i < 5; ++i) {
        auto t = n2.take_actions().transmissions;
        if (!t.empty())
            return t[0];
        now = n2.next_deadline();
        n2.on_timer(now);
    }
    return {};
}

} // namespace

// On a link losing frames (here as heard from the peer, before the link's own acks
// measure it) the ack that rides in the answer's first data D_PDU goes again in an
// ACK-ONLY after the data: the answer still acks when that long first frame is lost. On
// a link that has shown no losses, no copy.
TEST(NodeEngine, OnALossyLinkTheAckGoesAgainAfterTheData)
{
    for (const bool copy : { true, false }) {
        const std::string o =
            std::string("arq_ack_copy_on_lossy_link=") + (copy ? "true" : "false");
        node_engine n1(lossy_link_node(1, o)), n2(lossy_link_node(2, o));
        n2.on_burst(heard_lossy_data_from(1), burst_info{}, 0.5);
        n2.take_actions();
        double now = 1;
        const node_transmission answer = answer_with_data(n1, n2, now);
        const auto frames = frames_of(answer);
        ASSERT_FALSE(frames.empty()) << copy;
        const auto first_data =
            std::find_if(frames.begin(), frames.end(), [](const dpdu& d) {
                return d.type == dpdu_type::data_ack;
            });
        ASSERT_NE(first_data, frames.end()) << copy;
        const size_t ack_only =
            size_t(std::count_if(frames.begin(), frames.end(), [](const dpdu& d) {
                return d.type == dpdu_type::ack_only;
            }));
        if (!copy) {
            EXPECT_EQ(ack_only, 0u);
            continue;
        }
        ASSERT_EQ(ack_only, 1u);
        EXPECT_EQ(frames.back().type, dpdu_type::ack_only); // after every data D_PDU
        EXPECT_EQ(ack_of(frames.back()), ack_of(*first_data));

        // The first data D_PDU lost: n1 takes the copy, and its next burst repeats none
        // of what n2 acknowledged.
        dpdu_deframer df;
        bytes cut;
        for (auto& f : df.push(answer.burst.data(), answer.burst.size())) {
            if (f.frame.type == dpdu_type::data_ack)
                continue;
            cut.insert(cut.end(),
                       answer.burst.begin() + long(f.stream_offset),
                       answer.burst.begin() + long(f.stream_offset + f.length));
        }
        n1.on_sis(1, unidata_to(2, 3, bytes(600, 4)), now);
        n1.take_actions();
        now += answer.air_time_s;
        n1.on_burst(cut, burst_info{}, now);
        const uint64_t retx_before = n1.counters().arq_retransmissions;
        for (int i = 0; i < 5 && n1.take_actions().transmissions.empty(); ++i) {
            now = n1.next_deadline();
            n1.on_timer(now);
        }
        EXPECT_EQ(n1.counters().arq_retransmissions, retx_before);
    }
}

TEST(NodeEngine, OnALinkWithoutLossesTheAckGoesOnce)
{
    node_engine n1(node_without_channel_access(1)), n2(node_without_channel_access(2));
    double now = 0;
    const auto frames = frames_of(answer_with_data(n1, n2, now));
    ASSERT_FALSE(frames.empty());
    EXPECT_EQ(std::count_if(frames.begin(),
                            frames.end(),
                            [](const dpdu& d) { return d.type == dpdu_type::ack_only; }),
              0);
}

// On a link losing frames, a burst of data to a peer says again where our receive
// window stands, though nothing came from it since our last ack (which may have been
// lost).
TEST(NodeEngine, EveryDataBurstToAPeerCarriesAnAckOfWhatWeHoldFromIt)
{
    for (const bool every : { true, false }) {
        const std::string o =
            std::string(
                "arq_ack_copy_on_lossy_link=false;arq_ack_with_every_data_burst=") +
            (every ? "true" : "false");
        node_engine n1(lossy_link_node(1, o)), n2(lossy_link_node(2, o));
        n2.on_burst(heard_lossy_data_from(1), burst_info{}, 0.5); // a link losing frames
        n2.take_actions();
        double now = 1;
        const node_transmission first = first_data_burst(n1, n2, now);
        now += first.air_time_s;
        n2.on_burst(first.burst, burst_info{}, now);
        // n2's answer (an ack alone): lost.
        for (int i = 0; i < 5 && n2.take_actions().transmissions.empty(); ++i) {
            now = n2.next_deadline();
            n2.on_timer(now);
        }
        // Later n2 has data for n1 and nothing new came from it.
        now += 20;
        n2.on_sis(7, unidata_to(1, 3, bytes(900, 9)), now);
        std::vector<node_transmission> sent;
        for (int i = 0; i < 5 && sent.empty(); ++i) {
            sent = n2.take_actions().transmissions;
            if (sent.empty()) {
                now = n2.next_deadline();
                n2.on_timer(now);
            }
        }
        ASSERT_FALSE(sent.empty()) << every;
        bool data = false, acks = false;
        for (auto& d : frames_of(sent[0])) {
            data =
                data || d.type == dpdu_type::data_only || d.type == dpdu_type::data_ack;
            acks = acks || d.type == dpdu_type::data_ack || d.type == dpdu_type::ack_only;
        }
        EXPECT_TRUE(data) << every;
        EXPECT_EQ(acks, every);
    }
}

// Until a link's own acks measure its losses, segments are cut for the losses heard in
// the peer's data D_PDUs to any node, when those are worse than assumed.
TEST(NodeEngine, FirstSegmentsAreCutForTheLossesHeardFromThePeer)
{
    size_t longest[2] = { 0, 0 };
    for (const bool heard : { true, false }) {
        const std::string o =
            std::string("segment_from_heard_frames=") + (heard ? "true" : "false");
        node_engine n1(lossy_link_node(1, o)), n2(lossy_link_node(2, o));
        n1.on_burst(heard_lossy_data_from(2), burst_info{}, 1.0);
        n1.take_actions();
        EXPECT_EQ(n1.counters().dpdus_not_for_us, 40u);
        double now = 2;
        const node_transmission t = first_data_burst(n1, n2, now);
        for (auto& d : frames_of(t))
            if (d.type == dpdu_type::data_only || d.type == dpdu_type::data_ack)
                longest[heard] = std::max(longest[heard], d.segment.size());
    }
    ASSERT_GT(longest[0], 0u);
    ASSERT_GT(longest[1], 0u);
    EXPECT_LT(longest[1], longest[0] / 2);
}
