/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

/* libFuzzer target: any byte stream, cut into chunks the input chooses, through the
 * D_PDU deframer. Checks the deframer's contracts, not just absence of crashes. */
#include "dl/deframer.h"

#include <cstdlib>

using namespace gr::hfstack::dl;

static void check(bool ok)
{
    if (!ok)
        std::abort();
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
    if (size < 1)
        return 0;
    // First byte picks the chunk size, so split frames are explored too; its top bit
    // puts the deframer in S5066-EP5 mode for odd source addresses (long FSNs).
    const size_t chunk = 1 + data[0] % 64 * 17;
    const bool lfsn = data[0] & 0x80;
    data += 1;
    size -= 1;

    const long_fsn_fn odd_sources = [](uint32_t source, uint32_t) {
        return (source & 1) != 0;
    };
    dpdu_deframer f;
    if (lfsn)
        f.set_long_fsn(odd_sources);
    std::vector<received_dpdu> out;
    for (size_t at = 0; at < size; at += chunk) {
        f.push(data + at, std::min(chunk, size - at), out);
        check(f.buffered() <= max_dpdu_size);
    }
    const auto& c = f.counters();
    check(c.bytes_in == c.dpdu_bytes + c.junk_bytes + f.buffered());
    for (const auto& r : out) {
        check(r.stream_offset + r.length <= size);
        check(data[r.stream_offset] == sync_byte_0);
        // Whatever was accepted must survive a re-encode and decode unchanged.
        if (r.segment_ok) {
            const bytes again = encode(r.frame);
            auto back =
                decode_dpdu(again.data(), again.size(), lfsn ? &odd_sources : nullptr);
            check(back.ok() && back.value == r.frame);
        }
    }
    f.end_of_burst();
    check(f.buffered() == 0);
    return 0;
}
