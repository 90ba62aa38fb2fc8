/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

/* RCOP / UDOP PDU codec: STANAG 5066 Edition 3 Annex F, F.8.1 (Figure F-9) and F.9.1
 * (UDOP PDUs are "defined and used identically" to RCOP PDUs).
 *
 * A RCOP/UDOP PDU is carried whole as the U_PDU of an S_UNIDATA primitive:
 *
 *   byte 0     CONNECTION ID NUMBER (7..4, 0-15) | reserved (3..0, sent as 0)
 *   byte 1     U_PDU ID NUMBER (0-255, consecutive per connection)
 *   byte 2-3   U_PDU SEGMENT NUMBER, MSB first (first segment 0)
 *   byte 4-5   APPLICATION IDENTIFIER, MSB first (Table F-5)
 *   byte 6..   APP_DATA (m bytes, m >= 0)
 *
 * RCOP binds at SAP 6 (ARQ), UDOP at SAP 7 (non-ARQ); T-MMHS may use the same PDU
 * at SAP 2. Wireshark's s5066sis dissector shows these fields as s5066sis.ctl.conn_id,
 * .reserved, .updu_id, .updu_segment and .app_id.
 *
 * Decoding policy: the reserved nibble is ignored on input (Annex F says it shall be
 * set to 0; we always send 0); fewer than 6 bytes give decode_error::truncated.
 */
#ifndef HFSTACK_KERNELS_DL_RCOP_H
#define HFSTACK_KERNELS_DL_RCOP_H

#include "codec.h"

#include <cstddef>
#include <cstdint>

namespace gr {
namespace hfstack {
namespace dl {

constexpr uint8_t rcop_sap = 6; // Annex F, Table F-1
constexpr uint8_t udop_sap = 7;

constexpr size_t rcop_header_size = 6;

// Application identifiers assigned in Annex F Table F-5 (Edition 3); the same values
// and names are in Wireshark's packet-s5066sis (s5066_client_application_ids).
// 0x0000-0x7FFF is reserved for NATO administration; 0x8000-0xFFFF is user-defined.
constexpr uint16_t app_id_bftp = 0x1002;       // Basic File Transfer Protocol
constexpr uint16_t app_id_frap = 0x100B;       // File-Receipt/Acknowledgement Protocol
constexpr uint16_t app_id_frap_v2 = 0x100C;    // FRAP version 2 (pipelined BFTP)
constexpr uint16_t app_id_tmmhs_tmi1 = 0x2000; // STANAG 4406 Annex E TMI-1 (LMTA-LMTA)
constexpr uint16_t app_id_tmmhs_tmi2 = 0x2001; // TMI-2 (LMTA-LUA)
constexpr uint16_t app_id_tmmhs_tmi3 = 0x2002; // TMI-3 (LMS-LUA)
constexpr uint16_t app_id_tmmhs_tmi4 = 0x2003; // TMI-4 (LUA-LUA)
constexpr uint16_t app_id_tmmhs_tmi5 = 0x2004; // TMI-5 (ACP 127 access unit)
constexpr uint16_t app_id_user_defined_first = 0x8000;

struct rcop_header {
    uint8_t connection_id = 0;   // 0-15
    uint8_t updu_id = 0;         // 0-255
    uint16_t segment_number = 0; // 0 for the first (or only) segment
    uint16_t application_id = 0;
};

struct rcop_pdu {
    rcop_header header;
    bytes data; // APP_DATA
};

inline bool operator==(const rcop_header& a, const rcop_header& b)
{
    return a.connection_id == b.connection_id && a.updu_id == b.updu_id &&
           a.segment_number == b.segment_number && a.application_id == b.application_id;
}
inline bool operator!=(const rcop_header& a, const rcop_header& b) { return !(a == b); }
inline bool operator==(const rcop_pdu& a, const rcop_pdu& b)
{
    return a.header == b.header && a.data == b.data;
}
inline bool operator!=(const rcop_pdu& a, const rcop_pdu& b) { return !(a == b); }

// The 6-byte header alone. Throws encode_error if connection_id > 15.
bytes encode(const rcop_header& h);
// Header followed by the data.
bytes encode(const rcop_pdu& p);

// Header only: on success the APP_DATA starts at data + rcop_header_size.
decoded<rcop_header> decode_rcop_header(const uint8_t* data, size_t size);
// Header and a copy of the APP_DATA.
decoded<rcop_pdu> decode_rcop(const uint8_t* data, size_t size);
inline decoded<rcop_pdu> decode_rcop(const bytes& b)
{
    return decode_rcop(b.data(), b.size());
}

// Name of an assigned application identifier, "user-defined" for 0x8000-0xFFFF,
// "unassigned" otherwise.
const char* application_name(uint16_t application_id);

} // namespace dl
} // namespace hfstack
} // namespace gr

#endif
