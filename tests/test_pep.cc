/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

/* The HF-PEP kernel (net/pep.h): two proxies on nodes 1 and 2 over the simulated
 * STANAG 5066 path of sis_path_support.h; the tests play both TCP drivers. A request
 * travels with the open, answers and closes map both ways, refusals and policy reach
 * the client, many connections share the SAP intact through link breaks, and a
 * destination that never reads bounds the memory. */
#include "net/pep.h"
#include "sis_path_support.h"

#include <gtest/gtest.h>

#include <map>
#include <random>

using namespace gr::hfstack;
using namespace gr::hfstack::net;
using dl::sis_primitive;
using K = pep_action::kind;

namespace {

bytes as_bytes(const std::string& s) { return bytes(s.begin(), s.end()); }

pep_request to(const std::string& address, uint16_t port)
{
    return { *parse_ip_address(address), port };
}

pep_request named(const std::string& name, uint16_t port)
{
    pep_request r;
    r.name = name;
    r.port = port;
    return r;
}

struct pep_pair : sis_path<pep> {
    std::vector<pep_action> near, far; // what each driver was told

    explicit pep_pair(const std::string& near_options = "",
                      const std::string& far_options = "")
    {
        pep_config a_cfg, b_cfg;
        set_pep_options(a_cfg,
                        "peers=10.0.2.0/24=0.0.0.2 fd00:2::/64=0.0.0.2;" + near_options);
        set_pep_options(b_cfg, "peers=10.0.1.0/24=0.0.0.1;" + far_options);
        b_cfg.slep.incarnation = 77;
        // No SLEP keepalives: their timers would carry virtual time into the proxies'
        // idle timeouts whenever a test runs the pair for long.
        a_cfg.slep.keepalive_s = b_cfg.slep.keepalive_s = 0;
        a = std::make_unique<pep>(a_cfg);
        b = std::make_unique<pep>(b_cfg);
        keep = [this](pep& p, pep_actions& act) {
            auto& to = &p == a.get() ? near : far;
            to.insert(to.end(), act.tcp.begin(), act.tcp.end());
        };
        bind_both();
    }

    // Carries what is in flight, letting virtual time run at most `span` seconds (the
    // proxies' timeouts must not fire behind a test's back).
    void run(double span = 10) { settle(now + span); }

    std::vector<pep_action>
    of(const std::vector<pep_action>& v, K k, pep_connection c = 0) const
    {
        std::vector<pep_action> out;
        for (const auto& x : v)
            if (x.what == k && (c == 0 || x.connection == c))
                out.push_back(x);
        return out;
    }

    // Everything the proxy `p` has for connection c's socket.
    bytes take(pep& p, pep_connection c)
    {
        bytes out;
        for (int i = 0; i < 100000; ++i) {
            bytes chunk = p.take_tcp_data(c, 65536, now);
            if (chunk.empty())
                break;
            out.insert(out.end(), chunk.begin(), chunk.end());
        }
        return out;
    }

    // Writes `data` from a socket into proxy `p` for connection c, settling in between
    // and draining what `reader` (the other proxy's socket for rc) gets meanwhile.
    void pour(pep& p,
              pep_connection c,
              const bytes& data,
              pep* reader = nullptr,
              pep_connection rc = 0,
              bytes* got = nullptr,
              double span = 10)
    {
        size_t at = 0;
        for (int i = 0; i < 100000 && at < data.size(); ++i) {
            at += p.from_tcp(c, data.data() + at, data.size() - at, now);
            run(span);
            if (reader) {
                bytes more = take(*reader, rc);
                got->insert(got->end(), more.begin(), more.end());
            }
        }
        ASSERT_EQ(at, data.size());
    }
};

} // namespace

TEST(PepRequest, RoundTripsAndRefusesBadHeaders)
{
    for (const auto& r : { to("10.0.2.5", 80), to("fd00:2::7", 443) }) {
        const bytes wire = encode(r);
        EXPECT_EQ(wire.size(), r.destination.version == 4 ? 8u : 20u);
        const auto back = parse_pep_request(wire);
        ASSERT_EQ(back.what, pep_request_parse::state::ok);
        EXPECT_EQ(back.request.destination, r.destination);
        EXPECT_EQ(back.request.port, r.port);
        EXPECT_EQ(back.length, wire.size());
        EXPECT_EQ(parse_pep_request(bytes(wire.begin(), wire.end() - 1)).what,
                  pep_request_parse::state::need_more);
    }
    EXPECT_EQ(encode(to("10.0.2.5", 80)), (bytes{ 1, 4, 0, 80, 10, 0, 2, 5 }));
    EXPECT_EQ(parse_pep_request(bytes{ 2, 4, 0, 80 }).what,
              pep_request_parse::state::bad);
    EXPECT_EQ(parse_pep_request(bytes{ 1, 5, 0, 80 }).what,
              pep_request_parse::state::bad);
}

TEST(PepRequest, HostNamesRoundTripAndBadOnesAreRefused)
{
    const bytes wire = encode(named("www.example.org", 443));
    EXPECT_EQ(wire.size(), 5u + 15u);
    EXPECT_EQ(bytes(wire.begin(), wire.begin() + 5), (bytes{ 1, 0, 1, 187, 15 }));
    const auto back = parse_pep_request(wire);
    ASSERT_EQ(back.what, pep_request_parse::state::ok);
    EXPECT_EQ(back.request.name, "www.example.org");
    EXPECT_EQ(back.request.port, 443);
    EXPECT_EQ(back.length, wire.size());
    EXPECT_EQ(destination_text(back.request), "www.example.org");
    for (size_t cut = 1; cut < wire.size(); ++cut)
        EXPECT_EQ(parse_pep_request(bytes(wire.begin(), wire.begin() + long(cut))).what,
                  pep_request_parse::state::need_more)
            << cut;
    const std::string longest(pep_max_name, 'a');
    EXPECT_EQ(encode(named(longest, 80)).size(), pep_max_request);
    EXPECT_EQ(parse_pep_request(encode(named(longest, 80))).what,
              pep_request_parse::state::ok);
    EXPECT_TRUE(valid_host_name("a-b_c.d9"));
    for (const std::string& bad : { std::string(),
                                    std::string(pep_max_name + 1, 'a'),
                                    std::string("a b"),
                                    std::string("a/b"),
                                    std::string("a\0b", 3),
                                    std::string("%41") }) {
        EXPECT_FALSE(valid_host_name(bad)) << bad;
        // Every one fits the length byte (at most pep_max_name + 1).
        bytes raw(5 + bad.size(), 0);
        raw[0] = pep_protocol_version;
        raw[3] = 80;
        raw[4] = uint8_t(bad.size());
        std::copy(bad.begin(), bad.end(), raw.begin() + 5);
        EXPECT_EQ(parse_pep_request(raw).what, pep_request_parse::state::bad) << bad;
    }
}

TEST(PepOptions, RoundTripAndErrorsNameTheOption)
{
    pep_config c;
    set_pep_options(
        c,
        "peers=10.0.0.0/8=0.0.0.2 default=0.0.0.3; deny_ports=25 137; "
        "port_limits=80:50; port_priority=22:12; compress=true; open_wait_s=0.5");
    EXPECT_EQ(get_pep_option(c, "deny_ports"), "25 137");
    EXPECT_EQ(get_pep_option(c, "port_limits"), "80:50");
    EXPECT_EQ(get_pep_option(c, "port_priority"), "22:12");
    EXPECT_EQ(get_pep_option(c, "compress"), "true");
    set_pep_options(c, "max_outstanding_bytes=8388608");
    EXPECT_EQ(c.slep.max_outstanding_bytes, 8388608u);
    for (const auto& o : pep_options()) {
        pep_config d = c;
        set_pep_option(d, o.name, get_pep_option(c, o.name));
        EXPECT_EQ(get_pep_option(d, o.name), get_pep_option(c, o.name)) << o.name;
    }
    try {
        set_pep_option(c, "port_priority", "22:99");
        FAIL();
    } catch (const std::invalid_argument& e) {
        EXPECT_NE(std::string(e.what()).find("port_priority"), std::string::npos);
    }
    EXPECT_THROW(set_pep_options(c, "no_such_option=1"), std::invalid_argument);
    EXPECT_THROW(set_pep_options(c, "peers=10.0.0.0/8"), std::invalid_argument);
}

TEST(Pep, ARequestTravelsWithTheOpenAndTheAnswerComesBack)
{
    pep_pair p;
    const auto c = p.a->accept(to("10.0.2.5", 80), p.now);
    const bytes request = as_bytes("GET / HTTP/1.0\r\n\r\n");
    EXPECT_EQ(p.a->from_tcp(c, request.data(), request.size(), p.now), request.size());
    // The open waited (open_wait_s at most) for the client's first bytes: it goes at
    // once, with them.
    auto first = p.a->take_actions();
    ASSERT_EQ(first.to_sis.size(), 1u);
    const auto open = decode_slep(first.to_sis[0].payload);
    ASSERT_TRUE(open.ok());
    EXPECT_EQ(open.value.type, slep_type::open);
    ASSERT_GE(open.value.data.size(), request.size());
    EXPECT_TRUE(std::equal(
        request.begin(), request.end(), open.value.data.end() - long(request.size())));
    p.keep(*p.a, first);
    for (auto& m : first.to_sis)
        p.carry(*p.a, m);
    p.run();
    const auto connects = p.of(p.far, K::connect);
    ASSERT_EQ(connects.size(), 1u);
    EXPECT_EQ(connects[0].destination.destination, *parse_ip_address("10.0.2.5"));
    EXPECT_EQ(connects[0].destination.port, 80);
    EXPECT_EQ(p.b->counters().incoming, 1u);
    EXPECT_EQ(p.a->transport().counters().pdus_sent[size_t(slep_type::open)], 1u);
    EXPECT_EQ(p.a->transport().counters().pdus_sent[size_t(slep_type::data)], 0u);
    const pep_connection f = connects[0].connection;
    EXPECT_TRUE(p.take(*p.b, f).empty()); // nothing for the socket before it connects
    p.b->connected(f, p.now);
    p.run();
    EXPECT_EQ(p.take(*p.b, f), request);
    EXPECT_EQ(p.of(p.near, K::connected, c).size(), 1u);

    const bytes answer = pattern(150000, 2);
    bytes got;
    p.pour(*p.b, f, answer, p.a.get(), c, &got);
    p.b->tcp_finished(f, p.now);
    p.run();
    const bytes rest = p.take(*p.a, c);
    got.insert(got.end(), rest.begin(), rest.end());
    EXPECT_EQ(got, answer);
    EXPECT_EQ(p.of(p.near, K::finish, c).size(), 1u);
    p.a->tcp_finished(c, p.now);
    p.run();
    p.take(*p.b, f);
    p.run();
    EXPECT_EQ(p.of(p.far, K::finish, f).size(), 1u);
    EXPECT_EQ(p.of(p.near, K::closed, c).size(), 1u);
    EXPECT_EQ(p.of(p.far, K::closed, f).size(), 1u);
    EXPECT_EQ(p.a->connection_count() + p.b->connection_count(), 0u);
    EXPECT_EQ(p.a->counters().bytes_up, request.size());
    EXPECT_EQ(p.b->counters().bytes_down, answer.size());
}

// A client that fills the send buffer before the open goes: the open carries the
// request header as well, and not one byte of the client's may be lost for it (it
// was: the last 8 bytes of a 300 kB first write, the header's size).
TEST(Pep, AClientThatFillsTheBufferBeforeTheOpenLosesNothing)
{
    pep_pair p("", "connect_timeout_s=100000");
    const auto c = p.a->accept(to("10.0.2.5", 80), p.now);
    const bytes big = pattern(300000, 4);
    const size_t first = p.a->from_tcp(c, big.data(), big.size(), p.now);
    EXPECT_EQ(first, p.a->config().slep.send_buffer - encode(to("10.0.2.5", 80)).size());
    p.run();
    const pep_connection f = p.of(p.far, K::connect).at(0).connection;
    p.b->connected(f, p.now);
    bytes got;
    p.pour(*p.a, c, bytes(big.begin() + long(first), big.end()), p.b.get(), f, &got);
    p.a->tcp_finished(c, p.now);
    p.run();
    const bytes rest = p.take(*p.b, f);
    got.insert(got.end(), rest.begin(), rest.end());
    EXPECT_EQ(got.size(), big.size());
    EXPECT_EQ(got, big);
}

TEST(Pep, RefusalsAndPolicyReachTheClient)
{
    pep_pair p("deny_ports=25; port_limits=8080:1", "deny_ports=23");
    // Refused at once, here: a denied port, no proxy for the destination, a limit.
    const auto smtp = p.a->accept(to("10.0.2.5", 25), p.now);
    const auto lost = p.a->accept(to("192.0.2.1", 80), p.now);
    const auto one = p.a->accept(to("10.0.2.5", 8080), p.now);
    const auto two = p.a->accept(to("10.0.2.5", 8080), p.now);
    p.run();
    EXPECT_EQ(p.of(p.near, K::failed, smtp).at(0).status, pep_status::forbidden);
    EXPECT_EQ(p.of(p.near, K::failed, lost).at(0).status, pep_status::no_peer);
    EXPECT_TRUE(p.of(p.near, K::failed, one).empty());
    EXPECT_EQ(p.of(p.near, K::failed, two).at(0).status, pep_status::busy);
    // Refused there: the far proxy's policy, and the destination itself.
    const auto telnet = p.a->accept(to("10.0.2.5", 23), p.now);
    const auto closed_port = p.a->accept(to("10.0.2.6", 81), p.now);
    p.run();
    EXPECT_EQ(p.of(p.far, K::connect).size(), 2u); // 8080 and 81, never 23
    for (const auto& c : p.of(p.far, K::connect))
        if (c.destination.port == 81)
            p.b->connect_failed(c.connection, pep_status::refused, p.now);
    p.run();
    EXPECT_EQ(p.of(p.near, K::failed, telnet).at(0).status, pep_status::forbidden);
    EXPECT_EQ(p.of(p.near, K::failed, closed_port).at(0).status, pep_status::refused);
    EXPECT_EQ(p.of(p.near, K::closed, closed_port).size(), 1u);
    EXPECT_EQ(p.a->connection_count(), 1u); // the 8080 one, still waiting
    EXPECT_EQ(p.b->connection_count(), 1u);
}

// A destination given by host name (SOCKS5 domain name, CONNECT host:port) travels as
// such; the far proxy has it resolved and connects to the first address its policy
// allows.
TEST(Pep, AHostNameIsResolvedAtTheFarProxy)
{
    pep_pair p;
    const auto c = p.a->accept(named("www.far.example", 8080), p.now);
    const bytes request = as_bytes("GET / HTTP/1.0\r\n\r\n");
    p.a->from_tcp(c, request.data(), request.size(), p.now);
    p.run();
    EXPECT_TRUE(p.of(p.far, K::connect).empty());
    const auto asks = p.of(p.far, K::resolve);
    ASSERT_EQ(asks.size(), 1u);
    EXPECT_EQ(asks[0].destination.name, "www.far.example");
    EXPECT_EQ(asks[0].destination.port, 8080);
    const pep_connection f = asks[0].connection;
    EXPECT_EQ(p.b->tcp_space(f), 0u); // nothing from the destination before it connects
    // Loopback is the far host's own: never a name's way around the policy.
    p.b->resolved(
        f, { *parse_ip_address("127.0.0.1"), *parse_ip_address("10.0.2.9") }, p.now);
    p.run();
    const auto connects = p.of(p.far, K::connect, f);
    ASSERT_EQ(connects.size(), 1u);
    EXPECT_EQ(connects[0].destination.destination, *parse_ip_address("10.0.2.9"));
    EXPECT_EQ(connects[0].destination.port, 8080);
    p.b->resolved(f, { *parse_ip_address("10.0.2.10") }, p.now); // late, ignored
    p.run();
    EXPECT_EQ(p.of(p.far, K::connect).size(), 1u);
    p.b->connected(f, p.now);
    p.run();
    EXPECT_EQ(p.of(p.near, K::connected, c).size(), 1u);
    EXPECT_EQ(p.take(*p.b, f), request);
    const bytes answer = as_bytes("HTTP/1.0 200 OK\r\n\r\nhello");
    p.b->from_tcp(f, answer.data(), answer.size(), p.now);
    p.run();
    EXPECT_EQ(p.take(*p.a, c), answer);
    EXPECT_EQ(p.b->counters().resolves, 1u);
    EXPECT_EQ(p.b->counters().connects, 1u);
    EXPECT_EQ(p.b->stats(f)->destination.name, "www.far.example");
}

TEST(Pep, HostNamesThatDoNotResolveOrAreNotAllowedAreRefused)
{
    pep_pair p("", "allow_destinations=10.0.2.0/24; connect_timeout_s=30");
    const auto nowhere = p.a->accept(named("nowhere.example", 80), p.now);
    const auto outside = p.a->accept(named("outside.example", 80), p.now);
    const auto loopback = p.a->accept(named("localhost", 80), p.now);
    const auto silent = p.a->accept(named("slow.example", 80), p.now);
    for (auto c : { nowhere, outside, loopback, silent })
        p.a->tcp_finished(c, p.now);
    p.run();
    std::map<std::string, pep_connection> far;
    for (const auto& a : p.of(p.far, K::resolve))
        far[a.destination.name] = a.connection;
    ASSERT_EQ(far.size(), 4u);
    p.b->resolved(far["nowhere.example"], {}, p.now);
    p.b->resolved(far["outside.example"], { *parse_ip_address("192.0.2.7") }, p.now);
    p.b->resolved(far["localhost"],
                  { *parse_ip_address("::1"), *parse_ip_address("127.0.0.1") },
                  p.now);
    p.run(5);
    EXPECT_EQ(p.of(p.near, K::failed, nowhere).at(0).status, pep_status::unreachable);
    EXPECT_EQ(p.of(p.near, K::failed, outside).at(0).status, pep_status::forbidden);
    EXPECT_EQ(p.of(p.near, K::failed, loopback).at(0).status, pep_status::forbidden);
    EXPECT_TRUE(p.of(p.near, K::failed, silent).empty());
    p.run(40); // connect_timeout_s covers the lookup
    EXPECT_EQ(p.of(p.near, K::failed, silent).at(0).status, pep_status::timed_out);
    EXPECT_TRUE(p.of(p.far, K::connect).empty());
    EXPECT_EQ(p.b->counters().resolve_failures, 1u);
    EXPECT_EQ(p.b->counters().destinations_refused, 2u);
}

TEST(Pep, AHostNameGoesToNamePeerWhenPeersNamesSeveralProxies)
{
    pep_config cfg;
    set_pep_options(cfg, "peers=10.0.2.0/24=0.0.0.2 10.0.3.0/24=0.0.0.3");
    pep several(cfg);
    const auto refused = several.accept(named("www.example", 80), 0);
    auto a = several.take_actions();
    ASSERT_FALSE(a.tcp.empty());
    EXPECT_EQ(a.tcp[0].connection, refused);
    EXPECT_EQ(a.tcp[0].what, K::failed);
    EXPECT_EQ(a.tcp[0].status, pep_status::no_peer);
    ASSERT_EQ(a.notices.size(), 1u);
    EXPECT_NE(a.notices[0].find("name_peer"), std::string::npos);
    set_pep_options(cfg, "name_peer=0.0.0.3");
    EXPECT_EQ(get_pep_option(cfg, "name_peer"), "0.0.0.3");
    EXPECT_THROW(set_pep_option(cfg, "name_peer", "nobody"), std::invalid_argument);
    pep chosen(cfg);
    const auto c = chosen.accept(named("www.example", 80), 0);
    EXPECT_EQ(chosen.stats(c)->peer_node, dl::parse_address("0.0.0.3").value);
    // Not a host name: refused before anything opens.
    const auto bad = chosen.accept(named("a b", 80), 0);
    EXPECT_FALSE(chosen.stats(bad));
}

// 50 connections at once, through link breaks and reordering: every byte of every one
// arrives, and only in its own connection.
TEST(Pep, FiftyConnectionsShareTheSapIntactThroughLinkBreaks)
{
    pep_pair p("", "connect_timeout_s=100000");
    p.p_rejected = 0.2;
    p.p_delivered_rejected = 0.05;
    p.reorder = true;
    std::vector<pep_connection> near_ids;
    std::map<pep_connection, bytes> requests;
    for (int i = 0; i < 50; ++i) {
        const auto c = p.a->accept(
            to("10.0.2." + std::to_string(1 + i % 5), uint16_t(8000 + i)), p.now);
        requests[c] = pattern(200 + 37 * i, uint32_t(i));
        p.a->from_tcp(c, requests[c].data(), requests[c].size(), p.now);
        p.a->tcp_finished(c, p.now);
        near_ids.push_back(c);
    }
    p.run(3000);
    const auto connects = p.of(p.far, K::connect);
    ASSERT_EQ(connects.size(), 50u);
    std::map<uint16_t, pep_connection> far_by_port;
    for (const auto& c : connects) {
        far_by_port[c.destination.port] = c.connection;
        p.b->connected(c.connection, p.now);
    }
    p.run(3000);
    for (int i = 0; i < 50; ++i) {
        const pep_connection f = far_by_port.at(uint16_t(8000 + i));
        EXPECT_EQ(p.take(*p.b, f), requests[near_ids[size_t(i)]]) << i;
        const bytes answer = pattern(3000 + 101 * i, uint32_t(1000 + i));
        p.b->from_tcp(f, answer.data(), answer.size(), p.now);
        p.b->tcp_finished(f, p.now);
    }
    p.run(3000);
    for (int i = 0; i < 50; ++i) {
        const auto c = near_ids[size_t(i)];
        EXPECT_EQ(p.take(*p.a, c), pattern(3000 + 101 * i, uint32_t(1000 + i))) << i;
    }
    p.run(3000);
    for (int i = 0; i < 50; ++i)
        p.take(*p.b, far_by_port.at(uint16_t(8000 + i)));
    p.run(3000);
    EXPECT_EQ(p.of(p.near, K::closed).size(), 50u);
    EXPECT_EQ(p.of(p.near, K::reset).size(), 0u);
    EXPECT_GT(p.a->transport().counters().retransmissions, 0u);
    EXPECT_EQ(p.a->connection_count() + p.b->connection_count(), 0u);
}

// A destination that never reads: the far proxy holds one SLEP window, the near one
// its send buffer, and the client is told to stop (tcp_space 0); nothing grows beyond.
TEST(Pep, ADestinationThatNeverReadsHoldsTheClientBack)
{
    pep_pair p;
    const auto c = p.a->accept(to("10.0.2.5", 9), p.now);
    p.run();
    const pep_connection f = p.of(p.far, K::connect).at(0).connection;
    p.b->connected(f, p.now);
    p.run();
    const bytes flood = pattern(3000000, 9);
    size_t taken = 0;
    for (int i = 0; i < 40; ++i) {
        taken += p.a->from_tcp(c, flood.data() + taken, flood.size() - taken, p.now);
        p.run();
    }
    EXPECT_EQ(p.a->tcp_space(c), 0u);
    EXPECT_LE(taken, size_t(p.b->config().slep.window) + p.a->config().slep.send_buffer);
    EXPECT_LT(taken, flood.size());
    // Once it reads, the client may go on.
    p.near.clear();
    EXPECT_FALSE(p.take(*p.b, f).empty());
    p.run();
    EXPECT_FALSE(p.of(p.near, K::resume, c).empty());
    EXPECT_GT(p.a->tcp_space(c), 0u);
}

TEST(Pep, TimeoutsAndResetsEndConnectionsOnBothSides)
{
    pep_pair p("idle_timeout_s=600", "connect_timeout_s=30");
    // The destination never answers the connect: the client hears timed out.
    const auto c = p.a->accept(to("10.0.2.5", 80), p.now);
    p.run(5);
    const pep_connection f = p.of(p.far, K::connect).at(0).connection;
    p.run(100);
    EXPECT_EQ(p.of(p.far, K::reset, f).size(), 1u);
    EXPECT_EQ(p.of(p.near, K::failed, c).at(0).status, pep_status::timed_out);
    // A client that resets mid-stream: the destination's connection is reset too.
    const auto d = p.a->accept(to("10.0.2.5", 80), p.now);
    p.run(5);
    const pep_connection g = p.of(p.far, K::connect).back().connection;
    p.b->connected(g, p.now);
    p.run(5);
    p.a->tcp_reset(d, p.now);
    p.run(5);
    EXPECT_EQ(p.of(p.far, K::reset, g).size(), 1u);
    // Idle connections end after idle_timeout_s, both ends told.
    const auto e = p.a->accept(to("10.0.2.5", 80), p.now);
    p.run(5);
    const pep_connection h = p.of(p.far, K::connect).back().connection;
    p.b->connected(h, p.now);
    p.run(700);
    EXPECT_EQ(p.of(p.near, K::reset, e).size(), 1u);
    EXPECT_EQ(p.of(p.far, K::reset, h).size(), 1u);
    EXPECT_EQ(p.a->counters().idle_timeouts, 1u);
    EXPECT_EQ(p.a->connection_count() + p.b->connection_count(), 0u);
}

// The far proxy is unreachable (the link stays down): the client hears unreachable
// after SLEP gives up, not never.
TEST(Pep, AFarProxyThatNeverAnswersFailsTheConnection)
{
    pep_pair p("give_up_s=300; retry_s=20");
    p.down = true;
    const auto c = p.a->accept(to("10.0.2.5", 80), p.now);
    p.run(1000);
    ASSERT_EQ(p.of(p.near, K::failed, c).size(), 1u);
    EXPECT_EQ(p.of(p.near, K::failed, c)[0].status, pep_status::unreachable);
    EXPECT_GE(p.now, 300.0);
    EXPECT_EQ(p.a->connection_count(), 0u);
}

TEST(Pep, CompressionShrinksTextOnTheAir)
{
    pep_pair plain, packed("compress=true", "");
    std::string page;
    for (int i = 0; i < 3000; ++i)
        page += "<li class=\"item\">HF data over STANAG 5066, line " + std::to_string(i) +
                "</li>\n";
    const bytes body = as_bytes(page);
    for (pep_pair* p : { &plain, &packed }) {
        const auto c = p->a->accept(to("10.0.2.5", 80), p->now);
        p->pour(*p->a, c, body);
        p->a->tcp_finished(c, p->now);
        p->run();
        const pep_connection f = p->of(p->far, K::connect).at(0).connection;
        p->b->connected(f, p->now);
        p->run();
        EXPECT_EQ(p->take(*p->b, f), body);
    }
    const auto sent = [](pep_pair& p) { return p.a->transport().counters().bytes_sent; };
    EXPECT_LT(sent(packed) * 4, sent(plain));
}

// Per-connection statistics: bytes each way, plain and over HF, the connect time and
// what is queued towards the far side, on both proxies.
TEST(Pep, ConnectionStatisticsCountBothWaysCompressionAndQueue)
{
    pep_pair p("compress=true", "");
    std::string page;
    for (int i = 0; i < 400; ++i)
        page += "<li class=\"item\">HF data over STANAG 5066, line " + std::to_string(i) +
                "</li>\n";
    const bytes body = as_bytes(page);
    const double accepted_at = p.now;
    const auto c = p.a->accept(to("10.0.2.5", 80), p.now);
    ASSERT_TRUE(p.a->stats(c));
    EXPECT_EQ(p.a->stats(c)->established, -1);
    EXPECT_EQ(p.a->stats(c)->queued, 0u);
    const size_t taken = p.a->from_tcp(c, body.data(), body.size(), p.now);
    ASSERT_EQ(taken, body.size());
    EXPECT_GT(p.a->stats(c)->queued, 0u); // held for the OPEN, nothing confirmed yet
    p.run();
    const pep_connection f = p.of(p.far, K::connect).at(0).connection;
    p.b->connected(f, p.now);
    p.run();
    EXPECT_EQ(p.take(*p.b, f), body);
    p.run();

    const auto near = *p.a->stats(c);
    EXPECT_GT(near.established, accepted_at);
    EXPECT_DOUBLE_EQ(p.a->counters().connect_seconds, near.established - near.opened);
    EXPECT_EQ(near.plain_sent,
              encode(to("10.0.2.5", 80)).size() + body.size()); // request first
    EXPECT_LT(near.wire_sent * 4, near.plain_sent);
    EXPECT_EQ(near.queued, 0u); // all confirmed by the far proxy

    const auto far = *p.b->stats(f);
    EXPECT_EQ(far.wire_received, near.wire_sent);
    EXPECT_EQ(far.plain_received, near.plain_sent);

    // The answer back: plain both ways, as the far proxy does not compress.
    const bytes ok = as_bytes("OK");
    ASSERT_EQ(p.b->from_tcp(f, ok.data(), ok.size(), p.now), ok.size());
    p.run();
    EXPECT_EQ(p.take(*p.a, c), ok);
    const auto after = *p.a->stats(c);
    EXPECT_EQ(after.wire_received, p.b->stats(f)->wire_sent);
    EXPECT_EQ(after.plain_received, p.b->stats(f)->plain_sent);
    EXPECT_EQ(after.plain_received, 2 + ok.size()); // the far proxy's status first
}

// Proxy-level priority: while SIS flow control holds data back, a port with a higher
// port_proxy_priority has its PDUs handed to the node first, though opened later; with
// none, the streams take turns.
TEST(Pep, ProxyPriorityHandsAPortsDataToTheNodeFirst)
{
    for (const bool prioritised : { false, true }) {
        SCOPED_TRACE(prioritised ? "port_proxy_priority=22:9" : "no proxy priority");
        pep_pair p(std::string("open_wait_s=0") +
                   (prioritised ? ";port_proxy_priority=22:9" : ""));
        EXPECT_EQ(get_pep_option(p.a->config(), "port_proxy_priority"),
                  prioritised ? "22:9" : "");
        dl::sis_primitive flow;
        flow.type = dl::sis_type::data_flow_off;
        p.a->on_sis(flow, p.now);
        const auto bulk = p.a->accept(to("10.0.2.5", 80), p.now);
        const bytes big = pattern(20000, 3);
        ASSERT_EQ(p.a->from_tcp(bulk, big.data(), big.size(), p.now), big.size());
        const auto shell = p.a->accept(to("10.0.2.5", 22), p.now);
        const bytes keys = pattern(600, 4);
        ASSERT_EQ(p.a->from_tcp(shell, keys.data(), keys.size(), p.now), keys.size());
        for (const auto& r : p.a->take_actions().to_sis)
            ASSERT_NE(r.type, dl::sis_type::unidata_request) << "sent while flow is off";
        flow.type = dl::sis_type::data_flow_on;
        p.a->on_sis(flow, p.now);
        // The PDUs handed to the node now, in order, by stream; the shell's is the one
        // whose OPEN carries the request for port 22.
        const bytes shell_request = encode(to("10.0.2.5", 22));
        std::vector<uint32_t> order;
        uint32_t shell_stream = 0;
        for (const auto& r : p.a->take_actions().to_sis) {
            if (r.type != dl::sis_type::unidata_request)
                continue;
            const auto pdu = decode_slep(r.payload);
            ASSERT_TRUE(pdu) << pdu.reason;
            if (pdu.value.type == slep_type::open && std::equal(shell_request.begin(),
                                                                shell_request.end(),
                                                                pdu.value.data.begin()))
                shell_stream = pdu.value.stream;
            order.push_back(pdu.value.stream);
            p.carry(*p.a, r); // on to the far proxy, as the path would
        }
        ASSERT_NE(shell_stream, 0u);
        ASSERT_GE(order.size(), 3u);
        const auto first_bulk = std::find_if(
            order.begin(), order.end(), [&](uint32_t s) { return s != shell_stream; });
        const auto last_shell = std::find(order.rbegin(), order.rend(), shell_stream);
        if (prioritised) // every shell PDU before the first bulk one
            EXPECT_LT(std::distance(order.begin(), last_shell.base()),
                      std::distance(order.begin(), first_bulk) + 1);
        else // the bulk stream, opened first, goes first
            EXPECT_EQ(first_bulk, order.begin());
        // Both arrive whole all the same.
        p.run();
        for (const auto& a : p.of(p.far, K::connect)) {
            p.b->connected(a.connection, p.now);
            p.run();
            EXPECT_EQ(p.take(*p.b, a.connection), a.destination.port == 22 ? keys : big);
        }
        EXPECT_EQ(p.of(p.far, K::connect).size(), 2u);
    }
}

TEST(PepOptions, AccessPolicyOptionsRoundTripAndRefuseBadValues)
{
    pep_config c;
    set_pep_options(c,
                    "allow_destinations=10.78.0.0/24:80,443 127.0.0.1/32:5432 "
                    "[fd00::7]:22,8000-8010 fd00:1::/64:53 10.1.2.3:8080 fd00:2::/64");
    EXPECT_EQ(
        get_pep_option(c, "allow_destinations"),
        "10.78.0.0/24:80,443 127.0.0.1/32:5432 fd00::7/128:22,8000-8010 fd00:1::/64:53 "
        "10.1.2.3/32:8080 fd00:2::/64");
    pep_config again;
    set_pep_option(again, "allow_destinations", get_pep_option(c, "allow_destinations"));
    EXPECT_EQ(get_pep_option(again, "allow_destinations"),
              get_pep_option(c, "allow_destinations"));
    set_pep_options(c, "allow_peers=0.0.0.1 0.0.0.3");
    EXPECT_EQ(get_pep_option(c, "allow_peers"), "0.0.0.1 0.0.0.3");
    set_pep_options(c, "allow_peers=any");
    EXPECT_EQ(get_pep_option(c, "allow_peers"), "any");
    EXPECT_EQ(get_pep_option(pep_config{}, "max_connections"), "4096");
    for (const char* bad : { "allow_destinations=10.78.0.0/24:",
                             "allow_destinations=10.78.0.0/33",
                             "allow_destinations=10.78.0.0/24:0",
                             "allow_destinations=10.0.0.1:9-8",
                             "allow_destinations=[fd00::7:22",
                             "allow_destinations=10.0.0.1:http",
                             "allow_peers=0.0.0.256",
                             "allow_peers=16.0.0.1",
                             "allow_peers=any 0.0.0.1",
                             "handshake_timeout_s=inf",
                             "max_handshakes=x" }) {
        pep_config d;
        try {
            set_pep_options(d, bad);
            ADD_FAILURE() << bad << " was accepted";
        } catch (const std::invalid_argument& e) {
            const std::string name =
                std::string(bad).substr(0, std::string(bad).find('='));
            EXPECT_NE(std::string(e.what()).find(name), std::string::npos) << e.what();
        }
    }
}

// The far proxy reaches neither its host's loopback, link-local or multicast space nor
// the host's own addresses unless a rule names them; other destinations only as
// allow_destinations says; every refusal counted and logged once per source node.
TEST(Pep, TheFarProxyRefusesReservedAndOwnDestinationsUnlessNamed)
{
    const auto verdicts = [](const std::string& far_options,
                             const std::vector<pep_request>& requests) {
        pep_pair p("peers=default=0.0.0.2", far_options);
        p.b->set_local_addresses({ *parse_ip_address("10.0.2.9") });
        std::vector<pep_connection> ids;
        for (const auto& r : requests)
            ids.push_back(p.a->accept(r, p.now));
        p.run();
        std::string out;
        for (auto id : ids) {
            const auto failed = p.of(p.near, K::failed, id);
            out += failed.empty()
                       ? "+"
                       : (failed[0].status == pep_status::forbidden ? "-" : "?");
        }
        return std::make_pair(out, p.b->counters().destinations_refused);
    };
    const std::vector<pep_request> r = {
        to("127.0.0.1", 5066), to("127.1.2.3", 80), to("169.254.1.1", 80),
        to("224.0.0.1", 80),   to("0.0.0.0", 80),   to("255.255.255.255", 80),
        to("::1", 22),         to("fe80::1", 22),   to("::ffff:7f00:1", 22),
        to("10.0.2.9", 22),    to("10.0.2.5", 80),  to("10.0.2.5", 443),
        to("fd00:2::5", 80),
    };
    // The default: every ordinary destination, none of the reserved or own ones.
    auto v = verdicts("", r);
    EXPECT_EQ(v.first, "----------+++");
    EXPECT_EQ(v.second, 10u);
    // A rule for everything opens no reserved or own address.
    EXPECT_EQ(verdicts("allow_destinations=0.0.0.0/0 ::/0", r).first, "----------+++");
    // Named networks and ports only; a rule naming a loopback host and port opens that
    // one.
    v = verdicts("allow_destinations=10.0.2.0/24:80 127.0.0.1/32:5066 10.0.2.9/32", r);
    EXPECT_EQ(v.first, "+--------++--");
}

TEST(Pep, RefusalsAreLoggedOncePerSource)
{
    pep_pair p("peers=default=0.0.0.2");
    std::vector<std::string> notices;
    const auto keep_far = p.keep;
    p.keep = [&](pep& e, pep_actions& act) {
        if (&e == p.b.get())
            notices.insert(notices.end(), act.notices.begin(), act.notices.end());
        keep_far(e, act);
    };
    for (int i = 0; i < 5; ++i)
        p.a->accept(to("127.0.0.1", uint16_t(80 + i)), p.now);
    p.run();
    EXPECT_EQ(p.b->counters().destinations_refused, 5u);
    EXPECT_EQ(std::count_if(notices.begin(),
                            notices.end(),
                            [](const std::string& n) {
                                return n.find("not an allowed destination") !=
                                       std::string::npos;
                            }),
              1);
}

// Streams and datagrams from a node the far proxy does not know are refused: by
// default only the nodes of its `peers` table are taken.
TEST(Pep, OnlyAllowedPeersMayOpenStreamsOrSendDatagrams)
{
    for (const std::string far : { "allow_peers=0.0.0.3", "peers=10.0.1.0/24=0.0.0.4" }) {
        pep_pair p("", far);
        std::vector<pep_datagram> datagrams;
        const auto keep = p.keep;
        p.keep = [&](pep& e, pep_actions& act) {
            if (&e == p.b.get())
                datagrams.insert(
                    datagrams.end(), act.datagrams.begin(), act.datagrams.end());
            keep(e, act);
        };
        p.b->listen_datagrams(2);
        const auto c = p.a->accept(to("10.0.2.5", 80), p.now);
        p.a->send_datagram(2, 2, 2, as_bytes("question"), p.now);
        p.run(400);
        EXPECT_TRUE(p.of(p.far, K::connect).empty()) << far;
        ASSERT_EQ(p.of(p.near, K::failed, c).size(), 1u) << far;
        EXPECT_EQ(p.b->counters().peers_refused, 2u) << far;
        EXPECT_TRUE(datagrams.empty()) << far;
    }
    // The same with the near node allowed: both go through.
    pep_pair p("", "allow_peers=0.0.0.1");
    p.a->accept(to("10.0.2.5", 80), p.now);
    p.run();
    EXPECT_EQ(p.of(p.far, K::connect).size(), 1u);
    EXPECT_EQ(p.b->counters().peers_refused, 0u);
}

// The node drops the PEP's SAP (another client bound it with a higher rank) while the
// SIS connection stays: the PEP binds again, backing off, and says so.
TEST(Pep, BindsAgainAfterTheNodeDropsTheSap)
{
    pep_config cfg;
    set_pep_options(cfg, "peers=default=0.0.0.2");
    pep p(cfg);
    sis_path<pep>::bind(p);
    ASSERT_TRUE(p.transport().bound());
    p.take_actions();
    const auto binds_at = [&](double t) {
        p.on_timer(t);
        size_t n = 0;
        for (const auto& s : p.take_actions().to_sis)
            n += s.type == dl::sis_type::bind_request;
        return n;
    };
    dl::sis_primitive unbind;
    unbind.type = dl::sis_type::unbind_indication;
    p.on_sis(unbind, 100);
    EXPECT_FALSE(p.transport().bound());
    const auto said = p.take_actions().notices;
    ASSERT_FALSE(said.empty());
    EXPECT_NE(said.back().find("binding again in 5 s"), std::string::npos) << said.back();
    EXPECT_DOUBLE_EQ(p.next_deadline(), 105);
    EXPECT_EQ(binds_at(104), 0u);
    EXPECT_EQ(binds_at(105), 1u);
    // Refused again (the other client still holds it): twice as long.
    dl::sis_primitive refused;
    refused.type = dl::sis_type::bind_rejected;
    p.on_sis(refused, 106);
    EXPECT_EQ(binds_at(115), 0u);
    EXPECT_EQ(binds_at(116), 1u);
    dl::sis_primitive ok;
    ok.type = dl::sis_type::bind_accepted;
    ok.sap = 13;
    ok.mtu = 2048;
    p.on_sis(ok, 117);
    EXPECT_TRUE(p.transport().bound());
    EXPECT_EQ(p.take_actions().notices, std::vector<std::string>{ "bound SAP 13 again" });
    EXPECT_EQ(p.counters().rebinds, 1u); // two attempts, the SAP back once
    // A lost SIS connection is the driver's to restore: no bind on the kernel's timer.
    p.on_disconnected(200);
    EXPECT_EQ(binds_at(1000), 0u);
}

// max_connections counts idle connections, but one idle for evict_idle_s gives way to
// a new one; connections in use do not.
TEST(Pep, AtTheLimitTheLongestIdleConnectionMakesRoom)
{
    pep_pair p("max_connections=3; evict_idle_s=60");
    std::vector<pep_connection> conns;
    for (int i = 0; i < 3; ++i) {
        conns.push_back(p.a->accept(to("10.0.2.5", 80), p.now));
        p.run(1);
        p.b->connected(p.of(p.far, K::connect).back().connection, p.now);
        p.run(1);
        p.now += 5;
    }
    // All three used within the last minute: a fourth is busy.
    const auto busy = p.a->accept(to("10.0.2.5", 80), p.now);
    p.run(1);
    EXPECT_EQ(p.of(p.near, K::failed, busy).at(0).status, pep_status::busy);
    // The first two idle, the third in use: the first (idle longest) makes room.
    p.now += 100;
    const bytes b = as_bytes("x");
    p.a->from_tcp(conns[2], b.data(), 1, p.now);
    p.run(1);
    const auto fresh = p.a->accept(to("10.0.2.5", 80), p.now);
    p.run(1);
    EXPECT_TRUE(p.of(p.near, K::failed, fresh).empty());
    EXPECT_EQ(p.of(p.near, K::reset, conns[0]).size(), 1u);
    EXPECT_TRUE(p.of(p.near, K::reset, conns[1]).empty());
    EXPECT_EQ(p.a->counters().evicted, 1u);
    EXPECT_EQ(p.a->connection_count(), 3u);
    // The driver's own cap (file descriptors) is below max_connections: it rules.
    p.a->limit_connections(2);
    EXPECT_EQ(p.a->connection_limit(), 2u);
}

// The load with the defaults: 1,000 idle connections stay while 100 more are
// opened, carried and closed.
TEST(Pep, DefaultsHoldAThousandIdleAndAHundredActiveConnections)
{
    pep_pair p;
    std::vector<pep_connection> idle;
    for (int i = 0; i < 1000; ++i)
        idle.push_back(p.a->accept(to("10.0.2.5", 80), p.now));
    p.run(1);
    for (const auto& c : p.of(p.far, K::connect))
        p.b->connected(c.connection, p.now);
    p.run(1);
    p.far.clear();
    size_t carried = 0;
    for (int i = 0; i < 100; ++i) {
        const auto c = p.a->accept(to("10.0.2.6", 80), p.now);
        const bytes request = as_bytes("request " + std::to_string(i));
        p.a->from_tcp(c, request.data(), request.size(), p.now);
        p.run(1);
        const auto connects = p.of(p.far, K::connect);
        if (connects.empty() || !p.of(p.near, K::failed, c).empty())
            continue;
        const auto f = connects.back().connection;
        p.far.clear();
        p.b->connected(f, p.now);
        p.run(1);
        carried += p.take(*p.b, f) == request;
        p.a->tcp_finished(c, p.now);
        p.b->tcp_finished(f, p.now);
        p.run(1);
    }
    EXPECT_EQ(carried, 100u);
    for (auto c : idle)
        EXPECT_TRUE(p.a->stats(c).has_value());
    EXPECT_EQ(p.a->counters().evicted, 0u);
}
