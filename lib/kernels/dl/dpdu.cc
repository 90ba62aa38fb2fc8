/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "crc.h"
#include "dpdu.h"

#include <tuple>

namespace gr {
namespace hfstack {
namespace dl {

const char* to_string(dpdu_type t)
{
    switch (t) {
    case dpdu_type::data_only:
        return "DATA-ONLY";
    case dpdu_type::ack_only:
        return "ACK-ONLY";
    case dpdu_type::data_ack:
        return "DATA-ACK";
    case dpdu_type::reset_win_resync:
        return "RESET/WIN-RESYNC";
    case dpdu_type::expedited_data_only:
        return "EXPEDITED DATA-ONLY";
    case dpdu_type::expedited_ack_only:
        return "EXPEDITED ACK-ONLY";
    case dpdu_type::management:
        return "MANAGEMENT";
    case dpdu_type::non_arq_data:
        return "NON-ARQ DATA";
    case dpdu_type::expedited_non_arq_data:
        return "EXPEDITED NON-ARQ DATA";
    case dpdu_type::warning:
        return "WARNING";
    }
    return "UNKNOWN";
}

bool is_known_dpdu_type(unsigned t) { return t <= 8 || t == 15; }

bool carries_segment(dpdu_type t)
{
    return t == dpdu_type::data_only || t == dpdu_type::data_ack ||
           t == dpdu_type::expedited_data_only || t == dpdu_type::non_arq_data ||
           t == dpdu_type::expedited_non_arq_data;
}

bool carries_fsn(dpdu_type t) { return unsigned(t) <= 5; }

const char* to_string(eow_type t)
{
    switch (t) {
    case eow_type::none:
        return "none";
    case eow_type::drc_request:
        return "DRC request";
    case eow_type::drc_response:
        return "DRC response";
    case eow_type::unrecognized_type:
        return "unrecognized type";
    case eow_type::capability:
        return "capability";
    case eow_type::alm_request:
        return "ALM request";
    case eow_type::alm_response:
        return "ALM response";
    case eow_type::hdr_drc_request:
        return "HDR DRC request";
    case eow_type::token:
        return "token";
    }
    return "user-defined";
}

uint8_t eow_content(const eow_rate_request& r)
{
    require_bits("eow data_rate", r.data_rate, 4);
    require_bits("eow interleaving", r.interleaving, 2);
    require_bits("eow other", r.other, 2);
    return uint8_t(r.data_rate << 4 | r.interleaving << 2 | r.other);
}
uint8_t eow_content(const eow_rate_response& r)
{
    require_bits("eow response", r.response, 3);
    require_bits("eow reason", r.reason, 5);
    return uint8_t(r.response << 5 | r.reason);
}
uint8_t eow_content(const eow_capability& c)
{
    return uint8_t(c.adaptive << 7 | c.stanag_4529 << 6 | c.mil_std_188_110a << 5 |
                   c.extended_data_rate << 4 | c.full_duplex << 3 |
                   c.split_frequency << 2 | c.non_arcs_ale << 1 | c.arcs);
}
uint8_t eow_content(const eow_hdr_rate_request& r)
{
    require_bits("eow waveform", r.waveform, 5);
    require_bits("eow channels", r.channels, 3);
    return uint8_t(r.waveform << 3 | r.channels);
}
eow_rate_request eow_as_rate_request(uint8_t c)
{
    return { uint8_t(c >> 4), uint8_t((c >> 2) & 3), uint8_t(c & 3) };
}
eow_rate_response eow_as_rate_response(uint8_t c)
{
    return { uint8_t(c >> 5), uint8_t(c & 0x1F) };
}
eow_capability eow_as_capability(uint8_t c)
{
    eow_capability r;
    r.adaptive = c & 0x80;
    r.stanag_4529 = c & 0x40;
    r.mil_std_188_110a = c & 0x20;
    r.extended_data_rate = c & 0x10;
    r.full_duplex = c & 0x08;
    r.split_frequency = c & 0x04;
    r.non_arcs_ale = c & 0x02;
    r.arcs = c & 0x01;
    return r;
}
eow_hdr_rate_request eow_as_hdr_rate_request(uint8_t c)
{
    return { uint8_t(c >> 3), uint8_t(c & 7) };
}

namespace {

bool is_non_arq_type(dpdu_type t)
{
    return t == dpdu_type::non_arq_data || t == dpdu_type::expedited_non_arq_data;
}

// Bytes of the type-specific header (between the address and the CRC-16).
size_t type_specific_size(const dpdu& d)
{
    switch (d.type) {
    case dpdu_type::data_only:
    case dpdu_type::expedited_data_only:
    case dpdu_type::reset_win_resync:
        return 3 + d.long_fsn;
    case dpdu_type::ack_only:
    case dpdu_type::expedited_ack_only:
        return 1 + d.long_fsn + d.selective_acks.size();
    case dpdu_type::data_ack:
        return 4 + 2 * d.long_fsn + d.selective_acks.size();
    case dpdu_type::management:
        return 2 + d.extended_message.size();
    case dpdu_type::non_arq_data:
    case dpdu_type::expedited_non_arq_data:
        return 9;
    case dpdu_type::warning:
        return 1;
    }
    return 0;
}

// Header size field values the standard allows for a type, given the h on the wire.
bool header_size_plausible(unsigned type, unsigned h, bool lfsn)
{
    const unsigned acks = lfsn ? max_selective_acks_lfsn : max_selective_acks;
    switch (type) {
    case 0:
    case 3:
    case 4:
        return h == 9u + lfsn;
    case 1:
    case 5:
        return h >= 7u + lfsn && h <= 7u + lfsn + acks;
    case 2:
        return h >= 10u + 2 * lfsn && h <= 10u + 2 * lfsn + acks;
    case 6:
        return h >= 8;
    case 7:
    case 8:
        return h == 15;
    case 15:
        return h == 7;
    }
    return false;
}

bool is_fsn_type(unsigned type) { return type <= 5; }

unsigned nibbles_needed(uint32_t a)
{
    unsigned n = 1;
    while (n < 8 && (a >> (4 * n)) != 0)
        ++n;
    return n;
}

} // namespace

uint8_t address_size_for(uint32_t destination, uint32_t source)
{
    unsigned n = std::max(nibbles_needed(destination & node_address_mask),
                          nibbles_needed(source & node_address_mask));
    return uint8_t(std::min(7u, n));
}

size_t header_size_field(const dpdu& d) { return 4 + type_specific_size(d) + 2; }

size_t encoded_size(const dpdu& d)
{
    uint8_t m =
        d.address_size ? d.address_size : address_size_for(d.destination, d.source);
    size_t n = 2 + m + header_size_field(d);
    if (carries_segment(d.type))
        n += d.segment.size() + 4;
    return n;
}

void encode_into(const dpdu& d, bytes& out)
{
    if (!is_known_dpdu_type(unsigned(d.type)))
        throw encode_error("D_PDU type " + std::to_string(unsigned(d.type)) +
                           " is not defined");
    require_bits("eow type", unsigned(d.eow), 4);
    const size_t ack_limit = d.long_fsn ? max_selective_acks_lfsn : max_selective_acks;
    if (d.selective_acks.size() > ack_limit)
        throw encode_error("selective_acks has " +
                           std::to_string(d.selective_acks.size()) + " bytes, at most " +
                           std::to_string(ack_limit) + " fit");
    if (!d.long_fsn && carries_fsn(d.type)) {
        require_bits("tx_sequence", d.tx_sequence, 8);
        require_bits("rx_lwe", d.rx_lwe, 8);
        require_bits("new_rx_lwe", d.new_rx_lwe, 8);
    }
    if (carries_segment(d.type) && d.segment.size() > max_segment_size)
        throw encode_error("segment has " + std::to_string(d.segment.size()) +
                           " bytes, at most 1023 fit");
    const bool group = d.destination & group_address_flag;
    if (group && !is_non_arq_type(d.type))
        throw encode_error(std::string("group destination in a ") + to_string(d.type) +
                           " D_PDU; only NON-ARQ types address groups");
    require_bits("destination", d.destination, 29);
    require_bits("source", d.source, 28);
    const uint32_t dest = d.destination & node_address_mask;
    const uint8_t fit = address_size_for(dest, d.source);
    const uint8_t m = d.address_size ? d.address_size : fit;
    if (m > 7)
        throw encode_error("address_size " + std::to_string(m) + " exceeds 7 bytes");
    if (m < fit)
        throw encode_error("address_size " + std::to_string(m) +
                           " bytes cannot hold the addresses (need " +
                           std::to_string(fit) + ")");
    const size_t h = header_size_field(d);
    if (h > max_header_field)
        throw encode_error("header size " + std::to_string(h) +
                           " exceeds the 5-bit field (extended_message too long)");

    const size_t start = out.size();
    out.reserve(start + encoded_size(d));
    out.push_back(sync_byte_0);
    out.push_back(sync_byte_1);
    out.push_back(uint8_t(unsigned(d.type) << 4 | unsigned(d.eow)));
    out.push_back(d.eow_content);
    out.push_back(d.eot);
    out.push_back(uint8_t(m << 5 | h));

    // Address: 2m nibbles, destination then source, most significant nibble first.
    uint64_t packed = (uint64_t(dest) << (4 * m)) | d.source;
    for (int i = m - 1; i >= 0; --i)
        out.push_back(uint8_t(packed >> (8 * i)));

    const size_t seg = d.segment.size();
    auto put_fsn = [&](uint16_t v) {
        if (d.long_fsn)
            out.push_back(uint8_t(v >> 8));
        out.push_back(uint8_t(v));
    };
    auto data_flags = [&]() {
        return uint8_t(d.cpdu_start << 7 | d.cpdu_end << 6 | d.deliver_in_order << 5 |
                       d.drop_cpdu << 4 | d.tx_win_uwe << 3 | d.tx_win_lwe << 2 |
                       seg >> 8);
    };
    switch (d.type) {
    case dpdu_type::data_only:
    case dpdu_type::data_ack:
        out.push_back(data_flags());
        out.push_back(uint8_t(seg));
        put_fsn(d.tx_sequence);
        if (d.type == dpdu_type::data_ack) {
            put_fsn(d.rx_lwe);
            out.insert(out.end(), d.selective_acks.begin(), d.selective_acks.end());
        }
        break;
    case dpdu_type::ack_only:
    case dpdu_type::expedited_ack_only:
        put_fsn(d.rx_lwe);
        out.insert(out.end(), d.selective_acks.begin(), d.selective_acks.end());
        break;
    case dpdu_type::reset_win_resync:
        out.push_back(uint8_t(d.full_reset << 3 | d.reset_tx_win_request << 2 |
                              d.reset_rx_win_command << 1 | d.reset_ack));
        put_fsn(d.new_rx_lwe);
        out.push_back(d.reset_frame_id);
        break;
    case dpdu_type::expedited_data_only:
        require_bits("cpdu_id (expedited)", d.cpdu_id, 4);
        out.push_back(
            uint8_t(d.cpdu_start << 7 | d.cpdu_end << 6 | d.cpdu_id << 2 | seg >> 8));
        out.push_back(uint8_t(seg));
        put_fsn(d.tx_sequence);
        break;
    case dpdu_type::management:
        out.push_back(uint8_t(d.extended_message_flag << 2 | d.valid_message << 1 |
                              d.management_ack));
        out.push_back(d.management_frame_id);
        out.insert(out.end(), d.extended_message.begin(), d.extended_message.end());
        break;
    case dpdu_type::non_arq_data:
    case dpdu_type::expedited_non_arq_data:
        require_bits("cpdu_id (non-ARQ)", d.cpdu_id, 12);
        out.push_back(uint8_t((d.cpdu_id >> 8) << 4 | d.deliver_in_order << 3 |
                              group << 2 | seg >> 8));
        out.push_back(uint8_t(seg));
        out.push_back(uint8_t(d.cpdu_id));
        put_u16_be(out, d.cpdu_size);
        put_u16_be(out, d.segment_offset);
        put_u16_be(out, d.reception_window);
        break;
    case dpdu_type::warning:
        require_bits("received_frame_type", d.received_frame_type, 4);
        require_bits("warning_reason", d.warning_reason, 4);
        out.push_back(uint8_t(d.received_frame_type << 4 | d.warning_reason));
        break;
    }
    put_crc16_le(out, crc16_s5066(out.data() + start + 2, out.size() - start - 2));
    if (carries_segment(d.type)) {
        out.insert(out.end(), d.segment.begin(), d.segment.end());
        put_crc32_le(out, crc32_s5066(d.segment.data(), seg));
    }
}

bytes encode(const dpdu& d)
{
    bytes out;
    encode_into(d, out);
    return out;
}

decoded<dpdu> decode_dpdu_header(const uint8_t* p,
                                 size_t size,
                                 size_t* frame_length,
                                 const long_fsn_fn* long_fsn)
{
    using R = decoded<dpdu>;
    if (size < dpdu_fixed_size)
        return R::failure(decode_error::truncated,
                          "D_PDU shorter than its fixed 6 bytes");
    if (p[0] != sync_byte_0 || p[1] != sync_byte_1)
        return R::failure(decode_error::bad_sync, "D_PDU does not start with 90 EB");
    const unsigned type = p[2] >> 4;
    if (!is_known_dpdu_type(type))
        return R::failure(decode_error::unknown_type,
                          "D_PDU type " + std::to_string(type) + " is not defined");
    const unsigned m = p[5] >> 5;
    const unsigned h = p[5] & 0x1F;
    if (m == 0)
        return R::failure(decode_error::bad_field, "D_PDU address size 0");
    bool lfsn = false;
    if (long_fsn && *long_fsn && is_fsn_type(type)) {
        if (size < 6 + m)
            return R::failure(decode_error::truncated, "D_PDU address field incomplete");
        uint64_t packed = 0;
        for (unsigned i = 0; i < m; ++i)
            packed = packed << 8 | p[6 + i];
        const uint64_t half_mask = (uint64_t(1) << (4 * m)) - 1;
        lfsn = (*long_fsn)(uint32_t(packed & half_mask), uint32_t(packed >> (4 * m)));
        // DATA-ONLY, RESET/WIN-RESYNC and EXPEDITED DATA-ONLY have a fixed header size
        // in each form, so it tells the form: a link changing form loses nothing.
        if (type == 0 || type == 3 || type == 4)
            lfsn = h == 10;
    }
    if (!header_size_plausible(type, h, lfsn))
        return R::failure(decode_error::bad_size,
                          std::string(to_string(dpdu_type(type))) + " with header size " +
                              std::to_string(h));
    const size_t header_length = 2 + m + h;
    if (size < header_length)
        return R::failure(decode_error::truncated,
                          "D_PDU header needs " + std::to_string(header_length) +
                              " bytes");
    const size_t crc_at = header_length - 2;
    const uint16_t want = crc16_s5066(p + 2, crc_at - 2);
    if (get_crc16_le(p + crc_at) != want)
        return R::failure(decode_error::header_crc, "D_PDU header CRC mismatch");

    dpdu d;
    d.type = dpdu_type(type);
    d.long_fsn = lfsn;
    d.eow = eow_type(p[2] & 0xF);
    d.eow_content = p[3];
    d.eot = p[4];
    d.address_size = uint8_t(m);
    uint64_t packed = 0;
    for (unsigned i = 0; i < m; ++i)
        packed = packed << 8 | p[6 + i];
    const uint64_t half_mask = (uint64_t(1) << (4 * m)) - 1;
    d.source = uint32_t(packed & half_mask);
    d.destination = uint32_t(packed >> (4 * m));

    const uint8_t* t = p + 6 + m;  // type-specific header
    const size_t ts_size = h - 6;  // its length
    const size_t w = lfsn ? 2 : 1; // FSN field width
    auto fsn_at = [&](const uint8_t* q) {
        return uint16_t(lfsn ? q[0] << 8 | q[1] : q[0]);
    };
    size_t seg = 0;
    auto read_data_flags = [&]() {
        d.cpdu_start = t[0] & 0x80;
        d.cpdu_end = t[0] & 0x40;
        seg = size_t(t[0] & 3) << 8 | t[1];
    };
    switch (d.type) {
    case dpdu_type::data_only:
    case dpdu_type::data_ack:
        read_data_flags();
        d.deliver_in_order = t[0] & 0x20;
        d.drop_cpdu = t[0] & 0x10;
        d.tx_win_uwe = t[0] & 0x08;
        d.tx_win_lwe = t[0] & 0x04;
        d.tx_sequence = fsn_at(t + 2);
        if (d.type == dpdu_type::data_ack) {
            d.rx_lwe = fsn_at(t + 2 + w);
            d.selective_acks.assign(t + 2 + 2 * w, t + ts_size);
        }
        break;
    case dpdu_type::ack_only:
    case dpdu_type::expedited_ack_only:
        d.rx_lwe = fsn_at(t);
        d.selective_acks.assign(t + w, t + ts_size);
        break;
    case dpdu_type::reset_win_resync:
        d.full_reset = t[0] & 0x08;
        d.reset_tx_win_request = t[0] & 0x04;
        d.reset_rx_win_command = t[0] & 0x02;
        d.reset_ack = t[0] & 0x01;
        d.new_rx_lwe = fsn_at(t + 1);
        d.reset_frame_id = t[1 + w];
        break;
    case dpdu_type::expedited_data_only:
        read_data_flags();
        d.cpdu_id = (t[0] >> 2) & 0xF;
        d.tx_sequence = fsn_at(t + 2);
        break;
    case dpdu_type::management:
        d.extended_message_flag = t[0] & 0x04;
        d.valid_message = t[0] & 0x02;
        d.management_ack = t[0] & 0x01;
        d.management_frame_id = t[1];
        d.extended_message.assign(t + 2, t + ts_size);
        break;
    case dpdu_type::non_arq_data:
    case dpdu_type::expedited_non_arq_data:
        read_data_flags();
        d.cpdu_start = d.cpdu_end = false; // not fields of this type
        d.deliver_in_order = t[0] & 0x08;
        if (t[0] & 0x04)
            d.destination |= group_address_flag;
        d.cpdu_id = uint16_t((t[0] >> 4) << 8 | t[2]);
        d.cpdu_size = get_u16_be(t + 3);
        d.segment_offset = get_u16_be(t + 5);
        d.reception_window = get_u16_be(t + 7);
        break;
    case dpdu_type::warning:
        d.received_frame_type = t[0] >> 4;
        d.warning_reason = t[0] & 0xF;
        break;
    }
    *frame_length = header_length + (carries_segment(d.type) ? seg + 4 : 0);
    return R::success(std::move(d));
}

decoded<dpdu> decode_dpdu(const uint8_t* p, size_t size, bool long_fsn)
{
    const long_fsn_fn fn = [](uint32_t, uint32_t) { return true; };
    return decode_dpdu(p, size, long_fsn ? &fn : nullptr);
}

decoded<dpdu> decode_dpdu(const uint8_t* p, size_t size, const long_fsn_fn* long_fsn)
{
    size_t frame_length = 0;
    auto r = decode_dpdu_header(p, size, &frame_length, long_fsn);
    if (!r)
        return r;
    if (size < frame_length)
        return decoded<dpdu>::failure(decode_error::truncated,
                                      "D_PDU needs " + std::to_string(frame_length) +
                                          " bytes, " + std::to_string(size) + " given");
    if (size > frame_length)
        return decoded<dpdu>::failure(decode_error::bad_size,
                                      std::to_string(size - frame_length) +
                                          " bytes after the end of the D_PDU");
    dpdu& d = r.value;
    if (carries_segment(d.type)) {
        const size_t header_length = 2 + d.address_size + header_size_field(d);
        const uint8_t* seg = p + header_length;
        d.segment.assign(seg, p + frame_length - 4);
        if (crc32_s5066(seg, d.segment.size()) != get_crc32_le(p + frame_length - 4)) {
            r.error = decode_error::segment_crc;
            r.reason = "C_PDU segment CRC mismatch";
        }
    }
    return r;
}

bool dpdu::operator==(const dpdu& o) const
{
    auto tie = [](const dpdu& d) {
        return std::tie(d.type,
                        d.eow,
                        d.eow_content,
                        d.eot,
                        d.address_size,
                        d.destination,
                        d.source,
                        d.cpdu_start,
                        d.cpdu_end,
                        d.deliver_in_order,
                        d.drop_cpdu,
                        d.tx_win_uwe,
                        d.tx_win_lwe,
                        d.tx_sequence,
                        d.rx_lwe,
                        d.selective_acks,
                        d.full_reset,
                        d.reset_tx_win_request,
                        d.reset_rx_win_command,
                        d.reset_ack,
                        d.new_rx_lwe,
                        d.reset_frame_id,
                        d.extended_message_flag,
                        d.valid_message,
                        d.management_ack,
                        d.management_frame_id,
                        d.extended_message,
                        d.cpdu_id,
                        d.cpdu_size,
                        d.segment_offset,
                        d.reception_window,
                        d.received_frame_type,
                        d.warning_reason,
                        d.segment,
                        d.long_fsn);
    };
    return tie(*this) == tie(o);
}

} // namespace dl
} // namespace hfstack
} // namespace gr
