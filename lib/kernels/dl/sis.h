/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

/* SIS codec of STANAG 5066 Annex A (Edition 3): all 27 S_primitives as exchanged over
 * TCP port 5066, plus a reassembler that cuts a TCP byte stream into primitives.
 * Layouts match Wireshark's s5066sis dissector, the oracle we cross-check against.
 *
 * Frame: 90 EB | 00 (version) | size (u16 BE, counts type + body) | type | body.
 * The encoder only ever writes that Edition 3 form; decoders also tolerate two field
 * quirks (Edition 1 frames without the version byte, handled by sis_reassembler, and
 * 4 stray bytes in Rockwell Collins <= v2.1 UNIDATA_INDICATIONs). */
#ifndef HFSTACK_KERNELS_DL_SIS_H
#define HFSTACK_KERNELS_DL_SIS_H

#include "codec.h"
#include "spdu.h" // hard_link_type: the SIS hard-link primitives carry the S_PDU field

#include <string>
#include <vector>

namespace gr {
namespace hfstack {
namespace dl {

enum class sis_type : uint8_t {
    bind_request = 1,
    unbind_request = 2,
    bind_accepted = 3,
    bind_rejected = 4,
    unbind_indication = 5,
    hard_link_establish = 6,
    hard_link_terminate = 7,
    hard_link_established = 8,
    hard_link_rejected = 9,
    hard_link_terminated = 10,
    hard_link_indication = 11,
    hard_link_accept = 12,
    hard_link_reject = 13,
    subnet_availability = 14,
    data_flow_on = 15,
    data_flow_off = 16,
    keep_alive = 17,
    management_msg_request = 18,
    management_msg_indication = 19,
    unidata_request = 20,
    unidata_indication = 21,
    unidata_request_confirm = 22,
    unidata_request_rejected = 23,
    expedited_unidata_request = 24,
    expedited_unidata_indication = 25,
    expedited_unidata_request_confirm = 26,
    expedited_unidata_request_rejected = 27,
};

// "S_BIND_REQUEST" ... "S_EXPEDITED_UNIDATA_REQUEST_REJECTED"; "S_UNKNOWN" otherwise.
const char* to_string(sis_type t);
bool is_known_sis_type(unsigned t);

// Enumerations name the standard's values; fields keep whatever a peer sent (4-bit
// TX modes 4..15, confirmation 3, link type 3 all survive a decode/encode round trip).
enum class sis_tx_mode : uint8_t {
    ignore = 0,
    arq = 1,
    non_arq = 2,
    non_arq_with_errors = 3
};
enum class sis_delivery_confirmation : uint8_t { none = 0, node = 1, client = 2 };
enum class sis_delivery_order : uint8_t { in_order = 0, as_they_arrive = 1 };
enum class sis_subnet_status : uint8_t {
    off = 0,
    on = 1,
    receive_only = 2,
    half_duplex = 3,
    full_duplex = 4
};

// Values of sis_primitive::reason, by primitive.
enum class sis_bind_rejected_reason : uint8_t { // S_BIND_REJECTED
    unknown = 0,
    not_enough_resources = 1,
    invalid_sap = 2,
    sap_already_allocated = 3,
    arq_unsupportable_during_broadcast = 4
};
enum class sis_unbind_reason : uint8_t { // S_UNBIND_INDICATION
    unknown = 0,
    preempted_by_higher_rank = 1,
    keep_alive_inactivity = 2,
    too_many_invalid_primitives = 3,
    too_many_expedited_requests = 4,
    arq_unsupportable_during_broadcast = 5
};
enum class sis_hard_link_rejected_reason : uint8_t { // S_HARD_LINK_REJECTED (and _REJECT)
    remote_busy = 1,
    higher_priority_link_exists = 2,
    remote_not_responding = 3,
    destination_sap_not_bound = 4,
    type0_link_exists = 5
};
enum class sis_hard_link_terminated_reason : uint8_t { // S_HARD_LINK_TERMINATED
    terminated_by_remote = 1,
    higher_priority_link_requested = 2,
    remote_not_responding = 3,
    destination_sap_not_bound = 4,
    physical_link_broken = 5
};
enum class sis_subnet_reason : uint8_t { // S_SUBNET_AVAILABILITY
    unknown = 0,
    local_node_in_emcon = 1,
    higher_priority_link_requested = 2
};
enum class
    sis_unidata_rejected_reason : uint8_t { // S_(EXPEDITED_)UNIDATA_REQUEST_REJECTED,
                                            // 4 bits
        unknown = 0,
        ttl_expired = 1,
        destination_sap_not_bound = 2,
        destination_not_responding = 3,
        updu_larger_than_mtu = 4,
        tx_mode_not_specified = 5
    };

// 4-byte SIS address field. `address` holds the 28 address bits plus the group flag as
// bit 28, so groups read 16.0.0.0-31.255.255.255 (Wireshark's view, mask 0x1FFFFFFF).
// `size_nibbles` is the 3-bit address size field (1..7 in use; kept raw so decoded
// frames re-encode byte for byte).
struct sis_address {
    uint32_t address = 0;
    uint8_t size_nibbles = 7;
};

// Service type as SIS carries it: byte A = tx_mode (7..4) | delivery_confirmation
// (3..2) | delivery_order (1) | extended (0); min_retransmissions is the high nibble of
// the next byte (BIND_REQUEST) or of the 3-byte TTL field (UNIDATA_REQUEST).
struct sis_service_type {
    sis_tx_mode tx_mode = sis_tx_mode::ignore;
    sis_delivery_confirmation delivery_confirmation = sis_delivery_confirmation::none;
    sis_delivery_order delivery_order = sis_delivery_order::in_order;
    bool extended = false;
    uint8_t min_retransmissions = 0;
};

// Part of a U_PDU delivered in non-ARQ-with-errors mode (UNIDATA_INDICATION).
struct sis_block_range {
    uint16_t offset = 0;
    uint16_t size = 0;
};

// One S_primitive. A flat struct: each type uses the fields listed below; encode()
// ignores the others and decoders leave them at their defaults.
//   BIND_REQUEST            sap, rank, service_type (all of it)
//   BIND_ACCEPTED           sap, mtu
//   BIND_REJECTED           reason
//   UNBIND_INDICATION       reason
//   HARD_LINK_ESTABLISH     link_type, link_priority, remote_sap, remote
//   HARD_LINK_TERMINATE     remote
//   HARD_LINK_ESTABLISHED   remote_status, link_type, link_priority, remote_sap, remote
//   HARD_LINK_REJECTED      reason, link_type, link_priority, remote_sap, remote
//   HARD_LINK_TERMINATED    reason, link_type, link_priority, remote_sap, remote
//   HARD_LINK_INDICATION    remote_status, link_type, link_priority, remote_sap, remote
//   HARD_LINK_ACCEPT        link_type, link_priority, remote_sap, remote
//   HARD_LINK_REJECT        reason, link_type, link_priority, remote_sap, remote
//   SUBNET_AVAILABILITY     subnet_status, reason
//   MANAGEMENT_MSG_*        management_type, payload (message body)
//   UNIDATA_REQUEST         priority, destination_sap, destination, service_type, ttl,
//                           payload (U_PDU)
//   UNIDATA_INDICATION      priority, destination_sap, destination, service_type.tx_mode,
//                           source_sap, source, errored_blocks and non_received_blocks
//                           (tx mode 3 only), payload, vendor_padding (decode only)
//   UNIDATA_REQUEST_CONFIRM destination_sap, destination, payload (all or a prefix)
//   UNIDATA_REQUEST_REJECTED reason (4 bits), destination_sap, destination, payload
//   EXPEDITED_*             as the non-expedited type, without priority
//   UNBIND_REQUEST, DATA_FLOW_ON/OFF, KEEP_ALIVE: no fields
struct sis_primitive {
    sis_type type = sis_type::keep_alive;

    uint8_t sap = 0;  // own SAP in BIND_REQUEST / BIND_ACCEPTED (4 bits)
    uint8_t rank = 0; // 4 bits, 15 = management
    uint16_t mtu = 0; // BIND_ACCEPTED
    sis_service_type service_type;
    uint8_t reason = 0; // see the sis_*_reason enumerations
    sis_subnet_status subnet_status = sis_subnet_status::off;
    uint8_t remote_status = 0; // HARD_LINK_ESTABLISHED / _INDICATION: 0 error, 1 ok

    hard_link_type link_type = hard_link_type::link_reservation; // 2 bits
    uint8_t link_priority = 0;                                   // 2 bits
    uint8_t remote_sap = 0;                                      // 4 bits
    sis_address remote;

    uint8_t priority = 0;        // 4 bits
    uint8_t destination_sap = 0; // 4 bits
    sis_address destination;
    uint8_t source_sap = 0; // 4 bits
    sis_address source;
    uint32_t ttl = 0; // 20 bits, unit 2 s, 0 = infinite

    uint8_t management_type = 0;
    std::vector<sis_block_range> errored_blocks;
    std::vector<sis_block_range> non_received_blocks;
    bytes payload; // U_PDU, confirmed/rejected part of one, or management body

    // Decode only: 4 non-standard bytes followed the U_PDU size field (Rockwell Collins
    // <= v2.1) and were skipped. encode() ignores it and writes the standard form.
    bool vendor_padding = false;
};

bool operator==(const sis_address& a, const sis_address& b);
bool operator==(const sis_service_type& a, const sis_service_type& b);
bool operator==(const sis_block_range& a, const sis_block_range& b);
bool operator==(const sis_primitive& a, const sis_primitive& b); // every member
inline bool operator!=(const sis_address& a, const sis_address& b) { return !(a == b); }
inline bool operator!=(const sis_service_type& a, const sis_service_type& b)
{
    return !(a == b);
}
inline bool operator!=(const sis_block_range& a, const sis_block_range& b)
{
    return !(a == b);
}
inline bool operator!=(const sis_primitive& a, const sis_primitive& b)
{
    return !(a == b);
}

// S_BIND_REQUEST for an ARQ client (the IP client, SLEP) with this confirmation and
// order.
inline sis_primitive arq_bind_request(uint8_t sap,
                                      uint8_t rank,
                                      sis_delivery_confirmation confirmation,
                                      bool in_order)
{
    sis_primitive b;
    b.type = sis_type::bind_request;
    b.sap = sap;
    b.rank = rank;
    b.service_type.tx_mode = sis_tx_mode::arq;
    b.service_type.delivery_confirmation = confirmation;
    b.service_type.delivery_order =
        in_order ? sis_delivery_order::in_order : sis_delivery_order::as_they_arrive;
    return b;
}

// "a.b.c.d" of the 29 address bits (group addresses read 16.x.x.x-31.x.x.x).
std::string address_to_string(uint32_t address);
// Inverse; rejects (bad_field) anything but four decimal numbers 0..255 separated by
// dots, or a value above 31.255.255.255.
decoded<uint32_t> parse_address(const std::string& text);

constexpr size_t sis_header_size = 5;        // sync, version, size
constexpr size_t sis_ed1_header_size = 4;    // Edition 1: no version byte
constexpr size_t sis_max_size_field = 65535; // type + body
// Default reassembler limit: a 4096-byte U_PDU (MTU of broadcast-only nodes), the
// largest fixed UNIDATA header (22 bytes with frame header and vendor padding) and
// room for about 120 errored / non-received block ranges.
constexpr size_t sis_default_max_frame = 4096 + 512;

// Whole Edition 3 frame. Throws encode_error naming the field that does not fit
// (a SAP above 15, a TTL above 20 bits, a payload making the size field overflow,
// block lists outside tx mode 3, an unknown type ...).
bytes encode(const sis_primitive& p);

// One complete Edition 3 frame, nothing more: truncated, bad_sync, bad_version,
// bad_size (size field or an inner U_PDU size contradicts the bytes, trailing bytes),
// unknown_type (0 or > 27). Never throws on any input.
decoded<sis_primitive> decode_sis(const uint8_t* frame, size_t size);
inline decoded<sis_primitive> decode_sis(const bytes& frame)
{
    return decode_sis(frame.data(), frame.size());
}
// The bytes after the type byte of a frame whose size field has already been checked.
decoded<sis_primitive> decode_sis_body(sis_type type, const uint8_t* body, size_t size);

struct sis_counters {
    uint64_t bytes_in = 0;
    uint64_t primitives = 0;      // decoded and handed out
    uint64_t edition1_frames = 0; // of those, framed without the version byte
    uint64_t garbage_bytes = 0;   // skipped while hunting for 90 EB
    uint64_t decode_errors = 0;   // framing right, body invalid (frame skipped)
    uint64_t oversized = 0;       // size field above max_frame (skipped by that size)
    // Of the oversized frames, (EXPEDITED_)UNIDATA_REQUESTs: answered with a rejection
    // (reason 4, U_PDU larger than MTU), so not counted as garbage.
    uint64_t oversized_requests = 0;
    uint64_t answers = 0; // primitives handed out by take_answers()
};

// Cuts a TCP byte stream into S_primitives. Takes chunks of any size; decoded
// primitives are appended to the caller's vector in stream order. Never throws on any
// input and holds at most one incomplete frame (< max_frame bytes) between calls.
// A frame larger than max_frame is skipped by its declared size, never buffered and
// never scanned for frames inside it (a client's U_PDU may hold 90 EB and whole
// frames: they are data, not primitives).
// Two kinds of request get an answer from the stream itself, since the node never
// sees them (take_answers()):
//   - an (EXPEDITED_)UNIDATA_REQUEST above max_frame: the matching _REJECTED with
//     reason 4 (U_PDU larger than MTU), its destination SAP and address, and no U_PDU
//     (it was never buffered);
//   - a BIND_REQUEST whose body does not decode (too short, trailing bytes):
//     S_BIND_REJECTED reason 0 (unknown).
class sis_reassembler
{
public:
    // max_frame: largest whole frame accepted (header included); at least 6.
    explicit sis_reassembler(size_t max_frame = sis_default_max_frame);

    void push(const uint8_t* data, size_t size, std::vector<sis_primitive>& out);
    std::vector<sis_primitive> push(const uint8_t* data, size_t size)
    {
        std::vector<sis_primitive> out;
        push(data, size, out);
        return out;
    }

    const sis_counters& counters() const { return d_counters; }
    // Answers owed to the client for the requests described above, in stream order.
    std::vector<sis_primitive> take_answers();
    // Why the last frame was rejected (decode error or oversized); empty if none yet.
    const std::string& last_error() const { return d_last_error; }
    size_t buffered() const { return d_pending.size(); }
    // Bytes of an oversized frame still to be skipped as they arrive.
    size_t skipping() const { return d_skip; }
    size_t max_frame() const { return d_max_frame; }
    // The connection was reset: drop the partial frame, forget the peer's edition.
    void reset();

private:
    size_t parse(const uint8_t* p, size_t size, std::vector<sis_primitive>& out);
    size_t skip(size_t available);
    void answer_oversized_request(sis_type type, const uint8_t* body);

    size_t d_max_frame;
    size_t d_skip = 0; // bytes of an oversized frame not yet seen
    std::vector<sis_primitive> d_answers;
    bool d_prefer_ed1 = false;    // edition of the last good frame decides ambiguous ones
    bool d_edition_known = false; // a good frame has been decoded on this stream
    bytes d_pending;              // unconsumed tail of the stream
    sis_counters d_counters;
    std::string d_last_error;
};

} // namespace dl
} // namespace hfstack
} // namespace gr

#endif
