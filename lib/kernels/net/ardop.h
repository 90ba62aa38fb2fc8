/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

/* An ARDOP-compatible host interface on a STANAG 5066 node, as a sans-IO kernel and a
 * SIS client: programs written for an ARDOP TNC (Pat, the Winlink client) drive our
 * node through it unchanged. Written from the ARDOP TNC host interface specification
 * (docs/ardop.md lists each command, what it maps to, and what answers FAULT).
 *
 *  - Host side, as the ARDOP TNC's TCP interface: a command connection (lines ending in
 *    CR, answered with their echo, a value or `FAULT text`; asynchronous lines such as
 *    NEWSTATE, CONNECTED, DISCONNECTED, BUFFER, TARGET) and a data connection (host to
 *    TNC: 2-byte big-endian length and the bytes; TNC to host: 2-byte length, a 3-byte
 *    tag ARQ or FEC, and the bytes).
 *  - Air side: an ARQ session is one SLEP stream (slep.h) between the two TNCs, so its
 *    bytes and its end survive link breaks and a restarted peer is noticed. The stream
 *    opens with a connect request line (`CONNECT caller target bandwidth` CR) and the
 *    called TNC answers `OK bandwidth` CR or `REJECT reason` CR; then both directions
 *    carry the session's bytes, unchanged. DISCONNECT half-closes the stream (after the
 *    bytes written); the far TNC, once it has handed every byte to its host, reports
 *    DISCONNECTED and closes its half too. ABORT, a host that goes away or an ARQ
 *    timeout without progress resets the stream. FEC mode sends each host data frame
 *    as one non-ARQ SLEP datagram to a group (broadcast by default).
 *  - Callsigns map to STANAG 5066 node addresses by a table; an incoming session is
 *    accepted only from a node in the table, to MYCALL or one of MYAUX, while LISTEN is
 *    on and no other session is up.
 *
 * Plain C++17: `now` in seconds as a parameter, actions out, no clock, socket or thread.
 * Nothing a host or the air sends throws. */
#ifndef HFSTACK_KERNELS_NET_ARDOP_H
#define HFSTACK_KERNELS_NET_ARDOP_H

#include "slep.h"

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace gr {
namespace hfstack {
namespace net {

struct ardop_config {
    slep_config slep;    // its sap: both TNCs agree (default 13, SLEP's)
    uint8_t address = 8; // SLEP extended address both TNCs listen on and open to
    std::map<std::string, uint32_t> stations; // callsign (upper case) -> node
    uint32_t fec_destination = 0x1FFFFFFF;    // FEC frames: broadcast 31.255.255.255
    double connect_timeout_s = 120;           // ARQCALL without an answer this long fails
    double disconnect_timeout_s = 60; // a DISCONNECT not completed this long is an abort
    // Bytes of the far station's data per ARQ frame to the host. Small, because Pat
    // reads one frame into whatever buffer it has at hand.
    size_t data_frame_bytes = 256;
    // A host data frame whose bytes do not all arrive this long after its length is
    // dropped with a FAULT, and the data connection read afresh from the next byte.
    double data_frame_timeout_s = 10;
    // Between the last byte handed to the host and DISCONNECTED: the host reads its
    // command and data connections in no fixed order, and a DISCONNECTED read first
    // would cut off bytes still in the other.
    double disconnected_delay_s = 1.0;
    // The same the other way round: the far station's first bytes wait after CONNECTED
    // until the host has said or sent something since (it has seen the connection), or
    // this long at most, so that a host reading its data connection first does not drop
    // them as bytes of no session.
    double connected_hold_s = 1.0;
    size_t max_pending = 1 << 20; // host bytes held before SLEP takes them
    size_t max_line = 512;        // a longer command line is a FAULT
    std::string version = "hfstack ARDOP-compatible host interface 1";
};

struct ardop_actions {
    std::vector<dl::sis_primitive> to_sis;
    std::string to_command; // lines for the host's command connection
    bytes to_data;          // frames for the host's data connection
    std::vector<std::string> notices;
};

struct ardop_counters {
    uint64_t commands = 0, faults = 0;
    uint64_t sessions_called = 0, sessions_answered = 0, sessions_refused = 0;
    uint64_t sessions_failed = 0, sessions_aborted = 0;
    uint64_t bytes_from_host = 0, bytes_to_host = 0;
    uint64_t fec_frames_sent = 0, fec_frames_received = 0;
    uint64_t bad_requests = 0; // streams to our address that did not start as ours
    uint64_t fec_frames_dropped_unread = 0; // the host was not reading its data
    uint64_t busy_reports = 0;              // BUSY lines sent
};

enum class ardop_state { disc, connecting, connected, disconnecting };

class ardop_tnc
{
public:
    // Throws std::invalid_argument: a callsign the table cannot hold, or SLEP's own.
    explicit ardop_tnc(ardop_config config);

    // SIS side.
    void start(double now);
    void on_disconnected(double now);
    void on_sis(const dl::sis_primitive& p, double now);
    void on_timer(double now);
    double next_deadline() const;

    // Host side: bytes from the command and data connections; a host that closed
    // either (the session, if any, is aborted and the settings start afresh).
    void on_command_bytes(const uint8_t* data, size_t size, double now);
    void on_data_bytes(const uint8_t* data, size_t size, double now);
    void on_host_closed(double now);
    // The app holds too much output for a host that does not read its data connection:
    // while not reading, the session's bytes wait in SLEP, whose window stops the far
    // sender, and FEC frames are dropped (counted); reading again hands what waited.
    void set_host_reading(bool reading, double now);
    bool host_reading() const { return d_host_reading; }
    // The node's carrier sense: the host hears `BUSY TRUE` / `BUSY FALSE` on each change.
    void set_channel_busy(bool busy);

    ardop_actions take_actions();
    ardop_state state() const { return d_state; }
    bool bound() const { return d_slep.bound(); }
    // Host bytes waiting for SLEP: the app stops reading the data connection above
    // max_pending.
    size_t pending() const { return d_pending.size(); }
    const ardop_counters& counters() const { return d_counters; }
    const slep& transport() const { return d_slep; }

    // "N0CALL", "N0CALL-7": 3-7 letters and digits, an optional SSID -0..-15 or -A..-Z
    // ("-0" dropped); upper case, or nullopt.
    static std::optional<std::string> normalize_call(const std::string& text);

private:
    void command(const std::string& line, double now);
    void reply(const std::string& line) { d_actions.to_command += line + "\r"; }
    void fault(const std::string& text);
    void new_state(ardop_state s);
    void data_frame(bytes frame, double now);
    void arq_call(const std::string& target, double now);
    void absorb(double now);
    void on_incoming(slep_stream s, double now);
    void on_readable(slep_stream s, double now);
    void on_stream_end(slep_stream s, bool reset, double now);
    void answer_request(slep_stream s, const std::string& line, double now);
    void caller_heard(const std::string& line, double now);
    void connected(const std::string& remote, bool we_called, double now);
    void end_session(const std::string& why, double now); // reset stream, DISCONNECTED
    void begin_disconnect(double now);
    void feed_slep(double now); // pending host bytes into the stream
    void deliver(const bytes& b, double now);
    void flush_held(double now);          // held bytes to the host now
    void release_held(double now);        // ... and whatever waited for them
    void check_peer_finished(double now); // the far end's half is over: disconnect
    void send_buffer_state(bool always);
    uint64_t outstanding() const; // host bytes not yet confirmed by the far station
    // When the session's idle time (ARQTIMEOUT) began; -1 while it is not idle.
    double idle_since() const;
    void reset_settings();
    std::string bandwidth_text() const;
    void notice(const std::string& kind, const std::string& text);

    ardop_config d_cfg;
    slep d_slep;
    ardop_state d_state = ardop_state::disc;
    // Settings the host makes.
    std::string d_mycall, d_grid;
    std::vector<std::string> d_aux;
    bool d_listen = true, d_fec_mode = false, d_cwid = false, d_autobreak = true;
    bool d_host_reading = true, d_channel_busy = false;
    unsigned d_bandwidth = 500, d_bandwidth_connected = 500;
    bool d_forced = false;
    std::map<std::string, std::string> d_kept; // settings kept, without effect
    unsigned d_arq_timeout = 120;
    std::string d_fec_mode_name = "4PSK.500.100";
    unsigned d_fec_repeats = 0;
    // The session.
    std::optional<slep_stream> d_stream;
    std::string d_remote, d_target;
    bool d_we_called = false, d_answered = false; // answer line seen / sent
    std::string d_answer_line;                    // caller: the answer as it arrives
    std::string d_request_line;                   // callee: the request as it arrives
    bytes d_pending;                              // host bytes not yet in SLEP
    bool d_finish_wanted = false;
    double d_deadline_connect = -1, d_deadline_disconnect = -1;
    double d_last_progress = 0;
    double d_disconnected_at = -1; // far end finished: DISCONNECTED due then
    double d_hold_until = -1;      // bytes for the host wait until then (or the host)
    bytes d_held;
    uint64_t d_last_buffer = ~uint64_t(0);
    // Streams refused, ending: their request bytes are read and dropped.
    std::set<slep_stream> d_refused;
    std::map<slep_stream, std::string> d_unanswered; // incoming, request incomplete
    // Host input.
    std::string d_line;
    bool d_line_too_long = false;
    bytes d_data_in;
    double d_data_since = -1; // when the incomplete data frame's first byte came
    double d_now_hint = 0;    // the latest `now`, for progress seen deep in a call
    ardop_actions d_actions;
    ardop_counters d_counters;
    std::set<std::string> d_noticed;
};

} // namespace net
} // namespace hfstack
} // namespace gr

#endif
