/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

/* The IP client's address table and traffic filter (STANAG 5066 Annex F.12).
 * Address table: IP destinations (hosts, subnets, multicast, a default) to STANAG 5066
 * node or group addresses, longest prefix first, with an optional service per entry.
 * Filter: rules for the background chatter an HF link must not carry (mDNS, LLMNR,
 * SSDP, NetBIOS, DHCP, IPv6 router/neighbour solicitation, IGMP/MLD), with counters. */
#ifndef HFSTACK_KERNELS_NET_IP_ROUTES_H
#define HFSTACK_KERNELS_NET_IP_ROUTES_H

#include "dl/sis.h"
#include "ip_packet.h"

#include <optional>
#include <string>
#include <vector>

namespace gr {
namespace hfstack {
namespace net {

// How the datagrams of an entry (or of a DSCP class) travel.
enum class ip_service : uint8_t {
    automatic, // unicast: ARQ with node delivery confirmation; group: non-ARQ with
               // repeats
    arq,       // ARQ with node delivery confirmation (unicast node addresses only)
    non_arq,   // non-ARQ, `repeats` extra copies
};
const char* to_string(ip_service s);
std::optional<ip_service> parse_ip_service(const std::string& text);

struct ip_route {
    ip_prefix prefix;
    uint32_t node = 0; // 5066 address; bit 28 set for a group (16.x.x.x-31.x.x.x)
    ip_service service = ip_service::automatic;
    std::optional<unsigned> repeats; // non-ARQ copies beyond the first (0-15)
    // Datagrams to this host travel with the compact header (ip_packet.h), and compact
    // datagrams from its node are rebuilt with this host as their source. Host entries
    // (/32, /128) of unicast nodes only; both ends must say so.
    bool compact = false;
};

class ip_route_table
{
public:
    // At least this many entries are supported (F.12 asks for 10; the issue for 32).
    static constexpr size_t max_entries = 256;

    // Replaces an entry with the same prefix; throws std::invalid_argument beyond
    // max_entries or for a node address above 28 bits plus the group flag.
    void add(const ip_route& r);
    // "PREFIX=NODE[,arq|non_arq|auto][,repeats=N][,compact]", PREFIX also "default" (both
    // 0.0.0.0/0 and ::/0); entries separated by whitespace. Throws
    // std::invalid_argument naming the entry and what is wrong.
    void add_text(const std::string& text);

    // The longest matching prefix, or nullptr.
    const ip_route* lookup(const ip_address& destination) const;
    // The compact host entry of `version` for 5066 node `node`, or nullptr.
    const ip_route* compact_host(uint32_t node, uint8_t version) const;
    const std::vector<ip_route>& entries() const { return d_entries; }
    // Whether any entry maps a multicast prefix (then IGMP/MLD reports are wanted).
    bool has_multicast() const;
    std::string to_text() const;

private:
    std::vector<ip_route> d_entries;
};

struct ip_filter_rule {
    std::string name;
    uint8_t version = 0; // 0: both
    std::optional<uint8_t> protocol;
    std::optional<ip_prefix> destination;
    std::optional<uint16_t> destination_port;
    std::optional<uint8_t> icmp_type;
    bool matches(const ip_header_info& h) const;
};

// "name:key=value,...", keys proto (udp, tcp, icmp, icmpv6, igmp or a number), dst
// (a prefix), dport, type (ICMP type), ip (4 or 6). Throws std::invalid_argument.
ip_filter_rule parse_filter_rule(const std::string& text);
std::string to_text(const ip_filter_rule& r);

// The default drop list; IGMP and MLD reports only when `multicast_routed` is false.
std::vector<ip_filter_rule> default_filter_rules(bool multicast_routed);

} // namespace net
} // namespace hfstack
} // namespace gr

#endif
