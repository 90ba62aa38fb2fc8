/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

// Shared by the node engine tests: in-process SIS clients on a virtual network, and
// builders for the primitives they send.
#ifndef HFSTACK_TESTS_NODE_TEST_SUPPORT_H
#define HFSTACK_TESTS_NODE_TEST_SUPPORT_H

#include "dl/deframer.h"
#include "dl/node_engine.h"
#include "sim/virtual_network.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <optional>
#include <random>

using namespace gr::hfstack;
using namespace gr::hfstack::dl;
using sim::channel_config;
using sim::virtual_network;

constexpr uint8_t test_sap = 5;

// Compares two U_PDU sequences, reporting the first difference instead of the bytes.
inline ::testing::AssertionResult same_sequence(const std::vector<bytes>& got,
                                                const std::vector<bytes>& want)
{
    for (size_t i = 0; i < std::min(got.size(), want.size()); ++i)
        if (got[i] != want[i])
            return ::testing::AssertionFailure()
                   << "first difference at U_PDU " << i << " of " << got.size()
                   << " (sizes " << got[i].size() << " vs " << want[i].size() << ")";
    if (got.size() != want.size())
        return ::testing::AssertionFailure()
               << got.size() << " U_PDUs instead of " << want.size();
    return ::testing::AssertionSuccess();
}

// Without `conf`: node delivery confirmation for ARQ, none otherwise (a bind asking
// confirmation without ARQ is refused).
inline sis_primitive
bind_request(uint8_t sap,
             sis_tx_mode mode = sis_tx_mode::arq,
             std::optional<sis_delivery_confirmation> want_conf = std::nullopt,
             uint8_t rank = 0)
{
    const auto conf =
        want_conf.value_or(mode == sis_tx_mode::arq ? sis_delivery_confirmation::node
                                                    : sis_delivery_confirmation::none);
    sis_primitive p;
    p.type = sis_type::bind_request;
    p.sap = sap;
    p.rank = rank;
    p.service_type.tx_mode = mode;
    p.service_type.delivery_confirmation = conf;
    return p;
}

// A U_PDU request to `dest_sap` of node `dest`.
inline sis_primitive unidata_to(uint32_t dest,
                                uint8_t dest_sap,
                                bytes payload,
                                uint8_t priority = 0,
                                uint32_t ttl = 0)
{
    sis_primitive p;
    p.type = sis_type::unidata_request;
    p.destination = sis_address{ dest, 7 };
    p.destination_sap = dest_sap;
    p.priority = priority;
    p.ttl = ttl;
    p.payload = std::move(payload);
    return p;
}

// ... to the test SAP.
inline sis_primitive
unidata(uint32_t dest, bytes payload, uint8_t priority = 0, uint32_t ttl = 0)
{
    return unidata_to(dest, test_sap, std::move(payload), priority, ttl);
}

// An ARQ U_PDU as node 1 delivers it to node 2's client on SAP 3: what a journal's
// delivery record holds.
inline sis_primitive arq_indication(bytes payload)
{
    sis_primitive ind;
    ind.type = sis_type::unidata_indication;
    ind.destination_sap = 3;
    ind.source = sis_address{ 1, 7 };
    ind.destination = sis_address{ 2, 7 };
    ind.service_type.tx_mode = sis_tx_mode::arq;
    ind.payload = std::move(payload);
    return ind;
}

inline node_config node_at(uint32_t address)
{
    node_config c;
    c.address = address;
    return c;
}

// A node that keys up without carrier sense (a lone engine whose turns a test drives).
inline node_config node_without_channel_access(uint32_t address)
{
    node_config c = node_at(address);
    c.channel_access.mode = channel_access_mode::none;
    return c;
}

inline std::vector<sis_type> types_of(const std::vector<client_message>& m)
{
    std::vector<sis_type> t;
    for (auto& x : m)
        t.push_back(x.primitive.type);
    return t;
}

inline std::vector<bytes> random_updus(size_t n, size_t max_size, uint32_t seed)
{
    std::mt19937 rng(seed);
    std::uniform_int_distribution<size_t> size(1, max_size);
    std::vector<bytes> out(n);
    for (auto& u : out) {
        u.resize(size(rng));
        for (auto& b : u)
            b = uint8_t(rng());
    }
    return out;
}

// In-process SIS clients on every node: record what they receive and feed a list of
// U_PDUs to the node as fast as its flow control allows.
struct clients {
    explicit clients(virtual_network& n) : net(n)
    {
        net.on_client_message(
            [this](size_t node, const client_message& m) { on_message(node, m); });
    }

    void bind(size_t node,
              uint32_t client,
              sis_tx_mode mode,
              std::optional<sis_delivery_confirmation> conf = std::nullopt)
    {
        net.client_send(node, client, bind_request(test_sap, mode, conf));
    }

    // Sends `updus` from (node, client) to `dest`, pausing while DATA_FLOW_OFF holds.
    void stream(size_t node, uint32_t client, uint32_t dest, std::vector<bytes> updus)
    {
        auto& s = senders[{ node, client }];
        s.dest = dest;
        s.items = std::move(updus);
        pump(node, client);
    }

    void pump(size_t node, uint32_t client)
    {
        auto& s = senders[{ node, client }];
        while (!s.flow_off && s.next < s.items.size()) {
            const size_t i = s.next++;
            net.client_send(node, client, unidata(s.dest, s.items[i]));
        }
    }

    void on_message(size_t node, const client_message& m)
    {
        auto& log = received[node];
        log.push_back(m);
        if (m.primitive.type == sis_type::keep_alive) { // a live client answers
            net.client_send(node, m.client, m.primitive);
            return;
        }
        auto it = senders.find({ node, m.client });
        if (it == senders.end())
            return;
        if (m.primitive.type == sis_type::data_flow_off)
            it->second.flow_off = true;
        if (m.primitive.type == sis_type::data_flow_on) {
            it->second.flow_off = false;
            pump(node, m.client);
        }
    }

    std::vector<bytes> payloads(size_t node, sis_type type) const
    {
        std::vector<bytes> out;
        auto it = received.find(node);
        if (it == received.end())
            return out;
        for (auto& m : it->second)
            if (m.primitive.type == type)
                out.push_back(m.primitive.payload);
        return out;
    }
    // U_PDUs indicated at `node` that came from node address `source`, in order.
    std::vector<bytes> payloads_from(size_t node, uint32_t source) const
    {
        std::vector<bytes> out;
        auto it = received.find(node);
        if (it != received.end())
            for (auto& m : it->second)
                if (m.primitive.type == sis_type::unidata_indication &&
                    m.primitive.source.address == source)
                    out.push_back(m.primitive.payload);
        return out;
    }
    size_t count(size_t node, sis_type type) const
    {
        auto it = received.find(node);
        if (it == received.end())
            return 0;
        size_t n = 0;
        for (auto& m : it->second)
            n += m.primitive.type == type;
        return n;
    }

    struct sender {
        uint32_t dest = 0;
        std::vector<bytes> items;
        size_t next = 0;
        bool flow_off = false;
    };
    virtual_network& net;
    std::map<std::pair<size_t, uint32_t>, sender> senders;
    std::map<size_t, std::vector<client_message>> received;
};


// The D_PDUs of a transmission, as a receiver without errors would find them.
inline std::vector<dpdu> frames_of(const node_transmission& t)
{
    dpdu_deframer df;
    std::vector<dpdu> out;
    for (auto& f : df.push(t.burst.data(), t.burst.size()))
        out.push_back(f.frame);
    return out;
}

// SAP 3 bound at n1 and n2 (addresses 1 and 2) and three 600-byte U_PDUs (all bytes
// 1, 2, 3) queued at n1 for n2; then whole bursts passed between them (both modems at
// once, no carrier sense), each arriving at the end of its air time, until n1 produces
// a burst carrying ARQ data: that one is returned undelivered, with `now` at the time
// it was produced. n2's actions are taken through `take_n2` (a test that keeps n2's
// journal sees them all).
inline node_transmission first_data_burst(
    node_engine& n1,
    node_engine& n2,
    double& now,
    const std::function<node_actions(node_engine&)>& take_n2 = [](node_engine& e) {
        return e.take_actions();
    })
{
    n1.on_sis(1, bind_request(3), now);
    n2.on_sis(7, bind_request(3), now);
    take_n2(n2);
    for (uint8_t k = 0; k < 3; ++k)
        n1.on_sis(1, unidata_to(2, 3, bytes(600, uint8_t(k + 1))), now);
    for (int round = 0; round < 20; ++round) {
        for (auto* from : { &n1, &n2 }) {
            node_engine* to = from == &n1 ? &n2 : &n1;
            for (auto& t :
                 (from == &n2 ? take_n2(n2) : n1.take_actions()).transmissions) {
                const auto frames = frames_of(t);
                const bool carries_data =
                    std::any_of(frames.begin(), frames.end(), [](const dpdu& d) {
                        return d.type == dpdu_type::data_only ||
                               d.type == dpdu_type::data_ack;
                    });
                if (from == &n1 && carries_data)
                    return t;
                to->on_burst(t.burst, burst_info{}, now + t.air_time_s);
            }
        }
        now = std::min(n1.next_deadline(), n2.next_deadline());
        if (!std::isfinite(now))
            break;
        n1.on_timer(now);
        n2.on_timer(now);
    }
    ADD_FAILURE() << "no data burst from the first node";
    return node_transmission{};
}

// A virtual network with in-process clients; add_two_nodes() adds nodes 0.0.0.1 (a)
// and 0.0.0.2 (b) with the default configuration.
class node_network_test : public ::testing::Test
{
protected:
    // Independent bit errors on every path, seeded.
    void use_ber(double ber, uint64_t seed)
    {
        channel_config ch;
        ch.ber = ber;
        ch.seed = seed;
        net.set_channel_all(ch);
    }

    void add_two_nodes()
    {
        a = net.add_node(node_at(1));
        b = net.add_node(node_at(2));
    }

    // a and b starting in 2400S with automatic rate over autobaud modems, short probes
    // of probe_s seconds after an unanswered transmission (0: off), ARQ SAP 1 bound.
    void add_adaptive_pair(double probe_s)
    {
        node_config ca = node_at(1), cb = node_at(2);
        for (auto* c : { &ca, &cb })
            set_node_options(*c,
                             "mode=2400S;rate_adaptation=true;rate_change.autobaud=true;"
                             "unanswered_probe_s=" +
                                 std::to_string(probe_s));
        a = net.add_node(ca);
        b = net.add_node(cb);
        cl.bind(a, 1, sis_tx_mode::arq);
        cl.bind(b, 1, sis_tx_mode::arq);
    }

    virtual_network net;
    clients cl{ net };
    size_t a = 0, b = 0;
};

#endif
