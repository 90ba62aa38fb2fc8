/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

/* S_PDU codec: STANAG 5066 Edition 3 Annex A, section A.3.1 (peer-to-peer PDUs of
 * the Subnetwork Interface Sublayer).
 *
 * Wire layout (Annex A, Figures; bit 7 = MSB of each byte; in every
 * S_PDU the TYPE is bits 7..4 of byte 0):
 *
 *  0 DATA (Fig. A-32), S_PCI of 3 or 5 bytes, then the U_PDU:
 *      byte 0   TYPE | PRIORITY (3..0)
 *      byte 1   SOURCE SAP ID (7..4) | DESTINATION SAP ID (3..0)
 *      byte 2   bit 7 CLIENT DELIVERY CONFIRM REQUIRED, bit 6 VALID TTD,
 *               bits 5..4 not used, bits 3..0 TTD Julian day mod 16
 *               ("don't care" when VALID TTD = 0)
 *      byte 3-4 TTD time of day: the 16 high bits of the GMT seconds since 00:00
 *               (i.e. seconds >> 1, 0..43199), MSB first. Present if and only if
 *               VALID TTD = 1.
 *  1 DATA DELIVERY CONFIRM (Fig. A-33), 2-byte S_PCI, then all or part of the
 *    delivered U_PDU:
 *      byte 0   TYPE | not used
 *      byte 1   SOURCE SAP ID | DESTINATION SAP ID (equal to those of the DATA
 *               S_PDU being confirmed, i.e. not swapped)
 *  2 DATA DELIVERY FAIL (Fig. A-34), 2-byte S_PCI, then all or part of the U_PDU:
 *      byte 0   TYPE | REASON
 *      byte 1   SOURCE SAP ID | DESTINATION SAP ID (as in the failed DATA S_PDU)
 *  3 HARD LINK ESTABLISHMENT REQUEST (Fig. A-35), 2 bytes:
 *      byte 0   TYPE | LINK TYPE (3..2) | LINK PRIORITY (1..0)
 *      byte 1   REQUESTING SAP ID | REMOTE SAP ID (meaningful for link type 2 only)
 *  4 HARD LINK ESTABLISHMENT CONFIRM (Fig. A-36), 1 byte: TYPE | not used
 *  5 HARD LINK ESTABLISHMENT REJECTED (Fig. A-37), 1 byte: TYPE | REASON
 *  6 HARD LINK TERMINATE (Fig. A-38), 1 byte: TYPE | REASON
 *  7 HARD LINK TERMINATE CONFIRM (Fig. A-39), 1 byte: TYPE | not used
 *    (implementation dependent)
 *
 * Decoding policy (interoperability: tolerate on input, never produce):
 *   - "not used" bits, and the Julian-day nibble of a DATA S_PDU without a valid
 *     TTD, are ignored on input and sent as 0;
 *   - bytes after the fixed-size S_PDUs (types 3-7) are ignored;
 *   - reserved reason codes are kept raw on input (spdu_reason_defined() tells them
 *     apart) so the peer's request is still answered; encode() throws for them;
 *   - LINK TYPE 3 and a TTD time of day >= 43200 give decode_error::bad_field (and
 *     encode() throws for them);
 *   - types 8-15 give decode_error::unknown_type; too few bytes for the S_PCI
 *     (including a VALID TTD without its two bytes) gives decode_error::truncated.
 *
 * Fields that do not belong to the S_PDU type are ignored by encode() and left at
 * their defaults by decode_spdu(); when ttd_valid is false, ttd_julian_day and
 * ttd_gmt_2s are ignored by encode() and decode to 0.
 */
#ifndef HFSTACK_KERNELS_DL_SPDU_H
#define HFSTACK_KERNELS_DL_SPDU_H

#include "codec.h"

#include <cstddef>
#include <cstdint>

namespace gr {
namespace hfstack {
namespace dl {

enum class spdu_type : uint8_t {
    data = 0,
    data_delivery_confirm = 1,
    data_delivery_fail = 2,
    hard_link_establishment_request = 3,
    hard_link_establishment_confirm = 4,
    hard_link_establishment_rejected = 5,
    hard_link_terminate = 6,
    hard_link_terminate_confirm = 7,
};

// REASON of DATA DELIVERY FAIL (A.3.1.3). 0 and 2-15 are "unassigned and reserved";
// 0 is accepted as the generic "no reason given" value (see spdu_reason_defined).
enum class data_delivery_fail_reason : uint8_t {
    unassigned = 0,
    destination_sap_not_bound = 1,
};

// REASON of HARD LINK ESTABLISHMENT REJECTED (A.3.1.5). 5-15 reserved.
enum class hard_link_reject_reason : uint8_t {
    unassigned = 0,
    remote_node_busy = 1,
    higher_priority_link_existing = 2,
    remote_node_not_responding = 3,
    destination_sap_not_bound = 4,
};

// REASON of HARD LINK TERMINATE (A.3.1.6). 3 and 5-15 reserved (3 is "remote node
// not responding (time out)" in the S_HARD_LINK_TERMINATED primitive, a local event
// that never travels in an S_PDU).
enum class hard_link_terminate_reason : uint8_t {
    unassigned = 0,
    client_request = 1,
    higher_priority_link_requested = 2,
    destination_sap_unbound = 4,
};

// LINK TYPE of HARD LINK ESTABLISHMENT REQUEST (A.1.1.2, S_HARD_LINK_ESTABLISH: 0-2).
enum class hard_link_type : uint8_t {
    link_reservation = 0,              // Type 0
    partial_bandwidth_reservation = 1, // Type 1
    full_bandwidth_reservation = 2,    // Type 2 (REMOTE SAP ID is meaningful)
};

// TTD time of day is GMT seconds >> 1, so it is below 86400 / 2.
constexpr uint16_t ttd_gmt_2s_limit = 43200;

struct spdu {
    spdu_type type = spdu_type::data;

    // DATA
    uint8_t priority = 0; // 0-15
    // DATA, DATA DELIVERY CONFIRM, DATA DELIVERY FAIL
    uint8_t source_sap = 0;      // 0-15
    uint8_t destination_sap = 0; // 0-15
    // DATA
    bool client_delivery_confirm_required = false;
    bool ttd_valid = false;
    uint8_t ttd_julian_day = 0; // day of the year (1-366) mod 16: 0-15
    uint16_t ttd_gmt_2s = 0;    // GMT time of day in 2 s units (seconds >> 1): 0-43199

    // HARD LINK ESTABLISHMENT REQUEST
    uint8_t link_type = 0;      // 0-2, see hard_link_type
    uint8_t link_priority = 0;  // 0-3
    uint8_t requesting_sap = 0; // 0-15
    uint8_t remote_sap = 0;     // 0-15

    // DATA DELIVERY FAIL, HARD LINK ESTABLISHMENT REJECTED, HARD LINK TERMINATE
    uint8_t reason = 0;

    // DATA: the U_PDU. DATA DELIVERY CONFIRM / FAIL: all or part of the U_PDU.
    bytes updu;
};

inline bool operator==(const spdu& a, const spdu& b)
{
    return a.type == b.type && a.priority == b.priority && a.source_sap == b.source_sap &&
           a.destination_sap == b.destination_sap &&
           a.client_delivery_confirm_required == b.client_delivery_confirm_required &&
           a.ttd_valid == b.ttd_valid && a.ttd_julian_day == b.ttd_julian_day &&
           a.ttd_gmt_2s == b.ttd_gmt_2s && a.link_type == b.link_type &&
           a.link_priority == b.link_priority && a.requesting_sap == b.requesting_sap &&
           a.remote_sap == b.remote_sap && a.reason == b.reason && a.updu == b.updu;
}
inline bool operator!=(const spdu& a, const spdu& b) { return !(a == b); }

// Size of the S_PCI of `s` on the wire (everything but the U_PDU): DATA 3, or 5 with
// a valid TTD; DATA DELIVERY CONFIRM / FAIL 2; HARD LINK ESTABLISHMENT REQUEST 2;
// types 4-7: 1. Add cpdu_header_size (1) for the C_PCI in front of it.
size_t spdu_header_size(const spdu& s);

// Throws encode_error naming the field that does not fit or holds a value the
// standard does not define.
bytes encode(const spdu& s);

// Never throws on bad input; see the decoding policy above.
decoded<spdu> decode_spdu(const uint8_t* data, size_t size);
inline decoded<spdu> decode_spdu(const bytes& b)
{
    return decode_spdu(b.data(), b.size());
}

// True if `reason` is a value this codec accepts for the S_PDU type: 0 (unassigned,
// i.e. no reason given) or a value the Edition 3 table assigns. Always false for types
// that carry no reason.
bool spdu_reason_defined(spdu_type type, uint8_t reason);

const char* to_string(spdu_type t);
const char* to_string(data_delivery_fail_reason r);
const char* to_string(hard_link_reject_reason r);
const char* to_string(hard_link_terminate_reason r);
const char* to_string(hard_link_type t);

} // namespace dl
} // namespace hfstack
} // namespace gr

#endif
