/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

/* The node's journal (node option state_dir): what its ARQ receivers hold, written down
 * as it changes, so that a node that restarts (a crash, kill -9, a power cut) goes on
 * with each peer where it stopped. Without it a restarted node must agree new windows
 * with a FULL RESET, and the peer sends again from their first segment the C_PDUs it
 * had in flight, some of which were already delivered here: delivered twice.
 *
 * Format (docs/node-design.md): a 16-byte header, then records. Every integer is
 * big-endian.
 *   header  "HF5066J1" (8)  node address (4)  version (4) = 1
 *   record  type (1)  length (4)  body (length)  CRC-32 (4, S5066 CRC over type, length
 *           and body)
 *   type 'S' state of one receiver: peer (4), class (1: 0 regular, 1 expedited),
 *           long_fsn (1), RX LWE (2), RX UWE (2), C_PDU ID (1, 255 none), open run
 *           (active 1, drop 1, length 4, bytes), segment count (4), then per segment
 *           FSN (2), flags (1: start 1, end 2, in order 4, drop 8, consumed 16),
 *           length (2), bytes
 *   type 'F' one data D_PDU given to that receiver: peer (4), class (1), long_fsn (1),
 *           segment good (1), the D_PDU as on the air
 *   type 'D' a C_PDU from ARQ handed towards a client that reports its writes: delivery
 *           number (8), the S_UNIDATA_INDICATION (or expedited) as encoded for the client
 *   type 'W' that delivery settled: number (8), written to the client's socket (1: 1,
 *           or 0: the client was gone)
 * Replaying the records through fresh receivers rebuilds what they held; the 'D' records
 * without their 'W' are the deliveries a restart owes its clients. A record cut
 * short, or failing its CRC, at the very end is a write the crash interrupted: nothing
 * that depended on it left the node (the driver makes the journal durable before it
 * hands anything to a client or a modem), so it is dropped. Anything else wrong is a
 * journal_error naming it. Plain C++17: bytes in, bytes out; the node block does the
 * file IO. */
#ifndef HFSTACK_KERNELS_DL_NODE_JOURNAL_H
#define HFSTACK_KERNELS_DL_NODE_JOURNAL_H

#include "arq.h"
#include "dpdu.h"

#include <map>
#include <stdexcept>

namespace gr {
namespace hfstack {
namespace dl {

struct journal_error : std::runtime_error {
    using std::runtime_error::runtime_error;
};
// The journal of another node (a state_dir shared by mistake): not to be overwritten.
struct journal_foreign : journal_error {
    using journal_error::journal_error;
};

constexpr size_t journal_header_size = 16;

bytes journal_header(uint32_t node_address);
bytes journal_state_record(uint32_t peer, const arq_receiver_state& st);
bytes journal_frame_record(uint32_t peer, const dpdu& d, bool segment_ok);
bytes journal_delivery_record(uint64_t delivery, const bytes& indication);
bytes journal_settled_record(uint64_t delivery, bool written);

// What a journal says each peer's receivers hold.
struct journal_peer {
    arq_receiver_state regular, expedited;
};
struct journal_replay {
    std::map<uint32_t, journal_peer> peers;
    // Deliveries handed towards a client and not known to have reached its socket, by
    // number (the order they were handed): the encoded SIS indications.
    std::map<uint64_t, bytes> unsettled;
    uint64_t last_delivery = 0; // the highest delivery number in the journal
    size_t records = 0;
    size_t dropped_tail_bytes = 0; // an interrupted last record
};

// Throws journal_error: not a journal, another node's, another version, a corrupt or
// impossible record before the end.
journal_replay replay_journal(const uint8_t* data, size_t size, uint32_t node_address);
inline journal_replay replay_journal(const bytes& b, uint32_t node_address)
{
    return replay_journal(b.data(), b.size(), node_address);
}

} // namespace dl
} // namespace hfstack
} // namespace gr

#endif
