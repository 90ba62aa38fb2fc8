/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

/* An HF network run: N STANAG 5066 nodes (2 .. max_network_nodes) on one simulated
 * channel in virtual time (sim/virtual_network.h), the same node engine the node runs,
 * and a list of traffic flows between them. What `hfstack-sim network` runs.
 *
 * Nodes are indices 0 .. N-1 (addresses 1 .. N). Every directed path has the default
 * channel unless a path entry sets its own; a path entry with hears = false is a hidden
 * terminal pair: nothing sent on it arrives, not even the carrier.
 *
 * Every node carries one SIS client (SAP 13) that runs the node's flows:
 *   bulk       from -> to, ARQ U_PDUs of message_bytes, the node's queue kept supplied
 *              (DATA_FLOW_OFF respected); bytes in all, 0: until the run ends;
 *   chat       from -> to, `messages` ARQ messages of message_bytes, one at a time: `to`
 *              answers each with as many bytes, the next follows interval_s after the
 *              answer (or after chat_timeout_s without one); the round trip is timed;
 *              with `via`, that node's client relays each message and answer;
 *   broadcast  from -> every other node, `messages` non-ARQ U_PDUs to the broadcast
 *              address, one every interval_s.
 * Message payload: 'N' 'W' kind flow(2, big endian) seq(4, big endian) then filler, so a
 * receiver knows the flow and counts duplicates.
 *
 * Figures: a flow's throughput is its delivered bytes x 8 over the time from its start to
 * the end of the run; latency is from the moment the client hands a message to its node
 * to its delivery at the receiver (queueing included); time to first delivery includes
 * the link set-up. Jain's fairness index is over the bulk flows' throughputs. */
#ifndef HFSTACK_KERNELS_TRAFFIC_NETWORK_SCENARIO_H
#define HFSTACK_KERNELS_TRAFFIC_NETWORK_SCENARIO_H

#include "dl/node_engine.h"
#include "sim/channel_model.h"
#include "sim/virtual_network.h"

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

namespace gr {
namespace hfstack {
namespace sim {

constexpr unsigned max_network_nodes = 32;

enum class flow_kind { bulk, chat, broadcast };
// "bulk", "chat", "broadcast"; the parser throws std::invalid_argument for others.
const char* flow_kind_name(flow_kind k);
flow_kind flow_kind_by_name(const std::string& name);

struct network_flow {
    flow_kind kind = flow_kind::bulk;
    size_t from = 0;
    size_t to = 0; // unused by broadcast
    uint64_t bytes = 0;
    size_t message_bytes = 2048; // bulk: U_PDU size; chat, broadcast: message size
    unsigned messages = 10;      // chat, broadcast
    double interval_s = 0;       // chat: after each answer; broadcast: between messages
    double start_s = 0;
    // chat: the node whose client relays the flow's messages, as a router between two
    // subnets does (from -> via -> to, each answer to -> via -> from), each hop an ARQ
    // U_PDU of its own; -1: from and to exchange directly.
    long via = -1;
    // STANAG 5066 expedited data (S_EXPEDITED_UNIDATA_REQUEST) instead of regular
    // priority 7: chat messages and their answers, bulk U_PDUs, broadcasts.
    bool expedited = false;
};

// The directed path from -> to (and to -> from as well when both_ways).
struct network_path {
    size_t from = 0;
    size_t to = 0;
    bool both_ways = true;
    bool hears = true;
    channel_config channel; // its seed is replaced by one derived from the run's seed
};

// Node `node` loses power at off_s: its radio goes silent (a burst already on the air
// ends), its engine and SIS client lose all state, so the messages queued in it and
// those its flows hand over while it is off are lost (a finite flow then never
// completes, and the run goes on to duration_s). At on_s
// (never when infinite) it starts again with a new incarnation and no journal, binds
// its client again and its bulk flows go on; its chat and broadcast flows go on with
// their next message. With journal (as hfstack-node runs by default, its state_dir),
// the node's ARQ receivers come back as they were (dl/node_journal.h), so what its
// peers send again after the restart is not delivered twice; without, they agree new
// windows by a FULL RESET and the U_PDUs it had taken but not acknowledged before the
// power-off are delivered again.
struct network_power_cycle {
    size_t node = 0;
    double off_s = 0;
    double on_s = std::numeric_limits<double>::infinity();
    bool journal = true;
};

struct network_scenario_config {
    unsigned nodes = 4;
    // STANAG 4539 mode, as scenario_config::mode.
    std::string mode = "2400S";
    double max_transmission_s = 127.5;
    std::string node_options; // "name=value;..." for every node
    radio_config radio;
    channel_config channel; // every path no entry of `paths` names
    std::vector<network_path> paths;
    std::vector<network_flow> flows;
    std::vector<network_power_cycle> power_cycles;
    double chat_timeout_s = 900;
    double duration_s = 3600; // virtual time limit; unbounded bulk runs until it
    uint64_t seed = 1;
    // Every node's back-off draws also depend on `seed` (where its node options leave
    // channel_access.seed at 0). Off, they come from the node's address alone, as on a
    // real net, and on a clear channel (where `seed` drives no noise or fading) every
    // seed gives the same run: on, a clear-channel cell can be measured over several.
    bool backoff_seeds_from_seed = false;
};

// Throws std::invalid_argument with a one-line message: a node count outside 2 ..
// max_network_nodes, a flow or path naming a node that does not exist (or itself), a
// relay (via) that is not a chat's or is one of its ends, two
// path entries for the same directed path, a bad mode, node option, channel or radio
// setting, a message too short for its header, a non-positive duration, a power cycle
// of a node that does not exist, with on_s not after off_s, or overlapping another of
// the same node.
void validate(const network_scenario_config& c);

// Preset traffic (flows only) for n nodes:
//   hub-spoke  node 0 the shore station, 1 .. n-1 ships: bulk both ways on every spoke;
//   spokes-to-hub  bulk from every ship to node 0 alone (the hub only acknowledges);
//   mesh       chat between every pair (i < j: i asks, j answers);
//   bulk       one bulk transfer 0 -> 1 beside chat 2 -> 3 (with 4 nodes or more; with
//              fewer, chat from the last node to node 0) and chat from every further
//              node to node 0;
//   broadcast  node 0 broadcasts non-ARQ to all, node 1 sends acknowledged bulk to 0.
// bytes: each bulk flow's (0: unbounded); messages: each chat/broadcast flow's.
std::vector<network_flow> network_preset(const std::string& name,
                                         unsigned nodes,
                                         uint64_t bytes = 0,
                                         unsigned messages = 10);
std::vector<std::string> network_preset_names();

// Jain's fairness index (sum x)^2 / (n sum x^2); 1 for an empty or all-zero vector.
double jain_index(const std::vector<double>& x);

struct network_flow_result {
    network_flow flow;
    uint64_t messages_sent = 0, bytes_sent = 0;
    // Summed over receivers (a broadcast's every receiver counts).
    uint64_t messages_delivered = 0, bytes_delivered = 0;
    uint64_t duplicates = 0;
    double throughput_bps = 0;
    double first_delivery_s = std::numeric_limits<double>::quiet_NaN(); // after start_s
    double latency_p50_s = std::numeric_limits<double>::quiet_NaN();
    double latency_p90_s = std::numeric_limits<double>::quiet_NaN();
    double latency_p99_s = std::numeric_limits<double>::quiet_NaN();
    double latency_max_s = std::numeric_limits<double>::quiet_NaN();
    // Chat: round trips of the answered messages, in order, and those lost.
    std::vector<double> round_trips_s;
    double round_trip_p50_s = std::numeric_limits<double>::quiet_NaN();
    double round_trip_p90_s = std::numeric_limits<double>::quiet_NaN();
    unsigned round_trips_lost = 0;
};

struct network_node_result {
    uint32_t address = 0;
    uint64_t bytes_delivered = 0; // flow bytes delivered to this node
    uint64_t link_setups = 0, link_failures = 0;
    node_stats air;       // transmissions, air time, collisions, ...
    double occupancy = 0; // this node's air time / run time
};

// One burst on the air: who sent it, when, and to whom most of its bytes went (node
// index; -1 when they went to the broadcast or a group address). The timeline of who
// holds the channel.
struct network_burst {
    size_t node = 0;
    double start_s = 0, end_s = 0;
    long to = -1;
    size_t bytes = 0;
};

struct network_result {
    double nominal_bps = 0;
    double end_time_s = 0;
    bool completed = false; // every finite flow done before duration_s
    std::vector<network_flow_result> flows;
    std::vector<network_node_result> nodes;
    network_stats network;
    double aggregate_bps = 0;            // all flows' delivered bytes x 8 / run time
    double occupancy = 0;                // time some node was on the air / run time
    double jain_bulk = 1;                // over the bulk flows' throughputs
    double worst_bulk_share = 0;         // the least bulk throughput / the bulk aggregate
    std::vector<network_burst> timeline; // every burst, in start order
};

// Throws std::invalid_argument (see validate()).
network_result run_network(const network_scenario_config& c);

} // namespace sim
} // namespace hfstack
} // namespace gr

#endif
