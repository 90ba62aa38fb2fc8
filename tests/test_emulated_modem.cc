/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

// The emulated modem (one node's modem on a shared emulated channel): the timing of its
// own bursts from the PHY timing model, what it hears (carrier, delivery, latency),
// collisions, half duplex, queueing, errors and outages, each against hand-computed
// times.
#include "dl/transmission.h"
#include "sim/emulated_modem.h"

#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>
#include <vector>

using namespace gr::hfstack;
using sim::emulated_modem;
using sim::modem_event;

namespace {

dl::modem_mode mode_2400s()
{
    dl::modem_mode m;
    m.data_rate = dl::data_rate_code(2400);
    m.interleaving = dl::interleaving_short;
    return m;
}

dl::bytes payload(size_t n)
{
    dl::bytes b(n);
    for (size_t i = 0; i < n; ++i)
        b[i] = uint8_t(i * 7 + 3);
    return b;
}

double air_time_of(size_t bytes)
{
    return dl::air_time(dl::default_waveform_timing(mode_2400s()), bytes);
}

std::vector<modem_event> statuses(const std::vector<modem_event>& ev)
{
    std::vector<modem_event> s;
    for (auto& e : ev)
        if (e.type == modem_event::kind::status)
            s.push_back(e);
    return s;
}

// Deliveries as they come: whole bursts, or pieces of one (burst_continues).
std::vector<modem_event> pieces(const std::vector<modem_event>& ev)
{
    std::vector<modem_event> s;
    for (auto& e : ev)
        if (e.type == modem_event::kind::burst)
            s.push_back(e);
    return s;
}

// Whole bursts: each one's pieces joined, at its last piece's time and with its
// information (receptions' pieces do not interleave where this is used).
std::vector<modem_event> bursts(const std::vector<modem_event>& ev)
{
    std::vector<modem_event> s;
    dl::bytes so_far;
    for (auto& e : pieces(ev)) {
        so_far.insert(so_far.end(), e.data.begin(), e.data.end());
        if (e.info.burst_continues)
            continue;
        s.push_back(e);
        s.back().data = std::move(so_far);
        so_far.clear();
    }
    return s;
}

} // namespace

TEST(EmulatedModem, OwnBurstStartsAfterKeyUpAndLastsItsAirTime)
{
    sim::radio_config radio; // key_up 0.05
    emulated_modem m(1, radio);
    const auto b = m.transmit(payload(500), mode_2400s(), 10.0);
    EXPECT_EQ(b.source, 1u);
    EXPECT_DOUBLE_EQ(b.start, 10.05);
    EXPECT_DOUBLE_EQ(b.air_time_s, air_time_of(500));
    EXPECT_GT(b.air_time_s, 500 * 8 / 2400.0); // preamble and flush on top of the data
    EXPECT_DOUBLE_EQ(m.next_deadline(), 10.05);
    EXPECT_TRUE(m.poll(10.04).empty());
    auto ev = m.poll(10.05);
    ASSERT_EQ(ev.size(), 1u);
    EXPECT_EQ(ev[0].status, dl::phy_event::tx_started);
    ev = m.poll(1e9);
    ASSERT_EQ(ev.size(), 1u);
    EXPECT_EQ(ev[0].status, dl::phy_event::tx_finished);
    EXPECT_DOUBLE_EQ(ev[0].time, 10.05 + air_time_of(500));
    EXPECT_TRUE(std::isinf(m.next_deadline()));
}

TEST(EmulatedModem, BurstQueuedBehindOneOnTheAir)
{
    emulated_modem m(1);
    const auto first = m.transmit(payload(100), mode_2400s(), 0.0);
    const auto second = m.transmit(payload(100), mode_2400s(), 0.1);
    EXPECT_DOUBLE_EQ(second.start, first.start + first.air_time_s);
}

TEST(EmulatedModem, HearsAnotherModemsBurst)
{
    sim::radio_config radio;
    sim::channel_config clear;
    clear.snr_db = 17.0;
    emulated_modem tx(1, radio), rx(2, radio, clear);
    const auto b = tx.transmit(payload(300), mode_2400s(), 5.0);
    rx.hear(b, 5.0);
    const double end = b.start + b.air_time_s;
    const auto ev = rx.poll(1e9);
    const auto s = statuses(ev);
    ASSERT_EQ(s.size(), 2u);
    EXPECT_EQ(s[0].status, dl::phy_event::carrier_on);
    EXPECT_DOUBLE_EQ(s[0].time, b.start + radio.agc_settle_s + radio.carrier_detect_s);
    EXPECT_EQ(s[1].status, dl::phy_event::carrier_off);
    EXPECT_DOUBLE_EQ(s[1].time, end);
    const auto r = bursts(ev);
    ASSERT_EQ(r.size(), 1u);
    EXPECT_DOUBLE_EQ(r[0].time, end + radio.rx_latency_s);
    EXPECT_EQ(r[0].data, payload(300));
    ASSERT_TRUE(r[0].info.mode.has_value());
    EXPECT_EQ(*r[0].info.mode, mode_2400s());
    EXPECT_DOUBLE_EQ(r[0].info.snr_db, 17.0);
    EXPECT_EQ(rx.stats().bursts_delivered, 1u);
}

TEST(EmulatedModem, IgnoresItsOwnBurst)
{
    emulated_modem m(1);
    const auto b = m.transmit(payload(10), mode_2400s(), 0.0);
    m.hear(b, 0.0);
    EXPECT_TRUE(bursts(m.poll(1e9)).empty());
    EXPECT_EQ(m.stats().bursts_heard, 0u);
}

TEST(EmulatedModem, OverlappingReceptionsCollide)
{
    emulated_modem a(1), b(2), rx(3);
    const auto x = a.transmit(payload(200), mode_2400s(), 0.0);
    const auto y = b.transmit(payload(200), mode_2400s(), 0.3);
    rx.hear(x, 0.0);
    rx.hear(y, 0.3);
    const auto ev = rx.poll(1e9);
    EXPECT_TRUE(bursts(ev).empty());
    EXPECT_EQ(rx.stats().collisions, 2u);
    // Carrier stays on from the first detection to the last end: one on, one off.
    const auto s = statuses(ev);
    ASSERT_EQ(s.size(), 2u);
    EXPECT_EQ(s[0].status, dl::phy_event::carrier_on);
    EXPECT_EQ(s[1].status, dl::phy_event::carrier_off);
    EXPECT_DOUBLE_EQ(s[1].time, y.start + y.air_time_s);
}

TEST(EmulatedModem, TouchingReceptionsDoNotCollide)
{
    sim::radio_config radio = sim::ideal_radio();
    emulated_modem a(1, radio), b(2, radio), rx(3, radio);
    const auto x = a.transmit(payload(200), mode_2400s(), 0.0);
    const auto y = b.transmit(payload(200), mode_2400s(), x.air_time_s);
    rx.hear(x, 0.0);
    rx.hear(y, y.start);
    EXPECT_EQ(bursts(rx.poll(1e9)).size(), 2u);
}

TEST(EmulatedModem, WithoutCollisionsOverlapsAreDelivered)
{
    emulated_modem a(1), b(2),
        rx(3, sim::radio_config(), sim::channel_config(), true, false);
    rx.hear(a.transmit(payload(200), mode_2400s(), 0.0), 0.0);
    rx.hear(b.transmit(payload(200), mode_2400s(), 0.3), 0.3);
    EXPECT_EQ(bursts(rx.poll(1e9)).size(), 2u);
}

TEST(EmulatedModem, OwnTransmissionDestroysReceptionHalfDuplex)
{
    for (const bool half_duplex : { true, false }) {
        emulated_modem far(1),
            near(2, sim::radio_config(), sim::channel_config(), half_duplex);
        // Heard first, then the near modem keys up in the middle of it.
        near.hear(far.transmit(payload(400), mode_2400s(), 0.0), 0.0);
        near.transmit(payload(10), mode_2400s(), 0.5);
        EXPECT_EQ(bursts(near.poll(1e9)).size(), half_duplex ? 0u : 1u);
        // Transmitting first, then a burst arrives while it is on the air or unkeying.
        emulated_modem far2(3),
            near2(4, sim::radio_config(), sim::channel_config(), half_duplex);
        const auto own = near2.transmit(payload(50), mode_2400s(), 0.0);
        const double unkeyed = own.start + own.air_time_s + sim::radio_config().unkey_s;
        near2.hear(far2.transmit(payload(50), mode_2400s(), unkeyed - 0.06),
                   unkeyed - 0.06);
        EXPECT_EQ(bursts(near2.poll(1e9)).size(), half_duplex ? 0u : 1u) << half_duplex;
    }
}

TEST(EmulatedModem, ReceptionAfterUnkeyingIsDelivered)
{
    emulated_modem far(1), near(2);
    const auto own = near.transmit(payload(50), mode_2400s(), 0.0);
    const double unkeyed = own.start + own.air_time_s + sim::radio_config().unkey_s;
    // far keys up key_up_s after now, so a burst produced at `unkeyed - key_up_s`
    // touches.
    const double t = unkeyed - sim::radio_config().key_up_s;
    near.hear(far.transmit(payload(50), mode_2400s(), t), t);
    EXPECT_EQ(bursts(near.poll(1e9)).size(), 1u);
}

TEST(EmulatedModem, BitErrorsFollowTheSeedAndThePath)
{
    sim::channel_config noisy;
    noisy.ber = 0.01;
    noisy.seed = 42;
    auto received = [&](uint64_t source, uint64_t seed) {
        sim::channel_config c = noisy;
        c.seed = seed;
        emulated_modem tx(source), rx(9, sim::radio_config(), c);
        rx.hear(tx.transmit(payload(1000), mode_2400s(), 0.0), 0.0);
        const auto r = bursts(rx.poll(1e9));
        EXPECT_EQ(r.size(), 1u);
        size_t flipped = 0;
        const dl::bytes sent = payload(1000);
        for (size_t i = 0; i < sent.size(); ++i)
            flipped += __builtin_popcount(unsigned(sent[i] ^ r[0].data[i]));
        EXPECT_EQ(flipped, rx.stats().bits_flipped);
        return r[0].data;
    };
    const dl::bytes a = received(1, 42);
    EXPECT_NE(a, payload(1000));
    EXPECT_EQ(received(1, 42), a); // same seed, same path: same errors
    EXPECT_NE(received(2, 42), a); // another transmitter: another path
    EXPECT_NE(received(1, 43), a);
}

TEST(EmulatedModem, BurstInAnOutageIsLostWithoutCarrier)
{
    sim::channel_config c;
    c.outage_period_s = 100;
    c.outage_duration_s = 10;
    emulated_modem tx(1), rx(2, sim::radio_config(), c);
    rx.hear(tx.transmit(payload(100), mode_2400s(), 1.0), 1.0);
    EXPECT_TRUE(rx.poll(1e9).empty());
    EXPECT_EQ(rx.stats().lost_outage, 1u);
    rx.hear(tx.transmit(payload(100), mode_2400s(), 20.0), 20.0);
    EXPECT_EQ(bursts(rx.poll(1e9)).size(), 1u);
}

TEST(EmulatedModem, PropagationDelaysTheReception)
{
    sim::channel_config c;
    c.propagation_s = 0.5;
    sim::radio_config radio;
    emulated_modem tx(1, radio), rx(2, radio, c);
    const auto b = tx.transmit(payload(100), mode_2400s(), 0.0);
    rx.hear(b, 0.0);
    const auto r = bursts(rx.poll(1e9));
    ASSERT_EQ(r.size(), 1u);
    EXPECT_DOUBLE_EQ(r[0].time, b.start + 0.5 + b.air_time_s + radio.rx_latency_s);
}

TEST(EmulatedModem, RefusesBadConfiguration)
{
    sim::radio_config r;
    r.carrier_detect_s = -1;
    EXPECT_THROW(emulated_modem(1, r), std::invalid_argument);
    sim::channel_config c;
    c.ber = 2;
    EXPECT_THROW(emulated_modem(1, sim::radio_config(), c), std::invalid_argument);
}

TEST(EmulatedModem, RefusesAnnouncementsNoModemMakes)
{
    emulated_modem tx(1), rx(2);
    const auto good = tx.transmit(payload(100), mode_2400s(), 100.0);
    auto bad = good;
    bad.start = std::nan("");
    EXPECT_FALSE(rx.hear(bad, 100.0));
    bad = good;
    bad.air_time_s = 1e300; // not the timing model's air time for 100 bytes
    EXPECT_FALSE(rx.hear(bad, 100.0));
    bad = good;
    bad.start = 100.0 + emulated_modem::max_announce_ahead_s + 1; // another clock
    EXPECT_FALSE(rx.hear(bad, 100.0));
    bad.start = 100.0 - emulated_modem::late_hearing_s - 1;
    EXPECT_FALSE(rx.hear(bad, 100.0));
    EXPECT_EQ(rx.stats().refused, 4u);
    EXPECT_TRUE(rx.hear(good, 100.0));
    // A path's bursts come in order: one starting before the last heard is refused.
    bad = good;
    bad.start -= 1;
    EXPECT_FALSE(rx.hear(bad, 100.0));
    EXPECT_EQ(bursts(rx.poll(1e9)).size(), 1u);
    EXPECT_TRUE(std::isinf(rx.next_deadline())); // nothing refused was scheduled
}

TEST(EmulatedModem, LateAnnouncementStillCollidesWithADeliveredReception)
{
    sim::radio_config radio = sim::ideal_radio();
    emulated_modem a(1, radio), b(2, radio), rx(3, radio);
    const auto x = a.transmit(payload(200), mode_2400s(), 0.0);
    rx.hear(x, 0.0);
    EXPECT_EQ(bursts(rx.poll(1e9)).size(), 1u); // delivered before the overlap is known
    // b's burst overlapped x on the air, but its announcement comes after x's delivery.
    const auto y = b.transmit(payload(200), mode_2400s(), 0.5);
    EXPECT_TRUE(rx.hear(y, x.start + x.air_time_s + 1.0));
    EXPECT_TRUE(bursts(rx.poll(1e9)).empty());
    EXPECT_EQ(rx.stats().collisions, 1u);
}

TEST(EmulatedModem, LateAnnouncementStillMeetsAnOwnTransmission)
{
    // The receiver's own burst, then a later burst heard first (which must not make it
    // forget its own), then an earlier one announced late that overlapped its own.
    emulated_modem early(1), later(2), rx(3);
    const auto own = rx.transmit(payload(10), mode_2400s(), 1.0);
    const double own_end = own.start + own.air_time_s;
    const auto l = later.transmit(payload(10), mode_2400s(), own_end + 5.0);
    EXPECT_TRUE(rx.hear(l, own_end + 5.0));
    const auto e = early.transmit(payload(10), mode_2400s(), 0.5); // on air during own
    EXPECT_TRUE(rx.hear(e, own_end + 5.0));
    const auto r = bursts(rx.poll(1e9));
    ASSERT_EQ(r.size(), 1u);
    EXPECT_EQ(r[0].time, l.start + l.air_time_s + sim::radio_config().rx_latency_s);
}

TEST(EmulatedModem, BurstWhosePreambleIsShorterThanAgcSettlingIsLost)
{
    sim::radio_config slow_agc;
    slow_agc.agc_settle_s = 1.0; // longer than 2400S's 0.6 s preamble
    emulated_modem tx(1), rx(2, slow_agc);
    rx.hear(tx.transmit(payload(300), mode_2400s(), 0.0), 0.0);
    const auto ev = rx.poll(1e9);
    EXPECT_TRUE(bursts(ev).empty());
    EXPECT_EQ(rx.stats().lost_acquisition, 1u);
    EXPECT_EQ(rx.stats().collisions, 0u);
    EXPECT_EQ(statuses(ev).size(), 2u); // the carrier is still seen
}

TEST(EmulatedModem, NoCarrierForABurstShorterThanDetection)
{
    sim::radio_config radio;
    radio.carrier_detect_s = 10.0;
    emulated_modem tx(1), rx(2, radio);
    rx.hear(tx.transmit(payload(10), mode_2400s(), 0.0), 0.0);
    const auto ev = rx.poll(1e9);
    EXPECT_TRUE(statuses(ev).empty());
    EXPECT_EQ(bursts(ev).size(), 1u);
}

TEST(EmulatedModem, FadingPathDeliversBurstsThatEndOutOfStartOrder)
{
    // A long burst and a short one starting inside it, from one source (announcements
    // no single modem makes, but the emulator must not fail on them): the short one
    // ends first, so deliveries come out of start order. The path's fading errors run
    // forward in time only, so they are drawn as the bursts are heard.
    sim::channel_config fading;
    fading.fading_profile = "poor";
    fading.snr_db = 15;
    sim::radio_config radio = sim::ideal_radio();
    radio.deliver_per_block = false; // the two receptions' pieces would interleave
    emulated_modem rx(2, radio, fading, true, /*collisions=*/false);
    auto burst = [](double start, size_t bytes) {
        sim::air_transmission b;
        b.source = 1;
        b.mode = mode_2400s();
        b.start = start;
        b.data = payload(bytes);
        b.air_time_s = dl::air_time(dl::default_waveform_timing(b.mode), bytes);
        return b;
    };
    EXPECT_TRUE(rx.hear(burst(100.0, 3000), 100.0));
    EXPECT_TRUE(rx.hear(burst(101.0, 10), 100.0));
    const auto r = bursts(rx.poll(1e9));
    ASSERT_EQ(r.size(), 2u);
    EXPECT_EQ(r[0].data.size(), 10u);
    EXPECT_EQ(r[1].data.size(), 3000u);
}

TEST(EmulatedModem, FadingPathAcceptsABurstStartingInThePreviousOnesPreamble)
{
    // 2400L: a 4.8 s preamble. A second burst from the same source starting 1 s into the
    // first (no single modem does that) must not fail the path's forward-only fading
    // process, whose preamble test would reach back before the first burst's data.
    sim::channel_config fading;
    fading.fading_profile = "poor";
    fading.snr_db = 30;
    sim::radio_config radio = sim::ideal_radio();
    radio.deliver_per_block = false;
    emulated_modem rx(2, radio, fading, true, /*collisions=*/false);
    auto burst = [](double start, size_t bytes) {
        sim::air_transmission b;
        b.source = 1;
        b.mode = dl::modem_mode{ dl::rate_2400, dl::interleaving_long };
        b.start = start;
        b.data = payload(bytes);
        b.air_time_s = dl::air_time(dl::default_waveform_timing(b.mode), bytes);
        return b;
    };
    EXPECT_TRUE(rx.hear(burst(100.0, 3000), 100.0));
    EXPECT_NO_THROW(EXPECT_TRUE(rx.hear(burst(101.0, 10), 100.0)));
    EXPECT_LE(bursts(rx.poll(1e9)).size(), 2u);
}

TEST(EmulatorSettings, ParseEveryOptionAndNameTheBadOnes)
{
    const auto e =
        sim::parse_emulator_settings("key_up_s=0.2;collisions=0;half_duplex=false;"
                                     "propagation_s=0.01;emulator_id=1002");
    EXPECT_DOUBLE_EQ(e.radio.key_up_s, 0.2);
    EXPECT_FALSE(e.collisions);
    EXPECT_FALSE(e.half_duplex);
    EXPECT_DOUBLE_EQ(e.propagation_s, 0.01);
    EXPECT_EQ(e.emulator_id, 1002u);
    EXPECT_EQ(sim::parse_emulator_settings("").emulator_id, 0u);
    EXPECT_THROW(sim::parse_emulator_settings("emulator_id=1.5"), std::invalid_argument);
    try {
        sim::parse_emulator_settings("keyup_s=1");
        FAIL() << "accepted an unknown option";
    } catch (const std::invalid_argument& err) {
        EXPECT_NE(std::string(err.what()).find("emulator_id"), std::string::npos);
    }
}

TEST(EmulatedModem, AStreamingModemDeliversEachBlocksBytesAfterThatBlock)
{
    sim::radio_config radio; // deliver_per_block by default
    emulated_modem tx(1, radio), rx(2, radio);
    // 1000 bytes at 2400S: 180 bytes per 0.6 s block after a 0.6 s preamble; 8176 bits
    // in six blocks, the sixth holding the last 100 bytes with the EOM and flush.
    const auto b = tx.transmit(payload(1000), mode_2400s(), 0.0);
    rx.hear(b, 0.0);
    const auto r = pieces(rx.poll(1e9));
    ASSERT_EQ(r.size(), 6u);
    dl::bytes joined;
    for (size_t i = 0; i < r.size(); ++i) {
        const bool last = i + 1 == r.size();
        EXPECT_EQ(r[i].info.burst_continues, !last) << i;
        EXPECT_FALSE(r[i].info.bytes_bad) << i;
        if (!last) {
            EXPECT_EQ(r[i].data.size(), 180u) << i;
            EXPECT_NEAR(
                r[i].time, b.start + 0.6 + 0.6 * double(i + 1) + radio.rx_latency_s, 1e-9)
                << i;
        }
        joined.insert(joined.end(), r[i].data.begin(), r[i].data.end());
    }
    EXPECT_DOUBLE_EQ(r.back().time, b.start + b.air_time_s + radio.rx_latency_s);
    EXPECT_EQ(joined, payload(1000));
    EXPECT_EQ(rx.stats().bursts_delivered, 1u);

    // Delivery at the burst's end: one piece.
    radio.deliver_per_block = false;
    emulated_modem whole(3, radio);
    whole.hear(b, 0.0);
    const auto w = pieces(whole.poll(1e9));
    ASSERT_EQ(w.size(), 1u);
    EXPECT_FALSE(w[0].info.burst_continues);
    EXPECT_EQ(w[0].data, payload(1000));
    EXPECT_EQ(sim::parse_emulator_settings("deliver_per_block=0").radio.deliver_per_block,
              false);
}

TEST(EmulatedModem, ABurstCutAfterSomePiecesEndsWithAnEmptyBadPiece)
{
    sim::radio_config radio;
    emulated_modem a(1, radio), c(3, radio), rx(2, radio);
    const auto long_one = a.transmit(payload(1000), mode_2400s(), 0.0);
    rx.hear(long_one, 0.0);
    // Two pieces are out when another station keys up over the burst's end.
    auto first = pieces(rx.poll(long_one.start + 1.9));
    ASSERT_EQ(first.size(), 2u);
    const auto other = c.transmit(payload(50), mode_2400s(), long_one.start + 3.0);
    rx.hear(other, long_one.start + 3.0);
    const auto rest = pieces(rx.poll(1e9));
    ASSERT_EQ(rest.size(), 1u); // the cut burst's end; the other one is lost too
    EXPECT_TRUE(rest[0].data.empty());
    EXPECT_TRUE(rest[0].info.bytes_bad);
    EXPECT_FALSE(rest[0].info.burst_continues);
    EXPECT_EQ(rx.stats().collisions, 2u);
    EXPECT_EQ(rx.stats().bursts_delivered, 0u);
}

TEST(EmulatedModem, FadingPathHearsTwoAnnouncementsWithOneStart)
{
    // A fuzzer's input (fuzz/seeds/emulated_modem/two_announcements_with_one_start): a
    // fading path without half duplex or collisions, then two announcements from one
    // source with the same start and mode. The second's errors ended in
    // std::invalid_argument from the path's fading process.
    sim::channel_config fading;
    fading.fading_profile = "poor";
    fading.snr_db = 15;
    emulated_modem rx(1,
                      sim::radio_config(),
                      fading,
                      /*half_duplex=*/false,
                      /*collisions=*/false);
    emulated_modem peer(2);
    const dl::modem_mode m75s{ dl::data_rate_code(75), dl::interleaving_short };
    rx.transmit({}, m75s, 0.0);
    const double now = 100.5;
    rx.poll(now);
    EXPECT_TRUE(rx.hear(
        peer.transmit(dl::bytes(804, 0xa5),
                      dl::modem_mode{ dl::data_rate_code(300), dl::interleaving_short },
                      now),
        now));
    sim::air_transmission b;
    b.source = 0;
    b.mode = m75s;
    b.data.assign(244, 0x33);
    b.start = now - 30;
    b.air_time_s = dl::air_time(dl::default_waveform_timing(b.mode), b.data.size());
    EXPECT_NO_THROW(EXPECT_TRUE(rx.hear(b, now)));
    EXPECT_NO_THROW(EXPECT_TRUE(rx.hear(b, now)));
    EXPECT_LE(bursts(rx.poll(1e9)).size(), 3u);
}
