/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "deframer.h"

#include <cstring>

namespace gr {
namespace hfstack {
namespace dl {

size_t
dpdu_deframer::parse(const uint8_t* p, size_t size, std::vector<received_dpdu>& out)
{
    size_t i = 0;
    while (i < size) {
        // Hunt for the sync word; a lone 0x90 at the very end may be its first half.
        const void* hit = std::memchr(p + i, sync_byte_0, size - i);
        if (!hit) {
            d_counters.junk_bytes += size - i;
            return size;
        }
        const size_t s = size_t(static_cast<const uint8_t*>(hit) - p);
        d_counters.junk_bytes += s - i;
        i = s;
        if (i + 1 == size)
            return i;
        if (p[i + 1] != sync_byte_1) {
            d_counters.junk_bytes += 1;
            i += 1;
            continue;
        }

        size_t frame_length = 0;
        auto header = decode_dpdu_header(p + i, size - i, &frame_length, &d_long_fsn);
        if (header.error == decode_error::truncated)
            return i; // wait for the rest of the header
        if (!header) {
            if (header.error == decode_error::header_crc)
                d_counters.header_crc_errors += 1;
            else
                d_counters.invalid_headers += 1;
            d_counters.junk_bytes += 1; // step past this false sync and hunt again
            i += 1;
            continue;
        }
        if (size - i < frame_length)
            return i; // header good, segment still arriving

        auto frame = decode_dpdu(p + i, frame_length, &d_long_fsn);
        received_dpdu r;
        r.segment_ok = frame.ok();
        r.stream_offset = d_consumed + i;
        r.length = frame_length;
        r.frame = std::move(frame.value);
        if (!r.segment_ok)
            d_counters.damaged_segments += 1;
        d_counters.dpdus += 1;
        d_counters.dpdu_bytes += frame_length;
        out.push_back(std::move(r));
        i += frame_length;
    }
    return i;
}

void dpdu_deframer::push(const uint8_t* data,
                         size_t size,
                         std::vector<received_dpdu>& out)
{
    d_counters.bytes_in += size;
    if (d_pending.empty()) {
        // Common case: parse the caller's bytes in place and keep only the tail.
        const size_t used = parse(data, size, out);
        d_pending.assign(data + used, data + size);
        d_consumed += used;
        return;
    }
    d_pending.insert(d_pending.end(), data, data + size);
    const size_t used = parse(d_pending.data(), d_pending.size(), out);
    d_pending.erase(d_pending.begin(), d_pending.begin() + used);
    d_consumed += used;
}

void dpdu_deframer::end_of_burst()
{
    if (d_pending.empty())
        return;
    // Only a buffered sync can start a D_PDU; anything else was already counted.
    if (d_pending.size() >= 2 && d_pending[0] == sync_byte_0 &&
        d_pending[1] == sync_byte_1)
        d_counters.truncated += 1;
    d_counters.junk_bytes += d_pending.size();
    d_consumed += d_pending.size();
    d_pending.clear();
}

} // namespace dl
} // namespace hfstack
} // namespace gr
