/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

// Datagrams for the IP client tests, built field by field (checksums computed here by
// the textbook RFC 1071 loop, independently of the kernel's).
#ifndef HFSTACK_TESTS_IP_TEST_SUPPORT_H
#define HFSTACK_TESTS_IP_TEST_SUPPORT_H

#include "net/ip_packet.h"

#include <arpa/inet.h>

#include <cstring>
#include <string>

namespace ip_test {

using gr::hfstack::dl::bytes;

inline uint16_t rfc1071(const uint8_t* p, size_t n, uint32_t sum = 0)
{
    for (size_t i = 0; i < n; i += 2)
        sum += uint32_t(p[i]) << 8 | (i + 1 < n ? p[i + 1] : 0);
    while (sum >> 16)
        sum = (sum & 0xFFFF) + (sum >> 16);
    return uint16_t(~sum);
}

inline void put16(bytes& b, size_t at, uint16_t v)
{
    b[at] = uint8_t(v >> 8);
    b[at + 1] = uint8_t(v);
}

struct v4_spec {
    std::string source = "10.0.1.1", destination = "10.0.2.1";
    uint8_t protocol = 17; // UDP
    uint8_t ttl = 64;
    uint8_t dscp = 0;
    bool dont_fragment = false;
    uint16_t source_port = 40000, destination_port = 7;
    size_t payload = 32; // UDP payload bytes (or the upper-layer bytes for others)
    bytes options;       // IPv4 options, a multiple of 4 bytes
    uint8_t icmp_type = 8;
};

// IPv4 + UDP (ports) or ICMP (type) or raw upper-layer bytes.
inline bytes ipv4(const v4_spec& s)
{
    const size_t hl = 20 + s.options.size();
    size_t upper = s.payload;
    if (s.protocol == 17)
        upper += 8;
    else if (s.protocol == 1)
        upper += 8;
    bytes d(hl + upper, 0);
    d[0] = uint8_t(0x40 | hl / 4);
    d[1] = uint8_t(s.dscp << 2);
    put16(d, 2, uint16_t(d.size()));
    put16(d, 4, 0x1234);
    put16(d, 6, s.dont_fragment ? 0x4000 : 0);
    d[8] = s.ttl;
    d[9] = s.protocol;
    inet_pton(AF_INET, s.source.c_str(), d.data() + 12);
    inet_pton(AF_INET, s.destination.c_str(), d.data() + 16);
    std::memcpy(d.data() + 20, s.options.data(), s.options.size());
    put16(d, 10, rfc1071(d.data(), hl));
    for (size_t i = 0; i < s.payload; ++i)
        d[d.size() - s.payload + i] = uint8_t(i * 7 + 1);
    if (s.protocol == 17) {
        put16(d, hl, s.source_port);
        put16(d, hl + 2, s.destination_port);
        put16(d, hl + 4, uint16_t(upper));
    } else if (s.protocol == 1) {
        d[hl] = s.icmp_type;
        put16(d, hl + 2, rfc1071(d.data() + hl, upper));
    }
    return d;
}

struct v6_spec {
    std::string source = "fd00:1::1", destination = "fd00:2::1";
    uint8_t next_header = 17;
    uint8_t hop_limit = 64;
    uint8_t dscp = 0;
    uint16_t destination_port = 7;
    size_t payload = 32;
    bool hop_by_hop = false; // an 8-byte Hop-by-Hop Options header (Router Alert) first
    uint8_t icmp_type = 128;
};

inline bytes ipv6(const v6_spec& s)
{
    const size_t ext = s.hop_by_hop ? 8 : 0;
    const size_t upper = 8 + s.payload;
    bytes d(40 + ext + upper, 0);
    d[0] = uint8_t(0x60 | s.dscp >> 2);
    d[1] = uint8_t((s.dscp & 3) << 6);
    put16(d, 4, uint16_t(ext + upper));
    d[6] = s.hop_by_hop ? 0 : s.next_header;
    d[7] = s.hop_limit;
    inet_pton(AF_INET6, s.source.c_str(), d.data() + 8);
    inet_pton(AF_INET6, s.destination.c_str(), d.data() + 24);
    if (s.hop_by_hop) {
        d[40] = s.next_header;
        d[41] = 0;                                  // 8 bytes in all
        d[42] = 5, d[43] = 2, d[44] = 0, d[45] = 0; // Router Alert (MLD)
        d[46] = 1, d[47] = 0;                       // PadN
    }
    const size_t at = 40 + ext;
    if (s.next_header == 17) {
        put16(d, at, 40000);
        put16(d, at + 2, s.destination_port);
        put16(d, at + 4, uint16_t(upper));
    } else if (s.next_header == 58) {
        d[at] = s.icmp_type;
    }
    return d;
}

} // namespace ip_test

#endif
