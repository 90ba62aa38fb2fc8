/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

/* The RESET/WIN-RESYNC handshake with one peer (dl/window_resync.h), alone: when the
 * windows must be reset, which requests are repeats, what is owed. The engine's use of
 * it is tested in test_node_engine.cc and test_node_link.cc (restarts, lost RESET-ACKs,
 * data with the link request). */
#include "dl/window_resync.h"

#include <gtest/gtest.h>

using namespace gr::hfstack::dl;

TEST(WindowResync,
     OurRequestIsDueUntilSentAgainAfterAnUnansweredExchangeAndEndsWithItsAck)
{
    window_resync r;
    EXPECT_FALSE(r.synced());
    r.start(7);
    EXPECT_TRUE(r.outstanding());
    EXPECT_TRUE(r.request_due());
    EXPECT_EQ(r.request_id(), 7);
    r.start(8); // one at a time: the outstanding request keeps its number
    EXPECT_EQ(r.request_id(), 7);
    r.request_sent();
    EXPECT_FALSE(r.request_due());
    r.send_again(); // no RESET-ACK came
    EXPECT_TRUE(r.request_due());
    r.request_sent();
    EXPECT_FALSE(r.on_reset_ack(6)); // not ours
    EXPECT_TRUE(r.outstanding());
    EXPECT_TRUE(r.on_reset_ack(7)); // reset the windows now
    EXPECT_TRUE(r.synced());
    EXPECT_FALSE(r.outstanding());
    EXPECT_FALSE(r.on_reset_ack(7)); // a late copy changes nothing
    r.send_again();
    EXPECT_FALSE(r.request_due());
}

TEST(WindowResync, DataWithTheRequestResetsTheWindowsOnceWhenItGoesNotAtTheAck)
{
    window_resync r;
    r.start(3);
    EXPECT_TRUE(r.reset_windows_for_request());
    EXPECT_FALSE(r.reset_windows_for_request()); // the request repeated: same windows
    EXPECT_FALSE(r.on_reset_ack(3));             // data numbered since must stay
    EXPECT_TRUE(r.synced());
    r.start(4);
    EXPECT_TRUE(r.reset_windows_for_request()); // a new request: new windows
}

TEST(WindowResync, ARepeatedFullResetIsAcknowledgedAgainWithoutResetting)
{
    window_resync r;
    EXPECT_TRUE(r.on_full_reset(9));
    EXPECT_TRUE(r.synced());
    EXPECT_FALSE(r.on_full_reset(9)); // our RESET-ACK was lost
    EXPECT_EQ(r.acks_owed(), (std::vector<uint8_t>{ 9, 9 }));
    r.acks_sent(1);
    EXPECT_EQ(r.acks_owed(), (std::vector<uint8_t>{ 9 }));
    r.acks_sent(5);
    EXPECT_TRUE(r.acks_owed().empty());
    // Once the peer's regular traffic shows it has our RESET-ACK, the same frame ID is
    // a new request (the peer restarted).
    r.on_regular_traffic();
    EXPECT_TRUE(r.on_full_reset(9));
    // The peer's full reset also ends a request of ours: the windows now agree.
    r.start(1);
    EXPECT_TRUE(r.on_full_reset(10));
    EXPECT_FALSE(r.outstanding());
    EXPECT_FALSE(r.request_due());
}

TEST(WindowResync, ARequestThatBroughtDataIsRecognisedEvenAfterALinkBreak)
{
    window_resync with_data, without_data;
    for (auto* r : { &with_data, &without_data })
        EXPECT_TRUE(r->on_full_reset(5));
    with_data.on_data_with_reset();
    for (auto* r : { &with_data, &without_data })
        r->on_link_down();
    EXPECT_FALSE(with_data.on_full_reset(5));   // its data are in the windows: keep them
    EXPECT_TRUE(without_data.on_full_reset(5)); // nothing to keep: a new agreement
}

TEST(WindowResync, OtherRequestsAreOnlyAcknowledged)
{
    window_resync r;
    r.owe_ack(2);
    EXPECT_FALSE(r.synced());
    EXPECT_EQ(r.acks_owed(), (std::vector<uint8_t>{ 2 }));
}

// A node that restored its journal: synchronised at once; its request (a RESET-RX-WIN
// command for the peer's receiver) is due, asked again after an unanswered exchange, and
// its RESET-ACK resets nothing here. A FULL RESET from the peer meanwhile still wins.
TEST(WindowResync, ARestoredNodeAsksThePeersReceiverToFollowWithoutAResetOfItsOwn)
{
    window_resync r;
    r.restore_synced(7);
    EXPECT_TRUE(r.synced());
    EXPECT_TRUE(r.request_due());
    EXPECT_FALSE(r.full());
    r.request_sent();
    r.send_again();
    EXPECT_TRUE(r.request_due());
    r.request_sent();
    EXPECT_FALSE(r.on_reset_ack(7));
    EXPECT_FALSE(r.outstanding());
    EXPECT_TRUE(r.synced());
    EXPECT_TRUE(r.full()); // the next request is a FULL RESET again

    window_resync s;
    s.restore_synced(3);
    EXPECT_TRUE(s.on_full_reset(9)); // the peer restarted without a journal
    EXPECT_FALSE(s.outstanding());
    EXPECT_TRUE(s.full());
}

// The peer's RESET-RX-WIN command (it restarted with its journal) moves our receiver
// once. Repeated because our RESET-ACK was lost, it comes with the frames we took after
// the first copy: taken again they would be delivered twice, so the repeat is only
// acknowledged. After regular traffic (the peer has our ack) the same frame ID is a new
// command: the peer restarted again.
TEST(WindowResync, ARepeatedReceiveWindowCommandIsAcknowledgedAgainWithoutMoving)
{
    window_resync r;
    EXPECT_TRUE(r.on_rx_win_command(4));
    EXPECT_FALSE(r.on_rx_win_command(4));
    EXPECT_EQ(r.acks_owed(), (std::vector<uint8_t>{ 4, 4 }));
    EXPECT_TRUE(r.on_rx_win_command(5));
    r.on_regular_traffic();
    EXPECT_TRUE(r.on_rx_win_command(5));
}
