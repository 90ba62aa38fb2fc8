/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

/* A STANAG 5066 test client, sans-IO: the console tests of commercial HF stacks (ping,
 * throughput send-only / acknowledged / two-way, ARQ or non-ARQ, any SAP and priority,
 * any U_PDU size) as one SIS client that speaks sis_primitives. The simulator wires it
 * to a node engine in virtual time; hfstack-console wires it to a TCP connection to a
 * live SIS server in real time. Time is the `now` argument (seconds); no clock, socket
 * or thread.
 *
 * Use: start(now) binds; feed every primitive from the node to on_primitive(), call
 * on_timer() when now reaches next_deadline(), and send what take_outgoing() returns.
 *
 * Roles, any combination per client:
 *   pinger   sends ping U_PDUs to the peer, one at a time (the next ping_gap_s after the
 *            answer, or after ping_timeout_s without one) or every ping_interval_s,
 *            and times each round trip from the request to the answer's indication;
 *   echo     answers every ping with the same payload, echo_delay_s later;
 *   sender   keeps the node's queue supplied with U_PDUs of updu_size bytes, as long as
 *            the node has not said DATA_FLOW_OFF and (with node delivery confirmation,
 *            "acknowledged") fewer than window U_PDUs wait for their confirm. Without
 *            confirms the node's flow control is all that paces it: a server without
 *            one gets the whole send_bytes;
 *   sink     every client counts and checks the data U_PDUs it receives.
 *
 * U_PDU payload (after the RCOP/UDOP header, when one is used):
 *   'H' 'F' kind(1 data, 2 ping, 3 answer) flow seq(4, big endian) pattern...
 * where pattern byte i of sequence s is (s * 131 + i * 7) & 0xFF, so the sink detects
 * corrupt, duplicated and reordered U_PDUs. The smallest payload is these 8 bytes. */
#ifndef HFSTACK_KERNELS_TRAFFIC_TEST_CLIENT_H
#define HFSTACK_KERNELS_TRAFFIC_TEST_CLIENT_H

#include "sis_application.h"

#include <cstdint>
#include <limits>
#include <map>
#include <string>
#include <vector>

namespace gr {
namespace hfstack {
namespace traffic {

// How U_PDUs are framed for the client application.
enum class encapsulation : uint8_t {
    raw,  // the payload is the U_PDU
    rcop, // STANAG 5066 Annex F RCOP/UDOP header (6 bytes) in front of it
};

struct client_config {
    uint8_t sap = 13;  // our SAP (13: unassigned by Annex F, free for tests)
    uint32_t peer = 0; // node address the pinger and sender address
    uint8_t peer_sap = 13;
    bool arq = true; // ARQ or non-ARQ delivery
    bool expedited = false;
    uint8_t priority = 7; // 0..15
    uint32_t ttl = 0;     // SIS units of 2 s, 0 = infinite
    // Node-level delivery confirmation on data U_PDUs (ARQ only): "acknowledged"
    // throughput, and the sender's window counts confirms.
    bool confirm = false;
    encapsulation framing = encapsulation::raw;
    uint16_t application_id = 0x8066; // RCOP/UDOP header (user-defined range)
    uint8_t flow = 0;                 // tells the flows of several clients apart

    // pinger
    unsigned pings = 0;         // 0: not a pinger
    size_t ping_bytes = 16;     // U_PDU size
    double ping_interval_s = 0; // > 0: send every interval; 0: on return
    double ping_gap_s = 0;      // on return: wait this long after the answer
    double ping_timeout_s = 900;
    double ping_start_s = 0; // first ping this long after the bind is accepted

    // echo
    bool echo = false;
    double echo_delay_s = 0;

    // sender
    uint64_t send_bytes = 0; // U_PDU bytes to send (the last U_PDU may be shorter);
                             // 0: not a sender
    size_t updu_size = 2048;
    bool hold_sender = false; // the sender waits for release_sender() (e.g. until the
                              // peer's client has bound its SAP)
    bool send_after_pings = false; // the sender starts once the pings are done (a ping
                                   // first makes the link, as a connection set-up would)
    unsigned window = 64; // with confirm: U_PDUs awaiting their confirm; without:
                          // U_PDUs handed over at one instant before the node can
                          // answer with DATA_FLOW_OFF
};

// Throws std::invalid_argument naming the field: a SAP or priority above 15, a U_PDU or
// ping size below the 8-byte payload header (plus the RCOP header when used), a negative
// or non-finite time, confirm without ARQ.
void validate(const client_config& c);

struct ping_record {
    double sent_at = 0;
    double rtt_s = std::numeric_limits<double>::quiet_NaN(); // NaN: no answer
};

struct client_report {
    bool bound = false;
    double bound_at = std::numeric_limits<double>::quiet_NaN();
    std::string error; // why the client stopped (bind rejected, unbound), empty if not

    std::vector<ping_record> pings;

    uint64_t updus_sent = 0, bytes_sent = 0; // data U_PDUs handed to the node
    uint64_t updus_confirmed = 0, bytes_confirmed = 0;
    uint64_t updus_rejected = 0;
    std::map<uint8_t, uint64_t> rejections; // by sis_unidata_rejected_reason
    double first_send_at = std::numeric_limits<double>::quiet_NaN();
    uint64_t flow_off = 0; // DATA_FLOW_OFF received

    // Data U_PDUs received; bytes count whole U_PDUs (an RCOP header included), as sent.
    uint64_t updus_received = 0, bytes_received = 0;
    uint64_t duplicates = 0, out_of_order = 0, corrupt = 0, foreign = 0;
    // Per sending flow: (time, cumulative bytes) at each reception, for throughput over
    // time, and the sequence number expected next.
    std::map<uint8_t, std::vector<std::pair<double, uint64_t>>> received_by_flow;
    std::map<uint8_t, uint64_t> next_seq_by_flow;
};

class test_client : public sis_application
{
public:
    // Throws std::invalid_argument (see validate()).
    explicit test_client(client_config config);

    void start(double now) override;
    void on_primitive(const dl::sis_primitive& p, double now) override;
    void on_timer(double now) override;
    double next_deadline() const override;
    std::vector<dl::sis_primitive> take_outgoing() override;
    // Lets a hold_sender client start sending (no-op otherwise).
    void release_sender(double now);

    // The sender has handed every byte to the node (and, with confirm, seen every
    // confirm or rejection); the pinger has sent every ping and had each answered or
    // timed out. Clients with neither role are done at once.
    bool done() const override;
    const client_report& report() const { return d_report; }
    const client_config& config() const { return d_cfg; }

    // Bytes of a U_PDU of updu_size bytes inside any RCOP header; the smallest U_PDU.
    size_t payload_size(size_t updu_size) const;
    size_t min_updu_size() const;

private:
    enum kind : uint8_t { data = 1, ping = 2, answer = 3 };
    dl::sis_primitive
    unidata(kind k, uint32_t seq, size_t updu_size, uint32_t to, uint8_t to_sap) const;
    void send_ping(double now);
    void pump(double now);
    void on_unidata(const dl::sis_primitive& p, double now);
    size_t framing_size() const;
    bool pings_done() const;

    client_config d_cfg;
    client_report d_report;
    std::vector<dl::sis_primitive> d_out;
    bool d_flow_off = false;
    bool d_held = false;
    uint32_t d_data_seq = 0;
    uint64_t d_unconfirmed = 0;
    uint8_t d_rcop_updu_id = 0;
    double d_more_at = std::numeric_limits<double>::infinity(); // sender: next batch due
    double d_next_ping = std::numeric_limits<double>::infinity();
    double d_ping_deadline = std::numeric_limits<double>::infinity();
    bool d_ping_outstanding = false; // on return: the last ping awaits its answer
    size_t d_pings_answered = 0;
    bool d_pings_given_up = false; // interval: ping_timeout_s after the last one passed
    // Answers scheduled by the echo role: (due time, primitive).
    std::multimap<double, dl::sis_primitive> d_echo_due;
};

} // namespace traffic
} // namespace hfstack
} // namespace gr

#endif
