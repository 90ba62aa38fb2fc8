/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

/* D_PDU codec of STANAG 5066 Annex C (Edition 3): types 0-8 and 15, every EOW type,
 * EOT, 1-7 byte address fields and group destinations. Layouts match Wireshark's
 * s5066dts dissector, which tests/qa_tshark_crosscheck.py uses as the oracle. */
#ifndef HFSTACK_KERNELS_DL_DPDU_H
#define HFSTACK_KERNELS_DL_DPDU_H

#include "codec.h"

#include <functional>

namespace gr {
namespace hfstack {
namespace dl {


// Node addresses are 28 bits (0.0.0.0-15.255.255.255). Bit 28 marks a group address,
// so groups read 16.0.0.0-31.255.255.255 and broadcast is 31.255.255.255, the same
// numbering the SIS address field and Wireshark use.
constexpr uint32_t group_address_flag = 1u << 28;
constexpr uint32_t node_address_mask = group_address_flag - 1;
constexpr uint32_t broadcast_address = group_address_flag | node_address_mask;

constexpr size_t max_segment_size = 1023; // 10-bit segment size field
constexpr size_t max_selective_acks = 16; // bytes of selective-ack bitmap
// S5066-EP5 Long Frame Sequence Numbers (LFSN): FSN and RX LWE fields grow to two
// bytes (big-endian) on a link where both ends negotiated it; the bitmap stays bounded
// by the 5-bit header size field: 31 - 12 = 19 bytes in a DATA-ACK (the tightest type),
// which we use as the LFSN limit for every ack type so an ack fits any carrier.
constexpr size_t max_selective_acks_lfsn = 19;
constexpr size_t lfsn_modulus = 65536;
constexpr size_t lfsn_max_window = 32768;
constexpr size_t dpdu_fixed_size = 6;   // sync + bytes 2..5
constexpr size_t max_header_field = 31; // 5-bit header size field
// Largest possible D_PDU: sync + 7 address bytes + 31 header bytes + segment + CRC-32.
constexpr size_t max_dpdu_size = 2 + 7 + max_header_field + max_segment_size + 4;

enum class dpdu_type : uint8_t {
    data_only = 0,
    ack_only = 1,
    data_ack = 2,
    reset_win_resync = 3,
    expedited_data_only = 4,
    expedited_ack_only = 5,
    management = 6,
    non_arq_data = 7,
    expedited_non_arq_data = 8,
    warning = 15,
};
const char* to_string(dpdu_type t);
bool is_known_dpdu_type(unsigned t);
// True for the types that carry a C_PDU segment and a CRC-32.
bool carries_segment(dpdu_type t);

// Engineering orderwire: 4-bit type in the low nibble of byte 2, 8-bit content in byte 3.
enum class eow_type : uint8_t {
    none = 0,
    drc_request = 1, // data rate change request
    drc_response = 2,
    unrecognized_type = 3, // "unrecognised type" error report
    capability = 4,
    alm_request = 5, // frequency change / ALM request
    alm_response = 6,
    hdr_drc_request = 7, // high data rate change request: MANAGEMENT D_PDUs only
    token = 15,          // Annex L token protocol: MANAGEMENT D_PDUs only
};
const char* to_string(eow_type t);

// Content layouts of the EOW byte, per type.
struct eow_rate_request {     // DRC and ALM requests (types 1, 5)
    uint8_t data_rate = 0;    // 0 = 75 bps ... 11 = 9600 bps (4 bits)
    uint8_t interleaving = 0; // 0 none, 1 short, 2 long (2 bits)
    uint8_t other = 0;        // request/advisory and Tx=Rx flags (2 bits)
};
struct eow_rate_response { // DRC and ALM responses (types 2, 6)
    uint8_t response = 0;  // 0 accept, 1 refuse, 2 cancel, 3 confirm (3 bits)
    uint8_t reason = 0;    // 5 bits
};
struct eow_capability { // type 4, one flag per bit from the MSB down
    bool adaptive = false;
    bool stanag_4529 = false;
    bool mil_std_188_110a = false;
    bool extended_data_rate = false;
    bool full_duplex = false;
    bool split_frequency = false;
    bool non_arcs_ale = false;
    bool arcs = false;
};
struct eow_hdr_rate_request { // type 7; per-channel rates go in the extended message
    uint8_t waveform = 0;     // 5 bits: 0 110A, 1 110B, 2 4285, 3 4539, ...
    uint8_t channels = 0;     // 3 bits
};
uint8_t eow_content(const eow_rate_request& r);
uint8_t eow_content(const eow_rate_response& r);
uint8_t eow_content(const eow_capability& c);
uint8_t eow_content(const eow_hdr_rate_request& r);
eow_rate_request eow_as_rate_request(uint8_t content);
eow_rate_response eow_as_rate_response(uint8_t content);
eow_capability eow_as_capability(uint8_t content);
eow_hdr_rate_request eow_as_hdr_rate_request(uint8_t content);

// One D_PDU, flat: fields a type does not use are ignored by encode() and left at
// their defaults by decode().
struct dpdu {
    dpdu_type type = dpdu_type::data_only;
    eow_type eow = eow_type::none;
    uint8_t eow_content = 0;
    uint8_t eot = 0;          // half-seconds left in the transmission, 0..255
    uint8_t address_size = 0; // bytes (1..7); 0 on encode = smallest that fits
    uint32_t destination = 0; // group destinations (bit 28) only in NON-ARQ types
    uint32_t source = 0;

    // DATA-ONLY, DATA-ACK, EXPEDITED DATA-ONLY
    bool cpdu_start = false;
    bool cpdu_end = false;
    bool deliver_in_order = false; // also NON-ARQ types
    bool drop_cpdu = false;
    bool tx_win_uwe = false;
    bool tx_win_lwe = false;
    uint16_t tx_sequence = 0; // 0..255, or 0..65535 with long_fsn

    // ACK-ONLY, DATA-ACK, EXPEDITED ACK-ONLY
    uint16_t rx_lwe = 0;
    bytes selective_acks; // bit 0 of byte 0 is RX LWE + 1

    // RESET/WIN-RESYNC
    bool full_reset = false;
    bool reset_tx_win_request = false;
    bool reset_rx_win_command = false;
    bool reset_ack = false;
    uint16_t new_rx_lwe = 0;
    uint8_t reset_frame_id = 0;

    // MANAGEMENT
    bool extended_message_flag = false;
    bool valid_message = false;
    bool management_ack = false;
    uint8_t management_frame_id = 0;
    bytes extended_message;

    // EXPEDITED DATA-ONLY (4 bits) and NON-ARQ types (12 bits)
    uint16_t cpdu_id = 0;
    // NON-ARQ DATA and EXPEDITED NON-ARQ DATA
    uint16_t cpdu_size = 0;
    uint16_t segment_offset = 0;
    uint16_t reception_window = 0; // half-seconds

    // WARNING
    uint8_t received_frame_type = 0;
    uint8_t warning_reason = 0;

    // C_PDU segment (data-carrying types only), at most 1023 bytes
    bytes segment;

    // S5066-EP5 LFSN form: TX FSN (types 0, 2, 4), RX LWE (types 1, 2, 5) and NEW RX
    // LWE (type 3) take two bytes, most significant first. Not a wire bit: the link's
    // negotiated state decides it (decode takes it from a long_fsn_fn).
    bool long_fsn = false;

    bool operator==(const dpdu& o) const;
    bool operator!=(const dpdu& o) const { return !(*this == o); }
};

// True for the types whose header carries an FSN or RX LWE (0-5).
bool carries_fsn(dpdu_type t);

// Decides, from a received header's addresses, whether its FSN fields are long (the
// link to `source` negotiated S5066-EP5). Null or empty = Edition 3 everywhere.
using long_fsn_fn = std::function<bool(uint32_t source, uint32_t destination)>;

// Smallest address field (bytes) that holds both addresses.
uint8_t address_size_for(uint32_t destination, uint32_t source);
// Value of the 5-bit header size field for this D_PDU.
size_t header_size_field(const dpdu& d);
// Bytes on the wire for this D_PDU.
size_t encoded_size(const dpdu& d);

// Encodes one D_PDU with both CRCs. Throws encode_error naming the offending field.
bytes encode(const dpdu& d);
void encode_into(const dpdu& d, bytes& out); // appends

// Decodes the header of the D_PDU starting at p (sync included) and checks its
// CRC-16. On success *frame_length is the whole D_PDU's length, which may exceed
// `size`, and value.segment is left empty. Returns `truncated` when more bytes are
// needed to judge the header.
decoded<dpdu> decode_dpdu_header(const uint8_t* p,
                                 size_t size,
                                 size_t* frame_length,
                                 const long_fsn_fn* long_fsn = nullptr);

// Decodes exactly one complete D_PDU. A segment whose CRC-32 fails yields
// error segment_crc with the header fields and the damaged segment in value.
decoded<dpdu>
decode_dpdu(const uint8_t* p, size_t size, const long_fsn_fn* long_fsn = nullptr);
// Same, every FSN field read in the form `long_fsn` says.
decoded<dpdu> decode_dpdu(const uint8_t* p, size_t size, bool long_fsn);

} // namespace dl
} // namespace hfstack
} // namespace gr

#endif
