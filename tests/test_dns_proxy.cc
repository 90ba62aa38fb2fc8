/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

/* The DNS proxy kernel (net/dns_proxy.h): DNS messages built here byte by byte as RFC
 * 1035 lays them out; questions coalesced and retries absorbed while one crosses HF,
 * answers cached for their TTL and served stale (RFC 8767), static names, the far
 * side's lookups, timeouts and malformed queries. */
#include "net/dns_proxy.h"

#include <gtest/gtest.h>

using namespace gr::hfstack;
using namespace gr::hfstack::net;

namespace {

void put16(bytes& b, uint16_t v)
{
    b.push_back(uint8_t(v >> 8));
    b.push_back(uint8_t(v));
}

void put32(bytes& b, uint32_t v)
{
    put16(b, uint16_t(v >> 16));
    put16(b, uint16_t(v));
}

bytes name_of(const std::string& dotted)
{
    bytes b;
    size_t start = 0;
    while (start < dotted.size()) {
        const size_t dot = std::min(dotted.find('.', start), dotted.size());
        b.push_back(uint8_t(dot - start));
        b.insert(b.end(), dotted.begin() + long(start), dotted.begin() + long(dot));
        start = dot + 1;
    }
    b.push_back(0);
    return b;
}

bytes query(uint16_t id, const std::string& name, uint16_t type = 1)
{
    bytes q;
    put16(q, id);
    put16(q, 0x0100); // RD
    put16(q, 1);
    put16(q, 0);
    put16(q, 0);
    put16(q, 0);
    const bytes n = name_of(name);
    q.insert(q.end(), n.begin(), n.end());
    put16(q, type);
    put16(q, 1);
    return q;
}

// A response to `q` with A records of these TTLs (names compressed to the question's)
// and an OPT record, as resolvers send.
bytes answer_to(const bytes& q, std::vector<uint32_t> ttls)
{
    bytes r = q;
    r[2] = 0x81;
    r[3] = 0x80;
    r[6] = 0;
    r[7] = uint8_t(ttls.size());
    r[11] = 1; // additional: OPT
    uint8_t host = 1;
    for (uint32_t ttl : ttls) {
        r.insert(r.end(), { 0xC0, 0x0C });
        put16(r, 1);
        put16(r, 1);
        put32(r, ttl);
        put16(r, 4);
        r.insert(r.end(), { 192, 0, 2, host++ });
    }
    r.push_back(0); // OPT: root name, type 41, payload 1232, TTL 0 (flags), no data
    put16(r, 41);
    put16(r, 1232);
    put32(r, 0);
    put16(r, 0);
    return r;
}

// NXDOMAIN with an SOA in the authority section (TTL 3600, minimum 900).
bytes nxdomain_to(const bytes& q)
{
    bytes r = q;
    r[2] = 0x81;
    r[3] = 0x83;
    r[9] = 1;
    r.insert(r.end(), { 0xC0, 0x0C });
    put16(r, 6);
    put16(r, 1);
    put32(r, 3600);
    bytes rdata = name_of("ns.example");
    const bytes mbox = name_of("admin.example");
    rdata.insert(rdata.end(), mbox.begin(), mbox.end());
    for (uint32_t v : { 1u, 7200u, 900u, 1209600u, 900u })
        put32(rdata, v);
    put16(r, uint16_t(rdata.size()));
    r.insert(r.end(), rdata.begin(), rdata.end());
    return r;
}

uint16_t id_of(const bytes& m) { return uint16_t(m[0] << 8 | m[1]); }
uint8_t rcode_of(const bytes& m) { return m[3] & 0x0F; }

} // namespace

TEST(DnsMessage, ParsesOneQuestionAndRefusesBadOnes)
{
    const auto ok = parse_dns(query(7, "Mail.Example.ORG", 28));
    ASSERT_TRUE(ok.ok()) << ok.reason;
    EXPECT_EQ(ok.value.id, 7);
    EXPECT_EQ(ok.value.question.name, "mail.example.org");
    EXPECT_EQ(ok.value.question.type, 28);
    EXPECT_FALSE(ok.value.is_response);

    bytes pointer = query(1, "a.b");
    pointer[12] = 0xC0;
    EXPECT_FALSE(parse_dns(pointer).ok());
    bytes dotted = query(1, "ab.cd");
    dotted[13] = '.';
    EXPECT_FALSE(parse_dns(dotted).ok());
    std::string longname;
    for (int i = 0; i < 5; ++i)
        longname += std::string(60, 'x') + ".";
    longname += "org";
    EXPECT_FALSE(parse_dns(query(1, longname)).ok());
    bytes two = query(1, "a.b");
    two[5] = 2;
    EXPECT_FALSE(parse_dns(two).ok());
    bytes cut = query(1, "a.b");
    cut.resize(cut.size() - 3);
    EXPECT_FALSE(parse_dns(cut).ok());
    EXPECT_FALSE(parse_dns(bytes(5000, 0)).ok());
}

TEST(DnsMessage, AnswerTtlIsTheSmallestRecordsAndNegativeAnswersTheSoaMinimum)
{
    const bytes q = query(1, "example.org");
    EXPECT_EQ(dns_answer_ttl(answer_to(q, { 300, 120, 600 })), 120u); // OPT's 0 ignored
    EXPECT_EQ(dns_answer_ttl(nxdomain_to(q)), 900u);
    const bytes lowered = dns_rewrite(answer_to(q, { 300, 120 }), 0xBEEF, 100);
    EXPECT_EQ(id_of(lowered), 0xBEEF);
    EXPECT_EQ(dns_answer_ttl(lowered), 100u);
    bytes cut = answer_to(q, { 300 });
    cut.resize(cut.size() - 15);
    EXPECT_FALSE(dns_answer_ttl(cut));
}

TEST(DnsProxy, OneQuestionCrossesForManyAskersAndTheAnswerIsCached)
{
    dns_proxy near;
    near.on_query(1, query(100, "www.example.org"), 0);
    near.on_query(2, query(200, "WWW.example.org"), 1); // another client: coalesced
    near.on_query(1, query(100, "www.example.org"), 2); // client 1 again: a retry
    auto a = near.take_actions();
    ASSERT_EQ(a.forwards.size(), 1u);
    EXPECT_TRUE(a.replies.empty());
    const auto fwd = parse_dns(a.forwards[0].question);
    ASSERT_TRUE(fwd.ok());
    EXPECT_EQ(fwd.value.question.name, "www.example.org");
    EXPECT_EQ(fwd.value.id, uint16_t(a.forwards[0].request));
    EXPECT_EQ(near.counters().coalesced, 1u);
    EXPECT_EQ(near.counters().retries_absorbed, 1u);

    // The far side resolves it.
    dns_proxy far;
    far.on_question(a.forwards[0].question, 77, 5);
    auto f = far.take_actions();
    ASSERT_EQ(f.lookups.size(), 1u);
    bytes from_resolver = answer_to(f.lookups[0].query, { 3600 });
    from_resolver[0] = 0x12; // the resolver's own id: the far proxy puts ours back
    far.resolved(f.lookups[0].request, from_resolver, 6);
    f = far.take_actions();
    ASSERT_EQ(f.answers_back.size(), 1u);
    EXPECT_EQ(f.answers_back[0].to, 77u);
    EXPECT_EQ(id_of(f.answers_back[0].message), uint16_t(a.forwards[0].request));

    near.on_answer(a.forwards[0].request, f.answers_back[0].message, 40);
    a = near.take_actions();
    ASSERT_EQ(a.replies.size(), 2u);
    EXPECT_EQ(a.replies[0].client, 1u);
    EXPECT_EQ(id_of(a.replies[0].message), 100);
    EXPECT_EQ(a.replies[1].client, 2u);
    EXPECT_EQ(id_of(a.replies[1].message), 200);
    EXPECT_EQ(dns_answer_ttl(a.replies[0].message), 3600u);

    // Later: from the cache, its TTL counting down, nothing crosses.
    near.on_query(3, query(300, "www.example.org"), 1040);
    a = near.take_actions();
    EXPECT_TRUE(a.forwards.empty());
    ASSERT_EQ(a.replies.size(), 1u);
    EXPECT_EQ(dns_answer_ttl(a.replies[0].message), 2600u);
    EXPECT_EQ(near.counters().cache_hits, 1u);
}

TEST(DnsProxy, StaleAnswersAreServedAtOnceWhileAFreshOneIsFetched)
{
    dns_proxy_config c;
    c.min_ttl_s = 10;
    dns_proxy near(c);
    near.on_query(1, query(1, "example.org"), 0);
    auto a = near.take_actions();
    near.on_answer(a.forwards[0].request, answer_to(a.forwards[0].question, { 60 }), 5);
    near.take_actions();
    near.on_query(1, query(2, "example.org"), 1000); // expired at 65
    a = near.take_actions();
    ASSERT_EQ(a.replies.size(), 1u);
    EXPECT_EQ(dns_answer_ttl(a.replies[0].message), 30u); // RFC 8767's stale TTL
    ASSERT_EQ(a.forwards.size(), 1u);                     // and a refresh
    EXPECT_EQ(near.counters().stale_served, 1u);
    // The far side fails (SERVFAIL): a waiting client still gets the stale answer.
    near.on_query(2, query(3, "example.org"), 1001);
    near.take_actions();
    bytes failed = a.forwards[0].question;
    failed[2] = 0x81;
    failed[3] = 0x82;
    near.on_answer(a.forwards[0].request, failed, 1010);
    a = near.take_actions();
    EXPECT_EQ(near.counters().stale_served, 2u);
}

TEST(DnsProxy, StaticNamesTimeoutsAndBadQueries)
{
    dns_proxy_config c;
    set_dns_static_names(c, "gateway.hf=10.78.0.1 Mail.HF.=fd00:78::25");
    c.forward_timeout_s = 120;
    EXPECT_THROW(set_dns_static_names(c, "nothing"), std::invalid_argument);
    dns_proxy near(c);
    near.on_query(1, query(5, "GATEWAY.hf"), 0);
    near.on_query(1, query(6, "mail.hf", 28), 0);
    auto a = near.take_actions();
    ASSERT_EQ(a.replies.size(), 2u);
    EXPECT_TRUE(a.forwards.empty());
    EXPECT_EQ(rcode_of(a.replies[0].message), 0);
    EXPECT_EQ(a.replies[0].message.back(), 1); // ... 10.78.0.1
    EXPECT_EQ(a.replies[1].message.size(), query(6, "mail.hf", 28).size() + 12 + 16);

    near.on_query(2, query(9, "far.example"), 10);
    EXPECT_EQ(near.next_deadline(), 130.0);
    near.on_timer(130);
    a = near.take_actions();
    EXPECT_EQ(a.forwards.size(), 1u);
    ASSERT_EQ(a.replies.size(), 1u); // no answer in forward_timeout_s: SERVFAIL
    EXPECT_EQ(id_of(a.replies[0].message), 9);
    EXPECT_EQ(rcode_of(a.replies[0].message), 2);
    EXPECT_EQ(near.counters().timeouts, 1u);

    bytes bad = query(11, "x.y");
    bad[12] = 0xC0; // compression in the question
    near.on_query(3, bad, 200);
    near.on_query(3, bytes{ 1, 2, 3 }, 200); // not even a header: dropped
    bytes update = query(12, "x.y");
    update[2] = 0x28; // opcode 5 (UPDATE)
    near.on_query(3, update, 200);
    a = near.take_actions();
    ASSERT_EQ(a.replies.size(), 2u);
    EXPECT_EQ(rcode_of(a.replies[0].message), 1); // FORMERR
    EXPECT_EQ(id_of(a.replies[0].message), 11);
    EXPECT_EQ(rcode_of(a.replies[1].message), 4); // NOTIMP
    EXPECT_EQ(near.counters().malformed, 2u);

    // The far side: a resolver that failed gives SERVFAIL back.
    dns_proxy far;
    far.on_question(query(42, "gone.example"), 9, 0);
    auto f = far.take_actions();
    far.resolved(f.lookups[0].request, {}, 1);
    f = far.take_actions();
    ASSERT_EQ(f.answers_back.size(), 1u);
    EXPECT_EQ(id_of(f.answers_back[0].message), 42);
    EXPECT_EQ(rcode_of(f.answers_back[0].message), 2);
}
