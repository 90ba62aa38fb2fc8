/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "ip_packet.h"

#include <arpa/inet.h>

#include <algorithm>
#include <cstring>

namespace gr {
namespace hfstack {
namespace net {

using dl::decode_error;
using dl::decoded;

namespace {

constexpr size_t ipv4_min_header = 20;
constexpr size_t ipv6_header = 40;
// RFC 4443 2.4 (c): an ICMPv6 error is as large as possible within the minimum MTU.
constexpr size_t ipv6_min_mtu = 1280;

uint16_t get16(const uint8_t* p) { return uint16_t(p[0] << 8 | p[1]); }
void put16(uint8_t* p, uint16_t v)
{
    p[0] = uint8_t(v >> 8);
    p[1] = uint8_t(v);
}

decoded<ip_header_info> fail(decode_error e, std::string why)
{
    return decoded<ip_header_info>::failure(e, std::move(why));
}

// Ports or ICMP type/code of the upper-layer header at `at`, when it is all there.
void read_transport(const uint8_t* d, size_t size, ip_header_info& h)
{
    const size_t at = h.payload_offset;
    if (at == 0 || !h.is_first_fragment)
        return;
    const size_t left = size - at;
    switch (h.protocol) {
    case ip_proto::tcp:
    case ip_proto::udp:
        if (left >= 4) {
            h.source_port = get16(d + at);
            h.destination_port = get16(d + at + 2);
        }
        break;
    case ip_proto::icmp:
    case ip_proto::icmpv6:
        if (left >= 2) {
            h.icmp_type = d[at];
            h.icmp_code = d[at + 1];
        }
        break;
    default:
        break;
    }
}

decoded<ip_header_info> parse_v4(const uint8_t* d, size_t size)
{
    if (size < ipv4_min_header)
        return fail(decode_error::truncated,
                    "IPv4 datagram of " + std::to_string(size) +
                        " bytes, header needs 20");
    ip_header_info h;
    h.version = 4;
    h.header_length = size_t(d[0] & 0x0F) * 4;
    if (h.header_length < ipv4_min_header)
        return fail(decode_error::bad_field,
                    "IPv4 header length " + std::to_string(h.header_length) +
                        " below 20");
    if (h.header_length > size)
        return fail(decode_error::truncated,
                    "IPv4 header of " + std::to_string(h.header_length) +
                        " bytes in a datagram of " + std::to_string(size));
    h.total_length = get16(d + 2);
    if (h.total_length != size)
        return fail(decode_error::bad_size,
                    "IPv4 total length " + std::to_string(h.total_length) + " but " +
                        std::to_string(size) + " bytes");
    if (internet_checksum(d, h.header_length) != 0)
        return fail(decode_error::header_crc, "IPv4 header checksum wrong");
    h.dscp = uint8_t(d[1] >> 2);
    const uint16_t flags = get16(d + 6);
    h.dont_fragment = flags & 0x4000;
    const bool more = flags & 0x2000;
    const uint16_t offset = flags & 0x1FFF;
    h.is_fragment = more || offset != 0;
    h.is_first_fragment = offset == 0;
    h.hop_limit = d[8];
    h.protocol = d[9];
    h.source.version = h.destination.version = 4;
    std::memcpy(h.source.octets.data(), d + 12, 4);
    std::memcpy(h.destination.octets.data(), d + 16, 4);
    h.payload_offset = h.header_length;
    read_transport(d, size, h);
    return decoded<ip_header_info>::success(h);
}

bool is_extension_header(uint8_t next)
{
    return next == 0 || next == 43 || next == 44 || next == 51 || next == 60;
}

decoded<ip_header_info> parse_v6(const uint8_t* d, size_t size)
{
    if (size < ipv6_header)
        return fail(decode_error::truncated,
                    "IPv6 datagram of " + std::to_string(size) +
                        " bytes, header needs 40");
    ip_header_info h;
    h.version = 6;
    h.header_length = ipv6_header;
    h.total_length = ipv6_header + get16(d + 4);
    if (h.total_length != size) // jumbograms (payload length 0) never cross HF
        return fail(decode_error::bad_size,
                    "IPv6 payload length " +
                        std::to_string(h.total_length - ipv6_header) + " but " +
                        std::to_string(size - ipv6_header) + " bytes follow the header");
    const uint8_t traffic_class = uint8_t((d[0] & 0x0F) << 4 | d[1] >> 4);
    h.dscp = uint8_t(traffic_class >> 2);
    h.hop_limit = d[7];
    h.source.version = h.destination.version = 6;
    std::memcpy(h.source.octets.data(), d + 8, 16);
    std::memcpy(h.destination.octets.data(), d + 24, 16);
    uint8_t next = d[6];
    size_t at = ipv6_header;
    // Walk the extension headers to the upper layer (bounded: at most 16 of them).
    for (int n = 0; n < 16 && is_extension_header(next); ++n) {
        if (at + 8 > size)
            return fail(decode_error::truncated, "IPv6 extension header cut short");
        size_t length;
        if (next == 44) { // Fragment: fixed 8 bytes
            const uint16_t offset = uint16_t(get16(d + at + 2) >> 3);
            h.is_fragment = true;
            h.is_first_fragment = offset == 0;
            length = 8;
        } else if (next == 51) { // Authentication Header: (len + 2) x 4
            length = (size_t(d[at + 1]) + 2) * 4;
        } else {
            length = (size_t(d[at + 1]) + 1) * 8;
        }
        if (at + length > size)
            return fail(decode_error::truncated, "IPv6 extension header cut short");
        next = d[at];
        at += length;
        if (!h.is_first_fragment)
            break; // the rest of a later fragment is not headers
    }
    h.protocol = next;
    h.payload_offset = is_extension_header(next) ? 0 : at;
    read_transport(d, size, h);
    return decoded<ip_header_info>::success(h);
}

void set_ipv4_checksum(uint8_t* header, size_t length)
{
    put16(header + 10, 0);
    put16(header + 10, internet_checksum(header, length));
}

} // namespace

// ---- addresses -------------------------------------------------------------------

ip_address ip_address::v4(uint32_t host_order)
{
    ip_address a;
    a.version = 4;
    a.octets[0] = uint8_t(host_order >> 24);
    a.octets[1] = uint8_t(host_order >> 16);
    a.octets[2] = uint8_t(host_order >> 8);
    a.octets[3] = uint8_t(host_order);
    return a;
}

uint32_t ip_address::v4_value() const
{
    return uint32_t(octets[0]) << 24 | uint32_t(octets[1]) << 16 |
           uint32_t(octets[2]) << 8 | octets[3];
}

bool ip_address::is_multicast() const
{
    return version == 4 ? (octets[0] & 0xF0) == 0xE0 : octets[0] == 0xFF;
}

bool ip_address::is_unspecified() const
{
    const size_t n = version == 4 ? 4 : 16;
    return std::all_of(
        octets.begin(), octets.begin() + n, [](uint8_t b) { return b == 0; });
}

bool ip_address::operator==(const ip_address& o) const
{
    return version == o.version && octets == o.octets;
}

std::optional<ip_address> parse_ip_address(const std::string& text)
{
    ip_address a;
    if (inet_pton(AF_INET, text.c_str(), a.octets.data()) == 1) {
        a.version = 4;
        return a;
    }
    if (inet_pton(AF_INET6, text.c_str(), a.octets.data()) == 1) {
        a.version = 6;
        return a;
    }
    return std::nullopt;
}

std::string to_string(const ip_address& a)
{
    char text[INET6_ADDRSTRLEN] = {};
    inet_ntop(a.version == 4 ? AF_INET : AF_INET6, a.octets.data(), text, sizeof text);
    return text;
}

bool ip_prefix::contains(const ip_address& a) const
{
    if (a.version != network.version)
        return false;
    const unsigned full = length / 8, rest = length % 8;
    if (!std::equal(a.octets.begin(), a.octets.begin() + full, network.octets.begin()))
        return false;
    if (rest == 0)
        return true;
    const uint8_t mask = uint8_t(0xFF << (8 - rest));
    return (a.octets[full] & mask) == (network.octets[full] & mask);
}

std::optional<ip_prefix> parse_ip_prefix(const std::string& text)
{
    const auto slash = text.find('/');
    const auto address = parse_ip_address(text.substr(0, slash));
    if (!address)
        return std::nullopt;
    ip_prefix p{ *address, address->version == 4 ? 32u : 128u };
    if (slash != std::string::npos) {
        const std::string digits = text.substr(slash + 1);
        if (digits.empty() || digits.size() > 3 ||
            !std::all_of(digits.begin(), digits.end(), [](char c) {
                return c >= '0' && c <= '9';
            }))
            return std::nullopt;
        const unsigned length = unsigned(std::stoul(digits));
        if (length > p.length)
            return std::nullopt;
        p.length = length;
    }
    // No host bits beyond the prefix: "10.0.2.1/24" is more likely a typing mistake
    // than a network.
    ip_prefix exact = p;
    for (unsigned bit = p.length; bit < (address->version == 4 ? 32u : 128u); ++bit)
        if (exact.network.octets[bit / 8] & (0x80 >> (bit % 8)))
            return std::nullopt;
    return p;
}

std::string to_string(const ip_prefix& p)
{
    return to_string(p.network) + "/" + std::to_string(p.length);
}

// ---- parsing and checksums ------------------------------------------------------

decoded<ip_header_info> parse_ip(const uint8_t* data, size_t size)
{
    if (size == 0)
        return fail(decode_error::truncated, "empty datagram");
    switch (data[0] >> 4) {
    case 4:
        return parse_v4(data, size);
    case 6:
        return parse_v6(data, size);
    default:
        return fail(decode_error::bad_field,
                    "IP version " + std::to_string(data[0] >> 4) + " is neither 4 nor 6");
    }
}

uint32_t ones_complement_sum(const uint8_t* data, size_t size, uint32_t initial)
{
    uint64_t sum = initial;
    for (size_t i = 0; i + 1 < size; i += 2)
        sum += get16(data + i);
    if (size & 1)
        sum += uint32_t(data[size - 1]) << 8;
    while (sum >> 16)
        sum = (sum & 0xFFFF) + (sum >> 16);
    return uint32_t(sum);
}

uint16_t internet_checksum(const uint8_t* data, size_t size, uint32_t initial)
{
    return uint16_t(~ones_complement_sum(data, size, initial));
}

bool decrement_hop_limit(bytes& datagram)
{
    if (datagram.empty())
        return false;
    const bool v4 = datagram[0] >> 4 == 4;
    const size_t at = v4 ? 8 : 7;
    if (datagram.size() <= at || datagram[at] <= 1)
        return false;
    --datagram[at];
    if (v4)
        set_ipv4_checksum(datagram.data(), size_t(datagram[0] & 0x0F) * 4);
    return true;
}

// ---- ICMP errors ----------------------------------------------------------------

namespace {

bool is_icmp_error_message(const ip_header_info& info)
{
    if (!info.icmp_type)
        return false;
    if (info.version == 4 && info.protocol == ip_proto::icmp) {
        const uint8_t t = *info.icmp_type;
        return t == 3 || t == 4 || t == 5 || t == 11 || t == 12;
    }
    return info.version == 6 && info.protocol == ip_proto::icmpv6 &&
           *info.icmp_type < 128;
}

bytes icmpv4_error(const bytes& offending,
                   const ip_header_info& info,
                   uint8_t type,
                   uint8_t code,
                   const ip_address& source,
                   uint32_t mtu)
{
    const size_t quoted = std::min(offending.size(), info.header_length + 8);
    bytes out(ipv4_min_header + 8 + quoted, 0);
    uint8_t* ip = out.data();
    ip[0] = 0x45;
    ip[1] = 0xC0; // precedence "internetwork control", as routers send ICMP
    put16(ip + 2, uint16_t(out.size()));
    ip[8] = 64;
    ip[9] = ip_proto::icmp;
    std::memcpy(ip + 12, source.octets.data(), 4);
    std::memcpy(ip + 16, info.source.octets.data(), 4);
    set_ipv4_checksum(ip, ipv4_min_header);
    uint8_t* icmp = ip + ipv4_min_header;
    icmp[0] = type;
    icmp[1] = code;
    if (mtu)
        put16(icmp + 6,
              uint16_t(std::min<uint32_t>(mtu, 0xFFFF))); // RFC 1191 next-hop MTU
    std::memcpy(icmp + 8, offending.data(), quoted);
    put16(icmp + 2, internet_checksum(icmp, 8 + quoted));
    return out;
}

bytes icmpv6_error(const bytes& offending,
                   const ip_header_info& info,
                   uint8_t type,
                   uint8_t code,
                   const ip_address& source,
                   uint32_t mtu)
{
    const size_t quoted = std::min(offending.size(), ipv6_min_mtu - ipv6_header - 8);
    const size_t icmp_length = 8 + quoted;
    bytes out(ipv6_header + icmp_length, 0);
    uint8_t* ip = out.data();
    ip[0] = 0x60;
    put16(ip + 4, uint16_t(icmp_length));
    ip[6] = ip_proto::icmpv6;
    ip[7] = 64;
    std::memcpy(ip + 8, source.octets.data(), 16);
    std::memcpy(ip + 24, info.source.octets.data(), 16);
    uint8_t* icmp = ip + ipv6_header;
    icmp[0] = type;
    icmp[1] = code;
    if (mtu) { // Packet Too Big: 32-bit MTU
        icmp[4] = uint8_t(mtu >> 24);
        icmp[5] = uint8_t(mtu >> 16);
        icmp[6] = uint8_t(mtu >> 8);
        icmp[7] = uint8_t(mtu);
    }
    std::memcpy(icmp + 8, offending.data(), quoted);
    // Pseudo-header: source, destination, upper-layer length, next header.
    uint8_t pseudo[40] = {};
    std::memcpy(pseudo, ip + 8, 32);
    pseudo[34] = uint8_t(icmp_length >> 8);
    pseudo[35] = uint8_t(icmp_length);
    pseudo[39] = ip_proto::icmpv6;
    put16(
        icmp + 2,
        internet_checksum(icmp, icmp_length, ones_complement_sum(pseudo, sizeof pseudo)));
    return out;
}

} // namespace

std::optional<bytes> make_icmp_error(const bytes& offending,
                                     const ip_header_info& info,
                                     icmp_error kind,
                                     const ip_address& source,
                                     uint32_t mtu)
{
    if (source.version != info.version)
        return std::nullopt;
    if (info.is_fragment && !info.is_first_fragment)
        return std::nullopt;
    if (is_icmp_error_message(info))
        return std::nullopt;
    if (info.source.is_unspecified() || info.source.is_multicast())
        return std::nullopt;
    const bool too_big = kind == icmp_error::fragmentation_needed;
    // RFC 4443 2.4 (e.2): Packet Too Big is the one error sent for multicast.
    if (info.destination.is_multicast() && !(info.version == 6 && too_big))
        return std::nullopt;
    if (info.version == 4 && info.destination.v4_value() == 0xFFFFFFFF)
        return std::nullopt;
    if (info.version == 4) {
        switch (kind) {
        case icmp_error::destination_unreachable:
            return icmpv4_error(offending, info, 3, 0, source, 0);
        case icmp_error::fragmentation_needed:
            return icmpv4_error(offending, info, 3, 4, source, mtu);
        case icmp_error::time_exceeded:
            return icmpv4_error(offending, info, 11, 0, source, 0);
        }
    }
    switch (kind) {
    case icmp_error::destination_unreachable:
        return icmpv6_error(offending, info, 1, 0, source, 0);
    case icmp_error::fragmentation_needed:
        return icmpv6_error(offending, info, 2, 0, source, mtu);
    case icmp_error::time_exceeded:
        return icmpv6_error(offending, info, 3, 0, source, 0);
    }
    return std::nullopt;
}

// ---- IPv4 fragmentation ---------------------------------------------------------

std::vector<bytes>
fragment_ipv4(const bytes& datagram, const ip_header_info& info, size_t mtu)
{
    if (info.version != 4)
        return {};
    if (datagram.size() <= mtu)
        return { datagram };
    if (info.dont_fragment)
        return {};
    const size_t hl = info.header_length;
    // Options repeated in later fragments: those with the copied flag (RFC 791).
    bytes later_options;
    for (size_t i = ipv4_min_header; i < hl;) {
        const uint8_t type = datagram[i];
        if (type == 0) // end of option list
            break;
        if (type == 1) { // no-operation
            ++i;
            continue;
        }
        if (i + 1 >= hl || datagram[i + 1] < 2 || i + datagram[i + 1] > hl)
            break; // malformed options: copy none further
        if (type & 0x80)
            later_options.insert(later_options.end(),
                                 datagram.begin() + long(i),
                                 datagram.begin() + long(i + datagram[i + 1]));
        i += datagram[i + 1];
    }
    later_options.resize((later_options.size() + 3) / 4 * 4, 0);
    const size_t later_hl = ipv4_min_header + later_options.size();
    if (mtu < std::max(hl, later_hl) + 8)
        return {};

    const uint16_t original_flags = get16(datagram.data() + 6);
    const uint16_t original_offset = original_flags & 0x1FFF;
    const bool original_more = original_flags & 0x2000;
    const size_t payload = datagram.size() - hl;
    std::vector<bytes> out;
    for (size_t done = 0; done < payload;) {
        const bool first = done == 0;
        const size_t header = first ? hl : later_hl;
        size_t chunk = std::min(payload - done, (mtu - header) & ~size_t(7));
        const bool last = done + chunk >= payload;
        bytes f(header + chunk);
        std::memcpy(f.data(), datagram.data(), ipv4_min_header);
        if (first)
            std::memcpy(f.data() + ipv4_min_header,
                        datagram.data() + ipv4_min_header,
                        hl - ipv4_min_header);
        else
            std::memcpy(
                f.data() + ipv4_min_header, later_options.data(), later_options.size());
        f[0] = uint8_t(0x40 | header / 4);
        put16(f.data() + 2, uint16_t(f.size()));
        const uint16_t offset = uint16_t(original_offset + done / 8);
        const bool more = !last || original_more;
        put16(f.data() + 6, uint16_t((more ? 0x2000 : 0) | offset));
        std::memcpy(f.data() + header, datagram.data() + hl + done, chunk);
        set_ipv4_checksum(f.data(), header);
        out.push_back(std::move(f));
        done += chunk;
    }
    return out;
}

// ---- building datagrams -----------------------------------------------------------

std::optional<bytes> compact_datagram(const bytes& datagram, const ip_header_info& info)
{
    const size_t header = info.version == 4 ? ipv4_min_header : ipv6_header;
    if (info.header_length != header || info.payload_offset != header ||
        info.is_fragment || datagram.size() < header)
        return std::nullopt;
    bytes out(compact_header_size + datagram.size() - header);
    out[0] = info.version == 4 ? 0x01 : 0x00;
    out[1] = info.protocol;
    std::copy(datagram.begin() + long(header),
              datagram.end(),
              out.begin() + compact_header_size);
    return out;
}

std::optional<bytes> expand_compact(const bytes& u_pdu,
                                    const ip_address& source,
                                    const ip_address& destination)
{
    if (u_pdu.size() < compact_header_size || (u_pdu[0] & 0xFE) != 0)
        return std::nullopt;
    const uint8_t version = (u_pdu[0] & 1) ? 4 : 6;
    if (source.version != version || destination.version != version)
        return std::nullopt;
    const size_t payload = u_pdu.size() - compact_header_size;
    const size_t header = version == 4 ? ipv4_min_header : ipv6_header;
    if (payload > 0xFFFF - (version == 4 ? header : 0))
        return std::nullopt;
    bytes d(header + payload);
    if (version == 4) {
        d[0] = 0x45;
        put16(d.data() + 2, uint16_t(d.size()));
        d[6] = 0x40; // DF: the far end's header never said it could be split
        d[8] = compact_hop_limit;
        d[9] = u_pdu[1];
        std::memcpy(d.data() + 12, source.octets.data(), 4);
        std::memcpy(d.data() + 16, destination.octets.data(), 4);
        set_ipv4_checksum(d.data(), ipv4_min_header);
    } else {
        d[0] = 0x60;
        put16(d.data() + 4, uint16_t(payload));
        d[6] = u_pdu[1];
        d[7] = compact_hop_limit;
        std::memcpy(d.data() + 8, source.octets.data(), 16);
        std::memcpy(d.data() + 24, destination.octets.data(), 16);
    }
    std::copy(u_pdu.begin() + compact_header_size, u_pdu.end(), d.begin() + long(header));
    return d;
}

bytes make_ipv4(const ip_address& source,
                const ip_address& destination,
                uint8_t protocol,
                const bytes& payload,
                uint8_t ttl,
                uint16_t identification)
{
    bytes d(ipv4_min_header + payload.size());
    d[0] = 0x45;
    put16(d.data() + 2, uint16_t(d.size()));
    put16(d.data() + 4, identification);
    d[8] = ttl;
    d[9] = protocol;
    std::memcpy(d.data() + 12, source.octets.data(), 4);
    std::memcpy(d.data() + 16, destination.octets.data(), 4);
    set_ipv4_checksum(d.data(), ipv4_min_header);
    std::copy(payload.begin(), payload.end(), d.begin() + ipv4_min_header);
    return d;
}

bytes make_udp(const ip_address& source,
               const ip_address& destination,
               uint16_t source_port,
               uint16_t destination_port,
               const bytes& data)
{
    bytes udp(8 + data.size());
    put16(udp.data(), source_port);
    put16(udp.data() + 2, destination_port);
    put16(udp.data() + 4, uint16_t(udp.size()));
    std::copy(data.begin(), data.end(), udp.begin() + 8);
    uint8_t pseudo[12] = {};
    std::memcpy(pseudo, source.octets.data(), 4);
    std::memcpy(pseudo + 4, destination.octets.data(), 4);
    pseudo[9] = ip_proto::udp;
    put16(pseudo + 10, uint16_t(udp.size()));
    uint16_t sum =
        internet_checksum(udp.data(), udp.size(), ones_complement_sum(pseudo, 12));
    put16(udp.data() + 6, sum ? sum : 0xFFFF); // 0 means "no checksum" in UDP
    return make_ipv4(source, destination, ip_proto::udp, udp);
}

bytes make_icmp_echo(const ip_address& source,
                     const ip_address& destination,
                     bool request,
                     uint16_t identifier,
                     uint16_t sequence,
                     const bytes& data)
{
    bytes icmp(8 + data.size());
    icmp[0] = request ? 8 : 0;
    put16(icmp.data() + 4, identifier);
    put16(icmp.data() + 6, sequence);
    std::copy(data.begin(), data.end(), icmp.begin() + 8);
    put16(icmp.data() + 2, internet_checksum(icmp.data(), icmp.size()));
    return make_ipv4(source, destination, ip_proto::icmp, icmp);
}

} // namespace net
} // namespace hfstack
} // namespace gr
