/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

/* Two ARDOP host interfaces (net/ardop.h) on nodes 1 and 2 over a simulated STANAG
 * 5066 path (sis_path_support.h), each driven as an ARDOP host would: the commands'
 * answers, sessions called, answered, refused and ended both ways, the session's bytes
 * exactly once in order when the path rejects U_PDUs, and bad host input. */
#include "net/ardop.h"
#include "sis_path_support.h"

#include <gtest/gtest.h>

using namespace gr::hfstack;
using namespace gr::hfstack::net;

namespace {

struct host_view {
    std::string lines; // everything the TNC said on the command connection
    bytes data;        // ARQ payload bytes, concatenated
    std::vector<std::string> tags;
    bytes raw; // the data connection's bytes not yet parsed

    void take(ardop_actions& a)
    {
        lines += a.to_command;
        raw.insert(raw.end(), a.to_data.begin(), a.to_data.end());
        while (raw.size() >= 2) {
            const size_t n = size_t(raw[0]) << 8 | raw[1];
            if (raw.size() < n + 2)
                break;
            tags.emplace_back(raw.begin() + 2, raw.begin() + 5);
            data.insert(data.end(), raw.begin() + 5, raw.begin() + 2 + long(n));
            raw.erase(raw.begin(), raw.begin() + 2 + long(n));
        }
    }
    bool said(const std::string& line) const
    {
        return lines.find(line + "\r") != std::string::npos;
    }
};

struct tnc_pair : sis_path<ardop_tnc> {
    host_view host_a, host_b;

    tnc_pair()
    {
        ardop_config ca, cb;
        ca.stations = { { "BBB1", 2 } };
        cb.stations = { { "AAA1", 1 } };
        ca.slep.incarnation = 1;
        cb.slep.incarnation = 1000;
        ca.slep.keepalive_s = cb.slep.keepalive_s = 0;
        a = std::make_unique<ardop_tnc>(ca);
        b = std::make_unique<ardop_tnc>(cb);
        keep = [this](ardop_tnc& t, ardop_actions& act) {
            (&t == a.get() ? host_a : host_b).take(act);
        };
        bind_both();
    }
    void command(ardop_tnc& t, const std::string& line)
    {
        const std::string l = line + "\r";
        t.on_command_bytes(reinterpret_cast<const uint8_t*>(l.data()), l.size(), now);
        settle(now + 0.001);
    }
    void write(ardop_tnc& t, const bytes& payload, size_t frame = 1000)
    {
        for (size_t at = 0; at < payload.size(); at += frame) {
            const size_t n = std::min(frame, payload.size() - at);
            bytes f{ uint8_t(n >> 8), uint8_t(n & 0xFF) };
            f.insert(f.end(), payload.begin() + long(at), payload.begin() + long(at + n));
            t.on_data_bytes(f.data(), f.size(), now);
        }
        settle(now + 0.001);
    }
    void setup()
    {
        command(*a, "INITIALIZE");
        command(*a, "MYCALL AAA1");
        command(*b, "INITIALIZE");
        command(*b, "MYCALL BBB1");
        command(*b, "LISTEN TRUE");
    }
    void connect()
    {
        command(*a, "ARQCALL BBB1 10");
        settle(now + 5);
        ASSERT_EQ(a->state(), ardop_state::connected) << host_a.lines;
        ASSERT_EQ(b->state(), ardop_state::connected) << host_b.lines;
    }
};

} // namespace

TEST(ardop, commands_answer_as_the_host_interface_says)
{
    tnc_pair p;
    p.command(*p.a, "INITIALIZE");
    p.command(*p.a, "mycall aaa1-0");
    p.command(*p.a, "MYCALL");
    p.command(*p.a, "MYCALL A");
    p.command(*p.a, "STATE");
    p.command(*p.a, "ARQBW 2000FORCED");
    p.command(*p.a, "ARQBW");
    p.command(*p.a, "ARQBW 300MAX");
    p.command(*p.a, "ARQTIMEOUT 10");
    p.command(*p.a, "ARQTIMEOUT 90");
    p.command(*p.a, "LISTEN maybe");
    p.command(*p.a, "GRIDSQUARE JO59jw");
    p.command(*p.a, "DRIVELEVEL 80");
    p.command(*p.a, "DRIVELEVEL");
    p.command(*p.a, "TWOTONETEST");
    p.command(*p.a, "FROBNICATE now");
    p.command(*p.a, "ARQCALL ZZZ9 5");
    p.command(*p.a, std::string(600, 'X'));
    p.command(*p.a, "VERSION");
    const std::string expected = "INITIALIZE\rMYCALL now AAA1\rMYCALL AAA1\r"
                                 "FAULT MYCALL: A is not a callsign\rSTATE DISC\r"
                                 "ARQBW now 2000FORCED\rARQBW 2000FORCED\r";
    EXPECT_EQ(p.host_a.lines.substr(0, expected.size()), expected);
    for (const char* line :
         { "FAULT ARQBW needs 200, 500, 1000 or 2000 with MAX or FORCED",
           "FAULT ARQTIMEOUT needs 30..240 seconds",
           "ARQTIMEOUT now 90",
           "FAULT LISTEN needs TRUE or FALSE",
           "GRIDSQUARE now JO59jw",
           "DRIVELEVEL now 80",
           "DRIVELEVEL 80",
           "FAULT TWOTONETEST is not supported by this TNC (a STANAG 5066 node)",
           "FAULT unknown command FROBNICATE",
           "FAULT no STANAG 5066 address for ZZZ9 (station table)",
           "FAULT command line longer than 512 bytes" })
        EXPECT_TRUE(p.host_a.said(line)) << line << "\n" << p.host_a.lines;
    EXPECT_EQ(p.a->counters().faults, 8u);
}

TEST(ardop, session_both_ways_exactly_once_through_rejections)
{
    tnc_pair p;
    p.p_rejected = 0.2;
    p.p_delivered_rejected = 0.1;
    p.setup();
    p.connect();
    EXPECT_TRUE(p.host_a.said("CONNECTED BBB1 500"));
    EXPECT_TRUE(p.host_a.said("NEWSTATE ISS"));
    EXPECT_NE(
        p.host_b.lines.find("PENDING\rTARGET BBB1\rCONNECTED AAA1 500\rNEWSTATE IRS\r"),
        std::string::npos)
        << p.host_b.lines;
    const bytes there = pattern(20000, 1), back = pattern(7000, 2);
    p.write(*p.a, there);
    p.write(*p.b, back, 333);
    p.settle(p.now + 600);
    EXPECT_EQ(p.host_b.data, there);
    EXPECT_EQ(p.host_a.data, back);
    for (const auto& t : p.host_a.tags)
        EXPECT_EQ(t, "ARQ");
    EXPECT_TRUE(p.host_a.said("BUFFER 0"));
    // The caller ends it: both hosts hear DISCONNECTED, the far one after its delay.
    p.command(*p.a, "DISCONNECT");
    p.settle(p.now + 60);
    EXPECT_EQ(p.a->state(), ardop_state::disc);
    EXPECT_EQ(p.b->state(), ardop_state::disc);
    EXPECT_TRUE(p.host_a.said("DISCONNECTED"));
    EXPECT_TRUE(p.host_b.said("DISCONNECTED"));

    // A second session, ended by the called side this time.
    p.host_a = host_view{};
    p.host_b = host_view{};
    p.connect();
    p.write(*p.b, back);
    p.write(*p.a, there);
    p.settle(p.now + 600);
    EXPECT_EQ(p.host_a.data, back);
    EXPECT_EQ(p.host_b.data, there);
    p.command(*p.b, "DISCONNECT");
    p.settle(p.now + 60);
    EXPECT_EQ(p.a->state(), ardop_state::disc);
    EXPECT_EQ(p.b->state(), ardop_state::disc);
}

TEST(ardop, refusals_and_aborts)
{
    tnc_pair p;
    p.setup();
    p.command(*p.b, "LISTEN FALSE");
    p.command(*p.a, "ARQCALL BBB1 10");
    p.settle(p.now + 5);
    EXPECT_TRUE(p.host_a.said("STATUS CONNECT TO BBB1 FAILED!")) << p.host_a.lines;
    EXPECT_EQ(p.a->state(), ardop_state::disc);
    EXPECT_EQ(p.b->counters().sessions_refused, 1u);

    p.command(*p.b, "LISTEN TRUE");
    p.command(*p.b, "MYCALL CCC1"); // BBB1 is no longer here
    p.command(*p.a, "ARQCALL BBB1 10");
    p.settle(p.now + 5);
    EXPECT_EQ(p.a->state(), ardop_state::disc);
    EXPECT_EQ(p.a->counters().sessions_failed, 2u);

    // A host that goes away mid-session: the far host hears DISCONNECTED.
    p.command(*p.b, "MYCALL BBB1");
    p.connect();
    p.write(*p.a, pattern(3000, 3));
    p.a->on_host_closed(p.now);
    p.settle(p.now + 60);
    EXPECT_EQ(p.b->state(), ardop_state::disc);
    EXPECT_TRUE(p.host_b.said("DISCONNECTED"));

    // ABORT at once; the far side hears of it.
    p.command(*p.a, "MYCALL AAA1");
    p.connect();
    p.command(*p.b, "ABORT");
    p.settle(p.now + 60);
    EXPECT_EQ(p.a->state(), ardop_state::disc);
    EXPECT_EQ(p.b->state(), ardop_state::disc);
}

TEST(ardop, an_outage_longer_than_arqtimeout_with_bytes_in_flight_is_not_idle)
{
    // The node holds the caller's bytes unconfirmed for 100 s (an outage, then the
    // link's recovery), beyond ARQTIMEOUT 30: the session is waiting on the node's ARQ,
    // not idle, and goes on; the bytes and the answer arrive and it ends normally.
    tnc_pair p;
    p.setup();
    p.command(*p.a, "ARQTIMEOUT 30");
    p.command(*p.b, "ARQTIMEOUT 120"); // it waits, with nothing of its own in flight
    p.connect();
    p.holding = true;
    const bytes message = pattern(10000, 4);
    p.write(*p.a, message);
    p.settle(p.now + 100);
    EXPECT_EQ(p.a->state(), ardop_state::connected) << p.host_a.lines;
    EXPECT_EQ(p.host_a.lines.find("ARQ TIMEOUT"), std::string::npos) << p.host_a.lines;
    p.release_held();
    p.settle(p.now + 5);
    EXPECT_EQ(p.host_b.data, message);
    p.write(*p.b, pattern(3, 5));
    p.settle(p.now + 5);
    EXPECT_EQ(p.host_a.data, pattern(3, 5));
    p.command(*p.a, "DISCONNECT");
    p.settle(p.now + 10);
    EXPECT_EQ(p.a->state(), ardop_state::disc);
    EXPECT_EQ(p.b->state(), ardop_state::disc);
    EXPECT_EQ(p.host_a.lines.find("ARQ TIMEOUT"), std::string::npos) << p.host_a.lines;

    // With nothing in flight and nothing heard, ARQTIMEOUT still ends a session.
    p.host_a = host_view{};
    p.connect();
    p.settle(p.now + 31);
    EXPECT_TRUE(p.host_a.said("STATUS ARQ TIMEOUT FROM PROTOCOL STATE: ISS"))
        << p.host_a.lines;
}

TEST(ardop, a_host_that_does_not_read_holds_the_far_sender_and_busy_is_reported)
{
    tnc_pair p;
    p.setup();
    p.connect();
    // B's host stops reading: A's bytes stay in SLEP, whose window (256 KiB) and send
    // buffer (256 KiB) stop A's sender; nothing more reaches B's host until it reads
    // again, then all of it once.
    const size_t before = p.host_b.data.size();
    p.b->set_host_reading(false, p.now);
    const bytes big = pattern(700000, 6);
    for (size_t at = 0; at < big.size(); at += 60000) {
        p.write(*p.a,
                bytes(big.begin() + long(at),
                      big.begin() + long(std::min(big.size(), at + 60000))));
        p.settle(p.now + 10);
    }
    EXPECT_EQ(p.host_b.data.size(), before);
    EXPECT_GT(p.a->pending(), 0u); // A's host bytes wait: the far window is full
    p.b->set_host_reading(true, p.now);
    p.settle(p.now + 60);
    EXPECT_EQ(p.host_b.data, big);
    EXPECT_EQ(p.a->pending(), 0u);

    // The node's carrier sense, each change once.
    p.b->set_channel_busy(true);
    p.b->set_channel_busy(true);
    p.b->set_channel_busy(false);
    p.settle(p.now + 1);
    EXPECT_NE(p.host_b.lines.find("BUSY TRUE\rBUSY FALSE\r"), std::string::npos);
    EXPECT_EQ(p.b->counters().busy_reports, 2u);
}

TEST(ardop, bad_data_frames_fault_and_the_session_goes_on)
{
    tnc_pair p;
    p.setup();
    p.write(*p.a, bytes{ 1, 2, 3 }); // not connected
    EXPECT_TRUE(p.host_a.said("FAULT data while not connected, 3 bytes dropped"));
    p.connect();
    const bytes wrong{ 0x03, 0xE8, 'a', 'b', 'c' }; // says 1000 bytes, brings 3
    p.a->on_data_bytes(wrong.data(), wrong.size(), p.now);
    p.settle(p.now + 30);
    EXPECT_TRUE(p.host_a.said("FAULT data frame incomplete: 3 of 1000 bytes, dropped"))
        << p.host_a.lines;
    const bytes empty{ 0, 0 };
    p.a->on_data_bytes(empty.data(), empty.size(), p.now);
    p.command(*p.a, "NOSUCHTHING");
    const bytes good = pattern(1500, 4);
    p.write(*p.a, good);
    p.settle(p.now + 60);
    EXPECT_EQ(p.host_b.data, good);
    EXPECT_EQ(p.a->state(), ardop_state::connected);
    EXPECT_TRUE(p.host_a.said("FAULT empty data frame"));
}

TEST(ardop, fec_frames_go_out_as_broadcast_and_come_in_tagged)
{
    tnc_pair p;
    p.setup();
    p.command(*p.a, "PROTOCOLMODE FEC");
    p.command(*p.b, "PROTOCOLMODE FEC");
    p.command(*p.a, "FECSEND TRUE");
    const bytes frame = pattern(300, 5);
    p.write(*p.a, frame);
    p.settle(p.now + 10);
    EXPECT_EQ(p.host_b.data, frame);
    ASSERT_EQ(p.host_b.tags, std::vector<std::string>{ "FEC" });
    EXPECT_EQ(p.a->counters().fec_frames_sent, 1u);
    // Outside FEC mode broadcast frames are not handed over, and ARQCALL is refused in
    // it.
    p.command(*p.b, "PROTOCOLMODE ARQ");
    p.write(*p.a, frame);
    p.command(*p.a, "ARQCALL BBB1 5");
    p.settle(p.now + 10);
    EXPECT_EQ(p.host_b.tags.size(), 1u);
    EXPECT_TRUE(p.host_a.said("FAULT ARQCALL in PROTOCOLMODE FEC"));
}
