/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

/* libFuzzer target: x2x-rcop reassembly (net/xmpp_x2x_rcop.h) fed garbage from the air.
 * The input is cut into records: a kind byte, a length byte, then that many bytes. Kinds
 * 0-5: the bytes are a U_PDU from the node; 6-7: they are a stanza our sender cuts into
 * PDUs of 6 + 8..71 bytes (kind >> 2 sets the size) for a second receiver. Checks the
 * contracts: nothing throws; what the receiver completes is one stanza within the limit
 * that serializes and parses back the same; and a stanza our sender cut comes back whole
 * whenever a splitter finds exactly one stanza and nothing else in its bytes. */
#include "fuzz_support.h"
#include "net/xmpp_x2x_rcop.h"

using namespace gr::hfstack;
using namespace gr::hfstack::net;

namespace {

constexpr size_t max_stanza = 1024;

// The one stanza `text` holds, parsed as the receiver would; nullopt otherwise.
std::optional<xml_element> only_stanza(const std::string& text)
{
    xmpp_splitter sp(max_stanza);
    sp.start_implicit(xmpp_ns_server);
    std::vector<xmpp_split_event> out;
    if (!sp.feed(reinterpret_cast<const uint8_t*>(text.data()), text.size(), out) ||
        out.size() != 1 || sp.in_stanza())
        return std::nullopt;
    return out[0].element;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
    x2x_rcop_receiver air(0, x2x_rcop_application_id, max_stanza);
    x2x_rcop_receiver ours(0, x2x_rcop_application_id, max_stanza);
    for (size_t at = 0; at + 2 <= size;) {
        const uint8_t kind = data[at];
        const size_t n = std::min<size_t>(data[at + 1], size - at - 2);
        const dl::bytes body(data + at + 2, data + at + 2 + n);
        at += 2 + n;
        if (kind % 8 < 6) {
            if (const auto s = air.on_pdu(body.data(), body.size())) {
                const auto again = only_stanza(serialize(*s));
                check(again && serialize(*again) == serialize(*s));
            }
            continue;
        }
        x2x_rcop_sender sender(0, x2x_rcop_application_id, 6 + 8 + (kind >> 2));
        const std::string text(body.begin(), body.end());
        std::optional<xml_element> got;
        size_t completed = 0;
        for (const auto& pdu : sender.encode(text)) {
            check(pdu.size() <= size_t(6 + 8 + (kind >> 2)));
            if (auto s = ours.on_pdu(pdu.data(), pdu.size())) {
                got = std::move(s);
                completed += 1;
            }
        }
        const auto expected = only_stanza(text);
        check(completed <= 1);
        if (expected)
            check(got && serialize(*got) == serialize(*expected));
    }
    return 0;
}
