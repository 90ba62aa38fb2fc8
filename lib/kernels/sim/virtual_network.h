/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

/* Discrete-event harness: N dl::node_engine instances on one shared half-duplex HF
 * channel, in virtual time, honouring the modem contract of DESIGN.md ("The interface
 * between data link and modem"):
 *
 *   - a transmission occupies the channel from radio.key_up_s after the `now` it was
 *     produced at, for tx.air_time_s; the transmitter gets tx_started then and
 *     tx_finished at the end, and hears nothing from the moment it keys up until
 *     radio.unkey_s after the end;
 *   - every other node j hears it over the path's channel_model, shifted by the path's
 *     propagation_s: nothing at all if the burst overlaps an outage; otherwise
 *     carrier_on agc_settle_s + carrier_detect_s after its start (only if it lasts
 *     longer than that),
 *     carrier_off at its end (nested: carrier_on when the first of overlapping receptions
 *     is detected, carrier_off when the last ends), and the corrupted bytes through
 *     on_burst rx_latency_s after its end (lost if its preamble is shorter than
 *     agc_settle_s, or if the path's channel_model::receive finds it missed in a fade);
 *   - bursts overlapping at a receiver destroy each other (no on_burst, carrier events
 *     still happen), and so does a node's own transmission overlapping a reception
 *     (half duplex). Touching intervals do not overlap;
 *   - on_timer at every engine's next_deadline().
 *
 * Events at the same time run in the order they were scheduled, so a run is a pure
 * function of its inputs and seeds. No clock, thread or socket. */
#ifndef HFSTACK_KERNELS_SIM_VIRTUAL_NETWORK_H
#define HFSTACK_KERNELS_SIM_VIRTUAL_NETWORK_H

#include "channel_model.h"
#include "dl/node_engine.h"

#include <unordered_map>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <queue>
#include <vector>

namespace gr {
namespace hfstack {
namespace sim {

// The radios and modems of every node, as the data link sees them. Defaults: a modern
// HF transceiver keyed by a modem (relay switching in tens of milliseconds) and a
// serial-tone modem's carrier detector; see docs/simulator-design.md.
struct radio_config {
    double key_up_s = 0.05; // receive to transmit: the burst starts on air this long
                            // after the node produced it (PTT, relays, power amplifier)
    double unkey_s = 0.05;  // transmit to receive: deaf this long after its own burst
    double agc_settle_s = 0.02; // a received burst's first moments, before the AGC has
                                // settled: they delay carrier detection, and a burst
                                // whose preamble is shorter is lost
    double carrier_detect_s =
        0.2; // carrier_on this long after a burst (its AGC settled) starts
    double rx_latency_s = 0.05; // decoded bytes delivered this long after the burst ends
    // A streaming modem: the bytes each interleaver block completes are delivered
    // rx_latency_s after that block (phy::decoding_schedule), the rest after the burst.
    // False: all of a burst's bytes at once after its end.
    bool deliver_per_block = true;
};

// A radio that switches and detects instantly (for tests that count seconds exactly).
radio_config ideal_radio();
// Throws std::invalid_argument naming a time that is negative or not finite.
void validate(const radio_config& r);

// Seed of the directed path from -> to, derived from a channel's and a network's seed.
uint64_t
path_seed(uint64_t channel_seed, uint64_t network_seed, uint64_t from, uint64_t to);

struct network_config {
    radio_config radio;
    bool report_tx_status = true; // tx_started / tx_finished to the transmitter
    // Overlapping receptions destroy each other.
    bool collisions = true;
    // A node's own transmission destroys what it would receive meanwhile (radios are
    // half duplex). False models a full-duplex link, as hfstack-node's emulated air is.
    bool half_duplex = true;
    // Mixed into the per-path seeds set_channel_all() derives (set_channel() uses the
    // given channel_config::seed as it is).
    uint64_t seed = 1;
};

struct node_stats {
    uint64_t transmissions = 0; // bursts this node put on the air
    uint64_t bytes_sent = 0;
    double air_time_s = 0;
    uint64_t bursts_delivered = 0; // on_burst calls to this node
    uint64_t bytes_delivered = 0;
    uint64_t collisions = 0;    // receptions here destroyed by overlap (incl. own tx)
    uint64_t lost_outage = 0;   // receptions here lost to an outage of the path
    uint64_t lost_other = 0;    // receptions here lost to restart_node / offline, or
                                // never acquired (preamble shorter than AGC settling)
    uint64_t lost_preamble = 0; // receptions here whose preamble the modem missed (a
                                // fade: channel_model::receive)
    uint64_t bits_flipped = 0;  // in bursts delivered here
    uint64_t carrier_on = 0;    // carrier_on events given to this node
    uint64_t client_messages = 0;
    uint64_t client_disconnects = 0;
};

struct network_stats {
    uint64_t events = 0; // events processed (stale ones included)
    uint64_t transmissions = 0;
    uint64_t collisions = 0;
    uint64_t bursts_delivered = 0;
    uint64_t bursts_lost = 0; // outage + restart/offline + preamble missed
    uint64_t bits_flipped = 0;
};

class virtual_network
{
public:
    // Throws std::invalid_argument naming a radio time that is negative or not finite.
    explicit virtual_network(network_config config = network_config());
    ~virtual_network();
    virtual_network(const virtual_network&) = delete;
    virtual_network& operator=(const virtual_network&) = delete;

    // Adds a node (engine created at now()); returns its index 0, 1, 2, ... Paths to and
    // from it are clear, or use the configuration of the last set_channel_all().
    size_t add_node(dl::node_config cfg);
    size_t size() const { return d_nodes.size(); }
    dl::node_engine& node(size_t i);
    const dl::node_engine& node(size_t i) const;

    // Error model of the directed path from -> to (from != to). Takes effect for bursts
    // put on the air from now on (bursts already on the air keep their old model).
    void set_channel(size_t from, size_t to, channel_config c);
    // The same model on every directed path, present and future, each with its own seed
    // derived from c.seed, network_config::seed and the two node indices.
    void set_channel_all(channel_config c);
    const channel_model& channel(size_t from, size_t to) const;

    double now() const { return d_now; }

    // In-process SIS clients: the engine call at now(), then its actions processed.
    void client_send(size_t node, uint32_t client, const dl::sis_primitive& p);
    void client_connect(size_t node, uint32_t client);
    void client_close(size_t node, uint32_t client);
    // Messages the engine of node i sent to its clients since the last call, in order.
    // (Every message is queued here, whether or not a callback is set.)
    std::vector<dl::client_message> take_client_messages(size_t node);
    std::vector<dl::client_disconnect> take_client_disconnects(size_t node);
    // Called for every client message at the virtual time it was produced, after the
    // action batch it came in has been applied (so the callback may call client_send and
    // the like; those run at the same now()).
    void
    on_client_message(std::function<void(size_t node, const dl::client_message&)> cb);
    // Called for every transmission as it is put on the air (for traces and tests); also
    // for an offline node's. It must not call back into the network.
    void
    on_transmission(std::function<void(size_t node, const dl::node_transmission&)> cb);

    // Called for every phy status (tx_started, tx_finished, carrier_on, carrier_off) just
    // before it is given to node i's engine. It must not call back into the network.
    void on_phy_status(std::function<void(size_t node, dl::phy_event)> cb);
    // Called with the bytes of every burst delivered to node i (errors applied), at
    // the time of delivery, just before the engine gets them. It must not call back
    // into the network.
    void on_reception(std::function<void(size_t node, const dl::bytes&, double)> cb);

    // Calls fn at virtual time max(t, now()), in order with the other events; fn may call
    // client_send and the like (test applications' timers use it).
    void call_at(double t, std::function<void()> fn);

    // Processes every event with time <= t, then now() = t (never moves backwards).
    void run_until(double t);
    // Processes events in order up to t_max, stopping as soon as done() is true (checked
    // before the first event and after each). now() is then the time of the last event,
    // or t_max if done() never became true. Returns done().
    bool run_until(const std::function<bool()>& done, double t_max);
    // Time of the next pending event (+inf if none).
    double next_event_time() const;

    // Replaces node i's engine by a fresh one (same configuration) at now(): receptions
    // in flight to it are lost, its pending timer and phy status events are dropped.
    // A burst it is transmitting stays on the air for the others. With a state_dir in
    // its configuration, the journal its engine wrote (kept here, as the node block
    // keeps it on disk) is restored first, as the node block does at start.
    void restart_node(size_t i);
    // An offline node's radio is off: receptions in flight to it and all later ones are
    // lost (a carrier it was told about is cleared at once), its transmissions do not
    // reach the air (the engine is still told tx_started / tx_finished). Its engine keeps
    // running timers and clients.
    void set_node_offline(size_t i, bool offline);
    bool node_offline(size_t i) const;

    const node_stats& stats(size_t i) const;
    const network_stats& stats() const { return d_stats; }

    // Events allowed at one virtual time before run_until throws std::runtime_error
    // (an engine asking again and again for a timer at the same instant).
    static constexpr uint64_t max_events_at_one_time = 10'000'000;

private:
    enum class event_kind : uint8_t {
        timer,
        tx_status,
        carrier_on,
        carrier_off,
        delivery,
        call,
        piece
    };
    struct event {
        double time;
        uint64_t seq;
        event_kind kind;
        dl::phy_event status; // tx_status
        uint32_t node;
        uint64_t tag; // timer: generation; tx_status: engine epoch; call: its id;
                      // others: reception id
    };
    struct event_later {
        bool operator()(const event& a, const event& b) const
        {
            return a.time != b.time ? a.time > b.time : a.seq > b.seq;
        }
    };
    struct air_burst; // one transmission shared by its receptions
    struct reception {
        std::shared_ptr<const air_burst> burst;
        std::shared_ptr<channel_model> path;
        size_t from = 0;
        size_t to = 0;
        double start = 0; // at the receiver
        double end = 0;
        uint64_t rx_epoch = 0;
        bool destroyed = false;
        bool carrier_seen = false; // carrier_on was given to the engine
        // Delivered in pieces (radio_config::deliver_per_block): the bytes, errors
        // applied at the first piece, and the bytes each piece before the last ends at.
        dl::bytes data;
        bool corrupted = false;
        size_t bits_flipped = 0;
        // What the modem reports for the burst, drawn with its errors (NaN: none).
        channel_model::snr_reports reports;
        std::vector<size_t> piece_ends;
        size_t pieces_delivered = 0;
        size_t bytes_delivered() const
        {
            return pieces_delivered ? piece_ends[pieces_delivered - 1] : 0;
        }
    };
    struct interval {
        double start, end;
        uint64_t reception; // 0 for an own transmission
    };
    struct node_slot;
    void deliver(size_t i, reception& r, bool last);

    void check_node(size_t i, const char* what) const;
    void push(double t,
              event_kind k,
              size_t node,
              uint64_t tag,
              dl::phy_event status = dl::phy_event::carrier_on);
    void process(const event& e);
    void after_input(size_t i);
    void apply_actions(size_t i, dl::node_actions&& a);
    void transmit(size_t i, dl::node_transmission&& tx);
    void schedule_timer(size_t i);
    void phy_status(size_t i, dl::phy_event e);
    void drain_callbacks();
    void lose_receptions(size_t i);
    channel_config derived(const channel_config& c, size_t from, size_t to) const;

    network_config d_cfg;
    double d_now = 0;
    uint64_t d_seq = 0;
    uint64_t d_next_reception = 1;
    std::priority_queue<event, std::vector<event>, event_later> d_events;
    std::vector<std::unique_ptr<node_slot>> d_nodes;
    // d_paths[from][to] (the diagonal is unused).
    std::vector<std::vector<std::shared_ptr<channel_model>>> d_paths;
    std::unique_ptr<channel_config> d_default_channel;
    std::unordered_map<uint64_t, reception> d_receptions;
    std::unordered_map<uint64_t, std::function<void()>> d_calls;
    uint64_t d_next_call = 1;
    std::function<void(size_t, const dl::client_message&)> d_client_cb;
    std::function<void(size_t, const dl::node_transmission&)> d_tx_cb;
    std::function<void(size_t, dl::phy_event)> d_phy_cb;
    std::function<void(size_t, const dl::bytes&, double)> d_rx_cb;
    std::vector<std::pair<size_t, dl::client_message>> d_pending_cb;
    bool d_draining = false;
    double d_same_time = -1;
    uint64_t d_same_time_events = 0;
    network_stats d_stats;
};

} // namespace sim
} // namespace hfstack
} // namespace gr

#endif
