/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "dl/non_arq.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <random>
#include <set>

using namespace gr::hfstack::dl;

namespace {

bytes pattern(size_t n, uint8_t seed = 1)
{
    bytes b(n);
    for (size_t i = 0; i < n; ++i)
        b[i] = uint8_t(seed + i * 7 + (i >> 8));
    return b;
}

sis_block_range blk(uint16_t offset, uint16_t size)
{
    sis_block_range r;
    r.offset = offset;
    r.size = size;
    return r;
}

non_arq_config sender_config(size_t segment, unsigned repeats = 0, bool expedited = false)
{
    non_arq_config c;
    c.segment_size = segment;
    c.repeats = repeats;
    c.expedited = expedited;
    return c;
}

// Stamps the source on every D_PDU of a batch, as the engine would.
std::vector<dpdu> from(uint32_t source, non_arq_batch b)
{
    for (auto& d : b.dpdus)
        d.source = source;
    return b.dpdus;
}

} // namespace

// ------------------------------------------------------------------------------ sender

TEST(NonArqSender, SegmentsByHand)
{
    non_arq_sender s(sender_config(1000));
    const bytes cpdu = pattern(2500);
    auto b = s.make_dpdus(cpdu, 0x1234, true, 10.0, 0.0);
    ASSERT_EQ(b.dpdus.size(), 3u);
    const uint16_t offsets[] = { 0, 1000, 2000 };
    const size_t sizes[] = { 1000, 1000, 500 };
    for (size_t i = 0; i < 3; ++i) {
        const dpdu& d = b.dpdus[i];
        EXPECT_EQ(d.type, dpdu_type::non_arq_data);
        EXPECT_EQ(d.cpdu_id, b.cpdu_id);
        EXPECT_EQ(d.cpdu_size, 2500);
        EXPECT_EQ(d.segment_offset, offsets[i]);
        ASSERT_EQ(d.segment.size(), sizes[i]);
        EXPECT_TRUE(
            std::equal(d.segment.begin(), d.segment.end(), cpdu.begin() + offsets[i]));
        EXPECT_TRUE(d.deliver_in_order);
        EXPECT_EQ(d.destination, 0x1234u);
        EXPECT_EQ(d.reception_window, 20); // 10 s
    }
    EXPECT_EQ(b.cpdu_id, 0);
    EXPECT_DOUBLE_EQ(b.expires_at, 10.0);
    EXPECT_EQ(s.counters().cpdus, 1u);
    EXPECT_EQ(s.counters().dpdus, 3u);

    // Exactly one segment when the C_PDU fits; group destinations pass through.
    auto one = s.make_dpdus(pattern(1000), broadcast_address, false, 1.0, 0.0);
    ASSERT_EQ(one.dpdus.size(), 1u);
    EXPECT_EQ(one.dpdus[0].segment.size(), 1000u);
    EXPECT_EQ(one.dpdus[0].destination, broadcast_address);
    EXPECT_EQ(one.cpdu_id, 1);
    // Every D_PDU encodes (group flag only allowed in non-ARQ types).
    for (const auto& d : from(7, b))
        EXPECT_NO_THROW(encode(d));
    EXPECT_NO_THROW(encode(from(7, one)[0]));
}

TEST(NonArqSender, IdsWrapAndSpacesAreSeparate)
{
    non_arq_sender regular(sender_config(100));
    non_arq_sender expedited(sender_config(100, 0, true));
    for (unsigned i = 0; i < 4096; ++i)
        ASSERT_EQ(regular.make_dpdus(bytes{ 1 }, 1, false, 0, i).cpdu_id, i);
    EXPECT_EQ(regular.next_id(), 0);
    EXPECT_EQ(regular.make_dpdus(bytes{ 1 }, 1, false, 0, 5000).cpdu_id, 0);
    EXPECT_EQ(regular.make_dpdus(bytes{ 1 }, 1, false, 0, 5001).cpdu_id, 1);

    auto e = expedited.make_dpdus(bytes{ 1, 2 }, 1, false, 0, 0);
    EXPECT_EQ(e.cpdu_id, 0);
    EXPECT_EQ(e.dpdus[0].type, dpdu_type::expedited_non_arq_data);

    // A node's incarnation picks the first ID (mod 4096); numbering goes on from there.
    non_arq_config from_incarnation = sender_config(100);
    from_incarnation.first_id = uint16_t(4095);
    non_arq_sender later(from_incarnation);
    EXPECT_EQ(later.make_dpdus(bytes{ 1 }, 1, false, 0, 0).cpdu_id, 4095);
    EXPECT_EQ(later.make_dpdus(bytes{ 1 }, 1, false, 0, 1).cpdu_id, 0);
}

TEST(NonArqSender, WindowConversionRoundsUpAndSaturates)
{
    EXPECT_EQ(reception_window_units(0), 0);
    EXPECT_EQ(reception_window_units(-3), 0);
    EXPECT_EQ(reception_window_units(std::nan("")), 0);
    EXPECT_EQ(reception_window_units(0.1), 1);
    EXPECT_EQ(reception_window_units(0.5), 1);
    EXPECT_EQ(reception_window_units(0.51), 2);
    EXPECT_EQ(reception_window_units(127.5), 255);
    EXPECT_EQ(reception_window_units(32767.0), 65534);
    EXPECT_EQ(reception_window_units(32767.5), 65535);
    EXPECT_EQ(reception_window_units(32768.0), 65535);
    EXPECT_EQ(reception_window_units(1e12), 65535);
    EXPECT_EQ(reception_window_units(std::numeric_limits<double>::infinity()), 65535);
    EXPECT_DOUBLE_EQ(reception_window_seconds(65535), 32767.5);

    non_arq_config c = sender_config(10);
    c.window_margin = 2.2;
    non_arq_sender s(c);
    auto b = s.make_dpdus(pattern(15), 1, false, 10.0, 100.0);
    for (const auto& d : b.dpdus)
        EXPECT_EQ(d.reception_window, 25); // ceil(2 * 12.2)
    EXPECT_DOUBLE_EQ(b.expires_at, 112.2);

    // Refresh just before transmission: what is left of the window.
    non_arq_sender::refresh_window(b.dpdus[1], b.expires_at, 105.0);
    EXPECT_EQ(b.dpdus[1].reception_window, 15); // ceil(2 * 7.2)
    non_arq_sender::refresh_window(b.dpdus[1], b.expires_at, 200.0);
    EXPECT_EQ(b.dpdus[1].reception_window, 0);
}

TEST(NonArqSender, RepeatsAreRoundRobin)
{
    non_arq_sender s(sender_config(100, 2));
    auto b = s.make_dpdus(pattern(250), 1, false, 5, 0);
    ASSERT_EQ(b.dpdus.size(), 9u);
    const uint16_t expect[] = { 0, 100, 200, 0, 100, 200, 0, 100, 200 };
    for (size_t i = 0; i < 9; ++i) {
        EXPECT_EQ(b.dpdus[i].segment_offset, expect[i]) << i;
        EXPECT_EQ(b.dpdus[i].cpdu_id, b.cpdu_id);
    }
    EXPECT_EQ(b.dpdus[2], b.dpdus[5]);
    EXPECT_EQ(s.counters().dpdus, 9u);
}

TEST(NonArqSender, RepeatsCanBeChosenPerCpdu)
{
    non_arq_sender s(sender_config(100, 2));
    EXPECT_EQ(s.make_dpdus(pattern(250), 1, false, 5, 0, 0).dpdus.size(), 3u);
    EXPECT_EQ(s.make_dpdus(pattern(250), 1, false, 5, 0, 4).dpdus.size(), 15u);
    EXPECT_EQ(s.make_dpdus(pattern(250), 1, false, 5, 0).dpdus.size(), 9u); // config
    EXPECT_THROW(s.make_dpdus(pattern(250), 1, false, 5, 0, 16), std::invalid_argument);
}

TEST(NonArqSender, IdReuseInsideWindowIsReported)
{
    non_arq_sender s(sender_config(100));
    s.make_dpdus(bytes{ 1 }, 1, false, 100.0, 0.0); // ID 0 busy until t = 100
    EXPECT_TRUE(s.id_in_use(0, 50.0));
    EXPECT_FALSE(s.id_in_use(0, 100.0));
    EXPECT_DOUBLE_EQ(s.id_release_time(0), 100.0);
    EXPECT_FALSE(s.id_in_use(1, 0.0));
    for (unsigned i = 1; i < 4096; ++i)
        s.make_dpdus(bytes{ 1 }, 1, false, 0.0, 1.0);
    EXPECT_EQ(s.counters().ids_reused_early, 0u);
    s.make_dpdus(bytes{ 1 }, 1, false, 0.0, 2.0); // ID 0 again at t = 2 < 100
    EXPECT_EQ(s.counters().ids_reused_early, 1u);
}

TEST(NonArqSender, RejectsBadInput)
{
    EXPECT_THROW(non_arq_sender{ sender_config(0) }, std::invalid_argument);
    EXPECT_THROW(non_arq_sender{ sender_config(1024) }, std::invalid_argument);
    EXPECT_THROW(non_arq_sender{ sender_config(100, 16) }, std::invalid_argument);
    non_arq_config c = sender_config(100);
    c.window_margin = -1;
    EXPECT_THROW(non_arq_sender{ c }, std::invalid_argument);
    non_arq_sender s(sender_config(1023));
    EXPECT_THROW(s.make_dpdus(bytes{}, 1, false, 1, 0), encode_error);
    EXPECT_THROW(s.make_dpdus(bytes(65536), 1, false, 1, 0), encode_error);
    auto big = s.make_dpdus(bytes(65535, 3), 1, false, 1, 0);
    EXPECT_EQ(big.dpdus.size(), 65u);
    EXPECT_EQ(big.dpdus.back().segment_offset, 64 * 1023);
    EXPECT_EQ(big.dpdus.back().segment.size(), 65535u - 64 * 1023);
}

// ---------------------------------------------------------------------------- receiver

TEST(NonArqReceiver, OutOfOrderSegmentsComplete)
{
    non_arq_sender s(sender_config(1000));
    const bytes cpdu = pattern(2500, 9);
    auto d = from(42, s.make_dpdus(cpdu, 3, false, 30, 0));
    non_arq_receiver r;
    r.on_dpdu(d[2], true, 1.0);
    r.on_dpdu(d[0], true, 1.1);
    EXPECT_TRUE(r.take_delivered().empty());
    EXPECT_EQ(r.entries(), 1u);
    EXPECT_EQ(r.buffered_bytes(), 2500u);
    r.on_dpdu(d[1], true, 1.2);
    auto out = r.take_delivered();
    ASSERT_EQ(out.size(), 1u);
    EXPECT_TRUE(out[0].complete);
    EXPECT_EQ(out[0].data, cpdu);
    EXPECT_EQ(out[0].source, 42u);
    EXPECT_EQ(out[0].destination, 3u);
    EXPECT_EQ(out[0].cpdu_id, 0);
    EXPECT_FALSE(out[0].expedited);
    EXPECT_TRUE(out[0].errored.empty());
    EXPECT_TRUE(out[0].non_received.empty());
    EXPECT_EQ(r.entries(), 0u);
    EXPECT_EQ(r.buffered_bytes(), 0u);
    EXPECT_EQ(r.counters().cpdus_complete, 1u);
    EXPECT_EQ(r.counters().segments, 3u);
    EXPECT_TRUE(std::isinf(r.next_deadline()));
}

TEST(NonArqReceiver, MissingSegmentExpiresAndIsDiscarded)
{
    non_arq_sender s(sender_config(1000));
    auto d = from(1, s.make_dpdus(pattern(2500), 2, false, 10, 0));
    non_arq_receiver r; // error-free mode
    r.on_dpdu(d[0], true, 1.0);
    r.on_dpdu(d[2], true, 2.0);
    // Deadline follows the latest D_PDU: 2.0 + 10 s.
    EXPECT_DOUBLE_EQ(r.next_deadline(), 12.0);
    r.poll(11.9);
    EXPECT_EQ(r.entries(), 1u);
    EXPECT_EQ(r.counters().expired, 0u);
    r.poll(12.0);
    EXPECT_EQ(r.entries(), 0u);
    EXPECT_TRUE(r.take_delivered().empty());
    EXPECT_EQ(r.counters().expired, 1u);
    EXPECT_EQ(r.counters().discarded, 1u);
    EXPECT_EQ(r.counters().delivered_with_errors, 0u);
    EXPECT_EQ(r.buffered_bytes(), 0u);
    EXPECT_TRUE(std::isinf(r.next_deadline()));
}

TEST(NonArqReceiver, MinWindowFloorsTheDeadline)
{
    non_arq_receiver_config rc;
    rc.min_window = 5;
    non_arq_receiver r(rc);
    non_arq_sender s(sender_config(10));
    auto d = from(1, s.make_dpdus(pattern(20), 2, false, 0, 0));
    EXPECT_EQ(d[0].reception_window, 0);
    r.on_dpdu(d[0], true, 3.0);
    EXPECT_DOUBLE_EQ(r.next_deadline(), 8.0);
}

TEST(NonArqReceiver, DeliversWithErrorsAndExactBlockLists)
{
    // Five 500-byte segments: 0 good, 1 damaged, 2 damaged, 3 lost, 4 good; a damaged
    // copy of segment 0 after its good copy changes nothing; segment 4 first arrives
    // damaged then good, so it is not errored.
    non_arq_sender s(sender_config(500));
    const bytes cpdu = pattern(2500, 77);
    auto d = from(5, s.make_dpdus(cpdu, 9, false, 60, 0));
    ASSERT_EQ(d.size(), 5u);
    auto damage = [](dpdu x) {
        for (auto& b : x.segment)
            b ^= 0xFF;
        return x;
    };
    non_arq_receiver_config rc;
    rc.deliver_with_errors = true;
    non_arq_receiver r(rc);
    r.on_dpdu(d[0], true, 0.1);
    r.on_dpdu(damage(d[0]), false, 0.2);
    r.on_dpdu(damage(d[1]), false, 0.3);
    r.on_dpdu(damage(d[2]), false, 0.4);
    r.on_dpdu(damage(d[4]), false, 0.5);
    r.on_dpdu(d[4], true, 0.6);
    EXPECT_TRUE(r.take_delivered().empty());
    r.poll(60.5);
    EXPECT_TRUE(r.take_delivered().empty());
    r.poll(60.6);
    auto out = r.take_delivered();
    ASSERT_EQ(out.size(), 1u);
    const auto& o = out[0];
    EXPECT_FALSE(o.complete);
    ASSERT_EQ(o.data.size(), 2500u);
    EXPECT_EQ(o.errored, (std::vector<sis_block_range>{ blk(500, 1000) }));
    EXPECT_EQ(o.non_received, (std::vector<sis_block_range>{ blk(1500, 500) }));
    for (size_t i = 0; i < 2500; ++i) {
        uint8_t want = cpdu[i];
        if (i >= 500 && i < 1500)
            want = uint8_t(cpdu[i] ^ 0xFF); // kept as received
        else if (i >= 1500 && i < 2000)
            want = 0;
        ASSERT_EQ(o.data[i], want) << i;
    }
    EXPECT_EQ(r.counters().delivered_with_errors, 1u);
    EXPECT_EQ(r.counters().expired, 1u);
    EXPECT_EQ(r.counters().discarded, 0u);
    EXPECT_EQ(r.counters().damaged_segments, 4u);
    EXPECT_EQ(r.counters().good_segments, 2u);

    // A late copy of the expired C_PDU is a duplicate, not a new C_PDU.
    r.on_dpdu(d[3], true, 61.0);
    EXPECT_EQ(r.counters().duplicate_cpdus, 1u);
    EXPECT_EQ(r.entries(), 0u);
}

TEST(NonArqReceiver, OneRepeatSurvivesLosingOneCopyOfEachSegment)
{
    non_arq_sender s(sender_config(300, 1));
    const bytes cpdu = pattern(900, 3);
    auto d = from(8, s.make_dpdus(cpdu, 2, false, 20, 0));
    ASSERT_EQ(d.size(), 6u); // seg 0 1 2 0 1 2
    non_arq_receiver r;
    // Lose copy 1 of segment 0, copy 2 of segment 1, copy 1 of segment 2 (damaged).
    r.on_dpdu(d[1], true, 0.1);
    dpdu bad = d[2];
    bad.segment[5] ^= 1;
    r.on_dpdu(bad, false, 0.2);
    r.on_dpdu(d[3], true, 0.3);
    EXPECT_TRUE(r.take_delivered().empty());
    r.on_dpdu(d[5], true, 0.5);
    auto out = r.take_delivered();
    ASSERT_EQ(out.size(), 1u);
    EXPECT_TRUE(out[0].complete);
    EXPECT_EQ(out[0].data, cpdu);
}

TEST(NonArqReceiver, CopiesOfADeliveredCpduAreDeliveredOnce)
{
    non_arq_sender s(sender_config(200, 2));
    auto d = from(8, s.make_dpdus(pattern(400), 2, false, 4, 0));
    non_arq_receiver_config rc;
    rc.min_duplicate_hold = 0; // hold = the window only
    non_arq_receiver r(rc);
    double t = 0;
    for (const auto& x : d)
        r.on_dpdu(x, true, t += 0.1);
    EXPECT_EQ(r.take_delivered().size(), 1u);
    // Completed at the 2nd D_PDU (t = 0.2, deadline 4.2); 4 copies follow.
    EXPECT_EQ(r.counters().duplicate_cpdus, 4u);
    EXPECT_EQ(r.counters().cpdus_complete, 1u);
    r.on_dpdu(d[0], true, 4.1);
    EXPECT_EQ(r.counters().duplicate_cpdus, 5u);
    EXPECT_EQ(r.entries(), 0u);
    // Once the window is over the ID is free: the same ID is a new C_PDU.
    r.poll(4.3);
    r.on_dpdu(d[0], true, 4.4);
    EXPECT_EQ(r.entries(), 1u);
    r.on_dpdu(d[1], true, 4.5);
    EXPECT_EQ(r.take_delivered().size(), 1u);
    EXPECT_EQ(r.counters().cpdus_complete, 2u);

    // Default hold: 60 s after delivery even with a zero window.
    non_arq_receiver r2;
    non_arq_sender s2(sender_config(200));
    auto z = from(8, s2.make_dpdus(pattern(100), 2, false, 0, 0));
    r2.on_dpdu(z[0], true, 0);
    r2.poll(59);
    r2.on_dpdu(z[0], true, 59);
    EXPECT_EQ(r2.take_delivered().size(), 1u);
    EXPECT_EQ(r2.counters().duplicate_cpdus, 1u);
    r2.poll(60);
    r2.on_dpdu(z[0], true, 60);
    EXPECT_EQ(r2.take_delivered().size(), 1u);
}

TEST(NonArqReceiver, DuplicateGoodSegmentsAreCounted)
{
    non_arq_sender s(sender_config(100));
    auto d = from(1, s.make_dpdus(pattern(300), 2, false, 10, 0));
    non_arq_receiver r;
    r.on_dpdu(d[0], true, 0);
    r.on_dpdu(d[0], true, 0);
    r.on_dpdu(d[0], false, 0); // damaged copy of a good range: ignored
    EXPECT_EQ(r.counters().duplicate_segments, 1u);
    EXPECT_EQ(r.counters().damaged_segments, 1u);
    EXPECT_EQ(r.entries(), 1u);
}

TEST(NonArqReceiver, InconsistentSegmentsAreDroppedAndCounted)
{
    non_arq_sender s(sender_config(100));
    auto d = from(1, s.make_dpdus(pattern(250), 2, false, 10, 0));
    non_arq_receiver r;
    r.on_dpdu(d[0], true, 0);
    dpdu x = d[1];
    x.cpdu_size = 260; // disagrees with the entry
    r.on_dpdu(x, true, 0);
    x = d[2];
    x.segment_offset = 200;
    x.segment.resize(60); // 200 + 60 > 250
    r.on_dpdu(x, true, 0);
    x = d[1];
    x.cpdu_size = 0;
    r.on_dpdu(x, true, 0);
    x = d[1];
    x.segment.clear();
    r.on_dpdu(x, true, 0);
    x = d[1];
    x.segment_offset = 65535;
    x.cpdu_size = 65535;
    r.on_dpdu(x, true, 0);
    EXPECT_EQ(r.counters().inconsistent, 5u);
    EXPECT_EQ(r.entries(), 1u);
    dpdu other;
    other.type = dpdu_type::data_only;
    other.segment = bytes(10);
    r.on_dpdu(other, true, 0);
    EXPECT_EQ(r.counters().wrong_type, 1u);
    // The entry still completes from the consistent segments.
    r.on_dpdu(d[1], true, 0);
    r.on_dpdu(d[2], true, 0);
    auto out = r.take_delivered();
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(out[0].data, pattern(250));
}

TEST(NonArqReceiver, RegularAndExpeditedAndSourcesAreSeparate)
{
    non_arq_sender reg(sender_config(100));
    non_arq_sender exp(sender_config(100, 0, true));
    auto a = from(1, reg.make_dpdus(pattern(200, 1), 9, false, 10, 0));
    auto b = from(1, exp.make_dpdus(pattern(200, 2), 9, false, 10, 0));
    non_arq_sender other(sender_config(100));
    auto c = from(2, other.make_dpdus(pattern(200, 3), 9, false, 10, 0));
    ASSERT_EQ(a[0].cpdu_id, b[0].cpdu_id);
    ASSERT_EQ(a[0].cpdu_id, c[0].cpdu_id);
    non_arq_receiver r;
    r.on_dpdu(a[0], true, 0);
    r.on_dpdu(b[1], true, 0);
    r.on_dpdu(c[0], true, 0);
    EXPECT_EQ(r.entries(), 3u);
    r.on_dpdu(b[0], true, 0);
    r.on_dpdu(a[1], true, 0);
    r.on_dpdu(c[1], true, 0);
    auto out = r.take_delivered();
    ASSERT_EQ(out.size(), 3u);
    EXPECT_TRUE(out[0].expedited);
    EXPECT_EQ(out[0].data, pattern(200, 2));
    EXPECT_FALSE(out[1].expedited);
    EXPECT_EQ(out[1].data, pattern(200, 1));
    EXPECT_EQ(out[2].source, 2u);
    EXPECT_EQ(out[2].data, pattern(200, 3));
}

TEST(NonArqReceiver, MemoryCapEvictsOldest)
{
    non_arq_receiver_config rc;
    rc.max_entries = 2;
    rc.max_bytes = 1000;
    non_arq_receiver r(rc);
    non_arq_sender s(sender_config(100));
    auto c0 = from(1, s.make_dpdus(pattern(200, 0), 2, false, 100, 0));
    auto c1 = from(1, s.make_dpdus(pattern(200, 1), 2, false, 100, 0));
    auto c2 = from(1, s.make_dpdus(pattern(200, 2), 2, false, 100, 0));
    auto c3 = from(1, s.make_dpdus(pattern(700, 3), 2, false, 100, 0));
    r.on_dpdu(c0[0], true, 1);
    r.on_dpdu(c1[0], true, 2);
    r.on_dpdu(c2[0], true, 3); // 3 entries > 2: c0 goes
    EXPECT_EQ(r.entries(), 2u);
    EXPECT_EQ(r.counters().evicted, 1u);
    EXPECT_EQ(r.buffered_bytes(), 400u);
    r.on_dpdu(c1[1], true, 4); // c1 still there
    auto out = r.take_delivered();
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(out[0].data, pattern(200, 1));
    r.on_dpdu(c3[0], true, 5); // 200 + 700 bytes fit
    EXPECT_EQ(r.counters().evicted, 1u);
    r.on_dpdu(c0[1], true, 6); // 2 entries max: c2 (oldest) goes
    EXPECT_EQ(r.counters().evicted, 2u);
    EXPECT_EQ(r.entries(), 2u);
    EXPECT_EQ(r.buffered_bytes(), 900u);
    // Bytes cap: a 1001-byte C_PDU can never fit.
    dpdu big = c3[0];
    big.cpdu_id = 99;
    big.cpdu_size = 1001;
    r.on_dpdu(big, true, 7);
    EXPECT_EQ(r.counters().oversize, 1u);
    EXPECT_EQ(r.entries(), 2u);
    // 0 + 700 + another 700 > 1000 bytes: the oldest (c3) goes, then it fits.
    dpdu other = c3[0];
    other.cpdu_id = 100;
    r.on_dpdu(other, true, 8);
    EXPECT_EQ(r.counters().evicted, 3u);
    EXPECT_LE(r.buffered_bytes(), 1000u);
    EXPECT_LE(r.entries(), 2u);
}

TEST(NonArqReceiver, InOrderHoldsUntilEarlierCompletes)
{
    non_arq_sender s(sender_config(100));
    auto a = from(1, s.make_dpdus(pattern(200, 1), 2, true, 10, 0));  // ID 0
    auto b = from(1, s.make_dpdus(pattern(100, 2), 2, true, 10, 0));  // ID 1
    auto c = from(1, s.make_dpdus(pattern(100, 3), 2, false, 10, 0)); // ID 2, as-arrived
    non_arq_receiver r;
    r.on_dpdu(a[0], true, 0);
    r.on_dpdu(b[0], true, 0.1); // complete, held behind ID 0
    r.on_dpdu(c[0], true, 0.2); // not in order: delivered at once
    auto out = r.take_delivered();
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(out[0].cpdu_id, 2);
    EXPECT_EQ(r.counters().held_in_order, 1u);
    // A held C_PDU has no deadline of its own.
    EXPECT_DOUBLE_EQ(r.next_deadline(), 10.0);
    r.on_dpdu(a[1], true, 0.3);
    out = r.take_delivered();
    ASSERT_EQ(out.size(), 2u);
    EXPECT_EQ(out[0].cpdu_id, 0);
    EXPECT_EQ(out[1].cpdu_id, 1);
    EXPECT_EQ(out[1].data, pattern(100, 2));
}

TEST(NonArqReceiver, InOrderNeverWaitsBeyondTheEarlierWindow)
{
    for (bool with_errors : { false, true }) {
        non_arq_sender s(sender_config(100));
        auto a = from(1, s.make_dpdus(pattern(200, 1), 2, true, 10, 0));  // ID 0
        auto b = from(1, s.make_dpdus(pattern(100, 2), 2, true, 100, 0)); // ID 1
        non_arq_receiver_config rc;
        rc.deliver_with_errors = with_errors;
        non_arq_receiver r(rc);
        r.on_dpdu(a[0], true, 0);
        r.on_dpdu(b[0], true, 1);
        EXPECT_TRUE(r.take_delivered().empty());
        r.poll(9.9);
        EXPECT_TRUE(r.take_delivered().empty());
        r.poll(10.0);
        auto out = r.take_delivered();
        ASSERT_EQ(out.size(), with_errors ? 2u : 1u);
        if (with_errors) {
            EXPECT_EQ(out[0].cpdu_id, 0);
            EXPECT_FALSE(out[0].complete);
            EXPECT_EQ(out[0].non_received,
                      (std::vector<sis_block_range>{ blk(100, 100) }));
        }
        EXPECT_EQ(out.back().cpdu_id, 1);
        EXPECT_TRUE(out.back().complete);
        EXPECT_EQ(r.entries(), 0u);
    }
}

TEST(NonArqReceiver, InOrderAcrossTheIdWrap)
{
    non_arq_sender s(sender_config(100));
    for (int i = 0; i < 4094; ++i)
        s.make_dpdus(bytes{ 1 }, 2, false, 0, 0);
    auto a = from(1, s.make_dpdus(pattern(200, 1), 2, true, 10, 0)); // 4094
    auto b = from(1, s.make_dpdus(pattern(100, 2), 2, true, 10, 0)); // 4095
    auto c = from(1, s.make_dpdus(pattern(100, 3), 2, true, 10, 0)); // 0
    ASSERT_EQ(c[0].cpdu_id, 0);
    non_arq_receiver r;
    r.on_dpdu(a[0], true, 0);
    r.on_dpdu(c[0], true, 0.1); // held behind 4094
    r.on_dpdu(b[0], true, 0.2); // held behind 4094
    EXPECT_TRUE(r.take_delivered().empty());
    r.on_dpdu(a[1], true, 0.3);
    auto out = r.take_delivered();
    ASSERT_EQ(out.size(), 3u);
    EXPECT_EQ(out[0].cpdu_id, 4094);
    EXPECT_EQ(out[1].cpdu_id, 4095);
    EXPECT_EQ(out[2].cpdu_id, 0);
}

TEST(NonArqReceiver, EvictionReleasesHeldCpdus)
{
    non_arq_receiver_config rc;
    rc.max_entries = 2;
    non_arq_receiver r(rc);
    non_arq_sender s(sender_config(100));
    auto a = from(1, s.make_dpdus(pattern(200, 1), 2, true, 10, 0)); // ID 0
    auto b = from(1, s.make_dpdus(pattern(100, 2), 2, true, 10, 0)); // ID 1
    auto c = from(3, s.make_dpdus(pattern(200, 3), 2, false, 10, 0));
    r.on_dpdu(a[0], true, 0);
    r.on_dpdu(b[0], true, 1); // held
    r.on_dpdu(c[0], true, 2); // 3 entries: evicts ID 0, which releases ID 1
    auto out = r.take_delivered();
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(out[0].cpdu_id, 1);
    EXPECT_EQ(r.counters().evicted, 1u);
    EXPECT_EQ(r.entries(), 1u);
}

TEST(NonArqReceiver, ByteCapDropsTheNewEntryWhenOnlyHeldOnesRemain)
{
    non_arq_receiver_config rc;
    rc.max_bytes = 1000;
    non_arq_receiver r(rc);
    auto seg = [](uint16_t id, uint16_t size, uint16_t len) {
        dpdu d;
        d.type = dpdu_type::non_arq_data;
        d.source = 1;
        d.cpdu_id = id;
        d.deliver_in_order = true;
        d.cpdu_size = size;
        d.reception_window = 100;
        d.segment = bytes(len, uint8_t(id));
        return d;
    };
    r.on_dpdu(seg(4, 200, 100), true, 0); // incomplete
    r.on_dpdu(seg(5, 700, 700), true, 1); // complete, held behind 4
    EXPECT_EQ(r.buffered_bytes(), 900u);
    EXPECT_TRUE(r.take_delivered().empty());
    // ID 3 (500 bytes) would need 1400: evicting 4 leaves 1200 with 5 now held behind
    // 3, so 3 itself is dropped and 5 is released.
    r.on_dpdu(seg(3, 500, 100), true, 2);
    auto out = r.take_delivered();
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(out[0].cpdu_id, 5);
    EXPECT_EQ(r.counters().evicted, 2u);
    EXPECT_EQ(r.entries(), 0u);
    EXPECT_EQ(r.buffered_bytes(), 0u);
}

TEST(NonArqReceiver, GarbageStaysWithinTheCaps)
{
    non_arq_receiver_config rc;
    rc.max_entries = 16;
    rc.max_bytes = 20000;
    rc.max_recent = 64;
    rc.deliver_with_errors = true;
    non_arq_receiver r(rc);
    std::mt19937 rng(7);
    double now = 0;
    size_t delivered = 0;
    for (int i = 0; i < 50000; ++i) {
        dpdu d;
        d.type = rng() % 2 ? dpdu_type::non_arq_data : dpdu_type::expedited_non_arq_data;
        d.source = rng() % 4;
        d.cpdu_id = uint16_t(rng() % 64);
        d.deliver_in_order = rng() % 2;
        d.reception_window = uint16_t(rng() % 40);
        if (rng() % 4) { // plausible: small C_PDU, segment inside it
            d.cpdu_size = uint16_t(1 + rng() % 100);
            d.segment_offset = uint16_t(rng() % d.cpdu_size);
            d.segment.assign(1 + rng() % (d.cpdu_size - d.segment_offset), uint8_t(i));
        } else { // anything
            d.cpdu_size = uint16_t(rng() % 2 ? rng() % 3000 : rng());
            d.segment_offset = uint16_t(rng() % 2 ? rng() % 3000 : rng());
            d.segment.assign(rng() % 1024, uint8_t(i));
        }
        r.on_dpdu(d, rng() % 4 != 0, now);
        ASSERT_LE(r.entries(), rc.max_entries);
        ASSERT_LE(r.buffered_bytes(), rc.max_bytes);
        now += 0.05;
        if (i % 10 == 0)
            r.poll(now);
        for (const auto& o : r.take_delivered()) {
            ++delivered;
            size_t covered = 0;
            for (const auto& b : o.errored)
                covered += b.size;
            for (const auto& b : o.non_received)
                covered += b.size;
            ASSERT_EQ(o.complete, covered == 0);
            ASSERT_LE(covered, o.data.size());
        }
    }
    EXPECT_GT(delivered, 100u);
    EXPECT_GT(r.counters().inconsistent, 1000u);
    EXPECT_GT(r.counters().evicted, 0u);
    EXPECT_GT(r.counters().held_in_order, 0u);
    EXPECT_GT(r.counters().duplicate_cpdus, 0u);
}

// ---------------------------------------------------------------------------- property

namespace {

bool all_good_bytes(const std::vector<uint8_t>& t)
{
    return std::all_of(t.begin(), t.end(), [](uint8_t s) { return s == 2; });
}

struct channel_result {
    size_t complete = 0, with_errors = 0, discarded = 0;
};

// 1000 random C_PDUs through encode -> lossy channel -> decode_dpdu -> receiver.
// Ground truth per byte: good if some copy covering it arrived with a good CRC, else
// errored if a damaged copy arrived, else missing.
channel_result run_channel(unsigned repeats, bool with_errors, uint32_t seed)
{
    channel_result res;
    std::mt19937 rng(seed);
    std::uniform_real_distribution<double> u(0, 1);
    std::uniform_int_distribution<size_t> size_dist(1, 3000);

    non_arq_config sc =
        sender_config(std::uniform_int_distribution<size_t>(200, 1023)(rng), repeats);
    non_arq_sender sender(sc);
    non_arq_receiver_config rc;
    rc.deliver_with_errors = with_errors;
    non_arq_receiver r(rc);

    const double dpdu_time = 0.25;
    double now = 0;
    std::map<uint16_t, bytes> sent;
    std::map<uint16_t, std::vector<uint8_t>> truth; // 0 missing, 1 errored, 2 good
    std::map<uint16_t, bool> in_order;
    std::vector<non_arq_delivery> delivered;

    for (int n = 0; n < 1000; ++n) {
        bytes cpdu(size_dist(rng));
        for (auto& b : cpdu)
            b = uint8_t(rng());
        const bool dio = u(rng) < 0.5;
        const size_t ndpdu =
            ((cpdu.size() + sc.segment_size - 1) / sc.segment_size) * (repeats + 1);
        auto batch =
            sender.make_dpdus(cpdu, 0x10000005, dio, ndpdu * dpdu_time + 1.0, now);
        sent[batch.cpdu_id] = cpdu;
        in_order[batch.cpdu_id] = dio;
        auto& t = truth[batch.cpdu_id];
        t.assign(cpdu.size(), 0);
        for (auto& d : batch.dpdus) {
            d.source = 0x0A0B0C;
            non_arq_sender::refresh_window(d, batch.expires_at, now);
            bytes wire = encode(d);
            const double x = u(rng);
            now += dpdu_time;
            if (x < 0.1) {
                r.poll(now);
                continue; // lost
            }
            const bool damage = x < 0.15;
            if (damage) // flip one segment byte: header CRC stays good
                wire[wire.size() - 5 - (rng() % d.segment.size())] ^=
                    uint8_t(1 + rng() % 255);
            auto dec = decode_dpdu(wire.data(), wire.size());
            if (damage)
                EXPECT_EQ(dec.error, decode_error::segment_crc);
            else
                EXPECT_TRUE(dec.ok()) << dec.reason;
            EXPECT_EQ(dec.value.cpdu_id, batch.cpdu_id);
            for (size_t i = 0; i < d.segment.size(); ++i) {
                uint8_t& s = t[d.segment_offset + i];
                s = std::max<uint8_t>(s, damage ? 1 : 2);
            }
            r.on_dpdu(dec.value, !damage, now);
            r.poll(now);
            for (auto& o : r.take_delivered())
                delivered.push_back(std::move(o));
        }
    }
    r.poll(std::numeric_limits<double>::infinity());
    for (auto& o : r.take_delivered())
        delivered.push_back(std::move(o));
    EXPECT_EQ(r.entries(), 0u);
    EXPECT_EQ(r.buffered_bytes(), 0u);

    std::set<uint16_t> seen;
    int last_in_order = -1;
    for (const auto& o : delivered) {
        EXPECT_TRUE(seen.insert(o.cpdu_id).second) << "duplicate " << o.cpdu_id;
        EXPECT_EQ(o.source, 0x0A0B0Cu);
        EXPECT_EQ(o.destination, 0x10000005u);
        EXPECT_EQ(o.deliver_in_order, in_order[o.cpdu_id]);
        const bytes& want = sent[o.cpdu_id];
        const auto& t = truth[o.cpdu_id];
        const bool all_good = all_good_bytes(t);
        if (o.complete) {
            EXPECT_TRUE(all_good) << o.cpdu_id;
            EXPECT_EQ(o.data, want) << o.cpdu_id;
            ++res.complete;
            // Complete in-order C_PDUs come out in ascending ID (no wrap in 1000).
            if (o.deliver_in_order) {
                EXPECT_GT(int(o.cpdu_id), last_in_order);
                last_in_order = o.cpdu_id;
            }
        } else {
            EXPECT_TRUE(with_errors);
            EXPECT_FALSE(all_good);
            ++res.with_errors;
            // Block lists are exactly the runs of the ground truth.
            std::vector<sis_block_range> err, miss;
            for (size_t i = 0; i < t.size();) {
                size_t j = i;
                while (j < t.size() && t[j] == t[i])
                    ++j;
                if (t[i] == 1)
                    err.push_back(blk(uint16_t(i), uint16_t(j - i)));
                if (t[i] == 0)
                    miss.push_back(blk(uint16_t(i), uint16_t(j - i)));
                i = j;
            }
            EXPECT_EQ(o.errored, err) << o.cpdu_id;
            EXPECT_EQ(o.non_received, miss) << o.cpdu_id;
            EXPECT_EQ(o.data.size(), want.size());
            size_t wrong = 0;
            for (size_t i = 0; i < t.size() && i < o.data.size(); ++i) {
                if ((t[i] == 2 && o.data[i] != want[i]) || (t[i] == 0 && o.data[i] != 0))
                    ++wrong;
            }
            EXPECT_EQ(wrong, 0u) << o.cpdu_id;
        }
    }
    // Every C_PDU whose every byte survived in a good copy was delivered complete;
    // with errors, every C_PDU of which anything arrived was delivered.
    for (const auto& kv : truth) {
        const auto& t = kv.second;
        const bool all_good = all_good_bytes(t);
        const bool any =
            std::any_of(t.begin(), t.end(), [](uint8_t s) { return s != 0; });
        if (all_good || (with_errors && any))
            EXPECT_TRUE(seen.count(kv.first)) << "missing " << kv.first;
        else
            EXPECT_FALSE(seen.count(kv.first)) << "unexpected " << kv.first;
        if (!all_good && any && !with_errors)
            ++res.discarded;
    }
    EXPECT_EQ(r.counters().cpdus_complete, res.complete);
    EXPECT_EQ(r.counters().delivered_with_errors, res.with_errors);
    EXPECT_EQ(r.counters().discarded, res.discarded);
    EXPECT_EQ(r.counters().evicted, 0u);
    return res;
}

} // namespace

TEST(NonArqProperty, LossyChannelNoRepeats)
{
    auto a = run_channel(0, false, 1234);
    auto b = run_channel(0, true, 1234);
    EXPECT_GT(a.complete, 300u);
    EXPECT_GT(a.discarded, 100u);
    EXPECT_EQ(a.complete, b.complete); // same seed, same channel
    EXPECT_EQ(b.with_errors, a.discarded);
}

TEST(NonArqProperty, LossyChannelTwoRepeats)
{
    auto a = run_channel(2, false, 99);
    auto b = run_channel(2, true, 99);
    EXPECT_GT(a.complete, 950u); // three copies: losing all of one is rare
    EXPECT_EQ(a.complete, b.complete);
    EXPECT_EQ(b.with_errors, a.discarded);
}
