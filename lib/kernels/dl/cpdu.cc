/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "cpdu.h"

#include <string>

namespace gr {
namespace hfstack {
namespace dl {

namespace {

constexpr uint8_t max_cpdu_type = 5;
constexpr uint8_t link_bit = 0x01; // PHYSICAL LINK REQUEST: bit 0 of byte 0 (Fig. B-2)
// S5066-EP5 LFSN in spare bits (our reading, docs/wire-formats.md): REQUEST bit 1
// "LFSN supported", ACCEPTED bit 0 "LFSN in use on this link".
constexpr uint8_t lfsn_request_bit = 0x02;
constexpr uint8_t lfsn_accepted_bit = 0x01;

std::string reason_text(cpdu_type t, uint8_t reason)
{
    return std::string(to_string(t)) + " reason " + std::to_string(reason) +
           " is not defined by STANAG 5066 Ed.3 Annex B";
}

} // namespace

bool cpdu_reason_defined(cpdu_type type, uint8_t reason)
{
    switch (type) {
    case cpdu_type::physical_link_rejected:
        return reason <= uint8_t(physical_link_reject_reason::supporting_exclusive_link);
    case cpdu_type::physical_link_break:
        return reason <= uint8_t(physical_link_break_reason::no_more_data);
    default:
        return false;
    }
}

bytes encode(const cpdu& c)
{
    const uint8_t t = uint8_t(c.type);
    if (t > max_cpdu_type)
        throw encode_error("cpdu.type = " + std::to_string(t) +
                           " is not a C_PDU type (0-5)");

    uint8_t low = 0;
    switch (c.type) {
    case cpdu_type::data:
        if (c.spdu.empty())
            throw encode_error("cpdu.spdu is empty: a DATA C_PDU must carry an S_PDU");
        break;
    case cpdu_type::physical_link_request:
        low =
            uint8_t((c.exclusive_link ? link_bit : 0) | (c.lfsn ? lfsn_request_bit : 0));
        break;
    case cpdu_type::physical_link_rejected:
    case cpdu_type::physical_link_break:
        require_bits("cpdu.reason", c.reason, 4);
        if (!cpdu_reason_defined(c.type, c.reason))
            throw encode_error("cpdu.reason: " + reason_text(c.type, c.reason));
        low = c.reason;
        break;
    case cpdu_type::physical_link_accepted:
        low = c.lfsn ? lfsn_accepted_bit : 0;
        break;
    case cpdu_type::physical_link_break_confirm:
        break;
    }

    bytes out;
    out.reserve(cpdu_header_size + (c.type == cpdu_type::data ? c.spdu.size() : 0));
    out.push_back(uint8_t((t << 4) | low));
    if (c.type == cpdu_type::data)
        out.insert(out.end(), c.spdu.begin(), c.spdu.end());
    return out;
}

decoded<cpdu> decode_cpdu(const uint8_t* data, size_t size)
{
    using result = decoded<cpdu>;
    if (size < cpdu_header_size || data == nullptr)
        return result::failure(decode_error::truncated, "empty C_PDU");

    const uint8_t t = data[0] >> 4;
    const uint8_t low = data[0] & 0x0F;
    if (t > max_cpdu_type)
        return result::failure(decode_error::unknown_type,
                               "C_PDU type " + std::to_string(t) +
                                   " is not defined (0-5)");

    cpdu c;
    c.type = cpdu_type(t);
    switch (c.type) {
    case cpdu_type::data:
        // Low nibble is "not used": ignored on input.
        if (size < cpdu_header_size + 1)
            return result::failure(decode_error::truncated,
                                   "DATA C_PDU carries no S_PDU");
        c.spdu.assign(data + cpdu_header_size, data + size);
        break;
    case cpdu_type::physical_link_request:
        // Bits 3..2 are reserved ("not used by any implementation"): ignored.
        c.exclusive_link = (low & link_bit) != 0;
        c.lfsn = (low & lfsn_request_bit) != 0;
        break;
    case cpdu_type::physical_link_rejected:
    case cpdu_type::physical_link_break:
        // An undefined reason is kept, not refused: a BREAK must still be confirmed.
        // cpdu_reason_defined() tells callers; encode() never sends one.
        c.reason = low;
        break;
    case cpdu_type::physical_link_accepted:
        c.lfsn = (low & lfsn_accepted_bit) != 0;
        break;
    case cpdu_type::physical_link_break_confirm:
        break;
    }
    // Bytes after a one-byte control C_PDU (types 1-5) are ignored.
    return result::success(std::move(c));
}

const char* to_string(cpdu_type t)
{
    switch (t) {
    case cpdu_type::data:
        return "DATA";
    case cpdu_type::physical_link_request:
        return "PHYSICAL_LINK_REQUEST";
    case cpdu_type::physical_link_accepted:
        return "PHYSICAL_LINK_ACCEPTED";
    case cpdu_type::physical_link_rejected:
        return "PHYSICAL_LINK_REJECTED";
    case cpdu_type::physical_link_break:
        return "PHYSICAL_LINK_BREAK";
    case cpdu_type::physical_link_break_confirm:
        return "PHYSICAL_LINK_BREAK_CONFIRM";
    }
    return "undefined";
}

const char* to_string(physical_link_reject_reason r)
{
    switch (r) {
    case physical_link_reject_reason::unknown:
        return "reason unknown";
    case physical_link_reject_reason::broadcast_only_node:
        return "broadcast-only node";
    case physical_link_reject_reason::higher_priority_link_request_pending:
        return "higher-priority link request pending";
    case physical_link_reject_reason::supporting_exclusive_link:
        return "supporting exclusive link";
    }
    return "undefined";
}

const char* to_string(physical_link_break_reason r)
{
    switch (r) {
    case physical_link_break_reason::unknown:
        return "reason unknown";
    case physical_link_break_reason::higher_layer_request:
        return "higher-layer request";
    case physical_link_break_reason::switching_to_broadcast_data_exchange:
        return "switching to broadcast data exchange session";
    case physical_link_break_reason::higher_priority_link_request_pending:
        return "higher-priority link request pending";
    case physical_link_break_reason::no_more_data:
        return "no more data";
    }
    return "undefined";
}

} // namespace dl
} // namespace hfstack
} // namespace gr
