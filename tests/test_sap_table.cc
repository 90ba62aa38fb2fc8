/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "dl/sap_table.h"

#include <gtest/gtest.h>

using namespace gr::hfstack::dl;

namespace {

sis_primitive bind_request(uint8_t sap, uint8_t rank, sis_tx_mode mode = sis_tx_mode::arq)
{
    sis_primitive p;
    p.type = sis_type::bind_request;
    p.sap = sap;
    p.rank = rank;
    p.service_type.tx_mode = mode;
    return p;
}

} // namespace

TEST(SapTable, AcceptsAFreeSapWithTheConfiguredMtu)
{
    sap_table t;
    auto out = t.bind(1, bind_request(9, 0));
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(out[0].client, 1u);
    EXPECT_EQ(out[0].primitive.type, sis_type::bind_accepted);
    EXPECT_EQ(out[0].primitive.sap, 9);
    EXPECT_EQ(out[0].primitive.mtu, 2048);
    // The answer encodes to the spec vector.
    EXPECT_EQ(encode(out[0].primitive),
              (bytes{ 0x90, 0xEB, 0x00, 0x00, 0x04, 0x03, 0x90, 0x08, 0x00 }));
    ASSERT_NE(t.by_sap(9), nullptr);
    EXPECT_EQ(t.by_sap(9)->client, 1u);
    EXPECT_EQ(t.by_client(1)->service.tx_mode, sis_tx_mode::arq);
}

TEST(SapTable, EqualOrLowerRankIsRejected)
{
    sap_table t;
    t.bind(1, bind_request(6, 5));
    for (uint8_t rank : { 5, 2 }) {
        auto out = t.bind(2, bind_request(6, rank));
        ASSERT_EQ(out.size(), 1u);
        EXPECT_EQ(out[0].client, 2u);
        EXPECT_EQ(out[0].primitive.type, sis_type::bind_rejected);
        EXPECT_EQ(out[0].primitive.reason,
                  uint8_t(sis_bind_rejected_reason::sap_already_allocated));
    }
    EXPECT_EQ(t.by_sap(6)->client, 1u);
    EXPECT_EQ(t.by_client(2), nullptr);
}

TEST(SapTable, HigherRankPreEmpts)
{
    sap_table t;
    t.bind(1, bind_request(6, 5));
    auto out = t.bind(2, bind_request(6, 6));
    ASSERT_EQ(out.size(), 2u);
    EXPECT_EQ(out[0].client, 1u);
    EXPECT_EQ(out[0].primitive.type, sis_type::unbind_indication);
    EXPECT_EQ(out[0].primitive.reason,
              uint8_t(sis_unbind_reason::preempted_by_higher_rank));
    EXPECT_EQ(out[1].client, 2u);
    EXPECT_EQ(out[1].primitive.type, sis_type::bind_accepted);
    EXPECT_EQ(t.by_sap(6)->client, 2u);
    EXPECT_EQ(t.by_client(1), nullptr);
}

TEST(SapTable, OneSapPerClientAndUnbind)
{
    sap_table t;
    t.bind(1, bind_request(3, 0));
    auto out = t.bind(1, bind_request(4, 0)); // rebinding moves the client
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(out[0].primitive.type, sis_type::bind_accepted);
    EXPECT_EQ(t.by_sap(3), nullptr);
    EXPECT_EQ(t.by_sap(4)->client, 1u);
    out = t.bind(1, bind_request(4, 0)); // the same SAP again is fine
    EXPECT_EQ(out.back().primitive.type, sis_type::bind_accepted);
    auto held = t.unbind(1);
    ASSERT_TRUE(held);
    EXPECT_EQ(held->sap, 4);
    EXPECT_FALSE(t.unbind(1));
    EXPECT_TRUE(t.bindings().empty());
}

TEST(SapTable, BroadcastOnlyNodeRefusesArq)
{
    sap_table_config c;
    c.broadcast_only = true;
    c.mtu = broadcast_only_max_mtu;
    sap_table t(c);
    auto out = t.bind(1, bind_request(9, 0, sis_tx_mode::arq));
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(out[0].primitive.type, sis_type::bind_rejected);
    EXPECT_EQ(out[0].primitive.reason,
              uint8_t(sis_bind_rejected_reason::arq_unsupportable_during_broadcast));
    out = t.bind(1, bind_request(9, 0, sis_tx_mode::non_arq));
    EXPECT_EQ(out[0].primitive.type, sis_type::bind_accepted);
    EXPECT_EQ(out[0].primitive.mtu, 4096);
}

// Binds with a service no SAP can have were accepted.
TEST(SapTable, RefusesAServiceTypeNoSapCanHave)
{
    sap_table t;
    const auto refused = [&](sis_tx_mode mode, sis_delivery_confirmation conf) {
        auto p = bind_request(3, 0, mode);
        p.service_type.delivery_confirmation = conf;
        const auto out = t.bind(1, p);
        return out.size() == 1 && out[0].primitive.type == sis_type::bind_rejected &&
               out[0].primitive.reason == uint8_t(sis_bind_rejected_reason::unknown);
    };
    using C = sis_delivery_confirmation;
    EXPECT_TRUE(refused(sis_tx_mode::ignore, C::none));
    EXPECT_TRUE(refused(sis_tx_mode(7), C::none));
    EXPECT_TRUE(refused(sis_tx_mode::non_arq, C::node));
    EXPECT_TRUE(refused(sis_tx_mode::non_arq_with_errors, C::client));
    EXPECT_TRUE(refused(sis_tx_mode::arq, C(3)));
    EXPECT_EQ(t.by_client(1), nullptr);
    EXPECT_FALSE(refused(sis_tx_mode::arq, C::client));
    EXPECT_FALSE(refused(sis_tx_mode::non_arq, C::none));
    EXPECT_FALSE(refused(sis_tx_mode::non_arq_with_errors, C::none));
}
