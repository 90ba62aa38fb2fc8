/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

/* SLEP PDUs on the wire (docs/slep.md has the byte layout): our own format for the
 * services of Isode's SIS Layer Extension Protocol (S5066-APP3), whose byte layout is
 * not public. One SLEP PDU is one U_PDU on the SLEP SAP. Every field big-endian.
 *
 *   byte 0   type (bits 7-4) | flags (bits 3-0)
 *   byte 1   destination extended address (0 = none)
 *   byte 2   source extended address (0 = none)
 *   then, by type:
 *   DATAGRAM  1  data                                         flags: C
 *   RELIABLE  2  id (2)  data                                 flags: C
 *   OPEN      3  stream (4)  incarnation (4)  limit (4)  data  flags: C (both
 * directions), F DATA      4  stream (4)  offset (4)  data                 flags: R, F
 *   WINDOW    5  stream (4)  limit (4)                        flags: R
 *   RESET     6  stream (4)  reason (1)  text                 flags: R
 *   HELLO     7  incarnation (4)  seen (4)                    flags: none
 *
 *   C (bit 0): DEFLATE (RFC 1951, raw): a datagram's data alone; a stream's bytes as one
 *              deflate stream per direction, flushed at each PDU.
 *   F (bit 1): the sender's last byte of the stream ends this PDU (half-close).
 *   R (bit 3): sent by the side that accepted the stream (clear: by the side that opened
 *              it), so both sides may open streams with the same number.
 * Plain C++17: decoding never throws on bytes from the air. */
#ifndef HFSTACK_KERNELS_NET_SLEP_WIRE_H
#define HFSTACK_KERNELS_NET_SLEP_WIRE_H

#include "dl/codec.h"

#include <cstdint>
#include <string>

namespace gr {
namespace hfstack {
namespace net {

using dl::bytes;

enum class slep_type : uint8_t {
    datagram = 1,
    reliable = 2,
    open = 3,
    data = 4,
    window = 5,
    reset = 6,
    hello = 7, // the sender's incarnation and the receiver's as the sender knows it
    // A stream's bytes below offset have all arrived (acknowledgement by the far SLEP,
    // where the node's delivery confirmation is not asked for).
    ack = 8,
    // DATA that also carries an ACK for a stream the receiver of this PDU opened: the
    // answer acknowledges the question without a PDU (a D_PDU on the air) of its own.
    data_ack = 9,
};
const char* to_string(slep_type t);

namespace slep_flag {
constexpr uint8_t compressed = 0x1;
constexpr uint8_t fin = 0x2;
constexpr uint8_t ack_requested = 0x4; // OPEN, DATA, DATA_ACK: answer with an ACK
constexpr uint8_t responder = 0x8;
} // namespace slep_flag

// Why a stream was reset (RESET's reason byte).
enum class slep_reset_reason : uint8_t {
    aborted = 0,        // the application reset it
    refused = 1,        // nobody listens on the destination extended address
    unknown_stream = 2, // no such stream here (the other side restarted, or it ended)
    peer_restarted = 3, // the other side started anew: its old streams are gone
    timed_out = 4,      // no progress for give_up_s (the link stayed down)
    protocol_error = 5, // data beyond the window, a second OPEN, bad compression
    no_resources = 6,   // too many streams
};
const char* to_string(slep_reset_reason r);

struct slep_pdu {
    slep_type type = slep_type::datagram;
    uint8_t flags = 0;
    uint8_t to = 0, from = 0; // extended addresses
    uint16_t id = 0;          // RELIABLE
    uint32_t stream = 0;      // OPEN, DATA, WINDOW, RESET, ACK, DATA_ACK
    uint32_t incarnation = 0; // OPEN, HELLO: the sender's
    uint32_t seen = 0; // HELLO: the receiver's incarnation as the sender knows it, 0 none
    uint32_t offset = 0; // DATA, DATA_ACK; ACK: every byte below it has arrived
    uint32_t ack_stream = 0, ack_offset = 0; // DATA_ACK: the ACK it carries
    uint32_t limit = 0;                      // OPEN, WINDOW
    uint8_t reason = 0;                      // RESET
    bytes data; // DATAGRAM, RELIABLE, OPEN, DATA; RESET: text

    bool has(uint8_t flag) const { return (flags & flag) != 0; }
};

constexpr size_t slep_common_header = 3;
// Header bytes before the data of each type.
size_t slep_header_size(slep_type t);
constexpr size_t slep_max_reset_text = 64;

bytes encode(const slep_pdu& p);
// Unknown types, short PDUs, flags a type does not define and over-long RESET text are
// failures naming the field.
dl::decoded<slep_pdu> decode_slep(const uint8_t* data, size_t size);
inline dl::decoded<slep_pdu> decode_slep(const bytes& b)
{
    return decode_slep(b.data(), b.size());
}

// RFC 1982 serial-number order of 32-bit stream offsets: a before b.
inline bool serial_less(uint32_t a, uint32_t b)
{
    return a != b && uint32_t(b - a) < 0x80000000u;
}

} // namespace net
} // namespace hfstack
} // namespace gr

#endif
