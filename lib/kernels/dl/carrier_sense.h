/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

/* Carrier sense (listen before transmit) for transmission control: STANAG 5066
 * Edition 3 Annex K (HF carrier-sense multiple access) and the slotted variant.
 *
 * carrier_sense is the gate the engine asks before keying the radio. It is sans-IO: it
 * reads no clock; every input carries `now` (seconds, real or virtual) and
 * transmit_time(now) / next_deadline() say when the engine may start its transmission.
 * Its only randomness is a std::mt19937 seeded from the config, so runs repeat exactly.
 *
 * Sources and what is taken from them:
 *  - STANAG 5066 Ed.3 Annex K is informative; Annex J says a node should implement a CSMA
 *    mode and, if it does, follow Annex K. Annex K uses a random delay ("jitter") before
 *    a node transmits on a channel it hears idle (Isode S5066-EP6, sections 1 and 2).
 *    The numeric values of Annex K were not available to us: the back-off range, slot
 *    size and persistence below are configurable, and their defaults are engineering
 *    choices explained next to each field, not numbers copied from Annex K.
 *  - Slotted option (Isode S5066-EP6, an extension to Annex K): every node owns a slot
 *    number; after the channel goes idle a node waits base delay + slot x slot length
 *    and transmits only if it still hears nothing. Measured networks: base delay 6 s
 *    (two 3 s slots), slots 2 and 3 started 9 and 12 s after idle; RapidM's non-ARQ
 *    scheme waits 30 s + 5 s x slot (gr-hfstack spec, s5066.md "Channel access").
 *  - Turn taking in half-duplex ARQ: a node answering a transmission addressed to it
 *    (acknowledgements owed on a link it takes part in) answers as soon as the channel
 *    clears, with no back-off; the other nodes back off, so the answer wins the channel.
 *    This is how the ARQ exchange of Annex C is kept together on a shared channel
 *    (S5066-EP6 clarifies CAS-1 links under Annex K the same way). Here the engine says
 *    so with set_response_pending(true).
 *
 * Rules, per mode (idle instant = the later of the last carrier drop and the end of our
 * own last transmission; "hold-off" = carrier_sense_config::idle_holdoff_s):
 *  none            transmit_time(now) = now whenever a transmission is wanted; the
 *                  carrier is ignored (a node on a dedicated channel, or a baseline).
 *  random_backoff  a back-off B is drawn for each idle period in which a transmission is
 *                  wanted (when the channel goes idle with a transmission wanted, or when
 *                  a transmission becomes wanted on an idle channel) and the node may
 *                  start at idle instant + hold-off + B. If the channel has already been
 *                  idle that long, it may start at once. With persistence p < 1, each
 *                  time the back-off runs out the node transmits only with probability p
 *                  and otherwise waits another independent back-off; the trials are made
 *                  when B is drawn, so B is the sum of the back-offs until success.
 *  slotted         the node may start at idle instant + hold-off + base_delay_s +
 *                  slot_number x slot_length_s (at once if already that long idle).
 *  In both carrier-sensing modes, while the carrier is detected transmit_time is +inf.
 *  If the carrier appears before the start (the back-off or slot wait is "pre-empted" by
 *  another node), the start is abandoned and counted; after the carrier clears a new
 *  start is computed from the new idle instant. For random_backoff the new back-off is
 *  freshly drawn (default, non-persistent CSMA), or with resume_backoff the unexpired
 *  part of the interrupted back-off is resumed (802.11-style freezing). Annex K's choice
 *  between the two could not be checked; both are offered.
 *  Response pending (any carrier-sensing mode): start at idle instant + hold-off, no
 *  back-off or slot wait, still never while the carrier is detected.
 *
 * Limitation (inherent in listen before transmit): a transmission wanted on a channel
 * already idle for longer than the wait starts at once, so two nodes that become ready
 * within the carrier-detect delay of each other on a long-idle channel can collide. The
 * back-off and the slots separate nodes that contend for the end of a busy period.
 *
 * The engine calls on_own_transmission(start, end) when it keys up: our own burst also
 * occupies the channel, so the idle instant moves to its end; the wanted transmission
 * is then served (want cleared) and the engine calls want_to_transmit again for the next.
 */
#ifndef HFSTACK_KERNELS_DL_CARRIER_SENSE_H
#define HFSTACK_KERNELS_DL_CARRIER_SENSE_H

#include <cstdint>
#include <limits>
#include <random>

namespace gr {
namespace hfstack {
namespace dl {

enum class channel_access_mode {
    none,           // transmit whenever asked, no carrier sense
    random_backoff, // Annex K: listen before transmit with a random back-off
    slotted,        // slotted option (S5066-EP6): fixed per-node slot after idle
};

struct carrier_sense_config {
    channel_access_mode mode = channel_access_mode::random_backoff;

    // Extra quiet time required after the carrier drops (or our own burst ends) before
    // any back-off or slot wait starts: radio/modem turnaround and carrier-detect
    // settling. 0 by default because the back-off minimum and the slotted base delay
    // already include a turnaround allowance.
    double idle_holdoff_s = 0.0;

    // random_backoff: B is drawn uniformly in [backoff_min_s, backoff_max_s]. With
    // backoff_slot_s > 0 the draw is discrete: backoff_min_s + k x backoff_slot_s,
    // k uniform in 0 .. floor((max - min) / slot). Defaults: 3 s slots (the slot length
    // of the measured slotted network, longer than modem carrier-detect time plus radio
    // turnaround, so two nodes drawing different slots hear each other in time), 10
    // slots from 3 s to 30 s (two contenders pick the same slot 1 time in 10; 30 s is
    // also RapidM's non-ARQ base wait); the minimum of one slot leaves the first
    // instants after idle to an ARQ responder, which answers without back-off.
    double backoff_min_s = 3.0;
    double backoff_max_s = 30.0;
    double backoff_slot_s = 3.0; // 0 = continuous draw
    // Probability of transmitting when a back-off expires on an idle channel (0 < p <=
    // 1).
    double persistence = 1.0;
    // On pre-emption: false = draw a new back-off, true = resume the unexpired part.
    bool resume_backoff = false;

    // slotted: start = idle + hold-off + base_delay_s + slot_number x slot_length_s.
    // Defaults from the measured network: base delay 6 s (two slots), 3 s slots.
    unsigned slot_number = 0;
    double slot_length_s = 3.0;
    double base_delay_s = 6.0;

    // Keeping a quiet channel (both carrier-sensing modes): when our own burst ended the
    // last busy period and no other carrier has been heard for quiet_channel_s, the next
    // burst follows after the hold-off alone, with no back-off or slot wait, until such
    // back-to-back bursts have held the channel for max_channel_hold_s; then one normal
    // wait lets any silent station in. A lone broadcaster (non-ARQ) then loses no time
    // between its bursts, and one that is heard loses its privilege at once.
    // quiet_channel_s = 0 disables it.
    double quiet_channel_s = 300.0;
    double max_channel_hold_s = 900.0;

    // Fairness bound on an ARQ exchange (both carrier-sensing modes; the engine applies
    // it, see busy_since()): once the channel has been busy without a gap a contender
    // could use for this long, a node owing an answer no longer answers at once but
    // waits a normal back-off or slot, so stations that have been waiting for the
    // channel get it. The engine applies it only while it knows of other stations
    // (node_engine.h); +infinity: never (answers always go at once).
    double max_exchange_s = std::numeric_limits<double>::infinity();
    // The longest burst a node sends when it won the channel by contention on a network
    // (the engine applies it, as max_exchange_s): a collision with a station that drew
    // the same slot then costs this much air, not a whole maximum-length burst.
    // +infinity: no limit.
    double contended_burst_s = std::numeric_limits<double>::infinity();
    // The longest burst a node sends on a network, however it got the channel (the
    // engine applies it, as max_exchange_s): with several stations to serve, shorter
    // bursts go round them more often, so each gets its share within the hour and a
    // burst lost at a turn change costs less. +infinity: no limit.
    double network_burst_s = std::numeric_limits<double>::infinity();
    // The longest back-off of a node serving its peers in turn that leaves the gap of
    // the exchange bound (max_exchange_s) at a change of turn (the engine applies it,
    // as max_exchange_s): the gap is for stations waiting to call, who draw from the
    // whole range; with none waiting it is idle air at every bound. +infinity: the
    // whole range.
    double turn_change_backoff_max_s = std::numeric_limits<double>::infinity();
    // The shortest back-off of that gap while a station heard within network_memory_s
    // has no link with the node serving in turn (the engine applies it): such stations
    // most likely wait to call, and a caller that drew the shortest back-off met the
    // node's own burst there. Above backoff_min_s it leaves them the shortest. 0:
    // backoff_min_s.
    double turn_change_backoff_min_s = 0.0;
    // The longest back-off of a node with a link request out that has wanted the
    // channel for longer than max_exchange_s and the longest back-off (the engine
    // applies it, as max_exchange_s): it has sat through at least one gap at a change
    // of turn, which the station serving in turn leaves with a back-off of at most
    // turn_change_backoff_max_s; drawing from the whole range, the caller would lose
    // gap after gap to it. +infinity: the whole range.
    double waiting_caller_backoff_max_s = std::numeric_limits<double>::infinity();
    // Serving in turn, once max_exchange_stretch_after_gaps gaps in a row left at the
    // exchange bound went unused (no carrier heard in them), each further one doubles
    // the bound, up to this (the engine applies it, as max_exchange_s): with every
    // station linked the gaps are idle air. A carrier in a gap, or a station heard that
    // has no link with us, returns it to max_exchange_s. A caller whose draw met ours
    // exactly is not heard, so callers wait longer. At most max_exchange_s: off.
    double max_exchange_stretch_s = 0.0;
    unsigned max_exchange_stretch_after_gaps = 5;

    // Seeds the std::mt19937 of back-off draws. Nodes sharing a channel must use
    // different seeds (derive it from the node address), or they draw the same back-offs.
    uint32_t seed = 5066;
};

struct carrier_sense_counters {
    uint64_t transmissions = 0;  // on_own_transmission calls
    uint64_t deferrals_busy = 0; // a wanted transmission had to wait for a carrier
                                 // (want while busy, or carrier arriving while wanted)
    uint64_t backoffs_drawn = 0; // back-off draws (each persistence retrial counts)
    uint64_t collisions_suspected =
        0; // carrier appeared before our pending start (back-off
           // or slot wait pre-empted), forcing a new start
    uint64_t persistence_deferrals =
        0; // back-off expiries that lost the p-persistence trial
    uint64_t immediate_responses = 0; // wanted transmissions served with response pending
    uint64_t transmissions_over_carrier = 0; // we keyed up while the carrier was detected
    uint64_t channel_kept = 0; // bursts sent back to back on a quiet channel
};

class carrier_sense
{
public:
    // Throws std::invalid_argument on a negative time, min > max, a persistence outside
    // (0, 1], or a zero slot length in slotted mode.
    explicit carrier_sense(const carrier_sense_config& cfg = carrier_sense_config());

    // Modem status: carrier detected (true) or clear (false). Repeated states are
    // ignored.
    void on_carrier(bool detected, double now);
    // Our own burst occupies the channel over [start, end]; serves the wanted
    // transmission.
    void on_own_transmission(double start, double end);
    // The engine has something to send (no-op if already wanted).
    void want_to_transmit(double now);
    // The engine no longer has anything to send; drops any back-off in progress.
    void cancel();
    // True while this node owes an answer in an ARQ exchange addressed to it: start right
    // after the channel clears (plus hold-off), without back-off or slot wait. Stays set
    // until the engine clears it.
    void set_response_pending(bool pending);
    // random_backoff: while set, the back-off is the shortest one, backoff_min_s, with
    // no draw: this node has urgent (expedited) data and contends first after the
    // channel clears, behind only the answers that go at once.
    void set_priority(bool priority);
    // random_backoff: while below backoff_max_s, back-offs are drawn from
    // [backoff_min_s, max_s] (same slots); +inf: the whole range.
    void set_backoff_limit(double max_s);
    // random_backoff: while above backoff_min_s, back-offs are drawn from [min_s,
    // backoff_max_s] (same slots); 0: the whole range.
    void set_backoff_floor(double min_s);

    // Earliest time >= now at which the engine may key up; +inf while nothing is wanted
    // or (carrier-sensing modes) the carrier is detected.
    double transmit_time(double now) const;
    bool may_transmit(double now) const { return transmit_time(now) <= now; }
    // Absolute time at which the engine may key up (may lie in the past: then at once);
    // +inf while nothing is to be waited for. The driver calls transmit_time then.
    double next_deadline() const;

    bool wanted() const { return d_want; }
    // Since when the wanted transmission has been wanted (meaningful while wanted()).
    double wanted_since() const { return d_want_since; }
    bool carrier() const { return d_carrier; }
    bool response_pending() const { return d_response_pending; }
    // Instant the channel last became idle (-inf if never busy).
    double idle_since() const;
    // Start of the current busy period: the channel has been busy since then with no
    // idle gap as long as the shortest wait of a contender (idle hold-off plus
    // backoff_min_s, or base_delay_s when slotted), so no waiting station could start.
    // -inf before the channel was ever busy.
    double busy_since() const { return d_busy_since; }
    // The back-off of the current idle period (random_backoff; < 0 if none drawn).
    double current_backoff() const { return d_have_draw ? d_draw : -1.0; }

    const carrier_sense_counters& counters() const { return d_counters; }
    const carrier_sense_config& config() const { return d_cfg; }

private:
    double uniform01();
    double draw_one();
    double draw_backoff();
    void ensure_draw();
    // Sets a bound of the back-off range (limit or floor), drawing again if it changed.
    void set_backoff_range(double& bound, double value);
    double start_time() const;  // raw start instant, +inf if none
    bool keeps_channel() const; // see quiet_channel_s

    carrier_sense_config d_cfg;
    carrier_sense_counters d_counters;
    std::mt19937 d_rng;

    bool d_carrier = false;
    double d_carrier_off_at;
    double d_own_end;
    bool d_want = false;
    double d_want_since = 0.0;
    bool d_response_pending = false;
    bool d_priority = false;
    double d_backoff_limit = std::numeric_limits<double>::infinity();
    double d_backoff_floor = 0.0;
    bool d_have_draw = false;
    double d_draw = 0.0;        // back-off of the current idle period
    double d_draw_anchor = 0.0; // idle instant it counts from
    double d_resume = -1.0;     // unexpired back-off to resume (< 0: none)
    double d_hold_start;        // first of our current back-to-back bursts
    double d_busy_since;        // see busy_since()
    void note_busy(double at);  // the channel went busy at `at`
};

} // namespace dl
} // namespace hfstack
} // namespace gr

#endif
