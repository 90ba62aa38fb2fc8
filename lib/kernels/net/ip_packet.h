/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

/* IP datagrams as the IP client (STANAG 5066 Annex F.12) handles them: header parsing
 * for IPv4 and IPv6 (as far as routing, filtering and priority need), the hop-limit
 * decrement of a router, ICMP / ICMPv6 error messages (RFC 792, 1191, 4443), and
 * IPv4 fragmentation (RFC 791). Plain C++17: bytes in, bytes out, never throws on
 * input from the network. */
#ifndef HFSTACK_KERNELS_NET_IP_PACKET_H
#define HFSTACK_KERNELS_NET_IP_PACKET_H

#include "dl/codec.h"

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace gr {
namespace hfstack {
namespace net {

using dl::bytes;

// An IPv4 or IPv6 address; IPv4 uses the first 4 bytes.
struct ip_address {
    uint8_t version = 4; // 4 or 6
    std::array<uint8_t, 16> octets{};

    static ip_address v4(uint32_t host_order);
    uint32_t v4_value() const; // host order; IPv4 only
    bool is_multicast() const;
    bool is_unspecified() const;
    bool operator==(const ip_address& o) const;
    bool operator!=(const ip_address& o) const { return !(*this == o); }
};
// "10.0.0.1" or "fd00::1"; nullopt for anything else.
std::optional<ip_address> parse_ip_address(const std::string& text);
std::string to_string(const ip_address& a);

// A network: address and prefix length (0-32 or 0-128).
struct ip_prefix {
    ip_address network;
    unsigned length = 0;
    bool contains(const ip_address& a) const;
};
// "10.0.2.0/24", "fd00::/64", "10.0.0.7" (a host); nullopt when malformed or when the
// address has bits set beyond the prefix.
std::optional<ip_prefix> parse_ip_prefix(const std::string& text);
std::string to_string(const ip_prefix& p);

// IP protocol numbers used here.
namespace ip_proto {
constexpr uint8_t icmp = 1, igmp = 2, tcp = 6, udp = 17, icmpv6 = 58;
}

// What the IP client reads from a datagram's headers.
struct ip_header_info {
    uint8_t version = 0;
    size_t header_length = 0; // IPv4 header with options; IPv6 fixed header (40)
    size_t total_length = 0;  // as the header states; equals the datagram's size
    ip_address source, destination;
    uint8_t dscp = 0;
    uint8_t hop_limit = 0; // IPv4 TTL / IPv6 hop limit
    uint8_t protocol = 0;  // IPv4 protocol / IPv6 upper-layer header (after extensions)
    size_t payload_offset = 0; // start of the upper-layer header (0 if not found)
    bool dont_fragment = false;
    bool is_fragment = false;      // IPv4 MF set or offset != 0; IPv6 Fragment header
    bool is_first_fragment = true; // offset 0
    // Transport details, when the upper-layer header is present in this datagram.
    std::optional<uint16_t> source_port, destination_port; // UDP / TCP
    std::optional<uint8_t> icmp_type;                      // ICMP / ICMPv6
    std::optional<uint8_t> icmp_code;
};

// Parses and checks a datagram: version 4 or 6, lengths consistent with the bytes
// (no trailing bytes, no truncation), IPv4 header checksum. Failure reasons name the
// field (decode_error::truncated, bad_size, bad_field, header_crc).
dl::decoded<ip_header_info> parse_ip(const uint8_t* data, size_t size);
inline dl::decoded<ip_header_info> parse_ip(const bytes& d)
{
    return parse_ip(d.data(), d.size());
}

// RFC 1071 one's-complement sum, folded, not inverted; `initial` chains pieces.
uint32_t ones_complement_sum(const uint8_t* data, size_t size, uint32_t initial = 0);
uint16_t internet_checksum(const uint8_t* data, size_t size, uint32_t initial = 0);

// One hop: TTL / hop limit minus one (IPv4 checksum updated as RFC 1624). Returns false,
// changing nothing, when the hop limit is already 0 or 1 (the datagram must die here).
bool decrement_hop_limit(bytes& datagram);

// ICMP errors about `offending` (a datagram that parsed), from `source` (a router
// address of the offending datagram's version). They quote the offending header and
// the start of its payload (IPv4: header + 8 bytes; IPv6: as much as fits in 1280).
// nullopt where RFC 1812 / 4443 forbid an error: the offending datagram is itself an
// ICMP error, a non-first fragment, addressed to a multicast or broadcast address, or
// from an unspecified or multicast source.
enum class icmp_error {
    destination_unreachable, // no route: IPv4 type 3 code 0, IPv6 type 1 code 0
    fragmentation_needed, // IPv4 type 3 code 4 with next-hop MTU; IPv6 type 2 (Packet Too
                          // Big)
    time_exceeded,        // IPv4 type 11 code 0; IPv6 type 3 code 0
};
std::optional<bytes> make_icmp_error(const bytes& offending,
                                     const ip_header_info& info,
                                     icmp_error kind,
                                     const ip_address& source,
                                     uint32_t mtu = 0);

// Splits an IPv4 datagram without DF into fragments of at most `mtu` bytes (RFC 791:
// payload in multiples of 8 bytes, options with the copied flag repeated in every
// fragment, MF and offsets relative to the original's). Returns the datagram whole if
// it fits; an empty vector if it cannot be split (DF set, IPv6, mtu too small for the
// header plus 8 bytes).
std::vector<bytes>
fragment_ipv4(const bytes& datagram, const ip_header_info& info, size_t mtu);

// The compact header (docs/ip-client.md, "Compact header"), after Isode's implicit IP
// client (S5066-APP5): the IP header is replaced by two bytes and rebuilt at the far
// end from the STANAG 5066 addresses.
//   byte 0: bits 7-4 version 0 (where IP has 4 or 6, so full and compact datagrams share
//           SAP 9), bits 3-1 zero, bit 0 set for IPv4 (clear: IPv6);
//   byte 1: the IPv4 protocol / IPv6 next header, which no 5066 field can give back;
//   then the upper-layer header and data, as they were.
// The rebuilt header: IPv4 without options, TOS 0, identification 0, DF, TTL
// compact_hop_limit; IPv6 traffic class and flow label 0, hop limit compact_hop_limit.
constexpr size_t compact_header_size = 2;
constexpr uint8_t compact_hop_limit = 64;
inline bool is_compact(const bytes& u_pdu)
{
    return !u_pdu.empty() && (u_pdu[0] >> 4) == 0;
}
// The compact form, or nullopt for a datagram the far end could not rebuild exactly
// enough: IPv4 options, a fragment, IPv6 extension headers.
std::optional<bytes> compact_datagram(const bytes& datagram, const ip_header_info& info);
// The datagram rebuilt from a compact U_PDU between these addresses (of the version
// byte 0 names); nullopt for a malformed one (short, reserved bits set, wrong version).
std::optional<bytes> expand_compact(const bytes& u_pdu,
                                    const ip_address& source,
                                    const ip_address& destination);

// Datagrams built from scratch (simulated hosts, tests): an IPv4 header (no options,
// checksum set) around `payload`; a UDP datagram (UDP checksum set); an ICMP echo
// request (type 8) or reply (type 0).
bytes make_ipv4(const ip_address& source,
                const ip_address& destination,
                uint8_t protocol,
                const bytes& payload,
                uint8_t ttl = 64,
                uint16_t identification = 0);
bytes make_udp(const ip_address& source,
               const ip_address& destination,
               uint16_t source_port,
               uint16_t destination_port,
               const bytes& data);
bytes make_icmp_echo(const ip_address& source,
                     const ip_address& destination,
                     bool request,
                     uint16_t identifier,
                     uint16_t sequence,
                     const bytes& data);

} // namespace net
} // namespace hfstack
} // namespace gr

#endif
