/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "xmpp_x2x_rcop.h"

#include <algorithm>
#include <stdexcept>

namespace gr {
namespace hfstack {
namespace net {

x2x_rcop_sender::x2x_rcop_sender(uint8_t connection_id,
                                 uint16_t application_id,
                                 size_t max_pdu_bytes)
    : d_connection(connection_id), d_application(application_id), d_max(max_pdu_bytes)
{
    if (connection_id > 15)
        throw std::invalid_argument("x2x-rcop: connection ID must be 0..15");
    if (max_pdu_bytes <= dl::rcop_header_size)
        throw std::invalid_argument(
            "x2x-rcop: PDUs must be longer than their 6-byte header");
}

std::vector<bytes> x2x_rcop_sender::encode(const std::string& stanza)
{
    const size_t room = d_max - dl::rcop_header_size;
    std::vector<bytes> out;
    dl::rcop_pdu p;
    p.header.connection_id = d_connection;
    p.header.updu_id = d_next++;
    p.header.application_id = d_application;
    for (size_t at = 0; at < stanza.size() || out.empty(); at += room) {
        const size_t n = std::min(room, stanza.size() - at);
        p.data.assign(stanza.begin() + long(at), stanza.begin() + long(at + n));
        out.push_back(dl::encode(p));
        p.header.segment_number += 1;
    }
    return out;
}

x2x_rcop_receiver::x2x_rcop_receiver(uint8_t connection_id,
                                     uint16_t application_id,
                                     size_t max_stanza_bytes)
    : d_connection(connection_id), d_application(application_id), d_max(max_stanza_bytes)
{
}

void x2x_rcop_receiver::drop(uint64_t& counter, const std::string& why)
{
    counter += 1;
    d_error = why;
}

std::optional<xml_element> x2x_rcop_receiver::on_pdu(const uint8_t* data, size_t size)
{
    d_counters.pdus += 1;
    const auto h = dl::decode_rcop_header(data, size);
    if (!h) {
        drop(d_counters.short_pdus, "x2x-rcop: " + h.reason);
        return std::nullopt;
    }
    if (h.value.connection_id != d_connection ||
        h.value.application_id != d_application) {
        drop(d_counters.foreign, "x2x-rcop: a PDU of another connection or application");
        return std::nullopt;
    }
    if (h.value.segment_number == 0) {
        if (d_splitter) // reset once a stanza completes: this one did not
            drop(d_counters.truncated,
                 "x2x-rcop: a stanza began before the last one ended");
        d_splitter.emplace(d_max);
        d_splitter->start_implicit(xmpp_ns_server);
        d_updu_id = h.value.updu_id;
        d_next_segment = 0;
    } else if (!d_splitter || h.value.updu_id != d_updu_id ||
               h.value.segment_number != d_next_segment) {
        drop(d_counters.out_of_order, "x2x-rcop: a segment out of sequence");
        d_splitter.reset();
        return std::nullopt;
    }
    d_next_segment += 1;
    std::vector<xmpp_split_event> events;
    const bool ok = d_splitter->feed(
        data + dl::rcop_header_size, size - dl::rcop_header_size, events);
    std::optional<xml_element> stanza;
    for (auto& e : events)
        if (e.what == xmpp_split_event::kind::stanza && !stanza)
            stanza = std::move(e.element);
    if (!ok || events.size() > 1 || (stanza && d_splitter->in_stanza())) {
        drop(d_counters.malformed,
             ok ? "x2x-rcop: more than one stanza in a PDU"
                : "x2x-rcop: " + d_splitter->error());
        d_splitter.reset();
        return std::nullopt;
    }
    if (stanza) {
        d_counters.stanzas += 1;
        d_splitter.reset();
    }
    return stanza;
}

} // namespace net
} // namespace hfstack
} // namespace gr
