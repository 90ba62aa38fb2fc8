/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

/* IP datagram handling of the IP client: parsing, hop limit, ICMP errors, IPv4
 * fragmentation, prefixes. Datagrams are built field by field (ip_test_support.h) and
 * results checked field by field with the RFC 1071 sum computed independently. */
#include "ip_test_support.h"
#include "net/ip_packet.h"

#include <gtest/gtest.h>

#include <map>
#include <random>

using namespace gr::hfstack::net;
using namespace ip_test;

namespace {
uint16_t get16(const bytes& b, size_t at) { return uint16_t(b[at] << 8 | b[at + 1]); }

// ICMPv6 checksum over the pseudo-header, recomputed here from the RFC 8200 layout.
bool icmpv6_checksum_ok(const bytes& d)
{
    uint32_t sum = 0;
    for (size_t i = 8; i < 40; i += 2)
        sum += uint32_t(d[i]) << 8 | d[i + 1];
    sum += uint32_t(d.size() - 40);
    sum += 58;
    return rfc1071(d.data() + 40, d.size() - 40, sum) == 0;
}
} // namespace

TEST(IpPacket, ParsesIpv4UdpHeader)
{
    v4_spec s;
    s.dscp = 46;
    s.dont_fragment = true;
    s.destination_port = 5353;
    const auto d = ipv4(s);
    const auto p = parse_ip(d);
    ASSERT_TRUE(p.ok()) << p.reason;
    EXPECT_EQ(p.value.version, 4);
    EXPECT_EQ(to_string(p.value.source), "10.0.1.1");
    EXPECT_EQ(to_string(p.value.destination), "10.0.2.1");
    EXPECT_EQ(p.value.dscp, 46);
    EXPECT_EQ(p.value.hop_limit, 64);
    EXPECT_TRUE(p.value.dont_fragment);
    EXPECT_FALSE(p.value.is_fragment);
    EXPECT_EQ(p.value.protocol, ip_proto::udp);
    EXPECT_EQ(*p.value.destination_port, 5353);
    EXPECT_EQ(*p.value.source_port, 40000);
}

TEST(IpPacket, RefusesMalformedDatagramsWithTheField)
{
    auto d = ipv4(v4_spec{});
    EXPECT_EQ(parse_ip(d.data(), 10).error, gr::hfstack::dl::decode_error::truncated);
    auto bad_sum = d;
    bad_sum[10] ^= 1;
    EXPECT_EQ(parse_ip(bad_sum).error, gr::hfstack::dl::decode_error::header_crc);
    auto longer = d;
    longer.push_back(0);
    EXPECT_EQ(parse_ip(longer).error, gr::hfstack::dl::decode_error::bad_size);
    auto v5 = d;
    v5[0] = 0x55;
    EXPECT_EQ(parse_ip(v5).error, gr::hfstack::dl::decode_error::bad_field);
    auto short_ihl = d;
    short_ihl[0] = 0x44;
    EXPECT_FALSE(parse_ip(short_ihl).ok());
    EXPECT_FALSE(parse_ip(bytes{}).ok());
    auto v6 = ipv6(v6_spec{});
    v6.pop_back();
    EXPECT_EQ(parse_ip(v6).error, gr::hfstack::dl::decode_error::bad_size);
}

TEST(IpPacket, WalksIpv6ExtensionHeadersToTheUpperLayer)
{
    v6_spec s;
    s.destination = "ff02::16";
    s.next_header = 58;
    s.icmp_type = 143; // MLDv2 report, behind Hop-by-Hop (Router Alert)
    s.hop_by_hop = true;
    s.dscp = 10;
    const auto p = parse_ip(ipv6(s));
    ASSERT_TRUE(p.ok()) << p.reason;
    EXPECT_EQ(p.value.protocol, ip_proto::icmpv6);
    EXPECT_EQ(*p.value.icmp_type, 143);
    EXPECT_EQ(p.value.payload_offset, 48u);
    EXPECT_EQ(p.value.dscp, 10);
    EXPECT_TRUE(p.value.destination.is_multicast());
}

TEST(IpPacket, DecrementsTheHopLimitAndKeepsTheChecksum)
{
    auto d = ipv4(v4_spec{});
    ASSERT_TRUE(decrement_hop_limit(d));
    EXPECT_EQ(d[8], 63);
    EXPECT_EQ(rfc1071(d.data(), 20), 0);
    v4_spec last;
    last.ttl = 1;
    auto dying = ipv4(last);
    const auto before = dying;
    EXPECT_FALSE(decrement_hop_limit(dying));
    EXPECT_EQ(dying, before);
    auto v6 = ipv6(v6_spec{});
    ASSERT_TRUE(decrement_hop_limit(v6));
    EXPECT_EQ(v6[7], 63);
}

TEST(IpPacket, FragmentationNeededQuotesTheHeaderAndCarriesTheMtu)
{
    v4_spec s;
    s.dont_fragment = true;
    s.payload = 1800;
    const auto d = ipv4(s);
    const auto info = parse_ip(d).value;
    const auto router = *parse_ip_address("10.0.1.254");
    const auto e =
        make_icmp_error(d, info, icmp_error::fragmentation_needed, router, 1500);
    ASSERT_TRUE(e);
    const bytes& r = *e;
    ASSERT_EQ(r.size(), 20u + 8 + 20 + 8);
    EXPECT_EQ(rfc1071(r.data(), 20), 0);                 // IP header checksum
    EXPECT_EQ(rfc1071(r.data() + 20, r.size() - 20), 0); // ICMP checksum
    EXPECT_EQ(r[9], 1);
    EXPECT_EQ(r[20], 3);           // destination unreachable
    EXPECT_EQ(r[21], 4);           // fragmentation needed and DF set
    EXPECT_EQ(get16(r, 26), 1500); // next-hop MTU (RFC 1191)
    EXPECT_EQ(bytes(r.begin() + 12, r.begin() + 16), bytes({ 10, 0, 1, 254 }));
    EXPECT_EQ(bytes(r.begin() + 16, r.begin() + 20), bytes({ 10, 0, 1, 1 }));
    EXPECT_EQ(bytes(r.begin() + 28, r.end()), bytes(d.begin(), d.begin() + 28));
    EXPECT_TRUE(parse_ip(r).ok());
}

TEST(IpPacket, PacketTooBigForIpv6FitsTheMinimumMtu)
{
    v6_spec s;
    s.payload = 3000;
    const auto d = ipv6(s);
    const auto info = parse_ip(d).value;
    const auto e = make_icmp_error(
        d, info, icmp_error::fragmentation_needed, *parse_ip_address("fd00:1::fe"), 1500);
    ASSERT_TRUE(e);
    const bytes& r = *e;
    EXPECT_EQ(r.size(), 1280u);
    EXPECT_EQ(r[6], 58);
    EXPECT_EQ(r[40], 2); // Packet Too Big
    EXPECT_EQ(uint32_t(r[44]) << 24 | r[45] << 16 | r[46] << 8 | r[47], 1500u);
    EXPECT_TRUE(icmpv6_checksum_ok(r));
    EXPECT_EQ(bytes(r.begin() + 24, r.begin() + 40),
              bytes(d.begin() + 8, d.begin() + 24));
    EXPECT_TRUE(parse_ip(r).ok());
    // Time exceeded and unreachable: small originals are quoted whole.
    const auto small = ipv6(v6_spec{});
    for (auto kind : { icmp_error::time_exceeded, icmp_error::destination_unreachable }) {
        const auto t = make_icmp_error(
            small, parse_ip(small).value, kind, *parse_ip_address("fd00:1::fe"));
        ASSERT_TRUE(t);
        EXPECT_EQ(t->size(), 40 + 8 + small.size());
        EXPECT_EQ((*t)[40], kind == icmp_error::time_exceeded ? 3 : 1);
        EXPECT_TRUE(icmpv6_checksum_ok(*t));
    }
}

TEST(IpPacket, NoIcmpErrorWhereTheRfcsForbidIt)
{
    const auto router4 = *parse_ip_address("10.0.1.254");
    // About an ICMP error.
    v4_spec err;
    err.protocol = 1;
    err.icmp_type = 3;
    auto d = ipv4(err);
    EXPECT_FALSE(
        make_icmp_error(d, parse_ip(d).value, icmp_error::time_exceeded, router4));
    // An echo request is answered.
    err.icmp_type = 8;
    d = ipv4(err);
    EXPECT_TRUE(
        make_icmp_error(d, parse_ip(d).value, icmp_error::time_exceeded, router4));
    // To a multicast or broadcast destination.
    v4_spec mc;
    mc.destination = "224.0.0.251";
    d = ipv4(mc);
    EXPECT_FALSE(make_icmp_error(
        d, parse_ip(d).value, icmp_error::destination_unreachable, router4));
    mc.destination = "255.255.255.255";
    d = ipv4(mc);
    EXPECT_FALSE(make_icmp_error(
        d, parse_ip(d).value, icmp_error::destination_unreachable, router4));
    // A later fragment.
    d = ipv4(v4_spec{});
    d[7] = 0x10; // offset 16 x 8
    d[10] = d[11] = 0;
    put16(d, 10, rfc1071(d.data(), 20));
    EXPECT_FALSE(
        make_icmp_error(d, parse_ip(d).value, icmp_error::time_exceeded, router4));
    // IPv6: Packet Too Big is sent for a multicast destination, other errors are not.
    v6_spec m6;
    m6.destination = "ff05::2";
    const auto d6 = ipv6(m6);
    const auto router6 = *parse_ip_address("fd00:1::fe");
    EXPECT_TRUE(make_icmp_error(
        d6, parse_ip(d6).value, icmp_error::fragmentation_needed, router6, 1280));
    EXPECT_FALSE(
        make_icmp_error(d6, parse_ip(d6).value, icmp_error::time_exceeded, router6));
    // The router address must be of the datagram's version.
    EXPECT_FALSE(
        make_icmp_error(d6, parse_ip(d6).value, icmp_error::time_exceeded, router4));
}

TEST(IpPacket, Ipv4FragmentsReassembleToTheOriginal)
{
    v4_spec s;
    s.payload = 4000;
    // Router Alert (copied) then Record Route-like option 7 (not copied) and padding.
    s.options = { 0x94, 0x04, 0x00, 0x00, 0x07, 0x03, 0x04, 0x00 };
    const auto d = ipv4(s);
    const auto info = parse_ip(d).value;
    const auto parts = fragment_ipv4(d, info, 1500);
    ASSERT_EQ(parts.size(), 3u);
    std::map<size_t, bytes> by_offset;
    for (size_t i = 0; i < parts.size(); ++i) {
        const auto& f = parts[i];
        const auto p = parse_ip(f);
        ASSERT_TRUE(p.ok()) << p.reason;
        EXPECT_LE(f.size(), 1500u);
        const size_t hl = p.value.header_length;
        EXPECT_EQ(hl, i == 0 ? 28u : 24u) << "fragment " << i;
        if (i > 0) { // only the copied option travels on
            EXPECT_EQ(bytes(f.begin() + 20, f.begin() + 24), bytes({ 0x94, 0x04, 0, 0 }));
        }
        const uint16_t flags = get16(f, 6);
        EXPECT_EQ(bool(flags & 0x2000), i + 1 < parts.size());
        if (i + 1 < parts.size()) {
            EXPECT_EQ((f.size() - hl) % 8, 0u);
        }
        EXPECT_EQ(get16(f, 4), 0x1234); // identification kept
        by_offset[size_t(flags & 0x1FFF) * 8] = bytes(f.begin() + long(hl), f.end());
    }
    bytes joined;
    for (auto& [offset, data] : by_offset) {
        ASSERT_EQ(offset, joined.size());
        joined.insert(joined.end(), data.begin(), data.end());
    }
    EXPECT_EQ(joined, bytes(d.begin() + 28, d.end()));

    EXPECT_EQ(fragment_ipv4(d, info, 5000), std::vector<bytes>{ d }); // fits
    EXPECT_TRUE(fragment_ipv4(d, info, 30).empty()); // no room for 8 bytes of data
    s.dont_fragment = true;
    const auto df = ipv4(s);
    EXPECT_TRUE(fragment_ipv4(df, parse_ip(df).value, 1500).empty());
}

TEST(IpPacket, PrefixesParseAndMatch)
{
    const auto p = parse_ip_prefix("10.0.2.0/24");
    ASSERT_TRUE(p);
    EXPECT_TRUE(p->contains(*parse_ip_address("10.0.2.200")));
    EXPECT_FALSE(p->contains(*parse_ip_address("10.0.3.1")));
    EXPECT_FALSE(p->contains(*parse_ip_address("fd00::1")));
    EXPECT_FALSE(parse_ip_prefix("10.0.2.1/24")); // host bits set
    EXPECT_FALSE(parse_ip_prefix("10.0.2.0/33"));
    EXPECT_FALSE(parse_ip_prefix("10.0.2.0/"));
    EXPECT_FALSE(parse_ip_prefix("hf0"));
    const auto six = parse_ip_prefix("fd00:2::/63");
    ASSERT_TRUE(six);
    EXPECT_TRUE(six->contains(*parse_ip_address("fd00:2:0:1::9")));
    EXPECT_FALSE(six->contains(*parse_ip_address("fd00:2:0:2::9")));
    EXPECT_EQ(to_string(*six), "fd00:2::/63");
    EXPECT_EQ(parse_ip_prefix("10.1.2.3")->length, 32u);
}

// Property: no input makes the parser, the ICMP builder or the fragmenter misbehave;
// what parses and fragments reassembles to itself.
TEST(IpPacket, RandomDatagramsNeverBreakTheParser)
{
    std::mt19937 rng(7);
    for (int n = 0; n < 20000; ++n) {
        v4_spec s;
        s.payload = rng() % 3000;
        s.ttl = uint8_t(rng());
        s.protocol = uint8_t(rng() % 3 == 0 ? 6 : 17);
        auto d = ipv4(s);
        // Corrupt a few bytes sometimes.
        if (rng() % 2)
            for (int k = 0; k < 3; ++k)
                d[rng() % d.size()] = uint8_t(rng());
        const auto p = parse_ip(d);
        if (!p.ok())
            continue;
        for (auto kind : { icmp_error::destination_unreachable,
                           icmp_error::time_exceeded,
                           icmp_error::fragmentation_needed }) {
            const auto e =
                make_icmp_error(d, p.value, kind, *parse_ip_address("10.9.9.9"), 576);
            if (e) {
                ASSERT_TRUE(parse_ip(*e).ok());
            }
        }
        const auto parts = fragment_ipv4(d, p.value, 576);
        for (const auto& f : parts)
            ASSERT_TRUE(parse_ip(f).ok());
    }
}
