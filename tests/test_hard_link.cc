/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

// Hard-link manager tests (STANAG 5066 Ed.3 Annex A.3.2.2): managers wired back to back
// through the S_PDU codec, one test per rule.
#include "dl/hard_link.h"

#include <gtest/gtest.h>

#include <limits>
#include <map>
#include <vector>

using namespace gr::hfstack::dl;

namespace {

constexpr uint32_t A = 0x0A0B0C1, B = 0x0A0B0C2, C = 0x0A0B0C3;
constexpr double inf = std::numeric_limits<double>::infinity();

struct node {
    node(uint32_t addr, hard_link_config cfg = {}) : address(addr), hl(cfg, &saps) {}
    node(const node&) = delete;
    node& operator=(const node&) = delete;

    void bind(uint32_t client, uint8_t sap, uint8_t rank = 0)
    {
        sis_primitive p;
        p.type = sis_type::bind_request;
        p.sap = sap;
        p.rank = rank;
        p.service_type.tx_mode = sis_tx_mode::arq;
        auto out = saps.bind(client, p);
        ASSERT_EQ(out.size(), 1u);
        ASSERT_EQ(out[0].primitive.type, sis_type::bind_accepted);
    }

    uint32_t address;
    sap_table saps;
    hard_link_manager hl;
};

struct sent {
    uint32_t from, to;
    spdu pdu;
};

// Delivers every S_PDU between `nodes` (through encode / decode_spdu) until all are
// quiet; returns them in order. S_PDUs to addresses not in `nodes` are dropped.
std::vector<sent> pump(const std::vector<node*>& nodes, double now)
{
    std::vector<sent> log;
    std::map<uint32_t, node*> by_addr;
    for (node* n : nodes)
        by_addr[n->address] = n;
    for (bool busy = true; busy;) {
        busy = false;
        for (node* n : nodes) {
            for (auto& o : n->hl.take_spdus()) {
                busy = true;
                auto d = decode_spdu(encode(o.pdu));
                EXPECT_TRUE(d.ok()) << d.reason;
                EXPECT_EQ(d.value, o.pdu);
                log.push_back({ n->address, o.peer, d.value });
                auto it = by_addr.find(o.peer);
                if (it != by_addr.end())
                    it->second->hl.on_spdu(n->address, d.value, now);
            }
        }
    }
    return log;
}

sis_primitive
establish(uint32_t remote, hard_link_type type, uint8_t priority, uint8_t remote_sap = 0)
{
    sis_primitive p;
    p.type = sis_type::hard_link_establish;
    p.link_type = type;
    p.link_priority = priority;
    p.remote_sap = remote_sap;
    p.remote.address = remote;
    return p;
}

sis_primitive answer(sis_type t, const sis_primitive& indication, uint8_t reason = 0)
{
    sis_primitive p = indication;
    p.type = t;
    p.remote_status = 0;
    p.reason = reason;
    return p;
}

std::vector<spdu_type> types_of(const std::vector<sent>& log)
{
    std::vector<spdu_type> t;
    for (const auto& s : log)
        t.push_back(s.pdu.type);
    return t;
}

// Exactly one message, to `client`, of type `t`; returns it.
sis_primitive only(std::vector<client_message> msgs, uint32_t client, sis_type t)
{
    EXPECT_EQ(msgs.size(), 1u);
    if (msgs.size() != 1)
        return {};
    EXPECT_EQ(msgs[0].client, client);
    EXPECT_EQ(msgs[0].primitive.type, t) << to_string(msgs[0].primitive.type);
    // Everything handed to a client must be encodable.
    EXPECT_NO_THROW(encode(msgs[0].primitive));
    return msgs[0].primitive;
}

constexpr uint32_t client_a = 10, client_a2 = 11, client_b = 20, client_c = 30;
constexpr uint8_t sap_a = 3, sap_a2 = 4, sap_b = 5, sap_c = 6;

const auto T0 = hard_link_type::link_reservation;
const auto T1 = hard_link_type::partial_bandwidth_reservation;
const auto T2 = hard_link_type::full_bandwidth_reservation;

uint8_t r(sis_hard_link_rejected_reason x) { return uint8_t(x); }
uint8_t r(sis_hard_link_terminated_reason x) { return uint8_t(x); }

// Establishes a type 0 / 1 link from a's client_a to b and drains all outputs.
void up(node& a, node& b, hard_link_type type, uint8_t prio, double now = 0)
{
    a.hl.on_establish(client_a, sap_a, establish(b.address, type, prio), now);
    pump({ &a, &b }, now);
    only(a.hl.take_client_messages(), client_a, sis_type::hard_link_established);
    EXPECT_TRUE(b.hl.take_client_messages().empty());
}

// Type 2 from a's client_a to b's client_b (SAP sap_b), accepted.
void up2(node& a, node& b, uint8_t prio, double now = 0)
{
    a.hl.on_establish(client_a, sap_a, establish(b.address, T2, prio, sap_b), now);
    pump({ &a, &b }, now);
    auto ind =
        only(b.hl.take_client_messages(), client_b, sis_type::hard_link_indication);
    b.hl.on_client_answer(client_b, answer(sis_type::hard_link_accept, ind), now);
    pump({ &a, &b }, now);
    only(a.hl.take_client_messages(), client_a, sis_type::hard_link_established);
}

} // namespace

TEST(HardLink, Type0EndToEnd)
{
    node a(A), b(B);
    a.bind(client_a, sap_a);
    a.hl.on_establish(client_a, sap_a, establish(B, T0, 1), 0);
    ASSERT_TRUE(a.hl.active());
    EXPECT_EQ(a.hl.active()->state, hard_link_state::requesting);
    EXPECT_TRUE(a.hl.take_client_messages().empty()); // not before the peer confirms

    auto log = pump({ &a, &b }, 1);
    ASSERT_EQ(log.size(), 2u);
    EXPECT_EQ(log[0].to, B);
    EXPECT_EQ(log[0].pdu.type, spdu_type::hard_link_establishment_request);
    EXPECT_EQ(log[0].pdu.link_type, 0);
    EXPECT_EQ(log[0].pdu.link_priority, 1);
    EXPECT_EQ(log[0].pdu.requesting_sap, sap_a);
    EXPECT_EQ(log[1].to, A);
    EXPECT_EQ(log[1].pdu.type, spdu_type::hard_link_establishment_confirm);

    auto est =
        only(a.hl.take_client_messages(), client_a, sis_type::hard_link_established);
    EXPECT_GE(est.remote_status, 1); // OK
    EXPECT_EQ(est.link_type, T0);
    EXPECT_EQ(est.link_priority, 1);
    EXPECT_EQ(est.remote.address, B);
    // A.2.1.11: no indication at the called node for type 0.
    EXPECT_TRUE(b.hl.take_client_messages().empty());

    ASSERT_TRUE(b.hl.active());
    EXPECT_EQ(a.hl.active()->state, hard_link_state::established);
    EXPECT_EQ(b.hl.active()->state, hard_link_state::established);
    EXPECT_EQ(b.hl.active()->role, hard_link_role::called);
    EXPECT_EQ(b.hl.active()->peer, A);
    EXPECT_FALSE(b.hl.active()->client.has_value());
    EXPECT_EQ(b.hl.active()->remote_sap, sap_a);
    EXPECT_EQ(a.hl.counters().established, 1u);
    EXPECT_EQ(b.hl.counters().established, 1u);
    EXPECT_EQ(a.hl.next_deadline(), inf);
    EXPECT_EQ(b.hl.next_deadline(), inf);
}

TEST(HardLink, Type1IsConfirmedWithoutAskingARemoteClient)
{
    node a(A), b(B);
    a.bind(client_a, sap_a);
    b.bind(client_b, sap_b);
    up(a, b, T1, 2);
    EXPECT_EQ(a.hl.active()->type, T1);
    EXPECT_EQ(b.hl.active()->type, T1);
}

TEST(HardLink, Type2RemoteClientAccepts)
{
    node a(A), b(B);
    a.bind(client_a, sap_a);
    b.bind(client_b, sap_b, 2);
    a.hl.on_establish(client_a, sap_a, establish(B, T2, 3, sap_b), 0);
    auto log = pump({ &a, &b }, 0);
    ASSERT_EQ(types_of(log),
              std::vector<spdu_type>{ spdu_type::hard_link_establishment_request });
    EXPECT_EQ(log[0].pdu.remote_sap, sap_b);

    auto ind =
        only(b.hl.take_client_messages(), client_b, sis_type::hard_link_indication);
    EXPECT_EQ(ind.link_type, T2);
    EXPECT_EQ(ind.link_priority, 3);
    EXPECT_EQ(ind.remote.address, A); // A.2.1.11 (6): the caller's node
    EXPECT_EQ(ind.remote_sap, sap_a); // A.2.1.11 (7): the caller's SAP
    EXPECT_GE(ind.remote_status, 1);
    EXPECT_EQ(b.hl.active()->state, hard_link_state::awaiting_client);
    EXPECT_EQ(b.hl.active()->rank, 2); // the bound client's rank (A.3.2.2.2 (19))
    EXPECT_EQ(b.hl.next_deadline(), b.hl.config().accept_timeout);

    // Another client cannot answer for it.
    b.hl.on_client_answer(client_b + 1, answer(sis_type::hard_link_accept, ind), 1);
    EXPECT_TRUE(pump({ &a, &b }, 1).empty());

    b.hl.on_client_answer(client_b, answer(sis_type::hard_link_accept, ind), 2);
    log = pump({ &a, &b }, 2);
    ASSERT_EQ(types_of(log),
              std::vector<spdu_type>{ spdu_type::hard_link_establishment_confirm });
    auto est =
        only(a.hl.take_client_messages(), client_a, sis_type::hard_link_established);
    EXPECT_EQ(est.remote_sap, sap_b);
    EXPECT_EQ(est.link_type, T2);
    EXPECT_TRUE(b.hl.take_client_messages().empty());
    EXPECT_EQ(b.hl.active()->state, hard_link_state::established);
    EXPECT_EQ(b.hl.active()->client, client_b);
    EXPECT_EQ(b.hl.next_deadline(), inf);
}

TEST(HardLink, Type2RemoteClientRejects)
{
    for (uint8_t client_reason : { 2, 9 }) {
        node a(A), b(B);
        a.bind(client_a, sap_a);
        b.bind(client_b, sap_b);
        a.hl.on_establish(client_a, sap_a, establish(B, T2, 0, sap_b), 0);
        pump({ &a, &b }, 0);
        auto ind =
            only(b.hl.take_client_messages(), client_b, sis_type::hard_link_indication);
        b.hl.on_client_answer(
            client_b, answer(sis_type::hard_link_reject, ind, client_reason), 1);
        auto log = pump({ &a, &b }, 1);
        ASSERT_EQ(types_of(log),
                  std::vector<spdu_type>{ spdu_type::hard_link_establishment_rejected });
        auto rej =
            only(a.hl.take_client_messages(), client_a, sis_type::hard_link_rejected);
        // A defined reason is passed on; anything else becomes "remote node busy".
        EXPECT_EQ(rej.reason, client_reason == 2 ? 2 : 1);
        EXPECT_EQ(rej.link_type, T2);
        EXPECT_EQ(rej.remote_sap, sap_b);
        EXPECT_FALSE(a.hl.active());
        EXPECT_FALSE(b.hl.active());
    }
}

TEST(HardLink, Type2ToAnUnboundSapIsRejected)
{
    node a(A), b(B);
    a.bind(client_a, sap_a);
    a.hl.on_establish(client_a, sap_a, establish(B, T2, 0, 9), 0);
    pump({ &a, &b }, 0);
    auto rej = only(a.hl.take_client_messages(), client_a, sis_type::hard_link_rejected);
    EXPECT_EQ(rej.reason, r(sis_hard_link_rejected_reason::destination_sap_not_bound));
    EXPECT_TRUE(b.hl.take_client_messages().empty());
    EXPECT_FALSE(b.hl.active());
}

TEST(HardLink, Type2RemoteClientSilentTimesOut)
{
    node a(A), b(B);
    a.bind(client_a, sap_a);
    b.bind(client_b, sap_b);
    a.hl.on_establish(client_a, sap_a, establish(B, T2, 0, sap_b), 0);
    pump({ &a, &b }, 0);
    auto ind =
        only(b.hl.take_client_messages(), client_b, sis_type::hard_link_indication);
    const double t = b.hl.next_deadline();
    b.hl.on_timer(t - 0.001);
    EXPECT_TRUE(pump({ &a, &b }, t).empty());
    b.hl.on_timer(t);
    pump({ &a, &b }, t);
    auto rej = only(a.hl.take_client_messages(), client_a, sis_type::hard_link_rejected);
    EXPECT_EQ(rej.reason, r(sis_hard_link_rejected_reason::remote_not_responding));
    // A late accept changes nothing.
    b.hl.on_client_answer(client_b, answer(sis_type::hard_link_accept, ind), t + 1);
    EXPECT_TRUE(pump({ &a, &b }, t + 1).empty());
    EXPECT_FALSE(b.hl.active());
}

TEST(HardLink, NoAnswerGivesRemoteNotResponding)
{
    node a(A);
    a.bind(client_a, sap_a);
    a.hl.on_establish(client_a, sap_a, establish(B, T0, 0), 10);
    EXPECT_EQ(a.hl.take_spdus().size(), 1u); // lost
    EXPECT_EQ(a.hl.next_deadline(), 10 + a.hl.config().response_timeout);
    a.hl.on_timer(a.hl.next_deadline() - 0.001);
    EXPECT_TRUE(a.hl.take_client_messages().empty());
    a.hl.on_timer(a.hl.next_deadline());
    auto rej = only(a.hl.take_client_messages(), client_a, sis_type::hard_link_rejected);
    EXPECT_EQ(rej.reason, r(sis_hard_link_rejected_reason::remote_not_responding));
    EXPECT_EQ(rej.remote.address, B);
    EXPECT_FALSE(a.hl.active());
    EXPECT_EQ(a.hl.next_deadline(), inf);
    EXPECT_EQ(a.hl.counters().timeouts, 1u);
}

TEST(HardLink, LateConfirmIsAnsweredWithTerminate)
{
    node a(A), b(B);
    a.bind(client_a, sap_a);
    a.hl.on_establish(client_a, sap_a, establish(B, T0, 0), 0);
    auto req = a.hl.take_spdus();
    a.hl.on_timer(a.hl.next_deadline());
    only(a.hl.take_client_messages(), client_a, sis_type::hard_link_rejected);
    b.hl.on_spdu(A, req.at(0).pdu, 200); // arrives late; B confirms
    auto log = pump({ &a, &b }, 200);
    EXPECT_EQ(types_of(log),
              (std::vector<spdu_type>{ spdu_type::hard_link_establishment_confirm,
                                       spdu_type::hard_link_terminate,
                                       spdu_type::hard_link_terminate_confirm }));
    EXPECT_FALSE(a.hl.active());
    EXPECT_FALSE(b.hl.active());
    EXPECT_TRUE(a.hl.take_client_messages().empty());
    EXPECT_EQ(a.hl.next_deadline(), inf);
}

TEST(HardLink, HigherPriorityLocalRequestPreempts)
{
    node a(A), b(B), c(C);
    a.bind(client_a, sap_a);
    a.bind(client_a2, sap_a2);
    up(a, b, T0, 0);
    a.hl.on_establish(client_a2, sap_a2, establish(C, T1, 2), 5);
    auto term =
        only(a.hl.take_client_messages(), client_a, sis_type::hard_link_terminated);
    EXPECT_EQ(term.reason,
              r(sis_hard_link_terminated_reason::higher_priority_link_requested));
    EXPECT_EQ(term.remote.address, B);
    auto log = pump({ &a, &b, &c }, 5);
    ASSERT_EQ(log.size(), 4u);
    EXPECT_EQ(log[0].to, B);
    EXPECT_EQ(log[0].pdu.type, spdu_type::hard_link_terminate);
    EXPECT_EQ(log[0].pdu.reason,
              uint8_t(hard_link_terminate_reason::higher_priority_link_requested));
    EXPECT_EQ(log[1].to, C);
    EXPECT_EQ(log[1].pdu.type, spdu_type::hard_link_establishment_request);
    only(a.hl.take_client_messages(), client_a2, sis_type::hard_link_established);
    EXPECT_FALSE(b.hl.active());                      // B was told and confirmed
    EXPECT_TRUE(b.hl.take_client_messages().empty()); // type 0: no client at B
    EXPECT_EQ(a.hl.active()->peer, C);
    EXPECT_EQ(a.hl.next_deadline(), inf); // TERMINATE CONFIRM received
    EXPECT_EQ(a.hl.counters().preempted, 1u);
}

TEST(HardLink, PreemptionAtTheCalledNodeTellsItsType2Client)
{
    node a(A), b(B), c(C);
    a.bind(client_a, sap_a);
    b.bind(client_b, sap_b);
    c.bind(client_c, sap_c, 7);
    up2(a, b, 1);
    // C's higher-ranked client asks B for a type 0 link: B's default called rank is 0,
    // so only a higher priority wins there.
    c.hl.on_establish(client_c, sap_c, establish(B, T0, 2), 3);
    pump({ &a, &b, &c }, 3);
    only(c.hl.take_client_messages(), client_c, sis_type::hard_link_established);
    auto tb = only(b.hl.take_client_messages(), client_b, sis_type::hard_link_terminated);
    EXPECT_EQ(tb.reason,
              r(sis_hard_link_terminated_reason::higher_priority_link_requested));
    auto ta = only(a.hl.take_client_messages(), client_a, sis_type::hard_link_terminated);
    EXPECT_EQ(ta.reason,
              r(sis_hard_link_terminated_reason::higher_priority_link_requested));
    EXPECT_FALSE(a.hl.active());
    EXPECT_EQ(b.hl.active()->peer, C);
}

TEST(HardLink, HigherRankWinsOverHigherPriority)
{
    node a(A), b(B), c(C);
    a.bind(client_a, sap_a, 1);
    a.bind(client_a2, sap_a2, 5);
    up(a, b, T0, 3);
    a.hl.on_establish(client_a2, sap_a2, establish(C, T0, 0), 1);
    auto t = only(a.hl.take_client_messages(), client_a, sis_type::hard_link_terminated);
    EXPECT_EQ(t.reason,
              r(sis_hard_link_terminated_reason::higher_priority_link_requested));
    pump({ &a, &b, &c }, 1);
    only(a.hl.take_client_messages(), client_a2, sis_type::hard_link_established);
}

TEST(HardLink, LowerOrEqualPrecedenceLocalRequestIsRejected)
{
    node a(A), b(B), c(C);
    a.bind(client_a, sap_a);
    a.bind(client_a2, sap_a2);
    up(a, b, T1, 2);
    struct {
        uint32_t to;
        hard_link_type type;
        uint8_t prio;
        uint8_t reason;
    } cases[] = {
        { C, T0, 1, r(sis_hard_link_rejected_reason::higher_priority_link_exists) },
        { C,
          T2,
          2,
          r(sis_hard_link_rejected_reason::higher_priority_link_exists) }, // rule 3
        { B,
          T1,
          2,
          r(sis_hard_link_rejected_reason::higher_priority_link_exists) }, // rule 4
        { B, T0, 2, r(sis_hard_link_rejected_reason::type0_link_exists) },
        { B, T0, 1, r(sis_hard_link_rejected_reason::higher_priority_link_exists) },
    };
    for (const auto& k : cases) {
        a.hl.on_establish(client_a2, sap_a2, establish(k.to, k.type, k.prio, 1), 1);
        auto rej =
            only(a.hl.take_client_messages(), client_a2, sis_type::hard_link_rejected);
        EXPECT_EQ(rej.reason, k.reason)
            << k.to << " " << int(k.type) << " " << int(k.prio);
        EXPECT_EQ(rej.link_priority, k.prio);
        EXPECT_TRUE(a.hl.take_spdus().empty());
    }
    EXPECT_EQ(a.hl.active()->client, client_a);
    EXPECT_EQ(a.hl.active()->state, hard_link_state::established);
    // Same nodes, rank and priority, greater type: wins (rule 4).
    a.hl.on_establish(client_a2, sap_a2, establish(B, T2, 2, 0), 2);
    only(a.hl.take_client_messages(), client_a, sis_type::hard_link_terminated);
}

TEST(HardLink, RemoteRequestOfLowerOrEqualPrecedenceIsRejected)
{
    node a(A), b(B), c(C);
    a.bind(client_a, sap_a);
    c.bind(client_c, sap_c);
    up(a, b, T0, 2); // B holds a called link (default rank 0, priority 2)
    for (uint8_t prio : { 1, 2 }) {
        c.hl.on_establish(client_c, sap_c, establish(B, T1, prio), 1);
        auto log = pump({ &b, &c }, 1);
        ASSERT_EQ(
            types_of(log),
            (std::vector<spdu_type>{ spdu_type::hard_link_establishment_request,
                                     spdu_type::hard_link_establishment_rejected }));
        auto rej =
            only(c.hl.take_client_messages(), client_c, sis_type::hard_link_rejected);
        EXPECT_EQ(rej.reason,
                  prio == 2
                      ? r(sis_hard_link_rejected_reason::remote_busy)
                      : r(sis_hard_link_rejected_reason::higher_priority_link_exists));
    }
    EXPECT_EQ(b.hl.active()->peer, A);
    EXPECT_EQ(b.hl.counters().rejected_remote, 2u);
}

TEST(HardLink, RemoteRequestPreemptsALocalLink)
{
    node a(A), b(B), c(C);
    a.bind(client_a, sap_a);
    c.bind(client_c, sap_c);
    up(a, b, T0, 0); // A is the caller
    c.hl.on_establish(client_c, sap_c, establish(A, T0, 3), 1);
    auto log = pump({ &a, &b, &c }, 1);
    auto t = only(a.hl.take_client_messages(), client_a, sis_type::hard_link_terminated);
    EXPECT_EQ(t.reason,
              r(sis_hard_link_terminated_reason::higher_priority_link_requested));
    only(c.hl.take_client_messages(), client_c, sis_type::hard_link_established);
    EXPECT_FALSE(b.hl.active());
    EXPECT_EQ(a.hl.active()->peer, C);
    EXPECT_EQ(a.hl.active()->role, hard_link_role::called);
}

TEST(HardLink, CallerTerminates)
{
    node a(A), b(B);
    a.bind(client_a, sap_a);
    b.bind(client_b, sap_b);
    up2(a, b, 0);
    a.hl.on_terminate(client_a + 1, 1); // not the owner
    EXPECT_TRUE(a.hl.take_spdus().empty());
    a.hl.on_terminate(client_a, 1);
    EXPECT_FALSE(a.hl.active());
    EXPECT_EQ(a.hl.next_deadline(), 1 + a.hl.config().terminate_timeout);
    auto log = pump({ &a, &b }, 1);
    ASSERT_EQ(types_of(log),
              (std::vector<spdu_type>{ spdu_type::hard_link_terminate,
                                       spdu_type::hard_link_terminate_confirm }));
    EXPECT_EQ(log[0].pdu.reason, uint8_t(hard_link_terminate_reason::client_request));
    // The remote type 2 client is told; the requester is not (A.2.1.7 note).
    auto t = only(b.hl.take_client_messages(), client_b, sis_type::hard_link_terminated);
    EXPECT_EQ(t.reason, r(sis_hard_link_terminated_reason::terminated_by_remote));
    EXPECT_TRUE(a.hl.take_client_messages().empty());
    EXPECT_FALSE(b.hl.active());
    EXPECT_EQ(a.hl.next_deadline(), inf);
    a.hl.on_timer(1000);
    EXPECT_TRUE(a.hl.take_client_messages().empty());
}

TEST(HardLink, CalledSideTerminates)
{
    node a(A), b(B);
    a.bind(client_a, sap_a);
    b.bind(client_b, sap_b);
    up2(a, b, 0);
    b.hl.on_terminate(client_b, 1);
    pump({ &a, &b }, 1);
    auto t = only(a.hl.take_client_messages(), client_a, sis_type::hard_link_terminated);
    EXPECT_EQ(t.reason, r(sis_hard_link_terminated_reason::terminated_by_remote));
    EXPECT_EQ(t.remote.address, B);
    EXPECT_TRUE(b.hl.take_client_messages().empty());
    EXPECT_FALSE(a.hl.active());
    EXPECT_FALSE(b.hl.active());
}

TEST(HardLink, CalledSideType0CannotBeTerminatedByALocalClient)
{
    node a(A), b(B);
    a.bind(client_a, sap_a);
    b.bind(client_b, sap_b);
    up(a, b, T0, 0);
    b.hl.on_terminate(client_b, 1);
    EXPECT_TRUE(b.hl.take_spdus().empty());
    EXPECT_TRUE(b.hl.active());
    EXPECT_EQ(b.hl.counters().ignored, 1u);
}

TEST(HardLink, UnconfirmedTerminateTimesOut)
{
    node a(A), b(B);
    a.bind(client_a, sap_a);
    up(a, b, T1, 0);
    a.hl.on_terminate(client_a, 50);
    EXPECT_EQ(a.hl.take_spdus().size(), 1u); // lost
    const double t = a.hl.next_deadline();
    EXPECT_EQ(t, 50 + a.hl.config().terminate_timeout);
    a.hl.on_timer(t - 0.001);
    EXPECT_TRUE(a.hl.take_client_messages().empty());
    a.hl.on_timer(t);
    auto term =
        only(a.hl.take_client_messages(), client_a, sis_type::hard_link_terminated);
    EXPECT_EQ(term.reason, r(sis_hard_link_terminated_reason::remote_not_responding));
    EXPECT_EQ(term.link_type, T1);
    EXPECT_EQ(a.hl.next_deadline(), inf);
}

TEST(HardLink, LinkLossIsPhysicalLinkBroken)
{
    node a(A), b(B);
    a.bind(client_a, sap_a);
    b.bind(client_b, sap_b);
    up2(a, b, 1);
    a.hl.on_link_lost(C, 3); // another peer: no effect
    EXPECT_TRUE(a.hl.take_client_messages().empty());
    a.hl.on_link_lost(B, 3);
    b.hl.on_link_lost(A, 3);
    auto ta = only(a.hl.take_client_messages(), client_a, sis_type::hard_link_terminated);
    auto tb = only(b.hl.take_client_messages(), client_b, sis_type::hard_link_terminated);
    EXPECT_EQ(ta.reason, r(sis_hard_link_terminated_reason::physical_link_broken));
    EXPECT_EQ(tb.reason, r(sis_hard_link_terminated_reason::physical_link_broken));
    EXPECT_FALSE(a.hl.active());
    EXPECT_FALSE(b.hl.active());
    EXPECT_TRUE(a.hl.take_spdus().empty());

    // While requesting: the request fails as "remote node not responding".
    a.hl.on_establish(client_a, sap_a, establish(B, T0, 0), 4);
    a.hl.on_link_lost(B, 5);
    auto rej = only(a.hl.take_client_messages(), client_a, sis_type::hard_link_rejected);
    EXPECT_EQ(rej.reason, r(sis_hard_link_rejected_reason::remote_not_responding));
    EXPECT_EQ(a.hl.next_deadline(), inf);
}

TEST(HardLink, MayUseByType)
{
    // No hard link: everything goes.
    {
        node a(A);
        EXPECT_TRUE(a.hl.may_use(1, B, 2));
    }
    // Type 0: any SAP pair to the peer, nothing to other nodes.
    {
        node a(A), b(B);
        a.bind(client_a, sap_a);
        up(a, b, T0, 0);
        for (node* n : { &a, &b }) {
            const uint32_t peer = n == &a ? B : A;
            EXPECT_TRUE(n->hl.may_use(1, peer, 2));
            EXPECT_TRUE(n->hl.may_use(sap_a, peer, 9));
            EXPECT_FALSE(n->hl.may_use(sap_a, C, 2));
        }
    }
    // Type 1: only traffic of A's requesting client, with any client of B.
    {
        node a(A), b(B);
        a.bind(client_a, sap_a);
        up(a, b, T1, 0);
        EXPECT_TRUE(a.hl.may_use(sap_a, B, 0));
        EXPECT_TRUE(a.hl.may_use(sap_a, B, 12));
        EXPECT_FALSE(a.hl.may_use(sap_a2, B, 12));
        EXPECT_TRUE(b.hl.may_use(7, A, sap_a));
        EXPECT_FALSE(b.hl.may_use(7, A, sap_a2));
        EXPECT_FALSE(a.hl.may_use(sap_a, C, 12));
    }
    // Type 2: the one SAP pair.
    {
        node a(A), b(B);
        a.bind(client_a, sap_a);
        b.bind(client_b, sap_b);
        a.hl.on_establish(client_a, sap_a, establish(B, T2, 0, sap_b), 0);
        EXPECT_TRUE(a.hl.may_use(sap_a2, C, 1)); // still pending: not reserved yet
        pump({ &a, &b }, 0);
        auto ind =
            only(b.hl.take_client_messages(), client_b, sis_type::hard_link_indication);
        b.hl.on_client_answer(client_b, answer(sis_type::hard_link_accept, ind), 0);
        pump({ &a, &b }, 0);
        EXPECT_TRUE(a.hl.may_use(sap_a, B, sap_b));
        EXPECT_FALSE(a.hl.may_use(sap_a, B, sap_b + 1));
        EXPECT_FALSE(a.hl.may_use(sap_a2, B, sap_b));
        EXPECT_TRUE(b.hl.may_use(sap_b, A, sap_a));
        EXPECT_FALSE(b.hl.may_use(sap_b, A, sap_a2));
        EXPECT_FALSE(b.hl.may_use(sap_c, A, sap_a));
    }
}

TEST(HardLink, InvalidRequestsAreRefusedLocally)
{
    node a(A);
    a.bind(client_a, sap_a);
    a.hl.on_establish(client_a, sap_a, establish(B, T0, 4), 0);          // priority 0-3
    a.hl.on_establish(client_a, sap_a, establish(0x10000001, T0, 0), 0); // group address
    sis_primitive bad = establish(B, T0, 0);
    bad.link_type = hard_link_type(3);
    a.hl.on_establish(client_a, sap_a, bad, 0);
    auto msgs = a.hl.take_client_messages();
    ASSERT_EQ(msgs.size(), 3u);
    for (const auto& m : msgs) {
        EXPECT_EQ(m.primitive.type, sis_type::hard_link_rejected);
        EXPECT_EQ(m.primitive.reason, 0);
    }
    EXPECT_TRUE(a.hl.take_spdus().empty());
    EXPECT_FALSE(a.hl.active());
}

TEST(HardLink, TerminateWithoutALinkIsStillConfirmed)
{
    node b(B);
    spdu t;
    t.type = spdu_type::hard_link_terminate;
    t.reason = 1;
    b.hl.on_spdu(A, t, 0);
    auto out = b.hl.take_spdus();
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(out[0].peer, A);
    EXPECT_EQ(out[0].pdu.type, spdu_type::hard_link_terminate_confirm);
    EXPECT_TRUE(b.hl.take_client_messages().empty());
}

TEST(HardLink, OwnerLeavingTerminatesTheLink)
{
    node a(A), b(B);
    a.bind(client_a, sap_a);
    b.bind(client_b, sap_b);
    up2(a, b, 0);
    b.hl.on_client_gone(client_b, 1);
    auto log = pump({ &a, &b }, 1);
    ASSERT_FALSE(log.empty());
    EXPECT_EQ(log[0].pdu.reason,
              uint8_t(hard_link_terminate_reason::destination_sap_unbound));
    auto t = only(a.hl.take_client_messages(), client_a, sis_type::hard_link_terminated);
    EXPECT_EQ(t.reason, r(sis_hard_link_terminated_reason::destination_sap_not_bound));
    EXPECT_TRUE(b.hl.take_client_messages().empty());
}
