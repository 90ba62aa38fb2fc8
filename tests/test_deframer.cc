/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "dl/deframer.h"

#include <gtest/gtest.h>

#include <random>
#include <set>

using namespace gr::hfstack::dl;

namespace {

dpdu data_frame(uint8_t seq, size_t size, std::mt19937& rng)
{
    dpdu d;
    d.type = dpdu_type::data_only;
    d.address_size = 2;
    d.destination = 1;
    d.source = 2;
    d.tx_sequence = seq;
    d.segment.resize(size);
    for (auto& b : d.segment)
        b = uint8_t(rng());
    return d;
}

// Invariant of the deframer's bookkeeping: every byte is in a D_PDU, junk or the buffer.
void expect_accounted(const dpdu_deframer& f)
{
    const auto& c = f.counters();
    EXPECT_EQ(c.bytes_in, c.dpdu_bytes + c.junk_bytes + f.buffered());
}

} // namespace

TEST(Deframer, CleanStreamInAnyChunking)
{
    std::mt19937 rng(1);
    std::vector<dpdu> sent;
    bytes stream;
    for (int i = 0; i < 300; ++i) {
        sent.push_back(data_frame(uint8_t(i), rng() % 1024, rng));
        encode_into(sent.back(), stream);
    }
    for (size_t chunk :
         { size_t(1), size_t(2), size_t(7), size_t(1000), stream.size() }) {
        dpdu_deframer f;
        std::vector<received_dpdu> got;
        for (size_t at = 0; at < stream.size(); at += chunk)
            f.push(stream.data() + at, std::min(chunk, stream.size() - at), got);
        ASSERT_EQ(got.size(), sent.size()) << chunk;
        for (size_t i = 0; i < sent.size(); ++i) {
            EXPECT_TRUE(got[i].segment_ok);
            EXPECT_EQ(got[i].frame, sent[i]);
        }
        EXPECT_EQ(f.counters().junk_bytes, 0u);
        EXPECT_EQ(f.buffered(), 0u);
        expect_accounted(f);
    }
}

TEST(Deframer, SkipsJunkBetweenFramesAndReportsOffsets)
{
    std::mt19937 rng(2);
    bytes stream = { 0x00, 0x90, 0x90, 0xEB, 0x12 }; // includes a false sync
    const size_t first = stream.size();
    auto a = data_frame(1, 40, rng);
    encode_into(a, stream);
    const size_t junk_at = stream.size();
    for (int i = 0; i < 500; ++i)
        stream.push_back(uint8_t(rng() % 0x90)); // junk without 0x90
    const size_t second = stream.size();
    auto b = data_frame(2, 0, rng);
    encode_into(b, stream);

    dpdu_deframer f;
    auto got = f.push(stream.data(), stream.size());
    ASSERT_EQ(got.size(), 2u);
    EXPECT_EQ(got[0].frame, a);
    EXPECT_EQ(got[0].stream_offset, first);
    EXPECT_EQ(got[1].frame, b);
    EXPECT_EQ(got[1].stream_offset, second);
    EXPECT_EQ(f.counters().junk_bytes, first + (second - junk_at));
    expect_accounted(f);
}

TEST(Deframer, DamagedSegmentIsDeliveredFlagged)
{
    std::mt19937 rng(3);
    auto a = data_frame(9, 100, rng);
    bytes w = encode(a);
    w[w.size() - 50] ^= 0x08;
    dpdu_deframer f;
    auto got = f.push(w.data(), w.size());
    ASSERT_EQ(got.size(), 1u);
    EXPECT_FALSE(got[0].segment_ok);
    EXPECT_EQ(got[0].frame.tx_sequence, 9);
    EXPECT_EQ(f.counters().damaged_segments, 1u);
    expect_accounted(f);
}

TEST(Deframer, HeaderErrorResynchronisesOnNextFrame)
{
    std::mt19937 rng(4);
    auto a = data_frame(1, 30, rng), b = data_frame(2, 30, rng);
    bytes w = encode(a);
    w[4] ^= 0x01; // corrupt EOT: header CRC fails
    encode_into(b, w);
    dpdu_deframer f;
    auto got = f.push(w.data(), w.size());
    ASSERT_EQ(got.size(), 1u);
    EXPECT_EQ(got[0].frame, b);
    EXPECT_EQ(f.counters().header_crc_errors, 1u);
    expect_accounted(f);
}

TEST(Deframer, TruncatedFrameAtEndOfBurstIsCounted)
{
    std::mt19937 rng(5);
    bytes w = encode(data_frame(1, 300, rng));
    w.resize(w.size() - 10);
    dpdu_deframer f;
    EXPECT_TRUE(f.push(w.data(), w.size()).empty());
    EXPECT_EQ(f.buffered(), w.size());
    f.end_of_burst();
    EXPECT_EQ(f.counters().truncated, 1u);
    EXPECT_EQ(f.buffered(), 0u);
    expect_accounted(f);
    // The next burst starts clean.
    bytes next = encode(data_frame(2, 5, rng));
    EXPECT_EQ(f.push(next.data(), next.size()).size(), 1u);
}

// Property: under random bit errors every frame is either recovered intact, flagged
// damaged with a trustworthy header, or lost; nothing invented, nothing crashes, and
// the byte accounting balances.
TEST(Deframer, BitErrorsNeverInventFrames)
{
    std::mt19937 rng(6);
    std::vector<dpdu> sent;
    bytes stream;
    for (int i = 0; i < 2000; ++i) {
        sent.push_back(data_frame(uint8_t(i), 1 + rng() % 200, rng));
        encode_into(sent.back(), stream);
    }
    const double ber = 1e-4;
    std::bernoulli_distribution flip(ber);
    size_t flips = 0;
    for (auto& byte : stream)
        for (int bit = 0; bit < 8; ++bit)
            if (flip(rng)) {
                byte ^= uint8_t(1 << bit);
                ++flips;
            }
    ASSERT_GT(flips, 100u);

    dpdu_deframer f;
    std::vector<received_dpdu> got;
    for (size_t at = 0; at < stream.size(); at += 997)
        f.push(stream.data() + at, std::min<size_t>(997, stream.size() - at), got);
    f.end_of_burst();
    std::set<bytes> originals;
    std::set<std::pair<uint8_t, size_t>> headers;
    for (const auto& d : sent) {
        originals.insert(encode(d));
        headers.insert({ d.tx_sequence, d.segment.size() });
    }
    size_t intact = 0, damaged = 0;
    for (const auto& r : got) {
        if (r.segment_ok) {
            ++intact;
            EXPECT_TRUE(originals.count(encode(r.frame))) << r.stream_offset;
        } else {
            ++damaged;
            EXPECT_TRUE(headers.count({ r.frame.tx_sequence, r.frame.segment.size() }));
        }
    }
    EXPECT_LE(got.size(), sent.size());
    EXPECT_GT(intact, sent.size() * 9 / 10);
    EXPECT_GT(damaged, 0u);
    EXPECT_EQ(f.counters().damaged_segments, damaged);
    expect_accounted(f);
}

TEST(Deframer, RandomGarbageIsBoundedAndHarmless)
{
    std::mt19937 rng(7);
    dpdu_deframer f;
    bytes junk(1 << 20);
    for (auto& b : junk)
        b = uint8_t(rng());
    // Sprinkle syncs so the header path is exercised.
    for (size_t i = 0; i + 1 < junk.size(); i += 101) {
        junk[i] = 0x90;
        junk[i + 1] = 0xEB;
    }
    std::vector<received_dpdu> got;
    for (size_t at = 0; at < junk.size(); at += 4096) {
        f.push(junk.data() + at, 4096, got);
        ASSERT_LE(f.buffered(), max_dpdu_size);
    }
    expect_accounted(f);
    EXPECT_GT(f.counters().invalid_headers + f.counters().header_crc_errors, 1000u);
}
