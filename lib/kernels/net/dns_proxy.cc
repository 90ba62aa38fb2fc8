/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "dns_proxy.h"

#include <algorithm>
#include <cctype>
#include <sstream>
#include <stdexcept>

namespace gr {
namespace hfstack {
namespace net {

namespace {

constexpr size_t header_size = 12;
constexpr uint16_t type_a = 1, type_soa = 6, type_aaaa = 28, type_opt = 41;
constexpr uint8_t rcode_formerr = 1, rcode_servfail = 2, rcode_notimp = 4;

uint16_t get16(const bytes& b, size_t at) { return uint16_t(b[at] << 8 | b[at + 1]); }
uint32_t get32(const bytes& b, size_t at)
{
    return uint32_t(b[at]) << 24 | uint32_t(b[at + 1]) << 16 | uint32_t(b[at + 2]) << 8 |
           b[at + 3];
}
void put16(bytes& b, size_t at, uint16_t v)
{
    b[at] = uint8_t(v >> 8);
    b[at + 1] = uint8_t(v);
}
void put32(bytes& b, size_t at, uint32_t v)
{
    for (int i = 0; i < 4; ++i)
        b[at + size_t(i)] = uint8_t(v >> (24 - 8 * i));
}

// Offset just past the (possibly compressed) name at `at`, or 0 when it runs off the
// message or loops.
size_t skip_name(const bytes& m, size_t at)
{
    for (int labels = 0; labels < 128; ++labels) {
        if (at >= m.size())
            return 0;
        const uint8_t len = m[at];
        if ((len & 0xC0) == 0xC0)
            return at + 2 <= m.size() ? at + 2 : 0; // a pointer ends the name here
        if (len & 0xC0)
            return 0;
        if (len == 0)
            return at + 1;
        at += 1 + size_t(len);
    }
    return 0;
}

// Calls f(offset of the record's TTL, type, rdata offset, rdlength) for every record
// after the question; false when the message is malformed.
template <typename F>
bool for_each_record(const bytes& m, size_t question_end, F f)
{
    const unsigned count = unsigned(get16(m, 6)) + get16(m, 8) + get16(m, 10);
    size_t at = question_end;
    for (unsigned i = 0; i < count; ++i) {
        at = skip_name(m, at);
        if (!at || at + 10 > m.size())
            return false;
        const uint16_t type = get16(m, at);
        const uint16_t rdlength = get16(m, at + 8);
        if (at + 10 + rdlength > m.size())
            return false;
        f(at + 4, type, at + 10, size_t(rdlength));
        at += 10 + rdlength;
    }
    return true;
}

bytes encode_name(const std::string& name)
{
    bytes out;
    std::string label;
    for (char ch : name + ".") {
        if (ch == '.') {
            if (!label.empty()) {
                out.push_back(uint8_t(label.size()));
                out.insert(out.end(), label.begin(), label.end());
            }
            label.clear();
        } else {
            label.push_back(ch);
        }
    }
    out.push_back(0);
    return out;
}

} // namespace

bool dns_question::operator<(const dns_question& o) const
{
    return std::tie(name, type, klass) < std::tie(o.name, o.type, o.klass);
}

bool dns_question::operator==(const dns_question& o) const
{
    return name == o.name && type == o.type && klass == o.klass;
}

dl::decoded<dns_query_info> parse_dns(const bytes& m)
{
    using result = dl::decoded<dns_query_info>;
    if (m.size() < header_size)
        return result::failure(dl::decode_error::truncated, "DNS message under 12 bytes");
    if (m.size() > dns_max_message)
        return result::failure(dl::decode_error::oversized,
                               "DNS message over 4096 bytes");
    dns_query_info info;
    info.id = get16(m, 0);
    const uint16_t flags = get16(m, 2);
    info.is_response = flags & 0x8000;
    info.opcode = uint8_t((flags >> 11) & 0xF);
    info.rcode = uint8_t(flags & 0xF);
    if (get16(m, 4) != 1)
        return result::failure(dl::decode_error::bad_field, "not exactly one question");
    size_t at = header_size;
    std::string name;
    for (;;) {
        if (at >= m.size())
            return result::failure(dl::decode_error::truncated,
                                   "question name cut short");
        const uint8_t len = m[at];
        if (len & 0xC0)
            return result::failure(dl::decode_error::bad_field,
                                   "compressed or extended label in the question");
        if (len == 0) {
            ++at;
            break;
        }
        if (at + 1 + len > m.size())
            return result::failure(dl::decode_error::truncated, "label cut short");
        for (size_t i = 0; i < len; ++i) {
            const char ch = char(m[at + 1 + i]);
            if (ch == '.' || ch == '\0')
                return result::failure(dl::decode_error::bad_field,
                                       "a label holds '.' or NUL");
        }
        if (!name.empty())
            name.push_back('.');
        for (size_t i = 0; i < len; ++i)
            name.push_back(char(std::tolower(static_cast<unsigned char>(m[at + 1 + i]))));
        at += 1 + len;
        if (at - header_size > 255)
            return result::failure(dl::decode_error::oversized, "name over 255 bytes");
    }
    if (at + 4 > m.size())
        return result::failure(dl::decode_error::truncated,
                               "question type and class cut short");
    info.question.name = name;
    info.question.type = get16(m, at);
    info.question.klass = get16(m, at + 2);
    info.question_end = at + 4;
    return result::success(std::move(info));
}

std::optional<uint32_t> dns_answer_ttl(const bytes& m)
{
    const auto info = parse_dns(m);
    if (!info)
        return std::nullopt;
    std::optional<uint32_t> ttl;
    const bool ok =
        for_each_record(m,
                        info.value.question_end,
                        [&](size_t ttl_at, uint16_t type, size_t rdata, size_t rdlen) {
                            if (type == type_opt)
                                return;
                            uint32_t t = get32(m, ttl_at);
                            if (type == type_soa) { // RFC 2308: the negative TTL is the
                                                    // SOA's minimum, at most its TTL
                                size_t at = skip_name(m, rdata);
                                at = at ? skip_name(m, at) : 0;
                                if (at && at + 20 <= rdata + rdlen)
                                    t = std::min(t, get32(m, at + 16));
                            }
                            ttl = ttl ? std::min(*ttl, t) : t;
                        });
    return ok ? ttl : std::nullopt;
}

bytes dns_error_response(const bytes& query, const dns_query_info& info, uint8_t rcode)
{
    // The header (its id) always; the question when it could be read.
    const size_t keep = std::min(std::max(info.question_end, header_size), query.size());
    bytes r(query.begin(), query.begin() + long(keep));
    r.resize(std::max(r.size(), header_size), 0);
    const uint16_t rd = get16(query, 2) & 0x0100;
    put16(r, 2, uint16_t(0x8000 | (uint16_t(info.opcode) << 11) | rd | 0x0080 | rcode));
    put16(r, 4, info.question_end ? 1 : 0);
    put16(r, 6, 0);
    put16(r, 8, 0);
    put16(r, 10, 0);
    return r;
}

bytes dns_address_response(const bytes& query,
                           const dns_query_info& info,
                           const ip_address& address,
                           uint32_t ttl)
{
    bytes r = dns_error_response(query, info, 0);
    put16(r, 2, uint16_t(get16(r, 2) | 0x0400)); // authoritative for what we were told
    put16(r, 6, 1);
    const size_t n = address.version == 4 ? 4 : 16;
    bytes rr = { 0xC0, 0x0C, 0, 0, 0, 1, 0, 0, 0, 0, 0, uint8_t(n) };
    put16(rr, 2, address.version == 4 ? type_a : type_aaaa);
    put32(rr, 6, ttl);
    rr.insert(rr.end(), address.octets.begin(), address.octets.begin() + long(n));
    r.insert(r.end(), rr.begin(), rr.end());
    return r;
}

bytes dns_rewrite(const bytes& response, uint16_t id, std::optional<uint32_t> ttl)
{
    bytes r = response;
    if (r.size() < header_size)
        return r;
    put16(r, 0, id);
    const auto info = parse_dns(r);
    if (ttl && info)
        for_each_record(r,
                        info.value.question_end,
                        [&](size_t ttl_at, uint16_t type, size_t, size_t) {
                            if (type != type_opt && get32(r, ttl_at) > *ttl)
                                put32(r, ttl_at, *ttl);
                        });
    return r;
}

void set_dns_static_names(dns_proxy_config& c, const std::string& text)
{
    std::istringstream in(text);
    std::string item;
    std::map<std::string, ip_address> names; // the config changes only if all are good
    while (in >> item) {
        const auto eq = item.find('=');
        const auto address = eq == std::string::npos
                                 ? std::nullopt
                                 : parse_ip_address(item.substr(eq + 1));
        if (!address || eq == 0)
            throw std::invalid_argument("static name \"" + item +
                                        "\" is not NAME=ADDRESS");
        std::string name = item.substr(0, eq);
        std::transform(name.begin(), name.end(), name.begin(), [](unsigned char ch) {
            return char(std::tolower(ch));
        });
        if (!name.empty() && name.back() == '.')
            name.pop_back();
        names[name] = *address;
    }
    c.static_names = std::move(names);
}

// ---- the proxy ----------------------------------------------------------------------

dns_proxy::dns_proxy(dns_proxy_config config) : d_cfg(std::move(config)) {}

dns_proxy_actions dns_proxy::take_actions()
{
    dns_proxy_actions a;
    std::swap(a, d_actions);
    return a;
}

void dns_proxy::answer(const waiter& w,
                       const bytes& response,
                       std::optional<uint32_t> ttl)
{
    d_actions.replies.push_back({ w.client, dns_rewrite(response, w.id, ttl) });
}

void dns_proxy::on_query(uint64_t client, const bytes& query, double now)
{
    d_now = now;
    d_counters.queries += 1;
    const auto parsed = parse_dns(query);
    if (!parsed) {
        d_counters.malformed += 1;
        if (query.size() >= header_size && query.size() <= dns_max_message &&
            !(get16(query, 2) & 0x8000)) {
            dns_query_info bare;
            bare.id = get16(query, 0);
            bare.opcode = uint8_t((get16(query, 2) >> 11) & 0xF);
            d_actions.replies.push_back(
                { client, dns_error_response(query, bare, rcode_formerr) });
        }
        return;
    }
    const auto& info = parsed.value;
    if (info.is_response) {
        d_counters.malformed += 1;
        return;
    }
    const waiter w{ client, info.id, query };
    if (info.opcode != 0) {
        d_counters.refused += 1;
        d_actions.replies.push_back(
            { client, dns_error_response(query, info, rcode_notimp) });
        return;
    }
    const auto fixed = d_cfg.static_names.find(info.question.name);
    if (fixed != d_cfg.static_names.end() &&
        (info.question.type == (fixed->second.version == 4 ? type_a : type_aaaa))) {
        d_counters.static_answers += 1;
        d_actions.replies.push_back(
            { client,
              dns_address_response(
                  query, info, fixed->second, uint32_t(d_cfg.min_ttl_s)) });
        return;
    }
    const auto hit = d_cache.find(info.question);
    if (hit != d_cache.end() && now < hit->second.expires) {
        d_counters.cache_hits += 1;
        answer(
            w, hit->second.response, uint32_t(std::max(1.0, hit->second.expires - now)));
        return;
    }
    if (hit != d_cache.end() && now < hit->second.expires + d_cfg.max_stale_s) {
        // RFC 8767: the stale answer now, a fresh one fetched behind it.
        d_counters.stale_served += 1;
        answer(w, hit->second.response, d_cfg.stale_ttl);
        if (!d_in_flight.count(info.question))
            forward(info.question, now);
        return;
    }
    auto flying = d_in_flight.find(info.question);
    if (flying != d_in_flight.end()) {
        auto& ws = flying->second.waiters;
        const bool again = std::any_of(ws.begin(), ws.end(), [&](const waiter& x) {
            return x.client == client && x.id == info.id;
        });
        if (again) {
            d_counters.retries_absorbed += 1;
        } else {
            d_counters.coalesced += 1;
            ws.push_back(w);
        }
        return;
    }
    if (d_in_flight.size() >= d_cfg.max_in_flight) {
        d_counters.refused += 1;
        d_actions.replies.push_back(
            { client, dns_error_response(query, info, rcode_servfail) });
        return;
    }
    forward(info.question, now);
    d_in_flight[info.question].waiters.push_back(w);
}

void dns_proxy::forward(const dns_question& q, double now)
{
    uint32_t request;
    do {
        request = d_next_request;
        d_next_request = d_next_request == 0xFFFF ? 1 : d_next_request + 1;
    } while (d_by_request.count(request));
    bytes m(header_size, 0);
    put16(m, 0, uint16_t(request));
    put16(m, 2, 0x0100); // recursion desired
    put16(m, 4, 1);
    const bytes name = encode_name(q.name);
    m.insert(m.end(), name.begin(), name.end());
    m.resize(m.size() + 4);
    put16(m, m.size() - 4, q.type);
    put16(m, m.size() - 2, q.klass);
    auto& f = d_in_flight[q];
    f.request = request;
    f.sent = now;
    d_by_request[request] = q;
    d_counters.forwarded += 1;
    d_actions.forwards.push_back({ request, std::move(m) });
}

void dns_proxy::on_answer(uint32_t request, const bytes& response, double now)
{
    d_now = now;
    const auto by = d_by_request.find(request);
    const auto parsed = parse_dns(response);
    if (by == d_by_request.end() || !parsed || !parsed.value.is_response ||
        !(parsed.value.question == by->second)) {
        d_counters.malformed += 1;
        return;
    }
    const dns_question q = by->second;
    d_by_request.erase(by);
    auto flying = d_in_flight.find(q);
    if (flying == d_in_flight.end())
        return;
    const auto waiters = std::move(flying->second.waiters);
    d_in_flight.erase(flying);
    d_counters.answers += 1;
    const uint8_t rcode = parsed.value.rcode;
    if (rcode == rcode_servfail) {
        // A failed lookup over there: what we had, however stale, is better.
        const auto hit = d_cache.find(q);
        for (const auto& w : waiters)
            answer(w,
                   hit != d_cache.end() ? hit->second.response : response,
                   hit != d_cache.end() ? std::optional<uint32_t>(d_cfg.stale_ttl)
                                        : std::nullopt);
        return;
    }
    const auto ttl = dns_answer_ttl(response);
    const double keep = std::clamp(
        ttl ? double(*ttl) : d_cfg.negative_ttl_s, d_cfg.min_ttl_s, d_cfg.max_ttl_s);
    if (d_cache.size() >= d_cfg.max_cache_entries && !d_cache.count(q)) {
        // Full: the entry that expires first makes room.
        auto oldest = std::min_element(
            d_cache.begin(), d_cache.end(), [](const auto& a, const auto& b) {
                return a.second.expires < b.second.expires;
            });
        d_cache.erase(oldest);
    }
    d_cache[q] = cached{ response, now, now + keep };
    for (const auto& w : waiters)
        answer(w, response, uint32_t(keep));
}

void dns_proxy::on_question(const bytes& question, uint64_t from, double now)
{
    d_now = now;
    const auto parsed = parse_dns(question);
    if (!parsed || parsed.value.is_response) {
        d_counters.malformed += 1;
        return;
    }
    const uint64_t request = d_next_lookup++;
    d_lookups[request] = { from, question };
    d_counters.lookups += 1;
    d_actions.lookups.push_back({ request, question });
}

void dns_proxy::resolved(uint64_t request, const bytes& response, double now)
{
    d_now = now;
    const auto it = d_lookups.find(request);
    if (it == d_lookups.end())
        return;
    const auto asked = parse_dns(it->second.query);
    const auto got = parse_dns(response);
    bytes out;
    if (got && got.value.is_response && got.value.question == asked.value.question)
        out = dns_rewrite(response, asked.value.id, std::nullopt);
    else
        out = dns_error_response(it->second.query, asked.value, rcode_servfail);
    d_actions.answers_back.push_back({ it->second.from, std::move(out) });
    d_lookups.erase(it);
}

void dns_proxy::on_timer(double now)
{
    d_now = now;
    for (auto it = d_in_flight.begin(); it != d_in_flight.end();) {
        if (now - it->second.sent < d_cfg.forward_timeout_s) {
            ++it;
            continue;
        }
        d_counters.timeouts += 1;
        const auto hit = d_cache.find(it->first);
        for (const auto& w : it->second.waiters) {
            const auto info = parse_dns(w.query);
            if (hit != d_cache.end())
                answer(w, hit->second.response, d_cfg.stale_ttl);
            else
                d_actions.replies.push_back(
                    { w.client,
                      dns_error_response(w.query, info.value, rcode_servfail) });
        }
        d_by_request.erase(it->second.request);
        it = d_in_flight.erase(it);
    }
    for (auto it = d_cache.begin(); it != d_cache.end();)
        it = now >= it->second.expires + d_cfg.max_stale_s ? d_cache.erase(it)
                                                           : std::next(it);
}

double dns_proxy::next_deadline() const
{
    double t = std::numeric_limits<double>::infinity();
    for (const auto& [q, f] : d_in_flight)
        t = std::min(t, f.sent + d_cfg.forward_timeout_s);
    return t;
}

} // namespace net
} // namespace hfstack
} // namespace gr
