/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

/* One simulator run: N STANAG 5066 nodes on one modelled HF channel, a test client on
 * each (traffic/test_client.h), in virtual time. What hfstack-sim's subcommands run.
 *
 * Topology and roles:
 *   nodes 0 .. N-1, addresses 1 .. N, all hearing each other over the channel;
 *   ping:        node 0 pings node 1; every other node echoes;
 *   throughput:  node 0 sends to node 1; two_way: node 1 to node 0 as well; nodes 2 ..
 *                N-1 send to node 0 too (outstations sharing a channel to one base).
 *
 * Utilisation of a flow = U_PDU bytes delivered x 8 / (nominal rate x time):
 *   overall  from the sender's first U_PDU to the end of the run;
 *   steady   between the first and the last delivery, counting the bytes delivered
 *            after the first one: the figure "after the server queue fills" of
 *            anchors.md A, which starts and ends on a transmission boundary.
 *
 * It lives with the traffic it runs (above sim/, whose network it drives); its names stay
 * in namespace sim, as hfstack-sim and the Python bindings call them. */
#ifndef HFSTACK_KERNELS_TRAFFIC_SCENARIO_H
#define HFSTACK_KERNELS_TRAFFIC_SCENARIO_H

#include "dl/node_engine.h"
#include "phy/transmission_time.h"
#include "sim/channel_model.h"
#include "sim/virtual_network.h"
#include "traffic/sis_application.h"
#include "traffic/test_client.h"

#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <vector>

namespace gr {
namespace hfstack {
namespace sim {

// none: the test clients bind and stay quiet; the traffic comes from `applications`.
enum class test_kind { ping, throughput, none };

struct scenario_config {
    test_kind test = test_kind::throughput;
    // STANAG 4539 mode (phy/s4539_modes.h): rate and interleaver, e.g. 1200S, 9600VL;
    // or a STANAG 5069 one (phy/m110d_timing.h), e.g. WN12/48kHz/US (240 kbps).
    std::string mode = "1200S";
    unsigned nodes = 2;
    double max_transmission_s = 127.5;
    // Further node options, "name=value;..." (dl::set_node_options), for every node.
    std::string node_options;
    radio_config radio;
    // Every directed path; its seed is derived from `seed`.
    channel_config channel;
    // Template of every node's test client; the roles above are filled in. A sender
    // sends client.send_bytes (0: without end); the pinger sends client.pings pings.
    traffic::client_config client;
    bool two_way = false;
    // Throughput: every sender first pings its peer once, so the link is up before the
    // measured data starts (as when the data follows a connection set-up).
    bool warm_up = false;
    // More SIS applications (client ids 2, 3, ...) on the nodes, beside the test
    // clients: called once per node index; the run ends when the test clients are done
    // and every added application says done() (traffic/sis_application.h).
    std::function<std::vector<std::unique_ptr<traffic::sis_application>>(size_t node)>
        applications;
    double duration_s = 3600; // virtual time limit
    uint64_t seed = 1;
    bool trace = false; // record every transmission (scenario_result::transmissions)
};

// Throws std::invalid_argument with a message naming the problem (unknown mode, a rate
// STANAG 5066 Table C-5 cannot carry, fewer than 2 nodes, bad node options or client
// settings, a non-positive duration).
void validate(const scenario_config& c);

struct flow_result {
    size_t from = 0, to = 0; // node indices
    uint64_t updus_sent = 0, bytes_sent = 0;
    uint64_t updus_delivered = 0, bytes_delivered = 0;
    uint64_t duplicates = 0, out_of_order = 0, corrupt = 0, rejected = 0;
    double first_send_at = std::numeric_limits<double>::quiet_NaN();
    double first_delivery_at = std::numeric_limits<double>::quiet_NaN();
    double last_delivery_at = std::numeric_limits<double>::quiet_NaN();
    double utilisation = 0; // overall, 0..1
    double steady_utilisation =
        std::numeric_limits<double>::quiet_NaN();       // see the header
                                                        // comment; NaN with fewer than 3
                                                        // delivery instants
    std::vector<std::pair<double, uint64_t>> delivered; // (time, cumulative bytes)
};

struct ping_summary {
    std::vector<traffic::ping_record> pings;
    double first_s = std::numeric_limits<double>::quiet_NaN(); // first round trip
    double later_mean_s = std::numeric_limits<double>::quiet_NaN();
    double later_min_s = std::numeric_limits<double>::quiet_NaN();
    double later_max_s = std::numeric_limits<double>::quiet_NaN();
    unsigned lost = 0;
};

struct node_result {
    uint32_t address = 0;
    dl::node_counters counters;
    node_stats air;
};

// One burst put on the air (scenario_config::trace).
struct transmission_record {
    double start_s = 0; // when the node produced it (it is on air radio.key_up_s later)
    size_t node = 0;    // index
    double air_time_s = 0;
    dl::bytes burst;                // the D_PDUs themselves, back to back
    std::vector<size_t> dpdu_sizes; // their boundaries, in order
    dl::modem_mode mode;            // the mode it went out in
    std::string mode_name;          // as the modem names it ("2400S", "WN12/48kHz/US")

    size_t bytes() const { return burst.size(); }
    size_t dpdus() const { return dpdu_sizes.size(); }
};

struct scenario_result {
    double nominal_bps = 0;
    double end_time_s = 0;  // virtual time when the run stopped
    bool completed = false; // the traffic finished before duration_s
    std::string stopped;    // why the run ended early, empty otherwise
    std::vector<flow_result> flows;
    ping_summary ping;
    std::vector<node_result> nodes;
    network_stats network;
    std::vector<transmission_record> transmissions;
};

// progress(now) is called about every progress_step_s of virtual time; returning false
// stops the run there (result.stopped says so).
scenario_result run_scenario(const scenario_config& c,
                             const std::function<bool(double now)>& progress = {},
                             double progress_step_s = 60);

// The node mode (Table C-5 rate, Table C-6 interleaving) carrying a mode name, and its
// waveform timing. Throws std::invalid_argument for unknown names. STANAG 5069 WN1-WN12
// are the node's own (dl/wideband_modes.h: WN - 1 at the mode's bandwidth; the node is
// set up by its mode option, node_carries_by_name); WN0 and WN13 are announced as the
// fastest Table C-5 rate at or below their own, with the mode's timing.
dl::modem_mode node_mode_for(const std::string& mode_name);
bool node_carries_by_name(const std::string& mode_name);
// Node index's configuration in a run of c (address index + 1, c's mode and options).
dl::node_config node_config_for(const scenario_config& c, size_t index);
phy::waveform_timing waveform_for(const std::string& mode_name);
// The air of a run: `radio`, and `channel` on every path, both seeded from `seed`.
network_config seeded_network(const radio_config& radio, uint64_t seed);
void set_seeded_channel(virtual_network& net, channel_config channel, uint64_t seed);

} // namespace sim
} // namespace hfstack
} // namespace gr

#endif
