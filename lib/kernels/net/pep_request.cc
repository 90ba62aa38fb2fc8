/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

// The HF-PEP's connection request on the air, and the status its answer carries.

#include "pep.h"

#include <algorithm>

namespace gr {
namespace hfstack {
namespace net {

const char* to_string(pep_status s)
{
    switch (s) {
    case pep_status::connected:
        return "connected";
    case pep_status::refused:
        return "refused";
    case pep_status::unreachable:
        return "unreachable";
    case pep_status::timed_out:
        return "timed_out";
    case pep_status::forbidden:
        return "forbidden";
    case pep_status::busy:
        return "busy";
    case pep_status::bad_request:
        return "bad_request";
    case pep_status::no_peer:
        return "no_peer";
    }
    return "unknown";
}

namespace {
constexpr uint8_t name_request = 0; // in place of the IP version: a host name follows
} // namespace

bool valid_host_name(const std::string& name)
{
    if (name.empty() || name.size() > pep_max_name)
        return false;
    return std::all_of(name.begin(), name.end(), [](char ch) {
        return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
               (ch >= '0' && ch <= '9') || ch == '-' || ch == '_' || ch == '.';
    });
}

std::string destination_text(const pep_request& r)
{
    return r.name.empty() ? to_string(r.destination) : r.name;
}

bytes encode(const pep_request& r)
{
    if (!r.name.empty()) {
        bytes b = { pep_protocol_version,
                    name_request,
                    uint8_t(r.port >> 8),
                    uint8_t(r.port),
                    uint8_t(r.name.size()) };
        b.insert(b.end(), r.name.begin(), r.name.end());
        return b;
    }
    const size_t n = r.destination.version == 4 ? 4 : 16;
    bytes b(4 + n);
    b[0] = pep_protocol_version;
    b[1] = r.destination.version;
    b[2] = uint8_t(r.port >> 8);
    b[3] = uint8_t(r.port);
    std::copy(r.destination.octets.begin(),
              r.destination.octets.begin() + long(n),
              b.begin() + 4);
    return b;
}

pep_request_parse parse_pep_request(const bytes& b)
{
    pep_request_parse out;
    if (b.size() < 2)
        return out;
    if (b[0] != pep_protocol_version ||
        (b[1] != 4 && b[1] != 6 && b[1] != name_request)) {
        out.what = pep_request_parse::state::bad;
        return out;
    }
    if (b[1] == name_request) {
        if (b.size() < 5)
            return out;
        const size_t n = b[4];
        if (b.size() < 5 + n)
            return out;
        std::string name(b.begin() + 5, b.begin() + 5 + long(n));
        if (!valid_host_name(name)) {
            out.what = pep_request_parse::state::bad;
            return out;
        }
        out.request.name = std::move(name);
        out.request.port = uint16_t(b[2] << 8 | b[3]);
        out.length = 5 + n;
        out.what = pep_request_parse::state::ok;
        return out;
    }
    const size_t n = b[1] == 4 ? 4 : 16;
    if (b.size() < 4 + n)
        return out;
    out.request.destination.version = b[1];
    std::copy(
        b.begin() + 4, b.begin() + 4 + long(n), out.request.destination.octets.begin());
    out.request.port = uint16_t(b[2] << 8 | b[3]);
    out.length = 4 + n;
    out.what = pep_request_parse::state::ok;
    return out;
}

} // namespace net
} // namespace hfstack
} // namespace gr
