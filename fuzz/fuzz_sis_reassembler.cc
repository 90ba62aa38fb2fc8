/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

/* libFuzzer target: a garbage SIS client. Any byte stream, cut into chunks the input
 * chooses, through the SIS reassembler; checks its contracts, not just absence of
 * crashes. A second mode builds the stream from the input as a sequence of frames
 * (valid ones, oversized ones whose bodies hold whole valid frames and sync bytes,
 * garbage without sync bytes) and checks that exactly the top-level valid frames come
 * out: no primitive may be produced from inside another frame (docs/node-design.md,
 * "SIS server and conformance"). */
#include "dl/sis.h"

#include <cstdlib>

using namespace gr::hfstack::dl;

static void check(bool ok)
{
    if (!ok)
        std::abort();
}

namespace {

// Reads the input as a little program; runs out gracefully.
struct reader {
    const uint8_t* p;
    size_t n;
    uint8_t byte() { return n ? (--n, *p++) : 0; }
    bool empty() const { return n == 0; }
};

sis_primitive small_primitive(reader& in)
{
    sis_primitive p;
    switch (in.byte() % 4) {
    case 0:
        p.type = sis_type::keep_alive;
        break;
    case 1:
        p.type = sis_type::bind_request;
        p.sap = in.byte() & 0xF;
        p.service_type.tx_mode = sis_tx_mode::arq;
        break;
    case 2:
        p.type = sis_type::data_flow_off;
        break;
    default:
        p.type = sis_type::unidata_request;
        p.destination_sap = in.byte() & 0xF;
        p.destination = sis_address{ in.byte(), 7 };
        p.payload.assign(in.byte() % 40, in.byte());
        break;
    }
    return p;
}

void structured(reader in, size_t chunk)
{
    const size_t max_frame = 256;
    // A first frame settles the edition (Edition 3), as any real session's BIND does.
    sis_primitive first;
    first.type = sis_type::keep_alive;
    bytes stream = encode(first);
    std::vector<sis_primitive> want_out{ first }, want_answers;
    while (!in.empty() && stream.size() < 1 << 16) {
        switch (in.byte() % 3) {
        case 0: { // a valid frame
            auto p = small_primitive(in);
            const bytes f = encode(p);
            if (f.size() > max_frame)
                break;
            stream.insert(stream.end(), f.begin(), f.end());
            want_out.push_back(p);
            break;
        }
        case 1: { // an oversized UNIDATA_REQUEST whose U_PDU holds frames and syncs
            sis_primitive big;
            big.type = in.byte() & 1 ? sis_type::unidata_request
                                     : sis_type::expedited_unidata_request;
            big.destination_sap = in.byte() & 0xF;
            big.destination = sis_address{ uint32_t(in.byte()) << 8, 6 };
            while (encode(big).size() <= max_frame) {
                if (in.byte() & 1) {
                    const bytes inner = encode(small_primitive(in));
                    big.payload.insert(big.payload.end(), inner.begin(), inner.end());
                } else {
                    big.payload.push_back(0x90);
                    big.payload.push_back(0xEB);
                }
            }
            const bytes f = encode(big);
            stream.insert(stream.end(), f.begin(), f.end());
            sis_primitive answer;
            answer.type = big.type == sis_type::unidata_request
                              ? sis_type::unidata_request_rejected
                              : sis_type::expedited_unidata_request_rejected;
            answer.reason = uint8_t(sis_unidata_rejected_reason::updu_larger_than_mtu);
            answer.destination_sap = big.destination_sap;
            answer.destination = big.destination;
            want_answers.push_back(answer);
            break;
        }
        default: { // garbage that holds no sync byte
            const size_t n = in.byte() % 16;
            for (size_t i = 0; i < n; ++i) {
                uint8_t b = in.byte();
                stream.push_back(b == 0x90 ? 0x91 : b);
            }
            break;
        }
        }
    }
    sis_reassembler r(max_frame);
    std::vector<sis_primitive> out;
    for (size_t at = 0; at < stream.size(); at += chunk)
        r.push(stream.data() + at, std::min(chunk, stream.size() - at), out);
    check(out == want_out);
    check(r.take_answers() == want_answers);
    check(r.skipping() == 0);
    check(r.counters().oversized == want_answers.size());
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
    if (size < 2)
        return 0;
    const size_t chunk = 1 + data[0] % 64 * 13;
    if (data[1] & 2) {
        structured(reader{ data + 2, size - 2 }, chunk);
        return 0;
    }
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
    for (const auto& a : r.take_answers())
        check(a.type == sis_type::bind_rejected ||
              a.type == sis_type::unidata_request_rejected ||
              a.type == sis_type::expedited_unidata_request_rejected);
    r.reset();
    check(r.buffered() == 0 && r.skipping() == 0);
    return 0;
}
