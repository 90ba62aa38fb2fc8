/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

/* Simulated TCP ends behind HF-PEPs, for the virtual-time simulator (traffic/scenario.h):
 * the measurement of anchors.md section D as the seed's test tool made it. On the
 * client's node a host connects to a server behind the far proxy (the near proxy
 * answers the handshake at once), sends N bytes, waits for a two-byte confirmation,
 * closes, and after gap_s does it again; on the far node the server answers every
 * connection, reads the N bytes (announced in a 16-byte header, as the real-time
 * bench does) and confirms. The PEP kernels (net/pep.h) run unchanged; the hosts obey
 * their back-pressure (tcp_space) as a TCP socket would. */
#ifndef HFSTACK_KERNELS_TRAFFIC_PEP_HOST_H
#define HFSTACK_KERNELS_TRAFFIC_PEP_HOST_H

#include "net/pep.h"
#include "sis_application.h"
#include "traffic/scenario.h"

#include <limits>
#include <map>
#include <vector>

namespace gr {
namespace hfstack {
namespace traffic {

// What a transfer carries: seeded random bytes (what DEFLATE cannot shrink), or a
// caller's text repeated to the transfer's length (`pep_host_config::text`).
enum class pep_payload { random, text };

struct pep_host_config {
    net::pep_config pep;
    bool client = false;     // opens the transfers; else serves them
    net::pep_request server; // client: where the server is (behind the far proxy)
    size_t transfer_bytes = 1000;
    unsigned transfers = 1;
    double gap_s = 10;
    pep_payload payload = pep_payload::random;
    dl::bytes text; // the text payload's source; required when payload is text
};

struct pep_transfer_record {
    double started = 0, total_s = 0; // from the connect to the confirmation
    bool confirmed = false;
};

struct pep_host_report {
    std::vector<pep_transfer_record> transfers;
    uint64_t served = 0; // server: connections answered
};

struct pep_run_result {
    pep_host_report client;                              // node 0's host
    std::vector<sim::transmission_record> transmissions; // when `base.trace`
};

class pep_host : public sis_application
{
public:
    explicit pep_host(pep_host_config config);

    void start(double now) override;
    void on_primitive(const dl::sis_primitive& p, double now) override;
    void on_timer(double now) override;
    double next_deadline() const override;
    std::vector<dl::sis_primitive> take_outgoing() override;
    bool done() const override;

    const pep_host_report& report() const { return d_report; }
    const net::pep& proxy() const { return d_pep; }

private:
    struct server_side {
        dl::bytes header;
        size_t want = 0, got = 0;
        bool confirmed = false;
    };
    void collect(double now);
    void pump(double now);

    pep_host_config d_cfg;
    net::pep d_pep;
    pep_host_report d_report;
    std::vector<dl::sis_primitive> d_out;
    dl::bytes d_data;               // client: the bytes one transfer sends
    net::pep_connection d_conn = 0; // client: the transfer under way
    size_t d_sent = 0;
    dl::bytes d_confirmation;
    double d_next_transfer = std::numeric_limits<double>::infinity();
    std::map<net::pep_connection, server_side> d_served;
};

// Node 0's host makes `transfers` transfers of `bytes` to node 1's server through the
// two proxies (`compress`: DEFLATE on the streams; `text`: the text payload's source).
// `base` gives mode, channel, seed; its test becomes none; `pep_options`
// (net::set_pep_options, "name=value;...") go to both proxies. Throws
// std::invalid_argument for a text payload without a text or a bad option.
pep_run_result run_pep_transfers(sim::scenario_config base,
                                 size_t bytes,
                                 unsigned transfers,
                                 pep_payload payload,
                                 bool compress,
                                 const dl::bytes& text = {},
                                 const std::string& pep_options = "");

} // namespace traffic
} // namespace hfstack
} // namespace gr

#endif
