/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "pcap.h"

#include <cerrno>
#include <cstring>
#include <stdexcept>

namespace gr {
namespace hfstack {
namespace dl {

namespace {

void put_u16_le(bytes& out, uint16_t v)
{
    out.push_back(uint8_t(v));
    out.push_back(uint8_t(v >> 8));
}
void put_u32_le(bytes& out, uint32_t v)
{
    put_u16_le(out, uint16_t(v));
    put_u16_le(out, uint16_t(v >> 16));
}

// RFC 1071 ones'-complement sum.
uint32_t sum16(const uint8_t* p, size_t n, uint32_t acc = 0)
{
    for (size_t i = 0; i + 1 < n; i += 2)
        acc += uint32_t(p[i] << 8 | p[i + 1]);
    if (n & 1)
        acc += uint32_t(p[n - 1] << 8);
    return acc;
}
uint16_t fold(uint32_t acc)
{
    while (acc >> 16)
        acc = (acc & 0xFFFF) + (acc >> 16);
    return uint16_t(~acc);
}

constexpr uint8_t tcp_syn = 0x02, tcp_psh = 0x08, tcp_ack = 0x10;
constexpr uint8_t client_ip[4] = { 127, 0, 0, 1 };
constexpr uint8_t server_ip[4] = { 127, 0, 0, 2 };
constexpr size_t max_tcp_payload = 65000;

} // namespace

pcap_writer::pcap_writer(const std::string& path, uint32_t linktype)
    : d_file(std::fopen(path.c_str(), "wb")), d_linktype(linktype)
{
    if (!d_file)
        throw std::runtime_error("cannot create capture file '" + path +
                                 "': " + std::strerror(errno));
    bytes h;
    put_u32_le(h, 0xA1B2C3D4); // microsecond timestamps
    put_u16_le(h, 2);
    put_u16_le(h, 4);
    put_u32_le(h, 0);      // GMT offset
    put_u32_le(h, 0);      // accuracy
    put_u32_le(h, 262144); // snap length
    put_u32_le(h, linktype);
    std::fwrite(h.data(), 1, h.size(), d_file);
}

pcap_writer::~pcap_writer() { std::fclose(d_file); }

void pcap_writer::write(uint64_t timestamp_us, const uint8_t* data, size_t size)
{
    bytes h;
    put_u32_le(h, uint32_t(timestamp_us / 1000000));
    put_u32_le(h, uint32_t(timestamp_us % 1000000));
    put_u32_le(h, uint32_t(size));
    put_u32_le(h, uint32_t(size));
    std::fwrite(h.data(), 1, h.size(), d_file);
    std::fwrite(data, 1, size, d_file);
    d_records += 1;
}

void pcap_writer::flush() { std::fflush(d_file); }

sis_capture::connection& sis_capture::open(uint64_t timestamp_us, uint16_t client_id)
{
    auto it = d_connections.find(client_id);
    if (it != d_connections.end())
        return it->second;
    // Distinct initial sequence numbers per connection, as a real stack would pick.
    connection c{ 1000u + 100000u * client_id, 5000u + 100000u * client_id };
    auto& conn = d_connections.emplace(client_id, c).first->second;
    segment(timestamp_us, client_id, true, tcp_syn, nullptr, 0);
    conn.client_seq += 1;
    segment(timestamp_us, client_id, false, tcp_syn | tcp_ack, nullptr, 0);
    conn.server_seq += 1;
    segment(timestamp_us, client_id, true, tcp_ack, nullptr, 0);
    return conn;
}

void sis_capture::write(uint64_t timestamp_us,
                        uint16_t client_id,
                        bool from_client,
                        const bytes& data)
{
    auto& conn = open(timestamp_us, client_id);
    for (size_t at = 0; at < data.size(); at += max_tcp_payload) {
        const size_t n = std::min(max_tcp_payload, data.size() - at);
        segment(
            timestamp_us, client_id, from_client, tcp_psh | tcp_ack, data.data() + at, n);
        (from_client ? conn.client_seq : conn.server_seq) += uint32_t(n);
    }
}

void sis_capture::segment(uint64_t timestamp_us,
                          uint16_t client_id,
                          bool from_client,
                          uint8_t flags,
                          const uint8_t* payload,
                          size_t size)
{
    const auto& conn = d_connections.at(client_id);
    const uint16_t client_port = uint16_t(40000 + client_id);
    const uint8_t* src = from_client ? client_ip : server_ip;
    const uint8_t* dst = from_client ? server_ip : client_ip;
    const size_t total = 20 + 20 + size;

    bytes p;
    p.reserve(total);
    // IPv4
    p.insert(p.end(), { 0x45, 0x00 });
    put_u16_be(p, uint16_t(total));
    put_u16_be(p, uint16_t(d_pcap.records()));      // identification
    p.insert(p.end(), { 0x40, 0x00, 64, 6, 0, 0 }); // DF, TTL 64, TCP, checksum later
    p.insert(p.end(), src, src + 4);
    p.insert(p.end(), dst, dst + 4);
    const uint16_t ip_sum = fold(sum16(p.data(), 20));
    p[10] = uint8_t(ip_sum >> 8);
    p[11] = uint8_t(ip_sum);
    // TCP
    put_u16_be(p, from_client ? client_port : sis_tcp_port);
    put_u16_be(p, from_client ? sis_tcp_port : client_port);
    put_u32_be(p, from_client ? conn.client_seq : conn.server_seq);
    put_u32_be(p,
               (flags & tcp_ack) ? (from_client ? conn.server_seq : conn.client_seq) : 0);
    p.insert(p.end(), { 0x50, flags });
    put_u16_be(p, 65535);              // window
    p.insert(p.end(), { 0, 0, 0, 0 }); // checksum, urgent pointer
    if (size)
        p.insert(p.end(), payload, payload + size);
    // TCP checksum over the pseudo-header and segment.
    uint8_t pseudo[12] = { src[0],
                           src[1],
                           src[2],
                           src[3],
                           dst[0],
                           dst[1],
                           dst[2],
                           dst[3],
                           0,
                           6,
                           uint8_t((20 + size) >> 8),
                           uint8_t(20 + size) };
    const uint16_t tcp_sum = fold(sum16(p.data() + 20, 20 + size, sum16(pseudo, 12)));
    p[36] = uint8_t(tcp_sum >> 8);
    p[37] = uint8_t(tcp_sum);
    d_pcap.write(timestamp_us, p);
}

} // namespace dl
} // namespace hfstack
} // namespace gr
