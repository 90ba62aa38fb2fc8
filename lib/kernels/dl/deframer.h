/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

/* Receive deframer: finds D_PDUs in the decoded bytes of received bursts, which may
 * hold bit errors, junk and partial frames. Resynchronises on the 90 EB sync, trusts
 * a header only when its CRC-16 checks, and hands on D_PDUs whose segment CRC-32
 * failed flagged as damaged (ARQ leaves them unacknowledged; non-ARQ with errors
 * may still deliver them) instead of dropping them silently. */
#ifndef HFSTACK_KERNELS_DL_DEFRAMER_H
#define HFSTACK_KERNELS_DL_DEFRAMER_H

#include "dpdu.h"

namespace gr {
namespace hfstack {
namespace dl {

struct deframer_counters {
    uint64_t bytes_in = 0;
    uint64_t dpdus = 0;             // D_PDUs with a good header, damaged ones included
    uint64_t dpdu_bytes = 0;        // bytes of those D_PDUs
    uint64_t damaged_segments = 0;  // header good, segment CRC-32 failed
    uint64_t header_crc_errors = 0; // sync found, header CRC-16 failed
    uint64_t invalid_headers = 0;   // sync found, type or sizes impossible
    uint64_t truncated = 0;         // D_PDUs cut off by the end of a burst
    uint64_t junk_bytes = 0;        // bytes that belonged to no good D_PDU
};

struct received_dpdu {
    dpdu frame;
    bool segment_ok = true;     // false: segment CRC-32 failed, bytes as received
    uint64_t stream_offset = 0; // position of the sync in all bytes pushed so far
    size_t length = 0;          // bytes of the D_PDU on the wire
};

class dpdu_deframer
{
public:
    // Appends every D_PDU these bytes complete to `out`. Never throws on any input;
    // holds at most one partial D_PDU (max_dpdu_size bytes) between calls.
    void push(const uint8_t* data, size_t size, std::vector<received_dpdu>& out);
    std::vector<received_dpdu> push(const uint8_t* data, size_t size)
    {
        std::vector<received_dpdu> out;
        push(data, size, out);
        return out;
    }
    // The burst ended: a partial D_PDU still held can never complete.
    void end_of_burst();

    // S5066-EP5: which received headers carry long FSN fields (by their addresses).
    // Empty (the default) = Edition 3 for every D_PDU.
    void set_long_fsn(long_fsn_fn f) { d_long_fsn = std::move(f); }

    const deframer_counters& counters() const { return d_counters; }
    size_t buffered() const { return d_pending.size(); }

private:
    // Parses p[0..size); returns how many bytes were consumed.
    size_t parse(const uint8_t* p, size_t size, std::vector<received_dpdu>& out);

    bytes d_pending;         // unconsumed tail of the stream
    uint64_t d_consumed = 0; // stream offset of d_pending[0]
    deframer_counters d_counters;
    long_fsn_fn d_long_fsn;
};

} // namespace dl
} // namespace hfstack
} // namespace gr

#endif
