/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

/* The DNS proxy of the HF-PEP, as a sans-IO kernel, both halves:
 *
 *   near side: answers local queries from a cache; on a miss sends the question once
 *     across HF (identical questions in flight are coalesced, a client's retries are
 *     absorbed), caches the answer for its TTL, and serves a stale answer (RFC 8767)
 *     for up to max_stale_s, at once, while a fresh one is fetched; names configured
 *     statically are answered locally.
 *   far side: turns a question from the air into a lookup for the system resolver (the
 *     driver) and sends the answer back.
 *
 * The kernel does not know how questions cross: it emits `forward` (question bytes, a
 * request id) and takes `on_answer`; the driver carries them (as SLEP reliable
 * datagrams). DNS messages are parsed only as far as needed: header, one question,
 * the TTLs of the answer records. Malformed queries (bad labels, compression in the
 * question, oversize) get FORMERR or are dropped, counted.
 *
 * Plain C++17: `now` in seconds as a parameter, actions out, no clock, socket or thread.
 */
#ifndef HFSTACK_KERNELS_NET_DNS_PROXY_H
#define HFSTACK_KERNELS_NET_DNS_PROXY_H

#include "dl/codec.h"
#include "ip_packet.h"

#include <cstdint>
#include <deque>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace gr {
namespace hfstack {
namespace net {

using dl::bytes;

constexpr size_t dns_max_message = 4096; // larger queries or answers are refused

struct dns_question {
    std::string name; // lower case, dotted, no trailing dot ("" for the root)
    uint16_t type = 1, klass = 1;
    bool operator<(const dns_question& o) const;
    bool operator==(const dns_question& o) const;
};

struct dns_query_info {
    uint16_t id = 0;
    bool is_response = false;
    uint8_t opcode = 0, rcode = 0;
    dns_question question;
    size_t question_end = 0; // offset just past the question
};

// A query or response with exactly one question; failure names what is wrong.
dl::decoded<dns_query_info> parse_dns(const bytes& message);
// The smallest TTL of the answer, authority and additional records (OPT excluded), or
// nullopt when there is none (a negative answer: the SOA's minimum is used if present).
std::optional<uint32_t> dns_answer_ttl(const bytes& response);
// A response to `query` (its id, question, RD) with this rcode and no records.
bytes dns_error_response(const bytes& query, const dns_query_info& info, uint8_t rcode);
// A response with one A or AAAA record for the question.
bytes dns_address_response(const bytes& query,
                           const dns_query_info& info,
                           const ip_address& address,
                           uint32_t ttl);
// `response` with its id replaced and every record TTL lowered to at most `ttl`.
bytes dns_rewrite(const bytes& response, uint16_t id, std::optional<uint32_t> ttl);

struct dns_proxy_config {
    double min_ttl_s = 60;       // answers are kept at least this long
    double max_ttl_s = 86400;    // and at most this long
    double negative_ttl_s = 300; // NXDOMAIN / NODATA without an SOA
    double max_stale_s = 86400;  // RFC 8767: stale answers served up to this long
    uint32_t stale_ttl = 30;     // TTL given to a stale answer (RFC 8767 suggests 30 s)
    double forward_timeout_s =
        600; // a question unanswered this long: SERVFAIL to its clients
    size_t max_cache_entries = 10000;
    size_t max_in_flight = 1000;
    std::map<std::string, ip_address> static_names; // name -> address (A or AAAA)
};
// "name=address ..." for static_names; throws std::invalid_argument.
void set_dns_static_names(dns_proxy_config& c, const std::string& text);

struct dns_proxy_actions {
    struct reply {
        uint64_t client = 0; // the driver's handle of whoever asked (socket, address)
        bytes message;
    };
    struct forward {
        uint32_t request = 0; // echo it in on_answer
        bytes question;       // a query for the far side (id 0)
    };
    struct lookup {
        uint64_t request = 0; // far side: echo it in resolved()
        bytes query;
    };
    std::vector<reply> replies;
    std::vector<forward> forwards;
    std::vector<lookup> lookups;
    struct answer_back {
        uint64_t to = 0; // the `from` of on_question
        bytes message;   // the answer, with the question's id
    };
    std::vector<answer_back> answers_back;
};

struct dns_proxy_counters {
    uint64_t queries = 0, cache_hits = 0, stale_served = 0, static_answers = 0;
    uint64_t forwarded = 0, coalesced = 0, retries_absorbed = 0, answers = 0;
    uint64_t malformed = 0, refused = 0, timeouts = 0, lookups = 0;
};

class dns_proxy
{
public:
    explicit dns_proxy(dns_proxy_config config = {});

    // Near side.
    void on_query(uint64_t client, const bytes& query, double now);
    void on_answer(uint32_t request, const bytes& response, double now);
    // Far side: a question from the air (its id is the near side's request number, kept
    // in the answer), and the system resolver's answer to a lookup (empty: it failed,
    // the asker gets SERVFAIL).
    void on_question(const bytes& question, uint64_t from, double now);
    void resolved(uint64_t request, const bytes& response, double now);

    void on_timer(double now);
    double next_deadline() const;
    dns_proxy_actions take_actions();
    const dns_proxy_counters& counters() const { return d_counters; }
    size_t cache_size() const { return d_cache.size(); }

private:
    struct cached {
        bytes response;
        double stored = 0, expires = 0;
    };
    struct waiter {
        uint64_t client;
        uint16_t id;
        bytes query;
    };
    struct in_flight {
        uint32_t request;
        double sent;
        std::vector<waiter> waiters;
    };
    void forward(const dns_question& q, double now);
    void answer(const waiter& w, const bytes& response, std::optional<uint32_t> ttl);

    dns_proxy_config d_cfg;
    std::map<dns_question, cached> d_cache;
    std::map<dns_question, in_flight> d_in_flight;
    std::map<uint32_t, dns_question> d_by_request;
    struct lookup_state {
        uint64_t from;
        bytes query;
    };
    std::map<uint64_t, lookup_state> d_lookups; // far side, by lookup request
    uint32_t d_next_request = 1;
    uint64_t d_next_lookup = 1;
    dns_proxy_actions d_actions;
    dns_proxy_counters d_counters;
    double d_now = 0;
};

} // namespace net
} // namespace hfstack
} // namespace gr

#endif
