/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

/* SLEP (net/slep.h): the wire format, and two SLEP instances joined by a simulated
 * STANAG 5066 path that can break the link (U_PDUs rejected), report delivered U_PDUs
 * as rejected (so they are sent twice) and reorder deliveries. Streams must arrive
 * whole, once and in order; flow control must bound what a reader that never reads
 * costs; a restarted peer's streams must be reset, never continued. */
#include "net/slep.h"
#include "sis_path_support.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>

using namespace gr::hfstack;
using namespace gr::hfstack::net;
using dl::sis_primitive;
using dl::sis_type;

namespace {

bytes text(size_t n)
{
    const std::string words =
        "the quick brown fox jumps over the lazy dog on the high frequency band ";
    bytes b(n);
    for (size_t i = 0; i < n; ++i)
        b[i] = uint8_t(words[i % words.size()]);
    return b;
}

// A crafted PDU of node 1 for port 80 on node 2.
slep_pdu pdu_from_node_1(slep_type type, uint32_t stream)
{
    slep_pdu p;
    p.type = type;
    p.to = 80;
    p.from = 1;
    p.stream = stream;
    return p;
}

// `payload` as it reaches node 2's SLEP from node 1.
sis_primitive indication_from_node_1(bytes payload)
{
    sis_primitive ind;
    ind.type = sis_type::unidata_indication;
    ind.destination_sap = 13;
    ind.source = dl::sis_address{ 1, 7 };
    ind.payload = std::move(payload);
    return ind;
}

// Two SLEP instances on nodes 1 and 2 over the simulated node (sis_path_support.h),
// their events kept per side.
struct slep_pair : sis_path<slep> {
    slep_config cfg_a, cfg_b;
    std::vector<slep_event> events_a, events_b;

    // Keepalive HELLOs off unless asked: with them, streams left open never let the
    // path settle.
    explicit slep_pair(slep_config ca = {}, slep_config cb = {}, bool keepalive = false)
        : cfg_a(ca), cfg_b(cb)
    {
        cfg_b.incarnation = cfg_a.incarnation + 1000;
        if (!keepalive)
            cfg_a.keepalive_s = cfg_b.keepalive_s = 0;
        a = std::make_unique<slep>(cfg_a);
        b = std::make_unique<slep>(cfg_b);
        keep = [this](slep& s, slep_actions& act) {
            auto& to = &s == a.get() ? events_a : events_b;
            for (auto& e : act.events)
                to.push_back(std::move(e));
        };
        bind_both();
    }

    size_t count(const std::vector<slep_event>& ev, slep_event::kind k) const
    {
        return size_t(std::count_if(
            ev.begin(), ev.end(), [&](const slep_event& e) { return e.what == k; }));
    }

    const slep_event* first(const std::vector<slep_event>& ev, slep_event::kind k) const
    {
        for (const auto& e : ev)
            if (e.what == k)
                return &e;
        return nullptr;
    }

    // Reads everything stream `s` of `side` has, settling the link between reads.
    bytes drain(slep& side, slep_stream s)
    {
        bytes got;
        for (int i = 0; i < 100000 && side.exists(s) && !side.eof(s); ++i) {
            auto chunk = side.read(s, 4096, now);
            if (chunk.empty())
                settle();
            got.insert(got.end(), chunk.begin(), chunk.end());
            if (chunk.empty() && side.exists(s) && !side.eof(s) &&
                side.info(s)->readable == 0 &&
                std::min(a->next_deadline(), b->next_deadline()) ==
                    std::numeric_limits<double>::infinity())
                break; // nothing more will come
        }
        return got;
    }

    // Writes all of `data` to stream `s`, settling whenever the buffer is full.
    void push(slep& side,
              slep_stream s,
              const bytes& data,
              slep* reader = nullptr,
              slep_stream rs = 0,
              bytes* read_back = nullptr)
    {
        size_t at = 0;
        for (int i = 0; i < 100000 && at < data.size(); ++i) {
            at += side.write(s, data.data() + at, data.size() - at, now);
            settle(now + 60); // a minute: a reader yet to read is not a silent peer
            if (reader && reader->exists(rs))
                for (auto c = reader->read(rs, 65536, now); !c.empty();
                     c = reader->read(rs, 65536, now))
                    read_back->insert(read_back->end(), c.begin(), c.end());
        }
        ASSERT_EQ(at, data.size());
    }
};

} // namespace

TEST(SlepWire, EveryTypeRoundTripsAndBadPdusAreRefused)
{
    std::vector<slep_pdu> pdus(7);
    pdus[0].type = slep_type::datagram;
    pdus[0].flags = slep_flag::compressed;
    pdus[0].data = { 1, 2, 3 };
    pdus[1].type = slep_type::reliable;
    pdus[1].id = 0xBEEF;
    pdus[2].type = slep_type::open;
    pdus[2].flags = slep_flag::compressed | slep_flag::fin;
    pdus[2].stream = 0x01020304;
    pdus[2].incarnation = 0xA0B0C0D0;
    pdus[2].limit = 262144;
    pdus[2].data = { 'G', 'E', 'T' };
    pdus[3].type = slep_type::data;
    pdus[3].flags = slep_flag::responder | slep_flag::fin;
    pdus[3].stream = 7;
    pdus[3].offset = 0xFFFFFFF0;
    pdus[3].data = bytes(100, 0x55);
    pdus[4].type = slep_type::window;
    pdus[4].stream = 7;
    pdus[4].limit = 524288;
    pdus[5].type = slep_type::reset;
    pdus[5].flags = slep_flag::responder;
    pdus[5].reason = uint8_t(slep_reset_reason::refused);
    pdus[5].data = { 'n', 'o' };
    pdus[6].type = slep_type::hello;
    pdus[6].incarnation = 0x01020304;
    pdus[6].seen = 0xA0B0C0D0;
    for (auto& p : pdus) {
        p.to = 9;
        p.from = 200;
        const bytes wire = encode(p);
        EXPECT_EQ(wire.size(), slep_header_size(p.type) + p.data.size());
        auto back = decode_slep(wire);
        ASSERT_TRUE(back.ok()) << to_string(p.type) << ": " << back.reason;
        EXPECT_EQ(encode(back.value), wire);
    }
    // The layout, byte by byte (docs/slep.md): DATA, responder and fin flags.
    EXPECT_EQ(encode(pdus[3])[0], 0x4A);
    const bytes open_wire = encode(pdus[2]);
    EXPECT_EQ(bytes(open_wire.begin(), open_wire.begin() + 15),
              (bytes{ 0x33, 9, 200, 1, 2, 3, 4, 0xA0, 0xB0, 0xC0, 0xD0, 0, 4, 0, 0 }));

    EXPECT_FALSE(decode_slep(bytes{ 0x40, 1 }).ok()); // short
    EXPECT_EQ(encode(pdus[6]),
              (bytes{ 0x70, 9, 200, 1, 2, 3, 4, 0xA0, 0xB0, 0xC0, 0xD0 }));
    EXPECT_FALSE(decode_slep(bytes{ 0x70, 1, 2 }).ok()); // HELLO cut short
    EXPECT_FALSE(decode_slep(bytes{ 0x80, 1, 2 }).ok()); // type 8
    EXPECT_FALSE(
        decode_slep(bytes{ 0x78, 1, 2, 0, 0, 0, 1, 0, 0, 0, 1 }).ok()); // R on HELLO
    EXPECT_FALSE(decode_slep(bytes{ 0x00, 1, 2 }).ok());                // type 0
    EXPECT_FALSE(decode_slep(bytes{ 0x18, 1, 2 }).ok());                // R on a datagram
    EXPECT_FALSE(decode_slep(bytes{ 0x40, 1, 2, 0, 0, 0, 1 }).ok());    // DATA cut short
    bytes long_window = encode(pdus[4]);
    long_window.push_back(0);
    EXPECT_FALSE(decode_slep(long_window).ok());
    bytes long_reset = encode(pdus[5]);
    long_reset.resize(slep_header_size(slep_type::reset) + 65, 'x');
    EXPECT_FALSE(decode_slep(long_reset).ok());
}

TEST(SlepWire, DeflateRoundTripsAndBoundsInflation)
{
    const bytes plain = text(50000);
    const bytes packed = deflate_once(plain);
    EXPECT_LT(packed.size(), plain.size() / 10);
    EXPECT_EQ(*inflate_once(packed, 50000), plain);
    EXPECT_FALSE(inflate_once(packed, 49999)); // more than the caller allows
    EXPECT_FALSE(inflate_once(bytes{ 0xFF, 0xFF, 0xFF }, 1000));
}

// A reader that asks for little at a time gets, from the bytes arrived so far, all that
// a reader with room for everything gets: what zlib holds once the input is used up comes
// with the next read, even with no new input (and holds_output says there is some).
TEST(SlepWire, InflaterGivesWhatItHoldsWithoutNewInput)
{
    bytes plain(20000, 0);
    for (size_t i = 0; i < plain.size(); i += 997)
        plain[i] = uint8_t(i);
    deflater z;
    bytes packed;
    z.write(plain.data(), plain.size(), packed);
    z.flush(packed);
    for (size_t cut = 1; cut <= packed.size(); ++cut) {
        inflater roomy;
        bytes all;
        ASSERT_TRUE(roomy.read(packed.data(), cut, plain.size(), all));
        for (size_t max_out : { 1, 7, 258 }) {
            inflater in;
            bytes got;
            size_t used = 0;
            for (int reads = 0; reads < 100000; ++reads) {
                const size_t before = got.size();
                const auto n = in.read(packed.data() + used, cut - used, max_out, got);
                ASSERT_TRUE(n);
                used += *n;
                if (used == cut && got.size() == before && !in.holds_output())
                    break;
            }
            ASSERT_EQ(got, all) << "cut " << cut << ", max_out " << max_out;
        }
    }
}

TEST(Slep, StreamOpensWithItsRequestAndCarriesAnAnswerBothWays)
{
    slep_pair l;
    l.b->listen(80);
    const bytes request = { 'G', 'E', 'T', ' ', '/' };
    const auto s = l.a->open(2, 80, 1, request, false, false, l.now);
    // The OPEN itself carries the request: the first U_PDU to node 2 holds it.
    auto first = l.a->take_actions();
    ASSERT_FALSE(first.to_sis.empty());
    const auto open_pdu = decode_slep(first.to_sis[0].payload);
    ASSERT_TRUE(open_pdu.ok());
    EXPECT_EQ(open_pdu.value.type, slep_type::open);
    EXPECT_EQ(open_pdu.value.data, request);
    for (auto& p : first.to_sis)
        l.carry(*l.a, p);
    l.settle();
    const auto* incoming = l.first(l.events_b, slep_event::kind::incoming);
    ASSERT_NE(incoming, nullptr);
    EXPECT_EQ(incoming->to, 80);
    EXPECT_EQ(incoming->from, 1);
    const slep_stream far = incoming->stream;
    EXPECT_EQ(l.b->read(far, 100, l.now), request);

    const bytes answer = pattern(300000, 1);
    bytes got;
    l.push(*l.b, far, answer, l.a.get(), s, &got);
    l.b->finish(far, l.now);
    l.settle();
    const bytes rest = l.drain(*l.a, s);
    got.insert(got.end(), rest.begin(), rest.end());
    EXPECT_EQ(got, answer);
    EXPECT_TRUE(l.a->eof(s));
    l.a->finish(s, l.now);
    l.settle();
    EXPECT_EQ(l.count(l.events_a, slep_event::kind::closed), 1u);
    EXPECT_EQ(l.count(l.events_b, slep_event::kind::closed), 1u);
    EXPECT_EQ(l.a->stream_count() + l.b->stream_count(), 0u);
    EXPECT_EQ(l.a->counters().retransmissions + l.b->counters().retransmissions, 0u);
}

// Bulk stream PDUs are cut at stream_updu_bytes (2042 by default: with the node's C_PDU
// and S_PDU headers, two whole 1023-byte D_PDU segments), never at the node's 2048.
TEST(Slep, BulkStreamPdusMakeWholeDpduSegments)
{
    for (size_t cap : { size_t(2042), size_t(1000) }) {
        slep_config c;
        c.stream_updu_bytes = cap;
        slep_pair l(c);
        l.b->listen(80);
        const auto s = l.a->open(2, 80, 1, {}, false, false, l.now);
        const bytes data = pattern(20000, 3);
        EXPECT_EQ(l.a->write(s, data.data(), data.size(), l.now), data.size());
        size_t full = 0;
        for (const auto& p : l.a->take_actions().to_sis) {
            ASSERT_LE(p.payload.size(), cap);
            full += p.payload.size() == cap;
        }
        EXPECT_GE(full, 20000 / cap - 1) << cap;
    }
    slep_config bad;
    bad.stream_updu_bytes = 100;
    EXPECT_THROW(slep{ bad }, std::invalid_argument);
}

// What an application writes in quick succession (a far proxy's accept, the server's
// answer, its close) leaves as one DATA PDU once coalesce_s has passed or the end is
// written; with coalesce_s 0 every write leaves at once.
TEST(Slep, QuickWritesLeaveAsOnePdu)
{
    for (double coalesce : { 0.05, 0.0 }) {
        slep_config c;
        c.coalesce_s = coalesce;
        slep_pair l(c, c);
        l.a->listen(80);
        const auto near = l.b->open(1, 80, 1, { 'G' }, false, false, l.now);
        l.settle();
        const auto* incoming = l.first(l.events_a, slep_event::kind::incoming);
        ASSERT_NE(incoming, nullptr);
        const slep_stream far = incoming->stream;
        const double t0 = l.now;
        const bytes accept = { 1, 0 }, answer = { 'O', 'K' };
        std::vector<sis_primitive> sent;
        const auto take = [&] {
            auto more = l.a->take_actions().to_sis;
            sent.insert(sent.end(), more.begin(), more.end());
            return more.size();
        };
        l.a->write(far, accept.data(), accept.size(), t0);
        EXPECT_EQ(take(), coalesce > 0 ? 0u : 1u);
        if (coalesce > 0)
            EXPECT_DOUBLE_EQ(l.a->next_deadline(), t0 + coalesce);
        l.a->write(far, answer.data(), answer.size(), t0 + 0.01);
        l.a->finish(far, t0 + 0.02); // the end: nothing more to wait for
        take();
        ASSERT_EQ(sent.size(), coalesce > 0 ? 1u : 3u);
        const auto last = decode_slep(sent.back().payload);
        ASSERT_TRUE(last.ok());
        EXPECT_EQ(last.value.type, slep_type::data);
        EXPECT_TRUE(last.value.flags & slep_flag::fin);
        if (coalesce > 0)
            EXPECT_EQ(last.value.data, (bytes{ 1, 0, 'O', 'K' }));
        for (auto& p : sent)
            l.carry(*l.a, p);
        l.settle();
        EXPECT_EQ(l.drain(*l.b, near), (bytes{ 1, 0, 'O', 'K' })) << coalesce;
        EXPECT_TRUE(l.b->eof(near));
    }
    // A lone write waits coalesce_s, then leaves by itself.
    slep_pair l;
    l.b->listen(80);
    const auto s = l.a->open(2, 80, 1, {}, false, false, l.now);
    l.settle();
    l.a->take_actions();
    const double t0 = l.now;
    l.a->write(s, text(10).data(), 10, t0);
    EXPECT_TRUE(l.a->take_actions().to_sis.empty());
    l.a->on_timer(t0 + 0.049);
    EXPECT_TRUE(l.a->take_actions().to_sis.empty());
    l.a->on_timer(t0 + 0.05);
    EXPECT_EQ(l.a->take_actions().to_sis.size(), 1u);
    slep_config bad;
    bad.coalesce_s = -1;
    EXPECT_THROW(slep{ bad }, std::invalid_argument);
}

// Link breaks (30 % of U_PDUs rejected undelivered, 10 % delivered yet reported
// rejected so they are sent again) and reordered deliveries: every byte arrives once
// and in order, both ways, over several seeds.
TEST(Slep, StreamsSurviveLinkBreaksWithoutLossDuplicationOrReordering)
{
    for (uint32_t seed = 1; seed <= 4; ++seed) {
        slep_pair l;
        l.rng.seed(seed);
        l.p_rejected = 0.3;
        l.p_delivered_rejected = 0.1;
        l.reorder = true;
        l.b->listen(80);
        const bytes up = pattern(60000 + seed * 1000, seed);
        const bytes down = pattern(120000, seed + 100);
        const auto s =
            l.a->open(2, 80, 1, bytes(up.begin(), up.begin() + 100), false, false, l.now);
        l.settle();
        const auto* incoming = l.first(l.events_b, slep_event::kind::incoming);
        ASSERT_NE(incoming, nullptr) << seed;
        const slep_stream far = incoming->stream;
        bytes got_b, got_a;
        l.push(*l.a, s, bytes(up.begin() + 100, up.end()), l.b.get(), far, &got_b);
        l.a->finish(s, l.now);
        l.push(*l.b, far, down, l.a.get(), s, &got_a);
        l.b->finish(far, l.now);
        l.settle();
        const bytes rest_b = l.drain(*l.b, far);
        const bytes rest_a = l.drain(*l.a, s);
        got_b.insert(got_b.end(), rest_b.begin(), rest_b.end());
        got_a.insert(got_a.end(), rest_a.begin(), rest_a.end());
        l.settle();
        EXPECT_EQ(got_b, up) << seed;
        EXPECT_EQ(got_a, down) << seed;
        EXPECT_EQ(l.count(l.events_a, slep_event::kind::closed), 1u) << seed;
        EXPECT_EQ(l.count(l.events_b, slep_event::kind::closed), 1u) << seed;
        EXPECT_GT(l.a->counters().retransmissions, 0u) << seed;
        EXPECT_GT(l.a->counters().duplicates + l.b->counters().duplicates, 0u) << seed;
        EXPECT_EQ(l.count(l.events_a, slep_event::kind::reset), 0u) << seed;
    }
}

TEST(Slep, CompressedStreamsAndDatagramsRoundTrip)
{
    slep_pair l;
    l.b->listen(25);
    const bytes mail = text(200000);
    const auto s = l.a->open(2, 25, 3, {}, true, false, l.now);
    l.settle();
    const slep_stream far = l.first(l.events_b, slep_event::kind::incoming)->stream;
    bytes got;
    l.push(*l.a, s, mail, l.b.get(), far, &got);
    l.a->finish(s, l.now);
    l.settle();
    const bytes rest = l.drain(*l.b, far);
    got.insert(got.end(), rest.begin(), rest.end());
    EXPECT_EQ(got, mail);
    EXPECT_LT(l.a->counters().wire_written * 5,
              l.a->counters().plain_written); // text shrinks 5x+
    EXPECT_LT(l.a->counters().bytes_sent, mail.size() / 5);

    l.b->listen(53);
    l.a->send_datagram(2, 53, 4, text(3000), true, true, l.now);
    l.a->send_datagram(2, 53, 4, { 1, 2, 3 }, false, false, l.now);
    l.a->send_datagram(2, 54, 4, { 9 }, false, true, l.now); // nobody listens on 54
    l.settle();
    std::vector<bytes> datagrams;
    for (const auto& e : l.events_b)
        if (e.what == slep_event::kind::datagram)
            datagrams.push_back(e.data);
    ASSERT_EQ(datagrams.size(), 2u);
    EXPECT_EQ(datagrams[0], text(3000));
    EXPECT_EQ(datagrams[1], (bytes{ 1, 2, 3 }));
    EXPECT_EQ(l.b->counters().refused, 1u);
    EXPECT_THROW(l.a->send_datagram(2, 53, 4, pattern(3000, 1), false, true, l.now),
                 std::invalid_argument);
}

TEST(Slep, ReliableDatagramsArriveOnceThroughLinkBreaks)
{
    slep_pair l;
    l.p_rejected = 0.4;
    l.p_delivered_rejected = 0.2;
    l.b->listen(7);
    std::vector<uint16_t> ids;
    for (int i = 0; i < 40; ++i)
        ids.push_back(l.a->send_reliable(2, 7, 7, pattern(50 + i, i), i % 2 == 0, l.now));
    l.settle();
    std::map<bytes, int> seen;
    for (const auto& e : l.events_b)
        if (e.what == slep_event::kind::datagram) {
            EXPECT_TRUE(e.reliable);
            seen[e.data] += 1;
        }
    ASSERT_EQ(seen.size(), 40u);
    for (const auto& [data, n] : seen)
        EXPECT_EQ(n, 1);
    EXPECT_EQ(l.count(l.events_a, slep_event::kind::datagram_delivered), 40u);
    EXPECT_GT(l.b->counters().duplicates, 0u);
}

// A reader that never reads costs at most its window; the writer is held back, told
// when it may write again, and everything arrives once the reader reads.
TEST(Slep, FlowControlBoundsAReaderThatNeverReads)
{
    slep_pair l;
    l.b->listen(80);
    const auto s = l.a->open(2, 80, 1, {}, false, false, l.now);
    l.settle();
    const slep_stream far = l.first(l.events_b, slep_event::kind::incoming)->stream;
    const bytes big = pattern(2000000, 3);
    size_t written = 0;
    for (int i = 0; i < 50; ++i) {
        written += l.a->write(s, big.data() + written, big.size() - written, l.now);
        l.settle(l.now + 1); // not into give_up_s: a silent, stalled peer would time out
    }
    const auto held = l.b->info(far)->readable;
    EXPECT_LE(held, size_t(l.cfg_b.window));
    EXPECT_EQ(held, size_t(slep_initial_window));
    EXPECT_LE(written, size_t(l.cfg_b.window) + l.cfg_a.send_buffer);
    EXPECT_LT(written, big.size());
    bytes got;
    l.events_a.clear();
    l.push(*l.a, s, bytes(big.begin() + long(written), big.end()), l.b.get(), far, &got);
    EXPECT_GT(l.count(l.events_a, slep_event::kind::writable), 0u);
    l.a->finish(s, l.now);
    l.settle();
    const bytes rest = l.drain(*l.b, far);
    got.insert(got.end(), rest.begin(), rest.end());
    EXPECT_EQ(got, big);
}

TEST(Slep, RefusedOpensAndAbortsEndStreamsOnBothSides)
{
    slep_pair l;
    const auto s = l.a->open(2, 99, 1, { 'x' }, false, false, l.now); // nobody on 99
    l.settle();
    const auto* r = l.first(l.events_a, slep_event::kind::reset);
    ASSERT_NE(r, nullptr);
    EXPECT_EQ(r->stream, s);
    EXPECT_EQ(r->reason, slep_reset_reason::refused);
    EXPECT_FALSE(l.a->exists(s));

    l.b->listen(80);
    const auto t = l.a->open(2, 80, 1, { 'y' }, false, false, l.now);
    l.settle();
    const slep_stream far = l.first(l.events_b, slep_event::kind::incoming)->stream;
    l.b->reset(far, l.now);
    l.settle();
    EXPECT_FALSE(l.a->exists(t));
    EXPECT_EQ(l.events_a.back().what, slep_event::kind::reset);
    EXPECT_EQ(l.events_a.back().reason, slep_reset_reason::aborted);
}

// A restarted opener: the far side resets what it had with the old one as soon as the
// new one opens a stream, and data sent to the new one for an old stream is answered
// with a reset, never taken as the new stream's.
TEST(Slep, ARestartedPeerResetsItsOldStreamsCleanly)
{
    slep_pair l;
    l.b->listen(80);
    const auto old_stream = l.a->open(2, 80, 1, { 'o', 'l', 'd' }, false, false, l.now);
    l.settle();
    const slep_stream far_old = l.first(l.events_b, slep_event::kind::incoming)->stream;
    (void)old_stream;
    // Node 1's SLEP starts again, later incarnation.
    slep_config again = l.cfg_a;
    again.incarnation = l.cfg_a.incarnation + 1;
    l.a = std::make_unique<slep>(again);
    slep_pair::bind(*l.a);
    l.events_a.clear();
    // B still writes on the old stream: the new A answers RESET (unknown stream).
    const bytes late = { 'l', 'a', 't', 'e' };
    l.b->write(far_old, late.data(), late.size(), l.now);
    l.settle();
    EXPECT_FALSE(l.b->exists(far_old));
    EXPECT_EQ(l.count(l.events_a, slep_event::kind::readable), 0u);
    const auto* r = l.first(l.events_b, slep_event::kind::reset);
    ASSERT_NE(r, nullptr);
    EXPECT_EQ(r->reason, slep_reset_reason::unknown_stream);

    // Another old stream, idle: reset when the new A opens one.
    slep_pair m;
    m.b->listen(80);
    m.a->open(2, 80, 1, { 'a' }, false, false, m.now);
    m.settle();
    const slep_stream idle = m.first(m.events_b, slep_event::kind::incoming)->stream;
    slep_config later = m.cfg_a;
    later.incarnation += 1;
    m.a = std::make_unique<slep>(later);
    slep_pair::bind(*m.a);
    const auto fresh = m.a->open(2, 80, 1, { 'n', 'e', 'w' }, false, false, m.now);
    m.settle();
    EXPECT_FALSE(m.b->exists(idle));
    EXPECT_EQ(m.b->counters().peer_restarts, 1u);
    const auto* incoming = &m.events_b.back();
    for (const auto& e : m.events_b)
        if (e.what == slep_event::kind::incoming)
            incoming = &e;
    EXPECT_NE(incoming->stream, idle);
    EXPECT_EQ(m.b->read(incoming->stream, 10, m.now), (bytes{ 'n', 'e', 'w' }));
    EXPECT_TRUE(m.a->exists(fresh));
    // A late OPEN of the former self is stale, not a second restart.
    slep_pdu stale = pdu_from_node_1(slep_type::open, 5);
    stale.incarnation = m.cfg_a.incarnation;
    m.b->on_sis(indication_from_node_1(encode(stale)), m.now);
    EXPECT_EQ(m.b->counters().stale, 1u);
    EXPECT_EQ(m.b->counters().peer_restarts, 1u);
}

// The link stays down: a stream with data to deliver gives up after give_up_s, and so
// does a reliable datagram; nothing spins meanwhile (the retries are paced).
TEST(Slep, ALinkThatStaysDownEndsInTimeoutsNotSpinning)
{
    slep_config c;
    c.give_up_s = 300;
    c.retry_s = 20;
    slep_pair l(c, c);
    l.b->listen(80);
    l.down = true;
    const auto s = l.a->open(2, 80, 1, pattern(5000, 1), false, false, l.now);
    l.a->send_reliable(2, 80, 1, { 1 }, false, l.now);
    l.settle();
    EXPECT_FALSE(l.a->exists(s));
    const auto* r = l.first(l.events_a, slep_event::kind::reset);
    ASSERT_NE(r, nullptr);
    EXPECT_EQ(r->reason, slep_reset_reason::timed_out);
    EXPECT_EQ(l.count(l.events_a, slep_event::kind::datagram_failed), 1u);
    EXPECT_GE(l.now, 300.0);
    EXPECT_LT(l.requests, 100u); // about one try per retry_s, not a busy loop
}

TEST(Slep, GarbageFromTheAirIsCountedNotFatal)
{
    slep_pair l;
    l.b->listen(80);
    std::mt19937 rng(11);
    for (int i = 0; i < 2000; ++i) {
        sis_primitive ind = indication_from_node_1(pattern(rng() % 40, uint32_t(i)));
        if (!ind.payload.empty())
            ind.payload[0] = uint8_t((rng() % 8) << 4 | (rng() % 16));
        l.b->on_sis(ind, double(i));
    }
    l.b->take_actions();
    EXPECT_GT(l.b->counters().malformed, 0u);
    EXPECT_LE(l.b->stream_count(), l.cfg_b.max_streams);
}

// The receiver on its own, fed crafted PDUs: a gap, an overlap, a duplicate and data
// beyond the window.
TEST(Slep, ReceiverReassemblesGapsAndOverlapsAndRefusesDataBeyondItsWindow)
{
    slep b(slep_config{});
    slep_pair::bind(b);
    b.listen(80);
    const bytes whole = pattern(3000, 5);
    const auto deliver = [&](const slep_pdu& p) {
        b.on_sis(indication_from_node_1(encode(p)), 1);
    };
    const auto data = [&](uint32_t from, uint32_t to, bool fin = false) {
        slep_pdu p = pdu_from_node_1(slep_type::data, 42);
        p.offset = from;
        p.flags = fin ? slep_flag::fin : 0;
        p.data.assign(whole.begin() + from, whole.begin() + to);
        return p;
    };
    deliver(data(1000, 2000)); // before its OPEN: kept
    slep_pdu open = pdu_from_node_1(slep_type::open, 42);
    open.incarnation = 9;
    open.limit = 262144;
    open.data.assign(whole.begin(), whole.begin() + 500);
    deliver(open);
    deliver(data(2500, 3000, true)); // a gap at 2000..2500
    deliver(data(400, 1200));        // overlaps both sides
    deliver(data(1000, 2000));       // a duplicate
    const slep_stream s = make_slep_stream(1, false, 42);
    bytes got = b.read(s, 10000, 1);
    EXPECT_EQ(got, bytes(whole.begin(), whole.begin() + 2000));
    EXPECT_FALSE(b.eof(s));
    deliver(data(1900, 2600)); // fills the gap
    got = b.read(s, 10000, 1);
    EXPECT_EQ(got, bytes(whole.begin() + 2000, whole.end()));
    EXPECT_TRUE(b.eof(s));
    EXPECT_GE(b.counters().duplicates, 1u);

    slep_pdu beyond = data(0, 10);
    beyond.stream = 43;
    open.stream = 43;
    open.data.clear();
    deliver(open);
    beyond.offset = slep_initial_window; // past the window granted
    deliver(beyond);
    EXPECT_FALSE(b.exists(make_slep_stream(1, false, 43)));
    auto act = b.take_actions();
    const bool reset_sent =
        std::any_of(act.to_sis.begin(), act.to_sis.end(), [](const sis_primitive& p) {
            auto d = decode_slep(p.payload);
            return d.ok() && d.value.type == slep_type::reset &&
                   d.value.reason == uint8_t(slep_reset_reason::protocol_error);
        });
    EXPECT_TRUE(reset_sent);
}

namespace {

// Replaces side b (node 2) by a fresh SLEP of a later incarnation, as a kill -9 and a
// restart of its process would: nothing of the old one survives.
void restart_b(slep_pair& l)
{
    slep_config again = l.cfg_b;
    again.incarnation = l.cfg_b.incarnation + 1;
    l.cfg_b = again;
    l.b = std::make_unique<slep>(again);
    slep_pair::bind(*l.b);
    l.events_b.clear();
}

} // namespace

// The far side restarts in the middle of an upload: the uploader's next PDU reaches a
// SLEP that does not know the stream, which answers with its HELLO (new incarnation);
// the uploader resets the stream (peer restarted) within that one round trip. The new
// far side never takes the old stream's bytes as a stream of its own.
TEST(Slep, AFarSideRestartedMidUploadResetsTheUploadAtOnce)
{
    slep_pair l;
    l.b->listen(80);
    const auto up = l.a->open(2, 80, 1, pattern(100, 1), false, false, l.now);
    const bytes first = pattern(60000, 2);
    l.push(*l.a, up, first);
    l.settle();
    ASSERT_TRUE(l.a->exists(up));
    restart_b(l);
    const double restarted_at = l.now;
    const bytes more = pattern(2000, 3);
    l.a->write(up, more.data(), more.size(), l.now);
    l.settle(l.now + 1); // no timer of a second or more runs
    EXPECT_FALSE(l.a->exists(up));
    const auto* r = l.first(l.events_a, slep_event::kind::reset);
    ASSERT_NE(r, nullptr);
    EXPECT_EQ(r->reason, slep_reset_reason::peer_restarted);
    EXPECT_EQ(l.a->counters().peer_restarts, 1u);
    // Within one exchange: no timer but the coalescing wait (coalesce_s) ran.
    EXPECT_LT(l.now - restarted_at, 2 * l.cfg_a.coalesce_s);
    EXPECT_EQ(l.count(l.events_b, slep_event::kind::incoming), 0u);
    EXPECT_EQ(l.count(l.events_b, slep_event::kind::readable), 0u);
    EXPECT_EQ(l.b->stream_count(), 0u);
}

// An upload stalled on the far side's window (its reader never read) when the far side
// restarted: the uploader has nothing it may send, so only the keepalive HELLO finds out;
// the stream is reset within keepalive_s and a round trip. A download that the far side
// was feeding ends the same way. Without keepalives (a peer that does not speak HELLO),
// the stalled upload times out after give_up_s of silence instead of hanging.
TEST(Slep, StreamsThatWaitOnARestartedPeerAreResetWithinTheKeepalive)
{
    slep_config c;
    c.keepalive_s = 120;
    slep_pair l(c, c, true);
    l.b->listen(80);
    const auto up = l.a->open(2, 80, 1, {}, false, false, l.now);
    const bytes big = pattern(600000, 4);
    size_t at = 0;
    for (int i = 0; i < 100 && at < big.size(); ++i) {
        at += l.a->write(up, big.data() + at, big.size() - at, l.now);
        l.settle(l.now + 1);
    }
    ASSERT_TRUE(l.a->exists(up));
    ASSERT_LT(at, big.size()); // stalled: the far reader took nothing
    const auto down = l.a->open(2, 80, 1, { 'G', 'E', 'T' }, false, false, l.now);
    l.settle(l.now + 1);
    slep_stream far_down = 0;
    for (const auto& e : l.events_b)
        if (e.what == slep_event::kind::incoming)
            far_down = e.stream;
    l.b->write(far_down, big.data(), 1000, l.now);
    l.settle(l.now + 1);
    ASSERT_GT(l.a->info(down)->readable, 0u);
    // A live, silent peer: keepalives flow, nothing is reset over many give_up_s.
    l.settle(l.now + 3 * c.give_up_s);
    ASSERT_TRUE(l.a->exists(up));
    ASSERT_TRUE(l.a->exists(down));
    restart_b(l);
    const double restarted_at = l.now;
    l.settle(l.now + c.keepalive_s + c.retry_s + 1);
    EXPECT_FALSE(l.a->exists(up));
    EXPECT_FALSE(l.a->exists(down));
    EXPECT_LE(l.now - restarted_at, c.keepalive_s + c.retry_s);
    for (const auto& e : l.events_a) {
        if (e.what == slep_event::kind::reset)
            EXPECT_EQ(e.reason, slep_reset_reason::peer_restarted);
    }

    // Keepalives off: a stalled upload whose peer says nothing for give_up_s times out.
    slep_pair q;
    q.b->listen(80);
    const auto stalled = q.a->open(2, 80, 1, {}, false, false, q.now);
    at = 0;
    for (int i = 0; i < 100 && at < big.size(); ++i) {
        at += q.a->write(stalled, big.data() + at, big.size() - at, q.now);
        q.settle(q.now + 1);
    }
    ASSERT_LT(at, big.size());
    const double stalled_at = q.now;
    q.settle();
    EXPECT_FALSE(q.a->exists(stalled));
    const auto* r = q.first(q.events_a, slep_event::kind::reset);
    ASSERT_NE(r, nullptr);
    EXPECT_EQ(r->reason, slep_reset_reason::timed_out);
    // (The last word from B: its first HELLO, retry_s after the stream opened.)
    EXPECT_LE(q.now - stalled_at, q.cfg_a.give_up_s + q.cfg_a.retry_s + 1);
}

// DATA for a stream whose OPEN never comes (the receiver lost it in a restart, and the
// opener does not answer HELLO): kept early_data_s, then refused with RESET (unknown
// stream); the stream's late OPEN is then dropped rather than started with a gap.
TEST(Slep, DataWhoseOpenNeverComesIsRefusedAfterEarlyDataWait)
{
    slep b(slep_config{});
    slep_pair::bind(b);
    b.listen(80);
    b.take_actions();
    const auto deliver = [&](const slep_pdu& p, double now) {
        b.on_sis(indication_from_node_1(encode(p)), now);
    };
    slep_pdu d = pdu_from_node_1(slep_type::data, 42);
    d.offset = 5000;
    d.data = pattern(100, 1);
    deliver(d, 10);
    const auto first = b.take_actions();
    bool hello = false, reset = false;
    for (const auto& r : first.to_sis) {
        auto p = decode_slep(r.payload);
        hello = hello || (p.ok() && p.value.type == slep_type::hello);
        reset = reset || (p.ok() && p.value.type == slep_type::reset);
    }
    EXPECT_TRUE(hello);
    EXPECT_FALSE(reset);
    EXPECT_EQ(b.next_deadline(), 10 + b.config().early_data_s);
    b.on_timer(10 + b.config().early_data_s);
    const auto later = b.take_actions();
    ASSERT_EQ(later.to_sis.size(), 1u);
    const auto refused = decode_slep(later.to_sis[0].payload);
    ASSERT_TRUE(refused.ok());
    EXPECT_EQ(refused.value.type, slep_type::reset);
    EXPECT_EQ(refused.value.stream, 42u);
    EXPECT_TRUE(refused.value.has(slep_flag::responder));
    EXPECT_EQ(refused.value.reason, uint8_t(slep_reset_reason::unknown_stream));
    slep_pdu open = pdu_from_node_1(slep_type::open, 42);
    open.incarnation = 5;
    open.limit = 262144;
    deliver(open, 100);
    EXPECT_EQ(b.stream_count(), 0u);
    for (const auto& e : b.take_actions().events)
        EXPECT_NE(e.what, slep_event::kind::incoming);

    // A WINDOW for a stream this side does not know is refused at once.
    slep_pdu w = pdu_from_node_1(slep_type::window, 77);
    w.limit = 524288;
    deliver(w, 200);
    bool window_refused = false;
    for (const auto& r : b.take_actions().to_sis) {
        auto p = decode_slep(r.payload);
        window_refused = window_refused || (p.ok() && p.value.type == slep_type::reset &&
                                            p.value.stream == 77);
    }
    EXPECT_TRUE(window_refused);
}

// The near side restarts: the far side learns it from the new side's HELLO (answering a
// keepalive of the far side) and resets every stream it had with the former self, those
// the near side opened and those it accepted.
TEST(Slep, ANearSideRestartIsFoundByTheFarSidesKeepalive)
{
    slep_config c;
    slep_pair l(c, c, true);
    l.a->listen(80);
    l.b->listen(80);
    l.a->open(2, 80, 1, { 'u', 'p' }, false, false, l.now);
    l.b->open(1, 80, 2, { 'b', 'a', 'c', 'k' }, false, false, l.now);
    l.settle(l.now + 1);
    EXPECT_EQ(l.b->stream_count(), 2u);
    slep_config again = l.cfg_a;
    again.incarnation += 1;
    l.a = std::make_unique<slep>(again);
    slep_pair::bind(*l.a);
    const double restarted_at = l.now;
    l.settle(l.now + c.keepalive_s + c.retry_s + 1);
    EXPECT_EQ(l.b->stream_count(), 0u);
    EXPECT_LE(l.now - restarted_at, c.keepalive_s + c.retry_s);
    EXPECT_EQ(l.b->counters().peer_restarts, 1u);
}

// A stream that was idle longer than give_up_s and then writes is not reset: give_up_s
// counts from when it starts waiting for a confirmation again.
TEST(Slep, AStreamIdleLongerThanGiveUpStillCarriesItsNextWrite)
{
    slep_pair l;
    l.b->listen(80);
    const auto s = l.a->open(2, 80, 1, { 'h', 'i' }, false, false, l.now);
    l.settle();
    const slep_stream far = l.first(l.events_b, slep_event::kind::incoming)->stream;
    l.now += 3 * l.cfg_a.give_up_s; // nobody writes meanwhile
    l.a->on_timer(l.now);
    l.b->on_timer(l.now);
    const bytes later = pattern(3000, 8);
    l.a->write(s, later.data(), later.size(), l.now);
    l.a->on_timer(l.now + 0.01); // a driver's periodic call, its confirmation not yet in
    l.settle(l.now + 1);
    EXPECT_TRUE(l.a->exists(s));
    EXPECT_EQ(l.count(l.events_a, slep_event::kind::reset), 0u);
    bytes got;
    for (auto c = l.b->read(far, 65536, l.now); !c.empty();
         c = l.b->read(far, 65536, l.now))
        got.insert(got.end(), c.begin(), c.end());
    bytes want = { 'h', 'i' };
    want.insert(want.end(), later.begin(), later.end());
    EXPECT_EQ(got, want);
}

// peer_acks: the node's confirmation of a stream PDU does not confirm its bytes; the far
// SLEP's ACK does, riding on the DATA it answers with when that comes within
// ack_delay_s, else a PDU of its own asked for by the burst's last PDU.
TEST(SlepPeerAcks, BytesAreConfirmedByTheFarSlepsAckWhichRidesOnItsAnswer)
{
    slep_config c;
    c.peer_acks = true;
    slep_pair l(c, c);
    l.a->listen(80);
    l.b->listen(80);
    const auto sa = l.a->open(2, 80, 80, { 'h', 'i' }, false, false, l.now);
    const auto sb = l.b->open(1, 80, 80, { 'h', 'o' }, false, false, l.now);
    l.settle();
    const slep_stream at_b = l.first(l.events_b, slep_event::kind::incoming)->stream;
    const slep_stream at_a = l.first(l.events_a, slep_event::kind::incoming)->stream;
    l.b->read(at_b, 100, l.now);
    l.a->read(at_a, 100, l.now);
    EXPECT_EQ(l.a->info(sa)->unconfirmed, 0u); // the OPENs: the far node's confirmation
    const bytes question = { 'q', '?' };
    l.a->write(sa, question.data(), question.size(), l.now);
    l.settle(l.now + c.coalesce_s); // sent, confirmed by the node, no ACK yet
    EXPECT_EQ(l.a->counters().pdus_sent[size_t(slep_type::data)], 1u);
    EXPECT_EQ(l.a->info(sa)->unconfirmed, question.size());
    EXPECT_EQ(l.b->read(at_b, 100, l.now), question);
    const bytes answer = { 'a', '!' };
    l.b->write(sb, answer.data(), answer.size(), l.now); // as the question arrives
    l.settle(l.now + c.coalesce_s);
    EXPECT_EQ(l.b->counters().pdus_sent[size_t(slep_type::data_ack)], 1u);
    EXPECT_EQ(l.b->counters().pdus_sent[size_t(slep_type::ack)], 0u);
    EXPECT_EQ(l.a->info(sa)->unconfirmed, 0u);
    EXPECT_EQ(l.a->read(at_a, 100, l.now), answer);
    // Nothing rides back from a: its ACK goes alone once ack_delay_s has passed.
    EXPECT_EQ(l.b->info(sb)->unconfirmed, answer.size());
    l.settle();
    EXPECT_EQ(l.a->counters().pdus_sent[size_t(slep_type::ack)], 1u);
    EXPECT_EQ(l.b->info(sb)->unconfirmed, 0u);
    EXPECT_EQ(l.count(l.events_a, slep_event::kind::reset), 0u);
}

// A PDU the far node confirms but drops (no SLEP bound there at that moment) is never
// ACKed: it goes again after ack_timeout_s, and its bytes arrive.
TEST(SlepPeerAcks, APduTheFarNodeTookWithoutASlepBoundIsSentAgain)
{
    slep_config c;
    c.peer_acks = true;
    slep_pair l(c, c);
    l.b->listen(80);
    const auto s = l.a->open(2, 80, 80, { 'h', 'i' }, false, false, l.now);
    l.settle();
    const slep_stream far = l.first(l.events_b, slep_event::kind::incoming)->stream;
    l.b->read(far, 100, l.now);
    const bytes lost = pattern(300, 3);
    l.holding = true;
    l.a->write(s, lost.data(), lost.size(), l.now);
    l.settle(l.now + c.coalesce_s + 0.01);
    ASSERT_EQ(l.held.size(), 1u);
    EXPECT_EQ(l.held[0].second.service_type.delivery_confirmation,
              dl::sis_delivery_confirmation::node);
    dl::sis_primitive taken; // the far node's ARQ took it; nobody was bound to read it
    taken.type = dl::sis_type::unidata_request_confirm;
    taken.destination = l.held[0].second.destination;
    taken.destination_sap = l.held[0].second.destination_sap;
    taken.payload.assign(l.held[0].second.payload.begin(),
                         l.held[0].second.payload.begin() + 16);
    l.held.clear();
    l.holding = false;
    l.a->on_sis(taken, l.now);
    l.settle(l.now + c.ack_timeout_s / 2);
    EXPECT_EQ(l.a->info(s)->unconfirmed, lost.size());
    EXPECT_EQ(l.a->counters().retransmissions, 0u);
    l.settle(l.now + c.ack_timeout_s + 1);
    EXPECT_EQ(l.a->counters().retransmissions, 1u);
    EXPECT_EQ(l.a->info(s)->unconfirmed, 0u);
    EXPECT_EQ(l.b->read(far, 1000, l.now), lost);
}

// An ACK from the air that claims more than the stream has sent confirms nothing and is
// counted malformed; one for a stream that does not exist is counted stale.
TEST(SlepPeerAcks, AnAckBeyondWhatWasSentConfirmsNothing)
{
    slep_config c;
    c.peer_acks = true;
    slep_pair l(c, c);
    l.a->listen(80);
    const auto s = l.b->open(1, 80, 80, { 'h', 'i' }, false, false, l.now);
    l.settle();
    const bytes data = pattern(200, 5);
    l.holding = true; // sent, neither confirmed nor ACKed
    l.b->write(s, data.data(), data.size(), l.now);
    l.settle(l.now + c.coalesce_s + 0.01);
    ASSERT_EQ(l.b->info(s)->unconfirmed, data.size());
    slep_pdu ack = pdu_from_node_1(slep_type::ack, uint32_t(s));
    ack.flags = slep_flag::responder; // node 1 accepted the stream node 2 opened
    ack.offset = 0x7FFFFFFF;
    l.b->on_sis(indication_from_node_1(encode(ack)), l.now);
    EXPECT_EQ(l.b->counters().malformed, 1u);
    EXPECT_EQ(l.b->info(s)->unconfirmed, data.size());
    const uint64_t stale = l.b->counters().stale;
    ack.stream = uint32_t(s) + 1;
    ack.offset = 1;
    l.b->on_sis(indication_from_node_1(encode(ack)), l.now);
    EXPECT_EQ(l.b->counters().stale, stale + 1);
    EXPECT_EQ(l.b->info(s)->unconfirmed, data.size());
}

TEST(SlepWire, AckAndDataAckRoundTrip)
{
    slep_pdu ack;
    ack.type = slep_type::ack;
    ack.flags = slep_flag::responder;
    ack.to = 6;
    ack.from = 6;
    ack.stream = 0x01020304;
    ack.offset = 0xFFFFFF00;
    const bytes a = encode(ack);
    EXPECT_EQ(a.size(), 11u);
    auto back = decode_slep(a);
    ASSERT_TRUE(back);
    EXPECT_EQ(back.value.stream, ack.stream);
    EXPECT_EQ(back.value.offset, ack.offset);
    bytes longer = a;
    longer.push_back(0);
    EXPECT_FALSE(decode_slep(longer)); // an ACK has no data
    slep_pdu d;
    d.type = slep_type::data_ack;
    d.flags = slep_flag::ack_requested | slep_flag::fin;
    d.stream = 7;
    d.offset = 100;
    d.ack_stream = 9;
    d.ack_offset = 4000;
    d.data = { 'x' };
    const bytes w = encode(d);
    EXPECT_EQ(w.size(), 20u);
    auto dd = decode_slep(w);
    ASSERT_TRUE(dd);
    EXPECT_EQ(dd.value.ack_stream, 9u);
    EXPECT_EQ(dd.value.ack_offset, 4000u);
    EXPECT_EQ(dd.value.data, d.data);
    EXPECT_FALSE(decode_slep(bytes(w.begin(), w.begin() + 18))); // header cut short
    bytes bad_flag = a;
    bad_flag[0] |= slep_flag::ack_requested; // not on an ACK
    EXPECT_FALSE(decode_slep(bad_flag));
}
