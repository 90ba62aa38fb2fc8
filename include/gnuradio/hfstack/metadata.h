/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

/* PDU metadata keys used across gr-hfstack, defined once. */
#ifndef INCLUDED_HFSTACK_METADATA_H
#define INCLUDED_HFSTACK_METADATA_H

#include <pmt/pmt.h>

namespace gr {
namespace hfstack {
namespace metadata {

// SIS connection a primitive belongs to (integer).
inline const pmt::pmt_t& client_id()
{
    static const pmt::pmt_t key = pmt::mp("client_id");
    return key;
}
// SIS direction: true for bytes from the client to the node.
inline const pmt::pmt_t& from_client()
{
    static const pmt::pmt_t key = pmt::mp("from_client");
    return key;
}
// Time of a PDU in seconds since the Unix epoch (double).
inline const pmt::pmt_t& time()
{
    static const pmt::pmt_t key = pmt::mp("time");
    return key;
}

// SIS connection events between sis_server and node, in PDUs with an empty payload:
// "connected", "closed", "invalid" (server -> node; "invalid" carries `reason` and
// `fatal`; "connected" carries `reports_written`), "written" and "dropped" (server ->
// node, carrying `delivery`: a numbered primitive reached the client's socket, or could
// not, its client gone), "disconnect" (node -> server, after any last primitives;
// carries `reason`).
inline const pmt::pmt_t& client_event()
{
    static const pmt::pmt_t key = pmt::mp("client_event");
    return key;
}
// Human-readable explanation accompanying an event (string).
inline const pmt::pmt_t& reason()
{
    static const pmt::pmt_t key = pmt::mp("reason");
    return key;
}
// "invalid" event: true when the connection must be closed at once (bool).
inline const pmt::pmt_t& fatal()
{
    static const pmt::pmt_t key = pmt::mp("fatal");
    return key;
}
// A primitive the node's journal follows until it reaches the client's socket: its
// delivery number (integer, on node -> server PDUs and in "written"/"dropped" events).
inline const pmt::pmt_t& delivery()
{
    static const pmt::pmt_t key = pmt::mp("delivery");
    return key;
}
// With `delivery`: the node's journal, for the server to record the outcome in its own
// thread right after the write (a delivery_settler_ptr in a pmt any).
inline const pmt::pmt_t& settler()
{
    static const pmt::pmt_t key = pmt::mp("settler");
    return key;
}
// "connected" event: true when the server reports "written"/"dropped" for every
// primitive that carries a `delivery` number (bool).
inline const pmt::pmt_t& reports_written()
{
    static const pmt::pmt_t key = pmt::mp("reports_written");
    return key;
}
// Waveform mode of a burst: user data rate in bps (integer) and interleaver
// ("none", "short" or "long"), on to_phy and from_phy PDUs.
inline const pmt::pmt_t& data_rate()
{
    static const pmt::pmt_t key = pmt::mp("data_rate");
    return key;
}
inline const pmt::pmt_t& interleaver()
{
    static const pmt::pmt_t key = pmt::mp("interleaver");
    return key;
}
// The same mode by its name ("2400S", "9600L", "12800U", STANAG 5069's "WN8/3kHz/L"),
// on s4539_rx's PDUs and burst_info messages, and on PDUs to s4539_tx, where it takes
// precedence over data_rate and interleaver (symbol).
inline const pmt::pmt_t& mode()
{
    static const pmt::pmt_t key = pmt::mp("mode");
    return key;
}
// Number of user bytes of a received burst, on s4539_rx's burst_info messages (integer).
inline const pmt::pmt_t& bytes()
{
    static const pmt::pmt_t key = pmt::mp("bytes");
    return key;
}
// Signal-to-noise ratio of a received burst, dB in 3 kHz (double).
inline const pmt::pmt_t& snr_db()
{
    static const pmt::pmt_t key = pmt::mp("snr_db");
    return key;
}
// The same over the burst's last 20 seconds (its last piece's: the whole burst's when
// shorter; double): the data rate steps up on it
// (dl::rate_policy_config::step_up_on_recent).
inline const pmt::pmt_t& snr_db_recent()
{
    static const pmt::pmt_t key = pmt::mp("snr_db_recent");
    return key;
}
// Carrier frequency offset of a received burst against the nominal carrier, Hz (double).
inline const pmt::pmt_t& frequency_offset_hz()
{
    static const pmt::pmt_t key = pmt::mp("frequency_offset_hz");
    return key;
}
// The modem knows some bytes of this received burst are bad (bool).
inline const pmt::pmt_t& bytes_bad()
{
    static const pmt::pmt_t key = pmt::mp("bytes_bad");
    return key;
}
// The readings of the waveform's uncertain constants a received STANAG 4539 App C or
// STANAG 5069 burst was taken under, found by the receiver or told (symbol): NAME=VALUE
// words as the modem's settings take them, e.g. "scrambler=a tail_biting=first_pair_bit_7
// pn_alignment=per_symbol wid_parity=checksum".
inline const pmt::pmt_t& readings()
{
    static const pmt::pmt_t key = pmt::mp("readings");
    return key;
}
// More decoded bytes of this received burst follow in later PDUs (bool): a streaming
// modem hands on each interleaver block as it decodes it. Absent or false: the burst
// ended with this PDU.
inline const pmt::pmt_t& burst_continues()
{
    static const pmt::pmt_t key = pmt::mp("burst_continues");
    return key;
}
// Protocol time on the clock the modem emulators of one machine share (the monotonic
// clock since its epoch, times the time scale; double): on an emulator's bursts and
// status messages, when the event happened on the emulated channel; on a node's bursts
// to an emulator, when the node decided to send. A real-time process runs a little late
// (its thread wakes late, messages queue); with these times the decisions follow the
// channel's time as the simulator's do, and the delays do not add up burst by burst.
inline const pmt::pmt_t& channel_time()
{
    static const pmt::pmt_t key = pmt::mp("channel_time");
    return key;
}
// Expected air time of a transmission in seconds (double, to_phy).
inline const pmt::pmt_t& air_time()
{
    static const pmt::pmt_t key = pmt::mp("air_time");
    return key;
}
// Modem status messages on phy_status are dicts with `event` = "tx_started",
// "tx_finished", "carrier_on" or "carrier_off" (symbol).
inline const pmt::pmt_t& event()
{
    static const pmt::pmt_t key = pmt::mp("event");
    return key;
}

} // namespace metadata
} // namespace hfstack
} // namespace gr

#endif
