/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

/* The IP client kernel (STANAG 5066 Annex F.12): bind, address table, service and
 * priority mapping, ICMP answers, fragmentation, filter, queue policy, receive path,
 * options; and a property test over random datagrams. */
#include "dl/dpdu.h"
#include "ip_test_support.h"
#include "net/ip_client.h"

#include <gtest/gtest.h>

#include <random>

using namespace gr::hfstack;
using namespace gr::hfstack::net;
using namespace ip_test;
using dl::sis_primitive;
using dl::sis_type;

namespace {

ip_client_config config_with(const std::string& routes, const std::string& options = "")
{
    ip_client_config c;
    set_ip_client_option(c, "routes", routes);
    set_ip_client_options(c, options);
    return c;
}

sis_primitive prim(sis_type t)
{
    sis_primitive p;
    p.type = t;
    return p;
}

sis_primitive accepted(uint16_t mtu = 2048)
{
    auto p = prim(sis_type::bind_accepted);
    p.sap = 9;
    p.mtu = mtu;
    return p;
}

// A client bound to its node, its first actions (the bind) taken.
ip_client bound_client(ip_client_config c)
{
    ip_client client(std::move(c));
    client.start(0);
    client.on_sis(accepted(), 0);
    client.take_actions();
    return client;
}

uint64_t drops(const ip_client& c, ip_drop d) { return c.counters().drops[size_t(d)]; }

} // namespace

TEST(IpClient, BindsSap9AndQueuesUntilBound)
{
    ip_client c(config_with("10.0.2.0/24=0.0.0.2"));
    c.start(0);
    auto a = c.take_actions();
    ASSERT_EQ(a.to_sis.size(), 1u);
    EXPECT_EQ(a.to_sis[0].type, sis_type::bind_request);
    EXPECT_EQ(a.to_sis[0].sap, 9);
    EXPECT_EQ(a.to_sis[0].service_type.tx_mode, dl::sis_tx_mode::arq);
    EXPECT_EQ(a.to_sis[0].service_type.delivery_confirmation,
              dl::sis_delivery_confirmation::node);

    c.on_datagram(ipv4(v4_spec{}), 1);
    EXPECT_TRUE(c.take_actions().to_sis.empty()); // not bound yet: queued
    EXPECT_EQ(c.counters().peers.at(2).queued_datagrams, 1u);
    c.on_sis(accepted(2048), 2);
    a = c.take_actions();
    ASSERT_EQ(a.to_sis.size(), 1u);
    EXPECT_EQ(a.to_sis[0].type, sis_type::unidata_request);
    EXPECT_TRUE(c.bound());
    EXPECT_EQ(c.mtu(), 1500u); // ours, below the server's 2048

    ip_client small(config_with("default=0.0.0.2"));
    small.start(0);
    small.on_sis(accepted(1000), 0);
    EXPECT_EQ(small.mtu(), 1000u);
    ip_client refused(config_with("default=0.0.0.2"));
    refused.start(0);
    auto rejected = prim(sis_type::bind_rejected);
    rejected.reason = 3;
    refused.on_sis(rejected, 0);
    EXPECT_FALSE(refused.bound());
    EXPECT_NE(refused.bind_error().find("reason 3"), std::string::npos);
    EXPECT_EQ(refused.take_actions().notices.size(), 1u);
}

TEST(IpClient, UnicastGoesArqWithPriorityFromDscpAndOneHopLess)
{
    auto c =
        bound_client(config_with("10.0.2.0/24=0.0.0.2 10.0.2.9=0.0.0.3 default=0.0.0.4"));
    v4_spec s;
    s.dscp = 46; // EF: 2 x (46 >> 3) = 10
    const auto d = ipv4(s);
    c.on_datagram(d, 1);
    auto a = c.take_actions();
    ASSERT_EQ(a.to_sis.size(), 1u);
    const auto& r = a.to_sis[0];
    EXPECT_EQ(r.type, sis_type::unidata_request);
    EXPECT_EQ(r.destination.address, 2u);
    EXPECT_EQ(r.destination_sap, 9);
    EXPECT_EQ(r.priority, 10);
    EXPECT_EQ(r.service_type.tx_mode, dl::sis_tx_mode::arq);
    EXPECT_EQ(r.service_type.delivery_confirmation, dl::sis_delivery_confirmation::node);
    EXPECT_EQ(r.service_type.delivery_order, dl::sis_delivery_order::as_they_arrive);
    EXPECT_EQ(r.ttl, 60u); // 120 s in 2 s units
    ASSERT_EQ(r.payload.size(), d.size());
    EXPECT_EQ(r.payload[8], 63); // TTL one less, checksum right
    EXPECT_EQ(rfc1071(r.payload.data(), 20), 0);

    // Longest prefix wins; the default catches the rest, IPv6 included.
    s.destination = "10.0.2.9";
    c.on_datagram(ipv4(s), 2);
    s.destination = "192.168.7.7";
    c.on_datagram(ipv4(s), 3);
    c.on_datagram(ipv6(v6_spec{}), 4);
    a = c.take_actions();
    ASSERT_EQ(a.to_sis.size(), 3u);
    EXPECT_EQ(a.to_sis[0].destination.address, 3u);
    EXPECT_EQ(a.to_sis[1].destination.address, 4u);
    EXPECT_EQ(a.to_sis[2].destination.address, 4u);
    EXPECT_EQ(c.counters().peers.at(4).datagrams_out, 2u);
}

TEST(IpClient, MulticastGoesNonArqToTheGroupWithRepeats)
{
    auto c =
        bound_client(config_with("224.0.0.0/4=31.255.255.255,repeats=2 default=0.0.0.2"));
    v4_spec s;
    s.destination = "239.1.2.3";
    c.on_datagram(ipv4(s), 1);
    auto a = c.take_actions();
    ASSERT_EQ(a.to_sis.size(), 1u);
    EXPECT_EQ(a.to_sis[0].destination.address, dl::broadcast_address);
    EXPECT_EQ(a.to_sis[0].service_type.tx_mode, dl::sis_tx_mode::non_arq);
    EXPECT_EQ(a.to_sis[0].service_type.delivery_confirmation,
              dl::sis_delivery_confirmation::none);
    EXPECT_EQ(a.to_sis[0].service_type.min_retransmissions, 2);
    // IGMP is carried when multicast is routed, dropped otherwise.
    v4_spec igmp;
    igmp.protocol = ip_proto::igmp;
    igmp.destination = "224.0.0.22";
    c.on_datagram(ipv4(igmp), 2);
    EXPECT_EQ(c.take_actions().to_sis.size(), 1u);
    auto plain = bound_client(config_with("default=0.0.0.2"));
    plain.on_datagram(ipv4(igmp), 2);
    EXPECT_TRUE(plain.take_actions().to_sis.empty());
    EXPECT_EQ(drops(plain, ip_drop::filtered), 1u);
}

TEST(IpClient, ServiceAndPriorityOverrides)
{
    auto c = bound_client(config_with("10.0.2.0/24=0.0.0.2,non_arq",
                                      "class_service=5:arq; dscp_priority=fixed:3 8:12; "
                                      "expedited_dscp=48; in_order=true; ttl_s=0"));
    v4_spec s;
    c.on_datagram(ipv4(s), 1); // entry: non-ARQ
    s.dscp = 40;               // class 5: ARQ by the class override
    c.on_datagram(ipv4(s), 1);
    s.dscp = 8;
    c.on_datagram(ipv4(s), 1);
    s.dscp = 48; // expedited
    c.on_datagram(ipv4(s), 1);
    auto a = c.take_actions();
    ASSERT_EQ(a.to_sis.size(), 4u);
    EXPECT_EQ(a.to_sis[0].service_type.tx_mode, dl::sis_tx_mode::non_arq);
    EXPECT_EQ(a.to_sis[0].priority, 3);
    EXPECT_EQ(a.to_sis[0].ttl, 0u);
    EXPECT_EQ(a.to_sis[1].service_type.tx_mode, dl::sis_tx_mode::arq);
    EXPECT_EQ(a.to_sis[1].service_type.delivery_order, dl::sis_delivery_order::in_order);
    EXPECT_EQ(a.to_sis[2].priority, 12);
    EXPECT_EQ(a.to_sis[3].type, sis_type::expedited_unidata_request);
}

TEST(IpClient, AnswersWhatItCannotCarryWithIcmp)
{
    auto c =
        bound_client(config_with("10.0.2.0/24=0.0.0.2", "icmp_source_v4=10.0.1.254"));
    // No route.
    v4_spec s;
    s.destination = "172.16.0.1";
    c.on_datagram(ipv4(s), 1);
    auto a = c.take_actions();
    EXPECT_TRUE(a.to_sis.empty());
    ASSERT_EQ(a.to_tun.size(), 1u);
    EXPECT_EQ(a.to_tun[0][20], 3);
    EXPECT_EQ(a.to_tun[0][21], 0);
    EXPECT_EQ(bytes(a.to_tun[0].begin() + 12, a.to_tun[0].begin() + 16),
              bytes({ 10, 0, 1, 254 }));
    EXPECT_EQ(drops(c, ip_drop::no_route), 1u);
    // Last hop.
    s = v4_spec{};
    s.ttl = 1;
    c.on_datagram(ipv4(s), 2);
    a = c.take_actions();
    ASSERT_EQ(a.to_tun.size(), 1u);
    EXPECT_EQ(a.to_tun[0][20], 11);
    // Too big with DF: fragmentation needed with our MTU.
    s = v4_spec{};
    s.dont_fragment = true;
    s.payload = 1600;
    c.on_datagram(ipv4(s), 3);
    a = c.take_actions();
    EXPECT_TRUE(a.to_sis.empty());
    ASSERT_EQ(a.to_tun.size(), 1u);
    EXPECT_EQ(a.to_tun[0][21], 4);
    EXPECT_EQ(uint16_t(a.to_tun[0][26] << 8 | a.to_tun[0][27]), 1500);
    // Without DF: fragments, each a U_PDU.
    s.dont_fragment = false;
    c.on_datagram(ipv4(s), 4);
    a = c.take_actions();
    EXPECT_EQ(a.to_sis.size(), 2u);
    for (auto& r : a.to_sis)
        EXPECT_LE(r.payload.size(), 1500u);
    EXPECT_EQ(c.counters().fragments_sent, 2u);
    // IPv6 over the MTU: Packet Too Big, sourced from the datagram's destination.
    auto c6 = bound_client(config_with("default=0.0.0.2"));
    v6_spec big6;
    big6.payload = 1600;
    c6.on_datagram(ipv6(big6), 5);
    a = c6.take_actions();
    ASSERT_EQ(a.to_tun.size(), 1u);
    EXPECT_EQ(a.to_tun[0][40], 2);
    // Fragmenting off: dropped and counted.
    auto nofrag = bound_client(config_with("default=0.0.0.2", "fragment=false"));
    nofrag.on_datagram(ipv4(s), 6);
    a = nofrag.take_actions();
    EXPECT_TRUE(a.to_sis.empty() && a.to_tun.empty());
    EXPECT_EQ(drops(nofrag, ip_drop::not_fragmented), 1u);
}

TEST(IpClient, FilterDropsBackgroundChatterAndCountsPerRule)
{
    auto c =
        bound_client(config_with("default=0.0.0.2", "filter=ntp:proto=udp,dport=123"));
    v4_spec mdns;
    mdns.destination = "224.0.0.251";
    mdns.destination_port = 5353;
    c.on_datagram(ipv4(mdns), 1);
    c.on_datagram(ipv4(mdns), 2);
    v4_spec ntp;
    ntp.destination_port = 123;
    c.on_datagram(ipv4(ntp), 3);
    v6_spec rs;
    rs.next_header = 58;
    rs.icmp_type = 133;
    rs.destination = "ff02::2";
    c.on_datagram(ipv6(rs), 4);
    c.on_datagram(ipv4(v4_spec{}), 5);
    const auto a = c.take_actions();
    EXPECT_EQ(a.to_sis.size(), 1u);
    EXPECT_EQ(a.notices.size(), 1u); // logged once
    const auto& rules = c.filter_rules();
    const auto& matches = c.counters().filter_matches;
    std::map<std::string, uint64_t> by_name;
    for (size_t i = 0; i < rules.size(); ++i)
        by_name[rules[i].name] = matches[i];
    EXPECT_EQ(by_name["mdns"], 2u);
    EXPECT_EQ(by_name["ntp"], 1u);
    EXPECT_EQ(by_name["router-solicitation"], 1u);
    EXPECT_EQ(drops(c, ip_drop::filtered), 4u);
    auto unfiltered =
        bound_client(config_with("default=0.0.0.2", "default_filter=false"));
    unfiltered.on_datagram(ipv4(mdns), 1);
    EXPECT_EQ(unfiltered.take_actions().to_sis.size(), 1u);
}

TEST(IpClient, QueuePolicyDiscardsAWholeQueueAtOnce)
{
    auto c = bound_client(config_with("10.0.2.0/24=0.0.0.2 10.0.3.0/24=0.0.0.3",
                                      "max_queue_bytes=1000; max_queue_age_s=30"));
    c.on_sis(prim(sis_type::data_flow_off), 1);
    v4_spec s;
    s.payload = 200; // 228-byte datagrams
    for (int i = 0; i < 4; ++i)
        c.on_datagram(ipv4(s), 1 + i);
    s.destination = "10.0.3.1";
    c.on_datagram(ipv4(s), 5);
    EXPECT_TRUE(c.take_actions().to_sis.empty());
    EXPECT_EQ(c.counters().peers.at(2).queued_bytes, 4 * 228u);
    // The fifth for 0.0.0.2 exceeds 1000 bytes: its four queued ones and it go at once.
    s.destination = "10.0.2.1";
    c.on_datagram(ipv4(s), 6);
    auto a = c.take_actions();
    EXPECT_EQ(drops(c, ip_drop::queue_overflow), 5u);
    EXPECT_EQ(c.counters().peers.at(2).queued_datagrams, 0u);
    EXPECT_EQ(c.counters().peers.at(3).queued_datagrams,
              1u); // another peer's queue stays
    EXPECT_EQ(a.notices.size(), 1u);
    // Flow on: what is left is sent, in order.
    c.on_sis(prim(sis_type::data_flow_on), 7);
    a = c.take_actions();
    ASSERT_EQ(a.to_sis.size(), 1u);
    EXPECT_EQ(a.to_sis[0].destination.address, 3u);
    // Age: a queue whose oldest datagram waited 30 s goes whole.
    c.on_sis(prim(sis_type::data_flow_off), 10);
    c.on_datagram(ipv4(s), 10);
    c.on_datagram(ipv4(s), 20);
    EXPECT_DOUBLE_EQ(c.next_deadline(), 40.0);
    c.on_timer(39.9);
    EXPECT_EQ(c.counters().peers.at(2).queued_datagrams, 2u);
    c.on_timer(40.0);
    EXPECT_EQ(c.counters().peers.at(2).queued_datagrams, 0u);
    EXPECT_EQ(drops(c, ip_drop::queue_age), 2u);
    EXPECT_EQ(c.next_deadline(), std::numeric_limits<double>::infinity());
}

TEST(IpClient, APeerNotRespondingLosesItsQueueAndNothingIsResent)
{
    auto c = bound_client(config_with("10.0.2.0/24=0.0.0.2 10.0.3.0/24=0.0.0.3"));
    c.on_datagram(ipv4(v4_spec{}), 1);
    auto sent = c.take_actions().to_sis;
    ASSERT_EQ(sent.size(), 1u);
    c.on_sis(prim(sis_type::data_flow_off), 2);
    c.on_datagram(ipv4(v4_spec{}), 3);
    v4_spec other;
    other.destination = "10.0.3.1";
    c.on_datagram(ipv4(other), 3);
    auto rejected = sent[0];
    rejected.type = sis_type::unidata_request_rejected;
    rejected.reason =
        uint8_t(dl::sis_unidata_rejected_reason::destination_not_responding);
    c.on_sis(rejected, 4);
    c.on_sis(prim(sis_type::data_flow_on), 5);
    const auto a = c.take_actions();
    ASSERT_EQ(a.to_sis.size(), 1u); // only the other peer's; the rejected one not again
    EXPECT_EQ(a.to_sis[0].destination.address, 3u);
    EXPECT_EQ(drops(c, ip_drop::link_failure), 1u);
    EXPECT_EQ(c.counters().peers.at(2).rejected, 1u);
}

TEST(IpClient, DatagramsFromTheAirGoToTheTun)
{
    auto c = bound_client(config_with("default=0.0.0.2"));
    auto ind = prim(sis_type::unidata_indication);
    ind.destination_sap = 9;
    ind.source = dl::sis_address{ 2, 7 };
    ind.payload = ipv6(v6_spec{});
    c.on_sis(ind, 1);
    auto a = c.take_actions();
    ASSERT_EQ(a.to_tun.size(), 1u);
    EXPECT_EQ(a.to_tun[0], ind.payload);
    EXPECT_EQ(c.counters().peers.at(2).datagrams_in, 1u);
    // Bad headers from the air are dropped, counted and logged once.
    ind.payload[4] ^= 0xFF; // payload length
    c.on_sis(ind, 2);
    c.on_sis(ind, 3);
    a = c.take_actions();
    EXPECT_TRUE(a.to_tun.empty());
    EXPECT_EQ(drops(c, ip_drop::malformed_from_air), 2u);
    EXPECT_EQ(a.notices.size(), 1u);
    // Keep-alives are answered.
    c.on_sis(prim(sis_type::keep_alive), 4);
    a = c.take_actions();
    ASSERT_EQ(a.to_sis.size(), 1u);
    EXPECT_EQ(a.to_sis[0].type, sis_type::keep_alive);
    // Unbound by the node: queued until bound again.
    c.on_sis(prim(sis_type::unbind_indication), 5);
    c.on_datagram(ipv4(v4_spec{}), 6);
    EXPECT_TRUE(c.take_actions().to_sis.empty());
    c.on_sis(accepted(), 7);
    EXPECT_EQ(c.take_actions().to_sis.size(), 1u);
}

// The compact header: A (10.0.1.1 behind node 1) and B (10.0.2.1 behind node 2) mark
// each other compact; whole datagrams between them lose their IP header on the air and
// come out of the far TUN rebuilt from the node addresses.
TEST(IpClient, CompactHeaderCrossesAndIsRebuiltFromTheNodeAddresses)
{
    auto a = bound_client(
        config_with("10.0.2.1=0.0.0.2,compact fd00:2::1=0.0.0.2,compact default=0.0.0.2",
                    "own_address_v4=10.0.1.1; own_address_v6=fd00:1::1"));
    auto b =
        bound_client(config_with("10.0.1.1=0.0.0.1,compact fd00:1::1=0.0.0.1,compact",
                                 "own_address_v4=10.0.2.1; own_address_v6=fd00:2::1"));
    const auto across = [&](const bytes& datagram) {
        a.on_datagram(datagram, 1);
        auto sent = a.take_actions().to_sis;
        EXPECT_EQ(sent.size(), 1u);
        auto ind = prim(sis_type::unidata_indication);
        ind.destination_sap = 9;
        ind.source = dl::sis_address{ 1, 7 };
        ind.payload = sent.at(0).payload;
        b.on_sis(ind, 2);
        auto out = b.take_actions().to_tun;
        EXPECT_EQ(out.size(), 1u);
        return std::make_pair(ind.payload, out.at(0));
    };

    v4_spec udp;
    udp.source = "10.0.1.1";
    udp.destination = "10.0.2.1";
    udp.dont_fragment = true;
    const bytes v4 = ipv4(udp);
    const auto [air4, tun4] = across(v4);
    ASSERT_EQ(air4.size(), v4.size() - 20 + 2); // 18 bytes fewer on the air
    EXPECT_EQ(air4[0], 0x01);                   // version 0, IPv4
    EXPECT_EQ(air4[1], 17);                     // UDP
    EXPECT_TRUE(bytes(air4.begin() + 2, air4.end()) == bytes(v4.begin() + 20, v4.end()));
    ASSERT_EQ(tun4.size(), v4.size());
    EXPECT_EQ(tun4[0], 0x45);
    EXPECT_EQ(tun4[6] & 0x40, 0x40);       // DF
    EXPECT_EQ(tun4[8], compact_hop_limit); // rebuilt TTL
    EXPECT_EQ(tun4[9], 17);
    EXPECT_EQ(rfc1071(tun4.data(), 20), 0); // header checksum, textbook
    EXPECT_TRUE(bytes(tun4.begin() + 12, tun4.end()) == bytes(v4.begin() + 12, v4.end()));

    v6_spec six;
    six.source = "fd00:1::1";
    six.destination = "fd00:2::1";
    const bytes v6 = ipv6(six);
    const auto [air6, tun6] = across(v6);
    ASSERT_EQ(air6.size(), v6.size() - 40 + 2);
    EXPECT_EQ(air6[0], 0x00);
    ASSERT_EQ(tun6.size(), v6.size());
    EXPECT_EQ(tun6[7], compact_hop_limit);
    EXPECT_TRUE(bytes(tun6.begin() + 4, tun6.begin() + 7) ==
                bytes(v6.begin() + 4, v6.begin() + 7));
    EXPECT_TRUE(bytes(tun6.begin() + 8, tun6.end()) == bytes(v6.begin() + 8, v6.end()));
    EXPECT_EQ(a.counters().compact_sent, 2u);
    EXPECT_EQ(b.counters().compact_received, 2u);

    // What the far end could not rebuild goes whole: IPv4 options, another source,
    // fragments, IPv6 extension headers.
    v4_spec with_options = udp;
    with_options.options = { 1, 1, 1, 1 }; // four NOPs
    v4_spec other_source = udp;
    other_source.source = "10.0.1.9";
    v4_spec big = udp;
    big.dont_fragment = false;
    big.payload = 2000;
    v6_spec hop_by_hop = six;
    hop_by_hop.hop_by_hop = true;
    for (const bytes& d : { ipv4(with_options), ipv4(other_source), ipv6(hop_by_hop) }) {
        const auto [air, tun] = across(d);
        EXPECT_TRUE(parse_ip(air).ok());
        EXPECT_EQ(tun.size(), d.size());
    }
    a.on_datagram(ipv4(big), 3);
    for (const auto& p : a.take_actions().to_sis)
        EXPECT_TRUE(parse_ip(p.payload).ok()); // fragments
    EXPECT_EQ(a.counters().compact_sent, 2u);

    // From a node with no compact entry here: dropped and counted, not guessed.
    auto ind = prim(sis_type::unidata_indication);
    ind.destination_sap = 9;
    ind.source = dl::sis_address{ 3, 7 };
    ind.payload = air4;
    b.on_sis(ind, 4);
    EXPECT_TRUE(b.take_actions().to_tun.empty());
    EXPECT_EQ(drops(b, ip_drop::compact_unmapped), 1u);
    // A compact header with reserved bits set, or cut short: malformed.
    ind.source = dl::sis_address{ 1, 7 };
    ind.payload = { 0x03, 17, 0, 0 };
    b.on_sis(ind, 5);
    ind.payload = { 0x01 };
    b.on_sis(ind, 6);
    EXPECT_TRUE(b.take_actions().to_tun.empty());
    EXPECT_EQ(drops(b, ip_drop::malformed_from_air), 2u);
}

TEST(IpClient, CompactEntriesAreCheckedWhenConfigured)
{
    ip_client_config c;
    EXPECT_THROW(set_ip_client_option(c, "routes", "10.0.2.0/24=0.0.0.2,compact"),
                 std::invalid_argument);
    EXPECT_THROW(set_ip_client_option(c, "routes", "10.0.2.1=31.0.0.1,compact"),
                 std::invalid_argument);
    set_ip_client_option(c, "routes", "10.0.2.1=0.0.0.2,compact");
    EXPECT_EQ(get_ip_client_option(c, "routes"), "10.0.2.1/32=0.0.0.2,compact");
    EXPECT_THROW(ip_client{ c }, std::invalid_argument); // no own_address_v4
    set_ip_client_option(c, "own_address_v4", "10.0.1.1");
    EXPECT_NO_THROW(ip_client{ c });
}

TEST(IpClientOptions, EveryOptionRoundTripsAndErrorsNameTheOption)
{
    ip_client_config c;
    for (const auto& o : ip_client_options())
        EXPECT_NO_THROW(set_ip_client_option(c, o.name, o.default_value)) << o.name;
    set_ip_client_options(c,
                          "routes=10.0.2.0/24=0.0.0.2,non_arq,repeats=3 default=0.0.0.9\n"
                          "mtu=1200; expedited_dscp=46; dscp_priority=0:5");
    ip_client_config again;
    for (const auto& o : ip_client_options())
        set_ip_client_option(again, o.name, get_ip_client_option(c, o.name));
    for (const auto& o : ip_client_options())
        EXPECT_EQ(get_ip_client_option(again, o.name), get_ip_client_option(c, o.name))
            << o.name;
    EXPECT_EQ(again.routes.entries().size(), 3u);

    const auto error = [](const std::string& text) {
        try {
            ip_client_config x;
            set_ip_client_options(x, text);
        } catch (const std::invalid_argument& e) {
            return std::string(e.what());
        }
        return std::string();
    };
    EXPECT_NE(error("mtu=20").find("mtu"), std::string::npos);
    EXPECT_NE(error("routes=10.0.2.1/24=0.0.0.2").find("host bits"), std::string::npos);
    EXPECT_NE(error("routes=10.0.2.0/24=0.0.0.2,fast").find("unknown field"),
              std::string::npos);
    EXPECT_NE(error("routes=224.0.0.0/4=31.255.255.255,arq").find("group"),
              std::string::npos);
    EXPECT_NE(error("filter=x:proto=udp,port=5").find("unknown key"), std::string::npos);
    EXPECT_NE(error("sapp=9").find("unknown IP client option"), std::string::npos);
    EXPECT_NE(error("mtu").find("name=value"), std::string::npos);
    EXPECT_THROW(ip_client(ip_client_config{ 9, 0, 40 }), std::invalid_argument);
}

// Property: any datagram (random bytes, or a valid one with random fields), any flow
// state, never throws; every datagram is carried, queued, dropped for a counted cause
// or answered with ICMP, and the byte counts add up.
TEST(IpClient, RandomTrafficIsAlwaysAccountedFor)
{
    std::mt19937 rng(11);
    auto c = bound_client(
        config_with("10.0.0.0/8=0.0.0.2 224.0.0.0/4=31.255.255.255 fd00::/8=0.0.0.3",
                    "max_queue_bytes=20000"));
    uint64_t carried = 0, to_tun = 0;
    for (int n = 0; n < 5000; ++n) {
        const double now = n * 0.1;
        switch (rng() % 10) {
        case 0:
            c.on_sis(prim(rng() % 2 ? sis_type::data_flow_off : sis_type::data_flow_on),
                     now);
            break;
        case 1: {
            bytes junk(rng() % 100);
            for (auto& b : junk)
                b = uint8_t(rng());
            c.on_datagram(junk, now);
            break;
        }
        default: {
            v4_spec s;
            s.payload = rng() % 2500;
            s.ttl = uint8_t(rng() % 4);
            s.dont_fragment = rng() % 2;
            s.dscp = uint8_t(rng() % 64);
            s.destination =
                rng() % 5 ? "10.1.2.3" : (rng() % 2 ? "239.0.0.1" : "8.8.8.8");
            if (rng() % 4 == 0)
                c.on_datagram(ipv6(v6_spec{}), now);
            else
                c.on_datagram(ipv4(s), now);
        }
        }
        auto a = c.take_actions();
        carried += a.to_sis.size();
        to_tun += a.to_tun.size();
    }
    const auto& k = c.counters();
    uint64_t dropped = 0;
    for (auto d : k.drops)
        dropped += d;
    uint64_t queued = 0;
    for (auto& [peer, pc] : k.peers)
        queued += pc.queued_datagrams;
    EXPECT_EQ(k.updus_sent, carried);
    EXPECT_EQ(k.icmp_sent, to_tun);
    // Each datagram from the TUN: carried (fragments counted once per datagram below),
    // queued, or dropped; ICMP answers accompany drops.
    EXPECT_LE(k.datagrams_from_tun, carried + queued + dropped);
    EXPECT_GE(k.datagrams_from_tun + k.fragments_sent, carried + queued);
    EXPECT_GT(dropped, 0u);
    EXPECT_GT(carried, 0u);
}

// Datagrams from the air that seek this host's loopback, or whose source is spoofed
// (loopback, multicast, our own address, or one the table routes to another node),
// never reach the TUN device: dropped and counted.
TEST(IpClient, SpoofedOrLoopbackDatagramsFromTheAirAreDropped)
{
    auto c = bound_client(
        config_with("10.0.2.0/24=0.0.0.2 10.0.3.0/24=0.0.0.3 default=0.0.0.2",
                    "own_address_v4=10.0.1.1"));
    const auto from_node_2 = [&](const std::string& source,
                                 const std::string& destination) {
        auto ind = prim(sis_type::unidata_indication);
        ind.destination_sap = 9;
        ind.source = dl::sis_address{ 2, 9 };
        v4_spec v;
        v.source = source;
        v.destination = destination;
        ind.payload = ipv4(v);
        c.on_sis(ind, 1);
        return c.take_actions().to_tun.size();
    };
    EXPECT_EQ(from_node_2("10.0.2.7", "10.0.1.1"), 1u);  // its own network
    EXPECT_EQ(from_node_2("192.0.2.1", "10.0.1.1"), 1u); // beyond it (the default route)
    EXPECT_EQ(from_node_2("10.0.2.7", "127.0.0.1"), 0u);
    EXPECT_EQ(from_node_2("10.0.2.7", "0.0.0.0"), 0u);
    EXPECT_EQ(drops(c, ip_drop::to_loopback), 2u);
    EXPECT_EQ(from_node_2("127.0.0.1", "10.0.1.1"), 0u);
    EXPECT_EQ(from_node_2("224.0.0.1", "10.0.1.1"), 0u);
    EXPECT_EQ(from_node_2("10.0.1.1", "10.0.1.1"), 0u); // our own address
    EXPECT_EQ(from_node_2("10.0.3.7", "10.0.1.1"), 0u); // node 3's network
    EXPECT_EQ(drops(c, ip_drop::spoofed_source), 4u);
    // Without the source check, only the table's test is off.
    auto open = bound_client(config_with("10.0.3.0/24=0.0.0.3", "source_check=false"));
    auto ind = prim(sis_type::unidata_indication);
    ind.destination_sap = 9;
    ind.source = dl::sis_address{ 2, 9 };
    v4_spec v;
    v.source = "10.0.3.7";
    ind.payload = ipv4(v);
    open.on_sis(ind, 1);
    EXPECT_EQ(open.take_actions().to_tun.size(), 1u);
}
