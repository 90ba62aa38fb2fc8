/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

/* Capture files for Wireshark/tshark: raw D_PDUs (LINKTYPE 237, Wireshark's
 * STANAG 5066 D_PDU link type) and SIS sessions, which are wrapped in synthetic
 * IPv4/TCP segments to or from port 5066 so the s5066sis dissector decodes them. */
#ifndef HFSTACK_KERNELS_DL_PCAP_H
#define HFSTACK_KERNELS_DL_PCAP_H

#include "codec.h"

#include <cstdio>
#include <map>
#include <string>

namespace gr {
namespace hfstack {
namespace dl {

constexpr uint32_t linktype_raw_ip = 101;
constexpr uint32_t linktype_stanag_5066_d_pdu = 237;
constexpr uint16_t sis_tcp_port = 5066;

// Classic pcap (microsecond timestamps, little-endian). Timestamps come from the
// caller, in microseconds since the Unix epoch, so virtual-time runs capture too.
class pcap_writer
{
public:
    // Throws std::runtime_error naming the path when the file cannot be created.
    pcap_writer(const std::string& path, uint32_t linktype);
    ~pcap_writer();
    pcap_writer(const pcap_writer&) = delete;
    pcap_writer& operator=(const pcap_writer&) = delete;

    void write(uint64_t timestamp_us, const uint8_t* data, size_t size);
    void write(uint64_t timestamp_us, const bytes& data)
    {
        write(timestamp_us, data.data(), data.size());
    }
    void flush();
    uint64_t records() const { return d_records; }
    uint32_t linktype() const { return d_linktype; }

private:
    std::FILE* d_file;
    uint32_t d_linktype;
    uint64_t d_records = 0;
};

// One D_PDU (or any byte string a modem burst held) per record.
class dpdu_capture
{
public:
    explicit dpdu_capture(const std::string& path)
        : d_pcap(path, linktype_stanag_5066_d_pdu)
    {
    }
    void write(uint64_t timestamp_us, const bytes& dpdu)
    {
        d_pcap.write(timestamp_us, dpdu);
    }
    void flush() { d_pcap.flush(); }
    uint64_t records() const { return d_pcap.records(); }

private:
    pcap_writer d_pcap;
};

// SIS traffic of any number of clients as TCP connections 127.0.0.1:(40000+id) <->
// 127.0.0.2:5066, each opened with a three-way handshake on first use and carrying
// consistent sequence and acknowledgement numbers, so tshark reassembles primitives
// split across writes.
class sis_capture
{
public:
    explicit sis_capture(const std::string& path) : d_pcap(path, linktype_raw_ip) {}
    // from_client: direction of the bytes. Writes larger than 65000 bytes are split.
    void
    write(uint64_t timestamp_us, uint16_t client_id, bool from_client, const bytes& data);
    void flush() { d_pcap.flush(); }
    uint64_t records() const { return d_pcap.records(); }

private:
    struct connection {
        uint32_t client_seq;
        uint32_t server_seq;
    };
    void segment(uint64_t timestamp_us,
                 uint16_t client_id,
                 bool from_client,
                 uint8_t flags,
                 const uint8_t* payload,
                 size_t size);
    connection& open(uint64_t timestamp_us, uint16_t client_id);

    pcap_writer d_pcap;
    std::map<uint16_t, connection> d_connections;
};

} // namespace dl
} // namespace hfstack
} // namespace gr

#endif
