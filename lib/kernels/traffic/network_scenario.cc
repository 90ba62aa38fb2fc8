/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "network_scenario.h"

#include "dl/dpdu.h"
#include "traffic/scenario.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <memory>
#include <set>
#include <stdexcept>

namespace gr {
namespace hfstack {
namespace sim {

namespace {

constexpr uint32_t client_id = 1;
constexpr uint8_t station_sap = 13;
constexpr size_t header_size = 9;
// U_PDUs handed over at one instant before the node can answer with DATA_FLOW_OFF (as
// the test client's window).
constexpr unsigned pump_batch = 64;
constexpr double inf = std::numeric_limits<double>::infinity();

enum message_kind : uint8_t { data = 1, chat_ask = 2, chat_answer = 3 };

[[noreturn]] void bad(const std::string& what) { throw std::invalid_argument(what); }

std::string node_name(size_t i) { return "node " + std::to_string(i); }

scenario_config node_settings(const network_scenario_config& c)
{
    scenario_config s;
    s.mode = c.mode;
    s.max_transmission_s = c.max_transmission_s;
    s.node_options = c.node_options;
    s.radio = c.radio;
    return s;
}

// The node most of a burst's bytes went to; -1 for the broadcast address, a group or
// another node outside the run.
long burst_destination(const dl::node_transmission& t, size_t nodes)
{
    std::vector<size_t> bytes_to(nodes, 0);
    size_t at = 0;
    for (size_t size : t.dpdu_sizes) {
        if (at + size > t.burst.size())
            break;
        auto d = dl::decode_dpdu(t.burst.data() + at, size);
        const uint32_t dest = d.value.destination;
        if ((d.ok() || d.error == dl::decode_error::segment_crc) && dest >= 1 &&
            dest <= nodes)
            bytes_to[dest - 1] += size;
        at += size;
    }
    const auto most = std::max_element(bytes_to.begin(), bytes_to.end());
    return most == bytes_to.end() || *most == 0 ? -1 : long(most - bytes_to.begin());
}

double percentile(std::vector<double> v, double p)
{
    if (v.empty())
        return std::numeric_limits<double>::quiet_NaN();
    std::sort(v.begin(), v.end());
    // Nearest rank.
    const size_t rank = size_t(std::ceil(p * double(v.size())));
    return v[std::min(v.size(), std::max<size_t>(rank, 1)) - 1];
}

// What the run keeps about one flow.
struct flow_state {
    network_flow spec;
    std::vector<double> sent_at; // by sequence number
    uint64_t bytes_sent = 0;
    bool all_sent = false;
    // Receiver side, by receiving node.
    std::vector<std::set<uint32_t>> seen;
    uint64_t delivered = 0, bytes_delivered = 0, duplicates = 0;
    double first_delivery_at = inf;
    std::vector<double> latencies;
    // Chat.
    bool outstanding = false;
    std::vector<double> round_trips;
    unsigned lost = 0;
    // Broadcast: time after which late receptions no longer keep the run going.
    double give_up_at = inf;
};

} // namespace

const char* flow_kind_name(flow_kind k)
{
    switch (k) {
    case flow_kind::bulk:
        return "bulk";
    case flow_kind::chat:
        return "chat";
    case flow_kind::broadcast:
        return "broadcast";
    }
    return "?";
}

flow_kind flow_kind_by_name(const std::string& name)
{
    for (flow_kind k : { flow_kind::bulk, flow_kind::chat, flow_kind::broadcast })
        if (name == flow_kind_name(k))
            return k;
    bad("unknown flow kind '" + name + "' (bulk, chat, broadcast)");
}

double jain_index(const std::vector<double>& x)
{
    double sum = 0, squares = 0;
    for (double v : x) {
        sum += v;
        squares += v * v;
    }
    // Rounding can put equal values a hair above 1.
    return squares > 0 ? std::min(1.0, sum * sum / (double(x.size()) * squares)) : 1.0;
}

std::vector<std::string> network_preset_names()
{
    return { "hub-spoke", "spokes-to-hub", "mesh", "bulk", "broadcast" };
}

std::vector<network_flow>
network_preset(const std::string& name, unsigned nodes, uint64_t bytes, unsigned messages)
{
    if (nodes < 2 || nodes > max_network_nodes)
        bad("nodes must be 2.." + std::to_string(max_network_nodes) + ", not " +
            std::to_string(nodes));
    std::vector<network_flow> f;
    auto bulk = [&](size_t from, size_t to) {
        network_flow b;
        b.kind = flow_kind::bulk;
        b.from = from;
        b.to = to;
        b.bytes = bytes;
        f.push_back(b);
    };
    auto chat = [&](size_t from, size_t to) {
        network_flow b;
        b.kind = flow_kind::chat;
        b.from = from;
        b.to = to;
        b.message_bytes = 100;
        b.messages = messages;
        f.push_back(b);
    };
    if (name == "hub-spoke") {
        for (size_t k = 1; k < nodes; ++k) {
            bulk(0, k);
            bulk(k, 0);
        }
    } else if (name == "spokes-to-hub") {
        for (size_t k = 1; k < nodes; ++k)
            bulk(k, 0);
    } else if (name == "mesh") {
        for (size_t i = 0; i < nodes; ++i)
            for (size_t j = i + 1; j < nodes; ++j)
                chat(i, j);
    } else if (name == "bulk") {
        bulk(0, 1);
        if (nodes >= 4)
            chat(2, 3);
        else
            chat(nodes - 1, 0);
        for (size_t k = 4; k < nodes; ++k)
            chat(k, 0);
    } else if (name == "broadcast") {
        network_flow b;
        b.kind = flow_kind::broadcast;
        b.from = 0;
        b.message_bytes = 512;
        b.messages = messages;
        b.interval_s = 10;
        f.push_back(b);
        bulk(1, 0);
    } else {
        std::string known;
        for (const auto& n : network_preset_names())
            known += (known.empty() ? "" : ", ") + n;
        bad("unknown preset '" + name + "' (" + known + ")");
    }
    return f;
}

void validate(const network_scenario_config& c)
{
    if (c.nodes < 2 || c.nodes > max_network_nodes)
        bad("nodes must be 2.." + std::to_string(max_network_nodes) + ", not " +
            std::to_string(c.nodes));
    if (!(c.duration_s > 0) || !std::isfinite(c.duration_s))
        bad("duration must be a positive number of seconds");
    if (!(c.chat_timeout_s > 0) || !std::isfinite(c.chat_timeout_s))
        bad("chat timeout must be a positive number of seconds");
    scenario_config s = node_settings(c);
    s.nodes = c.nodes;
    s.channel = c.channel;
    sim::validate(s); // mode, node options, radio, default channel
    auto check_node = [&](size_t i, const std::string& where) {
        if (i >= c.nodes)
            bad(where + " names " + node_name(i) + ", but the network has nodes 0.." +
                std::to_string(c.nodes - 1));
    };
    std::set<std::pair<size_t, size_t>> named;
    for (size_t k = 0; k < c.paths.size(); ++k) {
        const network_path& p = c.paths[k];
        const std::string where = "path " + std::to_string(k);
        check_node(p.from, where);
        check_node(p.to, where);
        if (p.from == p.to)
            bad(where + " goes from " + node_name(p.from) + " to itself");
        sim::validate(p.channel);
        for (const auto& d :
             { std::make_pair(p.from, p.to), std::make_pair(p.to, p.from) }) {
            if (!named.insert(d).second)
                bad(where + " sets the path " + std::to_string(d.first) + " -> " +
                    std::to_string(d.second) + " a second time");
            if (!p.both_ways)
                break;
        }
    }
    for (size_t k = 0; k < c.flows.size(); ++k) {
        const network_flow& f = c.flows[k];
        const std::string where = "flow " + std::to_string(k);
        check_node(f.from, where);
        if (f.kind != flow_kind::broadcast) {
            check_node(f.to, where);
            if (f.from == f.to)
                bad(where + " goes from " + node_name(f.from) + " to itself");
        }
        if (f.via >= 0) {
            if (f.kind != flow_kind::chat)
                bad(where + ": only a chat flow is relayed (via)");
            check_node(size_t(f.via), where);
            if (size_t(f.via) == f.from || size_t(f.via) == f.to)
                bad(where + " is relayed by one of its own ends");
        }
        if (f.message_bytes < header_size || f.message_bytes > 65535)
            bad(where + ": message size must be " + std::to_string(header_size) +
                "..65535 bytes");
        if (f.kind != flow_kind::bulk && f.messages == 0)
            bad(where + ": a " + flow_kind_name(f.kind) + " flow needs messages >= 1");
        if (!(f.start_s >= 0) || !std::isfinite(f.start_s) || !(f.interval_s >= 0) ||
            !std::isfinite(f.interval_s))
            bad(where + ": start and interval must be finite and >= 0");
    }
    if (c.flows.size() > 65535)
        bad("at most 65535 flows");
    for (size_t k = 0; k < c.power_cycles.size(); ++k) {
        const network_power_cycle& p = c.power_cycles[k];
        const std::string where = "power cycle " + std::to_string(k);
        check_node(p.node, where);
        if (!(p.off_s >= 0) || !std::isfinite(p.off_s) || !(p.on_s > p.off_s))
            bad(where + ": the power-off time must be finite and >= 0, the power-on "
                        "time after it");
        for (size_t j = 0; j < k; ++j) {
            const network_power_cycle& q = c.power_cycles[j];
            if (q.node == p.node && p.off_s <= q.on_s && q.off_s <= p.on_s)
                bad(where + " overlaps power cycle " + std::to_string(j) + " of " +
                    node_name(p.node));
        }
    }
}

network_result run_network(const network_scenario_config& c)
{
    validate(c);
    virtual_network net(seeded_network(c.radio, c.seed));
    set_seeded_channel(net, c.channel, c.seed);
    const scenario_config settings = node_settings(c);
    for (size_t k = 0; k < c.nodes; ++k) {
        dl::node_config nc = node_config_for(settings, k);
        if (c.backoff_seeds_from_seed && nc.channel_access.seed == 0)
            // The engine's own derivation with the seed mixed in (never 0, which
            // would mean "derive").
            nc.channel_access.seed = dl::derived_backoff_seed(nc.address, c.seed) | 1u;
        // The engine only writes the records; the network keeps them (as the node block
        // keeps its state_dir's file), so the name is never opened.
        for (const network_power_cycle& p : c.power_cycles)
            if (p.node == k && p.journal)
                nc.state_dir = "journal kept by the simulated network";
        net.add_node(nc);
    }
    for (const network_path& p : c.paths) {
        channel_config pc = p.channel;
        if (!p.hears) {
            // One outage window as long as its period: the path never carries a burst.
            pc.outage_period_s = 1;
            pc.outage_duration_s = 1;
            pc.outage_offset_s = 0;
        }
        pc.seed = path_seed(c.seed, c.seed, p.from, p.to);
        net.set_channel(p.from, p.to, pc);
        if (p.both_ways) {
            pc.seed = path_seed(c.seed, c.seed, p.to, p.from);
            net.set_channel(p.to, p.from, pc);
        }
    }

    // Channel occupancy: the union of on-air intervals (they start in time order).
    double on_air = 0, on_air_until = 0;
    std::vector<network_burst> timeline;
    net.on_transmission([&](size_t node, const dl::node_transmission& t) {
        const double start = net.now() + c.radio.key_up_s, end = start + t.air_time_s;
        on_air += std::max(0.0, end - std::max(start, on_air_until));
        on_air_until = std::max(on_air_until, end);
        timeline.push_back(
            { node, start, end, burst_destination(t, c.nodes), t.burst.size() });
    });

    std::vector<flow_state> flows(c.flows.size());
    for (size_t k = 0; k < flows.size(); ++k) {
        flows[k].spec = c.flows[k];
        flows[k].seen.resize(c.nodes);
    }
    struct station {
        bool bound = false, flow_off = false, more_due = false, powered_off = false;
        bool flows_started = false; // after a power cycle only the bulk pump resumes
        std::vector<size_t> bulk;   // flow indices, served in turn
        size_t next_bulk = 0;
    };
    std::vector<station> stations(c.nodes);
    for (size_t k = 0; k < flows.size(); ++k)
        if (flows[k].spec.kind == flow_kind::bulk)
            stations[flows[k].spec.from].bulk.push_back(k);

    // `to`: the node the U_PDU goes to (the relay's first or second hop).
    auto unidata =
        [&](size_t flow, message_kind kind, uint32_t seq, size_t size, size_t to) {
            const network_flow& f = flows[flow].spec;
            dl::sis_primitive u;
            u.type = f.expedited ? dl::sis_type::expedited_unidata_request
                                 : dl::sis_type::unidata_request;
            u.priority = f.expedited ? 0 : 7;
            const bool bcast = f.kind == flow_kind::broadcast;
            u.destination =
                dl::sis_address{ bcast ? dl::broadcast_address : uint32_t(to + 1), 7 };
            u.destination_sap = station_sap;
            u.service_type.tx_mode =
                bcast ? dl::sis_tx_mode::non_arq : dl::sis_tx_mode::arq;
            u.payload.assign(size, 0);
            u.payload[0] = 'N';
            u.payload[1] = 'W';
            u.payload[2] = kind;
            u.payload[3] = uint8_t(flow >> 8);
            u.payload[4] = uint8_t(flow);
            for (int b = 0; b < 4; ++b)
                u.payload[5 + b] = uint8_t(seq >> (24 - 8 * b));
            for (size_t i = header_size; i < size; ++i)
                u.payload[i] = uint8_t(seq * 131u + i * 7u);
            return u;
        };
    auto hand_over = [&](size_t flow, message_kind kind, uint32_t seq, size_t size) {
        flow_state& f = flows[flow];
        const size_t node = kind == chat_answer ? f.spec.to : f.spec.from;
        if (kind != chat_answer) {
            f.sent_at.push_back(net.now());
            f.bytes_sent += size;
        }
        if (stations[node].powered_off)
            return; // the application is off too: the message is lost
        const size_t to = f.spec.via >= 0       ? size_t(f.spec.via)
                          : kind == chat_answer ? f.spec.from
                                                : f.spec.to;
        net.client_send(node, client_id, unidata(flow, kind, seq, size, to));
    };

    // Bulk: the node's queue kept supplied, the node's bulk flows in turn.
    std::function<void(size_t)> pump = [&](size_t node) {
        station& s = stations[node];
        if (!s.bound)
            return;
        for (unsigned batch = 0; !s.flow_off; ++batch) {
            size_t k = 0;
            for (; k < s.bulk.size(); ++k) {
                const size_t i = s.bulk[(s.next_bulk + k) % s.bulk.size()];
                if (!flows[i].all_sent && flows[i].spec.start_s <= net.now())
                    break;
            }
            if (k == s.bulk.size())
                return;
            if (batch == pump_batch) {
                if (!s.more_due) {
                    s.more_due = true;
                    net.call_at(net.now(), [&, node] {
                        stations[node].more_due = false;
                        pump(node);
                    });
                }
                return;
            }
            const size_t i = s.bulk[(s.next_bulk + k) % s.bulk.size()];
            s.next_bulk = (s.next_bulk + k + 1) % s.bulk.size();
            flow_state& f = flows[i];
            const uint64_t left = f.spec.bytes ? f.spec.bytes - f.bytes_sent
                                               : uint64_t(f.spec.message_bytes);
            const size_t size = size_t(std::max<uint64_t>(
                std::min<uint64_t>(f.spec.message_bytes, left), header_size));
            hand_over(i, data, uint32_t(f.sent_at.size()), size);
            if (f.spec.bytes && f.bytes_sent >= f.spec.bytes)
                f.all_sent = true;
        }
    };

    // Chat: one message at a time, the next after the answer or the timeout.
    std::function<void(size_t)> ask = [&](size_t flow) {
        flow_state& f = flows[flow];
        if (f.sent_at.size() >= f.spec.messages) {
            f.all_sent = true;
            return;
        }
        const uint32_t seq = uint32_t(f.sent_at.size());
        f.outstanding = true;
        hand_over(flow, chat_ask, seq, f.spec.message_bytes);
        net.call_at(net.now() + c.chat_timeout_s, [&, flow, seq] {
            flow_state& g = flows[flow];
            if (!g.outstanding || g.sent_at.size() != seq + 1)
                return;
            g.outstanding = false;
            ++g.lost;
            ask(flow);
        });
    };
    std::function<void(size_t)> broadcast = [&](size_t flow) {
        flow_state& f = flows[flow];
        hand_over(flow, data, uint32_t(f.sent_at.size()), f.spec.message_bytes);
        if (f.sent_at.size() < f.spec.messages) {
            net.call_at(net.now() + f.spec.interval_s, [&, flow] { broadcast(flow); });
            return;
        }
        f.all_sent = true;
        f.give_up_at = net.now() + c.chat_timeout_s;
        net.call_at(f.give_up_at, [] {}); // the run's end is checked then
    };
    auto start_flows = [&](size_t node) {
        for (size_t k = 0; k < flows.size(); ++k) {
            const network_flow& f = flows[k].spec;
            if (f.from != node)
                continue;
            if (f.kind == flow_kind::bulk && f.start_s > net.now())
                net.call_at(f.start_s, [&, node] { pump(node); });
            else if (f.kind == flow_kind::chat)
                net.call_at(f.start_s, [&, k] { ask(k); });
            else if (f.kind == flow_kind::broadcast)
                net.call_at(f.start_s, [&, k] { broadcast(k); });
        }
        pump(node);
    };

    std::vector<uint64_t> node_bytes(c.nodes, 0);
    auto received = [&](size_t node, const dl::sis_primitive& p) {
        const dl::bytes& b = p.payload;
        if (b.size() < header_size || b[0] != 'N' || b[1] != 'W')
            return;
        const size_t flow = size_t(b[3]) << 8 | b[4];
        uint32_t seq = 0;
        for (int i = 0; i < 4; ++i)
            seq = seq << 8 | b[5 + i];
        if (flow >= flows.size())
            return;
        flow_state& f = flows[flow];
        if (f.spec.via >= 0 && node == size_t(f.spec.via) &&
            (b[2] == chat_ask || b[2] == chat_answer)) {
            // The relay's client sends it on, as received, over the second hop.
            net.client_send(node,
                            client_id,
                            unidata(flow,
                                    message_kind(b[2]),
                                    seq,
                                    b.size(),
                                    b[2] == chat_ask ? f.spec.to : f.spec.from));
            return;
        }
        if (b[2] == chat_answer) {
            if (f.outstanding && seq + 1 == f.sent_at.size()) {
                f.outstanding = false;
                f.round_trips.push_back(net.now() - f.sent_at[seq]);
                net.call_at(net.now() + f.spec.interval_s, [&, flow] { ask(flow); });
            }
            return;
        }
        if (seq >= f.sent_at.size())
            return;
        if (!f.seen[node].insert(seq).second) {
            ++f.duplicates;
            return;
        }
        ++f.delivered;
        f.bytes_delivered += b.size();
        node_bytes[node] += b.size();
        f.first_delivery_at = std::min(f.first_delivery_at, net.now());
        f.latencies.push_back(net.now() - f.sent_at[seq]);
        if (b[2] == chat_ask)
            hand_over(flow, chat_answer, seq, b.size());
    };

    net.on_client_message([&](size_t node, const dl::client_message& m) {
        if (m.client != client_id)
            return;
        const dl::sis_primitive& p = m.primitive;
        station& s = stations[node];
        switch (p.type) {
        case dl::sis_type::bind_accepted:
            if (!s.bound) {
                s.bound = true;
                if (s.flows_started) {
                    pump(node);
                } else {
                    s.flows_started = true;
                    start_flows(node);
                }
            }
            return;
        case dl::sis_type::bind_rejected:
        case dl::sis_type::unbind_indication:
            throw std::runtime_error(node_name(node) + ": the node refused its client");
        case dl::sis_type::keep_alive:
            net.client_send(node, client_id, p);
            return;
        case dl::sis_type::data_flow_off:
            s.flow_off = true;
            return;
        case dl::sis_type::data_flow_on:
            s.flow_off = false;
            pump(node);
            return;
        case dl::sis_type::unidata_indication:
        case dl::sis_type::expedited_unidata_indication:
            received(node, p);
            return;
        default:
            return;
        }
    });

    auto bind = [&](size_t node) {
        dl::sis_primitive request;
        request.type = dl::sis_type::bind_request;
        request.sap = station_sap;
        request.service_type.tx_mode = dl::sis_tx_mode::arq;
        net.client_send(node, client_id, request);
    };
    for (size_t k = 0; k < c.nodes; ++k)
        bind(k);
    for (const network_power_cycle& p : c.power_cycles) {
        const size_t node = p.node;
        net.call_at(p.off_s, [&, node] {
            // A fresh engine holds nothing of the old one's state, and no client.
            net.restart_node(node);
            net.set_node_offline(node, true);
            station& s = stations[node];
            s.powered_off = true;
            s.bound = false;
            s.flow_off = false;
        });
        if (std::isfinite(p.on_s))
            net.call_at(p.on_s, [&, node] {
                net.restart_node(node); // a new incarnation
                net.set_node_offline(node, false);
                stations[node].powered_off = false;
                bind(node);
            });
    }

    const size_t receivers = c.nodes - 1;
    auto finished = [&] {
        for (const flow_state& f : flows) {
            switch (f.spec.kind) {
            case flow_kind::bulk:
                if (!f.spec.bytes || !f.all_sent || f.delivered < f.sent_at.size())
                    return false;
                break;
            case flow_kind::chat:
                if (!f.all_sent)
                    return false;
                break;
            case flow_kind::broadcast:
                if (!f.all_sent || (f.delivered < f.sent_at.size() * receivers &&
                                    net.now() < f.give_up_at))
                    return false;
                break;
            }
        }
        return true;
    };

    network_result res;
    res.nominal_bps = waveform_for(c.mode).bit_rate;
    res.completed = net.run_until(finished, c.duration_s);
    res.end_time_s = net.now();
    const double t = res.end_time_s;

    std::vector<double> bulk_bps;
    uint64_t all_bytes = 0;
    for (size_t k = 0; k < flows.size(); ++k) {
        const flow_state& f = flows[k];
        network_flow_result r;
        r.flow = f.spec;
        r.messages_sent = f.sent_at.size();
        r.bytes_sent = f.bytes_sent;
        r.messages_delivered = f.delivered;
        r.bytes_delivered = f.bytes_delivered;
        r.duplicates = f.duplicates;
        r.throughput_bps =
            t > f.spec.start_s ? double(f.bytes_delivered) * 8 / (t - f.spec.start_s) : 0;
        if (f.first_delivery_at < inf)
            r.first_delivery_s = f.first_delivery_at - f.spec.start_s;
        r.latency_p50_s = percentile(f.latencies, 0.5);
        r.latency_p90_s = percentile(f.latencies, 0.9);
        r.latency_p99_s = percentile(f.latencies, 0.99);
        r.latency_max_s = percentile(f.latencies, 1.0);
        r.round_trips_s = f.round_trips;
        r.round_trip_p50_s = percentile(f.round_trips, 0.5);
        r.round_trip_p90_s = percentile(f.round_trips, 0.9);
        r.round_trips_lost = f.lost;
        all_bytes += f.bytes_delivered;
        if (f.spec.kind == flow_kind::bulk)
            bulk_bps.push_back(r.throughput_bps);
        res.flows.push_back(std::move(r));
    }
    for (size_t k = 0; k < c.nodes; ++k) {
        network_node_result n;
        n.address = uint32_t(k + 1);
        n.bytes_delivered = node_bytes[k];
        const dl::node_counters& counters = net.node(k).counters();
        n.link_setups = counters.link_setups;
        n.link_failures = counters.link_failures;
        n.air = net.stats(k);
        n.occupancy = t > 0 ? n.air.air_time_s / t : 0;
        res.nodes.push_back(n);
    }
    res.network = net.stats();
    res.timeline = std::move(timeline);
    res.aggregate_bps = t > 0 ? double(all_bytes) * 8 / t : 0;
    res.occupancy = t > 0 ? std::min(on_air, t) / t : 0;
    res.jain_bulk = jain_index(bulk_bps);
    double bulk_sum = 0;
    for (double v : bulk_bps)
        bulk_sum += v;
    if (bulk_sum > 0)
        res.worst_bulk_share =
            *std::min_element(bulk_bps.begin(), bulk_bps.end()) / bulk_sum;
    return res;
}

} // namespace sim
} // namespace hfstack
} // namespace gr
