/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "slep_wire.h"

namespace gr {
namespace hfstack {
namespace net {

namespace {

void put16(bytes& b, uint16_t v)
{
    b.push_back(uint8_t(v >> 8));
    b.push_back(uint8_t(v));
}

void put32(bytes& b, uint32_t v)
{
    for (int shift = 24; shift >= 0; shift -= 8)
        b.push_back(uint8_t(v >> shift));
}

uint16_t get16(const uint8_t* p) { return uint16_t(p[0] << 8 | p[1]); }

uint32_t get32(const uint8_t* p)
{
    return uint32_t(p[0]) << 24 | uint32_t(p[1]) << 16 | uint32_t(p[2]) << 8 | p[3];
}

// The flags each type may carry; any other set bit is a malformed PDU.
uint8_t allowed_flags(slep_type t)
{
    using namespace slep_flag;
    switch (t) {
    case slep_type::datagram:
    case slep_type::reliable:
        return compressed;
    case slep_type::open:
        return compressed | fin | ack_requested;
    case slep_type::data:
    case slep_type::data_ack:
        return responder | fin | ack_requested;
    case slep_type::window:
    case slep_type::reset:
    case slep_type::ack:
        return responder;
    case slep_type::hello:
        return 0;
    }
    return 0;
}

} // namespace

const char* to_string(slep_type t)
{
    switch (t) {
    case slep_type::datagram:
        return "DATAGRAM";
    case slep_type::reliable:
        return "RELIABLE";
    case slep_type::open:
        return "OPEN";
    case slep_type::data:
        return "DATA";
    case slep_type::window:
        return "WINDOW";
    case slep_type::reset:
        return "RESET";
    case slep_type::hello:
        return "HELLO";
    case slep_type::ack:
        return "ACK";
    case slep_type::data_ack:
        return "DATA_ACK";
    }
    return "UNKNOWN";
}

const char* to_string(slep_reset_reason r)
{
    switch (r) {
    case slep_reset_reason::aborted:
        return "aborted";
    case slep_reset_reason::refused:
        return "refused";
    case slep_reset_reason::unknown_stream:
        return "unknown_stream";
    case slep_reset_reason::peer_restarted:
        return "peer_restarted";
    case slep_reset_reason::timed_out:
        return "timed_out";
    case slep_reset_reason::protocol_error:
        return "protocol_error";
    case slep_reset_reason::no_resources:
        return "no_resources";
    }
    return "unknown";
}

size_t slep_header_size(slep_type t)
{
    switch (t) {
    case slep_type::datagram:
        return slep_common_header;
    case slep_type::reliable:
        return slep_common_header + 2;
    case slep_type::open:
        return slep_common_header + 12;
    case slep_type::data:
        return slep_common_header + 8;
    case slep_type::window:
        return slep_common_header + 8;
    case slep_type::reset:
        return slep_common_header + 5;
    case slep_type::hello:
    case slep_type::ack:
        return slep_common_header + 8;
    case slep_type::data_ack:
        return slep_common_header + 16;
    }
    return slep_common_header;
}

bytes encode(const slep_pdu& p)
{
    bytes b;
    b.reserve(slep_header_size(p.type) + p.data.size());
    b.push_back(uint8_t(uint8_t(p.type) << 4 | (p.flags & 0x0F)));
    b.push_back(p.to);
    b.push_back(p.from);
    switch (p.type) {
    case slep_type::datagram:
        break;
    case slep_type::reliable:
        put16(b, p.id);
        break;
    case slep_type::open:
        put32(b, p.stream);
        put32(b, p.incarnation);
        put32(b, p.limit);
        break;
    case slep_type::data:
        put32(b, p.stream);
        put32(b, p.offset);
        break;
    case slep_type::window:
        put32(b, p.stream);
        put32(b, p.limit);
        return b; // no data
    case slep_type::reset:
        put32(b, p.stream);
        b.push_back(p.reason);
        b.insert(b.end(),
                 p.data.begin(),
                 p.data.begin() + long(std::min(p.data.size(), slep_max_reset_text)));
        return b;
    case slep_type::hello:
        put32(b, p.incarnation);
        put32(b, p.seen);
        return b; // no data
    case slep_type::ack:
        put32(b, p.stream);
        put32(b, p.offset);
        return b; // no data
    case slep_type::data_ack:
        put32(b, p.stream);
        put32(b, p.offset);
        put32(b, p.ack_stream);
        put32(b, p.ack_offset);
        break;
    }
    b.insert(b.end(), p.data.begin(), p.data.end());
    return b;
}

dl::decoded<slep_pdu> decode_slep(const uint8_t* d, size_t size)
{
    using result = dl::decoded<slep_pdu>;
    if (size < slep_common_header)
        return result::failure(dl::decode_error::truncated,
                               "SLEP PDU of " + std::to_string(size) +
                                   " bytes (header needs 3)");
    const unsigned type = d[0] >> 4;
    if (type < 1 || type > 9)
        return result::failure(dl::decode_error::unknown_type,
                               "SLEP type " + std::to_string(type));
    slep_pdu p;
    p.type = slep_type(type);
    p.flags = d[0] & 0x0F;
    if (p.flags & ~allowed_flags(p.type))
        return result::failure(dl::decode_error::bad_field,
                               std::string("flags ") + std::to_string(p.flags) + " on " +
                                   to_string(p.type));
    const size_t header = slep_header_size(p.type);
    if (size < header)
        return result::failure(dl::decode_error::truncated,
                               std::string(to_string(p.type)) + " of " +
                                   std::to_string(size) + " bytes (header needs " +
                                   std::to_string(header) + ")");
    p.to = d[1];
    p.from = d[2];
    const uint8_t* f = d + slep_common_header;
    switch (p.type) {
    case slep_type::datagram:
        break;
    case slep_type::reliable:
        p.id = get16(f);
        break;
    case slep_type::open:
        p.stream = get32(f);
        p.incarnation = get32(f + 4);
        p.limit = get32(f + 8);
        break;
    case slep_type::data:
        p.stream = get32(f);
        p.offset = get32(f + 4);
        break;
    case slep_type::window:
        p.stream = get32(f);
        p.limit = get32(f + 4);
        if (size != header)
            return result::failure(dl::decode_error::bad_size,
                                   "WINDOW with trailing bytes");
        break;
    case slep_type::reset:
        p.stream = get32(f);
        p.reason = f[4];
        if (size - header > slep_max_reset_text)
            return result::failure(dl::decode_error::oversized,
                                   "RESET text over 64 bytes");
        break;
    case slep_type::hello:
        p.incarnation = get32(f);
        p.seen = get32(f + 4);
        if (size != header)
            return result::failure(dl::decode_error::bad_size,
                                   "HELLO with trailing bytes");
        break;
    case slep_type::ack:
        p.stream = get32(f);
        p.offset = get32(f + 4);
        if (size != header)
            return result::failure(dl::decode_error::bad_size, "ACK with trailing bytes");
        break;
    case slep_type::data_ack:
        p.stream = get32(f);
        p.offset = get32(f + 4);
        p.ack_stream = get32(f + 8);
        p.ack_offset = get32(f + 12);
        break;
    }
    p.data.assign(d + header, d + size);
    return result::success(std::move(p));
}

} // namespace net
} // namespace hfstack
} // namespace gr
