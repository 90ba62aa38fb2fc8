/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

/* The node's journal (dl/node_journal.h): an ARQ receiver's state round-trips through
 * state()/restore() and through the journal's records; a journal cut short at any byte
 * gives the state as of its last whole record; deliveries stay owed until reported
 * written, and a restarted engine hands each owed one, once, to the client that binds
 * its SAP; a corrupt, foreign or garbage journal is a journal_error naming what is
 * wrong, never a crash. */
#include "dl/node_journal.h"
#include "node_test_support.h"

#include <gtest/gtest.h>

#include <memory>
#include <random>
#include <set>

using namespace gr::hfstack;
using namespace gr::hfstack::dl;

namespace {

// Data D_PDU with FSN `fsn` of a C_PDU's segment.
dpdu frame(uint16_t fsn, bool start, bool end, uint8_t fill, bool in_order = true)
{
    dpdu d;
    d.type = dpdu_type::data_only;
    d.destination = 2;
    d.source = 1;
    d.tx_sequence = fsn;
    d.cpdu_start = start;
    d.cpdu_end = end;
    d.deliver_in_order = in_order;
    d.segment = bytes(100, fill);
    return d;
}

// Frames of C_PDUs 0..: C_PDU k is segments 3k, 3k+1, 3k+2 (bytes k).
std::vector<dpdu> frames(size_t cpdus)
{
    std::vector<dpdu> out;
    for (size_t k = 0; k < cpdus; ++k)
        for (size_t j = 0; j < 3; ++j)
            out.push_back(frame(uint16_t(3 * k + j), j == 0, j == 2, uint8_t(k)));
    return out;
}

bool same(const arq_receiver_state& x, const arq_receiver_state& y)
{
    if (x.rx_lwe != y.rx_lwe || x.rx_uwe != y.rx_uwe || x.long_fsn != y.long_fsn ||
        x.cpdu_id != y.cpdu_id || x.open_active != y.open_active ||
        x.open_drop != y.open_drop || x.open_data != y.open_data ||
        x.segments.size() != y.segments.size())
        return false;
    for (size_t i = 0; i < x.segments.size(); ++i) {
        const auto &a = x.segments[i], &b = y.segments[i];
        if (a.fsn != b.fsn || a.start != b.start || a.end != b.end ||
            a.in_order != b.in_order || a.drop != b.drop || a.consumed != b.consumed ||
            a.data != b.data)
            return false;
    }
    return true;
}

} // namespace

// A receiver with a gap, a C_PDU half reassembled below RX LWE and segments beyond the
// gap: restored into a fresh receiver it acks the same and delivers the same, once.
TEST(NodeJournal, ReceiverStateRoundTripsAndGoesOnWhereItStopped)
{
    const auto f = frames(6);
    arq_receiver a;
    for (size_t i = 0; i < 10; ++i) // C_PDUs 0-2 whole, the first segment of 3
        a.on_data(f[i], true);
    for (size_t i = 12; i < 15; ++i) // C_PDU 4, beyond the gap at FSN 10, 11
        a.on_data(f[i], true);
    EXPECT_EQ(a.take_delivered().size(), 3u);
    arq_receiver b;
    b.restore(a.state());
    EXPECT_TRUE(same(b.state(), a.state()));
    EXPECT_EQ(b.ack(), a.ack());
    for (size_t i = 10; i < 18; ++i)
        b.on_data(f[i], true);
    const auto rest = b.take_delivered();
    ASSERT_EQ(rest.size(), 3u); // C_PDUs 3, 4, 5, each once
    for (size_t k = 0; k < 3; ++k)
        EXPECT_EQ(rest[k], bytes(300, uint8_t(3 + k)));

    // A state that cannot be this receiver's is refused.
    auto bad = a.state();
    bad.segments.back().fsn = uint16_t(bad.rx_lwe + 200);
    arq_receiver c;
    EXPECT_THROW(c.restore(bad), std::invalid_argument);
    EXPECT_THROW(arq_receiver(true).restore(a.state()), std::invalid_argument);
}

// State and frame records replay to the receiver the node had; cut at any byte, the
// journal replays to the state as of its last whole record (a crash mid-write).
TEST(NodeJournal, RecordsReplayAndATornTailIsDropped)
{
    const auto f = frames(5);
    arq_receiver live;
    bytes journal = journal_header(2);
    std::vector<std::pair<size_t, arq_receiver_state>> after; // journal size -> state
    live.reset(0);
    auto rec = journal_state_record(1, live.state());
    journal.insert(journal.end(), rec.begin(), rec.end());
    after.push_back({ journal.size(), live.state() });
    for (size_t i = 0; i < f.size(); ++i) {
        if (i == 4)
            continue; // a gap: C_PDU 1 waits
        live.on_data(f[i], true);
        rec = journal_frame_record(1, f[i], true);
        journal.insert(journal.end(), rec.begin(), rec.end());
        after.push_back({ journal.size(), live.state() });
    }
    const auto whole = replay_journal(journal, 2);
    ASSERT_EQ(whole.peers.count(1), 1u);
    EXPECT_TRUE(same(whole.peers.at(1).regular, live.state()));
    EXPECT_EQ(whole.records, after.size());
    EXPECT_EQ(whole.dropped_tail_bytes, 0u);
    for (size_t cut = journal_header_size; cut < journal.size(); ++cut) {
        const auto r = replay_journal(journal.data(), cut, 2);
        size_t k = 0;
        while (k < after.size() && after[k].first <= cut)
            ++k;
        if (k == 0) {
            EXPECT_TRUE(r.peers.empty()) << cut;
            continue;
        }
        ASSERT_EQ(r.peers.count(1), 1u) << cut;
        EXPECT_TRUE(same(r.peers.at(1).regular, after[k - 1].second)) << cut;
        EXPECT_EQ(r.dropped_tail_bytes, cut - after[k - 1].first) << cut;
    }
}

// The journal file as the node block keeps it: appended, or replaced by a rewrite.
struct journal_file {
    bytes content;
    node_actions take(node_engine& e)
    {
        auto a = e.take_actions();
        if (a.journal_rewrite)
            content = a.journal;
        else
            content.insert(content.end(), a.journal.begin(), a.journal.end());
        return a;
    }
};

std::vector<client_message> indications(const node_actions& a)
{
    std::vector<client_message> out;
    for (const auto& m : a.to_clients)
        if (m.primitive.type == sis_type::unidata_indication)
            out.push_back(m);
    return out;
}

// Delivery records stay unsettled until their settled record; a settled record for a
// number compacted away is no error; a cut at any byte keeps the whole records before.
TEST(NodeJournal, DeliveriesStayUnsettledUntilWritten)
{
    sis_primitive ind = arq_indication({});
    bytes journal = journal_header(2);
    std::vector<std::pair<size_t, std::set<uint64_t>>> after;
    std::set<uint64_t> open;
    const auto add = [&](const bytes& r) {
        journal.insert(journal.end(), r.begin(), r.end());
        after.push_back({ journal.size(), open });
    };
    for (uint64_t k = 1; k <= 4; ++k) {
        ind.payload = bytes(10 + k, uint8_t(k));
        open.insert(k);
        add(journal_delivery_record(k, encode(ind)));
    }
    open.erase(2);
    add(journal_settled_record(2, true));
    open.erase(4);
    add(journal_settled_record(4, false));
    add(journal_settled_record(77, true)); // settled before a rewrite dropped it
    const auto r = replay_journal(journal, 2);
    EXPECT_EQ(r.last_delivery, 4u);
    ASSERT_EQ(r.unsettled.size(), 2u);
    for (uint64_t k : { 1u, 3u }) {
        const auto p = decode_sis(r.unsettled.at(k));
        ASSERT_TRUE(p);
        EXPECT_EQ(p.value.payload, bytes(10 + k, uint8_t(k)));
        EXPECT_EQ(p.value.destination_sap, 3);
    }
    for (size_t cut = journal_header_size; cut < journal.size(); ++cut) {
        const auto c = replay_journal(journal.data(), cut, 2);
        std::set<uint64_t> want;
        for (const auto& [size, set] : after)
            if (size <= cut)
                want = set;
        std::set<uint64_t> got;
        for (const auto& [k, b] : c.unsettled)
            got.insert(k);
        EXPECT_EQ(got, want) << cut;
    }
    bytes bad = journal_header(2);
    const auto zero = journal_delivery_record(0, encode(ind));
    bad.insert(bad.end(), zero.begin(), zero.end());
    EXPECT_THROW(replay_journal(bad, 2), journal_error);
    bad = journal_header(2);
    const auto garbage = journal_delivery_record(5, bytes{ 1, 2, 3 });
    bad.insert(bad.end(), garbage.begin(), garbage.end());
    EXPECT_THROW(replay_journal(bad, 2), journal_error);
}

// Three C_PDUs delivered to a client that reports its writes; only the first reported
// written before the process ends. The restarted engine owes the other two and hands
// them, once, in order, with their numbers, to the client that binds the SAP; written,
// they are owed no more. A client that does not report writes gets unnumbered
// deliveries and the journal holds none for it.
TEST(NodeJournal, DeliveriesNotWrittenBeforeARestartGoOnceToTheNextBinder)
{
    node_config c2 = node_at(2);
    c2.state_dir = "journal"; // the engine never touches the file
    double now = 0;
    node_engine n1(node_at(1));
    auto n2 = std::make_unique<node_engine>(c2);
    journal_file file;
    n2->on_client_connected(7, now, true);
    const auto burst =
        first_data_burst(n1, *n2, now, [&](node_engine& e) { return file.take(e); });
    n2->on_burst(burst.burst, burst_info{}, now + burst.air_time_s);
    const auto first = indications(file.take(*n2));
    ASSERT_EQ(first.size(), 3u);
    for (uint64_t k = 0; k < 3; ++k) {
        EXPECT_EQ(first[k].delivery, k + 1);
        EXPECT_EQ(first[k].primitive.payload, bytes(600, uint8_t(k + 1)));
    }
    n2->on_delivery_settled(1, true, now);
    n2->on_delivery_settled(1, true, now); // a repeat changes nothing
    file.take(*n2);

    n2 = std::make_unique<node_engine>(c2); // kill -9, restart
    n2->restore_journal(file.content, now);
    EXPECT_EQ(n2->counters().deliveries_owed, 2u);
    file.take(*n2);
    n2->on_client_connected(9, now, true);
    n2->on_sis(9, bind_request(3), now);
    const auto again = indications(file.take(*n2));
    ASSERT_EQ(again.size(), 2u);
    for (uint64_t k = 0; k < 2; ++k) {
        EXPECT_EQ(again[k].client, 9u);
        EXPECT_EQ(again[k].delivery, k + 2);
        EXPECT_EQ(again[k].primitive.payload, bytes(600, uint8_t(k + 2)));
    }
    EXPECT_EQ(n2->counters().deliveries_repeated, 2u);
    // Bound again: nothing more.
    n2->on_sis(9, bind_request(3), now);
    EXPECT_TRUE(indications(file.take(*n2)).empty());
    // Still unwritten at a second restart: owed again. Written: owed no more.
    EXPECT_EQ(replay_journal(file.content, 2).unsettled.size(), 2u);
    n2->on_delivery_settled(2, true, now);
    n2->on_delivery_settled(
        3, false, now); // its client was gone: lost, as without a restart
    file.take(*n2);
    EXPECT_TRUE(replay_journal(file.content, 2).unsettled.empty());

    // A client that does not report its writes (an in-process one).
    node_engine n3(node_at(1));
    auto n4 = std::make_unique<node_engine>(c2);
    journal_file other;
    double t = 0;
    const auto b2 =
        first_data_burst(n3, *n4, t, [&](node_engine& e) { return other.take(e); });
    n4->on_burst(b2.burst, burst_info{}, t + b2.air_time_s);
    const auto plain = indications(other.take(*n4));
    ASSERT_EQ(plain.size(), 3u);
    for (const auto& m : plain)
        EXPECT_EQ(m.delivery, 0u);
    EXPECT_TRUE(replay_journal(other.content, 2).unsettled.empty());
}

// What a journal may not be: another node's, not a journal, another version, a record
// damaged before the end, an impossible state. Random garbage after a valid header ends
// in a journal_error or a replay, never a crash.
TEST(NodeJournal, BadJournalsAreClearErrors)
{
    const auto f = frames(2);
    bytes journal = journal_header(2);
    for (const auto& d : f) {
        const auto r = journal_frame_record(1, d, true);
        journal.insert(journal.end(), r.begin(), r.end());
    }
    EXPECT_THROW(replay_journal(journal, 3), journal_foreign);
    EXPECT_THROW(replay_journal(bytes{ 'x', 'y' }, 2), journal_error);
    bytes other_version = journal;
    other_version[15] = 9;
    EXPECT_THROW(replay_journal(other_version, 2), journal_error);
    bytes damaged = journal;
    damaged[journal_header_size + 12] ^= 0x40; // inside the first of six records
    try {
        replay_journal(damaged, 2);
        ADD_FAILURE() << "a damaged record was taken";
    } catch (const journal_error& e) {
        EXPECT_NE(std::string(e.what()).find("CRC"), std::string::npos) << e.what();
    }
    arq_receiver r;
    auto st = r.state();
    st.segments.push_back({ 200, true, true, true, false, false, bytes(5, 1) });
    bytes impossible = journal_header(2);
    const auto rec = journal_state_record(1, st);
    impossible.insert(impossible.end(), rec.begin(), rec.end());
    impossible.insert(
        impossible.end(), journal.begin() + journal_header_size, journal.end());
    EXPECT_THROW(replay_journal(impossible, 2), journal_error);

    std::mt19937 rng(5066);
    for (int i = 0; i < 3000; ++i) {
        bytes junk = journal_header(2);
        const size_t n = rng() % 200;
        for (size_t k = 0; k < n; ++k)
            junk.push_back(uint8_t(rng()));
        if (i % 2 && n > 6) { // a plausible record head: a known type, a small length
            junk[journal_header_size] = "SFDW"[(i / 2) % 4];
            junk[journal_header_size + 1] = junk[journal_header_size + 2] =
                junk[journal_header_size + 3] = 0;
        }
        try {
            replay_journal(junk, 2);
        } catch (const journal_error&) {
        }
    }
}
