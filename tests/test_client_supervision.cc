/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "dl/client_supervision.h"

#include <gtest/gtest.h>

using namespace gr::hfstack::dl;

namespace {
sis_primitive prim(sis_type t)
{
    sis_primitive p;
    p.type = t;
    return p;
}
} // namespace

TEST(ClientSupervision, AnswersAClientKeepAliveAtOnce)
{
    client_supervision s;
    s.on_connected(1, 0.0);
    s.on_primitive(1, prim(sis_type::keep_alive), 5.0);
    auto m = s.take_messages();
    ASSERT_EQ(m.size(), 1u);
    EXPECT_EQ(m[0].client, 1u);
    EXPECT_EQ(m[0].primitive.type, sis_type::keep_alive);
    EXPECT_EQ(s.counters().keep_alives_answered, 1u);
}

TEST(ClientSupervision, ProbesASilentClientAndUnbindsItWithoutAnswer)
{
    client_supervision s;
    s.on_connected(1, 0.0);
    s.on_connected(2, 0.0);
    EXPECT_DOUBLE_EQ(s.next_deadline(), 120.0);
    s.on_primitive(2, prim(sis_type::unidata_request), 100.0); // client 2 talks
    s.on_timer(120.0);
    auto m = s.take_messages();
    ASSERT_EQ(m.size(), 1u);
    EXPECT_EQ(m[0].client, 1u);
    EXPECT_EQ(m[0].primitive.type, sis_type::keep_alive);
    EXPECT_DOUBLE_EQ(s.next_deadline(), 130.0);
    s.on_timer(129.9);
    EXPECT_TRUE(s.take_disconnects().empty());
    s.on_timer(130.0);
    m = s.take_messages();
    ASSERT_EQ(m.size(), 1u);
    EXPECT_EQ(m[0].primitive.type, sis_type::unbind_indication);
    EXPECT_EQ(m[0].primitive.reason, uint8_t(sis_unbind_reason::keep_alive_inactivity));
    auto d = s.take_disconnects();
    ASSERT_EQ(d.size(), 1u);
    EXPECT_EQ(d[0].client, 1u);
    EXPECT_EQ(s.clients(), 1u);
    EXPECT_DOUBLE_EQ(s.next_deadline(), 220.0); // client 2, heard at 100
}

TEST(ClientSupervision, TheAnswerToOurKeepAliveIsNotAnsweredAgain)
{
    client_supervision s;
    s.on_connected(1, 0.0);
    s.on_timer(120.0);
    ASSERT_EQ(s.take_messages().size(), 1u);
    s.on_primitive(1, prim(sis_type::keep_alive), 121.0);
    EXPECT_TRUE(s.take_messages().empty());
    s.on_timer(200.0);
    EXPECT_TRUE(s.take_disconnects().empty());
    EXPECT_DOUBLE_EQ(s.next_deadline(), 241.0);
}

TEST(ClientSupervision, TooManyInvalidPrimitivesUnbind)
{
    client_supervision_config c;
    c.max_invalid_primitives = 3;
    c.invalid_window_s = 10.0;
    client_supervision s(c);
    s.on_connected(4, 0.0);
    for (int i = 0; i < 3; ++i)
        s.on_invalid(4, "bad", double(i) * 4.0); // 0, 4, 8: three in the window
    EXPECT_TRUE(s.take_disconnects().empty());
    s.on_invalid(4, "bad", 11.0); // the one at 0 has left the window
    EXPECT_TRUE(s.take_disconnects().empty());
    s.on_invalid(4, "unknown type 99", 12.0); // 4, 8, 11, 12
    auto m = s.take_messages();
    ASSERT_EQ(m.size(), 1u);
    EXPECT_EQ(m[0].primitive.reason,
              uint8_t(sis_unbind_reason::too_many_invalid_primitives));
    auto d = s.take_disconnects();
    ASSERT_EQ(d.size(), 1u);
    EXPECT_NE(d[0].detail.find("unknown type 99"), std::string::npos);
    s.on_invalid(4, "after", 13.0); // a closed client is ignored
    EXPECT_TRUE(s.take_disconnects().empty());
}

TEST(ClientSupervision, ExpeditedFloodUnbinds)
{
    client_supervision_config c;
    c.max_expedited_requests = 2;
    client_supervision s(c);
    s.on_connected(9, 0.0);
    s.on_primitive(9, prim(sis_type::expedited_unidata_request), 1.0);
    s.on_primitive(9, prim(sis_type::expedited_unidata_request), 2.0);
    s.on_primitive(9, prim(sis_type::unidata_request), 3.0);
    EXPECT_TRUE(s.take_disconnects().empty());
    s.on_primitive(9, prim(sis_type::expedited_unidata_request), 4.0);
    auto d = s.take_disconnects();
    ASSERT_EQ(d.size(), 1u);
    EXPECT_EQ(d[0].reason, sis_unbind_reason::too_many_expedited_requests);
    EXPECT_EQ(s.counters().unbound_expedited, 1u);
}

TEST(ClientSupervision, ClosedClientsAreForgotten)
{
    client_supervision s;
    s.on_connected(1, 0.0);
    s.on_closed(1);
    s.on_timer(1000.0);
    EXPECT_TRUE(s.take_messages().empty());
    EXPECT_EQ(s.next_deadline(), std::numeric_limits<double>::infinity());
}

// At time_scale 20 the keep-alive ran on protocol time (a KEEP_ALIVE every
// 6 s of real time, 0.5 s to answer). Counted in protocol seconds, the intervals are
// scaled so that they stay 120 s and 10 s of real time.
TEST(ClientSupervision, TimersStayInRealTimeWhenProtocolTimeIsScaled)
{
    const double scale = 20;
    client_supervision s(in_protocol_time(client_supervision_config{}, scale));
    s.on_connected(1, 0.0);
    EXPECT_DOUBLE_EQ(s.next_deadline() / scale, 120.0);
    s.on_timer(119.0 * scale);
    EXPECT_TRUE(s.take_messages().empty());
    s.on_timer(120.0 * scale);
    ASSERT_EQ(s.take_messages().size(), 1u); // the probe
    s.on_timer((120.0 + 9.0) * scale);       // 9 s of real time later: still waiting
    EXPECT_TRUE(s.take_disconnects().empty());
    s.on_timer((120.0 + 10.0) * scale);
    EXPECT_EQ(s.take_disconnects().size(), 1u);

    const auto same = in_protocol_time(client_supervision_config{}, 1.0);
    EXPECT_DOUBLE_EQ(same.keep_alive_interval_s, 120.0);
    EXPECT_DOUBLE_EQ(same.keep_alive_answer_s, 10.0);
}

TEST(ClientSupervision, TheDisconnectSaysTheWaitInRealTime)
{
    // At time_scale 10 the client waited 10 s of real time (100 s of protocol time);
    // the detail the node logs says which is which.
    client_supervision scaled(in_protocol_time(client_supervision_config{}, 10.0));
    scaled.on_connected(1, 0.0);
    scaled.on_timer(1200.0);
    scaled.on_timer(1300.0);
    auto d = scaled.take_disconnects();
    ASSERT_EQ(d.size(), 1u);
    EXPECT_EQ(d[0].detail,
              "no answer to S_KEEP_ALIVE within 10 s of real time (100 s of "
              "protocol time at time_scale 10)");
    client_supervision plain;
    plain.on_connected(1, 0.0);
    plain.on_timer(120.0);
    plain.on_timer(130.0);
    d = plain.take_disconnects();
    ASSERT_EQ(d.size(), 1u);
    EXPECT_EQ(d[0].detail, "no answer to S_KEEP_ALIVE within 10 s");
}
