/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

/* SLEP: the SIS Layer Extension Protocol's services (after Isode S5066-APP3) over one
 * SAP of a STANAG 5066 node, as a sans-IO kernel and a SIS client. docs/slep.md gives
 * the wire format (slep_wire.h) and the rules below in full.
 *
 *  - Extended addresses: 256 per SAP (0 = none); `listen(address)` accepts streams and
 *    datagrams sent to one.
 *  - Datagrams: unreliable (non-ARQ, or ARQ without confirmation), or reliable (ARQ with
 *    client delivery confirmation, resent after a rejection until give_up_s, duplicates
 *    dropped by id at the receiver).
 *  - Streams: opened with immediate data (a short request crosses in the first
 *    transmission), data, half-close, reset; byte offsets so that nothing is lost,
 *    duplicated or reordered when 5066 rejects U_PDUs across a link break (SLEP keeps
 *    what was not confirmed and sends it again); credit-based flow control (a receiver
 *    grants `window` bytes beyond what its reader consumed), so a reader that never
 *    reads bounds the memory; DEFLATE per stream or datagram.
 *  - Restarts: every OPEN and HELLO carries the sender's incarnation (a value that grows
 *    from one start to the next, e.g. the clock at start); a peer whose incarnation grows
 *    has restarted, so its old streams are reset, never continued with another's bytes. A
 * SLEP tells a peer its incarnation in a HELLO when it first hears from it, when the peer
 * sends for a stream it does not know, and every keepalive_s of silence while they share
 * streams. Stream numbers start from the incarnation, so late PDUs of an old stream do
 * not meet a new one. Reliability rides on 5066: stream PDUs go ARQ with client delivery
 * confirmation; SLEP matches each S_UNIDATA_REQUEST_CONFIRM / _REJECTED to its PDU by the
 * header the server echoes (STANAG 5066 servers echo the start of the U_PDU; ours 16
 * bytes).
 *
 * Plain C++17: `now` in seconds as a parameter, actions out, no clock, socket or thread.
 */
#ifndef HFSTACK_KERNELS_NET_SLEP_H
#define HFSTACK_KERNELS_NET_SLEP_H

#include "deflate.h"
#include "dl/sis.h"
#include "slep_wire.h"

#include <array>
#include <deque>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace gr {
namespace hfstack {
namespace net {

// Bytes a stream's sender may send before the receiver's first WINDOW: part of the
// protocol, so a stream's first transmission can fill an HF turn.
constexpr uint32_t slep_initial_window = 262144;

struct slep_config {
    uint8_t sap = 13; // Annex F leaves 13-15 unassigned; both ends must agree
    uint8_t rank = 0;
    uint32_t incarnation = 1; // nonzero; larger at each start (RFC 1982 order)
    uint32_t window =
        slep_initial_window;     // bytes a stream buffers for its reader (>= initial)
    size_t send_buffer = 262144; // bytes a stream holds written but not confirmed
    size_t max_streams = 4096;
    size_t max_outstanding_bytes =
        524288;            // U_PDU bytes at the node awaiting confirmation
    double retry_s = 15.0; // after a rejection (link down, TTL), before sending again
    double give_up_s =
        900.0; // a stream or reliable datagram without progress this long fails
    double time_wait_s = 1800; // an ended stream's late duplicates are dropped this long
    // With streams to a peer that speaks HELLO and nothing heard from it this long, send
    // it a HELLO: a peer that restarted answers with its new incarnation, so its streams
    // are reset within keepalive_s and a round trip even when neither side writes. 0 =
    // never.
    double keepalive_s = 120;
    // DATA that arrives before its stream's OPEN (possible only when 5066 delivers out of
    // order, or a rejected OPEN was sent again) is kept this long; then the stream is
    // refused with RESET (unknown stream): the opener of a stream this side lost in a
    // restart hears so within this bound even when it does not speak HELLO.
    double early_data_s = 60;
    bool in_order = true; // ask 5066 for in-order delivery of stream PDUs
    uint8_t priority = 0; // 5066 priority of stream PDUs unless the stream says
    // Largest stream PDU (U_PDU) cut, below the node's MTU: 2042 bytes make a C_PDU (its
    // 1-byte header, the S_PDU's 3) of exactly two 1023-byte D_PDU segments, where 2048
    // would leave a 6-byte third one costing a D_PDU header and an ARQ window slot.
    size_t stream_updu_bytes = 2042;
    // A stream's new bytes wait at most this long for more before they are sent, so what
    // an application writes in quick succession (a proxy's accept, the server's answer
    // and its close) travels as one PDU, one delivery confirmation back, instead of one
    // each. Not when a whole PDU is ready or the stream's end is written. 0 = at once.
    double coalesce_s = 0.05;
    // What confirms a reliable PDU: client (the default: the far node confirms, with a
    // delivery confirmation sent back over the air, once the far SLEP took it) or node
    // (the far node's ARQ acknowledgement, which crosses anyway: no more bytes on the
    // air, but a PDU that reaches a node with no SLEP bound on the SAP is confirmed and
    // lost).
    dl::sis_delivery_confirmation confirmation = dl::sis_delivery_confirmation::client;
    // The far SLEP acknowledges stream data itself (ACK, or an ACK carried by its own
    // DATA): stream PDUs but a stream's OPEN and FIN go with node delivery
    // confirmation (the ARQ acknowledgement, which crosses anyway), the last PDU of
    // each burst asks for an ACK, and bytes count as confirmed only once ACKed. Both
    // ends must speak ACK (a SLEP without it drops such PDUs as malformed).
    bool peer_acks = false;
    // Within a long burst, a PDU asks for an ACK after this many bytes more (once a
    // transmission at 1200 bps), so the sender's buffer empties as the burst goes.
    size_t ack_every_bytes = 16384;
    // An ACK waits this long for DATA of ours to the same node to ride on.
    double ack_delay_s = 0.05;
    // A PDU the node confirmed but the far SLEP has not ACKed this long (it reached a
    // node where no SLEP was bound) is sent again.
    double ack_timeout_s = 300;
};

// A stream as the application names it: (peer node, who opened it, number).
using slep_stream = uint64_t;
constexpr slep_stream make_slep_stream(uint32_t node, bool opened_here, uint32_t number)
{
    return uint64_t(node & 0x1FFFFFFF) << 33 | uint64_t(opened_here) << 32 | number;
}
inline uint32_t slep_stream_node(slep_stream s) { return uint32_t(s >> 33); }

struct slep_event {
    enum class kind {
        bound,              // the node accepted our bind
        unbound,            // the node dropped us (or refused the bind: `text`)
        incoming,           // a stream opened by a peer to an address we listen on
        readable,           // stream data (or its end) waits for read()
        writable,           // a stream's send buffer has room again
        closed,             // both directions ended and every byte confirmed
        reset,              // the stream ended abnormally: `reason`
        datagram,           // a datagram: node, to, from, data, `reliable`
        datagram_delivered, // a reliable datagram of ours was confirmed: id
        datagram_failed,    // ... could not be delivered within give_up_s: id
    };
    kind what = kind::bound;
    slep_stream stream = 0;
    uint32_t node = 0;
    uint8_t to = 0, from = 0;
    slep_reset_reason reason = slep_reset_reason::aborted;
    uint16_t id = 0;
    bool reliable = false;
    bytes data;
    std::string text;
};

struct slep_actions {
    std::vector<dl::sis_primitive> to_sis;
    std::vector<slep_event> events;
    std::vector<std::string> notices; // first occurrence of each kind of trouble
};

struct slep_counters {
    std::array<uint64_t, 10> pdus_sent{}, pdus_received{}; // by slep_type
    uint64_t bytes_sent = 0, bytes_received = 0;           // U_PDU bytes
    uint64_t plain_written = 0, wire_written = 0;          // compression: in / out
    uint64_t retransmissions = 0, rejections = 0;
    uint64_t streams_opened = 0, streams_accepted = 0, streams_closed = 0,
             streams_reset = 0;
    uint64_t malformed = 0, duplicates = 0, stale = 0, refused = 0;
    uint64_t peer_restarts = 0;
};

struct slep_stream_info {
    uint32_t node = 0;
    uint8_t local = 0, remote = 0;
    bool opened_here = false, compressed = false;
    size_t readable = 0;    // wire bytes received in order, not yet read
    size_t send_space = 0;  // bytes write() would take now
    size_t unconfirmed = 0; // written, not yet confirmed by the far client
    bool finished_writing = false, peer_finished = false;
    uint64_t bytes_written = 0, bytes_read = 0; // plain, as the application sees them
    uint64_t wire_written = 0, wire_read = 0;   // the same after DEFLATE (equal without)
    // When anything last came from the stream's peer node (any SLEP PDU, or a delivery
    // confirmation of ours): -1 never.
    double peer_heard = -1;
};

class slep
{
public:
    // Throws std::invalid_argument: sap > 15, incarnation 0, window <
    // slep_initial_window, stream_updu_bytes < 128.
    explicit slep(slep_config config);

    void start(double now); // S_BIND_REQUEST; call when the SIS connection is up
    void on_disconnected(double now);
    void on_sis(const dl::sis_primitive& p, double now);
    void on_timer(double now);
    slep_actions take_actions();
    double next_deadline() const;

    void listen(uint8_t address);
    void unlisten(uint8_t address);

    // Datagrams; `reliable` returns the id its delivered/failed event will carry.
    // Throws std::invalid_argument when the data cannot fit one U_PDU.
    void send_datagram(uint32_t node,
                       uint8_t to,
                       uint8_t from,
                       const bytes& data,
                       bool compress,
                       bool arq,
                       double now);
    uint16_t send_reliable(uint32_t node,
                           uint8_t to,
                           uint8_t from,
                           const bytes& data,
                           bool compress,
                           double now);

    // Streams. open() sends the OPEN with `data` at once (with fin: the whole request).
    // `priority`: the 5066 priority of its PDUs; `send_priority`: see set_send_priority.
    slep_stream open(uint32_t node,
                     uint8_t to,
                     uint8_t from,
                     const bytes& data,
                     bool compress,
                     bool fin,
                     double now,
                     std::optional<uint8_t> priority = std::nullopt,
                     uint8_t send_priority = 0);
    // The order in which this end hands streams' PDUs to the node while SIS flow control
    // or max_outstanding_bytes holds some back: higher first, round robin among equals
    // (0 unless set). The node's own queue then orders them by 5066 priority.
    void set_send_priority(slep_stream s, uint8_t send_priority);
    // Takes as much as the send buffer has room for; returns how many bytes.
    size_t write(slep_stream s, const uint8_t* data, size_t size, double now);
    void finish(slep_stream s, double now); // half-close: no more writes
    // Up to `max` bytes the peer sent (inflated); empty with eof() once it finished.
    bytes read(slep_stream s, size_t max, double now);
    bool eof(slep_stream s) const;
    void reset(slep_stream s, double now); // abort; the peer gets RESET (aborted)
    bool exists(slep_stream s) const;
    std::optional<slep_stream_info> info(slep_stream s) const;

    bool bound() const { return d_bound; }
    size_t mtu() const { return d_mtu; }
    size_t stream_count() const { return d_streams.size(); }
    const slep_counters& counters() const { return d_counters; }
    const slep_config& config() const { return d_cfg; }

private:
    struct segment {
        uint32_t offset = 0, length = 0;
        bool fin = false;
        bool is_open = false; // sent as the OPEN (offset 0)
        bool outstanding = false, confirmed = false;
        double resend_at = -1; // >= 0: rejected, send again then
        // peer_acks: the burst's last PDU asks for an ACK; once the node confirmed it
        // (reached), it waits for the ACK until ack_wait_until.
        bool ask_ack = false, reached = false;
        double ack_wait_until = -1;
    };
    struct stream_state {
        uint32_t node = 0, number = 0;
        bool opened_here = false, compressed = false;
        uint8_t local = 0, remote = 0, priority = 0, send_priority = 0;
        // sending
        bytes send_buf;         // wire bytes from send_base on
        uint32_t send_base = 0; // lowest unconfirmed offset
        uint32_t send_next = 0; // next offset never sent
        uint32_t send_limit = slep_initial_window;
        std::map<uint32_t, segment> segments; // by offset
        uint32_t ack_asked_at = 0;            // peer_acks: end of the last PDU asking
        bool open_sent = false, open_confirmed = false;
        double open_resend_at = -1; // an OPEN without data, rejected: send again then
        bool fin_written = false, fin_sent = false, fin_confirmed = false;
        bool writable_wanted = false;
        double unsent_since = 0; // when the oldest bytes not yet sent were written
        deflater tx_z;
        // receiving
        bytes recv_buf;         // in order, not yet read (wire bytes)
        uint32_t recv_base = 0; // offset of recv_buf[0]
        std::map<uint32_t, bytes> out_of_order;
        uint32_t granted = slep_initial_window; // limit last advertised
        bool window_due = false;
        std::optional<uint32_t> fin_offset;
        inflater rx_z;
        bytes plain;                                // inflated, not yet read
        uint64_t bytes_written = 0, bytes_read = 0; // plain
        uint64_t wire_written = 0, wire_read = 0;   // deflated
        double last_progress = 0;
        uint32_t recv_next() const { return recv_base + uint32_t(recv_buf.size()); }
        uint32_t send_end() const
        {
            return send_base + uint32_t(send_buf.size());
        } // written
    };
    // What a PDU awaiting confirmation was: a stream segment, an OPEN without data, ...
    enum class pdu_role { segment, empty_open, reliable, window, reset, ack, other };
    struct outstanding {
        uint32_t node;
        bytes header; // what the server's echo is matched against
        pdu_role role;
        slep_stream stream = 0;
        uint32_t offset = 0;
        uint16_t id = 0;
        size_t size = 0;
    };
    struct reliable_out {
        uint32_t node;
        bytes pdu;
        double first_sent, resend_at = -1;
        bool outstanding = false;
    };
    // An ACK this side owes for a stream the peer sends on.
    struct ack_owed {
        uint32_t node = 0, number = 0;
        bool opened_here = false;
        uint8_t to = 0, from = 0;
        uint32_t offset = 0; // for a stream ended since (else the stream's own)
        double at = 0;       // sent alone from then on
    };
    struct reset_out {
        uint32_t node;
        slep_pdu pdu;
        unsigned tries = 0;
        double resend_at = 0;
    };

    void pump(double now);
    void pump_streams(uint8_t send_priority, double now);   // one send priority's streams
    void count_wire_written(stream_state& s, size_t bytes); // the stream's and in total
    void flush_deflater(stream_state& s);                   // sync flush, counted
    bool unsent(const stream_state& s) const; // written bytes not yet in a PDU
    // Whether the stream's unsent bytes wait for more (coalesce_s), and until when.
    bool coalescing(const stream_state& s, double now) const;
    double coalesce_until(const stream_state& s) const;
    bool room() const;
    void send_segment(slep_stream key, stream_state& s, segment& seg);
    void send_empty_open(slep_stream key, stream_state& s);
    bool awaiting_confirmation(const stream_state& s) const;
    void submit(uint32_t node,
                const slep_pdu& pdu,
                bool arq,
                bool confirm,
                bool in_order,
                uint8_t priority,
                pdu_role role,
                slep_stream key,
                uint32_t offset,
                uint16_t id,
                bool node_confirmation = false); // else d_cfg.confirmation
    void on_confirm(const dl::sis_primitive& p, bool delivered, double now);
    void on_indication(const dl::sis_primitive& p, double now);
    void on_open(uint32_t node, const slep_pdu& p, double now);
    void on_data(uint32_t node, const slep_pdu& p, double now);
    void on_hello(uint32_t node, const slep_pdu& p, double now);
    // The peer's new incarnation ends every stream with its former self.
    void peer_restarted(uint32_t node, double now);
    void want_hello(uint32_t node);                   // sent at most once per retry_s
    bool window_stalled(const stream_state& s) const; // bytes to send, no credit
    double heard_from(uint32_t node) const;
    void accept_bytes(slep_stream key,
                      stream_state& s,
                      uint32_t offset,
                      const bytes& data,
                      bool fin,
                      double now);
    void end_stream(slep_stream key, slep_reset_reason why, bool tell_peer, double now);
    void send_reset(uint32_t node,
                    uint32_t number,
                    bool we_opened,
                    uint8_t to,
                    uint8_t from,
                    slep_reset_reason why,
                    double now);
    void check_closed(slep_stream key, stream_state& s);
    // peer_acks: the confirmed segments at the front leave the send buffer.
    void release_confirmed(slep_stream key, stream_state& s);
    void owe_ack(slep_stream key, uint32_t offset, double at);
    uint32_t owed_offset(slep_stream key, const ack_owed& a) const;
    void
    on_ack(uint32_t node, bool we_opened, uint32_t number, uint32_t offset, double now);
    bool wants_node_confirmation(const segment& seg) const;
    void event(slep_event e) { d_actions.events.push_back(std::move(e)); }
    void notice(const std::string& kind, const std::string& text);
    void drop_malformed(const std::string& why);
    stream_state* find(slep_stream key);
    const stream_state* find(slep_stream key) const;
    size_t max_segment(slep_type t) const;

    slep_config d_cfg;
    bool d_bound = false, d_flow_on = true;
    size_t d_mtu = 2048;
    std::set<uint8_t> d_listening;
    std::map<slep_stream, stream_state> d_streams;
    std::map<slep_stream, double> d_time_wait; // ended streams: until when
    // What this end knows of each peer node it has talked to.
    struct peer_state {
        std::optional<uint32_t> incarnation; // from its OPENs and HELLOs
        bool speaks_hello = false;           // it sent a HELLO: keepalives go to it
        double last_heard = -1;              // any PDU from it, any confirmation to it
        double hello_sent_at = -1e300;
        bool hello_due = false;
        // A first HELLO waits behind our first stream PDU to the peer (the answer it
        // waits for), until hello_not_before at the latest.
        bool answered = true;
        double hello_not_before = -1e300;
    };
    std::map<uint32_t, peer_state> d_peers;
    std::map<slep_stream, std::vector<std::pair<slep_pdu, double>>>
        d_early; // DATA before OPEN
    std::deque<outstanding> d_outstanding;
    size_t d_outstanding_bytes = 0;
    std::map<uint16_t, reliable_out> d_reliable;
    std::map<std::pair<uint32_t, uint8_t>, std::deque<uint16_t>>
        d_seen_ids; // per peer, address
    std::deque<reset_out> d_resets;
    std::map<slep_stream, ack_owed> d_acks;
    uint32_t d_next_number;
    uint16_t d_next_id = 1;
    slep_stream d_round_robin = 0;
    slep_actions d_actions;
    slep_counters d_counters;
    std::set<std::string> d_noticed;
    double d_now = 0;
};

} // namespace net
} // namespace hfstack
} // namespace gr

#endif
