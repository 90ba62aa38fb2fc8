/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

/* libFuzzer target: an emulated modem driven by a script the input spells out. Each
 * step is its own node's burst, another modem's announcement (well-formed, or with a
 * start, air time, mode or source the input picks, NaN and infinities included), or
 * the passing of time. Checks that the modem never throws, never schedules a deadline
 * that is NaN, delivers events in time order no later than asked, and never delivers
 * more bursts than it was told about. */
#include "dl/transmission.h"
#include "fuzz_support.h"
#include "sim/emulated_modem.h"

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>

using namespace gr::hfstack;

namespace {

dl::modem_mode mode(uint8_t x)
{
    static const unsigned rates[] = { 75, 150, 300, 600, 1200, 2400, 4800, 9600 };
    dl::modem_mode m;
    m.data_rate = dl::data_rate_code(rates[x % 8]);
    m.interleaving = (x >> 3) % 3 == 0   ? dl::interleaving_short
                     : (x >> 3) % 3 == 1 ? dl::interleaving_long
                                         : dl::interleaving_none;
    return m;
}

// A burst's delivery: its last piece (a streaming modem hands a burst over in pieces,
// those before the last flagged burst_continues).
bool ends_a_burst(const sim::modem_event& ev)
{
    return ev.type == sim::modem_event::kind::burst && !ev.info.burst_continues;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
    script_reader in{ data, size };
    sim::channel_config channel;
    const uint8_t setup = in.u8();
    if (setup & 1)
        channel.ber = 1e-3;
    if (setup & 2) {
        channel.fading_profile = "poor";
        channel.snr_db = 15;
    }
    if (setup & 4) {
        channel.outage_period_s = 30;
        channel.outage_duration_s = 3;
    }
    sim::radio_config radio;
    if (setup & 8)
        radio = sim::ideal_radio();
    sim::emulated_modem modem(1, radio, channel, !(setup & 16), !(setup & 32));
    sim::emulated_modem peer(2, radio);

    double now = 0;
    uint64_t accepted = 0, delivered = 0;
    for (int step = 0; step < 64 && in.n; ++step) {
        const uint8_t op = in.u8();
        const size_t len = in.u8() * 4;
        switch (op % 4) {
        case 0: // own burst
            modem.transmit(dl::bytes(len, 0x5a), mode(in.u8()), now);
            break;
        case 1: // a peer's well-formed burst
            accepted +=
                modem.hear(peer.transmit(dl::bytes(len, 0xa5), mode(in.u8()), now), now);
            break;
        case 2: { // an announcement with the fields the input chooses
            sim::air_transmission b;
            b.source = in.u8() % 4;
            b.mode = mode(in.u8());
            b.data.assign(len, 0x33);
            b.start = (op & 4) ? in.f64() : now + in.u8() * 0.25 - 30;
            b.air_time_s = (op & 8)
                               ? in.f64()
                               : dl::air_time(dl::default_waveform_timing(b.mode), len);
            accepted += modem.hear(b, now);
            break;
        }
        case 3: // time passes
            now += in.u8() * 0.5;
            break;
        }
        check(!std::isnan(modem.next_deadline()));
        double last = -std::numeric_limits<double>::infinity();
        for (const auto& ev : modem.poll(now)) {
            check(ev.time <= now && ev.time >= last);
            last = ev.time;
            delivered += ends_a_burst(ev);
        }
    }
    for (const auto& ev : modem.poll(std::numeric_limits<double>::max()))
        delivered += ends_a_burst(ev);
    check(delivered <= accepted);
    check(std::isinf(modem.next_deadline()));
    return 0;
}
