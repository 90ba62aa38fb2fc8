/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

// Node engines talking over the virtual HF channel (sim::virtual_network): ARQ under
// bit errors and outages, soft links, TTL, priorities, non-ARQ, restarts, three nodes.
// Everything runs in virtual time with fixed seeds.
#include "node_test_support.h"

#include "dl/cpdu.h"
#include "dl/deframer.h"
#include "dl/spdu.h"

#include <gtest/gtest.h>

#include <set>


class NodeLink : public node_network_test
{
protected:
    // a streams 30 U_PDUs to b, restarts (forgetting its windows), binds again and
    // streams 30 more, all confirmed: returns the second 30.
    std::vector<bytes> stream_restart_and_stream_again()
    {
        cl.bind(a, 1, sis_tx_mode::arq);
        cl.bind(b, 1, sis_tx_mode::arq);
        cl.stream(a, 1, 2, random_updus(30, 1000, 1));
        EXPECT_TRUE(net.run_until(
            [&] { return cl.count(a, sis_type::unidata_request_confirm) == 30; }, 3600));
        net.restart_node(a);
        cl.received.clear();
        cl.senders.clear();
        cl.bind(a, 1, sis_tx_mode::arq);
        auto second = random_updus(30, 1000, 2);
        cl.stream(a, 1, 2, second);
        EXPECT_TRUE(net.run_until(
            [&] { return cl.count(a, sis_type::unidata_request_confirm) == 30; }, 3600));
        return second;
    }
};

TEST_F(NodeLink, FirstArqExchangeMakesTheLinkResetsWindowsAndConfirms)
{
    add_two_nodes();
    cl.bind(a, 1, sis_tx_mode::arq);
    cl.bind(b, 1, sis_tx_mode::arq);
    net.client_send(a, 1, unidata(2, bytes{ 'p', 'i', 'n', 'g' }));
    ASSERT_TRUE(net.run_until(
        [&] { return cl.count(a, sis_type::unidata_request_confirm) == 1; }, 600));
    ASSERT_EQ(cl.payloads(b, sis_type::unidata_indication),
              (std::vector<bytes>{ { 'p', 'i', 'n', 'g' } }));
    const auto& ind = cl.received[b];
    auto it = std::find_if(ind.begin(), ind.end(), [](const client_message& m) {
        return m.primitive.type == sis_type::unidata_indication;
    });
    EXPECT_EQ(it->primitive.source.address, 1u);
    EXPECT_EQ(it->primitive.source_sap, test_sap);
    EXPECT_EQ(it->primitive.service_type.tx_mode, sis_tx_mode::arq);
    EXPECT_EQ(net.node(a).link_state(2), cas_link_state::up);
    EXPECT_EQ(net.node(b).link_state(1), cas_link_state::up);
    EXPECT_EQ(net.node(a).counters().resets_sent, 1u);
    EXPECT_EQ(net.node(b).counters().resets_received, 1u);
    // Link + reset in one round trip, data + ack in a second, at 2400 bps: seconds.
    EXPECT_LT(net.now(), 20.0);
    // The idle link is broken after cas.idle_timeout.
    net.run_until(net.now() + 200);
    EXPECT_EQ(net.node(a).link_state(2), cas_link_state::idle);
    EXPECT_EQ(net.node(b).link_state(1), cas_link_state::idle);
}

TEST_F(NodeLink, ArqDeliversTenThousandUpdusThroughErrorsAndOutagesInOrder)
{
    channel_config ch;
    ch.ber = 1e-4;
    ch.outage_period_s = 600;
    ch.outage_duration_s = 30;
    ch.outage_offset_s = 300;
    ch.seed = 11;
    net.set_channel_all(ch);
    add_two_nodes();
    cl.bind(a, 1, sis_tx_mode::arq);
    cl.bind(b, 1, sis_tx_mode::arq);
    const auto updus = random_updus(10000, 2048, 42);
    cl.stream(a, 1, 2, updus);
    ASSERT_TRUE(net.run_until(
        [&] { return cl.count(b, sis_type::unidata_indication) >= updus.size(); },
        48 * 3600.0))
        << "delivered " << cl.count(b, sis_type::unidata_indication);
    net.run_until(net.now() + 300);
    // Zero loss, duplication or reordering: the delivered sequence is the sent one.
    const auto got = cl.payloads(b, sis_type::unidata_indication);
    ASSERT_TRUE(same_sequence(got, updus));
    EXPECT_EQ(cl.count(a, sis_type::unidata_request_confirm), updus.size());
    EXPECT_EQ(cl.count(a, sis_type::unidata_request_rejected), 0u);
    const auto ca = net.node(a).counters();
    EXPECT_GT(ca.arq_retransmissions, 0u);  // the errors were real
    EXPECT_GT(net.stats().bursts_lost, 0u); // and so were the outages
    EXPECT_GT(net.node(b).counters().segment_crc_errors, 0u);
    // What the link carried: each U_PDU's C_PDU counted once, however often it was sent.
    const size_t cpdu_overhead = spdu_header_size(spdu{}) + cpdu_header_size;
    size_t carried = 0;
    for (const auto& u : updus)
        carried += u.size() + cpdu_overhead;
    EXPECT_EQ(net.node(b).counters().arq_bytes_received, carried);
}

TEST_F(NodeLink, SoftLinkBreaksOnALongOutageAndRecovers)
{
    channel_config ch;
    ch.outage_period_s = 100000;
    ch.outage_duration_s = 600; // far longer than the response timeouts
    ch.outage_offset_s = 60;
    net.set_channel_all(ch);
    add_two_nodes();
    cl.bind(a, 1, sis_tx_mode::arq);
    cl.bind(b, 1, sis_tx_mode::arq);
    const auto updus = random_updus(300, 2048, 7);
    cl.stream(a, 1, 2, updus);
    ASSERT_TRUE(net.run_until(
        [&] { return cl.count(b, sis_type::unidata_indication) >= updus.size(); },
        5 * 3600.0));
    EXPECT_TRUE(same_sequence(cl.payloads(b, sis_type::unidata_indication), updus));
    const auto ca = net.node(a).counters();
    EXPECT_GE(ca.links_down, 1u);  // the link was given up during the outage
    EXPECT_GE(ca.link_setups, 2u); // and made again afterwards
    EXPECT_GT(ca.link_failures + ca.response_timeouts, 0u);
}

// Every answer of b is lost (a hears its carrier but no D_PDU survives). a repeats
// its data at the response deadline after the first lost answer, without the random
// back-off a new exchange draws, and backs off only when answers are lost in a row.
TEST_F(NodeLink, ALostAnswerIsRepeatedAtOnceAndOnlyLossesInARowBackOff)
{
    node_config ca = node_at(1), cb = node_at(2);
    for (auto* c : { &ca, &cb }) {
        c->channel_access.backoff_min_s = 20;
        c->channel_access.backoff_max_s = 25;
    }
    a = net.add_node(ca);
    b = net.add_node(cb);
    cl.bind(a, 1, sis_tx_mode::arq);
    cl.bind(b, 1, sis_tx_mode::arq);
    net.client_send(a, 1, unidata(2, bytes(100, 1)));
    ASSERT_TRUE(net.run_until(
        [&] { return cl.count(a, sis_type::unidata_request_confirm) == 1; }, 600));
    net.run_until(net.now() + 5); // the exchange is over

    struct burst {
        size_t node;
        double start, end;
    };
    std::vector<burst> bursts;
    net.on_transmission([&](size_t k, const node_transmission& t) {
        bursts.push_back({ k, net.now(), net.now() + t.air_time_s });
    });
    channel_config garbled;
    garbled.ber = 0.05;
    net.set_channel(b, a, garbled);
    net.client_send(a, 1, unidata(2, bytes(500, 2)));
    auto from_a = [&] {
        return std::count_if(
            bursts.begin(), bursts.end(), [&](const burst& x) { return x.node == a; });
    };
    ASSERT_TRUE(net.run_until([&] { return from_a() >= 3; }, 3600));
    // a, b (lost), a again, b (lost), a again.
    std::vector<burst> seq;
    for (const auto& x : bursts)
        if (seq.empty() || seq.back().node != x.node)
            seq.push_back(x);
    ASSERT_GE(seq.size(), 5u);
    ASSERT_EQ(seq[0].node, a);
    ASSERT_EQ(seq[1].node, b);
    ASSERT_EQ(seq[2].node, a);
    ASSERT_EQ(seq[3].node, b);
    ASSERT_EQ(seq[4].node, a);
    const double margin = node_config{}.response_margin_s;
    EXPECT_LT(seq[2].start - seq[1].end, margin + 5.0); // no 20-25 s back-off
    EXPECT_GE(seq[4].start - seq[3].end, 20.0);         // two in a row: backed off
    EXPECT_GE(net.node(a).counters().response_timeouts, 2u);
}

TEST_F(NodeLink, TtlExpiryRejectsWhatCouldNotBeDelivered)
{
    add_two_nodes();
    cl.bind(a, 1, sis_tx_mode::arq);
    net.set_node_offline(b, true);
    net.client_send(a, 1, unidata(2, bytes(100, 1), 0, 30)); // TTL 30 x 2 s
    net.run_until(59.0);
    EXPECT_EQ(cl.count(a, sis_type::unidata_request_rejected), 0u);
    net.run_until(61.0);
    ASSERT_EQ(cl.count(a, sis_type::unidata_request_rejected), 1u);
    const auto& m = cl.received[a].back();
    EXPECT_EQ(m.primitive.reason, uint8_t(sis_unidata_rejected_reason::ttl_expired));
    EXPECT_EQ(m.primitive.payload, bytes(100, 1));
    EXPECT_EQ(net.node(a).counters().ttl_expired, 1u);
}

TEST_F(NodeLink, HigherPriorityOvertakesQueuedLowerPriority)
{
    add_two_nodes();
    cl.bind(a, 1, sis_tx_mode::arq);
    cl.bind(b, 1, sis_tx_mode::arq);
    const auto low = random_updus(60, 2048, 3);
    for (auto& u : low)
        net.client_send(a, 1, unidata(2, u, 0));
    const bytes urgent(50, 0xEE);
    net.client_send(a, 1, unidata(2, urgent, 15));
    ASSERT_TRUE(net.run_until(
        [&] { return cl.count(b, sis_type::unidata_indication) == low.size() + 1; },
        7200));
    const auto got = cl.payloads(b, sis_type::unidata_indication);
    const size_t pos = size_t(std::find(got.begin(), got.end(), urgent) - got.begin());
    // One 127.5 s transmission at 2400 bps holds about 18 of the 2 kB U_PDUs; the urgent
    // one was queued last but goes in the first transmission that has room for data.
    EXPECT_LT(pos, 20u);
}

TEST_F(NodeLink, NonArqDeliversExactlyTheCompleteUpdus)
{
    use_ber(3e-5, 5);
    add_two_nodes();
    cl.bind(a, 1, sis_tx_mode::non_arq);
    cl.bind(b, 1, sis_tx_mode::non_arq);
    // Which D_PDUs reach b intact: b's view of the air, deframed here.
    std::map<uint16_t, std::map<uint16_t, bool>> segments_ok; // C_PDU ID -> offset -> ok
    std::map<uint16_t, uint16_t> cpdu_sizes;
    net.on_reception([&](size_t node, const bytes& burst, double) {
        if (node != b)
            return;
        dpdu_deframer df;
        for (auto& f : df.push(burst.data(), burst.size())) {
            if (f.frame.type != dpdu_type::non_arq_data)
                continue;
            bool& ok = segments_ok[f.frame.cpdu_id][f.frame.segment_offset];
            ok = ok || f.segment_ok;
            cpdu_sizes[f.frame.cpdu_id] = f.frame.cpdu_size;
        }
    });
    const auto updus = random_updus(400, 2048, 9);
    cl.stream(a, 1, 2, updus);
    net.run_until(4 * 3600.0);
    // C_PDU IDs count from 0 in submission order.
    std::vector<bytes> expected;
    for (size_t i = 0; i < updus.size(); ++i) {
        const auto it = segments_ok.find(uint16_t(i));
        if (it == segments_ok.end())
            continue;
        size_t covered = 0;
        bool all_ok = true;
        for (auto& [off, ok] : it->second) {
            all_ok = all_ok && ok;
            covered += 1;
        }
        const size_t seg = max_segment_size; // non-ARQ default
        const size_t n = (cpdu_sizes[uint16_t(i)] + seg - 1) / seg;
        if (all_ok && covered == n)
            expected.push_back(updus[i]);
    }
    const auto got = cl.payloads(b, sis_type::unidata_indication);
    EXPECT_TRUE(same_sequence(got, expected));
    EXPECT_LT(got.size(), updus.size()); // errors did cost some
    EXPECT_GT(got.size(), updus.size() / 4);
    EXPECT_EQ(net.node(a).counters().link_setups, 0u); // no link for non-ARQ
}

TEST_F(NodeLink, RestartedReceiverIsResynchronised)
{
    add_two_nodes();
    cl.bind(a, 1, sis_tx_mode::arq);
    cl.bind(b, 1, sis_tx_mode::arq);
    const auto first = random_updus(40, 2048, 21);
    cl.stream(a, 1, 2, first);
    ASSERT_TRUE(net.run_until(
        [&] { return cl.count(b, sis_type::unidata_indication) >= 10; }, 3600));
    // b loses all state mid-transfer; its client binds again.
    net.restart_node(b);
    cl.bind(b, 1, sis_tx_mode::arq);
    const auto delivered_before = cl.count(b, sis_type::unidata_indication);
    ASSERT_TRUE(net.run_until(
        [&] { return cl.count(a, sis_type::unidata_request_confirm) == first.size(); },
        4 * 3600.0));
    EXPECT_GE(net.node(b).counters().resets_sent + net.node(a).counters().resets_received,
              1u);
    // Every U_PDU not delivered before the restart arrives after it, in order (those
    // in flight at the restart may come twice: the restarted node forgot them).
    const auto got = cl.payloads(b, sis_type::unidata_indication);
    std::vector<bytes> after(got.begin() + delivered_before, got.end());
    ASSERT_FALSE(after.empty());
    auto start = std::find(first.begin(), first.end(), after.front());
    ASSERT_NE(start, first.end());
    EXPECT_LE(size_t(start - first.begin()), delivered_before);
    EXPECT_TRUE(same_sequence(after, std::vector<bytes>(start, first.end())));
}

// A restarted node numbers its non-ARQ C_PDUs from its incarnation (the node block
// sets it from the clock; the simulator from its own), so its first link request is
// not taken by the peer for a copy of one from its former life, which the peer
// suppresses for 60 s or more: the link is made again in the first exchange.
TEST_F(NodeLink, ARestartedNodesFirstLinkRequestIsTakenForNew)
{
    add_two_nodes();
    cl.bind(a, 1, sis_tx_mode::arq);
    cl.bind(b, 1, sis_tx_mode::arq);
    net.client_send(a, 1, unidata(2, bytes{ 'o', 'n', 'e' }));
    ASSERT_TRUE(net.run_until(
        [&] { return cl.count(a, sis_type::unidata_request_confirm) == 1; }, 600));
    net.run_until(net.now() + 5);
    const double restarted_at = net.now();
    net.restart_node(a);
    cl.received.clear();
    cl.bind(a, 1, sis_tx_mode::arq);
    net.client_send(a, 1, unidata(2, bytes{ 't', 'w', 'o' }));
    ASSERT_TRUE(net.run_until(
        [&] { return cl.count(a, sis_type::unidata_request_confirm) == 1; }, 600));
    EXPECT_LT(net.now() - restarted_at, 20.0); // was about 80 s: two suppressed requests
    EXPECT_EQ(cl.payloads(b, sis_type::unidata_indication),
              (std::vector<bytes>{ { 't', 'w', 'o' } }));
}

TEST_F(NodeLink, RestartedSenderResetsTheWindowsItForgot)
{
    add_two_nodes();
    const auto second = stream_restart_and_stream_again();
    EXPECT_TRUE(same_sequence(cl.payloads(b, sis_type::unidata_indication), second));
}

namespace {
// a and c stream 60 U_PDUs each to b and a 60 to c over a channel at BER 1e-5: every
// U_PDU arrives, in order per source. `extra` is set on the three nodes' options.
void three_nodes_share_the_channel(virtual_network& net,
                                   clients& cl,
                                   const std::string& extra)
{
    std::vector<size_t> n;
    for (uint32_t address : { 1u, 2u, 3u }) {
        node_config cfg = node_at(address);
        set_node_options(cfg, extra);
        n.push_back(net.add_node(cfg));
    }
    const size_t a = n[0], b = n[1], c = n[2];
    for (size_t x : n)
        cl.bind(x, 1, sis_tx_mode::arq);
    const auto ab = random_updus(60, 2048, 31), cb = random_updus(60, 2048, 32),
               ac = random_updus(60, 2048, 33);
    net.client_send(a, 2, bind_request(6, sis_tx_mode::arq));
    cl.stream(a, 1, 2, ab);
    cl.stream(c, 1, 2, cb);
    cl.stream(a, 2, 3, ac);
    ASSERT_TRUE(net.run_until(
        [&] {
            return cl.count(b, sis_type::unidata_indication) == ab.size() + cb.size() &&
                   cl.count(c, sis_type::unidata_indication) == ac.size();
        },
        12 * 3600.0))
        << "b got " << cl.count(b, sis_type::unidata_indication) << ", c got "
        << cl.count(c, sis_type::unidata_indication);
    // Per source, in order.
    EXPECT_TRUE(same_sequence(cl.payloads_from(b, 1), ab));
    EXPECT_TRUE(same_sequence(cl.payloads_from(b, 3), cb));
    EXPECT_TRUE(same_sequence(cl.payloads(c, sis_type::unidata_indication), ac));
}
} // namespace

TEST_F(NodeLink, ThreeNodesShareTheChannel)
{
    use_ber(1e-5, 3);
    three_nodes_share_the_channel(net, cl, "");
}

TEST_F(NodeLink, ThreeNodesWithSlottedChannelAccess)
{
    use_ber(1e-5, 8);
    for (uint32_t address : { 1u, 2u, 3u }) {
        node_config c = node_at(address);
        c.channel_access.mode = channel_access_mode::slotted;
        c.channel_access.slot_number = address - 1;
        net.add_node(c);
    }
    a = 0;
    b = 1;
    const size_t c = 2;
    for (size_t n : { a, b, c })
        cl.bind(n, 1, sis_tx_mode::arq);
    const auto ab = random_updus(40, 2048, 41), cb = random_updus(40, 2048, 42);
    cl.stream(a, 1, 2, ab);
    cl.stream(c, 1, 2, cb);
    ASSERT_TRUE(net.run_until(
        [&] {
            return cl.count(b, sis_type::unidata_indication) == ab.size() + cb.size();
        },
        12 * 3600.0))
        << "b got " << cl.count(b, sis_type::unidata_indication);
    EXPECT_TRUE(same_sequence(cl.payloads_from(b, 1), ab));
    EXPECT_TRUE(same_sequence(cl.payloads_from(b, 3), cb));
}

TEST_F(NodeLink, IdleTimeoutWaitsForABurstOnTheAir)
{
    node_config slow_a = node_at(1), slow_b = node_at(2);
    slow_a.mode = slow_b.mode = modem_mode{ rate_75, interleaving_short };
    a = net.add_node(slow_a);
    b = net.add_node(slow_b);
    cl.bind(a, 1, sis_tx_mode::arq);
    cl.bind(b, 1, sis_tx_mode::arq);
    net.client_send(a, 1, unidata(2, bytes(10, 1)));
    ASSERT_TRUE(net.run_until(
        [&] { return cl.count(a, sis_type::unidata_request_confirm) == 1; }, 300));
    // 50 s later a sends 1000 bytes: one burst of about 110 s at 75 bps. b's 120 s idle
    // time runs out while it is on the air; b must wait for it, not break the link.
    net.run_until(net.now() + 50);
    net.client_send(a, 1, unidata(2, bytes(1000, 2)));
    ASSERT_TRUE(net.run_until(
        [&] { return cl.count(b, sis_type::unidata_indication) == 2; }, net.now() + 600));
    EXPECT_EQ(net.node(a).counters().links_down, 0u);
    EXPECT_EQ(net.node(b).counters().links_down, 0u);
}

namespace {
node_config with_data_on_request(uint32_t address)
{
    node_config c = node_at(address);
    c.data_with_link_request = true;
    return c;
}
} // namespace

TEST_F(NodeLink, DataWithTheLinkRequestSavesTheSetUpRoundTrip)
{
    // The same U_PDU over a new link, with and without the extension: one round trip
    // (request + reset + data, then confirm + reset ack + data ack) instead of two.
    double confirmed_at[2] = { 0, 0 };
    for (int on = 0; on < 2; ++on) {
        virtual_network n;
        clients c{ n };
        const size_t x = n.add_node(on ? with_data_on_request(1) : node_at(1));
        const size_t y = n.add_node(on ? with_data_on_request(2) : node_at(2));
        c.bind(x, 1, sis_tx_mode::arq);
        c.bind(y, 1, sis_tx_mode::arq);
        n.client_send(x, 1, unidata(2, bytes(200, 7)));
        ASSERT_TRUE(n.run_until(
            [&] { return c.count(x, sis_type::unidata_request_confirm) == 1; }, 600));
        confirmed_at[on] = n.now();
        EXPECT_EQ(c.payloads(y, sis_type::unidata_indication),
                  std::vector<bytes>{ bytes(200, 7) });
        EXPECT_EQ(n.node(x).counters().data_with_link_request, uint64_t(on));
        EXPECT_EQ(n.node(x).counters().transmissions, on ? 1u : 2u);
        EXPECT_EQ(n.node(y).counters().dpdus_dropped_unsynced, 0u);
    }
    EXPECT_LT(confirmed_at[1], confirmed_at[0] - 1.0);
}

TEST_F(NodeLink, DataWithTheLinkRequestThroughLossyFirstContactsIsDeliveredOnceInOrder)
{
    // First contacts where requests, resets, answers and data are lost at random: the
    // riding data are taken once or dropped and sent again, never twice.
    for (uint64_t seed = 1; seed <= 12; ++seed) {
        virtual_network n;
        channel_config ch;
        ch.ber = 3e-4;
        ch.seed = seed;
        n.set_channel_all(ch);
        clients c{ n };
        const size_t x = n.add_node(with_data_on_request(1)),
                     y = n.add_node(with_data_on_request(2));
        c.bind(x, 1, sis_tx_mode::arq);
        c.bind(y, 1, sis_tx_mode::arq);
        const auto updus = random_updus(20, 600, uint32_t(100 + seed));
        c.stream(x, 1, 2, updus);
        ASSERT_TRUE(n.run_until(
            [&] { return c.count(x, sis_type::unidata_request_confirm) == updus.size(); },
            24 * 3600.0))
            << "seed " << seed;
        n.run_until(n.now() + 120);
        EXPECT_TRUE(same_sequence(c.payloads(y, sis_type::unidata_indication), updus))
            << "seed " << seed;
    }
}

TEST_F(NodeLink, DataWithTheLinkRequestFromARestartedSenderIsNotTakenTwice)
{
    // The peer still holds windows from the sender's first life (and misses the new
    // link request, whose non-ARQ C_PDU ID it has seen before): the new FULL RESET, with
    // a frame ID of the restarted node's own, resets them; what rides with it and
    // what follows is taken once, in order, through the repeats of that reset.
    a = net.add_node(with_data_on_request(1));
    b = net.add_node(with_data_on_request(2));
    const auto second = stream_restart_and_stream_again();
    EXPECT_TRUE(same_sequence(cl.payloads(b, sis_type::unidata_indication), second));
    EXPECT_GE(net.node(a).counters().data_with_link_request, 1u); // the restarted node's
}

TEST_F(NodeLink, DataWithTheLinkRequestOnThreeNodesSharingTheChannel)
{
    // Long bursts riding with link requests: the requests' answers are awaited from
    // the bursts' ends.
    use_ber(1e-5, 3);
    three_nodes_share_the_channel(net, cl, "data_with_link_request=true");
}

// A node decides the same whatever its clock's origin: on an emulated channel the node
// block runs each timer step as of its deadline, and its clock starts when the process
// does. From 2.001 s, a request's deadline (requested_at + response timeout) minus the
// request's time rounds below the timeout: the unanswered request to 2 then went on
// being repeated instead of making way for a request to 3 (where real processes first
// parted from virtual time in the four-node mesh).
TEST_F(NodeLink, AnUnansweredLinkRequestMakesWayAtItsTimeoutWhateverTheClocksOrigin)
{
    ASSERT_LT((2.001 + node_config().cas.response_timeout) - 2.001,
              node_config().cas.response_timeout);
    // (seconds since the U_PDUs were handed over, to 1 us; destinations) of each burst
    // of a lone node with data for two absent peers.
    const auto bursts_from = [](double origin) {
        virtual_network lone;
        clients client{ lone };
        const size_t n = lone.add_node(node_at(1));
        std::vector<std::pair<long, std::set<uint32_t>>> seen;
        lone.on_transmission([&](size_t, const node_transmission& t) {
            std::set<uint32_t> to;
            size_t at = 0;
            for (size_t size : t.dpdu_sizes) {
                to.insert(decode_dpdu(t.burst.data() + at, size).value.destination);
                at += size;
            }
            seen.emplace_back(std::lround((lone.now() - origin) * 1e6), to);
        });
        lone.run_until(origin);
        client.bind(n, 1, sis_tx_mode::arq);
        lone.client_send(n, 1, unidata(2, bytes(100, 1)));
        lone.client_send(n, 1, unidata(3, bytes(100, 2)));
        lone.run_until(origin + 100);
        return seen;
    };
    const auto from_zero = bursts_from(0);
    // The request to 3 goes out after the first one's timeout, in both.
    ASSERT_GE(from_zero.size(), 2u);
    EXPECT_EQ(from_zero[0].second, std::set<uint32_t>{ 2 });
    const auto to_3 = std::find_if(from_zero.begin(), from_zero.end(), [](auto& b) {
        return b.second.count(3) > 0;
    });
    ASSERT_NE(to_3, from_zero.end());
    EXPECT_GE(to_3->first, std::lround(node_config().cas.response_timeout * 1e6));
    EXPECT_EQ(bursts_from(2.001), from_zero);
}
