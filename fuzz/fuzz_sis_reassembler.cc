/* libFuzzer target: a garbage SIS client. Any byte stream, cut into chunks the input
 * chooses, through the SIS reassembler; checks its contracts, not just absence of
 * crashes. */
#include "dl/sis.h"

#include <cstdlib>

using namespace gr::hfstack::dl;

static void check(bool ok)
{
    if (!ok)
        std::abort();
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
    if (size < 2)
        return 0;
    const size_t chunk = 1 + data[0] % 64 * 13;
    // A small limit sometimes, so the oversized path is reachable with short inputs.
    const size_t max_frame = (data[1] & 1) ? 64 : sis_default_max_frame;
    data += 2;
    size -= 2;

    sis_reassembler r(max_frame);
    std::vector<sis_primitive> out;
    for (size_t at = 0; at < size; at += chunk) {
        r.push(data + at, std::min(chunk, size - at), out);
        check(r.buffered() < r.max_frame() + chunk);
    }
    const auto& c = r.counters();
    check(c.bytes_in == size);
    check(c.primitives == out.size());
    for (const auto& p : out) {
        // Everything handed out re-encodes (standard form) and decodes to itself,
        // apart from the decode-only quirk flag.
        sis_primitive want = p;
        want.vendor_padding = false;
        const bytes again = encode(want);
        auto back = decode_sis(again.data(), again.size());
        check(back.ok() && back.value == want);
        check(again.size() <= sis_header_size + sis_max_size_field);
    }
    r.reset();
    check(r.buffered() == 0);
    return 0;
}
