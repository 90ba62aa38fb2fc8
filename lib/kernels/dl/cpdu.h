/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

/* C_PDU codec: STANAG 5066 Edition 3 Annex B (Channel Access Sublayer, CAS-1).
 *
 * Wire layout (Annex B, Figures B-1 to B-6; bit 7 = MSB, fields packed per V.42
 * 8.1.2.3 as Annex B requires):
 *
 *   byte 0, bits 7..4   C_PDU TYPE (0-5)
 *   byte 0, bits 3..0   depends on TYPE:
 *     0 DATA                         not used (0); bytes 1.. are the S_PDU
 *     1 PHYSICAL LINK REQUEST        bits 3..1 not used (0); bit 0 LINK:
 *                                    0 = non-exclusive, 1 = exclusive
 *     2 PHYSICAL LINK ACCEPTED       not used (0)
 *     3 PHYSICAL LINK REJECTED       REASON (bit 3 MSB .. bit 0 LSB)
 *     4 PHYSICAL LINK BREAK          REASON (bit 3 MSB .. bit 0 LSB)
 *     5 PHYSICAL LINK BREAK CONFIRM  not used (0)
 *
 * Types 1-5 are exactly one byte. They travel in EXPEDITED NON-ARQ D_PDUs; a DATA
 * C_PDU uses the delivery service of the S_PDU it carries.
 *
 * Decoding policy (interoperability: tolerate on input, never produce):
 *   - "not used" bits are ignored on input and always sent as 0;
 *   - bytes after a one-byte control C_PDU (types 1-5) are ignored;
 *   - reason values the standard leaves unspecified (REJECTED 4-15, BREAK 5-15) are
 *     kept raw on input, so a BREAK can still be confirmed (cpdu_reason_defined()
 *     tells them apart), and encode() refuses to produce them;
 *   - types 6-15 give decode_error::unknown_type; an empty buffer, or a DATA C_PDU
 *     with no S_PDU after the C_PCI byte, gives decode_error::truncated.
 *
 * Fields that do not belong to the C_PDU type are ignored by encode() and are left
 * at their defaults (false / 0 / empty) by decode_cpdu().
 */
#ifndef HFSTACK_KERNELS_DL_CPDU_H
#define HFSTACK_KERNELS_DL_CPDU_H

#include "codec.h"

#include <cstddef>
#include <cstdint>

namespace gr {
namespace hfstack {
namespace dl {

enum class cpdu_type : uint8_t {
    data = 0,
    physical_link_request = 1,
    physical_link_accepted = 2,
    physical_link_rejected = 3,
    physical_link_break = 4,
    physical_link_break_confirm = 5,
};

// REASON of a PHYSICAL LINK REJECTED C_PDU (Annex B, table after Figure B-4).
// 4-15 are unspecified in Edition 3.
enum class physical_link_reject_reason : uint8_t {
    unknown = 0, // always a valid reason
    broadcast_only_node = 1,
    higher_priority_link_request_pending = 2,
    supporting_exclusive_link = 3,
};

// REASON of a PHYSICAL LINK BREAK C_PDU (Annex B, table after Figure B-5).
// 5-15 are unspecified in Edition 3 (the table misprints the range as "4-15").
enum class physical_link_break_reason : uint8_t {
    unknown = 0, // always a valid reason
    higher_layer_request = 1,
    switching_to_broadcast_data_exchange = 2,
    higher_priority_link_request_pending = 3,
    no_more_data = 4,
};

// Size of the C_PCI: one byte in front of every C_PDU (the whole of types 1-5).
constexpr size_t cpdu_header_size = 1;

struct cpdu {
    cpdu_type type = cpdu_type::data;
    bool exclusive_link = false; // PHYSICAL LINK REQUEST only
    // S5066-EP5 large windows, in spare bits: on a REQUEST "I support LFSN" (bit 1),
    // on an ACCEPTED "LFSN in use on this link" (bit 0). An Edition 3 peer ignores both.
    bool lfsn = false;
    uint8_t reason = 0; // PHYSICAL LINK REJECTED / BREAK only (see enums above)
    bytes spdu;         // DATA only: the encapsulated S_PDU, at least 1 byte
};

inline bool operator==(const cpdu& a, const cpdu& b)
{
    return a.type == b.type && a.exclusive_link == b.exclusive_link &&
           a.reason == b.reason && a.spdu == b.spdu && a.lfsn == b.lfsn;
}
inline bool operator!=(const cpdu& a, const cpdu& b) { return !(a == b); }

// Throws encode_error naming the offending field (type outside 0-5, an undefined
// reason for REJECTED/BREAK, an empty spdu for DATA).
bytes encode(const cpdu& c);

// Never throws on bad input; see the decoding policy above.
decoded<cpdu> decode_cpdu(const uint8_t* data, size_t size);
inline decoded<cpdu> decode_cpdu(const bytes& b)
{
    return decode_cpdu(b.data(), b.size());
}

// True if `reason` is a value Edition 3 defines for this C_PDU type (always false
// for types that carry no reason).
bool cpdu_reason_defined(cpdu_type type, uint8_t reason);

const char* to_string(cpdu_type t);
const char* to_string(physical_link_reject_reason r);
const char* to_string(physical_link_break_reason r);

} // namespace dl
} // namespace hfstack
} // namespace gr

#endif
