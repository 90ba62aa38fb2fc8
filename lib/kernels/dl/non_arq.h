/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

/* Non-ARQ delivery of C_PDUs (STANAG 5066 Edition 3 Annex C): segmentation into
 * NON-ARQ DATA (type 7) or EXPEDITED NON-ARQ DATA (type 8) D_PDUs with optional
 * repeated copies, and reassembly at the receiver with error-free or
 * deliver-with-errors delivery, in-order or as-arrived.
 *
 * Rules applied (Annex C, Edition 3):
 *  - C_PDU ID: 12 bits, assigned in ascending order modulo 4096; types 7 and 8 have
 *    separate ID spaces (one non_arq_sender per type); an ID is not reused before the
 *    reception window of its previous C_PDU has expired (the sender reports it, see
 *    id_in_use()).
 *  - Segments: at most the configured maximum segment size (<= 1023); a C_PDU no
 *    longer than that goes in one D_PDU; every D_PDU of a C_PDU carries the same ID and
 *    C_PDU size; the segment offset counts the C_PDU bytes preceding the segment.
 *  - Reception window: the maximum remaining time, in half-seconds from the start of
 *    the D_PDU, during which parts of the C_PDU may still arrive; it is meant to be
 *    refreshed just before each D_PDU goes out (refresh_window()).
 *  - Repetitions: the non-ARQ (NRQ) protocol may send several copies of each D_PDU to
 *    raise the chance of reception.
 *  - Reassembly uses ID, offset, segment size and C_PDU size. Error-free mode delivers a
 *    C_PDU only when every byte came in a segment whose CRC passed. Deliver-with-errors
 *    mode places damaged segments as received and, when the window ends, notes their
 *    position/size (errored blocks) and the position/size of parts never received
 *    (non-received blocks).
 *  - DELIVER IN ORDER set: a C_PDU is delivered once it is complete (or its window has
 *    expired) and earlier C_PDUs with the flag set have been delivered. Cleared: as soon
 *    as it is complete (or its window has expired).
 *
 * Plain C++17: no clock, every call takes `now` in seconds. */
#ifndef HFSTACK_KERNELS_DL_NON_ARQ_H
#define HFSTACK_KERNELS_DL_NON_ARQ_H

#include "dpdu.h"
#include "sis.h"

#include <cstdint>
#include <limits>
#include <map>
#include <tuple>
#include <vector>

namespace gr {
namespace hfstack {
namespace dl {

constexpr uint16_t cpdu_id_modulus = 4096;       // 12-bit C_PDU ID
constexpr size_t max_non_arq_cpdu_size = 65535;  // 16-bit C_PDU size field
constexpr uint16_t max_reception_window = 65535; // 16-bit field, half-seconds

// Seconds -> RECEPTION WINDOW field (half-seconds). Rounds up, so the receiver never
// waits less than asked; saturates at 65535 (32767.5 s); negative or NaN gives 0.
uint16_t reception_window_units(double seconds);
// Field -> seconds.
inline double reception_window_seconds(uint16_t units) { return 0.5 * units; }

// ---------------------------------------------------------------------------- sender

struct non_arq_config {
    size_t segment_size = 1023; // maximum C_PDU segment per D_PDU, 1..1023
    unsigned repeats = 0;       // extra copies of every D_PDU, 0..15
    bool expedited = false;     // type 8 (own C_PDU ID space) instead of type 7
    double window_margin = 0.0; // seconds added to every reception window, >= 0
    uint16_t first_id = 0;      // the first C_PDU ID (taken mod 4096)
};

struct non_arq_sender_counters {
    uint64_t cpdus = 0;            // C_PDUs segmented
    uint64_t dpdus = 0;            // D_PDUs produced, copies included
    uint64_t cpdu_bytes = 0;       // C_PDU bytes segmented (once per C_PDU)
    uint64_t ids_reused_early = 0; // an ID was assigned while its previous window ran
};

// What make_dpdus() produced for one C_PDU.
struct non_arq_batch {
    uint16_t cpdu_id = 0;
    double expires_at = 0; // now + window + margin: end of this C_PDU's reception window
    std::vector<dpdu> dpdus;
};

class non_arq_sender
{
public:
    // Throws std::invalid_argument on a segment size outside 1..1023, more than 15
    // repeats or a negative/NaN margin.
    explicit non_arq_sender(const non_arq_config& config = non_arq_config());

    // Segments one C_PDU (1..65535 bytes, else encode_error) for `destination` (bit 28
    // = group address). window_seconds is how long, from `now`, the receiver should wait
    // for the rest of this C_PDU: the engine's air-time estimate for every copy of every
    // segment plus queueing; the configured margin is added. Every D_PDU gets that
    // window; refresh_window() updates one just before it is transmitted.
    //
    // Order of the D_PDUs: segment 0..n-1 of the first copy, then segment 0..n-1 of the
    // second copy, and so on ("round robin"): two copies of one segment are always n
    // D_PDUs apart, so a fade shorter than n-1 D_PDUs cannot take every copy of a
    // segment. (A one-segment C_PDU has its copies back to back; the engine may
    // interleave batches of several C_PDUs if it needs more spread.)
    //
    // Sets type, cpdu_id, deliver_in_order, destination, cpdu_size, segment_offset,
    // reception_window and segment; source, address size, EOW and EOT are the caller's.
    non_arq_batch make_dpdus(const bytes& cpdu,
                             uint32_t destination,
                             bool deliver_in_order,
                             double window_seconds,
                             double now,
                             int repeats = -1); // -1: config.repeats; else 0..15

    // Sets d.reception_window to what is left of a window ending at expires_at when the
    // D_PDU starts at tx_time (Annex C: updated just prior to transmitting each D_PDU).
    static void refresh_window(dpdu& d, double expires_at, double tx_time);

    // The ID make_dpdus() will assign next.
    uint16_t next_id() const { return d_next_id; }
    // True while the reception window of the last C_PDU sent with `id` is still running
    // at `now`: Annex C forbids reusing the ID then. make_dpdus() still assigns it (and
    // counts ids_reused_early); an engine that wants strict behaviour waits until
    // id_in_use(next_id(), now) is false, i.e. until id_release_time(next_id()).
    bool id_in_use(uint16_t id, double now) const;
    double id_release_time(uint16_t id) const;

    const non_arq_config& config() const { return d_config; }
    const non_arq_sender_counters& counters() const { return d_counters; }

private:
    non_arq_config d_config;
    uint16_t d_next_id = 0;
    std::vector<double> d_release; // per ID: end of its last reception window
    non_arq_sender_counters d_counters;
};

// -------------------------------------------------------------------------- receiver

struct non_arq_receiver_config {
    // Incomplete C_PDUs whose window expires are delivered with errors (true) or
    // discarded (false). The service (non-ARQ vs non-ARQ with errors) belongs to the SAP
    // whose S_PDU is inside the C_PDU, so the engine picks it per receiver.
    bool deliver_with_errors = false;
    // Memory bounds. Past either cap the incomplete entry with the oldest first arrival
    // is evicted (counted); if only complete C_PDUs held for in-order delivery remain
    // besides the new entry, the new entry is dropped instead, which releases them.
    // A C_PDU larger than max_bytes is refused (oversize).
    size_t max_entries = 256;    // concurrent reassembly entries (>= 1)
    size_t max_bytes = 1u << 20; // sum of their C_PDU sizes
    size_t max_recent = 8192;    // remembered delivered IDs (duplicate suppression)
    double min_window = 0.0;     // floor (s) on every reception window received
    // A delivered C_PDU's ID is remembered, and later copies dropped as duplicates,
    // until max(end of its reception window, delivery time + min_duplicate_hold).
    // 4096 C_PDUs cannot be sent in 60 s at HF rates, so the default cannot hide a
    // legitimately reused ID, and it covers senders that put 0 in the window field.
    double min_duplicate_hold = 60.0;
};

struct non_arq_receiver_counters {
    uint64_t segments = 0;           // type 7/8 D_PDUs accepted for reassembly
    uint64_t good_segments = 0;      // of which CRC-32 good
    uint64_t damaged_segments = 0;   // of which CRC-32 failed
    uint64_t duplicate_segments = 0; // good copies adding no new good byte
    uint64_t duplicate_cpdus = 0;    // copies of an already delivered C_PDU (dropped)
    uint64_t inconsistent = 0;       // empty segment, size 0, beyond size, size mismatch
    uint64_t oversize = 0;           // C_PDU larger than max_bytes (dropped)
    uint64_t wrong_type = 0;         // D_PDU is not type 7 or 8 (ignored)
    uint64_t cpdus_complete = 0;     // C_PDUs delivered complete and error free
    uint64_t delivered_with_errors = 0;
    uint64_t expired = 0;       // windows that ended with the C_PDU incomplete
    uint64_t discarded = 0;     // expired and not delivered (error-free mode)
    uint64_t evicted = 0;       // incomplete entries dropped to respect the caps
    uint64_t held_in_order = 0; // complete C_PDUs that waited for an earlier one
};

struct non_arq_delivery {
    uint32_t source = 0;
    uint32_t destination = 0; // as received, bit 28 = group
    uint16_t cpdu_id = 0;
    bool expedited = false; // arrived in type 8 D_PDUs
    bool deliver_in_order = false;
    bool complete = true; // false: delivered with errors after its window expired
    bytes data;           // cpdu_size bytes; non-received bytes are zero
    std::vector<sis_block_range> errored;      // damaged bytes, sorted, merged
    std::vector<sis_block_range> non_received; // missing bytes, sorted, merged
};

class non_arq_receiver
{
public:
    explicit non_arq_receiver(
        const non_arq_receiver_config& config = non_arq_receiver_config());

    // One received NON-ARQ or EXPEDITED NON-ARQ D_PDU; segment_ok is false when its
    // CRC-32 failed (the segment then holds the bytes as received). Never throws on
    // any field values. Segments are keyed by (source, type, C_PDU ID).
    //
    // Reception window: the entry's deadline becomes now + the window of the latest
    // D_PDU seen for it (Annex C: the field is the remaining time from the start of that
    // D_PDU; `now` is later, so this errs on the long side), floored by min_window.
    //
    // In order: a complete C_PDU with DELIVER IN ORDER set is held while an incomplete
    // entry with the flag set, from the same source and type and with an earlier ID
    // (modulo 4096, within half the ID space), is still reassembling. It is released
    // when that entry completes, expires (delivered with errors or discarded) or is
    // evicted, so it never waits beyond the window of the earlier C_PDU. A C_PDU of
    // which no segment at all arrived is unknown and not waited for.
    void on_dpdu(const dpdu& d, bool segment_ok, double now);

    // Ends every entry whose deadline is <= now.
    void poll(double now);
    // Earliest deadline of an entry, +inf when none.
    double next_deadline() const;

    // Deliveries in the order they became deliverable; clears the queue.
    std::vector<non_arq_delivery> take_delivered();
    size_t pending_deliveries() const { return d_delivered.size(); }

    size_t entries() const { return d_entries.size(); }
    size_t buffered_bytes() const { return d_bytes; }
    const non_arq_receiver_config& config() const { return d_config; }
    const non_arq_receiver_counters& counters() const { return d_counters; }

private:
    using key = std::tuple<uint32_t, uint8_t, uint16_t>; // source, type, C_PDU ID

    enum : uint8_t { byte_missing = 0, byte_errored = 1, byte_good = 2 };

    struct entry {
        uint32_t destination = 0;
        bool deliver_in_order = false;
        uint16_t cpdu_size = 0;
        size_t good = 0; // bytes in state byte_good
        bytes data;
        bytes state; // one of byte_* per byte
        double first_arrival = 0;
        double deadline = 0;
        bool complete = false; // held for in-order delivery
    };

    void finish(std::map<key, entry>::iterator it, double now, bool complete);
    void release_held(uint32_t source, uint8_t type, double now);
    bool waits_for_earlier(const key& k) const;
    // Evicts oldest incomplete entries until within the caps; false if `keep` went.
    bool enforce_caps(const key& keep, double now);
    void remember(const key& k, double until);

    non_arq_receiver_config d_config;
    std::map<key, entry> d_entries;
    size_t d_bytes = 0;
    std::map<key, double> d_recent;            // delivered ID -> suppress copies until
    std::multimap<double, key> d_recent_order; // hold end -> ID, to age out / cap
    std::vector<non_arq_delivery> d_delivered;
    non_arq_receiver_counters d_counters;
};

} // namespace dl
} // namespace hfstack
} // namespace gr

#endif
