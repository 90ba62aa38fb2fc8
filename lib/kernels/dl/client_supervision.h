/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

/* Watching over SIS clients (STANAG 5066 Annex A): keep-alive in both directions,
 * and unbinding clients that send too many invalid primitives or flood expedited
 * requests. Sans-IO: the caller passes `now` (seconds) and collects the primitives to
 * send and the connections to close. */
#ifndef HFSTACK_KERNELS_DL_CLIENT_SUPERVISION_H
#define HFSTACK_KERNELS_DL_CLIENT_SUPERVISION_H

#include "sap_table.h"

#include <deque>
#include <limits>
#include <map>
#include <string>

namespace gr {
namespace hfstack {
namespace dl {

struct client_supervision_config {
    // The node sends S_KEEP_ALIVE to a client silent this long (Annex A: not more often
    // than once per 120 s); infinity disables it.
    double keep_alive_interval_s = 120.0;
    // A client that does not answer the node's S_KEEP_ALIVE within this time is
    // unbound (reason: keep-alive inactivity). Annex A asks for answers within 10 s.
    double keep_alive_answer_s = 10.0;
    // More than this many invalid primitives within invalid_window_s: unbound
    // (reason: too many invalid primitives).
    unsigned max_invalid_primitives = 5;
    double invalid_window_s = 60.0;
    // More than this many expedited requests within expedited_window_s: unbound
    // (reason: too many expedited requests).
    unsigned max_expedited_requests = 50;
    double expedited_window_s = 60.0;
    // Protocol seconds per real second (in_protocol_time() sets it): what the disconnect
    // details say in real seconds, as the client waited, with the protocol figure beside.
    double time_scale = 1.0;
};

// The same timers in protocol seconds when protocol time runs `time_scale` times
// faster than real time (an emulated link): SIS timers face real clients, which
// expect Annex A's real-time values (keep-alive at most once per 120 s, 10 s to
// answer), so every interval is multiplied by time_scale (and time_scale recorded).
client_supervision_config in_protocol_time(client_supervision_config c,
                                           double time_scale);

struct client_disconnect {
    uint32_t client = 0;
    sis_unbind_reason reason = sis_unbind_reason::unknown;
    std::string detail; // for the log: what the client did
};

struct client_supervision_counters {
    uint64_t keep_alives_received = 0;
    uint64_t keep_alives_answered = 0;
    uint64_t keep_alives_sent = 0;
    uint64_t invalid_primitives = 0;
    uint64_t unbound_inactive = 0;
    uint64_t unbound_invalid = 0;
    uint64_t unbound_expedited = 0;
};

class client_supervision
{
public:
    explicit client_supervision(client_supervision_config config = {});

    void on_connected(uint32_t client, double now);
    void on_closed(uint32_t client);
    // Every valid primitive from a client. Answers S_KEEP_ALIVE, unless it is the
    // client's answer to ours, and meters expedited requests.
    void on_primitive(uint32_t client, const sis_primitive& p, double now);
    // A frame from the client that could not be decoded, or a primitive a client may
    // not send; `why` goes into the disconnect detail.
    void on_invalid(uint32_t client, const std::string& why, double now);
    // The transport gave up on the client: unbind and disconnect it at once.
    void expel(uint32_t client, sis_unbind_reason reason, std::string detail);
    void on_timer(double now);

    // Primitives to send; a disconnected client's S_UNBIND_INDICATION comes before
    // its entry in take_disconnects().
    std::vector<client_message> take_messages();
    std::vector<client_disconnect> take_disconnects();
    double next_deadline() const;
    const client_supervision_counters& counters() const { return d_counters; }
    size_t clients() const { return d_clients.size(); }

private:
    struct client_state {
        double last_heard = 0;
        double keep_alive_sent_at = std::numeric_limits<double>::infinity();
        std::deque<double> invalid_times;
        std::deque<double> expedited_times;
    };
    void disconnect(uint32_t client, sis_unbind_reason reason, std::string detail);
    static bool
    over_limit(std::deque<double>& times, double now, double window, unsigned max);

    client_supervision_config d_config;
    std::map<uint32_t, client_state> d_clients;
    std::vector<client_message> d_messages;
    std::vector<client_disconnect> d_disconnects;
    client_supervision_counters d_counters;
};

} // namespace dl
} // namespace hfstack
} // namespace gr

#endif
