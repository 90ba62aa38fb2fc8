/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "rcop.h"

#include <string>

namespace gr {
namespace hfstack {
namespace dl {

namespace {

void append_header(bytes& out, const rcop_header& h)
{
    require_bits("rcop_header.connection_id", h.connection_id, 4);
    out.push_back(uint8_t(h.connection_id << 4)); // reserved nibble = 0
    out.push_back(h.updu_id);
    put_u16_be(out, h.segment_number);
    put_u16_be(out, h.application_id);
}

} // namespace

bytes encode(const rcop_header& h)
{
    bytes out;
    out.reserve(rcop_header_size);
    append_header(out, h);
    return out;
}

bytes encode(const rcop_pdu& p)
{
    bytes out;
    out.reserve(rcop_header_size + p.data.size());
    append_header(out, p.header);
    out.insert(out.end(), p.data.begin(), p.data.end());
    return out;
}

decoded<rcop_header> decode_rcop_header(const uint8_t* data, size_t size)
{
    using result = decoded<rcop_header>;
    if (size < rcop_header_size || data == nullptr)
        return result::failure(decode_error::truncated,
                               "RCOP/UDOP PDU of " + std::to_string(size) +
                                   " bytes is shorter than its 6-byte header");
    rcop_header h;
    h.connection_id = data[0] >> 4; // low nibble reserved: ignored
    h.updu_id = data[1];
    h.segment_number = get_u16_be(data + 2);
    h.application_id = get_u16_be(data + 4);
    return result::success(h);
}

decoded<rcop_pdu> decode_rcop(const uint8_t* data, size_t size)
{
    using result = decoded<rcop_pdu>;
    auto h = decode_rcop_header(data, size);
    if (!h)
        return result::failure(h.error, h.reason);
    rcop_pdu p;
    p.header = h.value;
    p.data.assign(data + rcop_header_size, data + size);
    return result::success(std::move(p));
}

const char* application_name(uint16_t id)
{
    switch (id) {
    case app_id_bftp:
        return "BFTP (Basic File Transfer Protocol)";
    case app_id_frap:
        return "FRAP (File-Receipt/Acknowledgement Protocol)";
    case app_id_frap_v2:
        return "FRAP version 2";
    case app_id_tmmhs_tmi1:
        return "STANAG 4406 Annex E TMI-1";
    case app_id_tmmhs_tmi2:
        return "STANAG 4406 Annex E TMI-2";
    case app_id_tmmhs_tmi3:
        return "STANAG 4406 Annex E TMI-3";
    case app_id_tmmhs_tmi4:
        return "STANAG 4406 Annex E TMI-4";
    case app_id_tmmhs_tmi5:
        return "STANAG 4406 Annex E TMI-5 (ACP 127 access unit)";
    default:
        break;
    }
    return id >= app_id_user_defined_first ? "user-defined" : "unassigned";
}

} // namespace dl
} // namespace hfstack
} // namespace gr
