/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

// Data rate change tests (STANAG 5066 Ed.3 Annex C.5 types 1/2 and C.6.4): hand-driven
// handshakes with EOW bytes computed through eow_content(), and two nodes back to back
// through the D_PDU codec over a lossy link. The rate policy's are test_rate_policy.cc.
#include "dl/rate_change.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>

using namespace gr::hfstack::dl;

namespace {

constexpr uint32_t A = 1, B = 2;
const modem_mode m300S{ rate_300, interleaving_short };
const modem_mode m300L{ rate_300, interleaving_long };
const modem_mode m600S{ rate_600, interleaving_short };
const modem_mode m1200S{ rate_1200, interleaving_short };
const modem_mode m1200L{ rate_1200, interleaving_long };
const modem_mode m2400S{ rate_2400, interleaving_short };
const modem_mode m2400L{ rate_2400, interleaving_long };

uint8_t req(uint8_t rate, uint8_t il, uint8_t other)
{
    eow_rate_request r;
    r.data_rate = rate;
    r.interleaving = il;
    r.other = other;
    return eow_content(r);
}
uint8_t resp(uint8_t response, uint8_t reason)
{
    eow_rate_response r;
    r.response = response;
    r.reason = reason;
    return eow_content(r);
}

rate_change_config cfg(uint32_t own, uint32_t peer)
{
    rate_change_config c;
    c.own_address = own;
    c.peer_address = peer;
    c.ack_timeout = 10.0;
    return c;
}

// Through the codec, as on the air.
dpdu wire(const dpdu& d)
{
    bytes b = encode(d);
    auto r = decode_dpdu(b.data(), b.size());
    EXPECT_TRUE(r.ok()) << r.reason;
    return r.value;
}

// Takes `from`'s MANAGEMENT D_PDUs (exactly one expected) and returns it.
dpdu take_one(rate_change& from, double now, modem_mode* mode = nullptr)
{
    auto t = from.take_management(now);
    EXPECT_TRUE(t.has_value());
    if (!t)
        return dpdu();
    EXPECT_EQ(t->dpdus.size(), 1u);
    if (mode)
        *mode = t->mode;
    return wire(t->dpdus.at(0));
}

// A DATA-ONLY D_PDU from `src` to `dst` carrying an EOW.
dpdu data_with_eow(uint32_t src, uint32_t dst, eow_type t, uint8_t content)
{
    dpdu d;
    d.type = dpdu_type::data_only;
    d.source = src;
    d.destination = dst;
    d.eow = t;
    d.eow_content = content;
    d.cpdu_start = d.cpdu_end = true;
    d.segment = { 0x00 };
    return wire(d);
}

bool has_event(const std::vector<drc_event>& ev, drc_event_type t)
{
    return std::any_of(
        ev.begin(), ev.end(), [&](const drc_event& e) { return e.type == t; });
}

TEST(RateChange, AutobaudFollowsAnAdvisoryAtOnceWithoutTheProcedure)
{
    auto ca = cfg(A, B), cb = cfg(B, A);
    ca.autobaud = cb.autobaud = true;
    rate_change a(ca), b(cb);
    b.advise_rx(m2400L, 0);
    auto adv = b.take_eow(0);
    ASSERT_TRUE(adv);
    a.on_dpdu(data_with_eow(B, A, adv->first, adv->second), 0);
    EXPECT_EQ(a.tx_mode(), m2400L);
    EXPECT_EQ(a.state(), drc_state::idle);
    EXPECT_FALSE(a.management_pending());
    EXPECT_TRUE(has_event(a.take_events(), drc_event_type::tx_mode_changed));
    // b keeps advising until a burst in the advised mode arrives.
    EXPECT_TRUE(b.take_eow(1));
    b.on_burst_mode(m2400L);
    EXPECT_EQ(b.rx_mode(), m2400L);
    EXPECT_FALSE(b.take_eow(1));
    // Without autobaud the burst's mode changes nothing.
    rate_change c(cfg(A, B));
    c.on_burst_mode(m2400L);
    EXPECT_EQ(c.rx_mode(), initial_drc_mode);
}

TEST(RateChange, UnansweredStepDownIgnoresStaleAdviceUntilAnswered)
{
    auto ca = cfg(A, B);
    ca.autobaud = true;
    rate_change a(ca);
    ASSERT_TRUE(a.request_tx(m2400S, 0));
    EXPECT_EQ(a.tx_mode(), m2400S);
    const modem_mode m600L{ rate_600, interleaving_long };
    EXPECT_FALSE(a.step_down_unanswered(m2400S, 1)); // not more robust
    ASSERT_TRUE(a.step_down_unanswered(m600L, 1));
    EXPECT_EQ(a.tx_mode(), m600L);
    EXPECT_EQ(a.counters().unanswered_step_downs, 1u);
    // The peer's advice for 2400S rests on what it measured before: ignored...
    eow_rate_request r;
    r.data_rate = rate_2400;
    r.interleaving = interleaving_short;
    r.other = 2; // advisory, independent Tx and Rx (Table C-7)
    a.on_dpdu(data_with_eow(B, A, eow_type::drc_request, eow_content(r)), 2);
    EXPECT_EQ(a.tx_mode(), m600L);
    EXPECT_EQ(a.counters().stale_advisories, 1u);
    // ... advice for a more robust mode is not ...
    r.data_rate = rate_300;
    r.interleaving = interleaving_long;
    a.on_dpdu(data_with_eow(B, A, eow_type::drc_request, eow_content(r)), 3);
    EXPECT_EQ(a.tx_mode(), (modem_mode{ rate_300, interleaving_long }));
    // ... and once the peer has answered, any advice is followed.
    a.on_peer_answered();
    r.data_rate = rate_2400;
    r.interleaving = interleaving_short;
    a.on_dpdu(data_with_eow(B, A, eow_type::drc_request, eow_content(r)), 4);
    EXPECT_EQ(a.tx_mode(), m2400S);
    // Without autobaud there is no unanswered step down.
    rate_change c(cfg(A, B));
    EXPECT_FALSE(c.step_down_unanswered(m600L, 0));
}

TEST(RateChange, AdvisoryEowBytes)
{
    rate_change b(cfg(B, A));
    EXPECT_FALSE(b.take_eow(0).has_value()); // nothing advised
    b.advise_rx(m300S, 0);
    EXPECT_FALSE(b.take_eow(0).has_value()); // already the rx mode
    b.advise_rx(m2400L, 0);
    auto e = b.take_eow(0);
    ASSERT_TRUE(e.has_value());
    EXPECT_EQ(e->first, eow_type::drc_request);
    EXPECT_EQ(e->second, req(rate_2400, interleaving_long, 2)); // advisory, independent
    EXPECT_EQ(e->second, 0x5A);                                 // 0101 10 10

    auto cfg_eq = cfg(B, A);
    cfg_eq.tx_equals_rx = true;
    rate_change b2(cfg_eq);
    b2.advise_rx(m1200S, 0);
    EXPECT_EQ(b2.take_eow(0)->second, 0x47); // 0100 01 11: advisory, Tx = Rx
}

TEST(RateChange, AdvisoryRequestAcceptConfirmSwitchesBoth)
{
    rate_change a(cfg(A, B)), b(cfg(B, A));
    double t = 0;
    b.advise_rx(m2400L, t);
    auto adv = b.take_eow(t);
    ASSERT_TRUE(adv);
    a.on_dpdu(data_with_eow(B, A, adv->first, adv->second), t);
    EXPECT_EQ(a.state(), drc_state::master_requesting);
    EXPECT_EQ(a.counters().advisories_followed, 1u);

    modem_mode mode;
    dpdu rq = take_one(a, t, &mode); // [2] DRC_Request in a MANAGEMENT D_PDU
    EXPECT_EQ(rq.type, dpdu_type::management);
    EXPECT_EQ(rq.source, A);
    EXPECT_EQ(rq.destination, B);
    EXPECT_TRUE(rq.valid_message);
    EXPECT_FALSE(rq.management_ack);
    EXPECT_EQ(rq.management_frame_id, 0);
    EXPECT_EQ(rq.eow, eow_type::drc_request);
    EXPECT_EQ(rq.eow_content, req(rate_2400, interleaving_long, 0)); // request, indep.
    EXPECT_EQ(rq.eow_content, 0x58);
    EXPECT_EQ(mode, m300S);
    EXPECT_EQ(a.next_deadline(), t + 10.0);

    t += 3;
    b.on_dpdu(rq, t);
    EXPECT_EQ(b.state(), drc_state::slave_accepted);
    EXPECT_FALSE(b.take_eow(t)); // no advisory while a procedure runs
    dpdu acc = take_one(b, t);   // [3] accept, unconditional; ACK flag acks [2]
    EXPECT_TRUE(acc.valid_message);
    EXPECT_TRUE(acc.management_ack);
    EXPECT_EQ(acc.management_frame_id, 0);
    EXPECT_EQ(acc.eow, eow_type::drc_response);
    EXPECT_EQ(acc.eow_content, resp(0, 0));
    EXPECT_EQ(acc.eow_content, 0x00);
    EXPECT_EQ(b.rx_mode(), m300S); // (29): not before the DT_ACK

    t += 3;
    a.on_dpdu(acc, t);
    EXPECT_EQ(a.state(), drc_state::master_confirming);
    EXPECT_EQ(a.tx_mode(), m300S);    // the DT_ACK itself still goes out in 300S
    dpdu ack = take_one(a, t, &mode); // [4] DT_ACK
    EXPECT_EQ(mode, m300S);
    EXPECT_FALSE(ack.valid_message);
    EXPECT_TRUE(ack.management_ack);
    EXPECT_EQ(ack.management_frame_id, 0); // ID of the frame acknowledged
    EXPECT_EQ(a.tx_mode(), m2400L);        // (28): switched after the DT_ACK
    EXPECT_EQ(a.rx_mode(), m300S);         // independent modem: Tx only
    auto ea = a.take_events();
    ASSERT_EQ(ea.size(), 1u);
    EXPECT_EQ(ea[0].type, drc_event_type::tx_mode_changed);
    EXPECT_EQ(ea[0].mode, m2400L);

    t += 3;
    b.on_dpdu(ack, t);
    EXPECT_EQ(b.rx_mode(), m2400L);
    EXPECT_EQ(b.tx_mode(), m300S);
    dpdu conf = take_one(b, t); // [5] confirm
    EXPECT_TRUE(conf.valid_message);
    EXPECT_EQ(conf.management_frame_id, 1);
    EXPECT_EQ(conf.eow_content, resp(3, 0));
    EXPECT_EQ(conf.eow_content, 0x60);

    t += 3;
    a.on_dpdu(conf, t);
    EXPECT_EQ(a.state(), drc_state::idle);
    dpdu ack2 = take_one(a, t);
    EXPECT_FALSE(ack2.valid_message);
    EXPECT_TRUE(ack2.management_ack);
    ea = a.take_events();
    ASSERT_EQ(ea.size(), 1u);
    EXPECT_EQ(ea[0].type, drc_event_type::completed);
    EXPECT_EQ(ea[0].role, drc_role::master);

    t += 3;
    b.on_dpdu(ack2, t);
    EXPECT_EQ(b.state(), drc_state::idle);
    auto eb = b.take_events();
    EXPECT_TRUE(has_event(eb, drc_event_type::rx_mode_changed));
    EXPECT_TRUE(has_event(eb, drc_event_type::completed));
    EXPECT_FALSE(b.take_management(t));
    EXPECT_FALSE(b.take_eow(t)); // goal reached: no more advisories
    EXPECT_EQ(a.next_deadline(), std::numeric_limits<double>::infinity());
    EXPECT_EQ(a.counters().completed, 1u);
    EXPECT_EQ(b.counters().completed, 1u);
}

TEST(RateChange, SlaveWithTxEqualsRxAcceptsWithReason1AndBothDirectionsChange)
{
    auto cb = cfg(B, A);
    cb.tx_equals_rx = true;
    rate_change a(cfg(A, B)), b(cb);
    double t = 0;
    ASSERT_TRUE(a.request_tx(m1200L, t));
    b.on_dpdu(take_one(a, t), t);
    dpdu acc = take_one(b, t);
    EXPECT_EQ(acc.eow_content, resp(0, 1));
    EXPECT_EQ(acc.eow_content, 0x01);
    a.on_dpdu(acc, t);
    dpdu ack = take_one(a, t);
    EXPECT_EQ(a.tx_mode(), m1200L);
    EXPECT_EQ(a.rx_mode(), m1200L); // Note 1: applies to Tx and Rx
    b.on_dpdu(ack, t);
    EXPECT_EQ(b.tx_mode(), m1200L);
    EXPECT_EQ(b.rx_mode(), m1200L);
    modem_mode mode;
    dpdu conf = take_one(b, t, &mode);
    EXPECT_EQ(mode, m1200L); // confirm at the new parameters
    a.on_dpdu(conf, t);
    b.on_dpdu(take_one(a, t), t);
    EXPECT_EQ(a.state(), drc_state::idle);
    EXPECT_EQ(b.state(), drc_state::idle);
}

TEST(RateChange, MasterWithTxEqualsRxSendsOther1)
{
    auto ca = cfg(A, B);
    ca.tx_equals_rx = true;
    rate_change a(ca);
    ASSERT_TRUE(a.request_tx(m600S, 0));
    EXPECT_EQ(take_one(a, 0).eow_content, req(rate_600, interleaving_short, 1));
}

TEST(RateChange, RefusalKeepsOldModeAndStopsAskingForThatParameter)
{
    auto cb = cfg(B, A);
    cb.supported.clear();
    for (uint8_t r = rate_75; r <= rate_1200; ++r) {
        cb.supported.insert({ r, interleaving_short });
        cb.supported.insert({ r, interleaving_long });
    }
    rate_change a(cfg(A, B)), b(cb);
    double t = 0;
    ASSERT_TRUE(a.request_tx(m2400S, t));
    b.on_dpdu(take_one(a, t), t);
    dpdu ref = take_one(b, t);
    EXPECT_TRUE(ref.management_ack);
    EXPECT_EQ(ref.eow_content, resp(1, 2)); // not possible to change data rate
    EXPECT_EQ(ref.eow_content, 0x22);
    EXPECT_EQ(b.state(), drc_state::slave_refused);

    a.on_dpdu(ref, t);
    EXPECT_EQ(a.state(), drc_state::master_cancelling);
    dpdu cancel = take_one(a, t);
    EXPECT_TRUE(cancel.valid_message);
    EXPECT_TRUE(cancel.management_ack);
    EXPECT_EQ(cancel.eow_content, resp(2, 0));
    EXPECT_EQ(cancel.eow_content, 0x40);

    b.on_dpdu(cancel, t);
    dpdu ack = take_one(b, t);
    EXPECT_FALSE(ack.valid_message);
    EXPECT_TRUE(ack.management_ack);
    auto eb = b.take_events();
    ASSERT_EQ(eb.size(), 1u);
    EXPECT_EQ(eb[0].type, drc_event_type::failed);
    EXPECT_EQ(eb[0].cause, drc_cause::refused_by_us);
    EXPECT_EQ(eb[0].reason, 2);
    EXPECT_FALSE(eb[0].connection_lost);

    a.on_dpdu(ack, t);
    auto ea = a.take_events();
    ASSERT_EQ(ea.size(), 1u);
    EXPECT_EQ(ea[0].type, drc_event_type::failed);
    EXPECT_EQ(ea[0].cause, drc_cause::refused_by_peer);
    EXPECT_EQ(ea[0].reason, 2);
    for (auto* n : { &a, &b }) {
        EXPECT_EQ(n->state(), drc_state::idle);
        EXPECT_EQ(n->tx_mode(), m300S);
        EXPECT_EQ(n->rx_mode(), m300S);
    }
    // The peer cannot change its data rate: no more requests for another rate.
    EXPECT_FALSE(a.request_tx(m600S, t));
    EXPECT_TRUE(a.request_tx(m300L, t)); // same rate, other interleaver is allowed
}

// The slave's refusal reason for a request (Table C-8, C.6.4.2 (22),(23)).
uint8_t refusal_for(const rate_change_config& cb,
                    const modem_mode& m,
                    std::optional<modem_mode> advised = std::nullopt)
{
    rate_change b(cb);
    if (advised)
        b.advise_rx(*advised, 0);
    dpdu d;
    d.type = dpdu_type::management;
    d.source = A;
    d.destination = B;
    d.valid_message = true;
    d.management_frame_id = 7;
    d.eow = eow_type::drc_request;
    d.eow_content = req(m.data_rate, m.interleaving, 0);
    b.on_dpdu(wire(d), 0);
    auto t = b.take_management(0);
    EXPECT_TRUE(t);
    auto r = eow_as_rate_response(t->dpdus.at(0).eow_content);
    EXPECT_EQ(t->dpdus.at(0).management_frame_id, 0);
    return r.response == 0 ? 0 : r.reason;
}

TEST(RateChange, PeerRequestForUnsupportedModeRefusedWithReason)
{
    auto cb = cfg(B, A);
    cb.supported = { m300S, m600S, m1200S };
    EXPECT_EQ(refusal_for(cb, m600S), 0);
    EXPECT_EQ(refusal_for(cb, m300L), 3);  // 300 bps exists, long interleaving does not
    EXPECT_EQ(refusal_for(cb, m2400S), 2); // short exists, 2400 bps does not
    EXPECT_EQ(refusal_for(cb, m2400L), 4); // neither
    EXPECT_EQ(refusal_for(cb, modem_mode{ 14, interleaving_short }), 4); // reserved rate
    // Local conditions (23): a mode less robust than what we advise and than now.
    auto full = cfg(B, A);
    EXPECT_EQ(refusal_for(full, m2400S, m600S), 5);
    EXPECT_EQ(refusal_for(full, m300L, m600S), 0); // more robust: never reason 5
    full.refuse_less_robust_than_advised = false;
    EXPECT_EQ(refusal_for(full, m2400S, m600S), 0);
}

TEST(RateChange, RefusalForLocalConditionsHoldsOffThatAdvisory)
{
    rate_change a(cfg(A, B));
    a.request_tx(m2400S, 0);
    take_one(a, 0);
    dpdu ref;
    ref.type = dpdu_type::management;
    ref.source = B;
    ref.destination = A;
    ref.valid_message = ref.management_ack = true;
    ref.eow = eow_type::drc_response;
    ref.eow_content = resp(1, 5);
    a.on_dpdu(wire(ref), 1);
    dpdu ack;
    ack.type = dpdu_type::management;
    ack.source = B;
    ack.destination = A;
    ack.management_ack = true;
    take_one(a, 1);
    a.on_dpdu(wire(ack), 2);
    EXPECT_EQ(a.state(), drc_state::idle);
    // Same advisory again within the holdoff: ignored (Note 6); later: followed.
    a.on_dpdu(data_with_eow(B, A, eow_type::drc_request, req(rate_2400, 1, 2)), 10);
    EXPECT_EQ(a.state(), drc_state::idle);
    a.on_dpdu(data_with_eow(B, A, eow_type::drc_request, req(rate_1200, 1, 2)), 11);
    EXPECT_EQ(a.state(), drc_state::master_requesting);
}

TEST(RateChange, LostResponsesRetryWithSameIdThenConnectionLost)
{
    auto ca = cfg(A, B);
    rate_change a(ca);
    double t = 0;
    ASSERT_TRUE(a.request_tx(m1200S, t));
    dpdu first = take_one(a, t);
    for (unsigned i = 0; i < ca.max_retries; ++i) {
        t = a.next_deadline();
        EXPECT_EQ(t, (i + 1) * ca.ack_timeout);
        a.on_timer(t - 0.001);
        EXPECT_FALSE(a.take_management(t)); // not yet
        a.on_timer(t);
        dpdu again = take_one(a, t);
        EXPECT_EQ(again, first); // same frame ID and content (C.3.9 (20))
    }
    EXPECT_EQ(a.counters().retransmissions, ca.max_retries);
    EXPECT_EQ(a.counters().requests_sent, 1u + ca.max_retries);
    t = a.next_deadline();
    a.on_timer(t);
    EXPECT_EQ(a.state(), drc_state::idle);
    auto ev = a.take_events();
    ASSERT_EQ(ev.size(), 1u);
    EXPECT_EQ(ev[0].type, drc_event_type::failed);
    EXPECT_EQ(ev[0].cause, drc_cause::timeout);
    EXPECT_TRUE(ev[0].connection_lost);
    EXPECT_EQ(a.counters().connection_losses, 1u);
    EXPECT_EQ(a.tx_mode(), m300S);
    EXPECT_EQ(a.next_deadline(), std::numeric_limits<double>::infinity());
}

TEST(RateChange, TimeoutAfterSwitchRevertsToInitialMode)
{
    auto ca = cfg(A, B);
    rate_change a(ca), b(cfg(B, A));
    double t = 0;
    a.request_tx(m2400S, t);
    b.on_dpdu(take_one(a, t), t);
    a.on_dpdu(take_one(b, t), t);
    take_one(a, t); // DT_ACK lost; a has switched
    EXPECT_EQ(a.tx_mode(), m2400S);
    a.take_events();
    EXPECT_EQ(a.next_deadline(), (ca.max_retries + 2) * ca.ack_timeout);
    a.on_timer(a.next_deadline());
    auto ev = a.take_events();
    ASSERT_GE(ev.size(), 2u);
    EXPECT_EQ(ev[0].type, drc_event_type::failed);
    EXPECT_TRUE(ev[0].connection_lost);
    EXPECT_TRUE(has_event(ev, drc_event_type::tx_mode_changed));
    EXPECT_EQ(a.tx_mode(), m300S); // a new connection starts at 300S (C.6.4.1)
}

TEST(RateChange, LostDtAckRecoveredByRepeatedAccept)
{
    rate_change a(cfg(A, B)), b(cfg(B, A));
    double t = 0;
    a.request_tx(m600S, t);
    dpdu rq = take_one(a, t);
    b.on_dpdu(rq, t);
    dpdu acc = take_one(b, t);
    b.on_dpdu(rq, t + 1); // a repeated request: answered again, not reprocessed
    EXPECT_EQ(take_one(b, t + 1), acc);
    EXPECT_EQ(b.counters().duplicates_received, 1u);
    EXPECT_EQ(b.counters().requests_received, 1u);

    a.on_dpdu(acc, t + 2);
    take_one(a, t + 2); // DT_ACK lost
    t = b.next_deadline();
    b.on_timer(t);
    dpdu acc2 = take_one(b, t);
    EXPECT_EQ(acc2, acc); // same frame ID
    a.on_dpdu(acc2, t);
    dpdu ack = take_one(a, t); // the repetition gets the DT_ACK again
    EXPECT_TRUE(ack.management_ack);
    EXPECT_FALSE(ack.valid_message);
    b.on_dpdu(ack, t);
    EXPECT_EQ(b.rx_mode(), m600S);
    a.on_dpdu(take_one(b, t), t);
    b.on_dpdu(take_one(a, t), t);
    EXPECT_EQ(a.state(), drc_state::idle);
    EXPECT_EQ(b.state(), drc_state::idle);
    EXPECT_EQ(a.tx_mode(), b.rx_mode());
}

TEST(RateChange, CopiesRepeatEachManagementDpdu)
{
    auto ca = cfg(A, B);
    ca.copies = 3;
    rate_change a(ca);
    a.request_tx(m600S, 0);
    auto tr = a.take_management(0);
    ASSERT_TRUE(tr);
    ASSERT_EQ(tr->dpdus.size(), 3u);
    EXPECT_EQ(tr->dpdus[0], tr->dpdus[2]);
}

TEST(RateChange, CollisionLowerAddressYields)
{
    rate_change a(cfg(A, B)), b(cfg(B, A)); // A = 1 < B = 2
    a.request_tx(m600S, 0);
    b.request_tx(m1200S, 0);
    dpdu ra = take_one(a, 0), rb = take_one(b, 0);
    b.on_dpdu(ra, 1); // higher address ignores
    EXPECT_EQ(b.state(), drc_state::master_requesting);
    EXPECT_FALSE(b.take_management(1));
    a.on_dpdu(rb, 1); // lower address yields and answers
    EXPECT_EQ(a.state(), drc_state::slave_accepted);
    auto ea = a.take_events();
    ASSERT_EQ(ea.size(), 1u);
    EXPECT_EQ(ea[0].cause, drc_cause::collision);
    // Finish B's change; then A's remembered request starts by itself.
    b.on_dpdu(take_one(a, 1), 2);
    a.on_dpdu(take_one(b, 2), 3);
    b.on_dpdu(take_one(a, 3), 4);
    a.on_dpdu(take_one(b, 4), 5);
    EXPECT_EQ(a.state(), drc_state::master_requesting);
    EXPECT_EQ(b.tx_mode(), m1200S);
    EXPECT_EQ(a.rx_mode(), m1200S);
    dpdu again = take_one(a, 5);
    EXPECT_EQ(again.eow_content, req(rate_600, interleaving_short, 0));
}

TEST(RateChange, IgnoresOtherSourcesAndStrayMessages)
{
    rate_change a(cfg(A, B));
    a.on_dpdu(data_with_eow(3, A, eow_type::drc_request, req(rate_600, 1, 2)), 0);
    EXPECT_EQ(a.state(), drc_state::idle);
    // A request (other 0) outside a MANAGEMENT D_PDU is not a procedure.
    a.on_dpdu(data_with_eow(B, A, eow_type::drc_request, req(rate_600, 1, 0)), 0);
    EXPECT_EQ(a.state(), drc_state::idle);
    EXPECT_EQ(a.counters().ignored, 1u);
    // A stray confirm while idle.
    dpdu c;
    c.type = dpdu_type::management;
    c.source = B;
    c.destination = A;
    c.valid_message = true;
    c.eow = eow_type::drc_response;
    c.eow_content = resp(3, 0);
    a.on_dpdu(wire(c), 0);
    EXPECT_EQ(a.state(), drc_state::idle);
    EXPECT_EQ(a.tx_mode(), m300S);
}

// ===================================================================================
// Two nodes back to back through the D_PDU codec, lossy link
// ===================================================================================

struct link_sim {
    rate_change a, b;
    std::mt19937 rng;
    double loss = 0.0;
    bool strict = false; // a burst is only heard in the receiver's rx mode
    struct in_flight {
        double at;
        bool to_b;
        modem_mode mode;
        bytes burst_bytes;
        std::vector<size_t> sizes;
    };
    std::vector<in_flight> air;
    unsigned resets = 0;

    link_sim(const rate_change_config& ca, const rate_change_config& cb, uint32_t seed)
        : a(ca), b(cb), rng(seed)
    {
    }

    void transmit(rate_change& from, bool to_b, double now)
    {
        auto eow = from.take_eow(now);
        auto mg = from.take_management(now);
        std::vector<dpdu> pdus;
        modem_mode mode = from.tx_mode();
        if (mg) {
            pdus = mg->dpdus;
            mode = mg->mode;
        }
        dpdu data; // one DATA-ONLY D_PDU carrying the advisory, if any
        data.type = dpdu_type::data_only;
        data.source = from.config().own_address;
        data.destination = from.config().peer_address;
        data.cpdu_start = data.cpdu_end = true;
        data.segment = { 1, 2, 3 };
        if (eow) {
            data.eow = eow->first;
            data.eow_content = eow->second;
        }
        pdus.push_back(data);
        in_flight f{ now + 2.0, to_b, mode, {}, {} };
        for (auto& d : pdus) {
            bytes e = encode(d);
            f.sizes.push_back(e.size());
            f.burst_bytes.insert(f.burst_bytes.end(), e.begin(), e.end());
        }
        air.push_back(f);
    }

    void deliver(double now)
    {
        std::uniform_real_distribution<double> u(0, 1);
        for (auto it = air.begin(); it != air.end();) {
            if (it->at > now) {
                ++it;
                continue;
            }
            rate_change& to = it->to_b ? b : a;
            bool heard = !strict || to.rx_mode() == it->mode;
            size_t off = 0;
            for (size_t s : it->sizes) {
                if (heard && u(rng) >= loss) {
                    auto r = decode_dpdu(it->burst_bytes.data() + off, s);
                    EXPECT_TRUE(r.ok());
                    to.on_dpdu(r.value, now);
                }
                off += s;
            }
            it = air.erase(it);
        }
    }

    // The engine's part: a connection lost on either side makes CAS drop the link and
    // make it again, after which both ends start over at the initial mode.
    void handle_events(double now)
    {
        bool lost = false;
        for (auto* n : { &a, &b })
            for (const auto& e : n->take_events())
                lost |= e.connection_lost;
        if (lost) {
            ++resets;
            a.reset(now);
            b.reset(now);
            air.clear();
        }
    }

    bool matched() const
    {
        return a.tx_mode() == b.rx_mode() && b.tx_mode() == a.rx_mode();
    }
};

struct run_result {
    double max_mismatch = 0;
    unsigned completed = 0;
    unsigned resets = 0;
    bool converged = false;
};

run_result run_link(uint32_t seed, bool strict, double loss)
{
    auto ca = cfg(A, B), cb = cfg(B, A);
    ca.ack_timeout = cb.ack_timeout = 12.0;
    link_sim s(ca, cb, seed);
    s.strict = strict;
    const modem_mode wishes_a[] = { m2400L, m600S, m1200L, m300S, m2400S };
    const modem_mode wishes_b[] = { m1200S, m2400L, m300L, m600S, m1200L };
    run_result res;
    double mismatch_since = -1;
    const double phase1 = 4000, phase2 = 5000;
    for (double t = 0; t <= phase2; t += 0.5) {
        s.loss = t < phase1 ? loss : 0.0;
        const size_t k = t < phase1 ? size_t(t / 400) % 5 : 0;
        s.a.advise_rx(wishes_a[k], t); // what A wants B to send at
        s.b.advise_rx(wishes_b[k], t);
        s.deliver(t);
        s.handle_events(t);
        for (auto* n : { &s.a, &s.b })
            if (t >= n->next_deadline())
                n->on_timer(t);
        s.handle_events(t);
        double phase = std::fmod(t, 10.0);
        if (phase == 0.0)
            s.transmit(s.a, true, t);
        else if (phase == 5.0)
            s.transmit(s.b, false, t);
        s.handle_events(t);
        if (!s.matched()) {
            if (mismatch_since < 0)
                mismatch_since = t;
            res.max_mismatch = std::max(res.max_mismatch, t - mismatch_since);
        } else {
            mismatch_since = -1;
        }
    }
    res.completed = unsigned(s.a.counters().completed + s.b.counters().completed);
    res.resets = s.resets;
    std::printf("seed %u strict %d loss %.2f: completed %u, resets %u, longest mismatch "
                "%.1f s\n",
                seed,
                int(strict),
                loss,
                res.completed,
                s.resets,
                res.max_mismatch);
    res.converged = s.matched() && s.a.rx_mode() == wishes_a[0] &&
                    s.b.rx_mode() == wishes_b[0] && s.a.state() == drc_state::idle &&
                    s.b.state() == drc_state::idle;
    return res;
}

TEST(RateChangeLink, LossyLinkNeverMismatchedLongAndConverges)
{
    // Retry budget: the master waits (max_retries + 2) * ack_timeout for the confirm,
    // plus one exchange cycle of the simulated half-duplex link.
    const double budget = (3 + 2) * 12.0 + 10.0;
    for (uint32_t seed : { 1u, 2u, 3u }) {
        auto r = run_link(seed, false, 0.3);
        EXPECT_LE(r.max_mismatch, budget) << "seed " << seed;
        EXPECT_GE(r.completed, 10u) << "seed " << seed;
        EXPECT_TRUE(r.converged) << "seed " << seed;
    }
}

TEST(RateChangeLink, StrictModeReceiversStillBoundedAndConverge)
{
    // Receivers that only hear bursts in their current rx mode (no autobaud): a lost
    // DT_ACK strands the slave, the procedure times out and the link starts over.
    const double budget = (3 + 2) * 12.0 + 10.0;
    unsigned resets = 0;
    for (uint32_t seed : { 11u, 12u, 13u }) {
        auto r = run_link(seed, true, 0.2);
        EXPECT_LE(r.max_mismatch, budget) << "seed " << seed;
        EXPECT_TRUE(r.converged) << "seed " << seed;
        resets += r.resets;
    }
    EXPECT_GE(resets, 1u); // the timeout path was exercised
}

TEST(RateChangeLink, CleanLinkConvergesWithoutRetries)
{
    auto r = run_link(99, true, 0.0);
    EXPECT_EQ(r.resets, 0u);
    EXPECT_TRUE(r.converged);
    EXPECT_LE(r.max_mismatch, 10.0); // only between the DT_ACK and its delivery
}

} // namespace
