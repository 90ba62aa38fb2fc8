/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

/* A simulated IP host behind the IP client, as a SIS application for the virtual-time
 * simulator (traffic/scenario.h): the IP client kernel (net/ip_client.h) carries its
 * datagrams, and a minimal host stack makes and answers the traffic of anchors.md
 * section C: ICMP echo (ping, 56 data bytes as Linux's ping sends) and DNS-like
 * request/response over UDP port 53 (a 33-byte question, a 49-byte answer, the sizes of
 * an A-record lookup). One request at a time, the next `gap_s` after the answer, as an
 * operator measuring does.
 *
 * Timing model: the host answers at once; Linux's own delays (milliseconds) are nothing
 * beside HF round trips. TCP is not modelled here: the TCP rows are measured with the
 * real stack (bench/ip_client_section_c.py). */
#ifndef HFSTACK_KERNELS_TRAFFIC_IP_HOST_H
#define HFSTACK_KERNELS_TRAFFIC_IP_HOST_H

#include "net/ip_client.h"
#include "sis_application.h"
#include "traffic/scenario.h"

#include <limits>
#include <optional>
#include <vector>

namespace gr {
namespace hfstack {
namespace traffic {

enum class ip_request_kind { ping, dns };

struct ip_host_config {
    net::ip_client_config client; // address table and options of its IP client
    net::ip_address own;          // this host's address (answers what is sent to it)
    std::optional<net::ip_address> target; // asks this host (none: only answers)
    ip_request_kind kind = ip_request_kind::ping;
    unsigned requests = 0;
    double gap_s = 1.0; // after an answer (or a time-out), before the next request
    double timeout_s = 300.0;
    double start_s = 0; // first request this long after the bind
};

struct ip_host_report {
    std::vector<double> round_trips_s; // per request; NaN: no answer in timeout_s
    uint64_t answered = 0;             // requests from others this host answered
};

class ip_host : public sis_application
{
public:
    // Throws std::invalid_argument: no own address, or a target of another IP version.
    explicit ip_host(ip_host_config config);

    void start(double now) override;
    void on_primitive(const dl::sis_primitive& p, double now) override;
    void on_timer(double now) override;
    double next_deadline() const override;
    std::vector<dl::sis_primitive> take_outgoing() override;
    bool done() const override;

    const ip_host_report& report() const { return d_report; }
    const net::ip_client& client() const { return d_client; }

private:
    void collect(double now);
    void receive(const net::bytes& datagram, double now);
    void send_request(double now);

    ip_host_config d_cfg;
    net::ip_client d_client;
    ip_host_report d_report;
    std::vector<dl::sis_primitive> d_out;
    bool d_started = false;
    double d_next_request = std::numeric_limits<double>::infinity();
    double d_request_sent = std::numeric_limits<double>::quiet_NaN(); // outstanding
    uint16_t d_sequence = 0;
};

// Two hosts on the virtual network (section C's set-up): node 0's host (10.77.0.1)
// asks node 1's (10.77.0.2) `requests` times, one at a time, through IP clients on SAP 9.
// `base` gives the mode, channel, seed and node settings; its test becomes none.
struct ip_exchange_result {
    std::vector<double> round_trips_s; // per request; NaN: no answer
    uint64_t answered = 0;             // requests the far host answered
    bool completed = false;            // every request done before base.duration_s
};
ip_exchange_result run_ip_exchange(sim::scenario_config base,
                                   ip_request_kind kind,
                                   unsigned requests,
                                   double gap_s = 1.0);

} // namespace traffic
} // namespace hfstack
} // namespace gr

#endif
