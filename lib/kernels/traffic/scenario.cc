/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "scenario.h"

#include "phy/m110d_timing.h"
#include "phy/s4539_modes.h"
#include "phy/waveform_modes.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>
#include <memory>
#include <stdexcept>

namespace gr {
namespace hfstack {
namespace sim {

namespace {

constexpr uint32_t client_id = 1;

double utilisation(uint64_t bytes, double seconds, double bps)
{
    return seconds > 0 ? double(bytes) * 8.0 / (bps * seconds) : 0.0;
}

} // namespace

network_config seeded_network(const radio_config& radio, uint64_t seed)
{
    network_config n;
    n.radio = radio;
    n.seed = seed;
    return n;
}

void set_seeded_channel(virtual_network& net, channel_config channel, uint64_t seed)
{
    channel.seed = seed;
    net.set_channel_all(channel);
}

dl::node_config node_config_for(const scenario_config& c, size_t index)
{
    dl::node_config n;
    n.address = uint32_t(index + 1);
    n.max_transmission_s = c.max_transmission_s;
    if (node_carries_by_name(c.mode)) {
        // STANAG 5069 WN1-WN12: the node's own mode option (dl/wideband_modes.h), with
        // its bandwidth's air time, rate ladder and answer mode.
        dl::set_node_option(n, "mode", c.mode);
        dl::set_node_options(n, c.node_options);
        return n;
    }
    n.mode = node_mode_for(c.mode);
    // Node options last: they override what the scenario's own fields set.
    dl::set_node_options(n, c.node_options);
    // The chosen waveform (any Appendix C interleaver) for the chosen mode; the node's
    // default mapping for any other mode a rate change might pick.
    const dl::modem_mode chosen = n.mode;
    const phy::waveform_timing w = waveform_for(c.mode);
    n.timing = [chosen, w](const dl::modem_mode& m) {
        return m == chosen ? w : dl::default_waveform_timing(m);
    };
    return n;
}

phy::waveform_timing waveform_for(const std::string& mode_name)
{
    if (const auto w = phy::waveform_timing_by_name(mode_name))
        return *w;
    throw std::invalid_argument(
        "mode '" + mode_name +
        "' is neither a STANAG 4539 mode (e.g. 75L, 1200S, 9600VS, "
        "9600VL, 4800U) nor a STANAG 5069 one (e.g. WN12/48kHz/US)");
}

bool node_carries_by_name(const std::string& mode_name)
{
    const auto m = phy::waveform_mode_by_name(mode_name);
    return m && m->s5069 && dl::s5069_node_mode(*m->s5069).has_value();
}

dl::modem_mode node_mode_for(const std::string& mode_name)
{
    waveform_for(mode_name); // validates the name
    if (node_carries_by_name(mode_name))
        return dl::node_waveform_by_name(mode_name).mode;
    if (const auto w = phy::waveform_mode_by_name(mode_name); w && w->s5069) {
        const phy::m110d_mode* m = &*w->s5069;
        // WN0 and WN13, which the node's 5069 ladder lacks: announced as the fastest
        // Table C-5 code at or below the mode's rate, the timing set by the scenario.
        dl::modem_mode mode;
        mode.data_rate = dl::rate_75;
        for (uint8_t r = dl::rate_75; r <= dl::rate_9600; ++r)
            if (dl::data_rate_bps(r) <= m->user_bps())
                mode.data_rate = r;
        mode.interleaving = m->interleaver == phy::m110d_interleaver::ultra_short ||
                                    m->interleaver == phy::m110d_interleaver::short_
                                ? dl::interleaving_short
                                : dl::interleaving_long;
        return mode;
    }
    // As the node reads its mode option: the App C interleaver itself (the node then
    // refuses rate adaptation, which could not announce it).
    try {
        return dl::node_mode_by_name(mode_name);
    } catch (const std::invalid_argument& e) {
        // The zero interleaver, which users cannot choose (hfstack-sim --mode refuses it
        // as the node and the modem do), stays a timing model for `reproduce`'s rows
        // about a published system that used it (marked not comparable there).
        const char last = mode_name.empty() ? 0 : mode_name.back();
        if (last != 'Z' && last != 'z')
            throw std::invalid_argument("mode '" + mode_name + "': " + e.what());
        return { dl::data_rate_code(unsigned(std::stoul(mode_name))),
                 dl::interleaving_none };
    }
}

void validate(const scenario_config& c)
{
    node_mode_for(c.mode);
    if (c.nodes < 2)
        throw std::invalid_argument("nodes must be at least 2");
    if (c.nodes > 64)
        throw std::invalid_argument("nodes must be at most 64");
    if (!(c.duration_s > 0) || !std::isfinite(c.duration_s))
        throw std::invalid_argument("duration must be a positive number of seconds");
    if (!(c.max_transmission_s > 0) || c.max_transmission_s > dl::max_eot_seconds)
        throw std::invalid_argument("max transmission must be in (0, 127.5] s");
    dl::node_config n = node_config_for(c, 0); // node options parse
    dl::node_engine check(n);                  // and make a valid node
    sim::validate(c.channel);
    traffic::validate(c.client);
    if (c.test == test_kind::ping && c.client.pings == 0)
        throw std::invalid_argument("a ping test needs at least one ping");
    virtual_network probe(network_config{ c.radio }); // radio times
}

scenario_result run_scenario(const scenario_config& c,
                             const std::function<bool(double now)>& progress,
                             double progress_step_s)
{
    validate(c);
    virtual_network net(seeded_network(c.radio, c.seed));
    set_seeded_channel(net, c.channel, c.seed);

    scenario_result res;
    if (c.trace)
        net.on_transmission([&](size_t k, const dl::node_transmission& t) {
            res.transmissions.push_back(transmission_record{
                net.now(),
                k,
                t.air_time_s,
                t.burst,
                t.dpdu_sizes,
                t.mode,
                dl::waveform_name(net.node(k).config().s5069_bandwidth_khz, t.mode) });
        });

    // Roles.
    std::vector<traffic::client_config> roles(c.nodes, c.client);
    std::vector<std::pair<size_t, size_t>> flows;
    for (size_t k = 0; k < c.nodes; ++k) {
        traffic::client_config& r = roles[k];
        r.flow = uint8_t(k);
        r.pings = 0;
        r.echo = false;
        r.send_bytes = 0;
        r.peer = k == 0 ? 2 : 1;
        if (c.test == test_kind::ping) {
            if (k == 0)
                r.pings = c.client.pings;
            else
                r.echo = true;
        } else if (c.test == test_kind::throughput) {
            r.echo = c.warm_up;
            if (k == 0 || (k == 1 && c.two_way) || k >= 2) {
                r.send_bytes = c.client.send_bytes ? c.client.send_bytes : UINT64_MAX;
                flows.emplace_back(k, k == 0 ? 1 : 0);
                if (c.warm_up) {
                    r.pings = 1;
                    r.send_after_pings = true;
                }
            }
        }
    }

    for (size_t k = 0; k < c.nodes; ++k)
        net.add_node(node_config_for(c, k));
    std::vector<std::unique_ptr<traffic::test_client>> clients;
    for (const auto& r : roles)
        clients.push_back(std::make_unique<traffic::test_client>(r));
    // Every application on the nodes: the test clients (client id 1), then any added.
    struct attached_app {
        size_t node;
        uint32_t client;
        traffic::sis_application* app;
        double timer_at = std::numeric_limits<double>::infinity();
    };
    std::vector<attached_app> apps;
    std::vector<std::unique_ptr<traffic::sis_application>> added;
    std::map<std::pair<size_t, uint32_t>, size_t> app_index;
    for (size_t k = 0; k < c.nodes; ++k)
        apps.push_back({ k, client_id, clients[k].get() });
    if (c.applications)
        for (size_t k = 0; k < c.nodes; ++k) {
            uint32_t id = client_id;
            for (auto& a : c.applications(k)) {
                apps.push_back({ k, ++id, a.get() });
                added.push_back(std::move(a));
            }
        }
    for (size_t i = 0; i < apps.size(); ++i)
        app_index[{ apps[i].node, apps[i].client }] = i;

    // Application I/O: primitives to the node at once; timers through call_at.
    std::function<void(size_t)> service = [&](size_t i) {
        attached_app& a = apps[i];
        for (auto& p : a.app->take_outgoing())
            net.client_send(a.node, a.client, p);
        const double t = a.app->next_deadline();
        if (t < a.timer_at) {
            a.timer_at = t;
            net.call_at(t, [&, i, t] {
                if (apps[i].timer_at != t)
                    return; // superseded by an earlier one
                apps[i].timer_at = std::numeric_limits<double>::infinity();
                apps[i].app->on_timer(net.now());
                service(i);
            });
        }
    };
    net.on_client_message([&](size_t k, const dl::client_message& m) {
        const auto it = app_index.find({ k, m.client });
        if (it == app_index.end())
            return;
        apps[it->second].app->on_primitive(m.primitive, net.now());
        service(it->second);
    });
    for (size_t i = 0; i < apps.size(); ++i) {
        apps[i].app->start(net.now());
        service(i);
    }
    auto added_done = [&] {
        for (const auto& a : added)
            if (!a->done())
                return false;
        return true;
    };

    // Done: every pinger finished, or every finite sender's bytes delivered.
    auto finished = [&] {
        if (!added_done())
            return false;
        if (c.test == test_kind::ping)
            return clients[0]->done();
        if (c.test == test_kind::none)
            return bool(c.applications); // quiet test clients: the applications decide
        if (!c.client.send_bytes)
            return false;
        for (const auto& [from, to] : flows) {
            const auto& series = clients[to]->report().received_by_flow;
            const auto it = series.find(uint8_t(from));
            if (!clients[from]->done() || it == series.end() ||
                it->second.back().second < clients[from]->report().bytes_sent)
                return false;
        }
        return true;
    };
    // A bind refused or a client unbound ends the run.
    auto failed = [&]() -> std::string {
        for (size_t k = 0; k < c.nodes; ++k)
            if (!clients[k]->report().error.empty())
                return "node " + std::to_string(k + 1) +
                       " client: " + clients[k]->report().error;
        return {};
    };

    res.nominal_bps = waveform_for(c.mode).bit_rate;
    bool done = false;
    double next_progress = 0;
    while (!done && net.now() < c.duration_s) {
        next_progress = std::min(c.duration_s, net.now() + progress_step_s);
        done =
            net.run_until([&] { return finished() || !failed().empty(); }, next_progress);
        if (progress && !progress(net.now())) {
            res.stopped = "stopped at " + std::to_string(net.now()) + " s";
            break;
        }
    }
    if (res.stopped.empty())
        res.stopped = failed();
    res.completed = done && res.stopped.empty();
    res.end_time_s = net.now();

    for (const auto& [from, to] : flows) {
        const auto& tx = clients[from]->report();
        const auto& rx = clients[to]->report();
        flow_result f;
        f.from = from;
        f.to = to;
        f.updus_sent = tx.updus_sent;
        f.bytes_sent = tx.bytes_sent;
        f.rejected = tx.updus_rejected;
        f.first_send_at = tx.first_send_at;
        // Delivery series are per flow; the receiver's error counters cover all flows
        // into it.
        f.duplicates = rx.duplicates;
        f.out_of_order = rx.out_of_order;
        f.corrupt = rx.corrupt;
        if (const auto it = rx.received_by_flow.find(uint8_t(from));
            it != rx.received_by_flow.end())
            f.delivered = it->second;
        f.updus_delivered = f.delivered.size();
        if (!f.delivered.empty()) {
            f.bytes_delivered = f.delivered.back().second;
            f.first_delivery_at = f.delivered.front().first;
            f.last_delivery_at = f.delivered.back().first;
            f.utilisation = utilisation(
                f.bytes_delivered, res.end_time_s - f.first_send_at, res.nominal_bps);
            // Steady state: whole transmission cycles between the first and the last
            // delivery instants; the bytes delivered at the first instant came before.
            // Fewer than three instants make no steady state (in-order delivery can
            // release more at one instant than a cycle carried).
            size_t first_after = 0, instants = 1;
            while (first_after < f.delivered.size() &&
                   f.delivered[first_after].first == f.first_delivery_at)
                ++first_after;
            for (size_t i = 1; i < f.delivered.size(); ++i)
                instants += f.delivered[i].first != f.delivered[i - 1].first;
            if (instants >= 3)
                f.steady_utilisation =
                    utilisation(f.bytes_delivered - f.delivered[first_after - 1].second,
                                f.last_delivery_at - f.first_delivery_at,
                                res.nominal_bps);
        }
        res.flows.push_back(std::move(f));
    }

    if (c.test == test_kind::ping) {
        ping_summary& p = res.ping;
        p.pings = clients[0]->report().pings;
        double sum = 0;
        unsigned later = 0;
        for (size_t i = 0; i < p.pings.size(); ++i) {
            const double rtt = p.pings[i].rtt_s;
            if (std::isnan(rtt)) {
                ++p.lost;
                continue;
            }
            if (i == 0) {
                p.first_s = rtt;
                continue;
            }
            sum += rtt;
            ++later;
            p.later_min_s = later == 1 ? rtt : std::min(p.later_min_s, rtt);
            p.later_max_s = later == 1 ? rtt : std::max(p.later_max_s, rtt);
        }
        if (later)
            p.later_mean_s = sum / later;
    }

    for (size_t k = 0; k < c.nodes; ++k)
        res.nodes.push_back(
            node_result{ uint32_t(k + 1), net.node(k).counters(), net.stats(k) });
    res.network = net.stats();
    return res;
}

} // namespace sim
} // namespace hfstack
} // namespace gr
