/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "dl/arq.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>
#include <set>

using namespace gr::hfstack::dl;

namespace {

arq_config cfg(size_t window, size_t segment, bool expedited = false)
{
    arq_config c;
    c.window = window;
    c.segment_size = segment;
    c.expedited = expedited;
    return c;
}

bytes pattern(size_t n, uint8_t seed)
{
    bytes b(n);
    for (size_t i = 0; i < n; ++i)
        b[i] = uint8_t(seed + 7 * i);
    return b;
}

const size_t lots = 1u << 30;

} // namespace

TEST(Arq, ConfigIsValidated)
{
    EXPECT_THROW(arq_sender(cfg(0, 10)), std::invalid_argument);
    EXPECT_THROW(arq_sender(cfg(129, 10)), std::invalid_argument);
    EXPECT_THROW(arq_sender(cfg(8, 0)), std::invalid_argument);
    EXPECT_THROW(arq_sender(cfg(8, 1024)), std::invalid_argument);
    arq_sender s(cfg(128, 1023));
    EXPECT_THROW(s.enqueue(bytes(), true), std::invalid_argument);
}

// A new segment size applies from the next C_PDU that starts; one already started
// keeps its size (only its last segment may be short).
TEST(Arq, SegmentSizeChangeAppliesToCpdusNotYetStarted)
{
    arq_sender s(cfg(128, 10));
    s.enqueue(pattern(25, 1), true);
    s.enqueue(pattern(25, 2), true);
    auto first = s.next_transmission(1, lots); // starts C_PDU 1 at 10 bytes
    ASSERT_EQ(first.size(), 1u);
    s.set_segment_size(20); // C_PDU 1 keeps 10; C_PDU 2 has not started
    EXPECT_THROW(s.set_segment_size(0), std::invalid_argument);
    EXPECT_THROW(s.set_segment_size(1024), std::invalid_argument);
    auto tx = s.next_transmission(16, lots);
    tx.insert(tx.begin(), first.begin(), first.end());
    std::vector<size_t> sizes;
    for (auto& d : tx)
        sizes.push_back(d.segment.size());
    EXPECT_EQ(sizes, (std::vector<size_t>{ 10, 10, 5, 20, 5 }));
    arq_receiver r;
    for (auto& d : tx)
        r.on_data(d, true);
    auto got = r.take_delivered();
    ASSERT_EQ(got.size(), 2u);
    EXPECT_EQ(got[0], pattern(25, 1));
    EXPECT_EQ(got[1], pattern(25, 2));
}

// Yielding C_PDUs (the node's delivery answers) let C_PDUs queued after them go first
// while unstarted, keep their order among themselves, and stop yielding once started.
TEST(Arq, YieldingCpdusLetLaterOnesOvertakeUntilStarted)
{
    arq_sender s(cfg(128, 10));
    const uint64_t answer1 = s.enqueue(pattern(5, 1), true, true);
    const uint64_t answer2 = s.enqueue(pattern(5, 2), true, true);
    const uint64_t data1 = s.enqueue(pattern(15, 3), true);
    const uint64_t data2 = s.enqueue(pattern(5, 4), true);
    EXPECT_EQ(s.queued_bytes(), 30u);
    auto first = s.next_transmission(1, lots); // starts data1
    auto tx = s.next_transmission(16, lots);
    tx.insert(tx.begin(), first.begin(), first.end());
    ASSERT_EQ(tx.size(), 5u);
    arq_receiver r;
    for (auto& d : tx)
        r.on_data(d, true);
    EXPECT_EQ(r.take_delivered(),
              (std::vector<bytes>{
                  pattern(15, 3), pattern(5, 4), pattern(5, 1), pattern(5, 2) }));
    const auto confirmed = s.on_ack(r.ack());
    EXPECT_EQ(confirmed, (std::vector<uint64_t>{ data1, data2, answer1, answer2 }));

    // Started, a yielding C_PDU keeps its place: its second segment precedes later data.
    const bytes long_answer = pattern(15, 5);
    s.enqueue(long_answer, true, true);
    const auto started = s.next_transmission(1, lots);
    ASSERT_EQ(started.size(), 1u);
    s.enqueue(pattern(5, 6), true);
    const auto rest = s.next_transmission(16, lots);
    ASSERT_EQ(rest.size(), 2u);
    EXPECT_EQ(rest[0].segment, bytes(long_answer.begin() + 10, long_answer.end()));
    EXPECT_EQ(rest[1].segment, pattern(5, 6));
}

TEST(Arq, ThreeSegmentsFlagsAndEdges)
{
    arq_sender s(cfg(128, 10));
    const bytes c = pattern(25, 1);
    const uint64_t h = s.enqueue(c, true);
    EXPECT_NE(h, 0u);
    EXPECT_EQ(s.queued_bytes(), 25u);
    auto tx = s.next_transmission(16, lots);
    ASSERT_EQ(tx.size(), 3u);
    EXPECT_EQ(s.queued_bytes(), 0u);
    EXPECT_EQ(s.in_flight(), 3u);
    for (size_t i = 0; i < 3; ++i) {
        EXPECT_EQ(tx[i].type, dpdu_type::data_only);
        EXPECT_EQ(tx[i].tx_sequence, i);
        EXPECT_TRUE(tx[i].deliver_in_order);
        EXPECT_FALSE(tx[i].drop_cpdu);
    }
    EXPECT_TRUE(tx[0].cpdu_start);
    EXPECT_FALSE(tx[0].cpdu_end);
    EXPECT_TRUE(tx[0].tx_win_lwe);
    EXPECT_FALSE(tx[0].tx_win_uwe);
    EXPECT_FALSE(tx[1].cpdu_start || tx[1].cpdu_end || tx[1].tx_win_lwe ||
                 tx[1].tx_win_uwe);
    EXPECT_FALSE(tx[2].cpdu_start);
    EXPECT_TRUE(tx[2].cpdu_end);
    EXPECT_FALSE(tx[2].tx_win_lwe);
    EXPECT_TRUE(tx[2].tx_win_uwe);
    EXPECT_EQ(tx[0].segment, bytes(c.begin(), c.begin() + 10));
    EXPECT_EQ(tx[1].segment, bytes(c.begin() + 10, c.begin() + 20));
    EXPECT_EQ(tx[2].segment, bytes(c.begin() + 20, c.end()));
    // Nothing more to send until an ack or a timeout.
    EXPECT_TRUE(s.next_transmission(16, lots).empty());
    EXPECT_FALSE(s.has_pending_transmission());

    arq_receiver r;
    for (auto& d : tx)
        EXPECT_TRUE(r.on_data(d, true));
    EXPECT_TRUE(r.ack_due());
    auto a = r.ack();
    EXPECT_FALSE(r.ack_due());
    EXPECT_EQ(a.rx_lwe, 3);
    EXPECT_TRUE(a.selective_acks.empty());
    auto got = r.take_delivered();
    ASSERT_EQ(got.size(), 1u);
    EXPECT_EQ(got[0], c);
    EXPECT_EQ(s.on_ack(a), std::vector<uint64_t>{ h });
    EXPECT_TRUE(s.idle());
    EXPECT_EQ(s.tx_lwe(), 3);
    EXPECT_EQ(s.counters().cpdus_confirmed, 1u);
    // A repeat of the same ack is stale and harmless.
    EXPECT_TRUE(s.on_ack(a).empty());
}

TEST(Arq, MissingMiddleExactAckAndSingleRetransmission)
{
    arq_sender s(cfg(128, 10));
    const bytes c = pattern(25, 9);
    const uint64_t h = s.enqueue(c, true);
    auto tx = s.next_transmission(16, lots);
    ASSERT_EQ(tx.size(), 3u);
    arq_receiver r;
    r.on_data(tx[0], true);
    r.on_data(tx[2], true);
    auto a = r.ack();
    // RX LWE = 1 (oldest missing); bitmap covers FSN 2 = RX UWE: bit 0 set.
    EXPECT_EQ(a.rx_lwe, 1);
    EXPECT_EQ(a.selective_acks, bytes{ 0x01 });
    EXPECT_EQ(r.rx_uwe(), 2);
    EXPECT_TRUE(s.on_ack(a).empty());
    EXPECT_EQ(s.in_flight(), 1u);
    EXPECT_EQ(s.tx_lwe(), 1);
    auto re = s.next_transmission(16, lots);
    ASSERT_EQ(re.size(), 1u);
    EXPECT_EQ(re[0].tx_sequence, 1);
    EXPECT_EQ(re[0].segment, bytes(c.begin() + 10, c.begin() + 20));
    EXPECT_TRUE(re[0].tx_win_lwe);  // FSN 1 is now TX LWE
    EXPECT_FALSE(re[0].tx_win_uwe); // TX UWE is still 2
    EXPECT_EQ(s.counters().retransmissions, 1u);
    EXPECT_TRUE(r.take_delivered().empty());
    r.on_data(re[0], true);
    EXPECT_EQ(r.take_delivered(), std::vector<bytes>{ c });
    a = r.ack();
    EXPECT_EQ(a.rx_lwe, 3);
    EXPECT_EQ(s.on_ack(a), std::vector<uint64_t>{ h });
    EXPECT_TRUE(s.idle());
}

TEST(Arq, BitmapByHandOverTwoBytes)
{
    arq_sender s(cfg(128, 1));
    s.enqueue(pattern(12, 3), false);
    auto tx = s.next_transmission(64, lots);
    ASSERT_EQ(tx.size(), 12u);
    arq_receiver r;
    for (auto& d : tx)
        if (d.tx_sequence != 0 && d.tx_sequence != 3 && d.tx_sequence != 9)
            r.on_data(d, true);
    auto a = r.ack();
    // FSN 1..11 -> bits 0..10: received 1,2,4,5,6,7,8,10,11.
    EXPECT_EQ(a.rx_lwe, 0);
    EXPECT_EQ(a.selective_acks, (bytes{ 0xFB, 0x06 }));
    s.on_ack(a);
    auto re = s.next_transmission(64, lots);
    ASSERT_EQ(re.size(), 3u);
    EXPECT_EQ(re[0].tx_sequence, 0);
    EXPECT_EQ(re[1].tx_sequence, 3);
    EXPECT_EQ(re[2].tx_sequence, 9);
    EXPECT_TRUE(re[0].tx_win_lwe);
    EXPECT_FALSE(re[2].tx_win_uwe); // TX UWE is 11
}

TEST(Arq, DamagedSegmentIsNotAcked)
{
    arq_sender s(cfg(128, 10));
    s.enqueue(pattern(20, 4), true);
    auto tx = s.next_transmission(16, lots);
    arq_receiver r;
    r.on_data(tx[0], false);
    r.on_data(tx[1], true);
    EXPECT_EQ(r.counters().damaged, 1u);
    auto a = r.ack();
    EXPECT_EQ(a.rx_lwe, 0);
    EXPECT_EQ(a.selective_acks, bytes{ 0x01 });
    s.on_ack(a);
    auto re = s.next_transmission(16, lots);
    ASSERT_EQ(re.size(), 1u);
    EXPECT_EQ(re[0].tx_sequence, 0);
}

TEST(Arq, TimeoutRetransmitsEverythingUnacked)
{
    arq_sender s(cfg(128, 10));
    s.enqueue(pattern(30, 4), true);
    EXPECT_EQ(s.next_transmission(16, lots).size(), 3u);
    EXPECT_TRUE(s.next_transmission(16, lots).empty());
    s.on_ack_timeout();
    auto re = s.next_transmission(2, lots); // budget: 2 D_PDUs
    ASSERT_EQ(re.size(), 2u);
    EXPECT_EQ(re[0].tx_sequence, 0);
    EXPECT_EQ(re[1].tx_sequence, 1);
    re = s.next_transmission(16, lots);
    ASSERT_EQ(re.size(), 1u);
    EXPECT_EQ(re[0].tx_sequence, 2);
    EXPECT_EQ(s.counters().retransmissions, 3u);
    EXPECT_EQ(s.counters().dpdus_sent, 6u);
}

// An ack built before the peer could hear our latest transmission (a late answer that
// crossed it) finds missing only what went out earlier; it still acks what it names.
TEST(Arq, AnAckJudgesOnlyTheTransmissionsItAnswers)
{
    arq_sender s(cfg(128, 10));
    EXPECT_EQ(s.last_transmission(), 0u);
    s.enqueue(pattern(30, 4), true); // FSN 0..2
    ASSERT_EQ(s.next_transmission(16, lots).size(), 3u);
    EXPECT_EQ(s.last_transmission(), 1u);
    s.enqueue(pattern(20, 5), true); // FSN 3, 4
    ASSERT_EQ(s.next_transmission(16, lots).size(), 2u);
    EXPECT_EQ(s.last_transmission(), 2u);
    EXPECT_TRUE(s.next_transmission(16, lots).empty()); // nothing sent: not counted
    EXPECT_EQ(s.last_transmission(), 2u);
    // The answer to transmission 1: 0 and 2 arrived (and 3, heard before it answered).
    s.on_ack(1, bytes{ 0x03 }, 1);
    auto re = s.next_transmission(16, lots);
    ASSERT_EQ(re.size(), 1u);
    EXPECT_EQ(re[0].tx_sequence, 1); // 4 is left for the answer to transmission 2
    EXPECT_EQ(s.counters().retransmissions, 1u);
    EXPECT_EQ(s.on_ack(5, bytes{}).size(), 2u);
    EXPECT_TRUE(s.idle());
}

TEST(Arq, ByteBudgetLimitsPayload)
{
    arq_sender s(cfg(128, 100));
    s.enqueue(pattern(350, 1), true);
    auto tx = s.next_transmission(16, 250);
    ASSERT_EQ(tx.size(), 2u);
    tx = s.next_transmission(16, 99);
    EXPECT_TRUE(tx.empty());
    tx = s.next_transmission(16, 149);
    ASSERT_EQ(tx.size(), 1u);
    tx = s.next_transmission(16, 50);
    ASSERT_EQ(tx.size(), 1u); // the short last segment
    EXPECT_EQ(tx[0].segment.size(), 50u);
    EXPECT_TRUE(tx[0].cpdu_end);
}

TEST(Arq, WindowFullStopsNewSegments)
{
    arq_sender s(cfg(8, 1));
    s.enqueue(pattern(20, 2), true);
    auto tx = s.next_transmission(64, lots);
    ASSERT_EQ(tx.size(), 8u);
    EXPECT_TRUE(tx[7].tx_win_uwe);
    EXPECT_EQ(s.window_used(), 8u);
    EXPECT_TRUE(s.next_transmission(64, lots).empty());
    // FSN 0..2 acked through RX LWE = 3: three new slots open, the rest is due.
    s.on_ack(3, bytes());
    tx = s.next_transmission(64, lots);
    ASSERT_EQ(tx.size(), 8u);
    for (size_t i = 0; i < 8; ++i)
        EXPECT_EQ(tx[i].tx_sequence, 3 + i);
    EXPECT_EQ(s.counters().retransmissions, 5u);
    EXPECT_TRUE(tx[0].tx_win_lwe);
    EXPECT_TRUE(tx[7].tx_win_uwe);
    EXPECT_FALSE(tx[4].tx_win_uwe); // FSN 7 was UWE before, no longer
    // Selective acks of everything but FSN 3 do not slide the window.
    s.on_ack(3, bytes{ 0x7F });
    EXPECT_EQ(s.tx_lwe(), 3);
    EXPECT_EQ(s.in_flight(), 1u);
    tx = s.next_transmission(64, lots);
    ASSERT_EQ(tx.size(), 1u);
    EXPECT_EQ(tx[0].tx_sequence, 3);
}

TEST(Arq, SequenceWrapsPast255)
{
    for (size_t window : { size_t(128), size_t(8) }) {
        arq_sender s(cfg(window, 1));
        arq_receiver r;
        std::vector<bytes> sent;
        for (int i = 0; i < 300; ++i) {
            sent.push_back(bytes{ uint8_t(i), uint8_t(i >> 8) });
            s.enqueue(sent.back(), true);
        }
        std::vector<bytes> got;
        std::set<unsigned> seen_fsn;
        size_t confirmed = 0;
        int rounds = 0;
        while (!s.idle() && rounds++ < 1000) {
            auto tx = s.next_transmission(1000, lots);
            ASSERT_LE(tx.size(), window);
            for (auto& d : tx) {
                seen_fsn.insert(d.tx_sequence);
                r.on_data(d, true);
            }
            confirmed += s.on_ack(r.ack()).size();
            for (auto& b : r.take_delivered())
                got.push_back(b);
        }
        EXPECT_EQ(got, sent);
        EXPECT_EQ(confirmed, 300u);
        EXPECT_EQ(seen_fsn.size(), 256u);
        // 600 segments: FSN 600 mod 256 = 88.
        EXPECT_EQ(s.tx_lwe(), 88);
        EXPECT_EQ(r.rx_lwe(), 88);
        EXPECT_EQ(s.counters().retransmissions, 0u);
    }
}

TEST(Arq, WrapWithLossAcrossZero)
{
    // Window of 128 straddling 255 -> 0, a gap at FSN 255 and at FSN 1.
    arq_sender s(cfg(128, 1));
    arq_receiver r;
    s.enqueue(pattern(250, 0), true); // FSN 0..249, two windows
    for (int i = 0; i < 2; ++i) {
        for (auto& d : s.next_transmission(1000, lots))
            r.on_data(d, true);
        s.on_ack(r.ack());
    }
    ASSERT_EQ(r.take_delivered().size(), 1u);
    ASSERT_TRUE(s.idle());
    const bytes c = pattern(10, 5);
    const uint64_t h = s.enqueue(c, true); // FSN 250..255, 0..3
    auto tx = s.next_transmission(1000, lots);
    ASSERT_EQ(tx.size(), 10u);
    EXPECT_EQ(tx[9].tx_sequence, 3);
    for (auto& d : tx)
        if (d.tx_sequence != 255 && d.tx_sequence != 1)
            r.on_data(d, true);
    auto a = r.ack();
    EXPECT_EQ(a.rx_lwe, 255);
    // FSN 0..3 -> bits 0..3: 0, 2, 3 received.
    EXPECT_EQ(a.selective_acks, bytes{ 0x0D });
    EXPECT_TRUE(s.on_ack(a).empty());
    auto re = s.next_transmission(1000, lots);
    ASSERT_EQ(re.size(), 2u);
    EXPECT_EQ(re[0].tx_sequence, 255);
    EXPECT_EQ(re[1].tx_sequence, 1);
    for (auto& d : re)
        r.on_data(d, true);
    EXPECT_EQ(r.take_delivered(), std::vector<bytes>{ c });
    EXPECT_EQ(s.on_ack(r.ack()), std::vector<uint64_t>{ h });
}

TEST(Arq, AsArrivedOvertakesInOrderWaits)
{
    arq_sender s(cfg(128, 10));
    const bytes a = pattern(20, 1), b = pattern(5, 2), c = pattern(7, 3);
    s.enqueue(a, true);  // FSN 0, 1
    s.enqueue(b, false); // FSN 2
    s.enqueue(c, true);  // FSN 3
    auto tx = s.next_transmission(16, lots);
    ASSERT_EQ(tx.size(), 4u);
    EXPECT_FALSE(tx[2].deliver_in_order);
    arq_receiver r;
    r.on_data(tx[0], true);
    r.on_data(tx[2], true);
    r.on_data(tx[3], true);
    // b is complete and as-arrived: delivered at once; c waits behind a.
    EXPECT_EQ(r.take_delivered(), std::vector<bytes>{ b });
    r.on_data(tx[1], true);
    EXPECT_EQ(r.take_delivered(), (std::vector<bytes>{ a, c }));
    EXPECT_EQ(r.counters().cpdus_delivered, 3u);
    EXPECT_EQ(r.rx_lwe(), 4);
}

TEST(Arq, DuplicatesReackedButDeliveredOnce)
{
    arq_sender s(cfg(128, 10));
    const bytes c = pattern(15, 1);
    s.enqueue(c, true);
    auto tx = s.next_transmission(16, lots);
    arq_receiver r;
    r.on_data(tx[0], true);
    r.on_data(tx[0], true); // in-window duplicate
    EXPECT_EQ(r.counters().duplicates, 1u);
    r.on_data(tx[1], true);
    EXPECT_EQ(r.take_delivered(), std::vector<bytes>{ c });
    r.ack();
    EXPECT_FALSE(r.ack_due());
    EXPECT_TRUE(r.on_data(tx[1], true)); // behind RX LWE: re-acked only
    EXPECT_TRUE(r.ack_due());
    EXPECT_EQ(r.counters().duplicates, 2u);
    EXPECT_TRUE(r.take_delivered().empty());
    auto a = r.ack();
    EXPECT_EQ(a.rx_lwe, 2);
    EXPECT_TRUE(a.selective_acks.empty());
}

TEST(Arq, OutOfWindowFramesAreIgnored)
{
    arq_receiver r;
    dpdu d;
    d.type = dpdu_type::data_only;
    d.cpdu_start = d.cpdu_end = true;
    d.segment = bytes{ 1 };
    d.tx_sequence = 5;
    r.on_data(d, true); // RX LWE 0, RX UWE 5
    r.ack();
    for (uint8_t fsn : { uint8_t(128), uint8_t(133), uint8_t(200 - 70) }) {
        d.tx_sequence = fsn;
        EXPECT_FALSE(r.on_data(d, true)) << int(fsn);
    }
    EXPECT_EQ(r.counters().out_of_window, 3u);
    EXPECT_FALSE(r.ack_due());
    // Far behind RX LWE but within 127 of RX UWE (5): an old copy.
    d.tx_sequence = 200;
    EXPECT_TRUE(r.on_data(d, true));
    EXPECT_EQ(r.counters().duplicates, 1u);
    // 127 ahead of RX LWE is the last FSN inside the window.
    d.tx_sequence = 127;
    EXPECT_TRUE(r.on_data(d, true));
    EXPECT_EQ(r.rx_uwe(), 127);
    // Now FSN 200 is more than 127 behind RX UWE: out of window.
    d.tx_sequence = 200;
    EXPECT_FALSE(r.on_data(d, true));
    EXPECT_EQ(r.counters().out_of_window, 4u);
    // Wrong class.
    d.type = dpdu_type::expedited_data_only;
    EXPECT_FALSE(r.on_data(d, true));
    EXPECT_EQ(r.counters().wrong_type, 1u);
    auto a = r.ack();
    EXPECT_EQ(a.rx_lwe, 0);
    EXPECT_EQ(a.selective_acks.size(), 16u); // bits for FSN 1..127
    EXPECT_EQ(a.selective_acks[0], 0x10);    // FSN 5
    EXPECT_EQ(a.selective_acks[15], 0x40);   // FSN 127 = bit 126
}

TEST(Arq, StaleAndOutOfSyncAcksAreIgnored)
{
    arq_sender s(cfg(128, 1));
    s.enqueue(pattern(4, 1), true);
    s.next_transmission(16, lots); // FSN 0..3
    EXPECT_TRUE(s.on_ack(2, bytes()).empty());
    EXPECT_EQ(s.tx_lwe(), 2);
    s.on_ack(1, bytes{ 0xFF }); // RX LWE behind TX LWE: stale
    EXPECT_EQ(s.counters().acks_ignored, 1u);
    s.on_ack(9, bytes()); // beyond TX UWE + 1
    EXPECT_EQ(s.counters().acks_ignored, 2u);
    EXPECT_EQ(s.in_flight(), 2u);
    s.on_ack(2, bytes{ 0xFF }); // FSN 3 acked, bits beyond 3 ignored
    EXPECT_EQ(s.in_flight(), 1u);
    EXPECT_EQ(s.counters().ack_bits_ignored, 7u);
}

TEST(Arq, DropSendsZeroLengthDropFrames)
{
    arq_sender s(cfg(128, 10));
    arq_receiver r;
    const uint64_t h = s.enqueue(pattern(30, 1), true);
    const uint64_t h2 = s.enqueue(pattern(5, 2), true);
    auto tx = s.next_transmission(3, lots); // FSN 0..2 of h
    ASSERT_EQ(tx.size(), 3u);
    r.on_data(tx[0], true);
    s.on_ack(r.ack());
    EXPECT_TRUE(s.drop(h));
    EXPECT_FALSE(s.drop(h));               // already being dropped
    EXPECT_TRUE(s.take_dropped().empty()); // waits for the DROP frames' acks
    auto re = s.next_transmission(16, lots);
    ASSERT_EQ(re.size(), 3u); // two DROP frames, then h2
    for (int i = 0; i < 2; ++i) {
        EXPECT_TRUE(re[i].drop_cpdu);
        EXPECT_TRUE(re[i].segment.empty());
        EXPECT_EQ(re[i].tx_sequence, 1 + i);
    }
    EXPECT_FALSE(re[0].cpdu_end);
    EXPECT_TRUE(re[1].cpdu_end);
    EXPECT_FALSE(re[2].drop_cpdu);
    EXPECT_TRUE(re[2].cpdu_start);
    EXPECT_EQ(s.counters().drop_frames, 2u);
    // A damaged DROP frame is acked all the same.
    r.on_data(re[0], false);
    r.on_data(re[1], true);
    r.on_data(re[2], true);
    auto a = r.ack();
    EXPECT_EQ(a.rx_lwe, 4);
    EXPECT_EQ(s.on_ack(a), std::vector<uint64_t>{ h2 });
    EXPECT_EQ(s.take_dropped(), std::vector<uint64_t>{ h });
    EXPECT_EQ(r.take_delivered(), std::vector<bytes>{ pattern(5, 2) });
    EXPECT_EQ(r.counters().cpdus_discarded, 1u);
    EXPECT_EQ(r.counters().drop_frames, 2u);
    EXPECT_TRUE(s.idle());
    EXPECT_FALSE(s.drop(h));
    EXPECT_FALSE(s.drop(12345));
}

TEST(Arq, DropOfUnsentAndPartiallyNumberedCpdus)
{
    arq_sender s(cfg(2, 10));
    arq_receiver r;
    const uint64_t a = s.enqueue(pattern(40, 1), true); // 4 segments, window 2
    const uint64_t b = s.enqueue(pattern(10, 2), true);
    EXPECT_EQ(s.queued_bytes(), 50u);
    EXPECT_TRUE(s.drop(b)); // never started: reported at once
    EXPECT_EQ(s.take_dropped(), std::vector<uint64_t>{ b });
    EXPECT_EQ(s.queued_bytes(), 40u);
    for (auto& d : s.next_transmission(16, lots)) // FSN 0, 1
        r.on_data(d, true);
    s.on_ack(r.ack());
    EXPECT_TRUE(s.drop(a)); // numbered part all acked: reported at once
    EXPECT_EQ(s.take_dropped(), std::vector<uint64_t>{ a });
    EXPECT_EQ(s.queued_bytes(), 0u);
    EXPECT_TRUE(s.idle());
    // The receiver holds a started C_PDU; the next START discards it.
    const bytes c = pattern(8, 3);
    s.enqueue(c, true);
    for (auto& d : s.next_transmission(16, lots))
        r.on_data(d, true);
    EXPECT_EQ(r.take_delivered(), std::vector<bytes>{ c });
    EXPECT_EQ(r.counters().cpdus_discarded, 1u);
}

TEST(Arq, TxWinLweMovesRxLweUp)
{
    arq_receiver r;
    dpdu d;
    d.type = dpdu_type::data_only;
    d.cpdu_end = true; // end of a C_PDU whose start the receiver never saw
    d.segment = bytes{ 9 };
    d.tx_sequence = 3;
    r.on_data(d, true);
    EXPECT_EQ(r.rx_lwe(), 0);
    d.cpdu_start = d.cpdu_end = true;
    d.deliver_in_order = true;
    d.tx_win_lwe = true;
    d.segment = bytes{ 1, 2 };
    d.tx_sequence = 5;
    r.on_data(d, true);
    EXPECT_EQ(r.rx_lwe(), 6);
    EXPECT_EQ(r.counters().lwe_advances, 1u);
    EXPECT_EQ(r.take_delivered(), (std::vector<bytes>{ bytes{ 1, 2 } }));
    // A flagged TX LWE behind RX LWE changes nothing.
    d.tx_sequence = 4;
    r.on_data(d, true);
    EXPECT_EQ(r.rx_lwe(), 6);
    EXPECT_EQ(r.counters().lwe_advances, 1u);
}

TEST(Arq, ResetSenderAndReceiver)
{
    arq_sender s(cfg(128, 10));
    const uint64_t a = s.enqueue(pattern(30, 1), true);
    const uint64_t b = s.enqueue(pattern(30, 2), true);
    const uint64_t c = s.enqueue(pattern(30, 3), true);
    auto tx = s.next_transmission(4, lots); // a whole, first segment of b
    ASSERT_EQ(tx.size(), 4u);
    auto lost = s.reset(0, false);
    EXPECT_EQ(lost, (std::vector<uint64_t>{ a, b }));
    EXPECT_EQ(s.counters().cpdus_lost, 2u);
    EXPECT_EQ(s.queued_bytes(), 30u);
    EXPECT_EQ(s.in_flight(), 0u);
    tx = s.next_transmission(16, lots);
    ASSERT_EQ(tx.size(), 3u);
    EXPECT_EQ(tx[0].tx_sequence, 0);
    const bytes pc = pattern(30, 3);
    EXPECT_EQ(tx[0].segment, bytes(pc.begin(), pc.begin() + 10));
    EXPECT_EQ(s.on_ack(3, bytes()), std::vector<uint64_t>{ c });

    // Requeue: the lost C_PDUs go out again, whole, from the new TX LWE.
    arq_sender s2(cfg(128, 10));
    const uint64_t x = s2.enqueue(pattern(20, 4), false);
    const uint64_t y = s2.enqueue(pattern(20, 5), false);
    s2.next_transmission(3, lots);
    EXPECT_EQ(s2.reset(77, true), (std::vector<uint64_t>{ x, y }));
    EXPECT_EQ(s2.queued_bytes(), 40u);
    tx = s2.next_transmission(16, lots);
    ASSERT_EQ(tx.size(), 4u);
    EXPECT_EQ(tx[0].tx_sequence, 77);
    EXPECT_TRUE(tx[0].cpdu_start);
    arq_receiver r;
    r.reset(77);
    for (auto& d : tx)
        r.on_data(d, true);
    EXPECT_EQ(r.take_delivered(), (std::vector<bytes>{ pattern(20, 4), pattern(20, 5) }));
    EXPECT_EQ(s2.on_ack(r.ack()), (std::vector<uint64_t>{ x, y }));

    // Receiver reset discards partial C_PDUs and stored segments.
    arq_receiver r2;
    r2.reset(77);
    EXPECT_TRUE(tx[0].tx_win_lwe);
    r2.on_data(tx[0], true);
    r2.on_data(tx[2], true);
    EXPECT_EQ(r2.rx_lwe(), 78);
    r2.reset(80);
    EXPECT_EQ(r2.counters().cpdus_discarded, 1u);
    EXPECT_EQ(r2.rx_lwe(), 80);
    EXPECT_TRUE(r2.ack().selective_acks.empty());
    r2.on_data(tx[1], true); // FSN 78: behind the new RX LWE
    EXPECT_TRUE(r2.take_delivered().empty());
}

TEST(Arq, ExpeditedStopAndWaitIdsAndFsnRestart)
{
    arq_sender s(cfg(128, 10, true));
    arq_receiver r(true);
    const bytes a = pattern(25, 1), b = pattern(5, 2);
    const uint64_t ha = s.enqueue(a, true);
    const uint64_t hb = s.enqueue(b, true);
    auto tx = s.next_transmission(16, lots);
    ASSERT_EQ(tx.size(), 3u); // only a: stop and wait per C_PDU
    for (size_t i = 0; i < 3; ++i) {
        EXPECT_EQ(tx[i].type, dpdu_type::expedited_data_only);
        EXPECT_EQ(tx[i].tx_sequence, i);
        EXPECT_EQ(tx[i].cpdu_id, 0);
        EXPECT_FALSE(tx[i].tx_win_lwe || tx[i].tx_win_uwe || tx[i].deliver_in_order);
    }
    r.on_data(tx[0], true);
    r.on_data(tx[2], true);
    s.on_ack(r.ack());
    tx = s.next_transmission(16, lots);
    ASSERT_EQ(tx.size(), 1u); // the retransmission; b still waits
    EXPECT_EQ(tx[0].tx_sequence, 1);
    r.on_data(tx[0], true);
    EXPECT_EQ(r.take_delivered(), std::vector<bytes>{ a });
    // Regular data is not for this receiver.
    dpdu reg = tx[0];
    reg.type = dpdu_type::data_only;
    EXPECT_FALSE(r.on_data(reg, true));
    EXPECT_EQ(s.on_ack(r.ack()), std::vector<uint64_t>{ ha });
    tx = s.next_transmission(16, lots);
    ASSERT_EQ(tx.size(), 1u);
    EXPECT_EQ(tx[0].tx_sequence, 0); // FSN restarts for each C_PDU
    EXPECT_EQ(tx[0].cpdu_id, 1);
    r.on_data(tx[0], true);
    EXPECT_EQ(r.take_delivered(), std::vector<bytes>{ b });
    EXPECT_EQ(s.on_ack(r.ack()), std::vector<uint64_t>{ hb });
    // C_PDU IDs cycle modulo 16.
    for (int i = 0; i < 20; ++i) {
        s.enqueue(bytes{ uint8_t(i) }, false);
        tx = s.next_transmission(16, lots);
        ASSERT_EQ(tx.size(), 1u);
        EXPECT_EQ(tx[0].cpdu_id, (2 + i) % 16);
        r.on_data(tx[0], true);
        EXPECT_EQ(s.on_ack(r.ack()).size(), 1u);
        EXPECT_EQ(r.take_delivered(), std::vector<bytes>{ bytes{ uint8_t(i) } });
    }
}

TEST(Arq, ExpeditedDropAbandonsAndReceiverDiscardsPartial)
{
    arq_sender s(cfg(128, 10, true));
    arq_receiver r(true);
    const uint64_t a = s.enqueue(pattern(30, 1), true);
    auto tx = s.next_transmission(16, lots);
    r.on_data(tx[0], true);
    r.on_data(tx[1], true);
    EXPECT_TRUE(s.drop(a));
    EXPECT_EQ(s.take_dropped(), std::vector<uint64_t>{ a });
    EXPECT_TRUE(s.idle());
    const bytes b = pattern(12, 2);
    s.enqueue(b, true);
    tx = s.next_transmission(16, lots);
    ASSERT_EQ(tx.size(), 2u);
    EXPECT_EQ(tx[0].tx_sequence, 0);
    EXPECT_EQ(tx[0].cpdu_id, 1);
    for (auto& d : tx)
        r.on_data(d, true);
    EXPECT_EQ(r.take_delivered(), std::vector<bytes>{ b });
    EXPECT_EQ(r.counters().cpdus_discarded, 1u);
}

TEST(Arq, AckHelpersAndCodecRoundTrip)
{
    arq_ack a{ 17, bytes{ 0x05, 0x80 } };
    dpdu d;
    d.type = dpdu_type::data_only;
    d.cpdu_start = d.cpdu_end = true;
    d.segment = bytes{ 1, 2, 3 };
    d.tx_sequence = 4;
    fill_data_ack(d, a);
    EXPECT_EQ(d.type, dpdu_type::data_ack);
    d.address_size = 2;
    d.destination = 1;
    d.source = 2;
    auto wire = encode(d);
    auto back = decode_dpdu(wire.data(), wire.size());
    ASSERT_TRUE(back.ok()) << back.reason;
    EXPECT_EQ(ack_of(back.value), a);
    EXPECT_EQ(back.value.segment, d.segment);

    dpdu k = make_ack_only(a);
    EXPECT_EQ(k.type, dpdu_type::ack_only);
    dpdu e = make_ack_only(a, true);
    EXPECT_EQ(e.type, dpdu_type::expedited_ack_only);
    e.address_size = 1;
    wire = encode(e);
    back = decode_dpdu(wire.data(), wire.size());
    ASSERT_TRUE(back.ok());
    EXPECT_EQ(ack_of(back.value), a);

    dpdu x;
    x.type = dpdu_type::expedited_data_only;
    EXPECT_THROW(fill_data_ack(x, a), std::invalid_argument);
    EXPECT_THROW(make_ack_only(arq_ack{ 0, bytes(17) }), std::invalid_argument);
    EXPECT_THROW(ack_of(x), std::invalid_argument);
}

// ------------------------------------------------------------ lossy-link property

namespace {

struct traffic {
    std::vector<bytes> cpdus;
    std::vector<bool> in_order;
    std::map<bytes, size_t> index; // content -> C_PDU number (contents are unique)
};

traffic make_traffic(std::mt19937& rng, size_t n, uint8_t tag)
{
    traffic t;
    std::uniform_int_distribution<size_t> size(1, 2100);
    while (t.cpdus.size() < n) {
        bytes b(size(rng));
        for (auto& x : b)
            x = uint8_t(rng());
        const size_t i = t.cpdus.size();
        if (b.size() >= 5) { // unique tag + index
            b[0] = tag;
            b[1] = uint8_t(i >> 24);
            b[2] = uint8_t(i >> 16);
            b[3] = uint8_t(i >> 8);
            b[4] = uint8_t(i);
        }
        if (t.index.count(b))
            continue; // a short one that repeats an earlier one: draw again
        t.index[b] = i;
        t.cpdus.push_back(b);
        t.in_order.push_back(rng() % 3 != 0);
    }
    return t;
}

// One end of the link: a sender for its own traffic, a receiver for the peer's.
struct end_point {
    arq_sender tx;
    arq_receiver rx;
    bool expedited;
    std::vector<uint64_t> handles; // handle per C_PDU number
    std::map<uint64_t, size_t> handle_index;
    std::vector<int> confirmed; // per C_PDU: times confirmed
    std::vector<int> delivered; // per peer C_PDU: times delivered
    std::vector<int> dropped;   // per C_PDU: times reported dropped
    long last_in_order = -1;    // newest in-order peer C_PDU delivered
    bool got_ack = false;

    end_point(const arq_config& c) : tx(c), rx(c.expedited), expedited(c.expedited) {}
};

struct link_stats {
    size_t frames = 0, lost = 0, damaged = 0, data_acks = 0, ack_onlys = 0;
};

// Moves one transmission from `from` to `to` through the lossy channel.
void transmit(end_point& from,
              end_point& to,
              std::mt19937& rng,
              size_t max_dpdus,
              const traffic& to_traffic,
              link_stats& st)
{
    std::uniform_real_distribution<double> u(0, 1);
    auto frames = from.tx.next_transmission(max_dpdus, 1u << 20);
    if (from.rx.ack_due()) {
        arq_ack a = from.rx.ack();
        if (!frames.empty() && !from.expedited) {
            for (auto& f : frames)
                fill_data_ack(f, a); // the ack rides on every data D_PDU
            st.data_acks += frames.size();
        } else {
            frames.push_back(make_ack_only(a, from.expedited));
            ++st.ack_onlys;
        }
    }
    for (auto& f : frames) {
        f.address_size = 2;
        f.destination = 0x12;
        f.source = 0x34;
        f.eot = 10;
        bytes wire = encode(f);
        ++st.frames;
        const double p = u(rng);
        if (p < 0.2) {
            ++st.lost;
            continue;
        }
        if (p < 0.3) {
            ++st.damaged;
            wire[wire.size() - 1 - rng() % 4] ^= 0x5A; // hits the data CRC-32
            if (!carries_segment(f.type))
                wire[8] ^= 0x01; // no segment: the header is hit instead
        }
        auto dec = decode_dpdu(wire.data(), wire.size());
        if (!dec.ok() && dec.error != decode_error::segment_crc)
            continue; // header lost
        const dpdu& d = dec.value;
        const bool seg_ok = dec.ok();
        if (d.type == dpdu_type::ack_only || d.type == dpdu_type::data_ack ||
            d.type == dpdu_type::expedited_ack_only) {
            to.got_ack = true;
            for (uint64_t h : to.tx.on_ack(ack_of(d))) {
                auto it = to.handle_index.find(h);
                ASSERT_NE(it, to.handle_index.end());
                ++to.confirmed[it->second];
            }
        }
        if (carries_segment(d.type))
            to.rx.on_data(d, seg_ok);
    }
    for (auto& b : to.rx.take_delivered()) {
        auto it = to_traffic.index.find(b);
        ASSERT_NE(it, to_traffic.index.end()) << "delivered bytes were never sent";
        const size_t i = it->second;
        ++to.delivered[i];
        if (to_traffic.in_order[i] || to.expedited) {
            EXPECT_GT(long(i), to.last_in_order) << "in-order C_PDU out of order";
            to.last_in_order = long(i);
        }
    }
}

// Two ends exchange n_ab and n_ba C_PDUs over the lossy channel. With drop_p > 0 each
// end abandons a random unconfirmed C_PDU of its own with that probability per turn.
void run_link(uint32_t seed,
              size_t segment,
              size_t window,
              bool expedited,
              size_t n_ab,
              size_t n_ba,
              double drop_p = 0)
{
    SCOPED_TRACE("seed " + std::to_string(seed) + " segment " + std::to_string(segment) +
                 " window " + std::to_string(window) + (expedited ? " expedited" : "") +
                 (drop_p > 0 ? " with drops" : ""));
    const bool drops = drop_p > 0;
    std::mt19937 rng(seed);
    const traffic ab = make_traffic(rng, n_ab, 0xA0), ba = make_traffic(rng, n_ba, 0xB0);
    end_point A(cfg(window, segment, expedited)), B(cfg(window, segment, expedited));
    auto load = [&](end_point& e, end_point& peer, const traffic& t) {
        e.confirmed.assign(t.cpdus.size(), 0);
        e.dropped.assign(t.cpdus.size(), 0);
        peer.delivered.assign(t.cpdus.size(), 0);
        for (size_t i = 0; i < t.cpdus.size(); ++i) {
            const uint64_t h = e.tx.enqueue(t.cpdus[i], t.in_order[i]);
            e.handles.push_back(h);
            e.handle_index[h] = i;
        }
    };
    load(A, B, ab);
    load(B, A, ba);
    link_stats st;
    std::uniform_int_distribution<size_t> burst(1, 40);
    std::uniform_real_distribution<double> u01(0, 1);
    size_t turns = 0;
    const size_t max_turns = 400000;
    while ((!A.tx.idle() || !B.tx.idle() || A.rx.ack_due() || B.rx.ack_due()) &&
           turns < max_turns) {
        for (end_point* e : { &A, &B }) {
            end_point& me = *e;
            end_point& peer = (e == &A) ? B : A;
            // No ack reached us during the peer's turn: the answer timed out.
            if (!me.got_ack && me.tx.in_flight() > 0)
                me.tx.on_ack_timeout();
            me.got_ack = false;
            if (drops && u01(rng) < drop_p) {
                // Aim near the oldest unreported C_PDU, which is likely in flight;
                // now and then hit an arbitrary one (confirmed, dropped or queued).
                size_t oldest = 0;
                while (oldest + 1 < me.handles.size() &&
                       (me.confirmed[oldest] || me.dropped[oldest]))
                    ++oldest;
                size_t i = std::min(me.handles.size() - 1, oldest + rng() % 6);
                if (rng() % 4 == 0)
                    i = rng() % me.handles.size();
                const bool live = me.confirmed[i] == 0 && me.dropped[i] == 0;
                const bool asked = me.tx.drop(me.handles[i]);
                // drop() knows exactly the C_PDUs not yet reported (or being dropped).
                if (asked) {
                    EXPECT_TRUE(live);
                }
            }
            for (uint64_t h : me.tx.take_dropped())
                ++me.dropped[me.handle_index.at(h)];
            transmit(me, peer, rng, burst(rng), (e == &A) ? ab : ba, st);
            if (::testing::Test::HasFatalFailure())
                return;
            ++turns;
        }
    }
    ASSERT_LT(turns, max_turns) << "link did not drain";
    for (end_point* e : { &A, &B }) {
        const traffic& own = (e == &A) ? ab : ba;
        end_point& peer = (e == &A) ? B : A;
        for (uint64_t h : e->tx.take_dropped())
            ++e->dropped[e->handle_index.at(h)];
        size_t n_dropped = 0;
        for (size_t i = 0; i < own.cpdus.size(); ++i) {
            EXPECT_EQ(e->confirmed[i] + e->dropped[i], 1) << "C_PDU " << i << " reports";
            if (e->dropped[i]) {
                EXPECT_LE(peer.delivered[i], 1) << "dropped C_PDU " << i << " deliveries";
            } else {
                EXPECT_EQ(peer.delivered[i], 1) << "C_PDU " << i << " deliveries";
            }
            n_dropped += e->dropped[i];
        }
        const auto& tc = e->tx.counters();
        EXPECT_EQ(tc.cpdus_dropped, n_dropped);
        EXPECT_EQ(tc.dpdus_sent, tc.new_segments + tc.retransmissions + tc.drop_frames);
        EXPECT_EQ(e->tx.in_flight(), 0u);
        EXPECT_EQ(e->tx.queued_bytes(), 0u);
        if (!(drops &&
              expedited)) { // an abandoned expedited C_PDU leaves the peer behind
            EXPECT_EQ(peer.rx.rx_lwe(), e->tx.tx_lwe());
        }
        EXPECT_EQ(peer.rx.counters().lwe_advances, 0u);
        if (drops) {
            if (e == &A) {
                EXPECT_GT(n_dropped, 0u);
                if (!expedited) {
                    EXPECT_GT(tc.drop_frames, 0u);
                }
            }
            continue;
        }
        EXPECT_EQ(tc.cpdus_enqueued, own.cpdus.size());
        EXPECT_EQ(tc.cpdus_confirmed, own.cpdus.size());
        EXPECT_EQ(tc.drop_frames, 0u);
        size_t segs = 0, bytes_total = 0;
        for (auto& c : own.cpdus) {
            segs += (c.size() + segment - 1) / segment;
            bytes_total += c.size();
        }
        EXPECT_EQ(tc.new_segments, segs);
        EXPECT_GE(tc.bytes_sent, bytes_total);
        EXPECT_GT(tc.retransmissions, 0u);
        const auto& rc = peer.rx.counters();
        EXPECT_EQ(rc.cpdus_delivered, own.cpdus.size());
        EXPECT_EQ(rc.cpdus_discarded, 0u);
        EXPECT_EQ(rc.wrong_type, 0u);
        EXPECT_EQ(rc.segments_received, segs); // each segment stored exactly once
        EXPECT_EQ(rc.segment_bytes_received, bytes_total); // and its bytes counted once
        EXPECT_EQ(rc.frames,
                  rc.segments_received + rc.duplicates + rc.damaged + rc.out_of_window);
        EXPECT_GT(rc.damaged, 0u);
    }
    EXPECT_GT(st.lost, 0u);
    EXPECT_GT(st.ack_onlys, 0u);
    if (!expedited) {
        EXPECT_GT(st.data_acks, 0u);
    }
}

} // namespace

TEST(ArqProperty, LossyLinkRegular)
{
    uint32_t seed = 1000;
    for (size_t segment : { size_t(30), size_t(200), size_t(1023) })
        for (size_t window : { size_t(128), size_t(8) })
            run_link(seed++, segment, window, false, 2000, 400);
}

TEST(ArqProperty, LossyLinkExpedited)
{
    uint32_t seed = 2000;
    for (size_t segment : { size_t(30), size_t(1023) })
        for (size_t window : { size_t(128), size_t(8) })
            run_link(seed++, segment, window, true, 300, 100);
}

TEST(ArqProperty, LossyLinkWithDrops)
{
    uint32_t seed = 3000;
    for (size_t segment : { size_t(30), size_t(200) })
        for (size_t window : { size_t(128), size_t(8) }) {
            run_link(seed++, segment, window, false, 600, 200, 0.05);
            run_link(seed++, segment, window, true, 150, 50, 0.05);
        }
}

// What each ack says about the segments awaiting it, for the segment-size policy; the
// per-D_PDU overhead counts against the byte budget.
TEST(Arq, AckOutcomeCountsAnsweredAndLostSegments)
{
    arq_sender s(cfg(128, 10));
    s.enqueue(pattern(25, 9), true); // segments of 10, 10 and 5 bytes
    // A budget of 2 x (10 + 6) bytes takes two D_PDUs, not three.
    auto first = s.next_transmission(16, 32, 6);
    ASSERT_EQ(first.size(), 2u);
    auto rest = s.next_transmission(16, lots, 6);
    ASSERT_EQ(rest.size(), 1u);
    arq_receiver r;
    r.on_data(first[0], true); // FSN 1 is lost
    r.on_data(rest[0], true);
    s.on_ack(r.ack());
    const auto o = s.take_ack_outcome();
    EXPECT_EQ(o.frames, 3u);
    EXPECT_EQ(o.segment_bytes, 25u);
    EXPECT_EQ(o.lost_frames, 1u);
    EXPECT_EQ(s.take_ack_outcome().frames, 0u); // taken
    // The retransmission's answer never comes: a timeout says nothing.
    ASSERT_EQ(s.next_transmission(16, lots, 6).size(), 1u);
    s.on_ack_timeout();
    EXPECT_EQ(s.take_ack_outcome().frames, 0u);
}
