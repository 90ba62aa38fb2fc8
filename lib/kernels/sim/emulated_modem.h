/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

/* One node's modem on an emulated shared HF channel: the link-level model of the
 * modem contract (DESIGN.md) for a real-time block (modem_emulator), where every node
 * has its own modem and the modems tell each other what they put on the air.
 *
 *   - transmit(): the node's burst goes on the air radio.key_up_s after `now` (after the
 *     modem's previous burst if that is still on the air) for the PHY timing model's
 *     air time of its mode; tx_started / tx_finished come at its start and end. The
 *     returned air_transmission is what the other modems must hear().
 *   - hear(): another modem's burst reaches this one over the path from that modem
 *     (channel_config, one model per source, its seed derived from the source): lost
 *     in an outage; destroyed by another reception it overlaps (collision, both lost)
 *     or by this modem's own transmission from keying up to radio.unkey_s after it
 *     (half duplex); lost if its preamble is shorter than the AGC settling time or,
 *     with fading, the modem misses it (channel_model::receive).
 *     carrier_on agc_settle_s + carrier_detect_s after its start (nested over
 *     overlapping receptions), carrier_off at its end, and the bytes, corrupted by the
 *     path's error model, rx_latency_s after its end; with radio.deliver_per_block in
 *     pieces, rx_latency_s after each interleaver block that completes some (the
 *     pieces before the last flagged burst_continues). A burst destroyed after some of
 *     its pieces were delivered ends with an empty piece flagged bytes_bad.
 *
 * The rules are virtual_network's (virtual_network.h), seen from one receiver, so an
 * application tested against modem_emulator meets the simulator's air, with two
 * differences that real time imposes: a burst the node hands over while the previous
 * one is still on the air waits for it (as a modem's queue does; the simulator keys it at
 * once), and a burst announced only after an overlapping reception was delivered
 * destroys itself alone (the delivery cannot be taken back). No clock, thread or
 * socket: every call takes `now`. */
#ifndef HFSTACK_KERNELS_SIM_EMULATED_MODEM_H
#define HFSTACK_KERNELS_SIM_EMULATED_MODEM_H

#include "channel_model.h"
#include "dl/node_engine.h"
#include "virtual_network.h"

#include <cstdint>
#include <limits>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace gr {
namespace hfstack {
namespace sim {

// A transmission as the emulated modems tell each other about it.
struct air_transmission {
    uint64_t source = 0; // the transmitting modem's id
    double start = 0;    // on the air from (protocol time)
    double air_time_s = 0;
    dl::modem_mode mode;
    unsigned s5069_bandwidth_khz =
        0; // mode is a STANAG 5069 WN there (dl/wideband_modes.h)
    dl::bytes data;
};

struct modem_event {
    enum class kind : uint8_t { status, burst };
    kind type = kind::status;
    double time = 0;
    dl::phy_event status = dl::phy_event::carrier_on; // kind::status
    dl::bytes data;                                   // kind::burst, errors applied
    dl::burst_info info;                              // kind::burst
    unsigned s5069_bandwidth_khz = 0;                 // kind::burst: of info.mode
};

struct emulated_modem_stats {
    uint64_t transmissions = 0;
    double air_time_s = 0;
    uint64_t bursts_heard = 0; // hear() calls
    uint64_t bursts_delivered = 0;
    uint64_t collisions =
        0; // receptions destroyed by overlap (own transmission included)
    uint64_t lost_outage = 0;
    uint64_t lost_acquisition = 0; // preamble shorter than AGC settling, or missed in a
                                   // fade (channel_model::receive)
    uint64_t bits_flipped = 0;
    uint64_t refused = 0; // announcements hear() refused
};

// The radio settings a modem_emulator block takes as text.
struct emulator_settings {
    radio_config radio;
    bool half_duplex = true;
    bool collisions = true;
    double propagation_s = 0;
    // Identity on the shared channel (and part of its error seeds); 0: the block numbers
    // its emulators 1, 2, ... within the process. Emulators in different processes
    // sharing one channel need ids of their own.
    uint64_t emulator_id = 0;
};
// "key_up_s=0.1;collisions=0": key_up_s, unkey_s, agc_settle_s, carrier_detect_s,
// rx_latency_s, propagation_s (seconds), half_duplex, collisions (true/false, 1/0),
// emulator_id (a whole number).
// Throws std::invalid_argument naming an unknown option or a value that does not parse.
emulator_settings parse_emulator_settings(const std::string& assignments);

class emulated_modem
{
public:
    // Throws std::invalid_argument for a negative or non-finite radio time or a channel
    // configuration validate() refuses.
    emulated_modem(uint64_t id,
                   radio_config radio = radio_config(),
                   channel_config channel = channel_config(),
                   bool half_duplex = true,
                   bool collisions = true);

    uint64_t id() const { return d_id; }

    // Puts `data` on the air in `mode` (a STANAG 5069 WN at s5069_bandwidth_khz unless 0)
    // at now + key_up (or when the previous burst ends).
    air_transmission transmit(dl::bytes data,
                              dl::modem_mode mode,
                              double now,
                              unsigned s5069_bandwidth_khz = 0);
    // Another modem's burst (this modem's own is ignored). False when refused
    // (stats().refused): a start not finite or outside [now - late_hearing_s,
    // now + max_announce_ahead_s], an air time other than the timing model's, or a start
    // before the last one heard from that modem.
    bool hear(const air_transmission& b, double now);

    // How late (protocol seconds) a burst may be heard and still meet the receptions and
    // own transmissions it overlapped; how far ahead of now it may start.
    static constexpr double late_hearing_s = 60.0;
    static constexpr double max_announce_ahead_s = 3600.0;

    // Events due at or before `now`, in time order (same time: in the order scheduled).
    std::vector<modem_event> poll(double now);
    // Time of the next event (+inf when none).
    double next_deadline() const;

    const emulated_modem_stats& stats() const { return d_stats; }

private:
    // A reception, or (reception 0) this modem's own transmission from keying up until
    // it hears again; kept late_hearing_s after it ends.
    struct busy_interval {
        double start, end;
        uint64_t reception;
    };
    struct reception {
        air_transmission burst;
        channel_model* path = nullptr;
        double start = 0, end = 0;
        size_t bits_flipped = 0;            // errors already applied to burst.data
        channel_model::snr_reports reports; // what the modem reports, drawn with them
        std::vector<size_t> piece_ends; // bytes delivered by each piece before the last
        size_t pieces_delivered = 0;
        size_t bytes_delivered() const
        {
            return pieces_delivered ? piece_ends[pieces_delivered - 1] : 0;
        }
        bool destroyed = false;
        bool carrier_on = false;
    };
    enum class due : uint8_t {
        tx_started,
        tx_finished,
        carrier_on,
        carrier_off,
        piece,
        delivery
    };
    struct pending {
        double time;
        uint64_t seq;
        due what;
        uint64_t reception;
        bool operator<(const pending& o) const
        {
            return time != o.time ? time < o.time : seq < o.seq;
        }
    };

    channel_model& path_from(uint64_t source);
    void destroy(reception& r);
    void schedule(double t, due what, uint64_t reception = 0);
    void forget_busy_before(double t);

    uint64_t d_id;
    radio_config d_radio;
    channel_config d_channel;
    bool d_half_duplex, d_collisions;
    double d_on_air_until = -1e300; // end of this modem's last burst
    std::map<uint64_t, std::unique_ptr<channel_model>> d_paths;
    std::map<uint64_t, reception> d_receptions; // until delivered
    std::vector<busy_interval> d_busy;
    std::map<uint64_t, double> d_last_start; // per source
    uint64_t d_next_reception = 1;
    uint64_t d_seq = 0;
    std::vector<pending> d_pending; // kept sorted
    int d_carrier = 0;
    emulated_modem_stats d_stats;
};

} // namespace sim
} // namespace hfstack
} // namespace gr

#endif
