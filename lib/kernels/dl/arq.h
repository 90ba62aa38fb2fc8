/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

/* Selective-repeat ARQ of STANAG 5066 Annex C (Edition 3) for one link direction:
 * arq_sender segments C_PDUs into DATA-ONLY (or EXPEDITED DATA-ONLY) D_PDUs and
 * retransmits what the peer's acknowledgements report missing; arq_receiver stores
 * the segments, builds the acknowledgement (RX LWE + selective-ack bitmap) and
 * reassembles C_PDUs. The node engine holds one sender and one receiver per peer and
 * per class (regular / expedited). Plain C++17: no clock, no socket, no thread; the
 * caller decides when a transmission happens and when the peer's answer timed out.
 *
 * Rules applied (Annex C section numbers of Edition 3):
 *  - C.4.1 segmentation: segments of at most `segment_size` bytes, only the last one
 *    short; START on the first, END on the last (both on an only segment);
 *    consecutive frame sequence numbers (FSN) modulo 256.
 *  - C.6.2 flow control: TX LWE = oldest unacknowledged FSN, TX UWE = newest FSN
 *    sent; no new FSN while UWE - LWE + 1 (mod 256) equals the window (<= 128).
 *    Initial TX LWE = RX LWE = 0. An ack's RX LWE acknowledges every FSN before it.
 *  - C.3.3 TX-WIN-UWE / TX-WIN-LWE flags are set on a D_PDU whose FSN equals the
 *    sender's TX UWE / TX LWE at the time the transmission is built.
 *  - C.3.4 selective acks: bit 0 of byte 0 = RX LWE + 1, ascending; the last byte
 *    holds RX UWE (newest FSN received), zero padded, 0..16 bytes; positive ack only
 *    for a good segment CRC, except DROP frames which are acked regardless.
 *  - C.3.3 DROP C_PDU: the receiver discards the frame and every segment of its
 *    C_PDU; the frame carries no segment (SIZE OF SEGMENTED C_PDU = 0).
 *  - C.6.3 synchronisation tests: an ack whose RX LWE is outside [TX LWE, TX UWE+1]
 *    is ignored (equation 4); acknowledged bits outside (TX LWE, TX UWE] are ignored
 *    (equation 5); a received FSN is accepted only inside [RX LWE, RX LWE+127] and
 *    counted as a duplicate when it lies behind RX LWE but not more than 127 behind
 *    RX UWE (equation 3); anything else is out of window and ignored.
 *  - C.3.7 / C.6.1 expedited ARQ: own FSN space; C_PDU-level stop and wait (the next
 *    expedited C_PDU starts only after every D_PDU of the previous one is acked); the
 *    FSN restarts at 0 and the 4-bit C_PDU ID increments modulo 16 for each C_PDU.
 *    Expedited D_PDUs carry no DELIVER-IN-ORDER, DROP or window-edge flags.
 */
#ifndef HFSTACK_KERNELS_DL_ARQ_H
#define HFSTACK_KERNELS_DL_ARQ_H

#include "dpdu.h"

#include <array>
#include <deque>
#include <limits>
#include <map>

namespace gr {
namespace hfstack {
namespace dl {

constexpr size_t arq_max_window = 128; // Annex C "maximum window size"
// S5066-EP5 large windows: with long FSNs (modulo 65536) the window may reach 32768.
constexpr size_t max_window(bool long_fsn)
{
    return long_fsn ? lfsn_max_window : arq_max_window;
}

// An acknowledgement as carried by ACK-ONLY, DATA-ACK and EXPEDITED ACK-ONLY.
struct arq_ack {
    uint16_t rx_lwe = 0;
    bytes selective_acks;  // bit 0 of byte 0 = rx_lwe + 1; at most 16 bytes (19 LFSN)
    bool long_fsn = false; // S5066-EP5 form
    bool operator==(const arq_ack& o) const
    {
        return rx_lwe == o.rx_lwe && selective_acks == o.selective_acks &&
               long_fsn == o.long_fsn;
    }
};

struct arq_config {
    size_t window = arq_max_window; // maximum allowable window, 1..128 (1..32768 LFSN)
    size_t segment_size = 200;      // maximum C_PDU segment size, 1..1023 bytes
    bool expedited = false;         // EXPEDITED DATA-ONLY / EXPEDITED ACK-ONLY class
    bool long_fsn = false;          // S5066-EP5 LFSN: FSNs modulo 65536
};

// Turns a DATA-ONLY D_PDU into a DATA-ACK carrying `a` (acks ride on reverse data).
// Throws std::invalid_argument for any other type (EXPEDITED DATA-ONLY has no
// DATA-ACK form: expedited acks always travel in EXPEDITED ACK-ONLY D_PDUs).
void fill_data_ack(dpdu& data, const arq_ack& a);
// An ACK-ONLY (or EXPEDITED ACK-ONLY) D_PDU carrying `a`; addresses, EOW and EOT are
// left for the caller.
dpdu make_ack_only(const arq_ack& a, bool expedited = false);
// The ack carried by an ACK-ONLY, DATA-ACK or EXPEDITED ACK-ONLY D_PDU.
arq_ack ack_of(const dpdu& d);

struct arq_sender_counters {
    uint64_t cpdus_enqueued = 0;
    uint64_t cpdus_confirmed = 0;  // completely acknowledged
    uint64_t cpdus_dropped = 0;    // abandoned through drop()
    uint64_t cpdus_lost = 0;       // in flight at a reset()
    uint64_t dpdus_sent = 0;       // = new_segments + retransmissions + drop_frames
    uint64_t new_segments = 0;     // first transmission of a segment
    uint64_t retransmissions = 0;  // repeated transmissions of a segment
    uint64_t drop_frames = 0;      // transmissions with the DROP flag (zero-length)
    uint64_t bytes_sent = 0;       // segment bytes in all transmissions
    uint64_t acks_received = 0;    // on_ack() calls
    uint64_t acks_ignored = 0;     // RX LWE outside [TX LWE, TX UWE + 1]
    uint64_t ack_bits_ignored = 0; // set bits naming FSNs outside the window
    uint64_t ack_timeouts = 0;     // on_ack_timeout() calls
};

/* Transmit side of one ARQ link (one peer, one class).
 *
 * Retransmission rule: a segment is sent once, then waits for a verdict. Every
 * on_ack() that does not acknowledge a segment already transmitted makes it due
 * (the ack answers our previous transmission, so anything it does not cover was
 * lost or damaged); so does on_ack_timeout(), which the engine calls when the peer's
 * answer to a transmission never came. next_transmission() sends every due segment
 * again (oldest FSN first) before any new segment. A transmitted but undecided
 * segment is never repeated on its own.
 *
 * An ack judges only the transmissions its sender could have heard whole: one that
 * began while a transmission of ours was on the air (a late answer we had stopped
 * waiting for, heard over a full-duplex channel during our next transmission) acks
 * what it acks but leaves that transmission's segments undecided. Taking it as the
 * answer would condemn everything still on its way, and every later transmission
 * would repeat the one before (a retransmission storm seen with the real modems). */
class arq_sender
{
public:
    // Throws std::invalid_argument when window or segment_size is out of range.
    explicit arq_sender(const arq_config& config = arq_config());

    // Queues a C_PDU (1.. bytes). Returns a handle (never 0) reported later exactly
    // once by on_ack() (confirmed), take_dropped() or reset(). deliver_in_order is
    // ignored for the expedited class. Throws std::invalid_argument on an empty C_PDU.
    // A C_PDU queued `yielding` (the node's own delivery answers) lets C_PDUs queued
    // after it go first while none of its segments is numbered, so an application's
    // answer to what it just received leads the transmission and the housekeeping
    // follows in the same burst; yielding C_PDUs keep their order among themselves.
    uint64_t enqueue(bytes cpdu, bool deliver_in_order, bool yielding = false);
    // Segment size (1..1023, else std::invalid_argument) for C_PDUs whose first
    // segment is numbered from now on; a C_PDU keeps the size it started with (only its
    // last segment may be short). The engine follows rate changes and measured losses.
    void set_segment_size(size_t segment_size);

    // D_PDUs for the next transmission, at most max_dpdus of them and at most
    // max_bytes in total, each D_PDU counting its segment plus per_dpdu_overhead bytes
    // (the caller's header size; 0 = payload only): due
    // retransmissions first, then new segments while the window allows. Fills type,
    // START/END/DELIVER-IN-ORDER/DROP/TX-WIN-UWE/TX-WIN-LWE flags, tx_sequence,
    // segment and (expedited) cpdu_id; addresses, EOW and EOT are the caller's.
    std::vector<dpdu>
    next_transmission(size_t max_dpdus, size_t max_bytes, size_t per_dpdu_overhead = 0);

    static constexpr uint64_t every_transmission = std::numeric_limits<uint64_t>::max();
    // Processes the peer's ack. Returns the handles of C_PDUs now completely
    // acknowledged, oldest first. Stale or out-of-sync acks are ignored.
    // LFSN: a bitmap of max_selective_acks_lfsn bytes may end before the peer's RX UWE,
    // so frames after its last bit stay undecided (neither acked nor due).
    // answered_transmission: the newest transmission (numbered as last_transmission()
    // counts them) the peer could have heard whole before it sent the ack; segments
    // last sent in a later one are acked if it says so but never found missing.
    std::vector<uint64_t> on_ack(uint16_t rx_lwe,
                                 const bytes& selective_acks,
                                 uint64_t answered_transmission = every_transmission);
    std::vector<uint64_t> on_ack(const arq_ack& a,
                                 uint64_t answered_transmission = every_transmission)
    {
        return on_ack(a.rx_lwe, a.selective_acks, answered_transmission);
    }
    // Number of the last next_transmission() that returned D_PDUs (0 before any).
    uint64_t last_transmission() const { return d_transmissions; }

    // What the acks since the last call said about segments sent and awaiting their
    // answer: how many were sent, their bytes, how many the ack reported missing (the
    // input of segment_size_policy). Timeouts add nothing.
    struct ack_outcome {
        size_t frames = 0;
        size_t segment_bytes = 0;
        size_t lost_frames = 0;
    };
    ack_outcome take_ack_outcome();

    // The peer's answer to our last transmission did not come: every transmitted,
    // unacknowledged segment becomes due for retransmission.
    void on_ack_timeout();

    /* Abandons a C_PDU (TTL expired). Returns false when the handle is unknown (never
     * queued, already confirmed or dropped).
     * - Not yet started: removed at once and reported by take_dropped().
     * - Regular class, started: segments never numbered are not sent; every numbered,
     *   unacknowledged segment is sent once more with the DROP flag and no segment
     *   bytes (Annex C: SIZE OF SEGMENTED C_PDU = 0), keeping its START/END flags,
     *   and retransmitted under the normal rules until acked; then the C_PDU is
     *   reported by take_dropped(). If nothing numbered is unacknowledged, it is
     *   reported at once (the receiver discards the partial C_PDU when the next
     *   START arrives).
     * - Expedited class, started: EXPEDITED DATA-ONLY has no DROP flag, so the C_PDU
     *   is abandoned at once; the next C_PDU restarts FSN 0 with the next C_PDU ID,
     *   which makes the receiver discard the partial one. */
    bool drop(uint64_t handle);
    std::vector<uint64_t> take_dropped();

    // True when the peer may hold the whole C_PDU: every segment has been sent and no
    // acknowledgement since a segment's last transmission reported it missing. Such a
    // C_PDU may already have been delivered at the far end, so a TTL that passes now
    // must not abandon it as undelivered: the next acknowledgement decides (confirmed,
    // or a segment reported missing, which proves the peer could not deliver it).
    // False for unknown handles.
    bool may_be_complete_at_peer(uint64_t handle) const;

    /* RESET / WIN-RESYNC: forgets every sent D_PDU and restarts the window at
     * new_tx_lwe (0 for a full reset; the expedited class always restarts at 0).
     * C_PDUs with at least one numbered segment are lost: their handles are returned
     * in queue order. With requeue = false they are forgotten (the engine reports
     * delivery failure); with requeue = true they go back to the front of the queue,
     * whole and with the same handles, to be sent again from their first segment
     * (the peer may then receive a C_PDU twice if it had completed it). C_PDUs being
     * dropped are not returned: they go to take_dropped(). Queued, unstarted C_PDUs
     * keep their place. */
    std::vector<uint64_t> reset(uint16_t new_tx_lwe = 0, bool requeue = false);

    // S5066-EP5: switches the FSN form (and the window, 1..max_window(long_fsn), else
    // std::invalid_argument). Restarts the window at 0 as reset(0, true) does; the
    // engine does this only together with a window reset agreed with the peer.
    void set_long_fsn(bool long_fsn, size_t window);

    bool idle() const { return d_queue.empty() && d_window.empty() && d_active == 0; }
    // Numbered, unacknowledged segments (those inside the window).
    size_t in_flight() const;
    // Current window occupancy: TX UWE - TX LWE + 1 (0 when empty).
    size_t window_used() const { return d_window.size(); }
    // C_PDU bytes not yet given a sequence number.
    size_t queued_bytes() const { return d_queued_bytes; }
    size_t queued_cpdus() const { return d_queue.size(); }
    // True when next_transmission() with a generous budget would return something.
    bool has_pending_transmission() const;
    uint16_t tx_lwe() const { return d_lwe; }
    // FSN the next new segment will get (TX UWE + 1).
    uint16_t next_fsn() const { return fsn_of(d_lwe + d_window.size()); }
    const arq_config& config() const { return d_cfg; }
    const arq_sender_counters& counters() const { return d_counters; }

private:
    struct cpdu_rec {
        bytes data;
        bool in_order = false;
        size_t seg_size = 0; // segment size in force when its first segment was numbered
        size_t nseg = 0;     // segments of the whole C_PDU
        size_t numbered = 0; // segments given an FSN so far
        size_t acked = 0;    // of the numbered ones
        bool dropping = false; // no further segments will be numbered
        bool yielding = false; // later C_PDUs overtake it while unstarted
        uint8_t cpdu_id = 0;   // expedited only
    };
    enum class seg_state : uint8_t { awaiting, due, acked };
    struct seg {
        uint64_t handle;
        size_t index; // segment number within the C_PDU
        seg_state state;
        bool drop;
        bool reported_missing = false; // an ack since its last transmission lacked it
        uint64_t sent_in = 0;          // the transmission that last carried it
    };

    size_t seg_len(const cpdu_rec& c, size_t index) const;
    dpdu make_frame(const seg& s, uint16_t fsn) const;
    uint16_t fsn_of(size_t v) const { return uint16_t(v & d_mask); }
    bool can_start_new() const;
    uint64_t new_source();
    void mark_acked(seg& s, std::vector<uint64_t>& confirmed);
    void finish_dropped(uint64_t handle);
    void pop_acked();

    arq_config d_cfg;
    std::map<uint64_t, cpdu_rec> d_cpdus; // every unreported C_PDU
    std::deque<uint64_t> d_queue;         // C_PDUs with segments still unnumbered
    std::deque<seg> d_window;             // d_window[i] has FSN d_lwe + i
    ack_outcome d_outcome;
    uint16_t d_lwe = 0;
    uint16_t d_mask = 0xFF; // FSN modulus - 1
    uint64_t d_next_handle = 1;
    uint64_t d_transmissions = 0; // next_transmission() calls that returned D_PDUs
    uint64_t d_active = 0;        // expedited: the C_PDU being sent (stop and wait)
    uint8_t d_next_id = 0;        // expedited: next C_PDU ID (mod 16)
    size_t d_queued_bytes = 0;
    std::vector<uint64_t> d_dropped;
    arq_sender_counters d_counters;
};

struct arq_receiver_counters {
    uint64_t frames = 0;                 // data D_PDUs offered to on_data()
    uint64_t segments_received = 0;      // new good segments (and new DROP frames) stored
    uint64_t segment_bytes_received = 0; // the bytes of those segments (DROP frames: 0)
    uint64_t duplicates = 0;             // already received: re-acked, not stored again
    uint64_t damaged = 0;                // segment CRC failed, no DROP flag: not acked
    uint64_t drop_frames = 0;            // new frames with the DROP flag
    uint64_t out_of_window = 0;          // FSN outside the window (equation 3): ignored
    uint64_t wrong_type = 0;             // not a data type of this receiver's class
    uint64_t cpdus_delivered = 0;
    uint64_t cpdus_discarded = 0; // dropped or left incomplete by the sender
    uint64_t lwe_advances = 0;    // RX LWE moved up to a sender's TX-WIN-LWE
    uint64_t acks_taken = 0;
};

/* What an arq_receiver holds, as a restarted node needs it to go on where it stopped
 * (the node's journal, state_dir): the window edges, the segments received inside the
 * window and the C_PDU being reassembled. C_PDUs already delivered are not part of it. */
struct arq_receiver_state {
    bool expedited = false, long_fsn = false;
    uint16_t rx_lwe = 0, rx_uwe = 0;
    int cpdu_id = -1; // expedited: the C_PDU being received, -1 none
    struct segment {
        uint16_t fsn = 0;
        bool start = false, end = false, in_order = false, drop = false, consumed = false;
        bytes data;
    };
    std::vector<segment> segments; // inside [rx_lwe, rx_uwe], ascending from rx_lwe
    bool open_active = false, open_drop = false;
    bytes open_data;
};

/* Receive side of one ARQ link (one peer, one class).
 *
 * Reassembly: a C_PDU is the run of consecutive FSNs from a START to the next END.
 * In-order C_PDUs are delivered as RX LWE passes their END, so they come out in
 * sequence order and a complete one waits behind any earlier gap. As-arrived C_PDUs
 * are delivered as soon as their whole run is inside the window (or, failing that,
 * when RX LWE passes their END). A run containing a DROP frame is discarded; a run
 * interrupted by a new START, or by an FSN skipped through the TX-WIN-LWE rule,
 * can never complete and is discarded.
 *
 * TX-WIN-LWE rule: a data D_PDU flagged TX-WIN-LWE carries the sender's TX LWE; the
 * sender will never (re)send anything before it. If it lies ahead of RX LWE inside
 * the window, RX LWE moves up to it and the skipped FSNs are treated as never coming
 * (C_PDUs touching them are discarded). Between synchronised peers TX LWE never
 * exceeds RX LWE (Annex C equation 2), so this only recovers from a sender that
 * skipped FSNs (resynchronisation, a restarted peer). A flagged TX LWE behind RX LWE
 * is normal (our ack has not reached the sender yet) and changes nothing.
 *
 * Expedited class: every C_PDU restarts at FSN 0 with a new 4-bit C_PDU ID, so a
 * frame whose C_PDU ID differs from the current one resets the window to RX LWE 0
 * and discards any partial C_PDU (one the sender abandoned). Expedited C_PDUs are
 * delivered in order. */
class arq_receiver
{
public:
    // long_fsn: S5066-EP5 FSNs modulo 65536, window up to 32768; data D_PDUs of the
    // other FSN form are counted as wrong_type and ignored.
    explicit arq_receiver(bool expedited = false, bool long_fsn = false);

    // Processes one received data D_PDU: DATA-ONLY or DATA-ACK (regular class),
    // EXPEDITED DATA-ONLY (expedited class). segment_ok is false when its segment
    // CRC-32 failed. Only the data part is used: the engine hands the ack part of a
    // DATA-ACK to its own arq_sender (ack_of()). Returns true when the frame was
    // within the window (new or duplicate), false when it was ignored.
    bool on_data(const dpdu& d, bool segment_ok);

    // Complete C_PDUs, in delivery order.
    std::vector<bytes> take_delivered();

    // The ack to send now: RX LWE and the bitmap RX LWE+1 .. RX UWE, minimal length
    // (0..16 bytes), zero padded. Clears ack_due().
    arq_ack ack();
    // True when a data D_PDU of this class (good, damaged or duplicate, inside the
    // window) arrived since the last ack() was taken.
    bool ack_due() const { return d_ack_due; }
    // Makes an ack due although nothing arrived (it repeats the state, which a sender
    // takes as an answer: the engine answers a burst it could not read with it).
    void ack_again() { d_ack_due = true; }

    // RESET/WIN-RESYNC: RX LWE = new_rx_lwe, stored segments and partial C_PDUs are
    // discarded (already completed C_PDUs stay in take_delivered()).
    void reset(uint16_t new_rx_lwe = 0);
    // S5066-EP5: switches the FSN form; the window restarts at 0 as reset(0) does.
    void set_long_fsn(bool long_fsn);

    // The state to write down, and the same put back (after a restart). restore()
    // throws std::invalid_argument for a state that cannot be this receiver's (another
    // class, an FSN outside the window, a segment past RX UWE), leaving it reset.
    arq_receiver_state state() const;
    void restore(const arq_receiver_state& st);

    uint16_t rx_lwe() const { return d_lwe; }
    uint16_t rx_uwe() const { return d_uwe; }
    bool long_fsn() const { return d_long_fsn; }
    bool expedited() const { return d_expedited; }
    const arq_receiver_counters& counters() const { return d_counters; }

private:
    struct slot {
        bool received = false;
        bool start = false, end = false, in_order = false, drop = false;
        bool consumed = false; // part of an as-arrived C_PDU already delivered
        bytes data;
    };
    struct open_run {
        bool active = false;
        bool drop = false;
        bytes data;
    };

    uint16_t fsn_of(size_t v) const { return uint16_t(v & d_mask); }
    size_t span() const
    {
        return fsn_of(size_t(d_uwe) + d_mask + 1 - d_lwe + 1);
    } // LWE..UWE
    void advance();
    void pass_below(slot& s);
    void skip_missing();
    void try_early_delivery(uint16_t fsn);
    void discard_open();

    bool d_expedited;
    bool d_long_fsn;
    uint16_t d_mask;           // FSN modulus - 1
    size_t d_window_max;       // 128, or 32768 with long FSNs
    std::vector<slot> d_slots; // one per FSN
    uint16_t d_lwe = 0;
    uint16_t d_uwe; // newest FSN received; d_lwe - 1 when nothing is pending
    open_run d_open;
    int d_cpdu_id = -1; // expedited: C_PDU being received, -1 none
    bool d_ack_due = false;
    std::vector<bytes> d_delivered;
    arq_receiver_counters d_counters;
};

} // namespace dl
} // namespace hfstack
} // namespace gr

#endif
