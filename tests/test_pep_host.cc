/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

/* Transfers through two HF-PEPs in virtual time (traffic/pep_host.h): the section D
 * measurement of anchors.md, connect, send N bytes, wait for the confirmation, close,
 * on the simulated network with the real node and PEP kernels. */
#include "sim/scenario.h"
#include "traffic/pep_host.h"

#include <gtest/gtest.h>

#include <iostream>

using namespace gr::hfstack;
using namespace gr::hfstack::traffic;

namespace {

double utilisation(const sim::scenario_config& c, size_t bytes, const pep_transfer_record& r)
{
    return 100.0 * double(bytes) * 8 / (sim::waveform_for(c.mode).bit_rate * r.total_s);
}

} // namespace

TEST(PepHost, TransfersAreConfirmedAndTakeTheLinksTime)
{
    for (size_t bytes : { size_t(1000), size_t(100000) }) {
        sim::scenario_config c;
        c.mode = "9600S";
        c.duration_s = 3600;
        const auto r = run_pep_transfers(c, bytes, 2, pep_payload::random, false);
        ASSERT_EQ(r.transfers.size(), 2u) << bytes;
        for (const auto& t : r.transfers) {
            EXPECT_TRUE(t.confirmed) << bytes;
            // No faster than the bits on the air allow.
            EXPECT_GT(t.total_s, double(bytes) * 8 / 9600) << bytes;
        }
        std::cout << bytes << " bytes at 9600S: " << utilisation(c, bytes, r.transfers[0])
                  << " % (first), " << utilisation(c, bytes, r.transfers[1]) << " % (second)\n";
    }
}

TEST(PepHost, CompressionShortensTextTransfers)
{
    sim::scenario_config c;
    c.mode = "1200S";
    c.duration_s = 7200;
    const auto plain = run_pep_transfers(c, 20000, 1, pep_payload::text, false);
    const auto packed = run_pep_transfers(c, 20000, 1, pep_payload::text, true);
    ASSERT_TRUE(plain.transfers.at(0).confirmed);
    ASSERT_TRUE(packed.transfers.at(0).confirmed);
    EXPECT_LT(packed.transfers[0].total_s * 2, plain.transfers[0].total_s);
}
