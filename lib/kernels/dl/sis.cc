/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "sis.h"

#include <cstring>

namespace gr {
namespace hfstack {
namespace dl {

namespace {

constexpr uint32_t sis_address_mask = 0x1FFFFFFF; // 28 address bits + group flag

const char* const type_names[] = {
    "S_UNKNOWN",
    "S_BIND_REQUEST",
    "S_UNBIND_REQUEST",
    "S_BIND_ACCEPTED",
    "S_BIND_REJECTED",
    "S_UNBIND_INDICATION",
    "S_HARD_LINK_ESTABLISH",
    "S_HARD_LINK_TERMINATE",
    "S_HARD_LINK_ESTABLISHED",
    "S_HARD_LINK_REJECTED",
    "S_HARD_LINK_TERMINATED",
    "S_HARD_LINK_INDICATION",
    "S_HARD_LINK_ACCEPT",
    "S_HARD_LINK_REJECT",
    "S_SUBNET_AVAILABILITY",
    "S_DATA_FLOW_ON",
    "S_DATA_FLOW_OFF",
    "S_KEEP_ALIVE",
    "S_MANAGEMENT_MSG_REQUEST",
    "S_MANAGEMENT_MSG_INDICATION",
    "S_UNIDATA_REQUEST",
    "S_UNIDATA_INDICATION",
    "S_UNIDATA_REQUEST_CONFIRM",
    "S_UNIDATA_REQUEST_REJECTED",
    "S_EXPEDITED_UNIDATA_REQUEST",
    "S_EXPEDITED_UNIDATA_INDICATION",
    "S_EXPEDITED_UNIDATA_REQUEST_CONFIRM",
    "S_EXPEDITED_UNIDATA_REQUEST_REJECTED",
};

bool is_expedited(sis_type t) { return t >= sis_type::expedited_unidata_request; }

// Body bytes before any variable part (management body, U_PDU, block lists).
size_t fixed_body_size(sis_type t)
{
    switch (t) {
    case sis_type::unbind_request:
    case sis_type::data_flow_on:
    case sis_type::data_flow_off:
    case sis_type::keep_alive:
        return 0;
    case sis_type::bind_rejected:
    case sis_type::unbind_indication:
    case sis_type::management_msg_request:
    case sis_type::management_msg_indication:
        return 1;
    case sis_type::subnet_availability:
        return 2;
    case sis_type::bind_request:
    case sis_type::bind_accepted:
        return 3;
    case sis_type::hard_link_terminate:
        return 4;
    case sis_type::hard_link_establish:
    case sis_type::hard_link_accept:
        return 5;
    case sis_type::hard_link_established:
    case sis_type::hard_link_rejected:
    case sis_type::hard_link_terminated:
    case sis_type::hard_link_indication:
    case sis_type::hard_link_reject:
        return 6;
    case sis_type::unidata_request_confirm:
    case sis_type::unidata_request_rejected:
    case sis_type::expedited_unidata_request_confirm:
    case sis_type::expedited_unidata_request_rejected:
        return 7; // SAP byte, address, size
    case sis_type::unidata_request:
    case sis_type::expedited_unidata_request:
        return 11; // SAP byte, address, service type, 3 bytes retx|TTL, size
    case sis_type::unidata_indication:
    case sis_type::expedited_unidata_indication:
        return 12; // SAP byte, address, tx mode|SAP, address, size
    }
    return 0;
}

bool has_variable_part(sis_type t)
{
    return t == sis_type::management_msg_request ||
           t == sis_type::management_msg_indication || t >= sis_type::unidata_request;
}

// ---- encoding -------------------------------------------------------------------

uint8_t nibbles(const char* high_name, unsigned high, const char* low_name, unsigned low)
{
    require_bits(high_name, high, 4);
    require_bits(low_name, low, 4);
    return uint8_t(high << 4 | low);
}

void put_address(bytes& out,
                 const sis_address& a,
                 const char* address_name,
                 const char* size_name)
{
    require_bits(address_name, a.address, 29);
    require_bits(size_name, a.size_nibbles, 3);
    put_u32_be(out, uint32_t(a.size_nibbles) << 29 | a.address);
}

// Byte A of the service type; min_retransmissions goes wherever the primitive puts it.
uint8_t service_byte(const sis_service_type& s)
{
    const unsigned tx = unsigned(s.tx_mode), dc = unsigned(s.delivery_confirmation),
                   order = unsigned(s.delivery_order);
    require_bits("service_type.tx_mode", tx, 4);
    require_bits("service_type.delivery_confirmation", dc, 2);
    require_bits("service_type.delivery_order", order, 1);
    return uint8_t(tx << 4 | dc << 2 | order << 1 | (s.extended ? 1 : 0));
}

uint8_t link_byte(const sis_primitive& p)
{
    require_bits("link_type", unsigned(p.link_type), 2);
    require_bits("link_priority", p.link_priority, 2);
    require_bits("remote_sap", p.remote_sap, 4);
    return uint8_t(unsigned(p.link_type) << 6 | p.link_priority << 4 | p.remote_sap);
}

void put_sized_payload(bytes& out, const bytes& payload)
{
    require_bits("payload size", payload.size(), 16);
    put_u16_be(out, uint16_t(payload.size()));
    out.insert(out.end(), payload.begin(), payload.end());
}

void put_block_list(bytes& out,
                    const std::vector<sis_block_range>& list,
                    const char* name)
{
    require_bits(name, list.size(), 16);
    put_u16_be(out, uint16_t(list.size()));
    for (const auto& b : list) {
        put_u16_be(out, b.offset);
        put_u16_be(out, b.size);
    }
}

void encode_body(const sis_primitive& p, bytes& out)
{
    switch (p.type) {
    case sis_type::unbind_request:
    case sis_type::data_flow_on:
    case sis_type::data_flow_off:
    case sis_type::keep_alive:
        return;
    case sis_type::bind_request:
        out.push_back(nibbles("sap", p.sap, "rank", p.rank));
        out.push_back(service_byte(p.service_type));
        out.push_back(nibbles("service_type.min_retransmissions",
                              p.service_type.min_retransmissions,
                              "",
                              0));
        return;
    case sis_type::bind_accepted:
        out.push_back(nibbles("sap", p.sap, "", 0));
        put_u16_be(out, p.mtu);
        return;
    case sis_type::bind_rejected:
    case sis_type::unbind_indication:
        out.push_back(p.reason);
        return;
    case sis_type::hard_link_establish:
    case sis_type::hard_link_accept:
        out.push_back(link_byte(p));
        put_address(out, p.remote, "remote.address", "remote.size_nibbles");
        return;
    case sis_type::hard_link_terminate:
        put_address(out, p.remote, "remote.address", "remote.size_nibbles");
        return;
    case sis_type::hard_link_established:
    case sis_type::hard_link_indication:
        out.push_back(p.remote_status);
        out.push_back(link_byte(p));
        put_address(out, p.remote, "remote.address", "remote.size_nibbles");
        return;
    case sis_type::hard_link_rejected:
    case sis_type::hard_link_terminated:
    case sis_type::hard_link_reject:
        out.push_back(p.reason);
        out.push_back(link_byte(p));
        put_address(out, p.remote, "remote.address", "remote.size_nibbles");
        return;
    case sis_type::subnet_availability:
        out.push_back(uint8_t(p.subnet_status));
        out.push_back(p.reason);
        return;
    case sis_type::management_msg_request:
    case sis_type::management_msg_indication:
        out.push_back(p.management_type);
        out.insert(out.end(), p.payload.begin(), p.payload.end());
        return;
    case sis_type::unidata_request:
    case sis_type::expedited_unidata_request: {
        // Expedited primitives have no priority: the nibble is unused and written 0.
        out.push_back(nibbles("priority",
                              is_expedited(p.type) ? 0 : p.priority,
                              "destination_sap",
                              p.destination_sap));
        put_address(
            out, p.destination, "destination.address", "destination.size_nibbles");
        out.push_back(service_byte(p.service_type));
        require_bits(
            "service_type.min_retransmissions", p.service_type.min_retransmissions, 4);
        require_bits("ttl", p.ttl, 20);
        const uint32_t retx_ttl =
            uint32_t(p.service_type.min_retransmissions) << 20 | p.ttl;
        out.push_back(uint8_t(retx_ttl >> 16));
        out.push_back(uint8_t(retx_ttl >> 8));
        out.push_back(uint8_t(retx_ttl));
        put_sized_payload(out, p.payload);
        return;
    }
    case sis_type::unidata_indication:
    case sis_type::expedited_unidata_indication: {
        out.push_back(nibbles("priority",
                              is_expedited(p.type) ? 0 : p.priority,
                              "destination_sap",
                              p.destination_sap));
        put_address(
            out, p.destination, "destination.address", "destination.size_nibbles");
        const unsigned tx = unsigned(p.service_type.tx_mode);
        out.push_back(nibbles("service_type.tx_mode", tx, "source_sap", p.source_sap));
        put_address(out, p.source, "source.address", "source.size_nibbles");
        require_bits("payload size", p.payload.size(), 16);
        put_u16_be(out, uint16_t(p.payload.size()));
        if (tx == unsigned(sis_tx_mode::non_arq_with_errors)) {
            put_block_list(out, p.errored_blocks, "errored_blocks count");
            put_block_list(out, p.non_received_blocks, "non_received_blocks count");
        } else if (!p.errored_blocks.empty() || !p.non_received_blocks.empty()) {
            // They would be silently lost: only tx mode 3 carries block lists.
            throw encode_error(
                "errored_blocks / non_received_blocks need service_type.tx_mode"
                " = 3 (non-ARQ with errors), not " +
                std::to_string(tx));
        }
        out.insert(out.end(), p.payload.begin(), p.payload.end());
        return;
    }
    case sis_type::unidata_request_confirm:
    case sis_type::expedited_unidata_request_confirm:
    case sis_type::unidata_request_rejected:
    case sis_type::expedited_unidata_request_rejected: {
        const bool rejected = p.type == sis_type::unidata_request_rejected ||
                              p.type == sis_type::expedited_unidata_request_rejected;
        out.push_back(nibbles(
            "reason", rejected ? p.reason : 0, "destination_sap", p.destination_sap));
        put_address(
            out, p.destination, "destination.address", "destination.size_nibbles");
        put_sized_payload(out, p.payload);
        return;
    }
    }
}

// ---- decoding -------------------------------------------------------------------

// Sequential access to a body whose length the caller has already checked.
struct body_reader {
    const uint8_t* p;
    size_t size;
    size_t pos = 0;

    size_t left() const { return size - pos; }
    uint8_t u8() { return p[pos++]; }
    uint16_t u16()
    {
        const uint16_t v = get_u16_be(p + pos);
        pos += 2;
        return v;
    }
    sis_address address()
    {
        sis_address a;
        a.size_nibbles = uint8_t(p[pos] >> 5);
        a.address = get_u32_be(p + pos) & sis_address_mask;
        pos += 4;
        return a;
    }
    void link(sis_primitive& v)
    {
        const uint8_t b = u8();
        v.link_type = hard_link_type(b >> 6);
        v.link_priority = uint8_t((b >> 4) & 3);
        v.remote_sap = uint8_t(b & 0xF);
    }
    sis_service_type service()
    {
        const uint8_t b = u8();
        sis_service_type s;
        s.tx_mode = sis_tx_mode(b >> 4);
        s.delivery_confirmation = sis_delivery_confirmation((b >> 2) & 3);
        s.delivery_order = sis_delivery_order((b >> 1) & 1);
        s.extended = b & 1;
        return s;
    }
};

decoded<sis_primitive> fail(decode_error e, sis_type t, const std::string& why)
{
    return decoded<sis_primitive>::failure(e, std::string(to_string(t)) + ": " + why);
}

// Reads `count x (offset, size)` into list; false if the body ends first.
bool read_block_list(body_reader& r, std::vector<sis_block_range>& list)
{
    if (r.left() < 2)
        return false;
    const size_t count = r.u16();
    if (r.left() < 4 * count)
        return false;
    list.resize(count);
    for (auto& b : list) {
        b.offset = r.u16();
        b.size = r.u16();
    }
    return true;
}

} // namespace

const char* to_string(sis_type t)
{
    return is_known_sis_type(unsigned(t)) ? type_names[unsigned(t)] : type_names[0];
}

bool is_known_sis_type(unsigned t) { return t >= 1 && t <= 27; }

bool operator==(const sis_address& a, const sis_address& b)
{
    return a.address == b.address && a.size_nibbles == b.size_nibbles;
}

bool operator==(const sis_service_type& a, const sis_service_type& b)
{
    return a.tx_mode == b.tx_mode && a.delivery_confirmation == b.delivery_confirmation &&
           a.delivery_order == b.delivery_order && a.extended == b.extended &&
           a.min_retransmissions == b.min_retransmissions;
}

bool operator==(const sis_block_range& a, const sis_block_range& b)
{
    return a.offset == b.offset && a.size == b.size;
}

bool operator==(const sis_primitive& a, const sis_primitive& b)
{
    return a.type == b.type && a.sap == b.sap && a.rank == b.rank && a.mtu == b.mtu &&
           a.service_type == b.service_type && a.reason == b.reason &&
           a.subnet_status == b.subnet_status && a.remote_status == b.remote_status &&
           a.link_type == b.link_type && a.link_priority == b.link_priority &&
           a.remote_sap == b.remote_sap && a.remote == b.remote &&
           a.priority == b.priority && a.destination_sap == b.destination_sap &&
           a.destination == b.destination && a.source_sap == b.source_sap &&
           a.source == b.source && a.ttl == b.ttl &&
           a.management_type == b.management_type &&
           a.errored_blocks == b.errored_blocks &&
           a.non_received_blocks == b.non_received_blocks && a.payload == b.payload &&
           a.vendor_padding == b.vendor_padding;
}

std::string address_to_string(uint32_t address)
{
    return std::to_string(address >> 24) + "." + std::to_string((address >> 16) & 0xFF) +
           "." + std::to_string((address >> 8) & 0xFF) + "." +
           std::to_string(address & 0xFF);
}

decoded<uint32_t> parse_address(const std::string& text)
{
    const auto bad = [&](const char* why) {
        return decoded<uint32_t>::failure(decode_error::bad_field,
                                          "address \"" + text + "\": " + why);
    };
    uint32_t value = 0;
    size_t i = 0;
    for (int part = 0; part < 4; ++part) {
        if (part > 0) {
            if (i >= text.size() || text[i] != '.')
                return bad("expected a.b.c.d");
            ++i;
        }
        const size_t start = i;
        unsigned n = 0;
        while (i < text.size() && i - start < 3 && text[i] >= '0' && text[i] <= '9')
            n = n * 10 + unsigned(text[i++] - '0');
        if (i == start)
            return bad("expected a.b.c.d");
        if (n > 255)
            return bad("a part is above 255");
        value = value << 8 | n;
    }
    if (i != text.size())
        return bad("expected a.b.c.d");
    if (value > sis_address_mask)
        return bad("above 31.255.255.255");
    return decoded<uint32_t>::success(value);
}

bytes encode(const sis_primitive& p)
{
    if (!is_known_sis_type(unsigned(p.type)))
        throw encode_error("type = " + std::to_string(unsigned(p.type)) +
                           " is not an S_primitive type (1..27)");
    bytes out{ sync_byte_0, sync_byte_1, 0x00, 0x00, 0x00, uint8_t(p.type) };
    out.reserve(sis_header_size + 1 + fixed_body_size(p.type) + 8 + p.payload.size());
    encode_body(p, out);
    const size_t size = out.size() - sis_header_size;
    if (size > sis_max_size_field)
        throw encode_error(std::string(to_string(p.type)) +
                           ": type + body = " + std::to_string(size) +
                           " bytes overflows the 16-bit size field");
    out[3] = uint8_t(size >> 8);
    out[4] = uint8_t(size);
    return out;
}

decoded<sis_primitive> decode_sis(const uint8_t* frame, size_t size)
{
    using result = decoded<sis_primitive>;
    if ((size >= 1 && frame[0] != sync_byte_0) || (size >= 2 && frame[1] != sync_byte_1))
        return result::failure(decode_error::bad_sync,
                               "SIS frame does not start with 90 EB");
    if (size < sis_header_size + 1)
        return result::failure(decode_error::truncated,
                               "SIS frame of " + std::to_string(size) +
                                   " bytes, header and type need 6");
    if (frame[2] != 0)
        return result::failure(decode_error::bad_version,
                               "SIS version byte " + std::to_string(frame[2]) +
                                   ", expected 0");
    const size_t declared = get_u16_be(frame + 3), present = size - sis_header_size;
    if (declared < present || declared == 0)
        return result::failure(decode_error::bad_size,
                               "SIS size field " + std::to_string(declared) + " but " +
                                   std::to_string(present) + " bytes follow");
    if (declared > present)
        return result::failure(decode_error::truncated,
                               "SIS size field " + std::to_string(declared) +
                                   " but only " + std::to_string(present) +
                                   " bytes follow");
    if (!is_known_sis_type(frame[5]))
        return result::failure(decode_error::unknown_type,
                               "SIS type " + std::to_string(frame[5]) + " is not 1..27");
    return decode_sis_body(sis_type(frame[5]), frame + 6, declared - 1);
}

decoded<sis_primitive> decode_sis_body(sis_type type, const uint8_t* body, size_t size)
{
    if (!is_known_sis_type(unsigned(type)))
        return decoded<sis_primitive>::failure(
            decode_error::unknown_type,
            "SIS type " + std::to_string(unsigned(type)) + " is not 1..27");
    const size_t fixed = fixed_body_size(type);
    if (size < fixed)
        return fail(decode_error::truncated,
                    type,
                    "body is " + std::to_string(size) + " bytes, needs " +
                        std::to_string(fixed));
    if (size > fixed && !has_variable_part(type))
        return fail(decode_error::bad_size,
                    type,
                    std::to_string(size - fixed) + " trailing bytes after the body");

    sis_primitive v;
    v.type = type;
    body_reader r{ body, size };
    switch (type) {
    case sis_type::unbind_request:
    case sis_type::data_flow_on:
    case sis_type::data_flow_off:
    case sis_type::keep_alive:
        break;
    case sis_type::bind_request: {
        const uint8_t b = r.u8();
        v.sap = uint8_t(b >> 4);
        v.rank = uint8_t(b & 0xF);
        v.service_type = r.service();
        v.service_type.min_retransmissions = uint8_t(r.u8() >> 4); // low nibble unused
        break;
    }
    case sis_type::bind_accepted:
        v.sap = uint8_t(r.u8() >> 4);
        v.mtu = r.u16();
        break;
    case sis_type::bind_rejected:
    case sis_type::unbind_indication:
        v.reason = r.u8();
        break;
    case sis_type::hard_link_establish:
    case sis_type::hard_link_accept:
        r.link(v);
        v.remote = r.address();
        break;
    case sis_type::hard_link_terminate:
        v.remote = r.address();
        break;
    case sis_type::hard_link_established:
    case sis_type::hard_link_indication:
        v.remote_status = r.u8();
        r.link(v);
        v.remote = r.address();
        break;
    case sis_type::hard_link_rejected:
    case sis_type::hard_link_terminated:
    case sis_type::hard_link_reject:
        v.reason = r.u8();
        r.link(v);
        v.remote = r.address();
        break;
    case sis_type::subnet_availability:
        v.subnet_status = sis_subnet_status(r.u8());
        v.reason = r.u8();
        break;
    case sis_type::management_msg_request:
    case sis_type::management_msg_indication:
        v.management_type = r.u8();
        v.payload.assign(body + r.pos, body + size);
        break;
    case sis_type::unidata_request:
    case sis_type::expedited_unidata_request:
    case sis_type::unidata_indication:
    case sis_type::expedited_unidata_indication:
    case sis_type::unidata_request_confirm:
    case sis_type::expedited_unidata_request_confirm:
    case sis_type::unidata_request_rejected:
    case sis_type::expedited_unidata_request_rejected: {
        const bool request = type == sis_type::unidata_request ||
                             type == sis_type::expedited_unidata_request;
        const bool indication = type == sis_type::unidata_indication ||
                                type == sis_type::expedited_unidata_indication;
        const bool rejected = type == sis_type::unidata_request_rejected ||
                              type == sis_type::expedited_unidata_request_rejected;
        const uint8_t b = r.u8();
        if ((request || indication) && !is_expedited(type))
            v.priority = uint8_t(b >> 4);
        if (rejected)
            v.reason = uint8_t(b >> 4);
        v.destination_sap = uint8_t(b & 0xF);
        v.destination = r.address();

        bool tx3 = false;
        if (request) {
            v.service_type = r.service();
            const uint8_t retx_ttl_high = r.u8();
            v.service_type.min_retransmissions = uint8_t(retx_ttl_high >> 4);
            v.ttl = uint32_t(retx_ttl_high & 0xF) << 16 | r.u16();
        } else if (indication) {
            const uint8_t t = r.u8();
            v.service_type.tx_mode = sis_tx_mode(t >> 4);
            v.source_sap = uint8_t(t & 0xF);
            v.source = r.address();
            tx3 = v.service_type.tx_mode == sis_tx_mode::non_arq_with_errors;
        }
        const size_t updu_size = r.u16();
        // Rockwell Collins <= v2.1 put 4 bytes after the size; detected as Wireshark
        // does, except in tx mode 3: Wireshark tests there too and so misreads a standard
        // frame whose two block lists are empty (4 bytes of zero counts).
        if (indication && !tx3 && r.left() == updu_size + 4) {
            r.pos += 4;
            v.vendor_padding = true;
        }
        if (tx3 && !read_block_list(r, v.errored_blocks))
            return fail(decode_error::truncated, type, "errored block list cut short");
        if (tx3 && !read_block_list(r, v.non_received_blocks))
            return fail(
                decode_error::truncated, type, "non-received block list cut short");
        if (r.left() != updu_size)
            return fail(decode_error::bad_size,
                        type,
                        "U_PDU size " + std::to_string(updu_size) + " but " +
                            std::to_string(r.left()) + " bytes follow");
        v.payload.assign(body + r.pos, body + size);
        break;
    }
    }
    return decoded<sis_primitive>::success(std::move(v));
}

// ---- stream reassembly ------------------------------------------------------------
//
// Edition 1 peers omit the version byte, so after 90 EB a frame has two readings:
//   Ed3: 90 EB | 00 | size | type ...      Ed1: 90 EB | size | type ...
// A reading is plausible when its size is >= 1 and its type byte is 1..27 (Ed3 also
// needs the version byte 0); "too big" when plausible but larger than max_frame.
// Both readings are plausible only in rare cases (an Ed1 size below 256 whose first body
// byte is 1..27; an Ed3 size of 256 or more whose low byte is 1..27). Then the edition
// of the last good frame on this stream is preferred (Ed3 on a fresh stream). We wait
// until the preferred frame is complete (or, once a frame of the preferred edition has
// been decoded, take an oversized preferred frame as oversized, so that the bytes it
// declares are skipped, never re-read); the other reading then wins only if
//   - the buffered bytes refute the preferred one and confirm the other (90 EB right
//     after the other frame, none after the preferred one), or
//   - the preferred frame does not decode and the other, already complete, does.
// A clean single-edition stream therefore decodes the same however it is chunked (a
// payload holding 90 EB cannot mislead it). The cost: a fresh stream whose first frame
// is an ambiguous Ed1 frame is decided only once the bogus Ed3 reading is complete
// (at most max_frame bytes later). Streams mixing editions are not supported.

namespace {

enum class plausibility { no, unknown, too_big, yes };

struct reading {
    plausibility state = plausibility::no;
    size_t header = 0; // sync + [version] + size
    size_t total = 0;  // whole frame
};

reading read_as(const uint8_t* f, size_t n, size_t header, size_t max_frame)
{
    reading r;
    r.header = header;
    if (header == sis_header_size && n >= 3 && f[2] != 0)
        return r;
    if (n < header + 1) { // size and type byte not all here yet
        r.state = plausibility::unknown;
        if (n >= header && get_u16_be(f + header - 2) == 0)
            r.state = plausibility::no;
        return r;
    }
    const size_t size = get_u16_be(f + header - 2);
    if (size == 0 || !is_known_sis_type(f[header]))
        return r;
    r.total = header + size;
    r.state = r.total > max_frame ? plausibility::too_big : plausibility::yes;
    return r;
}

enum class verdict { wait, preferred, other, oversized, false_sync };

// edition_known: a frame of the preferred edition has been decoded on this stream; an
// oversized frame of that edition is then taken as such, whatever the other reading.
verdict decide(const reading& pref,
               const reading& other,
               const uint8_t* f,
               size_t n,
               bool edition_known)
{
    const auto buffered = [&](size_t at) { return n >= at + 2; };
    const auto sync_at = [&](size_t at) {
        return buffered(at) && f[at] == sync_byte_0 && f[at + 1] == sync_byte_1;
    };
    switch (pref.state) {
    case plausibility::unknown:
        return verdict::wait;
    case plausibility::yes:
        if (n < pref.total)
            return verdict::wait;
        if (other.state == plausibility::yes && buffered(pref.total) &&
            !sync_at(pref.total) && sync_at(other.total))
            return verdict::other;
        return verdict::preferred;
    case plausibility::too_big:
        if (edition_known)
            return verdict::oversized;
        break;
    case plausibility::no:
        break;
    }
    switch (other.state) {
    case plausibility::unknown:
        return verdict::wait;
    case plausibility::yes:
        if (n < other.total)
            return verdict::wait;
        // An oversized preferred frame beats a small other one the stream contradicts.
        if (pref.state == plausibility::too_big && buffered(other.total) &&
            !sync_at(other.total))
            return verdict::oversized;
        return verdict::other;
    case plausibility::too_big:
        return verdict::oversized;
    case plausibility::no:
        break;
    }
    return pref.state == plausibility::too_big ? verdict::oversized : verdict::false_sync;
}

decoded<sis_primitive> decode_reading(const uint8_t* f, const reading& r)
{
    return decode_sis_body(
        sis_type(f[r.header]), f + r.header + 1, r.total - r.header - 1);
}

} // namespace

sis_reassembler::sis_reassembler(size_t max_frame)
    : d_max_frame(max_frame < sis_header_size + 1 ? sis_header_size + 1 : max_frame)
{
}

void sis_reassembler::reset()
{
    d_pending.clear();
    d_skip = 0;
    d_answers.clear();
    d_prefer_ed1 = false;
    d_edition_known = false;
}

std::vector<sis_primitive> sis_reassembler::take_answers()
{
    std::vector<sis_primitive> out;
    out.swap(d_answers);
    d_counters.answers += out.size();
    return out;
}

size_t sis_reassembler::skip(size_t available)
{
    const size_t n = std::min(d_skip, available);
    d_skip -= n;
    return n;
}

void sis_reassembler::push(const uint8_t* data,
                           size_t size,
                           std::vector<sis_primitive>& out)
{
    d_counters.bytes_in += size;
    const size_t skipped = skip(size); // the rest of an oversized frame
    data += skipped;
    size -= skipped;
    if (size == 0)
        return;
    if (d_pending.empty()) { // common case: parse the chunk in place, keep only its tail
        const size_t used = parse(data, size, out);
        d_pending.assign(data + used, data + size);
        return;
    }
    d_pending.insert(d_pending.end(), data, data + size);
    const size_t used = parse(d_pending.data(), d_pending.size(), out);
    d_pending.erase(d_pending.begin(), d_pending.begin() + std::ptrdiff_t(used));
}

// `body`: the fixed fields of an (EXPEDITED_)UNIDATA_REQUEST too large to take.
void sis_reassembler::answer_oversized_request(sis_type type, const uint8_t* body)
{
    uint8_t fields[11];
    std::memcpy(fields, body, sizeof fields);
    fields[9] = fields[10] = 0; // the U_PDU itself is skipped, never read
    const auto request = decode_sis_body(type, fields, sizeof fields);
    if (!request.ok())
        return;
    sis_primitive answer;
    answer.type = type == sis_type::unidata_request
                      ? sis_type::unidata_request_rejected
                      : sis_type::expedited_unidata_request_rejected;
    answer.reason = uint8_t(sis_unidata_rejected_reason::updu_larger_than_mtu);
    answer.destination_sap = request.value.destination_sap;
    answer.destination = request.value.destination;
    d_answers.push_back(std::move(answer));
    ++d_counters.oversized_requests;
}

size_t
sis_reassembler::parse(const uint8_t* p, size_t size, std::vector<sis_primitive>& out)
{
    size_t pos = 0;
    while (pos < size) {
        const uint8_t* f = p + pos;
        const size_t n = size - pos;
        if (f[0] != sync_byte_0) {
            const void* hit = std::memchr(f, sync_byte_0, n);
            const size_t skip = hit ? size_t(static_cast<const uint8_t*>(hit) - f) : n;
            d_counters.garbage_bytes += skip;
            pos += skip;
            continue;
        }
        if (n < 2)
            break;
        if (f[1] != sync_byte_1) {
            ++d_counters.garbage_bytes;
            ++pos;
            continue;
        }

        const reading ed3 = read_as(f, n, sis_header_size, d_max_frame);
        const reading ed1 = read_as(f, n, sis_ed1_header_size, d_max_frame);
        const reading& pref = d_prefer_ed1 ? ed1 : ed3;
        const reading& other = d_prefer_ed1 ? ed3 : ed1;
        const verdict v = decide(pref, other, f, n, d_edition_known);
        if (v == verdict::wait)
            break;
        if (v == verdict::false_sync) { // advance one byte: a real sync may overlap
            ++d_counters.garbage_bytes;
            ++pos;
            continue;
        }
        if (v == verdict::oversized) { // never buffer it: skip it by its declared size
            const reading& big = pref.state == plausibility::too_big ? pref : other;
            const sis_type type = sis_type(f[big.header]);
            const bool request = type == sis_type::unidata_request ||
                                 type == sis_type::expedited_unidata_request;
            const size_t fields = big.header + 1 + fixed_body_size(type);
            if (request && n < fields)
                break; // wait for the fields its rejection names
            ++d_counters.oversized;
            d_last_error = "SIS frame of " + std::to_string(big.total) +
                           " bytes exceeds the maximum of " + std::to_string(d_max_frame);
            if (request)
                answer_oversized_request(type, f + big.header + 1);
            if (n >= big.total) {
                pos += big.total;
                continue;
            }
            d_skip = big.total - n;
            pos = size;
            break;
        }

        const reading* r = v == verdict::preferred ? &pref : &other;
        auto d = decode_reading(f, *r);
        // A preferred reading that does not decode yields to a complete other one that
        // does.
        if (!d.ok() && r == &pref && other.state == plausibility::yes &&
            n >= other.total) {
            auto d_other = decode_reading(f, other);
            if (d_other.ok()) {
                r = &other;
                d = std::move(d_other);
            }
        }
        if (d.ok()) {
            const bool ed1_frame = r->header == sis_ed1_header_size;
            d_prefer_ed1 = ed1_frame;
            d_edition_known = true;
            ++d_counters.primitives;
            d_counters.edition1_frames += ed1_frame ? 1 : 0;
            out.push_back(std::move(d.value));
        } else {
            ++d_counters.decode_errors;
            d_last_error = std::move(d.reason);
            if (sis_type(f[r->header]) == sis_type::bind_request) {
                sis_primitive answer;
                answer.type = sis_type::bind_rejected;
                answer.reason = uint8_t(sis_bind_rejected_reason::unknown);
                d_answers.push_back(std::move(answer));
            }
        }
        pos += r->total;
    }
    return pos;
}

} // namespace dl
} // namespace hfstack
} // namespace gr
